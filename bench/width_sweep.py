"""Width sweep on the course corpus: candidate width x delivered width -> recall, tokens, total cost.

Every answerable case (or every k-th with ``--sample N``) is searched as its caller over its
snapshot at each candidate width; each delivered width is read off the same final ranking
(``ragkit.evaluation.sweep.width_sweep``). Total cost counts the recovery calls an insufficient first
call causes (1 + (1 - evidence-set recall) x 2 calls per task) and prices reranker
token-units and main-model token-turns (6 remaining turns) 1:1.

Writes ``bench/results/width_sweep.md`` and ``bench/results/width_sweep.png``.

Usage: python bench/width_sweep.py [--sample 60]
"""

from __future__ import annotations

import datetime as dt
import time

from _common import RESULTS, course_cases, evenly, parser, publish

from ragkit.course import course_index
from ragkit.evaluation import plot_width_sweep, width_sweep


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--sample", type=int, default=60, help="evenly spaced answerable cases (0 = all)")
    args = ap.parse_args()
    cases = evenly(course_cases(answerable=True), args.sample)
    t = time.perf_counter()
    frame = width_sweep(course_index(progress=False), cases)
    seconds = time.perf_counter() - t
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 3.8), layout="constrained")
    axes = fig.subplots(1, 2)
    plot_width_sweep(frame, y="set_recall", ax=axes[0])
    plot_width_sweep(frame, y="total_cost", ax=axes[1])
    fig.savefig(RESULTS / "width_sweep.png", dpi=90)
    best = frame.sort_values("total_cost").head(5)
    cmd = "python bench/width_sweep.py" + (f" --sample {args.sample}" if args.sample else " --sample 0")
    text = (f"# Width sweep on the course corpus\n\n{len(cases)} answerable cases, rerank depth "
            f"min(30, candidates). Total cost in main-model token-turn units: calls per task x "
            f"(reranker units + delivered tokens x 6 turns).\n\n"
            f"{frame.to_markdown(index=False, floatfmt='.3f')}\n\nCheapest five:\n\n"
            f"{best.to_markdown(index=False, floatfmt='.3f')}\n\n![sweep](width_sweep.png)\n\n"
            f"Produced by `{cmd}` in {seconds:.0f}s on {dt.date.today().isoformat()} (shared 2-core "
            "machine, other jobs running).\n")
    publish(RESULTS / "width_sweep.md", text)


if __name__ == "__main__":
    main()
