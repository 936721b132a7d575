"""Span-level citations, verified mechanically (CURRICULUM section 6).

A citation is ``doc_id#anchor``: one section of one document version, delivered in this
run with its character span. Answers cite inline, ``[runbook-v2#eur-cutoff]``, after the
sentence (claim) they support. :func:`verify` checks any answer text (a model's or a
person's) against the evidence delivered in the run, without a second model:

* every citation resolves to a span delivered in this run, readable by the caller, and not
  flagged as instruction-shaped (untrusted content cannot support a claim);
* every identifier, number, time, date, amount and quotation in a claim appears in one of
  the spans it cites. Formatting differences are accepted only where a documented
  normaliser says so: times, dates and amounts compare through
  :func:`ragkit.text.normalise.normalise_value` (``"3 pm"`` = ``"15:00"``, ``"EUR 25000"`` =
  ``"EUR 25,000"``, ``"15 January 2026"`` = ``"2026-01-15"``); numbers ignore thousands
  separators; quotations ignore case and runs of whitespace. Nothing else is fuzzy;
* a claim that asserts a value but cites nothing fails;
* a claim that copies a run of six or more words from an instruction-shaped sentence of any
  delivered evidence fails, cited or not (untrusted text is evidence, never answer text).

:func:`enforce` turns a failed verification into a marked answer or an exception: an answer
that fails is never passed on as if it were verified.

Example:
    >>> from ragkit.evidence.spans import Evidence
    >>> ev = Evidence.of("policy-v3#cutoffs", "Migrated tenants use 15:00 for the EUR cutoff.",
    ...                  {"doc_id": "policy-v3"})
    >>> verify("Acme's EUR cutoff is 3 pm [policy-v3#cutoffs].", [ev]).ok
    True
    >>> v = verify("The cutoff is 16:00 [policy-v3#cutoffs]. It moved on 15 January.", [ev])
    >>> v.ok, [c.reasons for c in v.claims]
    (False, [["'16:00' is not in the cited span(s) policy-v3#cutoffs"], ["asserts '15' without a citation"]])
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragkit.core.errors import RagkitError, ValidationError
from ragkit.core.ids import doc_of, section_id
from ragkit.core.scope import Scope, as_scope
from ragkit.documents.sections import sections
from ragkit.evidence.spans import Evidence
from ragkit.text.normalise import normalise_value
from ragkit.text.untrusted import looks_like_instruction
from ragkit.text.values import read_values, sentence_spans

__all__ = [
    "CITATION_RE",
    "Citation",
    "ClaimVerdict",
    "Verification",
    "CitationError",
    "parse_citations",
    "verify",
    "enforce",
]

#: An inline citation: ``[doc_id#anchor]``; several may share brackets, ``[a#x; b#y]``.
CITATION_RE = re.compile(
    r"\[((?:[A-Za-z0-9][A-Za-z0-9._:/-]*#[A-Za-z0-9][A-Za-z0-9._~-]*)"
    r"(?:\s*[;,]\s*[A-Za-z0-9][A-Za-z0-9._:/-]*#[A-Za-z0-9][A-Za-z0-9._~-]*)*)\]"
)
_QUOTE = re.compile(r"\"([^\"\n]{3,})\"|“([^”\n]{3,})”")
_NUMBER = re.compile(r"(?<![\w.-])\d[\d,]*(?:\.\d+)?(?![\w-])")
_CHECK_FORMS = ("time", "amount", "date", "id", "person", "percentage", "duration", "count")
_NORMALISED = ("time", "date", "amount")


class CitationError(RagkitError):
    """An answer failed citation verification and :func:`enforce` was asked to raise."""


@dataclass(frozen=True)
class Citation:
    """A parsed citation: ``doc_id#anchor``, with its version and span when it resolved."""

    doc_id: str
    anchor: str
    version: str = ""
    start: int = -1
    end: int = -1

    @property
    def text(self) -> str:
        """``doc_id#anchor``, as an answer writes it."""
        return f"{self.doc_id}#{self.anchor}"

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class ClaimVerdict:
    """One claim (sentence) of an answer: its citations, whether it passed, and why not."""

    text: str
    citations: tuple[Citation, ...]
    ok: bool
    reasons: list[str] = field(default_factory=list)
    checked: tuple[str, ...] = ()


@dataclass
class Verification:
    """Per-claim verdicts; ``ok`` is False if any claim fails."""

    ok: bool
    claims: list[ClaimVerdict]

    @property
    def failures(self) -> list[ClaimVerdict]:
        """The claims that failed."""
        return [c for c in self.claims if not c.ok]

    def __str__(self) -> str:
        lines = [
            f"verification: {'ok' if self.ok else 'FAILED'} ({len(self.failures)}/{len(self.claims)} "
            "claims failed)"
        ]
        for c in self.claims:
            mark = "ok " if c.ok else "BAD"
            lines.append(f"  [{mark}] {c.text}")
            lines += [f"        - {r}" for r in c.reasons]
        return "\n".join(lines)


