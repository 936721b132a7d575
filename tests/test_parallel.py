"""The full evaluation on worker processes equals the plain serial path (slow: the course index)."""

from __future__ import annotations

import functools

import pandas as pd
import pytest
from conftest import ROOT

from ragkit import ValidationError, agent_runner, evaluate, load_cases
from ragkit.course import course_index
from ragkit.evaluation import PARTS, evaluate_full, run_counterfactuals
from ragkit.models import get_reranker


def test_parts_and_bad_arguments():
    assert PARTS == ("run", "score", "counterfactuals")
    with pytest.raises(ValueError, match="workers=0"):
        evaluate_full([], lambda: None, workers=0)
    with pytest.raises(ValidationError, match="unknown placement"):
        evaluate_full([], lambda: None, placements=("nowhere",))


@pytest.mark.slow
def test_evaluate_full_on_two_processes_equals_the_plain_serial_path():
    cases = load_cases(ROOT / "datasets" / "opscorpus" / "cases.jsonl")
    cases = [cases[0], next(c for c in cases if c.answerable and c.reject)]  # the second has rejected sources
    fast, timings = evaluate_full(cases, functools.partial(course_index, progress=False),
                                  placements=("pipeline",), workers=2, progress=False)
    index, reranker = course_index(progress=False), get_reranker()
    plain = evaluate(cases, agent_runner(index, "pipeline", reranker=reranker), progress=False)
    cf = run_counterfactuals(cases, index, lambda v: agent_runner(v, "pipeline", reranker=reranker),
                             baseline=dict(zip(plain.frame["case"], plain.frame["correct"], strict=True)),
                             progress=False)

    def rows(report):
        return report.frame.drop(columns=["seconds"]).astype(str).to_dict("records")

    assert rows(fast["pipeline"]) == rows(plain)
    # compared as frames: a pass rate of a counterfactual that applies to no case is NaN, and NaN != NaN
    pd.testing.assert_frame_equal(fast["pipeline"].counterfactuals.table(), cf.table())
    assert fast["pipeline"].counterfactuals.to_dict().keys() == cf.to_dict().keys()
    assert cf.results["change_tenant"].applicable == len(cases)
    assert timings["workers"] == 2 and timings["pipeline"]["run"]["cpu_s"] > 0
