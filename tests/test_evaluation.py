"""The course's retrieval lessons, measured on the real corpus with the real retrievers.

If one of these fails after a change to the corpus or the retrievers, the data no longer
teaches the lesson: fix the data (or the retriever), never the expected direction.
"""

from __future__ import annotations

import pytest
from conftest import ROOT

from ragkit.cases import load_cases
from ragkit.evaluation import candidate_recall

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recall():
    from ragkit.course import course_index

    cases = load_cases(ROOT / "datasets" / "opscorpus" / "cases.jsonl")
    return candidate_recall(course_index(progress=False), cases, width=50)


def r(table, tag, method):
    return table.loc[(tag, method), "set_recall"]


def test_bm25_wins_on_identifiers(recall):
    assert r(recall, "identifier", "bm25") > r(recall, "identifier", "dense") + 0.1


def test_dense_wins_on_vocabulary_mismatch(recall):
    assert r(recall, "vocabulary_mismatch", "dense") > r(recall, "vocabulary_mismatch", "bm25") + 0.1


def test_rrf_at_least_as_good_as_the_better_single_retriever_overall(recall):
    assert r(recall, "all", "rrf") >= max(r(recall, "all", "bm25"), r(recall, "all", "dense"))


def test_multi_hop_and_conflict_are_not_saturated(recall):
    assert r(recall, "multi_hop", "rrf") < 0.8
    assert r(recall, "conflict", "rrf") < 0.9


def test_counts_cover_every_answerable_case(recall):
    cases = load_cases(ROOT / "datasets" / "opscorpus" / "cases.jsonl")
    assert recall.loc[("all", "rrf"), "cases"] == sum(c.answerable for c in cases)
