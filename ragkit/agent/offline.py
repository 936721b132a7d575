"""The offline policy: a transparent baseline that drives the agent loop without a model.

It is *not* a model and does not pretend to be one: every choice is a documented rule
over the task (:func:`ragkit.text.taskparse.parse_task`) and the tool responses, so a learner
can predict it, and a model-driven policy (:mod:`ragkit.agent.llm_policy`) can be compared
with it on the same loop, caps and checks.

The rules, in the order the loop meets them (CURRICULUM sections 1 and 7):

1. **Read the task**: identifiers, names, the caller's tenant, a date or month period,
   the kind of value asked (:func:`ragkit.text.values.asked_kind`), and whether it asks which
   rule *applies* at a moment (searches carry ``valid_at``) or what *happened* (no
   validity filter: it would hide the incident records).
2. **Query variants**, each tried only while the evidence is insufficient: the task
   itself; a structured query (the caller's tenant, the month named, when the task asks
   about an event); the identifiers alone; a keyword query (content words); and a query
   widened by pseudo-relevance feedback (terms frequent in the excerpts already seen but
   absent from the task: the cure for vocabulary mismatch).
3. **Judge each page**: an excerpt counts only if it is about the task: it names the
   task's identifiers (or an identifier the policy followed to reach it), belongs to the
   caller's tenant when the task asks about the caller's own event, and falls in the
   month named. A page with nothing that counts is "nothing here" and leads to a new query.
4. **Follow the evidence**: links in a counted excerpt's envelope are read with
   ``retrieve_documents``; identifiers the excerpt names in a sentence about a fix, a
   rollout, a policy or a follow-up are searched (ticket -> comment -> rollout -> policy).
5. **Sufficiency** is judged on the evidence, not on scores: :func:`ragkit.evidence.resolution.resolve`
   over the counted evidence decides a value of the asked kind, and the decisive sentence
   must *predicate the asked attribute of the asked entity*: situated by its heading, table
   header, title and the chain that led to it, it names a word of the asked attribute (the
   thing, not only "completed"), and the codes and names the task qualifies it with (a value
   stated without the code counts when a counted source states the same value for it). A
   decisive source that fails is set aside and resolution runs again; when nothing in scope
   states the attribute, the agent abstains and says what is missing. Cause questions take a
   sentence that states a cause, from the thread of the asked event (the ticket the task's
   own searches place best, by the cross-encoder's ranks, summed over the searches). A status
   or date asked of a record reached *from* an identifier ("the fix for OPS-1003") is not read
   from that identifier's own thread. Rule questions try the task's query variants before
   following incident threads; an exception whose condition has ended sends the agent to the
   rule it deferred to at once.
6. **Contradiction search** once a value is decided: the condition of any conditional
   source (``until cutover`` -> ``<tenant> cutover completed``); when resolution finds the
   condition met, the rule the exception deferred, searched with the exception's own words;
   then two narrow queries for
   the same entity and predicate, one with ``exception until cutover``, one with
   ``superseded revoked effective completed`` (CURRICULUM section 7's words); then resolve
   again, and check the condition of any conditional source the new evidence brought.
7. **Answer** with the resolved value first and the decisive sentence quoted, cited
   ``[doc_id#anchor]``; or **abstain**, saying what was searched, what was found, what
   is missing or which sources conflict, and what to confirm.

Example:
    >>> from ragkit.agent.loop import AgentState
    >>> state = AgentState("Which commit fixed OPS-3318?", "2026-02-02", "acme", "tool", 6)
    >>> run = OfflinePolicy().begin(state)
    >>> run.next_action(state).arguments["query"]
    'OPS-3318 commit fixed'
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragkit.agent.loop import Action, AgentState, EvidenceUse
from ragkit.text.taskparse import (
    STOPWORDS,
    TaskFrame,
    content_words,
    feedback_terms,
    find_identifiers,
    keyword_query,
    parse_task,
)
from ragkit.text.untrusted import looks_like_instruction

__all__ = ["OfflinePolicy", "OfflineRun", "Judgement", "CONTRADICTION_TERMS", "abstention_text"]

#: Words that surface what would overturn a value (CURRICULUM section 7).
CONTRADICTION_TERMS = ("superseded", "exception", "until", "effective", "revoked", "completed", "cutover")

# a sentence that points at another record: follow the identifiers it names
_HOP_CUES = re.compile(
    r"\b(fix|fixed|fixes|shipped|ships|goes out|went out|rollout|rolled|deploy\w*|release\w*|implements?|"
    r"cites?|policy|section|clause|follow-?up|tracked|tracking|see|linked|moved to|duplicate of|"
    r"merged|commit|change|build)\b",
    re.IGNORECASE,
)


# the task asks for a cause: the answer must be a sentence that states one
_CAUSE_ASK = re.compile(
    r"\b(why|cause[sd]?|explanation|explains?|reason|gone wrong|went wrong|go wrong|what made|behind)\b",
    re.IGNORECASE,
)
# English markers of a stated cause (a finding, not a symptom); resolution's markers
# (ragkit.text.relevance.CAUSE: "that is how", "which is why", "led to", ...) count as well
_CAUSAL = re.compile(
    r"\b(root cause|because|caused by|due to|as a result|the cause|the reason|short version|turned out|"
    r"traced (?:it|this|the \w+) to|the problem was|the issue was|(?:that|which) is (?:how|why)|led to|"
    r"resulted in)\b",
    re.IGNORECASE,
)


def states_cause(text: str) -> bool:
    """Whether a sentence of ``text`` states a cause ("X, and that is how Y"), not how a problem
    was noticed ("... which is how they spotted it")."""
    from ragkit.text.relevance import DETECTION
    from ragkit.text.values import sentence_spans

    return any(
        _CAUSAL.search(text[a:b]) and not DETECTION.search(text[a:b]) for a, b in sentence_spans(text)
    )


#: Reasons of the searches made with the task's own words (not hops, thread reads, contradictions).
_TASK_SEARCH = (
    "always-on retrieval",
    "first query",
    "the task as written",
    "identifiers alone",
    "keywords of the task",
    "structured:",
    "pseudo-relevance",
)

#: Task words that say nothing about *what* is asked (they never count as coverage).
GENERIC = frozenset(
    "applies apply applied use used uses value set sets caused cause causes explanation underlying problem "
    "issue wrong gone went happened made reported told side back current currently what which stand "
    "according engineering explains explain come came showed logs following follow".split()
)
#: Words that frame a question in this domain or name the kind of value asked, not the attribute:
#: nearly every passage of a payments-operations corpus says settlement, batch or tenant, and a
#: "date", "time" or "percentage" is what the value is, not what it is of.
FRAME = frozenset(
    "settlement settlements batch batches platform tenant tenants payment payments date dates day days "
    "time times number numbers percentage percent amount amounts figure name names value level many much "
    "long who whom takes take taken status change changes production".split()
)


@dataclass
class Judgement:
    """The policy's reading of the evidence so far."""

    counted: list[EvidenceUse]
    set_aside: list[tuple[EvidenceUse, str]]
    record: Any
    decided: bool
    missing: str


