"""Index build time and per-stage funnel latency (medians) on the course corpus.

Builds a fresh index of ``datasets/opscorpus/docs`` in a temporary folder (load, chunk,
embed, save), reopens it (no re-encoding), then runs the first ``--queries`` answerable
case tasks through the default funnel as each case's caller and reports the median and p95
of every stage. Writes ``bench/results/funnel_latency.md``.

Usage: python bench/funnel_latency.py [--queries 40]
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ragkit import (
    Funnel,  # noqa: E402
    Index,  # noqa: E402
    chunk_documents,  # noqa: E402
    load_cases,  # noqa: E402
    load_corpus,  # noqa: E402
)
from ragkit.course import course_corpus  # noqa: E402
from ragkit.models import get_embedder, get_reranker  # noqa: E402


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--corpus", type=Path, default=None, help="folder (default: course corpus)")
    parser.add_argument("--result", type=Path, default=ROOT / "bench" / "results" / "funnel_latency.md")
    args = parser.parse_args()
    build: dict[str, float] = {}
    t = time.perf_counter()
    get_embedder(), get_reranker()
    build["load models"] = time.perf_counter() - t
    t = time.perf_counter()
    docs, _ = load_corpus(args.corpus or course_corpus())
    build["load documents"] = time.perf_counter() - t
    t = time.perf_counter()
    chunks = chunk_documents(docs)
    build["chunk"] = time.perf_counter() - t
    t = time.perf_counter()
    index = Index.build(docs)
    build["index.build (chunk + embed + BM25 + faiss)"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        index.save(Path(tmp) / "idx")
        build["save"] = time.perf_counter() - t
        t = time.perf_counter()
        index = Index.load(Path(tmp) / "idx")
        build["reopen (no re-encoding)"] = time.perf_counter() - t
    rows = sum(1 for c in chunks if c.kind == "chunk")
    funnel = Funnel(index)
    funnel.search("warm up", deliver=1)
    cases = [c for c in load_cases(ROOT / "datasets" / "opscorpus" / "cases.jsonl") if c.answerable]
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
            "30 reranked, 4 delivered)\n\n" + "\n".join(table2)
            + f"\n\nReranker work per query: median {statistics.median(units):.0f} token-units.\n\n"
            f"Produced by `python bench/funnel_latency.py --queries {args.queries}` on "
            f"{dt.date.today().isoformat()}, 2-core shared machine (noisy: compare medians).\n")
    out = args.result
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
