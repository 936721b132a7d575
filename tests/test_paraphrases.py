"""Validate the hand-written paraphrase set against the course corpus (issue 21, item 1).

``datasets/opscorpus/paraphrases.jsonl`` re-asks facts of the bundled corpus the way operators
ask them (see ``datasets/README.md``, "Paraphrase set"). Every claim a line makes is re-derived
here from the documents' text and envelopes: the quotes, who may read them and when, the
expected value, the rejections, and that an unanswerable fact is really absent from the caller's
scope. ``datasets/opscorpus/splits.json`` seals part of the set; its shape is checked here too.
None of these tests needs a model (the project's default tier: they do not carry ``slow``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from case_checks import Corpus, case_problems, ws

from ragkit import EvidenceCase, load_cases
from ragkit.course import course_documents
from ragkit.evaluation.caseschema import schema_errors
from ragkit.text import normalise_value

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "datasets" / "opscorpus"
PARAPHRASES = CORPUS / "paraphrases.jsonl"
SPLITS = CORPUS / "splits.json"

#: Phrasing styles; a case id is ``<family>.<style>`` (``-2`` when a family repeats a style).
STYLES = {
    "plain": "a direct question",
    "embedded": "the request sits inside a longer message",
    "yesno": "a yes/no question (the answer must state the fact)",
    "two_asks": "two questions in one (the expected value answers the family's fact)",
    "reverse": "asks for the key from the value",
    "synonyms": "other words than the document's",
    "no_identifier": "no ticket key, account or rollout id",
    "near_miss": "wrong-but-close wording (misspelling, near term)",
}



@pytest.fixture(scope="module")
def corpus() -> Corpus:
    docs, report = course_documents()
    assert report.ok, [str(s) for s in report.skipped[:5]]
    return Corpus(docs)


@pytest.fixture(scope="module")
def cases() -> list[EvidenceCase]:
    return load_cases(PARAPHRASES)


@pytest.fixture(scope="module")
def splits() -> dict:
    return json.loads(SPLITS.read_text(encoding="utf-8"))


def _style(case: EvidenceCase) -> str:
    return re.sub(r"-\d+$", "", case.id.rsplit(".", 1)[-1])


def _fails(found: list[str], what: str) -> str:
    return f"{len(found)} {what}:\n" + "\n".join(found[:30])


# --------------------------------------------------------------------------------------
# the file itself


def test_every_line_is_a_valid_case() -> None:
    lines = [ln for ln in PARAPHRASES.read_text(encoding="utf-8").splitlines() if ln.strip()]
    errors = [
        f"line {i}: {err}"
        for i, ln in enumerate(lines, 1)
        for err in schema_errors(json.loads(ln))
    ]
    assert not errors, _fails(errors, "schema errors")
    loaded = load_cases(PARAPHRASES)
    assert len(loaded) == len(lines)
    assert len({c.id for c in loaded}) == len(loaded), "duplicate case ids"


def test_counts_styles_and_families(cases: list[EvidenceCase]) -> None:
    assert len(cases) >= 150
    assert sum(not c.answerable for c in cases) >= 30
    families = Counter(c.family for c in cases)
    assert all(f.startswith("para-") for f in families), sorted(families)
    assert all(c.id.startswith(c.family + ".") for c in cases), [
        c.id for c in cases if not c.id.startswith(c.family + ".")
    ]
    small = {f: n for f, n in families.items() if n < 4}
    assert not small, f"families with fewer than 4 phrasings: {small}"
    styles = Counter(_style(c) for c in cases)
    assert set(styles) <= set(STYLES), set(styles) - set(STYLES)
    # every operator style the issue names is present several times
    thin = {s: styles[s] for s in STYLES if s != "plain" and styles[s] < 8}
    assert not thin, f"styles with fewer than 8 cases: {thin}"
    # a family is one fact asked several ways, not one way asked several times
    assert all(len({_style(c) for c in cases if c.family == f}) >= 3 for f in families)
    # no two tasks are the same text
    tasks = Counter(ws(c.task).lower() for c in cases)
    assert not [t for t, n in tasks.items() if n > 1]


def test_facts_span_kinds_tenants_and_seams(
    corpus: Corpus, cases: list[EvidenceCase]
) -> None:
    answerable = [c for c in cases if c.answerable]
    kinds = {corpus.docs[c.decisive.doc_id].envelope.source_type for c in answerable}
    assert len(kinds) >= 6, kinds
    tenants = {c.caller.tenant for c in cases}
    assert len(tenants) >= 8, tenants
    value_kinds = {c.expected.kind for c in answerable}
    assert len(value_kinds) >= 5, value_kinds
    tags = Counter(t for c in cases for t in c.tags)
    for tag in ("multi_hop", "conflict", "temporal", "scoped", "identifier", "vocabulary_mismatch"):
        assert tags[tag] >= 4, tags
    reasons = {r.reason for c in cases for r in c.reject}
    assert {"superseded", "acl", "other_tenant", "condition_met", "exception_applies"} <= reasons


# --------------------------------------------------------------------------------------
# each case against the corpus


def test_expected_value_is_normalised_and_in_the_decisive_quote(
    cases: list[EvidenceCase],
) -> None:
    found = []
    for c in cases:
        decisive = [e for e in c.evidence if e.role == "decisive"]
        if not c.answerable:
            if c.expected is not None or decisive or c.absent is None:
                found.append(f"{c.id}: unanswerable needs expected null, no decisive, absent")
            continue
        if len(decisive) != 1 or c.expected is None:
            found.append(f"{c.id}: needs exactly one decisive item and an expected value")
            continue
        exp, quote = c.expected, decisive[0].quote
        surface = exp.surface or exp.value
        if normalise_value(exp.kind, exp.value) != exp.value:
            found.append(f"{c.id}: value {exp.value!r} is not in normal form")
        if normalise_value(exp.kind, surface) != exp.value:
            found.append(f"{c.id}: surface {surface!r} does not normalise to {exp.value!r}")
        if ws(surface) not in ws(quote):
            found.append(f"{c.id}: surface {surface!r} is not in the decisive quote {quote!r}")
    assert not found, _fails(found, "expected-value problems")


def test_every_case_checks_out_against_the_corpus(corpus: Corpus, cases: list[EvidenceCase]) -> None:
    """The corpus's own case check (tests/case_checks.py): quotes verbatim in their sections,
    evidence readable and in effect at as_of, the expected surface in the decisive quote, every
    rejection's reason derived from the envelopes, decoys implied by the rejections, absent facts
    absent from the caller's scope, vocabulary-mismatch tasks sharing no word with the answer."""
    found = [f"{c.id}: {p}" for c in cases for p in case_problems(c, corpus)]
    assert not found, _fails(found, "cases the corpus does not bear out")


