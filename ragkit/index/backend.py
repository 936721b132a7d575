"""The backend seam: what the funnel needs from an index, and nothing more.

The funnel (:class:`ragkit.search.funnel.Funnel`) reads its retrievers through the small
:class:`Backend` protocol below, so a second engine (:mod:`ragkit.backends.milvus.engine`) needs no change
in fusion, rerank, expansion, tools, agent, trace or evaluation:

``select(scope, filters) -> Selection``
    The caller's scope and the filters, compiled once per search into a *selection*: the
    in-memory backend makes a numpy row mask (:class:`MaskSelection`); Milvus makes a filter
    expression that the engine evaluates inside its search, before top-k. ``count()`` is
    the number of rows in scope (for the trace).
``search_lexical(query, k, selection)`` / ``search_dense(query, k, selection)``
    The ``k`` best rows of one retriever among the selected rows, as a
    :class:`~ragkit.retrieval.fusion.Ranking` of row numbers. Fusion stays in ragkit, so the trace
    keeps each retriever's ranks.
``fetch(rows)``, ``envelope(row)``, ``parent(row)``, ``size()``
    Chunks by row number (one batch call), the envelope a read re-checks scope against,
    the parent section for expansion, the number of rows.

Row numbers are positions ``0..size()-1`` of one immutable *snapshot*: a backend object
is taken once per search (``index.snapshot()``) and every call of that search speaks of it.

:func:`as_backend` turns whatever the funnel was given into a backend: an object whose
class declares ``ragkit_backend = True`` (the Milvus snapshot) is used as is; anything with
the in-memory snapshot's read API (:class:`ragkit.index.index.Snapshot`, an
:class:`~ragkit.evaluation.counterfactuals.IndexView`) is wrapped by :class:`SnapshotBackend`, which
adds nothing but the protocol: the in-memory index itself is unchanged.

Example:
    >>> import numpy as np
    >>> sel = MaskSelection(np.array([True, False, True]))
    >>> sel.count()
    2
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragkit.core.records import Chunk, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.retrieval.fusion import Ranking

__all__ = ["Selection", "Backend", "MaskSelection", "SnapshotBackend", "as_backend"]


@runtime_checkable
class Selection(Protocol):
    """The rows a caller may see under some filters, in a form the backend's engine applies."""

    def count(self) -> int:
        """How many rows are selected."""
        ...


@runtime_checkable
class Backend(Protocol):
    """What the funnel reads: masked lexical and dense search, fetch by row, envelopes, parents."""

    def size(self) -> int:
        """Rows in this snapshot (row numbers are ``0..size()-1``)."""
        ...

    def select(self, scope: Scope, filters: Filters) -> Selection:
        """Compile ``scope`` and ``filters`` into a selection (raises ScopeError if filters widen)."""
        ...

    def search_lexical(self, query: str, k: int, selection: Any) -> Ranking:
        """BM25: the ``k`` best selected rows for ``query``."""
        ...

    def search_dense(self, query: str, k: int, selection: Any) -> Ranking:
        """Embeddings: the ``k`` nearest selected rows to ``query``."""
        ...

    def fetch(self, rows: Sequence[int]) -> list[Chunk]:
        """The chunks at ``rows``, in order."""
        ...

    def envelope(self, row: int) -> Envelope:
        """The envelope of the document of ``row``."""
        ...

    def parent(self, row: int) -> Chunk | None:
        """The parent section of ``row`` (``None`` when its chunker made none)."""
        ...


class MaskSelection:
    """A selection as a numpy bool mask over rows (the in-memory backend's form)."""

    def __init__(self, mask: np.ndarray) -> None:
        self.mask = np.asarray(mask, dtype=bool)

    def count(self) -> int:
        """Selected rows."""
        return int(self.mask.sum())

    def __repr__(self) -> str:
        return f"MaskSelection({self.count()}/{len(self.mask)} rows)"


class SnapshotBackend:
    """The :class:`Backend` protocol over an object with the in-memory snapshot's read API.

    ``snap`` is a :class:`ragkit.index.index.Snapshot`, an ``IndexView`` or anything with ``rows``,
    ``mask``, ``search_lexical``, ``search_dense``, ``envelope`` and ``parent``; every call
    goes straight to it, so results are identical to calling it directly.
    """

    ragkit_backend = True

    def __init__(self, snap: Any) -> None:
        self.snap = snap

    def size(self) -> int:
        """Rows of the wrapped snapshot."""
        return len(self.snap.rows)

    def select(self, scope: Scope, filters: Filters) -> MaskSelection:
        """The snapshot's row mask for ``scope`` and ``filters``."""
        return MaskSelection(np.asarray(self.snap.mask(scope, filters), dtype=bool))

    def search_lexical(self, query: str, k: int, selection: Any) -> Ranking:
        """BM25 on the wrapped snapshot under the selection's mask."""
        return self.snap.search_lexical(query, k, _mask_of(selection))

    def search_dense(self, query: str, k: int, selection: Any) -> Ranking:
        """Dense search on the wrapped snapshot under the selection's mask."""
        return self.snap.search_dense(query, k, _mask_of(selection))

    def fetch(self, rows: Sequence[int]) -> list[Chunk]:
        """``[snap.rows[r] for r in rows]``."""
        return [self.snap.rows[r] for r in rows]

    def envelope(self, row: int) -> Envelope:
        """The wrapped snapshot's envelope of ``row``."""
        return self.snap.envelope(row)

    def parent(self, row: int) -> Chunk | None:
        """The wrapped snapshot's parent section of ``row``."""
        return self.snap.parent(row)

    def __getattr__(self, name: str) -> Any:  # rows, documents, sections, row_of, ...
        return getattr(self.snap, name)


def _mask_of(selection: Any) -> Any:
    if isinstance(selection, MaskSelection):
        return selection.mask
    return selection  # a plain mask (or None) given by a caller of the snapshot API


def as_backend(index: Any) -> Any:
    """The backend to read ``index`` through, for one search (one snapshot).

    ``index`` may be an :class:`~ragkit.index.index.Index`, a snapshot, an ``IndexView``, a
    :class:`ragkit.backends.milvus.engine.MilvusIndex` or an object already implementing :class:`Backend`.
    The check looks at the *class* (``ragkit_backend = True``), so a wrapper that forwards
    unknown attributes (``IndexView``) is wrapped, never bypassed.
    """
    snap = index.snapshot() if hasattr(index, "snapshot") else index
    if getattr(type(snap), "ragkit_backend", False):
        return snap
    return SnapshotBackend(snap)
