"""How a command reports a problem: one line on stderr, then an exit code.

The exit code is 2 for bad input (the default) and 1 for other failures; stdout stays for
results (``--json`` prints one JSON object there and nothing else).
"""

from __future__ import annotations

from typing import NoReturn

import typer

__all__ = ["fail", "err"]


def fail(exc: Exception, code: int = 2) -> NoReturn:
    """Print ``error: <exc>`` on stderr and leave the command with exit code ``code``."""
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(code)


def err(message: str) -> None:
    """Print ``message`` on stderr (progress and log lines; stdout is for results)."""
    typer.echo(message, err=True)
