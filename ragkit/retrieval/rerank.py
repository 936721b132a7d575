"""Cross-encoder reranking, and how its scores meet the first stage's ranks.

A cross-encoder reads the query and a passage *together* and returns one
relevance logit: more precise than comparing two separate embeddings, and far
more expensive, so it only sees the head of the candidate list (CURRICULUM
section 4).

A reranker trained on web search can be worse than its own first stage out of
domain. :func:`combine` therefore offers four ways to produce the final order:

* ``"fuse"`` (the funnel's default): the cross-encoder's scores join the BM25 and dense
  lists as a third list in the funnel's own fusion (z-score CombSUM by default), weighted
  2 against 1 each. A z-score keeps *how far* ahead a candidate is in each list: a passage
  far ahead in BM25 (an exact identifier) survives a reranker that barely prefers another;
  a reranker that strongly prefers a passage moves it;
* ``"rrf"``: reciprocal rank fusion of the first-stage rank and the reranker's
  rank (the reranker must agree with retrieval to move a passage far);
* ``"rerank"``: sort by the cross-encoder's score alone;
* ``"none"``: keep the first-stage order (the reranker is skipped).

The default was chosen by measurement (``bench/results/quality.md``, ``fusion.md``): over all
queries of SciFact's train claims, the stdlib docstrings and the course corpus's tasks it is
above BM25 and above both first stages (RRF, z-scores), and it delivers the course cases'
evidence more often than any rank fusion measured. The former default (RRF first stage, ranks
fused 1:1 with the reranker's) was level with RRF on SciFact and below BM25 on the course tasks.

Example:
    >>> from ragkit.retrieval.fusion import Ranking
    >>> first = Ranking([10, 11, 12], [0.05, 0.04, 0.03])
    >>> combine(first, [1.0, 9.0, -3.0], mode="rerank").ids
    [11, 10, 12]
    >>> combine(first, [1.0, 9.0, -3.0], mode="rrf").ids  # default 1:1: 10 and 11 tie at 1/61+1/62
    [10, 11, 12]
    >>> combine(first, [1.0, 9.0, -3.0], mode="rrf", weights=(1, 2)).ids  # 11: 1/62 + 2/61 wins
    [11, 10, 12]
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.models.bundled import get_reranker
from ragkit.retrieval.fusion import Ranking, fuse, rrf

__all__ = ["RERANK_MODES", "DEFAULT_RRF_WEIGHTS", "RerankOutput", "rerank", "combine"]

RERANK_MODES = ("fuse", "rrf", "rerank", "none")
#: ``(first_stage, reranker)`` weights of ``mode="rrf"`` when none are given.
DEFAULT_RRF_WEIGHTS = (1.0, 1.0)


@dataclass(frozen=True)
class RerankOutput:
    """Cross-encoder scores for a list of passages, with the work they cost.

    Attributes:
        scores: one logit per passage (input order).
        token_units: tokens in each (query, passage) pair after truncation; their sum is the
            reranker's work for this call (CURRICULUM section 5).
    """

    scores: np.ndarray
    token_units: list[int]

    @property
    def ranks(self) -> list[int]:
        """Rank of each passage by score (1 = best), ties broken by input order."""
        order = sorted(range(len(self.scores)), key=lambda i: (-float(self.scores[i]), i))
        out = [0] * len(order)
        for r, i in enumerate(order, start=1):
            out[i] = r
        return out


def rerank(query: str, passages: Sequence[str], reranker: Any = None, *,
           batch_size: int | None = None, max_length: int | None = None) -> RerankOutput:
    """Score each passage against ``query`` with the cross-encoder (default: the bundled one).

    ``max_length`` truncates each (query, passage) pair for this call (default: the
    reranker's own); a reranker without that option is called without it.
    """
    if reranker is None:
        reranker = get_reranker()
    passages = list(passages)
    length: dict[str, Any] = {}
    if max_length is not None and "max_length" in inspect.signature(reranker.score).parameters:
        length = {"max_length": max_length}  # a custom reranker may not offer per-call length
    scores = reranker.score(query, passages, batch_size=batch_size, **length)
    units = reranker.count_pair_tokens(query, passages, **length) if passages else []
    return RerankOutput(np.asarray(scores, dtype=np.float32), units)


def combine(first_stage: Ranking, scores: Sequence[float] | np.ndarray, *, mode: str = "rrf",
            k: float = 60, weights: Sequence[float] = DEFAULT_RRF_WEIGHTS,
            lists: Sequence[Ranking] = (), fusion: str = "zscore") -> Ranking:
    """Final order of the reranked head from first-stage ranks and cross-encoder scores.

    Args:
        first_stage: the head of the fused ranking that was reranked (ids best first).
        scores: one cross-encoder score per id of ``first_stage``, same order.
        mode: ``"fuse"``, ``"rrf"``, ``"rerank"`` or ``"none"`` (see the module docs).
        k: RRF rank offset for ``mode="rrf"`` (and ``"fuse"`` with ``fusion="rrf"``).
        weights: ``(first_stage_weight, reranker_weight)`` for ``mode="rrf"``; for
            ``mode="fuse"`` one weight per list of ``lists``, then the reranker's.
        lists: for ``mode="fuse"``: the retrievers' own rankings (BM25, dense) that the
            reranker's scores are fused with.
        fusion: for ``mode="fuse"``: ``"zscore"`` or ``"rrf"`` (:data:`ragkit.retrieval.fusion.FUSIONS`).

    Returns:
        A :class:`Ranking` of the same ids; its scores are the cross-encoder's for
        ``"rerank"``, the fused scores for ``"rrf"`` and ``"fuse"``, and the first stage's for
        ``"none"``.
    """
    if mode not in RERANK_MODES:
        raise ValidationError(f"rerank mode {mode!r} is unknown; use one of {RERANK_MODES}", field="mode")
    ids = list(first_stage.ids)
    if len(scores) != len(ids):
        raise ValidationError(f"{len(scores)} scores for {len(ids)} candidates; pass one score per "
                              "candidate", field="scores")
    if mode == "none" or not ids:
        return first_stage
    order = sorted(range(len(ids)), key=lambda i: (-float(scores[i]), i))
    by_reranker = Ranking([ids[i] for i in order], [float(scores[i]) for i in order])
    if mode == "rerank":
        return by_reranker
    if mode == "fuse":
        if len(weights) != len(lists) + 1:
            raise ValidationError(f"mode='fuse' needs one weight per list and one for the reranker: "
                                  f"{len(weights)} weights for {len(lists)} lists", field="weights")
        fused = fuse([*lists, by_reranker], method=fusion, k=k, weights=list(weights))
        head = set(ids)
        kept = [(i, score) for i, score in zip(fused.ids, fused.scores, strict=True) if i in head]
        return Ranking([i for i, _ in kept], [score for _, score in kept])
    return rrf([Ranking(ids, list(first_stage.scores)), by_reranker], k=k, weights=list(weights))
