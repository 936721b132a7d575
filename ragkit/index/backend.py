"""The backend seam: what the funnel needs from an index, and nothing more.

The funnel (:class:`ragkit.search.funnel.Funnel`) reads its retrievers through the small
:class:`Backend` protocol below, so a second engine (:mod:`ragkit.backends.milvus`) needs no change
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

The tools (:mod:`ragkit.tools`) read documents and sections by id through a few more methods,
so that no backend has to imitate the in-memory snapshot's dictionaries:

``document(doc_id)``, ``section(key)``, ``sections_of(doc_id)``, ``row_for(chunk_id)``
    One document, one parent section, one document's sections, the row of a chunk id
    (``None`` where there is none).
``envelopes(scope, filters, limit=)``, ``tenants()``, ``links(doc_id)``
    The envelopes of the documents a caller may read (no text), every tenant of the index,
    and the links of one document in both directions (:class:`~ragkit.index.links.DocumentLinks`).
``doc_types(scope, filters)``, ``count_documents(scope, filters)``, ``similar_ids(scope, filters, doc_id)``
    What the tools tell a caller about their scope without reading every document: the source
    types in it, how many documents pass some filters, and ids close to a mistyped one (an
    engine answers each with one bounded query).

None of these applies the caller's scope except ``envelopes``: the tools re-check every
document they show with :meth:`ragkit.core.scope.Scope.allows` (one access rule).

Row numbers are positions ``0..size()-1`` of one immutable *snapshot*: a backend object
is taken once per search (``index.snapshot()``) and every call of that search speaks of it.

:func:`as_backend` turns whatever the funnel was given into a backend: an object whose
class declares ``ragkit_backend = True`` (the Milvus snapshot) is used as is; anything with
the in-memory snapshot's read API (:class:`ragkit.index.snapshots.Snapshot`, an
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

from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.index.links import DocumentLinks, LinkGraph
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

    def document(self, doc_id: str) -> Document | None:
        """The document ``doc_id`` with its full text, or ``None`` when this snapshot has none.

        No scope is applied: the caller checks ``scope.allows(document.envelope)``.
        """
        ...

    def section(self, key: str) -> Chunk | None:
        """The parent section ``doc_id#anchor`` (``kind == "section"``), or ``None``."""
        ...

    def sections_of(self, doc_id: str) -> list[Chunk]:
        """The parent sections of one document, by ``start`` (empty for an unknown id)."""
        ...

    def row_for(self, chunk_id: str) -> int | None:
        """The row number of the chunk ``chunk_id`` (``doc_id#anchor~n``), or ``None``."""
        ...

    def envelopes(self, scope: Scope, filters: Filters | None = None, *,
                  limit: int | None = None) -> list[Envelope]:
        """The envelopes of the documents ``scope`` may read and ``filters`` pass, in index order.

        Exactly those with ``scope.allows(env) and (filters is None or filters.allows(env))``;
        at most ``limit`` of them (``None``: all; one small record per document, no text).
        """
        ...

    def tenants(self) -> list[str]:
        """Every tenant of this snapshot's documents, sorted (no scope applied)."""
        ...

    def links(self, doc_id: str) -> DocumentLinks:
        """Who links to ``doc_id`` and its supersession named on either side (no scope applied)."""
        ...

    def doc_types(self, scope: Scope, filters: Filters | None = None, *, limit: int = 200) -> list[str]:
        """The distinct source types of the documents ``scope`` may read and ``filters`` pass, sorted."""
        ...

    def count_documents(self, scope: Scope, filters: Filters | None = None) -> int:
        """How many documents ``scope`` may read and ``filters`` pass."""
        ...

    def similar_ids(self, scope: Scope, filters: Filters | None, doc_id: str, *,
                    limit: int = 200) -> list[str]:
        """Candidate ids, readable in ``scope``, that look like ``doc_id`` (for a "did you mean"): at
        most ``limit`` from an engine (sharing a prefix or a suffix); every readable id in memory."""
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

    ``snap`` is a :class:`ragkit.index.snapshots.Snapshot`, an ``IndexView`` or anything with ``rows``,
    ``documents``, ``sections``, ``row_of``, ``mask``, ``search_lexical``, ``search_dense``,
    ``envelope`` and ``parent``; every call goes straight to it, so results are identical to
    calling it directly. The reads by id use only ``rows``, ``documents``, ``sections`` and
    ``row_of``, so a view that hides documents hides them here too.
    """

    ragkit_backend = True

    def __init__(self, snap: Any) -> None:
        self.snap = snap
        self._graph: LinkGraph | None = None
        self._graph_key: tuple[int, int] | None = None

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

    def document(self, doc_id: str) -> Document | None:
        """``snap.documents.get(doc_id)``."""
        return self.snap.documents.get(doc_id)

    def section(self, key: str) -> Chunk | None:
        """``snap.sections.get(key)``."""
        return self.snap.sections.get(key)

    def sections_of(self, doc_id: str) -> list[Chunk]:
        """The sections whose ``doc_id`` is ``doc_id``, sorted by ``start`` (a scan of the sections)."""
        return sorted((c for c in self.snap.sections.values() if c.doc_id == doc_id), key=lambda c: c.start)

    def row_for(self, chunk_id: str) -> int | None:
        """``snap.row_of.get(chunk_id)``."""
        return self.snap.row_of.get(chunk_id)

    def envelopes(self, scope: Scope, filters: Filters | None = None, *,
                  limit: int | None = None) -> list[Envelope]:
        """The readable documents' envelopes, in ``snap.documents`` order (see :meth:`Backend.envelopes`)."""
        out: list[Envelope] = []
        for doc in self.snap.documents.values():
            if limit is not None and len(out) >= limit:
                break
            env = doc.envelope
            if scope.allows(env) and (filters is None or filters.allows(env)):
                out.append(env)
        return out

    def tenants(self) -> list[str]:
        """Sorted tenants of ``snap.documents``."""
        return sorted({d.envelope.tenant for d in self.snap.documents.values()})

    def doc_types(self, scope: Scope, filters: Filters | None = None, *, limit: int = 200) -> list[str]:
        """Sorted source types of the readable documents (a scan of the envelopes)."""
        return sorted({env.source_type for env in self.envelopes(scope, filters)})[:limit]

    def count_documents(self, scope: Scope, filters: Filters | None = None) -> int:
        """Readable documents passing ``filters`` (a scan of the envelopes)."""
        return len(self.envelopes(scope, filters))

    def similar_ids(self, scope: Scope, filters: Filters | None, doc_id: str, *,
                    limit: int = 200) -> list[str]:
        """Every readable doc id: in memory the caller ranks them all (``limit`` bounds engines only)."""
        return [env.doc_id for env in self.envelopes(scope, filters)]

    def links(self, doc_id: str) -> DocumentLinks:
        """From a :class:`~ragkit.index.links.LinkGraph` of ``snap.documents``, built once per version."""
        documents = self.snap.documents
        key = (id(documents), len(documents))
        if self._graph is None or self._graph_key != key:
            self._graph, self._graph_key = LinkGraph(documents), key
        return self._graph.links(doc_id)

    def __getattr__(self, name: str) -> Any:  # rows, documents, sections, row_of, ...
        return getattr(self.snap, name)


def _mask_of(selection: Any) -> Any:
    if isinstance(selection, MaskSelection):
        return selection.mask
    return selection  # a plain mask (or None) given by a caller of the snapshot API


def as_backend(index: Any) -> Any:
    """The backend to read ``index`` through, for one search (one snapshot).

    ``index`` may be an :class:`~ragkit.index.index.Index`, a snapshot, an ``IndexView``, a
    :class:`ragkit.backends.milvus.MilvusIndex` or an object already implementing :class:`Backend`.
    The check looks at the *class* (``ragkit_backend = True``), so a wrapper that forwards
    unknown attributes (``IndexView``) is wrapped, never bypassed.
    """
    snap = index.snapshot() if hasattr(index, "snapshot") else index
    if getattr(type(snap), "ragkit_backend", False):
        return snap
    return SnapshotBackend(snap)
