from __future__ import annotations

import pytest

from ragkit import Filters, Funnel, FunnelSettings, Scope, ValidationError
from ragkit.core import ScopeError
from ragkit.retrieval import Ranking, combine


def test_combine_modes_hand_computed():
    first = Ranking([10, 11, 12], [0.05, 0.04, 0.03])
    assert combine(first, [1.0, 9.0, -3.0], mode="rerank").ids == [11, 10, 12]
    fused = combine(first, [1.0, 9.0, -3.0], mode="rrf", weights=(1, 1))
    assert fused.ids == [10, 11, 12]
    assert fused.scores[0] == pytest.approx(1 / 61 + 1 / 62)
    assert fused.scores[2] == pytest.approx(2 / 63)
    heavy = combine(first, [1.0, 9.0, -3.0], mode="rrf", weights=(1, 2))  # reranker weighted 2:1
    assert heavy.ids == [11, 10, 12]
    assert heavy.scores[0] == pytest.approx(1 / 62 + 2 / 61)
    assert combine(first, [1.0, 9.0, -3.0], mode="rrf") == fused  # the default weights are 1:1
    assert combine(first, [1.0, 9.0, -3.0], mode="none") == first
    with pytest.raises(ValidationError, match="one score per candidate"):
        combine(first, [1.0], mode="rrf")


def test_combine_fuse_adds_the_reranker_as_a_third_list():
    bm25 = Ranking([10, 11, 12, 13], [12.0, 3.0, 2.9, 2.8])
    dense = Ranking([11, 12, 10, 13], [0.90, 0.89, 0.88, 0.20])
    head = Ranking([10, 11, 12], [0.3, 0.2, 0.1])  # the fused head that was reranked
    scores = [1.0, 9.0, -3.0]
    out = combine(head, scores, mode="fuse", lists=[bm25, dense], weights=(1, 1, 1))
    assert sorted(out.ids) == [10, 11, 12]  # the head's ids only, each once
    # the same fusion over the three lists, restricted to the head, by hand
    from ragkit.retrieval import zscore_fusion
    by_reranker = Ranking([11, 10, 12], [9.0, 1.0, -3.0])
    expected = [i for i in zscore_fusion([bm25, dense, by_reranker]).ids if i in {10, 11, 12}]
    assert out.ids == expected
    # a reranker weighted far above the lists decides the order alone
    assert combine(head, scores, mode="fuse", lists=[bm25, dense], weights=(1, 1, 1000)).ids == [11, 10, 12]
    rrf_three = combine(head, scores, mode="fuse", lists=[bm25, dense], weights=(1, 1, 1), fusion="rrf")
    assert rrf_three.scores[rrf_three.ids.index(10)] == pytest.approx(1 / 61 + 1 / 63 + 1 / 62)
    with pytest.raises(ValidationError, match="one weight per list"):
        combine(head, scores, mode="fuse", lists=[bm25, dense], weights=(1, 2))


def test_settings_validate():
    with pytest.raises(ValidationError, match="deliver"):
        FunnelSettings(deliver=0)
    with pytest.raises(ValidationError, match="rrf_k"):
        FunnelSettings(rrf_k=-1)
    with pytest.raises(ValidationError, match="rerank_mode"):
        FunnelSettings(rerank_mode="best")
    with pytest.raises(ValidationError, match="retrievers"):
        FunnelSettings(retrievers=("sparse",))
    with pytest.raises(ValidationError, match="fusion='borda'; use one of"):
        FunnelSettings(fusion="borda")


@pytest.mark.slow
def test_trace_records_every_stage(fixture_index):
    result = Funnel(fixture_index).search("E-4471 bank file rejected", deliver=3, candidates=10,
                                          depth_policy="fixed")
    assert len(result) == 3
    frame = result.to_frame()
    assert {"lexical_rank", "dense_rank", "fused_rank", "rerank_score", "rerank_rank", "final_rank",
            "delivered", "expanded"} <= set(frame.columns)
    assert frame.delivered.sum() == 3
    assert list(frame.final_rank[:3]) == [1, 2, 3]
    delivered = frame[frame.delivered]
    assert set(delivered.chunk_id) == {h.chunk_id for h in result}
    assert result.hits[0].doc_id == "settlement-runbook-v2"  # both retrievers rank the E-4471 table first
    t = result.trace
    assert set(t.timings_ms) >= {"filter", "lexical", "dense", "fuse", "rerank", "expand", "total"}
    assert t.tokens["reranker_units"] > 0 and t.depth_plan["reason"] == "fixed"
    assert t.tokens["delivered"] == sum(h.tokens for h in result)
    # the default (adaptive depth) pays nothing here: both retrievers agree on a clear leader
    adaptive = Funnel(fixture_index).search("E-4471 bank file rejected", deliver=3, candidates=10).trace
    assert adaptive.depth_plan["reason"] == "confident" and adaptive.tokens["reranker_units"] == 0
    # every fused candidate within the rerank depth got a cross-encoder score
    assert frame[frame.fused_rank <= 10].rerank_score.notna().all()


@pytest.mark.slow
def test_no_out_of_scope_row_at_any_width(fixture_index):
    funnel = Funnel(fixture_index)
    caller = Scope("acme", ["ops"])
    for width in (1, 3, 50):
        result = funnel.search("acme settlement cutoff", scope=caller, candidates=width,
                               deliver=min(width, 4))
        frame = result.to_frame()
        assert set(frame.tenant) <= {"acme", "global"}
        globex = Scope("globex")
        other = funnel.search("acme settlement cutoff", scope=globex, candidates=width)
        assert "acme" not in set(other.to_frame().tenant)
        assert all(fixture_index.documents[h.doc_id].envelope.tenant != "acme" for h in other)
    with pytest.raises(ScopeError):
        funnel.search("x", scope=caller, filters=Filters.make(tenant="globex"))


@pytest.mark.slow
def test_expansion_budget_and_dedupe(fixture_index):
    funnel = Funnel(fixture_index)
    tight = funnel.search("settlement batch retry", deliver=3, section_budget=5)
    assert any(h.truncated for h in tight if h.section_text is not None)
    assert all(h.tokens <= 5 for h in tight if h.section_text is not None)
    none = funnel.search("settlement batch retry", deliver=3, expand=False)
    assert all(h.section_text is None for h in none)
    sections = [h.section_id for h in funnel.search("settlement", deliver=8) if h.section_id]
    assert len(sections) == len(set(sections))


@pytest.mark.slow
def test_valid_at_filter_and_reported_validity(fixture_index):
    result = Funnel(fixture_index).search("EUR cutoff", filters=Filters.make(valid_at="2025-12-01"),
                                          deliver=8)
    assert "settlement-policy-v3" not in {h.doc_id for h in result}  # effective 2026-01-01
    assert {h.validity for h in result} <= {"valid", "unknown"}


@pytest.mark.slow
def test_empty_scope_returns_nothing(fixture_index):
    result = Funnel(fixture_index).search("EUR", filters=Filters.make(doc_type="postmortem"))
    assert len(result) == 0 and result.trace.rows_in_scope == 0


def test_hit_shows_itself_in_a_notebook():
    from ragkit import Envelope
    from ragkit.search import Hit

    hit = Hit(rank=1, row=0, chunk_id="p#a~0", doc_id="p", citation="p#a", score=0.5, text="EUR <b>15:00</b>",
              envelope=Envelope("p", source_type="policy", tenant="acme"), validity="valid", tokens=7)
    html = hit._repr_html_()
    assert "<code>p#a</code>" in html and "validity=valid" in html and "&lt;b&gt;15:00" in html
