"""Evaluation: the boundary table, honesty, retrieval metrics and failures on hand-built
results (fast), and the course's retrieval lessons on the real corpus (slow).

If a slow test fails after a change to the corpus or the retrievers, the data no longer
teaches the lesson: fix the data (or the retriever), never the expected direction.
"""

from __future__ import annotations

import json
import math

import pytest
from builders import eur_case, gbp_case
from conftest import ROOT

from ragkit import evaluate, load_cases
from ragkit.core import section_key
from ragkit.evaluation import (
    BOUNDARIES,
    answer_correct,
    candidate_recall,
    failure_kind,
    parse_case,
    score_case,
    unverifiable_citation,
)

# ---------------------------------------------------------------- hand-built fixtures

def case(cid, tags=("conflict",), evidence=(("pol", "cut", "EUR cutoff is 15:00."),), expected="15:00",
         tenant="acme", reject=()):
    answerable = expected is not None
    data = {"id": cid, "task": f"Which cutoff applies for {cid}?", "caller": {"tenant": tenant, "groups": []},
            "as_of": "2026-01-19", "answerable": answerable,
            "evidence": [{"doc_id": d, "anchor": a, "quote": q, "role": "decisive" if i == 0 else "qualifier"}
                         for i, (d, a, q) in enumerate(evidence)] if answerable else [],
            "reject": [{"doc_id": d, "reason": "lower_authority"} for d in reject],
            "expected": {"kind": "time", "value": expected} if answerable else None,
            "tags": list(tags), "decoys": []}
    if not answerable:
        data["absent"] = {"all_of": ["nothing"], "note": "not in the corpus"}
    return parse_case(data)


def cand(chunk_id, fused, final=None, delivered=False, tenant="acme"):
    return {"chunk_id": chunk_id, "doc_id": chunk_id.split("#")[0], "fused_rank": fused, "final_rank": final,
            "delivered": delivered, "tenant": tenant}


def result(cands, delivered_text=(), value=None, abstained=False, claims=(), seconds=1.0):
    return {"answer": value or "I cannot tell.", "value": value, "abstained": abstained,
            "traces": [{"candidates": cands}], "searches": 1, "seconds": seconds,
            "steps": [{"turn": 0, "action": "search", "ms": 10.0, "tokens": 50,
                       "response": {"results": [{"doc_id": d, "text": t} for d, t in delivered_text]}}],
            "verification": {"claims": [{"ok": ok} for ok in claims]} if claims else None}


Q = "EUR cutoff is 15:00."
CASES = [
    case("c1", evidence=(("pol", "cut", Q), ("ro", "result", "Cutover completed."))),
    case("c2", tags=("identifier",)),
    case("c3", tags=("identifier",)),
    case("c4"),
    case("c5"),
    case("u1", tags=("conflict",), expected=None),
    case("u2", tags=(), expected=None),
]
RESULTS = {
    # entered (both items), the qualifier not delivered: lost at rerank
    "c1": result([cand("pol#cut~0", 3, 1, True), cand("ro#result~0", 10, 12)], [("pol", Q)], "15:00"),
    # the whole path passes
    "c2": result([cand("x#y~0", 1, 1, True), cand("pol#cut~1", 2, 2, True)], [("pol", "Note: " + Q)], "15:00",
                 claims=(True, False)),
    # never a candidate
    "c3": result([cand("x#y~0", 1, 1, True)], [("x", "other")], "16:00", claims=(True,)),
    # survives reranking, but the delivered text was cut before the quote
    "c4": result([cand("pol#cut~0", 1, 1, True)], [("pol", "EUR cutoff is")], "15:00"),
    # delivered, answered wrongly
    "c5": result([cand("a#b~0", 1, 1, True), cand("b#c~0", 2, 2, True), cand("pol#cut~0", 5, 3, True)],
                 [("pol", Q)], "16:00"),
    "u1": result([cand("x#y~0", 1, 1, True)], abstained=True),
    "u2": result([cand("x#y~0", 1, 1, True), cand("g#z~0", 2, None, False, tenant="globex")], value="16:00"),
}


