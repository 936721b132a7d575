"""The offline policy's final text: an answer that cites every sentence, or an honest abstention.

Rule 7 of the offline policy (:mod:`ragkit.agent.offline`). :func:`answer_text` puts the
resolved value first and quotes the decisive passage, each sentence cited ``[doc_id#anchor]``
(:func:`cite_each`); for a cause question it quotes the sentence that states the cause.
:func:`abstention_text` says what was searched, what was found, what is missing or which
sources conflict, and what to confirm.

Example:
    >>> cite_each("The cutoff is 15:00. It applies from 19 January.", "policy-v3#cutoffs")
    'The cutoff is 15:00 [policy-v3#cutoffs]. It applies from 19 January [policy-v3#cutoffs].'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ragkit.agent.offline.judging import Judgement
from ragkit.agent.offline.passages import CAUSAL
from ragkit.agent.state import AgentState, EvidenceUse
from ragkit.core.errors import ValidationError
from ragkit.documents.sections import sections
from ragkit.evidence.decision import Decision, DecisionRecord
from ragkit.text.values import sentence_spans

__all__ = ["cite_each", "answer_text", "abstention_text"]


def cite_each(text: str, citation: str) -> str:
    """``text`` with ``[citation]`` before the end of each of its sentences."""
    out = []
    for a, b in sentence_spans(text) or [(0, len(text))]:
        sentence = " ".join(text[a:b].split()).rstrip(" .;:")
        if sentence:
            out.append(f"{sentence} [{citation}].")
    return " ".join(out)


def answer_text(record: DecisionRecord, counted: Sequence[EvidenceUse] = (), *, cause: bool = False) -> str:
    """The answer: the resolved value first, then the decisive passage quoted, each cited.

    For a cause question the answer is the sentence of the decisive passage that states the
    cause; for other free-text and status answers the quote is the decisive sentence's
    paragraph (at most about 100 words).

    Raises:
        ValidationError: the record decides nothing (abstain with :func:`abstention_text` instead).
    """
    decision = record.decision
    if decision is None:
        raise ValidationError(
            f"an answer needs a decided record; this one is {record.status}", field="record"
        )
    d = decision
    citation = _section_citation(d, counted)
    if citation != d.citation:
        d = replace(d, citation=citation)
    if cause:
        # the paragraph that states the cause (its first sentence often holds the finding)
        use = next((u for u in counted if u.citation == decision.citation), None)
        text = str(use.item.get("text", "")) if use is not None else ""
        passage = _window(text, str(d.quote)) if text else ""
        if not CAUSAL.search(passage):
            passage = next((text[a:b] for a, b in sentence_spans(text) if CAUSAL.search(text[a:b])), passage)
        if passage:
            return cite_each(passage, d.citation)
    quote = " ".join(str(d.quote).split())
    surface = " ".join(str(d.surface).split())
    # "Answer: <value>": the value leads, and a bare surname reads as a person after the colon
    head = cite_each(f"Answer: {surface}", d.citation)
    if d.kind in ("text", "status"):
        use = next((u for u in counted if u.citation == decision.citation), None)
        if use is not None:
            quote = _window(str(use.item.get("text", "")), str(d.quote)) or quote
    if quote.lower().strip(" .") == surface.lower().strip(" ."):
        return head
    return f"{head} {cite_each(quote, d.citation)}"


def _section_citation(d: Decision, counted: Sequence[EvidenceUse]) -> str:
    """``doc_id#anchor`` of the section holding the decision when a whole document was read."""
    if "#" in str(d.citation):
        return str(d.citation)
    use = next((u for u in counted if u.citation == d.citation), None)
    if use is None or d.start is None or d.start < 0:
        return str(d.citation)
    text = str(use.item.get("text", ""))
    offset = d.start - int(use.item.get("start") or 0)
    for sec in sections(text):
        if sec.start <= offset < sec.end and sec.anchor:
            return f"{d.doc_id}#{sec.anchor}"
    return str(d.citation)


def _window(text: str, sentence: str, words: int = 100) -> str:
    """The paragraph that holds ``sentence`` (a finding is often stated in its first sentence),
    as plain text; if the paragraph is long, the sentence with two before and one after it."""
    flat = " ".join(sentence.split())
    for paragraph in re.split(r"\n\s*\n", text):
        plain = " ".join(paragraph.split())
        if flat and flat in plain:
            if len(plain.split()) <= words:
                return plain
            spans = sentence_spans(paragraph)
            at = next((n for n, (a, b) in enumerate(spans) if flat in " ".join(paragraph[a:b].split())), None)
            if at is None:
                return flat
            lo, hi = max(0, at - 2), min(len(spans), at + 2)
            return " ".join(" ".join(paragraph[a:b].split()) for a, b in spans[lo:hi])
    return ""


def abstention_text(state: AgentState, judgement: Judgement, why: str) -> str:
    """An honest abstention: searched, found, missing or conflicting, and what to confirm."""
    searched = "; ".join(f"'{q}'" for q in state.queries()) or "nothing"
    followed = [s for s in state.steps if s.action in ("fetch", "related") and s.refused is None]
    found = ", ".join(u.citation for u in judgement.counted[:6]) or "nothing about the question"
    aside = len(judgement.set_aside)
    parts = [
        f"I cannot answer this from the evidence I may read ({why}).",
        f"Searched: {searched}" + (f"; followed {len(followed)} link(s)" if followed else "") + ".",
        f"Found: {found}" + (f"; set aside {aside} excerpt(s) not about the question" if aside else "") + ".",
    ]
    record = judgement.record
    if record is not None and record.status == "conflict" and record.unresolved:
        conflicts = "; ".join(f"{c.a} vs {c.b}: {c.why}" for c in record.unresolved[:3])
        parts.append(f"Conflicting sources: {conflicts}.")
    else:
        parts.append(f"Missing: {judgement.missing or 'a source that states the answer'}.")
    confirm = list(getattr(record, "to_confirm", []) or [])
    if not confirm:
        confirm = [
            f"whether a record of {_about_state(state)} exists that I cannot see, or under another name"
        ]
    parts.append("To confirm: " + "; ".join(confirm[:3]) + ".")
    return " ".join(parts)


def _about_state(state: AgentState) -> str:
    return state.task.rstrip("?").strip()
