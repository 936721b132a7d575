"""From files to documents and chunks: loaders with per-file errors, sections, the three chunkers."""

from ragkit.documents.chunking import (
    ChunkerSettings,
    PreambleFn,
    approx_tokens,
    chunk_documents,
    extractive_preamble,
    fixed_chunks,
    sentence_chunks,
    structure_chunks,
)
from ragkit.documents.formats import (
    first_heading,
    html_envelope,
    read_pdf,
    read_pdf_document,
    read_text,
    split_front_matter,
)
from ragkit.documents.loaders import (
    MAX_FILE_MB,
    SUPPORTED_SUFFIXES,
    LoadReport,
    Skipped,
    load_corpus,
    load_file,
    walk,
)
from ragkit.documents.markup import html_to_text, pdf_tables
from ragkit.documents.sections import Section, blocks, opens_fence, sections

__all__ = [
    "ChunkerSettings",
    "LoadReport",
    "MAX_FILE_MB",
    "PreambleFn",
    "SUPPORTED_SUFFIXES",
    "Section",
    "Skipped",
    "approx_tokens",
    "blocks",
    "chunk_documents",
    "extractive_preamble",
    "first_heading",
    "fixed_chunks",
    "html_envelope",
    "html_to_text",
    "pdf_tables",
    "load_corpus",
    "load_file",
    "opens_fence",
    "read_pdf",
    "read_pdf_document",
    "read_text",
    "sections",
    "sentence_chunks",
    "split_front_matter",
    "structure_chunks",
    "walk",
]
