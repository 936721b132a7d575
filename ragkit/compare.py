"""Compare retrieval methods side by side on a BEIR-format collection.

:func:`evaluate_beir` indexes a :class:`~ragkit.beir.BeirData` corpus (one row per
document, title + text), runs every query through five methods on the same
candidates, and scores them with :mod:`ragkit.metrics`:

==============  ==========================================================
``bm25``        BM25 alone (bm25s)
``dense``       all-MiniLM-L6-v2 + exact faiss
``rrf``         reciprocal rank fusion of the two (k = 60)
``rerank``      the first ``rerank_depth`` RRF candidates reordered by the
                cross-encoder alone (the rest keep their RRF order)
``rerank_rrf``  the same head ordered by RRF of the first-stage rank and
                the cross-encoder rank, weighted 1:2 (the funnel's default,
                ``rerank_mode="rrf"``, :data:`ragkit.rerank.DEFAULT_RRF_WEIGHTS`)
==============  ==========================================================

Each method reports nDCG@10, MRR@10, recall@50 and recall@100, plus its median
latency per query (``ms_p50``, the method's own stages only) and, for the two
reranking methods, ``ndcg@10_gain`` over ``rrf``: the reranker's gain or loss.
Corpus embeddings are cached on disk, so a second run does not re-encode.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.beir import BeirData
from ragkit.fusion import Ranking, rrf
from ragkit.metrics import evaluate
from ragkit.rerank import combine

__all__ = ["METHODS", "METRICS", "evaluate_beir", "format_table"]

METHODS = ("bm25", "dense", "rrf", "rerank", "rerank_rrf")
METRICS = ("ndcg@10", "mrr@10", "recall@50", "recall@100")


def _corpus_key(ids: list[str], texts: list[str], embedder: Any) -> str:
    h = hashlib.sha1(f"{embedder.name}|{embedder.version}|".encode())
    for i, t in zip(ids, texts, strict=True):
        h.update(i.encode() + b"\0" + t.encode() + b"\1")
    return h.hexdigest()[:16]


def _embed_corpus(ids: list[str], texts: list[str], embedder: Any, cache_dir: Path | None,
                  progress: bool, log: Callable[[str], None]) -> np.ndarray:
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"corpus-{_corpus_key(ids, texts, embedder)}.npy"
        if path.is_file():
            vectors = np.load(path)
            if vectors.shape[0] == len(texts):
                log(f"reusing cached corpus embeddings {path}")
                return vectors
    t = time.perf_counter()
    vectors = embedder.encode(texts, progress=progress, batch_size=64)
    log(f"encoded {len(texts)} documents in {time.perf_counter() - t:.1f}s")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vectors)
        tmp.replace(path)
    return vectors


def evaluate_beir(data: BeirData, *, candidates: int = 100, rerank_depth: int = 30,
                  max_queries: int | None = None, cache_dir: str | Path | None = None,
                  embedder: Any = None, reranker: Any = None, rrf_k: float = 60,
                  extra_weights: Sequence[tuple[float, float]] = (),
                  progress: bool = True, log: Callable[[str], None] = lambda _m: None
                  ) -> dict[str, dict[str, float]]:
    """Run the five methods on every judged query; return ``{method: {metric: value}}``.

    Args:
        data: a loaded BEIR collection (:func:`ragkit.beir.load_beir`).
        candidates: width of each first-stage list (recall@100 needs >= 100).
        rerank_depth: RRF candidates the cross-encoder scores.
        max_queries: evaluate only the first N judged queries (sorted by id).
        cache_dir: folder for cached corpus embeddings (``None``: no cache).
        embedder, reranker: defaults are the bundled models.
        rrf_k: RRF rank offset.
        extra_weights: more ``(first_stage, reranker)`` weightings of ``rerank_rrf`` to report,
            each as a method named ``rerank_rrf_w{a}:{b}`` (the reranker runs once per query).
    """
    from ragkit.dense import DenseRetriever
    from ragkit.lexical import BM25Retriever
    from ragkit.models import get_embedder, get_reranker

    embedder = embedder or get_embedder()
    reranker = reranker or get_reranker()
    doc_ids = list(data.corpus)
    texts = [f"{d.title}\n{d.text}".strip() for d in data.corpus.values()]
    t = time.perf_counter()
    bm25 = BM25Retriever(texts)
    log(f"BM25 indexed {len(texts)} documents in {time.perf_counter() - t:.1f}s")
    dense = DenseRetriever(_embed_corpus(doc_ids, texts, embedder, Path(cache_dir) if cache_dir else None,
                                         progress, log), embedder)
    qids = sorted(q for q in data.queries if data.qrels.get(q))
    if max_queries:
        qids = qids[:max_queries]
    variants = {f"rerank_rrf_w{a:g}:{b:g}": (a, b) for a, b in extra_weights}
    methods = (*METHODS, *variants)
    runs: dict[str, dict[str, dict[str, float]]] = {m: {} for m in methods}
    ms: dict[str, list[float]] = {m: [] for m in ("bm25", "dense", "fuse", "rerank")}
    iterator: Any = qids
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(qids, desc="queries", unit="q")
    clock = time.perf_counter
    for qid in iterator:
        query = data.queries[qid]
        t = clock()
        lex = bm25.search(query, candidates)
        ms["bm25"].append((clock() - t) * 1000)
        t = clock()
        den = dense.search(query, candidates)
        ms["dense"].append((clock() - t) * 1000)
        t = clock()
        fused = rrf([lex, den], k=rrf_k).top(candidates)
        ms["fuse"].append((clock() - t) * 1000)
        t = clock()
        depth = min(rerank_depth, len(fused.ids))
        head, tail = fused.top(depth), Ranking(fused.ids[depth:], fused.scores[depth:])
        scores = reranker.score(query, [texts[i] for i in head.ids]) if depth else []
        ms["rerank"].append((clock() - t) * 1000)
        by_ce = combine(head, scores, mode="rerank") if depth else head
        by_rrf = combine(head, scores, mode="rrf", k=rrf_k) if depth else head
        for name, ranking in (("bm25", lex), ("dense", den), ("rrf", fused),
                              ("rerank", _concat(by_ce, tail)), ("rerank_rrf", _concat(by_rrf, tail))):
            runs[name][qid] = _as_run(ranking, doc_ids)
        for name, weights in variants.items():
            head_w = combine(head, scores, mode="rrf", k=rrf_k, weights=weights) if depth else head
            runs[name][qid] = _as_run(_concat(head_w, tail), doc_ids)
    qrels = {q: data.qrels[q] for q in qids}
    report: dict[str, dict[str, float]] = {}
    p50 = {k: statistics.median(v) if v else 0.0 for k, v in ms.items()}
    latency = {"bm25": p50["bm25"], "dense": p50["dense"],
               "rrf": p50["bm25"] + p50["dense"] + p50["fuse"]}
    for name in ("rerank", "rerank_rrf", *variants):
        latency[name] = latency["rrf"] + p50["rerank"]
    for name in methods:
        scores_ = evaluate(runs[name], qrels, METRICS)
        report[name] = {**scores_, "ms_p50": round(latency[name], 2)}
    for name in ("rerank", "rerank_rrf", *variants):
        report[name]["ndcg@10_gain"] = report[name]["ndcg@10"] - report["rrf"]["ndcg@10"]
    report["rrf"]["queries"] = float(len(qids))
    return report


def _concat(head: Ranking, tail: Ranking) -> Ranking:
    return Ranking(list(head.ids) + list(tail.ids), list(head.scores) + list(tail.scores))


def _as_run(ranking: Ranking, doc_ids: list[str]) -> dict[str, float]:
    """Rank order as descending scores (so metrics see exactly this order, whatever the raw scores)."""
    n = len(ranking.ids)
    return {doc_ids[i]: float(n - r) for r, i in enumerate(ranking.ids)}


def format_table(report: dict[str, dict[str, float]], *, default: str = "rerank_rrf") -> str:
    """A plain-text table of ``report`` with the reranker's gain; marks the funnel's default."""
    cols = [*METRICS, "ms_p50"]
    lines = [f"{'method':<14}" + "".join(f"{c:>12}" for c in cols) + f"{'gain@10':>10}"]
    for name in report:
        row = report[name]
        gain = row.get("ndcg@10_gain")
        label = name + (" *" if name == default else "")
        lines.append(f"{label:<14}" + "".join(f"{row[c]:>12.4f}" if c != "ms_p50" else f"{row[c]:>12.1f}"
                                              for c in cols)
                     + (f"{gain:>+10.4f}" if gain is not None else f"{'':>10}"))
    n = int(report["rrf"].get("queries", 0))
    lines.append(f"* = the funnel's default; gain@10 = nDCG@10 change from reranking vs rrf; {n} queries")
    return "\n".join(lines)
