"""Checking a tool call's arguments: the schema first, then their meaning, as errors a model can fix.

A model's call is parsed (a mapping or its JSON text; ``null`` counts as absent), checked
against the tool's JSON Schema (``additionalProperties: false``) and turned into a
:class:`ToolArgumentError` naming what was wrong, the valid values and an example call. The
search filters a call asks for are combined with the toolbox's standing ones here, so that
arguments can only narrow.

Example:
    >>> from ragkit.tools.schemas import TOOL_SPECS
    >>> parse_json_arguments(TOOL_SPECS["search_knowledge"], '{"query": "x", "k": null}')
    {'query': 'x'}
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.core.records import parse_time
from ragkit.core.scope import Filters
from ragkit.tools.schemas import ToolSpec

__all__ = ["ToolArgumentError", "parse_json_arguments", "surely_valid", "schema_error", "empty_query_error",
           "date_arg", "combine_filters", "without_filter"]


class ToolArgumentError(ValidationError):
    """A tool call the model can fix: what was wrong, the valid values and an example call."""

    def __init__(self, code: str, message: str, *, field: str | None = None, valid: Any = None,
                 example: Mapping[str, Any] | None = None):
        super().__init__(message, field=field)
        self.code = code
        self.valid = valid
        self.example = example


def parse_json_arguments(spec: ToolSpec, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """``arguments`` (a mapping or its JSON text) as a dict without ``None`` values (not yet validated).

    Raises:
        ToolArgumentError: ``invalid_json`` or ``invalid_arguments`` (not a JSON object).
    """
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise ToolArgumentError("invalid_json", f"the arguments are not valid JSON ({exc.msg} at "
                                    f"character {exc.pos})", field=None, valid=None,
                                    example=spec.example_call()) from None
    if not isinstance(arguments, Mapping):
        raise ToolArgumentError("invalid_arguments", "the arguments must be a JSON object",
                                valid=list(spec.parameters["properties"]), example=spec.example_call())
    return {str(k): v for k, v in arguments.items() if v is not None}


#: Keywords that only describe (they never make a value invalid).
_ANNOTATIONS = frozenset({"description", "default", "title", "examples", "$comment"})
#: The validation keywords :func:`surely_valid` checks itself; any other one sends a call to jsonschema.
_CHECKED = frozenset({"type", "properties", "additionalProperties", "required", "minLength", "maxLength",
                      "minimum", "maximum", "items", "minItems", "maxItems", "enum"})
_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def surely_valid(schema: Mapping[str, Any], value: Any) -> bool:
    """Whether ``value`` certainly satisfies ``schema``, checked without jsonschema.

    ``True`` only when every keyword of ``schema`` (and of the subschemas it reaches) is one this
    check knows (a small subset of draft 2020-12: the tool schemas' ``type``, ``properties``,
    ``additionalProperties: false``, ``required``, string lengths, integer bounds, ``items``,
    array lengths, an ``enum`` of strings) and holds. ``False`` means "not sure": the caller asks
    jsonschema, which names the error. Importing jsonschema costs about a second (its format
    checkers compile grammars), so a well-formed call, the common case, never pays for it.

    Example:
        >>> schema = {"type": "object", "additionalProperties": False, "required": ["q"],
        ...           "properties": {"q": {"type": "string", "minLength": 1}}}
        >>> surely_valid(schema, {"q": "EUR cutoff"}), surely_valid(schema, {"q": ""})
        (True, False)
    """
    for key, rule in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key not in _CHECKED or not _holds(schema, key, rule, value):
            return False
    return True


def _holds(schema: Mapping[str, Any], key: str, rule: Any, value: Any) -> bool:
    """Whether one keyword of ``schema`` holds for ``value`` (``False`` also when unsure)."""
    if key == "type":
        check = _TYPES.get(rule) if isinstance(rule, str) else None
        return check is not None and bool(check(value))
    if key in ("minLength", "maxLength"):
        if not isinstance(value, str):
            return False
        return len(value) >= rule if key == "minLength" else len(value) <= rule
    if key in ("minimum", "maximum"):
        if not isinstance(value, int) or isinstance(value, bool) or not isinstance(rule, int):
            return False
        return value >= rule if key == "minimum" else value <= rule
    if key in ("minItems", "maxItems"):
        if not isinstance(value, list):
            return False
        return len(value) >= rule if key == "minItems" else len(value) <= rule
    if key == "enum":
        return isinstance(value, str) and all(isinstance(x, str) for x in rule) and value in rule
    if key == "items":
        return isinstance(value, list) and isinstance(rule, Mapping) and all(
            surely_valid(rule, v) for v in value)
    if not isinstance(value, dict):
        return False
    if key == "required":
        return all(name in value for name in rule)
    if key == "additionalProperties":
        return rule is True or (rule is False and set(value) <= set(schema.get("properties", {})))
    # properties: each one given satisfies its own schema
    return isinstance(rule, Mapping) and all(
        isinstance(rule[name], Mapping) and surely_valid(rule[name], v)
        for name, v in value.items() if name in rule)


def schema_error(spec: ToolSpec, err: Any, max_k: int) -> ToolArgumentError:
    """The first JSON Schema error ``err`` (a ``jsonschema`` ValidationError) as a fixable error."""
    props = spec.parameters["properties"]
    field = str(err.path[0]) if err.path else None
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(props))
        return ToolArgumentError("unknown_argument", f"unknown argument(s) {extra} for {spec.name}; "
                                 f"valid arguments are {list(props)}", field=extra[0] if extra else None,
                                 valid=list(props), example=spec.example_call())
    if err.validator == "required":
        missing = [r for r in spec.parameters["required"] if r not in err.instance]
        return ToolArgumentError("missing_argument", f"{spec.name} needs argument(s) {missing}",
                                 field=missing[0] if missing else None, valid=list(props),
                                 example=spec.example_call())
    schema = props.get(field, {}) if field else {}
    if field == "query" and err.validator == "minLength":
        return empty_query_error(spec)
    if err.validator == "minimum":
        return ToolArgumentError("bad_value", f"{field}={err.instance!r} is too small; {field} must be "
                                 f">= {err.validator_value}", field=field,
                                 valid=f"an integer from {err.validator_value} to {max_k}",
                                 example=spec.example_call())
    wanted = schema.get("type", "")
    detail = err.message
    return ToolArgumentError("bad_value", f"argument {field!r} is wrong: {detail}"
                             + (f" (expected {wanted})" if wanted else ""), field=field,
                             valid=schema.get("description"), example=spec.example_call())


def empty_query_error(spec: ToolSpec) -> ToolArgumentError:
    """The error for an empty or blank search query."""
    return ToolArgumentError("empty_query", "query is empty; say what to look for, in words or "
                             "identifiers (a ticket id, an error code)", field="query",
                             valid="a non-empty string", example=spec.example_call())


def date_arg(value: str | None, field: str, spec: ToolSpec) -> dt.datetime | None:
    """The date argument ``field`` parsed (``None`` stays ``None``); ``bad_date`` when it is not ISO."""
    try:
        return parse_time(value, field_name=field)
    except ValidationError:
        raise ToolArgumentError("bad_date", f"{field}={value!r} is not an ISO date", field=field,
                                valid="an ISO date like 2026-01-19 or a date-time like 2026-01-19T09:30:00Z",
                                example=spec.example_call()) from None


def combine_filters(base: Filters, asked: Filters) -> Filters:
    """``asked`` within the toolbox's standing ``base`` filters (both must hold).

    Example:
        >>> both = combine_filters(Filters(doc_types=("policy", "runbook")), Filters(doc_types=("runbook",)))
        >>> both.doc_types
        ('runbook',)
    """
    def both(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
        if a and b:
            return tuple(x for x in b if x in a) or ("\0none",)  # disjoint: nothing can match
        return a or b

    def later(a: dt.datetime | None, b: dt.datetime | None) -> dt.datetime | None:
        return max(a, b) if a and b else a or b

    def earlier(a: dt.datetime | None, b: dt.datetime | None) -> dt.datetime | None:
        return min(a, b) if a and b else a or b

    return Filters(doc_types=both(base.doc_types, asked.doc_types), tenants=both(base.tenants, asked.tenants),
                   published_after=later(base.published_after, asked.published_after),
                   published_before=earlier(base.published_before, asked.published_before),
                   valid_at=asked.valid_at or base.valid_at,
                   drop_unknown_validity=base.drop_unknown_validity or asked.drop_unknown_validity)


def without_filter(filters: Filters, name: str) -> Filters:
    """``filters`` without the filter named as in the tool arguments (for the empty-result advice)."""
    if name == "doc_type":
        return replace(filters, doc_types=())
    if name == "tenant":
        return replace(filters, tenants=())
    return replace(filters, **{name: None})  # type: ignore[arg-type]
