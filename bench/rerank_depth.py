"""Adaptive rerank depth against fixed depths 0/10/20/30: quality, reranker work and time, four sets.

* BEIR-format sets (``scifact-train``, ``pydoc``, ``ops-all``): nDCG@10 of the funnel exactly as
  :func:`ragkit.evaluation.compare.evaluate_beir` runs it (100 candidates per retriever, documents
  scored by their best chunk).
* ``course``: the bundled answerable evidence cases through the course funnel (its defaults),
  each as its own caller over the documents published by its ``as_of``: case recall@4 (the
  whole minimum evidence set among the delivered hits).

Every query is in the *development* half or the *held-out* half by a hash of its id
(``sha1(id)`` even / odd). The adaptive rule's thresholds were chosen on the development half
only; the table reports both halves and all queries.

Reranker work is the token-units the cross-encoder read (mean per query, and relative to depth
30). The score cache is kept on disk (``--score-cache``), so a second run scores nothing again;
the latency pass clears it before every call and interleaves the options query by query.

``--analyse DUMP`` reads the per-query records of an earlier run (``--dump``) and appends to the
result file what depth 30 gained over the first stage, on queries the retrievers disagree on, by
the cross-encoder's own top score: the table a "decline when the cross-encoder is unsure" rule
would be chosen from.

Usage: python bench/rerank_depth.py [--sets scifact-train pydoc ops-all course] [--latency-queries 40]
       python bench/rerank_depth.py --analyse per_query.jsonl --result bench/results/rerank_depth.md
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import pickle
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from _common import CACHE, COURSE_INDEX, add_beir_flags, beir_folder, course_cases, found, parser, publish

from ragkit import Funnel, FunnelSettings, Index
from ragkit.core import snapshot_filters
from ragkit.evaluation import load_beir
from ragkit.evaluation.compare import beir_index, doc_run
from ragkit.evaluation.metrics import score_run
from ragkit.models import get_reranker, workers

#: (label, FunnelSettings overrides); depth 30 runs first so its scores fill the cache.
FIXED: list[tuple[str, dict[str, Any]]] = [
    ("depth 30 (fixed; the default until 2 December)", {"depth_policy": "fixed"}),
    ("depth 20", {"depth_policy": "fixed", "rerank_depth": 20}),
    ("depth 10", {"depth_policy": "fixed", "rerank_depth": 10}),
    ("depth 0 (first stage)", {"rerank_mode": "none"}),
]


def adaptive(confident: float) -> tuple[str, dict[str, Any]]:
    """The adaptive option with this confidence margin, labelled by it."""
    return f"adaptive, margin {confident:g}", {"depth_policy": "adaptive", "confident_margin": confident}


def half(key: str) -> str:
    """``"dev"`` or ``"held-out"``, fixed by the query's id."""
    return "dev" if int(hashlib.sha1(key.encode()).hexdigest(), 16) % 2 == 0 else "held-out"


def beir_queries(name: str, sets_dir: Path, cache: Path) -> tuple[Funnel, list[dict[str, Any]]]:
    """The funnel evaluate_beir runs on this set, and one call per judged query."""
    data = load_beir(beir_folder(name, sets_dir), split="train" if name == "scifact-train" else "test")
    index, back = beir_index(data, name=f"{name}-bge", cache_dir=cache, progress=True)
    base = replace(FunnelSettings(), candidates=100, deliver=1, expand=False)
    calls = [{"id": q, "query": data.queries[q], "qrels": data.qrels[q], "back": back}
             for q in sorted(q for q in data.queries if data.qrels.get(q))]
    return Funnel(index, base), calls


def course_queries(path: Path = COURSE_INDEX) -> tuple[Funnel, list[dict[str, Any]]]:
    """The course funnel (on the index at ``path``) and one call per answerable case."""
    index = Index.load(path)
    calls = [{"id": c.id, "query": c.task, "scope": c.caller, "filters": snapshot_filters(c.as_of), "case": c}
             for c in course_cases(answerable=True)]
    return Funnel(index), calls


