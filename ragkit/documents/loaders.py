"""Read a folder or a file into :class:`~ragkit.core.records.Document` records.

Supported: Markdown (``.md``, YAML front matter is the evidence envelope), plain
text (``.txt``), HTML (``.html``/``.htm``, converted to Markdown-like text so
headings and list items keep their structure; ``<meta name="ragkit:<field>">`` tags or one
``<script type="application/ragkit+json">`` carry the envelope), Python source (``.py``),
JSONL (``.jsonl``: one document per line, envelope fields beside ``text``) and PDF
(``.pdf``, through pypdf; ``/ragkit_<field>`` or ``/ragkit_envelope`` document-information
entries carry the envelope); :mod:`ragkit.documents.formats` reads each kind of file.
Every envelope, whatever file it comes from, is validated the same way: a bad field is a
:class:`~ragkit.core.errors.LoadError` naming the file, the line where there is one, and
the field.

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
from pathlib import Path
from typing import Any

from ragkit.core.errors import LoadError, ValidationError
from ragkit.core.records import Document, Envelope
from ragkit.documents.formats import (
    first_heading,
    html_envelope,
    read_pdf_document,
    read_text,
    split_front_matter,
)
from ragkit.documents.markup import html_to_text

__all__ = ["LoadReport", "Skipped", "load_corpus", "load_file", "walk", "SUPPORTED_SUFFIXES", "MAX_FILE_MB"]

SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm", ".py", ".jsonl", ".pdf")


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
    files = [root] if root.is_file() else sorted(walk(root, walk_problems))
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


def load_file(path: str | Path, *, root: str | Path | None = None,
              report: LoadReport | None = None) -> list[Document]:
    """Load one file strictly (raises :class:`LoadError` naming file, line and field).

    With ``report``, a JSONL file keeps its good lines: each bad line is added to
    ``report.skipped`` (file, line, reason) and loading goes on, as :func:`load_corpus` does.
    """
    file = Path(path)
    if not file.is_file():
        raise LoadError(str(file), "no such file")
    if file.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise LoadError(str(file), f"unsupported file type '{file.suffix}'; supported: "
                        f"{', '.join(SUPPORTED_SUFFIXES)}")
    return list(_load_one(file, Path(root) if root else file.parent, strict=report is None, report=report))


def _reason(exc: LoadError) -> str:
    text = str(exc)
    prefix = f"{exc.path}:{exc.line}: " if exc.line else f"{exc.path}: "
    return text[len(prefix):] if text.startswith(prefix) else text


def walk(root: Path, problems: list[Skipped], seen: set[Path] | None = None) -> Iterator[Path]:
    """Files under ``root`` (hidden ones skipped); symlink loops and dangling links are appended to
    ``problems``, never followed twice."""
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
                yield from walk(item, problems, seen | {real})
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


def _envelope(data: dict[str, Any], file: Path, line: int | None, defaults: dict[str, Any],
              lines: dict[str, int] | None = None) -> Envelope:
    merged = {**defaults, **data, "source_path": str(file)}
    try:
        return Envelope.from_mapping(merged)
    except ValidationError as exc:
        where = (lines or {}).get(exc.field or "", line)
        raise LoadError(str(file), str(exc), line=where, field=exc.field) from None


def _load_one(file: Path, root: Path, *, strict: bool, report: LoadReport | None) -> Iterator[Document]:
    suffix = file.suffix.lower()
    default_id = _default_id(file, root)
    if suffix == ".jsonl":
        yield from _load_jsonl(file, default_id, strict=strict, report=report)
        return
    if suffix == ".pdf":
        text, meta, pdf_title = read_pdf_document(file)
        defaults = {"doc_id": default_id, "title": pdf_title or file.stem, "source_type": "text"}
        yield Document(_envelope(meta, file, None, defaults), text)
        return
    text = read_text(file)
    if suffix in (".md", ".markdown"):
        meta, lines, body = split_front_matter(text, file)
        title = first_heading(body) or file.stem
        defaults = {"doc_id": default_id, "title": title, "source_type": "text"}
        yield Document(_envelope(meta, file, 1 if meta else None, defaults, lines), body)
    elif suffix in (".html", ".htm"):
        body, title = html_to_text(text)
        meta, lines = html_envelope(text, file)
        defaults = {"doc_id": default_id, "title": title or first_heading(body) or file.stem,
                    "source_type": "text"}
        yield Document(_envelope(meta, file, min(lines.values(), default=None), defaults, lines), body)
    elif suffix == ".py":
        defaults = {"doc_id": default_id, "title": file.name, "source_type": "code"}
        yield Document(_envelope({}, file, None, defaults), text)
    else:
        defaults = {"doc_id": default_id, "title": file.stem, "source_type": "text"}
        yield Document(_envelope({}, file, None, defaults), text)


def _load_jsonl(file: Path, default_id: str, *, strict: bool,
                report: LoadReport | None) -> Iterator[Document]:
    text = read_text(file)
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
                record["title"] = first_heading(body) or str(record["doc_id"])
            yield Document(_envelope(record, file, number, {"source_type": "text"}), body)
        except LoadError as exc:
            if strict or report is None:
                raise
            report.skipped.append(Skipped(exc.path, _reason(exc), exc.line, exc.field))


