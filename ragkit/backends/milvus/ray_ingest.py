"""Ingestion into Milvus distributed with Ray Data (read -> chunk -> embed -> write).

:func:`ingest_ray` is what ``ragkit index DIR --backend milvus --ray`` runs. It builds one
Ray Data pipeline over the corpus' file paths:

1. **read**: each file is loaded with :func:`ragkit.documents.loaders.load_file` in a Ray task; a broken
   file becomes a *skipped* row (path and reason) and never drops the others, and a JSONL file
   keeps its good lines, each bad one a skipped row with its file and line (as
   :func:`~ragkit.documents.loaders.load_corpus`). Each document's content hash is computed there.
   The loaded documents are materialised once (a barrier) so duplicate ``doc_id`` values are
   resolved like :func:`~ragkit.documents.loaders.load_corpus` does (the first file in sorted path
   order wins) and the folder is **reconciled** with the collection by
   :func:`~ragkit.index.reconcile.diff_states` (the rule every sync uses): unchanged documents are
   not embedded again, documents that left the folder are deleted at the end, documents of
   files that failed to load are kept;
2. **chunk**: :func:`ragkit.documents.chunking.chunk_documents` with the settings' chunker, per document;
3. **embed**: ``map_batches`` over an actor pool (``actors`` callable-class actors, each loading
   the embedder once; the default is the bundled ONNX bge-small, nothing is downloaded);
4. **write**: ``map_batches`` over a writer actor that holds one Milvus connection and calls
   :meth:`ragkit.backends.milvus.index.MilvusIndex.write` per batch. Rows stay one per *document* end to end,
   so a batch always carries whole documents and the by-document upsert (delete the document's
   rows, insert the new ones) makes re-ingesting idempotent. A document Milvus refuses (a chunk
   over its 64 KiB text field) is reported as skipped; the rest of its batch is written.

:func:`~ragkit.backends.milvus.ingest.ingest_milvus` does the same in one process (load, chunk,
embed, write), for ``ragkit index DIR --backend milvus`` without ``--ray`` and as the baseline
of ``bench/ingest.py``. Both return an :class:`~ragkit.backends.milvus.ingest.IngestReport`.

``address=None`` starts (and afterwards stops) a small local Ray, or reuses the one this process
already started with ``ray.init()``. An address (``"ray://head:10001"``, ``"head:6379"`` or
``"auto"``) connects to a running cluster: there, every node needs ragkit and its models
installed, and ``source`` must be readable at the same path on every node (a shared
filesystem), because the read stage runs on the workers; a cluster with token authentication
needs ``RAY_AUTH_MODE=token`` and its token (``RAY_AUTH_TOKEN`` or ``~/.ray/auth_token``).
``ray`` and ``pymilvus`` are imported only when these functions run, so ``import ragkit``
stays light.

Example:
    >>> from ragkit.backends.milvus import MilvusConfig                   # doctest: +SKIP
    >>> cfg = MilvusConfig("http://127.0.0.1:19530", collection="docs")  # doctest: +SKIP
    >>> print(ingest_ray("datasets/opscorpus/docs", cfg))           # doctest: +SKIP
    ingested 2008 documents from 2008 files -> 4875 chunks + ... sections; wrote 4875 rows to 'docs' ...
"""


from __future__ import annotations

import logging
import math
import pickle
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.index import MilvusIndex
from ragkit.backends.milvus.ingest import (
    BatchCounts,
    IngestReport,
    check_count,
    finish,
    open_or_create,
    progress_bar,
    say,
)
from ragkit.backends.milvus.ray_stages import EmbedStage, WriteStage, chunk_stage, read_stage
from ragkit.backends.milvus.reading import corpus_files, duplicate_skip
from ragkit.core.errors import RagkitError, ValidationError
from ragkit.documents.loaders import MAX_FILE_MB, Skipped
from ragkit.index.reconcile import Incoming, diff_states, unreadable_ids
from ragkit.index.settings import IndexSettings
from ragkit.models.bundled import get_embedder

__all__ = ["ingest_ray", "FILES_PER_BLOCK"]

#: Files per block of the read stage (a block is the unit of a Ray task).
FILES_PER_BLOCK = 64


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
        config: the Milvus to write (:class:`~ragkit.backends.milvus.config.MilvusConfig`); every worker
            connects to it, so on a cluster use a server URI, not a local file.
        settings: chunker and embedder (default :class:`~ragkit.index.settings.IndexSettings`), recorded
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
    check_count(batch_size, "batch_size")
    check_count(actors, "actors")
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
    index = open_or_create(config, settings, embedder, drop_existing)
    if not files:
        stored = index.doc_states()
        report.changes = diff_states([], stored, keep=unreadable_ids(stored, report.skipped))
        report.generation = finish(index, report.changes.deleted, {})
        report.seconds = time.perf_counter() - t0
        return report
    try:
        import ray
        import ray.data
    except ImportError:  # pragma: no cover - ray is in the 'scale' extra
        raise ValidationError("Ray is not installed: run `pip install 'ragkit[scale]'` (or `pip install "
                              "'ray[data]'`)", field="ray") from None
    say(progress, f"ray: {'starting a local Ray' if address is None else f'connecting to {address}'} "
         f"for {len(files)} files of {root} -> Milvus collection '{config.collection}'")
    started, report.ray_address = _start_ray(address, actors)
    try:
        _quiet_ray_data()
        _run_pipeline(ray, root, files, index, settings, embedder, report, batch_size, actors, progress)
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


