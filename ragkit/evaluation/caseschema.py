"""The case file's schema: what one line of ``cases.jsonl`` may hold, and a checker for it.

:data:`CASE_SCHEMA` is JSON Schema (draft 2020-12; also written to
``datasets/cases.schema.json``) over the case vocabulary (:data:`TAGS`, :data:`DECOY_KINDS`,
:data:`EVIDENCE_ROLES`, the reject reasons and value kinds of the layers below).
:func:`schema_errors` checks a value against the subset of JSON Schema it uses, with no
third-party package; :func:`ragkit.evaluation.cases.parse_case` builds a case from a valid line.

Example:
    >>> schema_errors({"id": "x"})[0]
    ('task', "missing required field 'task'")
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ragkit.evidence.decision import REJECT_REASONS
from ragkit.text.normalise import VALUE_KINDS

__all__ = ["DECOY_KINDS", "DECOY_OF_REASON", "TAGS", "EVIDENCE_ROLES", "CASE_SCHEMA", "schema_errors"]

#: The negative kinds a case may contain (CURRICULUM section 12).
DECOY_KINDS = ("lexical_decoy", "semantic_decoy", "superseded_source", "conditional_exception")

#: The decoy kind a case contains when it rejects a source for this reason (a case's ``decoys``
#: must name every kind its rejections imply).
DECOY_OF_REASON = {
    "lexical_decoy": "lexical_decoy",
    "semantic_decoy": "semantic_decoy",
    "other_tenant": "semantic_decoy",
    "superseded": "superseded_source",
    "not_yet_effective": "superseded_source",
    "expired": "superseded_source",
    "condition_met": "conditional_exception",
    "exception_applies": "conditional_exception",
}

#: Category tags (``long_document``: the evidence is a deep section, a clause reached through
#: another clause, or two sections of a 2k-15k-token document; issue 24).
TAGS = (
    "identifier",
    "vocabulary_mismatch",
    "multi_hop",
    "conflict",
    "scoped",
    "temporal",
    "injection",
    "story",
    "long_document",
)

#: Roles in the minimum evidence set: exactly one ``decisive`` item states the answer;
#: ``hop`` items lead to it; ``qualifier`` items make it apply (a cutover record);
#: ``support`` items corroborate.
EVIDENCE_ROLES = ("decisive", "hop", "qualifier", "support")

_REF = {
    "type": "object",
    "required": ["doc_id", "anchor", "quote"],
    "additionalProperties": False,
    "properties": {
        "doc_id": {"type": "string", "minLength": 1},
        "anchor": {"type": "string", "minLength": 1},
        "quote": {"type": "string", "minLength": 3},
        "role": {"enum": list(EVIDENCE_ROLES)},
    },
}

#: JSON Schema (draft 2020-12) of one line of ``cases.jsonl``.
CASE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://ragkit.invalid/cases.schema.json",
    "title": "ragkit evidence case",
    "type": "object",
    "required": [
        "id",
        "task",
        "caller",
        "as_of",
        "answerable",
        "evidence",
        "reject",
        "expected",
        "tags",
        "decoys",
    ],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"},
        "task": {"type": "string", "minLength": 10},
        "caller": {
            "type": "object",
            "required": ["tenant", "groups"],
            "additionalProperties": False,
            "properties": {
                "tenant": {"type": "string", "minLength": 1},
                "groups": {"type": "array", "items": {"type": "string", "minLength": 1}},
            },
        },
        "as_of": {
            "type": "string",
            "pattern": r"^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:\d{2})?)?$",
        },
        "answerable": {"type": "boolean"},
        "evidence": {"type": "array", "items": _REF},
        "reject": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["doc_id", "reason"],
                "additionalProperties": False,
                "properties": {
                    "doc_id": {"type": "string", "minLength": 1},
                    "anchor": {"type": "string", "minLength": 1},
                    "quote": {"type": "string", "minLength": 3},
                    "reason": {"enum": sorted(REJECT_REASONS)},
                    "shared": {"type": "string", "minLength": 1},
                    "resolved_by": {"type": "string", "minLength": 1},
                    "note": {"type": "string"},
                },
            },
        },
        "expected": {
            "type": ["object", "null"],
            "required": ["kind", "value"],
            "additionalProperties": False,
            "properties": {
                "kind": {"enum": list(VALUE_KINDS)},
                "value": {"type": "string", "minLength": 1},
                "surface": {"type": "string", "minLength": 1},
            },
        },
        "absent": {
            "type": "object",
            "required": ["all_of", "note"],
            "additionalProperties": False,
            "properties": {
                "all_of": {
                    "type": "array",
                    "minItems": 1,
                    "items": {"type": "string", "minLength": 1},
                },
                "note": {"type": "string", "minLength": 1},
            },
        },
        "tags": {"type": "array", "items": {"enum": list(TAGS)}},
        "decoys": {"type": "array", "items": {"enum": list(DECOY_KINDS)}},
        "family": {"type": "string"},
    },
}


def _type_ok(value: Any, name: str) -> bool:
    return {
        "object": isinstance(value, Mapping),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "null": value is None,
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
    }[name]


def schema_errors(
    value: Any, schema: Mapping[str, Any] = CASE_SCHEMA, path: str = ""
) -> list[tuple[str, str]]:
    """Check ``value`` against the subset of JSON Schema that :data:`CASE_SCHEMA` uses.

    Returns ``[(field_path, problem)]``; empty when valid. Needs no third-party package.

    Example:
        >>> schema_errors({"id": "x"})[0]
        ('task', "missing required field 'task'")
    """
    errors: list[tuple[str, str]] = []
    where = path or "(case)"
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, t) for t in types):
            return [
                (
                    where,
                    f"expected {' or '.join(types)}, got {type(value).__name__} {value!r}"[:200],
                )
            ]
    if "enum" in schema and value not in schema["enum"]:
        return [(where, f"{value!r} is not one of {schema['enum']}")]
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append((where, f"must have at least {schema['minLength']} characters"))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append((where, f"{value!r} does not match {schema['pattern']}"))
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append((where, f"needs at least {schema['minItems']} item(s)"))
        for i, item in enumerate(value):
            errors += schema_errors(item, schema.get("items", {}), f"{path}[{i}]")
    if isinstance(value, Mapping):
        for key in schema.get("required", []):
            if key not in value:
                errors.append((f"{path}.{key}" if path else key, f"missing required field '{key}'"))
        props = schema.get("properties", {})
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            if key in props:
                errors += schema_errors(item, props[key], sub)
            elif schema.get("additionalProperties", True) is False:
                errors.append((sub, f"unknown field '{key}'; known fields are {sorted(props)}"))
    return errors
