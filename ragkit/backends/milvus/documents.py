"""Reading a Milvus index's documents: texts and sections by id, envelopes, types and links by query.

:class:`MilvusDocuments` answers the backend seam's reads by id
(:class:`~ragkit.index.backend.Backend`: ``document``, ``section``, ``sections_of``) with
filtered queries on ``<collection>__docs``, one query per id, and its listings (``envelopes``,
``tenants``, ``doc_types``, ``count_documents``, ``similar_ids``, ``links``) with one bounded
query each on the catalog (:mod:`ragkit.backends.milvus.catalog`), the scope compiled into the
filter expression: never a scan of every document. Found records are cached for the life of the
snapshot that owns the reader (a new snapshot is taken after any write).

Order: Milvus keeps no insertion order, so "index order" on this backend is the primary-key
order of the documents' first records (a hash of the doc id, stable across processes).
"""

from __future__ import annotations

from typing import Any

from ragkit.backends.milvus.catalog import Catalog
from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.expressions import quote, scope_expression
from ragkit.backends.milvus.schema import assemble_texts, to_chunk
from ragkit.core.errors import ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.index.links import DocumentLinks

__all__ = ["MilvusDocuments", "QUERY_BATCH"]

#: Entities per page of a query iterator.
QUERY_BATCH = 4000


class MilvusDocuments:
    """Documents, sections and envelopes of one Milvus index, queried by key and cached.

    Args:
        client: a ``pymilvus.MilvusClient`` (:meth:`MilvusConfig.client
            <ragkit.backends.milvus.config.MilvusConfig.client>`).
        config: the index's configuration (its ``docs_collection`` is read).
    """

    def __init__(self, client: Any, config: MilvusConfig) -> None:
        self.client = client
        self.config = config
        self._documents: dict[str, Document] = {}
        self._sections: dict[str, Chunk] = {}
        self._links: dict[str, DocumentLinks] = {}
        self.catalog = Catalog(client, config)

    def document(self, doc_id: str) -> Document | None:
        """The document ``doc_id`` with its full text (one query), or ``None``."""
        if not isinstance(doc_id, str):
            return None
        if doc_id not in self._documents:
            for key, (header, text) in self._texts("document", "key", doc_id).items():
                self._documents[key] = Document(Envelope.from_mapping(header["envelope"]), text)
        return self._documents.get(doc_id)

    def section(self, key: str) -> Chunk | None:
        """The parent section ``key`` (``doc_id#anchor``; one query), or ``None``."""
        if not isinstance(key, str):
            return None
        if key not in self._sections:
            self._remember_sections(self._texts("section", "key", key))
        return self._sections.get(key)

    def sections_of(self, doc_id: str) -> list[Chunk]:
        """The parent sections of ``doc_id``, by ``start`` (one query; empty for an unknown id)."""
        found = self._remember_sections(self._texts("section", "doc_id", doc_id))
        return sorted(found, key=lambda c: c.start)

    def envelopes(self, scope: Scope, filters: Filters | None = None, *,
                  limit: int | None = None) -> list[Envelope]:
        """Envelopes of the documents ``scope`` may read and ``filters`` pass, in index order.

        One query of the catalog with the scope expression (the same rule as
        :meth:`Scope.allows <ragkit.core.scope.Scope.allows>`), reading stops after ``limit``.
        """
        return self.catalog.envelopes(scope_expression(scope, filters), limit)

    def tenants(self, limit: int = 10_000) -> list[str]:
        """Every tenant of the documents, sorted (no scope applied; one group-by query)."""
        return self.catalog.distinct("tenant", "", limit)

    def doc_types(self, scope: Scope, filters: Filters | None = None, *, limit: int = 200) -> list[str]:
        """The source types of the documents in scope, sorted (one group-by query, ``limit`` types)."""
        return self.catalog.distinct("source_type", scope_expression(scope, filters), limit)

    def count_documents(self, scope: Scope, filters: Filters | None = None) -> int:
        """How many documents are in scope and pass ``filters`` (one ``count(*)`` query)."""
        return self.catalog.count(scope_expression(scope, filters))

    def similar_ids(self, scope: Scope, filters: Filters | None, doc_id: str, *,
                    limit: int = 200) -> list[str]:
        """Ids in scope sharing ``doc_id``'s first or last three characters (at most ``limit``)."""
        if not isinstance(doc_id, str):
            return []
        return self.catalog.similar(scope_expression(scope, filters), doc_id, limit)

    def links(self, doc_id: str) -> DocumentLinks:
        """Who links to ``doc_id`` and its supersession (one query of the documents naming it)."""
        if not isinstance(doc_id, str):
            return DocumentLinks(str(doc_id))
        if doc_id not in self._links:
            self._links[doc_id] = self.catalog.links(doc_id)
        return self._links[doc_id]

    def count(self, kind: str) -> int:
        """How many documents (``kind="document"``) or sections (``"section"``) are stored."""
        res = self.client.query(self.config.docs_collection, filter=f"kind == {quote(kind)} and part == 0",
                                output_fields=["count(*)"], consistency_level="Strong")
        return int(res[0]["count(*)"]) if res else 0

    # -- internals ----------------------------------------------------------------------------
    def _texts(self, kind: str, field: str, value: str) -> dict[str, tuple[dict[str, Any], str]]:
        """``key -> (header, text)`` of the ``kind`` records whose ``field`` is ``value``."""
        if not isinstance(value, str):
            return {}
        try:
            expr = f"kind == {quote(kind)} and {field} == {quote(value)}"
        except ValidationError:
            return {}  # a control character: no stored id has one
        return assemble_texts(self._records(expr, ["key", "part", "payload"]))

    def _remember_sections(self, texts: dict[str, tuple[dict[str, Any], str]]) -> list[Chunk]:
        found = [to_chunk(key, header["doc_id"], header, text, "section")
                 for key, (header, text) in texts.items()]
        self._sections.update((c.chunk_id, c) for c in found)
        return found

    def _records(self, expr: str, fields: list[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        it = self.client.query_iterator(self.config.docs_collection, batch_size=QUERY_BATCH, filter=expr,
                                        output_fields=fields)
        try:
            while True:
                batch = it.next()
                if not batch:
                    break
                out += batch
        finally:
            it.close()
        return out
