"""The decision record: what was decided, from which characters, and what was set aside and why.

:func:`ragkit.evidence.resolution.resolve` returns a :class:`DecisionRecord`. It prints as the
record an analyst would write (``print(record)``), shows as a table in a notebook
(``_repr_html_``) and round-trips through JSON (:meth:`DecisionRecord.to_json`,
:meth:`DecisionRecord.from_json`).

Example:
    >>> rec = DecisionRecord("Which EUR cutoff?", "2026-01-19", "time",
    ...     Decision("time", "15:00", "15:00", "policy-v3#cutoffs", "policy-v3", 10, 15, "Use 15:00."),
    ...     (Selected("policy-v3#cutoffs", "policy-v3", "decisive", "policy_owner", "15:00"),),
    ...     (Rejected("runbook-v2#eur-cutoff", "runbook-v2", "lower_authority", "operations",
    ...               "policy-v3#cutoffs"),))
    >>> rec.status, DecisionRecord.from_json(rec.to_json()) == rec
    ('decided', True)
"""

from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass
from typing import Any

from ragkit.core.errors import ValidationError

__all__ = ["Decision", "Selected", "Rejected", "Conflict", "DecisionRecord", "STATUSES"]

#: Why a retrieved source must be rejected or qualified. Each reason is checkable against
#: the source's envelope, the caller and the snapshot time (see ``tests/test_datasets.py``).
REJECT_REASONS: dict[str, str] = {
    "superseded": "a later version replaced it (superseded_by set, or effective_to <= as_of)",
    "not_yet_effective": "published, but its effective_from is after as_of",
    "expired": "its effective_to is at or before as_of",
    "not_yet_published": "published after as_of: it did not exist at the snapshot",
    "not_in_force": "a draft or proposal (its status says so): it states nothing in force",
    "condition_met": "a conditional exception whose stopping condition a later record satisfies",
    "exception_applies": "a general rule that a still-open conditional exception overrides",
    "other_tenant": "belongs to another tenant (and is not global)",
    "acl": "in the caller's tenant but restricted to groups the caller is not in",
    "lower_authority": "conflicts with a source of higher authority",
    "lexical_decoy": "shares an identifier with the task but is about another event",
    "semantic_decoy": "looks like the same failure but is another event",
    "untrusted_instruction": "carries instruction-shaped text; evidence, never a command",
    "neighbouring_fact": "states a neighbouring fact, not the one asked for",
}

#: ``decided``: one value, from a named span; ``conflict``: the rules could not settle it;
#: ``insufficient``: no in-scope evidence in effect states the value asked for.
STATUSES = ("decided", "conflict", "insufficient")


@dataclass(frozen=True)
class Decision:
    """The decided value and the characters it rests on.

    ``start``/``end`` are offsets of ``surface`` in the *document* text (``-1``: unknown);
    ``quote`` is the sentence of the span that states it.
    """

    kind: str
    value: str
    surface: str
    citation: str
    doc_id: str
    start: int
    end: int
    quote: str
    version: str = ""
    validity: str = "valid"


@dataclass(frozen=True)
class Selected:
    """A source the decision uses: ``role`` is decisive, qualifier, hop or support."""

    citation: str
    doc_id: str
    role: str
    reason: str
    value: str | None = None


@dataclass(frozen=True)
class Rejected:
    """A source set aside: ``reason`` is a key of :data:`ragkit.evidence.decision.REJECT_REASONS`.

    ``because`` says what in the envelope or text triggered it; ``by`` cites the evidence
    that supports the rejection (the successor, the record that ended a condition, the
    higher-authority source), or ``None`` when the envelope alone decides it.
    """

    citation: str
    doc_id: str
    reason: str
    because: str
    by: str | None = None

    def __post_init__(self) -> None:
        if self.reason not in REJECT_REASONS:
            raise ValidationError(
                f"reject reason {self.reason!r} is unknown; use one of {sorted(REJECT_REASONS)}",
                field="reason",
            )


@dataclass(frozen=True)
class Conflict:
    """Two sources the rules could not rank, and why."""

    a: str
    b: str
    why: str


