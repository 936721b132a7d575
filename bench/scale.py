"""Lexical and dense retrieval at scale, and a 1M-chunk index, on synthetic corpora.

Synthetic, stated plainly: chunk texts are drawn from a Zipf-distributed vocabulary (exponent
1.07) of 50,000 made-up words (60-100 words each); queries are 2-5 words drawn the same way from
the 20,000 most frequent. Vectors are 384-d unit vectors of intrinsic dimension 32 (2,000
clusters in a 32-d latent space, projected; see :func:`synthetic_vectors`), and queries are
perturbed corpus vectors. No model is run: the figures measure the retrieval structures only.

Parts (``--parts``, each writes its own rows; results of several runs are merged):

* ``lexical``: ragkit's index scorer (:class:`~ragkit.retrieval.SegmentedBM25`, what
  ``Index.search_lexical`` runs) searched with a scope mask allowing a random half of the rows,
  against raw ``bm25s`` on the same tokens (``get_scores`` + top-k, no mask), and ``rank_bm25``
  (only up to ``--rank-bm25-max`` rows: it is pure Python). ragkit keeps each term's weights for
  the life of a snapshot; "cold" clears them before every query.
* ``dense``: exact inner product (``faiss.IndexFlatIP``) against HNSW (``faiss.IndexHNSWFlat``)
  through :class:`~ragkit.retrieval.dense.DenseRetriever`: p50/p95 latency, recall@10 of HNSW against exact
  on ``--queries`` queries, build time (wall and CPU) and resident-memory growth.
* ``index``: a whole :class:`~ragkit.index.index.Index` of ``n`` synthetic chunks (10 per document,
  synthetic vectors through a lookup "embedder"): peak RSS of the build, BM25 and dense p50
  (unmasked and with a half mask), save time, and load time plus first searches in a fresh
  process.

Writes ``bench/results/scale.md`` and ``bench/results/scale.json`` (or ``--result``).

Usage: python bench/scale.py [--sizes 10000 100000] [--parts lexical dense index] [--queries 1000]
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT, parser, publish, timed

from ragkit import Chunk, Document, Envelope, Index
from ragkit.index import FORMAT_VERSION, IndexSettings, new_manifest
from ragkit.retrieval import (
    EF_CONSTRUCTION,
    EF_SEARCH,
    HNSW_M,
    HNSW_MIN_ROWS,
    DenseRetriever,
    Postings,
    SegmentedBM25,
)

DIM = 384


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=int(n))) + "x" for n in rng.integers(4, 10, size=size)]


def texts(n: int, vocab: list[str], rng: np.random.Generator, lo: int, hi: int) -> list[list[str]]:
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks ** 1.07
    p /= p.sum()
    lengths = rng.integers(lo, hi + 1, size=n)
    out: list[list[str]] = []
    for start in range(0, n, 100_000):  # in blocks: one draw of 80M word ids would need 640 MB
        block = lengths[start:start + 100_000]
        words = rng.choice(len(vocab), size=int(block.sum()), p=p)
        at = 0
        for length in block:
            out.append([vocab[w] for w in words[at:at + length]])
            at += length
    return out


def percentile(values: list[float], q: float) -> float:
    """numpy's interpolated percentile ``q`` (0 to 100) of ``values``; NaN when there are none."""
    return float(np.percentile(values, q)) if values else float("nan")