def run_one(funnel: Funnel, call: dict[str, Any], over: dict[str, Any]) -> tuple[float, Any]:
    """(quality of this call, its SearchResult) under ``over``."""
    if "case" in call:
        result = funnel.search(call["query"], scope=call["scope"], filters=call["filters"], **over)
        return float(found(funnel.index, result, call["case"]) == 1.0), result
    result = funnel.search(call["query"], **over)
    run = {call["id"]: doc_run(result, call["back"])}
    return score_run(run, {call["id"]: call["qrels"]}, ["ndcg@10"])["ndcg@10"], result


def main(argv: list[str] | None = None) -> str:
    ap = add_beir_flags(parser(__doc__, "rerank_depth.md"))
    ap.add_argument("--sets", nargs="*", default=["scifact-train", "pydoc", "ops-all", "course"])
    ap.add_argument("--index", type=Path, default=COURSE_INDEX, help="the course index (set 'course')")
    ap.add_argument("--max-queries", type=int, default=0, help="first N queries of each set (0: all)")
    ap.add_argument("--confident", nargs="*", type=float, default=[0.5, 1.0, 1.5, 2.0])
    ap.add_argument("--latency-queries", type=int, default=0)
    ap.add_argument("--score-cache", type=Path, default=CACHE / "bench-rerank-scores.pkl")
    ap.add_argument("--dump", type=Path, default=None, help="write per-query records (JSON lines) here")
    ap.add_argument("--analyse", type=Path, default=None, help="append the CE-score table from this dump")
    args = ap.parse_args(argv)
    if args.analyse is not None:
        text = args.result.read_text() if args.result.is_file() else ""
        return publish(args.result, text + unsure_table(args.analyse, argv))

    options = list(FIXED) + [adaptive(c) for c in args.confident]
    reranker = get_reranker()
    if args.score_cache.is_file() and reranker.cache is not None:
        reranker.cache._data.update(pickle.loads(args.score_cache.read_bytes()))
        print(f"score cache: {len(reranker.cache._data)} pairs from {args.score_cache}", file=sys.stderr)
    rows: dict[str, dict[str, dict[str, list[float]]]] = {}
    latency: dict[str, dict[str, list[float]]] = {}
    dump = args.dump.open("w") if args.dump else None
    for name in args.sets:
        if name == "course":
            funnel, calls = course_queries(args.index)
        else:
            funnel, calls = beir_queries(name, args.sets_dir, args.cache)
        funnel._reranker = reranker
        calls = calls[: args.max_queries or None]
        table = rows.setdefault(name, {label: {"dev": [], "held-out": [], "units": [], "depth": []}
                                       for label, _ in options})
        t0 = time.perf_counter()
        for n, call in enumerate(calls, start=1):
            record: dict[str, Any] = {"set": name, "id": call["id"], "half": half(call["id"])}
            for label, over in options:
                quality, result = run_one(funnel, call, over)
                cell = table[label]
                cell[record["half"]].append(quality)
                cell["units"].append(result.trace.tokens["reranker_units"])
                cell["depth"].append(result.trace.depth_plan.get("depth", 0))
                record[label] = quality
                if label == FIXED[0][0]:
                    ce = [c.rerank_score for c in result.trace.candidates if c.rerank_score is not None]
                    record["ce_max"] = max(ce) if ce else None
                if "margin" not in record and result.trace.depth_plan.get("reason") != "fixed":
                    record["margin"] = round(result.trace.depth_plan.get("margin", 0.0), 4)
                    record["agree"] = result.trace.depth_plan.get("agree")
            if dump:
                dump.write(json.dumps(record) + "\n")
            if n % 50 == 0:
                print(f"{name}: {n}/{len(calls)} queries, {time.perf_counter() - t0:.0f} s", file=sys.stderr,
                      flush=True)
        if reranker.cache is not None:  # keep what was scored, for the next run
            args.score_cache.write_bytes(pickle.dumps(dict(reranker.cache._data)))
        if args.latency_queries:
            latency[name] = time_options(funnel, calls[: args.latency_queries], options, reranker)
    if dump:
        dump.close()
    return publish(args.result, report(rows, latency, options, argv))


def time_options(funnel: Funnel, calls: list[dict[str, Any]], options: list[tuple[str, dict[str, Any]]],
                 reranker: Any) -> dict[str, list[float]]:
    """Wall ms of each option per call, the score cache cleared before every call, options rotated."""
    ms: dict[str, list[float]] = {label: [] for label, _ in options}
    for i, call in enumerate(calls):
        for j in range(len(options)):
            label, over = options[(i + j) % len(options)]
            if reranker.cache is not None:
                reranker.cache.clear()
            t = time.perf_counter()
            run_one(funnel, call, over)
            ms[label].append((time.perf_counter() - t) * 1000)
    return ms


