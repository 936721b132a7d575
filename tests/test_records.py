from __future__ import annotations

import datetime as dt

import pytest

from ragkit import Chunk, Envelope, ValidationError
from ragkit.core import parse_time, slugify

UTC = dt.timezone.utc


def test_parse_time_forms():
    assert parse_time("2026-01-15") == dt.datetime(2026, 1, 15, tzinfo=UTC)
    assert parse_time("2026-01-15T09:30:00Z") == dt.datetime(2026, 1, 15, 9, 30, tzinfo=UTC)
    assert parse_time("2026-01-15T10:30:00+01:00") == dt.datetime(2026, 1, 15, 9, 30, tzinfo=UTC)
    assert parse_time(dt.date(2026, 1, 15)) == dt.datetime(2026, 1, 15, tzinfo=UTC)
    assert parse_time(None) is None and parse_time("") is None


def test_parse_time_bad_value_names_field():
    with pytest.raises(ValidationError, match="effective_from.*2026-13-01") as info:
        parse_time("2026-13-01", field_name="effective_from", where="a.md:3")
    assert info.value.field == "effective_from"
    assert str(info.value).startswith("a.md:3: ")


def test_envelope_from_mapping_parses_lists_and_dates():
    env = Envelope.from_mapping({
        "doc_id": "ops-1423-c3", "tenant": "acme", "acl_groups": "ops",
        "links": ["ops-1423", "acme-rollout"], "effective_from": "2026-01-03",
        "extra": {"author": "Okafor"},
    })
    assert env.acl_groups == ("ops",)
    assert env.links == ("ops-1423", "acme-rollout")
    assert env.effective_from == dt.datetime(2026, 1, 3, tzinfo=UTC)
    assert env.extra["author"] == "Okafor"
    assert Envelope.from_mapping(env.to_mapping()) == env


@pytest.mark.parametrize(
    ("data", "field", "pattern"),
    [
        ({"doc_id": "x", "owner": "me"}, "owner", "unknown envelope field.*owner.*extra"),
        ({"title": "no id"}, "doc_id", "missing required field 'doc_id'"),
        ({"doc_id": "has space"}, "doc_id", "not a valid id"),
        ({"doc_id": "x", "published_at": "yesterday"}, "published_at", "not an ISO date"),
        ({"doc_id": "x", "effective_from": "2026-02-01", "effective_to": "2026-01-01"},
         "effective_to", "before effective_from"),
        ({"doc_id": "x", "links": [{"a": 1}]}, "links", "list of strings"),
        ({"doc_id": "x", "supersedes": ["x"]}, "supersedes", "itself"),
        ({"doc_id": "x", "tenant": ""}, "tenant", "non-empty"),
    ],
)
def test_envelope_validation_errors(data, field, pattern):
    with pytest.raises(ValidationError, match=pattern) as info:
        Envelope.from_mapping(data, where="f.md")
    assert info.value.field == field
    assert "f.md" in str(info.value)


def test_valid_at_is_three_valued():
    env = Envelope.from_mapping({"doc_id": "p", "effective_from": "2026-01-01", "effective_to": "2026-02-01"})
    assert env.valid_at(dt.datetime(2026, 1, 19, tzinfo=UTC)) is True
    assert env.valid_at(dt.datetime(2025, 12, 31, tzinfo=UTC)) is False
    assert env.valid_at(dt.datetime(2026, 2, 1, tzinfo=UTC)) is False  # effective_to is exclusive
    assert Envelope("q").valid_at(dt.datetime(2026, 1, 1, tzinfo=UTC)) is None


def test_chunk_span_must_match_text():
    Chunk("d#a~0", "d", "1", 3, 6, "abc")
    with pytest.raises(ValidationError, match="span length"):
        Chunk("d#a~0", "d", "1", 3, 7, "abc")
    with pytest.raises(ValidationError, match="start <= end"):
        Chunk("d#a~0", "d", "1", 5, 3, "")


def test_chunk_citation_and_context():
    c = Chunk("rb#eur-cutoff~0", "rb", "2", 0, 3, "abc", title="Runbook", section_path=("Cutoffs", "EUR"),
              anchor="eur-cutoff", preamble="From runbook.")
    assert c.citation == "rb#eur-cutoff"
    assert c.contextual_text() == "Runbook > Cutoffs > EUR\nFrom runbook.\nabc"


def test_slugify():
    assert slugify("EUR cut-off (Mondays)") == "eur-cut-off-mondays"
    assert slugify("!!!") == "section"
