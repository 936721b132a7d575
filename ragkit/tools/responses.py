"""The shape of a tool response: what a model is shown, envelopes, filters and traces as JSON.

Every response is a JSON-ready dict ``{"tool", "ok", "notices", ..., "tokens", "trace"}``;
:func:`for_model` is the part a model sees (no trace, no offsets, no empty fields) and
:func:`finish` counts its ``tokens`` with the real tokenizer. The helpers here turn the
records of the layers below (envelopes, filters, the funnel trace) into the fields of a
response, the same way for all three tools.

Example:
    >>> for_model({"tool": "search_knowledge", "ok": True, "notices": [], "results": [],
    ...            "when": "2026-01-19T00:00:00+00:00", "trace": {"ms": 3}})
    {'tool': 'search_knowledge', 'ok': True, 'results': [], 'when': '2026-01-19'}
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from typing import Any

from ragkit.core.records import Envelope
from ragkit.core.scope import Filters
from ragkit.models.tokens import count_tokens
from ragkit.search.trace import SearchTrace

__all__ = ["for_model", "as_text", "finish", "error_response", "iso", "validity_note", "envelope_fields",
           "filters_json", "compact_trace", "TRACE_COLUMNS"]

#: Item fields kept out of a model's view: character offsets and the anchor (already in the citation).
_FOR_PROGRAMS = frozenset({"start", "end", "anchor"})
#: Top-level lists a model is shown even when empty (an empty result is an answer).
_ALWAYS = frozenset({"results", "documents", "links_to", "linked_from", "supersedes", "superseded_by"})
#: Flags a model is shown only when they are set (a cut excerpt or document).
_FLAGS = frozenset({"excerpt_truncated", "truncated"})
_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})T00:00:00\+00:00$")


def for_model(response: Mapping[str, Any]) -> dict[str, Any]:
    """What a model is shown of a tool response, compact: no trace, no offsets, no empty fields.

    The trace is for people and evaluation; character offsets are for programs (citations
    checks); empty and null fields and unset truncation flags carry nothing; a date at
    midnight UTC is written as a date.
    The full response stays with the caller (``Toolbox.call`` returns it).
    """
    return {k: _compact(v) for k, v in response.items()
            if k != "trace" and (k in _ALWAYS or not _empty(_compact(v)))}


#: Item fields that :func:`as_text` writes elsewhere (the label, the body) or leaves out.
_NOT_IN_HEADER = frozenset({"citation", "text", "doc_id", "chunk_id", "id", "rank", "score", "trust", "kind"})


def as_text(response: Mapping[str, Any]) -> str:
    """:func:`for_model`'s view written as labelled text blocks instead of JSON.

    Every result, document or linked document becomes a block that starts with its citation in
    brackets, then its envelope as ``field: value`` pairs, then its text. Small models read
    such blocks better than nested JSON and copy the bracketed label as the citation; the
    content is the same as the JSON view's, field for field.

    Example:
        >>> print(as_text({"tool": "search_knowledge", "ok": True, "query": "EUR cutoff", "results": [
        ...     {"rank": 1, "citation": "runbook-v2#eur-cutoff", "doc_id": "runbook-v2", "tenant": "global",
        ...      "validity": "valid", "text": "EUR cutoff 16:00 CET."}], "tokens": 40}))
        search_knowledge (ok) · query: EUR cutoff · tokens: 40
        results:
        [runbook-v2#eur-cutoff] tenant: global · validity: valid
        EUR cutoff 16:00 CET.
    """
    view = for_model(response)
    head = [f"{view.get('tool', 'tool')} ({'ok' if view.get('ok') else 'failed'})"]
    blocks: list[str] = []
    for key, value in view.items():
        if key in ("tool", "ok"):
            continue
        if isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
            blocks.append(f"{key}:" + ("" if value else " none"))
            blocks += [_block(v) for v in value]
        elif isinstance(value, Mapping) and ("doc_id" in value or "citation" in value):
            blocks.append(f"{key}:")
            blocks.append(_block(value))
        else:
            head.append(f"{key}: {_plain(value)}")
    return "\n".join([" · ".join(head), *blocks])


def _block(item: Mapping[str, Any]) -> str:
    label = item.get("citation") or item.get("doc_id") or item.get("id") or "?"
    fields = " · ".join(f"{k}: {_plain(v)}" for k, v in item.items() if k not in _NOT_IN_HEADER)
    text = str(item.get("text", "")).strip()
    return f"[{label}] {fields}".rstrip() + (f"\n{text}" if text else "")


def _plain(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(map(str, value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def _compact(value: Any) -> Any:
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            v = _compact(v)
            if k not in _FOR_PROGRAMS and not _empty(v) and not (k in _FLAGS and v is False):
                out[k] = v
        return out
    if isinstance(value, list):
        return [_compact(v) for v in value]
    if isinstance(value, str):
        match = _MIDNIGHT.match(value)
        return match.group(1) if match else value
    return value


def finish(response: dict[str, Any]) -> dict[str, Any]:
    """Set ``response["tokens"]`` (the size of :func:`for_model`'s view) and keep the trace last."""
    view = for_model(response)
    view.pop("tokens", None)
    response["tokens"] = count_tokens(json.dumps(view, ensure_ascii=False))
    trace = response.pop("trace")
    response["trace"] = trace   # keep the trace last, after tokens
    return response


def error_response(name: str, code: str, message: str, field: str | None, valid: Any,
                   example: Mapping[str, Any] | None) -> dict[str, Any]:
    """The response of a failed call to tool ``name``: what was wrong, the valid values, an example."""
    return {"tool": name, "ok": False, "notices": [],
            "error": {"code": code, "message": message, "field": field, "valid": valid,
                      "example": dict(example) if example else None},
            "trace": {}}


def iso(value: dt.datetime | None) -> str | None:
    """``value.isoformat()``, or ``None``."""
    return value.isoformat() if value is not None else None


def validity_note(env: Envelope, state: str, moment: dt.datetime, asked: bool) -> str:
    """One sentence on the validity ``state`` of ``env`` at ``moment`` (``asked``: a date the caller gave).

    Example:
        >>> env = Envelope("p", effective_from=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
        >>> validity_note(env, "valid", dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc), True)
        'valid at 2026-02-01 (effective from 2026-01-01, no end date)'
    """
    when = f"at {moment.date().isoformat()}" + ("" if asked else " (today)")
    start = env.effective_from.date().isoformat() if env.effective_from else None
    end = env.effective_to.date().isoformat() if env.effective_to else None
    if state == "unknown":
        return f"unknown {when}: the document states no effective date; do not assume it is current"
    span = f"effective from {start}" + (f" to {end}" if end else ", no end date")
    words = {"valid": "valid", "expired": "expired", "not_yet_valid": "not yet valid"}[state]
    return f"{words} {when} ({span})"


def envelope_fields(env: Envelope) -> dict[str, Any]:
    """The envelope fields a result carries (dates as ISO strings)."""
    return {"version": env.version, "title": env.title, "source_type": env.source_type,
            "authority": env.authority, "tenant": env.tenant, "entities": list(env.entities),
            "published_at": iso(env.published_at), "effective_from": iso(env.effective_from),
            "effective_to": iso(env.effective_to), "links": list(env.links),
            "supersedes": list(env.supersedes), "superseded_by": list(env.superseded_by),
            "conditions": list(env.conditions), "status": env.status or None}


def filters_json(filters: Filters) -> dict[str, Any]:
    """``filters`` named as the search_knowledge arguments (dates as days, lists comma separated)."""
    def day(v: dt.datetime | None) -> str | None:
        return v.date().isoformat() if v is not None else None

    return {"doc_type": ",".join(filters.doc_types) or None, "tenant": ",".join(filters.tenants) or None,
            "valid_at": day(filters.valid_at), "published_after": day(filters.published_after),
            "published_before": day(filters.published_before)}


#: Columns of :func:`compact_trace`'s candidates (``tenant`` lets a reader of the trace check isolation).
TRACE_COLUMNS = ("chunk_id", "tenant", "lexical_rank", "dense_rank", "fused_rank", "rerank_rank",
                 "final_rank", "delivered")


def compact_trace(trace: SearchTrace, width: int = 20) -> dict[str, Any]:
    """The funnel trace in a few hundred bytes: the summary and the ranks of the best candidates."""
    summary = {k: round(v, 1) if isinstance(v, float) else v for k, v in trace.summary().items()}
    ordered = sorted(trace.candidates, key=lambda c: (c.final_rank or 10**9, c.fused_rank or 10**9))
    rows = [[getattr(c, col) for col in TRACE_COLUMNS] for c in ordered[:width]]
    return {"summary": summary, "columns": list(TRACE_COLUMNS), "candidates": rows}
