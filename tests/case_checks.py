"""The mechanical check of an evidence case against the corpus, shared by every case file's tests.

Each check re-derives from the documents' envelopes and text what a case claims: its quotes
are verbatim in their sections, the caller may read the evidence when it asks, the expected
value is in the decisive quote, each rejection's reason holds, an unanswerable fact is absent
from the caller's scope, a vocabulary-mismatch task shares no word with its answer.
``tests/test_datasets.py`` runs it on the generated cases, ``tests/test_paraphrases.py`` on the
hand-written ones.
"""

from __future__ import annotations

import re

from ragkit import Document, EvidenceCase
from ragkit.core import GLOBAL_TENANT
from ragkit.core.records import AUTHORITY_RANK
from ragkit.documents import sections
from ragkit.evaluation import DECOY_OF_REASON
from ragkit.evidence.decision import REJECT_REASONS
from ragkit.text import MONTH_NUMBER, normalise_value

MONTHS = set(MONTH_NUMBER)


def ws(text: str) -> str:
    """``text`` with runs of whitespace folded to one space."""
    return re.sub(r"\s+", " ", text).strip()


class Corpus:
    """The course documents by id, their sections' text (whitespace folded) and the tenants."""

    def __init__(self, docs: list[Document]):
        self.docs = {d.doc_id: d for d in docs}
        self.sections: dict[str, dict[str, str]] = {}
        for d in docs:
            self.sections[d.doc_id] = {
                s.anchor: ws(d.text[s.start : s.end]) for s in sections(d.text)
            }
        self.tenants = {d.envelope.tenant for d in docs}

    def full_text(self, doc_id: str) -> str:
        d = self.docs[doc_id]
        return d.envelope.title + "\n" + d.text


def check_reason(case: EvidenceCase, r, corpus: Corpus, evidence_ids: set[str]) -> str | None:
    e = corpus.docs[r.doc_id].envelope
    as_of = case.as_of
    caller = case.caller
    reason = r.reason
    if r.doc_id in evidence_ids:
        return "is also in the evidence set"
    if reason == "superseded":
        ended = e.effective_to is not None and e.effective_to <= as_of
        replaced = any(
            s in corpus.docs and (corpus.docs[s].envelope.effective_from or as_of) <= as_of
            for s in e.superseded_by
        )
        return None if ended or replaced else "is not superseded at as_of"
    if reason == "not_yet_effective":
        ok = e.effective_from is not None and e.effective_from > as_of
        return None if ok else f"effective_from {e.effective_from} is not after as_of"
    if reason == "expired":
        return None if e.effective_to is not None and e.effective_to <= as_of else "has not expired"
    if reason == "not_yet_published":
        return None if e.published_at and e.published_at > as_of else "was published by as_of"
    if reason == "condition_met":
        if not e.conditions:
            return "has no conditions"
        res = corpus.docs.get(r.resolved_by or "")
        if res is None or r.resolved_by not in evidence_ids:
            return f"resolved_by {r.resolved_by} is missing or not in the evidence set"
        if not (e.published_at < res.envelope.published_at <= as_of):
            return f"resolved_by {r.resolved_by} is not a later record published by as_of"
        return None
    if reason == "exception_applies":
        exc = [i for i in evidence_ids if corpus.docs[i].envelope.conditions]
        return None if exc else "no conditional exception in the evidence set"
    if reason == "other_tenant":
        return None if e.tenant not in (caller.tenant, GLOBAL_TENANT) else f"tenant is {e.tenant}"
    if reason == "acl":
        ok = (
            e.tenant in (caller.tenant, GLOBAL_TENANT)
            and e.acl_groups
            and not set(e.acl_groups) & set(caller.groups)
        )
        return None if ok else f"acl {e.acl_groups} vs caller groups {caller.groups}"
    if reason == "lower_authority":
        dec = case.decisive
        if dec is None:
            return "no decisive evidence to compare with"
        mine = AUTHORITY_RANK.get(e.authority, 0)
        theirs = AUTHORITY_RANK.get(corpus.docs[dec.doc_id].envelope.authority, 0)
        return (
            None if mine < theirs else f"authority {e.authority} is not below the decisive source's"
        )
    if reason == "lexical_decoy":
        if not r.shared or r.shared not in case.task:
            return f"shared identifier {r.shared!r} is not in the task"
        return (
            None if r.shared in corpus.full_text(r.doc_id) else f"{r.shared!r} is not in the decoy"
        )
    if reason == "semantic_decoy":
        return None
    if reason == "untrusted_instruction":
        return None if e.extra.get("injection") else "is not tagged extra.injection"
    if reason == "neighbouring_fact":
        return None if case.in_scope(e) else "is not in the caller's scope at as_of"
    return f"unknown reason {reason!r} (known: {sorted(REJECT_REASONS)})"


