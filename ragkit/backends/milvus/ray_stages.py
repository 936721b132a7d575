"""The stages of the Ray Data ingestion pipeline: read -> chunk -> embed -> write.

Module-level functions and classes: Ray pickles them by reference, so workers import ragkit
(every node of a cluster needs it installed). Rows stay one per *document* end to end (its
pickled document, chunks and vectors), so a write batch always carries whole documents.
:func:`~ragkit.backends.milvus.ray_ingest.ingest_ray` chains them.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.index import MilvusIndex
from ragkit.backends.milvus.ingest import BatchCounts, encode_chunks, split_per_document, write_batch
from ragkit.backends.milvus.reading import load_path
from ragkit.core.errors import ModelNotAvailable
from ragkit.documents.chunking import ChunkerSettings, chunk_documents
from ragkit.documents.loaders import Skipped
from ragkit.index.manifest import doc_fingerprint
from ragkit.models.bundled import get_embedder

__all__ = ["read_stage", "chunk_stage", "EmbedStage", "WriteStage"]


def read_stage(batch: dict[str, np.ndarray], *, root: str, max_file_mb: float) -> dict[str, np.ndarray]:
    """Read stage: file paths -> one row per document (pickled, with its content hash and source), or
    one ``error`` row per broken file or bad JSONL line (the file's good lines are kept)."""
    keys = ("path", "pos", "doc_id", "doc", "error", "line", "field", "fingerprint", "source")
    cols: dict[str, list[Any]] = {k: [] for k in keys}

    def row(*values: Any) -> None:
        for key, value in zip(keys, values, strict=True):
            cols[key].append(value)

    for path in batch["path"]:
        loaded = load_path(str(path), root, max_file_mb)
        if isinstance(loaded, Skipped):
            row(str(path), -1, "", b"", loaded.reason, loaded.line or 0, loaded.field or "", "", "")
            continue
        docs, bad_lines = loaded
        for bad in bad_lines:
            row(str(path), -1, "", b"", bad.reason, bad.line or 0, bad.field or "", "", "")
        for pos, doc in enumerate(docs):
            row(str(path), pos, doc.doc_id, pickle.dumps(doc, protocol=5), "", 0, "", doc_fingerprint(doc),
                doc.envelope.source_path or "")
    ints = ("pos", "line")
    return {k: np.array(v, dtype=np.int64 if k in ints else object) for k, v in cols.items()}


def chunk_stage(batch: dict[str, np.ndarray], *, chunker: ChunkerSettings,
                 drop: frozenset[tuple[str, int]]) -> dict[str, np.ndarray]:
    """Chunk stage: document rows -> the same rows with their chunks (pickled); drops error rows
    and the losers of duplicate ``doc_id`` values."""
    docs, chunks = [], []
    for path, pos, blob, error in zip(batch["path"], batch["pos"], batch["doc"], batch["error"], strict=True):
        if error or (str(path), int(pos)) in drop:
            continue
        doc = pickle.loads(blob)
        docs.append(blob)
        chunks.append(pickle.dumps(chunk_documents([doc], chunker), protocol=5))
    return {"doc": np.array(docs, dtype=object), "chunks": np.array(chunks, dtype=object)}


class EmbedStage:
    """Embed stage: a callable class run by an actor pool; each actor loads the embedder once."""

    def __init__(self, name: str | None, identity: tuple[str, str]) -> None:
        """Load embedder ``name`` and check it is the driver's ``identity`` ``(name, version)``."""
        self.model = get_embedder(name)
        found = (self.model.name, self.model.version)
        if found != tuple(identity):
            raise ModelNotAvailable(
                f"this Ray worker loads embedder {found[0]!r} (version {found[1]}), but the driver "
                f"ingests with {identity[0]!r} (version {identity[1]}); install the same model on every "
                "node (and set the same RAGKIT_EMBEDDER)")

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Encode every chunk of the batch's documents at once; vectors go back per document."""
        per_doc = [pickle.loads(b) for b in batch["chunks"]]
        flat = [c for chunks in per_doc for c in chunks]
        out = [v.tobytes() for v in split_per_document(encode_chunks(self.model, flat), per_doc)]
        return {"doc": batch["doc"], "chunks": batch["chunks"], "vectors": np.array(out, dtype=object)}


class WriteStage:
    """Write stage: a callable class holding one Milvus connection; writes whole documents per batch."""

    def __init__(self, config: MilvusConfig, dim: int) -> None:
        """Open the collection of ``config``; vectors arrive as bytes of ``dim`` float32 values."""
        self.index = MilvusIndex.open(config)
        self.dim = dim

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Upsert the batch's documents; one summary row (counts) per batch."""
        docs = [pickle.loads(b) for b in batch["doc"]]
        chunks = [pickle.loads(b) for b in batch["chunks"]]
        vectors = [np.frombuffer(b, dtype=np.float32).reshape(-1, self.dim) for b in batch["vectors"]]
        done = write_batch(self.index, docs, chunks, vectors) if docs else BatchCounts()
        return {"documents": np.array([done.documents]), "chunks": np.array([done.chunks]),
                "sections": np.array([done.sections]), "rows": np.array([done.rows]),
                "skipped": np.array([pickle.dumps(done.skipped, protocol=5)], dtype=object)}
