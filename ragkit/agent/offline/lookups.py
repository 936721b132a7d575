"""Looking things up before reading on: the record the ask names, read whole (or, named by type
and key and not delivered yet, searched among records of that type: "the OPS-4025 postmortem"); a
thing the ask names by its relation to an identifier ("the bank that holds tyrell-19559"), by
other cells of its table row ("Stark's euro account at Vireo Bank") or by whose it is ("Tyrell's
bank"); a clause a delivered section refers to by what the question asks ("subject to the cap in
clause 12.4").

Part of the offline policy's moves (:mod:`ragkit.agent.offline.moves` builds on :class:`Lookups`);
each returns the next action, or ``None`` when it has nothing to look up.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ragkit.agent.offline.judging import Judgement, Judging
from ragkit.agent.offline.page import read_uses
from ragkit.agent.offline.passages import UNSTATED, named_in, record_text, thread_of
from ragkit.agent.state import Action, AgentState
from ragkit.text.asking import ask_of
from ragkit.text.profile import active_profile
from ragkit.text.references import clause_span, named_references
from ragkit.text.relevance import (
    context,
    is_heading_or_table_head,
    is_table_row,
    mentions,
    table_cell,
    with_codes,
)
from ragkit.text.subjects import relative_thing, subject_words, typed_records, which_noun
from ragkit.text.taskparse import content_words
from ragkit.text.words import ID_VALUE_PATTERN, stem, word_stems

__all__ = ["Lookups"]

_Rows = dict[str, tuple[int, Any, str]]  # what a named row leads to -> (cells named, evidence, row)
#: "Tyrell's bank", "their bank": a thing named by whose it is
_OWNED = re.compile(r"(\b(?!(?:What|Who|Where|When|How|That|There|Here|It|Let|This)'s)[A-Z][\w-]+'s"
                    r"|\btheir|\bits)\s+([a-z]+)\b")
#: "the bank that holds tyrell-19559": a thing (group 1) named by its relation (2) to an identifier (3)
#: "7.1 Recovery objectives (continued)": a section that carries on a table opened before it
_CONTINUED = re.compile(r"^#+\s*(?:[\w.]*\d[\w.]*\s+)?(.*?)\s*\(?\bcontinued\b\)?\s*$", re.IGNORECASE)
_DESCRIBED = re.compile(r"\bthe\s+([a-z]+)\s+(?:that|which|who)\s+([a-z]+)\s+(?:the\s+)?(?:[a-z]+\s+)?"
                        r"([\w-]*\d[\w-]*)", re.IGNORECASE)


class Lookups(Judging):
    """The offline policy's look-ups (see the module docstring)."""

    def search_args(self, query: str, **extra: Any) -> dict[str, Any]:
        """The arguments of a search for ``query``: ``k``, the task's ``valid_at``, and ``extra`` filters."""
        args: dict[str, Any] = {"query": query, "k": self.k}
        if self.frame.valid_at:
            args["valid_at"] = self.frame.valid_at
        args.update({k: v for k, v in extra.items() if v is not None})
        return args

    def read_asked_record(self, state: AgentState, judgement: Judgement, *,
                          decided: bool = False) -> Action | None:
        """The record the ask names by its type ("what came out of the OPS-1847 postmortem"), read
        whole when only some of its sections were delivered: the section that answers may be one
        no query reached (an action-items table under a postmortem's other sections). Once a value
        is ``decided``, only a record named by type and key together ("the OPS-9577 postmortem")."""
        words = set(content_words(ask_of(self.frame.task)))
        named = {t for t in active_profile().source_types if t in words or f"{t}s" in words}
        ids = [i.lower() for i in self.frame.identifiers]
        if decided:
            named = typed_records(self.frame.task, ids, sorted(named))
        if not named and (not ids or decided):
            return None
        names = [n.lower() for n in self.frame.names]
        for use in read_uses(state):
            doc_id = str(use.item.get("doc_id"))
            # the record the ask names by its type, or by its own key ("For OPS-6937, how much ...?"),
            # or a record about that key outside its thread (the postmortem whose entities name it)
            entities = {str(e).lower() for e in use.item.get("entities") or []}
            own = doc_id.lower() in ids or bool(entities & set(ids)) and thread_of(use) is None
            own = own and not decided
            if use.item.get("source_type") not in named and not own or doc_id in self.fetched:
                continue
            if doc_id.lower() in self.via or thread_of(use) in self.via:
                continue  # "the review of OPS-8265 produced a follow-up ticket": not OPS-8265 itself
            hay = " ".join([doc_id, str(use.item.get("title", "")), str(use.item.get("text", ""))]).lower()
            if (ids and any(i in hay for i in ids)) or (not ids and names and all(n in hay for n in names)):
                self.fetched.add(doc_id)
                self.linked.add(doc_id)
                kind = use.item.get("source_type")
                return Action("fetch", {"ids": [doc_id]},
                              f"read the {kind} the task names, whole ({use.citation})")
        # none delivered yet ("the OPS-4025 postmortem"): search among records of that type, once
        have = {str(u.item.get("source_type")) for u in read_uses(state)
                if any(i in record_text(u) for i in ids)}
        # named by type and key together: "the OPS-4025 postmortem", "the postmortem for OPS-4025"
        for kind in sorted(typed_records(self.frame.task, ids, sorted(named - have))):
            if f"typed:{kind}" in self.tried or state.searches_left <= 0:
                continue
            self.tried.add(f"typed:{kind}")
            return Action("search", self.search_args(" ".join(self.frame.identifiers), doc_type=kind),
                          f"search the {kind} the task names ({', '.join(self.frame.identifiers)})")
        return None

    def described_thing(self, state: AgentState) -> Action | None:
        """"The bank that holds tyrell-19559": the question names a thing by its relation to an
        identifier. Once a table row names the identifier, the thing's name is the row's cell under
        the thing's column (*Bank*: Vireo Bank); search for what is asked about it. Its name then
        makes its documents count, as a followed identifier does."""
        m = _DESCRIBED.search(ask_of(self.frame.task))
        if m is None and state.searches_left > 0 and not self.frame.identifiers:
            return self._row_described(state) or self._row_named(state)
        if m is None and state.searches_left > 0:
            return self._object_named(state)
        if m is None or state.searches_left <= 0:
            return None
        noun, verb, ident = m.group(1).lower(), m.group(2).lower(), m.group(3).lower()
        for use in read_uses(state):
            text = str(use.item.get("text", ""))
            for line in re.finditer(r"[^\n]+", text):
                named = ident in line.group(0).lower()
                cell = table_cell(text, *line.span(), f"Which {noun}?") if named else None
                name = text[cell[0]:cell[1]].strip() if cell else ""
                if not name or name.lower() in self.followed:
                    continue
                self.followed.add(name.lower())
                self.anchors.add(name.lower())
                self.leads.setdefault(name.lower(), named_in(state, use.citation, ident, line.group(0)))
                rest = [w for w in self.frame.predicate if w not in (noun, verb) and w not in ident]
                return Action("search", self.search_args(" ".join([name, *rest])),
                              f"the {noun} that {verb} {m.group(3)} is {name} ({use.citation})")
        return None

    def _object_named(self, state: AgentState) -> Action | None:
        """"Which bank holds the account affected in OPS-1769?": the question asks a thing (a bank) of
        another that it names by a noun (the account). Once the task's own record names that noun
        with an identifier ("Affected account hooli-45727"), search for the identifier, once."""
        asked = which_noun(self.frame.predicate, self.frame.task)
        nouns = [w for w in self.frame.predicate if asked and w != asked[0] and len(w) > 2]
        task_ids = {i.lower() for i in self.frame.identifiers}
        noun_then = re.compile(rf"\b(?:{'|'.join(map(re.escape, nouns))})\s+(?=(\S+))", re.IGNORECASE)
        for use in read_uses(state) if nouns else ():
            if not any(i in record_text(use) for i in task_ids):
                continue  # only the task's own record says which thing it is about
            text = str(use.item.get("text", ""))
            for m in noun_then.finditer(text):
                named = m.group(1).rstrip(".,;:)")
                ident = named.lower()
                if not ID_VALUE_PATTERN.fullmatch(ident) or ident in self.followed or ident in task_ids:
                    continue
                self.referents.append(named)  # the question is about it: its row answers
                self.followed.add(ident)
                self.anchors.add(ident)
                self.leads.setdefault(ident, named_in(state, use.citation, ident, text))
                return Action("search", self.search_args(ident, k=8),
                              f"the {asked[0]} asked of {m.group(0)}{ident} ({use.citation})")
        return None

    def _row_named(self, state: AgentState) -> Action | None:
        """"Stark's euro account at Vireo Bank", "the bank that holds Soylent's Danish krone account":
        a question with no identifier of its own names a table row by two or more of its cells (a
        currency in words, a bank, the tenant an account's id starts with). What the rest of the
        question is about is the row's one identifier it does not name (or, for "the bank that ...",
        the row's cell under that column): search for it, once, when exactly one row is named best.
        "Tyrell's bank" names the row by one cell, the column by its noun, when the rows so named
        all give the same cell; with no such table delivered, the owner's table is searched for."""
        ask = ask_of(self.frame.task)
        thing, owned = relative_thing(ask), _OWNED.search(ask)
        found = self._named_rows(state, ask, thing or "", 2)
        if not found and owned:  # ("the bank behind Wayne's euro account": Wayne's table names it)
            noun, whose = owned.group(2), owned.group(1).removesuffix("'s")
            found = {} if thing else self._named_rows(state, ask, noun, 1)
            if not found and f"owned:{noun}" not in self.tried:
                self.tried.add(f"owned:{noun}")  # no table names it yet: the owner's ("Tyrell bank")
                owner = self.frame.tenant if whose.lower() in ("their", "its") else whose
                return Action("search", self.search_args(f"{owner} {noun}"),
                              f"find {whose}'s {noun} in a table")
        best = max((n for n, _, _ in found.values()), default=0)
        top = [name for name, (n, _, _) in found.items() if n == best]
        if len(top) != 1 or top[0] in self.followed:
            return None
        name, (_, use, row) = top[0], found[top[0]]
        self.followed.add(name)
        self.anchors.add(name)
        if thing:  # "the bank behind Wayne's euro account" is the one its row names: the question's subject
            self.referents.append(row[row.lower().index(name):][: len(name)])
        self.leads.setdefault(name, named_in(state, use.citation, name, row))
        self.described |= set(re.findall(r"[a-z]+", self.leads[name].lower()))  # the row names the thing
        rest = [w for w in self.frame.predicate if not mentions(row, w)]
        return Action("search", self.search_args(" ".join([name, *rest])),
                      f"the question names the row of {name} by its other cells ({use.citation})")

    def _row_described(self, state: AgentState) -> Action | None:
        """"the follow-up (documenting their manual release procedure)": the question describes a table
        row in its own words ("| OPS-2443 | Document the manual release procedure for this tenant |"):
        three or more of a cell's content words, and most of them (or every word of the subject a
        passive ask or a topic names: "the dashboard panel"). What it asks is about the row's
        one identifier: search for it, once, when exactly one row is so described."""
        asked = word_stems(ask_of(self.frame.task))
        subject = {stem(w.lower()) for w in subject_words(self.frame.task)}  # ("the dashboard panel")
        rows: dict[str, tuple[Any, str]] = {}
        for use, _, line, cells in _body_rows(state):
            ids = [c for c in cells if ID_VALUE_PATTERN.fullmatch(c)]
            words = [word_stems(" ".join(content_words(c))) for c in cells if c not in ids]
            if len(ids) == 1 and any(len(w & asked) >= 3 and 2 * len(w & asked) > len(w)
                                     or len(subject) > 1 and subject <= w for w in words):
                rows.setdefault(ids[0].lower(), (use, line.group(0)))
        if len(rows) != 1 or next(iter(rows)) in self.followed:
            return None
        (name, (use, row)), = rows.items()
        self.referents.append(next(c for c in re.findall(r"[\w-]+", row) if c.lower() == name))
        self.followed.add(name)
        self.anchors.add(name)
        self.leads.setdefault(name, named_in(state, use.citation, name, row))
        return Action("search", self.search_args(name, k=8),
                      f"the question describes the row of {name} ({use.citation})")

    def _named_rows(self, state: AgentState, ask: str, noun: str, need: int) -> _Rows:
        """Table rows that ``ask`` names by ``need`` or more cells: what each leads to (its cell under
        ``noun``'s column, or its one unnamed identifier) -> (cells named, the evidence, the row)."""
        coded = with_codes(ask)
        found: _Rows = {}
        for use, text, line, cells in _body_rows(state):
            a, b = line.span()
            ids = [c for c in cells if ID_VALUE_PATTERN.fullmatch(c)]
            # (an account's id names the tenant it starts with: "soylent-68001" for Soylent's)
            named = [c for c in cells
                     if c and (mentions(coded, c) or c in ids and mentions(ask, c.split("-")[0]))]
            where = context(text, a)  # the row's heading and header
            if len(named) < need or need == 1 and stem(noun) not in word_stems(where):
                continue
            cell = table_cell(text, a, b, f"Which {noun}?") if noun else None
            # an identifier the question names by its column ("... euro *account* at Vireo Bank")
            head = where.splitlines()[-1].strip().strip("|").split("|")
            unnamed = [c for c in ids if not mentions(ask, c) and len(head) == len(cells)
                       and stem(head[cells.index(c)].strip().lower()) in word_stems(ask)]
            # (a row with no column for the thing a relative clause asks, "the bank that ...", names none)
            names = [text[cell[0]:cell[1]].strip()] if cell else [] if noun and need > 1 else unnamed
            if len(names) == 1 and not mentions(coded, names[0]):
                found.setdefault(names[0].lower(), (len(named), use, line.group(0)))
        return found

    def referenced_clause(self, state: AgentState, judgement: Judgement) -> Action | None:
        """"... subject to the cap in clause 12.4": when a delivered section refers to a numbered
        clause by a word the question asks about (the cap) and no delivered text of that document
        opens the clause, read the document whole (the clause states the figure)."""
        asked = {stem(w) for w in self.frame.predicate}
        uses = read_uses(state)
        # (about the task: counted, or set aside only for not stating the asked attribute itself)
        about = [*judgement.counted, *(u for u, why in judgement.set_aside if UNSTATED in why)]
        for use in about:
            doc_id = str(use.item.get("doc_id"))
            refs = named_references(str(use.item.get("text", ""))) if doc_id not in self.fetched else []
            for what, number in refs:
                if not word_stems(what) & asked or any(
                    str(u.item.get("doc_id")) == doc_id and clause_span(str(u.item.get("text", "")), number)
                    for u in uses
                ):
                    continue
                self.fetched.add(doc_id)
                return Action("fetch", {"ids": [doc_id]},
                              f"read {doc_id} whole: {use.citation} names the {what} in clause {number}")
        return None

    def opened_table(self, state: AgentState, judgement: Judgement) -> Action | None:
        """A table continued under a new heading ("7.1 Recovery objectives (continued)") is defined by
        the section that opened it: what its columns mean ("the recovery time objective (RTO) is how
        long ..."). When such a section is about the task and no delivered section of its document
        opens the topic, search the topic in the document's words, once per document."""
        about = [*judgement.counted, *(u for u, why in judgement.set_aside if UNSTATED in why)]
        for use in about:
            doc_id, text = str(use.item.get("doc_id")), str(use.item.get("text", ""))
            heading = next((ln for ln in text.splitlines() if ln.lstrip().startswith("#")), "")
            m = _CONTINUED.match(heading.strip())
            if m is None or not m.group(1) or f"opened:{doc_id}" in self.tried or state.searches_left <= 0:
                continue
            topic = m.group(1).strip(" .:-")
            opening = [str(u.item.get("text", "")).lower() for u in read_uses(state)
                       if str(u.item.get("doc_id")) == doc_id and u is not use]
            if any(topic.lower() in t and "continued" not in t[:200] for t in opening):
                continue
            self.tried.add(f"opened:{doc_id}")
            return Action("search", self.search_args(f"{use.item.get('title', '')} {topic}"),
                          f"read where the table of {use.citation} opens ({topic})")
        return None

    def read_cause_review(self, state: AgentState, judgement: Judgement) -> Action | None:
        """A cause question: the review written after the event (the profile's ``cause_review`` types:
        a postmortem) states its cause in a section of its own, whatever words the ticket's thread uses.
        When a section of such a review about the task was delivered, read the review whole, once."""
        kinds = active_profile().source_roles.get("cause_review", ())
        for use in judgement.counted if self.cause else ():
            doc_id = str(use.item.get("doc_id"))
            if use.item.get("source_type") in kinds and doc_id not in self.fetched:
                self.fetched.add(doc_id)
                self.linked.add(doc_id)
                return Action("fetch", {"ids": [doc_id]},
                              f"read the review of the event whole ({use.citation})")
        return None


def _body_rows(state: AgentState) -> Iterator[tuple[Any, str, re.Match[str], list[str]]]:
    """Every body row of a table in what was delivered: (its excerpt, the text, the row's line, its cells)."""
    for use in read_uses(state):
        text = str(use.item.get("text", ""))
        for line in re.finditer(r"[^\n]+", text):
            if is_table_row(line.group(0)) and not is_heading_or_table_head(text, *line.span()):
                yield use, text, line, [c.strip() for c in line.group(0).strip().strip("|").split("|")]
