"""The offline models (bundled embedder and cross-encoder, loaded lazily) and token counting."""

from ragkit.models.bundled import (
    BGE_EMBEDDER,
    BGE_QUERY_INSTRUCTION,
    DEFAULT_EMBEDDER,
    DEFAULT_RERANKER,
    MINILM_EMBEDDER,
    Embedder,
    OnnxEmbedder,
    Reranker,
    ScoreCache,
    bundled_bge_path,
    bundled_embedder_path,
    bundled_reranker_path,
    embedder_identity,
    get_embedder,
    get_reranker,
    workers,
)
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
    "count_tokens",
    "count_tokens_batch",
    "embedder_identity",
    "get_embedder",
    "get_reranker",
    "truncate_to_tokens",
    "workers",
]
