"""Counterfactual tests: index views without re-embedding, and each test's pass/fail rule.

The runners here are a pipeline placement built from Funnel.search inside the tests (a test
helper, not the reference agent): a *naive* reader answers with the first time of day in
the top hit; a *cautious* one answers only from a policy document and abstains otherwise.
"""

from __future__ import annotations

import pytest

from ragkit import Scope
from ragkit.core import snapshot_filters
from ragkit.evaluation import IndexView, judge, parse_case, run_counterfactuals
from ragkit.text import normalise_value

Q = "Tenants migrated to the new clearing platform use a 15:00 CET cutoff for EUR batches."


def eur_case(reject_reason="lower_authority"):
    return parse_case({
        "id": "eur", "task": "Which EUR cutoff applies to migrated tenants?",
        "caller": {"tenant": "acme", "groups": ["ops"]}, "as_of": "2026-01-19", "answerable": True,
        "evidence": [{"doc_id": "settlement-policy-v3", "anchor": "cutoffs", "quote": Q, "role": "decisive"}],
        "reject": [{"doc_id": "settlement-runbook-v2", "anchor": "eur-cutoff", "reason": reject_reason}],
        "expected": {"kind": "time", "value": "15:00"}, "tags": ["conflict"], "decoys": []})


def funnel_runner(cautious):
    from ragkit import Funnel
    from ragkit.models import get_reranker

    def make(view):
        funnel = Funnel(view, reranker=view.wrap_reranker(get_reranker()))

        def run(case):
            res = funnel.search(case.task, scope=case.caller,
                                filters=snapshot_filters(case.as_of), deliver=3)
            hits = [h for h in res.hits if not cautious or h.envelope.source_type == "policy"]
            value = None
            if hits:
                try:
                    value = normalise_value("time", hits[0].evidence)
                except Exception:
                    value = None
            return {"abstained": value is None, "value": value, "answer": value or "", "traces": [res.trace],
                    "delivered": [{"doc_id": h.doc_id, "text": h.evidence, "envelope": h.envelope,
                                   "citation": h.citation} for h in res.hits]}
        return run
    return make


@pytest.mark.slow
def test_remove_and_insert_separate_a_naive_reader_from_a_cautious_one(fixture_index):
    case = eur_case()
    naive = run_counterfactuals([case], fixture_index, funnel_runner(False),
                                which=("remove_source", "insert_rejected"), progress=False)
    cautious = run_counterfactuals([case], fixture_index, funnel_runner(True),
                                   which=("remove_source", "insert_rejected"), progress=False)
    assert naive.results["remove_source"].passed == 0
    assert "confident different answer" in naive.results["remove_source"].failures[0]["why"]
    assert naive.results["insert_rejected"].passed == 0
    assert cautious.results["remove_source"].passed == 1
    assert cautious.results["insert_rejected"].passed == 1
    assert cautious.table().loc["remove_source", "pass_rate"] == 1.0


@pytest.mark.slow
def test_change_tenant_catches_one_leak(fixture_index):
    case = eur_case()
    clean = run_counterfactuals([case], fixture_index, funnel_runner(False), which=("change_tenant",),
                                progress=False)
    assert clean.results["change_tenant"].passed == 1 and clean.tenant_leaks == 0

    class Leaky(IndexView):  # a broken access filter: ignores the caller's tenant
        def mask(self, scope, filters=None):
            return super().mask(Scope.operator(), filters)

    leaky = run_counterfactuals([case], fixture_index, lambda v: funnel_runner(False)(Leaky(fixture_index)),
                                which=("change_tenant",), progress=False)
    assert leaky.tenant_leaks == 1
    why = leaky.results["change_tenant"].failures[0]["why"]
    assert "tenant 'acme'" in why or "out-of-scope candidate" in why


def test_swap_dates_needs_a_temporal_competitor():
    case = eur_case("lower_authority")
    docs = {}
    res = run_counterfactuals([case], _Tiny(docs), lambda v: (lambda c: {}), which=("swap_dates",),
                              progress=False)
    assert res.results["swap_dates"].applicable == 0 and res.results["swap_dates"].skipped == 1


class _Tiny:
    def __init__(self, documents):
        self.documents, self.rows, self.sections = documents, [], {}


def test_judges():
    case = eur_case()
    sure = {"abstained": False, "value": "15:00", "answer": "15:00", "record": {"status": "decided"}}
    other = {"abstained": False, "value": "16:00", "answer": "16:00", "record": {"status": "decided"}}
    unsure = {"abstained": False, "value": "16:00", "answer": "16:00", "record": {"status": "conflict"}}
    gave_up = {"abstained": True, "value": None, "answer": ""}
    assert judge("remove_source", case, gave_up, "") is None
    assert judge("remove_source", case, unsure, "") is None
    assert "did not depend" in judge("remove_source", case, sure, "")
    assert judge("insert_rejected", case, sure, "x") is None
    assert judge("insert_rejected", case, gave_up, "x") == "with x at rank 1: abstained"
    assert judge("swap_dates", case, other, "") is None
    assert judge("swap_dates", case, gave_up, "") is None
    assert "stayed" in judge("swap_dates", case, sure, "a <-> b")
    leak = {"traces": [{"candidates": [{"chunk_id": "x#y~0", "tenant": "acme"}]}]}
    why = judge("change_tenant", case, leak, "")
    assert why.startswith("1 candidate(s) of tenant 'acme'")
    assert judge("change_tenant", case, {"traces": []}, "") is None


def test_outcomes_gather_in_order_with_the_baseline_count():
    from ragkit.evaluation import Counterfactuals

    cf = Counterfactuals.from_outcomes([
        ("remove_source", "a", "passed", None, True),
        ("remove_source", "b", "failed", {"case": "b", "why": "still asserted"}, True),
        ("remove_source", "c", "skipped", None, False),
        ("change_tenant", "a", "failed", {"case": "a", "why": "1 candidate(s) of tenant 'acme'"}, False),
    ], with_baseline=True)
    r = cf.results["remove_source"]
    assert (r.applicable, r.passed, r.skipped, r.baseline_correct) == (2, 1, 1, 2)
    assert [f["case"] for f in r.failures] == ["b"] and cf.tenant_leaks == 1
    assert cf.results["swap_dates"].applicable == 0 and list(cf.results) == list(
        ("remove_source", "insert_rejected", "swap_dates", "change_tenant"))
