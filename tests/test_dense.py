from __future__ import annotations

import numpy as np
import pytest

from ragkit import ValidationError
from ragkit.retrieval import DenseRetriever


class ToyEmbedder:
    """Deterministic 'embeddings' so masking can be checked against brute force."""

    def __init__(self, dim=16):
        self.dim = dim

    def encode(self, texts, **kwargs):
        out = np.array([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=self.dim) for t in texts],
                       dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_mask_is_applied_before_top_k(kind):
    emb = ToyEmbedder()
    texts = [f"doc {i}" for i in range(300)]
    dense = DenseRetriever.build(texts, emb, kind=kind)
    rng = np.random.default_rng(0)
    q = emb.encode(["query"])[0]
    for _ in range(20):
        mask = rng.random(300) < 0.2
        allowed = np.flatnonzero(mask)
        for k in (1, 5, 50, 1000):
            got = dense.search("query", k, mask)
            assert set(got.ids) <= set(allowed.tolist())
            assert len(got.ids) == min(k, len(allowed))
            if kind == "flat":
                expect = allowed[np.argsort(-(dense.vectors[allowed] @ q), kind="stable")][:k]
                assert got.ids == expect.tolist()


def test_edge_cases():
    dense = DenseRetriever.build(["a", "b"], ToyEmbedder())
    assert dense.search("q", 5, np.zeros(2, bool)).ids == []
    assert dense.search("   ", 5).ids == []
    with pytest.raises(ValidationError, match="k >= 1"):
        dense.search("q", 0)
    with pytest.raises(ValidationError, match="one flag per row"):
        dense.search("q", 1, np.ones(3, bool))
    with pytest.raises(ValidationError, match="kind"):
        DenseRetriever(dense.vectors, ToyEmbedder(), kind="ivf")
    dense.add(ToyEmbedder().encode(["c"]))
    assert len(dense) == 3 and dense.search("c", 1).ids == [2]


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_large_mask_uses_a_bitmap_and_stays_exact_for_flat(kind):
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((6000, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    dense = DenseRetriever(vectors, None, kind=kind)
    mask = rng.random(6000) < 0.8  # well over 4096 allowed rows: the bitmap selector
    allowed = np.flatnonzero(mask)
    for q in vectors[:20]:
        got = dense.search("q", 10, mask, query_vector=q)
        assert set(got.ids) <= set(allowed.tolist()) and len(got.ids) == 10
        if kind == "flat":
            assert got.ids == allowed[np.argsort(-(vectors[allowed] @ q), kind="stable")][:10].tolist()


def test_saved_hnsw_graph_reads_back_without_its_vectors(tmp_path):
    rng = np.random.default_rng(4)
    vectors = rng.standard_normal((800, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    built = DenseRetriever(vectors, None, kind="hnsw")
    built.save_index(tmp_path / "g.faiss")
    again = DenseRetriever(vectors, None, index=DenseRetriever.read_index(tmp_path / "g.faiss"))
    assert again.kind == "hnsw"
    for q in vectors[:10]:
        assert again.search("q", 5, query_vector=q) == built.search("q", 5, query_vector=q)
    with pytest.raises(ValidationError, match="rebuild"):
        DenseRetriever(vectors[:10], None, index=DenseRetriever.read_index(tmp_path / "g.faiss"))
