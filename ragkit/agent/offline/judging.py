"""Judging the evidence: which excerpts are about the task, and whether a value is decided.

Rules 3 and 5 of the offline policy (:mod:`ragkit.agent.offline`). An excerpt counts only if it
is about the task (it names the task's identifiers or one the policy followed to reach it,
belongs to the caller's tenant when the task asks about the caller's own event, and falls in
the month named); :func:`ragkit.evidence.resolution.resolve` then decides a value over the
counted evidence, and the decisive sentence must *predicate the asked attribute of the asked
entity*: a decisive source that does not is set aside (``neighbouring_fact``) and resolution
runs again. Everything set aside joins the decision record's rejected sources, so the record
says why each excerpt was not used. A :class:`Judgement` is the outcome.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragkit.agent.offline.memory import RunMemory
from ragkit.agent.offline.page import visible
from ragkit.agent.offline.passages import (
    UNSTATED,
    best_thread,
    contrasts,
    heading_words,
    holder,
    names,
    of_other_event,
    outside_period,
    record_text,
    referred_as,
    refers_to,
    respelled,
    reworded,
    situation,
    stated_for,
    states_cause,
    thread_of,
    thread_roots,
)
from ragkit.agent.offline.reading import about_task
from ragkit.agent.state import AgentState, EvidenceUse
from ragkit.evidence.decision import Decision, DecisionRecord, Rejected
from ragkit.evidence.resolution import resolve
from ragkit.text.asked import asked_id_shape
from ragkit.text.profile_views import ProfileWords
from ragkit.text.relevance import NOT_CODES, with_codes
from ragkit.text.subjects import (
    described_clause,
    described_subject,
    required_words,
    source_named,
    subject_words,
)
from ragkit.text.untrusted import looks_like_instruction
from ragkit.text.value_patterns import STATUS_WORDS
from ragkit.text.words import (
    RATING_WORDS,
    SAME_MEANING,
    TASK_STOPWORDS,
    VALUE_KIND_WORDS,
    compound_stems,
    stem,
)

__all__ = ["GENERIC", "FRAME", "Judgement", "Judging"]

#: Task words that say nothing about *what* is asked (never coverage; profile ``generic_words``).
GENERIC = ProfileWords("generic_words")
#: Words that frame a question in this corpus or name the kind of value asked, not the attribute
#: (the profile's ``frame_words``): words nearly every passage says, and a "date", "time" or
#: "percentage" is what the value is, not what it is of.
FRAME = ProfileWords("frame_words")

# "is allowed to go out", "are required to be": a participle that says what is permitted or owed
_PERMITTED = re.compile(r"\b(?:is|are|be|was|were|been|being)\s+([a-z]+ed)\s+to\b")


@dataclass
class Judgement:
    """The policy's reading of the evidence so far."""

    counted: list[EvidenceUse]
    set_aside: list[tuple[EvidenceUse, str]]
    record: DecisionRecord
    decided: bool
    missing: str


