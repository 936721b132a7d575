"""Measure the product on a BEIR-format collection: the Funnel itself, and its ablations.

:func:`evaluate_beir` builds an :class:`~ragkit.index.index.Index` of a
:class:`~ragkit.evaluation.beir.BeirData` corpus (chunked like any folder you index; cached on disk
under ``<cache_dir>/<name>``), runs every judged query through
:class:`~ragkit.search.funnel.Funnel` once per method, scores each *document* by its best chunk,
and evaluates with :mod:`ragkit.evaluation.metrics`. Every method is the same Funnel with settings
changed, so any change to the funnel moves these figures and vice versa:

==============  ==========================================================
``bm25``        ``retrievers=("lexical",), rerank_mode="none"``
``dense``       ``retrievers=("dense",), rerank_mode="none"``
``rrf``         ``rerank_mode="none", fusion="rrf"``: BM25 + dense by reciprocal rank fusion
``zscore``      ``rerank_mode="none", fusion="zscore"``: BM25 + dense by z-score CombSUM
                (the default's own first stage)
``rerank``      ``rerank_mode="rerank"``: the reranked head in cross-encoder order
``default``     the funnel's defaults (:class:`~ragkit.search.funnel.FunnelSettings`)
==============  ==========================================================

Queries run ``workers`` at a time on threads (the models release the GIL while they run); each
query's methods run in order in one thread, and results are kept in query order, so the figures
do not depend on ``workers`` (the latencies aside).

Each method reports nDCG@10, MRR@10, recall@50 and recall@100 over documents, its median
funnel latency per query (``ms_p50``; a method that reuses reranker scores another method
already computed for the same query is charged that method's rerank time, so cached
scores never flatter it) and, for reranking methods, ``ndcg@10_gain`` over their own first
stage (``rrf`` or ``zscore``, by the method's ``fusion``).

Example:
    >>> from ragkit.evaluation.beir import load_beir                               # doctest: +SKIP
    >>> report = evaluate_beir(load_beir("scifact", "test"), name="scifact")  # doctest: +SKIP
    >>> print(format_table(report))                                     # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ragkit.core.records import Document, Envelope
from ragkit.evaluation.beir import BeirData
from ragkit.evaluation.metrics import score_run
from ragkit.index.index import Index
from ragkit.index.settings import IndexSettings
from ragkit.search.funnel import Funnel, FunnelSettings, SearchResult

__all__ = ["METHODS", "BEIR_METRICS", "ABLATIONS", "beir_documents", "beir_index", "doc_run", "evaluate_beir",
           "format_table"]

BEIR_METRICS = ("ndcg@10", "mrr@10", "recall@50", "recall@100")
#: Each method as overrides of the funnel's settings (``default`` = no override).
ABLATIONS: Mapping[str, Mapping[str, Any]] = {
    "bm25": {"retrievers": ("lexical",), "rerank_mode": "none"},
    "dense": {"retrievers": ("dense",), "rerank_mode": "none"},
    "rrf": {"rerank_mode": "none", "fusion": "rrf"},
    "zscore": {"rerank_mode": "none", "fusion": "zscore"},
    "default": {},
    "rerank": {"rerank_mode": "rerank"},
}
METHODS = tuple(ABLATIONS)
_VALID_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")


def beir_documents(data: BeirData) -> tuple[list[Document], dict[str, str]]:
    """The corpus as ragkit :class:`~ragkit.core.records.Document` s, and index doc id -> BEIR id.

    A BEIR id that is not a valid ragkit doc id becomes ``beir-<n>``; the map undoes that.
    """
    docs, back = [], {}
    for n, (beir_id, doc) in enumerate(data.corpus.items()):
        doc_id = beir_id if _VALID_ID.match(beir_id) else f"beir-{n}"
        back[doc_id] = beir_id
        docs.append(Document(Envelope(doc_id=doc_id, title=doc.title), doc.text or doc.title or " "))
    return docs, back


def _corpus_key(data: BeirData, settings: IndexSettings) -> str:
    h = hashlib.sha1(repr(sorted(settings.to_json().items())).encode())
    for beir_id, doc in data.corpus.items():
        h.update(beir_id.encode() + b"\0" + doc.title.encode() + b"\0" + doc.text.encode() + b"\1")
    return h.hexdigest()[:16]


def beir_index(data: BeirData, *, name: str | None = None, cache_dir: str | Path | None = None,
               settings: IndexSettings | None = None, progress: bool = False, embedder: Any = None,
               log: Callable[[str], None] = lambda _m: None) -> tuple[Index, dict[str, str]]:
    """An :class:`~ragkit.index.index.Index` of the collection, reused from ``<cache_dir>/<name>`` when
    it was built from the same corpus with the same settings (a ``<name>.key`` file says so).

    ``log`` gets a line when the cache is reused and when a build ends; with ``progress`` also one
    as a build starts, and the embedding has a bar."""
    settings = settings or IndexSettings()
    docs, back = beir_documents(data)
    key = _corpus_key(data, settings)
    folder = key_file = None
    if cache_dir is not None:
        folder = Path(cache_dir) / (name or f"corpus-{key}")
        key_file = folder.with_name(folder.name + ".key")
        if key_file.is_file() and key_file.read_text().strip() == key:
            try:
                index = Index.load(folder)
                log(f"reusing the cached index {folder}")
                return index, back
            except Exception as exc:  # noqa: BLE001 - any unreadable cache is rebuilt
                log(f"cached index {folder} is unusable ({exc}); rebuilding")
    t = time.perf_counter()
    if progress:
        log(f"indexing {len(docs)} documents")
    index = Index.build(docs, settings, progress=progress, embedder=embedder)
    log(f"indexed {len(docs)} documents -> {len(index.rows)} chunks in {time.perf_counter() - t:.0f}s")
    if folder is not None and key_file is not None:
        index.save(folder)
        key_file.write_text(key + "\n")
    return index, back


def doc_run(result: SearchResult, back: Mapping[str, str]) -> dict[str, float]:
    """Documents by their best chunk's final rank, as descending scores (metrics see this order)."""
    best: dict[str, int] = {}
    for cand in result.trace.candidates:
        if cand.final_rank is not None:
            doc = back.get(cand.doc_id, cand.doc_id)
            best[doc] = min(best.get(doc, cand.final_rank), cand.final_rank)
    order = sorted(best, key=lambda d: (best[d], d))
    return {d: float(len(order) - r) for r, d in enumerate(order)}


