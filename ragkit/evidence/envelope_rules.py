"""The rules on envelopes: scope, untrusted text, publication, validity, drafts, decoys, supersedes,
conditions.

Rules 1-5 and 7 of :mod:`ragkit.evidence.resolution`, in the order they run: each rejects items of a
:class:`ragkit.evidence.resolution_state.Resolution` with a reason of
:data:`ragkit.evidence.decision.REJECT_REASONS` and says why, or puts what it cannot check in
``to_confirm``. None of them compares values; :mod:`ragkit.evidence.relevant_values` reads those.

Example:
    >>> from ragkit.evidence.spans import Evidence
    >>> old = Evidence.of("rb-1#s", "EUR cutoff 16:00.", {"doc_id": "rb-1", "effective_from": "2025-01-01",
    ...                                                  "effective_to": "2025-12-01"})
    >>> r = Resolution("Which EUR cutoff applies?", [old], "2026-01-19", None)
    >>> apply_gates(r)
    >>> r.items[0].reason, r.items[0].because
    ('expired', 'in effect until 2025-12-01, before as_of')
"""

from __future__ import annotations

from collections import deque

from ragkit.core.records import GLOBAL_TENANT
from ragkit.core.scope import validity
from ragkit.evidence.resolution_state import Item, Resolution, dated_in, iso_day, names_identifier, refers_to
from ragkit.text.asked import asks_future
from ragkit.text.profile import active_profile
from ragkit.text.relevance import COMPLETED, MONTH_NAMES, condition_event, mentions
from ragkit.text.untrusted import looks_like_instruction
from ragkit.text.values import sentence_spans
from ragkit.text.words import letter_stems

__all__ = ["apply_gates", "reject_decoys", "follow_supersedes", "check_conditions"]


def apply_gates(r: Resolution) -> None:
    """Rules 1-4: scope (``other_tenant``, ``acl``), untrusted text, publication and validity at
    ``as_of``, drafts (``not_in_force``) and, for a question about a change to come, sources in
    force; then a source about another tenant than the one the question names."""
    if r.scope is None:
        r.to_confirm.append("no caller given: tenant and ACL scope were not checked")
    if r.moment is None:
        r.to_confirm.append("no as_of given: publication and validity dates were not checked")
    for it in r.items:
        env = it.ev.envelope
        if r.scope is not None and not r.scope.allows(env):
            if r.scope.tenant not in ("*", env.tenant) and env.tenant != GLOBAL_TENANT:
                it.reject(
                    "other_tenant", f"belongs to tenant {env.tenant}; the caller is {r.scope.tenant}"
                )
            else:
                it.reject(
                    "acl",
                    f"restricted to groups {list(env.acl_groups)}; the caller is in "
                    f"{sorted(r.scope.groups) or 'no groups'}",
                )
            continue
        if env.extra.get("injection") or looks_like_instruction(env.title + "\n" + it.ev.text):
            it.reject(
                "untrusted_instruction",
                "carries instruction-shaped text addressed to a reader "
                "or model; kept as evidence of that, never followed, quoted or used as decisive",
            )
            continue
        if r.moment is None:
            it.validity = validity(env, None)
            continue
        if env.published_at is not None and env.published_at > r.moment:
            it.reject(
                "not_yet_published",
                f"published {iso_day(env.published_at)}, after as_of "
                f"{iso_day(r.moment)}: it did not exist at the snapshot",
            )
            continue
        it.validity = validity(env, r.moment)
        if it.validity == "not_yet_valid":
            it.reject(
                "not_yet_effective",
                f"effective from {iso_day(env.effective_from)}, after as_of {iso_day(r.moment)}",
            )
        elif it.validity == "expired":
            if env.superseded_by:
                succ = r.citation_of(env.superseded_by[0])
                it.reject(
                    "superseded",
                    f"in effect until {iso_day(env.effective_to)}; replaced by "
                    f"{', '.join(env.superseded_by)}",
                    succ,
                )
            else:
                it.reject("expired", f"in effect until {iso_day(env.effective_to)}, before as_of")
    _reject_drafts(r)
    for it in r.items:
        if it.state != "rejected" and r.asked_tenants:
            tenant = it.ev.envelope.tenant
            if tenant != GLOBAL_TENANT and tenant not in r.asked_tenants:
                it.reject(
                    "neighbouring_fact",
                    f"is about tenant {tenant}; the question asks about "
                    f"{', '.join(sorted(r.asked_tenants))}",
                )


def _draft_statuses() -> set[str]:
    """The envelope statuses that mark a draft or proposal (the profile's ``draft_statuses``)."""
    return {s.lower() for s in active_profile().draft_statuses}


def _reject_drafts(r: Resolution) -> None:
    """What holds now is stated by a source in force, what is proposed or will apply by a proposal.

    A draft or proposal (its envelope ``status`` is one of the profile's ``draft_statuses``) states
    nothing in force (``not_in_force``), unless the question asks about drafts or proposals. A
    question about what is proposed or what will apply ("What will the threshold be once the June
    revision applies?", "Has a cut to 4% been put forward?") is not answered by a source in force:
    it states what holds now (``neighbouring_fact``)."""
    statuses = _draft_statuses()
    future = asks_future(r.question)
    about_drafts = future or bool(letter_stems(r.question) & letter_stems(" ".join(statuses)))
    for it in r.items:
        status = it.ev.envelope.status.strip().lower()
        if it.state == "rejected":
            continue
        if status in statuses and not about_drafts:
            it.reject("not_in_force", f"its status is '{status}': a proposal, not a rule in force")
        elif status not in statuses and future:
            it.reject("neighbouring_fact", "states what holds now; the question asks what is proposed or "
                      "will apply")