def report(rows: dict[str, dict[str, dict[str, list[float]]]], latency: dict[str, dict[str, list[float]]],
           options: list[tuple[str, dict[str, Any]]], argv: list[str] | None) -> str:
    """The Markdown result: one table per set."""
    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs) if xs else float("nan")

    parts = []
    for name, table in rows.items():
        metric = "case recall@4" if name == "course" else "nDCG@10"
        ref = mean(table[FIXED[0][0]]["units"]) or 1.0
        n_dev, n_out = len(table[FIXED[0][0]]["dev"]), len(table[FIXED[0][0]]["held-out"])
        lines = [f"### {name} ({metric}; {n_dev} development, {n_out} held-out queries)", "",
                 f"| option | {metric} dev | held-out | all | reranked per query (mean) | token-units "
                 "(mean) | units vs depth 30 | p50 ms |", "|---|---|---|---|---|---|---|---|"]
        for label, _ in options:
            cell = table[label]
            ms = latency.get(name, {}).get(label)
            lines.append(f"| {label} | {mean(cell['dev']):.4f} | {mean(cell['held-out']):.4f} | "
                         f"{mean(cell['dev'] + cell['held-out']):.4f} | {mean(cell['depth']):.1f} | "
                         f"{mean(cell['units']):.0f} | {mean(cell['units']) / ref:.2f} | "
                         f"{statistics.median(ms) if ms else float('nan'):.0f} |")
        parts.append("\n".join(lines))
    cmd = "python bench/rerank_depth.py " + " ".join(argv if argv is not None else sys.argv[1:])
    return ("# Adaptive rerank depth against fixed depths\n\n" + "\n\n".join(parts)
            + f"\n\nProduced by `{cmd.strip()}` on {dt.date.today().isoformat()}; {workers()} ONNX "
            f"worker(s) on {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end. "
            "p50 ms: whole funnel call, score cache cleared before every call (nan: no latency pass).\n")


def unsure_table(dump: Path, argv: list[str] | None) -> str:
    """Gain of depth 30 over depth 0 by the cross-encoder's top score, where the retrievers disagree."""
    records = [json.loads(line) for line in dump.read_text().splitlines() if line.strip()]
    full, first = FIXED[0][0], FIXED[-1][0]
    bins = [(-99.0, -4.0), (-4.0, -2.0), (-2.0, 0.0), (0.0, 2.0), (2.0, 4.0), (4.0, 99.0)]
    sets = list(dict.fromkeys(r["set"] for r in records))
    lines = ["| top cross-encoder score | " + " | ".join(f"{s} dev | {s} held-out" for s in sets) + " |",
             "|---|" + "---|---|" * len(sets)]
    for lo, hi in bins:
        cells = []
        for name in sets:
            for part in ("dev", "held-out"):
                sub = [r for r in records if r["set"] == name and r["half"] == part and not r.get("agree")
                       and r.get("ce_max") is not None and lo <= r["ce_max"] < hi]
                gain = sum(r[full] - r[first] for r in sub) / len(sub) if sub else float("nan")
                cells.append(f"{gain:+.3f} ({len(sub)})")
        label = f"< {hi:g}" if lo == -99.0 else f">= {lo:g}" if hi == 99.0 else f"{lo:g} to {hi:g}"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cmd = "python bench/rerank_depth.py " + " ".join(argv if argv is not None else sys.argv[1:])
    return ("\n## Does the cross-encoder know when it is unsure?\n\nQueries whose retrievers disagree on the "
            "leader (the ones the adaptive policy reranks): mean gain of depth 30 over the first stage "
            "(nDCG@10; case recall@4 for `course`), by the cross-encoder's top logit over the 30 "
            "candidates, with the number of queries. A rule that declines to rerank when the top score is "
            "low needs negative gains in the low rows.\n\n" + "\n".join(lines)
            + f"\n\nProduced by `{cmd.strip()}`.\n")


if __name__ == "__main__":
    main()
