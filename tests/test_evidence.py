"""ragkit.evidence.spans: the Evidence constructors, their citations and their document offsets."""

from __future__ import annotations

import pytest

from ragkit.core.errors import ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.evidence.spans import Evidence
from ragkit.search import Hit

DOC_TEXT = "# Runbook\n\nIntro.\n\n## EUR cutoff\n\nEUR cutoff 16:00 CET.\n"
# offsets: "## EUR cutoff" starts at 19, "16:00 CET." spans 45-55, the text ends at 56
DOC = Document(Envelope("rb", authority="operations"), DOC_TEXT)


def test_of_splits_the_citation_and_counts_offsets_from_start() -> None:
    e = Evidence.of("rb#eur", "EUR cutoff 16:00 CET.", {"doc_id": "rb", "authority": "operations"}, start=35)
    assert (e.citation, e.doc_id, e.anchor, e.start, e.end) == ("rb#eur", "rb", "eur", 35, 56)
    assert e.envelope.authority == "operations" and e.chunk_id == "" and e.query == ""
    whole = Evidence.of("rb", "text", Envelope("rb"))
    assert (whole.doc_id, whole.anchor, whole.start, whole.end) == ("rb", "", 0, 4)


def test_of_rejects_a_citation_of_another_document() -> None:
    with pytest.raises(ValidationError, match="does not name the envelope's doc_id 'rb'"):
        Evidence.of("policy#x", "text", {"doc_id": "rb"})


def test_from_tool_item_locates_the_span() -> None:
    item = {"doc_id": "rb", "citation": "rb#eur", "text": "EUR cutoff 16:00 CET.", "start": 35,
            "score": 0.3, "trust": "untrusted", "query": "eur cutoff"}
    e = Evidence.from_tool_item(item)
    # the anchor comes from the citation; the end from start + len(text); unknown keys are ignored
    assert (e.citation, e.anchor, e.start, e.end, e.query) == ("rb#eur", "eur", 35, 56, "eur cutoff")
    assert Evidence.from_tool_item(item, query="mine").query == "mine"


def test_from_tool_item_builds_the_citation_and_says_unknown_offsets() -> None:
    section = Evidence.from_tool_item({"doc_id": "rb", "anchor": "eur", "text": "x"})
    assert (section.citation, section.anchor, section.start, section.end) == ("rb#eur", "eur", -1, -1)
    document = Evidence.from_tool_item({"doc_id": "rb", "text": "whole", "start": 0, "end": 5})
    assert (document.citation, document.anchor, document.start, document.end) == ("rb", "", 0, 5)
    with pytest.raises(ValidationError, match="doc_id"):
        Evidence.from_tool_item({"text": "x"})


def _hit(section_id: str | None = None, section_text: str | None = None) -> Hit:
    return Hit(rank=1, row=0, chunk_id="rb#eur~1", doc_id="rb", citation="rb#eur", score=1.0,
               text="16:00 CET.", envelope=DOC.envelope, validity="unknown",
               section_id=section_id, section_text=section_text)


class _Index:
    """The two attributes Evidence.from_hit reads from an index."""

    rows = [Chunk("rb#eur~1", "rb", "1", 45, 55, "16:00 CET.", anchor="eur")]
    sections = {"rb#eur": Chunk("rb#eur", "rb", "1", 19, 56, DOC_TEXT[19:56], anchor="eur")}


def test_from_hit_takes_offsets_and_sections_from_the_index() -> None:
    e = Evidence.from_hit(_hit(), _Index(), query="q")
    assert (e.citation, e.anchor, e.text, e.start, e.end, e.chunk_id, e.query) == (
        "rb#eur", "eur", "16:00 CET.", 45, 55, "rb#eur~1", "q")
    section = Evidence.from_hit(_hit(section_id="rb#eur"), _Index(), section=True)
    assert (section.text, section.start, section.end) == (DOC_TEXT[19:56], 19, 56)


def test_from_hit_without_an_index_knows_no_offsets() -> None:
    e = Evidence.from_hit(_hit(section_text="## EUR cutoff\n\nEUR cutoff 16:00 CET."), section=True)
    assert (e.anchor, e.start, e.end, e.text) == ("eur", -1, -1, "## EUR cutoff\n\nEUR cutoff 16:00 CET.")
    assert Evidence.from_hit(_hit()).text == "16:00 CET."


def test_the_offsets_in_this_file() -> None:
    assert (DOC_TEXT.index("## EUR"), DOC_TEXT.index("16:00"), len(DOC_TEXT)) == (19, 45, 56)


def test_from_document_whole_and_one_section() -> None:
    whole = Evidence.from_document(DOC)
    assert (whole.citation, whole.anchor, whole.start, whole.end) == ("rb", "", 0, len(DOC_TEXT))
    sec = Evidence.from_document(DOC, "eur-cutoff", query="q")
    assert (sec.citation, sec.anchor, sec.query) == ("rb#eur-cutoff", "eur-cutoff", "q")
    assert (sec.start, sec.end) == (19, 56) and DOC_TEXT[sec.start : sec.end] == sec.text
    top = Evidence.from_document(DOC, "runbook")  # the first heading's section ends where the next begins
    assert (top.start, top.end, top.text) == (0, 19, "# Runbook\n\nIntro.\n\n")
    assert sec.text.startswith("## EUR cutoff") and "16:00" in sec.text
    with pytest.raises(ValidationError, match=r"has no section 'nope'; it has \['eur-cutoff', 'runbook'\]"):
        Evidence.from_document(DOC, "nope")
