"""Reading one file's content: UTF-8 text, YAML front matter, HTML as Markdown-like text, PDF text.

Each reader raises :class:`~ragkit.core.errors.LoadError` naming the file, the line where it
can, and the fix; :mod:`ragkit.documents.loaders` turns files into documents with them.

Example:
    >>> split_front_matter("---\\ntitle: Runbook\\n---\\n# EUR cutoff\\n", Path("a.md"))
    ({'title': 'Runbook'}, {'title': 2}, '# EUR cutoff\\n')
    >>> html_to_text("<h2>Cutoffs</h2><p>EUR closes at <b>15:00</b>.</p>")
    ('## Cutoffs\\n\\nEUR closes at 15:00.\\n', '')
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml

from ragkit.core.errors import LoadError

__all__ = ["read_text", "split_front_matter", "first_heading", "read_pdf", "html_to_text"]

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


class _FrontMatterLoader(yaml.SafeLoader):
    """Safe YAML that keeps dates as strings, so ragkit validates them with a clear message."""


_FrontMatterLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read_text(file: Path) -> str:
    """The file as UTF-8 text; raises :class:`LoadError` for an empty, binary or non-UTF-8 file."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise LoadError(str(file), f"cannot read: {exc.strerror or exc}") from None
    if not raw.strip():
        raise LoadError(str(file), "empty file: nothing to index; add text or remove the file")
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise LoadError(str(file), f"binary content (a NUL byte at byte {nul}), not text; remove it or "
                        "convert it to text", line=raw[:nul].count(b"\n") + 1)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise LoadError(str(file), f"not valid UTF-8 (byte {exc.start}); re-save the file as UTF-8",
                        line=line) from None


def first_heading(text: str) -> str | None:
    """The text of the first Markdown heading in ``text``, or ``None``."""
    match = _HEADING.search(text)
    return match.group(1).strip() if match else None


def split_front_matter(text: str, file: Path) -> tuple[dict[str, Any], dict[str, int], str]:
    """Split ``---`` YAML front matter from the body; also return each key's line number.

    Dates stay strings (the envelope validates them with a clear message).

    Returns:
        ``(fields, line_of_each_field, body)``; ``({}, {}, text)`` without front matter.
    """
    if not text.startswith("---"):
        return {}, {}, text
    match = _FRONT_MATTER.match(text)
    if not match:
        raise LoadError(str(file), "front matter starts with '---' on line 1 but has no closing "
                        "'---' line; close it or remove the opening line", line=1)
    try:
        meta = yaml.load(match.group(1), Loader=_FrontMatterLoader) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1  # +1 for 1-based, +1 for the '---' line
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise LoadError(str(file), f"front matter is not valid YAML: {problem}", line=line) from None
    if not isinstance(meta, dict):
        raise LoadError(str(file), f"front matter must be a mapping of envelope fields, got "
                        f"{type(meta).__name__}", line=2)
    lines: dict[str, int] = {}
    for number, line in enumerate(match.group(1).splitlines(), start=2):
        key = line.split(":", 1)[0].strip()
        if key in meta and not line.startswith((" ", "\t", "-")):
            lines.setdefault(key, number)
    return meta, lines, text[match.end():]


def read_pdf(file: Path) -> str:
    """The text of every page of a PDF (pypdf), pages separated by a blank line."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:  # pragma: no cover - pypdf is a core dependency
        raise LoadError(str(file), "pypdf is not installed: run `pip install pypdf`") from None
    import logging

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings become our one clear error
    try:
        reader = PdfReader(str(file))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise LoadError(str(file), f"not a readable PDF ({exc}); re-export it or convert it to text")\
            from None
    text = "\n\n".join(p.strip() for p in pages)
    if not text.strip():
        raise LoadError(str(file), "the PDF has no extractable text (scanned images?); run OCR first")
    return text


class _HTMLText(HTMLParser):
    _BLOCK = {"p", "div", "section", "article", "br", "tr", "table", "ul", "ol", "pre", "blockquote"}
    _SKIP = {"script", "style", "head", "nav", "footer"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in self._SKIP:
            self._skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
        elif re.fullmatch(r"h[1-6]", tag) or tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> tuple[str, str]:
    """``(text, title)`` of an HTML page: headings as ``#``, list items as ``-``, scripts dropped."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n[ \t]+", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
    return text, parser.title.strip()
