"""Keeping an index fresh: folder sync and watching, for the in-memory index and any other backend.

CURRICULUM section 9. An index is a derived store that lags its sources. Three tools:

* :func:`sync_folder` reconciles an index with a folder by content hash (added, updated,
  deleted, unchanged) and commits the change as one crash-safe generation. A file that
  fails to load is reported and its documents are *kept* as indexed (a half-written file
  never deletes what was there).
* :class:`Watcher` polls a folder (file size and mtime), applies each change as it
  happens (event-driven: only the changed files are read), and runs a full
  reconciliation every ``full_every`` seconds as the backstop for anything polling missed.
* :func:`~ragkit.index.staleness.staleness` reports how long the index took to reflect each
  source, and what is changed but not yet indexed.

What changed is decided once, by :mod:`ragkit.index.reconcile` (:func:`plan_sync`); the index
only applies the plan. Both tools work on a :class:`~ragkit.index.reconcile.SyncTarget`: an index
folder (:class:`IndexFolder`, the default when given a path) or a Milvus collection
(:class:`ragkit.backends.milvus.MilvusTarget`).

Example:
    >>> parse_duration("1h30m")
    5400.0
    >>> result = sync_folder("docs", ".ragkit-cache/index-docs")     # doctest: +SKIP
    >>> print(result.report)                                        # doctest: +SKIP
    added 1, updated 2, deleted 1, unchanged 57 documents; encoded 9 chunks
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragkit.core.errors import LoadError
from ragkit.core.records import Document
from ragkit.documents.loaders import LoadReport, Skipped, load_corpus, load_file
from ragkit.index.index import Index
from ragkit.index.reconcile import DocState, SyncPlan, SyncTarget, plan_sync, unreadable_ids
from ragkit.index.settings import SyncReport
from ragkit.index.staleness import StalenessReport, parse_duration, scan_folder, staleness

__all__ = ["FolderSync", "IndexFolder", "Watcher", "scan_folder", "StalenessReport", "sync_folder",
           "staleness", "parse_duration", "protect_unreadable"]


def _same_file(a: str, b: Path) -> bool:
    try:
        return Path(a).resolve() == b
    except OSError:
        return False


def protect_unreadable(index: Index, docs: list[Document], report: LoadReport) -> tuple[list[Document],
                                                                                       list[str]]:
    """Add back the indexed documents of files that failed to load, so a sync never deletes them.

    Returns ``(documents to sync, doc ids kept)``; the rule is
    :func:`~ragkit.index.reconcile.unreadable_ids`.
    """
    have = {d.doc_id for d in docs}
    kept = [d for d in unreadable_ids(index.doc_states(), report.skipped) if d not in have]
    return docs + [index.documents[d] for d in kept], kept


@dataclass
class FolderSync:
    """What one reconciliation did: the index change, load problems, documents kept, timing."""

    report: SyncReport
    problems: list[Skipped] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    generation: int = 0
    seconds: float = 0.0
    full: bool = True

    def __str__(self) -> str:
        lines = [f"{'full' if self.full else 'incremental'} sync: {self.report} "
                 f"(generation {self.generation}, {self.seconds:.2f}s)"]
        for name in ("added", "updated", "deleted"):
            ids = getattr(self.report, name)
            if ids:
                lines.append(f"  {name}: {', '.join(ids[:20])}{' ...' if len(ids) > 20 else ''}")
        lines += [f"  problem: {p}" for p in self.problems]
        if self.kept:
            lines.append(f"  kept as indexed (source failed to load): {', '.join(self.kept)}")
        return "\n".join(lines)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


class IndexFolder:
    """The in-memory index saved in a folder, as a :class:`~ragkit.index.reconcile.SyncTarget`.

    Opened on first use (loaded, upgraded from an older format, or absent: then the first
    :meth:`apply` builds it); every :meth:`apply` commits a new generation to ``path``.

    Args:
        path: the index folder (created if missing).
        embedder: the embedder (default: the one the index records, else the bundled one).
        index: the :class:`~ragkit.index.index.Index` already loaded from ``path`` (skips reloading it).
    """

    def __init__(self, path: str | Path, *, embedder: Any = None, index: Index | None = None) -> None:
        self.path = Path(path)
        self.embedder = embedder
        self.index = index

    def open(self) -> Index | None:
        """The index at :attr:`path` (``None`` when there is none yet)."""
        if self.index is None:
            if (self.path / "CURRENT").exists():
                self.index = Index.load(self.path, embedder=self.embedder)
            elif (self.path / "manifest.json").exists():
                self.index = Index.upgrade(self.path, embedder=self.embedder)
        return self.index

    def doc_states(self) -> dict[str, DocState]:
        """The stored states of the index's documents (``{}`` before the first commit)."""
        index = self.open()
        return {} if index is None else index.doc_states()

    def apply(self, plan: SyncPlan, *, progress: bool = False) -> SyncReport:
        """Apply ``plan`` (building the index when there is none) and commit it to :attr:`path`."""
        index = self.open()
        if index is None:
            self.index = index = Index.build(plan.changed, embedder=self.embedder, progress=progress)
            plan.report.encoded_rows = len(index.rows)
            report = plan.report
        else:
            report = index.apply_plan(plan, progress=progress)
        if report.changed or not (self.path / "CURRENT").exists():
            index.save(self.path)
        return report

    @property
    def generation(self) -> int:
        """The committed generation (0 before the first commit)."""
        return int(self.index.manifest.get("generation", 0)) if self.index is not None else 0

    def __str__(self) -> str:
        return f"the index at {self.path}"


