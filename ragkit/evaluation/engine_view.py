"""A counterfactual view over an engine backend (Milvus): the change travels inside the filter expression.

:class:`~ragkit.evaluation.views.IndexView` hides documents, replaces envelopes and pins a row by
rewriting an in-memory row mask. An engine backend (one that selects rows in its own engine, such
as :class:`~ragkit.backends.milvus.MilvusSnapshot`) has no row mask to rewrite and no dictionary of
every document to copy, so ``IndexView(milvus_index, ...)`` makes an :class:`EngineView` instead:

* ``select(scope, filters)`` asks the base for the scope's filter expression with the hidden
  documents left out and each replaced one put in or out by its replacement envelope
  (``select_except``): Milvus applies it before top-k, exactly as the scope itself;
* reads by id (``document``, ``section``, ``sections_of``, ``row_for``, ``links``) answer as if a
  hidden document did not exist, and carry replacement envelopes; listings and counts are the
  base's bounded queries corrected for the (few) changed documents;
* a pinned row goes first in both first-stage lists when the caller may see it, and
  :meth:`EngineView.wrap_reranker` keeps it first after reranking.

Example:
    >>> view = IndexView(milvus_index, hidden=["policy-v3"])          # doctest: +SKIP
    >>> view.select(Scope("acme"), Filters()).expr                     # doctest: +SKIP
    '(tenant in ["acme", "global"] and array_length(acl) == 0) and doc_id not in ["policy-v3"]'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.core.ids import doc_of
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.evaluation.rerankers import PinnedReranker
from ragkit.index.links import DocumentLinks
from ragkit.retrieval.fusion import Ranking

__all__ = ["EngineView", "EngineSelection", "is_engine", "LazyDocuments"]


def is_engine(base: Any) -> bool:
    """Whether ``base`` selects rows in its own engine (a backend without in-memory ``rows``)."""
    return bool(getattr(type(base), "ragkit_backend", False)) and hasattr(base, "select_except")


class EngineSelection:
    """The base's selection (passed to its searches as is) with the scope it was made for."""

    def __init__(self, inner: Any, scope: Scope, filters: Filters) -> None:
        self.inner, self.scope, self.filters = inner, scope, filters

    def count(self) -> int:
        """Rows the expression selects (the engine counts)."""
        return int(self.inner.count())

    def __repr__(self) -> str:
        return f"EngineSelection({self.inner!r})"