@pytest.fixture(scope="module")
def report():
    return evaluate(CASES, lambda c: RESULTS[c.id], progress=False, placement="test")


def test_section_key_reads_chunk_and_section_ids():
    assert section_key("a-b#c-d~12") == ("a-b", "c-d")
    assert section_key("a#b") == ("a", "b")


def test_boundary_table_counts_and_conditional_rates(report):
    b = report.boundaries().loc["all"]
    assert b["reached"].tolist() == [5, 4, 3, 2, 5]
    assert b["passed"].tolist() == [4, 3, 2, 1, 1]
    assert b.loc["survived", "rate"] == pytest.approx(3 / 4)
    assert b.loc["end_to_end", "rate"] == pytest.approx(1 / 5)


def test_boundary_table_per_tag(report):
    ident = report.boundaries().loc["identifier"]
    assert ident["passed"].tolist() == [1, 1, 1, 1, 1]
    assert ident.loc["entered", "reached"] == 2


def test_each_failed_case_names_the_boundary_that_lost_it(report):
    lost = dict(zip(report.frame["case"], report.frame["lost_at"], strict=True))
    assert lost == {"c1": "rerank", "c2": "", "c3": "candidates", "c4": "delivery", "c5": "answer",
                    "u1": "", "u2": "honesty"}
    assert set(lost.values()) - {"", "honesty"} <= set(BOUNDARIES)
    assert report.failures()["case"].tolist() == ["c1", "c3", "c4", "c5", "u2"]


def test_honesty_apart_from_accuracy(report):
    h = report.honesty().loc["all"]
    assert (h["unanswerable"], h["honest"], h["false_assertions"]) == (2, 1, 1)
    assert h["honesty_rate"] == 0.5 and h["false_assertion_rate"] == 0.5
    # accuracy counts correct answers among answerable cases, even without the evidence path
    assert h["accuracy"] == pytest.approx(3 / 5)  # c1, c2, c4 say 15:00
    # an honest abstention is a success, never NaN, in the per-tag table
    assert report.honesty().loc["conflict", "honesty_rate"] == 1.0


def test_retrieval_metrics_of_the_decisive_source(report):
    r = report.retrieval()
    assert r["mrr@10"] == pytest.approx((1 + 1 / 2 + 0 + 1 + 1 / 3) / 5)
    assert r["candidate_set_recall"] == pytest.approx(4 / 5)
    # c1: 1 of 1 delivered relevant; c2: 1 of 2; c3: 0 of 1; c4: 1/1; c5: 1/3
    assert r["precision_at_delivered"] == pytest.approx((1 + 0.5 + 0 + 1 + 1 / 3) / 5)


def test_faithfulness_and_tenant_leaks(report):
    f = report.faithfulness()
    assert (f["claims"], f["supported"]) == (3, 2)
    assert f["case_mean"] == pytest.approx((0.5 + 1.0) / 2)
    assert report.leaks()["case"].tolist() == ["u2"]
    assert report.summary()["tenant_leaks"] == 1


def test_costs_are_distributions(report):
    c = report.costs()
    assert c.loc["searches", "p50"] == 1 and c.loc["seconds", "max"] == 1.0


def test_report_serialises_displays_and_writes_csv(report, tmp_path):
    data = json.loads(report.to_json())
    assert data["summary"]["end_to_end_passed"] == 1
    assert len(data["cases"]) == 7 and "first_run" not in data["cases"][0]
    assert "<table" in report._repr_html_() and "end to end" in str(report)
    path = report.to_csv(tmp_path / "cases.csv")
    import pandas as pd

    back = pd.read_csv(path)
    assert back["lost_at"].fillna("").tolist()[:3] == ["rerank", "", "candidates"]


def test_a_runner_error_is_scored_not_raised():
    def broken(c):
        raise RuntimeError("model down")

    rep = evaluate(CASES[:2], broken, progress=False)
    assert rep.frame["error"].str.contains("model down").all()
    assert rep.frame["lost_at"].tolist() == ["candidates", "candidates"]


