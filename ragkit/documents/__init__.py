"""From files to documents and chunks: loaders with per-file errors, structure/sentence/fixed chunkers."""

from ragkit.documents.chunking import (
    ChunkerSettings,
    PreambleFn,
    Section,
    approx_tokens,
    chunk_documents,
    extractive_preamble,
    fixed_chunks,
    sections,
    sentence_chunks,
    structure_chunks,
)
from ragkit.documents.loaders import (
    MAX_FILE_MB,
    SUPPORTED_SUFFIXES,
    LoadReport,
    Skipped,
    load_corpus,
    load_file,
)

__all__ = [
    "ChunkerSettings",
    "LoadReport",
    "MAX_FILE_MB",
    "PreambleFn",
    "SUPPORTED_SUFFIXES",
    "Section",
    "Skipped",
    "approx_tokens",
    "chunk_documents",
    "extractive_preamble",
    "fixed_chunks",
    "load_corpus",
    "load_file",
    "sections",
    "sentence_chunks",
    "structure_chunks",
]