def reject_decoys(r: Resolution) -> None:
    """Lexical decoys: sources that share the question's identifier but are dated outside the
    month the question names ("... had an issue in September 2025"), while another source
    sharing it is dated inside that month."""
    period = r.period
    if period is None or not r.ids:
        return
    sharing = [
        (i, i.ev.envelope.published_at) for i in r.alive() if any(names_identifier(i, x) for x in r.ids)
    ]
    dated = [(i, w) for i, w in sharing if w is not None]
    inside = [i for i, _ in dated if dated_in(i, period)]
    if not inside:
        return
    for it, when in dated:
        # a later record of the same event (a comment closing the ticket) is no decoy
        if any(refers_to(it, i) or refers_to(i, it) for i in inside):
            continue
        if not dated_in(it, period):
            shared = next(x for x in r.ids if mentions(it.ev.envelope.title + "\n" + it.ev.text, x))
            it.reject(
                "lexical_decoy",
                f"shares {shared} with the question but is dated {iso_day(when)}; the question asks "
                f"about {MONTH_NAMES[period[1] - 1].capitalize()} {period[0]}",
                inside[0].ev.citation,
            )


def follow_supersedes(r: Resolution) -> None:
    """Rule 5: a source is ``superseded`` when a successor in the evidence is in effect, following
    chains through ids missing from the evidence; a named successor not delivered is to confirm."""
    alive = r.alive()
    in_effect = {i.ev.doc_id: i for i in alive if i.validity in ("valid", "unknown")}
    for it in alive:
        env = it.ev.envelope
        # successors: named by this envelope, or by any delivered envelope that lists it
        start = set(env.superseded_by) | {
            o.ev.doc_id for o in alive if env.doc_id in o.ev.envelope.supersedes
        }
        queue: deque[tuple[str, tuple[str, ...]]] = deque((s, ()) for s in sorted(start))
        seen: set[str] = set()
        while queue:
            doc_id, missing = queue.popleft()
            if doc_id in seen or doc_id == env.doc_id:
                continue
            seen.add(doc_id)
            succ = in_effect.get(doc_id)
            if succ is not None and succ.validity == "valid":
                gap = f" (through {', '.join(missing)}, not in the evidence)" if missing else ""
                it.reject(
                    "superseded",
                    f"{doc_id} supersedes it{gap} and is in effect at as_of",
                    succ.ev.citation,
                )
                break
            if succ is not None:  # successor of unknown validity: do not assume it is current
                r.to_confirm.append(
                    f"{doc_id} supersedes {env.doc_id} but has no effective_from: "
                    f"confirm whether it is in effect at as_of"
                )
                continue
            if any(i.ev.doc_id == doc_id for i in r.items):
                continue  # delivered but not in effect (not yet effective, out of scope...)
            nxt = {o.ev.doc_id for o in alive if doc_id in o.ev.envelope.supersedes}
            if not nxt and doc_id in env.superseded_by:
                r.to_confirm.append(
                    f"{env.doc_id} names {doc_id} as its successor, which is not in the "
                    f"evidence: confirm whether {doc_id} is in effect at as_of"
                )
            queue.extend((n, (*missing, doc_id)) for n in sorted(nxt))


def check_conditions(r: Resolution) -> None:
    """Rule 7: a condition (``until cutover``) ended by a later record of at least the same
    authority rejects the source as ``condition_met``; one never ended keeps the exception open."""
    for it in r.alive():
        env = it.ev.envelope
        for cond in env.conditions:
            event = condition_event(cond)
            if event is None:
                r.to_confirm.append(
                    f"whether the condition '{cond}' of {env.doc_id} still holds (not of the form "
                    "'until <event>' / 'for non-<event> ...', so no record can be checked against it)"
                )
                continue
            ender = _ender(r, it, event)
            if ender is None:
                continue
            rec, sentence = ender
            it.reject(
                "condition_met",
                f"its condition '{cond}' ended: {rec.ev.doc_id} "
                f"({rec.ev.envelope.authority}, {iso_day(rec.ev.envelope.published_at)}) records "
                f'"{sentence}"',
                rec.ev.citation,
            )
            if rec.state == "open":
                rec.select("qualifier", f"ends the condition '{cond}' of {env.doc_id}: \"{sentence}\"")
            break
        it.exception_open = bool(env.conditions) and it.state != "rejected"


def _ender(r: Resolution, cond: Item, event: str) -> tuple[Item, str] | None:
    env = cond.ev.envelope
    for other in r.alive():
        o = other.ev.envelope
        if other is cond or other.rank < cond.rank:
            continue
        if env.published_at and o.published_at and o.published_at <= env.published_at:
            continue
        for a, b in sentence_spans(other.ev.text):
            sentence = other.ev.text[a:b]
            words = letter_stems(sentence)
            if event not in words or not COMPLETED.search(sentence):
                continue
            if env.tenant != GLOBAL_TENANT and not (
                o.tenant == env.tenant or mentions(sentence, env.tenant)
            ):
                continue
            if env.tenant != GLOBAL_TENANT and o.tenant not in (env.tenant, GLOBAL_TENANT):
                continue
            return other, sentence
    return None