@dataclass
class OfflineRun:
    """One task under the offline policy (see the module docstring for the rules)."""

    frame: TaskFrame
    asked: str
    k: int = 5
    followed: set[str] = field(default_factory=set)  # identifiers searched as hops
    anchors: set[str] = field(default_factory=set)  # identifiers that make an excerpt count
    fetched: set[str] = field(default_factory=set)
    related_done: set[str] = field(default_factory=set)
    tried: set[str] = field(default_factory=set)  # names of variants already issued
    contradiction: int = 0
    conditions_checked: set[str] = field(default_factory=set)
    searched_ids: set[str] = field(default_factory=set)
    deferred: set[str] = field(default_factory=set)
    cause: bool = False  # the task asks for a cause
    target: str | None = None  # for a chain question: the source type whose content is asked
    linked: set[str] = field(default_factory=set)  # doc ids reached through a link
    # what named each identifier or document the agent followed: the sentence (with its heading and
    # table header) and the title of the record it stood in; it carries the chain's predicate
    leads: dict[str, str] = field(default_factory=dict)
    via: set[str] = field(default_factory=set)  # task identifiers named only as a chain's origin

    # -- the loop's three questions ---------------------------------------------------------
    def first_search(self, state: AgentState) -> Action:
        return _margin(self._first_search(state))

    def next_action(self, state: AgentState) -> Action:
        return _margin(self._next_action(state))

    def _first_search(self, state: AgentState) -> Action:
        self.tried.add("task")
        return Action("search", self._search_args(self.frame.task), "always-on retrieval with the task")

    def _next_action(self, state: AgentState) -> Action:
        if not state.searches and not state.steps:
            if self.frame.identifiers or len(self.frame.words) > 1:
                self.tried.add("keywords")
                return Action(
                    "search",
                    self._search_args(keyword_query(self.frame)),
                    "first query: identifiers and content words of the task",
                )
            self.tried.add("task")
            return Action("search", self._search_args(self.frame.task), "first query: the task")
        judgement = self.judge(state)
        if judgement.decided:
            action = self._onward(state, judgement)
            if action is not None:
                return action
            action = self._contradiction(state, judgement)
            if action is not None:
                return action
            return self.conclude(state, "a value is decided and the contradiction search is done")
        # an exception whose condition ended points at the rule that governs now: search it first;
        # a question about a standing rule is answered by rule sources, so the task's own query
        # variants come before following incident threads; an event question follows its records
        action = self._deferred(state, judgement)
        if action is None and not self.frame.event:
            action = self._variant(state, judgement) or self._follow(state, judgement)
        elif action is None:
            action = self._follow(state, judgement) or self._variant(state, judgement)
        if action is not None:
            return action
        return self.conclude(state, "every query variant and link is tried")

    def conclude(self, state: AgentState, why: str) -> Action:
        judgement = self.judge(state)
        if judgement.decided:
            return Action(
                "answer",
                {
                    "answer": answer_text(judgement.record, judgement.counted, cause=self.cause),
                    "value": judgement.record.decision.value,
                },
                why,
                record=judgement.record,
            )
        return Action(
            "abstain", {"answer": abstention_text(state, judgement, why)}, why, record=judgement.record
        )

    # -- judging ----------------------------------------------------------------------------
    def judge(self, state: AgentState) -> Judgement:
        from ragkit.evidence.resolution import resolve

        counted: list[EvidenceUse] = []
        aside: list[tuple[EvidenceUse, str]] = []
        visible = _visible(state)
        for use in state.evidence.values():
            if use.citation not in visible:
                continue  # beyond the page the policy reads (see _margin)
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
            best = self._best_thread(state, counted)
            if best is not None:
                # the event's own thread, or a record about it (a postmortem that names or links it)
                pool = [u for u in pool if _thread(u) == best or (_thread(u) is None and _refers_to(u, best))]
        if self.via and self.asked in ("status", "date") and state.placement != "pipeline":
            # "the review of OPS-8265 produced a follow-up ticket: where does it stand?" asks about
            # the record OPS-8265 leads to; OPS-8265's own status or dates are a neighbour's
            pool = [
                u for u in pool if _thread(u) not in self.via and str(u.item.get("doc_id")) not in self.via
            ]
        if self.target:
            # a chain question asks what the last record of the chain says (the policy, the rollout)
            # (the other records stay counted: they are the links to follow)
            pool = [u for u in pool if u.item.get("source_type") == self.target]
        record = resolve(state.task, [u.evidence for u in pool], as_of=state.as_of, caller=state.caller)
        # the decisive passage must name what the task qualifies the question with (CHF, EUR, a
        # surname) and state the asked attribute: otherwise it states a neighbouring fact; set it
        # aside and resolve again
        checked = False
        for _ in range(40):
            if record.decision is None:
                break
            found = _holder(pool, record.decision)
            lacking = self._uncovered(found, str(record.decision.quote)) if found is not None else []
            # a value stated without the code asked about ("Wayne stays on 16:00 until cutover")
            # is about that code when a counted source states the same value for it ("EUR cutoff
            # 16:00"); a value no source ties to the code (a CHF cutoff nobody states) is not
            codes = [q for q in lacking if q in self.frame.qualifiers]
            words = [q for q in lacking if q.startswith("any of")]
            # (only for a conditional exception, which states its value tersely)
            terse = found is not None and bool(found.item.get("conditions"))
            if terse and (codes or words) and _stated_for(
                counted, str(record.decision.surface), codes, self._focus() if words else ()
            ):
                lacking = [q for q in lacking if q not in codes and q not in words]
            if found is not None and not lacking and state.placement != "pipeline":
                lacking = self._unpredicated(found, record.decision)
                if lacking and terse and _stated_for(
                    counted,
                    str(record.decision.surface),
                    self.frame.qualifiers,
                    self.attribute_things() or self.attribute_terms(),
                    besides=str(record.decision.quote),
                ):
                    lacking = []
            if found is None or not lacking:
                checked = True
                break
            pool.remove(found)
            counted.remove(found)
            aside.append((found, "does not name " + ", ".join(lacking)))
            record = resolve(state.task, [u.evidence for u in pool], as_of=state.as_of, caller=state.caller)
        from ragkit.evidence.decision import Rejected

        for use, why in aside:
            reason = "neighbouring_fact" if why.startswith("does not name") else "semantic_decoy"
            if why.startswith("instruction-shaped"):
                reason = "untrusted_instruction"
            if why.startswith("published") and any(
                i.lower() in str(use.item.get("text", "")).lower() for i in self.frame.identifiers
            ):
                reason = "lexical_decoy"
            record.rejected.append(
                Rejected(use.citation, str(use.item.get("doc_id")), reason, f"set aside by the agent: {why}")
            )
        # a decision the checks above never passed (they ran out) is not one
        decided = record.status == "decided" and record.decision is not None and checked
        missing = "" if decided else self._missing(record, counted)
        return Judgement(counted, aside, record, decided, missing)

    def _why_not(self, use: EvidenceUse, state: AgentState) -> str | None:
        """``None`` if the excerpt is about the task, else why it is set aside."""
        item, f = use.item, self.frame
        hay = " ".join(
            [
                str(item.get("text", "")),
                str(item.get("title", "")),
                " ".join(map(str, item.get("entities") or [])),
            ]
        ).lower()
        if looks_like_instruction(str(item.get("text", ""))):
            return "instruction-shaped text (untrusted): evidence, never a command"
        if item.get("doc_id") in self.linked:
            return None
        ids = [i.lower() for i in f.identifiers]
        if ids and not any(i in hay for i in ids) and not any(a in hay for a in self.anchors):
            return "does not name " + " or ".join(f.identifiers)
        missing_names = [n for n in f.names if n.lower() not in hay]
        if missing_names and not ids:
            return "does not name " + ", ".join(missing_names)
        tenant = state.tenant.lower()
        if (
            f.event
            and f.tenant_named
            and tenant not in ("*", "")
            and str(item.get("tenant")).lower() != tenant
        ):
            return f"not a {state.tenant} record (the task asks about {state.tenant}'s own event)"
        if f.event and f.period:
            published = str(item.get("published_at") or "")[:10]
            start, end = f.period
            late = (dt.date.fromisoformat(end) + dt.timedelta(days=45)).isoformat()
            if published and not (start <= published < late):
                return f"published {published}, outside the period asked about ({start[:7]})"
        return None

    def _best_thread(self, state: AgentState, counted: Sequence[EvidenceUse]) -> str | None:
        """The thread (ticket key) that the searches with the task's own words place best.

        The asked event is the ticket whose report matches the task: each search of the task's
        words (the task, its keywords, the structured and feedback variants; not hops, thread reads
        or contradiction searches) votes for the threads of the counted excerpts it delivered,
        ``1 / rank`` for a thread's best excerpt by the cross-encoder's rank (the best judge of
        question-passage fit the tool shows). One search's ordering is noisy; several phrasings
        agreeing on one ticket are less so.
        """
        keep = {u.citation for u in counted}
        votes: dict[str, float] = {}
        first_seen: dict[str, int] = {}
        for step in state.steps:
            if step.action != "search" or step.refused is not None:
                continue
            if not step.reason.startswith(_TASK_SEARCH):
                continue
            best: dict[str, int] = {}
            reranked = {str(h.get("citation")): h.get("rerank") for h in step.hits}
            for n, item in enumerate(step.response.get("results") or [], 1):
                citation = str(item.get("citation"))
                if citation not in keep:
                    continue
                key = _thread(state.evidence[citation])
                rank = int(reranked.get(citation) or n)  # the cross-encoder judges question-passage fit
                if key is not None and rank < best.get(key, 10**6):
                    best[key] = rank
            for key, rank in best.items():
                votes[key] = votes.get(key, 0.0) + 1.0 / rank
                first_seen.setdefault(key, len(first_seen))
        if not votes:
            return None
        return max(votes, key=lambda k: (votes[k], -first_seen[k]))

    def _leads_for(self, use: EvidenceUse) -> str:
        """What named the record ``use`` belongs to, when the agent reached it along a chain."""
        own = (str(use.item.get("title", "")) + " " + str(use.item.get("doc_id", ""))).lower()
        return " ".join(lead for ident, lead in self.leads.items() if ident in own)

    def _focus(self) -> list[str]:
        """Content words of the ask that a passage must share (one of them) to be about it."""
        return [w for w in self.frame.predicate if w not in GENERIC and len(w) > 2 and w != self.asked]

    def _uncovered(self, use: EvidenceUse, quote: str | None = None) -> list[str]:
        """What the task names that the passage does not: codes (CHF), names, and, unless the
        passage names the task's identifiers, every content word of the ask (it must share one)."""
        hay = " ".join([str(use.item.get("text", "")), str(use.item.get("title", ""))]).lower()
        lacking = [q for q in (*self.frame.qualifiers, *self.frame.names) if q.lower() not in hay]
        hay += " " + self._leads_for(use).lower()  # a chain's words reach the record it leads to
        # named by the task's own identifiers: about the task whatever its words; reached by an
        # identifier the agent followed: only along a chain or a cause's thread
        task_ids = {i.lower() for i in self.frame.identifiers}
        anchored = any(a in hay for a in task_ids) or (
            bool(self.cause or self.target) and any(a in hay for a in self.anchors)
        )
        focus = self._focus()
        if focus and not anchored and not any(w[:5] in hay for w in focus):
            lacking.append("any of: " + ", ".join(focus))
        elif focus and not anchored and self.asked == "date" and quote is not None:
            # a date stands in many sentences (opened, planned, reported): the one that states it
            # must say what the date is of
            if not any(w[:5] in quote.lower() for w in focus):
                lacking.append("a sentence that dates " + ", ".join(focus))
        return lacking

    def attribute_terms(self) -> list[str]:
        """The words of the task that name the asked attribute or event (cutover, sweep threshold,
        escalations): its predicate minus generic and framing words and the name of the kind."""
        out = []
        for w in self.frame.predicate:
            for part in re.split(r"[-_]", w):
                if len(part) > 2 and part not in GENERIC and part not in FRAME and part not in STOPWORDS:
                    out.append(part)
        return list(dict.fromkeys(out))

    def attribute_things(self) -> list[str]:
        """The attribute terms that name a thing (cutover, reserve), not only that something
        happened (completed, fixed, approved: :data:`ragkit.text.relevance.SAME_MEANING` classes)."""
        from ragkit.text.relevance import SAME_MEANING

        verbs = {g[0] for g in SAME_MEANING}
        return [t for t in self.attribute_terms() if _stem5(t) not in verbs]

    def _unpredicated(self, use: EvidenceUse, decision: Any) -> list[str]:
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
        if self.asked == "id" and self.frame.identifiers:
            from ragkit.text.values import asked_id_shape

            if asked_id_shape(self.frame.task) not in (None, "slug") and any(
                i.lower() in quote.lower() for i in self.frame.identifiers
            ):
                return []
        title = str(use.item.get("title", ""))
        situated = " ".join([quote, _situation(text, raw), title])
        # reached along a chain: what named this record predicates it ("| OPS-7167 |" under
        # "Action items" makes OPS-7167's status the action item's status)
        situated += " " + self._leads_for(use)
        have = _stems(situated)
        # a word that only says something happened (completed, fixed, approved) does not say what
        # did: when the ask names the thing (cutover, reserve), the sentence must name it too
        things = self.attribute_things()
        if any(_stem5(t) in have for t in (things or terms)):
            return []
        return ["a sentence that states " + " / ".join(terms[:4])]

    def _missing(self, record: Any, counted: Sequence[EvidenceUse]) -> str:
        if record.status == "conflict":
            return "the sources conflict"
        if not counted:
            return "no excerpt about " + _about(self.frame)
        return f"no {self.asked} value for {' '.join(self.frame.predicate[:4]) or 'the question'} in them"

    # -- choosing the next action -----------------------------------------------------------
    def _search_args(self, query: str, **extra: Any) -> dict[str, Any]:
        args: dict[str, Any] = {"query": query, "k": self.k}
        if self.frame.valid_at:
            args["valid_at"] = self.frame.valid_at
        args.update({k: v for k, v in extra.items() if v is not None})
        return args

    def _onward(self, state: AgentState, judgement: Judgement) -> Action | None:
        """The decisive sentence points at another record ("goes out with RO-8755"): read it first."""
        decision = judgement.record.decision
        quote = str(getattr(decision, "quote", ""))
        if not _HOP_CUES.search(quote):
            return None
        return self._lead(state, quote, str(decision.citation))

    def _lead(self, state: AgentState, text: str, source: str) -> Action | None:
        """Search (or read, for a document id) one identifier named in ``text`` not yet followed."""
        task_ids = {i.lower() for i in self.frame.identifiers}
        have = {str(u.item.get("doc_id")).lower() for u in _read(state)}
        for ident, kind in find_identifiers(text):
            low = ident.lower()
            if kind not in ("key", "commit", "docref") or low in task_ids or low in self.followed:
                continue
            if low in have:
                continue
            self.followed.add(low)
            self.anchors.add(low)
            self.leads.setdefault(low, _named_in(state, source, ident, text))
            if kind == "docref":
                self.linked.add(ident)
                return Action("fetch", {"ids": [ident]}, f"read {ident}, named in {source}")
            if state.searches_left <= 0:
                return None
            return Action("search", {"query": ident, "k": 8}, f"follow {ident}, named in {source}")
        return None

    def _follow(self, state: AgentState, judgement: Judgement) -> Action | None:
        """Links and identifiers named by counted evidence (ticket -> comment -> rollout -> policy)."""
        have_docs = {str(u.item.get("doc_id")) for u in _read(state)}
        links: list[str] = []
        chain = bool(_HOP_CUES.search(self.frame.task))
        for use in judgement.counted:
            # outside a chain question, only a thread's own links are read (and successors, always)
            thread = use.item.get("source_type") in ("ticket", "ticket_comment", "postmortem")
            linked = list(use.item.get("links") or []) if chain or thread else []
            for doc_id in [*linked, *(use.item.get("superseded_by") or [])]:
                if doc_id not in have_docs and doc_id not in self.fetched and doc_id not in links:
                    links.append(str(doc_id))
                    self.leads.setdefault(str(doc_id).lower(), _named_in(state, use.citation, str(doc_id)))
        if links:
            batch = links[:4]
            self.fetched.update(batch)
            self.linked.update(batch)
            return Action("fetch", {"ids": batch}, "read documents linked from the evidence")
        # what a listing of links showed: the ticket's comments and reviews, read by id
        listed = self._listed(state, ("ticket_comment", "postmortem"), have_docs)
        if listed is not None:
            return listed
        # with no search left, a ticket's thread is listed by its links instead of searched
        for use in judgement.counted if state.searches_left <= 0 else ():
            doc_id = str(use.item.get("doc_id"))
            if use.item.get("source_type") == "ticket" and doc_id not in self.related_done:
                self.related_done.add(doc_id)
                return Action("related", {"doc_id": doc_id}, "list what links to the ticket (its comments)")
        for use in judgement.counted if _HOP_CUES.search(self.frame.task) else ():
            text = str(use.item.get("text", ""))
            for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
                if _HOP_CUES.search(sentence):
                    action = self._lead(state, sentence, use.citation)
                    if action is not None:
                        return action
        # a ticket about the task: its comments carry its key in their titles
        for use in judgement.counted:
            title = str(use.item.get("title", ""))
            if use.item.get("source_type") in ("ticket", "postmortem") and state.searches_left > 0:
                for ident, kind in find_identifiers(title):
                    low = ident.lower()
                    if kind == "key" and low not in self.followed and low not in self.searched_ids:
                        self.followed.add(low)
                        self.leads.setdefault(low, title)
                        self.anchors.add(low)
                        return Action(
                            "search", {"query": ident, "k": 8}, f"read the thread of {ident} ({use.citation})"
                        )
        return None

    def _variant(self, state: AgentState, judgement: Judgement) -> Action | None:
        if state.searches_left <= 0:
            return None
        f = self.frame
        order = (
            ["structured", "identifiers", "keywords", "feedback", "task"]
            if f.event
            else ["identifiers", "keywords", "feedback", "structured", "task"]
        )
        for name in order:
            if name in self.tried:
                continue
            self.tried.add(name)
            action = self._make_variant(name, state, judgement)
            if action is not None:
                return action
        return None

    def _make_variant(self, name: str, state: AgentState, judgement: Judgement) -> Action | None:
        f = self.frame
        if name == "task":
            return Action("search", self._search_args(f.task), "the task as written")
        if name == "identifiers" and f.identifiers:
            self.searched_ids.update(i.lower() for i in f.identifiers)
            return Action(
                "search",
                {"query": " ".join(f.identifiers), "k": 8},
                "identifiers alone (no semantic neighbourhood: BM25 finds them exactly)",
            )
        if name == "keywords" and len(f.words) > 1:
            return Action("search", self._search_args(keyword_query(f)), "keywords of the task")
        if (
            name == "structured"
            and f.event
            and (f.period or f.tenant_named)
            and state.tenant not in ("*", "")
        ):
            extra: dict[str, Any] = {"tenant": state.tenant}
            if f.period:
                extra["published_after"] = f.period[0]
                end = dt.date.fromisoformat(f.period[1]) + dt.timedelta(days=45)
                if state.as_of is None or end.isoformat() <= state.as_of:
                    extra["published_before"] = end.isoformat()
            query = " ".join(w for w in keyword_query(f).split() if w != state.tenant.lower())
            return Action(
                "search",
                self._search_args(query or f.task, **extra),
                f"structured: tenant={state.tenant}" + (f", period {f.period[0][:7]}" if f.period else ""),
            )
        if name == "feedback":
            seen = _visible(state)
            pool = judgement.counted or [
                u
                for u in state.evidence.values()
                if u.citation in seen and not looks_like_instruction(str(u.item.get("text", "")))
            ]
            texts = [str(u.item.get("text", "")) for u in pool[:6]]
            terms = feedback_terms(texts, f.task, n=4)
            if not terms:
                return None
            query = keyword_query(f) + " " + " ".join(terms)
            return Action(
                "search",
                self._search_args(query),
                "pseudo-relevance feedback: " + ", ".join(terms) + " (frequent in what was found)",
            )
        return None

    def _deferred(self, state: AgentState, judgement: Judgement) -> Action | None:
        """A conditional exception whose condition is met: the rule it deferred now governs; the
        exception's own words name that rule ("policy v3 ... moves migrated tenants to 15:00")."""
        if state.searches_left <= 0:
            return None
        for rejected in judgement.record.rejected:
            if rejected.reason != "condition_met" or rejected.citation in self.deferred:
                continue
            self.deferred.add(rejected.citation)
            exception = state.evidence.get(rejected.citation)
            if exception is None:
                continue
            owner = str(exception.item.get("tenant") or "").lower()
            words = [w for w in content_words(str(exception.item.get("text", ""))) if w != owner][:8]
            if words:
                return Action(
                    "search",
                    {"query": " ".join(words), "k": self.k},
                    f"the condition of {rejected.citation} is met: search the rule it deferred to",
                )
        return None

    def _listed(self, state: AgentState, kinds: Sequence[str], have: set[str]) -> Action | None:
        """Read (up to 4 at a time) the documents of ``kinds`` that a ``related`` listing showed
        linking to a record, in effect and not yet read."""
        for step in state.steps:
            if step.action != "related" or step.refused is not None or not step.ok:
                continue
            found = [
                str(d.get("doc_id"))
                for d in step.response.get("linked_from") or []
                if d.get("source_type") in kinds
                and d.get("validity") not in ("expired", "not_yet_valid")
                and str(d.get("doc_id")) not in have
                and str(d.get("doc_id")) not in self.fetched
            ]
            if found:
                batch = found[:4]
                self.fetched.update(batch)
                self.linked.update(batch)
                return Action("fetch", {"ids": batch}, f"read what links to {step.arguments.get('doc_id')}")
        return None

    def _citing_rules(self, state: AgentState, judgement: Judgement) -> Action | None:
        """A value decided from a rule (runbook, policy): ask what links to that rule, and read
        the rules among them; a newer rule that overrides another usually cites it ("tenants
        that have not completed cutover keep the EUR cutoff in the settlement runbook")."""
        rules = ("policy", "runbook")
        listed = self._listed(state, rules, {str(u.item.get("doc_id")) for u in _read(state)})
        if listed is not None:
            return listed
        decision = judgement.record.decision
        holder = _holder(judgement.counted, decision) if decision is not None else None
        if holder is None or holder.item.get("source_type") not in rules:
            return None
        doc_id = str(holder.item.get("doc_id"))
        if doc_id in self.related_done:
            return None
        self.related_done.add(doc_id)
        return Action("related", {"doc_id": doc_id}, f"what cites or supersedes {doc_id}, the decisive rule")

    def _contradiction(self, state: AgentState, judgement: Judgement) -> Action | None:
        """Narrow searches for what would overturn the decided value (CURRICULUM section 7).

        First, the condition of any conditional source among the evidence (``until cutover``
        -> ``<tenant> cutover completed``); then the entity and predicate with words that mark
        exceptions, and with words that mark supersession. Each runs once.
        """
        if state.searches_left <= 0:
            return None
        f = self.frame
        entity = [
            *([state.tenant] if f.tenant_named and state.tenant not in ("*", "") else []),
            *f.identifiers,
            *f.names,
            *f.qualifiers,
        ]
        for use in judgement.counted:
            for condition in use.item.get("conditions") or []:
                if condition in self.conditions_checked:
                    continue
                self.conditions_checked.add(condition)
                words = [
                    w
                    for w in re.findall(r"[A-Za-z]+", str(condition))
                    if w.lower() not in ("until", "unless", "while", "after", "before", "for", "the")
                ]
                if words:
                    owner = str(use.item.get("tenant") or "")
                    who = [owner] if owner and owner != "global" else entity[:1]
                    query = " ".join([*who, *words, "completed"])
                    return Action(
                        "search",
                        {"query": query, "k": self.k},
                        f"contradiction: is the condition '{condition}' of {use.citation} met?",
                    )
        action = self._deferred(state, judgement)
        if action is not None:
            return action
        action = self._citing_rules(state, judgement)
        if action is not None:
            return action
        if self.contradiction >= 2:
            return None
        decision = judgement.record.decision
        quote = str(getattr(decision, "quote", "")).lower()
        focus = [w for w in f.predicate if w in quote and w not in {e.lower() for e in entity}][:2]
        focus = focus or [w for w in f.predicate if w not in {e.lower() for e in entity}][:2]
        terms = (("exception", "until", "cutover"), ("superseded", "revoked", "effective", "completed"))[
            self.contradiction
        ]
        self.contradiction += 1
        query = " ".join(dict.fromkeys([*entity, *focus, *terms]))
        return Action(
            "search",
            {"query": query, "k": self.k},
            "contradiction search: same entity and predicate, " + ", ".join(terms),
        )


