"""The persisted index: segments of chunks, envelopes, BM25 postings and embeddings.

An :class:`Index` holds every retrievable chunk (one *row* each), its parent
sections, the documents with their envelopes, a BM25 retriever and a dense
retriever over the same rows. It is built once, saved to a folder, reopened
without re-encoding anything, and kept fresh by :meth:`Index.sync`.

Freshness without rebuilds: rows live in immutable *segments* (one per build or
sync). An update adds one small segment for the new and changed documents and
marks the old rows of changed and deleted documents dead; nothing else is
re-chunked, re-encoded or re-tokenised. BM25 statistics (N, avgdl, df) are taken
over live rows at query time, so scores always equal a rebuild's
(:class:`~ragkit.retrieval.lexical.SegmentedBM25`). Small segments are merged, and dead rows
dropped, by copying counts and vectors (never re-encoding) when there are more
than :data:`MAX_SEGMENTS` segments or a quarter of the rows are dead.

Snapshot reads: every update builds a new immutable :class:`Snapshot` and swaps it
in with one assignment. A reader that takes ``index.snapshot()`` once (the funnel
does) sees one version throughout, old or new, never a mix.

Durability: :meth:`Index.save` writes only segments not yet on disk, then a new
generation manifest, then the ``CURRENT`` commit point (see :mod:`ragkit.index.storage`);
a crash at any step leaves the previous or the new version loadable.

Example:
    >>> idx = Index.build(docs)                          # doctest: +SKIP
    >>> idx.save(".ragkit-cache/course")                 # doctest: +SKIP
    >>> Index.load(".ragkit-cache/course").stats()       # doctest: +SKIP
    {'documents': 1620, 'sections': 5230, 'rows': 6011, ...}
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import os
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.core.errors import IndexStateError, ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope, scope_mask
from ragkit.documents.chunking import ChunkerSettings, chunk_documents
from ragkit.index import storage
from ragkit.retrieval.fusion import Ranking
from ragkit.retrieval.lexical import Postings, SegmentedBM25, tokenize

__all__ = ["Index", "IndexSettings", "Snapshot", "Segment", "SyncReport", "FORMAT_VERSION", "MAX_SEGMENTS"]

#: Format 3 (2026-12-01): per-row data is columnar (Parquet for documents and chunks, one ``.npy``
#: per postings array, memory-mapped) and an HNSW graph is saved with its segment; format 2 (JSON
#: lines, ``postings.npz``) is still read, and rewritten by :meth:`Index.upgrade` or the next save.
FORMAT_VERSION = 3
#: Generation formats :meth:`Index.load` reads.
READABLE_FORMATS = (2, 3)
#: More segments than this triggers a merge of the smaller ones.
MAX_SEGMENTS = 8
#: A dead-row fraction above this triggers a full merge (compaction).
MAX_DEAD_FRACTION = 0.25
_SEGMENT_FILES = ("documents.parquet", "chunks.parquet", "vectors.npy", *Postings.FILES)
_SEGMENT_FILES_V2 = ("documents.jsonl", "chunks.jsonl", "vectors.npy", "postings.npz", "vocab.txt")
#: A segment's saved faiss index (written when its dense index is HNSW; exact search needs none).
_DENSE_FILE = "dense.faiss"
_CHUNK_COLUMNS = ("chunk_id", "doc_id", "version", "start", "end", "title", "section_path", "anchor",
                  "parent_id", "preamble", "kind")


@dataclass(frozen=True)
class IndexSettings:
    """How an index is built; recorded in the manifest and checked on load.

    Attributes:
        chunker: chunking method, budget, overlap and preamble mode.
        dense_kind: ``"auto"`` (the default): HNSW for a segment of :data:`ragkit.retrieval.dense.HNSW_MIN_ROWS`
            rows or more (exact search would exceed 5 ms per query there, and HNSW keeps recall@10
            >= 0.97 against exact up to 1M rows; ``bench/results/scale.md``), exact below; or force
            ``"flat"`` (exact) or ``"hnsw"``. The HNSW graph is saved with its segment.
        bm25_stemmer / bm25_stopwords: BM25 analysis (``None`` disables).
        embedder: model name (``None``: ``RAGKIT_EMBEDDER`` or the bundled default,
            :data:`ragkit.models.bundled.DEFAULT_EMBEDDER`).
    """

    chunker: ChunkerSettings = field(default_factory=ChunkerSettings)
    dense_kind: str = "auto"
    bm25_stemmer: str | None = "english"
    bm25_stopwords: str | None = "en"
    embedder: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "chunker": asdict(self.chunker)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IndexSettings:
        return cls(**{**data, "chunker": ChunkerSettings(**data["chunker"])})


@dataclass
class SyncReport:
    """What :meth:`Index.sync` changed (doc ids), and how many chunks were encoded."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    encoded_rows: int = 0

    relocated: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Anything to commit: content changes, or unchanged documents whose source file moved."""
        return bool(self.added or self.updated or self.deleted or self.relocated)

    def __str__(self) -> str:
        moved = f" ({len(self.relocated)} moved to a new path)" if self.relocated else ""
        return (f"added {len(self.added)}, updated {len(self.updated)}, deleted {len(self.deleted)}, "
                f"unchanged {self.unchanged} documents{moved}; encoded {self.encoded_rows} chunks")


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


def _doc_fingerprint(doc: Document) -> str:
    """Content hash of a document: envelope (without load-time fields) and text."""
    env = {k: v for k, v in doc.envelope.to_mapping().items() if k not in ("source_path", "ingested_at")}
    payload = json.dumps(env, sort_keys=True, default=str) + "\0" + doc.text
    return hashlib.sha1(payload.encode()).hexdigest()


def _source_changed_at(doc: Document) -> str | None:
    """When the source last changed: the file's mtime, else the envelope's ``ingested_at``."""
    path = doc.envelope.source_path
    if path:
        try:
            return dt.datetime.fromtimestamp(os.stat(path).st_mtime, dt.timezone.utc).isoformat()
        except OSError:
            pass
    return doc.envelope.ingested_at.isoformat() if doc.envelope.ingested_at else None


def _chunk_to_json(c: Chunk) -> dict[str, Any]:
    return {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "version": c.version, "start": c.start,
            "end": c.end, "title": c.title, "section_path": list(c.section_path), "anchor": c.anchor,
            "parent_id": c.parent_id, "preamble": c.preamble, "kind": c.kind}


class _LazyEmbedder:
    """Loads the embedder on first query, and checks it is the one the index was built with."""

    def __init__(self, name: str | None, expected: dict[str, Any] | None) -> None:
        self.name = name
        self.expected = expected
        self._model: Any = None

    def get(self) -> Any:
        if self._model is None:
            from ragkit.models.bundled import get_embedder

            model = get_embedder(self.name)
            exp = self.expected
            if exp and (model.name != exp["name"] or model.version != exp["version"]):
                raise IndexStateError(
                    f"this index was built with embedder {exp['name']!r} (version {exp['version']}), "
                    f"but {model.name!r} (version {model.version}) is configured. Rebuild the index "
                    f"(`ragkit index DIR --out IDX --rebuild`) or use the same model "
                    f"(RAGKIT_EMBEDDER={exp['name']})"
                )
            self._model = model
        return self._model

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        return self.get().encode(texts, **kwargs)


def _encode_query(embedder: Any, query: str) -> np.ndarray:
    """The query's vector: ``encode_queries`` when the model has one (a retrieval instruction)."""
    target = embedder.get() if isinstance(embedder, _LazyEmbedder) else embedder
    encode = getattr(target, "encode_queries", None) or target.encode
    return np.asarray(encode([query]), dtype=np.float32).reshape(1, -1)


