"""Indexing throughput on the course corpus, per embedder: encode rate and full build time.

For each embedder (``--embedders``), encodes the same random sample of chunks (side by side,
so machine load hits both alike), then builds the whole course index with the embedders
named by ``--full`` (chunk + embed + BM25 + faiss) and optionally saves it (``--out``, one
folder per embedder). Writes ``bench/results/index_throughput.md``.

Usage: python bench/index_throughput.py [--sample 300] [--full bge] [--out .ragkit-cache/bench-course]
"""

from __future__ import annotations

import datetime as dt
import os
import random
import sys
import time
from pathlib import Path

from _common import DOCS, parser, publish

from ragkit import Index, chunk_documents, load_corpus
from ragkit.index import IndexSettings
from ragkit.models import get_embedder, workers


def main(argv: list[str] | None = None) -> str:
    ap = parser(__doc__, "index_throughput.md")
    ap.add_argument("--corpus", type=Path, default=DOCS)
    ap.add_argument("--embedders", nargs="*", default=["bge", "minilm"])
    ap.add_argument("--sample", type=int, default=300, help="chunks encoded by every embedder")
    ap.add_argument("--full", nargs="*", default=["bge"], help="embedders that build the whole index")
    ap.add_argument("--out", type=Path, default=None, help="save each full index to OUT-<embedder>")
    args = ap.parse_args(argv)
    docs, _ = load_corpus(args.corpus)
    chunks = [c for c in chunk_documents(docs) if c.kind == "chunk"]
    rng = random.Random(0)
    sample = [c.contextual_text() for c in rng.sample(chunks, min(args.sample, len(chunks)))]
    lines = ["| embedder | model | load s | chunks/s (sample, wall) | CPU ms per chunk "
             "| est. encode s, whole corpus, 2 idle cores |", "|---|---|---|---|---|---|"]
    for name in args.embedders:
        t = time.perf_counter()
        emb = get_embedder(name)
        emb.encode(["warm up"])
        load = time.perf_counter() - t
        t, c = time.perf_counter(), time.process_time()
        emb.encode(sample)
        rate = len(sample) / (time.perf_counter() - t)
        cpu = (time.process_time() - c) / len(sample)
        lines.append(f"| {name} | {emb.name} | {load:.1f} | {rate:.1f} | {cpu * 1000:.1f} | "
                     f"{cpu * len(chunks) / 2:.0f} |")
        print(lines[-1], flush=True)
    full = ["| embedder | index.build s, wall (chunk + embed + BM25 + faiss) | CPU s "
            "| est. s on 2 idle cores | save s | reopen s |", "|---|---|---|---|---|---|"]
    for name in args.full:
        t, c = time.perf_counter(), time.process_time()
        index = Index.build(docs, IndexSettings(embedder=name))
        build, cpu_build = time.perf_counter() - t, time.process_time() - c
        save = reopen = float("nan")
        if args.out is not None:
            target = Path(f"{args.out}-{name}")
            t = time.perf_counter()
            index.save(target)
            save = time.perf_counter() - t
            t = time.perf_counter()
            Index.load(target)
            reopen = time.perf_counter() - t
        full.append(f"| {name} | {build:.1f} | {cpu_build:.1f} | {cpu_build / 2:.0f} | {save:.1f} | "
                    f"{reopen:.1f} |")
        print(full[-1], flush=True)
    cmd = "python bench/index_throughput.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = (f"# Indexing throughput on the course corpus\n\n{len(docs)} documents -> {len(chunks)} chunks; "
            f"sample of {len(sample)} chunks encoded by each embedder; {workers()} ONNX worker(s), "
            f"{os.cpu_count()} CPUs.\n\n## Encode rate (same sample, side by side)\n\n" + "\n".join(lines)
            + "\n\n## Whole index\n\n" + "\n".join(full)
            + f"\n\nProduced by `{cmd.strip()}` on {dt.date.today().isoformat()}, 2-core machine shared with "
            f"other jobs (load average {os.getloadavg()[0]:.0f} at the end): wall times are inflated; "
            "compare rows of one run. CPU is the process's CPU time (all threads); the 2-idle-core "
            "estimate halves it (the ONNX embedder runs texts on two workers side by side; torch uses "
            "two threads).\n")
    return publish(args.result, text)


if __name__ == "__main__":
    main()
