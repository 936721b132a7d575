"""The working state of one resolution: each delivered source as an :class:`Item`, and the question as read.

:class:`Resolution` holds what every rule of :mod:`ragkit.evidence.resolution` reads and writes: the
question read once (the forms, identifier shape and counted unit it asks for, its content-word
stems, the tenants, identifiers and codes it names, the caller's scope, ``as_of``), the items, and what stays
unresolved or to confirm. Each rule (:mod:`ragkit.evidence.envelope_rules`,
:mod:`ragkit.evidence.relevant_values`, :mod:`ragkit.evidence.authority`,
:mod:`ragkit.evidence.roles`) moves items from ``open`` to ``rejected`` or ``selected``.

Example:
    >>> ev = Evidence.of("rb-1#cutoff", "EUR cutoff 16:00 CET.", {"doc_id": "rb-1"})
    >>> r = Resolution("Which EUR cutoff applies?", [ev, ev], "2026-01-19", None)
    >>> len(r.items), r.forms, sorted(r.codes), r.items[0].state
    (1, ('time',), ['EUR'], 'open')
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.core.records import GLOBAL_TENANT, parse_time
from ragkit.core.scope import Scope, as_scope
from ragkit.evidence.decision import Conflict
from ragkit.evidence.fit import SentenceFit
from ragkit.evidence.spans import Evidence
from ragkit.text.asked import (
    asked_forms,
    asked_id_shape,
    asked_kind,
    asked_unit,
    proposed_identifiers,
    without_measures,
)
from ragkit.text.asking import ask_of, is_yes_no
from ragkit.text.profile import active_profile
from ragkit.text.profile_views import ProfileMap
from ragkit.text.references import holds, references
from ragkit.text.relevance import (
    CAUSAL_QUESTION,
    DEONTIC_QUESTION,
    NOT_CODES,
    mentions,
    named_codes,
    named_month,
    negated_terms,
    question_terms,
    unexcluded,
)
from ragkit.text.subjects import described_clause, typed_records
from ragkit.text.values import Value, read_values
from ragkit.text.words import stem

#: Authority ranks (the profile's ``authority_ranks``; equal to :data:`ragkit.core.records.AUTHORITY_RANK`).
_RANKS: ProfileMap[int] = ProfileMap("authority_ranks")

__all__ = ["Item", "Resolution", "iso_day", "names_identifier", "refers_to"]


@dataclass
class Item:
    """One delivered source as resolution works on it.

    Attributes:
        ev: the evidence.
        state: ``open``, ``rejected`` or ``selected``.
        reason: the reject reason (:data:`ragkit.evidence.decision.REJECT_REASONS`).
        because: why it was rejected or selected, in words.
        by: the citation of the evidence that rejected it, if any.
        value: the relevant value read from it (offsets in the span).
        score: how well that value's sentence relates to the question.
        exception_open: it has conditions and none of them has ended.
        validity: ``valid``, ``unknown``, ``not_yet_valid`` or ``expired`` at ``as_of``.
        role: when selected: ``decisive``, ``qualifier``, ``hop`` or ``support``.
        matched: what the question names that the value's sentence names too.
        off_code: a value was skipped because it is stated for another code.
        fit: the cross-encoder's logit for the value's sentence (0.0 when resolution runs without one).
    """

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
    fit: float = 0.0

    @property
    def val(self) -> str:
        """The normalised value (``""`` when none)."""
        return self.value.value if self.value is not None else ""

    @property
    def surface(self) -> str:
        """The value as written (``""`` when none)."""
        return self.value.surface if self.value is not None else ""

    @property
    def rank(self) -> int:
        """The authority rank of its source (:data:`ragkit.core.records.AUTHORITY_RANK`)."""
        return _RANKS.get(self.ev.envelope.authority, 0)

    @property
    def when(self) -> dt.datetime:
        """Its effective date, else its publication date, else the earliest moment."""
        env = self.ev.envelope
        return env.effective_from or env.published_at or dt.datetime.min.replace(tzinfo=dt.timezone.utc)

    def reject(self, reason: str, because: str, by: str | None = None) -> None:
        """Reject it for ``reason`` (said ``because``), on the evidence of citation ``by``."""
        self.state, self.reason, self.because, self.by = "rejected", reason, because, by

    def select(self, role: str, because: str) -> None:
        """Select it in ``role`` (said ``because``)."""
        self.state, self.role, self.because = "selected", role, because


def iso_day(moment: dt.datetime | None) -> str:
    """The ISO date of ``moment``, or ``"unknown"``."""
    return moment.date().isoformat() if moment else "unknown"


def names_identifier(item: Item, ident: str) -> bool:
    """Whether a source names an identifier: in its title, its text, or as a part of its doc id."""
    env = item.ev.envelope
    if mentions(env.title + "\n" + item.ev.text, ident):
        return True
    return re.search(rf"(?<![a-z0-9]){re.escape(ident.lower())}(?![a-z0-9])", env.doc_id.lower()) is not None


def dated_in(item: Item, period: tuple[int, int] | None) -> bool:
    """Whether ``item``'s source was published in ``period`` (``(year, month)``; ``None``: no)."""
    when = item.ev.envelope.published_at
    return period is not None and when is not None and (when.year, when.month) == period