def test_a_failed_run_is_neither_honest_nor_a_false_assertion():
    def broken(c):
        raise RuntimeError("model down")

    rep = evaluate([CASES[5], CASES[6]], lambda c: broken(c) if c.id == "u1" else RESULTS[c.id],
                   progress=False)
    rows = rep.frame.set_index("case")
    assert rows.loc["u1", "lost_at"] == "error" and not rows.loc["u1", "honest"]
    assert not rows.loc["u1", "false_assertion"] and not rows.loc["u1", "asserted"]
    h = rep.honesty().loc["all"]
    assert (h["unanswerable"], h["honest"], h["false_assertions"]) == (2, 0, 1)
    assert failure_kind(rows.loc["u1"].to_dict() | {"case": "u1"}) == "runner error"


def test_answer_correct_reads_the_asserted_value():
    text_case = parse_case({
        "id": "t1", "task": "Why did the settlement fail?", "caller": {"tenant": "acme", "groups": []},
        "as_of": "2026-01-19", "answerable": True,
        "evidence": [{"doc_id": "ops", "anchor": "top", "quote": "It ran twice.", "role": "decisive"}],
        "reject": [], "expected": {"kind": "text", "value": "ran twice after the failover"},
        "tags": ["multi_hop"], "decoys": []})
    said = {"abstained": False, "value": "the second run posted every entry again",
            "answer": "Found it [ops#top]. The settlement ran twice after the failover [ops#top]."}
    # a free-text value is one sentence: the expected cause stated in another one still counts
    assert answer_correct(text_case, said)
    assert not answer_correct(text_case, said | {"abstained": True})
    assert not answer_correct(text_case, said | {"answer": "It failed [ops#top].", "error": None})
    # other kinds: the recorded value, else the first value of the expected kind in the answer
    timed = CASES[3]
    assert answer_correct(timed, {"abstained": False, "value": None, "answer": "Answer: 15:00 [pol#cut]."})
    assert not answer_correct(timed, {"abstained": False, "value": None, "answer": "16:00, not 15:00"})
    # ... leaving out citations and values the answer only repeats from the question
    ticket = parse_case({
        "id": "i1", "task": "Which ticket tracked the problem on account globex-11271?",
        "caller": {"tenant": "globex", "groups": []}, "as_of": "2026-01-19", "answerable": True,
        "evidence": [{"doc_id": "ops-6719", "anchor": "top", "quote": "globex-11271", "role": "decisive"}],
        "reject": [], "expected": {"kind": "id", "value": "OPS-6719"}, "tags": [], "decoys": []})
    prose = "The ticket for account globex-11271 is OPS-6719. [ops-6719#top]"
    assert answer_correct(ticket, {"abstained": False, "value": None, "answer": prose})
    assert not answer_correct(ticket, {"abstained": False, "value": None,
                                       "answer": "Account globex-11271 [ops-6719#top]."})
    assert not answer_correct(timed, {"abstained": False, "value": "16:00", "answer": "Answer: 15:00"})
    # an unanswerable case is never 'correct': it is honest or a false assertion
    assert not answer_correct(CASES[5], {"abstained": True, "value": None, "answer": ""})


def test_unverifiable_citations_of_delivered_answers():
    span = {"citation": "pol#cut", "doc_id": "pol", "anchor": "cut"}
    ok = {"abstained": False, "answer": "Answer: 15:00 [pol#cut].", "delivered": [span],
          "verification": {"ok": True}}
    assert not unverifiable_citation(ok)
    assert unverifiable_citation(ok | {"answer": "Answer: 15:00 [ro#result]."})   # not delivered here
    assert unverifiable_citation(ok | {"answer": "Answer: 15:00."})                # cites nothing
    assert unverifiable_citation(ok | {"verification": {"ok": False}})             # a claim failed
    whole = {"citation": "ro", "doc_id": "ro", "anchor": ""}                        # a document read whole
    assert not unverifiable_citation(ok | {"answer": "15:00 [ro#result].", "delivered": [whole]})
    assert not unverifiable_citation(ok | {"abstained": True, "answer": "I cannot tell."})


