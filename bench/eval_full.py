"""The full evaluation of the bundled cases: one placement, every case, counterfactuals, timing.

Runs the reference agent (``ragkit.agent.Agent`` with the offline policy) at a placement over
``datasets/opscorpus/cases.jsonl`` on the course index, scores every case at every boundary
(``ragkit.evaluation.evaluate``), runs the four counterfactual tests on every case (or on a
deterministic sample with ``--cf-sample N``: every k-th case), checks ``datasets/gates.toml``,
and writes ``bench/results/eval_<placement>.md`` (report, gates, diagnosis, timings),
``.json`` (the whole report) and ``.csv`` (one row per case).

Usage: python bench/eval_full.py --placement pipeline [--limit N] [--cf-sample N] [--no-cf]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ragkit.cases import load_cases  # noqa: E402
from ragkit.counterfactuals import run_counterfactuals  # noqa: E402
from ragkit.course import course_index  # noqa: E402
from ragkit.evaluation import agent_runner, evaluate  # noqa: E402
from ragkit.gates import check_gates, diagnose, load_gates, report_figures  # noqa: E402
from ragkit.models import get_reranker  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--placement", default="pipeline", choices=("pipeline", "tool", "hybrid"))
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases (0 = all)")
    parser.add_argument("--sample", type=int, default=0, help="only N evenly spaced cases (0 = all)")
    parser.add_argument("--cf-sample", type=int, default=0, help="counterfactuals on N evenly spaced cases")
    parser.add_argument("--no-cf", action="store_true", help="skip the counterfactuals")
    args = parser.parse_args()
    cases = load_cases(ROOT / "datasets" / "opscorpus" / "cases.jsonl")
    if args.limit:
        cases = cases[: args.limit]
    if args.sample and args.sample < len(cases):
        step = len(cases) / args.sample
        cases = [cases[int(i * step)] for i in range(args.sample)]
    t0 = time.perf_counter()
    index = course_index(progress=False)
    reranker = get_reranker()
    t_load = time.perf_counter() - t0
    t = time.perf_counter()
    report = evaluate(cases, agent_runner(index, args.placement, reranker=reranker), placement=args.placement)
    t_eval = time.perf_counter() - t
    t_cf = 0.0
    cf_cases = cases
    if not args.no_cf:
        if args.cf_sample and args.cf_sample < len(cases):
            step = len(cases) / args.cf_sample
            cf_cases = [cases[int(i * step)] for i in range(args.cf_sample)]
        baseline = dict(zip(report.frame["case"], report.frame["correct"].astype(bool), strict=True))
        t = time.perf_counter()
        report.counterfactuals = run_counterfactuals(
            cf_cases, index, lambda view: agent_runner(view, args.placement, reranker=reranker),
            baseline=baseline)
        t_cf = time.perf_counter() - t
    report.gates = check_gates(load_gates(ROOT / "datasets" / "gates.toml"), report_figures(report))
    out = ROOT / "bench" / "results" / f"eval_{args.placement}"
    out.with_suffix(".json").write_text(report.to_json(indent=1))
    report.to_csv(out.with_suffix(".csv"))
    cmd = "python bench/eval_full.py --placement " + args.placement + \
        (f" --limit {args.limit}" if args.limit else "") + \
        (f" --sample {args.sample}" if args.sample else "") + \
        (" --no-cf" if args.no_cf else f" --cf-sample {args.cf_sample}" if args.cf_sample else "")
    boundaries = report.boundaries().reset_index()
    boundaries = boundaries[boundaries["tag"].isin(["all", "conflict", "identifier", "multi_hop", "temporal",
                                                    "vocabulary_mismatch", "scoped", "injection", "story"])]
    text = "\n".join([
        f"# Evaluation of the bundled cases: {args.placement} placement\n",
        f"Produced by `{cmd}` on {dt.date.today().isoformat()} (OMP_NUM_THREADS="
        f"{os.environ.get('OMP_NUM_THREADS', 'unset')}), on the shared 2-core machine while other "
        "engineers were running jobs: timings are upper bounds.\n",
        f"Timings: load index and models {t_load:.0f}s; evaluate {len(cases)} cases {t_eval:.0f}s "
        f"({t_eval / max(len(cases), 1):.2f}s per case); counterfactuals on {len(cf_cases)} cases "
        f"{t_cf:.0f}s; total {time.perf_counter() - t0:.0f}s.\n",
        "```", str(report), "```\n",
        "## Boundary table per tag\n", boundaries.to_markdown(index=False, floatfmt=".3f"), "",
        "## Honesty per tag\n", report.honesty().to_markdown(floatfmt=".3f"), "",
        "## Diagnosis\n", diagnose(report).to_markdown(index=False), "",
        "## Counterfactual failures (first 10 each)\n",
        *([f"- **{name}**: " + "; ".join(f"`{f['case']}` {f['why']}" for f in r.failures[:10])
           for name, r in report.counterfactuals.results.items()]
          if report.counterfactuals else ["(not run)"]),
        "", f"Per-case rows: `{out.with_suffix('.csv').relative_to(ROOT)}`; "
        f"whole report: `{out.with_suffix('.json').relative_to(ROOT)}`.\n"])
    out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
