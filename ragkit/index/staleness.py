"""Staleness measured like replication lag, on any index that records its documents' states.

:func:`staleness` reports, per document, how long the index took to reflect its source (index
time minus source change time: file mtime, else the envelope's ``ingested_at``) and, given the
folder, what is changed but not yet indexed: the p50/p95/max and the documents past a threshold.
It reads only :meth:`doc_states() <ragkit.index.reconcile.SyncTarget.doc_states>` (content hash,
source file, indexed and changed times), so an in-memory :class:`~ragkit.index.index.Index` and a
Milvus index (whose catalog collection stores the same states) report alike.

Example:
    >>> parse_duration("1h30m")
    5400.0
    >>> print(staleness(Index.load(".ragkit-cache/index-docs"), threshold="1h"))  # doctest: +SKIP
    staleness of 61 documents (0 changed but not indexed): p50 2.1s, p95 8.0s, max 1.2h
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.documents.loaders import SUPPORTED_SUFFIXES

__all__ = ["StalenessReport", "staleness", "parse_duration", "scan_folder"]

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
        """The quantiles, the threshold, the pending count and the documents past the threshold."""
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


def _utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc)


def staleness(index: Any, *, folder: str | Path | None = None, threshold: float | str = 3600.0,
              now: dt.datetime | None = None) -> StalenessReport:
    """How far the index lags its sources, per document, like replication lag.

    ``index`` is anything with ``doc_states()``: an :class:`~ragkit.index.index.Index` or a
    :class:`~ragkit.backends.milvus.MilvusIndex`. For each indexed document: when the index
    reflected it minus when its source last changed (as recorded at sync time). With ``folder``:
    files changed since their documents were indexed, new files not yet indexed and indexed files
    since removed are *pending*, their lag growing until a sync (``now`` minus the change; a
    removal is dated by its folder's mtime).
    """
    limit = parse_duration(threshold, field_name="threshold")
    now = now or dt.datetime.now(dt.timezone.utc)
    states = index.doc_states()
    lags: dict[str, float] = {}
    for doc_id, state in states.items():
        a, b = state.indexed_at, state.source_changed_at
        if a and b:
            lags[doc_id] = max(0.0, (dt.datetime.fromisoformat(a) - dt.datetime.fromisoformat(b))
                               .total_seconds())
    pending: dict[str, float] = {}
    if folder is not None:
        root = Path(folder)
        by_file: dict[Path, list[str]] = {}
        for doc_id, state in states.items():
            if state.source_path:
                by_file.setdefault(Path(state.source_path).resolve(), []).append(doc_id)
        files = scan_folder(root)
        for path, (mtime_ns, _size) in files.items():
            changed = _utc(mtime_ns / 1e9)
            ids = by_file.get(path)
            if not ids:
                pending[str(path)] = max(0.0, (now - changed).total_seconds())
                continue
            for doc_id in ids:
                done = states[doc_id].indexed_at
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
