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

from ragkit import Document, EvidenceCase, load_cases
from ragkit.core import GLOBAL_TENANT
from ragkit.core.records import AUTHORITY_RANK
from ragkit.course import course_documents
from ragkit.documents import sections
from ragkit.evaluation import DECOY_OF_REASON
from ragkit.evaluation.caseschema import schema_errors
from ragkit.evidence.decision import REJECT_REASONS
from ragkit.text import MONTH_NUMBER, normalise_value

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



def _ws(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class Corpus:
    def __init__(self, docs: tuple[Document, ...]):
        self.docs = {d.doc_id: d for d in docs}
        self.sections = {
            d.doc_id: {s.anchor: _ws(d.text[s.start : s.end]) for s in sections(d.text)}
            for d in docs
        }
        self.tenants = {d.envelope.tenant for d in docs}

    def full_text(self, doc_id: str) -> str:
        d = self.docs[doc_id]
        return d.envelope.title + "\n" + d.text


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
    tasks = Counter(_ws(c.task).lower() for c in cases)
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


def _evidence_problems(case: EvidenceCase, corpus: Corpus) -> list[str]:
    out = []
    for i, ref in enumerate(case.evidence):
        if ref.doc_id not in corpus.docs:
            out.append(f"evidence[{i}] {ref.doc_id} does not exist")
            continue
        secs = corpus.sections[ref.doc_id]
        if ref.anchor not in secs:
            out.append(f"evidence[{i}] {ref.citation}: no such section")
        elif _ws(ref.quote) not in secs[ref.anchor]:
            out.append(f"evidence[{i}] {ref.citation}: quote not verbatim: {ref.quote!r}")
        env = corpus.docs[ref.doc_id].envelope
        if not case.caller.allows(env):
            out.append(f"evidence[{i}] {ref.doc_id}: the caller cannot read it")
        if env.published_at is not None and env.published_at > case.as_of:
            out.append(f"evidence[{i}] {ref.doc_id}: published after as_of")
        if env.valid_at(case.as_of) is False:
            out.append(f"evidence[{i}] {ref.doc_id}: not in effect at as_of")
    return out


def test_evidence_is_verbatim_readable_and_published(
    corpus: Corpus, cases: list[EvidenceCase]
) -> None:
    found = [f"{c.id}: {p}" for c in cases for p in _evidence_problems(c, corpus)]
    assert not found, _fails(found, "evidence problems")


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
        if _ws(surface) not in _ws(quote):
            found.append(f"{c.id}: surface {surface!r} is not in the decisive quote {quote!r}")
    assert not found, _fails(found, "expected-value problems")


def _reject_problem(case: EvidenceCase, r, corpus: Corpus) -> str | None:
    e = corpus.docs[r.doc_id].envelope
    evidence_ids = set(case.required_doc_ids)
    if r.doc_id in evidence_ids:
        return "is also evidence"
    if r.anchor is not None and r.anchor not in corpus.sections[r.doc_id]:
        return f"no section {r.anchor}"
    if r.quote is not None:
        where = corpus.sections[r.doc_id][r.anchor] if r.anchor else _ws(corpus.docs[r.doc_id].text)
        if _ws(r.quote) not in where:
            return f"quote not verbatim: {r.quote!r}"
    as_of, caller = case.as_of, case.caller
    if r.reason == "superseded":
        replaced = any(
            s in corpus.docs and (corpus.docs[s].envelope.effective_from or as_of) <= as_of
            for s in e.superseded_by
        )
        ended = e.effective_to is not None and e.effective_to <= as_of
        return None if replaced or ended else "is not superseded at as_of"
    if r.reason == "other_tenant":
        return None if e.tenant not in (caller.tenant, GLOBAL_TENANT) else "same tenant"
    if r.reason == "acl":
        ok = e.tenant in (caller.tenant, GLOBAL_TENANT) and e.acl_groups and not (
            set(e.acl_groups) & set(caller.groups)
        )
        return None if ok else f"acl {e.acl_groups} vs groups {caller.groups}"
    if r.reason == "condition_met":
        res = corpus.docs.get(r.resolved_by or "")
        if not e.conditions or res is None or r.resolved_by not in evidence_ids:
            return "needs conditions and a resolving record in the evidence"
        ok = e.published_at < res.envelope.published_at <= as_of
        return None if ok else "resolving record is not later and published by as_of"
    if r.reason == "exception_applies":
        ok = any(corpus.docs[i].envelope.conditions for i in evidence_ids)
        return None if ok else "no conditional exception in the evidence"
    if r.reason == "lower_authority":
        dec = case.decisive
        theirs = AUTHORITY_RANK.get(corpus.docs[dec.doc_id].envelope.authority, 0) if dec else -1
        return None if AUTHORITY_RANK.get(e.authority, 0) < theirs else "authority is not lower"
    if r.reason == "not_yet_published":
        return None if e.published_at and e.published_at > as_of else "published by as_of"
    if r.reason == "neighbouring_fact":
        return None if case.in_scope(e) else "not in the caller's scope"
    if r.reason not in REJECT_REASONS:
        return f"unknown reason {r.reason!r}"
    return None


def test_rejections_are_derived_from_the_envelopes(
    corpus: Corpus, cases: list[EvidenceCase]
) -> None:
    found = []
    for c in cases:
        for r in c.reject:
            if r.doc_id not in corpus.docs:
                found.append(f"{c.id}: reject {r.doc_id} does not exist")
                continue
            problem = _reject_problem(c, r, corpus)
            if problem:
                found.append(f"{c.id}: reject {r.doc_id} ({r.reason}) {problem}")
        implied = {DECOY_OF_REASON[r.reason] for r in c.reject if r.reason in DECOY_OF_REASON}
        if set(c.decoys) != implied:
            found.append(f"{c.id}: decoys {sorted(c.decoys)} vs reject reasons {sorted(implied)}")
    assert not found, _fails(found, "rejection problems")


def test_unanswerable_facts_are_absent_from_the_callers_scope(
    corpus: Corpus, cases: list[EvidenceCase]
) -> None:
    found = []
    for c in cases:
        if c.answerable:
            continue
        assert c.absent is not None
        for doc_id, d in corpus.docs.items():
            if d.envelope.extra.get("injection") or not c.in_scope(d.envelope):
                continue
            if c.absent.found_in(corpus.full_text(doc_id)):
                found.append(f"{c.id}: the absent fact is in {doc_id}")
                break
        # and the pattern does name the fact: it matches the document the caller may not read
        witnesses = [r.doc_id for r in c.reject if r.reason in ("acl", "other_tenant",
                                                                "not_yet_published")]
        for doc_id in witnesses:
            if not c.absent.found_in(corpus.full_text(doc_id)):
                found.append(f"{c.id}: absent pattern misses the out-of-scope {doc_id}")
    assert not found, _fails(found, "unanswerable cases that are answerable")


def _stems(text: str) -> set[str]:
    words = re.findall(r"[A-Za-z][A-Za-z'_-]*", text.lower())
    return {w.replace("'s", "")[:5] for w in words if len(w) >= 4 and w not in MONTH_NUMBER}


STOP = _stems(
    "what which when where that this with from were after before during their there "
    "have been into about does than then also they them only each every over under"
)


def test_vocabulary_mismatch_cases_share_no_word_with_the_answer(
    corpus: Corpus, cases: list[EvidenceCase]
) -> None:
    names = _stems(" ".join(corpus.tenants))
    found = []
    for c in cases:
        if "vocabulary_mismatch" in c.tags and c.decisive is not None:
            shared = (_stems(c.task) - names - STOP) & _stems(c.decisive.quote)
            if shared:
                found.append(f"{c.id}: shares {sorted(shared)}")
    assert not found, _fails(found, "vocabulary-mismatch cases sharing words")


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
