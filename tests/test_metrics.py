"""Tests for ragkit.evaluation.metrics: hand-computed values, conventions, errors, ranx parity."""

from __future__ import annotations

import math

import pytest

from ragkit import ValidationError
from ragkit.evaluation import (
    DEFAULT_METRICS,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    rank_run,
    recall_at_k,
    score_run,
)

# q1 ranks a, b, c, d; relevant b (2), d (1), e (1, never retrieved); a judged 0.
# q2 ranks x, y; relevant y. q3 has no relevant document (skipped).
# q4 is judged but absent from the run (scores 0). "extra" is not judged (ignored).
RUN = {
    "q1": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5},
    "q2": {"x": 1.0, "y": 0.9},
    "extra": {"a": 1.0},
}
QRELS = {
    "q1": {"b": 2, "d": 1, "e": 1, "a": 0},
    "q2": {"y": 1},
    "q3": {"z": 0},
    "q4": {"w": 1},
}
LOG3 = math.log2(3)


def test_ndcg_hand_computed_linear_gain_log2_discount():
    result = ndcg_at_k(RUN, QRELS, k=3)
    q1 = (2 / LOG3) / (2 + 1 / LOG3 + 1 / 2)  # b (gain 2) at rank 2; ideal 2, 1, 1
    q2 = (1 / LOG3) / 1
    assert result.per_query == pytest.approx({"q1": q1, "q2": q2, "q4": 0.0}, abs=1e-12)
    assert result.mean == pytest.approx((q1 + q2) / 3, abs=1e-12)


def test_ndcg_at_k_larger_than_ranking():
    q1 = (2 / LOG3 + 1 / math.log2(5)) / (2 + 1 / LOG3 + 1 / 2)
    assert ndcg_at_k(RUN, QRELS, k=10).per_query["q1"] == pytest.approx(q1, abs=1e-12)


def test_mrr_hand_computed_and_cutoff():
    assert mrr_at_k(RUN, QRELS, k=10).per_query == {"q1": 0.5, "q2": 0.5, "q4": 0.0}
    assert mrr_at_k(RUN, QRELS, k=1).mean == 0.0


def test_recall_hand_computed():
    expected = {"q1": 1 / 3, "q2": 1.0, "q4": 0.0}
    assert recall_at_k(RUN, QRELS, k=3).per_query == pytest.approx(expected)
    assert recall_at_k(RUN, QRELS, k=10).per_query["q1"] == pytest.approx(2 / 3)


def test_precision_divides_by_k_even_when_fewer_retrieved():
    assert precision_at_k(RUN, QRELS, k=10).per_query == pytest.approx(
        {"q1": 2 / 10, "q2": 1 / 10, "q4": 0.0}
    )
    assert precision_at_k(RUN, QRELS, k=2).mean == pytest.approx((1 / 2 + 1 / 2 + 0) / 3)


