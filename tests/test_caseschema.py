"""The case file's schema checker: each problem named by its field path."""

from __future__ import annotations

from ragkit.evaluation import CASE_SCHEMA, DECOY_KINDS, EVIDENCE_ROLES, TAGS, schema_errors


def test_schema_names_the_vocabulary():
    props = CASE_SCHEMA["properties"]
    assert props["tags"]["items"]["enum"] == list(TAGS)
    assert props["decoys"]["items"]["enum"] == list(DECOY_KINDS)
    assert props["evidence"]["items"]["properties"]["role"]["enum"] == list(EVIDENCE_ROLES)


def test_errors_carry_the_path_of_the_field():
    schema = {"type": "object", "required": ["a"], "additionalProperties": False,
              "properties": {"a": {"type": "array", "minItems": 1,
                                   "items": {"type": "string", "minLength": 3, "pattern": "^x"}},
                             "b": {"enum": ["on", "off"]}}}
    assert schema_errors({"a": ["xyz"]}, schema) == []
    assert schema_errors({}, schema) == [("a", "missing required field 'a'")]
    assert schema_errors({"a": []}, schema) == [("a", "needs at least 1 item(s)")]
    assert schema_errors({"a": ["xy", "abc"]}, schema) == [
        ("a[0]", "must have at least 3 characters"), ("a[1]", "'abc' does not match ^x")]
    assert schema_errors({"a": ["xyz"], "b": "up"}, schema) == [("b", "'up' is not one of ['on', 'off']")]
    unknown = "unknown field 'c'; known fields are ['a', 'b']"
    assert schema_errors({"a": ["xyz"], "c": 1}, schema) == [("c", unknown)]
    assert schema_errors([], schema) == [("(case)", "expected object, got list []")]
