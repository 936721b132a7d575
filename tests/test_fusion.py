"""Tests for ragkit.retrieval.fusion: RRF by hand, its rules, score-fusion baselines, ranx parity."""

from __future__ import annotations

import inspect
import math

import pytest

from ragkit import ValidationError
from ragkit.retrieval import RRF_PARAMS, Ranking, fuse, minmax_fusion, rank_positions, rrf, zscore_fusion


def _scores(ranking: Ranking) -> dict[int, float]:
    return dict(zip(ranking.ids, ranking.scores, strict=True))


# ---------------------------------------------------------------- RRF by hand


def test_worked_example_ranks_2_and_9_beat_rank_1_in_one_list():
    bm25 = Ranking(ids=[100, 42, 7], scores=[9.0, 8.0, 7.0])  # 42 at rank 2
    dense = Ranking(ids=[1, 2, 3, 4, 5, 6, 8, 9, 42], scores=[0.9] * 9)  # 42 at rank 9
    fused = rrf([bm25, dense])
    scores = _scores(fused)
    assert scores[42] == pytest.approx(1 / 62 + 1 / 69, abs=1e-15)
    assert round(scores[42], 4) == 0.0306
    assert scores[100] == pytest.approx(1 / 61, abs=1e-15)
    assert round(scores[100], 4) == 0.0164
    assert fused.ids[0] == 42
    assert fused.ids.index(42) < fused.ids.index(100)


def test_three_lists_hand_computed():
    fused = rrf([[3, 1, 2], [1, 3], [2, 4, 1]], k=60)
    assert _scores(fused) == pytest.approx(
        {
            1: 1 / 62 + 1 / 61 + 1 / 63,
            3: 1 / 61 + 1 / 62,
            2: 1 / 63 + 1 / 61,
            4: 1 / 62,
        },
        abs=1e-15,
    )
    assert fused.ids == [1, 3, 2, 4]


def test_k_changes_the_scores_as_the_formula_says():
    fused = rrf([[5, 6], [6]], k=0)  # ranks from 1: 1/1; 1/2 + 1/1
    assert _scores(fused) == {6: 1.5, 5: 1.0}
    assert fused.ids == [6, 5]


def test_duplicate_inside_one_list_votes_once_at_its_best_rank():
    fused = rrf([[5, 5, 7], [7]])
    scores = _scores(fused)
    assert scores[5] == pytest.approx(1 / 61, abs=1e-15)  # not 1/61 + 1/62
    assert scores[7] == pytest.approx(1 / 63 + 1 / 61, abs=1e-15)  # 7 keeps position 3
    assert fused.ids.count(5) == 1


def test_rank_positions_counts_from_one_and_keeps_first_occurrence():
    assert rank_positions(Ranking([7, 3, 7, 5], [4.0, 3.0, 2.0, 1.0])) == {7: 1, 3: 2, 5: 4}
    assert rank_positions([]) == {}


def test_ties_break_by_best_rank_then_smaller_id():
    # k=0: doc 3 gets 1/2 + 1/2 = 1, doc 9 gets 1/1 = 1, doc 1 gets 1/1 = 1.
    fused = rrf([[9, 3], [1, 3]], k=0)
    assert fused.scores == [1.0, 1.0, 1.0]
    assert fused.ids == [1, 9, 3]  # best rank 1 before best rank 2; then smaller id


def test_equal_votes_give_exactly_equal_scores_whatever_the_list_order():
    # Each doc has ranks {1, 2, 3} across the three lists, in a different order.
    lists = [[4, 8, 1], [1, 4, 8], [8, 1, 4]]
    forward, backward = rrf(lists), rrf(lists[::-1])
    assert forward == backward
    assert len(set(forward.scores)) == 1  # bit-for-bit equal, thanks to math.fsum
    assert forward.ids == [1, 4, 8]


def test_weights_multiply_each_lists_votes():
    fused = rrf([[1, 2], [2, 1]], weights=[2.0, 1.0])
    assert _scores(fused) == pytest.approx({1: 2 / 61 + 1 / 62, 2: 2 / 62 + 1 / 61}, abs=1e-15)
    assert fused.ids == [1, 2]
    muted = rrf([[1, 2], [3]], weights=[1.0, 0.0])
    assert _scores(muted)[3] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": -1}, r"k=-1 is out of range; expected >= 0"),
        ({"k": float("nan")}, "out of range"),
        ({"k": "60"}, "expected a number"),
        ({"weights": [1.0]}, "got 1 weights for 2 rankings"),
        ({"weights": [1.0, -0.5]}, "weight -0.5 is not a finite number >= 0"),
    ],
)
def test_bad_parameters_raise_with_the_fix(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        rrf([[1, 2], [2, 3]], **kwargs)


def test_bad_rankings_raise():
    with pytest.raises(ValidationError, match="non-empty list of rankings"):
        rrf([])
    with pytest.raises(ValidationError, match="Wrap a single ranking"):
        rrf(Ranking([1], [1.0]))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="2 ids but 1 scores"):
        rrf([Ranking([1, 2], [1.0])])
    with pytest.raises(ValidationError, match="holds id 'a'"):
        rrf([["a", "b"]])  # type: ignore[list-item]


