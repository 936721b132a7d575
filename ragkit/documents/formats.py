"""Reading one file's content: UTF-8 text, YAML front matter, PDF text, and the evidence envelope
each kind of file can carry.

Each reader raises :class:`~ragkit.core.errors.LoadError` naming the file, the line where it
can, the field where there is one, and the fix; :mod:`ragkit.documents.loaders` turns files
into documents with them.

Where the envelope lives:

* Markdown: YAML front matter (:func:`split_front_matter`).
* HTML: ``<meta name="ragkit:<field>" content="...">`` tags in ``<head>``, or one
  ``<script type="application/ragkit+json">`` holding a JSON object of fields, or both
  (a field set in both is an error) (:func:`html_envelope`).
* PDF: document-information entries ``/ragkit_<field>``, or one ``/ragkit_envelope`` entry
  holding a JSON object of fields, or both (:func:`read_pdf_document`).

A field given as a string (a meta tag's ``content``, a PDF entry) is read as the envelope
reads front matter: list fields (``entities``, ``acl_groups``, ``supersedes``,
``superseded_by``, ``conditions``, ``links``) take a JSON array or comma-separated values
(repeated meta tags add up), ``extra`` takes a JSON object, dates stay ISO strings that
:class:`~ragkit.core.records.Envelope` validates.

How an HTML page's or a PDF's text becomes Markdown-like text (headings, lists, tables) is
:mod:`ragkit.documents.markup`.

Example:
    >>> split_front_matter("---\\ntitle: Runbook\\n---\\n# EUR cutoff\\n", Path("a.md"))
    ({'title': 'Runbook'}, {'title': 2}, '# EUR cutoff\\n')
    >>> html_envelope('<head><meta name="ragkit:tenant" content="acme">'
    ...               '<meta name="ragkit:acl_groups" content="ops, risk"></head>', Path("a.html"))
    ({'tenant': 'acme', 'acl_groups': ['ops', 'risk']}, {'tenant': 1, 'acl_groups': 1})
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml

from ragkit.core.errors import LoadError
from ragkit.core.records import Envelope
from ragkit.documents.markup import pdf_headings, pdf_tables

__all__ = [
    "read_text",
    "split_front_matter",
    "first_heading",
    "read_pdf",
    "read_pdf_document",
    "html_envelope",
    "HTML_META_PREFIX",
    "HTML_SCRIPT_TYPE",
    "PDF_ENVELOPE_KEY",
    "PDF_FIELD_PREFIX",
]

#: ``<meta name="ragkit:tenant" content="acme">``: one envelope field per tag.
HTML_META_PREFIX = "ragkit:"
#: ``<script type="application/ragkit+json">{...}</script>``: the envelope as one JSON object.
HTML_SCRIPT_TYPE = "application/ragkit+json"
#: PDF document-information entry holding the envelope as one JSON object.
PDF_ENVELOPE_KEY = "/ragkit_envelope"
#: PDF document-information entries ``/ragkit_<field>``: one envelope field each.
PDF_FIELD_PREFIX = "/ragkit_"

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
    return read_pdf_document(file)[0]


def read_pdf_document(file: Path) -> tuple[str, dict[str, Any], str]:
    """A PDF's text, the envelope fields in its document information, and its ``/Title``.

    Envelope fields come from a ``/ragkit_envelope`` entry (a JSON object) and from
    ``/ragkit_<field>`` entries (one field each, read like a meta tag's content: see the
    module docstring); a field set both ways is an error.

    Returns:
        ``(text, fields, title)``: pages separated by a blank line; ``{}`` and ``""`` when the
        document information has no ragkit entries or no title.

    Raises:
        LoadError: not a readable PDF, no extractable text, or a malformed envelope entry
            (the error names the field).
    """
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
        info = dict(reader.metadata or {})
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise LoadError(str(file), f"not a readable PDF ({exc}); re-export it or convert it to text")\
            from None
    text = pdf_headings(pdf_tables("\n\n".join(p.strip() for p in pages)))
    if not text.strip():
        raise LoadError(str(file), "the PDF has no extractable text (scanned images?); run OCR first")
    fields: dict[str, Any] = {}
    whole = info.get(PDF_ENVELOPE_KEY)
    if whole is not None:
        fields = _json_object(str(whole), file, None, f"document-information entry {PDF_ENVELOPE_KEY}")
    for key in sorted(str(k) for k in info):
        if key == PDF_ENVELOPE_KEY or not key.lower().startswith(PDF_FIELD_PREFIX):
            continue
        name = key[len(PDF_FIELD_PREFIX):].lower()
        if name in fields:
            raise LoadError(str(file), f"envelope field '{name}' is set twice (in {PDF_ENVELOPE_KEY} "
                            f"and in {key}); keep one", field=name)
        fields[name] = _field_value(name, str(info[key]), file, None, f"document-information entry {key}")
    title = info.get("/Title")
    return text, fields, str(title).strip() if title is not None else ""


def _json_object(raw: str, file: Path, line: int | None, where: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LoadError(str(file), f"the envelope in the {where} is not valid JSON ({exc.msg} at "
                        f"column {exc.colno}); write one JSON object of envelope fields",
                        line=line) from None
    if not isinstance(data, dict):
        raise LoadError(str(file), f"the envelope in the {where} must be a JSON object of envelope "
                        f"fields, got {type(data).__name__}", line=line)
    return data


def _field_value(name: str, raw: str, file: Path, line: int | None, where: str) -> Any:
    """One envelope field given as a string: lists from a JSON array or commas, ``extra`` from JSON."""
    text = raw.strip()
    if name in Envelope.LIST_FIELDS:
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise LoadError(str(file), f"field '{name}' in the {where} starts with '[' but is not "
                                f"a valid JSON array ({exc.msg}); write [\"a\", \"b\"] or a, b",
                                line=line, field=name) from None
            return value
        return [part.strip() for part in text.split(",") if part.strip()]
    if name == "extra":
        try:
            value = json.loads(text) if text else {}
        except json.JSONDecodeError as exc:
            raise LoadError(str(file), f"field 'extra' in the {where} must be a JSON object "
                            f"({exc.msg} at column {exc.colno})", line=line, field=name) from None
        if not isinstance(value, dict):
            raise LoadError(str(file), f"field 'extra' in the {where} must be a JSON object, got "
                            f"{type(value).__name__}", line=line, field=name)
        return value
    return text


class _HTMLEnvelope(HTMLParser):
    """Collects ``<meta name="ragkit:...">`` tags and ``application/ragkit+json`` scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.metas: list[tuple[str, str | None, int]] = []  # (field, content, line)
        self.scripts: list[tuple[str, int]] = []  # (json text, line)
        self._script: list[str] | None = None
        self._script_line = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): v for k, v in attrs}
        if tag == "meta" and (a.get("name") or "").lower().startswith(HTML_META_PREFIX):
            name = (a.get("name") or "")[len(HTML_META_PREFIX):].strip().lower()
            self.metas.append((name, a.get("content"), self.getpos()[0]))
        elif tag == "script" and (a.get("type") or "").strip().lower() == HTML_SCRIPT_TYPE:
            self._script = []
            self._script_line = self.getpos()[0]

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            self.scripts.append(("".join(self._script), self._script_line))
            self._script = None


