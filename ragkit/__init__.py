"""ragkit: retrieval for LLM agents, stage by stage.

Search is an action the agent takes, observes and repeats. Each stage lives in a
module named after it (``chunking``, ``lexical``, ``dense``, ``fusion``, ``rerank``,
``funnel``, ...). This file only re-exports; heavy libraries (torch,
sentence-transformers, faiss) load lazily on first use.
"""

from ragkit.agent.loop import PLACEMENTS, Agent, AgentResult
from ragkit.core.errors import LoadError, ModelNotAvailable, RagkitError, ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.core.version import __version__
from ragkit.documents.chunking import ChunkerSettings, chunk_documents
from ragkit.documents.loaders import LoadReport, load_corpus
from ragkit.evaluation.cases import EvidenceCase, load_cases
from ragkit.evaluation.runner import agent_runner, evaluate
from ragkit.evidence.citations import Verification, verify
from ragkit.evidence.decision import DecisionRecord
from ragkit.evidence.resolution import resolve
from ragkit.evidence.spans import Evidence
from ragkit.index.index import Index
from ragkit.search.funnel import Funnel, FunnelSettings, SearchResult
from ragkit.tools.toolbox import Toolbox, ToolSettings

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
