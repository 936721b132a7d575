"""What one search did, per stage and per candidate, as records and a pandas DataFrame.

Every call through the funnel returns a :class:`SearchTrace`: the query, the
caller's scope and filters, how many rows were in scope, the time each stage
took, token counts, and one :class:`CandidateTrace` per candidate with its rank
in every list (``None`` where a list did not contain it). Evaluation and the
economics lessons are computed from these records, never from guesses.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CandidateTrace", "SearchTrace"]


@dataclass
class CandidateTrace:
    """One candidate's path through the funnel (ranks count from 1)."""

    row: int
    chunk_id: str
    doc_id: str
    lexical_rank: int | None = None
    dense_rank: int | None = None
    fused_rank: int | None = None
    fused_score: float | None = None
    rerank_score: float | None = None
    rerank_rank: int | None = None
    final_rank: int | None = None
    delivered: bool = False
    expanded: bool = False
    truncated: bool = False
    validity: str = "unknown"
    version: str = ""
    source_type: str = ""
    tenant: str = ""


@dataclass
class SearchTrace:
    """One retrieval call: inputs, per-stage timings (ms), token counts, candidates."""

    query: str
    scope: str
    filters: str
    settings: dict[str, Any]
    rows_in_scope: int = 0
    rows_total: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    candidates: list[CandidateTrace] = field(default_factory=list)
    #: the rerank depth chosen for this call and why (:class:`ragkit.retrieval.rerank.DepthPlan`)
    depth_plan: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> Any:
        """Candidates as a pandas DataFrame, sorted by final then fused rank."""
        import pandas as pd

        frame = pd.DataFrame([asdict(c) for c in self.candidates])
        if frame.empty:
            return frame
        for col in ("lexical_rank", "dense_rank", "fused_rank", "rerank_rank", "final_rank"):
            frame[col] = frame[col].astype("Int64")
        frame = frame.sort_values(["final_rank", "fused_rank", "lexical_rank", "dense_rank"],
                                  na_position="last").reset_index(drop=True)
        return frame

    def summary(self) -> dict[str, Any]:
        """One flat row for this call (for per-task and per-case aggregation)."""
        return {"query": self.query, "scope": self.scope, "filters": self.filters,
                "rows_in_scope": self.rows_in_scope, "candidates": len(self.candidates),
                **{f"ms_{k}": v for k, v in self.timings_ms.items()},
                **{f"tokens_{k}": v for k, v in self.tokens.items()}}