def sync_folder(folder: str | Path, index_path: str | Path | None = None, *, embedder: Any = None,
                index: Index | None = None, target: SyncTarget | None = None, progress: bool = False,
                log: Callable[[str], Any] = _stderr) -> FolderSync:
    """Reconcile an index with ``folder`` by content hash and commit the change.

    The index is the folder ``index_path`` (created when it has none; pass ``index``, already
    loaded from it, to skip reloading it), or any ``target`` (a
    :class:`~ragkit.index.reconcile.SyncTarget`, e.g. a Milvus collection). What changed is
    decided by :func:`~ragkit.index.reconcile.plan_sync`; documents of files that fail to load
    are kept as indexed. With ``progress``, ``log`` gets a line as each stage starts (load,
    compare, commit) and loading and embedding show bars on stderr.
    """
    t0 = time.perf_counter()
    say = log if progress else (lambda _m: None)
    folder = Path(folder)
    if target is None:
        if index_path is None:
            raise TypeError("sync_folder needs index_path (an index folder) or target=")
        target = IndexFolder(index_path, embedder=embedder, index=index)
    docs, load_report = load_corpus(folder, progress=progress)
    say(f"loaded {len(docs)} documents from {folder}")
    stored = target.doc_states()
    say(f"comparing with {target} ({len(stored)} documents)")
    incoming = {d.doc_id for d in docs}
    kept = [d for d in unreadable_ids(stored, load_report.skipped) if d not in incoming]
    plan = plan_sync(docs, stored, keep=kept)
    report = plan.report
    if report.changed or not stored:
        say(f"committing {report} to {target}")
        report = target.apply(plan, progress=progress)
    return FolderSync(report, list(load_report.skipped), kept, target.generation, time.perf_counter() - t0)


