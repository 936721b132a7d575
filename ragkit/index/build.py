"""From a folder to a ready index: build it once, then keep it up to date.

What ``ragkit index DIR``, the demo and the course notebooks all do: load a folder
(with its load report), then either build a new :class:`~ragkit.index.index.Index` or bring
the saved one up to date, encoding only new and changed documents, and save it.

Example:
    >>> from pathlib import Path
    >>> default_index_path(Path("docs"))
    PosixPath('.ragkit-cache/index-docs')
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragkit.core.errors import IndexStateError
from ragkit.documents.chunking import ChunkerSettings
from ragkit.documents.loaders import load_corpus
from ragkit.index.freshness import protect_unreadable
from ragkit.index.index import Index
from ragkit.index.settings import IndexSettings
from ragkit.models.bundled import embedder_identity

__all__ = ["DEFAULT_CACHE", "default_index_path", "build_or_update"]

#: Where indexes and caches go unless told otherwise (relative to the working directory).
DEFAULT_CACHE = Path(".ragkit-cache")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def default_index_path(folder: Path) -> Path:
    """Where ``ragkit index DIR`` writes when ``--out`` is not given: ``.ragkit-cache/<name>``."""
    name = folder.resolve().name or "index"
    return DEFAULT_CACHE / f"index-{name}"


def _open_existing(out: Path, log: Callable[[str], Any]) -> Index | None:
    """The saved index at ``out``; a format-1 folder is upgraded in place (no re-encoding); a damaged
    one falls back to its newest intact generation; ``None`` when nothing usable is there (rebuild)."""
    try:
        return Index.load(out)
    except IndexStateError as exc:
        first = exc
    try:
        if not (out / "CURRENT").exists():
            index = Index.upgrade(out)
            log(f"upgraded {out} to the current index format (nothing re-encoded)")
            return index
        index = Index.recover(out)
        log(f"{first}\nrecovered generation {index.manifest.get('generation')} of {out}")
        return index
    except IndexStateError as exc:
        log(f"{exc}\nrebuilding {out}")
        return None


def _embedder_changed(index: Index, settings: IndexSettings) -> bool:
    """True when ``index`` was embedded with another model than ``settings`` configure (its vectors
    would not be comparable with new queries): checked from names and file fingerprints, no model load."""
    recorded = index.manifest.get("embedder") or {}
    if not recorded.get("name"):
        return False
    return (recorded.get("name"), recorded.get("version")) != embedder_identity(settings.embedder)


def build_or_update(folder: Path, out: Path, *, rebuild: bool = False, strict: bool = False,
                    chunker: str = "structure", max_tokens: int = 200, progress: bool = True,
                    log: Callable[[str], Any] = _stderr) -> Index:
    """Load ``folder``; create the index at ``out`` or bring the existing one up to date.

    Unchanged documents are never re-encoded. Returns the :class:`~ragkit.index.index.Index`.
    """
    t0 = time.perf_counter()
    docs, report = load_corpus(folder, strict=strict, progress=progress)
    log(str(report) if not report.ok else
        f"loaded {report.documents} documents from {report.files_read} files in {folder}")
    settings = IndexSettings(chunker=ChunkerSettings(method=chunker, max_tokens=max_tokens))
    index = None
    if not rebuild and ((out / "CURRENT").exists() or (out / "manifest.json").exists()):
        index = _open_existing(out, log)
    if index is not None:
        if index.settings.chunker != settings.chunker:
            log(f"chunker settings changed ({index.settings.chunker} -> {settings.chunker}): rebuilding")
            index = Index.build(docs, settings, progress=progress)
        elif _embedder_changed(index, settings):
            old = (index.manifest.get("embedder") or {}).get("name")
            log(f"the index was embedded with {old!r}, the configured embedder is another model: rebuilding")
            index = Index.build(docs, settings, progress=progress)
        else:
            to_sync, kept = protect_unreadable(index, docs, report)
            if kept:
                log(f"kept {len(kept)} indexed documents whose files failed to load: {', '.join(kept[:10])}")
            change = index.sync(to_sync, progress=progress)
            log(f"updated {out}: {change}")
            if not change.changed:
                return index
    else:
        index = Index.build(docs, settings, progress=progress)
    index.save(out)
    stats = index.stats()
    log(f"indexed {stats['documents']} documents -> {stats['rows']} chunks ({stats['sections']} sections) "
        f"at {out} in {time.perf_counter() - t0:.1f}s")
    return index

