"""Evaluation splits by template family (``ragkit.evaluation.splits``, ``datasets/opscorpus/splits.json``)."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragkit import load_cases
from ragkit.evaluation import assign_splits, choose_heldout, load_splits, splits_key
from ragkit.evaluation.splits import family_kind, split_families

ROOT = Path(__file__).resolve().parent.parent
OPS = ROOT / "datasets" / "opscorpus"
SPLITS = OPS / "splits.json"
CASES = load_cases(OPS / "cases.jsonl")


def case(cid: str, family: str, answerable: bool = True, tags: tuple[str, ...] = ("identifier",)):
    return SimpleNamespace(id=cid, family=family, answerable=answerable, tags=tags)


def test_bundled_split_is_the_rule_applied_to_the_cases():
    """The stored held-out families are exactly what choose_heldout gives (nobody picked them by hand)."""
    stored = load_splits(SPLITS)["bundled"]
    assert stored["heldout_families"] == choose_heldout(CASES)
    assert stored.get("how_chosen")


def test_heldout_families_are_a_third_spread_over_the_kinds():
    held = set(load_splits(SPLITS)["bundled"]["heldout_families"])
    members: dict[str, list[tuple[bool, tuple[str, ...]]]] = defaultdict(list)
    for c in CASES:
        members[c.family].append((c.answerable, c.tags))
    assert len(members) == 38 and held <= set(members)
    assert 10 <= len(held) <= 14  # about a third of the 38 families
    kinds: dict[str, set[str]] = defaultdict(set)
    for family, items in members.items():
        kinds[family_kind(items)].add(family)
    for kind, families in kinds.items():
        if len(families) >= 2:  # every kind with two or more families has one held out, and one kept
            assert families & held and families - held, kind
    assert "story" not in held  # the course's stories stay in development


#: The families held out before the long-document shelf (issue 24) was added.
HELD_BEFORE_LONG_DOCUMENTS = {
    "approver_to_rollout", "eur_cutoff_exception", "function_to_code", "rollout_approver", "sweep_scoped",
    "ticket_to_policy", "twin_scoped", "unanswerable_reserve_acl", "unanswerable_sweep_acl",
}


def test_adding_the_long_document_shelf_left_the_older_split_alone():
    """Long-document families form kinds of their own, so no older family changed sides."""
    held = set(load_splits(SPLITS)["bundled"]["heldout_families"])
    older = {c.family for c in CASES if "long_document" not in c.tags}
    assert held & older == HELD_BEFORE_LONG_DOCUMENTS
    longdoc = {c.family for c in CASES if "long_document" in c.tags}
    assert held & longdoc and longdoc - held
    assert any(f.startswith("unanswerable") for f in held & longdoc)


def test_whole_families_are_held_out():
    split = assign_splits(CASES, load_splits(SPLITS), "bundled")
    assert set(split.values()) == {"dev", "heldout"}
    by_split: dict[str, set[str]] = defaultdict(set)
    for c in CASES:
        by_split[split[c.id]].add(c.family)
    assert not by_split["dev"] & by_split["heldout"]
    held = [c for c in CASES if split[c.id] == "heldout"]
    assert any(not c.answerable for c in held) and sum(c.answerable for c in held) >= 50


def test_choose_heldout_is_deterministic_and_blind_to_order():
    cases = [case(f"c{i}", f"fam{i % 9}") for i in range(27)]
    assert choose_heldout(cases) == choose_heldout(list(reversed(cases)))
    assert len(choose_heldout(cases)) == 3  # positions 1, 4, 7 of the nine families of one kind
    assert choose_heldout([case("a", "only")]) == []  # a one-family kind stays in development


def test_family_kind():
    assert family_kind([(False, ("scoped",)), (False, ())]) == "unanswerable"
    assert family_kind([(True, ("identifier", "scoped")), (True, ("scoped",))]) == "scoped"
    assert family_kind([(True, ("identifier", "scoped"))]) == "scoped"  # a tie: the more specific tag
    assert family_kind([(True, ())]) == "untagged"
    both = (True, ("long_document", "conflict"))
    assert family_kind([both, both]) == "long_document"
    assert family_kind([(False, ("long_document",))]) == "long_document/unanswerable"
    # not every case carries the tag: no kind of its own
    assert family_kind([(True, ("long_document",)), (True, ("scoped",))]) == "scoped"


def test_split_files_and_keys(tmp_path):
    assert load_splits(tmp_path / "missing.json") == {}
    bad = tmp_path / "bad.json"
    bad.write_text("[1]")
    with pytest.raises(ValueError):
        load_splits(bad)
    splits = {"paraphrases": {"sealed_families": ["para-a"], "note": "x"},
              "bundled": {"heldout_families": ["b"]}}
    assert split_families(splits, "paraphrases") == {"para-a": "sealed"}
    assert split_families(splits, "other") == {}
    got = assign_splits([case("1", "para-a"), case("2", "para-b")], splits, "paraphrases")
    assert got == {"1": "sealed", "2": "dev"}
    with pytest.raises(ValueError):
        split_families({"k": {"heldout_families": ["x"], "sealed_families": ["x"]}}, "k")
    assert splits_key(OPS / "cases.jsonl") == "bundled" and splits_key("x/paraphrases.jsonl") == "paraphrases"


def test_sealed_paraphrase_families_exist():
    """Every sealed family names facts of the paraphrase set (when that set exists)."""
    paraphrases = OPS / "paraphrases.jsonl"
    sealed = (load_splits(SPLITS).get("paraphrases") or {}).get("sealed_families") or []
    if not paraphrases.exists() or not sealed:
        pytest.skip("no paraphrase set or no sealed part yet")
    families = {c.family for c in load_cases(paraphrases)}
    assert set(sealed) <= families


def test_agent_quality_report_per_split(tmp_path):
    """bench/agent_quality.py's report: one row per split and placement; sealed case ids never shown."""
    sys.path.insert(0, str(ROOT / "bench"))
    import agent_quality

    def row(cid, split, answerable, abstained, correct):
        return {"id": cid, "case": cid, "split": split, "family": "f-" + split, "tags": ["identifier"],
                "answerable": answerable, "abstained": abstained, "correct": correct and answerable,
                "honest": (not answerable) and abstained,
                "false_assertion": (not answerable) and not abstained,
                "over_abstained": answerable and abstained, "passed": correct if answerable else abstained,
                "unverifiable": False, "calls": 1, "seconds": 0.1, "tokens": 10, "lost_at": "" if correct else
                "answer", "entered": True, "survived": True, "delivered": True, "answered": correct,
                "error": None}

    rows = {"hybrid": [row("d1", "dev", True, False, True), row("d2", "dev", True, True, False),
                       row("s1", "sealed", True, False, False), row("s2", "sealed", False, False, False)]}
    args = SimpleNamespace(out=tmp_path / "r.md", rows=None, cases=OPS / "paraphrases.jsonl",
                           splits=SPLITS, split_key="")
    agent_quality.write_report(rows, 4, 4, 1.0, args, partial=True)
    text = (tmp_path / "r.md").read_text()
    lines = [ln for ln in text.splitlines() if ln.startswith(("| dev | hybrid", "| sealed | hybrid"))]
    dev, sealed = lines
    assert "| 0.500 (1/2) |" in dev and "over" not in dev
    assert dev.split("|")[7].strip() == "0.500 (1/2)"  # over-abstention: d2 abstained on an answerable case
    assert sealed.split("|")[5].strip() == "0.000 (0/1)" and sealed.split("|")[6].strip() == "1.000 (1/1)"
    assert "s1" not in text and "s2" not in text and "d2" in text