#: Extra results asked of every search, so that the page the policy reads (the first ``k``
#: results that are not instruction-shaped) is the same whether or not a corpus carries
#: injected text: untrusted content can neither add to nor push anything off that page.
#: Searches already at the tool's ceiling of 8 (identifier and thread searches) get no margin.
MARGIN = 2


def _margin(action: Action) -> Action:
    if action.kind != "search":
        return action
    args = dict(action.arguments)
    args["k"] = min(8, int(args.get("k") or 4) + MARGIN)
    return Action(action.kind, args, action.reason, record=action.record)


def _visible(state: AgentState) -> set[str]:
    """Citations the policy reads: per search, the first ``k - MARGIN`` clean results; every read."""
    out: set[str] = set()
    for step in state.steps:
        if step.refused is not None or not step.ok:
            continue
        if step.action == "search":
            asked = int(step.arguments.get("k") or 4)
            page = max(1, asked - MARGIN) if asked < 8 else 8  # at the tool's ceiling there is no margin
            clean = [
                str(i.get("citation"))
                for i in step.response.get("results") or []
                if not looks_like_instruction(str(i.get("text", "")))
            ]
            out.update(clean[:page])
        else:
            out.update(
                str(i.get("citation"))
                for i in step.response.get("documents") or []
                if not looks_like_instruction(str(i.get("text", "")))
            )
    return out


