"""Evidence resolution: from retrieved evidence to an auditable decision record (CURRICULUM 7).

The wrong evidence can be perfectly cited. Asked which EUR cutoff applies to Acme on
19 January 2026, retrieval delivers a ticket comment ("Acme stays on 16:00 until
cutover"), runbook v2 (16:00), policy v3 (15:00 for migrated tenants) and the rollout
record of Acme's cutover. :func:`resolve` decides between them with deterministic rules
over the evidence envelopes and the values read out of the cited spans, and returns a
:class:`DecisionRecord`: the decision (value and the characters it rests on), what was
selected and why, what was rejected, why and on whose evidence, what stays unresolved,
and what to confirm. It never decides a conflict silently.

The rules, in order (each rejection names a reason of :data:`ragkit.evidence.decision.REJECT_REASONS`),
live in modules of their own: 1-5 and 7 in :mod:`ragkit.evidence.envelope_rules`, 6 in
:mod:`ragkit.evidence.relevant_values`, 8 in :mod:`ragkit.evidence.authority`, 9 in
:mod:`ragkit.evidence.roles`; they work on a :class:`ragkit.evidence.resolution_state.Resolution`.

1. **scope**: evidence the caller may not read is rejected (``other_tenant``, ``acl``) and
   never used for anything else.
2. **untrusted**: instruction-shaped text (:func:`ragkit.text.untrusted.looks_like_instruction`)
   or ``extra.injection`` -> ``untrusted_instruction``; its text is never quoted.
3. **publication**: published after ``as_of`` -> ``not_yet_published``.
4. **validity**: ``effective_from`` after ``as_of`` -> ``not_yet_effective``; ``effective_to``
   at or before ``as_of`` -> ``superseded`` (a successor is named) or ``expired``. No
   ``effective_from`` means validity *unknown*: kept, said, never assumed current. A draft or
   proposal (envelope ``status`` in the profile's ``draft_statuses``) -> ``not_in_force``,
   unless the question asks about drafts or proposals; a question about what is proposed or
   will apply ("going up to EUR 40,000 from June?") is not answered by a source in force
   (``neighbouring_fact``: it states what holds now).
4b. **lexical decoys**: when the question places its event in a month ("in September 2025"),
   a source that shares the question's identifier but is dated in another month, while a
   source sharing it is dated in that month, is ``lexical_decoy`` (unless it belongs to the
   same thread: a comment closing the ticket a week later is the same event).
5. **supersedes chains**: a source is ``superseded`` when a successor in the evidence is in
   effect. Chains are followed through ids missing from the evidence (A supersedes B, B
   supersedes C, only A and C delivered: C is superseded by A, and the record says B was
   missing). A named successor that is not in the evidence is put in ``to_confirm``.
6. **relevance**: the values of the asked kind (:func:`ragkit.text.asked.asked_forms`) are read
   from each span, each with its sentence (situated by the section heading and, for a table
   row, the table header). A value counts when its sentence shares a content word with the
   question, names the question's tenant or identifier, or states the source's own condition;
   if no value anywhere does, every value counts. Values the question itself names (its
   ticket, its date), values in headings (a comment's timestamp) and in a table's header row
   are not answers; a status is read only from a status field ("Status: blocked"), not from
   prose ("until this is closed"). Words of one meaning (:data:`ragkit.text.words.SAME_MEANING`:
   finished/completed, rolled out/deployed) match each other. A value
   stated without a code, identifier or tenant the question names (``GBP cutoff 14:30`` for
   an EUR question), against another value that names it, is a ``neighbouring_fact``; so is
   a source about another tenant than the one the question names, and one that holds no
   relevant value and leads nowhere (rule 9). A value in a sentence that names another code
   (``| DKK | 10:30 |``) but none the question names (``CHF``) does not answer it. When no value
   anywhere relates to the question's words, only values in sources that the question's
   identifiers lead to (by links) count. Identifier questions keep identifiers of the asked
   shape (:func:`ragkit.text.asked.asked_id_shape`: a commit is a hash, a rollout a key).
   Free-text questions (why, what caused) take the best-matching *causal* sentence (none:
   insufficient); "what does it require" prefers a sentence that says what must happen;
   sentences are not compared as values.
7. **conditions** (envelope ``conditions`` such as ``until cutover`` or ``for non-migrated
   tenants``): a later in-scope record of at least the same authority, for the same tenant,
   that states the event completed ("Cutover completed for acme") ends the condition ->
   ``condition_met`` (that record is selected as the qualifier). A condition never ended
   keeps the exception in force: a general (global) rule stating another value is rejected
   as ``exception_applies``.
8. **authority**: among the rest, a value stated by a source of lower
   :data:`ragkit.core.records.AUTHORITY_RANK` than the best source is ``lower_authority``. Equal
   authority with different values: the later effective date wins and the record asks to
   confirm it; equal authority and equal dates -> both sides go to ``unresolved`` and the
   status is ``conflict``. A higher-ranked source of unknown validity against a lower-ranked
   one in effect is unresolved too.
9. **links**: sources on the link path from an identifier named in the question to the
   decisive source are selected as hops; a completion record for the question's tenant whose
   event the decisive source depends on is selected as a qualifier; a source that states the
   same value, or links to the decisive source, is selected as support.

Example:
    >>> rule = Evidence.of("pol-1#cutoff", "Tenants use 15:00 for the EUR cutoff.",
    ...                    {"doc_id": "pol-1", "authority": "policy_owner", "effective_from": "2026-01-01"})
    >>> old = Evidence.of("rb-1#cutoff", "EUR cutoff 16:00 CET.",
    ...                   {"doc_id": "rb-1", "authority": "operations", "effective_from": "2025-10-12"})
    >>> record = resolve("Which EUR cutoff applies on 19 January 2026?", [old, rule], as_of="2026-01-19")
    >>> record.status, record.decision.value, [(r.doc_id, r.reason) for r in record.rejected]
    ('decided', '15:00', [('rb-1', 'lower_authority')])
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from ragkit.core.scope import Scope
from ragkit.documents.sections import sections
from ragkit.evidence.authority import decide
from ragkit.evidence.decision import Decision, DecisionRecord, Rejected, Selected
from ragkit.evidence.envelope_rules import apply_gates, check_conditions, follow_supersedes, reject_decoys
from ragkit.evidence.fit import SentenceFit
from ragkit.evidence.relevant_values import read_relevant_values
from ragkit.evidence.resolution_state import Item, Resolution, iso_day
from ragkit.evidence.roles import assign_roles
from ragkit.evidence.spans import Evidence
from ragkit.text.values import sentence_at

__all__ = ["resolve"]


def resolve(
    question: str,
    evidence: Sequence[Evidence],
    as_of: str | dt.date | None = None,
    caller: Scope | Mapping[str, Any] | None = None,
    *,
    fit: SentenceFit | None = None,
) -> DecisionRecord:
    """Resolve delivered evidence into a :class:`DecisionRecord` (rules in the module docstring).

    Args:
        question: the task as asked; it decides the kind of value (:func:`ragkit.text.asked.asked_kind`),
            the tenant it is about and the identifiers it names.
        evidence: the delivered spans (excerpts of one citation are read as one, :meth:`Evidence.joined`).
        as_of: the snapshot time (ISO date or datetime; a bare date means midnight UTC, as
            everywhere in ragkit).
            ``None`` skips date checks and says so in ``to_confirm``.
        caller: a :class:`ragkit.core.scope.Scope` or ``None`` (scope not checked; said in
            ``to_confirm``).
        fit: a :class:`ragkit.evidence.fit.SentenceFit`: a value whose sentence the cross-encoder
            finds answering the question is relevant even when it shares no word with it (rule 6).
            ``None`` (the default): relevance by shared words only, no model loaded.

    Raises:
        ValidationError: empty question, evidence that is not :class:`Evidence`, a bad date or caller.
    """
    r = Resolution(question, evidence, as_of, caller, fit)
    apply_gates(r)
    reject_decoys(r)
    follow_supersedes(r)
    check_conditions(r)
    read_relevant_values(r)
    winner = decide(r)
    if winner is not None:
        _make_decisive(r, winner)
    assign_roles(r, winner)
    return _record(r, winner)


def _make_decisive(r: Resolution, winner: Item) -> None:
    """Select ``winner`` as the decisive source and say why."""
    winner.state, winner.reason, winner.by = "selected", "", None
    env = winner.ev.envelope
    since = (
        f"in effect since {iso_day(env.effective_from)}"
        if winner.validity == "valid"
        else "validity unknown (no effective_from)"
    )
    winner.role = "decisive"
    winner.because = f"{env.authority}, {since}; states {winner.surface}"
    if winner.exception_open:
        winner.because += f" under its open condition '{env.conditions[0]}'"
    if winner.validity == "unknown":
        r.to_confirm.append(
            f"whether {winner.ev.doc_id} is in effect at as_of (no effective_from)"
        )


def _record(r: Resolution, winner: Item | None) -> DecisionRecord:
    """The decision record of ``r`` once every rule has run."""
    decision = None
    if winner is not None and winner.value is not None:
        v, ev = winner.value, winner.ev
        a, b = sentence_at(ev.text, v.start)
        quote = ev.text[a:b] if b > a else v.surface
        offset = ev.start if ev.start >= 0 else None
        decision = Decision(
            kind=v.kind,
            value=v.value,
            surface=v.surface,
            citation=_section_citation(ev, v.start),
            doc_id=ev.doc_id,
            start=v.start + offset if offset is not None else -1,
            end=v.end + offset if offset is not None else -1,
            quote=quote,
            version=ev.envelope.version,
            validity=winner.validity,
        )
    elif not r.unresolved:
        what = "/".join(r.forms) or "text"
        r.to_confirm.append(
            f"no in-scope evidence in effect at as_of states the {what} value asked for: "
            "search for the source that states it, or confirm with its owner"
        )
    order = {id(i): n for n, i in enumerate(r.items)}
    roles = {"decisive": 0, "qualifier": 1, "hop": 2, "support": 3}
    selected = [
        Selected(
            i.ev.citation,
            i.ev.doc_id,
            i.role,
            i.because,
            i.value.value if i.value is not None and i.role != "hop" else None,
        )
        for i in sorted(
            (i for i in r.items if i.state == "selected"),
            key=lambda i: (roles.get(i.role, 9), order[id(i)]),
        )
    ]
    rejected = [
        Rejected(i.ev.citation, i.ev.doc_id, i.reason, i.because, i.by)
        for i in r.items
        if i.state == "rejected"
    ]
    as_of = None
    if r.moment is not None:  # midnight prints as the date alone
        midnight = r.moment.time() == dt.time(0)
        as_of = r.moment.date().isoformat() if midnight else r.moment.isoformat()
    return DecisionRecord(
        question=r.question,
        as_of=as_of,
        asked=r.kind,
        decision=decision,
        selected=tuple(selected),
        rejected=tuple(rejected),
        unresolved=tuple(r.unresolved),
        to_confirm=tuple(dict.fromkeys(r.to_confirm)),
    )


def _section_citation(ev: Evidence, position: int) -> str:
    """The citation of a span; for a whole delivered document, ``doc#anchor`` of the section holding
    ``position`` (answers cite sections, ``[doc_id#anchor]``)."""
    if ev.anchor:
        return ev.citation
    inside = [s for s in sections(ev.text) if s.start <= position < s.end]
    return f"{ev.doc_id}#{inside[-1].anchor}" if inside else ev.citation
