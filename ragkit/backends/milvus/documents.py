"""Reading the docs collection of a Milvus index: documents, parent sections, envelopes and links.

:class:`MilvusDocuments` answers the backend seam's reads by id
(:class:`~ragkit.index.backend.Backend`: ``document``, ``section``, ``sections_of``,
``envelopes``, ``tenants``, ``links``) with filtered queries on ``<collection>__docs``: one
query per id, never a scan of every text. Found records are cached for the life of the
snapshot that owns the reader.

Order: Milvus keeps no insertion order, so "index order" on this backend is the primary-key
order of the documents' first records (a hash of the doc id, stable across processes).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.expressions import quote
from ragkit.backends.milvus.schema import assemble_texts, to_chunk
from ragkit.core.errors import ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.index.links import DocumentLinks, LinkGraph

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
        self._envelopes: list[Envelope] | None = None  # every document's, once read in full
        self._graph: LinkGraph | None = None

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
        """Envelopes of the documents ``scope`` may read and ``filters`` pass, in primary-key order.

        The rule is :meth:`Scope.allows <ragkit.core.scope.Scope.allows>` and
        :meth:`Filters.allows <ragkit.core.scope.Filters.allows>`, applied here (one access
        rule); reading stops once ``limit`` envelopes are found.
        """
        out: list[Envelope] = []
        if limit is not None and limit <= 0:
            return out
        for env in self._every_envelope():
            if scope.allows(env) and (filters is None or filters.allows(env)):
                out.append(env)
                if limit is not None and len(out) >= limit:
                    break
        return out

    def tenants(self) -> list[str]:
        """Every tenant of the documents, sorted (no scope applied)."""
        return sorted({env.tenant for env in self._every_envelope()})

    def links(self, doc_id: str) -> DocumentLinks:
        """Who links to ``doc_id`` and its supersession (a :class:`~ragkit.index.links.LinkGraph` of
        every envelope, built on the first call)."""
        if self._graph is None:
            self._graph = LinkGraph({env.doc_id: Document(env, "") for env in self._every_envelope()})
        return self._graph.links(doc_id)

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

    def _every_envelope(self) -> Iterator[Envelope]:
        """Every document's envelope in primary-key order, read page by page (the first read
        that goes to the end keeps them; one that stops early reads no more pages)."""
        if self._envelopes is not None:
            yield from self._envelopes
            return
        seen: list[Envelope] = []
        it = self.client.query_iterator(self.config.docs_collection, batch_size=QUERY_BATCH,
                                        filter='kind == "document" and part == 0', output_fields=["payload"])
        try:
            while True:
                batch = it.next()
                if not batch:
                    break
                for record in batch:
                    env = Envelope.from_mapping(json.loads(record["payload"])["h"]["envelope"])
                    seen.append(env)
                    yield env
        finally:
            it.close()
        self._envelopes = seen

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