def _read(state: AgentState) -> list[EvidenceUse]:
    """Evidence the policy has read: visible and not instruction-shaped."""
    seen = _visible(state)
    return [u for u in state.evidence.values() if u.citation in seen]


def _stem5(word: str) -> str:
    from ragkit.text.relevance import stem

    return stem(word.lower())


def _stems(text: str) -> set[str]:
    """5-letter stems of the words of ``text``; a hyphenated or underscored compound
    (``reserve-keeper``, a service; ``open_batch_day``, a function) stays one word."""
    words = re.findall(r"[a-z0-9]+(?:[-_][a-z0-9]+)*", text.lower())
    return {w if ("-" in w or "_" in w) else _stem5(w) for w in words}


def _situation(text: str, quote: str) -> str:
    """The heading of the section and the header row of the table that hold ``quote`` in ``text``."""
    from ragkit.text.relevance import context

    pos = max(0, text.find(quote)) if quote else 0
    heading = next((ln for ln in reversed(text[:pos].splitlines()) if ln.lstrip().startswith("#")), "")
    return heading + "\n" + context(text, pos)


def _stated_for(
    uses: Sequence[EvidenceUse],
    surface: str,
    codes: Sequence[str],
    focus: Sequence[str] = (),
    *,
    besides: str = "",
) -> bool:
    """Whether a sentence of ``uses`` other than ``besides`` states ``surface``, names every code
    of ``codes`` and (if given) a word of ``focus``."""
    from ragkit.text.values import sentence_spans

    if not surface.strip():
        return False
    for use in uses:
        text = str(use.item.get("text", ""))
        for a, b in sentence_spans(text):
            sentence = text[a:b]
            if surface not in sentence or not all(re.search(rf"\b{re.escape(c)}\b", sentence) for c in codes):
                continue
            if besides and " ".join(sentence.split()) == " ".join(besides.split()):
                continue
            if not focus or any(_stem5(w) in _stems(sentence) for w in focus):
                return True
    return False


