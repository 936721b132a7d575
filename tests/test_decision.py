"""The decision record (ragkit.evidence.decision): frozen, tuples inside, three statuses, JSON round trip."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ragkit.core import ValidationError
from ragkit.evidence.decision import (
    REJECT_REASONS,
    STATUSES,
    Conflict,
    Decision,
    DecisionRecord,
    Rejected,
    Selected,
)

DECISION = Decision("time", "15:00", "15:00", "policy-v3#cutoffs", "policy-v3", 10, 15, "Use 15:00.", "3")
SELECTED = Selected("policy-v3#cutoffs", "policy-v3", "decisive", "policy_owner", "15:00")
REJECTED = Rejected("runbook-v2#eur", "runbook-v2", "lower_authority", "operations", "policy-v3#cutoffs")


def _record(**kw: object) -> DecisionRecord:
    fields: dict[str, object] = {
        "question": "Which EUR cutoff?",
        "as_of": "2026-01-19",
        "asked": "time",
        "decision": DECISION,
        "selected": [SELECTED],
        "rejected": [REJECTED],
    }
    fields.update(kw)
    return DecisionRecord(**fields)  # type: ignore[arg-type]


def test_the_three_statuses():
    assert STATUSES == ("decided", "conflict", "insufficient")
    assert _record().status == "decided" and _record().value == "15:00"
    conflict = _record(decision=None, unresolved=[Conflict("a#s", "b#s", "15:00 vs 16:00")])
    assert conflict.status == "conflict" and conflict.value is None
    assert _record(decision=None).status == "insufficient"
    assert {r.status for r in (_record(), conflict, _record(decision=None))} == set(STATUSES)


def test_a_record_is_frozen_and_its_lists_are_tuples():
    record = _record(to_confirm=["who owns policy-v3"])
    assert record.selected == (SELECTED,) and record.rejected == (REJECTED,)
    assert record.unresolved == () and record.to_confirm == ("who owns policy-v3",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.decision = None  # type: ignore[misc]
    with pytest.raises(AttributeError):
        record.rejected.append(REJECTED)  # type: ignore[attr-defined]
    # a reader that adds to a record builds a new one; the old one is unchanged
    more = Rejected("pm-1#top", "pm-1", "semantic_decoy", "set aside by the agent: does not name OPS-1")
    grown = dataclasses.replace(record, rejected=(*record.rejected, more))
    assert grown.rejected == (REJECTED, more) and record.rejected == (REJECTED,)
    assert grown.reasons() == {"runbook-v2": "lower_authority", "pm-1": "semantic_decoy"}


def test_a_record_is_hashable_and_equal_by_value():
    assert _record() == _record(selected=(SELECTED,), rejected=(REJECTED,))
    assert len({_record(), _record()}) == 1


def test_json_round_trip_and_lists_in_the_dict():
    record = _record(to_confirm=["x"], unresolved=[Conflict("a#s", "b#s", "why")])
    data = record.to_dict()
    assert data["status"] == "decided"  # a decision and an unresolved pair: the decision stands
    assert data["rejected"] == [
        {
            "citation": "runbook-v2#eur",
            "doc_id": "runbook-v2",
            "reason": "lower_authority",
            "because": "operations",
            "by": "policy-v3#cutoffs",
        }
    ]
    assert data["to_confirm"] == ["x"] and isinstance(data["selected"], list)
    assert DecisionRecord.from_json(record.to_json()) == record
    assert DecisionRecord.from_json(json.loads(record.to_json())) == record


def test_from_json_rejects_what_is_not_a_record():
    with pytest.raises(ValidationError, match="not a decision record"):
        DecisionRecord.from_json({"question": "q"})
    with pytest.raises(ValidationError, match="reject reason 'nope' is unknown"):
        DecisionRecord.from_json(
            {
                **_record().to_dict(),
                "rejected": [{"citation": "a", "doc_id": "a", "reason": "nope", "because": ""}],
            }
        )


def test_every_rejection_names_a_known_reason():
    assert "neighbouring_fact" in REJECT_REASONS and "untrusted_instruction" in REJECT_REASONS
    with pytest.raises(ValidationError):
        Rejected("a#s", "a", "because I said so", "")


def test_the_record_prints_as_an_analyst_would_write_it():
    text = str(_record())
    assert text.splitlines()[:4] == [
        "Question: Which EUR cutoff?",
        "As of 2026-01-19 | asked: time | status: decided",
        "Decision: 15:00  from policy-v3#cutoffs (v3) [chars 10-15]",
        '  "Use 15:00."',
    ]
    assert "  - runbook-v2#eur  lower_authority: operations (by policy-v3#cutoffs)" in text
    assert text.endswith("To confirm:\n  (none)")
    assert "<code>runbook-v2#eur</code>" in _record()._repr_html_()
