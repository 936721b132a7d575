"""Choose how the cross-encoder meets the first stage: measure every mode on several BEIR sets.

Builds the BEIR-format sets of ``bench/build_beir_sets.py`` (standard-library docstrings;
the course corpus at document level, all cases and two hard tags) and runs
``ragkit.evaluation.compare.evaluate_beir`` on each (the Funnel and its ablations): BM25, dense, RRF,
the reranked head in cross-encoder order, and the default RRF of first-stage and
cross-encoder ranks at three weightings (the default 1:2, then 1:1 and 2:1).
Writes ``bench/results/rerank_modes.md``.

Usage: python bench/rerank_modes.py [--max-queries 200]
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import time

from _common import ROOT, add_beir_flags, parser, publish

from ragkit.evaluation import ABLATIONS, evaluate_beir, format_table, load_beir

SETS = ("pydoc", "ops-all", "ops-vocabulary_mismatch", "ops-multi_hop")
#: other (first stage : reranker) weightings of rerank_mode="rrf", as funnel settings
WEIGHTS = {"rerank_rrf_w1:1": {"rerank_weight": 1.0}, "rerank_rrf_w2:1": {"rerank_weight": 0.5}}


def main() -> None:
    ap = add_beir_flags(parser(__doc__, "rerank_modes.md"))
    ap.add_argument("--max-queries", type=int, default=200)
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    ap.add_argument("--no-build", action="store_true", help="use the sets already in --sets-dir")
    args = ap.parse_args()
    base = args.sets_dir
    if not args.no_build:
        subprocess.run([sys.executable, str(ROOT / "bench" / "build_beir_sets.py"), "--out", str(base)],
                       check=True)
    sections = []
    summary = []
    for name in args.sets:
        t = time.perf_counter()
        data = load_beir(base / name)
        report = evaluate_beir(data, name=name, candidates=100, max_queries=args.max_queries,
                               cache_dir=args.cache, methods={**ABLATIONS, **WEIGHTS},
                               progress=False, log=lambda m: print(m, file=sys.stderr))
        took = time.perf_counter() - t
        sections.append(f"### {name} ({len(data.corpus)} documents)\n\n```\n{format_table(report)}\n```\n"
                        f"({took:.0f}s)\n")
        summary.append((name, {m: r["ndcg@10"] for m, r in report.items()}))
        print(sections[-1], flush=True)
    methods = list(summary[0][1])
    table = ["| set | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for name, row in summary:
        best = max(row.values())
        table.append(f"| {name} | " + " | ".join(
            (f"**{row[m]:.4f}**" if row[m] == best else f"{row[m]:.4f}") for m in methods) + " |")
    mean = {m: sum(r[m] for _, r in summary) / len(summary) for m in methods}
    table.append("| mean | " + " | ".join(f"{mean[m]:.4f}" for m in methods) + " |")
    cmd = "python bench/rerank_modes.py" + (f" --max-queries {args.max_queries}")
    text = ("# How the reranker meets the first stage\n\n"
            "nDCG@10 per set (bold: best on that set), every method a setting of the same Funnel "
            "(`ragkit.evaluation.compare`), documents scored by their best chunk. `rerank` = the reranked "
            "head in "
            "cross-encoder order; `default` = the funnel's defaults (RRF of the first-stage rank and the "
            "cross-encoder rank, 1:2); `rerank_rrf_wA:B` other weightings, first stage : reranker.\n\n"
            + "\n".join(table) + "\n\n## Per set\n\n" + "\n".join(sections)
            + f"\nProduced by `{cmd}` on {dt.date.today().isoformat()} (2-core shared machine; "
            "latencies are medians per query and noisy).\n")
    publish(args.result, text)


if __name__ == "__main__":
    main()