def test_failure_kinds_name_the_boundary_and_what_the_agent_did(report):
    kinds = {row["case"]: failure_kind(row) for row in report.frame.to_dict("records")}
    assert kinds["c2"] == "" and kinds["u1"] == ""
    assert kinds["c3"] == "evidence set never entered the candidates, answered with another value"
    assert kinds["c1"] == ""  # said 15:00 although the qualifier was lost at rerank: correct, not end to end
    assert kinds["u2"] == "asserted a value on an unanswerable case"
    assert report.frame.set_index("case")["passed"].to_dict() == {
        "c1": True, "c2": True, "c3": False, "c4": True, "c5": False, "u1": True, "u2": False}


def test_agent_quality_bench_scores_with_score_case():
    """bench/agent_quality.py has no scoring of its own: its rows are score_case's."""
    import sys
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT / "bench"))
    import agent_quality

    res = SimpleNamespace(abstained=False, value="16:00", answer="Answer: 16:00 [x#y].", record=None,
                          verification=None, steps=[], delivered=[], searches=1, seconds=0.5, calls=1,
                          tokens_delivered=10)
    for c in (CASES[0], CASES[6]):
        row, ref = agent_quality.score(c, res), score_case(c, res)
        for key in ("correct", "honest", "false_assertion", "unverifiable", "passed", "lost_at"):
            assert row[key] == ref[key], key
    assert agent_quality.failure_kind is failure_kind


def test_compact_tool_traces_are_read_too():
    res = {"abstained": False, "value": "15:00", "answer": "15:00", "searches": 1, "seconds": 0.1,
           "steps": [{"action": "search", "response": {
               "trace": {"columns": ["chunk_id", "fused_rank", "final_rank", "delivered"],
                         "candidates": [["pol#cut~0", 1, 1, True]]},
               "results": [{"doc_id": "pol", "text": Q}]}}]}
    row = score_case(CASES[3], res)
    assert row["entered"] and row["survived"] and row["delivered"] and row["answered"]
    assert math.isnan(row["faithfulness"])


# ---------------------------------------------------------------- the real corpus


@pytest.fixture(scope="module")
def recall():
    from ragkit.course import course_index

    cases = load_cases(ROOT / "datasets" / "opscorpus" / "cases.jsonl")
    return candidate_recall(course_index(progress=False), cases, width=50)


def r(table, tag, method):
    return table.loc[(tag, method), "set_recall"]


@pytest.mark.slow
def test_bm25_wins_on_identifiers(recall):
    assert r(recall, "identifier", "bm25") > r(recall, "identifier", "dense") + 0.1


@pytest.mark.slow
def test_dense_wins_on_vocabulary_mismatch(recall):
    assert r(recall, "vocabulary_mismatch", "dense") > r(recall, "vocabulary_mismatch", "bm25") + 0.1


@pytest.mark.slow
def test_rrf_at_least_as_good_as_the_better_single_retriever_overall(recall):
    assert r(recall, "all", "rrf") >= max(r(recall, "all", "bm25"), r(recall, "all", "dense"))


@pytest.mark.slow
def test_multi_hop_and_conflict_are_not_saturated(recall):
    assert r(recall, "multi_hop", "rrf") < 0.8
    assert r(recall, "conflict", "rrf") < 0.9


@pytest.mark.slow
def test_counts_cover_every_answerable_case(recall):
    cases = load_cases(ROOT / "datasets" / "opscorpus" / "cases.jsonl")
    assert recall.loc[("all", "rrf"), "cases"] == sum(c.answerable for c in cases)


# ---------------------------------------------------------------- the command line, as a user runs it


def _cli(*args, cwd=None):
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    exe = shutil.which("ragkit", path=str(Path(sys.executable).parent)) or "ragkit"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env)


