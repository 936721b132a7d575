"""Read a folder or a file into :class:`~ragkit.core.records.Document` records.

Supported: Markdown (``.md``, YAML front matter is the evidence envelope), plain
text (``.txt``), HTML (``.html``/``.htm``, converted to Markdown-like text so
headings and list items keep their structure), Python source (``.py``), JSONL
(``.jsonl``: one document per line, envelope fields beside ``text``) and PDF
(``.pdf``, through pypdf).

One broken file never drops the others: by default every problem is recorded
in the :class:`LoadReport` (file, line, field, reason) and loading goes on;
``strict=True`` raises :class:`~ragkit.core.errors.LoadError` on the first one.

Example:
    >>> docs, report = load_corpus("datasets/sample")      # doctest: +SKIP
    >>> print(report)                                       # doctest: +SKIP
    read 14 files -> 14 documents; skipped 0
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml

from ragkit.core.errors import LoadError, ValidationError
from ragkit.core.records import Document, Envelope

__all__ = ["LoadReport", "Skipped", "load_corpus", "load_file", "SUPPORTED_SUFFIXES", "MAX_FILE_MB"]

SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm", ".py", ".jsonl", ".pdf")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


class _FrontMatterLoader(yaml.SafeLoader):
    """Safe YAML that keeps dates as strings, so ragkit validates them with a clear message."""


_FrontMatterLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True)
class Skipped:
    """A file (or a line of a JSONL file) that could not be loaded, and why."""

    path: str
    reason: str
    line: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.reason}"


@dataclass
class LoadReport:
    """What a load did: files read, documents made, and everything skipped with its reason."""

    root: str = ""
    files_seen: int = 0
    files_read: int = 0
    documents: int = 0
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing was skipped."""
        return not self.skipped

    def __str__(self) -> str:
        lines = [
            f"read {self.files_read}/{self.files_seen} files -> {self.documents} documents; "
            f"skipped {len(self.skipped)}"
        ]
        lines += [f"  skipped {s}" for s in self.skipped]
        return "\n".join(lines)

    def _repr_html_(self) -> str:  # rich display in notebooks
        rows = "".join(
            f"<tr><td>{s.path}</td><td>{s.line or ''}</td><td>{s.reason}</td></tr>" for s in self.skipped
        )
        table = f"<table><tr><th>file</th><th>line</th><th>reason</th></tr>{rows}</table>" if rows else ""
        return (
            f"<b>LoadReport</b>: read {self.files_read}/{self.files_seen} files, "
            f"{self.documents} documents, skipped {len(self.skipped)}{table}"
        )


#: Files larger than this are reported and skipped (split them, or raise ``max_file_mb``).
MAX_FILE_MB = 10.0


def load_corpus(
    path: str | Path, *, strict: bool = False, progress: bool = False, max_file_mb: float = MAX_FILE_MB
) -> tuple[list[Document], LoadReport]:
    """Load every supported file under ``path`` (a folder, walked recursively, or one file).

    Args:
        path: folder or file.
        strict: raise :class:`LoadError` on the first problem instead of skipping the file.
        progress: show a tqdm progress bar.

    Returns:
        ``(documents, report)``: documents in a stable order (sorted paths), and a
        :class:`LoadReport`. Hidden files and folders (``.name``) are ignored.

    Raises:
        LoadError: ``path`` does not exist; or, with ``strict=True``, any broken file
            or a duplicate ``doc_id``.
    """
    root = Path(path)
    if not root.exists():
        raise LoadError(str(root), "no such file or folder; check the path (relative paths start "
                        f"from {Path.cwd()})")
    report = LoadReport(root=str(root))
    walk_problems: list[Skipped] = []
    files = [root] if root.is_file() else sorted(_walk(root, walk_problems))
    if walk_problems and strict:
        raise LoadError(walk_problems[0].path, walk_problems[0].reason)
    report.skipped += walk_problems
    report.files_seen += len(walk_problems)
    docs: list[Document] = []
    seen: dict[str, str] = {}
    iterator: Iterable[Path] = files
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(files, desc="loading", unit="file")
    for file in iterator:
        report.files_seen += 1
        if file.suffix.lower() not in SUPPORTED_SUFFIXES:
            problem = Skipped(str(file), f"unsupported file type '{file.suffix}'; supported: "
                              f"{', '.join(SUPPORTED_SUFFIXES)}")
            if strict:
                raise LoadError(problem.path, problem.reason)
            report.skipped.append(problem)
            continue
        try:
            _check_size(file, max_file_mb)
            loaded = list(_load_one(file, root if root.is_dir() else file.parent, strict=strict,
                                    report=report))
        except LoadError as exc:
            if strict:
                raise
            report.skipped.append(Skipped(exc.path, _reason(exc), exc.line, exc.field))
            continue
        report.files_read += 1
        for doc in loaded:
            if doc.doc_id in seen:
                problem = Skipped(str(file), f"duplicate doc_id {doc.doc_id!r}, first defined in "
                                  f"{seen[doc.doc_id]}; give one of them another doc_id", field="doc_id")
                if strict:
                    raise LoadError(problem.path, problem.reason, field="doc_id")
                report.skipped.append(problem)
                continue
            seen[doc.doc_id] = str(file)
            docs.append(doc)
    report.documents = len(docs)
    return docs, report


def load_file(path: str | Path, *, root: str | Path | None = None) -> list[Document]:
    """Load one file strictly (raises :class:`LoadError` naming file, line and field)."""
    file = Path(path)
    if not file.is_file():
        raise LoadError(str(file), "no such file")
    if file.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise LoadError(str(file), f"unsupported file type '{file.suffix}'; supported: "
                        f"{', '.join(SUPPORTED_SUFFIXES)}")
    return list(_load_one(file, Path(root) if root else file.parent, strict=True, report=None))


