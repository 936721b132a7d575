"""Segments: immutable batches of documents, sections, rows, vectors and BM25 postings.

Rows live in segments (one per build or sync). A :class:`Segment` is never changed once made;
it is written once (:meth:`Segment.write`: a temp folder, fsync, rename) and read back
(:meth:`Segment.read`, checksums verified) in format 3 (Parquet tables and ``.npy`` arrays) or
format 2 (JSON lines). Updates mark old rows dead instead of rewriting them; the merge policy
(:func:`merge_if_needed`) copies live rows into one segment, counts and vectors included,
never re-encoding, when there are more than :data:`MAX_SEGMENTS` segments or more than
:data:`MAX_DEAD_FRACTION` of the rows are dead.

Example:
    >>> import numpy as np
    >>> from ragkit.core.records import Document, Envelope
    >>> from ragkit.documents.chunking import chunk_documents
    >>> docs = [Document(Envelope("a"), "Some text about EUR cutoffs.")]
    >>> chunks = chunk_documents(docs)
    >>> rows = [c for c in chunks if c.kind == "chunk"]
    >>> seg = Segment("s1", docs, chunks, np.zeros((len(rows), 4)))
    >>> len(seg) == len(rows), seg.doc_ids
    (True, ['a'])
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import threading
import uuid
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.core.errors import IndexStateError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.index import storage
from ragkit.index.settings import FORMAT_VERSION, IndexSettings
from ragkit.retrieval.analysis import tokenize
from ragkit.retrieval.dense import DenseRetriever, choose_kind
from ragkit.retrieval.postings import Postings

__all__ = ["Segment", "SEGMENT_FILES", "SEGMENT_FILES_V2", "DENSE_FILE", "CHUNK_COLUMNS", "MAX_SEGMENTS",
           "MAX_DEAD_FRACTION", "read_columnar", "read_jsonl", "saved_envelope", "recover_hint",
           "merge_segments", "merge_if_needed"]

#: More segments than this triggers a merge of the smaller ones.
MAX_SEGMENTS = 8
#: A dead-row fraction above this triggers a full merge (compaction).
MAX_DEAD_FRACTION = 0.25
#: The files of a format-3 segment.
SEGMENT_FILES = ("documents.parquet", "chunks.parquet", "vectors.npy", *Postings.FILES)
#: The files of a format-2 segment (JSON lines).
SEGMENT_FILES_V2 = ("documents.jsonl", "chunks.jsonl", "vectors.npy", "postings.npz", "vocab.txt")
#: A segment's saved faiss index (written when its dense index is HNSW; exact search needs none).
DENSE_FILE = "dense.faiss"
#: The columns of ``chunks.parquet`` (the chunk's text is not stored: it is a slice of its document).
CHUNK_COLUMNS = ("chunk_id", "doc_id", "version", "start", "end", "title", "section_path", "anchor",
                 "parent_id", "preamble", "kind")


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
        """The ids of :attr:`documents`, in order."""
        return [d.doc_id for d in self.documents]

    @cached_property
    def row_local_doc(self) -> np.ndarray:
        """For each row, the position of its document in :attr:`documents`."""
        pos = {d: i for i, d in enumerate(self.doc_ids)}
        return np.fromiter((pos[c.doc_id] for c in self.rows), dtype=np.int64, count=len(self.rows))

    @cached_property
    def section_map(self) -> dict[str, Chunk]:
        """``chunk_id -> section`` of this segment's parent sections."""
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
        so it is shared). ``kind="auto"`` builds HNSW from
        :data:`ragkit.retrieval.dense.HNSW_MIN_ROWS` rows."""
        with self._lock:
            if self._dense is None:
                self._dense = DenseRetriever(self.vectors, None, kind=kind if len(self) > 4096 else "flat")
            return self._dense

    def _dense_to_save(self, kind: str) -> Any:
        """The faiss index to save with the segment: an HNSW graph (costly to rebuild), else ``None``."""
        if len(self) <= 4096 or choose_kind(kind, len(self)) != "hnsw":
            return None
        return self.dense(kind)

    @staticmethod
    def new_name() -> str:
        """A fresh, sortable segment name: UTC time and a random suffix."""
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
            shutil.rmtree(tmp)
        tmp.mkdir()
        docs = pa.table({"envelope": [json.dumps(d.envelope.to_mapping(), ensure_ascii=False)
                                      for d in self.documents],
                         "text": [d.text for d in self.documents]})
        pq.write_table(docs, tmp / "documents.parquet", compression="zstd")
        storage.crash_point("save:segment-partial")
        chunks = [*self.sections, *self.rows]
        columns: dict[str, Any] = {name: [getattr(c, name) for c in chunks] for name in CHUNK_COLUMNS}
        columns["section_path"] = pa.array([list(c.section_path) for c in chunks], type=pa.list_(pa.string()))
        columns["start"] = pa.array(columns["start"], type=pa.int64())
        columns["end"] = pa.array(columns["end"], type=pa.int64())
        pq.write_table(pa.table(columns), tmp / "chunks.parquet", compression="zstd")
        np.save(tmp / "vectors.npy", self.vectors)
        self.postings.save(tmp)
        names = list(SEGMENT_FILES)
        dense = self._dense_to_save(dense_kind)
        if dense is not None:
            dense.save_index(tmp / DENSE_FILE)
            names.append(DENSE_FILE)
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
        required = SEGMENT_FILES if fmt >= 3 else SEGMENT_FILES_V2
        recorded = entry.get("files") or {}
        names = list(dict.fromkeys([*required, *recorded]))
        for name in names:
            if not (folder / name).is_file():
                raise IndexStateError(f"{folder / name} is missing; {recover_hint(root)}")
        if verify:
            for name, digest in zip(names, storage.sha256_files([folder / n for n in names]), strict=True):
                if digest != recorded.get(name):
                    raise IndexStateError(f"{folder / name} does not match its checksum in the generation "
                                          f"manifest (damaged or edited by hand); {recover_hint(root)}")
        try:
            docs, chunks = (read_columnar if fmt >= 3 else read_jsonl)(folder)
            vectors = np.load(folder / "vectors.npy", mmap_mode="r")  # paged in as searches touch it
            postings = Postings.load(folder)
            dense = None
            if DENSE_FILE in recorded:
                dense = DenseRetriever(vectors, None, index=DenseRetriever.read_index(folder / DENSE_FILE))
        except (OSError, ValueError, KeyError, EOFError, RuntimeError, ImportError) as exc:
            raise IndexStateError(f"{folder} cannot be read ({type(exc).__name__}: {exc}); "
                                  f"{recover_hint(root)}") from None
        segment = cls(entry["name"], docs, chunks, vectors, postings)
        segment._dense = dense
        return segment


def read_jsonl(folder: Path) -> tuple[list[Document], list[Chunk]]:
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


def saved_envelope(data: dict[str, Any]) -> Envelope:
    """An envelope from what :meth:`Envelope.to_mapping` wrote (its own ISO times, lists for tuples).

    Ten times faster than :meth:`Envelope.from_mapping`, which parses front matter written by hand;
    the invariants are still checked (``Envelope.__post_init__``), and anything unexpected falls
    back to ``from_mapping`` and its error messages.
    """
    try:
        kwargs = dict(data)
        for key in Envelope.TIME_FIELDS:
            value = kwargs.get(key)
            if value is not None:
                kwargs[key] = dt.datetime.fromisoformat(value)
        for key in Envelope.LIST_FIELDS:
            if key in kwargs:
                kwargs[key] = tuple(kwargs[key])
        return Envelope(**kwargs)
    except (TypeError, ValueError, AttributeError):
        return Envelope.from_mapping(data)


def read_columnar(folder: Path) -> tuple[list[Document], list[Chunk]]:
    """Documents and chunks of a format-3 segment (Parquet, read column by column)."""
    table = _read_parquet(folder / "documents.parquet")
    docs = [Document(saved_envelope(json.loads(env)), text) for env, text in
            zip(table.column("envelope").to_pylist(), table.column("text").to_pylist(), strict=True)]
    text_of = {d.doc_id: d.text for d in docs}
    table = _read_parquet(folder / "chunks.parquet")
    cols = [table.column(name).to_pylist() for name in CHUNK_COLUMNS]
    del table
    intern: dict[str, str] = {}  # one str object per distinct title/version/kind, not one per row
    chunks = []
    for cid, did, ver, start, end, title, path, anchor, parent, pre, kind in zip(*cols, strict=True):
        chunks.append(Chunk(cid, did, intern.setdefault(ver, ver), start, end, text_of[did][start:end],
                            intern.setdefault(title, title), tuple(path), anchor, parent, pre,
                            intern.setdefault(kind, kind)))
    return docs, chunks


def _read_parquet(path: Path) -> Any:
    """The whole Parquet file at ``path`` as a pyarrow Table.

    Read with ``ParquetFile`` rather than ``pq.read_table``: the same table, but without importing
    ``pyarrow.dataset`` (and pandas with it), about 0.2 s of every fresh process that opens an index.
    """
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as file:
        return file.read()


def recover_hint(root: Path) -> str:
    """How to recover the index at ``root`` (ends the message of a damaged-index error)."""
    return (f"recover the newest intact generation with `Index.recover('{root}')` "
            f"(or `ragkit sync DIR --index {root} --recover`), or rebuild the index")


def merge_segments(segments: Sequence[Segment], doc_home: dict[str, str]) -> Segment:
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


def merge_if_needed(segments: list[Segment], doc_home: dict[str, str]) -> list[Segment]:
    """Merge policy: compact everything when a quarter of the rows are dead; otherwise merge
    all but the largest segment when there are more than :data:`MAX_SEGMENTS`."""
    homes = set(doc_home.values())
    segments = [s for s in segments if s.name in homes]
    by_name = {s.name: s for s in segments}
    total = sum(len(s) for s in segments)
    live = sum(by_name[h].rows_by_doc.get(d, 0) for d, h in doc_home.items())  # O(documents)
    if total and (total - live) > MAX_DEAD_FRACTION * total:
        return [merge_segments(segments, doc_home)]
    if len(segments) > MAX_SEGMENTS:
        largest = max(segments, key=len)
        rest = [s for s in segments if s is not largest]
        return [largest, merge_segments(rest, doc_home)]
    return segments