class Watcher:
    """Polls ``folder`` and applies every change to an index as it happens.

    Each poll stats the supported files (size, mtime); only new, changed and removed
    files are read and applied, and the change is committed as one generation. Every
    ``full_every`` seconds a full :func:`sync_folder` runs as the backstop. The index is the
    folder ``index_path`` or any ``target`` (:class:`~ragkit.index.reconcile.SyncTarget`).

    ``log`` gets each change; with ``progress``, each full reconciliation also reports its stages
    on stderr (:func:`sync_folder`).

    Example:
        >>> w = Watcher("docs", ".ragkit-cache/index-docs", interval=2)   # doctest: +SKIP
        >>> w.run(max_polls=10)                                          # doctest: +SKIP
    """

    def __init__(self, folder: str | Path, index_path: str | Path | None = None, *,
                 target: SyncTarget | None = None, interval: float = 2.0, full_every: float = 300.0,
                 embedder: Any = None, log: Callable[[str], Any] = _stderr, progress: bool = False) -> None:
        self.folder = Path(folder)
        if target is None:
            if index_path is None:
                raise TypeError("Watcher needs index_path (an index folder) or target=")
            target = IndexFolder(index_path, embedder=embedder)
        self.target = target
        self.interval = parse_duration(interval, field_name="interval")
        self.full_every = parse_duration(full_every, field_name="full_every")
        self.log = log
        self.progress = progress
        self._seen: dict[Path, tuple[int, int]] = {}
        self._last_full: float | None = None
        self.stop_event = threading.Event()

    @property
    def index(self) -> Any:
        """The in-memory :class:`~ragkit.index.index.Index` being kept fresh (``None`` for another target)."""
        return getattr(self.target, "index", None)

    def scan(self) -> dict[Path, tuple[int, int]]:
        """``{resolved path: (mtime_ns, size)}`` of every supported, visible file."""
        return scan_folder(self.folder)

    def full(self) -> FolderSync:
        """A full reconciliation (also the first poll)."""
        seen = self.scan()
        result = sync_folder(self.folder, target=self.target, progress=self.progress)
        self._seen = seen
        self._last_full = time.monotonic()
        return result

    def poll_once(self) -> FolderSync | None:
        """Apply what changed since the last poll; ``None`` when nothing did."""
        if self._last_full is None or time.monotonic() - self._last_full >= self.full_every:
            return self.full()
        t0 = time.perf_counter()
        now = self.scan()
        changed = [p for p, sig in now.items() if self._seen.get(p) != sig]
        removed = [p for p in self._seen if p not in now]
        if not changed and not removed:
            return None
        stored = self.target.doc_states()
        problems: list[Skipped] = []
        new_docs: list[Document] = []
        by_file: dict[Path, set[str]] = {}
        for doc_id, state in stored.items():
            if state.source_path:
                by_file.setdefault(Path(state.source_path).resolve(), set()).add(doc_id)
        stale_ids: set[str] = set()
        for path in changed + removed:
            stale_ids |= by_file.get(path, set())
        for path in changed:
            lines = LoadReport(root=str(self.folder))
            try:
                new_docs += load_file(path, root=self.folder, report=lines)
            except LoadError as exc:
                problems.append(Skipped(exc.path, str(exc), exc.line, exc.field))
                stale_ids -= by_file.get(path, set())  # keep what the file had
                continue
            if lines.skipped:  # a JSONL file keeps its good lines; what the bad ones had stays indexed
                problems += lines.skipped
                stale_ids -= by_file.get(path, set())
        accepted = []
        for doc in new_docs:
            other = stored[doc.doc_id].source_path if doc.doc_id in stored else None
            mine = Path(doc.envelope.source_path).resolve()
            if other and not _same_file(other, mine) and Path(other).exists():
                problems.append(Skipped(doc.envelope.source_path, f"duplicate doc_id {doc.doc_id!r}, "
                                        f"already defined in {other}; give one of them another doc_id"))
                continue
            accepted.append(doc)
        plan = plan_sync(accepted, stored, delete_missing=False)
        plan.with_deleted(stale_ids - {d.doc_id for d in accepted}, stored)
        report = self.target.apply(plan) if plan.report.changed else plan.report
        self._seen = now
        return FolderSync(report, problems, [], self.target.generation, time.perf_counter() - t0,
                          full=False)

    def run(self, *, max_polls: int | None = None) -> None:
        """Poll until :attr:`stop_event` is set (or ``max_polls`` polls), logging each change."""
        polls = 0
        while not self.stop_event.is_set() and (max_polls is None or polls < max_polls):
            result = self.poll_once()
            if result is not None:
                self.log(str(result))
            polls += 1
            if max_polls is None or polls < max_polls:
                self.stop_event.wait(self.interval)
