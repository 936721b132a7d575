"""Ingestion into Milvus: one process, or distributed with Ray Data (read -> chunk -> embed -> write).

:func:`ingest_ray` is what ``ragkit index DIR --backend milvus --ray`` runs. It builds one
Ray Data pipeline over the corpus' file paths:

1. **read**: each file is loaded with :func:`ragkit.documents.loaders.load_file` in a Ray task; a broken
   file becomes a *skipped* row (path and reason) and never drops the others (``load_file`` is
   strict per file, so a JSONL file with one bad line is skipped whole, where
   :func:`~ragkit.documents.loaders.load_corpus` skips only that line). The loaded
   documents are materialised once (a barrier) so duplicate ``doc_id`` values are resolved
   like :func:`~ragkit.documents.loaders.load_corpus` does (the first file in sorted path order wins)
   before anything is written;
2. **chunk**: :func:`ragkit.documents.chunking.chunk_documents` with the settings' chunker, per document;
3. **embed**: ``map_batches`` over an actor pool (``actors`` callable-class actors, each loading
   the embedder once; the default is the bundled ONNX bge-small, nothing is downloaded);
4. **write**: ``map_batches`` over a writer actor that holds one Milvus connection and calls
   :meth:`ragkit.backends.milvus.engine.MilvusIndex.write` per batch. Rows stay one per *document* end to end,
   so a batch always carries whole documents and the by-document upsert (delete the document's
   rows, insert the new ones) makes re-ingesting idempotent. A document Milvus refuses (a chunk
   over its 64 KiB text field) is reported as skipped; the rest of its batch is written.

:func:`ingest_milvus` does the same in one process (load, chunk, embed, write), for
``ragkit index DIR --backend milvus`` without ``--ray`` and as the baseline of
``bench/ingest.py``. Both return an :class:`IngestReport`.

``address=None`` starts (and afterwards stops) a small local Ray, or reuses the one this process
already started with ``ray.init()``. An address (``"ray://head:10001"``, ``"head:6379"`` or
``"auto"``) connects to a running cluster: there, every node needs ragkit and its models
installed, and ``source`` must be readable at the same path on every node (a shared
filesystem), because the read stage runs on the workers; a cluster with token authentication
needs ``RAY_AUTH_MODE=token`` and its token (``RAY_AUTH_TOKEN`` or ``~/.ray/auth_token``).
``ray`` and ``pymilvus`` are imported only when these functions run, so ``import ragkit``
stays light.

Example:
    >>> from ragkit.backends.milvus.engine import MilvusConfig                       # doctest: +SKIP
    >>> cfg = MilvusConfig("http://127.0.0.1:19530", collection="docs")  # doctest: +SKIP
    >>> print(ingest_ray("datasets/opscorpus/docs", cfg))           # doctest: +SKIP
    ingested 2008 documents from 2008 files -> 4875 chunks + ... sections; wrote 4875 rows to 'docs' ...
"""

from __future__ import annotations

import logging
import math
import pickle
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragkit.core.errors import LoadError, RagkitError, ValidationError
from ragkit.documents.loaders import MAX_FILE_MB, SUPPORTED_SUFFIXES, Skipped

if TYPE_CHECKING:
    from ragkit.backends.milvus.engine import MilvusConfig, MilvusIndex
    from ragkit.core.records import Chunk, Document
    from ragkit.documents.chunking import ChunkerSettings
    from ragkit.index.index import IndexSettings

__all__ = ["IngestReport", "ingest_ray", "ingest_milvus", "corpus_files"]

#: Files per block of the read stage (a block is the unit of a Ray task).
FILES_PER_BLOCK = 64


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
        rows_written: chunk rows :meth:`~ragkit.backends.milvus.engine.MilvusIndex.write` reported (sections and
            document texts go beside them, into ``<collection>__docs``).
        skipped: files (or JSONL lines, or duplicate ``doc_id`` values) not written, with reasons.
        seconds: wall time of the whole ingestion, Ray start-up included.
        ray_address: the cluster's address (``None`` for one process; ``"local"`` for a local Ray).
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
                "seconds": round(self.seconds, 3), "ray_address": self.ray_address}

    def __str__(self) -> str:
        where = f" on Ray ({self.ray_address})" if self.mode == "ray" else " in one process"
        lines = [f"ingested {self.documents} documents from {self.files} files -> {self.chunks} chunks + "
                 f"{self.sections} sections; wrote {self.rows_written} rows to '{self.collection}'"
                 f"{where} in {self.seconds:.1f}s; skipped {len(self.skipped)}"]
        lines += [f"  skipped {s}" for s in self.skipped]
        return "\n".join(lines)


