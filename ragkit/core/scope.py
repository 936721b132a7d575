"""Who is asking, and what they may see: caller scope and narrowing filters.

Access control must survive retrieval (CURRICULUM sections 3 and 8). A
:class:`Scope` is the caller's identity (tenant and ACL groups); :class:`Filters`
narrow it further (document type, tenant subset, dates, validity at a moment).
Both compile to one boolean mask over index rows, which every retriever applies
*inside* its scoring, before any top-k: a row outside scope can never appear in
any result, at any width. The same :meth:`Scope.allows` guards every later read
(parent expansion, ``retrieve_documents``, citations).

Filters only narrow. Asking for a tenant the caller cannot see raises
:class:`~ragkit.core.errors.ScopeError` instead of silently widening or returning nothing.

Example:
    >>> from ragkit.core.records import Envelope
    >>> caller = Scope(tenant="acme", groups={"ops"})
    >>> caller.allows(Envelope("c1", tenant="acme", acl_groups=("ops", "finance")))
    True
    >>> caller.allows(Envelope("c2", tenant="acme", acl_groups=("finance",)))
    False
    >>> caller.allows(Envelope("p1", tenant="global"))
    True
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragkit.core.errors import ScopeError, ValidationError
from ragkit.core.records import GLOBAL_TENANT, Envelope, parse_time

__all__ = ["Scope", "Filters", "as_scope", "scope_mask", "snapshot_filters", "validity"]

ALL_TENANTS = "*"


@dataclass(frozen=True)
class Scope:
    """The caller: a tenant (or ``"*"`` for an operator who may see every tenant) and groups.

    A document is visible when its tenant is the caller's or ``global`` (or the caller is
    ``"*"``), and its ``acl_groups`` are empty or share a group with the caller.
    """

    tenant: str = ALL_TENANTS
    groups: frozenset[str] = field(default_factory=frozenset)
    all_groups: bool = False

    def __init__(self, tenant: str = ALL_TENANTS, groups: Iterable[str] = (), *,
                 all_groups: bool = False) -> None:
        if not isinstance(tenant, str) or not tenant:
            raise ValidationError(f"tenant must be a non-empty string, got {tenant!r}", field="tenant")
        if isinstance(groups, str):
            groups = [g for g in groups.split(",") if g]
        object.__setattr__(self, "tenant", tenant)
        object.__setattr__(self, "groups", frozenset(groups))
        object.__setattr__(self, "all_groups", all_groups)

    @classmethod
    def operator(cls) -> Scope:
        """Every tenant and every group: for building indexes and for instructors' views."""
        return cls(ALL_TENANTS, all_groups=True)

    def allows(self, env: Envelope) -> bool:
        """Whether the caller may read a document with this envelope."""
        if self.tenant != ALL_TENANTS and env.tenant not in (self.tenant, GLOBAL_TENANT):
            return False
        if env.acl_groups and not self.all_groups and not (self.groups & set(env.acl_groups)):
            return False
        return True

    def require(self, env: Envelope) -> None:
        """Raise :class:`ScopeError` unless the caller may read ``env``."""
        if not self.allows(env):
            raise ScopeError(f"{env.doc_id!r} is outside the caller's scope ({self}); "
                             "it cannot be read, expanded or cited")

    def __str__(self) -> str:
        groups = "all groups" if self.all_groups else (",".join(sorted(self.groups)) or "no groups")
        return f"tenant={self.tenant}, {groups}"


def as_scope(caller: Any) -> Scope | None:
    """The caller as a :class:`Scope`: a Scope, ``{"tenant": ..., "groups": [...]}`` or ``None``.

    Raises:
        ValidationError: anything else, naming what was received.

    Example:
        >>> as_scope({"tenant": "acme", "groups": ["ops"]})
        Scope(tenant='acme', groups=frozenset({'ops'}), all_groups=False)
    """
    if caller is None or isinstance(caller, Scope):
        return caller
    if isinstance(caller, Mapping) and "tenant" in caller:
        return Scope(str(caller["tenant"]), caller.get("groups", ()))
    raise ValidationError(
        "caller must be a ragkit.core.scope.Scope or {'tenant': ..., 'groups': [...]}; "
        f"got {type(caller).__name__}",
        field="caller",
    )