def refers_to(a: Item, b: Item) -> bool:
    """Whether ``a`` points at ``b``: its links, ``b``'s doc id, the key leading ``b``'s title, or
    (within one document) a clause or schedule that ``b`` holds (:mod:`ragkit.text.references`)."""
    if b.ev.doc_id in a.ev.envelope.links or mentions(a.ev.text, b.ev.doc_id):
        return True
    if a is not b and a.ev.doc_id == b.ev.doc_id and a.ev.citation != b.ev.citation:
        if any(holds(b.ev.anchor, b.ev.text, *ref) for ref in references(a.ev.text)):
            return True
    key = re.match(r"\s*([A-Z][A-Z0-9]*-\d+)\b", b.ev.envelope.title)
    return key is not None and mentions(a.ev.text, key.group(1))


class Resolution:
    """The question as read, the items, and what stays unresolved or to confirm.

    Raises:
        ValidationError: an empty question, evidence that is not :class:`ragkit.evidence.spans.Evidence`,
            a bad ``as_of`` or caller.
    """

    def __init__(
        self,
        question: str,
        evidence: Sequence[Evidence],
        as_of: str | dt.date | None,
        caller: Scope | Mapping[str, Any] | None,
        fit: SentenceFit | None = None,
    ):
        """Read ``question`` and take the delivered ``evidence`` (excerpts of one citation as one);
        ``fit`` judges answering sentences (a :class:`ragkit.evidence.fit.SentenceFit`; ``None``: words)."""
        if not isinstance(question, str) or not question.strip():
            raise ValidationError("question must be a non-empty string", field="question")
        bad = [type(e).__name__ for e in evidence if not isinstance(e, Evidence)]
        if bad:
            raise ValidationError(
                f"evidence must be ragkit.evidence.Evidence items, got {bad[0]}; build "
                "them with Evidence.from_tool_item / from_hit / from_document",
                field="evidence",
            )
        self.question = question
        self.fit = fit
        # the kit's convention (ragkit.core.records.parse_time): a bare date means midnight UTC
        self.moment = parse_time(as_of, field_name="as_of")
        self.scope = as_scope(caller)
        # what the question asks is read from its asking sentences (ragkit.text.asking.ask_of);
        # the identifiers it names, from the whole message
        ask = ask_of(question)
        self.ask = ask
        self.yes_no = is_yes_no(question)
        self.forms = asked_forms(question)
        self.causal = bool(CAUSAL_QUESTION.search(unexcluded(ask)))  # not "... without cause?"
        self.deontic = bool(DEONTIC_QUESTION.search(ask))
        self.kind = asked_kind(question)
        self.shape = asked_id_shape(ask) if "id" in self.forms else None
        # "shipped as RO-8103?" asks for a rollout key: an identifier with the proposed one's prefix
        self.id_prefixes = {
            m.group(0).upper() for p in proposed_identifiers(question) if (m := re.match(r"[A-Za-z]+-", p))
        }
        # "what's the rollout id?" asks for a rollout's key: not the key of a record of another type
        self.foreign_prefixes: set[str] = set()
        if not self.id_prefixes and "id" in self.forms:
            self.id_prefixes, self.foreign_prefixes = record_prefixes(ask, evidence)
        self.unit = asked_unit(question)  # "how many closed batches" counts batches
        self.period = named_month(question)  # "in September 2025"
        seen: dict[str, Item] = {}
        for e in evidence:  # excerpts of one citation are read as one item
            seen[e.citation] = Item(seen[e.citation].ev.joined(e) if e.citation in seen else e)
        self.items = list(seen.values())
        self.to_confirm: list[str] = []
        self.unresolved: list[Conflict] = []
        named = named_codes(ask)  # "US dollar" names USD
        # a value the question proposes ("within 30 minutes") is checked, not searched for: its unit
        # does not make a sentence about the question
        self.terms = question_terms(without_measures(ask)) | {stem(c.lower()) for c in named}
        # what the question rules out ("without any breach") relates a sentence to another case
        self.negated = negated_terms(ask)
        self.terms -= self.negated
        tenants = {i.ev.envelope.tenant for i in self.items} - {GLOBAL_TENANT}
        self.tenants = {t.lower() for t in tenants}
        if self.scope is not None and self.scope.tenant not in ("*", GLOBAL_TENANT):
            tenants.add(self.scope.tenant)
        self.asked_tenants = {t for t in tenants if mentions(question, t)}
        self.ids = [v.surface for v in read_values(question, forms=("id",))]
        # "the OPS-9577 postmortem" says which record holds the answer, not what is asked of it
        located = typed_records(ask, self.ids, active_profile().source_types)
        self.predicate = self.terms - {stem(t) for t in tenants} - {stem(t) for t in located}
        # (a code that only says which thing is meant, "the bank that holds our DKK account", is not
        # the code of the asked value: that bank's fees are in EUR)
        self.codes = set(named) - set(named_codes(" ".join(described_clause(question))))
        # what the question names: codes (EUR, GBP), identifiers, tenants; see the neighbouring-fact rule
        # (a time zone or a unit, "16:00 CET", names no thing the value is about: the profile's not_codes)
        acronyms = {a for a in re.findall(r"\b[A-Z]{2,5}\b", ask) if a not in NOT_CODES}
        self.entities = acronyms | self.codes | set(self.ids) | self.asked_tenants

    def alive(self) -> list[Item]:
        """The items not rejected (yet)."""
        return [i for i in self.items if i.state != "rejected"]

    def citation_of(self, doc_id: str) -> str | None:
        """The citation of the first delivered item of ``doc_id``, or ``None``."""
        found = [i for i in self.items if i.ev.doc_id == doc_id]
        return found[0].ev.citation if found else None