# ------------------------------------------------------------------ shared steps


def corpus_files(source: str | Path) -> tuple[Path, list[Path], list[Skipped]]:
    """The files under ``source`` in the order :func:`~ragkit.documents.loaders.load_corpus` reads them.

    Returns:
        ``(root, files, problems)``: ``root`` is the folder document ids are relative to,
        ``files`` every non-hidden file (sorted; supported or not: the read stage reports
        unsupported ones), ``problems`` links that cannot be followed.

    Raises:
        LoadError: ``source`` does not exist.
    """
    from ragkit.documents.loaders import _walk

    path = Path(source)
    if not path.exists():
        raise LoadError(str(path), f"no such file or folder; check the path (relative paths start from "
                        f"{Path.cwd()})")
    problems: list[Skipped] = []
    if path.is_file():
        return path.parent, [path], problems
    return path, sorted(_walk(path, problems)), problems


def _load_path(path: str, root: str, max_file_mb: float) -> list[Document] | Skipped:
    """One file's documents, or why it was skipped (the per-file step of load_corpus)."""
    from ragkit.documents.loaders import load_file

    file = Path(path)
    if file.suffix.lower() not in SUPPORTED_SUFFIXES:
        return Skipped(path, f"unsupported file type '{file.suffix}'; supported: "
                       f"{', '.join(SUPPORTED_SUFFIXES)}")
    try:
        size = file.stat().st_size
        if size > max_file_mb * 1e6:
            return Skipped(path, f"file is {size / 1e6:.1f} MB, over the {max_file_mb:g} MB limit; split "
                           "it, or ingest with a larger max_file_mb")
        return load_file(file, root=root)
    except OSError as exc:
        return Skipped(path, f"cannot read: {exc.strerror or exc} (deleted or moved while loading?)")
    except LoadError as exc:
        text = str(exc)
        prefix = f"{exc.path}:{exc.line}: " if exc.line else f"{exc.path}: "
        return Skipped(exc.path, text[len(prefix):] if text.startswith(prefix) else text, exc.line,
                       exc.field)


def _duplicate(doc_id: str, first: str, path: str) -> Skipped:
    return Skipped(path, f"duplicate doc_id {doc_id!r}, first defined in {first}; give one of them another "
                   "doc_id", field="doc_id")


def _open_or_create(config: MilvusConfig, settings: IndexSettings, embedder: Any,
                    drop_existing: bool) -> MilvusIndex:
    """The collection to write: created (or re-created with ``drop_existing``), else reopened.

    Raises:
        IndexStateError: the existing collection was built with other settings or another
            embedder width (its rows would not be comparable); ingest with ``drop_existing``.
    """
    from ragkit.backends.milvus.engine import MilvusIndex
    from ragkit.core.errors import IndexStateError

    try:
        return MilvusIndex.create(config, settings=settings, embedder=embedder, dim=int(embedder.dim),
                                  drop_existing=drop_existing)
    except Exception as exc:
        if type(exc).__name__ != "MilvusException":  # pymilvus' error (connection, auth, server)
            raise
        raise IndexStateError(f"Milvus at {config.uri} refused or failed ({exc}); check the URI and token "
                              "(--milvus-uri / RAGKIT_MILVUS_URI, --milvus-token / RAGKIT_MILVUS_TOKEN) and "
                              "that the server is running") from None


def _encode(embedder: Any, chunks: Sequence[Chunk]) -> np.ndarray:
    """Vectors of the ``chunk`` rows, in order (exactly what :meth:`Index._encode` computes)."""
    texts = [c.contextual_text() for c in chunks if c.kind == "chunk"]
    if not texts:
        return np.zeros((0, int(embedder.dim)), dtype=np.float32)
    return np.asarray(embedder.encode(texts), dtype=np.float32)


