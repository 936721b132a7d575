"""The funnel on Milvus: a second backend for ragkit's seam (:mod:`ragkit.index.backend`).

When one machine's memory no longer holds the corpus, or many agents search at once, the
rows move into Milvus and ragkit keeps everything else: fusion, rerank, expansion, tools,
agent, trace and evaluation read a :class:`MilvusSnapshot` exactly as they read the
in-memory :class:`~ragkit.index.index.Snapshot`.

Configuration (:class:`MilvusConfig`): a server URI (``http://host:19530``) and token for
Milvus standalone or a distributed cluster, or a local file path (``./ragkit.db``) for the
embedded engine; :meth:`MilvusConfig.from_env` reads ``RAGKIT_MILVUS_URI`` /
``RAGKIT_MILVUS_TOKEN``. :func:`start_local` runs embedded Milvus (milvus-lite 2.5, the
real Milvus C++ core) as a server process on a loopback port, stopped by its pid.

What lives in Milvus (two collections per index):

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
  embedder name/version/dim), stored as JSON payload parts.

Scope inside the engine: :meth:`MilvusSnapshot.select` compiles the caller's
:class:`~ragkit.core.scope.Scope` and :class:`~ragkit.core.scope.Filters` into one boolean filter
expression, passed to every search, so Milvus applies it before top-k (the same rule as
the in-memory mask). Values are quoted by :func:`quote`, which escapes ``\\`` and ``"``
and refuses control characters, so a tenant named ``acme" or tenant != "x`` is a literal,
never an operator (tested).

Fusion stays in ragkit (see :meth:`MilvusSnapshot.search_lexical`): Milvus returns the BM25
and the dense lists separately and :func:`ragkit.retrieval.fusion.rrf` fuses them, because a
server-side ``hybrid_search`` with ``RRFRanker`` returns only the fused scores: the
trace's per-retriever ranks (``lexical_rank``, ``dense_rank``), the per-list weights and
the reranker's combination with the fused ranks would be lost.

Updates: :meth:`MilvusIndex.write` replaces documents (delete every entity of their doc ids,
then insert), :meth:`MilvusIndex.delete` removes them; collections use ``Strong``
consistency, so a deleted chunk never resurfaces in a later search.

Example:
    >>> from ragkit import Funnel, Scope                                  # doctest: +SKIP
    >>> from ragkit.course.shortcuts import course_index                            # doctest: +SKIP
    >>> with start_local("/tmp/milvus") as server:                        # doctest: +SKIP
    ...     mi = MilvusIndex.from_index(course_index(), MilvusConfig(server.uri), drop_existing=True)
    ...     Funnel(mi).search("EUR cutoff", scope=Scope("acme", ["ops"])).hits[0].citation
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.core.errors import IndexStateError, ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import ALL_TENANTS, Filters, Scope
from ragkit.retrieval.fusion import Ranking

__all__ = ["MilvusConfig", "MilvusIndex", "MilvusSnapshot", "MilvusSelection", "LocalMilvus",
           "start_local", "quote", "scope_expression"]

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_VARCHAR = 65535
_PIECE = 8000  # characters of text per docs-collection entity (JSON-escaped, stays < 64 KiB)
_ACL_CAPACITY = 64
_BATCH = 500
_QUERY_BATCH = 4000
_CHUNK_OUT = ["pk", "chunk_id", "doc_id", "meta", "text", "envelope"]


@dataclass(frozen=True)
class MilvusConfig:
    """Where the Milvus backend lives.

    Attributes:
        uri: ``"http://127.0.0.1:19530"`` (a server or cluster) or a local file path
            ``"./ragkit.db"`` (embedded milvus-lite, started by pymilvus).
        token: ``"user:password"`` or an API key; ``""`` for none.
        collection: collection name (letters, digits, ``_``); a second collection
            ``<collection>__docs`` holds documents and sections.
        analyzer: the Milvus analyzer of the BM25 field (``"english"``: stemmed, stopworded,
            closest to ragkit's tokenizer; ``"standard"``: lowercase words only).
        dense_index: Milvus index type of the dense field (``"FLAT"`` exact, as the in-memory
            index; ``"HNSW"`` or ``"AUTOINDEX"`` on a cluster for large corpora).
    """

    uri: str
    token: str = ""
    collection: str = "ragkit"
    analyzer: str = "english"
    dense_index: str = "FLAT"

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not self.uri.strip():
            raise ValidationError("MilvusConfig: uri is empty; give http://host:19530 or a ./file.db path "
                                  "(or set RAGKIT_MILVUS_URI)", field="uri")
        name = self.collection
        if not name or not (name[0].isalpha() or name[0] == "_") or \
                not all(ch.isalnum() or ch == "_" for ch in name) or len(name) > 200:
            raise ValidationError(f"MilvusConfig: collection {name!r} is not a valid Milvus name; use "
                                  "letters, digits and '_', starting with a letter", field="collection")
        if self.analyzer not in ("english", "standard"):
            raise ValidationError(f"MilvusConfig: analyzer={self.analyzer!r}; use 'english' or 'standard'",
                                  field="analyzer")

    @classmethod
    def from_env(cls, collection: str = "ragkit") -> MilvusConfig:
        """``RAGKIT_MILVUS_URI`` and ``RAGKIT_MILVUS_TOKEN`` (raises if the URI is unset)."""
        uri = os.environ.get("RAGKIT_MILVUS_URI", "")
        if not uri:
            raise ValidationError("RAGKIT_MILVUS_URI is not set; export it (http://host:19530 or "
                                  "./ragkit.db), or pass MilvusConfig(uri=...)", field="RAGKIT_MILVUS_URI")
        return cls(uri=uri, token=os.environ.get("RAGKIT_MILVUS_TOKEN", ""), collection=collection)

    @property
    def docs_collection(self) -> str:
        """The collection of documents, sections and the meta record."""
        return f"{self.collection}__docs"

    def client(self) -> Any:
        """A ``pymilvus.MilvusClient`` for this configuration."""
        import logging

        from pymilvus import MilvusClient

        # query_iterator warns on every call that milvus-lite has no mvccTs; it is harmless
        logging.getLogger("pymilvus.orm.iterator").setLevel(logging.ERROR)
        uri = self.uri
        if "://" not in uri:  # a local file: embedded milvus-lite, started by pymilvus
            uri = str(Path(uri).expanduser().resolve())
            try:
                import milvus_lite  # noqa: F401
            except ImportError as exc:
                raise IndexStateError(
                    f"a local Milvus file ({uri}) needs milvus-lite 2.5.x and, for its import, setuptools "
                    f"< 81 ({exc}); pip install 'ragkit[scale]', or start a server with "
                    "ragkit.backends.milvus.engine.start_local(dir) and use its http:// uri") from None
        # no keepalive pings on an idle connection: milvus-lite answers them with GOAWAY "too many pings"
        # after ~30 s idle, which breaks a client reused after a long pipeline stage
        return MilvusClient(uri=uri, token=self.token, timeout=60,
                            grpc_options={"grpc.keepalive_permit_without_calls": 0})


# -- local server ---------------------------------------------------------------------------------

class LocalMilvus:
    """A milvus-lite server process on loopback: ``.uri``, ``.pid``, ``.stop()``; a context manager."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, data_dir: Path, log: Path) -> None:
        self._process = process
        self.port = port
        self.data_dir = data_dir
        self.log = log
        self.uri = f"http://127.0.0.1:{port}"
        self.pid = process.pid

    def alive(self) -> bool:
        """Whether the server process is still running."""
        return self._process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server by its pid (SIGTERM, then SIGKILL after ``timeout`` seconds)."""
        if self._process.poll() is not None:
            return
        os.kill(self.pid, signal.SIGTERM)
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.pid, signal.SIGKILL)
            self._process.wait(10)

    def __enter__(self) -> LocalMilvus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalMilvus(uri={self.uri!r}, pid={self.pid}, alive={self.alive()})"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_local(data_dir: str | Path, port: int | None = None, *, timeout: float = 60.0) -> LocalMilvus:
    """Start embedded Milvus (milvus-lite 2.5's ``milvus`` binary) on ``127.0.0.1:port``.

    The server stores its data in ``data_dir/milvus.db`` and logs to ``data_dir/milvus.log``;
    ``port=None`` picks a free one. Returns once the port accepts connections.

    Raises:
        IndexStateError: milvus-lite is not installed (``pip install 'ragkit[scale]'``), its
            binary is missing, or the server exits or does not listen within ``timeout``.
    """
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("milvus_lite")  # located, not imported (its __init__ needs setuptools)
    if spec is None or not spec.submodule_search_locations:
        raise IndexStateError("milvus-lite is not installed; pip install 'ragkit[scale]' (milvus-lite 2.5.x)")
    lib = Path(list(spec.submodule_search_locations)[0]) / "lib"
    binary = lib / "milvus"
    if not binary.is_file():
        raise IndexStateError(f"{binary} is missing: milvus-lite {importlib.metadata.version('milvus-lite')} "
                              "has no server binary; install milvus-lite 2.5.x (the C++ core)")
    folder = Path(data_dir).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    log = folder / "milvus.log"
    env = {**os.environ, "LD_LIBRARY_PATH": f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
    with open(log, "ab") as fh:
        process = subprocess.Popen([str(binary), str(folder / "milvus.db"), f"127.0.0.1:{port}", "ERROR"],
                                   cwd=folder, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    server = LocalMilvus(process, port, folder, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise IndexStateError(f"milvus-lite exited with code {process.returncode} at start; see {log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise IndexStateError(f"milvus-lite did not listen on 127.0.0.1:{port} within {timeout:.0f} s; see {log}")


# -- expressions ----------------------------------------------------------------------------------

def quote(value: str) -> str:
    """A Milvus string literal for ``value``: ``"`` and ``\\`` escaped, control characters refused.

    Example:
        >>> print(quote('acme" or tenant != "x'))
        "acme\\" or tenant != \\"x"
    """
    if not isinstance(value, str):
        raise ValidationError(f"filter value {value!r} is a {type(value).__name__}; expected a str")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValidationError(f"filter value {value!r} holds a control character; tenants, groups, doc "
                              "types and doc ids must be printable", field="filter")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _quote_list(values: Iterable[str]) -> str:
    return "[" + ", ".join(quote(v) for v in values) + "]"


def _micros(moment: dt.datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return (moment - _EPOCH) // dt.timedelta(microseconds=1)


def scope_expression(scope: Scope, filters: Filters | None = None) -> str:
    """The Milvus filter expression equal to :func:`ragkit.core.scope.scope_mask` (``""``: every row).

    Mirrors :meth:`Scope.allows` and :meth:`Filters.allows` term by term: tenant (the
    caller's or ``global``), ACL (empty, or sharing a group: ``array_contains_any``), doc
    types, tenants, published bounds (undated documents fail a published bound) and
    validity at ``valid_at`` (unknown validity kept unless ``drop_unknown_validity``).

    Raises:
        ScopeError: a filter asks for more than the caller may see (filters only narrow).
    """
    from ragkit.core.records import GLOBAL_TENANT

    filters = filters or Filters()
    filters.check_narrows(scope)
    terms: list[str] = []
    if scope.tenant != ALL_TENANTS:
        terms.append(f"tenant in {_quote_list(sorted({scope.tenant, GLOBAL_TENANT}))}")
    if not scope.all_groups:
        if scope.groups:
            groups = _quote_list(sorted(scope.groups))
            terms.append(f"(array_length(acl) == 0 or array_contains_any(acl, {groups}))")
        else:
            terms.append("array_length(acl) == 0")
    if filters.doc_types:
        terms.append(f"source_type in {_quote_list(filters.doc_types)}")
    if filters.tenants:
        terms.append(f"tenant in {_quote_list(filters.tenants)}")
    if filters.published_after or filters.published_before:
        terms.append("has_published == true")
        if filters.published_after:
            terms.append(f"published >= {_micros(filters.published_after)}")
        if filters.published_before:
            terms.append(f"published < {_micros(filters.published_before)}")
    if filters.valid_at is not None:
        m = _micros(filters.valid_at)
        known = f"(has_from == true and eff_from <= {m} and (has_to == false or eff_to > {m}))"
        terms.append(known if filters.drop_unknown_validity else f"(has_from == false or {known})")
    return " and ".join(terms)


def _pk(key: str) -> int:
    """A stable 63-bit primary key for ``key`` (same chunk id, same key, in every process)."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") & (2**63 - 1)


def _check_len(text: str, what: str) -> str:
    if len(text.encode()) > _VARCHAR:
        raise ValidationError(f"{what} is {len(text.encode())} bytes; Milvus VARCHAR holds {_VARCHAR}. "
                              "Chunk with a smaller max_tokens", field="text")
    return text


# -- the writable index ---------------------------------------------------------------------------

class MilvusIndex:
    """A ragkit index stored in Milvus: write and delete by document, read through snapshots.

    Make one with :meth:`create` (new collections), :meth:`open` (existing ones) or
    :meth:`from_index` (copy an in-memory index, vectors included). Reads go to the current
    :class:`MilvusSnapshot` (``snapshot()``), which has the in-memory snapshot's API.
    """

    def __init__(self, config: MilvusConfig, client: Any, meta: dict[str, Any], embedder: Any) -> None:
        from ragkit.index.index import IndexSettings

        self.config = config
        self.client = client
        self.meta = meta
        self.settings = IndexSettings.from_json(meta["settings"])
        self.dim = int(meta["embedder"]["dim"])
        self._embedder = embedder
        self._lock = threading.RLock()
        self._snap: MilvusSnapshot | None = None

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def create(cls, config: MilvusConfig, *, settings: Any, embedder: Any, dim: int,
               drop_existing: bool = False) -> MilvusIndex:
        """Make the two collections (chunks with BM25 function + dense field; documents/sections/meta).

        An existing collection is dropped with ``drop_existing=True``; otherwise it is reopened
        when its recorded settings and embedder match, and refused when they differ.
        """
        if not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValidationError(f"dim={dim!r}: give the embedder's vector size (e.g. 384)", field="dim")
        client = config.client()
        identity = {"name": getattr(embedder, "name", "custom"),
                    "version": getattr(embedder, "version", "unknown"), "dim": int(dim)}
        meta = {"settings": settings.to_json(), "embedder": identity, "analyzer": config.analyzer,
                "format": 1}
        exists = client.has_collection(config.collection) or client.has_collection(config.docs_collection)
        if exists and drop_existing:
            for name in (config.collection, config.docs_collection):
                if client.has_collection(name):
                    client.drop_collection(name)
        elif exists:
            index = cls.open(config, embedder=embedder)
            if index.meta["settings"] != meta["settings"] or index.meta["embedder"]["dim"] != int(dim):
                raise IndexStateError(f"collection {config.collection!r} exists with other settings or "
                                      "embedder; pass drop_existing=True to rebuild it, or use another name")
            return index
        _create_collections(client, config, int(dim))
        client.insert(config.docs_collection, [{
            "pk": _pk("meta:"), "kind": "meta", "doc_id": "", "key": "", "part": 0,
            "payload": json.dumps(meta), "vec": [1.0, 0.0]}])
        return cls(config, client, meta, embedder)

    @classmethod
    def open(cls, config: MilvusConfig, *, embedder: Any = None) -> MilvusIndex:
        """Open existing collections; the embedder is loaded on first dense query and checked."""
        from ragkit.index.index import IndexSettings, _LazyEmbedder

        client = config.client()
        if not client.has_collection(config.collection):
            raise IndexStateError(f"no Milvus collection {config.collection!r} at {config.uri}; build it "
                                  "with `ragkit index DIR --backend milvus` or MilvusIndex.from_index")
        rows = client.query(config.docs_collection, filter='kind == "meta"', output_fields=["payload"])
        if not rows:
            raise IndexStateError(f"collection {config.docs_collection!r} has no meta record; not made "
                                  "by ragkit (or is damaged): rebuild with drop_existing=True")
        meta = json.loads(rows[0]["payload"])
        settings = IndexSettings.from_json(meta["settings"])
        lazy = embedder if embedder is not None else _LazyEmbedder(settings.embedder, meta["embedder"])
        return cls(config, client, meta, lazy)

    @classmethod
    def from_index(cls, index: Any, config: MilvusConfig, *, drop_existing: bool = False,
                   batch_documents: int = 500) -> MilvusIndex:
        """Copy a built in-memory :class:`~ragkit.index.index.Index` into Milvus (its vectors, no re-embedding)."""
        snap = index.snapshot() if hasattr(index, "snapshot") else index
        embedder = getattr(index, "_embedder", None)
        ident = dict(getattr(index, "manifest", {}).get("embedder") or {})
        vectors = snap.vectors
        dim = int(vectors.shape[1]) if vectors.ndim == 2 and len(vectors) else int(ident.get("dim") or 384)
        target = cls.create(config, settings=snap.settings, embedder=_Identity(embedder, ident, dim), dim=dim,
                            drop_existing=drop_existing)
        target._embedder = embedder if embedder is not None else target._embedder
        row_of = snap.row_of
        sections: dict[str, list[Chunk]] = {}
        for sec in snap.sections.values():
            sections.setdefault(sec.doc_id, []).append(sec)
        rows: dict[str, list[Chunk]] = {}
        for c in snap.rows:
            rows.setdefault(c.doc_id, []).append(c)
        docs = list(snap.documents.values())
        for i in range(0, len(docs), batch_documents):
            part = docs[i:i + batch_documents]
            chunks = [c for d in part for c in sections.get(d.doc_id, [])]
            chunks += [c for d in part for c in rows.get(d.doc_id, [])]
            idx = [row_of[c.chunk_id] for c in chunks if c.kind == "chunk"]
            target._write(part, chunks, vectors[idx], replace=not drop_existing)
        target.flush()
        return target

    # -- writing ------------------------------------------------------------------------------
    def write(self, documents: Sequence[Document], chunks: Sequence[Chunk], vectors: np.ndarray) -> int:
        """Upsert by document: delete every entity of these doc ids, then insert ``chunks``.

        ``chunks`` are all kinds (sections and chunks, as :func:`ragkit.documents.chunking.chunk_documents`
        returns them for ``documents``); ``vectors`` holds one float32 row per chunk of kind
        ``"chunk"``, in order. Returns the chunk rows written. Safe to call concurrently from
        several processes for disjoint documents (primary keys are hashes of ids).
        """
        return self._write(documents, chunks, vectors, replace=True)

    def _write(self, documents: Sequence[Document], chunks: Sequence[Chunk], vectors: np.ndarray, *,
               replace: bool) -> int:
        docs = list(documents)
        vectors = np.asarray(vectors, dtype=np.float32)
        rows = [c for c in chunks if c.kind == "chunk"]
        if vectors.ndim != 2 or len(vectors) != len(rows) or (len(rows) and vectors.shape[1] != self.dim):
            raise ValidationError(f"write: {len(rows)} chunks of kind 'chunk' but vectors of shape "
                                  f"{vectors.shape}; give one {self.dim}-dim row per chunk, in order",
                                  field="vectors")
        by_id = {d.doc_id: d for d in docs}
        stray = sorted({c.doc_id for c in chunks} - set(by_id))
        if stray:
            raise ValidationError(f"write: chunks of documents not in this batch: {stray[:5]}",
                                  field="chunks")
        # every entity is built (and so validated) before the old rows are deleted: a document the
        # engine would refuse keeps what it had instead of losing it
        chunk_rows = [_chunk_entity(c, by_id[c.doc_id].envelope, v)
                      for c, v in zip(rows, vectors, strict=True)]
        doc_rows: list[dict[str, Any]] = []
        for d in docs:
            doc_rows += _text_entities("document", d.doc_id, d.doc_id, {"envelope": d.envelope.to_mapping()},
                                       d.text)
        for c in chunks:
            if c.kind == "section":
                header = {**_chunk_meta(c), "doc_id": c.doc_id}
                doc_rows += _text_entities("section", c.doc_id, c.chunk_id, header, c.text)
        if replace and docs:
            self._delete_entities(list(by_id))
        for i in range(0, len(chunk_rows), _BATCH):
            self.client.insert(self.config.collection, chunk_rows[i:i + _BATCH])
        for i in range(0, len(doc_rows), _BATCH):
            self.client.insert(self.config.docs_collection, doc_rows[i:i + _BATCH])
        self._invalidate()
        return len(chunk_rows)

    def delete(self, doc_ids: Iterable[str]) -> int:
        """Remove documents (their chunks, sections and text); returns the chunk rows removed."""
        ids = list(dict.fromkeys(doc_ids))
        if not ids:
            return 0
        before = self._count(self.config.collection, f"doc_id in {_quote_list(ids)}")
        self._delete_entities(ids)
        self._invalidate()
        return before

    def _delete_entities(self, doc_ids: list[str]) -> None:
        for i in range(0, len(doc_ids), 1000):
            expr = f"doc_id in {_quote_list(doc_ids[i:i + 1000])}"
            self.client.delete(self.config.collection, filter=expr)
            self.client.delete(self.config.docs_collection, filter=expr)

    def flush(self) -> None:
        """Seal what was written into segments (durable on the server)."""
        self.client.flush(self.config.collection)
        self.client.flush(self.config.docs_collection)

    def drop(self) -> None:
        """Drop both collections."""
        for name in (self.config.collection, self.config.docs_collection):
            if self.client.has_collection(name):
                self.client.drop_collection(name)
        self._invalidate()

    def _count(self, collection: str, expr: str = "") -> int:
        res = self.client.query(collection, filter=expr, output_fields=["count(*)"],
                                consistency_level="Strong")
        return int(res[0]["count(*)"]) if res else 0

    def _invalidate(self) -> None:
        with self._lock:
            self._snap = None

    # -- reading ------------------------------------------------------------------------------
    def snapshot(self) -> MilvusSnapshot:
        """The current snapshot (rebuilt after this handle's writes, or by :meth:`refresh`)."""
        with self._lock:
            if self._snap is None:
                self._snap = MilvusSnapshot(self)
            return self._snap

    def refresh(self) -> MilvusSnapshot:
        """A new snapshot that sees every write so far, including other processes' writes."""
        self._invalidate()
        return self.snapshot()

    @property
    def manifest(self) -> dict[str, Any]:
        """The recorded settings and embedder (as the in-memory manifest's keys)."""
        return {"embedder": self.meta["embedder"], "settings": self.meta["settings"], "backend": "milvus"}

    def stats(self) -> dict[str, Any]:
        """Counts and model names, for display."""
        return {**self.snapshot().stats(), "embedder": self.meta["embedder"]["name"]}

    rows = property(lambda self: self.snapshot().rows, doc="Live chunks, one per row (lazy).")
    documents = property(lambda self: self.snapshot().documents, doc="doc_id -> Document (lazy).")
    sections = property(lambda self: self.snapshot().sections, doc="chunk_id -> parent section (lazy).")
    row_of = property(lambda self: self.snapshot().row_of, doc="chunk_id -> row (lazy).")

    def mask(self, scope: Scope, filters: Filters | None = None) -> MilvusSelection:
        """See :meth:`MilvusSnapshot.mask`."""
        return self.snapshot().mask(scope, filters)

    def envelope(self, row: int) -> Envelope:
        """See :meth:`MilvusSnapshot.envelope`."""
        return self.snapshot().envelope(row)

    def search_lexical(self, query: str, k: int, mask: Any) -> Ranking:
        """See :meth:`MilvusSnapshot.search_lexical`."""
        return self.snapshot().search_lexical(query, k, mask)

    def search_dense(self, query: str, k: int, mask: Any) -> Ranking:
        """See :meth:`MilvusSnapshot.search_dense`."""
        return self.snapshot().search_dense(query, k, mask)

    def parent(self, row: int) -> Chunk | None:
        """See :meth:`MilvusSnapshot.parent`."""
        return self.snapshot().parent(row)

    def __repr__(self) -> str:
        return f"MilvusIndex(uri={self.config.uri!r}, collection={self.config.collection!r})"


class _Identity:
    """The embedder identity recorded in the meta record when copying an index."""

    def __init__(self, embedder: Any, ident: dict[str, Any], dim: int) -> None:
        self.name = ident.get("name") or getattr(embedder, "name", "custom")
        self.version = ident.get("version") or getattr(embedder, "version", "unknown")
        self.dim = dim


def _create_collections(client: Any, config: MilvusConfig, dim: int) -> None:
    from pymilvus import DataType, Function, FunctionType

    s = client.create_schema(auto_id=False, description="ragkit chunks")
    s.add_field("pk", DataType.INT64, is_primary=True)
    s.add_field("chunk_id", DataType.VARCHAR, max_length=1024)
    s.add_field("doc_id", DataType.VARCHAR, max_length=1024)
    s.add_field("meta", DataType.VARCHAR, max_length=_VARCHAR)
    s.add_field("text", DataType.VARCHAR, max_length=_VARCHAR)
    s.add_field("bm25_text", DataType.VARCHAR, max_length=_VARCHAR, enable_analyzer=True,
                analyzer_params={"type": config.analyzer})
    s.add_field("envelope", DataType.VARCHAR, max_length=_VARCHAR)
    s.add_field("tenant", DataType.VARCHAR, max_length=1024)
    s.add_field("acl", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=_ACL_CAPACITY,
                max_length=1024)
    s.add_field("source_type", DataType.VARCHAR, max_length=1024)
    for name in ("published", "eff_from", "eff_to"):
        s.add_field(name, DataType.INT64)
    for name in ("has_published", "has_from", "has_to"):
        s.add_field(name, DataType.BOOL)
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
    d.add_field("payload", DataType.VARCHAR, max_length=_VARCHAR)
    d.add_field("vec", DataType.FLOAT_VECTOR, dim=2)  # Milvus 2.5 needs a vector field; unused
    ip2 = client.prepare_index_params()
    ip2.add_index("vec", index_type="FLAT", metric_type="L2")
    client.create_collection(config.docs_collection, schema=d, index_params=ip2, consistency_level="Strong")


def _chunk_meta(c: Chunk) -> dict[str, Any]:
    return {"version": c.version, "start": c.start, "end": c.end, "title": c.title,
            "section_path": list(c.section_path), "anchor": c.anchor, "parent_id": c.parent_id,
            "preamble": c.preamble}


def _chunk_entity(c: Chunk, env: Envelope, vector: np.ndarray) -> dict[str, Any]:
    if len(env.acl_groups) > _ACL_CAPACITY:
        raise ValidationError(f"{env.doc_id}: {len(env.acl_groups)} ACL groups; the Milvus backend holds at "
                              f"most {_ACL_CAPACITY}", field="acl_groups")
    for value in (env.tenant, env.source_type, *env.acl_groups):
        quote(value)  # refuses control characters: every stored value can be written in a filter
    dates: dict[str, Any] = {}
    moments: tuple[tuple[str, dt.datetime | None], ...] = (
        ("published", env.published_at), ("eff_from", env.effective_from), ("eff_to", env.effective_to))
    for name, moment in moments:
        flag = "has_" + ("published" if name == "published" else name[4:])
        dates[name] = _micros(moment) if moment is not None else 0
        dates[flag] = moment is not None
    return {"pk": _pk("chunk:" + c.chunk_id), "chunk_id": c.chunk_id, "doc_id": c.doc_id,
            "meta": json.dumps(_chunk_meta(c), ensure_ascii=False),
            "text": _check_len(c.text, f"chunk {c.chunk_id!r}"),
            "bm25_text": _check_len(c.contextual_text(), f"chunk {c.chunk_id!r}"),
            "envelope": _check_len(json.dumps(env.to_mapping(), ensure_ascii=False, default=str),
                                   f"envelope of {env.doc_id!r}"),
            "tenant": env.tenant, "acl": list(env.acl_groups), "source_type": env.source_type,
            **dates, "dense": vector.tolist()}


def _text_entities(kind: str, doc_id: str, key: str, header: dict[str, Any],
                   text: str) -> list[dict[str, Any]]:
    pieces = [text[i:i + _PIECE] for i in range(0, len(text), _PIECE)] or [""]
    out = []
    for part, piece in enumerate(pieces):
        payload = {"h": header, "t": piece} if part == 0 else {"t": piece}
        out.append({"pk": _pk(f"{kind}:{key}:{part}"), "kind": kind, "doc_id": doc_id, "key": key,
                    "part": part,
                    "payload": json.dumps(payload, ensure_ascii=False), "vec": [1.0, 0.0]})
    return out


def _assemble(records: Sequence[Mapping[str, Any]]) -> dict[str, tuple[dict[str, Any], str]]:
    """key -> (header, full text) from docs-collection records (any order)."""
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


def _to_chunk(chunk_id: str, doc_id: str, meta: Mapping[str, Any], text: str, kind: str) -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, version=meta["version"], start=meta["start"],
                 end=meta["end"], text=text, title=meta["title"], section_path=tuple(meta["section_path"]),
                 anchor=meta["anchor"],
                 parent_id=meta["parent_id"], preamble=meta["preamble"], kind=kind)


# -- snapshots ------------------------------------------------------------------------------------

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
    """One version of a Milvus index, read through the backend seam and the in-memory read API.

    Rows ``0..size()-1`` are the chunk entities present when the snapshot was taken, in
    primary-key order; a chunk written later is not returned by its searches (take a new
    snapshot), and a chunk deleted later is not returned by Milvus at all. Chunks,
    envelopes, sections and documents are fetched lazily and cached; a search's results
    carry their chunks with them, so the funnel's reads after a search cost no round trip.
    """

    ragkit_backend = True

    def __init__(self, index: MilvusIndex) -> None:
        self.index = index
        self.client = index.client
        self.config = index.config
        self.settings = index.settings
        self.generation = 0
        self._chunks: dict[int, tuple[Chunk, Envelope]] = {}
        self._pks = self._pks_matching("")
        self.rows = _Rows(self)
        self.documents = _Documents(self)
        self.sections = _Sections(self)
        self.row_of = _RowOf(self)

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
        embedder = self.index._embedder
        if embedder is None:
            raise IndexStateError("this MilvusIndex has no embedder; open it with MilvusIndex.open(config) "
                                  "(which loads the recorded one) or pass embedder=")
        target = embedder.get() if hasattr(embedder, "get") and callable(embedder.get) else embedder
        encode = getattr(target, "encode_queries", None) or target.encode
        vector = np.asarray(encode([query]), dtype=np.float32).reshape(-1)
        return self._search([vector.tolist()], "dense", {"metric_type": "IP"}, k, selection)

    def _search(self, data: list[Any], field: str, params: dict[str, Any], k: int, selection: Any) -> Ranking:
        expr = self._expr(selection)
        res = self.client.search(self.config.collection, data=data, anns_field=field,
                                 limit=int(min(k, 16384)),
                                 filter=expr, search_params=params, output_fields=_CHUNK_OUT,
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
        return self.sections.get(pid) if pid else None

    def stats(self) -> dict[str, Any]:
        """Counts, for display."""
        return {"documents": len(self.documents), "sections": len(self.sections), "rows": self.size(),
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
        it = self.client.query_iterator(self.config.collection, batch_size=_QUERY_BATCH, filter=expr,
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
        chunk = _to_chunk(entity["chunk_id"], entity["doc_id"], meta, entity["text"], "chunk")
        self._chunks[pk] = (chunk, Envelope.from_mapping(json.loads(entity["envelope"])))

    def _load(self, pks: Sequence[int]) -> None:
        for i in range(0, len(pks), 1000):
            part = list(dict.fromkeys(pks[i:i + 1000]))
            res = self.client.query(self.config.collection, filter=f"pk in [{', '.join(map(str, part))}]",
                                    output_fields=_CHUNK_OUT, consistency_level="Strong")
            for entity in res:
                self._remember(int(entity["pk"]), entity)
            missing = [p for p in part if p not in self._chunks]
            if missing:
                raise IndexStateError(f"{len(missing)} row(s) of this snapshot were deleted since it was "
                                      "taken; "
                                      "take a new one (index.snapshot() after a write, or index.refresh())")

    def _docs_records(self, expr: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        it = self.client.query_iterator(self.config.docs_collection, batch_size=_QUERY_BATCH, filter=expr,
                                        output_fields=["key", "part", "payload"])
        try:
            while True:
                batch = it.next()
                if not batch:
                    break
                out += batch
        finally:
            it.close()
        return out


def _check_k(k: Any) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValidationError(f"k={k!r}: ask for at least one result (k >= 1)", field="k")


class _Rows(Sequence[Chunk]):
    """``snapshot.rows``: chunk at a row number, fetched by primary key and cached."""

    def __init__(self, snap: MilvusSnapshot) -> None:
        self._snap = snap

    def __len__(self) -> int:
        return self._snap.size()

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return self._snap.fetch(range(*i.indices(len(self))))
        if isinstance(i, (int, np.integer)) and i < 0:
            i += len(self)
        return self._snap.fetch([i])[0]

    def __iter__(self) -> Iterator[Chunk]:
        for start in range(0, len(self), 1000):
            yield from self._snap.fetch(range(start, min(start + 1000, len(self))))


class _Lazy(Mapping[str, Any]):
    """A docs-collection mapping (documents or sections): single gets by key, bulk load on iteration."""

    kind = ""

    def __init__(self, snap: MilvusSnapshot) -> None:
        self._snap = snap
        self._cache: dict[str, Any] = {}
        self._complete = False

    def _make(self, key: str, header: dict[str, Any], text: str) -> Any:
        raise NotImplementedError

    def _fill(self, expr: str) -> None:
        for key, (header, text) in _assemble(self._snap._docs_records(expr)).items():
            self._cache[key] = self._make(key, header, text)

    def _all(self) -> dict[str, Any]:
        if not self._complete:
            self._fill(f"kind == {quote(self.kind)}")
            self._complete = True
        return self._cache

    def __getitem__(self, key: str) -> Any:
        if key not in self._cache and not self._complete:
            if not isinstance(key, str):
                raise KeyError(key)
            try:
                self._fill(f"kind == {quote(self.kind)} and key == {quote(key)}")
            except ValidationError:
                raise KeyError(key) from None
        return self._cache[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


class _Documents(_Lazy):
    kind = "document"

    def _make(self, key: str, header: dict[str, Any], text: str) -> Document:
        return Document(Envelope.from_mapping(header["envelope"]), text)


class _Sections(_Lazy):
    kind = "section"

    def _make(self, key: str, header: dict[str, Any], text: str) -> Chunk:
        return _to_chunk(key, header["doc_id"], header, text, "section")


class _RowOf(Mapping[str, int]):
    """``snapshot.row_of``: chunk id -> row (a primary-key lookup; the key is a hash of the id)."""

    def __init__(self, snap: MilvusSnapshot) -> None:
        self._snap = snap

    def __getitem__(self, chunk_id: str) -> int:
        if not isinstance(chunk_id, str):
            raise KeyError(chunk_id)
        row = self._snap._row_of_pk(_pk("chunk:" + chunk_id))
        if row is None or self._snap.fetch([row])[0].chunk_id != chunk_id:
            raise KeyError(chunk_id)
        return row

    def __iter__(self) -> Iterator[str]:
        return (c.chunk_id for c in self._snap.rows)

    def __len__(self) -> int:
        return self._snap.size()
