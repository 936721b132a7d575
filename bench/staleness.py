"""Staleness of a watched copy of the course corpus: how long edits and deletes take to reach the index.

1. Copies ``datasets/opscorpus/docs`` and the cached course index (``.ragkit-cache/index-course``)
   to a temporary folder (the cache itself is never written), then syncs the copy once: every
   document is unchanged, only its source path moves (nothing is re-encoded).
2. Starts a :class:`ragkit.index.freshness.Watcher` (poll ``--interval``) on the copy, with the real
   bundled embedder (loaded beforehand unless ``--no-warm``), and meanwhile edits ``--edits``
   documents and deletes ``--deletes`` documents, one change every ``--gap`` seconds.
3. Waits until nothing is pending, then reports the lag (index commit minus file change) of the
   edited documents and of the deletions (tombstone time minus unlink time), plus the
   :func:`ragkit.index.freshness.staleness` distribution over every document of the index.

Usage: OMP_NUM_THREADS=1 python bench/staleness.py [--edits 20 --deletes 10 --gap 0.5 --interval 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from _common import COURSE_INDEX, parser, publish

from ragkit import Index
from ragkit.course import course_corpus
from ragkit.index import Watcher, staleness, sync_folder


def dist(values: list[float]) -> str:
    if not values:
        return "n/a"
    a = np.array(values)
    return f"n={len(a)}, p50 {np.percentile(a, 50):.1f}s, p95 {np.percentile(a, 95):.1f}s, max {a.max():.1f}s"


def main() -> None:
    ap = parser(__doc__, "staleness.md", flag="--out")
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--deletes", type=int, default=10)
    ap.add_argument("--gap", type=float, default=0.5)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--warm", action=argparse.BooleanOptionalAction, default=True,
                        help="load the embedder before the first edit (as a running watcher has)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        docs, idx_path = Path(tmp) / "docs", Path(tmp) / "idx"
        shutil.copytree(course_corpus(), docs)
        shutil.copytree(COURSE_INDEX, idx_path, ignore=shutil.ignore_patterns(".lock"))
        t = time.perf_counter()
        first = sync_folder(docs, idx_path)
        first_s = time.perf_counter() - t
        print(f"first sync of the copy: {first.report} in {first_s:.1f}s", flush=True)
        files = sorted(p for p in docs.rglob("*.md"))
        rng = np.random.default_rng(7)
        picked = [files[i] for i in rng.choice(len(files), args.edits + args.deletes, replace=False)]
        edits, deletes = picked[: args.edits], picked[args.edits:]
        watcher = Watcher(docs, idx_path, interval=args.interval, full_every="1h", log=lambda m: print(m))
        watcher.full()
        if args.warm:  # a long-running watcher has its model loaded already: do not count the load
            assert watcher.index is not None
            watcher.index.embedder.encode(["warm up"])
        thread = threading.Thread(target=watcher.run)
        thread.start()
        edited_at: dict[str, float] = {}
        deleted_at: dict[str, float] = {}
        index = Index.load(idx_path)
        by_path = {Path(d.envelope.source_path).resolve(): d.doc_id for d in index.documents.values()}
        for path in edits:
            path.write_text(path.read_text() + "\n\nEdited for the staleness benchmark.\n")
            edited_at[by_path[path.resolve()]] = path.stat().st_mtime
            time.sleep(args.gap)
        for path in deletes:
            deleted_at[by_path[path.resolve()]] = time.time()
            path.unlink()
            time.sleep(args.gap)
        deadline = time.time() + 600
        while time.time() < deadline:
            pending = staleness(Index.load(idx_path), folder=docs).pending
            if not pending:
                break
            time.sleep(args.interval)
        watcher.stop_event.set()
        thread.join()
        final = Index.load(idx_path)
        indexed = final.manifest["indexed_at"]
        edit_lags = [dt.datetime.fromisoformat(indexed[d]).timestamp() - t0 for d, t0 in edited_at.items()]
        tomb = {t["doc_id"]: dt.datetime.fromisoformat(t["deleted_at"]).timestamp()
                for t in final.manifest["tombstones"]}
        delete_lags = [tomb[d] - t0 for d, t0 in deleted_at.items() if d in tomb]
        report = staleness(final, folder=docs, threshold="1h")
        assert not set(deleted_at) & set(final.documents), "a deleted document is still indexed"
        lines = ["# Staleness on a watched copy of the course corpus", "",
                 f"`OMP_NUM_THREADS=1 python bench/staleness.py --edits {args.edits} "
                 f"--deletes {args.deletes} --gap {args.gap} --interval {args.interval}"
                 f"{'' if args.warm else ' --no-warm'}` "
                 f"({time.strftime('%Y-%m-%d %H:%M')} UTC, "
                 "2 shared CPU cores under heavy load from other jobs; real bundled embedder).", "",
                 f"- first sync of the copied corpus and index: {first.report} ({first_s:.1f}s; "
                 f"{len(first.report.relocated)} documents relocated to the copy, nothing re-encoded)",
                 f"- edit lag (file mtime -> index commit), {args.edits} edits one every {args.gap}s: "
                 f"{dist(edit_lags)}",
                 f"- delete lag (unlink -> tombstone), {args.deletes} deletes: {dist(delete_lags)}",
                 f"- deleted documents still in the index: {len(set(deleted_at) & set(final.documents))}",
                 f"- pending after the watcher caught up: {len(report.pending)}", "",
                 "`ragkit staleness` over every document of the index (lag of the initial build included: "
                 "the corpus files are older than the cached index):", "", "```",
                 str(report).split("\n  ")[0], "```"]
    publish(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
