"""Validate the course corpus and every evidence case against it (issue 4).

A broken case fails with a message that names it. The checks are deliberately
mechanical: each one re-derives from the documents' envelopes and text what the
case claims, so a change to the generator that breaks a claim shows up here.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from case_checks import Corpus, case_problems

from ragkit import EvidenceCase, load_cases, load_corpus
from ragkit.core import GLOBAL_TENANT
from ragkit.core import SOURCE_TYPES as RECORD_SOURCE_TYPES

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "datasets" / "opscorpus"
SOURCE_TYPES = set(RECORD_SOURCE_TYPES) - {"text"}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    docs, report = load_corpus(CORPUS / "docs")
    assert report.ok, f"corpus did not load cleanly: {[str(s) for s in report.skipped[:5]]}"
    return Corpus(docs)


@pytest.fixture(scope="module")
def cases() -> list[EvidenceCase]:
    return load_cases(CORPUS / "cases.jsonl")


# --------------------------------------------------------------------------------------
# corpus level


def test_corpus_counts(corpus: Corpus) -> None:
    envs = [d.envelope for d in corpus.docs.values()]
    assert len(envs) >= 1500
    tenants = {e.tenant for e in envs} - {GLOBAL_TENANT}
    assert len(tenants) >= 8, tenants
    assert SOURCE_TYPES <= {e.source_type for e in envs}
    months = sorted({e.published_at.strftime("%Y-%m") for e in envs if e.published_at})
    first, last = months[0], months[-1]
    span = (int(last[:4]) - int(first[:4])) * 12 + int(last[5:]) - int(first[5:]) + 1
    assert span >= 18, (first, last)
    size = sum(p.stat().st_size for p in (CORPUS / "docs").rglob("*") if p.is_file())
    assert size < 20_000_000


def test_corpus_files_sit_where_their_envelope_says(corpus: Corpus) -> None:
    wrong = []
    for d in corpus.docs.values():
        e = d.envelope
        rel = Path(e.source_path).relative_to(CORPUS / "docs").as_posix()
        suffix = Path(rel).suffix
        if suffix not in (".md", ".html", ".pdf") or rel != f"{e.tenant}/{e.source_type}/{e.doc_id}{suffix}":
            wrong.append(rel)
    assert not wrong, wrong[:5]


def test_seams_are_present_many_times(corpus: Corpus) -> None:
    envs = [d.envelope for d in corpus.docs.values()]
    by_id = {e.doc_id: e for e in envs}
    injections = [e for e in envs if e.extra.get("injection")]
    assert len(injections) >= 10
    for e in injections:
        assert re.search(
            r"(?i)ignore|disregard|forget|override|instruction|assistant|AI|language model",
            corpus.full_text(e.doc_id),
        ), e.doc_id
    # supersedes chains of three versions, consistent in both directions
    chains3 = 0
    for e in envs:
        for old in e.supersedes:
            assert e.doc_id in by_id[old].superseded_by, (old, e.doc_id)
        if e.supersedes and by_id[e.supersedes[0]].supersedes:
            chains3 += 1
    assert chains3 >= 10
    # conditional exceptions whose stopping condition a later record satisfies
    conditional = [e for e in envs if e.conditions]
    assert len(conditional) >= 5
    satisfied = [
        e
        for e in conditional
        if any(
            o.tenant == e.tenant
            and o.source_type == "rollout"
            and o.published_at > e.published_at
            and "cutover completed" in corpus.full_text(o.doc_id).lower()
            for o in envs
        )
    ]
    assert len(satisfied) >= 5
    # ACL groups that differ within one tenant
    groups_per_tenant = Counter()
    for t in {e.tenant for e in envs}:
        groups_per_tenant[t] = len({g for e in envs if e.tenant == t for g in e.acl_groups})
    assert sum(n >= 2 for n in groups_per_tenant.values()) >= 8
    # vocabulary: the same daily event under several names
    terms = ["settlement", "reconciliation", "payout run", "clearing"]
    counts = {t: sum(t in corpus.full_text(e.doc_id).lower() for e in envs) for t in terms}
    assert all(v >= 50 for v in counts.values()), counts
    # identifiers with no semantic neighbourhood
    text = "\n".join(corpus.full_text(e.doc_id) for e in envs)
    assert len(set(re.findall(r"\bE-\d{4}\b", text))) >= 100
    assert len(set(re.findall(r"\b[a-z]+_[a-z_]+\b", text))) >= 20
    tenants = "|".join(sorted({e.tenant for e in envs} - {GLOBAL_TENANT}))
    assert len(set(re.findall(rf"\b(?:{tenants})-\d+\b", text))) >= 40


def test_generator_reproduces_the_committed_files() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "datasets" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --------------------------------------------------------------------------------------
# case level


def test_case_counts_and_coverage(cases: list[EvidenceCase]) -> None:
    ans = [c for c in cases if c.answerable]
    una = [c for c in cases if not c.answerable]
    assert len(ans) >= 200 and len(una) >= 30
    tags = Counter(t for c in ans for t in c.tags)
    minimum = {
        "identifier": 40,
        "vocabulary_mismatch": 40,
        "multi_hop": 40,
        "conflict": 25,
        "scoped": 30,
    }
    short = {t: tags[t] for t, n in minimum.items() if tags[t] < n}
    assert not short, f"coverage below target: {short}"
    hops = [c for c in ans if "multi_hop" in c.tags]
    assert all(2 <= len(c.required_doc_ids) <= 3 for c in hops), [
        c.id for c in hops if not 2 <= len(c.required_doc_ids) <= 3
    ]
    decoys = Counter(d for c in cases for d in c.decoys)
    assert all(
        decoys[k] >= 10
        for k in ("lexical_decoy", "semantic_decoy", "superseded_source", "conditional_exception")
    ), decoys


def test_every_case_checks_out_against_the_corpus(
    corpus: Corpus, cases: list[EvidenceCase]
) -> None:
    failures = []
    for case in cases:
        for problem in case_problems(case, corpus):
            failures.append(f"{case.id} (line {case.line}): {problem}")
    assert not failures, f"{len(failures)} problem(s):\n" + "\n".join(failures[:40])


def test_identifier_cases_find_their_identifier_in_the_decisive_source(
    corpus: Corpus, cases: list[EvidenceCase]
) -> None:
    missing = []
    for c in cases:
        if "identifier" not in c.tags or c.decisive is None:
            continue
        text = corpus.full_text(c.decisive.doc_id)
        tokens = re.findall(r"\b(?:[A-Z]+-\d+|[a-z]+-\d+|\w+_\w+)\b", c.task)
        surnames = re.findall(r"(?:^|(?<=\s))[A-Z][a-z]+(?:-[A-Z][a-z]+)?", c.task)
        if not any(t in text for t in tokens + surnames):
            missing.append(c.id)
    assert not missing, (
        f"identifier cases whose decisive source lacks the task's identifier: {missing[:10]}"
    )


# --------------------------------------------------------------------------------------
# the two stories, exactly as CURRICULUM sections 0 and 7 tell them


def _env(corpus: Corpus, doc_id: str):
    assert doc_id in corpus.docs, f"story document {doc_id} is missing"
    return corpus.docs[doc_id].envelope


def test_story_eur_cutoff(corpus: Corpus, cases: list[EvidenceCase]) -> None:
    comment = _env(corpus, "ops-2987-c3")
    assert comment.tenant == "acme" and comment.source_type == "ticket_comment"
    assert comment.published_at.date().isoformat() == "2026-01-03"
    assert comment.authority == "implementation_team" and "until cutover" in comment.conditions
    assert "Acme stays on 16:00 until cutover" in corpus.docs["ops-2987-c3"].text
    runbook = _env(corpus, "runbook-v2")
    assert (
        runbook.published_at.date().isoformat() == "2025-10-12"
        and runbook.authority == "operations"
    )
    assert "EUR cutoff 16:00" in corpus.sections["runbook-v2"]["eur-cutoff"]
    policy = _env(corpus, "policy-v3")
    assert policy.effective_from.date().isoformat() == "2026-01-01"
    assert policy.authority == "policy_owner" and policy.supersedes == ("policy-v2",)
    assert "migrated tenants use 15:00" in corpus.docs["policy-v3"].text.lower()
    rollout = _env(corpus, "ro-7719")
    assert rollout.tenant == "acme" and rollout.authority == "deployment_system"
    assert rollout.published_at.date().isoformat() == "2026-01-15"
    assert "cutover completed" in corpus.docs["ro-7719"].text.lower()
    case = next(c for c in cases if c.id == "story-eur-cutoff")
    assert case.as_of.date().isoformat() == "2026-01-19" and case.as_of.weekday() == 0
    assert case.expected is not None and case.expected.value == "15:00"
    assert case.decisive is not None and case.decisive.doc_id == "policy-v3"
    reasons = {r.doc_id: r.reason for r in case.reject}
    assert reasons["ops-2987-c3"] == "condition_met" and "runbook-v2" in reasons


def test_story_reconciliation_failure(corpus: Corpus, cases: list[EvidenceCase]) -> None:
    answer = corpus.docs["ops-3318-c2"].text.lower()
    assert "settlement" in answer and "reconciliation" not in answer
    assert _env(corpus, "ops-3318-c2").source_type == "ticket_comment"
    ticket = _env(corpus, "ops-3318")
    assert "ops-3318-c2" in ticket.links and "ro-7702" in ticket.links
    assert "reconciliation" not in corpus.full_text("ops-3318").lower()
    rollout = _env(corpus, "ro-7702")
    assert rollout.source_type == "rollout" and "pol-idempotency-v2" in rollout.links
    assert (
        "a41c9e2" in corpus.docs["ro-7702"].text
        and "reconcile_settlement" in corpus.docs["ro-7702"].text
    )
    assert _env(corpus, "pol-idempotency-v2").source_type == "policy"
    case = next(c for c in cases if c.id == "story-reconciliation-failure")
    assert "reconciliation" in case.task.lower()
    kinds = {corpus.docs[r.doc_id].envelope.source_type for r in case.reject}
    assert {"runbook", "postmortem", "architecture"} <= kinds
    others = {
        corpus.docs[r.doc_id].envelope.tenant for r in case.reject if r.reason == "other_tenant"
    }
    assert len(others) >= 2 and "acme" not in others
    for r in case.reject:
        assert "reconciliation" in corpus.full_text(r.doc_id).lower(), r.doc_id


def test_unanswerable_cases_are_rich_in_near_evidence(
    corpus: Corpus, cases: list[EvidenceCase]
) -> None:
    """Neighbouring facts exist (in scope, or just out of it); only the decisive one is missing."""
    bare = []
    for c in cases:
        if c.answerable:
            continue
        near = [r for r in c.reject if r.doc_id in corpus.docs]
        if not near:
            bare.append(c.id)
    assert not bare, f"unanswerable cases without near-evidence: {bare}"


# --------------------------------------------------------------------------------------
# the long-document shelf (issue 24)


def _long(corpus: Corpus) -> list:
    return [d for d in corpus.docs.values() if d.envelope.extra.get("long_document")]


def test_long_document_shelf(corpus: Corpus) -> None:
    from ragkit.models.tokens import count_tokens_batch

    long = _long(corpus)
    assert len(long) >= 80
    sizes = dict(zip((d.doc_id for d in long), count_tokens_batch([d.text for d in long]), strict=True))
    outside = {k: v for k, v in sizes.items() if not 2000 <= v <= 15000}
    assert not outside, outside
    kinds = Counter(d.envelope.extra["long_document"] for d in long)
    assert set(kinds) == {"handbook", "runbook", "architecture", "contract", "minutes", "quarterly_review"}
    formats = Counter(Path(d.envelope.source_path).suffix for d in long)
    assert formats[".html"] >= 10 and formats[".pdf"] >= 10, formats
    # same envelopes as the rest: tenants, ACL groups, versions, dates, whatever the file format
    envs = [d.envelope for d in long]
    assert len({e.tenant for e in envs} - {GLOBAL_TENANT}) >= 8
    assert {g for e in envs for g in e.acl_groups} >= {"treasury", "leadership"}
    for e in envs:
        assert e.source_type in SOURCE_TYPES and e.published_at and e.authority != "unknown", e.doc_id
    restricted = [e for e in envs if e.acl_groups and Path(e.source_path).suffix != ".md"]
    assert restricted, "an HTML or PDF document carries an ACL"
    assert sum(bool(e.supersedes) for e in envs if Path(e.source_path).suffix != ".md") >= 2
    # runbooks with 20+ sections; numbered clauses that point at other clauses
    runbooks = [
        d for d in long
        if d.envelope.extra["long_document"] == "runbook" and d.envelope.tenant == GLOBAL_TENANT
    ]
    assert all(len(re.findall(r"(?m)^(?:## )?\d+\. ", d.text)) >= 20 for d in runbooks)
    assert sum(bool(re.search(r"clause \d+\.\d+", d.text)) for d in long) >= 20


def test_pdf_and_html_text_reads_back_for_every_quote(
    corpus: Corpus, cases: list[EvidenceCase]
) -> None:
    """pypdf (and the HTML reader) give back the text the evidence quotes were written from."""
    checked = Counter()
    for c in cases:
        for ref in list(c.evidence) + [r for r in c.reject if r.quote]:
            if ref.doc_id not in corpus.docs:
                continue
            suffix = Path(corpus.docs[ref.doc_id].envelope.source_path).suffix
            if suffix == ".md":
                continue
            text = " ".join(corpus.docs[ref.doc_id].text.split())
            assert " ".join(ref.quote.split()) in text, (c.id, ref.doc_id, ref.quote)
            checked[suffix] += 1
    assert checked[".pdf"] >= 15 and checked[".html"] >= 15, checked


def test_long_document_cases(corpus: Corpus, cases: list[EvidenceCase]) -> None:
    long_ids = {d.doc_id for d in _long(corpus)}
    mine = [c for c in cases if "long_document" in c.tags]
    assert len(mine) >= 60
    una = [c for c in mine if not c.answerable]
    assert len(una) >= 6
    for c in una:  # the near-answer sits in a long document
        assert any(r.doc_id in long_ids for r in c.reject), c.id
    for c in mine:
        if c.answerable:
            assert c.decisive is not None and c.decisive.doc_id in long_ids, c.id
    by_family = Counter(c.family for c in mine)
    # a clause reached through another clause, or two sections, of one long document
    same_doc = [c for c in mine if c.answerable and len(c.evidence) >= 2 and len(c.required_doc_ids) == 1]
    assert len(same_doc) >= 20, by_family
    assert sum(len({e.anchor for e in c.evidence}) == 2 for c in same_doc) >= 15
    # from one long document to another
    assert sum(len(c.required_doc_ids) == 2 and set(c.required_doc_ids) <= long_ids for c in mine) >= 3
    # the decisive fact deep inside: past the first 30% of the document's text
    for c in mine:
        if c.family == "longdoc_deep_section":
            text = " ".join(corpus.docs[c.decisive.doc_id].text.split())
            at = text.index(" ".join(c.decisive.quote.split()))
            assert at / len(text) >= 0.3, (c.id, round(at / len(text), 2))
    # versions that supersede each other clause by clause
    assert sum(any(r.reason in ("superseded", "not_yet_effective") for r in c.reject) for c in mine) >= 10
