"""Retrievers and how their lists are joined: BM25, dense, fusion (z-scores, RRF), rerankers."""

from ragkit.core.params import Param
from ragkit.retrieval.analysis import analyse, stemmer_for, stopword_set, tokenize
from ragkit.retrieval.colbert import (
    COLBERT_NAME,
    QUERY_TOKENS,
    ColbertReranker,
    bundled_colbert_path,
    get_colbert,
)
from ragkit.retrieval.dense import (
    EF_CONSTRUCTION,
    EF_SEARCH,
    HNSW_M,
    HNSW_MIN_ROWS,
    INDEX_KINDS,
    DenseRetriever,
    choose_kind,
)
from ragkit.retrieval.engines import Bm25sScorer, RankBm25Scorer
from ragkit.retrieval.feedback import Feedback, rm3_weights
from ragkit.retrieval.fusion import (
    FUSIONS,
    RRF_PARAMS,
    Ranking,
    fuse,
    minmax_fusion,
    rank_positions,
    rrf,
    zscore_fusion,
)
from ragkit.retrieval.lexical import BM25_PARAMS, ENGINES, BM25Retriever, best_rows
from ragkit.retrieval.postings import Postings
from ragkit.retrieval.rerank import (
    DEFAULT_RRF_WEIGHTS,
    DEPTH_POLICIES,
    RERANK_MODES,
    DepthPlan,
    RerankOutput,
    combine,
    plan_depth,
    rerank,
)
from ragkit.retrieval.segmented import SegmentedBM25

__all__ = [
    "BM25Retriever",
    "BM25_PARAMS",
    "Bm25sScorer",
    "COLBERT_NAME",
    "ColbertReranker",
    "DEFAULT_RRF_WEIGHTS",
    "DEPTH_POLICIES",
    "DenseRetriever",
    "DepthPlan",
    "EF_CONSTRUCTION",
    "EF_SEARCH",
    "ENGINES",
    "FUSIONS",
    "Feedback",
    "HNSW_M",
    "HNSW_MIN_ROWS",
    "INDEX_KINDS",
    "Param",
    "Postings",
    "QUERY_TOKENS",
    "RERANK_MODES",
    "RRF_PARAMS",
    "RankBm25Scorer",
    "Ranking",
    "RerankOutput",
    "SegmentedBM25",
    "analyse",
    "best_rows",
    "bundled_colbert_path",
    "choose_kind",
    "combine",
    "fuse",
    "get_colbert",
    "minmax_fusion",
    "plan_depth",
    "rank_positions",
    "rerank",
    "rm3_weights",
    "rrf",
    "stemmer_for",
    "stopword_set",
    "tokenize",
    "zscore_fusion",
]