@dataclass
class _Written:
    """Counts of one write batch, and the documents Milvus refused."""

    documents: int = 0
    chunks: int = 0
    sections: int = 0
    rows: int = 0
    skipped: list[Skipped] = field(default_factory=list)

    def add_to(self, report: IngestReport) -> None:
        report.documents += self.documents
        report.chunks += self.chunks
        report.sections += self.sections
        report.rows_written += self.rows
        report.skipped += self.skipped


def _write_batch(index: MilvusIndex, docs: Sequence[Document], chunks: Sequence[Sequence[Chunk]],
                 vectors: Sequence[np.ndarray]) -> _Written:
    """Write whole documents (``chunks[i]`` and ``vectors[i]`` belong to ``docs[i]``) in one call.

    When Milvus refuses the batch (:class:`~ragkit.core.errors.ValidationError`, e.g. a chunk over
    its 64 KiB text limit), the documents are written one by one and each refused one is
    reported as skipped, so one bad document never drops the others.
    """
    out = _Written()

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


def _say(enabled: bool, message: str) -> None:
    if enabled:
        print(message, file=sys.stderr, flush=True)


def _bar(total: int, desc: str, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="doc", file=sys.stderr)


# ------------------------------------------------------------------ one process


def ingest_milvus(source: str | Path, config: MilvusConfig, *, settings: IndexSettings | None = None,
                  batch_size: int = 64, drop_existing: bool = False, progress: bool = True,
                  strict: bool = False) -> IngestReport:
    """Load, chunk, embed and write ``source`` into Milvus in this process (no Ray).

    Documents are written ``batch_size`` at a time through
    :meth:`~ragkit.backends.milvus.engine.MilvusIndex.write` (an upsert by document), so running it again
    rewrites the same rows instead of adding copies.

    Args:
        source: corpus folder (or one file).
        config: where to write (:class:`~ragkit.backends.milvus.engine.MilvusConfig`).
        settings: chunker and embedder (default :class:`~ragkit.index.index.IndexSettings`).
        batch_size: documents per write.
        drop_existing: drop and re-create the collection first.
        progress: progress bars on stderr.
        strict: stop at the first broken file (:class:`~ragkit.core.errors.LoadError`).

    Returns:
        An :class:`IngestReport` (``mode="single"``).
    """
    from ragkit.documents.chunking import chunk_documents
    from ragkit.documents.loaders import load_corpus
    from ragkit.index.index import IndexSettings
    from ragkit.models.bundled import get_embedder

    _check_batch(batch_size, "batch_size")
    t0 = time.perf_counter()
    settings = settings or IndexSettings()
    docs, load_report = load_corpus(source, strict=strict, progress=progress)
    report = IngestReport(str(source), config.collection, mode="single", files=load_report.files_seen,
                          skipped=list(load_report.skipped))
    embedder = get_embedder(settings.embedder)
    index = _open_or_create(config, settings, embedder, drop_existing)
    bar = _bar(len(docs), "ingesting", progress)
    for start in range(0, len(docs), batch_size):
        part = docs[start:start + batch_size]
        chunks = [chunk_documents([d], settings.chunker) for d in part]
        vectors = _encode(embedder, [c for cs in chunks for c in cs])
        _write_batch(index, part, chunks, _split(vectors, chunks)).add_to(report)
        if bar is not None:
            bar.update(len(part))
    if bar is not None:
        bar.close()
    index.flush()
    report.seconds = time.perf_counter() - t0
    return report


def _split(vectors: np.ndarray, chunks: Sequence[Sequence[Chunk]]) -> list[np.ndarray]:
    """``vectors`` (one row per ``chunk`` of all documents) cut into one array per document."""
    out, at = [], 0
    for cs in chunks:
        n = sum(c.kind == "chunk" for c in cs)
        out.append(vectors[at:at + n])
        at += n
    return out


def _check_batch(value: int, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name}={value!r}: must be a whole number >= 1", field=name)


# ------------------------------------------------------------------ Ray Data stages
# Module-level functions and classes: Ray pickles them by reference, so workers import ragkit.