class Segment:
    """One immutable batch of documents with their sections, rows, vectors and BM25 postings."""

    def __init__(self, name: str, documents: Sequence[Document], chunks: Sequence[Chunk],
                 vectors: np.ndarray, postings: Postings | None = None, *,
                 settings: IndexSettings | None = None) -> None:
        self.name = name
        self.documents = list(documents)
        self.sections = [c for c in chunks if c.kind == "section"]
        self.rows = [c for c in chunks if c.kind == "chunk"]
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.vectors.ndim != 2 or len(self.vectors) != len(self.rows):
            raise IndexStateError(f"segment {name}: {len(self.rows)} chunks but vectors of shape "
                                  f"{self.vectors.shape}; the index is inconsistent, rebuild it")
        if postings is None:
            s = settings or IndexSettings()
            postings = Postings.from_tokens(tokenize(c.contextual_text(), stemmer=s.bm25_stemmer,
                                                     stopwords=s.bm25_stopwords) for c in self.rows)
        if len(postings) != len(self.rows):
            raise IndexStateError(f"segment {name}: {len(self.rows)} chunks but postings for "
                                  f"{len(postings)}; the index is inconsistent, rebuild it")
        self.postings = postings
        self._dense: Any = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.rows)

    @cached_property
    def doc_ids(self) -> list[str]:
        return [d.doc_id for d in self.documents]

    @cached_property
    def row_local_doc(self) -> np.ndarray:
        """For each row, the position of its document in :attr:`documents`."""
        pos = {d: i for i, d in enumerate(self.doc_ids)}
        return np.fromiter((pos[c.doc_id] for c in self.rows), dtype=np.int64, count=len(self.rows))

    @cached_property
    def section_map(self) -> dict[str, Chunk]:
        return {c.chunk_id: c for c in self.sections}

    @cached_property
    def rows_by_doc(self) -> dict[str, int]:
        """Rows per document in this segment."""
        out: dict[str, int] = {}
        for c in self.rows:
            out[c.doc_id] = out.get(c.doc_id, 0) + 1
        return out

    def dense(self, kind: str) -> Any:
        """The segment's faiss index (built once, or read with the segment; segments never change,
        so it is shared). ``kind="auto"`` builds HNSW from :data:`ragkit.retrieval.dense.HNSW_MIN_ROWS` rows."""
        with self._lock:
            if self._dense is None:
                from ragkit.retrieval.dense import DenseRetriever

                self._dense = DenseRetriever(self.vectors, None, kind=kind if len(self) > 4096 else "flat")
            return self._dense

    def _dense_to_save(self, kind: str) -> Any:
        """The faiss index to save with the segment: an HNSW graph (costly to rebuild), else ``None``."""
        from ragkit.retrieval.dense import choose_kind

        if len(self) <= 4096 or choose_kind(kind, len(self)) != "hnsw":
            return None
        return self.dense(kind)

    @staticmethod
    def new_name() -> str:
        return f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:10]}"

    # -- persistence ----------------------------------------------------------------------
    def write(self, seg_root: Path, *, dense_kind: str = "flat") -> dict[str, Any]:
        """Write into ``seg_root/<name>`` (temp folder, fsync, rename); return its manifest entry.

        Format 3: documents and chunks as Parquet tables, vectors and postings as ``.npy`` arrays,
        and the HNSW graph (``dense.faiss``) when ``dense_kind`` makes this segment's index HNSW.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        seg_root.mkdir(parents=True, exist_ok=True)
        tmp = seg_root / f".tmp-{self.name}"
        if tmp.exists():
            import shutil

            shutil.rmtree(tmp)
        tmp.mkdir()
        docs = pa.table({"envelope": [json.dumps(d.envelope.to_mapping(), ensure_ascii=False)
                                      for d in self.documents],
                         "text": [d.text for d in self.documents]})
        pq.write_table(docs, tmp / "documents.parquet", compression="zstd")
        storage.crash_point("save:segment-partial")
        chunks = [*self.sections, *self.rows]
        columns: dict[str, Any] = {name: [getattr(c, name) for c in chunks] for name in _CHUNK_COLUMNS}
        columns["section_path"] = pa.array([list(c.section_path) for c in chunks], type=pa.list_(pa.string()))
        columns["start"] = pa.array(columns["start"], type=pa.int64())
        columns["end"] = pa.array(columns["end"], type=pa.int64())
        pq.write_table(pa.table(columns), tmp / "chunks.parquet", compression="zstd")
        np.save(tmp / "vectors.npy", self.vectors)
        self.postings.save(tmp)
        names = list(_SEGMENT_FILES)
        dense = self._dense_to_save(dense_kind)
        if dense is not None:
            dense.save_index(tmp / _DENSE_FILE)
            names.append(_DENSE_FILE)
        for name in names:
            storage.fsync_file(tmp / name)
        storage.fsync_dir(tmp)
        files = dict(zip(names, storage.sha256_files([tmp / name for name in names]), strict=True))
        os.replace(tmp, seg_root / self.name)
        storage.fsync_dir(seg_root)
        storage.crash_point("save:segment")
        return {"name": self.name, "rows": len(self), "documents": len(self.documents), "files": files,
                "format": FORMAT_VERSION}

    @classmethod
    def read(cls, seg_root: Path, entry: dict[str, Any], *, verify: bool, root: Path) -> Segment:
        """Read a segment written by :meth:`write` (format 3) or by format 2 (JSON lines)."""
        folder = seg_root / entry["name"]
        fmt = int(entry.get("format", 2))
        required = _SEGMENT_FILES if fmt >= 3 else _SEGMENT_FILES_V2
        recorded = entry.get("files") or {}
        names = list(dict.fromkeys([*required, *recorded]))
        for name in names:
            if not (folder / name).is_file():
                raise IndexStateError(f"{folder / name} is missing; {_recover_hint(root)}")
        if verify:
            for name, digest in zip(names, storage.sha256_files([folder / n for n in names]), strict=True):
                if digest != recorded.get(name):
                    raise IndexStateError(f"{folder / name} does not match its checksum in the generation "
                                          f"manifest (damaged or edited by hand); {_recover_hint(root)}")
        try:
            docs, chunks = (_read_columnar if fmt >= 3 else _read_jsonl)(folder)
            vectors = np.load(folder / "vectors.npy", mmap_mode="r")  # paged in as searches touch it
            postings = Postings.load(folder)
            dense = None
            if _DENSE_FILE in recorded:
                from ragkit.retrieval.dense import DenseRetriever

                dense = DenseRetriever(vectors, None, index=DenseRetriever.read_index(folder / _DENSE_FILE))
        except (OSError, ValueError, KeyError, EOFError, RuntimeError, ImportError) as exc:
            raise IndexStateError(f"{folder} cannot be read ({type(exc).__name__}: {exc}); "
                                  f"{_recover_hint(root)}") from None
        segment = cls(entry["name"], docs, chunks, vectors, postings)
        segment._dense = dense
        return segment


def _read_jsonl(folder: Path) -> tuple[list[Document], list[Chunk]]:
    """Documents and chunks of a format-2 segment (JSON lines)."""
    docs = []
    for line in (folder / "documents.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        docs.append(Document(Envelope.from_mapping(rec["envelope"]), rec["text"]))
    by_id = {d.doc_id: d for d in docs}
    chunks = []
    for line in (folder / "chunks.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        text = by_id[rec["doc_id"]].text[rec["start"]:rec["end"]]
        chunks.append(Chunk(text=text, **{**rec, "section_path": tuple(rec["section_path"])}))
    return docs, chunks


def _saved_envelope(data: dict[str, Any]) -> Envelope:
    """An envelope from what :meth:`Envelope.to_mapping` wrote (its own ISO times, lists for tuples).

    Ten times faster than :meth:`Envelope.from_mapping`, which parses front matter written by hand;
    the invariants are still checked (``Envelope.__post_init__``), and anything unexpected falls
    back to ``from_mapping`` and its error messages.
    """
    try:
        kwargs = dict(data)
        for key in Envelope._TIME_FIELDS:
            value = kwargs.get(key)
            if value is not None:
                kwargs[key] = dt.datetime.fromisoformat(value)
        for key in Envelope._LIST_FIELDS:
            if key in kwargs:
                kwargs[key] = tuple(kwargs[key])
        return Envelope(**kwargs)
    except (TypeError, ValueError, AttributeError):
        return Envelope.from_mapping(data)


def _read_columnar(folder: Path) -> tuple[list[Document], list[Chunk]]:
    """Documents and chunks of a format-3 segment (Parquet, read column by column)."""
    import pyarrow.parquet as pq

    table = pq.read_table(folder / "documents.parquet")
    docs = [Document(_saved_envelope(json.loads(env)), text) for env, text in
            zip(table.column("envelope").to_pylist(), table.column("text").to_pylist(), strict=True)]
    text_of = {d.doc_id: d.text for d in docs}
    table = pq.read_table(folder / "chunks.parquet")
    cols = [table.column(name).to_pylist() for name in _CHUNK_COLUMNS]
    del table
    intern: dict[str, str] = {}  # one str object per distinct title/version/kind, not one per row
    chunks = []
    for cid, did, ver, start, end, title, path, anchor, parent, pre, kind in zip(*cols, strict=True):
        chunks.append(Chunk(cid, did, intern.setdefault(ver, ver), start, end, text_of[did][start:end],
                            intern.setdefault(title, title), tuple(path), anchor, parent, pre,
                            intern.setdefault(kind, kind)))
    return docs, chunks


def _recover_hint(root: Path) -> str:
    return (f"recover the newest intact generation with `Index.recover('{root}')` "
            f"(or `ragkit sync DIR --index {root} --recover`), or rebuild the index")


class Snapshot:
    """One immutable version of an index: every read a caller makes inside one search uses it.

    Rows are the live chunks of all segments in order; ``mask``, ``search_lexical``,
    ``search_dense``, ``envelope`` and ``parent`` all speak of these row numbers.
    """

    def __init__(self, segments: Sequence[Segment], doc_home: dict[str, str], settings: IndexSettings,
                 embedder: Any, generation: int, dim: int, relocated: dict[str, str] | None = None) -> None:
        self.segments = list(segments)
        self.doc_home = dict(doc_home)
        self.settings = settings
        self.generation = generation
        self._embedder = embedder
        self._dim = dim
        self.documents: dict[str, Document] = {}
        self.sections: dict[str, Chunk] = {}
        rows: list[Chunk] = []
        live_parts, doc_parts = [], []
        for seg in self.segments:  # vectorised per segment: an update costs O(documents), not O(rows)
            alive = np.fromiter((doc_home.get(d) == seg.name for d in seg.doc_ids), dtype=bool,
                                count=len(seg.doc_ids))
            base = len(self.documents)
            for d, ok in zip(seg.documents, alive, strict=True):
                if ok:
                    if relocated and d.doc_id in relocated:  # same content, source file moved
                        d = Document(replace(d.envelope, source_path=relocated[d.doc_id]), d.text)
                    self.documents[d.doc_id] = d
            position = np.full(len(seg.doc_ids), -1, dtype=np.int64)
            position[alive] = np.arange(base, base + int(alive.sum()))
            live = alive[seg.row_local_doc] if len(seg.rows) else np.zeros(0, dtype=bool)
            if alive.all():
                rows.extend(seg.rows)
                self.sections.update(seg.section_map)
            else:
                rows.extend(itertools.compress(seg.rows, live))
                dead = {d for d, ok in zip(seg.doc_ids, alive, strict=True) if not ok}
                self.sections.update((k, c) for k, c in seg.section_map.items() if c.doc_id not in dead)
            live_parts.append(live)
            doc_parts.append(position[seg.row_local_doc][live] if len(seg.rows) else np.zeros(0, np.int64))
        self.rows = rows
        self.live = np.concatenate(live_parts) if live_parts else np.zeros(0, dtype=bool)
        self.row_slot = np.flatnonzero(self.live)
        self.slot_row = np.full(len(self.live), -1, dtype=np.int64)
        self.slot_row[self.row_slot] = np.arange(len(self.row_slot))
        self._doc_order = list(self.documents)
        self._envelopes = [self.documents[d].envelope for d in self._doc_order]
        self.row_doc = np.concatenate(doc_parts).astype(np.int64) if doc_parts else np.zeros(0, np.int64)
        self.lexical = SegmentedBM25([s.postings for s in self.segments], self.live,
                                     stemmer=settings.bm25_stemmer, stopwords=settings.bm25_stopwords)

    def snapshot(self) -> Snapshot:
        """Itself (a snapshot is already immutable)."""
        return self

    @cached_property
    def row_of(self) -> dict[str, int]:
        return {c.chunk_id: i for i, c in enumerate(self.rows)}

    @cached_property
    def vectors(self) -> np.ndarray:
        """Embeddings of the live rows, in row order."""
        if not self.segments:
            return np.zeros((0, self._dim), np.float32)
        if len(self.segments) == 1 and len(self.row_slot) == len(self.live):
            return np.asarray(self.segments[0].vectors)  # no copy (read-only when memory-mapped)
        return np.vstack([s.vectors for s in self.segments])[self.row_slot]

    @property
    def dead_rows(self) -> int:
        return int(len(self.live) - len(self.rows))

    def stats(self) -> dict[str, Any]:
        return {"documents": len(self.documents), "sections": len(self.sections), "rows": len(self.rows),
                "segments": len(self.segments), "dead_rows": self.dead_rows, "generation": self.generation,
                "chunker": self.settings.chunker.method}

    def mask(self, scope: Scope, filters: Filters | None = None) -> np.ndarray:
        """Rows the caller may see under ``filters`` (computed from envelopes, before ranking)."""
        return scope_mask(self._envelopes, self.row_doc, scope, filters)

    def envelope(self, row: int) -> Envelope:
        return self._envelopes[int(self.row_doc[row])]

    def _slot_mask(self, mask: np.ndarray | None) -> np.ndarray:
        if mask is None:
            return self.live.copy()
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != (len(self.rows),):
            raise ValidationError(f"mask must be a bool array of shape ({len(self.rows)},), one entry per "
                                  f"row of this snapshot; got {mask.dtype} {mask.shape}", field="mask")
        out = np.zeros(len(self.live), dtype=bool)
        out[self.row_slot] = mask
        return out

    def _rows(self, slots: Ranking) -> Ranking:
        return Ranking([int(self.slot_row[s]) for s in slots.ids], list(slots.scores))

    def search_lexical(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        if not self.rows:
            return Ranking([], [])
        if mask is None:  # dead slots never score: no slot mask to build and apply
            return self._rows(self.lexical.search(query, k))
        return self._rows(self.lexical.search(query, k, self._slot_mask(mask)))

    def search_dense(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValidationError(f"k={k!r}: ask for at least one result (k >= 1)", field="k")
        slots = self._slot_mask(mask)
        if not slots.any() or not query.strip():
            return Ranking([], [])
        q = _encode_query(self._embedder, query)
        found: list[tuple[float, int]] = []
        offset = 0
        for seg in self.segments:
            part = slots[offset:offset + len(seg)]
            if part.any():
                r = seg.dense(self.settings.dense_kind).search(query, int(k), part, query_vector=q)
                found += [(s, offset + i) for i, s in zip(r.ids, r.scores, strict=True)]
            offset += len(seg)
        found.sort(key=lambda x: (-x[0], x[1]))
        top = found[: int(k)]
        return Ranking([int(self.slot_row[s]) for _, s in top], [float(x) for x, _ in top])

    def parent(self, row: int) -> Chunk | None:
        """The parent section of a row (``None`` when its chunker has no sections)."""
        pid = self.rows[row].parent_id
        return self.sections.get(pid) if pid else None


class Index:
    """Rows (retrievable chunks) with envelopes, BM25 and dense retrievers, and parent sections.

    Build with :meth:`build`, persist with :meth:`save`, reopen with :meth:`load`, keep
    fresh with :meth:`sync`. Reads go to the current :class:`Snapshot`; take
    ``index.snapshot()`` once when a read makes several calls.
    """

    def __init__(self, documents: Sequence[Document], chunks: Sequence[Chunk], vectors: np.ndarray,
                 settings: IndexSettings, *, embedder: Any = None, manifest: dict[str, Any] | None = None):
        self.settings = settings
        self.manifest: dict[str, Any] = manifest or {}
        self._embedder = embedder if embedder is not None else _LazyEmbedder(
            settings.embedder, self.manifest.get("embedder"))
        self._write_lock = threading.RLock()
        segment = Segment(Segment.new_name(), documents, chunks, vectors, settings=settings)
        self._install([segment], {d.doc_id: segment.name for d in documents},
                      int(self.manifest.get("generation", 0)))

    # -- state ----------------------------------------------------------------------------
    def _install(self, segments: Sequence[Segment], doc_home: dict[str, str], generation: int,
                 manifest: dict[str, Any] | None = None) -> None:
        manifest = self.manifest if manifest is None else manifest
        dim = int(self.manifest.get("embedder", {}).get("dim") or 0) or \
            (segments[0].vectors.shape[1] if segments and segments[0].vectors.ndim == 2 else 384)
        self._snap = Snapshot(segments, doc_home, self.settings, self._embedder, generation, dim,
                              manifest.get("relocated"))

    def snapshot(self) -> Snapshot:
        """The current immutable version; use it for every read of one search or tool call."""
        return self._snap

    rows = property(lambda self: self._snap.rows, doc="Live chunks, one per row.")
    documents = property(lambda self: self._snap.documents, doc="doc_id -> Document (live).")
    sections = property(lambda self: self._snap.sections, doc="chunk_id -> parent section.")
    row_doc = property(lambda self: self._snap.row_doc, doc="Row -> document position.")
    row_of = property(lambda self: self._snap.row_of, doc="chunk_id -> row.")
    vectors = property(lambda self: self._snap.vectors, doc="Embeddings of live rows.")
    lexical = property(lambda self: self._snap.lexical, doc="The BM25 scorer of the current snapshot.")
    segments = property(lambda self: self._snap.segments, doc="Segments of the current snapshot.")

    def stats(self) -> dict[str, Any]:
        """Counts and model names, for display."""
        return {**self._snap.stats(), "embedder": self.manifest.get("embedder", {}).get("name")}

    def mask(self, scope: Scope, filters: Filters | None = None) -> np.ndarray:
        return self._snap.mask(scope, filters)

    def envelope(self, row: int) -> Envelope:
        return self._snap.envelope(row)

    def search_lexical(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        return self._snap.search_lexical(query, k, mask)

    def search_dense(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        return self._snap.search_dense(query, k, mask)

    def parent(self, row: int) -> Chunk | None:
        return self._snap.parent(row)

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def _encode(chunks: Sequence[Chunk], embedder: Any, progress: bool) -> np.ndarray:
        rows = [c for c in chunks if c.kind == "chunk"]
        return np.asarray(embedder.encode([c.contextual_text() for c in rows], progress=progress),
                          dtype=np.float32)

    @classmethod
    def build(cls, documents: Iterable[Document], settings: IndexSettings | None = None, *,
              embedder: Any = None, progress: bool = False) -> Index:
        """Chunk and embed ``documents`` into a new in-memory index."""
        settings = settings or IndexSettings()
        docs = list(documents)
        if not docs:
            raise ValidationError("no documents to index; check the folder and the load report")
        chunks = chunk_documents(docs, settings.chunker)
        lazy = embedder or _LazyEmbedder(settings.embedder, None)
        vectors = cls._encode(chunks, lazy, progress)
        model = lazy.get() if isinstance(lazy, _LazyEmbedder) else lazy
        manifest = cls._new_manifest(settings, model, docs)
        return cls(docs, chunks, vectors, settings, embedder=lazy, manifest=manifest)

    @staticmethod
    def _new_manifest(settings: IndexSettings, model: Any, docs: Sequence[Document]) -> dict[str, Any]:
        from ragkit.core.version import __version__

        now = _now()
        return {
            "format_version": FORMAT_VERSION, "ragkit_version": __version__, "generation": 0,
            "embedder": {"name": getattr(model, "name", "custom"),
                         "version": getattr(model, "version", "unknown"),
                         "dim": int(getattr(model, "dim", 0) or 0)},
            "settings": settings.to_json(), "created_at": now, "updated_at": now,
            "indexed_at": {d.doc_id: now for d in docs},
            "source_changed_at": {d.doc_id: _source_changed_at(d) for d in docs},
            "doc_fingerprints": {d.doc_id: _doc_fingerprint(d) for d in docs},
            "tombstones": [],
        }

    # -- incremental change ---------------------------------------------------------------
    def sync(self, documents: Iterable[Document], *, delete_missing: bool = True,
             progress: bool = False) -> SyncReport:
        """Make the index match ``documents``: add new, re-encode changed, delete missing ones.

        Only new and changed documents are chunked, encoded and tokenised (into one new
        segment); unchanged ones are untouched. The new version becomes visible to readers
        in one step; on any error the index is left as it was.
        """
        docs = list(documents)
        with self._write_lock:
            snap = self._snap
            fps = self.manifest.get("doc_fingerprints", {})
            report = SyncReport()
            changed: list[Document] = []
            incoming: set[str] = set()
            for d in docs:
                if d.doc_id in incoming:
                    raise ValidationError(f"sync: doc_id {d.doc_id!r} appears twice; doc ids must be unique",
                                          field="doc_id")
                incoming.add(d.doc_id)
                if d.doc_id not in snap.documents:
                    report.added.append(d.doc_id)
                    changed.append(d)
                elif fps.get(d.doc_id) != _doc_fingerprint(d):
                    report.updated.append(d.doc_id)
                    changed.append(d)
                else:
                    report.unchanged += 1
                    if d.envelope.source_path != snap.documents[d.doc_id].envelope.source_path:
                        report.relocated.append(d.doc_id)
            if delete_missing:
                report.deleted = [d for d in snap.documents if d not in incoming]
            if not report.changed:
                return report
            return self._apply(snap, changed, docs, report, progress)

    def _apply(self, snap: Snapshot, changed: list[Document], docs: list[Document], report: SyncReport,
               progress: bool) -> SyncReport:
        """Encode ``changed`` into one new segment, retire replaced and deleted rows, swap the snapshot.

        Called with the write lock held."""
        moved_ids = set(report.relocated)
        relocated = {d.doc_id: d.envelope.source_path for d in docs if d.doc_id in moved_ids}
        segments = list(snap.segments)
        doc_home = dict(snap.doc_home)
        if changed:
            chunks = chunk_documents(changed, self.settings.chunker)
            vectors = self._encode(chunks, self._embedder, progress)
            report.encoded_rows = int(len(vectors))
            segment = Segment(Segment.new_name(), changed, chunks, vectors, settings=self.settings)
            segments.append(segment)
            doc_home.update({d.doc_id: segment.name for d in changed})
        for doc_id in report.deleted:
            doc_home.pop(doc_id, None)
        segments = _merge_if_needed(segments, doc_home)
        now = _now()
        manifest = dict(self.manifest)  # copy what changes: readers never see a half update
        for key in ("doc_fingerprints", "indexed_at", "source_changed_at", "relocated"):
            manifest[key] = dict(manifest.get(key) or {})
        manifest["tombstones"] = list(manifest.get("tombstones") or [])
        for d in changed:
            manifest["doc_fingerprints"][d.doc_id] = _doc_fingerprint(d)
            manifest.setdefault("indexed_at", {})[d.doc_id] = now
            manifest.setdefault("source_changed_at", {})[d.doc_id] = _source_changed_at(d)
        for doc_id in report.deleted:
            for key in ("doc_fingerprints", "indexed_at", "source_changed_at"):
                manifest.get(key, {}).pop(doc_id, None)
            manifest.setdefault("tombstones", []).append({"doc_id": doc_id, "deleted_at": now})
        moved = manifest.setdefault("relocated", {})
        moved.update(relocated)
        for doc_id in [*(d.doc_id for d in changed), *report.deleted]:
            moved.pop(doc_id, None)
        manifest["updated_at"] = now
        self._install(segments, doc_home, snap.generation, manifest)
        self.manifest = manifest
        return report

    def add(self, documents: Iterable[Document], *, progress: bool = False) -> SyncReport:
        """Add or update documents; existing documents keep their vectors."""
        return self.sync(documents, delete_missing=False, progress=progress)

    def delete(self, doc_ids: Iterable[str]) -> SyncReport:
        """Remove documents, their chunks and vectors; logs a tombstone for each."""
        gone = list(dict.fromkeys(doc_ids))
        with self._write_lock:
            snap = self._snap
            unknown = sorted(set(gone) - set(snap.documents))
            if unknown:
                raise ValidationError(f"cannot delete unknown doc ids {unknown[:5]}")
            report = SyncReport(deleted=gone, unchanged=len(snap.documents) - len(gone))
            return self._apply(snap, [], [], report, False) if gone else report

    def compact(self) -> None:
        """Merge every segment into one, dropping dead rows (nothing is re-encoded)."""
        with self._write_lock:
            snap = self._snap
            if len(snap.segments) > 1 or snap.dead_rows:
                self._install([_merge(snap.segments, snap.doc_home)], _home_of(snap), snap.generation)

    # -- persistence ----------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Commit this index to ``path`` as a new generation (crash-safe; see :mod:`ragkit.index.storage`).

        Only segments not already in the folder are written, so saving after a small
        update costs about the size of the update.
        """
        root = Path(path)
        with self._write_lock, storage.writer_lock(root):
            snap = self._snap
            seg_root = root / storage.SEGMENTS
            entries = []
            known = {s["name"]: s for s in self._saved_entries.get(str(root.resolve()), [])}
            for seg in snap.segments:
                entry = known.get(seg.name)
                if entry and entry.get("format") == FORMAT_VERSION and (seg_root / seg.name).is_dir():
                    entries.append(entry)
                    continue
                if (seg_root / seg.name).exists():  # saved in an older format: rewrite under a new name
                    old, seg.name = seg.name, Segment.new_name()
                    snap.doc_home = {d: (seg.name if h == old else h) for d, h in snap.doc_home.items()}
                entries.append(seg.write(seg_root, dense_kind=self.settings.dense_kind))
            names = storage.generation_names(root)
            generation = (storage.generation_number(names[-1]) if names else 0) + 1
            manifest = dict(self.manifest)
            manifest.update({
                "format_version": FORMAT_VERSION, "generation": generation, "committed_at": _now(),
                "settings": self.settings.to_json(), "segments": entries, "doc_home": snap.doc_home,
                "counts": {"documents": len(snap.documents), "sections": len(snap.sections),
                           "rows": len(snap.rows), "segments": len(snap.segments),
                           "dead_rows": snap.dead_rows},
                "corpus_fingerprint": hashlib.sha1("".join(sorted(
                    manifest.get("doc_fingerprints", {}).values())).encode()).hexdigest(),
            })
            storage.commit_generation(root, manifest)
            self.manifest = manifest
            self._saved_entries[str(root.resolve())] = entries
            self._snap.generation = generation
            storage.cleanup(root, current_segments=[e["name"] for e in entries])
        return root

    @property
    def _saved_entries(self) -> dict[str, list[dict[str, Any]]]:
        if not hasattr(self, "_saved"):
            self._saved: dict[str, list[dict[str, Any]]] = {}
        return self._saved

    @classmethod
    def load(cls, path: str | Path, *, embedder: Any = None, verify: bool = True,
             generation: int | None = None) -> Index:
        """Open a saved index (the generation ``CURRENT`` names, or ``generation``); nothing is re-encoded.

        Raises:
            IndexStateError: missing folder, a missing or damaged file (named, with how to
                recover), a format from another ragkit version, or (on first query) an
                embedder that differs from the one the index was built with.
        """
        root = Path(path)
        for attempt in range(3):  # a concurrent writer may delete an old generation mid-read
            cur = storage.current_generation(root)
            if cur is None:
                if (root / "manifest.json").is_file():
                    raise IndexStateError(
                        f"{root} has index format 1; this ragkit reads format {FORMAT_VERSION}. Rebuild "
                        f"or upgrade it with `ragkit index DIR --out {root}` (upgrades without "
                        "re-encoding)")
                raise IndexStateError(f"{root} is not a ragkit index (no CURRENT file); build one "
                                      f"with `ragkit index DIR --out {root}`")
            name, sha = cur[0], cur[1] if generation is None else None
            if generation is not None:
                name = f"gen-{generation:06d}.json"
            try:
                return cls._load_generation(root, name, sha, embedder=embedder, verify=verify)
            except IndexStateError:
                if attempt == 2 or generation is not None or storage.current_generation(root) == cur:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @classmethod
    def _load_generation(cls, root: Path, name: str, sha: str | None, *, embedder: Any,
                         verify: bool) -> Index:
        manifest = storage.read_generation(root, name, sha)
        if manifest.get("format_version") not in READABLE_FORMATS:
            raise IndexStateError(f"{root / name} has index format {manifest.get('format_version')}, this "
                                  f"ragkit reads formats {READABLE_FORMATS}; rebuild the index")
        try:
            settings = IndexSettings.from_json(manifest["settings"])
            entries = list(manifest["segments"])
            doc_home = dict(manifest["doc_home"])
        except (KeyError, TypeError) as exc:
            raise IndexStateError(f"{root / name} lacks {exc}; {_recover_hint(root)}") from None
        segments = [Segment.read(root / storage.SEGMENTS, e, verify=verify, root=root) for e in entries]
        lazy = embedder or _LazyEmbedder(settings.embedder, manifest.get("embedder"))
        index = cls.__new__(cls)
        index.settings = settings
        index.manifest = manifest
        index._embedder = lazy
        index._write_lock = threading.RLock()
        index._install(segments, doc_home, int(manifest.get("generation", 0)))
        index._saved_entries[str(root.resolve())] = entries
        return index

    @classmethod
    def recover(cls, path: str | Path, *, embedder: Any = None) -> Index:
        """Point ``CURRENT`` at the newest generation that loads and verifies, and return it.

        Raises:
            IndexStateError: no generation in the folder is intact (rebuild the index).
        """
        root = Path(path)
        problems = []
        with storage.writer_lock(root):
            for name in reversed(storage.generation_names(root)):
                try:
                    index = cls._load_generation(root, name, None, embedder=embedder, verify=True)
                except IndexStateError as exc:
                    problems.append(str(exc))
                    continue
                data = (root / name).read_bytes()
                storage.write_durable(root / "CURRENT",
                                      f"{name} {hashlib.sha256(data).hexdigest()}\n".encode())
                return index
        raise IndexStateError(f"no intact generation in {root} ({'; '.join(problems[:2]) or 'none found'});"
                              " rebuild the index with `ragkit index DIR --out IDX --rebuild`")

    @classmethod
    def upgrade(cls, path: str | Path, *, embedder: Any = None) -> Index:
        """Convert an index folder of an older format to the current one in place, without re-encoding.

        Format 1 (one flat folder) becomes one segment; a format-2 generation (JSON lines) is read
        and committed again as a new format-3 generation whose segments are rewritten as columns
        (the format-2 generation stays, as the previous one, until the next commit).
        """
        root = Path(path)
        with storage.writer_lock(root):
            if storage.current_generation(root) is not None:  # format 2, or upgraded by another process
                index = cls.load(root, embedder=embedder)
                if index.manifest.get("format_version") != FORMAT_VERSION:
                    index.save(root)  # rewrites every segment not in the current format
                return index
            return cls._upgrade_locked(root, embedder)

    @classmethod
    def _upgrade_locked(cls, root: Path, embedder: Any) -> Index:
        try:
            manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
            settings = IndexSettings.from_json(manifest["settings"])
            docs = [Document(Envelope.from_mapping(r["envelope"]), r["text"]) for r in
                    map(json.loads, (root / "documents.jsonl").read_text(encoding="utf-8").splitlines())]
            by_id = {d.doc_id: d for d in docs}
            chunks = []
            for rec in map(json.loads, (root / "chunks.jsonl").read_text(encoding="utf-8").splitlines()):
                text = by_id[rec["doc_id"]].text[rec["start"]:rec["end"]]
                chunks.append(Chunk(text=text, **{**rec, "section_path": tuple(rec["section_path"])}))
            vectors = np.load(root / "vectors.npy")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IndexStateError(f"{root}: cannot upgrade the format-1 index ({exc}); rebuild it") from None
        manifest.update({"format_version": FORMAT_VERSION, "generation": 0})
        manifest.setdefault("source_changed_at", {d.doc_id: _source_changed_at(d) for d in docs})
        lazy = embedder or _LazyEmbedder(settings.embedder, manifest.get("embedder"))
        index = cls(docs, chunks, vectors, settings, embedder=lazy, manifest=manifest)
        index.save(root)
        return index


