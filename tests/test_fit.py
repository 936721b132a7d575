"""Answering sentences judged by the bundled cross-encoder (ragkit.evidence.fit); the abstention curve."""

from __future__ import annotations

import math

import pytest

from ragkit import Evidence, resolve
from ragkit.evaluation import abstention_curve, answer_fit
from ragkit.evidence import FITS, SentenceFit
from ragkit.evidence.fit import situated_sentence

POLICY = "# Retry ceiling\n\nThe retry ceiling is 4 attempts. Breaches are reported weekly."
ENV = {"doc_id": "pol-retry-v3", "title": "Payout retry policy (version 3)", "authority": "policy_owner",
       "effective_from": "2026-06-09", "source_type": "policy"}


@pytest.fixture(scope="module")
def fit() -> SentenceFit:
    return SentenceFit()


def test_situated_sentence_reads_title_heading_and_table_header() -> None:
    start = POLICY.index("The retry")
    end = POLICY.index("attempts.") + len("attempts.")
    assert situated_sentence(POLICY, start, end, ENV["title"]) == (
        "Payout retry policy (version 3)\nRetry ceiling\nThe retry ceiling is 4 attempts."
    )
    table = "## Cutoffs\n\n| Currency | Cutoff |\n|---|---|\n| USD | 11:00 |"
    assert situated_sentence(table, table.index("| USD"), len(table), "Schedule").splitlines() == [
        "Schedule", "Cutoffs", "| Currency | Cutoff |", "| USD | 11:00 |"]


def test_the_answering_sentence_fits_better_than_a_neighbour(fit: SentenceFit) -> None:
    question = "How many times may a failed payout be retried?"
    good, bad = fit(question, [
        "Payout retry policy\nRetry ceiling\nThe retry ceiling is 4 attempts.",
        "Payout retry policy\nExceptions\nNo standing exceptions. Ask the owner for a time-boxed one.",
    ])
    assert good > bad
    assert fit.fits(question, "Payout retry policy: the retry ceiling is 4 attempts.") is (
        fit(question, ["Payout retry policy: the retry ceiling is 4 attempts."])[0] >= FITS)


def test_a_fitting_sentence_is_relevant_without_a_shared_word(fit: SentenceFit) -> None:
    # no word of the question (quickly, customers, informed, outage, begins) is in the passage
    question = "How quickly must customers be informed after an outage begins?"
    env = {**ENV, "doc_id": "pol-notice", "title": "Notification policy"}
    text = "# Deadline\n\nNotify affected merchants within 90 minutes of the start."
    ev = Evidence.of("pol-notice#deadline", text, env)
    by_words = resolve(question, [ev], as_of="2026-09-15")
    by_model = resolve(question, [ev], as_of="2026-09-15", fit=fit)
    assert by_words.decision is None
    assert by_model.decision is not None and "90 minutes" in by_model.decision.quote


def test_one_document_does_not_contradict_itself() -> None:
    # two sections of one policy state two percentages; the section that names what is asked states it
    env = {**ENV, "doc_id": "pol-reserve-v2", "title": "Reserve terms (version 2)"}
    terms = Evidence.of("pol-reserve-v2#rolling-reserve", "# Rolling reserve\n\nReserve: 12% a day.", env)
    review = Evidence.of("pol-reserve-v2#review", "# Review\n\nChargebacks ran at 0.9% last quarter.", env)
    record = resolve("What rolling reserve applies?", [review, terms], as_of="2026-08-01")
    assert record.status == "decided" and record.decision is not None
    assert record.decision.value == "12%"
    assert [(r.doc_id, r.reason) for r in record.rejected] == [("pol-reserve-v2", "neighbouring_fact")]


class _Result:
    def __init__(self, abstained: bool, decision: object = None) -> None:
        self.task, self.abstained, self.delivered = "How many retries?", abstained, []
        self.record = type("R", (), {"decision": decision})()


def test_answer_fit_is_none_for_an_abstention(fit: SentenceFit) -> None:
    assert answer_fit(_Result(True), fit) is None


def test_the_curve_only_loses_answers_as_the_threshold_rises() -> None:
    rows = [
        {"answerable": True, "correct": True, "abstained": False, "fit": 4.0},
        {"answerable": True, "correct": True, "abstained": False, "fit": -3.0},
        {"answerable": True, "correct": False, "abstained": True, "fit": None},
        {"answerable": False, "correct": False, "abstained": False, "fit": -1.0},
        {"answerable": False, "correct": False, "abstained": True, "fit": None},
    ]
    curve = abstention_curve(rows, [-5, -2, 0, 5])
    assert [p["accuracy"] for p in curve] == [2 / 3, 1 / 3, 1 / 3, 0.0]
    assert [p["false_assertions"] for p in curve] == [0.5, 0.5, 0.0, 0.0]
    assert [p["over_abstention"] for p in curve] == [1 / 3, 2 / 3, 2 / 3, 1.0]
    assert math.isnan(abstention_curve(rows[:3], [0])[0]["false_assertions"])