def record_prefixes(
    ask: str, evidence: Sequence[Evidence], known: Sequence[str] | None = None
) -> tuple[set[str], set[str]]:
    """The identifier prefixes of the record type an identifier question names ("which rollout"),
    and those of the other record types delivered.

    A question that asks which record of a source type did something ("Which rollout carried
    the fix?", "What's the rollout id?") asks for the key of a record of that type, and a corpus
    names the records of one type with one prefix (the delivered rollouts are ``ro-...``: the
    answer is an ``RO-`` key, not the ``OPS-`` key of the ticket that mentions it). The first set
    holds the prefixes read from the doc ids of the delivered evidence of that type. When the
    question names a source type of the corpus (:attr:`ragkit.text.profile.CorpusProfile.source_types`)
    of which no record was delivered, it is empty and the second set holds the prefixes of the
    delivered records of *other* types: their keys do not answer (a ticket's ``OPS-`` key is no
    rollout id). Both are empty when the question names no source type. ``known``: the corpus's
    source types (default: the active profile's).

    Example:
        >>> from ragkit.evidence.spans import Evidence
        >>> ro = Evidence.of("ro-7719#result", "Done.", {"doc_id": "ro-7719", "source_type": "rollout"})
        >>> ops = Evidence.of("ops-4559#top", "Fixed.", {"doc_id": "ops-4559", "source_type": "ticket"})
        >>> record_prefixes("Which rollout carried the fix?", [ro, ops])
        ({'RO-'}, set())
        >>> record_prefixes("Which Stark rollout carried the fix?", [ops], known=("ticket", "rollout"))
        (set(), {'OPS-'})
        >>> record_prefixes("What's the rollout id for the fix?", [ro])
        ({'RO-'}, set())
        >>> record_prefixes("What's the rollout id for the fix?", [ops], known=("ticket", "rollout"))
        (set(), {'OPS-'})
        >>> c4 = Evidence.of("ops-1-c4#top", "Done.", {"doc_id": "ops-1-c4", "source_type": "ticket_comment"})
        >>> record_prefixes("What is the ticket key?", [c4], known=("ticket", "ticket_comment"))
        (set(), set())
    """
    types = {str(e.envelope.source_type) for e in evidence if e.envelope.source_type}
    kinds = set(active_profile().source_types if known is None else known) | types
    # ("which Stark rollout ...": the type may follow a name or two)
    low = ask.lower()
    after = [w for x in re.finditer(r"\b(?:which|what)\b", low)
             for w in re.findall(r"[\w'-]+", low[x.end():])[:3]]
    asked = next((k for w in after for k in (w, w.removesuffix("s")) if k in kinds), None)
    if asked is None:  # "what's the rollout id?" names the type before "id"
        m = re.search(r"\b(\w+?)(?:'s)?\s+(?:id|key|identifier|number)\b", low)
        asked = m.group(1) if m is not None and m.group(1) in kinds else None
    if asked is None:
        return set(), set()
    prefixes: dict[str, set[str]] = {}
    for e in evidence:  # (a record of no stated type, plain "text", may be of the asked one)
        if e.envelope.source_type not in ("", "text") and (p := re.match(r"[a-z]+-", e.doc_id.lower())):
            prefixes.setdefault(str(e.envelope.source_type), set()).add(p.group(0).upper())
    if asked in prefixes:
        return prefixes[asked], set()
    # a ticket's comments (``ticket_comment``) carry the ticket's key: a type named after the asked
    # one is of its family, not foreign
    return set(), {p for kind, ps in prefixes.items() if not kind.startswith(asked) for p in ps}