def timed_ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Call ``fn()``; return the milliseconds it took and its result."""
    seconds, out = timed(fn)
    return seconds * 1000, out


def lexical(n: int, queries: int, rank_bm25_max: int, rng: np.random.Generator,
            rounds_n: int = 5) -> dict[str, float]:
    import bm25s


    vocab = vocabulary(50_000, rng)
    corpus = texts(n, vocab, rng, 60, 100)
    qs = [" ".join(q) for q in texts(queries, vocab[:20_000], rng, 2, 5)]
    out: dict[str, float] = {}
    t = time.perf_counter()
    ours = SegmentedBM25([Postings.from_tokens(corpus)], np.ones(n, dtype=bool), stemmer=None,
                         stopwords=None)
    out["ragkit build s"] = time.perf_counter() - t
    raw = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    t = time.perf_counter()
    raw.index(corpus, show_progress=False)
    out["bm25s build s"] = time.perf_counter() - t
    mask = rng.random(n) < 0.5
    ms_cold: list[float] = []
    ms_rank: list[float] = []
    agree = []
    for q in qs:  # cold: the per-term weights of this snapshot are recomputed for every query
        ours.clear_cache()
        ms_cold.append(timed_ms(lambda q=q: ours.search(q, 50, mask))[0])
    ours.clear_cache()

    def raw_top(q: str, model: Any) -> np.ndarray:
        scores = model.get_scores(q.split())
        top = np.argpartition(-scores, 50)[:50]
        return top[np.argsort(-scores[top])]

    rounds: list[tuple[list[float], list[float]]] = []
    for r in range(rounds_n):  # side by side, same queries, in one loop; the whole loop repeated
        ms_warm, ms_raw = [], []
        for q in qs:
            ms_warm.append(timed_ms(lambda q=q: ours.search(q, 50, mask))[0])
            ms, top = timed_ms(lambda q=q: raw_top(q, raw))
            ms_raw.append(ms)
            if r == 0:
                unmasked = ours.search(q, 10)
                agree.append(len(set(unmasked.ids) & set(top[:10].tolist()))
                             / max(1, min(10, len(unmasked.ids))))
        rounds.append((ms_warm, ms_raw))
    ratios = sorted(percentile(w, 50) / percentile(b, 50) for w, b in rounds)
    ms_warm = [x for w, _ in rounds for x in w]
    ms_raw = [x for _, b in rounds for x in b]
    out["ragkit p50 ms (half mask)"] = percentile(ms_warm, 50)
    out["ragkit p95 ms (half mask)"] = percentile(ms_warm, 95)
    out["ragkit cold p50 ms (half mask)"] = percentile(ms_cold, 50)
    out["bm25s p50 ms"] = percentile(ms_raw, 50)
    out["bm25s p95 ms"] = percentile(ms_raw, 95)
    out["ratio ragkit/bm25s p50"] = float(np.median(ratios))
    out["ratio ragkit/bm25s p50, lowest round"] = ratios[0]
    out["ratio ragkit/bm25s p50, highest round"] = ratios[-1]
    out["rounds (side-by-side loops)"] = float(rounds_n)
    out["ratio ragkit cold/bm25s p50"] = out["ragkit cold p50 ms (half mask)"] / out["bm25s p50 ms"]
    out["top-10 overlap ragkit vs bm25s (no mask)"] = float(np.mean(agree))
    raw = None
    gc.collect()
    if n <= rank_bm25_max:
        from rank_bm25 import BM25Okapi

        t = time.perf_counter()
        model = BM25Okapi(corpus, k1=1.5, b=0.75)
        out["rank_bm25 build s"] = time.perf_counter() - t
        for q in qs[:20]:
            ms_rank.append(timed_ms(lambda q=q: np.argsort(-model.get_scores(q.split()))[:50])[0])
        out["rank_bm25 p50 ms (20 q)"] = percentile(ms_rank, 50)
    return out


LATENT = 32


def synthetic_vectors(n: int, queries: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` unit vectors and ``queries`` perturbed copies of random rows (deterministic).

    Sentence embeddings have a low intrinsic dimension, and so do these: 2,000 cluster centres
    in a 32-d latent space plus latent noise, projected to 384-d, plus a little isotropic noise.
    A query's nearest rows then have cosine about 0.6-0.67, as with real embedders. (Isotropic
    384-d noise would make every neighbour nearly equidistant, a case no ANN index is built for.)
    """
    rng = np.random.default_rng(seed)
    project = rng.standard_normal((LATENT, DIM), dtype=np.float32) / np.sqrt(LATENT)
    centres = rng.standard_normal((2000, LATENT), dtype=np.float32)
    vectors = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        z = 0.6 * centres[rng.integers(0, len(centres), size=m)] + \
            0.8 * rng.standard_normal((m, LATENT), dtype=np.float32)
        block = z @ project + (0.1 * np.sqrt(LATENT / DIM)) * rng.standard_normal((m, DIM), dtype=np.float32)
        vectors[start:start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    picks = vectors[rng.integers(0, n, size=queries)]
    qv = picks + 0.05 * rng.standard_normal(picks.shape, dtype=np.float32) / np.sqrt(DIM)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    return vectors, qv.astype(np.float32)


def hnsw_cache_file(folder: Path | None, n: int, seed: int) -> Path | None:
    """Where the dense part leaves its HNSW graph for the index part (same vectors, same settings)."""
    if folder is None:
        return None
    return folder / f"hnsw-{n}-seed{seed}-M{HNSW_M}-efc{EF_CONSTRUCTION}.faiss"


def dense(n: int, queries: int, latency_queries: int, seed: int, cache: Path | None) -> dict[str, float]:
    vectors, qv = synthetic_vectors(n, queries, seed)
    mask = np.random.default_rng(seed + 1).random(n) < 0.5
    out: dict[str, float] = {}
    exact_ids = None
    for kind in ("flat", "hnsw"):
        gc.collect()
        before = rss_mb()
        t, c = time.perf_counter(), time.process_time()
        retriever = DenseRetriever(vectors, embedder=None, kind=kind)
        out[f"{kind} build s"] = time.perf_counter() - t
        out[f"{kind} build CPU s"] = time.process_time() - c
        out[f"{kind} memory MB"] = rss_mb() - before
        if kind == "flat":  # the reference top 10 of every query, in one batched (BLAS) call
            exact_ids = retriever.index.search(qv, 10)[1]
        timed_q = qv[:latency_queries] if kind == "flat" else qv
        ms, ids = [], []
        for q in timed_q:
            took, r = timed_ms(lambda q=q, dr=retriever: dr.search("q", 10, query_vector=q))
            ms.append(took)
            ids.append(r.ids)
        out[f"{kind} p50 ms"] = percentile(ms, 50)
        out[f"{kind} p95 ms"] = percentile(ms, 95)
        masked = [timed_ms(lambda q=q, dr=retriever: dr.search("q", 10, mask, query_vector=q))[0]
                  for q in qv[:latency_queries]]
        out[f"{kind} p50 ms (half mask)"] = percentile(masked, 50)
        if kind == "hnsw":
            assert exact_ids is not None
            out["hnsw recall@10 vs exact"] = float(np.mean(
                [len(set(a) & set(b.tolist())) / 10 for a, b in zip(ids, exact_ids, strict=True)]))
            target = hnsw_cache_file(cache, n, seed)
            if target is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                retriever.save_index(target)
        del retriever
    out["queries (recall)"] = float(queries)
    out["queries (flat latency, masked latency)"] = float(min(latency_queries, queries))
    return out


# ---------------------------------------------------------------- a whole Index


class LookupEmbedder:
    """Synthetic query "embedder": each bench query maps to a fixed synthetic vector (no model)."""

    name = "synthetic-lookup"
    version = "1"
    dim = DIM

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        return np.stack([self.table[t] for t in texts]).astype(np.float32)


def synthetic_index_inputs(n: int, queries: int, seed: int) -> tuple[list[Any], list[Any], np.ndarray,
                                                                      list[str], np.ndarray]:

    rng = np.random.default_rng(seed)
    vocab = vocabulary(50_000, rng)
    words = texts(n, vocab, rng, 60, 100)
    qs = [" ".join(q) for q in texts(queries, vocab[:20_000], rng, 2, 5)]
    vectors, qv = synthetic_vectors(n, 1000, n + 1)  # the dense part's vectors (and its HNSW graph)
    qv = qv[:queries]
    docs, chunks = [], []
    per_doc = 10
    for d in range(0, n, per_doc):
        doc_id = f"d{d // per_doc}"
        parts = [" ".join(w) for w in words[d:d + per_doc]]
        text = "\n\n".join(parts)
        docs.append(Document(Envelope(doc_id, title=f"Doc {d // per_doc}", tenant=f"t{(d // per_doc) % 2}"),
                             text))
        at = 0
        for j, part in enumerate(parts):
            chunks.append(Chunk(chunk_id=f"{doc_id}#c{j}", doc_id=doc_id, version="1", start=at,
                                end=at + len(part), text=part, title=f"Doc {d // per_doc}", anchor=f"c{j}"))
            at += len(part) + 2
    del words
    return docs, chunks, vectors, qs, qv


def search_latencies(index: Any, qs: list[str], mask: np.ndarray) -> dict[str, float]:
    """p50/p95 of BM25 and dense searches (top 50): cold BM25 first (the snapshot's per-term weights
    cleared before each query), then unmasked, then with a half mask, in that order."""
    out: dict[str, float] = {}
    snap = index.snapshot()

    def cold(q: str) -> Any:
        snap.lexical.clear_cache()
        t = time.perf_counter()
        snap.search_lexical(q, 50, None)
        return (time.perf_counter() - t) * 1000

    out["BM25 cold p50 ms"] = percentile([cold(q) for q in qs], 50)
    snap.lexical.clear_cache()
    for name, fn in (("BM25", snap.search_lexical), ("dense", snap.search_dense)):
        ms, cpu = [], []
        for q in qs:
            c = time.thread_time()
            ms.append(timed_ms(lambda q=q, fn=fn: fn(q, 50, None))[0])
            cpu.append((time.thread_time() - c) * 1000)
        out[f"{name} p50 ms"] = percentile(ms, 50)
        out[f"{name} p95 ms"] = percentile(ms, 95)
        out[f"{name} CPU p50 ms"] = percentile(cpu, 50)
        ms = [timed_ms(lambda q=q, fn=fn: fn(q, 50, mask))[0] for q in qs]
        out[f"{name} p50 ms (half mask)"] = percentile(ms, 50)
    return out


LOAD_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
t = time.perf_counter()
import numpy as np
from scale import LookupEmbedder, search_latencies, peak_rss_mb
from ragkit import Index
qs = json.loads(open(sys.argv[3]).read()); qv = np.load(sys.argv[4])
t0, c0 = time.perf_counter(), time.process_time()
index = Index.load(sys.argv[2], embedder=LookupEmbedder(dict(zip(qs, qv))))
t1, c1 = time.perf_counter(), time.process_time()
snap = index.snapshot()
snap.search_lexical(qs[0], 50, None); snap.search_dense(qs[0], 50, None)
t2 = time.perf_counter()
mask = np.random.default_rng(7).random(len(snap.rows)) < 0.5
out = {"load s": t1 - t0, "load CPU s": c1 - c0, "first BM25 + dense search after load s": t2 - t1,
       "rows after load": len(snap.rows)}
out.update({"after load " + k: v for k, v in search_latencies(index, qs, mask).items()})
out["load peak RSS MB"] = peak_rss_mb()
print(json.dumps(out))
"""


def index_part(n: int, queries: int, seed: int, folder: Path, cache: Path | None) -> dict[str, float]:

    out: dict[str, float] = {}
    t = time.perf_counter()
    docs, chunks, vectors, qs, qv = synthetic_index_inputs(n, queries, seed)
    out["synthetic inputs s"] = time.perf_counter() - t
    embedder = LookupEmbedder(dict(zip(qs, qv, strict=True)))
    settings = IndexSettings(dense_kind="auto")
    t = time.perf_counter()
    index = Index(docs, chunks, vectors, settings, embedder=embedder,
                  manifest=new_manifest(settings, embedder, docs))
    out["build: rows + BM25 postings s"] = time.perf_counter() - t
    del docs, chunks, vectors
    gc.collect()
    cached = hnsw_cache_file(cache, n, n + 1)
    segment = index.segments[0]
    t = time.perf_counter()
    if cached is not None and cached.is_file() and len(segment) > 4096 and n >= HNSW_MIN_ROWS:
        # the same graph the dense part built from the same vectors (its build time is reported there)
        segment._dense = DenseRetriever(segment.vectors, None, index=DenseRetriever.read_index(cached))
        out["dense index read from the dense part's cache"] = 1.0
    index.snapshot().search_dense(qs[0], 10, None)  # builds each segment's faiss index if not read
    out["build: dense index s"] = time.perf_counter() - t
    out["build peak RSS MB"] = peak_rss_mb()
    out["rows"] = len(index.rows)
    mask = np.random.default_rng(7).random(len(index.rows)) < 0.5
    out.update(search_latencies(index, qs, mask))
    if folder.exists():
        shutil.rmtree(folder)
    t, c = time.perf_counter(), time.process_time()
    index.save(folder)
    out["save s"] = time.perf_counter() - t
    out["save CPU s"] = time.process_time() - c
    out["format"] = FORMAT_VERSION
    out["on disk MB"] = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20
    del index
    gc.collect()
    qfile, vfile = folder.parent / f"{folder.name}-queries.json", folder.parent / f"{folder.name}-qv.npy"
    qfile.write_text(json.dumps(qs))
    np.save(vfile, qv)
    out.update(reload_part(folder))
    return out


def reload_part(folder: Path) -> dict[str, float]:
    """Open an index the index part saved, in a fresh process: load wall and CPU time, first searches."""
    qfile, vfile = folder.parent / f"{folder.name}-queries.json", folder.parent / f"{folder.name}-qv.npy"
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    proc = subprocess.run([sys.executable, "-c", LOAD_CHILD, str(ROOT / "bench"), str(folder), str(qfile),
                           str(vfile)], capture_output=True, text=True, env=env, check=False)
    if proc.returncode:
        raise RuntimeError(f"loading the saved index failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


# ---------------------------------------------------------------- report


def render(data: dict[str, Any]) -> str:
    sections = []
    titles = {"lexical": "Lexical: ragkit (index scorer, half scope mask) vs bm25s vs rank-bm25",
              "dense": "Dense: exact (flat) vs HNSW", "index": "A whole ragkit Index",
              "reload": "The saved index opened again in a fresh process"}
    for part in ("lexical", "dense", "index", "reload"):
        rows = data.get(part) or {}
        if not rows:
            continue
        sizes = sorted(rows, key=int)
        keys = list(dict.fromkeys(k for s in sizes for k in rows[s]["values"]))
        lines = ["| measure | " + " | ".join(f"{int(s):,} chunks" for s in sizes) + " |",
                 "|---|" + "---|" * len(sizes)]
        for k in keys:
            cells = []
            for s in sizes:
                v = rows[s]["values"].get(k)
                cells.append("-" if v is None else f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}")
            lines.append(f"| {k} | {' | '.join(cells)} |")
        runs: dict[str, list[str]] = {}
        for size in sizes:
            runs.setdefault(rows[size]["command"], []).append(
                f"{int(size):,}: {rows[size]['date']}, load average {rows[size]['load']:.1f}")
        cmds = [f"`{c}` ({'; '.join(at)})" for c, at in runs.items()]
        sections.append(f"## {titles[part]}\n\n" + "\n".join(lines) + "\n\nProduced by " + "; ".join(cmds)
                        + ".")
    head = ("# Lexical and dense retrieval at scale (synthetic corpora)\n\n"
            "Synthetic texts (Zipf vocabulary of 50,000 made-up words, 60-100 words per chunk; queries 2-5 "
            "words from the 20,000 most frequent) and synthetic 384-d unit vectors of intrinsic dimension 32 "
            "(2,000 latent clusters; a query's nearest rows at cosine ~0.6-0.67, as with real embedders); "
            "no model "
            f"runs. HNSW: M={HNSW_M}, efConstruction={EF_CONSTRUCTION}, efSearch={EF_SEARCH}; ragkit's index "
            f"chooses HNSW from {HNSW_MIN_ROWS:,} rows per segment (`ragkit.retrieval.dense.HNSW_MIN_ROWS`, "
            "`IndexSettings(dense_kind=\"auto\")`). One thread (`OMP_NUM_THREADS=1`), 2-core machine "
            "shared with four other engineers' jobs: latencies are measured under load; ratios are "
            "measured side by side in one loop.\n\n")
    notes = data.get("notes")
    return head + "\n\n".join(sections) + "\n" + (f"\n{notes.strip()}\n" if notes else "")


def main(argv: list[str] | None = None) -> str:
    ap = parser(__doc__, "scale.md")
    ap.add_argument("--sizes", nargs="*", type=int, default=[10_000, 100_000])
    ap.add_argument("--parts", nargs="*", default=["lexical", "dense"],
                        choices=["lexical", "dense", "index", "reload"],
                    help="reload: open the index an earlier index part saved in --index-dir again")
    ap.add_argument("--queries", type=int, default=1000, help="dense queries (recall@10 vs exact)")
    ap.add_argument("--lexical-queries", type=int, default=200)
    ap.add_argument("--lexical-rounds", type=int, default=5,
                    help="times the side-by-side ragkit/bm25s loop runs; the ratio is their median")
    ap.add_argument("--rank-bm25-max", type=int, default=100_000)
    ap.add_argument("--latency-queries", type=int, default=200,
                    help="dense queries timed one by one for exact search and masked search")
    ap.add_argument("--hnsw-cache", type=Path, default=None,
                    help="folder where the dense part saves its HNSW graph and the index part reads it")
    ap.add_argument("--index-dir", type=Path, default=Path("/tmp/ragkit-scale-index"))
    ap.add_argument("--fresh", action="store_true", help="do not merge with the existing JSON")
    ap.add_argument("--notes", type=Path, default=None, help="Markdown appended after the tables")
    ap.add_argument("--merge", nargs="*", type=Path, default=[],
                    help="result JSON files of other runs to merge in (each row keeps its command)")
    args = ap.parse_args(argv)
    store = args.result.with_suffix(".json")
    data: dict[str, Any] = {} if args.fresh or not store.is_file() else json.loads(store.read_text())
    for other in args.merge:
        for part, rows in json.loads(other.read_text()).items():
            if isinstance(rows, dict):
                data.setdefault(part, {}).update(rows)
    if args.notes is not None:
        data["notes"] = args.notes.read_text()
    if (args.merge or args.notes is not None) and not args.sizes:
        publish(store, json.dumps(data, indent=1), echo=False)
        publish(args.result, render(data), echo=False)
    cmd = ("OMP_NUM_THREADS=1 python bench/scale.py "
           + " ".join(argv if argv is not None else sys.argv[1:])).strip()
    for n in args.sizes:
        for part in args.parts:
            if part == "lexical":
                values = lexical(n, args.lexical_queries, args.rank_bm25_max, np.random.default_rng(n),
                                 args.lexical_rounds)
            elif part == "dense":
                values = dense(n, args.queries, args.latency_queries, n + 1, args.hnsw_cache)
            elif part == "index":
                values = index_part(n, args.lexical_queries, n + 2, args.index_dir / f"idx-{n}",
                                    args.hnsw_cache)
            else:
                values = reload_part(args.index_dir / f"idx-{n}")
            data.setdefault(part, {})[str(n)] = {"values": values, "command": cmd,
                                                 "date": dt.date.today().isoformat(),
                                                 "load": os.getloadavg()[0]}
            print(part, n, json.dumps({k: round(v, 4) for k, v in values.items()}), flush=True)
            publish(store, json.dumps(data, indent=1), echo=False)
            publish(args.result, render(data), echo=False)
    text = render(data)
    print(text)
    return text


if __name__ == "__main__":
    main()