def _named_in(state: AgentState, citation: str, ident: str, sentence: str = "") -> str:
    """The line of ``citation``'s text that names ``ident`` (or ``sentence``), situated by its
    heading and table header, and the record's title."""
    use = state.evidence.get(citation)
    if use is None:
        return sentence
    text = str(use.item.get("text", ""))
    line = sentence or next((ln for ln in text.splitlines() if ident.lower() in ln.lower()), "")
    return " ".join([line, _situation(text, line) if line else "", str(use.item.get("title", ""))])


def _holder(pool: Sequence[EvidenceUse], decision: Any) -> EvidenceUse | None:
    """The evidence the decision rests on: its citation, or the whole document it was read from."""
    found = next((u for u in pool if u.citation == decision.citation), None)
    if found is not None:
        return found
    quote = " ".join(str(decision.quote).split())[:60]
    for u in pool:
        if str(u.item.get("doc_id")) == str(decision.doc_id) and quote in " ".join(
            str(u.item.get("text", "")).split()
        ):
            return u
    return None


def _refers_to(use: EvidenceUse, key: str) -> bool:
    """Whether an excerpt names the ticket ``key`` or links to its thread."""
    links = " ".join(map(str, use.item.get("links") or [])).lower()
    hay = " ".join([str(use.item.get("title", "")), str(use.item.get("text", "")), links]).lower()
    return key.lower() in hay


