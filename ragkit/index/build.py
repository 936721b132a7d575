"""From a folder to a ready index: build it once, then keep it up to date.

What ``ragkit index DIR``, the demo and the course notebooks all do: load a folder
(with its load report), then either build a new :class:`~ragkit.index.index.Index` or bring
the saved one up to date, encoding only new and changed documents, and save it. The index keeps
its corpus profile (:attr:`~ragkit.index.index.Index.profile`): the one read from ``profile`` (a
JSON file) when given, else one derived from the documents (:func:`ragkit.text.derive_profile`),
saved with the generation.

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

from ragkit.core.errors import IndexStateError, ValidationError
from ragkit.core.records import Document
from ragkit.documents.chunking import ChunkerSettings
from ragkit.documents.loaders import load_corpus
from ragkit.index.freshness import protect_unreadable
from ragkit.index.index import Index
from ragkit.index.profiles import with_profile
from ragkit.index.settings import IndexSettings
from ragkit.models.bundled import embedder_identity
from ragkit.models.runtime import workers
from ragkit.text.profile import CorpusProfile, load_profile
from ragkit.text.profile_derive import derive_profile

__all__ = ["DEFAULT_CACHE", "default_index_path", "read_profile_file", "build_or_update"]

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


def read_profile_file(path: str | Path) -> CorpusProfile:
    """The profile in the JSON file ``path`` (:func:`ragkit.text.load_profile`).

    Raises:
        ValidationError: no such file, or a field is unknown or malformed (the message names the
            file, the field and how to write it).
    """
    try:
        return load_profile(path)
    except (FileNotFoundError, IsADirectoryError):
        raise ValidationError(f"no profile file at {path}; write one with `ragkit profile DIR --out FILE`",
                              where=str(path)) from None


def _choose_profile(given: CorpusProfile | None, source: str, docs: list[Document], folder: Path,
                    index: Index | None) -> tuple[CorpusProfile, str]:
    """The profile to save with the index, and where it came from."""
    if given is not None:
        return given, source
    kept = index.manifest.get("profile_source") if index is not None else None
    if index is not None and kept not in (None, "derived"):
        return index.profile, str(kept)  # a file given at an earlier build stays until --rebuild
    return derive_profile(docs, name=folder.resolve().name), "derived"


def build_or_update(folder: Path, out: Path, *, rebuild: bool = False, strict: bool = False,
                    chunker: str = "structure", max_tokens: int = 200, progress: bool = True,
                    log: Callable[[str], Any] = _stderr, profile: str | Path | None = None) -> Index:
    """Load ``folder``; create the index at ``out`` or bring the existing one up to date.

    Unchanged documents are never re-encoded. Returns the :class:`~ragkit.index.index.Index`.
    ``log`` gets what was loaded and what changed; with ``progress``, also a line as a build
    starts, and loading and embedding show bars on stderr.

    Args:
        profile: a profile JSON file (checked before anything is loaded); without one the profile
            is derived from the documents (an index built earlier with a file keeps that file's
            profile until ``rebuild``). A ``profile.json`` beside the documents is not guessed.

    Raises:
        ValidationError: the profile file is missing or malformed (names the file and field).
    """
    t0 = time.perf_counter()
    given = read_profile_file(profile) if profile is not None else None
    docs, report = load_corpus(folder, strict=strict, progress=progress)
    log(str(report) if not report.ok else
        f"loaded {report.documents} documents from {report.files_read} files in {folder}")
    settings = IndexSettings(chunker=ChunkerSettings(method=chunker, max_tokens=max_tokens))
    index = None
    if not rebuild and ((out / "CURRENT").exists() or (out / "manifest.json").exists()):
        index = _open_existing(out, log)
    chosen, source = _choose_profile(given, str(profile), docs, folder, index)
    if index is not None:
        if index.settings.chunker != settings.chunker:
            log(f"chunker settings changed ({index.settings.chunker} -> {settings.chunker}): rebuilding")
            index = None
        elif _embedder_changed(index, settings):
            old = (index.manifest.get("embedder") or {}).get("name")
            log(f"the index was embedded with {old!r}, the configured embedder is another model: rebuilding")
            index = None
        else:
            to_sync, kept = protect_unreadable(index, docs, report)
            if kept:
                log(f"kept {len(kept)} indexed documents whose files failed to load: {', '.join(kept[:10])}")
            change = index.sync(to_sync, progress=progress)
            log(f"updated {out}: {change}")
            if not change.changed and index.manifest.get("profile") == chosen.to_json():
                return index
    if index is None:
        if progress:
            log(f"indexing {len(docs)} documents ({workers()} model workers)")
        index = Index.build(docs, settings, progress=progress)
    index.manifest = with_profile(index.manifest, chosen, source)
    index.save(out)
    stats = index.stats()
    log(f"indexed {stats['documents']} documents -> {stats['rows']} chunks ({stats['sections']} sections) "
        f"at {out} in {time.perf_counter() - t0:.1f}s")
    return index