def _home_of(snap: Snapshot) -> dict[str, str]:
    return dict(snap.doc_home)


def _merge(segments: Sequence[Segment], doc_home: dict[str, str]) -> Segment:
    """One segment holding the live documents, rows, vectors and postings of ``segments``."""
    name = Segment.new_name()
    docs, chunks, vectors, parts = [], [], [], []
    for seg in segments:
        docs += [d for d in seg.documents if doc_home.get(d.doc_id) == seg.name]
        chunks += [c for c in seg.sections if doc_home.get(c.doc_id) == seg.name]
        keep = np.array([i for i, c in enumerate(seg.rows) if doc_home.get(c.doc_id) == seg.name],
                        dtype=np.int64)
        chunks += [seg.rows[i] for i in keep]
        vectors.append(seg.vectors[keep])
        parts.append((seg.postings, keep))
    for d in docs:
        doc_home[d.doc_id] = name
    return Segment(name, docs, chunks, np.vstack(vectors), Postings.merge(parts))


def _merge_if_needed(segments: list[Segment], doc_home: dict[str, str]) -> list[Segment]:
    """Merge policy: compact everything when a quarter of the rows are dead; otherwise merge
    all but the largest segment when there are more than :data:`MAX_SEGMENTS`."""
    homes = set(doc_home.values())
    segments = [s for s in segments if s.name in homes]
    by_name = {s.name: s for s in segments}
    total = sum(len(s) for s in segments)
    live = sum(by_name[h].rows_by_doc.get(d, 0) for d, h in doc_home.items())  # O(documents)
    if total and (total - live) > MAX_DEAD_FRACTION * total:
        return [_merge(segments, doc_home)]
    if len(segments) > MAX_SEGMENTS:
        largest = max(segments, key=len)
        rest = [s for s in segments if s is not largest]
        return [largest, _merge(rest, doc_home)]
    return segments
