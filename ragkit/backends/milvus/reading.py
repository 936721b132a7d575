"""Reading a corpus folder file by file, as the read stage of an ingestion does.

:func:`corpus_files` lists the files in the order :func:`~ragkit.documents.loaders.load_corpus`
reads them; :func:`load_path` loads one of them and turns every failure into a
:class:`~ragkit.documents.loaders.Skipped` (so one broken file never drops the others, and a
JSONL file keeps its good lines, each bad one reported by file and line);
:func:`duplicate_skip` reports a second document with an id already seen (the first file in
sorted path order wins, as in ``load_corpus``).
"""

from __future__ import annotations

from pathlib import Path

from ragkit.core.errors import LoadError
from ragkit.core.records import Document
from ragkit.documents.loaders import SUPPORTED_SUFFIXES, LoadReport, Skipped, load_file, walk

__all__ = ["corpus_files", "load_path", "duplicate_skip"]


def corpus_files(source: str | Path) -> tuple[Path, list[Path], list[Skipped]]:
    """The files under ``source`` in the order :func:`~ragkit.documents.loaders.load_corpus` reads them.

    Returns:
        ``(root, files, problems)``: ``root`` is the folder document ids are relative to,
        ``files`` every non-hidden file (sorted; supported or not: the read stage reports
        unsupported ones), ``problems`` links that cannot be followed.

    Raises:
        LoadError: ``source`` does not exist.
    """
    path = Path(source)
    if not path.exists():
        raise LoadError(str(path), f"no such file or folder; check the path (relative paths start from "
                        f"{Path.cwd()})")
    problems: list[Skipped] = []
    if path.is_file():
        return path.parent, [path], problems
    return path, sorted(walk(path, problems)), problems


def load_path(path: str, root: str, max_file_mb: float) -> tuple[list[Document], list[Skipped]] | Skipped:
    """One file's documents and its skipped JSONL lines, or why the whole file was skipped (the
    per-file step of load_corpus).

    Never raises for a broken file: an unsupported suffix, a file over ``max_file_mb``, an
    unreadable file or a :class:`~ragkit.core.errors.LoadError` becomes a
    :class:`~ragkit.documents.loaders.Skipped` with the reason. A JSONL file keeps its good lines;
    each bad one is reported by file and line.
    """
    file = Path(path)
    if file.suffix.lower() not in SUPPORTED_SUFFIXES:
        return Skipped(path, f"unsupported file type '{file.suffix}'; supported: "
                       f"{', '.join(SUPPORTED_SUFFIXES)}")
    lines = LoadReport(root=root)
    try:
        size = file.stat().st_size
        if size > max_file_mb * 1e6:
            return Skipped(path, f"file is {size / 1e6:.1f} MB, over the {max_file_mb:g} MB limit; split "
                           "it, or ingest with a larger max_file_mb")
        return load_file(file, root=root, report=lines), list(lines.skipped)
    except OSError as exc:
        return Skipped(path, f"cannot read: {exc.strerror or exc} (deleted or moved while loading?)")
    except LoadError as exc:
        text = str(exc)
        prefix = f"{exc.path}:{exc.line}: " if exc.line else f"{exc.path}: "
        return Skipped(exc.path, text[len(prefix):] if text.startswith(prefix) else text, exc.line,
                       exc.field)


def duplicate_skip(doc_id: str, first: str, path: str) -> Skipped:
    """The skip record of a second document with ``doc_id`` (the first, in ``first``, is kept)."""
    return Skipped(path, f"duplicate doc_id {doc_id!r}, first defined in {first}; give one of them another "
                   "doc_id", field="doc_id")