def _read_stage(batch: dict[str, np.ndarray], *, root: str, max_file_mb: float) -> dict[str, np.ndarray]:
    """Read stage: file paths -> one row per document (pickled), or one ``error`` row per broken file."""
    cols: dict[str, list[Any]] = {k: [] for k in ("path", "pos", "doc_id", "doc", "error", "line", "field")}

    def row(path: str, pos: int, doc_id: str, doc: bytes, error: str, line: int, fld: str) -> None:
        for key, value in zip(cols, (path, pos, doc_id, doc, error, line, fld), strict=True):
            cols[key].append(value)

    for path in batch["path"]:
        loaded = _load_path(str(path), root, max_file_mb)
        if isinstance(loaded, Skipped):
            row(str(path), -1, "", b"", loaded.reason, loaded.line or 0, loaded.field or "")
            continue
        for pos, doc in enumerate(loaded):
            row(str(path), pos, doc.doc_id, pickle.dumps(doc, protocol=5), "", 0, "")
    return {"path": np.array(cols["path"], dtype=object), "pos": np.array(cols["pos"], dtype=np.int64),
            "doc_id": np.array(cols["doc_id"], dtype=object), "doc": np.array(cols["doc"], dtype=object),
            "error": np.array(cols["error"], dtype=object), "line": np.array(cols["line"], dtype=np.int64),
            "field": np.array(cols["field"], dtype=object)}


def _chunk_stage(batch: dict[str, np.ndarray], *, chunker: ChunkerSettings,
                 drop: frozenset[tuple[str, int]]) -> dict[str, np.ndarray]:
    """Chunk stage: document rows -> the same rows with their chunks (pickled); drops error rows
    and the losers of duplicate ``doc_id`` values."""
    from ragkit.documents.chunking import chunk_documents

    docs, chunks = [], []
    for path, pos, blob, error in zip(batch["path"], batch["pos"], batch["doc"], batch["error"], strict=True):
        if error or (str(path), int(pos)) in drop:
            continue
        doc = pickle.loads(blob)
        docs.append(blob)
        chunks.append(pickle.dumps(chunk_documents([doc], chunker), protocol=5))
    return {"doc": np.array(docs, dtype=object), "chunks": np.array(chunks, dtype=object)}


class _EmbedStage:
    """Embed stage: a callable class run by an actor pool; each actor loads the embedder once."""

    def __init__(self, name: str | None, identity: tuple[str, str]) -> None:
        from ragkit.core.errors import ModelNotAvailable
        from ragkit.models.bundled import get_embedder

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
        out = [v.tobytes() for v in _split(_encode(self.model, flat), per_doc)]
        return {"doc": batch["doc"], "chunks": batch["chunks"], "vectors": np.array(out, dtype=object)}


class _WriteStage:
    """Write stage: a callable class holding one Milvus connection; writes whole documents per batch."""

    def __init__(self, config: MilvusConfig, dim: int) -> None:
        from ragkit.backends.milvus.engine import MilvusIndex

        self.index = MilvusIndex.open(config)
        self.dim = dim

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Upsert the batch's documents; one summary row (counts) per batch."""
        docs = [pickle.loads(b) for b in batch["doc"]]
        chunks = [pickle.loads(b) for b in batch["chunks"]]
        vectors = [np.frombuffer(b, dtype=np.float32).reshape(-1, self.dim) for b in batch["vectors"]]
        done = _write_batch(self.index, docs, chunks, vectors) if docs else _Written()
        return {"documents": np.array([done.documents]), "chunks": np.array([done.chunks]),
                "sections": np.array([done.sections]), "rows": np.array([done.rows]),
                "skipped": np.array([pickle.dumps(done.skipped, protocol=5)], dtype=object)}


# ------------------------------------------------------------------ Ray driver


def _start_ray(address: str | None, actors: int) -> tuple[bool, str]:
    """Connect to Ray; returns ``(started_here, address_label)``. Quiet: no dashboard, no worker logs."""
    import ray

    if ray.is_initialized():  # started or connected by this process: use it, leave it running
        return False, address or "local (already running)"
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "logging_level": logging.WARNING}
    if address is None:
        # logical CPUs: one per embed actor, one for the read, chunk and write stages
        ray.init(num_cpus=actors + 1, **kwargs)
        return True, "local"
    try:
        ray.init(address=address, **kwargs)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ValidationError(f"cannot connect to the Ray cluster at {address!r} ({exc}); check the address "
                              "('ray://HEAD:10001' for Ray Client, 'HEAD:6379' or 'auto' on a node of the "
                              "cluster) and, when the cluster uses token authentication, export "
                              "RAY_AUTH_MODE=token with its token in RAY_AUTH_TOKEN or ~/.ray/auth_token",
                              field="address") from None
    return True, address


