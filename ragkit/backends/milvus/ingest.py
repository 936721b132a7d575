"""Ingestion into Milvus in one process (:func:`ingest_milvus`), and the steps both ingestions share.

:func:`ingest_milvus` loads, chunks, embeds and writes a corpus folder in this process, for
``ragkit index DIR --backend milvus`` without ``--ray`` and as the baseline of
``bench/ingest.py``; :func:`~ragkit.backends.milvus.ray_ingest.ingest_ray` runs the same
steps as a Ray Data pipeline. Both return an :class:`IngestReport`.

The shared steps: :func:`open_or_create` the collection, :func:`encode_chunks` a batch,
:func:`split_per_document` its vectors and :func:`write_batch` whole documents through
:meth:`MilvusIndex.write <ragkit.backends.milvus.index.MilvusIndex.write>` (an upsert by
document, so re-ingesting rewrites the same rows instead of adding copies). ``pymilvus`` is
imported only when a collection is opened, so ``import ragkit`` stays light.

Example:
    >>> from ragkit.backends.milvus import MilvusConfig                   # doctest: +SKIP
    >>> cfg = MilvusConfig("./ragkit.db", collection="docs")             # doctest: +SKIP
    >>> print(ingest_milvus("datasets/opscorpus/docs", cfg))        # doctest: +SKIP
    ingested 2008 documents from 2008 files -> 4875 chunks + ... sections; wrote 4875 rows to 'docs' ...
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.index import MilvusIndex
from ragkit.core.errors import IndexStateError, ValidationError
from ragkit.core.records import Chunk, Document
from ragkit.documents.chunking import chunk_documents
from ragkit.documents.loaders import Skipped, load_corpus
from ragkit.index.reconcile import SyncPlan, plan_sync, unreadable_ids
from ragkit.index.settings import IndexSettings, SyncReport
from ragkit.models.bundled import get_embedder

__all__ = ["IngestReport", "ingest_milvus", "BatchCounts", "open_or_create", "encode_chunks",
           "split_per_document", "write_batch", "apply_plan", "finish", "check_count", "say", "progress_bar"]


@dataclass
class IngestReport:
    """What an ingestion wrote, and what it skipped.

    Attributes:
        source: the corpus folder (or file).
        collection: the Milvus collection written.
        mode: ``"ray"`` (:func:`ingest_ray`) or ``"single"`` (:func:`ingest_milvus`).
        files: files seen (supported or not).
        documents: documents written.
        chunks: retrievable chunks written (one embedding each).
        sections: parent sections written (no embedding).
        rows_written: chunk rows :meth:`~ragkit.backends.milvus.index.MilvusIndex.write` reported
            (sections and document texts go beside them, into ``<collection>__docs``).
        skipped: files (or JSONL lines, or duplicate ``doc_id`` values) not written, with reasons.
        seconds: wall time of the whole ingestion, Ray start-up included.
        ray_address: the cluster's address (``None`` for one process; ``"local"`` for a local Ray).
        changes: the reconciliation with what the collection held
            (:func:`~ragkit.index.reconcile.diff_states`):
            added, updated, deleted (left the folder), unchanged (not written again) documents.
        kept: documents of files that failed to load, kept as indexed (never deleted by a broken file).
        generation: the generation this ingestion committed.
    """

    source: str
    collection: str
    mode: str = "ray"
    files: int = 0
    documents: int = 0
    chunks: int = 0
    sections: int = 0
    rows_written: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    ray_address: str | None = None
    changes: SyncReport = field(default_factory=SyncReport)
    kept: list[str] = field(default_factory=list)
    generation: int = 0

    @property
    def ok(self) -> bool:
        """True when nothing was skipped."""
        return not self.skipped

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (skipped files as ``{"path", "reason", "line", "field"}``)."""
        return {"source": self.source, "collection": self.collection, "mode": self.mode,
                "files": self.files, "documents": self.documents, "chunks": self.chunks,
                "sections": self.sections, "rows_written": self.rows_written,
                "skipped": [{"path": s.path, "reason": s.reason, "line": s.line, "field": s.field}
                            for s in self.skipped],
                "seconds": round(self.seconds, 3), "ray_address": self.ray_address,
                "added": self.changes.added, "updated": self.changes.updated, "deleted": self.changes.deleted,
                "unchanged": self.changes.unchanged, "kept": self.kept, "generation": self.generation}

    def __str__(self) -> str:
        where = f" on Ray ({self.ray_address})" if self.mode == "ray" else " in one process"
        lines = [f"ingested {self.documents} documents from {self.files} files -> {self.chunks} chunks + "
                 f"{self.sections} sections; wrote {self.rows_written} rows to '{self.collection}'"
                 f"{where} in {self.seconds:.1f}s; skipped {len(self.skipped)}",
                 f"  reconciled: added {len(self.changes.added)}, updated {len(self.changes.updated)}, "
                 f"deleted {len(self.changes.deleted)}, unchanged {self.changes.unchanged} "
                 f"(generation {self.generation})"]
        if self.kept:
            lines.append(f"  kept as indexed (source failed to load): {', '.join(self.kept[:20])}")
        lines += [f"  skipped {s}" for s in self.skipped]
        return "\n".join(lines)


