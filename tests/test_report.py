"""The evaluation report, built from five hand-made scored rows; every figure computed by hand.

Three answerable cases: ``a`` passes every boundary; ``b`` is lost at delivery and then
abstains (an over-abstention); ``c`` never enters the candidates and answers another value.
Two unanswerable ones: ``u1`` abstains (honest), ``u2`` asserts a value (a false assertion,
and a candidate of another tenant showed up in its traces).
"""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from ragkit.core.errors import ValidationError
from ragkit.evaluation import Report


def row(case, tags, answerable, *, entered=False, survived=False, delivered=False, answered=False,
        abstained=False, lost_at="", first=(False, math.nan, math.nan), first_run=None, claims=(0, 0),
        searches=1, leak=""):
    claim_count, supported = claims
    correct = answered
    return {
        "case": case, "tags": tags, "answerable": answerable, "entered": entered, "survived": survived,
        "delivered": delivered, "answered": answered, "end_to_end": answered, "correct": correct,
        "lost_at": lost_at, "abstained": abstained, "asserted": not abstained,
        "honest": (not answerable) and abstained, "false_assertion": (not answerable) and not abstained,
        "over_abstained": answerable and abstained, "first_set_recall": first[0],
        "first_item_recall": first[1], "first_precision": first[2], "first_run": first_run or {},
        "claims": claim_count, "claims_supported": supported,
        "faithfulness": supported / claim_count if claim_count else math.nan,
        "searches": searches, "tool_calls": searches + 1, "seconds": float(searches),
        "tenant_leaks": leak, "leak": bool(leak), "error": None,
    }


ROWS = [
    row("a", "conflict", True, entered=True, survived=True, delivered=True, answered=True,
        first=(True, 1.0, 0.5), first_run={"d#x~0": -1.0, "e#y~0": -2.0}, claims=(2, 2), searches=1),
    row("b", "conflict;temporal", True, entered=True, survived=True, abstained=True, lost_at="delivery",
        first=(True, 1.0, 0.25), first_run={"e#y~0": -1.0, "d#x~1": -2.0, "d#x~0": -3.0}, searches=2),
    row("c", "temporal", True, lost_at="candidates", first=(False, 0.5, 0.0), searches=3),
    row("u1", "scoped", False, abstained=True, searches=1),
    row("u2", "scoped", False, lost_at="honesty", claims=(1, 0), searches=1, leak="globex"),
]
# the decisive section of each answerable case (what the decisive run is judged against)
CASES = [SimpleNamespace(id=c, decisive=SimpleNamespace(citation="d#x")) for c in ("a", "b", "c")]


@pytest.fixture
def report():
    return Report(ROWS, cases=CASES, placement="hybrid")


def test_boundary_table_counts_each_boundary_over_the_cases_that_reached_it(report):
    table = report.boundaries()
    every = table.loc["all"]
    # entered 2 of 3; both survive; 1 of those 2 is delivered; it is answered; 1 of 3 end to end
    assert every["reached"].tolist() == [3, 2, 2, 1, 3]
    assert every["passed"].tolist() == [2, 2, 1, 1, 1]
    assert every["rate"].tolist() == pytest.approx([2 / 3, 1.0, 0.5, 1.0, 1 / 3])
    temporal = table.loc["temporal"]  # b and c: c never entered, b was not delivered
    assert temporal["reached"].tolist() == [2, 1, 1, 0, 2]
    assert temporal["passed"].tolist() == [1, 1, 0, 0, 0]
    assert math.isnan(temporal.loc["answered", "rate"])        # no case reached it: NaN, not zero
    assert table.loc[("scoped", "end_to_end"), "reached"] == 0   # no answerable case carries the tag


def test_honesty_is_reported_apart_from_accuracy(report):
    h = report.honesty()
    every = h.loc["all"]
    assert (every["unanswerable"], every["honest"], every["false_assertions"]) == (2, 1, 1)
    assert (every["honesty_rate"], every["false_assertion_rate"]) == (0.5, 0.5)
    assert (every["answerable"], every["over_abstained"]) == (3, 1)
    assert every["over_abstention_rate"] == pytest.approx(1 / 3)
    assert every["accuracy"] == pytest.approx(1 / 3)
    assert math.isnan(h.loc["scoped", "accuracy"])             # an all-unanswerable tag has no accuracy
    assert h.loc["conflict", "unanswerable"] == 0 and math.isnan(h.loc["conflict", "honesty_rate"])


def test_honesty_needs_the_scored_columns():
    with pytest.raises(ValidationError, match="score_case"):
        Report([{"case": "x", "tags": "", "answerable": True}]).honesty()


def test_retrieval_faithfulness_costs_failures_and_leaks(report):
    r = report.retrieval()
    assert r["cases"] == 3.0
    assert r["candidate_set_recall"] == pytest.approx(2 / 3)
    assert r["candidate_item_recall"] == pytest.approx(2.5 / 3)
    assert r["precision_at_delivered"] == pytest.approx(0.75 / 3)
    # decisive section d#x at rank 1 (a), rank 2 (b: chunks of a section fold into it), absent (c)
    assert r["mrr@10"] == pytest.approx((1 + 0.5 + 0) / 3)
    run, qrels = report.decisive_run()
    assert run["b"] == {"e#y": -1.0, "d#x": -2.0} and qrels["a"] == {"d#x": 1}
    f = report.faithfulness()
    assert (f["claims"], f["supported"], f["cases_with_claims"]) == (3, 2, 2)
    assert f["claim_rate"] == pytest.approx(2 / 3) and f["case_mean"] == 0.5
    searches = report.costs().loc["searches"]
    # searches 1, 2, 3, 1, 1: sorted 1 1 1 2 3; p95 interpolates at position 3.8 -> 2.8
    assert (searches["p50"], searches["p95"], searches["max"], searches["mean"]) == \
        pytest.approx((1.0, 2.8, 3.0, 1.6))
    assert report.failures()["case"].tolist() == ["b", "c", "u2"]
    assert report.failures()["lost_at"].tolist() == ["delivery", "candidates", "honesty"]
    assert report.leaks()["case"].tolist() == ["u2"]


def test_summary_and_json_agree_with_the_tables(report):
    s = report.summary()
    assert (s["cases"], s["answerable"], s["unanswerable"], s["placement"]) == (5, 3, 2, "hybrid")
    assert (s["entered_passed"], s["answered_passed"], s["end_to_end_passed"]) == (2, 1, 1)
    assert s["end_to_end_rate"] == pytest.approx(1 / 3)
    assert (s["tenant_leaks"], s["errors"]) == (1, 0)
    assert s["searches_max"] == 3.0
    data = json.loads(report.to_json())
    scoped = [b for b in data["boundaries"] if b["tag"] == "scoped" and b["boundary"] == "entered"]
    assert scoped[0]["rate"] is None                            # NaN becomes null in JSON
    assert [c["case"] for c in data["cases"]] == ["a", "b", "c", "u1", "u2"]
    assert "first_run" not in data["cases"][0]                  # the nested run stays out of the CSV
    text = str(report)
    assert "2/3" in text and "end to end" in text and "Tenant leaks: 1" in text
