"""ragkit: retrieval for LLM agents, stage by stage.

Search is an action the agent takes, observes and repeats. Each stage lives in a
module named after it (``chunking``, ``lexical``, ``dense``, ``fusion``, ``rerank``,
``funnel``, ...). This file only re-exports; heavy libraries (torch,
sentence-transformers, faiss) load lazily on first use.
"""

from ragkit.chunking import ChunkerSettings, chunk_documents
from ragkit.errors import LoadError, ModelNotAvailable, RagkitError, ValidationError
from ragkit.loaders import LoadReport, load_corpus
from ragkit.records import Chunk, Document, Envelope

__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "ChunkerSettings",
    "Document",
    "Envelope",
    "LoadError",
    "LoadReport",
    "ModelNotAvailable",
    "RagkitError",
    "ValidationError",
    "__version__",
    "chunk_documents",
    "load_corpus",
]
