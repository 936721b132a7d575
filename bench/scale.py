"""Lexical and dense retrieval at scale on synthetic corpora (10k / 100k / 1M chunks).

Synthetic, stated plainly: chunk texts are drawn from a Zipf-distributed vocabulary of made-up
words (60-100 words each), queries are 2-5 words drawn the same way; vectors are 384-d,
L2-normalised, drawn around 2,000 random cluster centres (real embeddings are clustered;
uniform noise would be an unrealistically hard case for HNSW), and queries are perturbed
corpus vectors. No model is run, so the figures measure the retrieval structures only.

* Lexical: ragkit's :class:`~ragkit.lexical.BM25Retriever` with a scope mask (a random half of
  the rows allowed) against raw ``bm25s`` on the same pre-tokenised corpus (``get_scores`` +
  top-k, no mask), and ``rank_bm25`` (only up to ``--rank-bm25-max`` rows: it is pure Python).
* Dense: exact inner product (``faiss.IndexFlatIP``) against HNSW (``faiss.IndexHNSWFlat``,
  M=32) through :class:`~ragkit.dense.DenseRetriever`: p50 latency, recall@10 of HNSW against
  exact on ``--queries`` queries, build time, and resident memory growth.

Writes ``bench/results/scale.md`` (or ``--result``).

Usage: python bench/scale.py [--sizes 10000 100000] [--queries 1000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ragkit.dense import HNSW_MIN_ROWS, DenseRetriever  # noqa: E402
from ragkit.lexical import BM25Retriever  # noqa: E402


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=int(n))) + "x" for n in rng.integers(4, 10, size=size)]


def texts(n: int, vocab: list[str], rng: np.random.Generator, lo: int, hi: int) -> list[list[str]]:
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks ** 1.07
    p /= p.sum()
    lengths = rng.integers(lo, hi + 1, size=n)
    words = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    out, at = [], 0
    for length in lengths:
        out.append([vocab[w] for w in words[at:at + length]])
        at += length
    return out


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def lexical(n: int, queries: int, rank_bm25_max: int, rng: np.random.Generator) -> dict[str, float]:
    import bm25s

    vocab = vocabulary(50_000, rng)
    corpus = texts(n, vocab, rng, 60, 100)
    qs = [" ".join(q) for q in texts(queries, vocab[:20_000], rng, 2, 5)]
    out: dict[str, float] = {}
    t = time.perf_counter()
    ours = BM25Retriever([" ".join(d) for d in corpus], stemmer=None, stopwords=None)
    out["ragkit build s"] = time.perf_counter() - t
    raw = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    t = time.perf_counter()
    raw.index(corpus, show_progress=False)
    out["bm25s build s"] = time.perf_counter() - t
    mask = rng.random(n) < 0.5
    ms_ours, ms_raw, ms_rank = [], [], []
    for q in qs:
        t = time.perf_counter()
        ours.search(q, 50, mask)
        ms_ours.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        scores = raw.get_scores(q.split())
        top = np.argpartition(-scores, 50)[:50]
        top[np.argsort(-scores[top])]
        ms_raw.append((time.perf_counter() - t) * 1000)
    out["ragkit p50 ms (masked)"] = p50(ms_ours)
    out["bm25s p50 ms"] = p50(ms_raw)
    out["ratio ragkit/bm25s"] = out["ragkit p50 ms (masked)"] / out["bm25s p50 ms"]
    if n <= rank_bm25_max:
        from rank_bm25 import BM25Okapi

        model = BM25Okapi(corpus, k1=1.5, b=0.75)
        for q in qs[:50]:
            t = time.perf_counter()
            s = model.get_scores(q.split())
            np.argsort(-s)[:50]
            ms_rank.append((time.perf_counter() - t) * 1000)
        out["rank_bm25 p50 ms (50 q)"] = p50(ms_rank)
    return out


def clustered(n: int, dim: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        block = centres[rng.integers(0, len(centres), size=m)] + 0.35 * rng.standard_normal((m, dim),
                                                                                              dtype=np.float32)
        out[start:start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def dense(n: int, queries: int, rng: np.random.Generator, dim: int = 384) -> dict[str, float]:
    centres = rng.standard_normal((2000, dim), dtype=np.float32) / np.sqrt(dim)
    vectors = clustered(n, dim, rng, centres)
    picks = vectors[rng.integers(0, n, size=queries)]
    qv = picks + 0.05 * rng.standard_normal(picks.shape, dtype=np.float32) / np.sqrt(dim)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    out: dict[str, float] = {}
    results = {}
    for kind in ("flat", "hnsw"):
        gc.collect()
        before = rss_mb()
        t = time.perf_counter()
        retriever = DenseRetriever(vectors, embedder=None, kind=kind)
        out[f"{kind} build s"] = time.perf_counter() - t
        out[f"{kind} memory MB"] = rss_mb() - before
        ms, ids = [], []
        for q in qv:
            t = time.perf_counter()
            r = retriever.search("q", 10, query_vector=q)
            ms.append((time.perf_counter() - t) * 1000)
            ids.append(r.ids)
        out[f"{kind} p50 ms"] = p50(ms)
        results[kind] = ids
        del retriever
    out["hnsw recall@10 vs exact"] = float(np.mean([len(set(a) & set(b)) / 10
                                                    for a, b in zip(results["flat"], results["hnsw"],
                                                                    strict=True)]))
    return out


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=1000, help="dense queries (recall@10 vs exact)")
    parser.add_argument("--lexical-queries", type=int, default=200)
    parser.add_argument("--rank-bm25-max", type=int, default=10_000)
    parser.add_argument("--skip-lexical", action="store_true")
    parser.add_argument("--result", type=Path, default=ROOT / "bench" / "results" / "scale.md")
    args = parser.parse_args(argv)
    rows: dict[int, dict[str, float]] = {}
    for n in args.sizes:
        rng = np.random.default_rng(n)
        row: dict[str, float] = {}
        if not args.skip_lexical:
            row.update(lexical(n, args.lexical_queries, args.rank_bm25_max, rng))
        row.update(dense(n, args.queries, rng))
        rows[n] = row
        print(n, {k: round(v, 3) for k, v in row.items()}, flush=True)
    keys = list(dict.fromkeys(k for r in rows.values() for k in r))
    lines = ["| measure | " + " | ".join(f"{n:,} chunks" for n in rows) + " |", "|---|" + "---|" * len(rows)]
    for k in keys:
        cells = " | ".join(f"{rows[n][k]:.3f}" if k in rows[n] else "-" for n in rows)
        lines.append(f"| {k} | {cells} |")
    cmd = "python bench/scale.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = ("# Lexical and dense retrieval at scale (synthetic corpora)\n\n"
            "Synthetic texts (Zipf vocabulary of made-up words) and synthetic clustered 384-d vectors; no "
            f"model runs. Lexical: {args.lexical_queries} queries, top 50; ragkit searched with a scope mask "
            f"allowing a random half of the rows. Dense: {args.queries} queries, top 10; HNSW M=32, "
            f"efConstruction=200, efSearch=128. ragkit's index chooses HNSW from {HNSW_MIN_ROWS:,} rows "
            "(`ragkit.dense.HNSW_MIN_ROWS`, `kind=\"auto\"`).\n\n" + "\n".join(lines)
            + f"\n\nProduced by `{cmd.strip()}` on {dt.date.today().isoformat()}, 2-core machine shared with "
            "other jobs (latencies are noisy medians).\n")
    args.result.parent.mkdir(parents=True, exist_ok=True)
    args.result.write_text(text)
    print(text)
    return text


if __name__ == "__main__":
    main()
