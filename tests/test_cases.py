"""The evidence-case loader and schema (ragkit.evaluation.cases) on tiny fixtures.

Three ways: a good file loads; each kind of broken line is refused with an error
naming the file, the line and the field; normalisation and scope helpers behave.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import pytest

from ragkit import Envelope, EvidenceCase, Scope, ValidationError, load_cases
from ragkit.evaluation import CASE_SCHEMA, Expected, parse_case, schema_errors
from ragkit.text import normalise_value

ROOT = Path(__file__).resolve().parents[1]

GOOD = {
    "id": "eur-1",
    "task": "Which EUR cutoff applies to Acme on 19 January 2026?",
    "caller": {"tenant": "acme", "groups": ["ops"]},
    "as_of": "2026-01-19",
    "answerable": True,
    "evidence": [
        {
            "doc_id": "policy-v3",
            "anchor": "cutoffs-for-migrated-tenants",
            "quote": "Migrated tenants use 15:00 for the EUR cutoff.",
            "role": "decisive",
        },
        {
            "doc_id": "ro-7719",
            "anchor": "result",
            "quote": "Cutover completed for acme",
            "role": "qualifier",
        },
    ],
    "reject": [{"doc_id": "ops-2987-c3", "reason": "condition_met", "resolved_by": "ro-7719"}],
    "expected": {"kind": "time", "value": "15:00", "surface": "15:00"},
    "tags": ["conflict"],
    "decoys": ["conditional_exception"],
}
UNANSWERABLE = {
    "id": "chf-1",
    "task": "What is Hooli's CHF cutoff?",
    "caller": {"tenant": "hooli", "groups": ["ops"]},
    "as_of": "2026-03-01",
    "answerable": False,
    "evidence": [],
    "reject": [{"doc_id": "runbook-v2", "reason": "neighbouring_fact"}],
    "expected": None,
    "absent": {"all_of": [r"\bCHF\b"], "note": "no CHF cutoff"},
    "tags": ["scoped"],
    "decoys": [],
}


def _write(tmp_path: Path, rows: list) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_good_file_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, [GOOD, "", UNANSWERABLE])
    a, b = load_cases(path)
    assert isinstance(a, EvidenceCase) and a.line == 1 and b.line == 3
    assert a.caller == Scope("acme", ("ops",))
    assert a.as_of == dt.datetime(2026, 1, 19, tzinfo=dt.timezone.utc)
    assert (
        a.decisive is not None and a.decisive.citation == "policy-v3#cutoffs-for-migrated-tenants"
    )
    assert a.required_doc_ids == ("policy-v3", "ro-7719")
    assert a.reject[0].resolved_by == "ro-7719"
    assert b.expected is None and b.decisive is None
    assert (
        b.absent is not None
        and b.absent.found_in("CHF cutoff 11:00")
        and not b.absent.found_in("none")
    )


def _broken(change) -> dict:
    data = copy.deepcopy(GOOD)
    change(data)
    return data


BROKEN = [
    ("missing field", lambda d: d.pop("as_of"), "as_of"),
    ("unknown field", lambda d: d.update(colour="red"), "colour"),
    ("wrong type", lambda d: d.update(answerable="yes"), "answerable"),
    ("unknown reason", lambda d: d["reject"][0].update(reason="looks_wrong"), "reject[0].reason"),
    ("unknown tag", lambda d: d["tags"].append("easy"), "tags[1]"),
    ("bad caller", lambda d: d["caller"].pop("groups"), "caller.groups"),
    ("bad date", lambda d: d.update(as_of="19/01/2026"), "as_of"),
    ("evidence without anchor", lambda d: d["evidence"][0].pop("anchor"), "evidence[0].anchor"),
    ("no decisive item", lambda d: d["evidence"][0].update(role="hop"), "evidence"),
    ("value not normalised", lambda d: d["expected"].update(value="3 pm"), "expected.value"),
    ("value of the wrong kind", lambda d: d["expected"].update(kind="date"), "expected.value"),
    ("answerable without expected", lambda d: d.update(expected=None), "expected"),
    (
        "lexical decoy without shared",
        lambda d: d["reject"].append({"doc_id": "x", "reason": "lexical_decoy"}),
        "reject[1].shared",
    ),
    (
        "condition_met without resolved_by",
        lambda d: d["reject"][0].pop("resolved_by"),
        "reject[0].resolved_by",
    ),
    ("answerable with absent", lambda d: d.update(absent={"all_of": ["x"], "note": "n"}), "absent"),
]


@pytest.mark.parametrize("name,change,field", BROKEN, ids=[b[0] for b in BROKEN])
def test_each_broken_line_names_file_line_and_field(tmp_path: Path, name, change, field) -> None:
    path = _write(tmp_path, [GOOD | {"id": "ok-1"}, _broken(change)])
    with pytest.raises(ValidationError) as info:
        load_cases(path)
    err = info.value
    assert err.where == f"{path}:2", name
    assert err.field == field, (name, err.field, str(err))
    assert str(path) in str(err) and ":2:" in str(err) and field in str(err)


def test_unanswerable_rules(tmp_path: Path) -> None:
    bad = [
        (UNANSWERABLE | {"absent": None}, "absent"),
        ({k: v for k, v in UNANSWERABLE.items() if k != "absent"}, "absent"),
        (UNANSWERABLE | {"evidence": GOOD["evidence"][:1]}, "evidence"),
        (UNANSWERABLE | {"expected": GOOD["expected"]}, "expected"),
        (UNANSWERABLE | {"absent": {"all_of": ["(unclosed"], "note": "n"}}, "absent.all_of[0]"),
    ]
    for data, field in bad:
        with pytest.raises(ValidationError) as info:
            load_cases(_write(tmp_path, [data]))
        assert info.value.field == field, (field, str(info.value))
        assert info.value.where.endswith(":1")


def test_invalid_json_and_duplicate_ids(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        load_cases(_write(tmp_path, [GOOD, "{not json"]))
    assert info.value.where.endswith(":2") and "not valid JSON" in str(info.value)
    with pytest.raises(ValidationError) as info:
        load_cases(_write(tmp_path, [GOOD, GOOD]))
    assert info.value.field == "id" and "first on line 1" in str(info.value)


def test_schema_file_matches_the_package_schema() -> None:
    on_disk = json.loads((ROOT / "datasets" / "cases.schema.json").read_text())
    assert on_disk == CASE_SCHEMA


def test_builtin_validator_agrees_with_jsonschema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(CASE_SCHEMA)
    samples = [GOOD, UNANSWERABLE] + [_broken(change) for _, change, _ in BROKEN[:8]]
    for data in samples:
        assert (not schema_errors(data)) == validator.is_valid(data), data


@pytest.mark.parametrize(
    "kind,text,value",
    [
        ("time", "EUR cutoff 16:00 CET", "16:00"),
        ("time", "3 pm", "15:00"),
        ("time", "9.30", "09:30"),
        ("amount", "EUR 25,000", "EUR 25000"),
        ("amount", "threshold GBP 48,210.50 today", "GBP 48210.5"),
        ("date", "2026-01-15 06:51 UTC", "2026-01-15"),
        ("date", "on 15 January 2026", "2026-01-15"),
        ("date", "Jan 15, 2026", "2026-01-15"),
        ("id", " `reconcile_settlement`. ", "reconcile_settlement"),
        ("status", "Waiting on bank.", "waiting on bank"),
        ("text", "Ran  twice\nafter the failover.", "ran twice after the failover"),
    ],
)
def test_normalise_value(kind: str, text: str, value: str) -> None:
    assert normalise_value(kind, text) == value


def test_normalise_value_refuses_what_it_cannot_read() -> None:
    for kind, text in [
        ("time", "soon"),
        ("amount", "a lot"),
        ("date", "next week"),
        ("colour", "x"),
    ]:
        with pytest.raises(ValidationError):
            normalise_value(kind, text)


def test_expected_matches_answers() -> None:
    assert Expected("time", "15:00").matches("The cutoff is 3 pm CET")
    assert not Expected("time", "15:00").matches("16:00")
    assert not Expected("time", "15:00").matches("no idea")
    assert Expected("text", "ran twice").matches("The batch RAN TWICE after failover")


def test_scope_helpers() -> None:
    case = parse_case(GOOD)

    def env(**kw) -> Envelope:
        return Envelope.from_mapping(kw)

    open_doc = env(doc_id="a", tenant="acme", published_at="2026-01-02")
    global_doc = env(doc_id="b", tenant="global", published_at="2026-01-02")
    other = env(doc_id="c", tenant="globex", published_at="2026-01-02")
    restricted = env(doc_id="d", tenant="acme", acl_groups=["risk"])
    later = env(doc_id="e", tenant="acme", published_at="2026-02-01")
    assert case.in_scope(open_doc) and case.in_scope(global_doc)
    assert not case.in_scope(other) and not case.in_scope(restricted) and not case.in_scope(later)
    assert Scope("acme", ("risk",)).allows(restricted)


def test_the_course_cases_load() -> None:
    cases = load_cases(ROOT / "datasets" / "opscorpus" / "cases.jsonl")
    assert len({c.id for c in cases}) == len(cases) >= 230
