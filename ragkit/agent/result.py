"""What the agent returns for one task: the answer, its decision record, verification and trace.

An :class:`AgentResult` prints as a readable trace (``print(result)``: each step with its
per-stage ranks, the decision record, the answer or abstention, the verified citations and the
cost), shows as an HTML table in a notebook, and serialises with :meth:`AgentResult.to_json`.
:attr:`AgentResult.token_turns` is the cost of keeping evidence in context (CURRICULUM
section 5): each piece's tokens times the turns it stayed.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from ragkit.agent.state import TOOL_OF_ACTION, Step
from ragkit.evidence.citations import Verification
from ragkit.evidence.decision import DecisionRecord
from ragkit.evidence.spans import Evidence

__all__ = ["AgentResult"]


@dataclass
class AgentResult:
    """The answer, the decision record, the verified citations and the full trace of one task."""

    task: str
    answer: str
    abstained: bool
    value: str | None
    record: DecisionRecord | None
    verification: Verification | None
    steps: list[Step]
    delivered: list[Evidence]
    searches: int
    seconds: float
    tokens_delivered: int
    placement: str = "hybrid"
    policy: str = "offline"
    as_of: str | None = None
    evidence_turns: dict[str, tuple[int, int]] = field(default_factory=dict)
    asked: str = "text"
    #: the value of every answered ask, in order, for a message that asks several things
    #: (:mod:`ragkit.agent.offline.asks`); otherwise ``value`` alone
    values: tuple[str, ...] = ()

    @property
    def calls(self) -> int:
        """Tool calls that ran (refused ones excluded)."""
        return sum(1 for s in self.steps if s.action in TOOL_OF_ACTION and s.refused is None)

    @property
    def citations(self) -> list[str]:
        """Citations of the delivered answer that verified (empty when abstained)."""
        if self.abstained or self.verification is None:
            return []
        return [str(c) for claim in self.verification.claims if claim.ok for c in claim.citations]

    @property
    def token_turns(self) -> int:
        """Evidence tokens times the turns each piece stayed in context (CURRICULUM section 5)."""
        tokens = {u.get("citation"): u.get("tokens", 0) for u in self.uses}
        return sum(tokens.get(c, 0) * (last - first + 1) for c, (first, last) in self.evidence_turns.items())

    #: ``{"citation", "tokens"}`` of every piece of evidence delivered (for :attr:`token_turns`)
    uses: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON-ready dict: answer, record, verification, cost and every step."""
        record = (
            self.record.to_dict() if self.record is not None and hasattr(self.record, "to_dict") else None
        )
        verification = None
        if self.verification is not None:
            verification = {
                "ok": self.verification.ok,
                "claims": [
                    {
                        "text": c.text,
                        "citations": [str(x) for x in c.citations],
                        "ok": c.ok,
                        "reasons": list(c.reasons),
                    }
                    for c in self.verification.claims
                ],
            }
        return {
            "task": self.task,
            "as_of": self.as_of,
            "placement": self.placement,
            "policy": self.policy,
            "asked": self.asked,
            "answer": self.answer,
            "abstained": self.abstained,
            "value": self.value,
            "values": list(self.values),
            "citations": self.citations,
            "record": record,
            "verification": verification,
            "searches": self.searches,
            "calls": self.calls,
            "seconds": round(self.seconds, 3),
            "tokens_delivered": self.tokens_delivered,
            "token_turns": self.token_turns,
            "evidence_turns": {k: list(v) for k, v in self.evidence_turns.items()},
            "steps": [s.to_json() for s in self.steps],
        }

    def __str__(self) -> str:
        lines = [
            f"task: {self.task}  (as of {self.as_of or 'now'}; {self.placement} placement, "
            f"{self.policy} policy)"
        ]
        for s in self.steps:
            args = ", ".join(f"{k}={v!r}" for k, v in s.arguments.items() if k != "answer" and v is not None)
            head = f"  [{s.turn}] {s.action}({args})"
            if s.refused:
                lines.append(f"{head} -> REFUSED: {s.refused}")
                continue
            if s.action in ("answer", "abstain"):
                continue
            lines.append(
                f"{head} -> {len(s.hits)} item(s), {s.tokens} tokens, {s.ms:.0f} ms"
                + (f"  [{s.reason}]" if s.reason else "")
            )
            for h in s.hits[:8]:
                stages = " ".join(
                    f"{k}={h[k] if h[k] is not None else '-'}"
                    for k in ("bm25", "dense", "rrf", "rerank", "final")
                    if k in h
                )
                lines.append(f"        {h['citation']} ({h['source_type']}, {h['tenant']}) {stages}")
        if self.record is not None:
            lines.append("decision record:")
            lines.extend("  " + line for line in str(self.record).splitlines())
        lines.append(("ABSTAINED: " if self.abstained else "ANSWER: ") + self.answer)
        if self.citations:
            lines.append("verified citations: " + ", ".join(dict.fromkeys(self.citations)))
        lines.append(
            f"{self.searches} searches, {self.calls} tool calls, {self.tokens_delivered} tokens "
            f"delivered, {self.token_turns} token-turns, {self.seconds:.1f} s"
        )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = []
        for s in self.steps:
            args = esc(json.dumps({k: v for k, v in s.arguments.items() if k != "answer" and v is not None}))
            hits = "<br>".join(
                f"<code>{esc(str(h['citation']))}</code> bm25={h['bm25']} dense={h['dense']} rrf={h['rrf']} "
                f"rerank={h['rerank']} final={h['final']}"
                for h in s.hits
            )
            what = f"<b>refused</b>: {esc(s.refused)}" if s.refused else hits
            rows.append(
                f"<tr><td>{s.turn}</td><td>{s.action}</td><td><code>{args}</code></td>"
                f"<td>{s.ms:.0f}</td><td>{s.tokens}</td><td>{what}</td></tr>"
            )
        turns = "".join(
            f"<tr><td><code>{esc(c)}</code></td><td>{a}..{b}</td></tr>"
            for c, (a, b) in self.evidence_turns.items()
        )
        record = (
            self.record._repr_html_()
            if self.record is not None and hasattr(self.record, "_repr_html_")
            else ""
        )
        verdict = "abstained" if self.abstained else f"answered (value {esc(str(self.value))})"
        return (
            f"<div><b>{esc(self.task)}</b> &mdash; {self.placement} placement, {self.policy} policy, "
            f"{verdict}<p style='border-left:3px solid #888;padding-left:8px'>{esc(self.answer)}</p>"
            "<table><tr><th>turn</th><th>action</th><th>arguments</th><th>ms</th><th>tokens</th>"
            f"<th>hits (per-stage ranks)</th></tr>{''.join(rows)}</table>"
            f"<details><summary>evidence in context (turns)</summary><table>{turns}</table></details>"
            f"{record}<p>{self.searches} searches, {self.calls} calls, {self.tokens_delivered} tokens, "
            f"{self.token_turns} token-turns, {self.seconds:.1f} s</p></div>"
        )
