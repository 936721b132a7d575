"""Index views: an index as one counterfactual sees it, without touching the index.

:class:`IndexView` wraps an index (or one of its snapshots) and hides documents, replaces
envelopes, or pins a row at rank 1 of both first-stage lists (and at the top of the
reranker's scores, :class:`~ragkit.evaluation.rerankers.PinnedReranker`), delegating
everything else: nothing is re-embedded and no vector changes.
:class:`CounterfactualSetup` computes once per index what every view of it needs.

Example:
    >>> from ragkit.course.shortcuts import course_index                   # doctest: +SKIP
    >>> view = CounterfactualSetup(course_index()).view(hidden=["policy-v3"])  # doctest: +SKIP
    >>> "policy-v3" in view.documents                                       # doctest: +SKIP
    False
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.core.records import GLOBAL_TENANT, Document, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.evaluation.engine_view import EngineView, LazyDocuments, is_engine
from ragkit.evaluation.rerankers import PinnedReranker
from ragkit.retrieval.fusion import Ranking

__all__ = ["IndexView", "CounterfactualSetup"]


class IndexView:
    """An index as seen by one counterfactual: hidden documents, replaced envelopes, a pinned row.

    Shares rows, vectors and retrievers with ``index`` (nothing is re-encoded); uses only its
    public reading interface (``rows``, ``documents``, ``sections``, ``mask``, ``envelope``,
    ``search_lexical``, ``search_dense``, ``parent``); anything else is delegated.

    Args:
        index: an :class:`~ragkit.index.index.Index` or a snapshot of one.
        hidden: doc ids no caller may see (absent from ``documents``, masked from every search).
        envelopes: doc id -> replacement envelope (same doc id).
        pinned: a row put at rank 1 of both first-stage lists whenever the caller may see it.
        doc_rows: each document's rows, when already known (saves a scan of every row).
    """

    def __new__(cls, index: Any, **kwargs: Any) -> Any:
        """An :class:`~ragkit.evaluation.engine_view.EngineView` when ``index`` selects in its own
        engine (Milvus): the change then travels in the filter expression, not as a row mask."""
        base = index.snapshot() if hasattr(index, "snapshot") else index
        if cls is IndexView and is_engine(base):
            return EngineView(base, **kwargs)
        return super().__new__(cls)

    def __init__(self, index: Any, *, hidden: Iterable[str] = (),
                 envelopes: Mapping[str, Envelope] | None = None, pinned: int | None = None,
                 doc_rows: Mapping[str, list[int]] | None = None):
        self.base = index.snapshot() if hasattr(index, "snapshot") else index
        #: the index's corpus profile, when ``index`` has one (an agent over the view reads with it)
        self.profile: Any = getattr(index, "profile", None)
        self.hidden = frozenset(hidden)
        self.envelopes = dict(envelopes or {})
        self.pinned = pinned
        for doc_id, env in self.envelopes.items():
            if env.doc_id != doc_id:
                raise ValidationError(f"replacement envelope for {doc_id!r} has doc_id {env.doc_id!r}",
                                      field="envelopes")
        docs = self.base.documents
        self.documents: dict[str, Document] = {
            d: (dataclasses.replace(doc, envelope=self.envelopes[d]) if d in self.envelopes else doc)
            for d, doc in docs.items() if d not in self.hidden}
        self.sections = {k: c for k, c in self.base.sections.items() if c.doc_id not in self.hidden}
        self.rows = self.base.rows
        self._doc_rows: dict[str, list[int]] = defaultdict(list)
        touched = self.hidden | set(self.envelopes)
        if doc_rows is not None:  # each document's rows, computed once (CounterfactualSetup)
            self._doc_rows.update({d: list(doc_rows.get(d, [])) for d in touched})
        elif touched:
            for i, c in enumerate(self.rows):
                if c.doc_id in touched:
                    self._doc_rows[c.doc_id].append(i)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def snapshot(self) -> IndexView:
        """Itself: a view is as immutable as the snapshot it wraps."""
        return self

    def mask(self, scope: Scope, filters: Filters | None = None) -> np.ndarray:
        """The base's row mask for ``scope`` and ``filters``: hidden rows off, replaced envelopes checked."""
        mask = np.array(self.base.mask(scope, filters), dtype=bool, copy=True)
        for doc_id in self.hidden:
            mask[self._doc_rows.get(doc_id, [])] = False
        for doc_id, env in self.envelopes.items():
            if doc_id in self.hidden:
                continue
            visible = scope.allows(env) and (filters is None or filters.allows(env))
            mask[self._doc_rows.get(doc_id, [])] = visible
        return mask

    def envelope(self, row: int) -> Envelope:
        """The envelope of ``row``'s document (its replacement, if any)."""
        doc_id = self.rows[row].doc_id
        return self.envelopes[doc_id] if doc_id in self.envelopes else self.base.envelope(row)

    def _pin(self, ranking: Ranking, k: int, mask: np.ndarray | None) -> Ranking:
        row = self.pinned
        if row is None or (mask is not None and not mask[row]):
            return ranking
        ids = [row] + [r for r in ranking.ids if r != row]
        top = max(ranking.scores, default=1.0)
        scores = [top + 1.0] + [s for r, s in zip(ranking.ids, ranking.scores, strict=True) if r != row]
        return Ranking(ids[:k], scores[:k])

    def search_lexical(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        """The base's BM25 ranking, the pinned row first when ``mask`` lets the caller see it."""
        return self._pin(self.base.search_lexical(query, k, mask), k, mask)

    def search_dense(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        """The base's dense ranking, the pinned row first when ``mask`` lets the caller see it."""
        return self._pin(self.base.search_dense(query, k, mask), k, mask)

    def parent(self, row: int) -> Any:
        """The base's parent section of ``row``."""
        return self.base.parent(row)

    def wrap_reranker(self, reranker: Any) -> Any:
        """The reranker this view's searches should use: the pinned passage always scores highest."""
        if self.pinned is None:
            return reranker
        return PinnedReranker(reranker, self.rows[self.pinned].contextual_text())


class CounterfactualSetup:
    """What every counterfactual of one index needs, computed once: its snapshot, documents,
    tenants, and each document's rows (so that a case's view does not scan every row).

    Args:
        index: the index (or snapshot) the baseline ran on.
    """

    def __init__(self, index: Any):
        self.base = index.snapshot() if hasattr(index, "snapshot") else index
        self.engine = is_engine(self.base)
        if self.engine:  # an engine backend: documents by id, tenants by one query, rows by chunk id
            self.docs: Mapping[str, Document] = LazyDocuments(self.base)
            self.tenants = [t for t in self.base.tenants() if t != GLOBAL_TENANT]
            self.doc_rows: dict[str, list[int]] = {}
            return
        self.docs = self.base.documents
        self.tenants = sorted({d.envelope.tenant for d in self.docs.values()} - {GLOBAL_TENANT})
        rows: dict[str, list[int]] = defaultdict(list)
        for i, c in enumerate(self.base.rows):
            rows[c.doc_id].append(i)
        self.doc_rows = dict(rows)

    def view(self, **kwargs: Any) -> IndexView:
        """An :class:`IndexView` of the base (keywords as for IndexView)."""
        return IndexView(self.base, doc_rows=self.doc_rows, **kwargs)

    def row_of(self, doc_id: str, anchor: str | None) -> int | None:
        """The row of ``doc_id``'s section ``anchor`` (else its first row; None if it has none)."""
        if self.engine:
            anchors = [anchor] if anchor is not None else []
            anchors += [c.anchor for c in self.base.sections_of(doc_id)]
            for a in anchors:
                row = self.base.row_for(f"{doc_id}#{a}~0")
                if row is not None:
                    return int(row)
            return None
        rows = self.doc_rows.get(doc_id, [])
        if anchor is not None:
            for i in rows:
                if self.base.rows[i].anchor == anchor:
                    return i
        return rows[0] if rows else None