def test_rrf_parameter_table_drives_default_and_docs():
    param = RRF_PARAMS["k"]
    assert param.default == 60 and param.low == 0
    assert inspect.signature(rrf).parameters["k"].default == param.default
    assert param.describe() in (rrf.__doc__ or "")


# ---------------------------------------------------------------- score fusion


def test_minmax_fusion_hand_computed():
    a = Ranking([1, 2, 3], [10.0, 6.0, 2.0])  # -> 1, 0.5, 0
    b = Ranking([3, 4], [0.9, 0.5])  # -> 1, 0; weight 0.5; missing -> 0
    fused = minmax_fusion([a, b], weights=[1.0, 0.5])
    assert _scores(fused) == pytest.approx({1: 1.0, 2: 0.5, 3: 0.5, 4: 0.0})
    # 2 and 3 tie at 0.5; 3 has the better best rank (1, in list b), so it goes first.
    assert fused.ids == [1, 3, 2, 4]


def test_minmax_fusion_constant_list_gives_ones():
    fused = minmax_fusion([Ranking([5, 6], [2.0, 2.0])])
    assert fused == Ranking([5, 6], [1.0, 1.0])


def test_zscore_fusion_hand_computed_missing_gets_list_minimum():
    a = Ranking([1, 2, 3], [3.0, 2.0, 1.0])  # mean 2, std sqrt(2/3): z = +-1.2247, 0
    b = Ranking([4, 1], [10.0, 0.0])  # mean 5, std 5: z = 1, -1; missing -> -1
    z = 1 / math.sqrt(2 / 3)
    fused = zscore_fusion([a, b])
    assert _scores(fused) == pytest.approx({1: z - 1, 2: 0 - 1, 3: -z - 1, 4: -z + 1})
    assert fused.ids == [1, 4, 2, 3]


def test_score_fusion_rejects_plain_id_lists_and_nan():
    with pytest.raises(ValidationError, match="score fusion needs"):
        minmax_fusion([[1, 2]])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="NaN or infinite"):
        zscore_fusion([Ranking([1], [float("nan")])])


# ---------------------------------------------------------------- ranx parity


@pytest.mark.slow  # ranx is numba-compiled: ~50 s the first time, ~6 s once cached
def test_rrf_matches_ranx_on_real_bm25_runs():
    """Two real BM25 runs (stemmed vs raw tokens) over stdlib docstrings, fused by both.

    ranx ranks each run by sorting on score and counts ranks from 1 (``1/(k+i+1)``
    over the sorted position i). Its sort is not stable on tied scores, so we hand
    it scores ``100 - position``: distinct, so its ranks are exactly our positions.
    """
    from ranx import Run, fuse
    from test_lexical import _paragraphs, _queries, _stdlib_docstrings

    from ragkit.retrieval import BM25Retriever

    texts = _paragraphs(_stdlib_docstrings())
    stemmed = BM25Retriever(texts)
    raw = BM25Retriever(texts, engine="rank_bm25", stemmer=None, stopwords=None)
    queries = _queries(texts)[:60]
    lists = {q: (stemmed.search(q, k=100), raw.search(q, k=100)) for q in queries}

    def as_run(which: int) -> Run:
        return Run(
            {
                f"q{i}": {str(d): 100.0 - pos for pos, d in enumerate(pair[which].ids)}
                for i, pair in enumerate(lists.values())
            }
        )

    theirs = fuse([as_run(0), as_run(1)], norm=None, method="rrf", params={"k": 60}).to_dict()
    compared = 0
    for i, pair in enumerate(lists.values()):
        ours = rrf(list(pair), k=60)
        their_scores = {int(d): s for d, s in theirs[f"q{i}"].items()}
        assert set(ours.ids) == set(their_scores)
        for doc_id, score in zip(ours.ids, ours.scores, strict=True):
            assert score == pytest.approx(their_scores[doc_id], rel=1e-12, abs=1e-15)
        their_order = sorted(their_scores, key=lambda d: -their_scores[d])
        distinct = [s for s in ours.scores if ours.scores.count(s) == 1]
        for score in distinct:  # untied documents sit at the same position in both
            assert ours.ids[ours.scores.index(score)] == their_order[ours.scores.index(score)]
        compared += len(ours.ids)
    assert compared > 2000


def test_fuse_dispatches_to_the_named_method_and_rejects_others():
    a, b = Ranking([1, 2, 3], [9.0, 2.0, 1.0]), Ranking([3, 2, 1], [0.9, 0.5, 0.1])
    assert fuse([a, b], method="rrf", k=10, weights=[1, 2]) == rrf([a, b], k=10, weights=[1, 2])
    assert fuse([a, b], method="zscore", weights=[1, 2]) == zscore_fusion([a, b], [1, 2])
    assert fuse([a, b]) == zscore_fusion([a, b])  # the funnel's default
    with pytest.raises(ValidationError, match="'borda' is unknown; use one of"):
        fuse([a, b], method="borda")
