"""Second stages side by side, quality and CPU cost: the cross-encoder at 256 and 512 tokens, ColBERT.

Each option is a reranker and a pair length (``FunnelSettings.rerank_tokens``; for ColBERT
the passage's token budget, the query being 32 tokens): the cross-encoder
(``ragkit.models.bundled.get_reranker``, ms-marco-MiniLM-L-12-v2 INT8) and the late-interaction
scorer (``ragkit.retrieval.colbert``). On each BEIR-format set (as in ``bench/quality.py``) every
option runs through :func:`ragkit.evaluation.compare.evaluate_beir`, i.e. the real Funnel, in the
modes ``rerank`` (reranker order alone) and ``rrf`` (the default: 1:1 fusion with the first
stage), beside the first stage alone. Cost: CPU ms per query of the second stage
(``time.process_time`` around every ``score`` call, all threads, score cache cleared
before each option; the two modes share one scoring). On the course corpus, case recall at
the delivered width (``bench/rerank_cost.py``'s measure) for each option in both modes.

Writes ``bench/results/rerankers.md`` (or ``--result``). Run with ``OMP_NUM_THREADS=1``.

Usage: python bench/rerankers.py [--sets scifact-train pydoc ops-all] [--options ce256 ce512 colbert256]
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    CASES,
    COURSE_INDEX,
    add_beir_flags,
    beir_folder,
    course_cases,
    found,
    meter,
    parser,
    publish,
)

from ragkit import Funnel, Index
from ragkit.core import snapshot_filters
from ragkit.evaluation import evaluate_beir, load_beir
from ragkit.index import IndexSettings
from ragkit.models import get_reranker
from ragkit.retrieval import get_colbert

#: label -> (reranker kind, pair length in tokens)
OPTIONS: dict[str, tuple[str, int]] = {
    "ce256": ("cross-encoder", 256),
    "ce512": ("cross-encoder", 512),
    "colbert256": ("colbert", 256),
    "colbert512": ("colbert", 512),
}
MODES = ("rerank", "rrf")


def load(kind: str) -> Any:
    """The reranker of ``kind`` (``cross-encoder`` or ``colbert``), with its score cache."""
    if kind == "colbert":
        return get_colbert()
    return get_reranker()


def metered(kind: str) -> tuple[Any, list[float]]:
    """The reranker, warmed up, its cache cleared, and a CPU-seconds counter on its ``score``."""
    reranker = load(kind)
    reranker.score("warm up", ["a passage to warm the session up"])
    if reranker.cache is not None:
        reranker.cache.clear()
    total = [0.0]
    if not hasattr(reranker, "_rerankers_meter"):
        meter(reranker, total)
        reranker._rerankers_meter = total
    total = reranker._rerankers_meter
    total[0] = 0.0
    return reranker, total


def beir_rows(set_name: str, path: Path, queries: int, options: list[str], cache: Path) -> dict[str, Any]:
    """``{"first": report, option: (report, cpu_ms_per_query)}`` for one set."""
    data = load_beir(path, split="train" if set_name == "scifact-train" else "test")
    common = {"name": f"{set_name}-bge", "cache_dir": cache, "index_settings": IndexSettings(embedder="bge"),
              "max_queries": queries, "progress": False}
    out: dict[str, Any] = {"first": evaluate_beir(data, methods={"bm25": {"retrievers": ("lexical",),
                                                                          "rerank_mode": "none"},
                                                                 "rrf": {"rerank_mode": "none"}}, **common)}
    for label in options:
        kind, tokens = OPTIONS[label]
        reranker, cpu = metered(kind)
        t = time.perf_counter()
        report = evaluate_beir(data, reranker=reranker, **common,
                               methods={m: {"rerank_mode": m, "rerank_tokens": tokens} for m in MODES})
        n = int(next(iter(report.values()))["queries"])
        out[label] = (report, cpu[0] * 1000 / max(1, n))
        print(set_name, label, {m: round(report[m]["ndcg@10"], 4) for m in MODES},
              f"cpu {out[label][1]:.0f} ms/q, {time.perf_counter() - t:.0f}s wall", flush=True)
    return out


def course_rows(index_path: Path, cases_path: Path, max_cases: int | None, deliver: int,
                options: list[str]) -> tuple[int, dict[str, tuple[float, float, float]]]:
    """Case recall and item recall at ``deliver`` on the course corpus, and rerank CPU ms per case."""
    index = Index.load(index_path)
    cases = course_cases(cases_path, answerable=True)[:max_cases]
    calls = [(c.task, c.caller, snapshot_filters(c.as_of)) for c in cases]
    rows: dict[str, tuple[float, float, float]] = {}

    def run(funnel: Any, over: dict[str, Any]) -> tuple[float, float]:
        shares = [found(index, funnel.search(task, scope=sc, filters=fl, deliver=deliver, **over), case)
                  for (task, sc, fl), case in zip(calls, cases, strict=True)]
        return sum(s == 1.0 for s in shares) / len(shares), sum(shares) / len(shares)

    rows["first stage (rrf, no rerank)"] = (*run(Funnel(index), {"rerank_mode": "none"}), 0.0)
    for label in options:
        kind, tokens = OPTIONS[label]
        reranker, cpu = metered(kind)  # cache cleared: the rerank-mode pass pays for every score
        funnel = Funnel(index, reranker=reranker)
        for mode in MODES:  # the rrf-mode pass reuses the cached scores: charged the first pass's CPU
            rows[f"{label} {mode}"] = (*run(funnel, {"rerank_mode": mode, "rerank_tokens": tokens}),
                                       cpu[0] * 1000 / len(calls) if mode == MODES[0] else
                                       rows[f"{label} {MODES[0]}"][2])
            print(label, mode, rows[f"{label} {mode}"], flush=True)
    return len(cases), rows


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"load average {os.getloadavg()}"


def main(argv: list[str] | None = None) -> str:
    ap = add_beir_flags(parser(__doc__, "rerankers.md"))
    ap.add_argument("--sets", nargs="*", default=["scifact-train", "pydoc", "ops-all"])
    ap.add_argument("--options", nargs="*", default=["ce256", "ce512", "colbert256"],
                    choices=list(OPTIONS))
    ap.add_argument("--scifact-queries", type=int, default=100)
    ap.add_argument("--max-queries", type=int, default=80, help="queries of the other sets")
    ap.add_argument("--course-index", type=Path, default=COURSE_INDEX)
    ap.add_argument("--cases", type=Path, default=CASES)
    ap.add_argument("--max-cases", type=int, default=None)
    ap.add_argument("--course-options", nargs="*", default=["ce256", "colbert256"], choices=list(OPTIONS))
    ap.add_argument("--deliver", type=int, default=4)
    args = ap.parse_args(argv)
    load_before = uptime()
    start = time.perf_counter()
    sets: dict[str, dict[str, Any]] = {}
    notes = []
    for set_name in args.sets:
        path = beir_folder(set_name, args.sets_dir)
        if not path.is_dir():
            notes.append(f"{set_name}: skipped ({path} is absent)")
            continue
        n = args.scifact_queries if set_name == "scifact-train" else args.max_queries
        sets[set_name] = beir_rows(set_name, path, n, args.options, args.cache)
    head = ["| set | queries | bm25 | rrf (first stage) | option | nDCG@10 rerank "
            "| nDCG@10 rrf (default mode) "
            "| gain rrf-mode vs first stage | 2nd-stage CPU ms/query | gain per CPU-s |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for set_name, rows in sets.items():
        first = rows["first"]
        n = int(first["bm25"]["queries"])
        for label in args.options:
            report, cpu = rows[label]
            gain = report["rrf"]["ndcg@10"] - first["rrf"]["ndcg@10"]
            head.append(f"| {set_name} | {n} | {first['bm25']['ndcg@10']:.4f} "
                        f"| {first['rrf']['ndcg@10']:.4f} "
                        f"| {label} | {report['rerank']['ndcg@10']:.4f} | {report['rrf']['ndcg@10']:.4f} "
                        f"| {gain:+.4f} | {cpu:.0f} | {gain / (cpu / 1000) if cpu else 0.0:+.3f} |")
    course = ""
    if args.course_index is not None and args.course_index.is_dir() and args.course_options:
        n_cases, rows_c = course_rows(args.course_index, args.cases, args.max_cases, args.deliver,
                                      args.course_options)
        lines = [f"| option | case recall@{args.deliver} | item recall | 2nd-stage CPU ms/case |",
                 "|---|---|---|---|"]
        lines += [f"| {k} | {s:.3f} | {it:.3f} | {c:.0f} |" for k, (s, it, c) in rows_c.items()]
        course = (f"\n\n## Course corpus: case recall at the delivered width {args.deliver}\n\nIndex "
                  f"`{args.course_index.name}`, {n_cases} answerable cases, each searched as its caller "
                  "over the documents published by its `as_of` (`bench/rerank_cost.py`'s `found`). CPU ms: "
                  "the rerank-mode pass's scoring per case (the rrf-mode pass reuses its cached scores).\n\n"
                  + "\n".join(lines))
    given = argv if argv is not None else sys.argv[1:]
    cmd = "OMP_NUM_THREADS=1 python bench/rerankers.py " + " ".join(given)
    legend = "; ".join(f"`{k}` = {kind} at {tok} tokens" for k, (kind, tok) in OPTIONS.items()
                       if k in args.options or k in args.course_options)
    text = ("# Second stages: cross-encoder at 256 / 512 tokens vs ColBERT (MaxSim), quality and CPU\n\n"
            f"{legend}. nDCG@10 over documents (best chunk) through the real Funnel "
            "(`ragkit.evaluation.compare`); "
            "`rerank` = reranker order alone, `rrf` = the default fusion 1:1 with the first stage. "
            "CPU ms/query: "
            "`time.process_time` around the second stage's `score` calls (all threads; score cache cleared "
            "before each option, mean over queries). Gain per CPU-s = (nDCG@10 of the rrf mode - first "
            "stage) / CPU seconds per query. ColBERT here is answerai-colbert-small-v1's INT8 encoder "
            "without "
            "its 96-d projection (not shipped; see `ragkit/retrieval/colbert.py`).\n\n"
            + "\n".join(head) + course + ("\n\n" + "\n".join(notes) if notes else "")
            + f"\n\nProduced by `{cmd.strip()}` on {dt.date.today().isoformat()} in "
            f"{time.perf_counter() - start:.0f} s wall. Load before: `{load_before}`; after: `{uptime()}` "
            f"({os.cpu_count()} CPUs shared with other engineers).\n")
    return publish(args.result, text)


if __name__ == "__main__":
    main()