def _fixture_cases(path):
    good, unanswerable = eur_case(), gbp_case()
    lines = [json.dumps(good), json.dumps({"id": "broken", "task": "too short"}), json.dumps(unanswerable)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_cli_eval_reports_skips_bad_lines_and_gates(tmp_path, corpus_dir):
    idx = tmp_path / "idx"
    assert _cli("index", corpus_dir, "--out", idx, "-q").returncode == 0
    cases = _fixture_cases(tmp_path / "cases.jsonl")
    gates = tmp_path / "gates.toml"
    gates.write_text("[gates.entered_rate]\nmin = 1.01\nnote = 'impossible'\n")
    out = _cli("eval", cases, "--index", idx, "--gates", gates, "--json", "-q", "--html", tmp_path / "r.html",
               "--trec", tmp_path / "run.txt", "--csv", tmp_path / "c.csv", "--counterfactuals")
    assert out.returncode == 1, out.stderr          # the impossible gate fails -> exit 1
    assert "cases.jsonl:2: field 'caller'" in out.stderr     # file:line:field, and the run went on
    data = json.loads(out.stdout)                   # one JSON object on stdout, nothing else
    assert data["summary"]["cases"] == 2 and data["summary"]["unanswerable"] == 1
    assert data["gates"]["ok"] is False and data["case_errors"][0]["field"] == "caller"
    assert data["counterfactuals"]["change_tenant"]["applicable"] == 2
    assert data["counterfactuals"]["change_tenant"]["passed"] == 2       # no acme candidate for not-acme
    html = (tmp_path / "r.html").read_text()
    assert html.count("data:image/png;base64,") == 4       # survival, cost, calls, honesty
    assert "src=\"http" not in html and "<script" not in html  # self-contained
    assert (tmp_path / "run.txt").read_text().startswith("eur Q0 ")
    assert (tmp_path / "c.csv").read_text().startswith("case,")
    strict = _cli("eval", cases, "--index", idx, "--strict", "-q")
    assert strict.returncode == 2 and "cases.jsonl:2" in strict.stderr


def test_lenient_loader_keeps_valid_cases_and_names_each_bad_line(tmp_path):
    from ragkit.evaluation import load_cases_lenient

    path = _fixture_cases(tmp_path / "cases.jsonl")
    with path.open("a") as fh:
        fh.write("{not json\n")
        fh.write(path.read_text().splitlines()[0] + "\n")   # a duplicate id
    cases, errors = load_cases_lenient(path)
    assert [c.id for c in cases] == ["eur", "gbp"]
    assert [(e.where.rsplit(":", 1)[1], e.field) for e in errors] == [("2", "caller"), ("4", "(line)"),
                                                                       ("5", "id")]


def test_a_typed_value_is_not_rescued_by_the_quote_beside_it():
    """A "text" case that expects a measured value ("90 minutes"): the answer's value "15 minutes"
    is wrong even when its quoted table row also shows 90 minutes in another column. Only a
    free-text value (a sentence) may be completed by the answer's other sentences."""
    rto = parse_case({
        "id": "r1", "task": "How long may sepa-connector take to be serving again?",
        "caller": {"tenant": "acme", "groups": []}, "as_of": "2026-01-19", "answerable": True,
        "evidence": [{"doc_id": "arch", "anchor": "rto", "quote": "90 minutes", "role": "decisive"}],
        "reject": [], "expected": {"kind": "text", "value": "90 minutes"}, "tags": [], "decoys": []})
    quoted = "Answer: 15 minutes [arch#rto]. | sepa-connector | 15 minutes | 90 minutes | [arch#rto]."
    assert not answer_correct(rto, {"abstained": False, "value": "15 minutes", "answer": quoted})
    assert answer_correct(rto, {"abstained": False, "value": "90 minutes", "answer": quoted})
    # no recorded value: the answer's prose is all there is to read
    assert answer_correct(rto, {"abstained": False, "value": None, "answer": "It is 90 minutes [arch#rto]."})
