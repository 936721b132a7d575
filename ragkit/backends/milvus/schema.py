"""What Milvus stores for a ragkit index: the two collections' schema, and entities to and from records.

* ``<collection>``: one entity per retrievable chunk: its text, the text BM25 reads
  (``Chunk.contextual_text()``, as the in-memory index), a ``SPARSE_FLOAT_VECTOR`` filled
  by Milvus's own **BM25 function** (analyzer ``english`` by default: standard tokenizer,
  lowercase, English stopwords and Snowball stemmer), the dense embedding (exact ``FLAT``
  inner product by default, as the in-memory ``faiss.IndexFlatIP``), and the envelope
  fields scope and filters need, denormalised onto every chunk: ``tenant``, ``acl``
  (``ARRAY<VARCHAR>``), ``source_type``, and ``published``/``eff_from``/``eff_to`` as int64
  microseconds since the epoch each with an explicit ``has_*`` flag (milvus-lite 2.5 has no
  nullable fields, so "no date" is never a magic number).
* ``<collection>__docs``: documents, parent sections and one ``meta`` record (settings,
  embedder name/version/dim), stored as JSON payload parts (:func:`text_entities`, joined
  again by :func:`assemble_texts`).

Primary keys are hashes of ids (:func:`primary_key`), so several processes can write
disjoint documents at once and a chunk is found by its id without a query.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.expressions import micros, quote
from ragkit.core.errors import ValidationError
from ragkit.core.records import Chunk, Envelope

__all__ = ["VARCHAR_BYTES", "PIECE", "ACL_CAPACITY", "CHUNK_FIELDS", "primary_key", "chunk_pk", "check_len",
           "scope_fields", "add_scope_fields",
           "create_collections", "chunk_meta", "chunk_entity", "text_entities", "assemble_texts", "to_chunk",
           "meta_entity"]

#: Bytes a Milvus VARCHAR field holds.
VARCHAR_BYTES = 65535
#: Characters of text per docs-collection entity (JSON-escaped, stays < 64 KiB).
PIECE = 8000
#: ACL groups one chunk entity holds.
ACL_CAPACITY = 64
#: Fields a read of chunk entities asks for.
CHUNK_FIELDS = ["pk", "chunk_id", "doc_id", "meta", "text", "envelope"]


def primary_key(key: str) -> int:
    """A stable 63-bit primary key for ``key`` (same chunk id, same key, in every process).

    Example:
        >>> primary_key("chunk:a#b~0") == primary_key("chunk:a#b~0") < 2**63
        True
    """
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") & (2**63 - 1)


def chunk_pk(chunk_id: str) -> int:
    """The primary key of the chunk entity of ``chunk_id`` (a lookup by id needs no query)."""
    return primary_key("chunk:" + chunk_id)


def check_len(text: str, what: str) -> str:
    """``text``, when it fits a Milvus VARCHAR field (raises ValidationError naming ``what`` otherwise)."""
    if len(text.encode()) > VARCHAR_BYTES:
        raise ValidationError(f"{what} is {len(text.encode())} bytes; Milvus VARCHAR holds {VARCHAR_BYTES}. "
                              "Chunk with a smaller max_tokens", field="text")
    return text


def create_collections(client: Any, config: MilvusConfig, dim: int) -> None:
    """Create the chunks collection (BM25 function, dense field, envelope fields) and the docs collection."""
    from pymilvus import DataType, Function, FunctionType

    s = client.create_schema(auto_id=False, description="ragkit chunks")
    s.add_field("pk", DataType.INT64, is_primary=True)
    s.add_field("chunk_id", DataType.VARCHAR, max_length=1024)
    s.add_field("doc_id", DataType.VARCHAR, max_length=1024)
    s.add_field("meta", DataType.VARCHAR, max_length=VARCHAR_BYTES)
    s.add_field("text", DataType.VARCHAR, max_length=VARCHAR_BYTES)
    s.add_field("bm25_text", DataType.VARCHAR, max_length=VARCHAR_BYTES, enable_analyzer=True,
                analyzer_params={"type": config.analyzer})
    s.add_field("envelope", DataType.VARCHAR, max_length=VARCHAR_BYTES)
    add_scope_fields(s)
    s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    s.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    s.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["bm25_text"],
                            output_field_names=["sparse"]))
    ip = client.prepare_index_params()
    # k1 and b as ragkit's BM25 (lexical.BM25_PARAMS), not Milvus's default k1=1.2
    ip.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                 params={"bm25_k1": 1.5, "bm25_b": 0.75})
    ip.add_index("dense", index_type=config.dense_index, metric_type="IP")
    client.create_collection(config.collection, schema=s, index_params=ip, consistency_level="Strong")

    d = client.create_schema(auto_id=False, description="ragkit documents, sections and meta")
    d.add_field("pk", DataType.INT64, is_primary=True)
    d.add_field("kind", DataType.VARCHAR, max_length=16)
    d.add_field("doc_id", DataType.VARCHAR, max_length=1024)
    d.add_field("key", DataType.VARCHAR, max_length=1024)
    d.add_field("part", DataType.INT64)
    d.add_field("payload", DataType.VARCHAR, max_length=VARCHAR_BYTES)
    d.add_field("vec", DataType.FLOAT_VECTOR, dim=2)  # Milvus 2.5 needs a vector field; unused
    ip2 = client.prepare_index_params()
    ip2.add_index("vec", index_type="FLAT", metric_type="L2")
    client.create_collection(config.docs_collection, schema=d, index_params=ip2, consistency_level="Strong")


def chunk_meta(c: Chunk) -> dict[str, Any]:
    """The fields of ``c`` stored as JSON beside its text (what :func:`to_chunk` reads back)."""
    return {"version": c.version, "start": c.start, "end": c.end, "title": c.title,
            "section_path": list(c.section_path), "anchor": c.anchor, "parent_id": c.parent_id,
            "preamble": c.preamble}


def scope_fields(env: Envelope) -> dict[str, Any]:
    """The envelope fields a scope expression reads (tenant, acl, source_type, dates with ``has_*``
    flags), as stored on every chunk entity and every catalog record.

    Raises:
        ValidationError: more ACL groups than the field holds, or a value with a control character.
    """
    if len(env.acl_groups) > ACL_CAPACITY:
        raise ValidationError(f"{env.doc_id}: {len(env.acl_groups)} ACL groups; the Milvus backend holds at "
                              f"most {ACL_CAPACITY}", field="acl_groups")
    for value in (env.tenant, env.source_type, *env.acl_groups):
        quote(value)  # refuses control characters: every stored value can be written in a filter
    dates: dict[str, Any] = {}
    moments: tuple[tuple[str, dt.datetime | None], ...] = (
        ("published", env.published_at), ("eff_from", env.effective_from), ("eff_to", env.effective_to))
    for name, moment in moments:
        flag = "has_" + ("published" if name == "published" else name[4:])
        dates[name] = micros(moment) if moment is not None else 0
        dates[flag] = moment is not None
    return {"tenant": env.tenant, "acl": list(env.acl_groups), "source_type": env.source_type, **dates}


def add_scope_fields(schema: Any) -> None:
    """Add the fields :func:`scope_fields` fills to a collection schema (the scope expression's columns)."""
    from pymilvus import DataType

    schema.add_field("tenant", DataType.VARCHAR, max_length=1024)
    schema.add_field("acl", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=ACL_CAPACITY,
                     max_length=1024)
    schema.add_field("source_type", DataType.VARCHAR, max_length=1024)
    for name in ("published", "eff_from", "eff_to"):
        schema.add_field(name, DataType.INT64)
    for name in ("has_published", "has_from", "has_to"):
        schema.add_field(name, DataType.BOOL)


def chunk_entity(c: Chunk, env: Envelope, vector: np.ndarray) -> dict[str, Any]:
    """The chunks-collection entity of ``c``: text, BM25 text, vector and ``env`` denormalised.

    Raises:
        ValidationError: more ACL groups than the field holds, a value with a control
            character, or a text over Milvus's VARCHAR limit.
    """
    fields = scope_fields(env)
    return {"pk": chunk_pk(c.chunk_id), "chunk_id": c.chunk_id, "doc_id": c.doc_id,
            "meta": json.dumps(chunk_meta(c), ensure_ascii=False),
            "text": check_len(c.text, f"chunk {c.chunk_id!r}"),
            "bm25_text": check_len(c.contextual_text(), f"chunk {c.chunk_id!r}"),
            "envelope": check_len(json.dumps(env.to_mapping(), ensure_ascii=False, default=str),
                                  f"envelope of {env.doc_id!r}"),
            **fields, "dense": vector.tolist()}


def text_entities(kind: str, doc_id: str, key: str, header: dict[str, Any],
                  text: str) -> list[dict[str, Any]]:
    """Docs-collection entities of one document or section: ``header`` and ``text`` in parts of
    :data:`PIECE` characters (:func:`assemble_texts` joins them again)."""
    pieces = [text[i:i + PIECE] for i in range(0, len(text), PIECE)] or [""]
    out = []
    for part, piece in enumerate(pieces):
        payload = {"h": header, "t": piece} if part == 0 else {"t": piece}
        out.append({"pk": primary_key(f"{kind}:{key}:{part}"), "kind": kind, "doc_id": doc_id, "key": key,
                    "part": part,
                    "payload": json.dumps(payload, ensure_ascii=False), "vec": [1.0, 0.0]})
    return out


def assemble_texts(records: Sequence[Mapping[str, Any]]) -> dict[str, tuple[dict[str, Any], str]]:
    """key -> (header, full text) from docs-collection records (any order); incomplete keys left out."""
    parts: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for r in records:
        parts.setdefault(r["key"], []).append((int(r["part"]), json.loads(r["payload"])))
    out = {}
    for key, items in parts.items():
        items.sort(key=lambda x: x[0])
        if items[0][0] != 0 or [p for p, _ in items] != list(range(len(items))):
            continue  # a write in flight: parts missing; treat as absent
        out[key] = (items[0][1]["h"], "".join(x["t"] for _, x in items))
    return out


def to_chunk(chunk_id: str, doc_id: str, meta: Mapping[str, Any], text: str, kind: str) -> Chunk:
    """The :class:`~ragkit.core.records.Chunk` stored as ``meta`` (:func:`chunk_meta`) and ``text``."""
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, version=meta["version"], start=meta["start"],
                 end=meta["end"], text=text, title=meta["title"], section_path=tuple(meta["section_path"]),
                 anchor=meta["anchor"],
                 parent_id=meta["parent_id"], preamble=meta["preamble"], kind=kind)



def meta_entity(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The docs-collection record of the index's settings and embedder identity (one per index)."""
    return {"pk": primary_key("meta:"), "kind": "meta", "doc_id": "", "key": "", "part": 0,
            "payload": json.dumps(meta), "vec": [1.0, 0.0]}
