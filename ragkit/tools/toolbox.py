"""Retrieval as tools: a :class:`Toolbox` binds ``search_knowledge``, ``retrieve_documents`` and
``related_documents`` to an index and a caller.

The tool contract of CURRICULUM sections 1 and 13 is defined once in :mod:`ragkit.tools.schemas`.
A :class:`Toolbox` binds the tools to an index and a caller :class:`~ragkit.core.scope.Scope`
on the server side. Every argument only narrows that scope; no response ever carries
text the caller may not read, and an id the caller may not read gets exactly the same
answer as an id that does not exist (no existence oracle). :meth:`Toolbox.call`
validates arguments against the schema (``additionalProperties: false``) and then
semantically (``k = 0``, malformed dates, empty query, unknown ids), and never raises:
a bad call returns a structured error the model can act on (what was wrong, the valid
values, an example call), an empty result a message naming what was tried and what to
change.

The index is read only through the backend seam (:func:`ragkit.index.backend.as_backend`),
one snapshot per call, so an in-memory index and a Milvus one answer alike. Every response
is a JSON-ready dict ``{"tool", "ok", "notices", ..., "tokens", "trace"}``; ``tokens`` is the
size (real tokenizer) of what a model sees, :func:`~ragkit.tools.responses.for_model`.

Example:
    >>> box = Toolbox(index, Scope("acme", ["ops"]))                      # doctest: +SKIP
    >>> box.call("search_knowledge", {"query": "EUR cutoff", "k": 3})["results"][0]["citation"]
    ... # doctest: +SKIP
    'settlement-runbook-v2#eur-cutoff'
    >>> box.call("search_knowledge", {"query": "EUR cutoff", "k": 0})["error"]["code"]  # doctest: +SKIP
    'bad_value'
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from ragkit.core.errors import IndexStateError, RagkitError, ScopeError, ValidationError
from ragkit.core.records import GLOBAL_TENANT, Chunk, Envelope
from ragkit.core.scope import ALL_TENANTS, Filters, Scope
from ragkit.index.backend import Backend, as_backend
from ragkit.models.tokens import truncate_to_tokens
from ragkit.search.funnel import FUNNEL_PARAMS, Funnel, Hit, SearchResult
from ragkit.text.untrusted import TRUST_LABEL
from ragkit.tools.arguments import (
    ToolArgumentError,
    combine_filters,
    date_arg,
    empty_query_error,
    parse_json_arguments,
    schema_error,
    surely_valid,
    without_filter,
)
from ragkit.tools.reading import DocumentReader
from ragkit.tools.responses import (
    compact_trace,
    envelope_fields,
    error_response,
    filters_json,
    finish,
    validity_note,
)
from ragkit.tools.schemas import ToolSettings, tool_specs

__all__ = ["Toolbox"]

log = logging.getLogger("ragkit.tools.toolbox")


#: The deepest rank a search (``offset`` + ``k``) reaches: the funnel's largest delivered width.
_DEEPEST = int(FUNNEL_PARAMS["deliver"].high or 1)

class Toolbox:
    """The three retrieval tools bound to an index and a caller scope (server side).

    Args:
        index: an :class:`~ragkit.index.index.Index`, a snapshot, an ``IndexView``, a Milvus
            index or anything :func:`~ragkit.index.backend.as_backend` accepts.
        scope: the caller; fixed for the toolbox's life. Tool arguments only narrow it.
        funnel: the :class:`~ragkit.search.funnel.Funnel` to search with (default: one over ``index``).
        settings: ceilings and budgets (:class:`~ragkit.tools.schemas.ToolSettings`).
        filters: standing filters every call is held to (arguments narrow them further).

    Attributes:
        last_result: the :class:`~ragkit.search.funnel.SearchResult` of the last search (full trace).
    """

    def __init__(self, index: Any, scope: Scope, *, funnel: Funnel | None = None,
                 settings: ToolSettings | None = None, filters: Filters | None = None):
        if not isinstance(scope, Scope):
            raise ValidationError(f"scope must be a ragkit.core.scope.Scope, got {type(scope).__name__}",
                                  field="scope")
        if filters is not None and not isinstance(filters, Filters):
            raise ValidationError("filters must be a ragkit.core.scope.Filters, got "
                                  f"{type(filters).__name__}", field="filters")
        self.index = index
        self.scope = scope
        self.filters = filters or Filters()
        self.filters.check_narrows(scope)
        self.funnel = funnel if funnel is not None else Funnel(index)
        self.settings = settings or ToolSettings()
        kinds = as_backend(index).doc_types(scope, self.filters)  # one bounded query on an engine
        self.specs = tool_specs(self.settings, kinds)
        self.reader = DocumentReader(scope, self.filters, self.settings, self.specs)
        self._validators: dict[str, Any] = {}  # jsonschema validators, built when a call needs one
        self.last_result: SearchResult | None = None
        self._snap: Any = None
        self._backend: Backend | None = None
        self._handlers: dict[str, Callable[..., dict[str, Any]]] = {
            "search_knowledge": self._search, "retrieve_documents": self.reader.retrieve,
            "related_documents": self.reader.related}

    # -- schemas ----------------------------------------------------------------------------
    def openai_tools(self) -> list[dict[str, Any]]:
        """This toolbox's tools (its ceilings in the descriptions) in OpenAI format."""
        return [t.openai() for t in self.specs.values()]

    def anthropic_tools(self) -> list[dict[str, Any]]:
        """This toolbox's tools in Anthropic format."""
        return [t.anthropic() for t in self.specs.values()]

    # -- public tools -----------------------------------------------------------------------
    def search_knowledge(self, query: str, k: int | None = None, doc_type: str | None = None,
                         valid_at: str | None = None, tenant: str | None = None,
                         published_after: str | None = None, published_before: str | None = None,
                         offset: int | None = None) -> dict:
        """Ranked excerpts for ``query`` in the bound scope (see the tool description); ``offset``
        skips that many ranked results (the next page of the same query)."""
        return self.call("search_knowledge", {
            "query": query, "k": k, "doc_type": doc_type, "valid_at": valid_at, "tenant": tenant,
            "published_after": published_after, "published_before": published_before, "offset": offset})

    def retrieve_documents(self, ids: list[str]) -> dict:
        """Full sections (``doc_id#anchor``) or documents (``doc_id``), capped, up to ``max_ids``."""
        return self.call("retrieve_documents", {"ids": ids})

    def related_documents(self, doc_id: str) -> dict:
        """Links out, links in and supersession chains of ``doc_id``, within scope."""
        return self.call("related_documents", {"doc_id": doc_id})

    def call(self, name: str, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """Validate and run one tool call; always returns a response dict, never raises.

        ``arguments`` is a mapping or its JSON text (as models send it); ``null`` values
        count as absent.
        """
        t0 = time.perf_counter()
        try:
            if name not in self.specs:
                raise ToolArgumentError("unknown_tool", f"there is no tool named {name!r}",
                                        field="name", valid=list(self.specs),
                                        example=self.specs["search_knowledge"].example_call())
            args = self._parse(name, arguments)
            response = self._handlers[name](self._current(), **args)  # one version per call
        except ToolArgumentError as exc:
            response = error_response(name, exc.code, str(exc), exc.field, exc.valid, exc.example)
        except ScopeError as exc:
            response = error_response(name, "out_of_scope", str(exc), "tenant", self._tenants(),
                                      self._example(name))
        except RagkitError as exc:
            response = error_response(name, "invalid_arguments", str(exc), getattr(exc, "field", None), None,
                                      self._example(name))
        except Exception as exc:  # noqa: BLE001 - a tool must answer, never crash the agent loop
            log.exception("tool %s failed on %r", name, arguments)
            response = error_response(name, "internal", f"the tool failed unexpectedly "
                                      f"({type(exc).__name__}); the server logged it. Try again, or another "
                                      "tool", None, None, self._example(name))
        trace = response.setdefault("trace", {})
        trace["ms"] = round((time.perf_counter() - t0) * 1000, 1)
        return finish(response)

    # -- helpers ----------------------------------------------------------------------------
    def _current(self) -> Backend:
        """The backend over the index's current snapshot (kept while the snapshot is the same)."""
        snap = self.index.snapshot() if hasattr(self.index, "snapshot") else self.index
        if self._backend is None or snap is not self._snap:
            self._snap, self._backend = snap, as_backend(snap)
        return self._backend

    def _example(self, name: str) -> dict[str, Any] | None:
        spec = self.specs.get(name)
        return spec.example_call() if spec else None

    def _parse(self, name: str, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        spec = self.specs[name]
        args = parse_json_arguments(spec, arguments)
        if surely_valid(spec.parameters, args):  # a well-formed call: no need for jsonschema
            return args
        errors = sorted(self._validator(name).iter_errors(args), key=lambda e: (len(e.path), str(e.path)))
        if errors:
            raise schema_error(spec, errors[0], self.settings.max_k)
        return args

    def _validator(self, name: str) -> Any:
        """The jsonschema validator of tool ``name``, built on first need.

        Importing jsonschema costs about a second (its format checkers compile grammars), so a
        toolbox imports it only when a call is not :func:`~ragkit.tools.arguments.surely_valid`:
        then jsonschema decides, and its first error becomes the structured error.
        """
        if name not in self._validators:
            from jsonschema import Draft202012Validator

            self._validators[name] = Draft202012Validator(self.specs[name].parameters)
        return self._validators[name]

    def _tenants(self) -> list[str]:
        if self.scope.tenant == ALL_TENANTS:
            return self._current().tenants()
        return [self.scope.tenant, GLOBAL_TENANT]

    def _visible(self, env: Envelope) -> bool:
        """In the caller's scope and through the toolbox's standing filters."""
        return self.reader.visible(env)

    # -- search_knowledge -------------------------------------------------------------------
    def _search(self, backend: Backend, query: str, k: int | None = None, doc_type: str | None = None,
                valid_at: str | None = None, tenant: str | None = None, published_after: str | None = None,
                published_before: str | None = None, offset: int | None = None) -> dict[str, Any]:
        spec, s = self.specs["search_knowledge"], self.settings
        if not query.strip():
            raise empty_query_error(spec)
        query = query.strip()
        notices: list[str] = []
        k = s.default_k if k is None else int(k)  # JSON Schema lets 4.0 pass as an integer
        deliver = min(k, s.max_k)
        if k > s.max_k:
            notices.append(f"k={k} is above this server's ceiling of {s.max_k}: at most {s.max_k} results "
                           "are returned. Narrow the query or the filters instead of widening k")
        types = tuple(t.strip() for t in (doc_type or "").split(",") if t.strip())
        if doc_type is not None:
            known = backend.doc_types(self.scope, self.filters)
            unknown = [t for t in types if t not in known]
            if unknown or not types:
                raise ToolArgumentError("unknown_doc_type", f"doc_type {doc_type!r}: {unknown or doc_type!r} "
                                        "is not a source type of any document in your scope",
                                        field="doc_type", valid=known, example=spec.example_call())
        after = date_arg(published_after, "published_after", spec)
        before = date_arg(published_before, "published_before", spec)
        if after and before and after >= before:
            raise ToolArgumentError("bad_range", f"published_after ({published_after}) is not before "
                                    f"published_before ({published_before}); nothing can match",
                                    field="published_before", valid="published_after < published_before",
                                    example=spec.example_call())
        asked = Filters(doc_types=types, tenants=(tenant,) if tenant else (), published_after=after,
                        published_before=before, valid_at=date_arg(valid_at, "valid_at", spec))
        asked.check_narrows(self.scope)  # ScopeError -> "out_of_scope"
        filters = combine_filters(self.filters, asked)
        # the next page: the same ranking, read past the results already shown (as far as the funnel delivers)
        skip = int(offset or 0)
        result = self.funnel.search(query, scope=self.scope, filters=filters, expand=False,
                                    deliver=min(skip + deliver, _DEEPEST))
        self.last_result = result
        moment = filters.valid_at or dt.datetime.now(dt.timezone.utc)
        items = []
        for h in result.hits[skip:skip + deliver]:
            if not self._visible(h.envelope):  # the funnel masks before ranking; re-checked on read
                continue
            chunk = self._chunk_of(backend, h)
            if chunk is None:
                notices.append(f"{h.chunk_id} changed while the index was being updated; search again")
                continue
            text, cut = truncate_to_tokens(chunk.text, s.excerpt_tokens)
            items.append({
                "rank": h.rank, "citation": h.citation, "doc_id": h.doc_id, "chunk_id": h.chunk_id,
                "anchor": chunk.anchor, **envelope_fields(h.envelope),
                "validity": h.validity,
                "validity_note": validity_note(h.envelope, h.validity, moment, filters.valid_at is not None),
                "score": round(float(h.score), 5), "text": text, "start": chunk.start,
                "end": chunk.start + len(text), "excerpt_truncated": cut, "trust": TRUST_LABEL})
        response: dict[str, Any] = {"tool": "search_knowledge", "ok": True, "notices": notices,
                                    "query": query, "filters": filters_json(filters), "results": items}
        if not items and skip and result.hits:
            response["message"] = (f"No results past rank {skip}: the query {query!r} ranks "
                                   f"{len(result.hits)} results under these filters (no search ranks past "
                                   f"{_DEEPEST}). To change: use other words rather than a later page.")
        elif not items:
            response["message"] = self._empty_message(backend, query, asked, filters, result.trace)
        response["trace"] = compact_trace(result.trace)
        return response

    def _chunk_of(self, backend: Backend, hit: Hit) -> Chunk | None:
        """The delivered chunk (for its offsets and anchor), from the version the search most likely read."""
        try:
            if hit.row < backend.size():
                chunk = backend.fetch([hit.row])[0]
                if chunk.chunk_id == hit.chunk_id:
                    return chunk
            latest = as_backend(self.index)
            row = latest.row_for(hit.chunk_id)
            found = latest.fetch([row])[0] if row is not None else None
        except IndexStateError:  # the row was deleted by a write since: it is not delivered
            return None
        return found if found is not None and found.text == hit.text else None

    def _empty_message(self, backend: Backend, query: str, asked: Filters, filters: Filters,
                       trace: Any) -> str:
        """Why a search found nothing, and what to change (document counts are engine queries)."""
        passing = backend.count_documents(self.scope, filters)
        readable = backend.count_documents(self.scope, self.filters)
        active = {name: value for name, value in filters_json(filters).items() if value}
        tried = (f"Nothing found for {query!r}. Tried lexical (BM25) and semantic (dense) retrieval, "
                 f"fused and reranked, over {trace.rows_in_scope} chunks of {passing} documents that "
                 f"pass the filters ({', '.join(f'{k}={v}' for k, v in active.items()) or 'none'}) out of "
                 f"{readable} documents in your scope ({self.scope}).")
        advice = []
        for name in (n for n, v in filters_json(asked).items() if v):
            loose = combine_filters(self.filters, without_filter(asked, name))
            freed = backend.count_documents(self.scope, loose) - passing
            if freed > 0:
                plural = "s" if freed > 1 else ""
                advice.append(f"drop {name} ({freed} more document{plural} would be searched)")
        if not readable:
            advice.append("nothing in this index is readable in your scope: ask an operator for access")
        advice.append("use other words or synonyms, the words the documents themselves would use")
        advice.append("search an identifier (ticket id, error code, doc_id)")
        return tried + " To change: " + "; ".join(advice) + "."
