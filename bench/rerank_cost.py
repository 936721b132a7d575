"""The reranker's cost against its value on the course corpus, one row per option.

Every answerable evidence case is searched through the :class:`~ragkit.search.funnel.Funnel` as
its caller, over the documents published by its ``as_of`` time, once per option (rerank
depth, pair length, reranking off). Quality: case recall at the delivered width (share of
cases whose whole minimum evidence set, doc id + section anchor, is among the ``deliver``
hits) and item recall. Latency: median and p95 of the whole funnel call on the first
``--latency-queries`` cases, options interleaved query by query and the reranker's score
cache cleared before every call, so every option pays full price under the same load.
The quality pass keeps the cache (scores of a pair length are computed once).

Writes ``bench/results/rerank_cost.md``.

Usage: python bench/rerank_cost.py [--index .ragkit-cache/index-course] [--latency-queries 40]
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _common import CASES, COURSE_INDEX, found, meter, parser, pct, publish

from ragkit import Funnel, FunnelSettings, Index, load_cases
from ragkit.core import snapshot_filters
from ragkit.models import Reranker, bundled_reranker_path, feed, get_reranker, workers

#: (label, FunnelSettings overrides); the first stage is the same for all.
OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("no rerank (z-score first stage)", {"rerank_mode": "none"}),
    ("no rerank (RRF first stage)", {"rerank_mode": "none", "fusion": "rrf"}),
    ("default: z-score, fuse 1:1:2, adaptive depth up to 30, 256 tok", {}),
    ("fixed depth 30 (the default until 2 December)", {"depth_policy": "fixed"}),
    ("z-score, fuse 1:1:1", {"rerank_weight": 1.0}),
    ("z-score, fuse 1:1:3", {"rerank_weight": 3.0}),
    ("RRF, fuse 1:1:2", {"fusion": "rrf"}),
    ("former: RRF, rank fusion 1:1", {"fusion": "rrf", "rerank_mode": "rrf", "rerank_weight": 1.0}),
    ("RRF, rank fusion 1:2", {"fusion": "rrf", "rerank_mode": "rrf", "rerank_weight": 2.0}),
    ("depth 20", {"rerank_depth": 20, "depth_policy": "fixed"}),
    ("depth 12", {"rerank_depth": 12, "depth_policy": "fixed"}),
    ("128 tok", {"rerank_tokens": 128}),
    ("depth 20, 128 tok", {"rerank_depth": 20, "rerank_tokens": 128, "depth_policy": "fixed"}),
]


class SerialReranker(Reranker):
    """The reranker as it ran before: pairs one after another in one session (for latency only)."""

    def __init__(self, base: Reranker, threads: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        session = ort.InferenceSession(str(bundled_reranker_path() / "model.onnx"), options,
                                       providers=["CPUExecutionProvider"])
        super().__init__(base.name, base.version, session=session, tokenizer=base._tokenizer,
                         max_length=base.max_length, cache=None)

    def _score_uncached(self, query: str, passages: list[str], length: int, batch_size: int | None) -> Any:
        import numpy as np

        encs = self._encode_pairs(query, passages, length)
        return np.array([self._session.run(None, feed(e))[0].reshape(-1)[0] for e in encs], dtype=np.float32)


def main(argv: list[str] | None = None) -> str:
    ap = parser(__doc__, "rerank_cost.md")
    ap.add_argument("--index", type=Path, default=COURSE_INDEX)
    ap.add_argument("--cases", type=Path, default=CASES)
    ap.add_argument("--max-cases", type=int, default=None)
    ap.add_argument("--latency-queries", type=int, default=40)
    ap.add_argument("--deliver", type=int, default=FunnelSettings().deliver)
    ap.add_argument("--options", nargs="*", default=None, help="run only these option labels")
    ap.add_argument("--serial-baseline", action="store_true",
                        help="also time the former serial reranker (2 intra-op threads) at depth 30")
    ap.add_argument("--quality-from", type=Path, default=None,
                        help="read the quality pass from this JSON ({option: [set, item]}), skip it here")
    ap.add_argument("--dump-quality", type=Path, default=None, help="write the quality pass as JSON here")
    args = ap.parse_args(argv)
    index = Index.load(args.index)
    reranker = get_reranker()
    funnel = Funnel(index, reranker=reranker)
    cases = [c for c in load_cases(args.cases) if c.answerable][: args.max_cases]
    funnel.search("warm up", deliver=1)
    calls = [(c.task, c.caller, snapshot_filters(c.as_of)) for c in cases]
    options = [o for o in OPTIONS if args.options is None or o[0] in args.options]
    quality: dict[str, tuple[float, float]] = {}
    if args.quality_from is not None:
        stored = json.loads(args.quality_from.read_text())
        quality = {k: (float(v[0]), float(v[1])) for k, v in stored.items()}
    for label, over in options if args.quality_from is None else []:
        shares = [found(index, funnel.search(task, scope=sc, filters=fl, deliver=args.deliver, **over), case)
                  for (task, sc, fl), case in zip(calls, cases, strict=True)]
        quality[label] = (sum(s == 1.0 for s in shares) / len(shares), sum(shares) / len(shares))
        print(label, quality[label], flush=True)
    if args.dump_quality is not None:
        args.dump_quality.write_text(json.dumps(quality, indent=1))
    timed = list(options)
    funnels = {label: funnel for label, _ in options}
    if args.serial_baseline:
        label = "depth 30, 256 tok, serial 2-thread (before)"
        timed.append((label, {"rerank_depth": 30, "rerank_tokens": 256, "depth_policy": "fixed"}))
        funnels[label] = Funnel(index, reranker=SerialReranker(reranker, threads=2))
        quality[label] = quality.get(OPTIONS[3][0], (float("nan"), float("nan")))
    ms: dict[str, list[float]] = {label: [] for label, _ in timed}
    cpu: dict[str, list[float]] = {label: [] for label, _ in timed}
    est_ms: dict[str, list[float]] = {label: [] for label, _ in timed}
    rerank_cpu = [0.0]
    for f in {id(f): f for f in funnels.values()}.values():
        meter(f.reranker, rerank_cpu)
    units: dict[str, list[int]] = {label: [] for label, _ in timed}
    for i, (task, sc, fl) in enumerate(calls[: args.latency_queries]):
        for j in range(len(timed)):
            label, over = timed[(i + j) % len(timed)]  # rotate so no option always runs first
            if reranker.cache is not None:
                reranker.cache.clear()
            rerank_cpu[0] = 0.0
            t, c = time.perf_counter(), time.process_time()
            result = funnels[label].search(task, scope=sc, filters=fl, deliver=args.deliver, **over)
            ms[label].append((time.perf_counter() - t) * 1000)
            cpu[label].append((time.process_time() - c) * 1000)
            # the rerank stage runs on two workers, the rest on one thread
            est_ms[label].append(cpu[label][-1] - rerank_cpu[0] * 1000 / 2)
            rerank_cpu[0] = 0.0
            units[label].append(result.trace.tokens["reranker_units"])
    lines = [f"| option | case recall@{args.deliver} (set) | item recall | funnel p50 ms (wall) | p95 ms "
             "| CPU ms p50 | est. p50 ms on 2 idle cores | rerank units p50 |",
             "|---|---|---|---|---|---|---|---|"]
    for label, _ in timed:
        s, it = quality.get(label, (float("nan"), float("nan")))
        if not ms[label]:
            lines.append(f"| {label} | {s:.3f} | {it:.3f} | - | - | - | - | - |")
            continue
        c50 = statistics.median(cpu[label])
        est = statistics.median(est_ms[label])
        lines.append(f"| {label} | {s:.3f} | {it:.3f} | {statistics.median(ms[label]):.0f} | "
                     f"{pct(ms[label], 0.95):.0f} | {c50:.0f} | {est:.0f} | "
                     f"{statistics.median(units[label]):.0f} |")
    cmd = "python bench/rerank_cost.py " + " ".join(argv if argv is not None else sys.argv[1:])
    n_quality = f"{len(cases)} answerable cases" if args.quality_from is None else \
        f"all answerable cases (read from `{args.quality_from.name}`, computed by this script)"
    text = (f"# The reranker's cost and value on the course corpus\n\nIndex `{args.index.name}` "
            f"({len(index.rows)} chunks, embedder {index.manifest.get('embedder', {}).get('name')}); "
            f"{n_quality} for quality, the first {min(len(calls), args.latency_queries)} "
            f"for latency (score cache cleared before every call); {workers()} ONNX worker(s) on "
            f"{os.cpu_count()} CPUs.\n\n" + "\n".join(lines)
            + f"\n\nProduced by `{cmd.strip()}` on {dt.date.today().isoformat()}. The machine was shared "
            f"with other jobs (load average {os.getloadavg()[0]:.0f} on 2 cores at the end), so wall times "
            "are inflated and noisy: compare rows of this run, not runs. CPU ms is the process's CPU time "
            "per call (all threads); the 2-idle-core estimate is the call's CPU ms with the rerank stage's "
            "CPU halved (its two ONNX workers run side by side on two cores; the other stages use one).\n")
    return publish(args.result, text)


if __name__ == "__main__":
    main()