def open_or_create(config: MilvusConfig, settings: IndexSettings, embedder: Any,
                   drop_existing: bool) -> MilvusIndex:
    """The collection to write: created (or re-created with ``drop_existing``), else reopened.

    Raises:
        IndexStateError: the existing collection was built with other settings or another
            embedder width (its rows would not be comparable); ingest with ``drop_existing``.
    """
    try:
        return MilvusIndex.create(config, settings=settings, embedder=embedder, dim=int(embedder.dim),
                                  drop_existing=drop_existing)
    except Exception as exc:
        if type(exc).__name__ != "MilvusException":  # pymilvus' error (connection, auth, server)
            raise
        raise IndexStateError(f"Milvus at {config.uri} refused or failed ({exc}); check the URI and token "
                              "(--milvus-uri / RAGKIT_MILVUS_URI, --milvus-token / RAGKIT_MILVUS_TOKEN) and "
                              "that the server is running") from None


def encode_chunks(embedder: Any, chunks: Sequence[Chunk]) -> np.ndarray:
    """Vectors of the ``chunk`` rows, in order (exactly what the in-memory index's build computes)."""
    texts = [c.contextual_text() for c in chunks if c.kind == "chunk"]
    if not texts:
        return np.zeros((0, int(embedder.dim)), dtype=np.float32)
    return np.asarray(embedder.encode(texts), dtype=np.float32)


@dataclass
class BatchCounts:
    """Counts of one write batch, and the documents Milvus refused (added to a report by :meth:`add_to`)."""

    documents: int = 0
    chunks: int = 0
    sections: int = 0
    rows: int = 0
    skipped: list[Skipped] = field(default_factory=list)

    def add_to(self, report: IngestReport) -> None:
        """Add these counts and skips to ``report``."""
        report.documents += self.documents
        report.chunks += self.chunks
        report.sections += self.sections
        report.rows_written += self.rows
        report.skipped += self.skipped


def write_batch(index: MilvusIndex, docs: Sequence[Document], chunks: Sequence[Sequence[Chunk]],
                 vectors: Sequence[np.ndarray]) -> BatchCounts:
    """Write whole documents (``chunks[i]`` and ``vectors[i]`` belong to ``docs[i]``) in one call.

    When Milvus refuses the batch (:class:`~ragkit.core.errors.ValidationError`, e.g. a chunk over
    its 64 KiB text limit), the documents are written one by one and each refused one is
    reported as skipped, so one bad document never drops the others.
    """
    out = BatchCounts()

    def write(part: range) -> None:
        flat = [c for i in part for c in chunks[i]]
        rows = [vectors[i] for i in part]
        out.rows += int(index.write([docs[i] for i in part], flat, np.vstack(rows)))
        out.documents += len(part)
        out.chunks += sum(len(v) for v in rows)
        out.sections += sum(c.kind == "section" for c in flat)

    try:
        write(range(len(docs)))
    except ValidationError:
        for i in range(len(docs)):
            try:
                write(range(i, i + 1))
            except ValidationError as exc:
                d = docs[i]
                out.skipped.append(Skipped(d.envelope.source_path or d.doc_id,
                                           f"doc_id {d.doc_id!r} not written to Milvus: {exc}",
                                           field=exc.field))
    return out


