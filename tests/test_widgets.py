"""ragkit.course.widgets: the funnel explorer runs headless; moving a control re-runs and redraws."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragkit import Funnel, FunnelSettings, ValidationError
from ragkit.course import FunnelExplorer


def test_bad_arguments_raise_before_any_search():
    idle = SimpleNamespace(settings=FunnelSettings())  # no search may run for these
    with pytest.raises(ValidationError, match="non-empty query"):
        FunnelExplorer(idle, "  ")
    with pytest.raises(ValidationError, match="top"):
        FunnelExplorer(idle, "q", top=0)
    with pytest.raises(ValidationError, match="candidates=500"):
        FunnelExplorer(idle, "q", candidates=500)
    with pytest.raises(ValidationError, match="rerank_mode"):
        FunnelExplorer(idle, "q", rerank_mode="best")


@pytest.mark.slow
def test_explorer_headless_update_changes_table_plot_and_summary(fixture_index):
    fixed = Funnel(fixture_index, FunnelSettings(depth_policy="fixed"))  # always rerank: the column fills
    explorer = FunnelExplorer(fixed, "E-4471 bank file rejected", candidates=10, deliver=2,
                              rerank_mode="none", top=6)
    assert explorer.runs == 1
    first_table, first_png = explorer.table.value, bytes(explorer.plot.value)
    assert first_png.startswith(b"\x89PNG")
    stages = ["BM25", "dense", "fused", "rerank", "final"]
    assert list(explorer.frame.columns) == ["chunk_id", *stages, "delivered"]
    assert explorer.frame.delivered.sum() == 2
    assert explorer.frame.rerank.isna().all()  # mode "none": the cross-encoder never ran

    result = explorer.update(deliver=4, rerank_mode="rerank")
    assert explorer.runs == 2  # two controls changed, one search
    assert len(result.hits) == 4 and explorer.frame.delivered.sum() == 4
    assert explorer.frame.rerank.notna().any()
    assert explorer.table.value != first_table and bytes(explorer.plot.value) != first_png
    assert "deliver=4" in explorer.summary.value and "rerank_mode=rerank" in explorer.summary.value

    explorer.controls["candidates"].value = 5  # as a slider moved by hand
    assert explorer.runs == 3 and explorer.result.trace.settings["candidates"] == 5
    assert explorer.frame.fused.max() <= 5
    with pytest.raises(ValidationError, match="unknown control"):
        explorer.update(width=3)
    with pytest.raises(ValidationError, match="outside"):
        explorer.update(rrf_k=1000)
