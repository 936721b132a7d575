"""The corpus profile: loading (and its errors), round trips, derivation, the bundled file, the CLI."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragkit.agent.offline import judging, moves, passages, reading
from ragkit.app.cli import app
from ragkit.core import Document, Envelope, ValidationError
from ragkit.core.records import AUTHORITY_RANK, SOURCE_TYPES
from ragkit.documents import load_corpus
from ragkit.text import (
    BUNDLED_PROFILE_PATH,
    PROFILE_FIELDS,
    CorpusProfile,
    asked,
    bundled_profile,
    derive_profile,
    load_profile,
    load_profile_text,
    relevance,
    taskparse,
    untrusted,
    using_profile,
    value_patterns,
    values,
    words,
)

FIXTURES = Path(__file__).parent / "fixtures" / "corpus"


# --------------------------------------------------------------------------------------
# loading


def test_bundled_profile_loads_and_every_field_is_set() -> None:
    p = load_profile(BUNDLED_PROFILE_PATH)
    assert p == bundled_profile()
    assert list(PROFILE_FIELDS) == [f.name for f in dataclasses.fields(CorpusProfile)]
    assert set(json.loads(BUNDLED_PROFILE_PATH.read_text())) == set(PROFILE_FIELDS)
    assert all(getattr(p, f) for f in PROFILE_FIELDS), "the bundled profile leaves a field empty"


def test_a_partial_file_keeps_the_defaults(tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"name": "mine", "statuses": ["open", "in progress"],
                             "authority_ranks": {"a": 2}}))
    p = load_profile(f)
    assert p.name == "mine" and p.statuses == ("open", "in progress") and p.authority_ranks == {"a": 2}
    assert p.frame_words == CorpusProfile().frame_words == ()


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("name", 3, "must be a string"),
        ("source_types", "ticket", "must be a list of strings"),
        ("frame_words", ["ok", 2], "must be a list of strings"),
        ("statuses", ["open", "(unclosed"], "not a valid regex"),
        ("authority_ranks", {"policy_owner": "high"}, "not an integer"),
        ("authority_ranks", ["policy_owner"], "must be an object"),
        ("source_roles", {"thread": "ticket"}, "must be a list of strings"),
        ("task_id_patterns", [["key"]], "not a pair"),
        ("id_shape_patterns", [[1, "x"]], "not a string"),
        ("id_value_pattern", "[a-z", "not a valid regex"),
        ("cause_cues", ["because"], "must be a string"),
        ("ask_rules", [["\\bwho\\b", "person"]], "must be a list of strings"),
        ("synonyms", ["finis", "compl"], "must be a list of strings"),
        ("contradiction_rounds", 5, "must be a list"),
        ("instruction_sources", ["runbook", "(unclosed"], "not a valid regex"),
    ],
)
def test_each_bad_field_names_the_field_and_the_fix(
    tmp_path: Path, field: str, value: object, says: str
) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({field: value}))
    with pytest.raises(ValidationError) as err:
        load_profile(f)
    message = str(err.value)
    assert err.value.field == field and f"'{field}'" in message and says in message, message
    assert "write it as" in message and str(f) in message


def test_unknown_field_and_broken_json_are_clear() -> None:
    with pytest.raises(ValidationError, match="unknown profile field 'frame_word'.*frame_words"):
        load_profile_text('{"frame_word": []}')
    with pytest.raises(ValidationError, match="not valid JSON"):
        load_profile_text('{"name": ')
    with pytest.raises(ValidationError, match="must be a JSON object"):
        load_profile_text("[1, 2]")


@pytest.mark.parametrize(
    "data, old, new",
    [
        ({"policy_target": "\\bpolicy\\b"}, "policy_target", "rule_target_cues"),
        ({"rollout_target": "\\bbuild\\b"}, "rollout_target", "change_target_cues"),
        ({"source_roles": {"ticket": ["ticket"]}}, "ticket", "listed_by_links"),
        ({"source_roles": {"policy": ["policy"]}}, "policy", "chain_rule_target"),
        ({"source_roles": {"rollout": ["rollout"]}}, "rollout", "chain_change_target"),
    ],
)
def test_an_old_name_says_its_new_name(tmp_path: Path, data: dict[str, object], old: str, new: str) -> None:
    f = tmp_path / "old.json"
    f.write_text(json.dumps(data))
    with pytest.raises(ValidationError) as err:
        load_profile(f)
    message = str(err.value)
    assert f"'{old}'" in message and f"'{new}'" in message and str(f) in message, message
    assert err.value.field == next(iter(data))


def test_a_profile_the_kit_wrote_before_the_renames_reads_back_upgraded() -> None:
    data = bundled_profile().to_dict()
    data["policy_target"] = data.pop("rule_target_cues")
    data["rollout_target"] = data.pop("change_target_cues")
    data.pop("instruction_sources")
    roles = data["source_roles"]
    data["source_roles"] = {{"listed_by_links": "ticket", "chain_rule_target": "policy",
                             "chain_change_target": "rollout"}.get(r, r): v for r, v in roles.items()}
    older = json.dumps(data)
    with pytest.raises(ValidationError, match="'policy_target' is now called 'rule_target_cues'"):
        load_profile_text(older)
    assert load_profile_text(older, upgrade=True) == bundled_profile()
    assert load_profile_text(bundled_profile().to_json(), upgrade=True) == bundled_profile()


def test_an_unknown_role_names_the_roles() -> None:
    with pytest.raises(ValidationError, match="unknown role 'threads'.*thread_replies") as err:
        load_profile_text('{"source_roles": {"threads": ["forum"]}}')
    assert err.value.field == "source_roles"


# --------------------------------------------------------------------------------------
# round trips


def test_round_trip_through_json_and_a_file(tmp_path: Path) -> None:
    p = bundled_profile()
    assert load_profile_text(p.to_json()) == p
    f = tmp_path / "p.json"
    f.write_text(p.to_json())
    assert load_profile(f) == p
    # the bundled file is written in the canonical form to_json gives
    assert BUNDLED_PROFILE_PATH.read_text(encoding="utf-8") == p.to_json()
    derived = derive_profile(load_corpus(FIXTURES)[0], name="fixtures")
    assert load_profile_text(derived.to_json()) == derived


def test_replace_checks_the_new_value() -> None:
    p = bundled_profile().replace(statuses=["open"])
    assert p.statuses == ("open",) and p.frame_words == bundled_profile().frame_words
    with pytest.raises(ValidationError, match="'statuses'"):
        bundled_profile().replace(statuses="open")


# --------------------------------------------------------------------------------------
# the bundled profile is today's lists


def _pairs(patterns: tuple[tuple[str, re.Pattern[str]], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((name, p.pattern) for name, p in patterns)


def test_bundled_profile_equals_the_lists_the_modules_use() -> None:
    p = bundled_profile()
    # not wired (the core layer sits below the text layer): the profile must agree with it
    assert p.source_types == SOURCE_TYPES
    assert dict(p.authority_ranks) == AUTHORITY_RANK
    # wired: the modules' lists are the profile's, compiled with the flags they always had
    assert words.SAME_MEANING == p.synonyms
    assert _pairs(words.TASK_ID_PATTERNS) == p.task_id_patterns
    assert _pairs(words.ID_SHAPE_PATTERNS) == p.id_shape_patterns
    assert words.ID_VALUE_PATTERN.pattern == p.id_value_pattern
    assert words.ID_SHAPES == ("code", "key", "hash", "function", "version", "slug", "other")
    assert value_patterns.CURRENCIES.split("|") == list(p.currencies)
    assert value_patterns.STATUS_WORDS.split("|") == list(p.statuses)
    assert set(p.not_people) <= value_patterns.NOT_PEOPLE
    assert relevance.NOT_CODES == set(p.not_codes)
    assert asked.asked_forms("Which commit fixed OPS-3318?") == ("id",)
    assert asked.asked_id_shape("Which rollout fixed OPS-8013?") == "key"
    assert judging.FRAME == frozenset(p.frame_words) and judging.GENERIC == frozenset(p.generic_words)
    assert moves.CONTRADICTION_TERMS == p.contradiction_terms
    assert reading.ROLES["thread"] == ("ticket", "ticket_comment", "postmortem")
    for compiled, source in [
        (relevance.CAUSE, p.cause_cues), (relevance.DETECTION, p.detection_cues),
        (relevance.COMPLETED, p.completion_cues), (relevance.CONDITION, p.condition_grammar),
        (relevance.CAUSAL_QUESTION, p.causal_question), (relevance.ROOT_CAUSE, p.root_cause_cues),
        (relevance.DEONTIC, p.deontic_cues), (relevance.DEONTIC_QUESTION, p.deontic_question),
        (passages.CAUSAL, p.stated_cause_cues), (reading.HOP_CUES, p.hop_cues),
        (reading.CAUSE_ASK, p.cause_ask),
    ]:
        assert compiled.pattern == source and compiled.flags & re.IGNORECASE
    # what the lists say, read through the modules (a changed list fails here)
    assert words.stem("deployed") == words.stem("released") == "rolli"
    assert words.id_shape("a41c9e2") == "hash" and words.id_shape("E-4471") == "code"
    assert [v.surface for v in values.read_values("Status: rolled back. Paid EUR 25,000.")] == [
        "rolled back", "EUR 25,000"]
    assert relevance.condition_event("until cutover") == "cutov"
    assert taskparse.parse_task("Which commit fixed OPS-3318?", tenant="acme").event
    assert reading.target_type("Follow OPS-1891 to the policy: which clause?") == "policy"
    assert reading.target_type("Which build shipped the fix for OPS-1891?") == "rollout"
    assert untrusted._INSTRUCTION.pattern.count(  # the profile's names of guidance sources, in place
        "|".join(("prompt", *p.instruction_sources, "sources?"))) == 1
    assert p.contradiction_rounds == (
        ("exception", "until", "cutover"), ("superseded", "revoked", "effective", "completed"))


# --------------------------------------------------------------------------------------
# derivation


def test_derive_on_the_fixture_corpus() -> None:
    docs, report = load_corpus(FIXTURES)
    assert report.ok and len(docs) == 8
    p = derive_profile(docs, name="fixtures")
    # source types and authorities from the envelopes (html/txt -> text, py -> code)
    assert set(p.source_types) == {"text", "ticket", "ticket_comment", "code", "policy", "runbook"}
    assert dict(p.authority_ranks) == {
        "policy_owner": 6, "implementation_team": 3, "operations": 3, "unknown": 0}
    # identifier shapes mined from the text and titles: E-4471 / E-2210, OPS-1423, reconcile_settlement,
    # acme-9 / acme-12; no commit hash or version number is written anywhere
    shapes = [s for s, _ in p.id_shape_patterns]
    assert shapes == ["code", "key", "function", "slug"]
    assert p.identifier_examples["code"] == ("E-4471", "E-2210")
    assert p.identifier_examples["key"] == ("OPS-1423",)
    assert "reconcile_settlement" in p.identifier_examples["function"]
    assert set(p.identifier_examples["slug"]) == {"acme-9", "acme-12"}
    kinds = [k for k, _ in p.task_id_patterns]
    assert kinds == ["key", "key", "function", "account", "code"]
    # no status field anywhere in these documents; settlement and batches frame most of them
    assert p.statuses == ()
    assert {"settlement", "batches"} <= set(p.frame_words) and "the" not in p.frame_words
    # roles only for source types the corpus has; cue lists from the base profile
    assert "chain_change_target" not in p.source_roles and p.source_roles["rule"] == ("policy", "runbook")
    assert p.source_roles["chain_rule_target"] == ("policy",)
    assert p.instruction_sources == bundled_profile().instruction_sources  # it has policies and runbooks
    with using_profile(p):  # no chain_change_target role: a change is no target
        assert reading.target_type("Which build shipped the fix for OPS-1423?") is None
        assert reading.target_type("Which policy does the fix for OPS-1423 cite?") == "policy"
    assert p.cause_cues == bundled_profile().cause_cues
    assert p.contradiction_terms == ("until", "completed", "cutover")


def test_derive_reads_status_fields_versions_hashes_and_currencies() -> None:
    docs = [
        Document(Envelope("a", source_type="incident", authority="sre"),
                 "Status: Mitigated\nDeployed 2.4.1 at commit 9f3e2a1b. Refund CHF 1,200 and CHF 40."),
        Document(Envelope("b", source_type="incident", authority="sre"),
                 "| id | status |\n|---|---|\n| INC-20 | waiting on vendor |\n| INC-21 | mitigated |\n"
                 "Build 2.4.2 is commit 77ab0c3d."),
        Document(Envelope("c", source_type="faq"), "Nothing here, Status: done."),
        Document(Envelope("d", source_type="faq"),
                 "| Field | Value |\n|---|---|\n| Status | rolled back |\n| Tenant | acme |"),
    ]
    p = derive_profile(docs, min_ids=2)
    # a key-value row counts, the rows after it are not statuses
    assert p.statuses == ("mitigated", "waiting on vendor", "done", "rolled back")
    assert p.source_types == ("incident", "faq")  # most frequent first
    assert p.authority_ranks == {"sre": 1, "unknown": 0}
    assert [s for s, _ in p.id_shape_patterns] == ["key", "hash", "version"]
    assert p.currencies == ("CHF",)
    compiled = re.compile(p.id_value_pattern)
    assert compiled.findall("see INC-22 and 1.0.0") == ["INC-22", "1.0.0"]


# --------------------------------------------------------------------------------------
# the command


def test_profile_command_prints_a_table_or_json(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "p.json"
    result = runner.invoke(app, ["profile", str(FIXTURES), "--json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed == json.loads(out.read_text()) and printed["name"] == str(FIXTURES)
    assert load_profile(out).identifier_examples["key"] == ("OPS-1423",)
    table = runner.invoke(app, ["profile", str(FIXTURES)])
    assert table.exit_code == 0 and "id_shape_patterns" in table.stdout and "[A-Z]-\\d{2,}" in table.stdout
    missing = runner.invoke(app, ["profile", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_the_bundled_profile_reads_reaching_production_as_a_deployment() -> None:
    # operators say a change "reached production" or "landed" as often as "was deployed"
    from ragkit.text.words import stem

    assert stem("reached") == stem("deployed") == stem("landed") == stem("rollout")
    assert stem("reach") != stem("resolved")
