"""Rank fusion: reciprocal rank fusion (RRF) and two score-fusion baselines.

Every retriever in ragkit returns a :class:`Ranking`: row ids best first, with
their scores. Fusion takes several rankings of the same corpus and returns one.

* :func:`rrf` uses only ranks: ``score(d) = sum_i w_i / (k + rank_i(d))``, ranks
  from 1 (Cormack, Clarke and Buettcher, "Reciprocal rank fusion outperforms
  Condorcet and individual rank learning methods", SIGIR 2009).
* :func:`minmax_fusion` and :func:`zscore_fusion` are CombSUM (Fox and Shaw,
  TREC 1993) over normalised scores: the baselines RRF is compared against.

Ties break the same way everywhere: higher fused score first, then the better
(smaller) best rank the document had in any input list, then the smaller id.

Example:
    >>> bm25 = Ranking(ids=[7, 3, 5], scores=[9.1, 4.0, 2.2])
    >>> dense = Ranking(ids=[5, 1, 3], scores=[0.83, 0.80, 0.41])
    >>> fused = rrf([bm25, dense])
    >>> fused.ids
    [5, 3, 7, 1]
    >>> round(fused.scores[0], 4)  # 1/(60+3) + 1/(60+1)
    0.0323
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.core.params import Param, with_param_table

__all__ = [
    "Ranking",
    "RRF_PARAMS",
    "rrf",
    "minmax_fusion",
    "zscore_fusion",
    "FUSIONS",
    "fuse",
    "rank_positions",
]

#: The fusion methods the funnel offers (``FunnelSettings.fusion``).
FUSIONS = ("zscore", "rrf")


class Ranking(NamedTuple):
    """Corpus rows best first, with their scores.

    ``ids`` are row positions in the corpus the retriever indexed; ``scores``
    line up with them. Being a NamedTuple it unpacks as ``ids, scores = ranking``
    (so ``len(ranking)`` is 2: use ``len(ranking.ids)`` for the number of hits).

    Example:
        >>> ids, scores = Ranking(ids=[4, 0], scores=[2.5, 1.0])
        >>> ids
        [4, 0]
    """

    ids: list[int]
    scores: list[float]

    def top(self, n: int) -> Ranking:
        """The first ``n`` entries.

        Example:
            >>> Ranking([4, 0, 2], [3.0, 2.0, 1.0]).top(2)
            Ranking(ids=[4, 0], scores=[3.0, 2.0])
        """
        return Ranking(list(self.ids[:n]), list(self.scores[:n]))


#: RRF's tunable parameters. ``k`` damps the advantage of the very top ranks:
#: with k = 60, rank 1 scores 1/61 and rank 10 scores 1/70.
RRF_PARAMS: Mapping[str, Param] = {
    "k": Param("k", 60, 0, None, "rank offset added to every rank; larger k flattens the top"),
}


def rank_positions(ranking: Ranking | Sequence[int]) -> dict[int, int]:
    """Map each id to its rank in ``ranking``, counting from 1.

    Ranks are positions in the list. An id listed twice keeps its first (best)
    rank; the later copy is ignored and the ids after it keep their positions.

    Example:
        >>> rank_positions(Ranking([7, 3, 7, 5], [4.0, 3.0, 2.0, 1.0]))
        {7: 1, 3: 2, 5: 4}
    """
    ids = _ids_of(ranking, position=0, owner="rank_positions")
    positions: dict[int, int] = {}
    for rank, doc_id in enumerate(ids, start=1):
        positions.setdefault(doc_id, rank)
    return positions


@with_param_table(RRF_PARAMS)
def rrf(
    rankings: Sequence[Ranking | Sequence[int]],
    k: float = RRF_PARAMS["k"].default,
    weights: Sequence[float] | None = None,
) -> Ranking:
    """Reciprocal rank fusion: ``score(d) = sum_i w_i / (k + rank_i(d))``, ranks from 1.

    A document absent from a list gets nothing from it. A duplicate id inside one
    list votes once, at its best rank. Ties break by the better best rank in any
    list, then by the smaller id. Scores are summed with ``math.fsum``, so equal
    sets of votes give exactly equal scores whatever the list order.

    Args:
        rankings: one :class:`Ranking` (or plain list of ids, best first) per retriever.
        k: rank offset, >= 0 (see the table below).
        weights: one non-negative weight per ranking; ``None`` means all 1.

    Returns:
        The fused :class:`Ranking` over every id in any input list.

    Raises:
        ValidationError: ``k < 0``, no rankings, ids/scores of unequal length, or
            ``weights`` not one non-negative number per ranking.

    Example:
        >>> bm25 = Ranking(ids=[11, 4], scores=[7.0, 6.5])  # doc 4 at rank 2
        >>> dense = Ranking(ids=[8, 1, 2, 3, 5, 6, 9, 10, 4], scores=[0.9] * 9)  # doc 4 at rank 9
        >>> fused = rrf([bm25, dense])
        >>> fused.ids[:3]  # 8 and 11 tie at 1/61: same best rank, smaller id first
        [4, 8, 11]
        >>> [round(s, 4) for s in fused.scores[:3]]  # 1/62 + 1/69, then 1/61 twice
        [0.0306, 0.0164, 0.0164]

    Reference:
        Cormack, Clarke and Buettcher, SIGIR 2009, doi:10.1145/1571941.1572114.
    """
    k_value = RRF_PARAMS["k"].check(k, owner="rrf")
    lists = _check_rankings(rankings, owner="rrf")
    list_weights = _check_weights(weights, len(lists), owner="rrf")
    votes: dict[int, list[float]] = {}
    best_rank: dict[int, int] = {}
    for ids, weight in zip(lists, list_weights, strict=True):
        for doc_id, rank in rank_positions(ids).items():
            votes.setdefault(doc_id, []).append(weight / (k_value + rank))
            best_rank[doc_id] = min(rank, best_rank.get(doc_id, rank))
    return _ranked({doc_id: math.fsum(v) for doc_id, v in votes.items()}, best_rank)


def minmax_fusion(rankings: Sequence[Ranking], weights: Sequence[float] | None = None) -> Ranking:
    """CombSUM of min-max normalised scores: a score-fusion baseline for RRF.

    Each list's scores are mapped to ``(s - min) / (max - min)``, so its best
    document gets 1 and its worst 0; a document missing from a list gets 0 (the
    list's minimum). A list whose scores are all equal gives each of its
    documents 1. Fused score: ``sum_i w_i * norm_i(d)``; ties break as in :func:`rrf`.

    Example:
        >>> a = Ranking([1, 2, 3], [10.0, 6.0, 2.0])
        >>> b = Ranking([3, 4], [0.9, 0.5])
        >>> fused = minmax_fusion([a, b])
        >>> fused.ids, fused.scores
        ([1, 3, 2, 4], [1.0, 1.0, 0.5, 0.0])
    """
    return _score_fusion(rankings, weights, _minmax, owner="minmax_fusion")


def zscore_fusion(rankings: Sequence[Ranking], weights: Sequence[float] | None = None) -> Ranking:
    """CombSUM of z-score normalised scores: a score-fusion baseline for RRF.

    Each list's scores are mapped to ``(s - mean) / std`` (population std); a
    document missing from a list gets that list's lowest z-score, so being absent
    is never better than being retrieved last. A list whose scores are all equal
    gives 0 to every document, present or missing. Ties break as in :func:`rrf`.

    Example:
        >>> a = Ranking([1, 2, 3], [3.0, 2.0, 1.0])
        >>> fused = zscore_fusion([a, Ranking([2], [5.0])])
        >>> fused.ids, [round(s, 4) for s in fused.scores]
        ([1, 2, 3], [1.2247, 0.0, -1.2247])
    """
    return _score_fusion(rankings, weights, _zscore, owner="zscore_fusion")


def fuse(rankings: Sequence[Ranking], *, method: str = "zscore", k: float = 60,
         weights: Sequence[float] | None = None) -> Ranking:
    """Fuse ``rankings`` with ``method``: ``"zscore"`` (:func:`zscore_fusion`) or ``"rrf"`` (:func:`rrf`).

    ``k`` is RRF's rank offset (unused by ``"zscore"``). This is the one place the funnel
    chooses its fusion (``FunnelSettings.fusion``). Ranks forget *how far* ahead a document
    is; scores keep it: below, document 1 leads BM25 by a wide margin and is all but tied in
    the dense list, so z-scores keep it first while RRF puts the dense list's first ahead.

    Example:
        >>> bm25 = Ranking([1, 2, 3, 4], [12.0, 3.0, 2.9, 2.8])
        >>> dense = Ranking([2, 3, 1, 4], [0.90, 0.89, 0.88, 0.20])
        >>> fuse([bm25, dense], method="rrf").ids, fuse([bm25, dense], method="zscore").ids
        ([2, 1, 3, 4], [1, 2, 3, 4])
    """
    if method == "rrf":
        return rrf(rankings, k=k, weights=weights)
    if method == "zscore":
        return zscore_fusion(rankings, weights)
    raise ValidationError(f"fusion method {method!r} is unknown; use one of {FUSIONS}", field="fusion")


# ---------------------------------------------------------------- internals


def _minmax(scores: np.ndarray) -> tuple[np.ndarray, float]:
    low, high = float(scores.min()), float(scores.max())
    if high > low:
        return (scores - low) / (high - low), 0.0
    return np.ones_like(scores), 0.0


def _zscore(scores: np.ndarray) -> tuple[np.ndarray, float]:
    std = float(scores.std())
    if std > 0:
        z = (scores - scores.mean()) / std
        return z, float(z.min())
    return np.zeros_like(scores), 0.0


def _score_fusion(
    rankings: Sequence[Ranking],
    weights: Sequence[float] | None,
    normalise: Callable[[np.ndarray], tuple[np.ndarray, float]],
    *,
    owner: str,
) -> Ranking:
    lists = _check_rankings(rankings, owner=owner, need_scores=True)
    list_weights = _check_weights(weights, len(lists), owner=owner)
    per_list: list[tuple[dict[int, float], float]] = []
    best_rank: dict[int, int] = {}
    for ranking in rankings:
        first = rank_positions(ranking)
        for doc_id, rank in first.items():
            best_rank[doc_id] = min(rank, best_rank.get(doc_id, rank))
        if not first:
            per_list.append(({}, 0.0))
            continue
        raw = np.array([ranking.scores[rank - 1] for rank in first.values()], dtype=np.float64)
        normalised, missing = normalise(raw)
        per_list.append((dict(zip(first, normalised.tolist(), strict=True)), missing))
    weighted = list(zip(per_list, list_weights, strict=True))
    fused = {
        doc_id: math.fsum(w * values.get(doc_id, missing) for (values, missing), w in weighted)
        for doc_id in best_rank
    }
    return _ranked(fused, best_rank)


def _ranked(scores: dict[int, float], best_rank: dict[int, int]) -> Ranking:
    order = sorted(scores, key=lambda d: (-scores[d], best_rank[d], d))
    return Ranking(order, [scores[d] for d in order])


def _ids_of(ranking: object, *, position: int, owner: str) -> list[int]:
    ids = ranking.ids if isinstance(ranking, Ranking) else ranking
    if isinstance(ids, (str, bytes)) or not isinstance(ids, (Sequence, np.ndarray)):
        raise ValidationError(
            f"{owner}: ranking #{position} is a {type(ranking).__name__}; expected a Ranking "
            "(ids, scores) or a list of int ids, best first",
            field="rankings",
        )
    out = []
    for doc_id in ids:
        if isinstance(doc_id, bool) or not isinstance(doc_id, (int, np.integer)):
            raise ValidationError(
                f"{owner}: ranking #{position} holds id {doc_id!r} "
                f"of type {type(doc_id).__name__}; ids are int row positions in the corpus",
                field="rankings",
            )
        out.append(int(doc_id))
    return out


def _check_rankings(
    rankings: Sequence[object], *, owner: str, need_scores: bool = False
) -> list[list[int]]:
    if isinstance(rankings, Ranking) or not isinstance(rankings, Sequence) or not rankings:
        raise ValidationError(
            f"{owner}: expected a non-empty list of rankings, one per retriever; "
            f"got {rankings!r:.80}. Wrap a single ranking in a list: {owner}([ranking])",
            field="rankings",
        )
    lists = []
    for position, ranking in enumerate(rankings):
        if need_scores and not isinstance(ranking, Ranking):
            raise ValidationError(
                f"{owner}: ranking #{position} is a {type(ranking).__name__}; score fusion needs "
                "Ranking(ids, scores) with the retriever's scores",
                field="rankings",
            )
        ids = _ids_of(ranking, position=position, owner=owner)
        if isinstance(ranking, Ranking):
            if len(ranking.scores) != len(ids):
                raise ValidationError(
                    f"{owner}: ranking #{position} has {len(ids)} ids but {len(ranking.scores)} "
                    "scores; expected one score per id",
                    field="rankings",
                )
            if need_scores and not np.all(np.isfinite(np.asarray(ranking.scores, dtype=float))):
                raise ValidationError(
                    f"{owner}: ranking #{position} has a NaN or infinite score; "
                    "scores must be finite numbers",
                    field="rankings",
                )
        lists.append(ids)
    return lists


def _check_weights(weights: Sequence[float] | None, n_lists: int, *, owner: str) -> list[float]:
    if weights is None:
        return [1.0] * n_lists
    if isinstance(weights, (str, bytes)) or not isinstance(weights, (Sequence, np.ndarray)):
        raise ValidationError(
            f"{owner}: weights={weights!r} is not a list; "
            f"expected {n_lists} numbers, one per ranking",
            field="weights",
        )
    if len(weights) != n_lists:
        raise ValidationError(
            f"{owner}: got {len(weights)} weights for {n_lists} rankings; "
            "pass exactly one weight per ranking, in the same order",
            field="weights",
        )
    out = []
    for weight in weights:
        number_types = (int, float, np.integer, np.floating)
        ok = isinstance(weight, number_types) and not isinstance(weight, bool)
        if not ok or not math.isfinite(float(weight)) or float(weight) < 0:
            raise ValidationError(
                f"{owner}: weight {weight!r} is not a finite number >= 0; "
                "use e.g. weights=[1.0, 0.5] (0 mutes a list)",
                field="weights",
            )
        out.append(float(weight))
    return out