def _run_pipeline(ray: Any, root: Path, files: list[Path], index: MilvusIndex, settings: IndexSettings,
                  embedder: Any, report: IngestReport, batch_size: int, actors: int,
                  progress: bool) -> None:
    config = index.config
    blocks = max(1, math.ceil(len(files) / FILES_PER_BLOCK))
    paths = ray.data.from_items([{"path": str(f)} for f in files], override_num_blocks=blocks)
    loaded = paths.map_batches(read_stage, fn_kwargs={"root": str(root), "max_file_mb": MAX_FILE_MB},
                               batch_size=FILES_PER_BLOCK, num_cpus=0.5).materialize()
    # barrier: resolve duplicate doc ids (first file in sorted order wins), collect skipped files and
    # lines, and reconcile with what the collection holds (the rule every sync uses)
    first: dict[str, tuple[str, int]] = {}
    drop: set[tuple[str, int]] = set()
    incoming: list[tuple[Incoming, tuple[str, int]]] = []
    names = ("path", "pos", "doc_id", "error", "line", "field", "fingerprint", "source")
    rows = []
    for batch in loaded.select_columns(list(names)).iter_batches(batch_format="numpy", batch_size=4096):
        rows += list(zip(*(batch[k] for k in names), strict=True))
    for path, pos, doc_id, error, line, fld, fingerprint, source in sorted(rows, key=lambda r: (str(r[0]),
                                                                                               int(r[1]))):
        if error:
            report.skipped.append(Skipped(str(path), str(error), int(line) or None, str(fld) or None))
        elif doc_id in first:
            drop.add((str(path), int(pos)))
            report.skipped.append(duplicate_skip(str(doc_id), first[doc_id][0], str(path)))
        else:
            first[str(doc_id)] = (str(path), int(pos))
            incoming.append((Incoming(str(doc_id), str(fingerprint), str(source) or None),
                             (str(path), int(pos))))
    stored = index.doc_states()
    report.kept = [d for d in unreadable_ids(stored, report.skipped) if d not in first]
    changes = diff_states([i for i, _ in incoming], stored, keep=report.kept)
    write = set(changes.added) | set(changes.updated)
    drop |= {where for i, where in incoming if i.doc_id not in write}  # unchanged: not embedded again
    moved = set(changes.relocated)
    relocated = {i.doc_id: i.source_path for i, _ in incoming if i.doc_id in moved}
    report.changes = changes
    total = len(write)
    if total:
        chunked = loaded.map_batches(chunk_stage, batch_size=batch_size, num_cpus=0.5,
                                     fn_kwargs={"chunker": settings.chunker, "drop": frozenset(drop)})
        embedded = chunked.map_batches(EmbedStage, fn_constructor_kwargs={
            "name": embedder.name, "identity": (embedder.name, embedder.version)},
            batch_size=batch_size, compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=1)
        written = embedded.map_batches(WriteStage, fn_constructor_kwargs={"config": config,
                                                                           "dim": int(embedder.dim)},
                                       batch_size=batch_size, compute=ray.data.ActorPoolStrategy(size=1),
                                       num_cpus=0.25)
        say(progress, f"ray: read {len(files)} files -> {len(first)} documents ({total} new or changed, "
             f"{len(report.skipped)} skipped so far); chunking, embedding with {actors} "
             f"actor{'s' if actors > 1 else ''}, writing")
        bar = progress_bar(total, "ingesting (ray)", progress)
        for done in _iter_summaries(written):
            done.add_to(report)
            if bar is not None:
                bar.update(done.documents + len(done.skipped))
        if bar is not None:
            bar.close()
        _flush(config)
    changes.encoded_rows = report.chunks
    report.generation = finish(_fresh(index), changes.deleted, relocated)


def _fresh(index: MilvusIndex) -> MilvusIndex:
    """The index over a new connection (the driver's sat idle through the pipeline: see :func:`_flush`)."""
    return MilvusIndex.open(index.config)


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


def _iter_summaries(written: Any) -> Iterator[BatchCounts]:
    for batch in written.iter_batches(batch_format="numpy", batch_size=None):
        for i in range(len(batch["documents"])):
            yield BatchCounts(int(batch["documents"][i]), int(batch["chunks"][i]), int(batch["sections"][i]),
                           int(batch["rows"][i]), pickle.loads(batch["skipped"][i]))
