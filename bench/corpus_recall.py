"""Candidate recall@50 per case category on the course corpus: BM25 only, dense only, RRF.

For every answerable evidence case, search as the case's caller (tenant and groups) over the
documents published by the case's ``as_of`` time, take each method's top-50 chunks, and ask
whether the case's minimum evidence set (doc_id + section anchor) is among them. Reported per
tag: the share of cases whose *whole* evidence set is in the candidates (evidence-set recall)
and the mean share of evidence items found (item recall).

Writes ``bench/results/corpus_recall.md`` and, with ``--card``, the table in
``datasets/README.md`` between the ``<!-- recall:begin -->`` / ``<!-- recall:end -->`` markers.

Usage: python bench/corpus_recall.py [--card] [--width 50]
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

from _common import ROOT, course_cases, parser, publish

from ragkit import Index
from ragkit.course import course_index
from ragkit.evaluation import RETRIEVERS, candidate_recall


def table(result) -> str:
    tags = sorted(result.index.get_level_values("tag").unique(), key=lambda t: (t != "all", t))
    head = "| category | cases | " + " | ".join(f"{m} set / item" for m in RETRIEVERS) + " |"
    lines = [head, "|" + "---|" * (2 + len(RETRIEVERS))]
    for tag in tags:
        n = int(result.loc[(tag, "rrf"), "cases"])
        cells = [f"{result.loc[(tag, m), 'set_recall']:.3f} / {result.loc[(tag, m), 'item_recall']:.3f}"
                 for m in RETRIEVERS]
        lines.append(f"| {tag} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = parser(__doc__, "corpus_recall.md")
    ap.add_argument("--width", type=int, default=50)
    ap.add_argument("--card", action="store_true", help="also write the table into datasets/README.md")
    ap.add_argument("--index", type=Path, default=None, help="index folder (default: course index)")
    args = ap.parse_args()
    t = time.perf_counter()
    cases = course_cases()
    index = Index.load(args.index) if args.index is not None else course_index()
    result = candidate_recall(index, cases, width=args.width)
    n = int(result.loc[("all", "rrf"), "cases"])
    body = table(result)
    cmd = "python bench/corpus_recall.py" + (" --card" if args.card else "") + \
        (f" --index {args.index}" if args.index is not None else "")
    text = (f"Candidate recall@{args.width} on {n} answerable cases (searched as each case's caller, "
            f"documents published by its as_of). Cells: evidence-set recall (whole minimum evidence "
            f"set among the candidates) / item recall (mean share of evidence sections found).\n\n"
            f"{body}\n\nProduced by `{cmd}` in {time.perf_counter() - t:.0f}s on "
            f"{dt.date.today().isoformat()}.\n")
    publish(args.result, f"# Course corpus: candidate recall by category\n\n{text}", echo=False)
    print(text)
    if args.card:
        card = ROOT / "datasets" / "README.md"
        content = card.read_text()
        begin, end = "<!-- recall:begin -->", "<!-- recall:end -->"
        if begin not in content or end not in content:
            raise SystemExit(f"{card} lacks the {begin} / {end} markers; add them where the table goes")
        pre, rest = content.split(begin, 1)
        post = rest.split(end, 1)[1]
        card.write_text(f"{pre}{begin}\n{text}{end}{post}")


if __name__ == "__main__":
    main()