def _quiet_ray_data() -> None:
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False  # ragkit prints one bar of its own (documents written)
    for attr in ("enable_operator_progress_bars", "print_on_execution_start"):
        if hasattr(ctx, attr):
            setattr(ctx, attr, False)
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)  # "progress bars disabled"
    logging.getLogger("ray").setLevel(logging.WARNING)


def ingest_ray(source: str | Path, config: MilvusConfig, *, settings: IndexSettings | None = None,
               address: str | None = None, batch_size: int = 64, actors: int = 1,
               drop_existing: bool = False, progress: bool = True) -> IngestReport:
    """Ingest ``source`` into Milvus with a Ray Data pipeline: read -> chunk -> embed -> write.

    Args:
        source: corpus folder (or one file); on a cluster, a path every node can read.
        config: the Milvus to write (:class:`~ragkit.backends.milvus.engine.MilvusConfig`); every worker
            connects to it, so on a cluster use a server URI, not a local file.
        settings: chunker and embedder (default :class:`~ragkit.index.index.IndexSettings`), recorded
            in the collection when it is created.
        address: a Ray cluster's address; ``None`` starts a local Ray (or reuses the one this
            process started) with ``actors + 1`` logical CPUs.
        batch_size: documents per embed and write batch.
        actors: embedder actors (each holds one model and reserves one CPU).
        drop_existing: drop and re-create the collection first; otherwise documents are upserted
            into it (re-ingesting the same corpus rewrites the same rows, never duplicates).
        progress: a progress bar of documents written, on stderr.

    Returns:
        An :class:`IngestReport`: documents, chunks, sections, rows written, skipped files with
        their reasons, and seconds (Ray start-up included).

    Raises:
        LoadError: ``source`` does not exist.
        ValidationError: a bad ``batch_size``/``actors``, or an unreachable Ray address.
        IndexStateError: the collection exists with other chunker settings or another embedder.
    """
    from ragkit.index.index import IndexSettings
    from ragkit.models.bundled import get_embedder

    _check_batch(batch_size, "batch_size")
    _check_batch(actors, "actors")
    if "://" not in config.uri and not config.uri.startswith("unix:"):
        raise ValidationError(f"Milvus URI {config.uri!r} is a local file (embedded Milvus), which one "
                              "process opens at a time; Ray workers write concurrently, so give a server "
                              "URI such as http://127.0.0.1:19530 (or ingest without Ray: ingest_milvus)",
                              field="uri")
    t0 = time.perf_counter()
    settings = settings or IndexSettings()
    root, files, problems = corpus_files(source)
    report = IngestReport(str(source), config.collection, mode="ray", files=len(files) + len(problems),
                          skipped=list(problems))
    embedder = get_embedder(settings.embedder)  # the driver's copy: identity, dim, collection schema
    _open_or_create(config, settings, embedder, drop_existing)
    if not files:
        report.seconds = time.perf_counter() - t0
        return report
    try:
        import ray
        import ray.data
    except ImportError:  # pragma: no cover - ray is in the 'scale' extra
        raise ValidationError("Ray is not installed: run `pip install 'ragkit[scale]'` (or `pip install "
                              "'ray[data]'`)", field="ray") from None
    _say(progress, f"ray: {'starting a local Ray' if address is None else f'connecting to {address}'} "
         f"for {len(files)} files of {root} -> Milvus collection '{config.collection}'")
    started, report.ray_address = _start_ray(address, actors)
    try:
        _quiet_ray_data()
        _run_pipeline(ray, root, files, config, settings, embedder, report, batch_size, actors, progress)
    except Exception as exc:
        cause = _ragkit_cause(exc)  # a worker's RagkitError arrives wrapped in Ray's errors
        if cause is None:
            raise
        raise cause from None
    finally:
        if started:
            ray.shutdown()
    report.seconds = time.perf_counter() - t0
    return report


