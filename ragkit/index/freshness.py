"""Keeping an index fresh: folder sync, watching, and staleness measured like replication lag.

CURRICULUM section 9. An index is a derived store that lags its sources. Three tools:

* :func:`sync_folder` reconciles an index with a folder by content hash (added, updated,
  deleted, unchanged) and commits the change as one crash-safe generation. A file that
  fails to load is reported and its documents are *kept* as indexed (a half-written file
  never deletes what was there).
* :class:`Watcher` polls a folder (file size and mtime), applies each change as it
  happens (event-driven: only the changed files are read), and runs a full
  reconciliation every ``full_every`` seconds as the backstop for anything polling missed.
* :func:`staleness` reports, per document, how long the index took to reflect its
  source (index time minus source change time: file mtime, else the envelope's
  ``ingested_at``) and, given the folder, what is changed but not yet indexed: the
  p50/p95/max and the documents past a threshold.

Example:
    >>> parse_duration("1h30m")
    5400.0
    >>> result = sync_folder("docs", ".ragkit-cache/index-docs")     # doctest: +SKIP
    >>> print(result.report)                                        # doctest: +SKIP
    added 1, updated 2, deleted 1, unchanged 57 documents; encoded 9 chunks
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.core.errors import LoadError, ValidationError
from ragkit.core.records import Document
from ragkit.documents.loaders import SUPPORTED_SUFFIXES, LoadReport, Skipped, load_corpus, load_file
from ragkit.index.index import Index
from ragkit.index.settings import SyncReport

__all__ = ["FolderSync", "Watcher", "scan_folder", "StalenessReport", "sync_folder", "staleness",
           "parse_duration", "protect_unreadable"]

_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str | float, *, field_name: str = "duration") -> float:
    """Seconds in ``"90"``, ``"45s"``, ``"10m"``, ``"1h30m"`` or ``"2d"`` (must be > 0).

    Raises:
        ValidationError: anything else, with an example of a valid value.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        raw = str(text).strip().lower()
        parts = _DURATION_RE.findall(raw)
        if not raw or "".join(n + u for n, u in parts) != raw:
            raise ValidationError(f"{field_name}={text!r} is not a duration; write e.g. 30s, 10m, 1h or 2d",
                                  field=field_name)
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if not seconds > 0:
        raise ValidationError(f"{field_name}={text!r} must be more than 0 seconds", field=field_name)
    return seconds


def _utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc)


def _same_file(a: str, b: Path) -> bool:
    try:
        return Path(a).resolve() == b
    except OSError:
        return False


def protect_unreadable(index: Index, docs: list[Document], report: LoadReport) -> tuple[list[Document],
                                                                                       list[str]]:
    """Add back the indexed documents of files that failed to load, so a sync never deletes them.

    Returns ``(documents to sync, doc ids kept)``.
    """
    broken = {Path(s.path).resolve() for s in report.skipped if Path(s.path).exists()}
    if not broken:
        return docs, []
    have = {d.doc_id for d in docs}
    kept = [d for d in index.documents.values() if d.doc_id not in have and d.envelope.source_path
            and Path(d.envelope.source_path).resolve() in broken]
    return docs + kept, [d.doc_id for d in kept]


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


def _open_or_build(index_path: Path, docs: list[Document], embedder: Any, progress: bool,
                   say: Callable[[str], Any]) -> tuple[Index, bool]:
    if (index_path / "CURRENT").exists():
        return Index.load(index_path, embedder=embedder), False
    if (index_path / "manifest.json").exists():
        return Index.upgrade(index_path, embedder=embedder), False
    say(f"indexing {len(docs)} documents into a new index at {index_path}")
    return Index.build(docs, embedder=embedder, progress=progress), True


def sync_folder(folder: str | Path, index_path: str | Path, *, embedder: Any = None,
                index: Index | None = None, progress: bool = False,
                log: Callable[[str], Any] = _stderr) -> FolderSync:
    """Reconcile the index at ``index_path`` with ``folder`` by content hash and commit the change.

    Creates the index when the path has none. Pass ``index`` (already loaded from
    ``index_path``) to skip reloading it. With ``progress``, ``log`` gets a line as each stage
    starts (load, compare or build, commit) and loading and embedding show bars on stderr.
    """
    t0 = time.perf_counter()
    say = log if progress else (lambda _m: None)
    folder, index_path = Path(folder), Path(index_path)
    docs, load_report = load_corpus(folder, progress=progress)
    say(f"loaded {len(docs)} documents from {folder}")
    if index is None:
        index, fresh = _open_or_build(index_path, docs, embedder, progress, say)
    else:
        fresh = False
    if fresh:
        report = SyncReport(added=[d.doc_id for d in docs], encoded_rows=len(index.rows))
        kept: list[str] = []
    else:
        say(f"comparing with the index at {index_path} ({len(index.documents)} documents)")
        to_sync, kept = protect_unreadable(index, docs, load_report)
        report = index.sync(to_sync, progress=progress)
    if fresh or report.changed:
        say(f"committing the change to {index_path}")
        index.save(index_path)
    return FolderSync(report, list(load_report.skipped), kept, int(index.manifest.get("generation", 0)),
                      time.perf_counter() - t0)