def evaluate_beir(data: BeirData, *, name: str | None = None, candidates: int = 100,
                  rerank_depth: int | None = None, max_queries: int | None = None,
                  cache_dir: str | Path | None = None, funnel_settings: FunnelSettings | None = None,
                  index_settings: IndexSettings | None = None,
                  methods: Mapping[str, Mapping[str, Any]] | None = None,
                  reranker: Any = None, embedder: Any = None, progress: bool = True,
                  log: Callable[[str], None] = lambda _m: None,
                  workers: int = 1) -> dict[str, dict[str, float]]:
    """Run each method (a Funnel ablation) on every judged query; return ``{method: {metric: value}}``.

    Args:
        data: a loaded BEIR collection (:func:`ragkit.evaluation.beir.load_beir`).
        name: the collection's name, for the index cache folder (default: a corpus hash).
        candidates: rows each retriever returns (recall@100 needs a wide first stage).
        rerank_depth: fused candidates the cross-encoder scores (default: the funnel's).
        max_queries: evaluate only the first N judged queries (sorted by id).
        cache_dir: folder for the collection's index (``None``: build in memory only).
        funnel_settings: base :class:`~ragkit.search.funnel.FunnelSettings` (default: the defaults).
        index_settings: :class:`~ragkit.index.settings.IndexSettings` for the collection's index.
        methods: ``{name: overrides}`` to run (default :data:`ABLATIONS`).
        reranker: the cross-encoder (default: the bundled one).
        embedder: encodes the corpus when the index is built (default: ``index_settings``' model).
        progress: a line as each stage starts (through ``log``) and tqdm bars on stderr.
        log: where stage and summary lines go (default: nowhere).
        workers: queries run at a time, on threads (the figures do not depend on it).
    """
    if workers < 1:
        raise ValueError(f"workers={workers}: use 1 or more")
    index, back = beir_index(data, name=name, cache_dir=cache_dir, settings=index_settings,
                             progress=progress, embedder=embedder, log=log)
    base = funnel_settings or FunnelSettings()
    depth: dict[str, Any] = {"rerank_depth": rerank_depth} if rerank_depth is not None else {}
    base = replace(base, candidates=candidates, deliver=1, expand=False, **depth)
    funnel = Funnel(index, base, reranker=reranker)
    methods = dict(methods or ABLATIONS)
    qids = sorted(q for q in data.queries if data.qrels.get(q))
    if max_queries:
        qids = qids[:max_queries]
    runs: dict[str, dict[str, dict[str, float]]] = {m: {} for m in methods}
    ms: dict[str, list[float]] = {m: [] for m in methods}

    def run_query(qid: str) -> dict[str, tuple[dict[str, float], float]]:
        """Every method on one query: ``{method: (document run, milliseconds)}``."""
        query = data.queries[qid]
        paid: dict[tuple[Any, ...], float] = {}  # rerank time of the first method that scored these pairs
        out = {}
        for method, overrides in methods.items():
            result = funnel.search(query, **overrides)
            s = replace(base, **overrides)
            timings = dict(result.trace.timings_ms)
            work = (s.retrievers, s.fusion, s.rerank_depth, s.rerank_tokens, s.candidates, s.rrf_k,
                    s.lexical_weight, s.dense_weight) if s.rerank_mode != "none" else None
            if work is not None:
                timings["rerank"] = paid.setdefault(work, timings.get("rerank", 0.0))
            out[method] = (doc_run(result, back), sum(v for k, v in timings.items() if k != "total"))
        return out

    if progress:
        log(f"searching {len(qids)} queries x {len(methods)} methods, {workers} at a time")
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ragkit-beir") if workers > 1 else None
    done: Iterable[dict[str, tuple[dict[str, float], float]]] = (
        pool.map(run_query, qids) if pool is not None else map(run_query, qids))  # both in query order
    if progress:
        from tqdm.auto import tqdm

        done = tqdm(done, total=len(qids), desc="queries", unit="q", file=sys.stderr)
    try:
        for qid, per_method in zip(qids, done, strict=True):
            for method, (run, took) in per_method.items():
                runs[method][qid] = run
                ms[method].append(took)
    finally:
        if pool is not None:  # on an error or Ctrl-C the queries not yet started are dropped
            pool.shutdown(wait=True, cancel_futures=True)
    qrels = {q: data.qrels[q] for q in qids}
    report: dict[str, dict[str, float]] = {}
    for method in methods:
        report[method] = {**score_run(runs[method], qrels, BEIR_METRICS),
                          "ms_p50": round(statistics.median(ms[method]) if ms[method] else 0.0, 2)}
    first_stage = {"rrf": "rrf", "zscore": "zscore"}  # fusion -> the ablation that is that first stage
    for method, overrides in methods.items():
        s = replace(base, **overrides)
        own = first_stage[s.fusion]
        if s.rerank_mode != "none" and own in report:
            report[method]["ndcg@10_gain"] = report[method]["ndcg@10"] - report[own]["ndcg@10"]
    first = next(iter(report))
    report[first]["queries"] = float(len(qids))
    report[first]["chunks"] = float(len(index.rows))
    log(f"funnel settings: {asdict(base)}")
    return report


def format_table(report: dict[str, dict[str, float]], *, default: str = "default") -> str:
    """A plain-text table of ``report`` with the reranker's gain; marks the funnel's default."""
    cols = [*BEIR_METRICS, "ms_p50"]
    width = max(14, *(len(n) + 3 for n in report))
    lines = [f"{'method':<{width}}" + "".join(f"{c:>12}" for c in cols) + f"{'gain@10':>10}"]
    for name, row in report.items():
        gain = row.get("ndcg@10_gain")
        label = name + (" *" if name == default else "")
        lines.append(f"{label:<{width}}" + "".join(f"{row[c]:>12.4f}" if c != "ms_p50" else f"{row[c]:>12.1f}"
                                                   for c in cols)
                     + (f"{gain:>+10.4f}" if gain is not None else f"{'':>10}"))
    first = next(iter(report.values()))
    n, chunks = int(first.get("queries", 0)), int(first.get("chunks", 0))
    lines.append(f"* = the funnel's default; gain@10 = nDCG@10 change vs the method's own first stage; "
                 f"{n} queries; documents scored by their best chunk ({chunks} chunks)")
    return "\n".join(lines)
