"""The catalog of a Milvus index: one small record per document, and the index's state.

``<collection>__catalog`` holds, per document, what keeping the index fresh and answering the
tools needs without reading any text: its content hash (:func:`~ragkit.index.manifest.doc_fingerprint`),
source file, when it was indexed and when its source changed (:class:`~ragkit.index.reconcile.DocState`,
for sync and staleness), its envelope (JSON) with the fields a scope expression reads (``tenant``,
``acl``, ``source_type``, dates: the same columns as a chunk entity, so
:func:`~ragkit.backends.milvus.expressions.scope_expression` applies unchanged) and its links
(``links``, ``supersedes``, ``superseded_by`` as arrays, so "who links to X" is one filtered query).

One more record holds the index's *state*: the committed ``generation`` (a sync or an ingestion
commits one) and a ``version`` that every write changes. A
:class:`~ragkit.backends.milvus.index.MilvusIndex` compares the version before each snapshot, so a
reader in any process sees a write as soon as it returns.

Every read here is one query with a limit (or one page-by-page scan of the small fields, for a
sync): the number of source types, a count, a "did you mean" list, the documents naming one id.

Example:
    >>> catalog_pk("settlement-runbook-v2") == catalog_pk("settlement-runbook-v2")
    True
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.expressions import quote, quote_list
from ragkit.backends.milvus.schema import (
    add_scope_fields,
    assemble_texts,
    check_len,
    primary_key,
    scope_fields,
)
from ragkit.core.errors import ValidationError
from ragkit.core.records import Document, Envelope
from ragkit.index.links import DocumentLinks, LinkGraph
from ragkit.index.manifest import doc_fingerprint, now, source_changed_at
from ragkit.index.reconcile import DocState

__all__ = ["Catalog", "LINK_CAPACITY", "catalog_pk", "create_catalog", "catalog_entity"]

#: Links (and each of supersedes, superseded_by) one document may name on the Milvus backend.
LINK_CAPACITY = 4096
#: Entities per page of a scan.
PAGE = 4000
_STATE_PK = primary_key("state:")
_DOC = 'kind == "doc"'
_STATE_FIELDS = ["generation", "version", "indexed_at"]
_LINK_FIELDS = ("links", "supersedes", "superseded_by")


def catalog_pk(doc_id: str) -> int:
    """The catalog record's primary key: that of the document's first record in the docs collection,
    so both collections list documents in the same ("index") order."""
    return primary_key(f"document:{doc_id}:0")


def create_catalog(client: Any, config: MilvusConfig) -> None:
    """Create ``<collection>__catalog`` and its state record (generation 0)."""
    from pymilvus import DataType

    s = client.create_schema(auto_id=False, description="ragkit catalog: one record per document, and state")
    s.add_field("pk", DataType.INT64, is_primary=True)
    s.add_field("kind", DataType.VARCHAR, max_length=16)
    s.add_field("doc_id", DataType.VARCHAR, max_length=1024)
    s.add_field("fingerprint", DataType.VARCHAR, max_length=64)
    s.add_field("source_path", DataType.VARCHAR, max_length=4096)
    s.add_field("indexed_at", DataType.VARCHAR, max_length=64)
    s.add_field("changed_at", DataType.VARCHAR, max_length=64)
    s.add_field("envelope", DataType.VARCHAR, max_length=65535)
    add_scope_fields(s)
    for name in _LINK_FIELDS:
        s.add_field(name, DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=LINK_CAPACITY,
                    max_length=1024)
    s.add_field("generation", DataType.INT64)
    s.add_field("version", DataType.INT64)
    # Milvus 2.5 needs a vector field; the group-by search of distinct values uses it
    s.add_field("vec", DataType.FLOAT_VECTOR, dim=2)
    ip = client.prepare_index_params()
    ip.add_index("vec", index_type="FLAT", metric_type="L2")
    client.create_collection(config.catalog_collection, schema=s, index_params=ip, consistency_level="Strong")
    client.insert(config.catalog_collection, [_state_entity(0, _new_version(), now())])


def catalog_entity(doc: Document, *, indexed_at: str, changed_at: str | None,
                   source_path: str | None = None) -> dict[str, Any]:
    """The catalog record of ``doc`` (``source_path`` overrides the envelope's: a moved file).

    Raises:
        ValidationError: more links than :data:`LINK_CAPACITY`, or anything :func:`scope_fields` refuses.
    """
    env = doc.envelope
    arrays = {name: list(dict.fromkeys(getattr(env, name))) for name in _LINK_FIELDS}
    for name, values in arrays.items():
        if len(values) > LINK_CAPACITY:
            raise ValidationError(f"{env.doc_id}: {len(values)} {name}; the Milvus backend holds at most "
                                  f"{LINK_CAPACITY} per document", field=name)
    return {"pk": catalog_pk(env.doc_id), "kind": "doc", "doc_id": env.doc_id,
            "fingerprint": doc_fingerprint(doc),
            "source_path": (source_path if source_path is not None else env.source_path) or "",
            "indexed_at": indexed_at, "changed_at": changed_at or "",
            "envelope": check_len(json.dumps(env.to_mapping(), ensure_ascii=False, default=str),
                                  f"envelope of {env.doc_id!r}"),
            **scope_fields(env), **arrays, "generation": 0, "version": 0, "vec": [1.0, 0.0]}


def _state_entity(generation: int, version: int, committed_at: str) -> dict[str, Any]:
    return {"pk": _STATE_PK, "kind": "state", "doc_id": "", "fingerprint": "", "source_path": "",
            "indexed_at": committed_at, "changed_at": "", "envelope": "{}", "tenant": "", "acl": [],
            "source_type": "", "published": 0, "eff_from": 0, "eff_to": 0, "has_published": False,
            "has_from": False, "has_to": False, "links": [], "supersedes": [], "superseded_by": [],
            "generation": generation, "version": version, "vec": [1.0, 0.0]}


def _new_version() -> int:
    return random.getrandbits(62)


def _docs(expr: str) -> str:
    return f"{_DOC} and ({expr})" if expr else _DOC


class Catalog:
    """Reads and writes of one index's catalog collection (see the module docstring).

    Args:
        client: a ``pymilvus.MilvusClient``.
        config: the index's configuration (its ``catalog_collection``).
    """

    def __init__(self, client: Any, config: MilvusConfig) -> None:
        self.client = client
        self.name = config.catalog_collection

    # -- writing ------------------------------------------------------------------------------
    def put(self, docs: Sequence[Document], *, sources: Mapping[str, str | None] | None = None) -> None:
        """Record ``docs`` as indexed now (content hash, source change time, envelope, links)."""
        stamp = now()
        rows = [catalog_entity(d, indexed_at=stamp, changed_at=source_changed_at(d),
                               source_path=(sources or {}).get(d.doc_id)) for d in docs]
        for i in range(0, len(rows), 500):
            self.client.upsert(self.name, rows[i:i + 500])

    def remove(self, doc_ids: Sequence[str]) -> None:
        """Forget ``doc_ids``."""
        for i in range(0, len(doc_ids), 1000):
            self.client.delete(self.name, filter=f"{_DOC} and doc_id in {quote_list(doc_ids[i:i + 1000])}")

    def relocate(self, moved: Mapping[str, str | None]) -> None:
        """Record the new source file of documents whose file moved without changing."""
        ids = list(moved)
        for i in range(0, len(ids), 1000):
            part = ids[i:i + 1000]
            rows = self.client.query(self.name, filter=f"{_DOC} and doc_id in {quote_list(part)}",
                                     output_fields=["*"], consistency_level="Strong")
            for row in rows:
                row["source_path"] = moved[row["doc_id"]] or ""
            if rows:
                self.client.upsert(self.name, [_plain(r) for r in rows])

    def touch(self) -> int:
        """Record that the index changed (a new version, same generation); returns the version."""
        generation, _version = self.state()
        version = _new_version()
        self.client.upsert(self.name, [_state_entity(generation, version, now())])
        return version

    def commit(self) -> int:
        """Commit a generation (a sync or an ingestion finished); returns its number."""
        generation, _version = self.state()
        self.client.upsert(self.name, [_state_entity(generation + 1, _new_version(), now())])
        return generation + 1

    # -- reading ------------------------------------------------------------------------------
    def state(self) -> tuple[int, int]:
        """``(generation, version)`` (one query by primary key)."""
        rows = self.client.query(self.name, filter=f"pk == {_STATE_PK}", output_fields=_STATE_FIELDS,
                                 consistency_level="Strong")
        return (int(rows[0]["generation"]), int(rows[0]["version"])) if rows else (0, 0)

    def states(self) -> dict[str, DocState]:
        """Every document's :class:`~ragkit.index.reconcile.DocState`, in index order (small fields only)."""
        out: dict[str, DocState] = {}
        for r in self._scan(_DOC, ["doc_id", "fingerprint", "source_path", "indexed_at", "changed_at"]):
            out[r["doc_id"]] = DocState(r["fingerprint"], r["source_path"] or None, r["indexed_at"] or None,
                                        r["changed_at"] or None)
        return out

    def envelopes(self, expr: str, limit: int | None = None) -> list[Envelope]:
        """Envelopes of the documents ``expr`` selects, in index order, at most ``limit``."""
        if limit is not None and limit <= 0:
            return []
        out = []
        for r in self._scan(_docs(expr), ["envelope"], limit):
            out.append(Envelope.from_mapping(json.loads(r["envelope"])))
        return out

    def distinct(self, field: str, expr: str, limit: int) -> list[str]:
        """The distinct values of ``field`` among the documents ``expr`` selects (a group-by search:
        one round trip, at most ``limit`` values), sorted."""
        res = self.client.search(self.name, data=[[1.0, 0.0]], anns_field="vec", limit=int(min(limit, 16384)),
                                 group_by_field=field, filter=_docs(expr), output_fields=[field],
                                 search_params={"metric_type": "L2"}, consistency_level="Strong")
        return sorted({hit["entity"][field] for hit in (res[0] if res else [])})

    def count(self, expr: str) -> int:
        """How many documents ``expr`` selects."""
        res = self.client.query(self.name, filter=_docs(expr), output_fields=["count(*)"],
                                consistency_level="Strong")
        return int(res[0]["count(*)"]) if res else 0

    def links(self, doc_id: str, limit: int = 10_000) -> DocumentLinks:
        """Who links to ``doc_id`` and its supersession named on either side: one query for the
        documents that name it (at most ``limit``), inverted by :class:`~ragkit.index.links.LinkGraph`."""
        try:
            x = quote(doc_id)
        except ValidationError:
            return DocumentLinks(doc_id)
        expr = f"doc_id == {x} or " + " or ".join(f"array_contains({f}, {x})" for f in _LINK_FIELDS)
        naming = {env.doc_id: Document(env, "") for env in self.envelopes(expr, limit)}
        return LinkGraph(naming).links(doc_id)

    def similar(self, expr: str, doc_id: str, limit: int) -> list[str]:
        """Doc ids that ``expr`` selects sharing ``doc_id``'s first or last three characters (two
        queries, at most ``limit`` ids)."""
        clean = "".join(ch for ch in doc_id if ch not in '%_\\"' and ord(ch) >= 32)
        out: dict[str, None] = {}
        for pattern in {f"{clean[:3]}%", f"%{clean[-3:]}"} if clean else set():
            rule = f"doc_id like {quote(pattern)}"
            for r in self._scan(_docs(f"({expr}) and {rule}" if expr else rule), ["doc_id"], limit // 2):
                out[r["doc_id"]] = None
        return list(out)

    def exists(self) -> bool:
        """Whether the catalog collection exists (an index made before it had none)."""
        return bool(self.client.has_collection(self.name))

    def _scan(self, expr: str, fields: list[str], limit: int | None = None) -> Iterator[dict[str, Any]]:
        """Records ``expr`` selects, in primary-key order, page by page, stopping after ``limit``."""
        size = PAGE if limit is None else max(1, min(PAGE, limit))
        it = self.client.query_iterator(self.name, batch_size=size, filter=expr, output_fields=fields)
        seen = 0
        try:
            while limit is None or seen < limit:
                batch = it.next()
                if not batch:
                    break
                for record in batch[: None if limit is None else limit - seen]:
                    seen += 1
                    yield record
        finally:
            it.close()


def backfill(catalog: Catalog, client: Any, config: MilvusConfig) -> int:
    """Fill a new catalog from the docs collection of an index made before catalogs (reads every
    document once); returns the documents recorded."""
    done = 0
    batch: list[Document] = []
    for doc in _stored_documents(client, config):
        batch.append(doc)
        if len(batch) >= 200:
            catalog.put(batch)
            done, batch = done + len(batch), []
    if batch:
        catalog.put(batch)
        done += len(batch)
    return done


def _stored_documents(client: Any, config: MilvusConfig) -> Iterable[Document]:
    records: list[dict[str, Any]] = []
    it = client.query_iterator(config.docs_collection, batch_size=PAGE, filter='kind == "document"',
                               output_fields=["key", "part", "payload"])
    try:
        while True:
            page = it.next()
            if not page:
                break
            records += page
    finally:
        it.close()
    for _key, (header, text) in assemble_texts(records).items():
        yield Document(Envelope.from_mapping(header["envelope"]), text)


def _plain(record: Mapping[str, Any]) -> dict[str, Any]:
    """A queried record as an entity to upsert (vectors and arrays as plain lists)."""
    out = {}
    for key, value in record.items():
        out[key] = [float(x) for x in value] if key == "vec" else (list(value) if key in (
            "acl", *_LINK_FIELDS) else value)
    return out