def scan_folder(folder: Path) -> dict[Path, tuple[int, int]]:
    """``{resolved path: (mtime_ns, size)}`` of every supported, visible file under ``folder``
    (symlinked folders are not followed, so a symlink loop cannot trap the scan)."""
    out: dict[Path, tuple[int, int]] = {}
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if any(p.startswith(".") for p in rel.parts) or path.suffix.lower() not in SUPPORTED_SUFFIXES:
            continue
        try:
            st = path.stat()
        except OSError:
            continue
        if path.is_file():
            out[path.resolve()] = (st.st_mtime_ns, st.st_size)
    return out


class Watcher:
    """Polls ``folder`` and applies every change to the index at ``index_path`` as it happens.

    Each poll stats the supported files (size, mtime); only new, changed and removed
    files are read and applied, and the change is committed as one generation. Every
    ``full_every`` seconds a full :func:`sync_folder` runs as the backstop.

    ``log`` gets each change; with ``progress``, each full reconciliation also reports its stages
    on stderr (:func:`sync_folder`).

    Example:
        >>> w = Watcher("docs", ".ragkit-cache/index-docs", interval=2)   # doctest: +SKIP
        >>> w.run(max_polls=10)                                          # doctest: +SKIP
    """

    def __init__(self, folder: str | Path, index_path: str | Path, *, interval: float = 2.0,
                 full_every: float = 300.0, embedder: Any = None,
                 log: Callable[[str], Any] = _stderr, progress: bool = False) -> None:
        self.folder = Path(folder)
        self.index_path = Path(index_path)
        self.interval = parse_duration(interval, field_name="interval")
        self.full_every = parse_duration(full_every, field_name="full_every")
        self.embedder = embedder
        self.log = log
        self.progress = progress
        self.index: Index | None = None
        self._seen: dict[Path, tuple[int, int]] = {}
        self._last_full = 0.0
        self.stop_event = threading.Event()

    def scan(self) -> dict[Path, tuple[int, int]]:
        """``{resolved path: (mtime_ns, size)}`` of every supported, visible file."""
        return scan_folder(self.folder)

    def full(self) -> FolderSync:
        """A full reconciliation (also the first poll)."""
        result = sync_folder(self.folder, self.index_path, embedder=self.embedder, index=self.index,
                             progress=self.progress)
        self.index = self.index or Index.load(self.index_path, embedder=self.embedder)
        self._seen = self.scan()
        self._last_full = time.monotonic()
        return result

    def poll_once(self) -> FolderSync | None:
        """Apply what changed since the last poll; ``None`` when nothing did."""
        if self.index is None or time.monotonic() - self._last_full >= self.full_every:
            return self.full()
        t0 = time.perf_counter()
        now = self.scan()
        changed = [p for p, sig in now.items() if self._seen.get(p) != sig]
        removed = [p for p in self._seen if p not in now]
        if not changed and not removed:
            return None
        index = self.index
        problems: list[Skipped] = []
        new_docs: list[Document] = []
        by_file: dict[Path, set[str]] = {}
        for d in index.documents.values():
            if d.envelope.source_path:
                by_file.setdefault(Path(d.envelope.source_path).resolve(), set()).add(d.doc_id)
        stale_ids: set[str] = set()
        for path in changed + removed:
            stale_ids |= by_file.get(path, set())
        for path in changed:
            try:
                new_docs += load_file(path, root=self.folder)
            except LoadError as exc:
                problems.append(Skipped(exc.path, str(exc), exc.line, exc.field))
                stale_ids -= by_file.get(path, set())  # keep what the file had
        owners = {d.doc_id: d.envelope.source_path for d in index.documents.values()}
        accepted = []
        for doc in new_docs:
            other = owners.get(doc.doc_id)
            mine = Path(doc.envelope.source_path).resolve()
            if other and not _same_file(other, mine) and Path(other).exists():
                problems.append(Skipped(doc.envelope.source_path, f"duplicate doc_id {doc.doc_id!r}, "
                                        f"already defined in {other}; give one of them another doc_id"))
                continue
            accepted.append(doc)
        report = index.add(accepted)
        gone = sorted(stale_ids - {d.doc_id for d in accepted})
        if gone:
            report.deleted = index.delete(gone).deleted
        if report.changed:
            index.save(self.index_path)
        self._seen = now
        return FolderSync(report, problems, [], int(index.manifest.get("generation", 0)),
                          time.perf_counter() - t0, full=False)

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


