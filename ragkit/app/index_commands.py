"""The index commands: ``ragkit index``, ``ragkit sync`` and ``ragkit staleness``.

``index`` builds an index folder of a folder of documents, or updates it (only new and
changed documents are encoded), or with ``--backend milvus`` ingests it into a Milvus
collection (optionally with Ray Data); ``sync`` reconciles an index with its folder by
content hash, once or while watching; ``staleness`` says how far the index lags its sources
(``sync`` and ``staleness`` on an index folder or, with ``--backend milvus``, a Milvus collection).
Each function is a Typer command, registered in :mod:`ragkit.app.cli`. ``index`` and ``sync``
take ``--workers`` and ``-q`` (:mod:`ragkit.app.options`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragkit.app.exits import err, fail
from ragkit.app.options import (
    DEFAULT_WORKERS,
    BackendOpt,
    Collection,
    MilvusToken,
    MilvusUri,
    Quiet,
    milvus_config,
    with_workers,
    workers_option,
)
from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.index import MilvusIndex
from ragkit.backends.milvus.ingest import ingest_milvus
from ragkit.backends.milvus.ray_ingest import ingest_ray
from ragkit.backends.milvus.sync import MilvusTarget
from ragkit.core.errors import RagkitError
from ragkit.documents.chunking import ChunkerSettings
from ragkit.index.build import build_or_update, default_index_path
from ragkit.index.freshness import IndexFolder, Watcher, parse_duration, staleness, sync_folder
from ragkit.index.index import Index
from ragkit.index.reconcile import SyncTarget
from ragkit.index.settings import IndexSettings

__all__ = ["index_cmd", "sync_cmd", "staleness_cmd"]


@with_workers
def index_cmd(
    folder: Annotated[Path, typer.Argument(help="folder (or file) of .md/.txt/.html/.py/.jsonl/.pdf")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="index folder")] = None,
    rebuild: Annotated[bool, typer.Option(help="re-encode everything")] = False,
    strict: Annotated[bool, typer.Option(help="stop at the first broken file")] = False,
    chunker: Annotated[str, typer.Option(help="structure | sentence | fixed")] = "structure",
    max_tokens: Annotated[int, typer.Option(help="chunk budget in tokens")] = 200,
    quiet: Quiet = False,
    workers: Annotated[int, workers_option("embedder runs side by side (in this process)")]
    = DEFAULT_WORKERS,
    backend: Annotated[str, typer.Option(help="memory (an index folder) | milvus (a Milvus collection)")]
    = "memory",
    milvus_uri: Annotated[str | None, typer.Option(
        "--milvus-uri", envvar="RAGKIT_MILVUS_URI", show_envvar=True,
        help="Milvus server URI (http://HOST:19530) or a local file (./milvus.db) for --backend milvus")]
    = None,
    milvus_token: Annotated[str | None, typer.Option(
        "--milvus-token", envvar="RAGKIT_MILVUS_TOKEN", show_envvar=True,
        help="Milvus 'user:password' or API key")] = None,
    collection: Annotated[str | None, typer.Option(help="Milvus collection (default: ragkit)")] = None,
    use_ray: Annotated[bool, typer.Option("--ray", help="with --backend milvus: ingest with Ray Data "
                                          "(read -> chunk -> embed -> write)")] = False,
    ray_address: Annotated[str | None, typer.Option(help="with --ray: a Ray cluster's address "
                                                    "(default: start a local Ray)")] = None,
    ray_actors: Annotated[int, typer.Option(help="with --ray: embedder actors")] = 1,
    profile: Annotated[Path | None, typer.Option(
        "--profile", help="corpus profile JSON for the index (default: derived from FOLDER's documents; "
        "write one with `ragkit profile FOLDER --out FILE`)")] = None,
) -> None:
    """Build an index of FOLDER, or update it (only new and changed documents are encoded).

    The index keeps a corpus profile (what the agent reads questions and evidence with): the one
    in --profile FILE, else one derived from FOLDER's documents.

    With --backend milvus, FOLDER is reconciled with a Milvus collection instead (in this process,
    or with --ray on a local or remote Ray cluster): new and changed documents are chunked, embedded
    and upserted by document, documents that left FOLDER are deleted, unchanged ones are left as
    they are; --rebuild drops and re-creates the collection first.
    """
    if backend != "memory" or use_ray or ray_address or collection or ray_actors != 1:
        if profile is not None:
            fail(ValueError("--profile is for the memory backend; a Milvus collection built here "
                            "reads with the bundled profile"))
        _index_milvus(folder, out=out, rebuild=rebuild, strict=strict, chunker=chunker,
                      max_tokens=max_tokens, quiet=quiet, backend=backend, uri=milvus_uri,
                      token=milvus_token, collection=collection, use_ray=use_ray,
                      ray_address=ray_address, actors=ray_actors)
        return
    target = out or default_index_path(folder)
    try:
        build_or_update(folder, target, rebuild=rebuild, strict=strict, chunker=chunker,
                        max_tokens=max_tokens, progress=not quiet, profile=profile)
    except RagkitError as exc:
        fail(exc)
    typer.echo(str(target))


def _index_milvus(folder: Path, *, out: Path | None, rebuild: bool, strict: bool, chunker: str,
                  max_tokens: int, quiet: bool, backend: str, uri: str | None, token: str | None,
                  collection: str | None, use_ray: bool, ray_address: str | None, actors: int) -> None:
    """``ragkit index DIR --backend milvus [--ray]``: check the options, ingest, print the report."""
    problem = None
    if backend not in ("memory", "milvus"):
        problem = f"--backend {backend!r} is not a backend; use memory or milvus"
    elif backend == "memory":
        flag = "--ray" if use_ray else "--ray-address" if ray_address else "--collection" if collection \
            else "--ray-actors"
        problem = f"{flag} needs --backend milvus (the memory backend writes an index folder: --out)"
    elif (ray_address or actors != 1) and not use_ray:
        problem = f"{'--ray-address' if ray_address else '--ray-actors'} needs --ray"
    elif out is not None:
        problem = "--out is for the memory backend; --backend milvus writes to --collection at --milvus-uri"
    elif not uri:
        problem = ("--backend milvus needs --milvus-uri (or RAGKIT_MILVUS_URI): a server URI such as "
                   "http://127.0.0.1:19530, or a local file such as ./milvus.db")
    elif use_ray and strict:
        problem = "--strict is not supported with --ray: broken files are reported in the ingest report"
    if problem:
        fail(ValueError(problem))
    try:
        settings = IndexSettings(chunker=ChunkerSettings(method=chunker, max_tokens=max_tokens))
        config = MilvusConfig(uri or "", token=token or "", collection=collection or "ragkit")
        if use_ray:
            report = ingest_ray(folder, config, settings=settings, address=ray_address, actors=actors,
                                drop_existing=rebuild, progress=not quiet)
        else:
            report = ingest_milvus(folder, config, settings=settings, drop_existing=rebuild, strict=strict,
                                   progress=not quiet)
    except RagkitError as exc:
        fail(exc)
    typer.echo(str(report))


@with_workers
def sync_cmd(
    folder: Annotated[Path, typer.Argument(help="folder the index should mirror")],
    index: Annotated[Path | None, typer.Option("--index", "-i", help="index folder (created if missing; "
                                                "the memory backend)")] = None,
    watch: Annotated[bool, typer.Option(help="keep polling and apply changes as they happen")] = False,
    interval: Annotated[str, typer.Option(help="poll interval with --watch (e.g. 2s, 1m)")] = "2s",
    full_every: Annotated[str, typer.Option(help="full reconciliation period with --watch")] = "5m",
    max_polls: Annotated[str, typer.Option(help="with --watch: stop after N polls (0 = never)")] = "0",
    recover: Annotated[bool, typer.Option(help="first point the index at its newest intact generation")]
    = False,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object (without --watch)")] = False,
    workers: Annotated[int, workers_option("embedder runs side by side")] = DEFAULT_WORKERS,
    quiet: Quiet = False,
    backend: BackendOpt = "memory",
    milvus_uri: MilvusUri = None,
    milvus_token: MilvusToken = None,
    collection: Collection = None,
) -> None:
    """Reconcile INDEX with FOLDER by content hash: print added / updated / deleted / unchanged.

    With --backend milvus the Milvus collection (created if missing) is reconciled instead, by the
    same rule: new and changed documents are written, documents that left FOLDER are deleted
    (revoked ACL groups are rewritten), a generation is committed. Progress (a line per stage, bars
    for loading and embedding) goes to stderr, also with --json.
    """
    try:
        every, full = parse_duration(interval, field_name="--interval"), \
            parse_duration(full_every, field_name="--full-every")
        if not max_polls.isdigit():
            raise ValueError(f"--max-polls={max_polls!r} must be a whole number >= 0 (0 = never stop)")
        polls = int(max_polls)
        if not folder.is_dir():
            raise ValueError(f"{folder} is not a folder; pass the folder the index should mirror")
        config = milvus_config(backend, milvus_uri, milvus_token, collection, index)
        if config is not None and recover:
            raise ValueError("--recover is for the memory backend (an index folder's generations)")
        target: SyncTarget = MilvusTarget(config) if config is not None else IndexFolder(index or Path())
        if recover:
            Index.recover(index or Path())
        if watch:
            Watcher(folder, target=target, interval=every, full_every=full, log=typer.echo,
                    progress=not quiet).run(max_polls=polls or None)
            return
        result = sync_folder(folder, target=target, progress=not quiet, log=err)
    except (RagkitError, ValueError) as exc:
        fail(exc)
    if as_json:
        r = result.report
        sys.stdout.write(json.dumps({"added": r.added, "updated": r.updated, "deleted": r.deleted,
                                     "unchanged": r.unchanged, "encoded_rows": r.encoded_rows,
                                     "generation": result.generation, "kept": result.kept,
                                     "problems": [str(p) for p in result.problems]}) + "\n")
    else:
        typer.echo(str(result))


def staleness_cmd(
    index: Annotated[Path | None, typer.Option("--index", "-i", help="index folder (the memory backend)")]
    = None,
    threshold: Annotated[str, typer.Option(help="report documents lagging more than this (30m, 1h, 2d)")]
    = "1h",
    folder: Annotated[Path | None, typer.Option(help="source folder: also count changed, not yet indexed")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    backend: BackendOpt = "memory",
    milvus_uri: MilvusUri = None,
    milvus_token: MilvusToken = None,
    collection: Collection = None,
) -> None:
    """How far the index lags its sources: p50 / p95 / max and the documents past the threshold.

    With --backend milvus the collection's catalog is read (each document's indexed and changed times).
    """
    try:
        limit = parse_duration(threshold, field_name="--threshold")
        if folder is not None and not folder.is_dir():
            raise ValueError(f"--folder {folder} is not a folder")
        config = milvus_config(backend, milvus_uri, milvus_token, collection, index)
        source = MilvusIndex.open(config) if config is not None else Index.load(index or Path())
        result = staleness(source, folder=folder, threshold=limit)
    except (RagkitError, ValueError) as exc:
        fail(exc)
    if as_json:
        sys.stdout.write(json.dumps(result.to_json()) + "\n")
    else:
        typer.echo(str(result))
