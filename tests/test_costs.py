"""Costs measured on traces: the distributions of CURRICULUM section 5, on hand-made results."""

from __future__ import annotations

import math

import pytest
from test_evaluation import CASES

from ragkit.evaluation import distribution, trace_costs, trace_economics


def test_distribution_hand_computed():
    d = distribution([4, 1, 3, 2, None, math.nan])     # None and NaN are not values
    # sorted 1 2 3 4: p50 halfway between 2 and 3; p95 at position 0.95 x 3 = 2.85 -> 3.85
    assert (d["n"], d["p50"], d["p95"], d["max"], d["mean"]) == pytest.approx((4, 2.5, 3.85, 4.0, 2.5))
    empty = distribution([])
    assert empty["n"] == 0 and math.isnan(empty["p50"]) and math.isnan(empty["max"])


def test_trace_costs_and_percentiles():
    q = "EUR cutoff is 15:00."

    def res(units, tokens, turns, ms, seconds, items):
        return {"searches": len(units), "seconds": seconds, "tokens_delivered": sum(tokens),
                "token_turns": sum(t * (b - a + 1) for t, (a, b) in zip(tokens, turns, strict=True)),
                "evidence_turns": {f"e{i}": t for i, t in enumerate(turns)},
                "traces": [{"candidates": [{"fused_rank": r} for r in range(1, 41)] + [{"fused_rank": None}],
                            "tokens": {"reranker_units": u}} for u in units],
                "steps": [{"turn": i + 1, "action": "search", "ms": m, "tokens": t,
                           "response": {"results": it}} for i, (m, t, it) in enumerate(zip(ms, tokens, items,
                                                                                             strict=True))]}

    results = {
        # first search finds nothing, the second delivers the quote
        "c1": res([8800, 9000], [0, 2600], [(1, 3), (2, 3)], [100.0, 50.0], 2.0,
                  [[], [{"doc_id": "pol", "text": q}, {"doc_id": "ro", "text": "Cutover completed."}]]),
        "c2": res([8800], [1000], [(1, 2)], [80.0], 1.0, [[{"doc_id": "pol", "text": "x " + q}]]),
    }
    per_call, per_task = trace_costs(CASES[:2], results)
    assert per_call["candidates"].tolist() == [40, 40, 40]
    assert per_call["reranker_units"].tolist() == [8800, 9000, 8800]
    assert per_call["delivered_tokens"].tolist() == [0, 2600, 1000]
    t = per_task.set_index("case")
    assert t.loc["c1", "ms_to_first_evidence"] == 150.0 and t.loc["c1", "ms_to_sufficient_evidence"] == 150.0
    assert t.loc["c2", "ms_to_first_evidence"] == 80.0 and t.loc["c2", "ms_to_answer"] == 1000.0
    assert t.loc["c1", "token_turns"] == 2600 * 2
    econ = trace_economics(CASES[:2], results)
    assert econ["calls_per_task"]["p50"] == 1.5 and econ["calls_per_task"]["max"] == 2
    assert econ["evidence_persistence_turns"]["p50"] == 2.0       # turns 3, 2, 2
    assert econ["reranker_units_per_call"]["p95"] == pytest.approx(8800 + 0.9 * 200)
    assert econ["dominant_tail"]["term"] == "delivered_tokens_per_call"
