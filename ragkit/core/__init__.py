"""The bottom layer: shared records, ids, tunable parameters, the error hierarchy, who may read what."""

from ragkit.core.errors import (
    IndexStateError,
    LoadError,
    ModelNotAvailable,
    RagkitError,
    ScopeError,
    ValidationError,
)
from ragkit.core.ids import ChunkId, doc_of, parse_id, section_id, section_key
from ragkit.core.params import Param, with_param_table
from ragkit.core.records import GLOBAL_TENANT, SOURCE_TYPES, Chunk, Document, Envelope, parse_time, slugify
from ragkit.core.scope import Filters, Scope, as_scope, scope_mask, snapshot_filters, validity
from ragkit.core.version import __version__

__all__ = [
    "Chunk",
    "ChunkId",
    "Document",
    "Envelope",
    "Filters",
    "GLOBAL_TENANT",
    "IndexStateError",
    "LoadError",
    "ModelNotAvailable",
    "Param",
    "RagkitError",
    "SOURCE_TYPES",
    "Scope",
    "ScopeError",
    "ValidationError",
    "__version__",
    "as_scope",
    "doc_of",
    "parse_id",
    "parse_time",
    "scope_mask",
    "section_id",
    "section_key",
    "slugify",
    "snapshot_filters",
    "validity",
    "with_param_table",
]