def test_absent_patterns_name_the_out_of_scope_fact(corpus: Corpus, cases: list[EvidenceCase]) -> None:
    """An unanswerable case's ``absent`` pattern matches the document the caller may not read
    (so "absent from scope" is checked with a pattern that does find the fact)."""
    found = []
    for c in cases:
        if c.answerable:
            continue
        assert c.absent is not None
        witnesses = [r.doc_id for r in c.reject if r.reason in ("acl", "other_tenant",
                                                                "not_yet_published")]
        for doc_id in witnesses:
            if not c.absent.found_in(corpus.full_text(doc_id)):
                found.append(f"{c.id}: absent pattern misses the out-of-scope {doc_id}")
    assert not found, _fails(found, "absent patterns that miss their fact")


# --------------------------------------------------------------------------------------
# the split


def test_splits_file_has_the_agreed_shape(splits: dict) -> None:
    assert set(splits) == {"bundled", "paraphrases"}, sorted(splits)
    assert isinstance(splits["bundled"].get("heldout_families"), list)
    sealed = splits["paraphrases"].get("sealed_families")
    assert isinstance(sealed, list) and all(isinstance(f, str) for f in sealed)
    assert len(sealed) == len(set(sealed))


def test_sealed_part_exists_and_is_a_fair_share(
    corpus: Corpus, cases: list[EvidenceCase], splits: dict
) -> None:
    sealed = set(splits["paraphrases"]["sealed_families"])
    families = {c.family for c in cases}
    assert sealed <= families, sorted(sealed - families)
    inside = [c for c in cases if c.family in sealed]
    outside = [c for c in cases if c.family not in sealed]
    share = len(inside) / len(cases)
    assert 0.30 <= share <= 0.50, share
    # both sides hold unanswerable cases, multi-hop facts and most styles
    for part in (inside, outside):
        assert sum(not c.answerable for c in part) >= 8
        assert any("multi_hop" in c.tags for c in part)
        assert len({_style(c) for c in part}) >= 6
        kinds = {corpus.docs[c.decisive.doc_id].envelope.source_type for c in part if c.answerable}
        assert len(kinds) >= 4, kinds


def test_readme_style_table_matches_the_file(cases: list[EvidenceCase]) -> None:
    readme = (ROOT / "datasets" / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| `(\w+)` \| .* \| (\d+) \|$", readme, flags=re.M))
    assert set(table) == set(STYLES), sorted(table)
    styles = Counter(_style(c) for c in cases)
    assert {s: int(n) for s, n in table.items()} == dict(styles)