def _reason(exc: LoadError) -> str:
    text = str(exc)
    prefix = f"{exc.path}:{exc.line}: " if exc.line else f"{exc.path}: "
    return text[len(prefix):] if text.startswith(prefix) else text


def _walk(root: Path, problems: list[Skipped], seen: set[Path] | None = None) -> Iterator[Path]:
    """Files under ``root``; symlink loops and dangling links are reported, never followed twice."""
    seen = seen if seen is not None else {root.resolve()}
    try:
        items = sorted(root.iterdir())
    except OSError as exc:
        problems.append(Skipped(str(root), f"cannot list the folder: {exc.strerror or exc}"))
        return
    for item in items:
        if item.name.startswith("."):
            continue
        try:
            if item.is_dir():
                real = item.resolve(strict=True)
                if real in seen:
                    problems.append(Skipped(str(item), f"symlink loop: points back to {real}; skipped"))
                    continue
                yield from _walk(item, problems, seen | {real})
            elif item.is_file():
                yield item
            elif item.is_symlink():
                problems.append(Skipped(str(item), "broken symlink or symlink loop; fix or remove the link"))
        except (OSError, RuntimeError) as exc:
            problems.append(Skipped(str(item), f"cannot follow: {exc}; fix or remove the link"))


def _check_size(file: Path, max_mb: float) -> None:
    try:
        size = file.stat().st_size
    except OSError as exc:
        raise LoadError(str(file), f"cannot read: {exc.strerror or exc} (deleted or moved while "
                        "loading?)") from None
    if size > max_mb * 1e6:
        raise LoadError(str(file), f"file is {size / 1e6:.1f} MB, over the {max_mb:g} MB limit; split it, "
                        "or load with a larger max_file_mb")


def _default_id(file: Path, root: Path) -> str:
    try:
        rel = file.relative_to(root)
    except ValueError:
        rel = Path(file.name)
    stem = rel.with_suffix("").as_posix()
    return re.sub(r"[^A-Za-z0-9._:/-]+", "-", stem).strip("-") or "doc"


def _read_text(file: Path) -> str:
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


def _envelope(data: dict[str, Any], file: Path, line: int | None, defaults: dict[str, Any],
              lines: dict[str, int] | None = None) -> Envelope:
    merged = {**defaults, **data, "source_path": str(file)}
    try:
        return Envelope.from_mapping(merged)
    except ValidationError as exc:
        where = (lines or {}).get(exc.field or "", line)
        raise LoadError(str(file), str(exc), line=where, field=exc.field) from None


def _first_heading(text: str) -> str | None:
    match = _HEADING.search(text)
    return match.group(1).strip() if match else None


def _load_one(file: Path, root: Path, *, strict: bool, report: LoadReport | None) -> Iterator[Document]:
    suffix = file.suffix.lower()
    default_id = _default_id(file, root)
    if suffix == ".jsonl":
        yield from _load_jsonl(file, default_id, strict=strict, report=report)
        return
    if suffix == ".pdf":
        text = _read_pdf(file)
        defaults = {"doc_id": default_id, "title": file.stem, "source_type": "text"}
        yield Document(_envelope({}, file, None, defaults), text)
        return
    text = _read_text(file)
    if suffix in (".md", ".markdown"):
        meta, lines, body = _split_front_matter(text, file)
        title = _first_heading(body) or file.stem
        defaults = {"doc_id": default_id, "title": title, "source_type": "text"}
        yield Document(_envelope(meta, file, 1 if meta else None, defaults, lines), body)
    elif suffix in (".html", ".htm"):
        body, title = _html_to_text(text)
        defaults = {"doc_id": default_id, "title": title or _first_heading(body) or file.stem,
                    "source_type": "text"}
        yield Document(_envelope({}, file, None, defaults), body)
    elif suffix == ".py":
        defaults = {"doc_id": default_id, "title": file.name, "source_type": "code"}
        yield Document(_envelope({}, file, None, defaults), text)
    else:
        defaults = {"doc_id": default_id, "title": file.stem, "source_type": "text"}
        yield Document(_envelope({}, file, None, defaults), text)


def _split_front_matter(text: str, file: Path) -> tuple[dict[str, Any], dict[str, int], str]:
    """Split ``---`` YAML front matter from the body; also return each key's line number."""
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


def _load_jsonl(file: Path, default_id: str, *, strict: bool,
                report: LoadReport | None) -> Iterator[Document]:
    text = _read_text(file)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LoadError(str(file), f"not valid JSON ({exc.msg} at column {exc.colno})",
                                line=number) from None
            if not isinstance(record, dict):
                raise LoadError(str(file), "each line must be a JSON object", line=number)
            body = record.pop("text", None)
            if not isinstance(body, str):
                raise LoadError(str(file), "missing string field 'text'", line=number, field="text")
            record.setdefault("doc_id", f"{default_id}:{number}")
            if not record.get("title"):
                record["title"] = _first_heading(body) or str(record["doc_id"])
            yield Document(_envelope(record, file, number, {"source_type": "text"}), body)
        except LoadError as exc:
            if strict or report is None:
                raise
            report.skipped.append(Skipped(exc.path, _reason(exc), exc.line, exc.field))


def _read_pdf(file: Path) -> str:
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


def _html_to_text(html: str) -> tuple[str, str]:
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n[ \t]+", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
    return text, parser.title.strip()