def validity(env: Envelope, moment: dt.datetime | None) -> str:
    """``"valid"``, ``"not_yet_valid"``, ``"expired"`` or ``"unknown"`` at ``moment``."""
    if moment is None:
        return "unknown" if env.effective_from is None else "valid"
    state = env.valid_at(moment)
    if state is None:
        return "unknown"
    if state:
        return "valid"
    return "not_yet_valid" if moment < env.effective_from else "expired"  # type: ignore[operator]


@dataclass(frozen=True)
class Filters:
    """Narrowing filters, applied with the scope before ranking.

    Attributes:
        doc_types: keep only these source types (empty: all).
        tenants: keep only these tenants; each must be inside the caller's scope.
        published_after / published_before: bounds on ``published_at`` (inclusive/exclusive).
        valid_at: keep documents valid at this moment; documents with unknown validity are
            kept and reported as ``unknown`` unless ``drop_unknown_validity`` is set.
        drop_unknown_validity: with ``valid_at``, also drop documents of unknown validity.
    """

    doc_types: tuple[str, ...] = ()
    tenants: tuple[str, ...] = ()
    published_after: dt.datetime | None = None
    published_before: dt.datetime | None = None
    valid_at: dt.datetime | None = None
    drop_unknown_validity: bool = False

    @classmethod
    def make(cls, *, doc_type: str | Sequence[str] = (), tenant: str | Sequence[str] = (),
             published_after: object = None, published_before: object = None,
             valid_at: object = None, drop_unknown_validity: bool = False) -> Filters:
        """Build filters from loose values (strings, comma lists, ISO dates), validating each."""
        def listify(v: str | Sequence[str]) -> tuple[str, ...]:
            if isinstance(v, str):
                return tuple(x.strip() for x in v.split(",") if x.strip())
            return tuple(v)

        return cls(
            doc_types=listify(doc_type), tenants=listify(tenant),
            published_after=parse_time(published_after, field_name="published_after"),
            published_before=parse_time(published_before, field_name="published_before"),
            valid_at=parse_time(valid_at, field_name="valid_at"),
            drop_unknown_validity=drop_unknown_validity,
        )

    def check_narrows(self, scope: Scope) -> None:
        """Raise :class:`ScopeError` if a filter asks for more than the caller may see."""
        if scope.tenant == ALL_TENANTS:
            return
        outside = [t for t in self.tenants if t not in (scope.tenant, GLOBAL_TENANT)]
        if outside:
            raise ScopeError(
                f"filter tenants {outside} are outside the caller's scope ({scope}); filters can "
                f"only narrow: use tenant '{scope.tenant}' or '{GLOBAL_TENANT}'"
            )

    def allows(self, env: Envelope) -> bool:
        """Whether ``env`` passes every filter."""
        if self.doc_types and env.source_type not in self.doc_types:
            return False
        if self.tenants and env.tenant not in self.tenants:
            return False
        if self.published_after or self.published_before:
            if env.published_at is None:
                return False
            if self.published_after and env.published_at < self.published_after:
                return False
            if self.published_before and env.published_at >= self.published_before:
                return False
        if self.valid_at is not None:
            state = validity(env, self.valid_at)
            if state in ("expired", "not_yet_valid"):
                return False
            if state == "unknown" and self.drop_unknown_validity:
                return False
        return True


def scope_mask(envelopes: Sequence[Envelope], row_docs: np.ndarray, scope: Scope,
               filters: Filters | None = None) -> np.ndarray:
    """Boolean mask over index rows: True where the row's document is in scope and passes filters.

    Args:
        envelopes: one envelope per document, indexed by document position.
        row_docs: for each row, the position of its document in ``envelopes``.
        scope: the caller.
        filters: optional narrowing filters (checked to narrow only).
    """
    filters = filters or Filters()
    filters.check_narrows(scope)
    per_doc = np.fromiter((scope.allows(e) and filters.allows(e) for e in envelopes), dtype=bool,
                          count=len(envelopes))
    return per_doc[row_docs] if len(row_docs) else np.zeros(0, dtype=bool)


def snapshot_filters(as_of: dt.datetime) -> Filters:
    """Filters that show the corpus as it was at ``as_of``: only documents published by then."""
    return Filters(published_before=as_of + dt.timedelta(seconds=1))
