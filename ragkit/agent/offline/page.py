"""The page the offline policy reads: every search asks for a margin, and only clean results count.

Untrusted, instruction-shaped text (:func:`ragkit.text.untrusted.looks_like_instruction`) must
neither add to nor push anything off what the policy reads. So every search asks for
:data:`MARGIN` more results than the policy reads (:func:`with_margin`), and the policy reads,
per search, the first ``k - MARGIN`` results that are not instruction-shaped (:func:`visible`).

Example:
    >>> with_margin(Action("search", {"query": "EUR cutoff", "k": 5})).arguments["k"]
    7
"""

from __future__ import annotations

from ragkit.agent.state import Action, AgentState, EvidenceUse
from ragkit.text.untrusted import looks_like_instruction

__all__ = ["MARGIN", "with_margin", "visible", "reading_order", "read_uses"]

#: Extra results asked of every search, so that the page the policy reads (the first ``k``
#: results that are not instruction-shaped) is the same whether or not a corpus carries
#: injected text: untrusted content can neither add to nor push anything off that page.
#: Searches already at the tool's ceiling of 8 (identifier and thread searches) get no margin.
MARGIN = 2


def with_margin(action: Action) -> Action:
    """A search action asking for :data:`MARGIN` more results (at most 8); other actions as they are."""
    if action.kind != "search":
        return action
    args = dict(action.arguments)
    args["k"] = min(8, int(args.get("k") or 4) + MARGIN)
    return Action(action.kind, args, action.reason, record=action.record)


def visible(state: AgentState) -> set[str]:
    """Citations the policy reads: per search, the first ``k - MARGIN`` clean results; every read."""
    return set(reading_order(state))


def reading_order(state: AgentState) -> list[str]:
    """The citations of :func:`visible` in the order the policy first read them (page by page),
    not the order they entered the evidence: a result in one search's margin is read where a later
    page shows it, whatever text pushed it into that margin."""
    out: dict[str, None] = {}
    for step in state.steps:
        if step.refused is not None or not step.ok:
            continue
        if step.action == "search":
            asked = int(step.arguments.get("k") or 4)
            page = max(1, asked - MARGIN) if asked < 8 else 8  # at the tool's ceiling there is no margin
            clean = [
                str(i.get("citation"))
                for i in step.response.get("results") or []
                if not looks_like_instruction(str(i.get("text", "")))
            ]
            out.update(dict.fromkeys(clean[:page]))
        else:
            out.update(dict.fromkeys(
                str(i.get("citation"))
                for i in step.response.get("documents") or []
                if not looks_like_instruction(str(i.get("text", "")))
            ))
    return list(out)


def read_uses(state: AgentState) -> list[EvidenceUse]:
    """Evidence the policy has read: visible and not instruction-shaped."""
    seen = visible(state)
    return [u for u in state.evidence.values() if u.citation in seen]
