"""Scope and filters as a Milvus boolean filter expression, with every value quoted.

:func:`scope_expression` compiles a caller's :class:`~ragkit.core.scope.Scope` and
:class:`~ragkit.core.scope.Filters` into one expression that Milvus applies inside every
search, before top-k (the same rule as the in-memory mask). Values are quoted by
:func:`quote`, which escapes ``\\`` and ``"`` and refuses control characters, so a tenant
named ``acme" or tenant != "x`` is a literal, never an operator.

Dates are stored as int64 microseconds since the epoch (:func:`micros`) with an explicit
``has_*`` flag beside each (milvus-lite 2.5 has no nullable fields, so "no date" is never a
magic number).

Example:
    >>> print(scope_expression(Scope("acme", ["ops"])))
    tenant in ["acme", "global"] and (array_length(acl) == 0 or array_contains_any(acl, ["ops"]))
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from ragkit.core.errors import ValidationError
from ragkit.core.records import GLOBAL_TENANT
from ragkit.core.scope import ALL_TENANTS, Filters, Scope

__all__ = ["EPOCH", "micros", "quote", "quote_list", "scope_expression"]

#: The epoch stored dates count microseconds from.
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def quote(value: str) -> str:
    """A Milvus string literal for ``value``: ``"`` and ``\\`` escaped, control characters refused.

    Example:
        >>> print(quote('acme" or tenant != "x'))
        "acme\\" or tenant != \\"x"
    """
    if not isinstance(value, str):
        raise ValidationError(f"filter value {value!r} is a {type(value).__name__}; expected a str")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValidationError(f"filter value {value!r} holds a control character; tenants, groups, doc "
                              "types and doc ids must be printable", field="filter")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quote_list(values: Iterable[str]) -> str:
    """A Milvus list literal of quoted strings (each through :func:`quote`).

    Example:
        >>> print(quote_list(["ops", "fin"]))
        ["ops", "fin"]
    """
    return "[" + ", ".join(quote(v) for v in values) + "]"


def micros(moment: dt.datetime) -> int:
    """``moment`` as int64 microseconds since the epoch (a naive datetime is read as UTC).

    Example:
        >>> micros(dt.datetime(1970, 1, 1, 0, 0, 1))
        1000000
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return (moment - EPOCH) // dt.timedelta(microseconds=1)


def scope_expression(scope: Scope, filters: Filters | None = None) -> str:
    """The Milvus filter expression equal to :func:`ragkit.core.scope.scope_mask` (``""``: every row).

    Mirrors :meth:`Scope.allows` and :meth:`Filters.allows` term by term: tenant (the
    caller's or ``global``), ACL (empty, or sharing a group: ``array_contains_any``), doc
    types, tenants, published bounds (undated documents fail a published bound) and
    validity at ``valid_at`` (unknown validity kept unless ``drop_unknown_validity``).

    Raises:
        ScopeError: a filter asks for more than the caller may see (filters only narrow).
    """
    filters = filters or Filters()
    filters.check_narrows(scope)
    terms: list[str] = []
    if scope.tenant != ALL_TENANTS:
        terms.append(f"tenant in {quote_list(sorted({scope.tenant, GLOBAL_TENANT}))}")
    if not scope.all_groups:
        if scope.groups:
            groups = quote_list(sorted(scope.groups))
            terms.append(f"(array_length(acl) == 0 or array_contains_any(acl, {groups}))")
        else:
            terms.append("array_length(acl) == 0")
    if filters.doc_types:
        terms.append(f"source_type in {quote_list(filters.doc_types)}")
    if filters.tenants:
        terms.append(f"tenant in {quote_list(filters.tenants)}")
    if filters.published_after or filters.published_before:
        terms.append("has_published == true")
        if filters.published_after:
            terms.append(f"published >= {micros(filters.published_after)}")
        if filters.published_before:
            terms.append(f"published < {micros(filters.published_before)}")
    if filters.valid_at is not None:
        m = micros(filters.valid_at)
        known = f"(has_from == true and eff_from <= {m} and (has_to == false or eff_to > {m}))"
        terms.append(known if filters.drop_unknown_validity else f"(has_from == false or {known})")
    return " and ".join(terms)
