"""Index build time and per-stage funnel latency (medians) on the course corpus.

Builds a fresh index of ``datasets/opscorpus/docs`` in a temporary folder (load, chunk,
embed, save), reopens it (no re-encoding), then runs the first ``--queries`` answerable
case tasks through the default funnel as each case's caller and reports the median and p95
of every stage. Writes ``bench/results/funnel_latency.md``.

Usage: python bench/funnel_latency.py [--queries 40]
"""

from __future__ import annotations

import datetime as dt
import statistics
import tempfile
from pathlib import Path

from _common import course_cases, parser, pct, publish, timed

from ragkit import Funnel, Index, chunk_documents, load_corpus
from ragkit.course import course_corpus
from ragkit.models import get_embedder, get_reranker


def main() -> None:
    ap = parser(__doc__, "funnel_latency.md")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--corpus", type=Path, default=None, help="folder (default: course corpus)")
    args = ap.parse_args()
    build: dict[str, float] = {}
    build["load models"], _ = timed(lambda: (get_embedder(), get_reranker()))
    build["load documents"], (docs, _) = timed(lambda: load_corpus(args.corpus or course_corpus()))
    build["chunk"], chunks = timed(lambda: chunk_documents(docs))
    build["index.build (chunk + embed + BM25 + faiss)"], index = timed(lambda: Index.build(docs))
    with tempfile.TemporaryDirectory() as tmp:
        build["save"], _ = timed(lambda: index.save(Path(tmp) / "idx"))
        build["reopen (no re-encoding)"], index = timed(lambda: Index.load(Path(tmp) / "idx"))
    rows = sum(1 for c in chunks if c.kind == "chunk")
    funnel = Funnel(index)
    funnel.search("warm up", deliver=1)
    cases = course_cases(answerable=True)
    stages: dict[str, list[float]] = {}
    units: list[int] = []
    for case in cases[: args.queries]:
        result = funnel.search(case.task, scope=case.caller)
        for k, v in result.trace.timings_ms.items():
            stages.setdefault(k, []).append(v)
        units.append(result.trace.tokens["reranker_units"])
    lines = ["| step | seconds |", "|---|---|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in build.items()]
    table2 = ["| stage | median ms | p95 ms |", "|---|---|---|"]
    table2 += [f"| {k} | {statistics.median(v):.1f} | {pct(v, 0.95):.1f} |" for k, v in stages.items()]
    text = (f"# Funnel latency on the course corpus\n\n{len(docs)} documents -> {rows} chunks.\n\n"
            "## Build\n\n" + "\n".join(lines) + "\n\n"
            f"## Query ({len(units)} case tasks, default funnel: 50 candidates per retriever, "
            "up to 30 reranked (adaptive depth), 4 delivered)\n\n" + "\n".join(table2)
            + f"\n\nReranker work per query: median {statistics.median(units):.0f} token-units.\n\n"
            f"Produced by `python bench/funnel_latency.py --queries {args.queries}` on "
            f"{dt.date.today().isoformat()}, 2-core shared machine (noisy: compare medians).\n")
    publish(args.result, text)


if __name__ == "__main__":
    main()
