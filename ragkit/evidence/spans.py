"""Evidence: one delivered span with its full envelope and its place in the document.

Everything :func:`ragkit.evidence.resolution.resolve` and :func:`ragkit.evidence.citations.verify` read is an
:class:`Evidence`: the citation (``doc_id#anchor``), the span's text, the document's
:class:`~ragkit.core.records.Envelope` (scope, dates, authority, lineage, conditions), the offsets of
the span inside the document text, and the retrieval call that admitted it. Build it from a
tool result (:meth:`Evidence.from_tool_item`), a funnel hit (:meth:`Evidence.from_hit`), a
document section (:meth:`Evidence.from_document`) or by hand (:meth:`Evidence.of`).

Example:
    >>> e = Evidence.of("runbook-v2#eur-cutoff", "EUR cutoff 16:00 CET.",
    ...                 {"doc_id": "runbook-v2", "authority": "operations"}, start=120)
    >>> e.anchor, e.start, e.end, e.envelope.authority
    ('eur-cutoff', 120, 141, 'operations')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.core.ids import doc_of, parse_id
from ragkit.core.records import Document, Envelope
from ragkit.documents.sections import sections

__all__ = ["Evidence"]


@dataclass(frozen=True)
class Evidence:
    """One delivered span and its full envelope.

    Attributes:
        citation: ``doc_id#anchor`` (the citation an answer uses).
        doc_id: the source document.
        anchor: the section anchor (``""`` for a whole document).
        text: the span as delivered.
        envelope: the document's evidence envelope.
        start: offset of ``text`` inside the document's full text (``-1``: unknown).
        end: one past its end (``-1``: unknown).
        chunk_id: the index row it came from, if any.
        query: the retrieval call that admitted it.
    """

    citation: str
    doc_id: str
    anchor: str
    text: str
    envelope: Envelope
    start: int = 0
    end: int = 0
    chunk_id: str = ""
    query: str = ""

    def joined(self, other: Evidence) -> Evidence:
        """This span and ``other`` (another excerpt of the same citation) as one piece of evidence.

        A long section is indexed as several chunks, so one citation can be delivered twice with
        different text; both are kept, so that no delivered sentence is lost. Returns ``self`` when
        ``other`` adds nothing, ``other`` when it covers this one, else a new span: overlapping or
        touching excerpts as one stretch of the document (offsets kept), excerpts apart joined in
        document order by a blank line (offsets unknown, ``-1``).

        Example:
            >>> env = {"doc_id": "d"}
            >>> a, b = Evidence.of("d#s", "One. Two.", env), Evidence.of("d#s", "Five.", env, start=40)
            >>> j = a.joined(b)
            >>> j.text.split(), j.start, a.joined(Evidence.of("d#s", "Two. Three.", env, start=5)).text
            (['One.', 'Two.', 'Five.'], -1, 'One. Two. Three.')
        """
        if other.text in self.text:
            return self
        if self.text in other.text:
            return other
        first, second = (self, other)
        if self.start >= 0 and other.start >= 0 and other.start < self.start:
            first, second = other, self
        reach = first.start + len(first.text)
        if first.start >= 0 and 0 <= second.start <= reach:  # one stretch of the document
            text = first.text + second.text[reach - second.start :]
            return replace(first, text=text, end=first.start + len(text))
        return replace(first, text=first.text + "\n\n" + second.text, start=-1, end=-1)

    @classmethod
    def of(
        cls,
        citation: str,
        text: str,
        envelope: Envelope | Mapping[str, Any],
        *,
        start: int = 0,
        query: str = "",
    ) -> Evidence:
        """Evidence from a citation, a span and an envelope (or its mapping): hand-built cases and tests.

        Raises:
            ValidationError: the citation does not name the envelope's ``doc_id``, or a bad envelope field.
        """
        env = envelope if isinstance(envelope, Envelope) else Envelope.from_mapping(envelope)
        doc_id, anchor = doc_of(citation), parse_id(citation).anchor
        if doc_id != env.doc_id:
            raise ValidationError(
                f"citation {citation!r} does not name the envelope's doc_id "
                f"{env.doc_id!r}; write '{env.doc_id}#<anchor>'",
                field="citation",
            )
        return cls(citation, doc_id, anchor, text, env, start, start + len(text), query=query)

    @classmethod
    def from_tool_item(cls, item: Mapping[str, Any], *, query: str = "") -> Evidence:
        """Rebuild evidence from a ``search_knowledge`` result or a ``retrieve_documents`` document.

        Envelope fields are taken from the item (unknown keys such as ``score`` or ``trust``
        are ignored); ``text``, ``start``, ``end``, ``citation``/``anchor`` and ``chunk_id`` locate
        the span. A missing ``start`` means the document offsets are unknown (``-1``).

        Raises:
            ValidationError: the item has no ``doc_id`` or a malformed envelope field.
        """
        if not isinstance(item, Mapping) or not item.get("doc_id"):
            raise ValidationError(
                "a tool item needs at least 'doc_id' and 'text'; got "
                f"{sorted(item) if isinstance(item, Mapping) else type(item).__name__}",
                field="doc_id",
            )
        known = set(Envelope.field_names())
        env = Envelope.from_mapping({k: v for k, v in item.items() if k in known and v is not None})
        doc_id = env.doc_id
        citation = str(item.get("citation") or "")
        anchor = str(item.get("anchor") or parse_id(citation).anchor)
        citation = citation or (f"{doc_id}#{anchor}" if anchor else doc_id)
        text = str(item.get("text") or "")
        start = item.get("start")
        end = item.get("end")
        s = int(start) if start is not None else -1
        e = int(end) if end is not None else (s + len(text) if s >= 0 else -1)
        return cls(
            citation,
            doc_id,
            anchor,
            text,
            env,
            s,
            e,
            str(item.get("chunk_id") or ""),
            query or str(item.get("query") or ""),
        )

    @classmethod
    def from_hit(cls, hit: Any, index: Any = None, *, section: bool = False, query: str = "") -> Evidence:
        """Evidence from a :class:`ragkit.search.funnel.Hit`.

        A Hit carries no offsets; pass the ``index`` it came from to take them from
        ``index.rows[hit.row]`` (and, with ``section=True``, to deliver the expanded parent
        section with its offsets). Without ``index`` the document offsets are unknown (``-1``).
        """
        text, start, end, anchor = hit.text, -1, -1, parse_id(hit.citation).anchor
        if index is not None:
            chunk = index.rows[hit.row]
            start, end, anchor = chunk.start, chunk.end, chunk.anchor or anchor
            if section and getattr(hit, "section_id", None) and hit.section_id in index.sections:
                sec = index.sections[hit.section_id]
                text, start, end = sec.text, sec.start, sec.end
        elif section and getattr(hit, "section_text", None):
            text = hit.section_text
        return cls(hit.citation, hit.doc_id, anchor, text, hit.envelope, start, end, hit.chunk_id, query)

    @classmethod
    def from_document(cls, document: Document, anchor: str | None = None, *, query: str = "") -> Evidence:
        """Evidence for one section of a :class:`ragkit.core.records.Document` (``anchor=None``: all of it).

        Raises:
            ValidationError: no section with that anchor (the message lists the anchors).
        """
        if anchor is None:
            return cls(
                document.doc_id,
                document.doc_id,
                "",
                document.text,
                document.envelope,
                0,
                len(document.text),
                query=query,
            )
        secs = {s.anchor: s for s in sections(document.text)}
        if anchor not in secs:
            raise ValidationError(
                f"{document.doc_id} has no section {anchor!r}; it has {sorted(secs)}", field="anchor"
            )
        s = secs[anchor]
        return cls(
            f"{document.doc_id}#{anchor}",
            document.doc_id,
            anchor,
            document.text[s.start : s.end],
            document.envelope,
            s.start,
            s.end,
            query=query,
        )