def test_evaluate_returns_means_in_the_order_asked():
    out = score_run(RUN, QRELS, ["recall@10", "mrr@10", "ndcg@3"])
    assert list(out) == ["recall@10", "mrr@10", "ndcg@3"]
    assert out["recall@10"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert out["mrr@10"] == pytest.approx(1 / 3)
    assert out["ndcg@3"] == pytest.approx(ndcg_at_k(RUN, QRELS, 3).mean)
    assert list(score_run(RUN, QRELS)) == list(DEFAULT_METRICS)


def test_ties_break_by_doc_id_descending_like_trec_eval():
    assert rank_run({"a": 1.0, "b": 1.0, "c": 2.0}) == ["c", "b", "a"]
    assert mrr_at_k({"q": {"a": 1.0, "b": 1.0}}, {"q": {"a": 1}}, k=10).mean == 0.5


def test_grade_is_linear_gain_not_exponential():
    run = {"q": {"low": 2.0, "high": 1.0}}
    qrels = {"q": {"low": 1, "high": 3}}
    expected = (1 + 3 / LOG3) / (3 + 1 / LOG3)  # 2**3 - 1 = 7 would give another value
    assert ndcg_at_k(run, qrels, k=10).mean == pytest.approx(expected, abs=1e-12)


def test_zero_and_negative_grades_are_not_relevant():
    run = {"q": {"bad": 3.0, "zero": 2.0, "good": 1.0}}
    qrels = {"q": {"bad": -1, "zero": 0, "good": 1}}
    assert mrr_at_k(run, qrels, k=10).mean == pytest.approx(1 / 3)
    assert recall_at_k(run, qrels, k=2).mean == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ndcg_at_k(RUN, QRELS, k=0), "expected an int >= 1"),
        (lambda: score_run(RUN, QRELS, ["map@10"]), "metric 'map@10' is not understood"),
        (lambda: score_run(RUN, QRELS, ["ndcg"]), "write <metric>@<k>"),
        (lambda: score_run(RUN, {"q": {"d": 1.5}}), r"qrels\['q'\]\['d'\] = 1.5"),
        (lambda: score_run({"q": {"d": float("nan")}}, QRELS), "expected a finite number"),
        (lambda: score_run(RUN, {"q": {"d": 0}}), "no qrels query has a relevant document"),
        (lambda: score_run([("q", "d")], QRELS), "run is a list"),
    ],
)
def test_bad_input_raises_with_what_and_fix(call, message):
    with pytest.raises(ValidationError, match=message):
        call()


# ---------------------------------------------------------------- ranx parity


@pytest.mark.slow  # ranx is numba-compiled: ~40 s the first time, ~2 s once cached
def test_metrics_match_ranx_on_a_real_bm25_run():
    """A BM25 run over stdlib docstrings, judged by constructed qrels.

    Each query is 4 words of paragraph j: j is graded 2, j+1 graded 1 (often the
    same docstring), one far paragraph graded 1 (rarely retrieved, so recall < 1),
    j+2 graded 0. Most real BM25 top-100s hold tied scores, and ranx leaves ties
    in an unspecified order, so both get the BM25 order (ties already broken by
    row id) as scores ``100 - position``; our tie rule is tested by hand above.
    """
    import re

    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate
    from test_lexical import _paragraphs, _stdlib_docstrings

    from ragkit.retrieval import BM25Retriever

    texts = _paragraphs(_stdlib_docstrings())
    bm25 = BM25Retriever(texts)
    n = len(texts)
    run, qrels = {}, {}
    for j in range(0, n - 2, 10):
        words = [w for w in re.findall(r"[A-Za-z_]\w+", texts[j]) if len(w) > 3][:4]
        ranking = bm25.search(" ".join(words), k=100)
        qid = f"q{j}"
        run[qid] = {str(d): 100.0 - pos for pos, d in enumerate(ranking.ids)}
        qrels[qid] = {str(j): 2, str(j + 1): 1, str((j * 7919 + 13) % n): 1, str(j + 2): 0}
    assert len(run) >= 100

    names = ["ndcg@10", "ndcg@100", "mrr@10", "recall@10", "recall@100", "precision@10"]
    ranx_run = Run(run)
    ranx_evaluate(Qrels(qrels), ranx_run, names, make_comparable=True)
    ours = score_run(run, qrels, names)
    for name in names:
        metric, k = name.split("@")
        per_query = {"ndcg": ndcg_at_k, "mrr": mrr_at_k, "recall": recall_at_k,
                     "precision": precision_at_k}[metric](run, qrels, int(k)).per_query  # fmt: skip
        assert per_query == pytest.approx(dict(ranx_run.scores[name]), abs=1e-6)
        assert ours[name] == pytest.approx(ranx_run.mean_scores[name], abs=1e-6)
        assert 0 < ours[name] < 1  # a real spread, not a degenerate all-0 or all-1 run
