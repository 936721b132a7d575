"""The agent's records and the policy protocol: what a policy sees and what it may propose.

A policy (:class:`Policy`) looks at an :class:`AgentState` (the task, the caller, the
:class:`Step` records of the loop so far and the delivered evidence, each an
:class:`EvidenceUse`) and proposes an :class:`Action`. The loop (:mod:`ragkit.agent.loop`) runs
tool actions and records them; the policies (:mod:`ragkit.agent.offline`,
:mod:`ragkit.agent.llm_policy`) import these records from here, so the loop may import the
policies without a circle.

Example:
    >>> state = AgentState("Which commit fixed OPS-3318?", "2026-02-02", "acme", "tool", 6)
    >>> state.turn, state.searches_left, Action("search", {"query": "OPS-3318"}).kind
    (1, 6, 'search')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ragkit.core.errors import ValidationError
from ragkit.core.scope import Scope
from ragkit.evidence.decision import DecisionRecord
from ragkit.evidence.spans import Evidence

__all__ = [
    "PLACEMENTS",
    "ACTIONS",
    "TOOL_OF_ACTION",
    "Action",
    "Step",
    "EvidenceUse",
    "AgentState",
    "PolicyRun",
    "Policy",
]

#: Where retrieval sits (CURRICULUM section 1): always-on, a tool, or both.
PLACEMENTS = ("pipeline", "tool", "hybrid")
#: What a policy may propose.
ACTIONS = ("search", "fetch", "related", "answer", "abstain")
#: The retrieval tool each tool action calls.
TOOL_OF_ACTION = {"search": "search_knowledge", "fetch": "retrieve_documents", "related": "related_documents"}


@dataclass(frozen=True)
class Action:
    """What the policy wants next: a kind (:data:`ACTIONS`), its arguments and why.

    Tool actions carry the tool's JSON arguments (``search``: ``query`` and filters;
    ``fetch``: ``ids``; ``related``: ``doc_id``). ``answer`` carries ``answer`` (text with
    inline ``[doc_id#anchor]`` citations); ``abstain`` carries ``answer`` (what was searched,
    found, missing, and what to confirm).
    """

    kind: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    record: DecisionRecord | None = field(default=None, compare=False, repr=False)  # the policy's, if any

    def __post_init__(self) -> None:
        if self.kind not in ACTIONS:
            raise ValidationError(f"action {self.kind!r} is unknown; use one of {ACTIONS}", field="kind")


@dataclass
class Step:
    """One turn of the loop: the action, its arguments, the tool response and its cost.

    ``refused`` is the loop's message when the action was not run (search cap, search loop,
    step cap); the policy sees it as the step's response.
    """

    turn: int
    action: str
    arguments: dict[str, Any]
    ok: bool
    ms: float
    tokens: int
    response: dict[str, Any]
    reason: str = ""
    refused: str | None = None

    @property
    def hits(self) -> list[dict[str, Any]]:
        """Delivered items with per-stage ranks (``bm25``, ``dense``, ``rrf``, ``rerank``, ``final``)."""
        items = self.response.get("results") or self.response.get("documents") or []
        ranks: dict[str, dict[str, Any]] = {}
        trace = self.response.get("trace") or {}
        columns = trace.get("columns") or []
        for row in trace.get("candidates") or []:
            rec = dict(zip(columns, row, strict=False))
            if "chunk_id" in rec:
                ranks[rec["chunk_id"]] = rec
        out = []
        for item in items:
            rec = ranks.get(item.get("chunk_id", ""), {})
            out.append(
                {
                    "citation": item.get("citation"),
                    "rank": item.get("rank"),
                    "source_type": item.get("source_type"),
                    "tenant": item.get("tenant"),
                    "validity": item.get("validity"),
                    "score": item.get("score"),
                    "bm25": rec.get("lexical_rank"),
                    "dense": rec.get("dense_rank"),
                    "rrf": rec.get("fused_rank"),
                    "rerank": rec.get("rerank_rank"),
                    "final": rec.get("final_rank"),
                }
            )
        return out

    def to_json(self) -> dict[str, Any]:
        """The step as a JSON-ready dict (with :attr:`hits`)."""
        return {
            "turn": self.turn,
            "action": self.action,
            "arguments": self.arguments,
            "ok": self.ok,
            "ms": round(self.ms, 1),
            "tokens": self.tokens,
            "reason": self.reason,
            "refused": self.refused,
            "hits": self.hits,
            "response": self.response,
        }


@dataclass
class EvidenceUse:
    """A delivered piece of evidence, the tool item it came from, and when it entered context.

    One use per citation: another excerpt of the same section (a long section is indexed as
    several chunks) joins it through :meth:`absorb`, so no delivered sentence is lost.
    """

    evidence: Evidence
    item: dict[str, Any]  # the tool's JSON item (envelope fields, score, validity, ...)
    first_turn: int
    query: str = ""

    @property
    def citation(self) -> str:
        """``doc_id#anchor`` of the delivered span."""
        return str(self.item.get("citation"))

    def absorb(self, item: dict[str, Any], evidence: Evidence) -> None:
        """Take another delivered item of this citation (:meth:`ragkit.evidence.spans.Evidence.joined`:
        a fuller read replaces the excerpt, another excerpt joins it in document order)."""
        merged = self.evidence.joined(evidence)
        if merged is evidence:
            self.evidence, self.item = evidence, dict(item)
        elif merged is not self.evidence:
            tokens = int(self.item.get("tokens") or 0) + int(item.get("tokens") or 0)
            known = merged.start >= 0
            self.item = {**self.item, "text": merged.text, "start": merged.start if known else None,
                         "end": merged.end if known else None, **({"tokens": tokens} if tokens else {})}
            self.evidence = merged


@dataclass
class AgentState:
    """What the policy may look at: the task, the caller, the steps so far and the delivered evidence."""

    task: str
    as_of: str | None
    tenant: str
    placement: str
    max_searches: int
    caller: Scope | None = None  # the toolbox's scope (for resolution and citation checks)
    steps: list[Step] = field(default_factory=list)
    evidence: dict[str, EvidenceUse] = field(default_factory=dict)
    searches: int = 0
    max_steps: int | None = None  # the loop's ceiling on tool steps (None: not told)

    @property
    def turn(self) -> int:
        """The number the next step will have."""
        return len(self.steps) + 1

    @property
    def searches_left(self) -> int:
        """Searches the cap still allows."""
        return self.max_searches - self.searches

    def queries(self) -> list[str]:
        """Queries of the searches that ran."""
        return [
            s.arguments.get("query", "") for s in self.steps if s.action == "search" and s.refused is None
        ]

    def delivered(self) -> list[Evidence]:
        """Evidence objects in the order they entered context."""
        return [u.evidence for u in self.evidence.values()]


class PolicyRun(Protocol):
    """One task's worth of policy: proposes actions from the state."""

    def first_search(self, state: AgentState) -> Action: ...
    def next_action(self, state: AgentState) -> Action: ...
    def conclude(self, state: AgentState, why: str) -> Action: ...


class Policy(Protocol):
    """A policy: ``name`` and ``begin(state)`` that returns a :class:`PolicyRun` for one task."""

    name: str

    def begin(self, state: AgentState) -> PolicyRun: ...
