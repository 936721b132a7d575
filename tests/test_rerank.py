"""Tests for ragkit.retrieval.rerank: rerank() with a stand-in scorer, and combine() mode by mode."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ragkit import Funnel, ValidationError
from ragkit.retrieval import DepthPlan, Ranking, RerankOutput, combine, fuse, plan_depth, rerank


class WordScorer:
    """A stand-in cross-encoder: a passage scores the number of query words it contains.

    It records every call, so a test sees exactly which passages were scored and with what length.
    """

    name, version, max_length = "words", "v1", 256

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str], int | None]] = []

    def score(self, query: str, passages, *, batch_size=None, max_length=None):
        self.calls.append((query, list(passages), max_length))
        words = set(query.lower().split())
        return np.array([sum(w in words for w in p.lower().split()) for p in passages], dtype=np.float32)

    def count_pair_tokens(self, query: str, passages, *, max_length=None):
        return [min(max_length or self.max_length, len(query.split()) + len(p.split())) for p in passages]


class NoLengthScorer:
    """A scorer whose ``score`` takes no ``max_length`` (a custom reranker may not offer it)."""

    def score(self, query, passages, *, batch_size=None):
        return [float(len(p)) for p in passages]

    def count_pair_tokens(self, query, passages):
        return [len(p) for p in passages]


# ---------------------------------------------------------------- rerank()


def test_rerank_scores_in_input_order_with_ranks_and_token_units():
    scorer = WordScorer()
    out = rerank("eur cutoff", ["lunch menu", "eur cutoff at 15:00", "eur batch", "nothing"], scorer)
    assert isinstance(out, RerankOutput)
    assert out.scores.tolist() == [0.0, 2.0, 1.0, 0.0] and out.scores.dtype == np.float32
    assert out.ranks == [3, 1, 2, 4]  # the two zeros: the earlier passage ranks first
    assert out.token_units == [4, 6, 4, 3]  # 2 query words + the passage's words


def test_rerank_passes_max_length_only_to_a_scorer_that_takes_it():
    scorer = WordScorer()
    rerank("eur", ["a b c d e"], scorer, max_length=3)
    rerank("eur", ["a b c d e"], scorer)
    assert [c[2] for c in scorer.calls] == [3, None]  # per call, and only when asked
    assert rerank("eur", ["a b c d e"], scorer, max_length=3).token_units == [3]
    out = rerank("q", ["abc", "a"], NoLengthScorer(), max_length=3)  # not passed: no TypeError
    assert out.scores.tolist() == [3.0, 1.0] and out.token_units == [3, 1]


def test_rerank_of_nothing_costs_nothing():
    out = rerank("eur", [], WordScorer())
    assert out.scores.shape == (0,) and out.token_units == [] and out.ranks == []


# ---------------------------------------------------------------- combine()

FIRST = Ranking([10, 11, 12], [0.05, 0.04, 0.03])


def test_combine_rerank_orders_by_score_and_breaks_ties_by_first_stage_order():
    out = combine(FIRST, [2.0, 2.0, 5.0], mode="rerank")
    assert out.ids == [12, 10, 11] and out.scores == [5.0, 2.0, 2.0]


def test_combine_none_keeps_the_first_stage_and_empty_stays_empty():
    assert combine(FIRST, [9.0, 1.0, 5.0], mode="none") is FIRST
    empty = Ranking([], [])
    assert combine(empty, [], mode="rerank") is empty


def test_combine_rrf_by_hand():
    # first-stage ranks 10:1 11:2 12:3; reranker ranks 11:1 10:2 12:3
    out = combine(FIRST, [1.0, 9.0, -3.0], mode="rrf", k=0, weights=(1, 3))
    assert out.ids == [11, 10, 12]
    assert out.scores == [1 / 2 + 3 / 1, 1 / 1 + 3 / 2, 1 / 3 + 3 / 3]


def test_combine_fuse_with_rrf_by_hand_keeps_only_the_head():
    lexical = Ranking([10, 12, 11, 99], [9.0, 8.0, 7.0, 6.0])
    dense = Ranking([12, 10], [0.9, 0.8])
    # reranker order 11, 12, 10; weights 1, 1 and 2 for the reranker; 99 was never in the head
    out = combine(FIRST, [0.0, 5.0, 1.0], mode="fuse", lists=[lexical, dense], weights=(1, 1, 2),
                  fusion="rrf", k=60)
    expected = {10: math.fsum([1 / 61, 1 / 62, 2 / 63]), 11: math.fsum([1 / 63, 2 / 61]),
                12: math.fsum([1 / 62, 1 / 61, 2 / 62])}
    assert out.ids == [12, 10, 11]
    assert out.scores == [expected[12], expected[10], expected[11]]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"mode": "best"}, "rerank mode 'best' is unknown"),
    ({"mode": "fuse", "lists": [FIRST], "weights": (1, 1, 1)}, "3 weights for 1 lists"),
])
def test_combine_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        combine(FIRST, [1.0, 2.0, 3.0], **kwargs)


def test_combine_needs_one_score_per_candidate():
    with pytest.raises(ValidationError, match="2 scores for 3 candidates"):
        combine(FIRST, [1.0, 2.0], mode="rerank")


# ---------------------------------------------------------------- depth, through the funnel


class RandomEmbedder:
    """Unit vectors from a seeded generator: no model, so the funnel runs in milliseconds."""

    name, version, dim = "test/random", "v0", 16

    def encode(self, texts, **_kwargs):
        rng = np.random.default_rng(len(texts))
        v = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def small_index():
    from ragkit import Index, load_corpus

    docs, _ = load_corpus(Path(__file__).parent / "fixtures" / "corpus")
    return Index.build(docs, embedder=RandomEmbedder())


def test_the_funnel_reranks_exactly_rerank_depth_candidates(small_index):
    scorer = WordScorer()
    funnel = Funnel(small_index, reranker=scorer)
    result = funnel.search("EUR cutoff settlement", rerank_depth=3, rerank_tokens=64, candidates=10,
                           depth_policy="fixed")
    assert len(scorer.calls) == 1
    _, passages, length = scorer.calls[0]
    assert len(passages) == 3 and length == 64
    reranked = [c for c in result.trace.candidates if c.rerank_rank is not None]
    assert sorted(c.rerank_rank for c in reranked) == [1, 2, 3]
    assert all(c.fused_rank <= 3 for c in reranked)  # the head of the fused list, nothing else
    assert result.trace.tokens["reranker_units"] == sum(
        scorer.count_pair_tokens("EUR cutoff settlement", passages, max_length=64))


def test_the_funnel_skips_the_scorer_when_the_mode_is_none_or_depth_zero(small_index):
    scorer = WordScorer()
    funnel = Funnel(small_index, reranker=scorer)
    for overrides in ({"rerank_mode": "none"}, {"rerank_depth": 0}):
        result = funnel.search("EUR cutoff", **overrides)
        assert result.trace.tokens["reranker_units"] == 0
    assert scorer.calls == []


# ---------------------------------------------------------------- adaptive depth


def test_the_default_policy_is_adaptive_with_a_margin_of_one():
    from ragkit import FunnelSettings

    s = FunnelSettings()
    assert (s.depth_policy, s.confident_margin, s.rerank_depth) == ("adaptive", 1.0, 30)


def test_fixed_depth_is_the_setting_capped_by_the_candidates():
    fused = Ranking([1, 2, 3], [3.0, 2.0, 1.0])
    assert plan_depth(fused, [fused], max_depth=30) == DepthPlan(3, "fixed")
    assert plan_depth(Ranking([], []), [], max_depth=30, policy="adaptive").depth == 0


def test_a_leader_both_retrievers_agree_on_far_ahead_is_not_reranked():
    bm25 = Ranking([7, 3, 5, 4], [20.0, 2.0, 1.9, 1.8])
    dense = Ranking([7, 5, 3, 4], [0.9, 0.5, 0.49, 0.48])
    plan = plan_depth(fuse([bm25, dense]), [bm25, dense], max_depth=30, policy="adaptive", confident=1.0)
    assert plan.depth == 0 and plan.reason == "confident" and plan.agree and plan.margin > 1.0
    # the same lead, but the dense list puts another first: not confident, full depth
    other = Ranking([5, 7, 3, 4], [0.91, 0.9, 0.49, 0.48])
    plan = plan_depth(fuse([bm25, other]), [bm25, other], max_depth=30, policy="adaptive", confident=1.0)
    assert not plan.agree and plan.reason == "open" and plan.depth == 4


def test_a_near_tie_gets_the_full_depth_however_the_lists_agree():
    bm25 = Ranking([7, 3, 5, 4], [5.0, 4.99, 4.98, 1.0])
    dense = Ranking([7, 3, 5, 4], [0.9, 0.899, 0.898, 0.1])
    plan = plan_depth(fuse([bm25, dense]), [bm25, dense], max_depth=3, policy="adaptive", confident=1.0)
    assert plan.agree and plan.margin < 0.1 and plan.depth == 3 and plan.reason == "open"


def test_an_unknown_depth_policy_is_a_clear_error():
    with pytest.raises(ValidationError, match="depth policy 'smart' is unknown"):
        plan_depth(FIRST, [FIRST], max_depth=30, policy="smart")
    from ragkit import FunnelSettings
    with pytest.raises(ValidationError, match="depth_policy='smart'"):
        FunnelSettings(depth_policy="smart")


def test_the_funnel_records_its_depth_plan_and_reranks_that_many(small_index):
    scorer = WordScorer()
    funnel = Funnel(small_index, reranker=scorer)
    fixed = funnel.search("EUR cutoff settlement", candidates=10, rerank_depth=5, depth_policy="fixed")
    assert fixed.trace.depth_plan["reason"] == "fixed" and fixed.trace.depth_plan["depth"] == 5
    never = funnel.search("EUR cutoff settlement", candidates=10, rerank_depth=5, depth_policy="adaptive",
                          confident_margin=1e9)  # no lead is ever confident: the full depth
    assert never.trace.depth_plan["depth"] == 5 and len(scorer.calls[-1][1]) == 5
    calls = len(scorer.calls)
    always = funnel.search("EUR cutoff settlement", candidates=10, rerank_depth=5, depth_policy="adaptive",
                           confident_margin=0.0)
    if always.trace.depth_plan["agree"]:  # both lists put the leader first: the scorer is not called
        assert always.trace.depth_plan["depth"] == 0 and len(scorer.calls) == calls
        assert always.trace.tokens["reranker_units"] == 0
    else:
        assert always.trace.depth_plan["depth"] == 5
