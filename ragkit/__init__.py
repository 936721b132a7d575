"""ragkit: retrieval for LLM agents, stage by stage.

Search is an action the agent takes, observes and repeats. The package is grouped by
layer, and imports run from the top layer down only (``lint-imports`` checks it)::

    app          cli, demo, display
    exercises    check() / hint() / solution() for the course exercises
    course       course shortcuts, plots, widgets
    evaluation   evidence cases, runner, scoring, report, counterfactuals, economics, BEIR
    agent        the loop, its state, the offline and LLM policies, LLM clients
    tools        the tool contract (search_knowledge, retrieve_documents, ...), MCP server
    evidence     spans, resolution, decision records, citation checks   | search: the funnel
    backends     Milvus and Ray ingestion behind the backend seam
    index        the persisted index, storage, build, freshness, the seam
    retrieval    BM25, dense, fusion, rerankers
    documents    loaders and chunkers
    models       the bundled offline models, token counting
    text         words, values, task reading, untrusted text
    core         records, errors, ids, scope

Each stage lives in a module named after it. This file only re-exports the short public
API; heavy libraries (torch, onnxruntime, faiss) load lazily on first use.
"""

from ragkit.agent import PLACEMENTS, Agent, AgentResult
from ragkit.core import (
    Chunk,
    Document,
    Envelope,
    Filters,
    LoadError,
    ModelNotAvailable,
    RagkitError,
    Scope,
    ValidationError,
    __version__,
)
from ragkit.documents import ChunkerSettings, LoadReport, chunk_documents, load_corpus
from ragkit.evaluation import EvidenceCase, agent_runner, evaluate, load_cases
from ragkit.evidence import DecisionRecord, Evidence, Verification, resolve, verify
from ragkit.index import Index
from ragkit.search import Funnel, FunnelSettings, SearchResult
from ragkit.tools import Toolbox, ToolSettings

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
