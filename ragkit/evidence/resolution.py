"""Evidence resolution: from retrieved evidence to an auditable decision record (CURRICULUM 7).

The wrong evidence can be perfectly cited. Asked which EUR cutoff applies to Acme on
19 January 2026, retrieval delivers a ticket comment ("Acme stays on 16:00 until
cutover"), runbook v2 (16:00), policy v3 (15:00 for migrated tenants) and the rollout
record of Acme's cutover. :func:`resolve` decides between them with deterministic rules
over the evidence envelopes and the values read out of the cited spans, and returns a
:class:`DecisionRecord`: the decision (value and the characters it rests on), what was
selected and why, what was rejected, why and on whose evidence, what stays unresolved,
and what to confirm. It never decides a conflict silently.

The rules, in order (each rejection names a reason of :data:`ragkit.evidence.decision.REJECT_REASONS`):

1. **scope**: evidence the caller may not read is rejected (``other_tenant``, ``acl``) and
   never used for anything else.
2. **untrusted**: instruction-shaped text (:func:`ragkit.text.untrusted.looks_like_instruction`)
   or ``extra.injection`` -> ``untrusted_instruction``; its text is never quoted.
3. **publication**: published after ``as_of`` -> ``not_yet_published``.
4. **validity**: ``effective_from`` after ``as_of`` -> ``not_yet_effective``; ``effective_to``
   at or before ``as_of`` -> ``superseded`` (a successor is named) or ``expired``. No
   ``effective_from`` means validity *unknown*: kept, said, never assumed current.
4b. **lexical decoys**: when the question places its event in a month ("in September 2025"),
   a source that shares the question's identifier but is dated in another month, while a
   source sharing it is dated in that month, is ``lexical_decoy`` (unless it belongs to the
   same thread: a comment closing the ticket a week later is the same event).
5. **supersedes chains**: a source is ``superseded`` when a successor in the evidence is in
   effect. Chains are followed through ids missing from the evidence (A supersedes B, B
   supersedes C, only A and C delivered: C is superseded by A, and the record says B was
   missing). A named successor that is not in the evidence is put in ``to_confirm``.
6. **relevance**: the values of the asked kind (:func:`ragkit.text.values.asked_forms`) are read
   from each span, each with its sentence (situated by the section heading and, for a table
   row, the table header). A value counts when its sentence shares a content word with the
   question, names the question's tenant or identifier, or states the source's own condition;
   if no value anywhere does, every value counts. Values the question itself names (its
   ticket, its date), values in headings (a comment's timestamp) and in a table's header row
   are not answers; a status is read only from a status field ("Status: blocked"), not from
   prose ("until this is closed"). Words of one meaning (:data:`ragkit.text.relevance.SAME_MEANING`:
   finished/completed, rolled out/deployed) match each other. A value
   stated without a code, identifier or tenant the question names (``GBP cutoff 14:30`` for
   an EUR question), against another value that names it, is a ``neighbouring_fact``; so is
   a source about another tenant than the one the question names, and one that holds no
   relevant value and leads nowhere (rule 9). A value in a sentence that names another code
   (``| DKK | 10:30 |``) but none the question names (``CHF``) does not answer it. When no value
   anywhere relates to the question's words, only values in sources that the question's
   identifiers lead to (by links) count. Identifier questions keep identifiers of the asked
   shape (:func:`ragkit.text.values.asked_id_shape`: a commit is a hash, a rollout a key).
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
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.core.records import AUTHORITY_RANK, GLOBAL_TENANT, parse_time
from ragkit.core.scope import as_scope, validity
from ragkit.evidence.decision import Conflict, Decision, DecisionRecord, Rejected, Selected
from ragkit.evidence.spans import Evidence
from ragkit.text.normalise import normalise_value
from ragkit.text.relevance import (
    CAUSAL_QUESTION,
    CAUSE,
    CODE,
    COMPLETED,
    DEONTIC,
    DEONTIC_QUESTION,
    DETECTION,
    MONTH_NAMES,
    NOT_CODES,
    ROOT_CAUSE,
    condition_event,
    context,
    is_heading_or_table_head,
    mentions,
    named_month,
    question_terms,
    stem,
    words,
)
from ragkit.text.untrusted import looks_like_instruction
from ragkit.text.values import (
    Value,
    asked_forms,
    asked_id_shape,
    asked_kind,
    id_shape,
    read_values,
    sentence_at,
    sentence_spans,
)

__all__ = [
    "resolve",
    "question_terms",
]


# --------------------------------------------------------------------------------------
# the working state of one resolution


@dataclass
class _Item:
    ev: Evidence
    state: str = "open"  # open | rejected | selected
    reason: str = ""
    because: str = ""
    by: str | None = None
    value: Value | None = None  # the relevant value (span offsets)
    score: float = 0.0
    exception_open: bool = False
    validity: str = "unknown"
    role: str = ""
    matched: frozenset[str] = frozenset()
    off_code: bool = False

    @property
    def val(self) -> str:
        return self.value.value if self.value is not None else ""

    @property
    def surface(self) -> str:
        return self.value.surface if self.value is not None else ""

    @property
    def rank(self) -> int:
        return AUTHORITY_RANK.get(self.ev.envelope.authority, 0)

    @property
    def when(self) -> dt.datetime:
        env = self.ev.envelope
        return env.effective_from or env.published_at or dt.datetime.min.replace(tzinfo=dt.timezone.utc)

    def reject(self, reason: str, because: str, by: str | None = None) -> None:
        self.state, self.reason, self.because, self.by = "rejected", reason, because, by

    def select(self, role: str, because: str) -> None:
        self.state, self.role, self.because = "selected", role, because


def _day(moment: dt.datetime | None) -> str:
    return moment.date().isoformat() if moment else "unknown"




def _as_moment(as_of: Any) -> dt.datetime | None:
    # the kit's convention (ragkit.core.records.parse_time): a bare date means midnight UTC
    return parse_time(as_of, field_name="as_of")


def _section_citation(ev: Evidence, position: int) -> str:
    """The citation of a span; for a whole delivered document, ``doc#anchor`` of the section holding
    ``position`` (answers cite sections, ``[doc_id#anchor]``)."""
    if ev.anchor:
        return ev.citation
    from ragkit.documents.chunking import sections

    inside = [s for s in sections(ev.text) if s.start <= position < s.end]
    return f"{ev.doc_id}#{inside[-1].anchor}" if inside else ev.citation


def _names(item: _Item, ident: str) -> bool:
    """Whether a source names an identifier: in its title, its text, or as a part of its doc id."""
    env = item.ev.envelope
    if mentions(env.title + "\n" + item.ev.text, ident):
        return True
    return re.search(rf"(?<![a-z0-9]){re.escape(ident.lower())}(?![a-z0-9])", env.doc_id.lower()) is not None


def _refers(a: _Item, b: _Item) -> bool:
    """Whether ``a`` points at ``b``: its links, ``b``'s doc id, or the key leading ``b``'s title."""
    if b.ev.doc_id in a.ev.envelope.links or mentions(a.ev.text, b.ev.doc_id):
        return True
    key = re.match(r"\s*([A-Z][A-Z0-9]*-\d+)\b", b.ev.envelope.title)
    return key is not None and mentions(a.ev.text, key.group(1))


class _Resolver:
    def __init__(self, question: str, evidence: Sequence[Evidence], as_of: Any, caller: Any):
        if not isinstance(question, str) or not question.strip():
            raise ValidationError("question must be a non-empty string", field="question")
        bad = [type(e).__name__ for e in evidence if not isinstance(e, Evidence)]
        if bad:
            raise ValidationError(
                f"evidence must be ragkit.evidence.resolution.Evidence items, got {bad[0]}; build "
                "them with Evidence.from_tool_item / from_hit / from_document",
                field="evidence",
            )
        self.question = question
        self.as_of_raw = as_of
        self.moment = _as_moment(as_of)
        self.scope = as_scope(caller)
        self.forms = asked_forms(question)
        self.causal = bool(CAUSAL_QUESTION.search(question))
        self.deontic = bool(DEONTIC_QUESTION.search(question))
        self.kind = asked_kind(question)
        self.shape = asked_id_shape(question) if "id" in self.forms else None
        seen: dict[str, _Item] = {}
        for e in evidence:
            seen.setdefault(e.citation, _Item(e))
        self.items = list(seen.values())
        self.to_confirm: list[str] = []
        self.unresolved: list[Conflict] = []
        self.terms = question_terms(question)
        tenants = {i.ev.envelope.tenant for i in self.items} - {GLOBAL_TENANT}
        if self.scope is not None and self.scope.tenant not in ("*", GLOBAL_TENANT):
            tenants.add(self.scope.tenant)
        self.asked_tenants = {t for t in tenants if mentions(question, t)}
        self.predicate = self.terms - {stem(t) for t in tenants}
        self.ids = [v.surface for v in read_values(question, forms=("id",))]
        self.codes = {c for c in re.findall(CODE, question) if c not in NOT_CODES}
        # what the question names: codes (EUR, GBP), identifiers, tenants; see the neighbouring-fact rule
        self.entities = set(re.findall(r"\b[A-Z]{2,5}\b", question)) | set(self.ids) | self.asked_tenants

    # -- helpers --------------------------------------------------------------------------
    def alive(self) -> list[_Item]:
        return [i for i in self.items if i.state != "rejected"]

    # -- rules 1-4: gates on the envelope -------------------------------------------------
    def gates(self) -> None:
        if self.scope is None:
            self.to_confirm.append("no caller given: tenant and ACL scope were not checked")
        if self.moment is None:
            self.to_confirm.append("no as_of given: publication and validity dates were not checked")
        for it in self.items:
            env = it.ev.envelope
            if self.scope is not None and not self.scope.allows(env):
                if self.scope.tenant not in ("*", env.tenant) and env.tenant != GLOBAL_TENANT:
                    it.reject(
                        "other_tenant", f"belongs to tenant {env.tenant}; the caller is {self.scope.tenant}"
                    )
                else:
                    it.reject(
                        "acl",
                        f"restricted to groups {list(env.acl_groups)}; the caller is in "
                        f"{sorted(self.scope.groups) or 'no groups'}",
                    )
                continue
            if env.extra.get("injection") or looks_like_instruction(env.title + "\n" + it.ev.text):
                it.reject(
                    "untrusted_instruction",
                    "carries instruction-shaped text addressed to a reader "
                    "or model; kept as evidence of that, never followed, quoted or used as decisive",
                )
                continue
            if self.moment is None:
                it.validity = validity(env, None)
                continue
            if env.published_at is not None and env.published_at > self.moment:
                it.reject(
                    "not_yet_published",
                    f"published {_day(env.published_at)}, after as_of "
                    f"{_day(self.moment)}: it did not exist at the snapshot",
                )
                continue
            it.validity = validity(env, self.moment)
            if it.validity == "not_yet_valid":
                it.reject(
                    "not_yet_effective",
                    f"effective from {_day(env.effective_from)}, after as_of {_day(self.moment)}",
                )
            elif it.validity == "expired":
                if env.superseded_by:
                    succ = self._citation_of(env.superseded_by[0])
                    it.reject(
                        "superseded",
                        f"in effect until {_day(env.effective_to)}; replaced by "
                        f"{', '.join(env.superseded_by)}",
                        succ,
                    )
                else:
                    it.reject("expired", f"in effect until {_day(env.effective_to)}, before as_of")
        for it in self.items:
            if it.state != "rejected" and self.asked_tenants:
                tenant = it.ev.envelope.tenant
                if tenant != GLOBAL_TENANT and tenant not in self.asked_tenants:
                    it.reject(
                        "neighbouring_fact",
                        f"is about tenant {tenant}; the question asks about "
                        f"{', '.join(sorted(self.asked_tenants))}",
                    )

    def decoys(self) -> None:
        """Lexical decoys: sources that share the question's identifier but are dated outside the
        month the question names ("... had an issue in September 2025"), while another source
        sharing it is dated inside that month."""
        period = named_month(self.question)
        if period is None or not self.ids:
            return
        sharing = [
            (i, i.ev.envelope.published_at) for i in self.alive() if any(_names(i, x) for x in self.ids)
        ]
        dated = [(i, w) for i, w in sharing if w is not None]
        inside = [i for i, w in dated if (w.year, w.month) == period]
        if not inside:
            return
        for it, when in dated:
            # a later record of the same event (a comment closing the ticket) is no decoy
            if any(_refers(it, i) or _refers(i, it) for i in inside):
                continue
            if (when.year, when.month) != period:
                shared = next(x for x in self.ids if mentions(it.ev.envelope.title + "\n" + it.ev.text, x))
                it.reject(
                    "lexical_decoy",
                    f"shares {shared} with the question but is dated {_day(when)}; the question asks "
                    f"about {MONTH_NAMES[period[1] - 1].capitalize()} {period[0]}",
                    inside[0].ev.citation,
                )

    def _citation_of(self, doc_id: str) -> str | None:
        found = [i for i in self.items if i.ev.doc_id == doc_id]
        return found[0].ev.citation if found else None

    # -- rule 5: supersedes chains --------------------------------------------------------
    def chains(self) -> None:
        alive = self.alive()
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
                    self.to_confirm.append(
                        f"{doc_id} supersedes {env.doc_id} but has no effective_from: "
                        f"confirm whether it is in effect at as_of"
                    )
                    continue
                if any(i.ev.doc_id == doc_id for i in self.items):
                    continue  # delivered but not in effect (not yet effective, out of scope...)
                nxt = {o.ev.doc_id for o in alive if doc_id in o.ev.envelope.supersedes}
                if not nxt and doc_id in env.superseded_by:
                    self.to_confirm.append(
                        f"{env.doc_id} names {doc_id} as its successor, which is not in the "
                        f"evidence: confirm whether {doc_id} is in effect at as_of"
                    )
                queue.extend((n, (*missing, doc_id)) for n in sorted(nxt))

    # -- rule 7: conditions ---------------------------------------------------------------
    def conditions(self) -> None:
        for it in self.alive():
            env = it.ev.envelope
            for cond in env.conditions:
                event = condition_event(cond)
                if event is None:
                    self.to_confirm.append(
                        f"whether the condition '{cond}' of {env.doc_id} still holds (not of the form "
                        "'until <event>' / 'for non-<event> ...', so no record can be checked against it)"
                    )
                    continue
                ender = self._ender(it, event)
                if ender is None:
                    continue
                rec, sentence = ender
                it.reject(
                    "condition_met",
                    f"its condition '{cond}' ended: {rec.ev.doc_id} "
                    f"({rec.ev.envelope.authority}, {_day(rec.ev.envelope.published_at)}) records "
                    f'"{sentence}"',
                    rec.ev.citation,
                )
                if rec.state == "open":
                    rec.select("qualifier", f"ends the condition '{cond}' of {env.doc_id}: \"{sentence}\"")
                break
            it.exception_open = bool(env.conditions) and it.state != "rejected"

    def _ender(self, cond: _Item, event: str) -> tuple[_Item, str] | None:
        env = cond.ev.envelope
        for other in self.alive():
            o = other.ev.envelope
            if other is cond or other.rank < cond.rank:
                continue
            if env.published_at and o.published_at and o.published_at <= env.published_at:
                continue
            for a, b in sentence_spans(other.ev.text):
                sentence = other.ev.text[a:b]
                words = {stem(w) for w in re.findall(r"[a-z]+", sentence.lower())}
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

    # -- rule 6: values and relevance -----------------------------------------------------
    def read(self) -> None:
        for it in self.alive():
            best: tuple[float, Value, frozenset[str]] | None = None
            text = it.ev.text
            values = (
                read_values(text, forms=self.forms)
                if self.forms
                else [
                    Value("text", normalise_value("text", text[a:b]), text[a:b], a, b, "text")
                    for a, b in sentence_spans(text)
                    if not is_heading_or_table_head(text, a, b)
                ]
            )
            for v in values:
                if self.forms and mentions(self.question, v.surface):
                    continue  # a value the question itself names (its ticket, its date) is not the answer
                if self.shape and v.form == "id" and id_shape(v.surface) != self.shape:
                    continue  # "which commit" is answered by a hash, not by an account or a ticket key
                if self.codes and not self._about_asked_code(text, v.start):
                    it.off_code = True
                    continue  # "| DKK | 10:30 |" does not answer a question about CHF
                a, b = sentence_at(text, v.start) if self.forms else (v.start, v.end)
                sentence = text[a:b]
                if sentence.lstrip().startswith("#") or is_heading_or_table_head(text, a, b):
                    continue  # a heading (a timestamp, a section title) or a column header is no claim
                if v.form == "status" and not re.search(r"\b(status|state|result)\b", sentence, re.I):
                    continue  # a status is stated by a status field; "until this is closed" states none
                situated = sentence + "\n" + context(text, a)
                matched = words(situated) & self.predicate
                conditional = any(c.lower() in sentence.lower() for c in it.ev.envelope.conditions)
                score = float(len(matched)) + (2 if conditional else 0)
                if score > 0 and any(mentions(sentence, t) for t in self.asked_tenants):
                    score += 1
                named = {e for e in self.entities if mentions(situated, e)} | (
                    {"@condition"} if conditional else set()
                )
                score += sum(1 for x in self.ids if x != v.surface and mentions(sentence, x))
                if (
                    not self.forms
                    and self.causal
                    and (not CAUSE.search(sentence) or DETECTION.search(sentence))
                ):
                    continue  # a why-question is answered by a causal statement, or not at all
                if not self.forms and self.causal:
                    score += 2
                    if ROOT_CAUSE.search(sentence):
                        score += 2  # and best by the one that says it is the root cause
                if not self.forms and self.deontic and DEONTIC.search(sentence):
                    score += 2  # "what does the policy require?" is answered by what it says must happen
                if best is None or score > best[0]:
                    best = (score, v, frozenset(named))
            if best is not None:
                it.score, it.value, it.matched = best
        holders = [i for i in self.alive() if i.value is not None]
        if any(i.score > 0 for i in holders):
            keep = {id(i) for i in holders if i.score > 0}
        else:
            # nothing relates to the question's words: only values in sources the question's
            # identifiers lead to ("follow OPS-1891 to the policy: what limit does it set?") count
            keep = {id(i) for i in self._linked_from_named()}
        for i in holders:
            if id(i) not in keep:
                i.value = None

    def _linked_from_named(self) -> list[_Item]:
        """Sources reached by links from a source that names one of the question's identifiers."""
        alive = self.alive()
        frontier = [i for i in alive if any(_names(i, x) for x in self.ids)]
        seen = {id(i) for i in frontier}
        reached: list[_Item] = []
        while frontier:
            cur = frontier.pop()
            for nxt in alive:
                if id(nxt) not in seen and _refers(cur, nxt):
                    seen.add(id(nxt))
                    reached.append(nxt)
                    frontier.append(nxt)
        return reached

    def _about_asked_code(self, text: str, position: int) -> bool:
        """False when the value's sentence (with its heading and table header) names another code
        (``DKK``) but none the question names (``CHF``); True otherwise."""
        a, b = sentence_at(text, position)
        situated = text[a:b] + "\n" + context(text, a)
        named = {c for c in re.findall(CODE, situated) if c not in NOT_CODES}
        return not named or bool(named & self.codes)

    # -- rule 8: exceptions and authority -------------------------------------------------
    def decide(self) -> _Item | None:
        holders = [
            i
            for i in self.alive()
            if i.value is not None and i.state == "open" or i.value is not None and i.state == "selected"
        ]
        if not holders:
            return None
        if self.forms:  # a value stated about fewer of the things the question names is a neighbouring fact
            for b in holders:
                wider = [
                    a for a in holders if a.state != "rejected" and a.val != b.val and b.matched < a.matched
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
        exceptions = [i for i in holders if i.exception_open]
        if exceptions:
            values = {i.value.value for i in exceptions if i.value}
            if len(values) > 1:  # two open exceptions that disagree: nothing ranks them
                for a, b in zip(exceptions, exceptions[1:], strict=False):
                    if a.val != b.val:
                        self.unresolved.append(
                            Conflict(
                                a.ev.citation,
                                b.ev.citation,
                                f"two open conditional exceptions state {a.surface} and {b.surface}",
                            )
                        )
                self.to_confirm.append(
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
        if not self.forms:  # free text: no value comparison is possible
            return max(holders, key=lambda i: (i.rank, i.score, i.when))
        top = max(i.rank for i in holders)
        best = [i for i in holders if i.rank == top]
        values = {i.value.value for i in best if i.value}
        if len(values) > 1:
            kept = self._tie_break(best)
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
                self.unresolved.append(
                    Conflict(
                        winner.ev.citation,
                        h.ev.citation,
                        f"{winner.ev.doc_id} ranks higher ({winner.ev.envelope.authority}) "
                        f"but its validity is unknown; {h.ev.doc_id} is in effect and states "
                        f"{h.surface}",
                    )
                )
            self.to_confirm.append(f"whether {winner.ev.doc_id} is in effect at as_of (no effective_from)")
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

    def _tie_break(self, best: list[_Item]) -> list[_Item] | None:
        latest = max(i.when for i in best)
        front = [i for i in best if i.when == latest]
        if len({i.value.value for i in front if i.value}) > 1:
            for a, b in zip(front, front[1:], strict=False):
                self.unresolved.append(
                    Conflict(
                        a.ev.citation,
                        b.ev.citation,
                        f"equal authority ({a.ev.envelope.authority}) and equal dates "
                        f"({_day(latest)}), different values: {a.surface} vs "
                        f"{b.surface}",
                    )
                )
            self.to_confirm.append("which of " + ", ".join(i.ev.citation for i in front) + " governs")
            return None
        lead = front[0]
        for i in best:
            if i.value and lead.value and i.value.value != lead.value.value:
                i.reject(
                    "superseded",
                    f"equal authority ({i.ev.envelope.authority}); {lead.ev.doc_id} is effective "
                    f"later ({_day(lead.when)}) and states {lead.surface}",
                    lead.ev.citation,
                )
                self.to_confirm.append(
                    f"that {lead.ev.doc_id} replaces {i.ev.doc_id} (no supersedes link; "
                    "decided by the later effective date)"
                )
        return [i for i in best if i.state != "rejected"]

    # -- rule 9: hops, qualifiers, support; the rest --------------------------------------
    def links(self, winner: _Item | None) -> None:
        alive = self.alive()
        if winner is not None:
            reachable = [i for i in self.items if i.state != "rejected" or i.reason == "lower_authority"]
            path = self._hop_path(winner, reachable)
            for h in path:
                if h.state == "rejected" and h.reason != "lower_authority":
                    continue
                h.state, h.reason, h.by = "open", "", None
                h.select(
                    "hop",
                    f"on the link path from {', '.join(self.ids)} (named in the question) "
                    f"to {winner.ev.doc_id}",
                )
            dec_words = {stem(w) for w in re.findall(r"[a-z]+", winner.ev.text.lower())}
            for it in alive:
                if it.state != "open":
                    continue
                for a, b in sentence_spans(it.ev.text):
                    sentence = it.ev.text[a:b]
                    m = re.search(r"\b([A-Za-z]+)\s+" + COMPLETED.pattern[2:], sentence, re.IGNORECASE)
                    if not m or stem(m.group(1).lower()) not in dec_words:
                        continue
                    tenant = it.ev.envelope.tenant
                    if tenant != GLOBAL_TENANT and (not self.asked_tenants or tenant in self.asked_tenants):
                        it.select(
                            "qualifier",
                            f"records that {m.group(1).lower()} completed for {tenant}, "
                            f'which {winner.ev.doc_id} depends on: "{sentence}"',
                        )
                        break
            for it in alive:
                if it.state == "open" and (
                    winner.ev.doc_id in it.ev.envelope.links or mentions(it.ev.text, winner.ev.doc_id)
                ):
                    it.select("support", f"refers to {winner.ev.doc_id}")
        disputed = {c.a for c in self.unresolved} | {c.b for c in self.unresolved}
        for it in self.alive():
            if it.state == "open" and it.ev.citation not in disputed:
                what = (
                    f"{it.value.surface} is not what is asked"
                    if it.value
                    else f"its values are stated for other codes than {', '.join(sorted(self.codes))}"
                    if it.off_code
                    else f"holds no {'/'.join(self.forms) or 'text'} value relevant to the question"
                )
                it.reject("neighbouring_fact", what)

    def _hop_path(self, winner: _Item, alive: list[_Item]) -> list[_Item]:
        """Items on a link path from any item naming a question identifier to ``winner``.

        Edges: ``envelope.links`` or the doc id written in the text (case-insensitive).
        Each naming item is searched from separately and the paths are united.
        """
        if not self.ids:
            return []
        starts = [i for i in alive if i is not winner and any(_names(i, x) for x in self.ids)]
        on_path: list[_Item] = []
        for start in starts:
            parent: dict[int, _Item | None] = {id(start): None}
            queue = deque([start])
            while queue:
                cur = queue.popleft()
                if cur is winner:
                    node = parent[id(cur)]
                    while node is not None:
                        if node not in on_path:
                            on_path.append(node)
                        node = parent[id(node)]
                    break
                for nxt in alive:
                    if id(nxt) not in parent and _refers(cur, nxt):
                        parent[id(nxt)] = cur
                        queue.append(nxt)
        return on_path

    # -- the record -----------------------------------------------------------------------
    def record(self) -> DecisionRecord:
        self.gates()
        self.decoys()
        self.chains()
        self.conditions()
        self.read()
        winner = self.decide()
        if winner is not None:
            winner.state, winner.reason, winner.by = "selected", "", None
            env = winner.ev.envelope
            since = (
                f"in effect since {_day(env.effective_from)}"
                if winner.validity == "valid"
                else "validity unknown (no effective_from)"
            )
            winner.role = "decisive"
            winner.because = f"{env.authority}, {since}; states {winner.surface}"
            if winner.exception_open:
                winner.because += f" under its open condition '{env.conditions[0]}'"
            if winner.validity == "unknown":
                self.to_confirm.append(
                    f"whether {winner.ev.doc_id} is in effect at as_of (no effective_from)"
                )
        self.links(winner)
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
        elif not self.unresolved:
            what = "/".join(self.forms) or "text"
            self.to_confirm.append(
                f"no in-scope evidence in effect at as_of states the {what} value asked for: "
                "search for the source that states it, or confirm with its owner"
            )
        order = {id(i): n for n, i in enumerate(self.items)}
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
                (i for i in self.items if i.state == "selected"),
                key=lambda i: (roles.get(i.role, 9), order[id(i)]),
            )
        ]
        rejected = [
            Rejected(i.ev.citation, i.ev.doc_id, i.reason, i.because, i.by)
            for i in self.items
            if i.state == "rejected"
        ]
        as_of = None
        if self.moment is not None:  # midnight prints as the date alone
            midnight = self.moment.time() == dt.time(0)
            as_of = self.moment.date().isoformat() if midnight else self.moment.isoformat()
        return DecisionRecord(
            question=self.question,
            as_of=as_of,
            asked=self.kind,
            decision=decision,
            selected=selected,
            rejected=rejected,
            unresolved=list(self.unresolved),
            to_confirm=list(dict.fromkeys(self.to_confirm)),
        )


def resolve(
    question: str, evidence: Sequence[Evidence], as_of: Any = None, caller: Any = None
) -> DecisionRecord:
    """Resolve delivered evidence into a :class:`DecisionRecord` (rules in the module docstring).

    Args:
        question: the task as asked; it decides the kind of value (:func:`ragkit.text.values.asked_kind`),
            the tenant it is about and the identifiers it names.
        evidence: the delivered spans (duplicates by citation are read once).
        as_of: the snapshot time (ISO date or datetime; a bare date means midnight UTC, as
            everywhere in ragkit).
            ``None`` skips date checks and says so in ``to_confirm``.
        caller: a :class:`ragkit.core.scope.Scope`, a :class:`ragkit.core.scope.Scope` or ``None``
            (scope not checked; said in ``to_confirm``).

    Raises:
        ValidationError: empty question, evidence that is not :class:`Evidence`, a bad date or caller.
    """
    return _Resolver(question, evidence, as_of, caller).record()