class Judging(RunMemory):
    """The offline policy's reading of the evidence (see the module docstring)."""

    def judge(self, state: AgentState) -> Judgement:
        """Count the evidence about the task, resolve it, and check that the decision states what is asked."""
        counted: list[EvidenceUse] = []
        aside: list[tuple[EvidenceUse, str]] = []
        texts = [f"{u.item.get('title', '')} {u.item.get('text', '')}" for u in state.evidence.values()]
        # "Kestral" Bank, "incident comander": read as the evidence spells them, in resolution too
        self.asked_words = self.asked_words or self.frame.predicate
        said = respelled(self.asked_words, texts)
        typos = self.frame.typos  # "Wane" for the caller's Wayne: read as the tenant's name
        self.read = reworded(state.task, (*self.asked_words, *typos), (*said, *[state.tenant] * len(typos)))
        self.read += f" ({', '.join(self.referents)})" if self.referents else ""  # the row it describes
        # (and searched for so: "commitee" finds no passage that says "committee")
        self.frame = replace(self.frame, names=respelled(self.frame.names, texts), predicate=said,
                             words=respelled(self.frame.words, texts))
        seen = visible(state)  # (not beyond the page the policy reads: see with_margin)
        for use in (u for u in state.evidence.values() if u.citation in seen):
            # the pipeline has no judging step: its one page goes to the reader as delivered
            reason = None if state.placement == "pipeline" else self._why_not(use, state)
            if reason is None:
                counted.append(use)
            else:
                aside.append((use, reason))
        pool = list(counted)
        if self.cause:
            # a cause question is answered by a passage that states a cause, not by the symptom,
            # and by the thread the first search ranked best for the task's own words
            pool = [u for u in counted if states_cause(str(u.item.get("text", "")))]
            best = best_thread(state, counted)
            if best is not None:
                # the event's own thread, or a record about it (a postmortem that names or links it)
                pool = [
                    u for u in pool if thread_of(u) == best or (thread_of(u) is None and refers_to(u, best))
                ]
        elif self.frame.event and not self.frame.identifiers and state.placement != "pipeline":
            # an event told by what happened, not by its key: the thread the task's words place best
            # is the event; another ticket's thread, and what it led the agent to, tell of another
            best, uses = best_thread(state, counted), list(state.evidence.values())
            pool = [u for u in pool if best is None or not of_other_event(u, best, uses, self.leads)]
        if self.via and self.asked in ("status", "date") and state.placement != "pipeline":
            # "the review of OPS-8265 produced a follow-up ticket: where does it stand?" asks about
            # the record OPS-8265 leads to; OPS-8265's own status or dates are a neighbour's
            pool = [u for u in pool if not {thread_of(u), str(u.item.get("doc_id"))} & self.via]
        # a compound of the ask that titles a delivered record ("reserve-keeper architecture"): a thing
        titles = " ".join(str(u.item.get("title", "")) for u in state.evidence.values()).lower()
        self.titled = [w for w in self.frame.predicate if "-" in w and w in titles]
        self.sections = list(state.evidence.values())
        record = None
        if self.target:
            # a chain question asks what its last record says (the other records stay counted as
            # links); one naming no record to start from ("the settlement policy says 15:00, but
            # ...: what applies?") or asking *which* record ("which policy governs it?": a reference
            # names it) by whatever states it when no source of that type does
            targeted = [u for u in pool if u.item.get("source_type") == self.target]
            record = self._resolve(state, targeted)
            if record.decision is not None or (self.frame.identifiers and self.asked != "id"):
                pool = targeted
            else:
                record = None
        if record is None:
            record = self._resolve(state, pool)
        # the decisive passage must name what the task qualifies the question with (CHF, EUR, a
        # surname) and state the asked attribute: otherwise it states a neighbouring fact; set it
        # aside and resolve again
        checked = False
        for _ in range(40):
            if record.decision is None:
                break
            found = holder(pool, record.decision)
            lacking = self._uncovered(found, str(record.decision.quote)) if found is not None else []
            # a value stated without the code asked about ("Wayne stays on 16:00 until cutover")
            # is about that code when a counted source states the same value for it ("EUR cutoff
            # 16:00"); a value no source ties to the code (a CHF cutoff nobody states) is not
            codes = [q for q in lacking if q in self.frame.qualifiers]
            words = [q for q in lacking if q.startswith("any of")]
            # (only for a conditional exception, which states its value tersely, or sets itself
            # against the value a yes/no question proposes: "the 15:00 rule does not reach them")
            terse = found is not None and bool(found.item.get("conditions"))
            text = str(found.item.get("text")) if found is not None else ""
            if terse and (codes or words) and (contrasts(self.frame.task, text) or stated_for(
                counted, str(record.decision.surface), codes, self._focus() if words else ()
            )):
                lacking = [q for q in lacking if q not in codes and q not in words]
            if found is not None and not lacking and state.placement != "pipeline":
                lacking = self._unpredicated(found, record.decision)
                if lacking and terse and (contrasts(self.frame.task, text) or stated_for(
                    counted, str(record.decision.surface), self.frame.qualifiers,
                    self.attribute_things() or self.attribute_terms(), besides=str(record.decision.quote),
                )):
                    lacking = []
            if found is None or not lacking:
                checked = True
                break
            pool.remove(found)
            counted.remove(found)
            aside.append((found, "does not name " + ", ".join(lacking)))
            record = self._resolve(state, pool)
        # the record is frozen: the excerpts the agent set aside join its rejected sources in a new one
        set_aside = []
        for use, why in aside:
            reason = "neighbouring_fact" if why.startswith("does not name") else "semantic_decoy"
            if why.startswith("instruction-shaped"):
                reason = "untrusted_instruction"
            if why.startswith("published") and any(
                i.lower() in str(use.item.get("text", "")).lower() for i in self.frame.identifiers
            ):
                reason = "lexical_decoy"
            set_aside.append(
                Rejected(use.citation, str(use.item.get("doc_id")), reason, f"set aside by the agent: {why}")
            )
        record = replace(record, rejected=(*record.rejected, *set_aside))
        # a decision the checks above never passed (they ran out) is not one
        decided = record.status == "decided" and record.decision is not None and checked
        missing = "" if decided else self._missing(record, counted)
        return Judgement(counted, aside, record, decided, missing)

    def _resolve(self, state: AgentState, pool: Sequence[EvidenceUse]) -> DecisionRecord:
        """Resolution over ``pool`` as the caller at ``as_of``, judging sentences with the run's fit."""
        evidence = [u.evidence for u in pool]
        task = self.read or state.task
        return resolve(task, evidence, as_of=state.as_of, caller=state.caller, fit=self.fit)

    def _why_not(self, use: EvidenceUse, state: AgentState) -> str | None:
        """``None`` if the excerpt is about the task, else why it is set aside."""
        item, f = use.item, self.frame
        # (with what led to it: "| stark-33762 | EUR | Vireo Bank |" names the account's bank)
        entities, led = " ".join(map(str, item.get("entities") or [])), self._leads_for(use)
        hay = " ".join([str(item.get("text", "")), str(item.get("title", "")), entities, led])
        hay = hay.lower()
        if looks_like_instruction(str(item.get("text", ""))):
            return "instruction-shaped text (untrusted): evidence, never a command"
        if item.get("doc_id") in self.linked:
            return None
        ids = [i.lower() for i in f.identifiers]
        if ids and not any(i in hay for i in ids) and not any(a in hay for a in self.anchors):
            return "does not name " + " or ".join(f.identifiers)
        missing_names = [n for n in f.names if not names(hay, n)]
        if missing_names and not ids:
            return "does not name " + ", ".join(missing_names)
        tenant = state.tenant.lower()
        if (  # (a record the tenant's own record led to is about it: the bank that holds its account;
            # so is a shared record that names the tenant: its row in a platform review)
            f.event and f.tenant_named and not led and tenant not in ("*", "")
            and str(item.get("tenant")).lower() != tenant and not names(hay, tenant)
        ):
            return f"not a {state.tenant} record (the task asks about {state.tenant}'s own event)"
        return outside_period(item, f.period, event=f.event)

    def _leads_for(self, use: EvidenceUse, *, predicating: bool = False) -> str:
        """What named ``use``'s record along a chain (:func:`record_text`); ``predicating``: not a thread."""
        own, skip = record_text(use), (self.threaded if predicating else set())
        return " ".join(lead for ident, lead in self.leads.items() if ident in own and ident not in skip)

    def _focus(self) -> list[str]:
        """Content words of the ask that a passage must share (one of them) to be about it."""
        return [w for w in self.frame.predicate if w not in GENERIC and len(w) > 2 and w != self.asked]

    def _uncovered(self, use: EvidenceUse, quote: str | None = None) -> list[str]:
        """What the task names that the passage does not: codes (CHF), names, and, unless the
        passage names the task's identifiers, every content word of the ask (it must share one)."""
        # (a table continued under a new heading is still defined by the section that opened it)
        own = [str(use.item.get("text", "")), str(use.item.get("title", ""))]
        hay = " ".join([*own, self._same_topic(use)]).lower()
        task_ids = {i.lower() for i in self.frame.identifiers}
        # a titled compound (a service) places a passage only when no identifier of the task does:
        # "E-2040 is raised by export_transactions" is about E-2040 in the file-ingest logs too
        by_id = any(a in hay for a in task_ids)
        named = (*self.frame.qualifiers, *self.frame.names, *(() if by_id else self.titled))
        # a chain's words reach the record it leads to; a reference's, the clause it names
        hay += " " + self._leads_for(use).lower() + " " + referred_as(own[0], use, self.sections)
        lacking = [q for q in named if not names(hay, q)]
        # named by the task's own identifiers: about the task whatever its words; reached by an
        # identifier the agent followed: only along a chain or a cause's thread
        anchored = any(a in hay for a in task_ids) or (
            bool(self.cause or self.target) and any(a in hay for a in self.anchors)
        )
        focus = self._focus()
        if focus and not anchored and not _shares(focus, hay):
            lacking.append("any of: " + ", ".join(focus))
        elif focus and not anchored and self.asked == "date" and quote is not None:
            # a date stands in many sentences (opened, planned, reported): the one that states it
            # must say what the date is of
            if not _shares(focus, quote.lower()):
                lacking.append("a sentence that dates " + ", ".join(focus))
        return lacking

    def attribute_terms(self) -> list[str]:
        """The words of the task that name the asked attribute or event (cutover, sweep threshold,
        escalations): its predicate minus generic and framing words, the name of the kind, and the
        compounds that title a delivered record (a service: what is asked about, not what is asked)."""
        out, subject = [], described_subject(self.frame.task)  # "the bank that holds ...": asked about
        clause = {stem(w.lower()) for w in with_codes(" ".join(described_clause(self.frame.task))).split()}
        proposed = str(STATUS_WORDS) if self.asked == "status" else "$^"  # "resolved yet?" proposes one
        source = source_named(self.frame.task)  # "according to the thread": where, not what, is asked
        for w in self.frame.predicate:
            if w in self.titled or w in (subject, source) or stem(w) in clause or re.fullmatch(proposed, w):
                continue  # a thing with records of its own, or what names it: not what is asked of it
            # (a time zone or a unit, "what time (UTC)", "how many hrs", is no attribute)
            for part in re.split(r"[-_]", w):
                if (len(part) > 2 and part not in GENERIC and part not in FRAME and part not in TASK_STOPWORDS
                        and part not in VALUE_KIND_WORDS and part.upper() not in NOT_CODES):
                    out.append(part)
        # (not the words of the table row that named the thing asked about: "the Globex DKK account")
        return [t for t in dict.fromkeys(out) if t not in self.described] or list(dict.fromkeys(out))

    def attribute_things(self) -> list[str]:
        """The attribute terms that name a thing (cutover, reserve), not only that something
        happened (completed, fixed, approved: :data:`ragkit.text.words.SAME_MEANING` classes), how
        a value rates ("the *latest* time": :data:`ragkit.text.words.RATING_WORDS`) or what is
        permitted ("is *allowed* to go out")."""
        verbs = {g[0] for g in SAME_MEANING}
        permits = set(_PERMITTED.findall(self.frame.task.lower()))
        return [t for t in self.attribute_terms()
                if stem(t.lower()) not in verbs and t not in RATING_WORDS and t not in permits]

    def _unpredicated(self, use: EvidenceUse, decision: Decision) -> list[str]:
        """Why the decisive sentence does not state the asked attribute ([] when it does).

        An answer must rest on a sentence that predicates what is asked: situated by its section
        heading, table header and the document's title, it names at least one word of the asked
        attribute (``cutover``, ``sweep``, ``escalations``). A value of the shape an identifier
        question asks for (a function, a commit, a key) in a sentence that names the task's own
        identifier states the relation by itself ("E-6224 is raised by verify_checksum"). Cause
        questions are judged by their own rule (a sentence that states a cause, in the event's thread).
        """
        if self.cause:
            return []
        terms = self.attribute_terms()
        if not terms:
            return []
        raw = str(getattr(decision, "quote", "") or "")
        quote = " ".join(raw.split())
        text = str(use.item.get("text", ""))
        title = str(use.item.get("title", ""))
        if self.asked == "id" and self.frame.identifiers:
            # in the sentence, or (for a commit or a function: a record names many keys, rarely two
            # commits) in the title of the record it stands in ("OPS-2747 comment by ..."), or in
            # what led from the task's record to another ("ships in RO-8941")
            shape, ids = asked_id_shape(self.frame.task), [i.lower() for i in self.frame.identifiers]
            where = quote + " " + title if shape in ("hash", "function") else quote
            where += "" if str(use.item.get("doc_id")).lower() in ids else " " + self._leads_for(use)
            named = any(i in where.lower() for i in ids)
            if shape not in (None, "slug") and named:
                return []
        situated = " ".join([quote, situation(text, raw), title, self._same_topic(use),
                             referred_as(raw, use, self.sections)])  # "the cap in clause 12.4"
        # reached along a chain: what named this record predicates it ("| OPS-7167 |" under
        # "Action items" makes OPS-7167's status the action item's status)
        situated += " " + self._leads_for(use, predicating=True)
        whole = {p for w in self.frame.predicate if "-" in w for p in w.split("-")}  # "notify-hub" is a name
        have = compound_stems(situated, {stem(t.lower()) for t in terms if t not in whole})
        # "fixed" says only that something happened: an ask that names the thing (cutover) needs it named
        things = self.attribute_things()
        # past "the service that builds ...," (it names a thing); "which bank ...?" asks a bank
        clause = required_words(terms, self.frame.task, free_text=self.asked == "text")
        if clause and not any(stem(t.lower()) in have for t in clause):
            return [UNSTATED + " / ".join(clause[:4])]
        # "must the daily cash report be checked": a checklist's hour is not the report's (half its words)
        subject_named = subject_words(self.frame.task)
        subject = {stem(w.lower()) for w in subject_named}
        if len(compound_stems(situated, subject) & subject) < (len(subject) + 1) // 2:
            return [UNSTATED + " / ".join(subject_named)]
        if any(stem(t.lower()) in have for t in (things or terms)):
            return []
        # reached along a ticket's thread, a sentence stating the asked relation ("RO-1753 was approved
        # by Gallardo") is about what the thread is about ("fee lines were posted in the wrong currency")
        relations = [stem(t.lower()) for t in terms if t not in things]
        if things and set(relations) & compound_stems(quote):
            about = compound_stems(thread_roots(use, self.sections, self.leads))
            if any(stem(t.lower()) in about for t in things):
                return []
        return [UNSTATED + " / ".join(terms[:4])]

    def _same_topic(self, use: EvidenceUse) -> str:
        """The delivered sections of the same document under a heading of the same topic ("3.
        Availability" for "4. Availability (continued)"): a table continued under a new heading is
        still defined by the section that opened it."""
        doc_id, anchor = str(use.item.get("doc_id")), str(use.item.get("anchor") or "")
        topic = heading_words(anchor)
        if not topic:
            return ""
        return " ".join(
            str(u.item.get("text", "")) for u in self.sections
            if str(u.item.get("doc_id")) == doc_id and u.citation != use.citation
            and topic & heading_words(str(u.item.get("anchor") or ""))
        )

    def _missing(self, record: DecisionRecord, counted: Sequence[EvidenceUse]) -> str:
        if record.status == "conflict":
            return "the sources conflict"
        if not counted:
            return "no excerpt about " + about_task(self.frame)
        return f"no {self.asked} value for {' '.join(self.frame.predicate[:4]) or 'the question'} in them"


def _shares(words: Sequence[str], text: str) -> bool:
    """Whether ``text`` (lower case) holds one of ``words``: its 5-letter prefix inside a word, or
    a word of the same meaning (:func:`ragkit.text.words.stem`: "owns" and "Owner", "deployed"
    and "rollout")."""
    if any(w[:5] in text for w in words):
        return True
    classes = {stem(w) for w in words} & {g[0] for g in SAME_MEANING}
    return bool(classes) and bool(classes & compound_stems(text))

