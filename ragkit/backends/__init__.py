"""Engines behind the backend seam other than the in-memory index: Milvus, and Ray ingestion into it.

The names of :mod:`ragkit.backends.milvus` are re-exported here, so notebooks and scripts
import them one level below ``ragkit``::

    from ragkit.backends import MilvusConfig, MilvusIndex, start_local
"""

from ragkit.backends.milvus import (
    IngestReport,
    LocalMilvus,
    MilvusConfig,
    MilvusIndex,
    MilvusSelection,
    MilvusSnapshot,
    MilvusTarget,
    corpus_files,
    ingest_milvus,
    ingest_ray,
    quote,
    scope_expression,
    start_local,
)

__all__ = [
    "IngestReport",
    "LocalMilvus",
    "MilvusConfig",
    "MilvusIndex",
    "MilvusSelection",
    "MilvusSnapshot",
    "MilvusTarget",
    "corpus_files",
    "ingest_milvus",
    "ingest_ray",
    "quote",
    "scope_expression",
    "start_local",
]
