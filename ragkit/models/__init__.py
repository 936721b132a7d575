"""The offline models (bundled embedder and cross-encoder, loaded lazily), score cache, token counts."""

from ragkit.models.bundled import (
    BGE_EMBEDDER,
    BGE_QUERY_INSTRUCTION,
    DEFAULT_EMBEDDER,
    DEFAULT_RERANKER,
    MINILM_EMBEDDER,
    embedder_identity,
    get_embedder,
    get_reranker,
)
from ragkit.models.embedders import Embedder, OnnxEmbedder
from ragkit.models.files import (
    bundled_bge_path,
    bundled_embedder_path,
    bundled_reranker_path,
    fingerprint,
    package_dir,
)
from ragkit.models.reranker import Reranker
from ragkit.models.runtime import feed, load_tokenizer, onnx_session, parallel_map, set_workers, workers
from ragkit.models.score_cache import ScoreCache, cached_scores
from ragkit.models.tokens import count_tokens, count_tokens_batch, truncate_to_tokens

__all__ = [
    "BGE_EMBEDDER",
    "BGE_QUERY_INSTRUCTION",
    "DEFAULT_EMBEDDER",
    "DEFAULT_RERANKER",
    "Embedder",
    "MINILM_EMBEDDER",
    "OnnxEmbedder",
    "Reranker",
    "ScoreCache",
    "bundled_bge_path",
    "bundled_embedder_path",
    "bundled_reranker_path",
    "cached_scores",
    "count_tokens",
    "count_tokens_batch",
    "embedder_identity",
    "feed",
    "fingerprint",
    "get_embedder",
    "get_reranker",
    "load_tokenizer",
    "onnx_session",
    "package_dir",
    "parallel_map",
    "set_workers",
    "truncate_to_tokens",
    "workers",
]
