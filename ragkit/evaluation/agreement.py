"""Agreement of :func:`ragkit.evidence.resolution.resolve` with evidence cases (selected, rejected, reasons).

Each case names its minimum evidence set and the sources to reject with a reason. Hand
both lists to ``resolve`` as the delivered evidence (each item read as its document
section), then compare: is the decided value the expected one, is the selected set the
case's evidence set, and does every rejected source get the case's reason?

Example:
    >>> from ragkit.evaluation.cases import load_cases               # doctest: +SKIP
    >>> from ragkit.course.shortcuts import course_documents        # doctest: +SKIP
    >>> docs = {d.doc_id: d for d in course_documents()[0]}                       # doctest: +SKIP
    >>> case = next(c for c in load_cases("datasets/opscorpus/cases.jsonl") if c.id == "story-eur-cutoff")
    ... # doctest: +SKIP
    >>> compare_record(case, resolve_case(case, docs)).agrees                            # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ragkit.core.errors import ValidationError
from ragkit.core.records import Document
from ragkit.evaluation.cases import EvidenceCase
from ragkit.evidence.decision import DecisionRecord
from ragkit.evidence.resolution import resolve
from ragkit.evidence.spans import Evidence
from ragkit.text.profile import CorpusProfile, using_profile

__all__ = ["case_evidence", "resolve_case", "CaseAgreement", "compare_record", "agreement_table"]


def case_evidence(case: EvidenceCase, documents: Mapping[str, Document]) -> list[Evidence]:
    """The case's evidence set and reject list as delivered evidence, in that order.

    A reject item without an anchor is delivered as the whole document.

    Raises:
        ValidationError: a document or section the case names does not exist.
    """
    out: list[Evidence] = []
    refs: list[tuple[str, str | None]] = [(e.doc_id, e.anchor) for e in case.evidence]
    refs += [(r.doc_id, r.anchor) for r in case.reject]
    for doc_id, anchor in refs:
        if doc_id not in documents:
            raise ValidationError(
                f"case {case.id} names {doc_id}, which is not in the documents", field="doc_id"
            )
        out.append(Evidence.from_document(documents[doc_id], anchor))
    return out


def resolve_case(case: EvidenceCase, documents: Mapping[str, Document],
                 profile: CorpusProfile | None = None) -> DecisionRecord:
    """:func:`ragkit.evidence.resolution.resolve` on the case's task, caller, ``as_of`` and evidence,
    read with ``profile`` (an index's :attr:`~ragkit.index.index.Index.profile`; default: the active one)."""
    with using_profile(profile):
        return resolve(case.task, case_evidence(case, documents), case.as_of.date().isoformat(), case.caller)


@dataclass
class CaseAgreement:
    """How one record compares with its case."""

    case_id: str
    tags: tuple[str, ...]
    value_ok: bool
    selected_ok: bool
    reasons_ok: bool
    problems: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return self.value_ok and self.selected_ok and self.reasons_ok


def compare_record(case: EvidenceCase, record: DecisionRecord) -> CaseAgreement:
    """Compare a record with the case's expected value, evidence set and reject reasons."""
    problems: list[str] = []
    if case.expected is None:
        value_ok = record.decision is None
        if not value_ok:
            problems.append(f"decided {record.value} on an unanswerable case")
    else:
        value_ok = record.decision is not None and case.expected.matches(record.decision.surface)
        if not value_ok:
            problems.append(f"value {record.value!r} ({record.status}), expected {case.expected.value!r}")
    want = set(case.required_doc_ids)
    got = {s.doc_id for s in record.selected}
    selected_ok = want == got
    if not selected_ok:
        problems.append(f"selected {sorted(got)}, case has {sorted(want)}")
    reasons = record.reasons()
    wrong = [
        f"{r.doc_id}: {reasons.get(r.doc_id, 'not rejected')} (case: {r.reason})"
        for r in case.reject
        if reasons.get(r.doc_id) != r.reason
    ]
    if wrong:
        problems.append("reasons " + "; ".join(wrong))
    return CaseAgreement(case.id, case.tags, value_ok, selected_ok, not wrong, problems)


def agreement_table(results: Sequence[CaseAgreement], tags: Sequence[str]) -> str:
    """A Markdown table per tag: cases, value correct, selected set equal, rejected reasons agree."""
    lines = [
        "| tag | cases | decision value correct | selected set equal | rejected reasons agree | all three |",
        "|---|---|---|---|---|---|",
    ]
    groups = [("all", list(results))] + [(t, [r for r in results if t in r.tags]) for t in tags]
    for tag, rows in groups:
        if not rows:
            continue
        n = len(rows)

        def cell(k: int, n: int = n) -> str:
            return f"{k}/{n} ({k / n:.0%})"

        lines.append(
            f"| {tag} | {n} | {cell(sum(r.value_ok for r in rows))} | "
            f"{cell(sum(r.selected_ok for r in rows))} | {cell(sum(r.reasons_ok for r in rows))} | "
            f"{cell(sum(r.agrees for r in rows))} |"
        )
    return "\n".join(lines)