def _thread(use: EvidenceUse) -> str | None:
    """The ticket key a ticket or comment belongs to (from its title), else None."""
    if use.item.get("source_type") not in ("ticket", "ticket_comment"):
        return None
    found = [i for i, kind in find_identifiers(str(use.item.get("title", ""))) if kind == "key"]
    return found[0].lower() if found else None


# a record reached *from* an identifier: "the fix for X", "the review of X", "the action item
# from the postmortem for X", "the deployment that resolved X"
_RELATION = re.compile(
    r"\b(fix|change|review|postmortem|follow-?up|action items?|rollout|deployment|release)\b"
    r"(?:\s+[\w-]+){0,4}?\s+(?:for|of|from|behind|that (?:resolved|fixed|closed))\s+"
    r"(?:the\s+)?(?:ticket\s+)?$",
    re.IGNORECASE,
)


def _origins(task: str, identifiers: Sequence[str]) -> set[str]:
    """Identifiers the task names as the origin of a relation to another record (lower case)."""
    out = set()
    for ident in identifiers:
        at = task.find(ident)
        if at > 0 and _RELATION.search(task[:at].rstrip() + " "):
            out.add(ident.lower())
    return out


def _target_type(task: str) -> str | None:
    """For a question along a chain, the source type whose content is asked for (or None)."""
    if not _HOP_CUES.search(task):
        return None
    if re.search(r"\b(policy|clause)\b", task, re.IGNORECASE):
        return "policy"
    if re.search(r"\b(build|rolling out|rolled out|finish(ed)? rolling|deployment)\b", task, re.IGNORECASE):
        return "rollout"
    return None


