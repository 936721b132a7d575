"""Rule 8: which stated value wins: neighbouring facts, open exceptions, authority, then dates.

:func:`decide` compares the values that :mod:`ragkit.evidence.relevant_values` kept. A value stated
about fewer of the things the question names is a ``neighbouring_fact``; an open conditional
exception beats a general rule (``exception_applies``); a source of lower
:data:`ragkit.core.records.AUTHORITY_RANK` is ``lower_authority``; among equal authority the later
effective date wins (and the record asks to confirm it); equal authority and equal dates, or a
higher-ranked source of unknown validity against one in effect, stay ``unresolved``.

Example:
    >>> from ragkit.evidence.relevant_values import read_relevant_values
    >>> from ragkit.evidence.spans import Evidence
    >>> rule = Evidence.of("pol-1#s", "EUR cutoff 15:00.", {"doc_id": "pol-1", "authority": "policy_owner"})
    >>> old = Evidence.of("rb-1#s", "EUR cutoff 16:00.", {"doc_id": "rb-1", "authority": "operations"})
    >>> r = Resolution("Which EUR cutoff applies?", [old, rule], None, None)
    >>> read_relevant_values(r)
    >>> decide(r).ev.doc_id, r.items[0].reason
    ('pol-1', 'lower_authority')
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragkit.core.records import GLOBAL_TENANT
from ragkit.evidence.decision import Conflict
from ragkit.evidence.resolution_state import Item, Resolution, dated_in, iso_day
from ragkit.text.profile_views import ProfileMap
from ragkit.text.relevance import question_terms
from ragkit.text.values import sentence_at
from ragkit.text.words import word_stems

#: Source types that state standing rules (the profile's ``source_roles["rule"]``).
RULE_TYPES: ProfileMap[tuple[str, ...]] = ProfileMap("source_roles")

__all__ = ["decide"]


def decide(r: Resolution) -> Item | None:
    """The decisive item (rule 8), or ``None`` when nothing states a value or a conflict stays
    unresolved; rejects the values that lose and selects those that agree as ``support``."""
    holders = [
        i
        for i in r.alive()
        if i.value is not None and i.state == "open" or i.value is not None and i.state == "selected"
    ]
    if not holders:
        return None
    if r.forms and r.fit is not None:
        _not_answering(r, holders)
        holders = [h for h in holders if h.state != "rejected"]
    if r.forms:  # a value stated about fewer of the things the question names is a neighbouring fact
        for b in holders:
            # (not within one document: its sections share what its title names)
            wider = [
                a for a in holders if a.state != "rejected" and a.val != b.val and b.matched < a.matched
                and a.ev.doc_id != b.ev.doc_id
            ]
            if wider:
                a = max(wider, key=lambda i: len(i.matched))
                missing = ", ".join(sorted(t for t in a.matched - b.matched if not t.startswith("@")))
                b.reject(
                    "neighbouring_fact",
                    f"states {b.surface} without naming {missing}, which the question names and "
                    f"{a.ev.doc_id} states {a.surface} for",
                    a.ev.citation,
                )
        holders = [h for h in holders if h.state != "rejected"]
        _fewer_words(holders)
        holders = [h for h in holders if h.state != "rejected"]
    exceptions = [i for i in holders if i.exception_open]
    if exceptions:
        values = {i.value.value for i in exceptions if i.value}
        if len(values) > 1:  # two open exceptions that disagree: nothing ranks them
            _disagreeing(r, exceptions, lambda a, b: f"two open conditional exceptions state {a.surface} and "
                         f"{b.surface}")
            r.to_confirm.append(
                "which of the open exceptions " + ", ".join(i.ev.citation for i in exceptions) + " holds"
            )
            return None
        if len(values) == 1:
            exc = max(exceptions, key=lambda i: (i.rank, i.when))
            for h in holders:
                if h in exceptions or h.value is None or h.val == exc.val:
                    continue
                if h.ev.envelope.tenant == GLOBAL_TENANT:
                    h.reject(
                        "exception_applies",
                        f"a general rule ({h.surface}); the conditional "
                        f"exception of {exc.ev.doc_id} ('{exc.ev.envelope.conditions[0]}') has not "
                        f"ended by as_of",
                        exc.ev.citation,
                    )
            holders = [h for h in holders if h.state != "rejected"]
    if not r.forms:  # free text: no value comparison is possible; a sentence that relates to the
        # question at most half as much as another answers nothing (two sentences are not two values
        # of one fact), then authority and date decide ("| acme-31325 | PLN | Quarry Street Bank |"
        # for "which bank is acme-31325 held at?", not a ticket's "the bank rejected the file")
        top = max(i.score for i in holders)
        return max((i for i in holders if 2 * i.score > top or i.score == top),
                   key=lambda i: (i.rank, i.score, i.when))
    top = max(i.rank for i in holders)
    best = [i for i in holders if i.rank == top]
    values = {i.value.value for i in best if i.value}
    if len(values) > 1:
        kept = _tie_break(r, best)
        if kept is None:
            for h in holders:
                if h.rank < top and h.state == "open":
                    lead = next(i for i in holders if i.rank == top)
                    h.reject(
                        "lower_authority",
                        f"{h.ev.envelope.authority} states {h.surface}; "
                        f"{lead.ev.envelope.authority} sources rank higher",
                        lead.ev.citation,
                    )
            return None
        best = kept
    winner = max(
        best,
        key=lambda i: (
            i.exception_open,
            i.validity == "valid",
            i.ev.envelope.tenant != GLOBAL_TENANT,
            i.score,
            i.when,
        ),
    )
    known = [h for h in holders if h.validity == "valid" and h.value and h.val != winner.val]
    if winner.validity == "unknown" and known:
        for h in known[:1]:
            r.unresolved.append(
                Conflict(
                    winner.ev.citation,
                    h.ev.citation,
                    f"{winner.ev.doc_id} ranks higher ({winner.ev.envelope.authority}) "
                    f"but its validity is unknown; {h.ev.doc_id} is in effect and states "
                    f"{h.surface}",
                )
            )
        r.to_confirm.append(f"whether {winner.ev.doc_id} is in effect at as_of (no effective_from)")
        return None
    for h in holders:
        if h is winner or h.value is None or h.state == "rejected":
            continue
        if h.val == winner.val:
            if h.state == "open":
                h.select("support", f"states the same value ({h.surface})")
        elif h.rank < winner.rank:
            h.reject(
                "lower_authority",
                f"{h.ev.envelope.authority} (rank {h.rank}) states {h.surface}; "
                f"{winner.ev.doc_id} is {winner.ev.envelope.authority} (rank {winner.rank})",
                winner.ev.citation,
            )
    return winner


def _about(r: Resolution, item: Item) -> tuple[bool, int]:
    """How much ``item`` is about the question: dated in the month the question names ("met in
    July 2026"), then its sentence's and its title's shared words."""
    return dated_in(item, r.period), int(item.score) + len(word_stems(item.ev.envelope.title) & r.predicate)


def _records_of_other_events(r: Resolution, best: list[Item]) -> None:
    """Among records of events of equal authority, the one most about the question states its answer.

    A later rule replaces an earlier one; a later record of an event (a review, a ticket) does not
    replace the record of another event. When every source that disagrees is such a record (no
    source type of the profile's ``rule`` role), the one dated in the month the question names,
    else the one whose sentence and title share the most with the question, wins ("the Acme
    rounding drift review" against a later review of another incident); the others state a
    ``neighbouring_fact``. A tie is left to the dates.
    """
    rules = set(RULE_TYPES.get("rule") or ())
    if len({i.val for i in best}) < 2 or any(i.ev.envelope.source_type in rules for i in best):
        return
    ranked = sorted(best, key=lambda i: _about(r, i), reverse=True)
    lead = ranked[0]
    if _about(r, lead) == _about(r, ranked[1]):
        return
    for i in ranked[1:]:
        if i.val != lead.val:
            i.reject(
                "neighbouring_fact",
                f"a record of another event states {i.surface}; {lead.ev.doc_id} is about the question "
                f"and states {lead.surface}",
                lead.ev.citation,
            )


def _fewer_words(holders: list[Item]) -> None:
    """Reject values whose sentence relates to the question less than half as much as another's.

    Authority and dates arbitrate between sources that state the same fact. "A manual
    adjustment above EUR 20,000 needs a second approver" shares one word with "Which manual
    payout limit applies?", "The manual payout limit is EUR 100,000" shares four: a handbook's
    higher authority does not make the first an answer. Its value is a ``neighbouring_fact``.
    """
    lead = max(holders, key=lambda i: i.score, default=None)
    if lead is None or lead.score <= 1:
        return
    for h in holders:
        if h.state != "rejected" and 2 * h.score < lead.score and h.val != lead.val:
            h.reject(
                "neighbouring_fact",
                f"states {h.surface} in a sentence that relates to the question less than half as "
                f"much as {lead.ev.doc_id}'s ({lead.surface})",
                lead.ev.citation,
            )


def _not_answering(r: Resolution, holders: list[Item]) -> None:
    """Reject values whose sentence does not answer the question when another source's does.

    Authority and dates arbitrate between sources that state the same fact. A sentence the
    cross-encoder finds not answering the question (its fit below the threshold) that also
    shares fewer of the question's words than one that does answer ("a held payout of
    EUR 14,050" against "the second-approver threshold is EUR 25,000" for "Can I approve a
    EUR 30,000 refund on my own?") states another fact of the same kind: a ``neighbouring_fact``,
    whatever its authority or date.
    """
    assert r.fit is not None
    answering = [h for h in holders if h.fit >= r.fit.threshold]
    if not answering:
        return
    lead = max(answering, key=lambda i: (i.score, i.fit))
    for h in holders:
        if h.fit < r.fit.threshold and h.score < lead.score and h.val != lead.val:
            h.reject(
                "neighbouring_fact",
                f"states {h.surface} in a sentence that does not answer the question; "
                f"{lead.ev.doc_id} answers it ({lead.surface})",
                lead.ev.citation,
            )


def _tie_break(r: Resolution, best: list[Item]) -> list[Item] | None:
    _records_of_other_events(r, best)
    best = [i for i in best if i.state != "rejected"]
    latest = max(i.when for i in best)
    front = [i for i in best if i.when == latest]
    if len({i.value.value for i in front if i.value}) > 1 and len({i.ev.doc_id for i in front}) == 1:
        # one document does not contradict itself: of its sections, the one whose sentence speaks
        # to the question best (shared words, then the cross-encoder's fit) states the answer
        lead = max(front, key=lambda i: (i.score, i.fit))
        for i in front:
            if i is not lead and i.val != lead.val:
                i.reject(
                    "neighbouring_fact",
                    f"states {i.surface}; the same document states {lead.surface} in a sentence "
                    "closer to the question",
                    lead.ev.citation,
                )
        return [i for i in best if i.state != "rejected"]
    if len({i.value.value for i in front if i.value}) > 1:
        for a, b in zip(front, front[1:], strict=False):
            r.unresolved.append(
                Conflict(
                    a.ev.citation,
                    b.ev.citation,
                    f"equal authority ({a.ev.envelope.authority}) and equal dates "
                    f"({iso_day(latest)}), different values: {a.surface} vs "
                    f"{b.surface}",
                )
            )
        r.to_confirm.append("which of " + ", ".join(i.ev.citation for i in front) + " governs")
        return None
    answering = _other_subjects(r, front[0], best)
    if answering is None:
        return None
    lead = answering
    for i in best:
        if i.state != "rejected" and i.value and lead.value and i.value.value != lead.value.value:
            i.reject(
                "superseded",
                f"equal authority ({i.ev.envelope.authority}); {lead.ev.doc_id} is effective "
                f"later ({iso_day(lead.when)}) and states {lead.surface}",
                lead.ev.citation,
            )
            r.to_confirm.append(
                f"that {lead.ev.doc_id} replaces {i.ev.doc_id} (no supersedes link; "
                "decided by the later effective date)"
            )
    return [i for i in best if i.state != "rejected"]


def _same_subject(a: Item, b: Item) -> bool:
    """Whether two sources may be versions of one document: the same document, a ``supersedes``
    link either way, the same title once version words and numbers are set aside, or envelopes
    that do not name different things (no entities, or one's entities among the other's). A
    contract with Kestrel Bank and one with Northbank each name a party the other does not."""
    ea, eb = a.ev.envelope, b.ev.envelope
    if a.ev.doc_id == b.ev.doc_id or a.ev.doc_id in (*eb.supersedes, *eb.superseded_by):
        return True
    if b.ev.doc_id in (*ea.supersedes, *ea.superseded_by):
        return True
    if not ea.title or not eb.title or _unversioned(ea.title) == _unversioned(eb.title):
        return True
    x, y = set(ea.entities), set(eb.entities)
    return not x or not y or x <= y or y <= x


def _unversioned(title: str) -> str:
    return " ".join(re.sub(r"\b(v(ersion)?\s*\d+(\.\d+)*|\d+)\b", " ", title.lower()).split())


def _other_subjects(r: Resolution, lead: Item, best: list[Item]) -> Item | None:
    """Between documents that are not versions of one another, a later date replaces nothing.

    Payment-services agreements with two banks, of equal authority, state two availability
    figures: the later agreement does not supersede the earlier one, it is about another party.
    Among the values stated by sources of another subject than the latest one, the source whose
    sentence relates most to the question (most of its words, then fewest others) answers it (the
    others state a ``neighbouring_fact``);
    when two of them relate equally and disagree, nothing ranks them: the conflict stays
    unresolved (``None`` is returned and the record asks which the question is about). Returns the
    source whose versions the dates then arbitrate: ``lead``, or the other subject's that answers.
    """
    others = [i for i in best if i.val != lead.val and not _same_subject(i, lead)]
    if not others:
        return lead
    # most of the question's words, then fewest words about other things ("A manual adjustment
    # above EUR 15,000 to a posted batch needs ... a second approver" against "Second-approver
    # threshold: EUR 40,000" for "what is the second-approver threshold?")
    # and, between those, the document whose title names more of what the question does, the
    # row it was read as being about included ("... euro account? (Quarry Street Bank)")
    asked = question_terms(r.question)
    related = {
        id(i): (i.score, -_elsewhere(r, i), len(word_stems(i.ev.envelope.title) & asked))
        for i in [lead, *others]
    }
    top = max(related.values())
    leaders = [i for i in [lead, *others] if related[id(i)] == top]
    if len({i.val for i in leaders}) > 1:
        _disagreeing(
            r, leaders,
            lambda a, b: f"equal authority ({a.ev.envelope.authority}), documents about different subjects "
            f"({a.ev.doc_id}, {b.ev.doc_id}) relate equally to the question: {a.surface} vs {b.surface}",
        )
        cited = ", ".join(i.ev.citation for i in leaders)
        r.to_confirm.append(f"which of {cited} the question is about")
        return None
    winner = leaders[0]
    for i in best:
        if i.val != winner.val and i.state != "rejected" and not _same_subject(i, winner):
            i.reject(
                "neighbouring_fact",
                f"a document about another subject than {winner.ev.doc_id} states {i.surface} in a "
                "sentence that relates less to the question",
                winner.ev.citation,
            )
    return winner


def _elsewhere(r: Resolution, item: Item) -> int:
    """How many content words of the sentence ``item``'s value stands in the question does not use."""
    if item.value is None:
        return 0
    a, b = sentence_at(item.ev.text, item.value.start)
    return len(word_stems(item.ev.text[a:b]) - r.terms - r.predicate)


def _disagreeing(r: Resolution, items: list[Item], why: Callable[[Item, Item], str]) -> None:
    """Record an unresolved conflict for each neighbouring pair of ``items`` that disagree."""
    for a, b in zip(items, items[1:], strict=False):
        if a.val != b.val:
            r.unresolved.append(Conflict(a.ev.citation, b.ev.citation, why(a, b)))
