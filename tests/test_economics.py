"""CURRICULUM section 5, figure by figure (exact), and the same quantities from traces."""

from __future__ import annotations

import pytest

from ragkit import ValidationError
from ragkit.evaluation import (
    CostModel,
    break_even_turns,
    calls_per_task,
    concurrency,
    daily_calls,
    delivered_tokens,
    pass_latency_ms,
    relative_fall,
    reranker_units,
    reranking_pays,
    task_latency_ms,
    token_turns,
    token_turns_avoided,
)

FIG = CostModel().worked_example()


def test_reranker_units_8800():
    assert reranker_units(40, 220) == 8800 == FIG["reranker_units"]


def test_delivered_2600():
    assert delivered_tokens(4, 650) == 2600 == FIG["delivered_tokens"]


def test_token_turns_15600_vs_42000_avoided_26400():
    assert token_turns(2600, 6) == 15600 == FIG["narrow_token_turns"]
    assert token_turns(delivered_tokens(10, 700), 6) == 42000 == FIG["wide_token_turns"]
    assert token_turns_avoided(7000, 2600, 6) == 26400 == FIG["token_turns_avoided"]


def test_daily_18000_calls_475m_avoided_158m_reranker_units():
    assert daily_calls(10_000, 1.8) == 18000 == FIG["calls_per_day"]
    assert FIG["token_turns_avoided_per_day"] == 475_200_000
    assert FIG["reranker_units_per_day"] == 158_400_000


def test_immediate_answer_saves_4400_below_8800():
    assert token_turns_avoided(7000, 2600, 1) == 4400 == FIG["immediate_saving"]
    assert not reranking_pays(7000, 2600, 1, 8800)
    assert FIG["immediate_reranking_pays"] is False


def test_break_even_inequality():
    assert reranking_pays(7000, 2600, 6, 8800)
    # exactly at break-even (2 turns: 8,800 = 8,800) the strict inequality does not hold
    assert not reranking_pays(7000, 2600, 2, 8800)
    assert reranking_pays(7000, 2600, 3, 8800)
    assert break_even_turns(7000, 2600, 8800) == 2
    # a reranker unit 10x cheaper than a main-model token: pays even at one turn
    assert reranking_pays(7000, 2600, 1, 8800, main_price=1, reranker_price=0.1)
    assert break_even_turns(2600, 2600, 8800) == float("inf")


def test_calls_per_task_16_13_fall_1875():
    assert calls_per_task(0.30, 2) == 1.6 == FIG["calls_per_task_30"]
    assert calls_per_task(0.15, 2) == 1.3 == FIG["calls_per_task_15"]
    assert relative_fall(1.6, 1.3) == 0.1875 == FIG["calls_fall"]


def test_latency_2080_2704_2392_savings():
    assert pass_latency_ms(70, 210, 1800) == 2080 == FIG["pass_ms"]
    assert task_latency_ms(2080, 0.30) == 2704 == FIG["task_ms"]
    assert task_latency_ms(2080, 0.15) == 2392 == FIG["task_ms_half_repeats"]
    assert FIG["saving_half_rerank_ms"] == 136.5
    assert FIG["saving_half_repeats_ms"] == 312


def test_littles_law_676_vs_598():
    assert concurrency(25, 2.704) == 67.6 == FIG["concurrent_paths"]
    assert concurrency(25, 2.392) == 59.8 == FIG["concurrent_paths_half_repeats"]


def test_parameters_change_the_figures():
    other = CostModel(candidates=30, repeat_rate=0.2).worked_example()
    assert other["reranker_units"] == 6600
    assert other["task_ms"] == 2496


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValidationError, match="negative"):
        reranker_units(-1, 220)
    with pytest.raises(ValidationError, match="share"):
        calls_per_task(1.5, 2)
    with pytest.raises(ValidationError, match="expected a number"):
        CostModel(candidates="40")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="zero"):
        relative_fall(0, 1)


@pytest.mark.slow
def test_width_sweep_on_the_fixture_corpus(fixture_index):
    from test_counterfactuals import eur_case

    from ragkit.evaluation import width_sweep

    frame = width_sweep(fixture_index, [eur_case()], candidates=(3, 20), deliver=(1, 2, 4), progress=False)
    assert len(frame) == 6 and set(frame["rerank_depth"]) == {3, 20}  # depth cut to the candidate width
    for _, grid in frame.groupby("candidates"):
        recall = grid.sort_values("deliver")["set_recall"].tolist()
        assert recall == sorted(recall)           # delivering more never loses evidence
        tokens = grid.sort_values("deliver")["delivered_tokens"].tolist()
        assert tokens == sorted(tokens)
    row = frame.iloc[0]
    assert row["calls_per_task"] == 1 + (1 - row["set_recall"]) * 2
    assert row["total_cost"] == pytest.approx(row["calls_per_task"] * (row["reranker_units"]
                                                                      + row["delivered_tokens"] * 6))
    assert frame["set_recall"].max() == 1.0       # the policy's cutoff section is found at some width
