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

import argparse
import datetime as dt
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ragkit.cases import load_cases  # noqa: E402
from ragkit.course import course_index  # noqa: E402
from ragkit.fusion import rrf  # noqa: E402
from ragkit.scope import Filters, Scope  # noqa: E402

METHODS = ("bm25", "dense", "rrf")


def measure(width: int = 50) -> tuple[dict, int]:
    index = course_index()
    cases = [c for c in load_cases(ROOT / "datasets" / "opscorpus" / "cases.jsonl") if c.answerable]
    found: dict[str, dict[str, list[tuple[bool, float]]]] = {m: defaultdict(list) for m in METHODS}
    for case in cases:
        scope = Scope(case.caller.tenant, case.caller.groups)
        filters = Filters(published_before=case.as_of + dt.timedelta(seconds=1))
        mask = index.mask(scope, filters)
        lex = index.search_lexical(case.task, width, mask)
        den = index.search_dense(case.task, width, mask)
        runs = {"bm25": lex, "dense": den, "rrf": rrf([lex, den]).top(width)}
        need = {(e.doc_id, e.anchor) for e in case.evidence}
        for method, ranking in runs.items():
            got = {(index.rows[r].doc_id, index.rows[r].anchor) for r in ranking.ids}
            share = len(need & got) / len(need)
            for tag in ("all", *case.tags):
                found[method][tag].append((share == 1.0, share))
    return found, len(cases)


def table(found: dict, width: int) -> str:
    tags = sorted(found["rrf"], key=lambda t: (t != "all", t))
    head = "| category | cases | " + " | ".join(f"{m} set / item" for m in METHODS) + " |"
    lines = [head, "|" + "---|" * (2 + len(METHODS))]
    for tag in tags:
        n = len(found["rrf"][tag])
        cells = []
        for m in METHODS:
            rows = found[m][tag]
            cells.append(f"{sum(r[0] for r in rows) / n:.3f} / {sum(r[1] for r in rows) / n:.3f}")
        lines.append(f"| {tag} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=50)
    parser.add_argument("--card", action="store_true", help="also write the table into datasets/README.md")
    args = parser.parse_args()
    t = time.perf_counter()
    found, n = measure(args.width)
    body = table(found, args.width)
    cmd = "python bench/corpus_recall.py" + (" --card" if args.card else "")
    text = (f"Candidate recall@{args.width} on {n} answerable cases (searched as each case's caller, "
            f"documents published by its as_of). Cells: evidence-set recall (whole minimum evidence "
            f"set among the candidates) / item recall (mean share of evidence sections found).\n\n"
            f"{body}\n\nProduced by `{cmd}` in {time.perf_counter() - t:.0f}s on "
            f"{dt.date.today().isoformat()}.\n")
    out = ROOT / "bench" / "results" / "corpus_recall.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# Course corpus: candidate recall by category\n\n{text}")
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
