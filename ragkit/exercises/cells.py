"""One source per exercise: cells with marked gaps, rendered as the student or the solution version.

An exercise module lists its notebook as :class:`Cell` records. Code cells mark each gap::

    # [gap] Keep the cases whose decisive document was delivered.
    # [stub] delivered = ____
    delivered = [c for c in cases if ...]
    # [end]

The student version keeps the comment as ``# TODO: ...`` and the ``[stub]`` lines (without
the marker); the solution version keeps the comment and the lines between the stub and
``[end]``. Both notebooks, and the reference shown by ``solution()``, come from this one text,
so they cannot drift apart.

Example:
    >>> code = "# [gap] Add one.\\n# [stub] y = ____\\ny = x + 1\\n# [end]"
    >>> print(render(code, "student"))
    # TODO: Add one.
    y = ____
    >>> print(render(code, "solution"))
    # Add one.
    y = x + 1
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragkit.core.errors import ValidationError

__all__ = [
    "Cell",
    "md",
    "setup",
    "work",
    "check_cell",
    "render",
    "solution_blocks",
    "to_notebook",
    "VERSIONS",
]

VERSIONS = ("student", "solution")
ROLES = ("text", "setup", "work", "check")
_MARK = re.compile(r"^(?P<indent>\s*)# \[(?P<tag>gap|stub|end)\]\s?(?P<rest>.*)$")


@dataclass(frozen=True)
class Cell:
    """One notebook cell: ``kind`` is markdown or code; ``role`` says what the cell is for.

    Roles: ``text`` (markdown), ``setup`` (loads data; needs the course index), ``work``
    (holds gaps; runs on small fixtures in the tests), ``check`` (calls the checker).
    """

    kind: str
    source: str
    role: str


def md(text: str) -> Cell:
    """A markdown cell."""
    return Cell("markdown", text.strip("\n"), "text")


def setup(code: str) -> Cell:
    """A code cell that loads data (the same in both versions, no gaps)."""
    return Cell("code", code.strip("\n"), "setup")


def work(code: str) -> Cell:
    """A code cell with gaps."""
    return Cell("code", code.strip("\n"), "work")


def check_cell(module_alias: str = "ex") -> Cell:
    """The cell that runs the checker (the solution version also asserts that it passes)."""
    return Cell("code", module_alias, "check")


def _parse(code: str) -> list[tuple[str, str, list[str], list[str]]]:
    """Split ``code`` into pieces: ("text", line) or ("gap", indent+comment, stub lines, solution lines)."""
    pieces: list[tuple[str, str, list[str], list[str]]] = []
    lines = code.split("\n")
    i = 0
    while i < len(lines):
        m = _MARK.match(lines[i])
        if not m:
            pieces.append(("text", lines[i], [], []))
            i += 1
            continue
        if m["tag"] != "gap":
            raise ValidationError(
                f"line {i + 1}: '# [{m['tag']}]' outside a gap; open one with '# [gap] ...'", field="source"
            )
        indent, comment = m["indent"], m["rest"].strip()
        stub: list[str] = []
        solution: list[str] = []
        i += 1
        while True:
            if i >= len(lines):
                raise ValidationError(f"gap '{comment}' is not closed with '# [end]'", field="source")
            n = _MARK.match(lines[i])
            if n and n["tag"] == "end":
                i += 1
                break
            if n and n["tag"] == "gap":
                raise ValidationError(f"gap '{comment}' opens another gap before '# [end]'", field="source")
            if n and n["tag"] == "stub":
                stub.append(n["indent"] + n["rest"])
            else:
                solution.append(lines[i])
            i += 1
        if not stub:
            raise ValidationError(f"gap '{comment}' has no '# [stub] ...' line", field="source")
        pieces.append(("gap", indent + comment, stub, solution))
    return pieces


def render(code: str, version: str) -> str:
    """The student (gaps open) or solution (gaps filled) text of one code cell."""
    if version not in VERSIONS:
        raise ValidationError(f"version={version!r}; use one of {VERSIONS}", field="version")
    out: list[str] = []
    for kind, head, stub, solution in _parse(code):
        if kind == "text":
            out.append(head)
            continue
        indent = head[: len(head) - len(head.lstrip())]
        comment = head.strip()
        if version == "student":
            out.append(f"{indent}# TODO: {comment}")
            out.extend(stub)
        else:
            out.append(f"{indent}# {comment}")
            out.extend(solution)
    return "\n".join(out)


def solution_blocks(cells: Sequence[Cell]) -> str:
    """Every work cell in its solution version, for ``solution()``."""
    return "\n\n".join(render(cell.source, "solution") for cell in cells if cell.role == "work")


def to_notebook(cells: Sequence[Cell], version: str, *, number: int, alias: str = "ex") -> dict:
    """The notebook (nbformat 4 as a plain dict) of one version, with stable cell ids.

    Outputs are empty and ids are ``ex<NN>-<i>`` so regenerating gives identical bytes.
    """
    if version not in VERSIONS:
        raise ValidationError(f"version={version!r}; use one of {VERSIONS}", field="version")
    out: list[dict] = []

    def add(kind: str, source: str) -> None:
        cell: dict = {
            "cell_type": kind,
            "id": f"ex{number:02d}-{len(out):02d}",
            "metadata": {},
            "source": source,
        }
        if kind == "code":
            cell.update({"execution_count": None, "outputs": []})
        out.append(cell)

    for cell in cells:
        if cell.role == "check":
            if version == "student":
                add("code", f"{alias}.check()")
                add(
                    "code",
                    f"# Stuck? Uncomment a line: hints come in order, the solution last.\n"
                    f"# {alias}.hint()\n# {alias}.solution()",
                )
            else:
                add(
                    "code",
                    f"outcome = {alias}.check()\nprint(outcome)\nassert outcome.passed, outcome.message",
                )
        elif cell.kind == "markdown":
            add("markdown", cell.source)
        else:
            add("code", render(cell.source, version))
    return {
        "cells": out,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
