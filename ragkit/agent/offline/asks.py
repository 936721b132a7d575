"""A message that asks two things: each ask its own run over one shared trace, one answer for all.

"Who maintains reserve-keeper, and what's its p95 batch duration?" asks for a person and a
duration. Read as one question, its words describe neither answer, and resolution decides one
value for the whole message. :class:`AskByAsk` runs one :class:`ragkit.agent.offline.policy.OfflineRun`
per ask (:func:`ragkit.text.asking.split_asks`) over the same steps and evidence, in turn:

* every ask sees every excerpt delivered so far (an excerpt found for one ask may answer the other);
* each ask gets a fair share of what is left of the search cap and the step ceiling when its
  turn comes, so the first ask cannot spend the second's searches;
* an ask after the first opens with its own first query (its identifiers and content words);
* the answer gives each ask's answer in order, each with its own citations. A later ask the
  evidence does not answer is said to be unanswered in its place (no value, nothing to verify),
  so the caller gets what the evidence does support and knows what it does not. When the first
  ask is not answered the run abstains, with its account of what was searched and what is
  missing: the first ask says what the message is about, and a later one answered without it
  ("and who owns it?") may rest on the wrong antecedent.

The result's ``values`` lists the value of every answered ask, in order (``value`` is the first).

Example:
    >>> from ragkit.agent.offline.policy import OfflinePolicy
    >>> state = AgentState("OPS-5559: what caused it, and which rollout fixed it?", None, "*", "tool", 6)
    >>> run = OfflinePolicy().begin(state)
    >>> [r.frame.task for r in run.runs]
    ['OPS-5559: what caused it?', 'OPS-5559: which rollout fixed it?']
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from ragkit.agent.state import TOOL_OF_ACTION, Action, AgentState, PolicyRun
from ragkit.text.taskparse import TaskFrame, keyword_query

__all__ = ["AskByAsk", "ORDINALS"]

#: How the answer introduces each ask's part (words, not numbers: a numeral would read as a value
#: the answer asserts without a citation).
ORDINALS = ("First", "Second", "Third", "Fourth")


class AskRun(PolicyRun, Protocol):
    """One ask's run (an :class:`ragkit.agent.offline.policy.OfflineRun`): what :class:`AskByAsk` uses."""

    frame: TaskFrame
    tried: set[str]

    def search_args(self, query: str, **extra: Any) -> dict[str, Any]: ...


class AskByAsk:
    """The runs of a message's asks, one after another, over one shared state (module docstring)."""

    def __init__(self, runs: Sequence[AskRun], tasks: Sequence[str]):
        self.runs = list(runs)
        self.tasks = list(tasks)
        self.finals: list[Action | None] = [None] * len(self.runs)
        self.current = 0
        self._share: tuple[int, int, int, int] | None = None  # searches, steps at start; their caps

    def _view(self, state: AgentState, i: int) -> AgentState:
        """``state`` as ask ``i`` sees it: its own task, and (for the ask under way) its share of the cap."""
        view = replace(state, task=self.tasks[i])
        if i == self.current and self._share is not None:
            view.max_searches = min(state.max_searches, self._share[0] + self._share[2])
        return view

    def _open(self, state: AgentState) -> None:
        """Start ask ``current``: its share of the searches and tool steps left."""
        left = len(self.runs) - self.current
        steps = _tool_steps(state)
        ceiling = state.max_steps if state.max_steps is not None else steps + 1000
        self._share = (
            state.searches,
            steps,
            math.ceil(max(0, state.searches_left) / left),
            math.ceil(max(0, ceiling - steps) / left),
        )

    def first_search(self, state: AgentState) -> Action:
        """The always-on first search: the message as written (shared by every ask)."""
        first = self.runs[0].first_search(self._view(state, 0))
        if "query" not in first.arguments:
            return first
        return replace(first, arguments={**first.arguments, "query": state.task})

    def next_action(self, state: AgentState) -> Action:
        """The next step of the ask under way; the combined answer once every ask is concluded."""
        while self.current < len(self.runs):
            i = self.current
            if self._share is None:
                self._open(state)
                if i > 0:
                    run = self.runs[i]
                    if "keywords" not in run.tried and (run.frame.identifiers or len(run.frame.words) > 1):
                        run.tried.add("keywords")
                        return Action(
                            "search",
                            run.search_args(keyword_query(run.frame)),
                            f"first query of the {_ordinal(i).lower()} ask: "
                            "its identifiers and content words",
                        )
            assert self._share is not None
            view = self._view(state, i)
            if _tool_steps(state) - self._share[1] >= self._share[3]:
                action = self.runs[i].conclude(view, "its share of the step ceiling reached")
            else:
                action = self.runs[i].next_action(view)
            if action.kind not in ("answer", "abstain"):
                return action
            self.finals[i] = action
            self.current += 1
            self._share = None
        return self._combined(state)

    def conclude(self, state: AgentState, why: str) -> Action:
        """Conclude every ask not yet concluded (``why``) and combine."""
        for i in range(self.current, len(self.runs)):
            self.current = i
            self.finals[i] = self.runs[i].conclude(self._view(state, i), why)
        self.current = len(self.runs)
        return self._combined(state)

    def _combined(self, state: AgentState) -> Action:
        finals = [f for f in self.finals if f is not None]
        answered = [f for f in finals if f.kind == "answer"]
        if not answered or finals[0].kind != "answer":
            # the first ask says what the message is about; a later ask ("and who owns it?")
            # answered without it may rest on the wrong antecedent
            first = finals[0]
            text = f"{_ordinal(0)} ask: {first.arguments.get('answer', '')}" if len(finals) > 1 else \
                str(first.arguments.get("answer", ""))
            return Action("abstain", {"answer": text}, first.reason, record=first.record)
        # the part's label leads its answer ("Second ask: 33 minutes [...]"); an unanswered ask
        # says so in its place, with no value (its account of the search is in the decision record)
        parts = [
            f"{_ordinal(i)} ask: {_said(f)}" if f.kind == "answer"
            else f"{_ordinal(i)} ask: not answered; no evidence I may read states it."
            for i, f in enumerate(finals)
        ]
        values = [f.arguments.get("value") for f in answered]
        why = "; ".join(f"ask {i + 1}: {f.reason}" for i, f in enumerate(finals))
        return Action(
            "answer",
            {"answer": " ".join(parts), "value": values[0], "values": [v for v in values if v is not None]},
            why,
            record=answered[0].record,
        )


def _tool_steps(state: AgentState) -> int:
    return sum(1 for s in state.steps if s.action in TOOL_OF_ACTION)


def _ordinal(i: int) -> str:
    return ORDINALS[min(i, len(ORDINALS) - 1)]


def _said(final: Action) -> str:
    """An ask's answer without the "Answer:" that leads a single answer (the ask's label leads it)."""
    return re.sub(r"^Answer:\s*", "", str(final.arguments.get("answer", "")))