class OfflinePolicy:
    """The default policy of :class:`ragkit.agent.loop.Agent`: documented rules, no model.

    Args:
        k: results per search (the tool's ceiling still applies).
    """

    name = "offline"

    def __init__(self, *, k: int = 5):
        self.k = k

    def begin(self, state: AgentState) -> OfflineRun:
        from ragkit.text.values import asked_kind

        frame = parse_task(state.task, tenant=state.tenant, as_of=state.as_of)
        return OfflineRun(
            via=_origins(state.task, frame.identifiers),
            cause=asked_kind(state.task) == "text" and bool(_CAUSE_ASK.search(state.task)),
            target=_target_type(state.task),
            frame=frame,
            asked=asked_kind(state.task),
            k=self.k,
            anchors={i.lower() for i in frame.identifiers},
        )


def _about(frame: TaskFrame) -> str:
    parts = [*frame.identifiers, *frame.names]
    if frame.tenant_named:
        parts.insert(0, frame.tenant)
    what = " ".join(frame.predicate[:5])
    when = f" in {frame.period[0][:7]}" if frame.period else (f" on {frame.date}" if frame.date else "")
    return (" ".join(parts) + " " + what).strip() + when


def cite_each(text: str, citation: str) -> str:
    """``text`` with ``[citation]`` before the end of each of its sentences."""
    from ragkit.text.values import sentence_spans

    out = []
    for a, b in sentence_spans(text) or [(0, len(text))]:
        sentence = " ".join(text[a:b].split()).rstrip(" .;:")
        if sentence:
            out.append(f"{sentence} [{citation}].")
    return " ".join(out)


