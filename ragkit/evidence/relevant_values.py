"""Rule 6, relevance: the value each source states about the question, with the sentence it rests on.

For every item still open, :func:`read_relevant_values` reads the values of the asked forms
(:func:`ragkit.text.values.asked_forms`; for a free-text question, its sentences) and keeps the one
whose sentence, situated by its section heading and table header
(:func:`ragkit.text.relevance.context`), shares the most with the question: its content-word stems
(:data:`ragkit.text.words.SAME_MEANING` classes match each other), the tenant or identifiers it
names, the source's own condition. Values the question names, headings, column headers, statuses
outside a status field, values stated for another code (``| DKK | 10:30 |`` for a CHF question),
identifiers of another shape and, for a why-question, non-causal sentences are not answers.
When no value anywhere relates to the question's words, only sources that the question's
identifiers lead to by links keep theirs.

Example:
    >>> from ragkit.evidence.spans import Evidence
    >>> ev = Evidence.of("rb-1#s", "GBP cutoff 14:30. EUR cutoff 16:00.", {"doc_id": "rb-1"})
    >>> r = Resolution("Which EUR cutoff applies?", [ev], None, None)
    >>> read_relevant_values(r)
    >>> r.items[0].value.surface, sorted(r.items[0].matched)
    ('16:00', ['EUR'])
"""

from __future__ import annotations

import re

from ragkit.evidence.resolution_state import Item, Resolution, names_identifier, refers_to
from ragkit.text.normalise import normalise_value
from ragkit.text.relevance import (
    CAUSE,
    CODE,
    DEONTIC,
    DETECTION,
    NOT_CODES,
    ROOT_CAUSE,
    context,
    is_heading_or_table_head,
    mentions,
)
from ragkit.text.values import Value, read_values, sentence_at, sentence_spans
from ragkit.text.words import id_shape, word_stems

__all__ = ["read_relevant_values"]


def read_relevant_values(r: Resolution) -> None:
    """Read each open item's relevant value into ``value``, ``score`` and ``matched`` (rule 6)."""
    for it in r.alive():
        best: tuple[float, Value, frozenset[str]] | None = None
        text = it.ev.text
        values = (
            read_values(text, forms=r.forms)
            if r.forms
            else [
                Value("text", normalise_value("text", text[a:b]), text[a:b], a, b, "text")
                for a, b in sentence_spans(text)
                if not is_heading_or_table_head(text, a, b)
            ]
        )
        for v in values:
            if r.forms and mentions(r.question, v.surface):
                continue  # a value the question itself names (its ticket, its date) is not the answer
            if r.shape and v.form == "id" and id_shape(v.surface) != r.shape:
                continue  # "which commit" is answered by a hash, not by an account or a ticket key
            if r.codes and not _about_asked_code(r, text, v.start):
                it.off_code = True
                continue  # "| DKK | 10:30 |" does not answer a question about CHF
            a, b = sentence_at(text, v.start) if r.forms else (v.start, v.end)
            sentence = text[a:b]
            if sentence.lstrip().startswith("#") or is_heading_or_table_head(text, a, b):
                continue  # a heading (a timestamp, a section title) or a column header is no claim
            if v.form == "status" and not re.search(r"\b(status|state|result)\b", sentence, re.I):
                continue  # a status is stated by a status field; "until this is closed" states none
            situated = sentence + "\n" + context(text, a)
            matched = word_stems(situated) & r.predicate
            conditional = any(c.lower() in sentence.lower() for c in it.ev.envelope.conditions)
            score = float(len(matched)) + (2 if conditional else 0)
            if score > 0 and any(mentions(sentence, t) for t in r.asked_tenants):
                score += 1
            named = {e for e in r.entities if mentions(situated, e)} | (
                {"@condition"} if conditional else set()
            )
            score += sum(1 for x in r.ids if x != v.surface and mentions(sentence, x))
            if (
                not r.forms
                and r.causal
                and (not CAUSE.search(sentence) or DETECTION.search(sentence))
            ):
                continue  # a why-question is answered by a causal statement, or not at all
            if not r.forms and r.causal:
                score += 2
                if ROOT_CAUSE.search(sentence):
                    score += 2  # and best by the one that says it is the root cause
            if not r.forms and r.deontic and DEONTIC.search(sentence):
                score += 2  # "what does the policy require?" is answered by what it says must happen
            if best is None or score > best[0]:
                best = (score, v, frozenset(named))
        if best is not None:
            it.score, it.value, it.matched = best
    holders = [i for i in r.alive() if i.value is not None]
    if any(i.score > 0 for i in holders):
        keep = {id(i) for i in holders if i.score > 0}
    else:
        # nothing relates to the question's words: only values in sources the question's
        # identifiers lead to ("follow OPS-1891 to the policy: what limit does it set?") count
        keep = {id(i) for i in _linked_from_named(r)}
    for i in holders:
        if id(i) not in keep:
            i.value = None


def _linked_from_named(r: Resolution) -> list[Item]:
    """Sources reached by links from a source that names one of the question's identifiers."""
    alive = r.alive()
    frontier = [i for i in alive if any(names_identifier(i, x) for x in r.ids)]
    seen = {id(i) for i in frontier}
    reached: list[Item] = []
    while frontier:
        cur = frontier.pop()
        for nxt in alive:
            if id(nxt) not in seen and refers_to(cur, nxt):
                seen.add(id(nxt))
                reached.append(nxt)
                frontier.append(nxt)
    return reached


def _about_asked_code(r: Resolution, text: str, position: int) -> bool:
    """False when the value's sentence (with its heading and table header) names another code
    (``DKK``) but none the question names (``CHF``); True otherwise."""
    a, b = sentence_at(text, position)
    situated = text[a:b] + "\n" + context(text, a)
    named = {c for c in re.findall(CODE, situated) if c not in NOT_CODES}
    return not named or bool(named & r.codes)
