"""Tests for ragkit.core.ids: the one parser of ``doc_id#anchor~n``."""

from __future__ import annotations

import pytest

from ragkit.core import ChunkId, doc_of, parse_id, section_id, section_key


@pytest.mark.parametrize(("ident", "expected"), [
    ("runbook-v2#eur-cutoff~1", ChunkId("runbook-v2", "eur-cutoff", 1)),
    ("runbook-v2#eur-cutoff~12", ChunkId("runbook-v2", "eur-cutoff", 12)),
    ("runbook-v2#eur-cutoff", ChunkId("runbook-v2", "eur-cutoff", None)),
    ("ro-7719", ChunkId("ro-7719", "", None)),
    ("notes#s~0", ChunkId("notes", "s", 0)),
    # a '~' that is not followed by a number stays part of the anchor
    ("notes#approx~value", ChunkId("notes", "approx~value", None)),
    ("notes#a~b~3", ChunkId("notes", "a~b", 3)),
    ("notes#tilde~", ChunkId("notes", "tilde~", None)),
    ("notes#minus~-1", ChunkId("notes", "minus~-1", None)),
    # a '~' in a whole-document id is not a chunk number: there is no '#'
    ("doc~3", ChunkId("doc~3", "", None)),
    ("a/b.md#def-f~2", ChunkId("a/b.md", "def-f", 2)),
])
def test_parse_id(ident, expected):
    assert parse_id(ident) == expected


def test_section_key_and_section_id_drop_only_a_numeric_part():
    assert section_key("policy-v3#cutoffs~4") == ("policy-v3", "cutoffs")
    assert section_key("policy-v3#cutoffs") == ("policy-v3", "cutoffs")
    assert section_key("policy-v3") == ("policy-v3", "")
    assert section_id("runbook-v2#eur-cutoff~1") == "runbook-v2#eur-cutoff"
    assert section_id("notes#approx~value") == "notes#approx~value"
    assert section_id("ro-7719") == "ro-7719"


def test_doc_of_is_everything_before_the_first_hash():
    assert doc_of("runbook-v2#eur-cutoff~1") == "runbook-v2"
    assert doc_of("runbook-v2#a#b") == "runbook-v2"
    assert doc_of("ro-7719") == "ro-7719"
    assert parse_id("runbook-v2#a#b") == ChunkId("runbook-v2", "a#b", None)