@dataclass
class StalenessReport:
    """Per-document lag between a source change and the index reflecting it (seconds)."""

    lags: dict[str, float]
    pending: dict[str, float]
    threshold: float
    now: dt.datetime

    def _all(self) -> np.ndarray:
        return np.array(list(self.lags.values()) + list(self.pending.values()), dtype=np.float64)

    def quantiles(self) -> dict[str, float]:
        """``count``, ``p50``, ``p95``, ``max`` over reflected and pending documents."""
        lags = self._all()
        if not len(lags):
            return {"count": 0, "p50": 0.0, "p95": 0.0, "max": 0.0}
        return {"count": int(len(lags)), "p50": float(np.percentile(lags, 50)),
                "p95": float(np.percentile(lags, 95)), "max": float(lags.max())}

    @property
    def past_threshold(self) -> list[tuple[str, float, str]]:
        """``(document or file, lag, "indexed" | "pending")`` over the threshold, worst first."""
        rows = [(k, v, "indexed") for k, v in self.lags.items() if v > self.threshold]
        rows += [(k, v, "pending") for k, v in self.pending.items() if v > self.threshold]
        return sorted(rows, key=lambda r: -r[1])

    def to_json(self) -> dict[str, Any]:
        return {**self.quantiles(), "threshold_s": self.threshold, "now": self.now.isoformat(),
                "pending": len(self.pending),
                "past_threshold": [{"id": k, "lag_s": v, "state": s} for k, v, s in self.past_threshold]}

    def __str__(self) -> str:
        q = self.quantiles()
        lines = [f"staleness of {q['count']} documents ({len(self.pending)} changed but not indexed): "
                 f"p50 {_fmt(q['p50'])}, p95 {_fmt(q['p95'])}, max {_fmt(q['max'])}",
                 f"{len(self.past_threshold)} past the threshold of {_fmt(self.threshold)}"]
        lines += [f"  {state:8} {_fmt(lag):>8}  {key}" for key, lag, state in self.past_threshold[:50]]
        return "\n".join(lines)


def _fmt(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f}s"
    if seconds < 3600:
        return f"{seconds / 60:.1f}m"
    return f"{seconds / 3600:.1f}h"


def staleness(index: Index, *, folder: str | Path | None = None, threshold: float | str = 3600.0,
              now: dt.datetime | None = None) -> StalenessReport:
    """How far the index lags its sources, per document, like replication lag.

    For each indexed document: when the index reflected it minus when its source last
    changed (as recorded at sync time). With ``folder``: files changed since their
    documents were indexed, new files not yet indexed and indexed files since removed
    are *pending*, their lag growing until a sync (``now`` minus the change; a removal
    is dated by its folder's mtime).
    """
    limit = parse_duration(threshold, field_name="threshold")
    now = now or dt.datetime.now(dt.timezone.utc)
    indexed_at = index.manifest.get("indexed_at", {})
    changed_at = index.manifest.get("source_changed_at", {})
    lags: dict[str, float] = {}
    for doc_id in index.documents:
        a, b = indexed_at.get(doc_id), changed_at.get(doc_id)
        if a and b:
            lags[doc_id] = max(0.0, (dt.datetime.fromisoformat(a) - dt.datetime.fromisoformat(b))
                               .total_seconds())
    pending: dict[str, float] = {}
    if folder is not None:
        root = Path(folder)
        by_file: dict[Path, list[str]] = {}
        for d in index.documents.values():
            if d.envelope.source_path:
                by_file.setdefault(Path(d.envelope.source_path).resolve(), []).append(d.doc_id)
        files = scan_folder(root)
        for path, (mtime_ns, _size) in files.items():
            changed = _utc(mtime_ns / 1e9)
            ids = by_file.get(path)
            if not ids:
                pending[str(path)] = max(0.0, (now - changed).total_seconds())
                continue
            for doc_id in ids:
                done = indexed_at.get(doc_id)
                if done and changed > dt.datetime.fromisoformat(done):
                    pending[doc_id] = max(0.0, (now - changed).total_seconds())
                    lags.pop(doc_id, None)
        for path, ids in by_file.items():
            if path not in files and _inside(path, root):
                try:
                    gone = _utc(path.parent.stat().st_mtime) if path.parent.exists() else now
                except OSError:
                    gone = now
                for doc_id in ids:
                    pending[doc_id] = max(0.0, (now - gone).total_seconds())
                    lags.pop(doc_id, None)
    return StalenessReport(lags, pending, limit, now)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root.resolve())
        return True
    except ValueError:
        return False
