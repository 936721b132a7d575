"""Frozen records shared by every stage of ragkit.

A :class:`Document` is source text plus its evidence :class:`Envelope` (who it
is for, when it is valid, how authoritative it is, what it supersedes). A
:class:`Chunk` is a span of a document's text with a pointer back to it:
``document.text[chunk.start:chunk.end] == chunk.text`` always holds.

Dates are timezone-aware UTC datetimes; a date given without a time means
midnight UTC. Envelope fields arrive from YAML front matter or JSONL, so
:meth:`Envelope.from_mapping` validates them and names the offending field.

Example:
    >>> env = Envelope.from_mapping({"doc_id": "runbook-v2", "title": "Settlement runbook",
    ...                              "effective_from": "2025-10-12"})
    >>> env.effective_from.isoformat()
    '2025-10-12T00:00:00+00:00'
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ragkit.core.errors import ValidationError

__all__ = [
    "SOURCE_TYPES",
    "GLOBAL_TENANT",
    "Envelope",
    "Document",
    "Chunk",
    "parse_time",
    "slugify",
]

#: Source types the course corpus uses; a user's corpus may use any other string.
SOURCE_TYPES = (
    "runbook",
    "policy",
    "postmortem",
    "ticket",
    "ticket_comment",
    "rollout",
    "architecture",
    "wiki",
    "text",
)

#: Tenant value for documents every tenant may read (platform-wide runbooks, policies).
#: Authority order used by ``lower_authority`` (higher wins).
AUTHORITY_RANK: dict[str, int] = {
    "policy_owner": 6,
    "deployment_system": 5,
    "incident_review": 4,
    "operations": 3,
    "implementation_team": 3,
    "engineering": 2,
    "support": 1,
    "community": 0,
    "unknown": 0,
}

GLOBAL_TENANT = "global"

_DOC_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")


def parse_time(value: Any, *, field_name: str = "time", where: str | None = None) -> dt.datetime | None:
    """Parse an ISO date or datetime (string, ``date`` or ``datetime``) into aware UTC.

    Args:
        value: ``None``/empty (returns ``None``), ``"2026-01-15"``, ``"2026-01-15T09:30:00Z"``,
            a ``datetime.date`` or a ``datetime.datetime``.
        field_name: used in the error message.
        where: file (and line) the value came from, for the error message.

    Raises:
        ValidationError: the value is not an ISO date or datetime.

    Example:
        >>> parse_time("2026-01-15T09:30:00+01:00").isoformat()
        '2026-01-15T08:30:00+00:00'
    """
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise ValidationError(
                f"field '{field_name}' has {value!r}, which is not an ISO date or datetime; "
                "write it like 2026-01-15 or 2026-01-15T09:30:00Z",
                field=field_name,
                where=where,
            ) from None
    else:
        raise ValidationError(
            f"field '{field_name}' has {value!r} of type {type(value).__name__}; "
            "expected an ISO date string like 2026-01-15",
            field=field_name,
            where=where,
        )
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc)


def slugify(text: str) -> str:
    """Turn a heading into a stable anchor: lower case, words joined by ``-``.

    Example:
        >>> slugify("EUR cut-off (Mondays)")
        'eur-cut-off-mondays'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "section"


def _as_tuple(value: Any, field_name: str, where: str | None) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        bad = [v for v in value if not isinstance(v, (str, int))]
        if bad:
            raise ValidationError(
                f"field '{field_name}' must be a list of strings; found {bad[0]!r}",
                field=field_name,
                where=where,
            )
        return tuple(str(v) for v in value)
    raise ValidationError(
        f"field '{field_name}' must be a string or a list of strings, got {type(value).__name__}",
        field=field_name,
        where=where,
    )


