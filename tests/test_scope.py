from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from ragkit import Envelope, Filters, Scope, ValidationError
from ragkit.core import ScopeError, scope_mask, validity

UTC = dt.timezone.utc
ENVS = [
    Envelope("a1", tenant="acme"),
    Envelope("a2", tenant="acme", acl_groups=("finance",)),
    Envelope("g1", tenant="globex"),
    Envelope("p1", tenant="global", source_type="policy", effective_from=dt.datetime(2026, 1, 1, tzinfo=UTC)),
    Envelope("p0", tenant="global", source_type="policy", effective_from=dt.datetime(2025, 1, 1, tzinfo=UTC),
             effective_to=dt.datetime(2026, 1, 1, tzinfo=UTC)),
]
ROWS = np.array([0, 0, 1, 2, 3, 4])  # two rows for a1


def visible(scope, filters=None):
    mask = scope_mask(ENVS, ROWS, scope, filters)
    return sorted({ENVS[ROWS[i]].doc_id for i in np.flatnonzero(mask)})


def test_tenant_and_acl():
    assert visible(Scope("acme")) == ["a1", "p0", "p1"]
    assert visible(Scope("acme", ["finance"])) == ["a1", "a2", "p0", "p1"]
    assert visible(Scope("globex", ["finance"])) == ["g1", "p0", "p1"]
    assert visible(Scope.operator()) == ["a1", "a2", "g1", "p0", "p1"]
    assert visible(Scope("*")) == ["a1", "g1", "p0", "p1"]  # every tenant, but ACLs still hold


def test_filters_narrow():
    assert visible(Scope("acme"), Filters.make(doc_type="policy")) == ["p0", "p1"]
    assert visible(Scope("acme"), Filters.make(tenant="acme")) == ["a1"]
    at = Filters.make(valid_at="2026-01-19")
    assert visible(Scope("acme"), at) == ["a1", "p1"]  # a1: unknown validity, kept (reported unknown)
    strict = Filters.make(valid_at="2026-01-19", drop_unknown_validity=True)
    assert visible(Scope("acme"), strict) == ["p1"]


def test_filters_cannot_widen():
    with pytest.raises(ScopeError, match="only narrow"):
        visible(Scope("acme"), Filters.make(tenant="globex"))


def test_validity_states():
    moment = dt.datetime(2026, 1, 19, tzinfo=UTC)
    assert [validity(e, moment) for e in ENVS[2:]] == ["unknown", "valid", "expired"]
    assert validity(ENVS[3], dt.datetime(2025, 6, 1, tzinfo=UTC)) == "not_yet_valid"


def test_require_and_bad_scope():
    with pytest.raises(ScopeError, match="outside the caller's scope"):
        Scope("acme").require(ENVS[2])
    with pytest.raises(ValidationError):
        Scope("")
    assert Scope("acme", "ops,finance").groups == {"ops", "finance"}
    with pytest.raises(ValidationError, match="valid_at"):
        Filters.make(valid_at="tomorrow")