def html_envelope(html: str, file: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The envelope fields an HTML page declares, and the line each one is declared on.

    Reads ``<meta name="ragkit:<field>" content="...">`` tags (list fields may repeat the tag;
    see the module docstring for how values are read) and at most one
    ``<script type="application/ragkit+json">`` holding a JSON object of fields.

    Returns:
        ``(fields, line_of_each_field)``; ``({}, {})`` for a page without either.

    Raises:
        LoadError: invalid JSON, a second script, a meta tag without ``content`` or without a
            field name, a field set twice; the error names the file, line and field.
    """
    parser = _HTMLEnvelope()
    parser.feed(html)
    parser.close()
    fields: dict[str, Any] = {}
    lines: dict[str, int] = {}
    if len(parser.scripts) > 1:
        raise LoadError(str(file), f"more than one <script type=\"{HTML_SCRIPT_TYPE}\"> (lines "
                        f"{parser.scripts[0][1]} and {parser.scripts[1][1]}); keep one",
                        line=parser.scripts[1][1])
    if parser.scripts:
        raw, line = parser.scripts[0]
        fields = _json_object(raw, file, line, f"<script type=\"{HTML_SCRIPT_TYPE}\">")
        lines = {str(k): line for k in fields}
    from_meta: set[str] = set()
    for name, content, line in parser.metas:
        where = f"<meta name=\"{HTML_META_PREFIX}{name}\">"
        if not name:
            raise LoadError(str(file), f"<meta name=\"{HTML_META_PREFIX}\"> names no envelope field; "
                            f"write {HTML_META_PREFIX}tenant, {HTML_META_PREFIX}acl_groups, ...", line=line)
        if content is None:
            raise LoadError(str(file), f"{where} has no content attribute", line=line, field=name)
        value = _field_value(name, content, file, line, where)
        if name in fields and name not in from_meta:
            raise LoadError(str(file), f"envelope field '{name}' is set twice (in the JSON script on "
                            f"line {lines[name]} and in a meta tag); keep one", line=line, field=name)
        if name in fields and name in Envelope.LIST_FIELDS:
            fields[name] = list(fields[name]) + list(value)  # repeated tags add up
            continue
        if name in fields:
            raise LoadError(str(file), f"envelope field '{name}' is set twice (meta tags on lines "
                            f"{lines[name]} and {line}); keep one", line=line, field=name)
        fields[name] = value
        lines[name] = line
        from_meta.add(name)
    return fields, lines
