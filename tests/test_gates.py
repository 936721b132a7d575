"""Release gates (TOML) and the diagnosis table."""

from __future__ import annotations

import pytest
from conftest import ROOT
from test_evaluation import CASES, RESULTS

from ragkit import ValidationError, evaluate
from ragkit.evaluation import check_gates, diagnose, load_gates, parse_gates, report_figures


def test_bundled_gates_file_loads_and_always_gates_tenants():
    gates = load_gates(ROOT / "datasets" / "gates.toml")
    assert {g.metric for g in gates} >= {"entered_rate", "survived_rate", "false_assertion_rate",
                                         "tenant_leaks"}


def test_pass_and_fail_with_reasons():
    gates = parse_gates({"gates": {"entered_rate": {"min": 0.9, "note": "recall"},
                                   "false_assertion_rate": {"max": 0.25}}})
    res = check_gates(gates, {"entered_rate": 0.8, "false_assertion_rate": 0.25, "tenant_leaks": 0})
    assert not res.ok
    assert [r.passed for r in res.results] == [False, True, True]
    assert "measured 0.8, below the minimum (recall)" in res.results[0].reason
    assert "FAIL" in str(res) and res.to_dict()["ok"] is False


def test_one_leak_fails():
    res = check_gates(parse_gates({"gates": {"accuracy": {"min": 0}}}), {"accuracy": 1.0, "tenant_leaks": 1})
    assert not res.ok and "above the maximum" in res.results[-1].reason


def test_unmeasured_figure_fails_and_says_how_to_measure():
    res = check_gates(parse_gates({"gates": {"counterfactual_remove_source_rate": {"min": 0.9}}}),
                      {"tenant_leaks": 0})
    assert not res.ok and "--counterfactuals" in res.results[0].reason


@pytest.mark.parametrize("data, field", [
    ({}, "gates"),
    ({"gates": {"x": 1}}, "gates.x"),
    ({"gates": {"x": {"minimum": 1}}}, "gates.x.minimum"),
    ({"gates": {"x": {"min": "high"}}}, "gates.x.min"),
    ({"gates": {"x": {"note": "n"}}}, "gates.x"),
    ({"gates": {"tenant_leaks": {"max": 2}}}, "gates.tenant_leaks.max"),
])
def test_bad_gates_are_clear_errors(data, field):
    with pytest.raises(ValidationError) as err:
        parse_gates(data, where="g.toml")
    assert err.value.field == field and "g.toml" in str(err.value)


def test_bad_toml_names_the_file(tmp_path):
    bad = tmp_path / "g.toml"
    bad.write_text("[gates.x\nmin = 1\n")
    with pytest.raises(ValidationError, match="not valid TOML"):
        load_gates(bad)


def test_gates_on_a_report_and_diagnosis():
    report = evaluate(CASES, lambda c: RESULTS[c.id], progress=False)
    figures = report_figures(report)
    res = check_gates(load_gates(ROOT / "datasets" / "gates.toml"), figures)
    assert not res.ok  # 4/5 enter (0.8 passes), 3/4 survive (0.75 passes), false assertions 1/2 fail
    failed = [r.gate.metric for r in res.results if not r.passed]
    assert failed == ["false_assertion_rate", "tenant_leaks"]
    table = diagnose(report).set_index("boundary")
    assert table.loc["candidates (retrieval)", "examples"] == "c3"
    assert table.loc["rerank", "cases"] == 1 and table.loc["delivery (expansion and budget)", "cases"] == 1
    assert table.loc["honesty", "examples"] == "u2"
    assert table.loc["access control", "cases"] == 1
    # c1 and c4 said 15:00 without their whole evidence set delivered
    assert table.loc["evaluation data", "examples"] == "c1, c4"