class LazyDocuments(Mapping[str, Document]):
    """``doc_id -> Document`` read one id at a time from a backend (``len`` counts, never lists)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def __getitem__(self, doc_id: str) -> Document:
        doc = self.backend.document(doc_id)
        if doc is None:
            raise KeyError(doc_id)
        return doc

    def __contains__(self, doc_id: object) -> bool:
        return isinstance(doc_id, str) and self.backend.document(doc_id) is not None

    def __iter__(self) -> Iterator[str]:
        return (env.doc_id for env in self.backend.envelopes(Scope.operator()))

    def __len__(self) -> int:
        return int(self.backend.count_documents(Scope.operator()))


class EngineView:
    """An engine backend as one counterfactual sees it (see the module docstring).

    Args:
        index: a :class:`~ragkit.backends.milvus.MilvusIndex` or one of its snapshots.
        hidden: doc ids no caller may see.
        envelopes: doc id -> replacement envelope (same doc id).
        pinned: a row put at rank 1 of both first-stage lists whenever the caller may see it.
        doc_rows: ignored (an engine finds a document's rows itself); accepted for ``IndexView``'s API.
    """

    ragkit_backend = True

    def __init__(self, index: Any, *, hidden: Iterable[str] = (),
                 envelopes: Mapping[str, Envelope] | None = None, pinned: int | None = None,
                 doc_rows: Any = None) -> None:
        self.base = index.snapshot() if hasattr(index, "snapshot") else index
        self.profile: Any = getattr(index, "profile", None)
        self.hidden = frozenset(hidden)
        self.replaced = dict(envelopes or {})  # ``envelopes`` is the backend method here
        self.pinned = pinned
        for doc_id, env in self.replaced.items():
            if env.doc_id != doc_id:
                raise ValidationError(f"replacement envelope for {doc_id!r} has doc_id {env.doc_id!r}",
                                      field="envelopes")
        self.documents = LazyDocuments(self)

    def snapshot(self) -> EngineView:
        """Itself: a view is as immutable as the snapshot it wraps."""
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    # -- the funnel's reads ---------------------------------------------------------------
    def size(self) -> int:
        """Rows of the base snapshot."""
        return int(self.base.size())

    def _passes(self, env: Envelope, scope: Scope, filters: Filters | None) -> bool:
        return scope.allows(env) and (filters is None or filters.allows(env))

    def select(self, scope: Scope, filters: Filters) -> EngineSelection:
        """The scope's filter expression with hidden and replaced documents written into it."""
        replaced = {d: self._passes(env, scope, filters) for d, env in self.replaced.items()}
        inner = self.base.select_except(scope, filters, hidden=self.hidden, replaced=replaced)
        return EngineSelection(inner, scope, filters)

    def mask(self, scope: Scope, filters: Filters | None = None) -> EngineSelection:
        """Same as :meth:`select` (the in-memory API's name)."""
        return self.select(scope, filters or Filters())

    def _inner(self, selection: Any) -> Any:
        return selection.inner if isinstance(selection, EngineSelection) else selection

    def _pin(self, ranking: Ranking, k: int, selection: Any) -> Ranking:
        row = self.pinned
        if row is None:
            return ranking
        if isinstance(selection, EngineSelection):
            chunk = self.base.fetch([row])[0]
            if chunk.doc_id in self.hidden or not self._passes(self.envelope(row), selection.scope,
                                                                 selection.filters):
                return ranking
        ids = [row] + [r for r in ranking.ids if r != row]
        top = max(ranking.scores, default=1.0)
        scores = [top + 1.0] + [s for r, s in zip(ranking.ids, ranking.scores, strict=True) if r != row]
        return Ranking(ids[:k], scores[:k])

    def search_lexical(self, query: str, k: int, selection: Any) -> Ranking:
        """The base's BM25 ranking under the view's expression, the pinned row first when visible."""
        return self._pin(self.base.search_lexical(query, k, self._inner(selection)), k, selection)

    def search_dense(self, query: str, k: int, selection: Any) -> Ranking:
        """The base's dense ranking under the view's expression, the pinned row first when visible."""
        return self._pin(self.base.search_dense(query, k, self._inner(selection)), k, selection)

    def fetch(self, rows: Sequence[int]) -> list[Chunk]:
        """The base's chunks at ``rows``."""
        return list(self.base.fetch(rows))

    def envelope(self, row: int) -> Envelope:
        """The envelope of ``row``'s document (its replacement, if any)."""
        doc_id = self.base.fetch([row])[0].doc_id
        return self.replaced[doc_id] if doc_id in self.replaced else self.base.envelope(row)

    def parent(self, row: int) -> Chunk | None:
        """The base's parent section of ``row``."""
        return self.base.parent(row)

    def wrap_reranker(self, reranker: Any) -> Any:
        """The reranker this view's searches should use: the pinned passage always scores highest."""
        if self.pinned is None:
            return reranker
        return PinnedReranker(reranker, self.base.fetch([self.pinned])[0].contextual_text())

    # -- reads by id ----------------------------------------------------------------------
    def document(self, doc_id: str) -> Document | None:
        """The base's document (with its replacement envelope), ``None`` when hidden."""
        if doc_id in self.hidden:
            return None
        doc = self.base.document(doc_id)
        if doc is not None and doc_id in self.replaced:
            doc = dataclasses.replace(doc, envelope=self.replaced[doc_id])
        return doc

    def section(self, key: str) -> Chunk | None:
        """The base's section, ``None`` when its document is hidden."""
        return None if doc_of(key) in self.hidden else self.base.section(key)

    def sections_of(self, doc_id: str) -> list[Chunk]:
        """The base's sections of ``doc_id`` (none when it is hidden)."""
        return [] if doc_id in self.hidden else list(self.base.sections_of(doc_id))

    def row_for(self, chunk_id: str) -> int | None:
        """The base's row of ``chunk_id``, ``None`` when its document is hidden."""
        return None if doc_of(chunk_id) in self.hidden else self.base.row_for(chunk_id)

    def _changed(self) -> set[str]:
        return set(self.hidden) | set(self.replaced)

    def envelopes(self, scope: Scope, filters: Filters | None = None, *,
                  limit: int | None = None) -> list[Envelope]:
        """The base's readable envelopes, without hidden documents and with replacements checked again."""
        extra = None if limit is None else limit + len(self._changed())
        changed = self._changed()
        out = [env for env in self.base.envelopes(scope, filters, limit=extra) if env.doc_id not in changed]
        for doc_id, env in self.replaced.items():
            if doc_id not in self.hidden and self._passes(env, scope, filters):
                out.append(env)
        return out if limit is None else out[:limit]

    def count_documents(self, scope: Scope, filters: Filters | None = None) -> int:
        """The base's count, corrected for the hidden and replaced documents."""
        n = int(self.base.count_documents(scope, filters))
        for doc_id in self._changed():
            before = self.base.document(doc_id)
            if before is not None and self._passes(before.envelope, scope, filters):
                n -= 1
        return n + sum(1 for d, env in self.replaced.items()
                       if d not in self.hidden and self._passes(env, scope, filters))

    def doc_types(self, scope: Scope, filters: Filters | None = None, *, limit: int = 200) -> list[str]:
        """The base's source types in scope plus those of visible replacements (a superset at worst)."""
        kinds = set(self.base.doc_types(scope, filters, limit=limit))
        kinds |= {env.source_type for d, env in self.replaced.items()
                  if d not in self.hidden and self._passes(env, scope, filters)}
        return sorted(kinds)[:limit]

    def similar_ids(self, scope: Scope, filters: Filters | None, doc_id: str, *,
                    limit: int = 200) -> list[str]:
        """The base's candidates without hidden documents."""
        return [d for d in self.base.similar_ids(scope, filters, doc_id, limit=limit) if d not in self.hidden]

    def links(self, doc_id: str) -> DocumentLinks:
        """The base's links of ``doc_id`` without hidden documents (a hidden one has none)."""
        if doc_id in self.hidden:
            return DocumentLinks(doc_id)
        got = self.base.links(doc_id)
        keep = lambda ids: tuple(d for d in ids if d not in self.hidden)  # noqa: E731
        return DocumentLinks(doc_id, keep(got.linked_from), keep(got.supersedes), keep(got.superseded_by))

    def tenants(self) -> list[str]:
        """The base's tenants."""
        return list(self.base.tenants())
