"""Reading by id for one caller: ``retrieve_documents`` and ``related_documents``.

A :class:`DocumentReader` answers the two tools that take ids (a citation ``doc_id#anchor``,
a chunk id ``doc_id#anchor~n`` or a bare ``doc_id``) for a fixed caller scope and standing
filters. It reads the index only through the :class:`~ragkit.index.backend.Backend` seam
(``document``, ``section``, ``sections_of``, ``row_for``, ``envelopes``, ``links``), and shows
a document only when :meth:`ragkit.core.scope.Scope.allows` its envelope and the standing
filters pass it. An id the caller may not read gets exactly the same answer as an id that
does not exist (:meth:`DocumentReader.unavailable`): no existence oracle.

Example:
    >>> from ragkit.tools import TOOL_SPECS
    >>> reader = DocumentReader(Scope("acme", ["ops"]), Filters(), ToolSettings(), TOOL_SPECS)
    >>> backend = as_backend(index)                                 # doctest: +SKIP
    >>> reader.retrieve(backend, ["settlement-policy-v3"])["documents"][0]["kind"]  # doctest: +SKIP
    'document'
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Mapping
from typing import Any

from ragkit.core.ids import doc_of, parse_id, section_id
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope, validity
from ragkit.index.backend import Backend
from ragkit.models.tokens import count_tokens, truncate_to_tokens
from ragkit.text.untrusted import TRUST_LABEL
from ragkit.tools.arguments import ToolArgumentError
from ragkit.tools.responses import envelope_fields, iso, validity_note
from ragkit.tools.schemas import ToolSettings, ToolSpec

__all__ = ["DocumentReader"]


class DocumentReader:
    """``retrieve_documents`` and ``related_documents`` for one caller.

    Args:
        scope: the caller (fixed).
        filters: the standing filters every document shown must pass.
        settings: the ceilings (``max_ids``, ``doc_tokens``).
        specs: the tool specs, for the example calls of error answers.
    """

    def __init__(self, scope: Scope, filters: Filters, settings: ToolSettings, specs: Mapping[str, ToolSpec]):
        self.scope = scope
        self.filters = filters
        self.settings = settings
        self.specs = specs

    # -- what the caller may see ------------------------------------------------------------
    def visible(self, env: Envelope) -> bool:
        """In the caller's scope and through the standing filters."""
        return self.scope.allows(env) and self.filters.allows(env)

    def readable(self, backend: Backend, doc_id: str) -> Document | None:
        """The document ``doc_id`` when the caller may read it, else ``None`` (absent or hidden alike)."""
        doc = backend.document(doc_id)
        return doc if doc is not None and self.visible(doc.envelope) else None

    def readable_envelopes(self, backend: Backend) -> list[Envelope]:
        """The envelopes of every document the caller may read (through the standing filters)."""
        return backend.envelopes(self.scope, self.filters)

    def unavailable(self, backend: Backend, asked: str, field: str,
                    example: Mapping[str, Any]) -> ToolArgumentError:
        """The one answer for an id that does not exist *or* that the caller may not read."""
        wanted = doc_of(asked)
        in_scope = backend.similar_ids(self.scope, self.filters, wanted)  # bounded on an engine
        near = difflib.get_close_matches(wanted, in_scope, n=3, cutoff=0.75)
        return ToolArgumentError(
            "unknown_id", f"no document {asked!r} is available to you: it is not in this index or not "
            f"in your scope ({self.scope}). Use a doc_id or citation from a search_knowledge result",
            field=field, valid=(f"ids from search results; close ids in your scope: {near}" if near
                                else "ids from search_knowledge results"), example=example)

    # -- retrieve_documents -----------------------------------------------------------------
    def retrieve(self, backend: Backend, ids: list[str]) -> dict[str, Any]:
        """The ``retrieve_documents`` response for ``ids`` (raises ToolArgumentError when none is read)."""
        spec, s = self.specs["retrieve_documents"], self.settings
        if any(not i.strip() for i in ids):
            raise ToolArgumentError("bad_value", "ids contains an empty string", field="ids",
                                    valid="doc_id or doc_id#anchor values", example=spec.example_call())
        notices: list[str] = []
        asked = list(dict.fromkeys(i.strip() for i in ids))
        if len(asked) < len(ids):
            notices.append("duplicate ids were read once")
        if len(asked) > s.max_ids:
            rest = asked[s.max_ids:]
            asked = asked[: s.max_ids]
            notices.append(f"at most {s.max_ids} ids per call: read {asked}; NOT read: {rest}. Call "
                           "retrieve_documents again with those ids if you still need them")
        documents, failures = [], []
        for ident in asked:
            try:
                item, note = self._read_one(backend, ident, spec)
            except ToolArgumentError as exc:
                failures.append(exc)
                notices.append(f"{ident}: {exc}")
                continue
            documents.append(item)
            if note:
                notices.append(note)
        if not documents:
            first = failures[0]
            message = str(first) if len(failures) == 1 else \
                "none of the ids could be read: " + "; ".join(str(f) for f in failures)
            raise ToolArgumentError(first.code, message, field="ids", valid=first.valid,
                                    example=first.example)
        delivered = sum(d["tokens"] for d in documents)
        return {"tool": "retrieve_documents", "ok": True, "notices": notices, "documents": documents,
                "trace": {"ids_asked": len(ids), "ids_read": len(documents), "tokens_delivered": delivered,
                          "truncated": [d["id"] for d in documents if d["truncated"]]}}

    def _read_one(self, backend: Backend, ident: str, spec: ToolSpec) -> tuple[dict[str, Any], str | None]:
        parsed = parse_id(ident)
        doc_id = parsed.doc_id
        doc = self.readable(backend, doc_id)
        if doc is None:
            raise self.unavailable(backend, ident, "ids", spec.example_call())
        sections = backend.sections_of(doc_id)
        note = None
        piece: Chunk | None = None
        if parsed.anchor or parsed.part is not None:
            key = section_id(ident)
            piece = backend.section(key)
            if piece is not None and parsed.part is not None:
                note = f"{ident} is a chunk id: returned its whole section {key}"
            elif piece is None and (row := backend.row_for(ident)) is not None:
                piece = backend.fetch([row])[0]  # an index without parent sections
            if piece is None:
                valid = [doc_id] + [f"{doc_id}#{c.anchor}" for c in sections]
                anchor = ident[len(doc_id) + 1:]  # as asked, with its chunk number
                raise ToolArgumentError("unknown_anchor", f"{doc_id!r} has no section {anchor!r}",
                                        field="ids", valid=valid[:30], example=spec.example_call())
            text, start = piece.text, piece.start
        else:
            text, start = doc.text, 0
        cut, truncated = truncate_to_tokens(text, self.settings.doc_tokens)
        truncation = None
        if truncated:
            truncation = self._truncation(ident, text, start, cut, sections if piece is None else [])
        env = doc.envelope
        moment = dt.datetime.now(dt.timezone.utc)
        state = validity(env, moment)
        citation = f"{doc_id}#{piece.anchor}" if piece is not None and piece.anchor else doc_id
        item = {"id": ident, "citation": citation, "doc_id": doc_id,
                "anchor": piece.anchor if piece is not None else None,
                "kind": "section" if piece is not None else "document", **envelope_fields(env),
                "validity": state, "validity_note": validity_note(env, state, moment, False),
                "text": cut, "start": start, "end": start + len(cut), "tokens": count_tokens(cut),
                "truncated": truncated, "truncation": truncation, "trust": TRUST_LABEL}
        return item, note

    def _truncation(self, ident: str, text: str, start: int, cut: str, sections: list[Chunk]) -> str:
        total, end_cut, end = count_tokens(text), start + len(cut), start + len(text)
        what = (f"{ident}: cut to {self.settings.doc_tokens} of {total} tokens; characters {end_cut}-{end} "
                "of the document are not included")
        missing = [c.anchor for c in sections if c.start >= end_cut]
        partly = [c.anchor for c in sections if c.start < end_cut < c.end]
        if partly:
            what += f"; section partly included: {partly[0]}"
        if missing:
            shown = ", ".join(missing[:12]) + (f" and {len(missing) - 12} more" if len(missing) > 12 else "")
            what += f"; sections not included: {shown}"
        if sections:
            what += ". Retrieve 'doc_id#anchor' to read one section in full"
        return what

    # -- related_documents ------------------------------------------------------------------
    def related(self, backend: Backend, doc_id: str) -> dict[str, Any]:
        """The ``related_documents`` response for ``doc_id`` (a ``doc_id#anchor`` is read as its document)."""
        spec = self.specs["related_documents"]
        asked = doc_id.strip()
        parsed = parse_id(asked)
        base = parsed.doc_id
        doc = self.readable(backend, base)
        if doc is None:
            raise self.unavailable(backend, asked, "doc_id", spec.example_call())
        notices = [f"related_documents works on whole documents: used {base!r}"] \
            if parsed.anchor or parsed.part is not None else []
        links = backend.links(base)
        env = doc.envelope
        moment = dt.datetime.now(dt.timezone.utc)
        links_to = [self._summary(d, other, moment) for d in dict.fromkeys(env.links)
                    if (other := self.readable(backend, d)) is not None]
        linked_from = [self._summary(d, other, moment) for d in links.linked_from
                       if d != base and (other := self.readable(backend, d)) is not None]
        older = self._chain(backend, base, "supersedes", moment)
        newer = self._chain(backend, base, "superseded_by", moment)
        named = set(env.links) | set(env.supersedes) | set(env.superseded_by)
        hidden = sorted(d for d in named if self.readable(backend, d) is None)
        if hidden:
            notices.append(f"{len(hidden)} id(s) named in its envelope ({hidden[:8]}) are not available to "
                           "you (not in this index or not in your scope) and are not listed")
        response: dict[str, Any] = {
            "tool": "related_documents", "ok": True, "notices": notices, "doc_id": base,
            "document": self._summary(base, doc, moment), "links_to": links_to, "linked_from": linked_from,
            "supersedes": older, "superseded_by": newer}
        if not (links_to or linked_from or older or newer):
            response["message"] = (f"{base!r} links to no document in your scope, no document in your scope "
                                   "links to it, and it supersedes and is superseded by none. Use "
                                   "search_knowledge with its identifiers or title to find related text")
        response["trace"] = {"listed": len(links_to) + len(linked_from) + len(older) + len(newer)}
        return response

    def _summary(self, doc_id: str, doc: Document, moment: dt.datetime) -> dict[str, Any]:
        env = doc.envelope
        return {"doc_id": doc_id, "title": env.title, "version": env.version,
                "source_type": env.source_type, "authority": env.authority, "tenant": env.tenant,
                "published_at": iso(env.published_at), "effective_from": iso(env.effective_from),
                "effective_to": iso(env.effective_to), "validity": validity(env, moment),
                "conditions": list(env.conditions), "status": env.status or None, "trust": TRUST_LABEL}

    def _chain(self, backend: Backend, start: str, direction: str,
               moment: dt.datetime) -> list[dict[str, Any]]:
        """Follow one supersession direction to its end (breadth first; cycles and unreadable docs stop).

        ``direction`` is ``"supersedes"`` (older documents) or ``"superseded_by"`` (newer ones).
        """
        out: list[dict[str, Any]] = []
        seen, frontier, depth = {start}, [start], 0
        while frontier:
            depth += 1
            nxt = []
            for node in frontier:
                for other in getattr(backend.links(node), direction):
                    if other in seen:
                        continue
                    seen.add(other)
                    doc = self.readable(backend, other)
                    if doc is None:
                        continue
                    out.append({**self._summary(other, doc, moment), "depth": depth, "via": node})
                    nxt.append(other)
            frontier = nxt
        return out
