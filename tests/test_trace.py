"""Tests for ragkit.search.trace: the per-candidate table and the one-row summary of a hand-made trace."""

from __future__ import annotations

import pandas as pd

from ragkit.search import CandidateTrace, SearchTrace


def _trace() -> SearchTrace:
    trace = SearchTrace(query="EUR cutoff", scope="acme:ops", filters="none", settings={"deliver": 2},
                        rows_in_scope=7, rows_total=9)
    trace.timings_ms.update({"filter": 0.5, "lexical": 2.0})
    trace.tokens.update({"reranker_units": 120, "delivered": 80})
    trace.candidates = [
        # dense only, never fused into the final list
        CandidateTrace(row=4, chunk_id="d#x~0", doc_id="d", dense_rank=3),
        # fused 2nd, final 2nd
        CandidateTrace(row=1, chunk_id="b#x~0", doc_id="b", lexical_rank=1, fused_rank=2, final_rank=2),
        # fused 1st, final 1st, delivered
        CandidateTrace(row=0, chunk_id="a#x~0", doc_id="a", lexical_rank=2, dense_rank=1, fused_rank=1,
                       rerank_score=3.5, rerank_rank=1, final_rank=1, delivered=True),
        # lexical only
        CandidateTrace(row=7, chunk_id="e#x~0", doc_id="e", lexical_rank=4),
        # lexical only, ranked above row 7
        CandidateTrace(row=6, chunk_id="c#x~0", doc_id="c", lexical_rank=3),
    ]
    return trace


def test_to_frame_sorts_by_final_then_fused_then_lexical_then_dense_rank():
    frame = _trace().to_frame()
    assert frame["row"].tolist() == [0, 1, 6, 7, 4]  # unranked entries go last, list by list
    assert frame.index.tolist() == [0, 1, 2, 3, 4]
    assert frame.loc[0, "delivered"] and not frame.loc[1, "delivered"]
    assert frame.loc[0, "rerank_score"] == 3.5


def test_to_frame_keeps_missing_ranks_as_missing_integers():
    frame = _trace().to_frame()
    for col in ("lexical_rank", "dense_rank", "fused_rank", "rerank_rank", "final_rank"):
        assert str(frame[col].dtype) == "Int64"
    assert frame["final_rank"].tolist()[:2] == [1, 2]
    assert frame["final_rank"].isna().tolist() == [False, False, True, True, True]
    assert frame.loc[4, "dense_rank"] == 3 and pd.isna(frame.loc[4, "lexical_rank"])


def test_to_frame_of_no_candidates_is_empty():
    trace = SearchTrace(query="q", scope="s", filters="none", settings={})
    assert trace.to_frame().empty


def test_summary_is_one_flat_row():
    assert _trace().summary() == {
        "query": "EUR cutoff", "scope": "acme:ops", "filters": "none", "rows_in_scope": 7, "candidates": 5,
        "ms_filter": 0.5, "ms_lexical": 2.0, "tokens_reranker_units": 120, "tokens_delivered": 80,
    }
