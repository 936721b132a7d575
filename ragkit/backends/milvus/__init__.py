"""The funnel on Milvus: a second implementation of the backend seam, and Ray Data ingestion into it."""

from ragkit.backends.milvus.engine import (
    LocalMilvus,
    MilvusConfig,
    MilvusIndex,
    MilvusSelection,
    MilvusSnapshot,
    quote,
    scope_expression,
    start_local,
)
from ragkit.backends.milvus.ingest import IngestReport, corpus_files, ingest_milvus, ingest_ray

__all__ = [
    "IngestReport",
    "LocalMilvus",
    "MilvusConfig",
    "MilvusIndex",
    "MilvusSelection",
    "MilvusSnapshot",
    "corpus_files",
    "ingest_milvus",
    "ingest_ray",
    "quote",
    "scope_expression",
    "start_local",
]
