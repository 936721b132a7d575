"""ragkit.course.viz: the tidy frames on hand-built traces; each plot draws the data it was given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from ragkit import ValidationError  # noqa: E402
from ragkit.course import (
    plot_funnel,
    plot_latency,
    plot_recall_at_width,
    plot_recall_by_tag,
    stage_ranks,
    timings_frame,
)
from ragkit.search import CandidateTrace, SearchTrace  # noqa: E402


def _trace(query: str = "E-4471 rejected") -> SearchTrace:
    t = SearchTrace(query, "acme", "none", {"candidates": 20})
    t.candidates = [
        CandidateTrace(0, "a#x~0", "a", lexical_rank=2, dense_rank=9, fused_rank=1, rerank_rank=2,
                       final_rank=1, delivered=True),
        CandidateTrace(1, "b#y~0", "b", lexical_rank=1, dense_rank=None, fused_rank=2, rerank_rank=1,
                       final_rank=2, delivered=False),
        CandidateTrace(2, "c#z~0", "c", lexical_rank=None, dense_rank=1, fused_rank=3, final_rank=3),
    ]
    t.timings_ms = {"filter": 1.0, "lexical": 0.5, "dense": 30.0, "rerank": 800.0, "total": 831.5}
    return t


def test_stage_ranks_hand_checked():
    ranks = stage_ranks(_trace(), top=2)
    assert list(ranks.label.unique()) == ["a#x~0", "b#y~0"]  # final order, top 2 only
    b = ranks[ranks.chunk_id == "b#y~0"].set_index("stage")
    assert b.loc["BM25", "rank"] == 1 and b.loc["dense", "rank"] == 21  # missing -> width + 1
    assert not b.loc["dense", "listed"] and b.loc["fused", "listed"]
    assert ranks[ranks.chunk_id == "a#x~0"].delivered.all()
    assert stage_ranks(_trace(), top=3, beyond=99).query("chunk_id == 'c#z~0' and stage == 'BM25'")[
        "rank"].item() == 99


def test_stage_ranks_rejects_bad_input():
    with pytest.raises(ValidationError, match="SearchResult or SearchTrace"):
        stage_ranks({"not": "a trace"})
    with pytest.raises(ValidationError, match="top"):
        stage_ranks(_trace(), top=0)


def test_timings_frame_drops_total_and_counts_calls():
    frame = timings_frame([_trace(), _trace("other")])
    assert set(frame.stage) == {"filter", "lexical", "dense", "rerank"}
    assert frame.call.nunique() == 2
    assert frame.ms.sum() == pytest.approx(2 * 831.5)
    with pytest.raises(ValidationError, match="no traces"):
        timings_frame([])


def test_plot_funnel_draws_one_line_per_candidate():
    ax = plot_funnel(_trace(), top=3)
    assert len([ln for ln in ax.get_lines() if len(ln.get_xdata()) == 5]) == 3
    assert ax.yaxis_inverted()
    assert ax.get_title().startswith("E-4471")


def test_plot_recall_by_tag_uses_the_table_values():
    table = pd.DataFrame({"tag": ["all", "all", "identifier", "identifier"],
                          "method": ["bm25", "dense", "bm25", "dense"],
                          "set_recall": [0.5, 0.25, 1.0, 0.125], "cases": 4}).set_index(["tag", "method"])
    ax = plot_recall_by_tag(table)
    heights = sorted(round(p.get_height(), 3) for p in ax.patches if p.get_height() > 0)
    assert heights == [0.125, 0.25, 0.5, 1.0]
    with pytest.raises(ValidationError, match="lacks"):
        plot_recall_by_tag(pd.DataFrame({"x": [1]}))


def test_plot_recall_at_width_and_latency():
    frame = pd.DataFrame({"width": [10, 50, 10, 50], "method": ["bm25", "bm25", "rrf", "rrf"],
                          "set_recall": [0.2, 0.6, 0.3, 0.8]})
    ax = plot_recall_at_width(frame)
    assert len(ax.get_lines()) >= 2 and ax.get_xscale() == "log"
    with pytest.raises(ValidationError, match="lacks columns"):
        plot_recall_at_width(frame.drop(columns="method"))
    ax = plot_latency([_trace(), _trace()])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["filter", "lexical", "dense", "rerank"]
