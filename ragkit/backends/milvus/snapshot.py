"""One version of a Milvus index, read through the backend seam: :class:`MilvusSnapshot`.

Fusion, rerank, expansion, tools, agent, trace and evaluation read a
:class:`MilvusSnapshot` exactly as they read the in-memory
:class:`~ragkit.index.snapshots.Snapshot` (the :class:`~ragkit.index.backend.Backend` protocol).

Scope inside the engine: :meth:`MilvusSnapshot.select` compiles the caller's
:class:`~ragkit.core.scope.Scope` and :class:`~ragkit.core.scope.Filters` into one boolean
filter expression (:func:`~ragkit.backends.milvus.expressions.scope_expression`), a
:class:`MilvusSelection`, passed to every search, so Milvus applies it before top-k.

Fusion stays in ragkit (see :meth:`MilvusSnapshot.search_lexical`): Milvus returns the BM25
and the dense lists separately and ragkit fuses them, because a server-side
``hybrid_search`` with ``RRFRanker`` returns only the fused scores: the trace's
per-retriever ranks (``lexical_rank``, ``dense_rank``), the per-list weights and the
reranker's combination with the fused ranks would be lost.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.documents import QUERY_BATCH, MilvusDocuments
from ragkit.backends.milvus.expressions import quote_list, scope_expression
from ragkit.backends.milvus.schema import CHUNK_FIELDS, chunk_pk, to_chunk
from ragkit.core.errors import IndexStateError, ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.index.embedder import encode_query
from ragkit.index.links import DocumentLinks
from ragkit.index.settings import IndexSettings
from ragkit.retrieval.fusion import Ranking

__all__ = ["MilvusSelection", "MilvusSnapshot"]

class MilvusSelection:
    """Scope and filters as a Milvus filter expression, applied by the engine before top-k.

    ``count()`` asks Milvus how many rows match. For code that needs a row mask (an
    ``IndexView`` hiding documents), ``numpy.asarray(selection)`` gives one, computed by
    the engine from the same expression.
    """

    def __init__(self, expr: str, snapshot: MilvusSnapshot) -> None:
        self.expr = expr
        self.snapshot = snapshot
        self._count: int | None = None

    def count(self) -> int:
        """Rows the expression selects (Milvus's ``count(*)``, one round trip; rows written after the
        snapshot was taken are counted too, which its searches never return)."""
        if self._count is None:
            res = self.snapshot.client.query(self.snapshot.config.collection, filter=self.expr,
                                             output_fields=["count(*)"], consistency_level="Strong")
            self._count = int(res[0]["count(*)"]) if res else 0
        return self._count

    def sum(self) -> int:
        """Same as :meth:`count` (a mask's ``sum()``)."""
        return self.count()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        mask = np.zeros(self.snapshot.size(), dtype=bool)
        mask[self.snapshot._rows_matching(self.expr)] = True
        return mask.astype(dtype) if dtype is not None else mask

    def __len__(self) -> int:
        return self.snapshot.size()

    def __repr__(self) -> str:
        return f"MilvusSelection({self.expr or 'all rows'!r})"


class MilvusSnapshot:
    """One version of a Milvus index, read through the backend seam (:class:`~ragkit.index.backend.Backend`).

    Rows ``0..size()-1`` are the chunk entities present when the snapshot was taken, in
    primary-key order; a chunk written later is not returned by its searches (take a new
    snapshot), and a chunk deleted later is not returned by Milvus at all. Chunks and
    envelopes are fetched by primary key and cached; a search's results carry their chunks
    with them, so the funnel's reads after a search cost no round trip. Documents, sections,
    envelopes by scope, tenants and links are read from the docs collection by
    :class:`~ragkit.backends.milvus.documents.MilvusDocuments`, one filtered query per id.

    Made by :meth:`MilvusIndex.snapshot() <ragkit.backends.milvus.index.MilvusIndex.snapshot>`
    from the index's ``client``, ``config``, ``settings`` and ``embedder`` (an object with
    ``encode``/``encode_queries``, or a lazy one with ``get()``; ``None`` refuses dense search).
    """

    ragkit_backend = True

    def __init__(self, client: Any, config: MilvusConfig, settings: IndexSettings, embedder: Any) -> None:
        self.client = client
        self.config = config
        self.settings = settings
        self.embedder = embedder
        self.generation = 0
        self._chunks: dict[int, tuple[Chunk, Envelope]] = {}
        self._pks = self._pks_matching("")
        self._docs = MilvusDocuments(client, config)

    def snapshot(self) -> MilvusSnapshot:
        """Itself."""
        return self

    # -- seam ---------------------------------------------------------------------------------
    def size(self) -> int:
        """Rows in this snapshot."""
        return int(len(self._pks))

    def select(self, scope: Scope, filters: Filters) -> MilvusSelection:
        """The filter expression for ``scope`` and ``filters`` (:func:`scope_expression`)."""
        return MilvusSelection(scope_expression(scope, filters), self)

    def select_except(self, scope: Scope, filters: Filters | None = None, *, hidden: Collection[str] = (),
                      replaced: Mapping[str, bool] | None = None) -> MilvusSelection:
        """The selection of ``scope`` and ``filters`` as a counterfactual view changes it, still one
        filter expression: ``hidden`` documents are never selected, and each ``replaced`` document
        is selected exactly when its value is true (its replacement envelope passes).

        Example: ``(tenant in [...] and ...) and doc_id not in ["a", "b"] or doc_id in ["b"]``.
        """
        expr = scope_expression(scope, filters)
        shown = sorted(d for d, ok in (replaced or {}).items() if ok and d not in hidden)
        out = sorted(set(hidden) | set(replaced or {}))
        if out:
            rule = f"doc_id not in {quote_list(out)}"
            expr = f"({expr}) and {rule}" if expr else rule
        if shown:
            expr = f"({expr}) or doc_id in {quote_list(shown)}"
        return MilvusSelection(expr, self)

    def mask(self, scope: Scope, filters: Filters | None = None) -> MilvusSelection:
        """Same as :meth:`select` (the in-memory API's name; ``numpy.asarray`` gives a row mask)."""
        return MilvusSelection(scope_expression(scope, filters), self)

    def _expr(self, selection: Any) -> str:
        if selection is None:
            return ""
        if isinstance(selection, MilvusSelection):
            return selection.expr
        mask = np.asarray(selection)
        if mask.dtype != np.bool_ or mask.shape != (self.size(),):
            raise ValidationError(f"mask must be a MilvusSelection or a bool array of shape ({self.size()},);"
                                  " "
                                  f"got {mask.dtype} {mask.shape}", field="mask")
        # a row mask made in ragkit (e.g. an IndexView hiding documents): as a primary-key list
        if mask.all():
            return ""
        if mask.sum() <= len(mask) // 2:
            return f"pk in [{', '.join(str(int(p)) for p in self._pks[mask])}]"
        return f"pk not in [{', '.join(str(int(p)) for p in self._pks[~mask])}]"

    def search_lexical(self, query: str, k: int, selection: Any) -> Ranking:
        """BM25 by Milvus (its BM25 function's sparse field) among the selected rows.

        Why fusion is not done on the server (``hybrid_search`` with ``RRFRanker``): it
        returns only fused scores, and the trace needs each retriever's own ranks
        (``CandidateTrace.lexical_rank`` / ``dense_rank``), the funnel's per-list weights and
        the fused ranks the reranker is combined with. Two searches and
        :func:`ragkit.retrieval.fusion.rrf` keep all of them, at the cost of one more round trip.
        """
        _check_k(k)
        if not isinstance(query, str):
            raise ValidationError(f"search: query is a {type(query).__name__}; expected a str", field="query")
        if not query.strip() or not self.size():
            return Ranking([], [])
        return self._search([query], "sparse", {"metric_type": "BM25"}, k, selection)

    def search_dense(self, query: str, k: int, selection: Any) -> Ranking:
        """Inner product over the embeddings (exact with ``FLAT``) among the selected rows."""
        _check_k(k)
        if not query.strip() or not self.size():
            return Ranking([], [])
        embedder = self.embedder
        if embedder is None:
            raise IndexStateError("this MilvusIndex has no embedder; open it with MilvusIndex.open(config) "
                                  "(which loads the recorded one) or pass embedder=")
        vector = encode_query(embedder, query).reshape(-1)
        return self._search([vector.tolist()], "dense", {"metric_type": "IP"}, k, selection)

    def _search(self, data: list[Any], field: str, params: dict[str, Any], k: int, selection: Any) -> Ranking:
        expr = self._expr(selection)
        res = self.client.search(self.config.collection, data=data, anns_field=field,
                                 limit=int(min(k, 16384)),
                                 filter=expr, search_params=params, output_fields=CHUNK_FIELDS,
                                 consistency_level="Strong")
        found: list[tuple[float, int]] = []
        for hit in res[0] if res else []:
            entity = hit.get("entity", hit)
            pk = int(hit.get("id", entity.get("pk")))
            row = self._row_of_pk(pk)
            if row is None:
                continue  # written after this snapshot was taken
            self._remember(pk, entity)
            found.append((float(hit["distance"]), row))
        found.sort(key=lambda x: (-x[0], x[1]))  # ties by row, as the in-memory retrievers
        return Ranking([r for _, r in found], [s for s, _ in found])

    def fetch(self, rows: Sequence[int]) -> list[Chunk]:
        """Chunks at ``rows`` (one query for those not cached)."""
        pks = [self._pk_of_row(r) for r in rows]
        self._load([p for p in pks if p not in self._chunks])
        return [self._chunks[p][0] for p in pks]

    def envelope(self, row: int) -> Envelope:
        """The envelope of the document of ``row`` (stored on the chunk entity)."""
        pk = self._pk_of_row(row)
        self._load([pk] if pk not in self._chunks else [])
        return self._chunks[pk][1]

    def parent(self, row: int) -> Chunk | None:
        """The parent section of ``row`` (``None`` when its chunker has no sections)."""
        pid = self.fetch([row])[0].parent_id
        return self._docs.section(pid) if pid else None

    # -- reads by id (the docs collection, :class:`MilvusDocuments`) ----------------------------
    def document(self, doc_id: str) -> Document | None:
        """The document ``doc_id`` with its full text, or ``None`` (no scope applied)."""
        return self._docs.document(doc_id)

    def section(self, key: str) -> Chunk | None:
        """The parent section ``doc_id#anchor``, or ``None``."""
        return self._docs.section(key)

    def sections_of(self, doc_id: str) -> list[Chunk]:
        """The parent sections of ``doc_id`` by ``start`` (empty for an unknown id)."""
        return self._docs.sections_of(doc_id)

    def row_for(self, chunk_id: str) -> int | None:
        """The row of the chunk ``chunk_id`` in this snapshot (a primary-key lookup), or ``None``."""
        if not isinstance(chunk_id, str):
            return None
        row = self._row_of_pk(chunk_pk(chunk_id))
        if row is None or self.fetch([row])[0].chunk_id != chunk_id:
            return None
        return row

    def envelopes(self, scope: Scope, filters: Filters | None = None, *,
                  limit: int | None = None) -> list[Envelope]:
        """Envelopes of the documents ``scope`` may read and ``filters`` pass (at most ``limit``)."""
        return self._docs.envelopes(scope, filters, limit=limit)

    def tenants(self) -> list[str]:
        """Every tenant of the documents, sorted (no scope applied)."""
        return self._docs.tenants()

    def doc_types(self, scope: Scope, filters: Filters | None = None, *, limit: int = 200) -> list[str]:
        """The source types in scope, sorted (one group-by query of the catalog)."""
        return self._docs.doc_types(scope, filters, limit=limit)

    def count_documents(self, scope: Scope, filters: Filters | None = None) -> int:
        """Documents in scope passing ``filters`` (one count query of the catalog)."""
        return self._docs.count_documents(scope, filters)

    def similar_ids(self, scope: Scope, filters: Filters | None, doc_id: str, *,
                    limit: int = 200) -> list[str]:
        """Ids in scope that share ``doc_id``'s first or last three characters (at most ``limit``)."""
        return self._docs.similar_ids(scope, filters, doc_id, limit=limit)

    def links(self, doc_id: str) -> DocumentLinks:
        """Who links to ``doc_id`` and its supersession named on either side (no scope applied)."""
        return self._docs.links(doc_id)

    def stats(self) -> dict[str, Any]:
        """Counts, for display."""
        return {"documents": self._docs.count("document"), "sections": self._docs.count("section"),
                "rows": self.size(),
                "backend": "milvus", "collection": self.config.collection,
                "chunker": self.settings.chunker.method}

    # -- internals ----------------------------------------------------------------------------
    def _pk_of_row(self, row: int) -> int:
        if isinstance(row, bool) or not isinstance(row, (int, np.integer)) or not 0 <= row < self.size():
            raise ValidationError(f"row {row!r} is outside this snapshot's 0..{self.size() - 1}", field="row")
        return int(self._pks[int(row)])

    def _row_of_pk(self, pk: int) -> int | None:
        i = int(np.searchsorted(self._pks, pk))
        return i if i < len(self._pks) and int(self._pks[i]) == pk else None

    def _pks_matching(self, expr: str) -> np.ndarray:
        pks: list[int] = []
        it = self.client.query_iterator(self.config.collection, batch_size=QUERY_BATCH, filter=expr,
                                        output_fields=["pk"])
        try:
            while True:
                batch = it.next()
                if not batch:
                    break
                pks += [int(r["pk"]) for r in batch]
        finally:
            it.close()
        return np.unique(np.array(pks, dtype=np.int64))

    def _rows_matching(self, expr: str) -> np.ndarray:
        pks = self._pks_matching(expr)
        pos = np.searchsorted(self._pks, pks)
        pos = np.minimum(pos, max(len(self._pks) - 1, 0))
        ok = (self._pks[pos] == pks) if len(self._pks) else np.zeros(len(pks), dtype=bool)
        return pos[ok]

    def _remember(self, pk: int, entity: Mapping[str, Any]) -> None:
        if pk in self._chunks:
            return
        meta = json.loads(entity["meta"])
        chunk = to_chunk(entity["chunk_id"], entity["doc_id"], meta, entity["text"], "chunk")
        self._chunks[pk] = (chunk, Envelope.from_mapping(json.loads(entity["envelope"])))

    def _load(self, pks: Sequence[int]) -> None:
        for i in range(0, len(pks), 1000):
            part = list(dict.fromkeys(pks[i:i + 1000]))
            res = self.client.query(self.config.collection, filter=f"pk in [{', '.join(map(str, part))}]",
                                    output_fields=CHUNK_FIELDS, consistency_level="Strong")
            for entity in res:
                self._remember(int(entity["pk"]), entity)
            missing = [p for p in part if p not in self._chunks]
            if missing:
                raise IndexStateError(f"{len(missing)} row(s) of this snapshot were deleted since it was "
                                      "taken; "
                                      "take a new one (index.snapshot() after a write, or index.refresh())")


def _check_k(k: Any) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValidationError(f"k={k!r}: ask for at least one result (k >= 1)", field="k")