def apply_plan(index: MilvusIndex, plan: SyncPlan, embedder: Any, *, batch_size: int = 64,
               progress: bool = False) -> BatchCounts:
    """Apply a reconciliation plan (:func:`~ragkit.index.reconcile.plan_sync`) to a Milvus index and
    commit it: the changed documents are chunked, embedded and written ``batch_size`` at a time
    (:func:`write_batch`: a document Milvus refuses is skipped and keeps what it had), the deleted
    ones removed, moved sources recorded, everything flushed and one generation committed.

    Sets ``plan.report.encoded_rows``; returns the write counts.
    """
    counts = BatchCounts()
    bar = progress_bar(len(plan.changed), "writing", progress and bool(plan.changed))
    for start in range(0, len(plan.changed), batch_size):
        part = plan.changed[start:start + batch_size]
        chunks = [chunk_documents([d], index.settings.chunker) for d in part]
        vectors = encode_chunks(embedder, [c for cs in chunks for c in cs])
        done = write_batch(index, part, chunks, split_per_document(vectors, chunks))
        for name in ("documents", "chunks", "sections", "rows"):
            setattr(counts, name, getattr(counts, name) + getattr(done, name))
        counts.skipped += done.skipped
        if bar is not None:
            bar.update(len(part))
    if bar is not None:
        bar.close()
    finish(index, plan.report.deleted, plan.relocated)
    plan.report.encoded_rows = counts.chunks
    return counts


def finish(index: MilvusIndex, deleted: Sequence[str], relocated: Mapping[str, str | None]) -> int:
    """The end of every reconciliation on Milvus: delete what left the folder, record moved sources,
    flush and commit one generation (returned)."""
    if deleted:
        index.delete(list(deleted))
    if relocated:
        index.catalog.relocate(relocated)
    index.flush()
    return index.commit()


def say(enabled: bool, message: str) -> None:
    """Print ``message`` on stderr when ``enabled`` (the ingestion's progress lines)."""
    if enabled:
        print(message, file=sys.stderr, flush=True)


def progress_bar(total: int, desc: str, enabled: bool) -> Any:
    """A tqdm bar of documents on stderr, or ``None`` when not ``enabled``."""
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="doc", file=sys.stderr)



def ingest_milvus(source: str | Path, config: MilvusConfig, *, settings: IndexSettings | None = None,
                  batch_size: int = 64, drop_existing: bool = False, progress: bool = True,
                  strict: bool = False) -> IngestReport:
    """Load, chunk, embed and write ``source`` into Milvus in this process (no Ray), reconciled.

    What the collection already holds is compared by content hash (:func:`~ragkit.index.reconcile.plan_sync`,
    the rule every sync uses): only new and changed documents are embedded and written (``batch_size``
    at a time, an upsert by document), documents that left the folder are deleted, and documents of
    files that fail to load are kept as indexed.

    Args:
        source: corpus folder (or one file).
        config: where to write (:class:`~ragkit.backends.milvus.config.MilvusConfig`).
        settings: chunker and embedder (default :class:`~ragkit.index.settings.IndexSettings`).
        batch_size: documents per write.
        drop_existing: drop and re-create the collection first.
        progress: progress bars on stderr.
        strict: stop at the first broken file (:class:`~ragkit.core.errors.LoadError`).

    Returns:
        An :class:`IngestReport` (``mode="single"``).
    """
    check_count(batch_size, "batch_size")
    t0 = time.perf_counter()
    settings = settings or IndexSettings()
    docs, load_report = load_corpus(source, strict=strict, progress=progress)
    report = IngestReport(str(source), config.collection, mode="single", files=load_report.files_seen,
                          skipped=list(load_report.skipped))
    embedder = get_embedder(settings.embedder)
    index = open_or_create(config, settings, embedder, drop_existing)
    stored = index.doc_states()
    incoming = {d.doc_id for d in docs}
    report.kept = [d for d in unreadable_ids(stored, load_report.skipped) if d not in incoming]
    plan = plan_sync(docs, stored, keep=report.kept)
    apply_plan(index, plan, embedder, batch_size=batch_size, progress=progress).add_to(report)
    report.changes = plan.report
    report.generation = index.generation
    report.seconds = time.perf_counter() - t0
    return report


def split_per_document(vectors: np.ndarray, chunks: Sequence[Sequence[Chunk]]) -> list[np.ndarray]:
    """``vectors`` (one row per ``chunk`` of all documents) cut into one array per document."""
    out, at = [], 0
    for cs in chunks:
        n = sum(c.kind == "chunk" for c in cs)
        out.append(vectors[at:at + n])
        at += n
    return out


def check_count(value: int, name: str) -> None:
    """Raise :class:`~ragkit.core.errors.ValidationError` unless ``value`` is a whole number >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name}={value!r}: must be a whole number >= 1", field=name)
