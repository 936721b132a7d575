"""ragkit.evaluation.coverage: quote spans and evidence shares on a hand-built two-document index."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from ragkit import Chunk, Scope
from ragkit.evaluation import covers, delivered_coverage, evidence_chunks, evidence_share, quote_span

TEXT_A = "# Runbook\n\n## EUR cutoff\n\nEUR batches close at 16:00.\n\n## GBP cutoff\n\nGBP at 15:30.\n"
TEXT_B = "Policy: migrated tenants use 15:00 for the EUR cutoff."


def _chunk(doc: str, text: str, start: int, end: int, anchor: str) -> Chunk:
    return Chunk(chunk_id=f"{doc}#{anchor}~0", doc_id=doc, version="1", start=start, end=end,
                 text=text[start:end], title=doc, section_path=(anchor,), anchor=anchor,
                 parent_id=f"{doc}#{anchor}")


def _index() -> SimpleNamespace:
    eur = TEXT_A.index("## EUR")
    gbp = TEXT_A.index("## GBP")
    rows = [_chunk("a", TEXT_A, eur, gbp - 2, "eur-cutoff"),
            _chunk("a", TEXT_A, gbp, len(TEXT_A) - 1, "gbp-cutoff"),
            _chunk("b", TEXT_B, 0, 20, "top"), _chunk("b", TEXT_B, 8, len(TEXT_B), "top")]
    docs = {"a": SimpleNamespace(text=TEXT_A), "b": SimpleNamespace(text=TEXT_B)}
    return SimpleNamespace(rows=rows, documents=docs, sections={})


def _case() -> SimpleNamespace:
    ev = [SimpleNamespace(doc_id="b", quote="migrated tenants use 15:00", role="decisive"),
          SimpleNamespace(doc_id="a", quote="GBP at 15:30.", role="support")]
    return SimpleNamespace(id="c1", evidence=ev, decisive=ev[0])


def test_quote_span_and_covers():
    assert quote_span(TEXT_B, "tenants  use\n15:00") == (17, 34)  # whitespace-tolerant
    assert quote_span(TEXT_B, "16:00") is None and quote_span(TEXT_B, "  ") is None
    assert covers((0, 10), (0, 10)) and not covers((1, 10), (0, 10)) and not covers((0, 9), (0, 10))


def test_evidence_share_and_chunks_hand_computed():
    index, case = _index(), _case()
    quotes = [("b", *quote_span(TEXT_B, case.evidence[0].quote)), ("a", *quote_span(TEXT_A, "GBP at 15:30."))]
    assert evidence_share(index, [0], quotes) == 0.0        # the EUR chunk holds neither
    assert evidence_share(index, [2], quotes) == 0.0        # row 2 ends before the quote does
    assert evidence_share(index, [3], quotes) == 0.5        # row 3 covers the policy quote
    assert evidence_share(index, [1, 3], quotes) == 1.0
    assert evidence_chunks(index, case) == {"a#gbp-cutoff~0", "b#top~0"}
    assert evidence_chunks(index, case, role="decisive") == {"b#top~0"}


def test_delivered_coverage_reads_chunk_and_section():
    index, case = _index(), _case()
    hit = SimpleNamespace(doc_id="b", row=2, section_id=None, section_text=None, truncated=False)
    out = delivered_coverage(index, case, SimpleNamespace(hits=[hit]))
    assert out["doc_delivered"] and not out["in_chunk"] and not out["in_section"]  # the tell
    index.sections = {"b#top": SimpleNamespace(start=0, end=len(TEXT_B))}
    whole = SimpleNamespace(doc_id="b", row=2, section_id="b#top", section_text=TEXT_B[:40], truncated=True)
    out = delivered_coverage(index, case, SimpleNamespace(hits=[whole]))
    assert out["in_section"] and out["truncated"]
    cut = SimpleNamespace(doc_id="b", row=2, section_id="b#top", section_text=TEXT_B[:30], truncated=True)
    # the section was cut before the quote
    assert not delivered_coverage(index, case, SimpleNamespace(hits=[cut]))["in_section"]


@pytest.mark.slow
def test_span_recall_matches_anchor_recall_on_structure_chunks(fixture_index):
    """On structure chunks, covering the quote and matching the anchor agree on a real index."""
    from ragkit.evaluation import candidate_recall, first_stage, span_recall

    doc = fixture_index.documents["settlement-runbook-v2"]
    row = next(r for r in fixture_index.rows if r.doc_id == doc.doc_id)
    quote = row.text.split("\n")[-1].strip()[:60]
    fake = SimpleNamespace(id="x", task=quote, answerable=True, tags=("identifier",),
                           caller=Scope("acme", ["ops"]),
                           as_of=dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc),
                           evidence=[SimpleNamespace(doc_id=doc.doc_id, quote=quote, role="decisive")])
    lists = first_stage(fixture_index, [fake], width=5)
    assert len(lists) == 1 and lists[0].quotes[0][0] == doc.doc_id
    table = span_recall(fixture_index, lists, width=5).set_index(["tag", "method"])
    assert table.loc[("all", "bm25"), "set_recall"] == 1.0  # its own words find it
    anchored = SimpleNamespace(**{**vars(fake), "evidence": [SimpleNamespace(**{**vars(fake.evidence[0]),
                                                                                  "anchor": row.anchor})]})
    by_anchor = candidate_recall(fixture_index, [anchored], width=5, methods=("bm25",))
    assert by_anchor.loc[("all", "bm25"), "set_recall"] == 1.0
