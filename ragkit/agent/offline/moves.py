"""Choosing the next action: query variants, following the evidence, contradiction searches.

Rules 2, 4 and 6 of the offline policy (:mod:`ragkit.agent.offline`). While the evidence is
insufficient the policy tries the task's query variants (:meth:`Moves.next_variant`: the task,
a structured query, the identifiers alone, the keywords, for a standing rule the keywords among
the profile's rule sources, pseudo-relevance feedback) and follows what counted evidence names
(:meth:`Moves.follow_evidence`: links, a ticket's thread, the identifiers of a sentence about a
fix, rollout or policy; :mod:`ragkit.agent.offline.lookups`: the record the ask names by its
type, read whole, a thing named by its relation to an identifier, a clause a section refers to).
Once a value is decided it reads the record the decisive sentence points at
(:meth:`Moves.onward_lead`, or the clause a section refers to) and searches for what would
overturn the value (:meth:`Moves.contradiction_search`; :meth:`Moves.deferred_rule` when an
exception's condition has ended).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from ragkit.agent.offline.judging import Judgement
from ragkit.agent.offline.lookups import Lookups
from ragkit.agent.offline.page import read_uses, reading_order
from ragkit.agent.offline.passages import holder, named_in, thread_of
from ragkit.agent.offline.reading import HOP_CUES, ROLES
from ragkit.agent.state import Action, AgentState
from ragkit.text.profile import active_profile
from ragkit.text.profile_views import ProfileSeq
from ragkit.text.taskparse import content_words, feedback_terms, find_identifiers, keyword_query
from ragkit.text.untrusted import looks_like_instruction

__all__ = ["CONTRADICTION_TERMS", "Moves"]

#: Words that surface what would overturn a value (CURRICULUM section 7; the profile's
#: ``contradiction_terms``).
CONTRADICTION_TERMS: ProfileSeq[str] = ProfileSeq(lambda p: p.contradiction_terms)


class Moves(Lookups):
    """The offline policy's next moves (see the module docstring)."""

    def onward_lead(self, state: AgentState, judgement: Judgement) -> Action | None:
        """The decisive sentence points at another record ("goes out with RO-8755"): read it first."""
        decision = judgement.record.decision
        quote = str(getattr(decision, "quote", ""))
        if decision is None or not HOP_CUES.search(quote):
            return None
        return self._lead(state, quote, str(decision.citation))

    def _lead(self, state: AgentState, text: str, source: str) -> Action | None:
        """Search (or read, for a document id) one identifier named in ``text`` not yet followed;
        one already delivered (by an earlier search) counts as reached along this lead."""
        task_ids = {i.lower() for i in self.frame.identifiers}
        have = {str(u.item.get("doc_id")).lower() for u in read_uses(state)}
        for ident, kind in find_identifiers(text):
            low = ident.lower()
            if kind not in ("key", "commit", "docref") or low in task_ids or low in self.followed:
                continue
            if low in have:  # (not "followed": its thread may still be read)
                self.anchors.add(low)
                self.leads.setdefault(low, named_in(state, source, ident, text))
                continue
            self.followed.add(low)
            self.anchors.add(low)
            self.leads.setdefault(low, named_in(state, source, ident, text))
            if kind == "docref":
                self.linked.add(ident)
                return Action("fetch", {"ids": [ident]}, f"read {ident}, named in {source}")
            if state.searches_left <= 0:
                return None
            return Action("search", {"query": ident, "k": 8}, f"follow {ident}, named in {source}")
        return None

    def follow_evidence(self, state: AgentState, judgement: Judgement) -> Action | None:
        """Links and identifiers named by counted evidence (ticket -> comment -> rollout -> policy)."""
        have_docs = {str(u.item.get("doc_id")) for u in read_uses(state)}
        links: list[str] = []
        chain = bool(HOP_CUES.search(self.frame.task))
        for use in judgement.counted:
            # outside a chain question, only a thread's own links are read (and successors, always)
            thread = use.item.get("source_type") in ROLES.get("thread", ())
            linked = list(use.item.get("links") or []) if chain or thread else []
            for doc_id in [*linked, *(use.item.get("superseded_by") or [])]:
                if not chain and str(doc_id).lower() == thread_of(use):  # a comment's own ticket
                    self.threaded.add(str(doc_id).lower())
                if doc_id in have_docs and doc_id not in self.linked:
                    # delivered already (by another search, or another ask's): reached by this link too
                    self.linked.add(str(doc_id))
                    self.leads.setdefault(str(doc_id).lower(), named_in(state, use.citation, str(doc_id)))
                if doc_id not in have_docs and doc_id not in self.fetched and doc_id not in links:
                    links.append(str(doc_id))
                    self.leads.setdefault(str(doc_id).lower(), named_in(state, use.citation, str(doc_id)))
        if links:
            batch = links[:4]
            self.fetched.update(batch)
            self.linked.update(batch)
            return Action("fetch", {"ids": batch}, "read documents linked from the evidence")
        # what a listing of links showed: the ticket's comments and reviews, read by id
        listed = self._listed(state, ROLES.get("thread_replies", ()), have_docs)
        if listed is not None:
            return listed
        # with no search left, a ticket's thread is listed by its links instead of searched
        for use in judgement.counted if state.searches_left <= 0 else ():
            doc_id = str(use.item.get("doc_id"))
            listed_type = use.item.get("source_type") in ROLES.get("listed_by_links", ())
            if listed_type and doc_id not in self.related_done:
                self.related_done.add(doc_id)
                return Action("related", {"doc_id": doc_id}, f"list what links to {doc_id} (its comments)")
        # the task's own record, set aside for not stating the asked value, may say where it went
        # on ("ships in RO-8941"): the asked value is then in the record it names
        ids = {i.lower() for i in self.frame.identifiers}
        own = [u for u, _ in judgement.set_aside
               if str(u.item.get("doc_id")).lower() in ids or thread_of(u) in ids]
        for use in [*judgement.counted, *own] if chain else ():
            text = str(use.item.get("text", ""))
            for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
                if HOP_CUES.search(sentence):
                    action = self._lead(state, sentence, use.citation)
                    if action is not None:
                        return action
        # a ticket about the task: its comments carry its key in their titles
        for use in judgement.counted:
            title = str(use.item.get("title", ""))
            if use.item.get("source_type") in ROLES.get("titled_thread", ()) and state.searches_left > 0:
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

    def next_variant(self, state: AgentState, judgement: Judgement) -> Action | None:
        """The next query variant not yet tried (the order depends on whether it asks about an event)."""
        if state.searches_left <= 0:
            return None
        f = self.frame
        order = (
            ["structured", "identifiers", "keywords", "feedback", "task"]
            if f.event
            else ["identifiers", "keywords", "rules", "feedback", "structured", "task"]
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
            return Action("search", self.search_args(f.task), "the task as written")
        if name == "identifiers" and f.identifiers:
            self.searched_ids.update(i.lower() for i in f.identifiers)
            return Action(
                "search",
                {"query": " ".join(f.identifiers), "k": 8},
                "identifiers alone (no semantic neighbourhood: BM25 finds them exactly)",
            )
        if name == "keywords" and len(f.words) > 1:
            return Action("search", self.search_args(keyword_query(f)), "keywords of the task")
        rules = ROLES.get("rule", ())
        if name == "rules" and rules and not f.event:
            # a standing rule is stated by the sources that own rules, not by the incidents that
            # mention it: the keywords again, among those source types only
            return Action(
                "search",
                self.search_args(keyword_query(f), doc_type=",".join(rules)),
                "keywords among the sources that state rules (" + ", ".join(rules) + ")",
            )
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
                self.search_args(query or f.task, **extra),
                f"structured: tenant={state.tenant}" + (f", period {f.period[0][:7]}" if f.period else ""),
            )
        if name == "feedback":
            # (in the order the pages showed them: what a margin held does not reorder the pool)
            counted = {u.citation for u in judgement.counted}
            pool = [
                state.evidence[c] for c in reading_order(state)
                if c in state.evidence and (c in counted if counted else not looks_like_instruction(
                    str(state.evidence[c].item.get("text", ""))))
            ]
            texts = [str(u.item.get("text", "")) for u in pool[:6]]
            terms = feedback_terms(texts, f.task, n=4)
            if not terms:
                return None
            query = keyword_query(f) + " " + " ".join(terms)
            return Action(
                "search",
                self.search_args(query),
                "pseudo-relevance feedback: " + ", ".join(terms) + " (frequent in what was found)",
            )
        return None

    def deferred_rule(self, state: AgentState, judgement: Judgement) -> Action | None:
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

    def list_named_record(self, state: AgentState) -> Action | None:
        """Before abstaining: list what links to a record the task names by key. A ticket does not
        link to its review; the review links to it (the next step reads the replies listed)."""
        kinds = ROLES.get("listed_by_links", ())
        have = {str(u.item.get("doc_id")).lower() for u in read_uses(state)
                if u.item.get("source_type") in kinds}
        for doc_id in (i.lower() for i in self.frame.identifiers):
            if doc_id in have and doc_id not in self.related_done:
                self.related_done.add(doc_id)
                return Action("related", {"doc_id": doc_id}, f"list what links to {doc_id}, the record named")
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
        rules = ROLES.get("rule", ())
        listed = self._listed(state, rules, {str(u.item.get("doc_id")) for u in read_uses(state)})
        if listed is not None:
            return listed
        decision = judgement.record.decision
        rule = holder(judgement.counted, decision) if decision is not None else None
        if rule is None or rule.item.get("source_type") not in rules:
            return None
        doc_id = str(rule.item.get("doc_id"))
        if doc_id in self.related_done:
            return None
        self.related_done.add(doc_id)
        return Action("related", {"doc_id": doc_id}, f"what cites or supersedes {doc_id}, the decisive rule")

    def contradiction_search(self, state: AgentState, judgement: Judgement) -> Action | None:
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
                    if w.lower() not in active_profile().condition_stopwords
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
        action = self.deferred_rule(state, judgement)
        if action is not None:
            return action
        action = self._citing_rules(state, judgement)
        if action is not None:
            return action
        if self.contradiction >= len(active_profile().contradiction_rounds):
            return None
        decision = judgement.record.decision
        quote = str(getattr(decision, "quote", "")).lower()
        focus = [w for w in f.predicate if w in quote and w not in {e.lower() for e in entity}][:2]
        focus = focus or [w for w in f.predicate if w not in {e.lower() for e in entity}][:2]
        terms = active_profile().contradiction_rounds[self.contradiction]
        self.contradiction += 1
        query = " ".join(dict.fromkeys([*entity, *focus, *terms]))
        return Action(
            "search",
            {"query": query, "k": self.k},
            "contradiction search: same entity and predicate, " + ", ".join(terms),
        )
