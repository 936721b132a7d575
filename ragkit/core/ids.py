"""Identifiers of documents, sections and chunks, parsed in one place.

Every retrievable unit is named ``doc_id#anchor~n``: the document, the section's anchor
inside it, and the chunk's number when a section was cut into several chunks. A citation
names ``doc_id#anchor`` (any chunk of that section) or a whole ``doc_id``.

Example:
    >>> parse_id("runbook-v2#eur-cutoff~1")
    ChunkId(doc_id='runbook-v2', anchor='eur-cutoff', part=1)
    >>> section_key("policy-v3#cutoffs"), section_id("runbook-v2#eur-cutoff~1"), doc_of("ro-7719")
    (('policy-v3', 'cutoffs'), 'runbook-v2#eur-cutoff', 'ro-7719')
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["ChunkId", "parse_id", "section_key", "section_id", "doc_of"]


class ChunkId(NamedTuple):
    """The parts of ``doc_id#anchor~n``: ``anchor`` is ``""`` for a whole document, ``part`` ``None``
    when the id names no chunk number."""

    doc_id: str
    anchor: str
    part: int | None


def parse_id(ident: str) -> ChunkId:
    """Split ``doc_id#anchor~n`` (or ``doc_id#anchor``, or ``doc_id``) into its parts.

    A ``~`` suffix that is not a number stays part of the anchor.
    """
    doc_id, _, rest = ident.partition("#")
    anchor, tilde, number = rest.rpartition("~")
    if tilde and number.isdigit():
        return ChunkId(doc_id, anchor, int(number))
    return ChunkId(doc_id, rest, None)


def section_key(ident: str) -> tuple[str, str]:
    """``(doc_id, anchor)`` of a chunk or section id."""
    parsed = parse_id(ident)
    return parsed.doc_id, parsed.anchor


def section_id(ident: str) -> str:
    """``doc_id#anchor`` without the chunk number (``doc_id`` alone for a whole document)."""
    doc_id, anchor = section_key(ident)
    return f"{doc_id}#{anchor}" if anchor else doc_id


def doc_of(ident: str) -> str:
    """The document id of a chunk, section or document id."""
    return ident.partition("#")[0]