def answer_text(record: Any, counted: Sequence[EvidenceUse] = (), *, cause: bool = False) -> str:
    """The answer: the resolved value first, then the decisive passage quoted, each cited.

    For a cause question the answer is the sentence of the decisive passage that states the
    cause; for other free-text and status answers the quote is the decisive sentence's
    paragraph (at most about 100 words).
    """
    d = record.decision
    citation = _section_citation(d, counted)
    if citation != d.citation:
        from dataclasses import replace

        d = replace(d, citation=citation)
    if cause:
        # the paragraph that states the cause (its first sentence often holds the finding)
        use = next((u for u in counted if u.citation == record.decision.citation), None)
        text = str(use.item.get("text", "")) if use is not None else ""
        passage = _window(text, str(d.quote)) if text else ""
        if not _CAUSAL.search(passage):
            from ragkit.text.values import sentence_spans

            passage = next((text[a:b] for a, b in sentence_spans(text) if _CAUSAL.search(text[a:b])), passage)
        if passage:
            return cite_each(passage, d.citation)
    quote = " ".join(str(d.quote).split())
    surface = " ".join(str(d.surface).split())
    # "Answer: <value>": the value leads, and a bare surname reads as a person after the colon
    head = cite_each(f"Answer: {surface}", d.citation)
    if d.kind in ("text", "status"):
        use = next((u for u in counted if u.citation == record.decision.citation), None)
        if use is not None:
            quote = _window(str(use.item.get("text", "")), str(d.quote)) or quote
    if quote.lower().strip(" .") == surface.lower().strip(" ."):
        return head
    return f"{head} {cite_each(quote, d.citation)}"


def _section_citation(d: Any, counted: Sequence[EvidenceUse]) -> str:
    """``doc_id#anchor`` of the section holding the decision when a whole document was read."""
    if "#" in str(d.citation):
        return str(d.citation)
    from ragkit.documents.chunking import sections

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
    from ragkit.text.values import sentence_spans

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
