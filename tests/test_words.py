"""ragkit.text.words: the stop-word lists, the stems and the identifier shapes, each pinned.

Where two readers use different lists or patterns, words.py keeps both; these tests pin each one
and the difference between them, so that a merge (which would change what the kit finds) fails.
"""

from __future__ import annotations

import hashlib

from ragkit.text.words import (
    ID_SHAPE_PATTERNS,
    ID_SHAPES,
    ID_VALUE_PATTERN,
    QUESTION_STOPWORDS,
    SAME_MEANING,
    TASK_ID_PATTERNS,
    TASK_STOPWORDS,
    WEEKDAYS,
    compound_stems,
    id_shape,
    letter_stems,
    prefix5,
    stem,
    word_stems,
)


def _digest(words: frozenset[str]) -> str:
    return hashlib.sha256(" ".join(sorted(words)).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------------------
# stop words


def test_task_stopwords_are_the_former_taskparse_list() -> None:
    # size and digest of taskparse.STOPWORDS before the move (commit af8ea8f: 157 words,
    # 9ebad10775baf64f), plus "within", "according" and "supposed" (issue 21: "within what time are
    # we supposed to acknowledge ..., according to its design note?" asks none of them)
    assert len(TASK_STOPWORDS) == 160
    assert _digest(TASK_STOPWORDS) == "4c0979dd87317509"
    assert {"please", "happened", "anything", "what", "our"} <= TASK_STOPWORDS
    assert {"within", "according", "supposed"} <= TASK_STOPWORDS


def test_question_stopwords_are_the_former_relevance_list() -> None:
    # size and digest of relevance.STOP_WORDS before the move (commit af8ea8f: 101 words,
    # 6ae6a16b91da2f65), plus "within" (issue 21: "within 3 business days" is not about a question
    # that asks "within what time")
    assert len(QUESTION_STOPWORDS) == 102
    assert _digest(QUESTION_STOPWORDS) == "a8df06836aaf34ff"


def test_the_two_stop_lists_differ_as_documented() -> None:
    # the question list also drops generic predicate words that every rule states
    assert sorted(QUESTION_STOPWORDS - TASK_STOPWORDS) == [
        "applies", "apply", "own", "same", "set", "sets", "stand", "uses", "value", "values", "work", "works",
    ]
    assert "please" in TASK_STOPWORDS and "please" not in QUESTION_STOPWORDS
    assert len(TASK_STOPWORDS - QUESTION_STOPWORDS) == 70


def test_weekdays() -> None:
    assert sorted(WEEKDAYS) == ["friday", "monday", "saturday", "sunday", "thursday", "tuesday", "wednesday"]


# --------------------------------------------------------------------------------------
# stems


def test_prefix5_is_the_plain_five_letter_prefix() -> None:
    assert [prefix5(w) for w in ("settlement", "completed", "fix", "")] == ["settl", "compl", "fix", ""]


def test_stem_maps_words_of_one_meaning_to_one_class() -> None:
    # finished/completed/done/final/ended read as one stem, the first of their SAME_MEANING class
    assert {stem(w) for w in ("finished", "completed", "done", "finalised", "ended")} == {"finis"}
    assert {stem(w) for w in ("rolling", "rollout", "deployed", "released", "shipped", "rolled")} == {"rolli"}
    assert {stem(w) for w in ("fix", "fixed", "fixes", "resolved")} == {"fix"}
    assert {stem(w) for w in ("approved", "signed", "sign")} == {"appro"}
    assert stem("settlement") == "settl" and stem("eur") == "eur"
    assert stem("Completed") == "Compl"  # the word is taken as given: lower-case it first


def test_same_meaning_classes_are_stems() -> None:
    assert [g[0] for g in SAME_MEANING] == ["finis", "rolli", "fix", "appro", "owner", "ackno"]
    assert all(len(w) <= 5 for g in SAME_MEANING for w in g)


def test_the_three_word_splits_differ_on_compounds_digits_and_possessives() -> None:
    text = "Acme's open_batch reserve-keeper deployed 3.9.4"
    # a word may hold _ and -, and is stemmed whole (first five characters)
    assert word_stems(text) == {"acme", "open_", "reser", "rolli"}
    # runs of letters only: compounds split, digits dropped, "'s" leaves an "s"
    assert letter_stems(text) == {"acme", "s", "open", "batch", "reser", "keepe", "rolli"}
    # compounds stay whole words; digits are words
    assert compound_stems(text) == {"acme", "s", "open_batch", "reserve-keeper", "rolli", "3", "9", "4"}


# --------------------------------------------------------------------------------------
# identifier shapes


def test_task_id_patterns_kinds_and_order() -> None:
    kinds = [k for k, _ in TASK_ID_PATTERNS]
    assert kinds == ["key", "account", "function", "docref", "version", "commit", "code"]
    found = {k: [m.group(1) if m.groups() else m.group(0) for m in p.finditer(
        "OPS-3318 acme-9 reconcile_settlement runbook-v2 3.9.4 a41c9e2 `cfg.yaml` OPS-1")]
        for k, p in TASK_ID_PATTERNS}
    assert found["key"] == ["OPS-3318"]  # a key needs two digits: OPS-1 is not one here
    assert found["account"] == ["acme-9"]
    assert found["function"] == ["reconcile_settlement"]
    assert found["docref"] == ["runbook-v2"]
    assert found["version"] == ["3.9.4"]
    assert found["commit"] == ["a41c9e2"]
    assert found["code"] == ["cfg.yaml"]


def test_id_value_pattern_is_wider_than_the_task_patterns() -> None:
    text = "OPS-1, policy-v3, ops-2987-c3, `a b`, 3.9.4 and deadbeef1"
    found = ID_VALUE_PATTERN.findall(text)
    assert found == ["OPS-1", "policy-v3", "ops-2987-c3", "`a b`", "3.9.4", "deadbeef1"]


def test_id_shapes() -> None:
    assert ID_SHAPES == ("code", "key", "hash", "function", "version", "slug", "other")
    assert [s for s, _ in ID_SHAPE_PATTERNS] == list(ID_SHAPES[:-1])
    cases = {
        "E-4471": "code",
        "RO-7702": "key",
        "a41c9e2": "hash",
        "reconcile_settlement": "function",
        "open_batch()": "function",
        "3.9.4": "version",
        "v2.1": "version",
        "acme-9": "slug",
        "policy-v3": "slug",
        "cfg.yaml": "other",
        "1234567": "other",  # a hash needs a letter a-f as well as a digit
    }
    assert {x: id_shape(x) for x in cases} == cases


def test_a_compound_of_asked_words_says_them() -> None:
    """"second-approver" says the "second approver" a question asks about; a compound with an
    unasked part (a service, "reserve-keeper") stays one word."""
    asked = {stem("second"), stem("approver"), stem("reserve")}
    found = compound_stems("The second-approver threshold; the reserve-keeper service", asked)
    assert asked - {stem("reserve")} <= found and stem("reserve") not in found


def test_an_irregular_past_form_stems_like_its_verb():
    """"Above what balance is the account swept?" asks what the sweep rule states."""
    from ragkit.text.words import stem, word_stems

    assert stem("swept") == stem("sweep") == stem("sweeps")
    assert stem("paid") == stem("pay") and stem("sent") == stem("send")
    assert "sweep" in word_stems("the account is swept nightly")
    assert stem("done") != stem("do")  # a status word, not a past form read as "do"
    assert stem("told") != stem("tell")  # "can you tell me" is a request, not what "was told" states