@dataclass(frozen=True)
class Envelope:
    """The evidence envelope of a document: identity, scope, validity, authority, lineage.

    Attributes:
        doc_id: stable source id (``runbook-v2``); unique within a corpus.
        title: human title; the first Markdown heading when front matter has none.
        version: source version (``"1"``, ``"v3"``); a re-publish changes it.
        source_type: one of :data:`SOURCE_TYPES` or any string of the user's.
        authority: who stands behind the text (``policy_owner``, ``deployment_system``).
        tenant: the client tenant the document belongs to, or :data:`GLOBAL_TENANT`.
        entities: entity scope (tenants, systems, accounts) the text talks about.
        acl_groups: groups allowed to read; empty means every caller of the tenant.
        published_at: when the source was published or written.
        effective_from: when what it says starts to hold (``None``: unknown).
        effective_to: when it stops holding (``None``: open-ended or unknown).
        ingested_at: when ragkit (or the generator) took it in.
        supersedes: doc ids this document replaces.
        superseded_by: doc ids that replace this one.
        conditions: conditions that limit it, e.g. ``"until cutover"``.
        links: doc ids it references (ticket -> rollout record -> policy).
        status: the record's own status as its source states it (``draft``, ``final``, ``resolved``);
            empty when it states none. A draft or proposal states nothing in force (resolution).
        source_path: the file it was read from (set by the loader).
        extra: any custom metadata (front matter key ``extra:``).
    """

    doc_id: str
    title: str = ""
    version: str = "1"
    source_type: str = "text"
    authority: str = "unknown"
    tenant: str = GLOBAL_TENANT
    entities: tuple[str, ...] = ()
    acl_groups: tuple[str, ...] = ()
    published_at: dt.datetime | None = None
    effective_from: dt.datetime | None = None
    effective_to: dt.datetime | None = None
    ingested_at: dt.datetime | None = None
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    status: str = ""
    source_path: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    #: The fields that hold times, and those that hold lists (how a saved envelope is read back).
    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("published_at", "effective_from", "effective_to", "ingested_at")
    LIST_FIELDS: ClassVar[tuple[str, ...]] = (
        "entities", "acl_groups", "supersedes", "superseded_by", "conditions", "links",
    )

    def __post_init__(self) -> None:
        self.validate()

    def validate(self, where: str | None = None) -> None:
        """Check invariants; raise :class:`ValidationError` naming the field."""
        if not isinstance(self.doc_id, str) or not _DOC_ID_RE.match(self.doc_id):
            raise ValidationError(
                f"doc_id {self.doc_id!r} is not a valid id; use letters, digits and . _ : / -",
                field="doc_id",
                where=where,
            )
        if not self.tenant or not isinstance(self.tenant, str):
            raise ValidationError(
                f"tenant must be a non-empty string (use '{GLOBAL_TENANT}' for shared documents)",
                field="tenant",
                where=where,
            )
        if self.effective_from and self.effective_to and self.effective_to < self.effective_from:
            raise ValidationError(
                f"effective_to ({self.effective_to.date()}) is before effective_from "
                f"({self.effective_from.date()}) in {self.doc_id!r}; swap them or fix the date",
                field="effective_to",
                where=where,
            )
        if self.doc_id in self.supersedes:
            raise ValidationError(
                f"{self.doc_id!r} lists itself in supersedes", field="supersedes", where=where
            )

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The keys accepted in front matter / JSONL records."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, where: str | None = None) -> Envelope:
        """Build an envelope from front matter or a JSON object, validating every field.

        Raises:
            ValidationError: unknown key, bad date, wrong type, or a broken invariant;
                the message names the field and ``where`` (file and line).
        """
        known = set(cls.field_names())
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise ValidationError(
                f"unknown envelope field(s) {unknown}; known fields are {sorted(known)}. "
                "Put custom metadata under 'extra:'",
                field=unknown[0],
                where=where,
            )
        if "doc_id" not in data or data["doc_id"] in (None, ""):
            raise ValidationError("missing required field 'doc_id'", field="doc_id", where=where)
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key in cls.TIME_FIELDS:
                kwargs[key] = parse_time(value, field_name=key, where=where)
            elif key in cls.LIST_FIELDS:
                kwargs[key] = _as_tuple(value, key, where)
            elif key == "extra":
                if value is None:
                    value = {}
                if not isinstance(value, Mapping):
                    raise ValidationError("field 'extra' must be a mapping", field="extra", where=where)
                kwargs[key] = dict(value)
            elif value is None:
                continue
            else:
                if not isinstance(value, (str, int, float)):
                    raise ValidationError(
                        f"field '{key}' must be a string, got {type(value).__name__}",
                        field=key,
                        where=where,
                    )
                kwargs[key] = str(value)
        try:
            return cls(**kwargs)
        except ValidationError as exc:
            if exc.where is None and where is not None:
                raise ValidationError(str(exc), field=exc.field, where=where) from None
            raise

    def to_mapping(self) -> dict[str, Any]:
        """A JSON-ready dict (datetimes as ISO strings, tuples as lists)."""
        out: dict[str, Any] = {}
        for name in self.field_names():
            value = getattr(self, name)
            if isinstance(value, dt.datetime):
                value = value.isoformat()
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            out[name] = value
        return out

    def valid_at(self, moment: dt.datetime) -> bool | None:
        """Whether the document holds at ``moment``: True, False, or None when unknown.

        Unknown validity (no ``effective_from``) is reported as ``None``, never assumed current.
        """
        if self.effective_from is None:
            return None
        if moment < self.effective_from:
            return False
        if self.effective_to is not None and moment >= self.effective_to:
            return False
        return True


