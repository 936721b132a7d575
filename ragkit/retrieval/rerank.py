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

__all__ = ["RERANK_MODES", "DEPTH_POLICIES", "DEFAULT_RRF_WEIGHTS", "DepthPlan", "RerankOutput",
           "plan_depth", "rerank", "combine"]

RERANK_MODES = ("fuse", "rrf", "rerank", "none")
#: How the funnel chooses how many candidates the cross-encoder scores (``FunnelSettings.depth_policy``).
DEPTH_POLICIES = ("fixed", "adaptive")
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


@dataclass(frozen=True)
class DepthPlan:
    """How many fused candidates the cross-encoder will score for one query, and why.

    Attributes:
        depth: candidates to rerank (0: keep the first stage's order).
        reason: ``"fixed"`` (the set depth), ``"confident"`` (the first stage agrees and leads
            clearly: no rerank) or ``"open"`` (the full depth).
        margin: the fused leader's lead over the runner-up, in standard deviations of the
            fused scores of all candidates (0 when there is no runner-up or no spread).
        agree: whether every retriever put the fused leader first in its own list.
    """

    depth: int
    reason: str
    margin: float = 0.0
    agree: bool = False


def plan_depth(fused: Ranking, lists: Sequence[Ranking], *, max_depth: int, policy: str = "fixed",
               confident: float = 1.0) -> DepthPlan:
    """Decide the rerank depth of one query from signals the first stage already has.

    ``"fixed"`` always scores ``max_depth`` candidates. ``"adaptive"`` reads two signals:

    * **agreement**: every retriever (BM25, dense) ranks the fused leader first, though they
      read the text in unrelated ways (exact terms against a learned embedding);
    * **margin**: the leader's lead over the runner-up in standard deviations of the fused
      scores of all candidates (scale-free, so it means the same for z-score and RRF fusion).

    A leader both retrievers agree on, ahead by at least ``confident``, keeps the first stage's
    order: an exact identifier far ahead needs no cross-encoder. Any other query gets
    ``max_depth``. (A smaller depth for a clear leader the retrievers disagree on was measured
    and lost recall on the course cases: ``bench/results/rerank_depth.md``.)

    Example:
        >>> bm25, dense = Ranking([7, 3, 5], [9.0, 2.0, 1.0]), Ranking([7, 5, 3], [0.9, 0.5, 0.4])
        >>> plan_depth(fuse([bm25, dense]), [bm25, dense], max_depth=30, policy="adaptive").reason
        'confident'
        >>> tie = Ranking([3, 7, 5], [5.0, 4.9, 1.0])
        >>> plan_depth(fuse([tie, dense]), [tie, dense], max_depth=30, policy="adaptive").depth
        3
    """
    if policy not in DEPTH_POLICIES:
        raise ValidationError(f"depth policy {policy!r} is unknown; use one of {DEPTH_POLICIES}",
                              field="depth_policy")
    n = min(max_depth, len(fused.ids))
    if policy == "fixed" or n == 0:
        return DepthPlan(n, "fixed")
    scores = np.asarray(fused.scores, dtype=np.float64)
    spread = float(scores.std())
    margin = float(scores[0] - scores[1]) / spread if len(scores) > 1 and spread > 0 else 0.0
    leader = fused.ids[0]
    agree = bool(lists) and all(r.ids and r.ids[0] == leader for r in lists)
    if agree and margin >= confident:
        return DepthPlan(0, "confident", margin, agree)
    return DepthPlan(n, "open", margin, agree)


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
