"""`ragkit beir`'s work on one core against two, and with the adaptive rerank depth, side by side.

Runs :func:`ragkit.evaluation.evaluate_beir` with the same methods as ``ragkit beir`` (the
funnel's ablations) on the first ``--max-queries`` judged queries of a BEIR set whose index is
already cached, once per configuration: ``--workers`` 1 (today's single-core run: one model run
at a time, one query at a time) and 2 (two model runs side by side and two queries at a time),
with the fixed rerank depth and the adaptive one. The reranker's score cache is cleared before
each run, so each pays for every pair. Also times encoding ``--chunks`` of the set's passages
with one and two workers (the index build's cost).

Usage: python bench/beir_workers.py [--set scifact-train] [--max-queries 60]
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from _common import BEIR_CACHE, SETS_DIR, beir_folder, parser, publish

from ragkit import FunnelSettings
from ragkit.evaluation import ABLATIONS, evaluate_beir, load_beir
from ragkit.evaluation.compare import beir_documents
from ragkit.models import get_embedder, get_reranker, set_workers

RUNS = [("1 worker, fixed depth 30 (before)", 1, "fixed"), ("2 workers, fixed depth 30", 2, "fixed"),
        ("2 workers, adaptive depth", 2, "adaptive"), ("1 worker, adaptive depth", 1, "adaptive")]


def main(argv: list[str] | None = None) -> str:
    ap = parser(__doc__, "beir_workers.md")
    ap.add_argument("--set", default="scifact-train")
    ap.add_argument("--sets-dir", type=Path, default=SETS_DIR)
    ap.add_argument("--cache", type=Path, default=BEIR_CACHE)
    ap.add_argument("--max-queries", type=int, default=60)
    ap.add_argument("--chunks", type=int, default=200)
    args = ap.parse_args(argv)
    data = load_beir(beir_folder(args.set, args.sets_dir),
                     split="train" if args.set == "scifact-train" else "test")
    reranker = get_reranker()
    rows = []
    ndcg: dict[str, float] = {}
    for label, workers, policy in RUNS:
        set_workers(workers)
        if reranker.cache is not None:
            reranker.cache.clear()
        settings = replace(FunnelSettings(), depth_policy=policy)
        t, c = time.perf_counter(), time.process_time()
        report = evaluate_beir(data, name=f"{args.set}-bge", cache_dir=args.cache, funnel_settings=settings,
                               methods=ABLATIONS, max_queries=args.max_queries, progress=False,
                               workers=workers)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        ndcg[label] = report["default"]["ndcg@10"]
        rows.append((label, wall, cpu))
        print(label, f"{wall:.1f} s", flush=True, file=sys.stderr)
    docs, _ = beir_documents(data)
    texts = [d.text[:1000] for d in docs[: args.chunks]]
    embedder = get_embedder()
    encode = []
    for workers in (1, 2, 1, 2):
        set_workers(workers)
        t = time.perf_counter()
        embedder.encode(texts)
        encode.append((workers, time.perf_counter() - t))
    set_workers(None)
    base = rows[0][1]
    lines = ["| configuration | wall s | CPU s | CPU / wall | vs 1 worker, fixed | default nDCG@10 |",
             "|---|---|---|---|---|---|"]
    for label, wall, cpu in rows:
        lines.append(f"| {label} | {wall:.1f} | {cpu:.1f} | {cpu / wall:.2f} | {base / wall:.2f}x | "
                     f"{ndcg[label]:.4f} |")
    one = min(s for w, s in encode if w == 1)
    two = min(s for w, s in encode if w == 2)
    cmd = "python bench/beir_workers.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = ("# `ragkit beir` on one core and two\n\n"
            f"{args.set}, first {args.max_queries} judged queries, every method of `ragkit beir` (the "
            "funnel's ablations), index cached; score cache cleared before each run.\n\n" + "\n".join(lines)
            + f"\n\nEncoding {len(texts)} passages (the index build's cost): 1 worker {one:.1f} s, 2 workers "
            f"{two:.1f} s ({one / two:.2f}x; best of two runs each).\n\nProduced by `{cmd.strip()}` on "
            f"{dt.date.today().isoformat()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at "
            "the end (other jobs on the machine slow every row; compare rows of one run).\n")
    return publish(args.result, text)


if __name__ == "__main__":
    main()