def stems(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[A-Za-z][A-Za-z'_-]*", text.lower()):
        w = w.replace("'s", "")
        if len(w) >= 4 and w not in MONTHS:
            out.add(w[:5])
    return out


STOP = stems(
    "what which when where that this with from were after before during their there "
    "have been into about does than then also they them only each every over under"
)


def case_problems(case: EvidenceCase, corpus: Corpus) -> list[str]:
    """Every claim of ``case`` the corpus does not bear out (empty: the case checks out)."""
    out: list[str] = []
    evidence_ids = set(case.required_doc_ids)
    for i, ref in enumerate(case.evidence):
        if ref.doc_id not in corpus.docs:
            out.append(f"evidence[{i}] {ref.doc_id} does not exist")
            continue
        secs = corpus.sections[ref.doc_id]
        if ref.anchor not in secs:
            out.append(f"evidence[{i}] {ref.citation}: no such anchor (have {sorted(secs)[:8]})")
            continue
        if ws(ref.quote) not in secs[ref.anchor]:
            out.append(f"evidence[{i}] {ref.citation}: quote not in section: {ref.quote!r}")
        env = corpus.docs[ref.doc_id].envelope
        if not case.caller.allows(env):
            out.append(f"evidence[{i}] {ref.doc_id} is outside the caller's tenant/groups")
        if env.published_at and env.published_at > case.as_of:
            out.append(f"evidence[{i}] {ref.doc_id} is published after as_of")
        if env.valid_at(case.as_of) is False:
            out.append(f"evidence[{i}] {ref.doc_id} is not in effect at as_of")
    if case.answerable:
        dec = case.decisive
        exp = case.expected
        assert dec is not None and exp is not None
        surface = exp.surface or exp.value
        if ws(surface) not in ws(dec.quote):
            out.append(f"expected surface {surface!r} is not in the decisive quote {dec.quote!r}")
        elif normalise_value(exp.kind, surface) != exp.value:
            out.append(
                f"surface {surface!r} normalises to {normalise_value(exp.kind, surface)!r}, "
                f"not {exp.value!r}"
            )
    for i, r in enumerate(case.reject):
        if r.doc_id not in corpus.docs:
            out.append(f"reject[{i}] {r.doc_id} does not exist")
            continue
        secs = corpus.sections[r.doc_id]
        if r.anchor is not None and r.anchor not in secs:
            out.append(f"reject[{i}] {r.doc_id}#{r.anchor}: no such anchor")
        elif r.quote is not None:
            where = secs[r.anchor] if r.anchor else ws(corpus.docs[r.doc_id].text)
            if ws(r.quote) not in where:
                out.append(f"reject[{i}] {r.doc_id}: quote not found: {r.quote!r}")
        problem = check_reason(case, r, corpus, evidence_ids)
        if problem:
            out.append(f"reject[{i}] {r.doc_id} ({r.reason}): {problem}")
    implied = {DECOY_OF_REASON[r.reason] for r in case.reject if r.reason in DECOY_OF_REASON}
    if set(case.decoys) != implied:
        out.append(
            f"decoys {sorted(case.decoys)} do not match the reject reasons ({sorted(implied)})"
        )
    if not case.answerable:
        assert case.absent is not None
        for doc_id, d in corpus.docs.items():
            if d.envelope.extra.get("injection") or not case.in_scope(d.envelope):
                continue
            if case.absent.found_in(corpus.full_text(doc_id)):
                out.append(f"absent fact is present in in-scope document {doc_id}")
                break
    if "vocabulary_mismatch" in case.tags and case.decisive is not None:
        names = stems(" ".join(corpus.tenants)) | stems(case.caller.tenant)
        shared = (stems(case.task) - names - STOP) & stems(case.decisive.quote)
        if shared:
            out.append(
                f"vocabulary_mismatch task shares words with the decisive quote: {sorted(shared)}"
            )
    if "identifier" in case.tags:
        idents = set(
            re.findall(r"\b(?:[A-Z]+-\d+|[a-z]+-\d+|\w+_\w+|[0-9a-f]{7})\b|`[^`]+`", case.task)
        )
        idents |= {
            w
            for w in re.findall(r"(?<=\s)[A-Z][a-z]+(?:-[A-Z][a-z]+)?", case.task)
            if w.lower() not in corpus.tenants and w.lower() not in MONTHS
        }
        if not idents:
            out.append("identifier case names no identifier in its task")
    return out
