"""The full evaluation of the bundled cases: pipeline and hybrid agent, every case, counterfactuals.

Runs the reference agent (``ragkit.agent.loop.Agent`` with the offline policy) at each placement over
``datasets/opscorpus/cases.jsonl`` on the course index, scores every case at every boundary
(``ragkit.evaluation.runner.score_case``), runs the four counterfactual tests on every case (or on a
deterministic sample with ``--cf-sample N``: every k-th case), computes the economics from the
traces at p50/p95, checks ``datasets/gates.toml``, and writes ``bench/results/eval_<placement>.md``
(report, gates, diagnosis, timings), ``.json`` (the whole report) and ``.csv`` (one row per case).

One job per case (``ragkit.evaluation.evaluate_full``): its runs at every placement and their
counterfactuals share one reranker-score cache in one process (each run still timed as with a
cold cache), on ``--workers`` single-threaded processes; results are merged in case order.

``--check N`` runs N evenly spaced cases both ways (the speed-ups, and the plain serial path:
``evaluate`` per placement and ``run_counterfactuals``, no shared scores) and fails if any
per-case result differs (timings aside).

Usage: OMP_NUM_THREADS=1 python bench/eval_full.py [--placements pipeline,hybrid] [--workers 2]
       [--limit N] [--sample N] [--cf-sample N] [--no-cf] [--check N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from _common import RESULTS, ROOT, course_cases, evenly, parser, publish

from ragkit import agent_runner, evaluate
from ragkit.course import course_index
from ragkit.evaluation import (
    check_gates,
    diagnose,
    evaluate_full,
    load_gates,
    report_figures,
    run_counterfactuals,
)
from ragkit.models import get_reranker

TAGS = ["all", "conflict", "identifier", "multi_hop", "temporal", "vocabulary_mismatch", "scoped",
        "injection", "story", "long_document"]
#: Columns that are measurements of time, not results: they may differ between two runs.
TIMING_COLUMNS = ("seconds",)


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A scored row without its timings (NaN made comparable)."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()
            if k not in TIMING_COLUMNS}


def check(cases: list[Any], placements: list[str], workers: int) -> int:
    """Run ``cases`` with and without the speed-ups; print and count the differences."""
    t = time.perf_counter()
    fast, _ = evaluate_full(cases, functools.partial(course_index, progress=False), placements=placements,
                            workers=workers)
    t_fast = time.perf_counter() - t
    index = course_index(progress=False)
    reranker = get_reranker()
    differences = 0
    t = time.perf_counter()
    for p in placements:
        reranker.cache.clear()
        plain = evaluate(cases, agent_runner(index, p, reranker=reranker), placement=p, progress=False)
        baseline = dict(zip(plain.frame["case"], plain.frame["correct"].astype(bool), strict=True))
        plain.counterfactuals = run_counterfactuals(
            cases, index, lambda view, p=p: agent_runner(view, p, reranker=reranker), baseline=baseline,
            progress=False)
        a = [comparable(r) for r in fast[p].frame.to_dict("records")]
        b = [comparable(r) for r in plain.frame.to_dict("records")]
        for ra, rb in zip(a, b, strict=True):
            diff = {k: (ra[k], rb.get(k)) for k in ra if ra[k] != rb.get(k)}
            if diff:
                differences += 1
                print(f"DIFFERENT {p} {ra['case']}: {diff}")
        ca, cb = fast[p].counterfactuals.to_dict(), plain.counterfactuals.to_dict()
        if json.dumps(ca, sort_keys=True, default=str) != json.dumps(cb, sort_keys=True, default=str):
            differences += 1
            print(f"DIFFERENT {p} counterfactuals:\n  fast  {ca}\n  plain {cb}")
    t_plain = time.perf_counter() - t
    print(f"check: {len(cases)} cases x {placements}: {differences} difference(s); with the speed-ups "
          f"{t_fast:.0f}s ({workers} workers, index loaded per worker), plain serial path {t_plain:.0f}s")
    return differences


def code_version() -> str:
    """The commit the run started from, and the ragkit/bench files that differed from it."""
    import subprocess

    def git(*argv: str) -> str:
        try:
            return subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return ""

    head = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    dirty = [line[3:] for line in git("status", "--porcelain", "--", "ragkit", "bench").splitlines()
             if line[3:].endswith(".py")]
    return f"commit {head}" + (f" with uncommitted changes to {', '.join(dirty)}" if dirty else "")


def shown(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it (as the reports cite it)."""
    return str(path.relative_to(ROOT)) if path.resolve().is_relative_to(ROOT) else str(path)


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--placements", default="pipeline,hybrid", help="comma-separated placements")
    ap.add_argument("--placement", default="", help=argparse.SUPPRESS)  # the former single-placement flag
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2: both cores)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N cases (0 = all)")
    ap.add_argument("--sample", type=int, default=0, help="only N evenly spaced cases (0 = all)")
    ap.add_argument("--cf-sample", type=int, default=0, help="counterfactuals on N evenly spaced cases")
    ap.add_argument("--no-cf", action="store_true", help="skip the counterfactuals")
    ap.add_argument("--out-dir", type=Path, default=RESULTS,
                    help="folder for eval_<placement>.md/.json/.csv")
    ap.add_argument("--check", type=int, default=0,
                    help="only check N cases: identical results with and without the speed-ups")
    args = ap.parse_args()
    placements = [p for p in (args.placement or args.placements).split(",") if p]
    cases = course_cases()
    if args.check:
        sys.exit(1 if check(evenly(cases, args.check), placements, args.workers) else 0)
    if args.limit:
        cases = cases[: args.limit]
    cases = evenly(cases, args.sample)
    cf_cases = [] if args.no_cf else evenly(cases, args.cf_sample)
    code = code_version()
    t0 = time.perf_counter()
    started = dt.datetime.now(dt.timezone.utc)
    load = os.getloadavg()[0]
    reports, timings = evaluate_full(cases, functools.partial(course_index, progress=False),
                                     placements=placements, counterfactuals=not args.no_cf,
                                     cf_cases=[c.id for c in cf_cases], workers=args.workers)
    t_run = time.perf_counter() - t0
    gates = load_gates(ROOT / "datasets" / "gates.toml")
    cmd = "OMP_NUM_THREADS=1 python bench/eval_full.py" + \
        (f" --placements {','.join(placements)}" if placements != ["pipeline", "hybrid"] else "") + \
        (f" --workers {args.workers}" if args.workers != 2 else "") + \
        (f" --limit {args.limit}" if args.limit else "") + \
        (f" --sample {args.sample}" if args.sample else "") + \
        (" --no-cf" if args.no_cf else f" --cf-sample {args.cf_sample}" if args.cf_sample else "")
    t_write = time.perf_counter()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for p, report in reports.items():
        report.gates = check_gates(gates, report_figures(report))
        out = args.out_dir / f"eval_{p}"
        out.with_suffix(".json").write_text(report.to_json(indent=1))
        report.to_csv(out.with_suffix(".csv"))
    t_write = time.perf_counter() - t_write
    total = time.perf_counter() - t0
    n = max(len(cases), 1)
    lines = [f"| part | {' | '.join(placements)} |", "|---|" + "---|" * len(placements)]
    for part, label in (("run", f"agent runs, {len(cases)} cases"), ("score", "scoring"),
                        ("counterfactuals", f"counterfactual runs, {len(cf_cases)} cases")):
        lines.append(f"| {label}: CPU s (wall s summed over jobs) | " + " | ".join(
            f"{timings[p][part]['cpu_s']:.0f} ({timings[p][part]['wall_s']:.0f})" for p in placements) + " |")
    lines.append("| agent run CPU s per case | " + " | ".join(
        f"{timings[p]['run']['cpu_s'] / n:.2f}" for p in placements) + " |")
    timing_text = "\n".join([
        f"Wall time: {total:.0f}s in all ({total / 60:.1f} min) = {t_run:.0f}s for the runs, scoring and "
        f"counterfactuals on {args.workers} worker process(es) (each loads the index and models once) + "
        f"{t_write:.0f}s writing reports. Started {started:%Y-%m-%d %H:%M} UTC at load average {load:.1f}, "
        f"ended at load average {os.getloadavg()[0]:.1f} (2-core machine shared with other engineers' jobs: "
        "measured under load, wall times are upper bounds; CPU seconds are the load-independent figure).",
        "", *lines, ""])
    for p, report in reports.items():
        out = args.out_dir / f"eval_{p}"
        boundaries = report.boundaries().reset_index()
        boundaries = boundaries[boundaries["tag"].isin(TAGS)]
        cf = report.counterfactuals
        text = "\n".join([
            f"# Evaluation of the bundled cases: {p} placement\n",
            f"Produced by `{cmd}` (one command for every placement: {', '.join(placements)}), "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; code: {code}.\n",
            timing_text,
            "Seconds per task are each run's own wall time with one ONNX thread per run (two runs side by "
            "side); a reranker score shared from an earlier run is charged the time it cost when computed, "
            "so every run is timed as with a cold cache.\n",
            "```", str(report), "```\n",
            "## Boundary table per tag\n", boundaries.to_markdown(index=False, floatfmt=".3f"), "",
            "## Honesty per tag\n", report.honesty().to_markdown(floatfmt=".3f"), "",
            "## Diagnosis\n", diagnose(report).to_markdown(index=False), "",
            "## Counterfactual failures (first 10 each)\n",
            *([f"- **{name}**: " + "; ".join(f"`{f['case']}` {f['why']}" for f in r.failures[:10])
               for name, r in cf.results.items()] if cf else ["(not run)"]),
            "", f"Per-case rows: `{shown(out.with_suffix('.csv'))}`; "
            f"whole report: `{shown(out.with_suffix('.json'))}`.\n"])
        publish(out.with_suffix(".md"), text)


if __name__ == "__main__":
    main()
