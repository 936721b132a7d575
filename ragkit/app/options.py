"""The options the bulk commands share: ``--workers N`` (both cores) and ``-q/--quiet`` (no progress).

``ragkit index``, ``sync``, ``demo``, ``beir`` and ``eval`` take both. ``sync``, ``staleness`` and
``mcp`` also share the Milvus options (``--backend``, ``--milvus-uri``, ``--milvus-token``,
``--collection``; :func:`milvus_config` checks them). ``--workers`` (default
:data:`DEFAULT_WORKERS`, or ``RAGKIT_WORKERS``) sets how many model runs go side by side
(:func:`ragkit.models.set_workers`); ``beir`` also runs that many queries at a time, ``eval`` that
many cases (on worker processes), with results identical to ``--workers 1`` and in the same order.

Progress goes to stderr in every mode, ``--json`` included (stdout holds only the JSON object):
a line as each stage starts and a tqdm bar over each long stage (files loaded, chunks embedded,
queries, cases). ``-q`` turns both off; warnings, errors and the closing summary lines stay.

Example::

    @with_workers
    def build_cmd(workers: Annotated[int, workers_option("model runs side by side")] = DEFAULT_WORKERS,
                  quiet: Quiet = False) -> None:
        build(progress=not quiet)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.models import set_workers

__all__ = ["DEFAULT_WORKERS", "Quiet", "workers_option", "with_workers", "BackendOpt", "MilvusUri",
           "MilvusToken", "Collection", "milvus_config"]

F = TypeVar("F", bound=Callable[..., Any])

#: Worker count of the bulk commands when neither ``--workers`` nor ``RAGKIT_WORKERS`` says.
DEFAULT_WORKERS = 2

#: ``-q/--quiet``: no progress bars and no stage lines (summaries, warnings and errors stay).
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="no progress bars or stage lines on stderr")]


def workers_option(what: str) -> Any:
    """The ``--workers`` option (at least 1; ``RAGKIT_WORKERS`` when not given), with ``what`` it runs."""
    return typer.Option("--workers", min=1, envvar="RAGKIT_WORKERS", show_envvar=True,
                        help=f"workers: {what} (1 = one at a time)")


def with_workers(command: F) -> F:
    """A command run with the shared model pool sized by its ``workers`` argument
    (:func:`ragkit.models.set_workers`), and the size before restored after it (a command run
    in-process, as tests do, leaves nothing behind)."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        before = set_workers(kwargs["workers"])
        try:
            return command(*args, **kwargs)
        finally:
            set_workers(before)

    return run  # type: ignore[return-value]


#: ``--backend``: the in-memory index (an index folder) or a Milvus collection.
BackendOpt = Annotated[str, typer.Option(help="memory (an index folder) | milvus (a Milvus collection)")]
#: ``--milvus-uri`` (``RAGKIT_MILVUS_URI``): a server URI or a local file, with ``--backend milvus``.
MilvusUri = Annotated[str | None, typer.Option(
    "--milvus-uri", envvar="RAGKIT_MILVUS_URI", show_envvar=True,
    help="Milvus server URI (http://HOST:19530) or a local file (./milvus.db) for --backend milvus")]
#: ``--milvus-token`` (``RAGKIT_MILVUS_TOKEN``).
MilvusToken = Annotated[str | None, typer.Option(
    "--milvus-token", envvar="RAGKIT_MILVUS_TOKEN", show_envvar=True,
    help="Milvus 'user:password' or API key")]
#: ``--collection``: the Milvus collection (default ``ragkit``).
Collection = Annotated[str | None, typer.Option(help="Milvus collection (default: ragkit)")]


def milvus_config(backend: str, uri: str | None, token: str | None, collection: str | None,
                  index: object | None) -> MilvusConfig | None:
    """The Milvus configuration ``--backend milvus`` and its options name (``None`` for ``memory``).

    Raises:
        ValueError: an unknown backend, a memory backend without ``--index`` or with Milvus options,
            a Milvus backend with ``--index`` or without ``--milvus-uri`` (each says what to pass).
    """
    if backend not in ("memory", "milvus"):
        raise ValueError(f"--backend {backend!r} is not a backend; use memory or milvus")
    if backend == "memory":
        if collection:
            raise ValueError("--collection needs --backend milvus (the memory backend reads --index)")
        if index is None:
            raise ValueError("--index is required: the index folder (or pass --backend milvus "
                             "--milvus-uri URI)")
        return None
    if index is not None:
        raise ValueError("--index is for the memory backend; --backend milvus reads --collection at "
                         "--milvus-uri")
    if not uri:
        raise ValueError("--backend milvus needs --milvus-uri (or RAGKIT_MILVUS_URI): a server URI such as "
                         "http://127.0.0.1:19530, or a local file such as ./milvus.db")
    return MilvusConfig(uri, token=token or "", collection=collection or "ragkit")
