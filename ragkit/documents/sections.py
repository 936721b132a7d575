"""The author's structure of a text: heading sections (or top-level defs in Python) and blocks.

:func:`sections` finds the sections a document is cut into and cited by (``doc_id#anchor``);
:func:`blocks` finds the paragraphs, list items, tables and code fences inside one, which
:mod:`ragkit.documents.chunking` packs into chunks without splitting a table or a fence.

Example:
    >>> text = "Intro.\\n\\n# Cutoffs\\n\\n## EUR\\n\\nEUR closes at 15:00.\\n\\n## EUR\\n\\nAgain.\\n"
    >>> [(s.anchor, s.path) for s in sections(text)]
    [('top', ()), ('cutoffs', ('Cutoffs',)), ('eur', ('Cutoffs', 'EUR')), ('eur-2', ('Cutoffs', 'EUR'))]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ragkit.core.records import slugify

__all__ = ["Section", "sections", "blocks", "opens_fence"]

_ATX = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")


@dataclass(frozen=True)
class Section:
    """A heading-delimited section: ``text[start:end]`` runs from its heading to the next heading."""

    anchor: str
    path: tuple[str, ...]
    start: int
    end: int
    body_start: int


def _lines(text: str) -> Iterable[tuple[int, str]]:
    pos = 0
    for line in text.splitlines(keepends=True):
        yield pos, line.rstrip("\r\n")
        pos += len(line)


def sections(text: str, *, python: bool = False) -> list[Section]:
    """Split ``text`` into sections at Markdown headings (or top-level defs for Python).

    Text before the first heading forms a section with anchor ``"top"`` (only when it
    holds something other than blank lines). Anchors are :func:`~ragkit.core.records.slugify`
    of the heading; repeats in one document get ``-2``, ``-3``.
    """
    if python:
        return _python_sections(text)
    marks: list[tuple[int, int, str, int]] = []  # (start, level, heading, body_start)
    in_fence = False
    for pos, line in _lines(text):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = _ATX.match(line)
        if match and match.group(2).strip():
            marks.append((pos, len(match.group(1)), match.group(2).strip(), pos + len(line)))
    out: list[Section] = []
    used: dict[str, int] = {}
    first = marks[0][0] if marks else len(text)
    if text[:first].strip():
        out.append(Section(_unique("top", used), (), 0, first, 0))
    stack: list[tuple[int, str]] = []
    for i, (start, level, heading, body_start) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        out.append(Section(_unique(slugify(heading), used), tuple(h for _, h in stack), start, end,
                           body_start))
    return out


def _unique(anchor: str, used: dict[str, int]) -> str:
    count = used.get(anchor, 0) + 1
    used[anchor] = count
    return anchor if count == 1 else f"{anchor}-{count}"


def _python_sections(text: str) -> list[Section]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return [Section("top", (), 0, len(text), 0)] if text.strip() else []
    offsets = [0]
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    used: dict[str, int] = {}
    out: list[Section] = []
    cursor = 0
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        first_line = min([node.lineno] + [d.lineno for d in node.decorator_list])
        start = offsets[first_line - 1]
        end = offsets[min(node.end_lineno or node.lineno, len(offsets) - 1)]
        if text[cursor:start].strip():
            out.append(Section(_unique("top", used), (), cursor, start, cursor))
        kind = "class" if isinstance(node, ast.ClassDef) else "def"
        out.append(Section(_unique(f"{kind}-{slugify(node.name)}", used), (node.name,), start, end, start))
        cursor = end
    if text[cursor:].strip():
        out.append(Section(_unique("top", used), (), cursor, len(text), cursor))
    return out


def opens_fence(text: str) -> bool:
    """Whether ``text`` starts with a code fence line (```` ``` ```` or ``~~~``, indented or not)."""
    return bool(_FENCE.match(text))


def blocks(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Blocks of ``text[start:end]``: paragraphs, list items, whole tables, whole code fences.

    Returns:
        ``(start, end)`` offsets into ``text`` of each non-blank block, in order.

    Example:
        >>> text = "Intro line.\\n\\n- item one\\n- item two\\n\\n| a | b |\\n| 1 | 2 |\\n"
        >>> [text[a:b] for a, b in blocks(text, 0, len(text))]
        ['Intro line.', '- item one', '- item two', '| a | b |\\n| 1 | 2 |']
    """
    blocks: list[tuple[int, int]] = []
    cur: list[int] | None = None  # [start, end, kind]
    kind = ""
    in_fence = False
    for pos, line in _lines(text[start:end]):
        a, b = start + pos, start + pos + len(line)
        stripped = line.strip()
        if in_fence:
            assert cur is not None
            cur[1] = b
            if _FENCE.match(line):
                in_fence = False
                blocks.append((cur[0], cur[1]))
                cur = None
            continue
        if _FENCE.match(line):
            if cur:
                blocks.append((cur[0], cur[1]))
            cur, in_fence = [a, b], True
            continue
        if not stripped:
            if cur:
                blocks.append((cur[0], cur[1]))
                cur = None
            continue
        line_kind = ("table" if stripped.startswith("|") else
                     "item" if re.match(r"^\s*([-*+]|\d+[.)])\s+", line) else "text")
        continuing_item = line_kind == "text" and kind == "item" and line[:1] in (" ", "\t")
        if cur and (line_kind == kind == "table" or (line_kind == "text" and kind == "text")
                    or continuing_item):
            cur[1] = b
            continue
        if cur:
            blocks.append((cur[0], cur[1]))
        cur, kind = [a, b], line_kind
    if cur:
        blocks.append((cur[0], cur[1]))
    return [(a, b) for a, b in blocks if text[a:b].strip()]
