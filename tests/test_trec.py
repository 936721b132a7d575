"""TREC run/qrels interop, qrels from evidence cases, and metric parity with ranx on a real run."""

from __future__ import annotations

import pytest
from test_evaluation import CASES

from ragkit import ValidationError
from ragkit.evaluation import qrels_from_cases, read_qrels, read_run, write_qrels, write_run
from ragkit.evaluation import score_run as ragkit_evaluate


def test_run_roundtrip_ranks_by_score_then_doc_id_descending(tmp_path):
    path = write_run({"q": {"a": 1.0, "b": 3.0, "c": 1.0}}, tmp_path / "run.txt", tag="t")
    assert path.read_text().splitlines() == ["q Q0 b 1 3 t", "q Q0 c 2 1 t", "q Q0 a 3 1 t"]
    assert read_run(path) == {"q": {"a": 1.0, "b": 3.0, "c": 1.0}}


def test_qrels_roundtrip_and_from_cases(tmp_path):
    qrels = qrels_from_cases(CASES)
    assert qrels["c1"] == {"pol#cut": 2, "ro#result": 1}
    assert "u1" not in qrels
    assert qrels_from_cases(CASES, level="document")["c1"] == {"pol": 2, "ro": 1}
    assert read_qrels(write_qrels(qrels, tmp_path / "qrels.txt")) == qrels


def test_bad_files_name_file_and_line(tmp_path):
    bad = tmp_path / "run.txt"
    bad.write_text("q Q0 a 1 2 t\nq Q0 b 2\n")
    with pytest.raises(ValidationError, match=r"run.txt:2: expected 6 columns"):
        read_run(bad)
    bad.write_text("q 0 a high\n")
    with pytest.raises(ValidationError, match="relevance 'high'"):
        read_qrels(bad)
    with pytest.raises(ValidationError, match="whitespace"):
        write_run({"q 1": {"a": 1.0}}, tmp_path / "x.txt")


@pytest.mark.slow  # ranx is numba-compiled (slow the first time); the run comes from the real funnel
def test_metrics_equal_ranx_on_a_real_run(fixture_index, tmp_path):
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    from ragkit import Funnel
    from ragkit.core import section_key

    funnel = Funnel(fixture_index)
    relevant = {"eur": ("EUR cutoff for migrated tenants",
                        {"settlement-policy-v3": 2, "settlement-runbook-v2": 1}),
                "e4471": ("bank file rejected E-4471", {"settlement-runbook-v2": 1}),
                "cutover": ("when did the acme cutover complete", {"ops-1423-c3": 1})}
    run, qrels = {}, {}
    for qid, (query, docs) in relevant.items():
        trace = funnel.search(query, deliver=5).trace
        scores: dict[str, float] = {}
        for c in trace.candidates:
            if c.final_rank is not None:
                key = "#".join(section_key(c.chunk_id))
                scores[key] = max(scores.get(key, -1e9), -float(c.final_rank))
        run[qid] = scores
        qrels[qid] = {"#".join(section_key(r.chunk_id)): g for r in fixture_index.rows
                      for d, g in docs.items() if r.doc_id == d}
    run_path = write_run(run, tmp_path / "run.txt")
    qrels_path = write_qrels(qrels, tmp_path / "qrels.txt")
    metrics = ["ndcg@10", "mrr@10", "recall@5", "precision@5"]
    ours = ragkit_evaluate(read_run(run_path), read_qrels(qrels_path), metrics)
    theirs = ranx_evaluate(Qrels.from_file(str(qrels_path), kind="trec"),
                           Run.from_file(str(run_path), kind="trec"), metrics)
    for m in metrics:
        assert ours[m] == pytest.approx(theirs[m], abs=1e-9), m
    assert 0 < ours["mrr@10"] <= 1
