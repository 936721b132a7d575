"""Durable index storage: immutable segments, numbered generations, one atomic commit point.

The on-disk layout of an index folder (format 3; format 2 differs only inside segments)::

    CURRENT                 "gen-000007.json <sha256>": the commit point, replaced atomically
    gen-000007.json         generation manifest: settings, models, segment list with file
                            checksums, which segment holds each document, per-document
                            fingerprints and times, tombstones
    gen-000006.json         the previous generation, kept for recovery
    segments/<name>/        one immutable batch of rows: documents.parquet, chunks.parquet
                            (columnar), vectors.npy and postings-*.npy (memory-mapped on
                            load), vocab.txt, and dense.faiss when its dense index is HNSW
                            (format 2: documents.jsonl, chunks.jsonl, postings.npz)
    .lock                   writers take an exclusive flock; readers never lock

A save writes only the segments that are not on disk yet, then the generation
manifest, then ``CURRENT`` (temp file, fsync, ``os.replace``, fsync of the folder),
as LevelDB and Lucene commit points do. A crash before the replace leaves the
previous generation current; after it, the new one; loose files of an unfinished
save are removed by the next save. Generations older than the previous one, and
segments no kept generation uses, are deleted after each commit.

Crash points: :func:`crash_point` ends the process (``os._exit(1)``) when the
environment variable ``RAGKIT_CRASH_AT`` names the step; ``tests/test_crash.py``
kills a child process at every step in :data:`CRASH_POINTS` and reloads.

Example:
    >>> crash_point("save:committed")   # no-op unless RAGKIT_CRASH_AT=save:committed
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ragkit.core.errors import IndexStateError

__all__ = ["CRASH_POINTS", "crash_point", "sha256_file", "sha256_files", "fsync_dir", "fsync_file",
           "write_durable", "writer_lock", "current_generation", "generation_names", "generation_number",
           "read_generation", "commit_generation", "cleanup", "SEGMENTS", "LEGACY_FILES"]

#: Every step at which tests inject a crash (in the order a save passes them).
CRASH_POINTS = ("save:segment-partial", "save:segment", "save:manifest-tmp", "save:manifest",
                "save:current-tmp", "save:committed", "save:cleanup")
#: The folder of the segments, inside an index folder.
SEGMENTS = "segments"
#: The files of a format-1 index (one flat folder), removed by the first cleanup after an upgrade.
LEGACY_FILES = ("manifest.json", "documents.jsonl", "chunks.jsonl", "vectors.npy")
_GEN_RE = re.compile(r"^gen-(\d{6,})\.json$")


def crash_point(step: str) -> None:
    """End the process at once if ``RAGKIT_CRASH_AT`` equals ``step`` (crash-safety tests)."""
    if os.environ.get("RAGKIT_CRASH_AT") == step:
        os._exit(1)


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_files(paths: list[Path], threads: int = 2) -> list[str]:
    """Hex sha256 of several files, hashed in ``threads`` threads (hashlib releases the GIL)."""
    if len(paths) < 2 or threads < 2:
        return [sha256_file(p) for p in paths]
    by_size = sorted(range(len(paths)), key=lambda i: -paths[i].stat().st_size)  # largest first
    with ThreadPoolExecutor(max_workers=threads) as pool:
        digests = dict(zip(by_size, pool.map(lambda i: sha256_file(paths[i]), by_size), strict=True))
    return [digests[i] for i in range(len(paths))]


#: fsync on commit (default). ``RAGKIT_FSYNC=0`` turns it off for throwaway test indexes: a crash of
#: the process still leaves a loadable index; a power cut may then lose the last commits.
FSYNC = os.environ.get("RAGKIT_FSYNC", "1") != "0"


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (renames, creations) to disk."""
    if not FSYNC:
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    """Flush a file's bytes to disk."""
    if not FSYNC:
        return
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def write_durable(path: Path, data: bytes, *, crash_step: str | None = None) -> None:
    """Write ``data`` to ``path`` atomically: temp file, fsync, ``os.replace``, fsync folder."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        if FSYNC:
            os.fsync(fh.fileno())
    if crash_step:
        crash_point(crash_step)
    os.replace(tmp, path)
    fsync_dir(path.parent)


_THREAD_LOCKS: dict[str, threading.RLock] = {}
_HELD: dict[str, int] = {}
_GUARD = threading.Lock()


@contextlib.contextmanager
def writer_lock(root: Path) -> Iterator[None]:
    """Exclusive writer lock on an index folder: an flock across processes, an RLock across
    threads; re-entrant within one thread (an upgrade that saves takes it twice)."""
    root.mkdir(parents=True, exist_ok=True)
    key = str(root.resolve())
    with _GUARD:
        rlock = _THREAD_LOCKS.setdefault(key, threading.RLock())
    with rlock:
        if _HELD.get(key):
            _HELD[key] += 1
            try:
                yield
            finally:
                _HELD[key] -= 1
            return
        with open(root / ".lock", "a+") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            _HELD[key] = 1
            try:
                yield
            finally:
                _HELD[key] = 0
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def generation_names(root: Path) -> list[str]:
    """Generation manifests present in ``root``, oldest first."""
    if not root.is_dir():
        return []
    return sorted((p.name for p in root.iterdir() if _GEN_RE.match(p.name)),
                  key=lambda n: int(_GEN_RE.match(n).group(1)))  # type: ignore[union-attr]


def generation_number(name: str) -> int:
    """The number of generation manifest ``name`` (``gen-000007.json`` -> 7; 0 for any other name)."""
    match = _GEN_RE.match(name)
    return int(match.group(1)) if match else 0


def current_generation(root: Path) -> tuple[str, str] | None:
    """``(manifest name, sha256)`` named by ``CURRENT``, or ``None`` when there is no CURRENT."""
    current = root / "CURRENT"
    if not current.is_file():
        return None
    parts = current.read_text(encoding="utf-8").split()
    if len(parts) != 2 or not _GEN_RE.match(parts[0]):
        raise IndexStateError(f"{current} is damaged (expected 'gen-NNNNNN.json <sha256>'); "
                              f"recover with `ragkit.index.index.Index.recover('{root}')`, which points it "
                              "at the newest intact generation")
    return parts[0], parts[1]


def read_generation(root: Path, name: str, expected_sha: str | None) -> dict[str, Any]:
    """Read and check one generation manifest (its checksum is recorded in CURRENT)."""
    path = root / name
    if not path.is_file():
        raise IndexStateError(f"{path} is missing: the index folder was edited by hand. Recover the "
                              f"newest intact generation with `Index.recover('{root}')`, or rebuild")
    if expected_sha is not None and sha256_file(path) != expected_sha:
        raise IndexStateError(f"{path} does not match the checksum recorded in CURRENT (damaged or "
                              f"edited by hand); recover the previous generation with "
                              f"`Index.recover('{root}')`, or rebuild the index")
    raw = path.read_bytes()
    match = _CHECKSUM_TAIL.search(raw)
    intact = match is not None and \
        hashlib.sha256(raw[:match.start()] + b"}").hexdigest() == match.group(1).decode()
    try:
        manifest = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise IndexStateError(f"{path} is damaged ({exc}); recover the previous generation with "
                              f"`Index.recover('{root}')`, or rebuild the index") from None
    if not isinstance(manifest, dict):
        raise IndexStateError(f"{path} is not a generation manifest; rebuild the index")
    if not match:  # written before 2026-11-30 21:55: a sorted, indented manifest with a checksum member
        body = {k: v for k, v in manifest.items() if k != "checksum"}
        legacy = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        intact = manifest.get("checksum") == legacy
    if not intact:
        raise IndexStateError(f"{path} does not match its own checksum (damaged or edited by hand); "
                              f"recover the previous generation with `Index.recover('{root}')`, or "
                              "rebuild the index")
    return manifest


_CHECKSUM_TAIL = re.compile(rb',"checksum":"([0-9a-f]{64})"\}\s*\Z')


def _serialise(manifest: dict[str, Any]) -> bytes:
    """Compact JSON whose last member is the sha256 of everything before it (one dump, no re-dump
    to verify)."""
    body = json.dumps({k: v for k, v in manifest.items() if k != "checksum"}, sort_keys=True,
                      separators=(",", ":")).encode()
    digest = hashlib.sha256(body).hexdigest()
    return body[:-1] + f',"checksum":"{digest}"}}'.encode()


def commit_generation(root: Path, manifest: dict[str, Any]) -> str:
    """Write generation manifest ``manifest["generation"]`` and make it current (the commit)."""
    name = f"gen-{int(manifest['generation']):06d}.json"
    data = _serialise(manifest)
    tmp = root / (name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        if FSYNC:
            os.fsync(fh.fileno())
    crash_point("save:manifest-tmp")
    os.replace(tmp, root / name)
    fsync_dir(root)
    crash_point("save:manifest")
    digest = hashlib.sha256(data).hexdigest()
    write_durable(root / "CURRENT", f"{name} {digest}\n".encode(), crash_step="save:current-tmp")
    crash_point("save:committed")
    return name


def cleanup(root: Path, keep_generations: int = 2, current_segments: list[str] | None = None) -> list[str]:
    """Delete stale generations (all but the newest ``keep_generations`` up to CURRENT), segments
    no kept generation references, temp leftovers and format-1 files. Returns what was removed."""
    removed: list[str] = []
    cur = current_generation(root)
    if cur is None:
        return removed
    current_no = generation_number(cur[0])
    names = [n for n in generation_names(root) if generation_number(n) <= current_no]
    keep = set(names[-keep_generations:]) | {cur[0]}
    referenced: set[str] = set(current_segments or [])
    for name in keep:
        if current_segments is not None and name == cur[0]:
            continue
        with contextlib.suppress(OSError, ValueError, IndexStateError):
            data = json.loads((root / name).read_text(encoding="utf-8"))
            referenced.update(s["name"] for s in data.get("segments", []))
    for item in sorted(root.iterdir()):
        stale = (_GEN_RE.match(item.name) and item.name not in keep) or item.name.endswith(".tmp") \
            or item.name in LEGACY_FILES
        if stale:
            item.unlink()
            removed.append(item.name)
            crash_point("save:cleanup")
    seg_root = root / SEGMENTS
    if seg_root.is_dir():
        for item in sorted(seg_root.iterdir()):
            if item.name not in referenced:
                shutil.rmtree(item, ignore_errors=True)
                removed.append(f"{SEGMENTS}/{item.name}")
                crash_point("save:cleanup")
    fsync_dir(root)
    return removed
