"""Ranking metrics over runs and qrels, with the conventions of ranx and trec_eval.

A *run* maps each query id to the documents a system retrieved and their scores,
``{qid: {doc_id: score}}``; *qrels* map each query id to graded judgements,
``{qid: {doc_id: relevance}}`` (BEIR's ``qrels/<split>.tsv``).

Conventions (the same as ranx and trec_eval unless said otherwise):

* A document is relevant when its relevance is >= 1; 0 and negative grades are
  judged non-relevant.
* A run's documents are ranked by score, highest first; tied scores break by
  doc id *descending*, compared as strings (trec_eval's rule; ranx leaves ties in
  an unspecified order, so parity with ranx holds on runs without ties).
* Evaluated queries are the qrels queries with at least one relevant document.
  A query with no relevant document has no defined recall or nDCG and is
  skipped (ranx would count it as 0). A qrels query missing from the run scores
  0; run queries absent from the qrels are ignored. The mean is over evaluated
  queries.
* ``ndcg@k``: ``DCG@k / IDCG@k`` with linear gain ``rel`` and discount
  ``log2(rank + 1)``, ranks from 1 (Järvelin and Kekäläinen, TOIS 2002; ranx
  ``ndcg``, trec_eval ``ndcg_cut``). The ideal ranking sorts all judged
  relevant documents by grade.
* ``mrr@k``: ``1 / rank`` of the first relevant document in the top k, else 0.
* ``recall@k``: relevant documents in the top k / all relevant documents.
* ``precision@k``: relevant documents in the top k / k (k even when fewer were
  retrieved, as trec_eval ``P_k``).

Example:
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}
    >>> qrels = {"q1": {"d2": 2, "d3": 1, "d9": 0}}
    >>> score_run(run, qrels, metrics=("mrr@10", "recall@1"))
    {'mrr@10': 0.5, 'recall@1': 0.0}
    >>> round(ndcg_at_k(run, qrels, 10).mean, 4)  # (2/log2(3) + 1/2) / (2 + 1/log2(3))
    0.6697
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from ragkit.core.errors import ValidationError

__all__ = [
    "DEFAULT_METRICS",
    "METRICS",
    "MetricResult",
    "ndcg_at_k",
    "mrr_at_k",
    "recall_at_k",
    "precision_at_k",
    "score_run",
    "rank_run",
]

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, int]]

#: What :func:`evaluate` reports unless asked otherwise (the ``ragkit beir`` table).
DEFAULT_METRICS = ("ndcg@10", "mrr@10", "recall@50", "recall@100")


class MetricResult(NamedTuple):
    """One metric at one cutoff: the value of every evaluated query, and their mean."""

    per_query: dict[str, float]
    mean: float


def rank_run(scores: Mapping[str, float]) -> list[str]:
    """Doc ids of one query's results, best first: score descending, then doc id descending.

    Example:
        >>> rank_run({"a": 1.0, "b": 2.0, "c": 1.0})
        ['b', 'c', 'a']
    """
    return sorted(scores, key=lambda d: (scores[d], str(d)), reverse=True)


def ndcg_at_k(run: Run, qrels: Qrels, k: int) -> MetricResult:
    """nDCG@k with linear gain and log2 discount (see the module conventions).

    Example:
        >>> ndcg_at_k({"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 1}}, k=10).per_query
        {'q': 0.6309297535714575}
    """
    return _per_query("ndcg_at_k", run, qrels, k)


def mrr_at_k(run: Run, qrels: Qrels, k: int) -> MetricResult:
    """Mean reciprocal rank of the first relevant document within the top k.

    Example:
        >>> mrr_at_k({"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 1}}, k=10).mean
        0.5
    """
    return _per_query("mrr_at_k", run, qrels, k)


def recall_at_k(run: Run, qrels: Qrels, k: int) -> MetricResult:
    """Fraction of the relevant documents found in the top k.

    Example:
        >>> recall_at_k({"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 1, "z": 3}}, k=10).mean
        0.5
    """
    return _per_query("recall_at_k", run, qrels, k)


def precision_at_k(run: Run, qrels: Qrels, k: int) -> MetricResult:
    """Relevant documents in the top k, divided by k.

    Example:
        >>> precision_at_k({"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 1}}, k=4).mean
        0.25
    """
    return _per_query("precision_at_k", run, qrels, k)


def score_run(run: Run, qrels: Qrels, metrics: Sequence[str] = DEFAULT_METRICS) -> dict[str, float]:
    """Mean of each named metric, e.g. ``("ndcg@10", "mrr@10", "recall@100")``.

    Args:
        run: ``{qid: {doc_id: score}}``.
        qrels: ``{qid: {doc_id: relevance}}``.
        metrics: names ``<metric>@<k>`` with metric one of :data:`METRICS`.

    Returns:
        ``{name: mean over evaluated queries}``, in the order asked.

    Example:
        >>> score_run({"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 1}}, ["precision@1", "mrr@10"])
        {'precision@1': 0.0, 'mrr@10': 0.5}
    """
    if isinstance(metrics, str):
        metrics = (metrics,)
    parsed = [_parse_metric(name) for name in metrics]
    queries = _prepare(run, qrels, max((k for _, k in parsed), default=1), owner="score_run")
    out = {}
    for name, (metric, k) in zip(metrics, parsed, strict=True):
        values = [METRICS[metric](ranked, rels, k) for _, ranked, rels in queries]
        out[name] = math.fsum(values) / len(values)
    return out


# ---------------------------------------------------------------- kernels


def _ndcg(ranked: list[str], rels: dict[str, int], k: int) -> float:
    gains = np.array([rels.get(d, 0) for d in ranked[:k]], dtype=np.float64)
    gains[gains < 1] = 0.0
    ideal = np.array(sorted((r for r in rels.values() if r >= 1), reverse=True)[:k], dtype=float)
    dcg = float(np.sum(gains / np.log2(np.arange(2, len(gains) + 2))))
    idcg = float(np.sum(ideal / np.log2(np.arange(2, len(ideal) + 2))))
    return dcg / idcg


def _mrr(ranked: list[str], rels: dict[str, int], k: int) -> float:
    for rank, doc_id in enumerate(ranked[:k], start=1):
        if rels.get(doc_id, 0) >= 1:
            return 1.0 / rank
    return 0.0


def _hits(ranked: list[str], rels: dict[str, int], k: int) -> int:
    return sum(1 for d in ranked[:k] if rels.get(d, 0) >= 1)


def _recall(ranked: list[str], rels: dict[str, int], k: int) -> float:
    return _hits(ranked, rels, k) / sum(1 for r in rels.values() if r >= 1)


def _precision(ranked: list[str], rels: dict[str, int], k: int) -> float:
    return _hits(ranked, rels, k) / k


#: Metric name -> per-query kernel ``(ranked doc ids, qrels of the query, k) -> value``.
METRICS: Mapping[str, Callable[[list[str], dict[str, int], int], float]] = {
    "ndcg": _ndcg,
    "mrr": _mrr,
    "recall": _recall,
    "precision": _precision,
}

_PUBLIC = {
    "ndcg_at_k": "ndcg",
    "mrr_at_k": "mrr",
    "recall_at_k": "recall",
    "precision_at_k": "precision",
}


# ---------------------------------------------------------------- plumbing


def _per_query(owner: str, run: Run, qrels: Qrels, k: int) -> MetricResult:
    _check_k(k, owner)
    kernel = METRICS[_PUBLIC[owner]]
    queries = _prepare(run, qrels, k, owner=owner)
    per_query = {qid: kernel(ranked, rels, k) for qid, ranked, rels in queries}
    return MetricResult(per_query, math.fsum(per_query.values()) / len(per_query))


def _prepare(
    run: Run, qrels: Qrels, depth: int, *, owner: str
) -> list[tuple[str, list[str], dict[str, int]]]:
    """Evaluated queries as (qid, top-``depth`` ranked doc ids, qrels of the query)."""
    _check_nested(run, "run", "score", owner)
    _check_nested(qrels, "qrels", "relevance", owner)
    queries = []
    for qid, judged in qrels.items():
        rels = dict(judged)
        if not any(r >= 1 for r in rels.values()):
            continue
        ranked = rank_run(run.get(qid, {}))[:depth]
        queries.append((qid, ranked, rels))
    if not queries:
        raise ValidationError(
            f"{owner}: no qrels query has a relevant document (relevance >= 1) among "
            f"{len(qrels)} queries; check the split and the relevance column",
            field="qrels",
        )
    return queries


def _check_nested(data: object, name: str, value_name: str, owner: str) -> None:
    if not isinstance(data, Mapping):
        raise ValidationError(
            f"{owner}: {name} is a {type(data).__name__}; expected a dict "
            f"{{query_id: {{doc_id: {value_name}}}}}",
            field=name,
        )
    for qid, docs in data.items():
        if not isinstance(docs, Mapping):
            raise ValidationError(
                f"{owner}: {name}[{qid!r}] is a {type(docs).__name__}; expected a dict "
                f"{{doc_id: {value_name}}}",
                field=name,
            )
        for doc_id, value in docs.items():
            if name == "qrels":
                ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                expected = "an int grade (0 = not relevant, >= 1 = relevant)"
            else:
                ok = (
                    isinstance(value, (int, float, np.integer, np.floating))
                    and math.isfinite(float(value))
                    and not isinstance(value, bool)
                )
                expected = "a finite number"
            if not ok:
                raise ValidationError(
                    f"{owner}: {name}[{qid!r}][{doc_id!r}] = {value!r}; expected {expected}",
                    field=name,
                )


def _check_k(k: object, owner: str) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValidationError(
            f"{owner}: k={k!r}; expected an int >= 1 (the rank cutoff, e.g. 10)", field="k"
        )


def _parse_metric(name: object) -> tuple[str, int]:
    text = name if isinstance(name, str) else ""
    metric, _, cutoff = text.partition("@")
    if metric not in METRICS or not cutoff.isdigit() or int(cutoff) < 1:
        raise ValidationError(
            f"evaluate: metric {name!r} is not understood; write <metric>@<k> with metric one "
            f"of {sorted(METRICS)} and k >= 1, e.g. 'ndcg@10' or 'recall@100'",
            field="metrics",
        )
    return metric, int(cutoff)