@dataclass(frozen=True)
class DecisionRecord:
    """The outcome of :func:`ragkit.evidence.resolution.resolve` (see the module docstring).

    A record is frozen, and its four lists are tuples (a list given is stored as a tuple): a
    reader that adds to it (the agent setting excerpts aside) builds a new record with
    :func:`dataclasses.replace`.
    """

    question: str
    as_of: str | None
    asked: str
    decision: Decision | None
    selected: tuple[Selected, ...] = ()
    rejected: tuple[Rejected, ...] = ()
    unresolved: tuple[Conflict, ...] = ()
    to_confirm: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("selected", "rejected", "unresolved", "to_confirm"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @property
    def status(self) -> str:
        """``decided``, ``conflict`` or ``insufficient``."""
        if self.decision is not None:
            return "decided"
        return "conflict" if self.unresolved else "insufficient"

    @property
    def value(self) -> str | None:
        """The decided value (normalised), or ``None``."""
        return self.decision.value if self.decision else None

    def reasons(self) -> dict[str, str]:
        """``{doc_id: reason}`` of the rejected sources."""
        return {r.doc_id: r.reason for r in self.rejected}

    # -- JSON -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (includes ``status``; the four sequences as lists)."""
        out = asdict(self)
        for name in ("selected", "rejected", "unresolved", "to_confirm"):
            out[name] = list(out[name])
        out["status"] = self.status
        return out

    def to_json(self, **kwargs: Any) -> str:
        """The record as JSON text (``kwargs`` go to :func:`json.dumps`)."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, data: str | dict[str, Any]) -> DecisionRecord:
        """Rebuild a record from :meth:`to_json` text (or its dict).

        Raises:
            ValidationError: a missing field or an unknown reject reason.
        """
        d = json.loads(data) if isinstance(data, str) else dict(data)
        try:
            return cls(
                question=d["question"],
                as_of=d["as_of"],
                asked=d["asked"],
                decision=Decision(**d["decision"]) if d.get("decision") else None,
                selected=tuple(Selected(**s) for s in d.get("selected", [])),
                rejected=tuple(Rejected(**r) for r in d.get("rejected", [])),
                unresolved=tuple(Conflict(**c) for c in d.get("unresolved", [])),
                to_confirm=tuple(d.get("to_confirm", [])),
            )
        except (KeyError, TypeError) as exc:
            raise ValidationError(f"not a decision record: {exc}", field="record") from None

    # -- display --------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = [
            f"Question: {self.question}",
            f"As of {self.as_of or 'unknown'} | asked: {self.asked} | status: {self.status}",
        ]
        d = self.decision
        if d is not None:
            at = f" [chars {d.start}-{d.end}]" if d.start >= 0 else ""
            lines.append(f"Decision: {d.value}  from {d.citation} (v{d.version}){at}")
            lines.append(f'  "{d.quote}"')
        else:
            lines.append("Decision: none")
        lines.append("Selected:")
        lines += [f"  + {s.citation}  {s.role}: {s.reason}" for s in self.selected] or ["  (none)"]
        lines.append("Rejected:")
        lines += [
            f"  - {r.citation}  {r.reason}: {r.because}" + (f" (by {r.by})" if r.by else "")
            for r in self.rejected
        ] or ["  (none)"]
        lines.append("Unresolved:")
        lines += [f"  ? {c.a} vs {c.b}: {c.why}" for c in self.unresolved] or ["  (none)"]
        lines.append("To confirm:")
        lines += [f"  * {t}" for t in self.to_confirm] or ["  (none)"]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        e = html.escape
        d = self.decision
        head = (
            f"<p><b>{e(self.question)}</b><br>as of {e(str(self.as_of))}, asked: {e(self.asked)}, "
            f"status: <b>{e(self.status)}</b></p>"
        )
        if d is not None:
            head += (
                f"<p>Decision: <b>{e(d.value)}</b> from <code>{e(d.citation)}</code> "
                f"(chars {d.start}-{d.end})<br><i>&ldquo;{e(d.quote)}&rdquo;</i></p>"
            )
        rows = [("selected", s.citation, s.role, s.reason, "") for s in self.selected]
        rows += [("rejected", r.citation, r.reason, r.because, r.by or "") for r in self.rejected]
        rows += [("unresolved", f"{c.a} vs {c.b}", "conflict", c.why, "") for c in self.unresolved]
        body = "".join(
            f"<tr><td>{e(a)}</td><td><code>{e(b)}</code></td><td>{e(c)}</td><td>{e(x)}</td>"
            f"<td><code>{e(y)}</code></td></tr>"
            for a, b, c, x, y in rows
        )
        table = (
            "<table><thead><tr><th></th><th>evidence</th><th>role / reason</th><th>because</th>"
            f"<th>by</th></tr></thead><tbody>{body}</tbody></table>"
        )
        confirm = "".join(f"<li>{e(t)}</li>" for t in self.to_confirm)
        return head + table + (f"<p>To confirm:</p><ul>{confirm}</ul>" if confirm else "")
