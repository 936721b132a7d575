"""Scoring one case by hand: the boundaries its evidence passed, the answer, honesty, retrieval.

One answerable case with two evidence items (decisive ``pol#cut``, qualifier ``ro#res``) and
one hand-made result per situation; every expected figure is counted from the candidates below.
"""

from __future__ import annotations

import math

from ragkit.evaluation import BOUNDARIES, asserted, failure_kind, parse_case, score_case, search_traces

Q1, Q2 = "EUR cutoff is 15:00.", "Cutover completed."
CASE = parse_case({
    "id": "c", "task": "Which EUR cutoff applies?", "caller": {"tenant": "acme", "groups": []},
    "as_of": "2026-01-19", "answerable": True,
    "evidence": [{"doc_id": "pol", "anchor": "cut", "quote": Q1, "role": "decisive"},
                 {"doc_id": "ro", "anchor": "res", "quote": Q2, "role": "qualifier"}],
    "reject": [{"doc_id": "old", "reason": "superseded"}],
    "expected": {"kind": "time", "value": "15:00"}, "tags": ["conflict", "temporal"], "decoys": []})


def cand(chunk_id, fused, final=None, delivered=False, tenant="acme"):
    return {"chunk_id": chunk_id, "fused_rank": fused, "final_rank": final, "delivered": delivered,
            "tenant": tenant}


def run(cands, texts, value, *, abstained=False, record=None):
    results = [{"doc_id": d, "text": t} for d, t in texts]
    return {"answer": value or "", "value": value, "abstained": abstained, "traces": [{"candidates": cands}],
            "searches": 1, "seconds": 0.5, "record": record,
            "steps": [{"action": "search", "response": {"results": results}}]}


def test_the_whole_path_and_first_call_retrieval():
    cands = [cand("x#y~0", 1, 1, True), cand("pol#cut~1", 2, 2, True), cand("ro#res~0", 3, 3, True),
             cand("z#w~0", 4, 4, True), cand("q#q~0", 5, None)]
    row = score_case(CASE, run(cands, [("pol", "Note: eur  CUTOFF is 15:00."), ("ro", Q2)], "15:00"))
    assert (row["entered"], row["survived"], row["delivered"], row["answered"], row["lost_at"]) == \
        (True, True, True, True, "")
    assert (row["items"], row["items_entered"], row["items_delivered"]) == (2, 2, 2)  # quotes match folded
    assert row["first_set_recall"] and row["first_item_recall"] == 1.0
    assert row["first_precision"] == 2 / 4          # 2 of the 4 delivered hits are evidence sections
    assert row["decisive_rank"] == 2 and row["first_run"] == {"x#y~0": -1.0, "pol#cut~1": -2.0,
                                                              "ro#res~0": -3.0, "z#w~0": -4.0}
    assert row["passed"] and not row["leak"] and row["tags"] == "conflict;temporal"


def test_each_boundary_loses_the_case_where_it_should():
    enter_one = [cand("pol#cut~0", 1, 1, True)]                              # ro#res never a candidate
    row = score_case(CASE, run(enter_one, [("pol", Q1)], "15:00"))
    assert row["lost_at"] == "candidates" and row["correct"] and row["first_item_recall"] == 0.5
    not_kept = [cand("pol#cut~0", 1, 1, True), cand("ro#res~0", 9, 9)]       # entered, not delivered
    assert score_case(CASE, run(not_kept, [("pol", Q1)], "15:00"))["lost_at"] == "rerank"
    cut_short = [cand("pol#cut~0", 1, 1, True), cand("ro#res~0", 2, 2, True)]
    row = score_case(CASE, run(cut_short, [("pol", "EUR cutoff is"), ("ro", Q2)], "15:00"))
    assert row["lost_at"] == "delivery" and row["items_delivered"] == 1
    wrong = score_case(CASE, run(cut_short, [("pol", Q1), ("ro", Q2)], "16:00",
                                 record={"status": "decided", "decision": {"doc_id": "old"}}))
    assert wrong["lost_at"] == "answer" and wrong["chose_rejected"] and wrong["status"] == "decided"
    assert failure_kind(wrong) == "evidence delivered, answered with another value"
    assert BOUNDARIES == ("candidates", "rerank", "delivery", "answer")


def test_abstention_leaks_and_reading_the_tools_compact_traces():
    gave_up = score_case(CASE, run([cand("pol#cut~0", 1, 1, True), cand("g#h~0", 2, None, tenant="globex")],
                                   [], None, abstained=True))
    assert gave_up["over_abstained"] and not gave_up["asserted"] and not asserted({"abstained": True})
    assert gave_up["tenant_leaks"] == "globex" and gave_up["leak"]
    assert failure_kind(gave_up) == "evidence set never entered the candidates, abstained"
    compact = {"steps": [{"action": "search", "response": {"trace": {
        "columns": ["chunk_id", "fused_rank"], "candidates": [["pol#cut~0", 1], ["ro#res~0", 2]]}}}]}
    assert search_traces(compact) == [[{"chunk_id": "pol#cut~0", "fused_rank": 1},
                                       {"chunk_id": "ro#res~0", "fused_rank": 2}]]
    row = score_case(CASE, compact | {"abstained": True})
    assert row["entered"] and not row["full_traces"] and math.isnan(row["faithfulness"])


def test_a_message_with_several_asks_is_right_when_one_of_its_values_is_the_expected_one():
    from ragkit.evaluation import answer_correct

    two = CASE  # expects 15:00; its message may ask for more
    answer = "First ask: 15:00 [pol#cut]. Second ask: Okafor [ro#res]."
    assert answer_correct(two, {"answer": answer, "value": "15:00", "values": ["15:00", "Okafor"]})
    assert answer_correct(two, {"answer": answer, "value": "Okafor", "values": ["Okafor", "15:00"]})
    assert not answer_correct(two, {"answer": answer, "value": "16:00", "values": ["16:00", "Okafor"]})
    # one value: only that value counts (a second time in the prose is not an answer)
    one = {"answer": "16:00 [pol#cut], not 15:00", "value": "16:00", "values": ["16:00"]}
    assert not answer_correct(two, one)