def _run_pipeline(ray: Any, root: Path, files: list[Path], config: MilvusConfig, settings: IndexSettings,
                  embedder: Any, report: IngestReport, batch_size: int, actors: int,
                  progress: bool) -> None:
    blocks = max(1, math.ceil(len(files) / FILES_PER_BLOCK))
    paths = ray.data.from_items([{"path": str(f)} for f in files], override_num_blocks=blocks)
    loaded = paths.map_batches(_read_stage, fn_kwargs={"root": str(root), "max_file_mb": MAX_FILE_MB},
                               batch_size=FILES_PER_BLOCK, num_cpus=0.5).materialize()
    # barrier: resolve duplicate doc ids (first file in sorted order wins) and collect skipped files
    first: dict[str, tuple[str, int]] = {}
    drop: set[tuple[str, int]] = set()
    rows = []
    for batch in loaded.select_columns(["path", "pos", "doc_id", "error", "line", "field"]).iter_batches(
            batch_format="numpy", batch_size=4096):
        rows += list(zip(*(batch[k] for k in ("path", "pos", "doc_id", "error", "line", "field")),
                         strict=True))
    for path, pos, doc_id, error, line, fld in sorted(rows, key=lambda r: (str(r[0]), int(r[1]))):
        if error:
            report.skipped.append(Skipped(str(path), str(error), int(line) or None, str(fld) or None))
        elif doc_id in first:
            drop.add((str(path), int(pos)))
            report.skipped.append(_duplicate(str(doc_id), first[doc_id][0], str(path)))
        else:
            first[str(doc_id)] = (str(path), int(pos))
    total = len(first)
    if not total:
        return
    chunked = loaded.map_batches(_chunk_stage, batch_size=batch_size, num_cpus=0.5,
                                 fn_kwargs={"chunker": settings.chunker, "drop": frozenset(drop)})
    embedded = chunked.map_batches(_EmbedStage, fn_constructor_kwargs={
        "name": embedder.name, "identity": (embedder.name, embedder.version)},
        batch_size=batch_size, compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=1)
    written = embedded.map_batches(_WriteStage, fn_constructor_kwargs={"config": config,
                                                                       "dim": int(embedder.dim)},
                                   batch_size=batch_size, compute=ray.data.ActorPoolStrategy(size=1),
                                   num_cpus=0.25)
    _say(progress, f"ray: read {len(files)} files -> {total} documents ({len(report.skipped)} skipped so "
         f"far); chunking, embedding with {actors} actor{'s' if actors > 1 else ''}, writing")
    bar = _bar(total, "ingesting (ray)", progress)
    for done in _iter_summaries(written):
        done.add_to(report)
        if bar is not None:
            bar.update(done.documents + len(done.skipped))
    if bar is not None:
        bar.close()
    _flush(config)


def _flush(config: MilvusConfig, attempts: int = 4) -> None:
    """Seal the written rows (as ``MilvusIndex.flush``) over a new connection, retried on failure.

    Not through the driver's cached pymilvus connection: it sat idle through the pipeline, and
    pymilvus' channels ping every 10 s even without calls, which the Milvus server answers after
    a few pings with GOAWAY "Too many pings"; reconnecting it can then fail against a live
    server. This connection pings only during calls, on a gRPC subchannel of its own.
    """
    from pymilvus import MilvusClient

    for attempt in range(attempts):
        try:
            client = MilvusClient(uri=config.uri, token=config.token, timeout=60, dedicated=True,
                                  grpc_options={"grpc.keepalive_permit_without_calls": 0})
            try:
                for name in (config.collection, config.docs_collection):
                    client.flush(name)
            finally:
                client.close()
            return
        except Exception as exc:
            if type(exc).__name__ != "MilvusException" or attempt == attempts - 1:
                raise
            time.sleep(2.0 * 2**attempt)


def _ragkit_cause(exc: BaseException) -> RagkitError | None:
    """The first :class:`~ragkit.core.errors.RagkitError` in ``exc``'s chain (Ray wraps workers' errors)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        cur = todo.pop()
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, RagkitError) and type(cur).__module__.startswith("ragkit."):
            return cur  # the worker's own error, not Ray's wrapper class that also derives from it
        todo += [getattr(cur, "cause", None), cur.__cause__, cur.__context__]
    return None


def _iter_summaries(written: Any) -> Iterator[_Written]:
    for batch in written.iter_batches(batch_format="numpy", batch_size=None):
        for i in range(len(batch["documents"])):
            yield _Written(int(batch["documents"][i]), int(batch["chunks"][i]), int(batch["sections"][i]),
                           int(batch["rows"][i]), pickle.loads(batch["skipped"][i]))