def parse_citations(text: str) -> list[Citation]:
    """Every ``[doc_id#anchor]`` citation in ``text``, in order.

    Example:
        >>> [str(c) for c in parse_citations("15:00 [policy-v3#cutoffs; ro-7719#result].")]
        ['policy-v3#cutoffs', 'ro-7719#result']
    """
    out = []
    for m in CITATION_RE.finditer(text):
        for part in re.split(r"\s*[;,]\s*", m.group(1)):
            doc_id = doc_of(part)
            # the anchor as written: a chunk number stays in it ("[doc#a~0]" names no section)
            out.append(Citation(doc_id, part[len(doc_id) + 1 :]))
    return out


def _claims(answer: str) -> list[str]:
    """Sentences of the answer; a sentence made only of citations joins the one before it."""
    out: list[str] = []
    for a, b in sentence_spans(answer):
        piece = answer[a:b]
        if out and not CITATION_RE.sub("", piece).strip(" .;,"):
            out[-1] = out[-1] + " " + piece
        else:
            out.append(piece)
    return out


def _ws(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _in_spans(kind: str, surface: str, spans: Sequence[str]) -> bool:
    # (a value a PDF wraps over two lines, "365\ndays' notice", is the "365 days" it states)
    low = _ws(surface)
    if any(low in _ws(s) for s in spans):
        return True
    if kind in _NORMALISED:
        want = normalise_value(kind, surface)
        return any(v.value == want for s in spans for v in read_values(s, kind))
    if kind == "number":
        digits = surface.replace(",", "")
        return any(digits in n.replace(",", "") for s in spans for n in _NUMBER.findall(s))
    return False


_SHINGLE = 6  # words: a run this long copied from an injected instruction is not a coincidence


def _shingles(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9:.%-]+", text.lower())
    return {" ".join(words[i : i + _SHINGLE]) for i in range(max(0, len(words) - _SHINGLE + 1))}


def _instruction_shingles(delivered: Sequence[Evidence]) -> dict[str, str]:
    """Word runs of every instruction-shaped sentence in the delivered evidence -> its citation."""
    out: dict[str, str] = {}
    for ev in delivered:
        for a, b in sentence_spans(ev.text):
            sentence = ev.text[a:b]
            if looks_like_instruction(sentence):
                out.update(dict.fromkeys(_shingles(sentence), ev.citation))
    return out


def _restates(kind: str, surface: str, question: str) -> bool:
    """Whether a claim's value only repeats one the question states (same text or same normalised value)."""
    if surface.lower() in question.lower():
        return True
    if kind in _NORMALISED:
        want = normalise_value(kind, surface)
        return any(v.value == want for v in read_values(question, kind))
    return False


def _resolve(c: Citation, delivered: Sequence[Evidence]) -> list[Evidence]:
    """Delivered spans a citation names: the same ``doc#anchor`` (or chunk of it), and that section
    cut out of a whole document delivered in this run (``retrieve_documents`` of a doc id): a
    search may have delivered one chunk of a section whose rest the whole document holds."""
    text = c.text
    found = [e for e in delivered if e.citation == text or section_id(e.chunk_id) == text]
    for e in delivered:
        if e.doc_id == c.doc_id and not e.anchor:
            for sec in sections(e.text):
                if sec.anchor == c.anchor:
                    start = e.start + sec.start if e.start >= 0 else -1
                    found.append(
                        Evidence(
                            text,
                            e.doc_id,
                            c.anchor,
                            e.text[sec.start : sec.end],
                            e.envelope,
                            start,
                            start + (sec.end - sec.start) if start >= 0 else -1,
                            e.chunk_id,
                            e.query,
                        )
                    )
                    break
            else:
                continue
            break
    return found


def verify(
    answer: str,
    delivered: Sequence[Evidence],
    caller: Scope | Mapping[str, Any] | None = None,
    *,
    question: str | None = None,
) -> Verification:
    """Check every claim of ``answer`` against the evidence delivered in this run.

    Args:
        answer: any answer text with inline ``[doc_id#anchor]`` citations.
        delivered: the :class:`~ragkit.evidence.spans.Evidence` delivered in this run (only these
            resolve; a citation to anything else fails, however real the document is).
        caller: a :class:`~ragkit.core.scope.Scope` or :class:`~ragkit.core.scope.Scope`; cited spans
            must be readable by it (``None``: not checked).
        question: the task as asked, if known. Values the claim merely restates from the question
            (its date, its ticket) are not checked against the spans; everything else is.

    Returns:
        A :class:`Verification` with one :class:`ClaimVerdict` per sentence.
    """
    if not isinstance(answer, str):
        raise ValidationError(f"answer must be a string, got {type(answer).__name__}", field="answer")
    scope = as_scope(caller)
    injected = _instruction_shingles(delivered)
    verdicts: list[ClaimVerdict] = []
    for claim in _claims(answer):
        cites = parse_citations(claim)
        body = CITATION_RE.sub(" ", claim)
        reasons: list[str] = []
        spans: list[str] = []
        resolved: list[Citation] = []
        for c in cites:
            found = _resolve(c, delivered)
            if not found:
                reasons.append(f"citation {c} does not resolve to a span delivered in this run")
                resolved.append(c)
                continue
            ev = found[0]
            resolved.append(Citation(c.doc_id, c.anchor, ev.envelope.version, ev.start, ev.end))
            if scope is not None and not scope.allows(ev.envelope):
                reasons.append(f"citation {c} is outside the caller's scope ({scope})")
                continue
            if ev.envelope.extra.get("injection") or looks_like_instruction(ev.text):
                reasons.append(
                    f"citation {c} is instruction-shaped untrusted content; it cannot support a claim"
                )
                continue
            spans.extend(e.text for e in found)
        items: list[tuple[str, str]] = []
        taken: list[tuple[int, int]] = []
        for m in _QUOTE.finditer(body):
            items.append(("quote", m.group(1) or m.group(2)))
            taken.append(m.span())
        for form in _CHECK_FORMS:
            for v in read_values(body, form):
                if any(a <= v.start < b for a, b in taken):
                    continue
                items.append((v.kind if v.kind in _NORMALISED else form, v.surface))
                taken.append((v.start, v.end))
        for m in _NUMBER.finditer(body):
            if not any(a <= m.start() < b for a, b in taken):
                items.append(("number", m.group(0)))
        if question:
            items = [(k, v) for k, v in items if not _restates(k, v, question)]
        if items and not cites:
            reasons.append("asserts " + ", ".join(repr(s) for _, s in items) + " without a citation")
        elif spans:
            where = ", ".join(str(c) for c in cites)
            for kind, surface in items:
                ok = (
                    _ws(surface) in " ".join(_ws(s) for s in spans)
                    if kind == "quote"
                    else _in_spans(kind, surface, spans)
                )
                if not ok:
                    reasons.append(f"{surface!r} is not in the cited span(s) {where}")
        copied = sorted({src for sh, src in injected.items() if sh in _shingles(body)})
        if copied:
            reasons.append(f"copies instruction-shaped text from untrusted {', '.join(copied)}")
        verdicts.append(
            ClaimVerdict(claim, tuple(resolved), not reasons, reasons, tuple(s for _, s in items))
        )
    return Verification(all(v.ok for v in verdicts), verdicts)


def enforce(answer: str, verification: Verification, *, mode: str = "mark") -> str:
    """Never pass a failed answer as verified: mark it (``mode="mark"``) or raise (``"raise"``).

    A verified answer comes back unchanged. A failed one, with ``mark``, comes back prefixed
    with a notice and each failing claim followed by ``[unverified: reasons]``.

    Raises:
        CitationError: ``mode="raise"`` and a claim failed (the message lists the failures).
        ValidationError: unknown mode.

    Example:
        >>> from ragkit.evidence.spans import Evidence
        >>> ev = Evidence.of("rb#cut", "EUR cutoff 16:00 CET.", {"doc_id": "rb"})
        >>> print(enforce("It is 17:00 [rb#cut].", verify("It is 17:00 [rb#cut].", [ev])))
        UNVERIFIED: 1 of 1 claim(s) failed the citation check.
        It is 17:00 [rb#cut]. [unverified: '17:00' is not in the cited span(s) rb#cut]
    """
    if mode not in ("mark", "raise"):
        raise ValidationError(f"mode={mode!r}; use 'mark' or 'raise'", field="mode")
    if verification.ok:
        return answer
    bad = verification.failures
    if mode == "raise":
        raise CitationError(
            f"{len(bad)} claim(s) failed the citation check: "
            + "; ".join(f"{c.text!r}: {', '.join(c.reasons)}" for c in bad)
        )
    out = []
    for c in verification.claims:
        out.append(c.text if c.ok else f"{c.text} [unverified: {'; '.join(c.reasons)}]")
    head = f"UNVERIFIED: {len(bad)} of {len(verification.claims)} claim(s) failed the citation check."
    return head + "\n" + " ".join(out)
