"""ragkit: retrieval for LLM agents, stage by stage.

Search is an action the agent takes, observes and repeats. Each stage lives in a
module named after it (``chunking``, ``lexical``, ``dense``, ``fusion``, ``rerank``,
``funnel``, ...). This file only re-exports; heavy libraries (torch,
sentence-transformers, faiss) load lazily on first use.
"""

from ragkit.agent import PLACEMENTS, Agent, AgentResult
from ragkit.cases import EvidenceCase, load_cases
from ragkit.chunking import ChunkerSettings, chunk_documents
from ragkit.citations import Verification, verify
from ragkit.decision import DecisionRecord
from ragkit.errors import LoadError, ModelNotAvailable, RagkitError, ValidationError
from ragkit.evaluation import agent_runner, evaluate
from ragkit.evidence import Evidence
from ragkit.funnel import Funnel, FunnelSettings, SearchResult
from ragkit.index import Index
from ragkit.loaders import LoadReport, load_corpus
from ragkit.records import Chunk, Document, Envelope
from ragkit.resolution import resolve
from ragkit.scope import Filters, Scope
from ragkit.tools import Toolbox, ToolSettings

__version__ = "0.1.0"

__all__ = [
    "PLACEMENTS",
    "Agent",
    "AgentResult",
    "Chunk",
    "ChunkerSettings",
    "DecisionRecord",
    "Document",
    "Envelope",
    "Evidence",
    "EvidenceCase",
    "Filters",
    "Funnel",
    "FunnelSettings",
    "Index",
    "LoadError",
    "LoadReport",
    "ModelNotAvailable",
    "RagkitError",
    "Scope",
    "SearchResult",
    "ToolSettings",
    "Toolbox",
    "ValidationError",
    "Verification",
    "__version__",
    "agent_runner",
    "chunk_documents",
    "evaluate",
    "load_cases",
    "load_corpus",
    "resolve",
    "verify",
]
