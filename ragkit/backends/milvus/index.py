"""A ragkit index stored in Milvus: :class:`MilvusIndex` creates, opens, copies, writes and deletes.

Make one with :meth:`MilvusIndex.create` (new collections, :mod:`ragkit.backends.milvus.schema`),
:meth:`MilvusIndex.open` (existing ones) or :meth:`MilvusIndex.from_index` (copy an in-memory
index, vectors included). Reads go to the current
:class:`~ragkit.backends.milvus.snapshot.MilvusSnapshot` (``snapshot()``), which the funnel
reads through the backend seam (:mod:`ragkit.index.backend`) exactly as it reads the
in-memory :class:`~ragkit.index.snapshots.Snapshot`.

Updates: :meth:`MilvusIndex.write` replaces documents (delete every entity of their doc ids,
then insert), :meth:`MilvusIndex.delete` removes them; both record the change in the catalog
(:mod:`ragkit.backends.milvus.catalog`: content hashes, times, a new version), and
:meth:`MilvusIndex.commit` ends a sync with a new generation. Collections use ``Strong``
consistency, so a deleted chunk never resurfaces in a later search, and :meth:`MilvusIndex.snapshot`
checks the catalog's version, so a reader in any process that starts after a write returns
never sees what the write removed (no document, section or envelope read from a cache).

Example:
    >>> from ragkit import Funnel, Scope                                  # doctest: +SKIP
    >>> from ragkit.course import course_index                            # doctest: +SKIP
    >>> from ragkit.backends.milvus import MilvusConfig, start_local       # doctest: +SKIP
    >>> with start_local("/tmp/milvus") as server:                        # doctest: +SKIP
    ...     mi = MilvusIndex.from_index(course_index(), MilvusConfig(server.uri), drop_existing=True)
    ...     Funnel(mi).search("EUR cutoff", scope=Scope("acme", ["ops"])).hits[0].citation
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ragkit.backends.milvus.catalog import Catalog, backfill, create_catalog
from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.expressions import quote_list
from ragkit.backends.milvus.schema import (
    chunk_entity,
    chunk_meta,
    create_collections,
    meta_entity,
    text_entities,
)
from ragkit.backends.milvus.snapshot import MilvusSelection, MilvusSnapshot
from ragkit.core.errors import IndexStateError, ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.index.embedder import LazyEmbedder
from ragkit.index.profiles import manifest_profile
from ragkit.index.reconcile import DocState
from ragkit.index.settings import IndexSettings
from ragkit.retrieval.fusion import Ranking
from ragkit.text.profile import CorpusProfile

__all__ = ["MilvusIndex"]

#: Entities per insert call.
WRITE_BATCH = 500


class MilvusIndex:
    """A ragkit index stored in Milvus: write and delete by document, read through snapshots.

    Make one with :meth:`create` (new collections), :meth:`open` (existing ones) or
    :meth:`from_index` (copy an in-memory index, vectors included). Reads go to the current
    :class:`MilvusSnapshot` (``snapshot()``), which has the in-memory snapshot's API.
    """

    def __init__(self, config: MilvusConfig, client: Any, meta: dict[str, Any], embedder: Any) -> None:
        self.config = config
        self.client = client
        self.meta = meta
        self.settings = IndexSettings.from_json(meta["settings"])
        self.dim = int(meta["embedder"]["dim"])
        self._embedder = embedder
        self._lock = threading.RLock()
        self._snap: MilvusSnapshot | None = None
        self._version: int | None = None
        self.catalog = Catalog(client, config)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def create(cls, config: MilvusConfig, *, settings: Any, embedder: Any, dim: int,
               drop_existing: bool = False, profile: CorpusProfile | None = None) -> MilvusIndex:
        """Make the two collections (chunks with BM25 function + dense field; documents/sections/meta).

        An existing collection is dropped with ``drop_existing=True``; otherwise it is reopened
        when its recorded settings and embedder match, and refused when they differ. ``profile``
        (default: the bundled one) is recorded in the meta record (:attr:`profile`).
        """
        if not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValidationError(f"dim={dim!r}: give the embedder's vector size (e.g. 384)", field="dim")
        client = config.client()
        identity = {"name": getattr(embedder, "name", "custom"),
                    "version": getattr(embedder, "version", "unknown"), "dim": int(dim)}
        meta = {"settings": settings.to_json(), "embedder": identity, "analyzer": config.analyzer,
                "format": 1, **({"profile": profile.to_json()} if profile is not None else {})}
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
        create_collections(client, config, int(dim))
        if client.has_collection(config.catalog_collection):
            client.drop_collection(config.catalog_collection)
        create_catalog(client, config)
        client.insert(config.docs_collection, [meta_entity(meta)])
        return cls(config, client, meta, embedder)

    @classmethod
    def open(cls, config: MilvusConfig, *, embedder: Any = None) -> MilvusIndex:
        """Open existing collections; the embedder is loaded on first dense query and checked."""
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
        lazy = embedder if embedder is not None else LazyEmbedder(settings.embedder, meta["embedder"])
        index = cls(config, client, meta, lazy)
        if not index.catalog.exists():  # made before catalogs: record every document once
            create_catalog(client, config)
            backfill(index.catalog, client, config)
        return index

    @classmethod
    def from_index(cls, index: Any, config: MilvusConfig, *, drop_existing: bool = False,
                   batch_documents: int = 500) -> MilvusIndex:
        """Copy an in-memory :class:`~ragkit.index.index.Index` into Milvus (its vectors: no re-embedding)."""
        snap = index.snapshot() if hasattr(index, "snapshot") else index
        embedder = getattr(index, "embedder", None)
        ident = dict(getattr(index, "manifest", {}).get("embedder") or {})
        vectors = snap.vectors
        dim = int(vectors.shape[1]) if vectors.ndim == 2 and len(vectors) else int(ident.get("dim") or 384)
        profile = getattr(index, "profile", None)
        target = cls.create(config, settings=snap.settings, embedder=_Identity(embedder, ident, dim), dim=dim,
                            drop_existing=drop_existing,
                            profile=profile if isinstance(profile, CorpusProfile) else None)
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
            target.write(part, chunks, vectors[idx], replace=not drop_existing)
        target.flush()
        return target

    # -- writing ------------------------------------------------------------------------------
    def write(self, documents: Sequence[Document], chunks: Sequence[Chunk], vectors: np.ndarray, *,
              replace: bool = True) -> int:
        """Upsert by document: delete every entity of these doc ids, then insert ``chunks``.

        ``chunks`` are all kinds (sections and chunks, as :func:`ragkit.documents.chunking.chunk_documents`
        returns them for ``documents``); ``vectors`` holds one float32 row per chunk of kind
        ``"chunk"``, in order. Returns the chunk rows written. Safe to call concurrently from
        several processes for disjoint documents (primary keys are hashes of ids).
        ``replace=False`` skips the delete: only for documents not yet in the collection (a bulk
        load into a new one), where it saves a round trip per batch.
        """
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
        chunk_rows = [chunk_entity(c, by_id[c.doc_id].envelope, v)
                      for c, v in zip(rows, vectors, strict=True)]
        doc_rows: list[dict[str, Any]] = []
        for d in docs:
            doc_rows += text_entities("document", d.doc_id, d.doc_id, {"envelope": d.envelope.to_mapping()},
                                       d.text)
        for c in chunks:
            if c.kind == "section":
                header = {**chunk_meta(c), "doc_id": c.doc_id}
                doc_rows += text_entities("section", c.doc_id, c.chunk_id, header, c.text)
        if replace and docs:
            self._delete_entities(list(by_id))
        for i in range(0, len(chunk_rows), WRITE_BATCH):
            self.client.insert(self.config.collection, chunk_rows[i:i + WRITE_BATCH])
        for i in range(0, len(doc_rows), WRITE_BATCH):
            self.client.insert(self.config.docs_collection, doc_rows[i:i + WRITE_BATCH])
        self.catalog.put(docs)
        self.catalog.touch()
        self._invalidate()
        return len(chunk_rows)

    def delete(self, doc_ids: Iterable[str]) -> int:
        """Remove documents (their chunks, sections and text); returns the chunk rows removed."""
        ids = list(dict.fromkeys(doc_ids))
        if not ids:
            return 0
        before = self._count(self.config.collection, f"doc_id in {quote_list(ids)}")
        self._delete_entities(ids)
        self.catalog.remove(ids)
        self.catalog.touch()
        self._invalidate()
        return before

    def _delete_entities(self, doc_ids: list[str]) -> None:
        for i in range(0, len(doc_ids), 1000):
            expr = f"doc_id in {quote_list(doc_ids[i:i + 1000])}"
            self.client.delete(self.config.collection, filter=expr)
            self.client.delete(self.config.docs_collection, filter=expr)

    def flush(self) -> None:
        """Seal what was written into segments (durable on the server)."""
        self.client.flush(self.config.collection)
        self.client.flush(self.config.docs_collection)

    def drop(self) -> None:
        """Drop both collections."""
        for name in (self.config.collection, self.config.docs_collection, self.config.catalog_collection):
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

    @property
    def embedder(self) -> Any:
        """The embedder documents are written with (a lazy one is loaded and checked here)."""
        embedder = self._embedder
        return embedder.get() if isinstance(embedder, LazyEmbedder) else embedder

    # -- freshness ----------------------------------------------------------------------------
    def doc_states(self) -> dict[str, DocState]:
        """Every document's content hash, source file and times (the catalog's records)."""
        return self.catalog.states()

    def commit(self) -> int:
        """Commit a generation (after a sync or an ingestion); returns its number."""
        generation = self.catalog.commit()
        self._invalidate()
        return generation

    @property
    def generation(self) -> int:
        """The last committed generation."""
        return self.catalog.state()[0]

    # -- reading ------------------------------------------------------------------------------
    def snapshot(self) -> MilvusSnapshot:
        """The current snapshot: a new one whenever the index changed since the last (a write by
        any process changes the catalog's version, read here with one query by key)."""
        with self._lock:
            generation, version = self.catalog.state()
            if self._snap is None or version != self._version:
                self._snap = MilvusSnapshot(self.client, self.config, self.settings, self._embedder)
                self._snap.generation = generation
                self._version = version
            return self._snap

    def refresh(self) -> MilvusSnapshot:
        """A new snapshot that sees every write so far, including other processes' writes."""
        self._invalidate()
        return self.snapshot()

    @property
    def profile(self) -> CorpusProfile:
        """The corpus profile recorded at :meth:`create` (the bundled one when none was)."""
        return manifest_profile(self.meta)

    @property
    def manifest(self) -> dict[str, Any]:
        """The recorded settings and embedder (as the in-memory manifest's keys)."""
        return {"embedder": self.meta["embedder"], "settings": self.meta["settings"], "backend": "milvus"}

    def stats(self) -> dict[str, Any]:
        """Counts and model names, for display."""
        return {**self.snapshot().stats(), "embedder": self.meta["embedder"]["name"]}

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

