"""The cross-encoder's own speed: one pair per run against length-sorted batches, by threads.

The pairs are real: for the first ``--queries`` course cases, the 30 fused candidates the funnel
would rerank (each passage as the reranker reads it, truncated to 256 tokens with the query).
Each way of running them scores every query's 30 pairs; the ways are interleaved query by
query, ``--rounds`` times, and the table gives the median pairs per second.

* one pair per run (what ragkit does): 1 worker, or ``workers`` single-threaded runs side by side;
  or 1 worker with 2 intra-op threads;
* length-sorted batches of B pairs (padded to the longest pair in the batch), 1 or 2 threads.

Scores of a batched run are compared with the one-pair runs: the bundled model is INT8 with
*dynamic* quantisation (activation scales computed per run over the whole input tensor, padding
included), so a pair's score can depend on its batch-mates; the table reports the largest
difference and how often the top-4 order changes.

Usage: python bench/rerank_speed.py [--queries 20] [--rounds 3]
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from _common import COURSE_INDEX, course_cases, parser, publish

from ragkit import Funnel, Index
from ragkit.core import snapshot_filters
from ragkit.models import bundled_reranker_path, feed, get_reranker


def session(threads: int) -> Any:
    """An onnxruntime session of the bundled cross-encoder with ``threads`` intra-op threads."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(str(bundled_reranker_path() / "model.onnx"), options,
                                providers=["CPUExecutionProvider"])


def single(sess: Any, encs: list[Any], pool: ThreadPoolExecutor | None) -> np.ndarray:
    """One pair per run, on ``pool`` (side by side) or in this thread."""
    def one(enc: Any) -> float:
        return float(sess.run(None, feed(enc))[0].reshape(-1)[0])

    return np.array(list(pool.map(one, encs)) if pool else [one(e) for e in encs], dtype=np.float32)


def batched(sess: Any, encs: list[Any], size: int) -> np.ndarray:
    """Length-sorted batches of ``size`` pairs, each padded to its longest pair."""
    order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
    out = np.zeros(len(encs), dtype=np.float32)
    for start in range(0, len(order), size):
        part = order[start:start + size]
        width = max(len(encs[i].ids) for i in part)
        arrays = {k: np.zeros((len(part), width), dtype=np.int64)
                  for k in ("input_ids", "attention_mask", "token_type_ids")}
        for row, i in enumerate(part):
            e, n = encs[i], len(encs[i].ids)
            arrays["input_ids"][row, :n] = e.ids
            arrays["attention_mask"][row, :n] = e.attention_mask
            arrays["token_type_ids"][row, :n] = e.type_ids
        logits = sess.run(None, arrays)[0].reshape(len(part), -1)[:, 0]
        out[part] = logits
    return out


def main(argv: list[str] | None = None) -> str:
    ap = parser(__doc__, "rerank_speed.md")
    ap.add_argument("--index", type=Path, default=COURSE_INDEX)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", nargs="*", type=int, default=[4, 8, 16, 32])
    args = ap.parse_args(argv)

    index = Index.load(args.index)
    funnel = Funnel(index)
    reranker = get_reranker()
    work = []
    for case in course_cases(answerable=True)[: args.queries]:
        result = funnel.search(case.task, scope=case.caller, filters=snapshot_filters(case.as_of),
                               rerank_mode="none", deliver=1)
        rows = [c.row for c in sorted(result.trace.candidates, key=lambda c: c.fused_rank or 10**6)
                if c.fused_rank is not None][:30]
        passages = [index.rows[r].contextual_text() for r in rows]
        work.append(reranker._encode_pairs(case.task, passages, 256))
    pairs = sum(len(e) for e in work)
    s1, s2 = session(1), session(2)
    pool = ThreadPoolExecutor(max_workers=2)
    ways: dict[str, Callable[[list[Any]], np.ndarray]] = {
        "one pair per run, 1 worker, 1 thread": lambda e: single(s1, e, None),
        "one pair per run, 2 workers x 1 thread (ragkit)": lambda e: single(s1, e, pool),
        "one pair per run, 1 worker, 2 threads": lambda e: single(s2, e, None),
    }
    for b in args.batches:
        ways[f"batches of {b}, 1 thread"] = lambda e, b=b: batched(s1, e, b)
        ways[f"batches of {b}, 2 threads"] = lambda e, b=b: batched(s2, e, b)
    reference = [single(s1, e, None) for e in work]
    seconds: dict[str, list[float]] = {w: [] for w in ways}
    diffs: dict[str, float] = {w: 0.0 for w in ways}
    flips: dict[str, int] = {w: 0 for w in ways}
    names = list(ways)
    for rnd in range(args.rounds):
        for w_i in range(len(names)):
            name = names[(w_i + rnd) % len(names)]
            t = time.perf_counter()
            scores = [ways[name](e) for e in work]
            seconds[name].append(time.perf_counter() - t)
            for got, ref in zip(scores, reference, strict=True):
                diffs[name] = max(diffs[name], float(np.abs(got - ref).max()))
                flips[name] += int(list(np.argsort(-got, kind="stable")[:4]) !=
                                   list(np.argsort(-ref, kind="stable")[:4]))
        print(f"round {rnd + 1}/{args.rounds}", file=sys.stderr, flush=True)
    base = statistics.median(seconds[names[0]])
    lines = ["| way | pairs/s (median) | vs 1 worker | largest score difference from one pair per run "
             "| queries whose top 4 changed |", "|---|---|---|---|---|"]
    for name in names:
        med = statistics.median(seconds[name])
        lines.append(f"| {name} | {pairs / med:.0f} | {base / med:.2f}x | {diffs[name]:.2e} | "
                     f"{flips[name] // args.rounds}/{len(work)} |")
    cmd = "python bench/rerank_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = ("# The cross-encoder's speed: one pair per run against batches\n\n"
            f"{pairs} (query, passage) pairs: the 30 fused candidates of each of the first {len(work)} "
            f"answerable course cases, 256-token pairs; median of {args.rounds} rounds, ways interleaved.\n\n"
            + "\n".join(lines)
            + f"\n\nProduced by `{cmd.strip()}` on {dt.date.today().isoformat()}, {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.1f} at the end (a busy machine lowers every row; "
            "compare rows of one run).\n")
    return publish(args.result, text)


if __name__ == "__main__":
    main()
