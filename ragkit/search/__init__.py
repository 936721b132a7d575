"""The funnel: scope -> retrieve -> fuse -> rerank -> expand, its trace, and query variants."""

from ragkit.search.funnel import FUNNEL_PARAMS, Funnel, FunnelSettings, Hit, SearchResult
from ragkit.search.trace import CandidateTrace, SearchTrace
from ragkit.search.variants import declarative_rewrite, multi_query, query_variants

__all__ = [
    "CandidateTrace",
    "FUNNEL_PARAMS",
    "Funnel",
    "FunnelSettings",
    "Hit",
    "SearchResult",
    "SearchTrace",
    "declarative_rewrite",
    "multi_query",
    "query_variants",
]
