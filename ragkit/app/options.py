"""The options the bulk commands share: ``--workers N`` (both cores) and ``-q/--quiet`` (no progress).

``ragkit index``, ``sync``, ``demo``, ``beir`` and ``eval`` take both. ``--workers`` (default
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

from ragkit.models import set_workers

__all__ = ["DEFAULT_WORKERS", "Quiet", "workers_option", "with_workers"]

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