@dataclass(frozen=True)
class Document:
    """A source document: its full text and its envelope."""

    envelope: Envelope
    text: str

    @property
    def doc_id(self) -> str:
        return self.envelope.doc_id

    @property
    def title(self) -> str:
        return self.envelope.title


@dataclass(frozen=True)
class Chunk:
    """A retrievable span of a document, with its pointer and context.

    Attributes:
        chunk_id: ``"{doc_id}#{anchor}"`` plus ``~n`` when a section is split further.
        doc_id: the document it came from.
        version: the document version it was cut from.
        start: first character of the span in ``Document.text``.
        end: one past the last character (``text == doc.text[start:end]``).
        text: the source span, verbatim.
        title: the document title (context for embedding and reading).
        section_path: headings from the top of the document down to this chunk.
        anchor: section anchor for citations (``runbook-v2#eur-cutoff``).
        parent_id: chunk id of the enclosing section (for parent expansion), or ``None``.
        preamble: derived situating text, stored apart from the source span; ``None`` if absent.
        kind: ``"section"`` for parent sections, ``"chunk"`` for retrievable units.
    """

    chunk_id: str
    doc_id: str
    version: str
    start: int
    end: int
    text: str
    title: str = ""
    section_path: tuple[str, ...] = ()
    anchor: str = ""
    parent_id: str | None = None
    preamble: str | None = None
    kind: str = "chunk"

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValidationError(
                f"chunk {self.chunk_id!r} has span [{self.start}, {self.end}); "
                "expected 0 <= start <= end",
                field="start",
            )
        if self.end - self.start != len(self.text):
            raise ValidationError(
                f"chunk {self.chunk_id!r} span length {self.end - self.start} != "
                f"text length {len(self.text)}",
                field="end",
            )

    @property
    def citation(self) -> str:
        """The span citation, ``doc_id#anchor``."""
        return f"{self.doc_id}#{self.anchor}" if self.anchor else self.doc_id

    def contextual_text(self) -> str:
        """Text to embed and rerank: title, section path, preamble, then the source span."""
        head = " > ".join(p for p in (self.title, *self.section_path) if p)
        parts = [head] if head else []
        if self.preamble:
            parts.append(self.preamble)
        parts.append(self.text)
        return "\n".join(parts)
