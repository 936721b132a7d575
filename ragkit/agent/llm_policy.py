"""The LLM policy: a model drives the agent loop with native tool calls, under the same guards.

:class:`LLMPolicy` plugs a :class:`ragkit.agent.llm.LLMClient` (OpenAI-compatible or Anthropic,
chosen with ``RAGKIT_LLM``) into :class:`ragkit.agent.loop.Agent`; it is what ``ragkit ask`` runs
when an LLM is configured (the one loop for every policy). The model sees the three tool
schemas and the system prompt of :func:`system_prompt`; each tool call it makes
becomes one loop action (``search_knowledge`` -> ``search``, ``retrieve_documents`` ->
``fetch``, ``related_documents`` -> ``related``), so the loop's search cap, search-loop
refusal and step ceiling apply exactly as they do to the offline policy; a refused call
goes back to the model as an error result with the loop's message. Every tool result
reaches the model wrapped by :func:`ragkit.text.untrusted.wrap_untrusted`.

In the ``pipeline`` and ``hybrid`` placements the always-on first search is shown to the
model as a search it made. When the model stops calling tools, its text is the draft:

* a draft with no ``[doc_id#anchor]`` citation is not an answer: the agent abstains and quotes
  the model's words as such;
* otherwise the loop verifies every citation and value (:func:`ragkit.evidence.citations.verify`),
  and resolution (:func:`ragkit.evidence.resolution.resolve`) runs over the delivered evidence: if
  it decides a value of the asked kind and the draft asserts a different one, the draft is
  not delivered; the agent abstains and names both sources;
* an answer whose citations do not verify is withheld by the loop, never delivered.

:attr:`LLMPolicy.last_run` keeps the conversation and the token usage of the latest task.

This module is tested for the protocol over loopback servers that speak each API's wire
format (``tests/test_agent.py``, ``tests/test_llm.py``); the quality of any model's answers is
untested here.

Example:
    >>> from ragkit.agent.llm import configured                                 # doctest: +SKIP
    >>> agent = Agent(toolbox, LLMPolicy(configured()), placement="tool")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ragkit.agent.llm import LLMClient, Reply, ToolCall
from ragkit.agent.state import Action, AgentState
from ragkit.core.errors import ValidationError
from ragkit.core.scope import Scope
from ragkit.evidence.citations import CITATION_RE
from ragkit.evidence.resolution import resolve
from ragkit.text.untrusted import SYSTEM_NOTE, wrap_untrusted
from ragkit.text.values import read_values
from ragkit.tools.responses import for_model
from ragkit.tools.schemas import TOOL_SPECS, ToolSpec

__all__ = ["LLMPolicy", "LLMRun", "KIND_OF_TOOL", "system_prompt"]

#: Which loop action each tool call becomes.
KIND_OF_TOOL = {"search_knowledge": "search", "retrieve_documents": "fetch", "related_documents": "related"}
_ALWAYS_ON_ID = "always_on_1"


def system_prompt(caller: Scope | None, as_of: str | None = None) -> str:
    """The model's system prompt: how to use the tools, cite, abstain, and the trust note.

    ``caller`` is the toolbox's scope (named so the model knows whose documents it reads);
    ``as_of`` (an ISO date) asks for answers valid at that date.
    """
    when = f" Answer as of {as_of}: pass valid_at=\"{as_of}\" to search_knowledge." if as_of else ""
    who = caller if caller is not None else "operator scope"
    return (
        f"You answer questions from a document collection using the retrieval tools, as the caller ({who}). "
        "Search before answering; search again with other words or identifiers when results do not "
        "answer the question; read a section with retrieve_documents when an excerpt is not enough. "
        "Cite every claim inline as [doc_id#anchor] from tool results: every citation is checked "
        "against the evidence the tools delivered in this conversation, and an answer whose citations "
        "do not check is withheld. Prefer documents that are valid at the asked date and not "
        "superseded. If the evidence is insufficient, say so and name what is missing instead of "
        f"guessing.{when} {SYSTEM_NOTE}"
    )


@dataclass
class LLMRun:
    """One task driven by a model: the conversation, the model's pending tool calls, usage."""

    client: LLMClient
    system: str
    specs: list[ToolSpec]
    messages: list[dict[str, Any]] = field(default_factory=list)
    pending: list[ToolCall] = field(default_factory=list)  # calls of the last reply not yet run
    waiting: ToolCall | None = None  # the call whose action the loop is running
    seen_steps: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def first_search(self, state: AgentState) -> Action:
        """The always-on first search, shown to the model as a search it made."""
        self.waiting = ToolCall(_ALWAYS_ON_ID, "search_knowledge", {"query": state.task})
        self.messages.append({"role": "assistant", "content": "", "tool_calls": [self.waiting]})
        return Action("search", {"query": state.task}, "always-on retrieval with the task")

    def next_action(self, state: AgentState) -> Action:
        """The model's next tool call as a loop action; its text as the draft when it stops calling tools."""
        self._report(state)
        if not self.pending:
            reply = self._ask(use_tools=True)
            if not reply.tool_calls:
                return self._draft(state, reply.text, "the model answered")
            self.messages.append(
                {"role": "assistant", "content": reply.text, "tool_calls": list(reply.tool_calls)}
            )
            self.pending = list(reply.tool_calls)
        call = self.pending.pop(0)
        self.waiting = call
        kind = KIND_OF_TOOL.get(call.name)
        if kind is None:  # an unknown tool: answer the call with an error and ask again
            self.messages.append(
                self._result(
                    call,
                    {
                        "ok": False,
                        "error": {
                            "code": "unknown_tool",
                            "message": f"there is no tool named {call.name!r}",
                            "valid": list(KIND_OF_TOOL),
                        },
                    },
                )
            )
            self.waiting = None
            return self.next_action(state)
        return Action(kind, _arguments(call.arguments), f"the model called {call.name}")

    def conclude(self, state: AgentState, why: str) -> Action:
        """Tell the model to stop searching and answer now (tools disabled); its text is the draft."""
        self._report(state)
        for call in self.pending:  # calls the loop will not run
            self.messages.append(self._result(call, {"ok": False, "refused": f"not run: {why}"}))
        self.pending = []
        self.messages.append(
            {
                "role": "user",
                "content": f"Stop searching ({why}). Answer now from the "
                "evidence above with inline [doc_id#anchor] citations, or say what is missing.",
            }
        )
        reply = self._ask(use_tools=False)
        return self._draft(state, reply.text, why)

    # -- helpers ------------------------------------------------------------------------------
    def _report(self, state: AgentState) -> None:
        """Hand the result of the step the loop just ran back to the model, as a tool result."""
        new = state.steps[self.seen_steps :]
        self.seen_steps = len(state.steps)
        if self.waiting is None or not new:
            return
        step = new[-1]
        response = {"ok": False, "refused": step.refused} if step.refused else step.response
        self.messages.append(self._result(self.waiting, response))
        self.waiting = None

    def _result(self, call: ToolCall, response: dict[str, Any]) -> dict[str, Any]:
        view = for_model(response) if "trace" in response else response
        content = wrap_untrusted(
            json.dumps(view, ensure_ascii=False, default=str), source=f"ragkit:{call.name}"
        )
        return {
            "role": "tool",
            "tool_call_id": call.id,
            "name": call.name,
            "content": content,
            "is_error": not response.get("ok", False),
        }

    def _ask(self, *, use_tools: bool) -> Reply:
        reply = self.client.complete(self.messages, self.specs, self.system, use_tools=use_tools)
        self.requests += 1
        self.input_tokens += reply.usage.input_tokens
        self.output_tokens += reply.usage.output_tokens
        return reply

    def _draft(self, state: AgentState, text: str, why: str) -> Action:
        """The model's final text: no citation -> an abstention; else an answer checked by resolution."""
        text = (text or "").strip()
        if not CITATION_RE.search(text):
            words = f" The model said: {text}" if text else " The model gave no answer."
            answer = "Not answered: the model's reply cites no evidence." + words
            return Action("abstain", {"answer": answer}, why)
        record = resolve(state.task, state.delivered(), as_of=state.as_of, caller=state.caller)
        decision = record.decision
        if decision is not None and decision.kind in ("time", "amount", "date", "id"):
            said = read_values(text, decision.kind)
            if said and said[0].value != decision.value:
                return Action(
                    "abstain",
                    {
                        "answer": (
                            f"Not answered: the model's draft asserts {said[0].surface}, but resolving the "
                            f"delivered evidence selects {decision.surface} from {decision.citation} "
                            f"({decision.quote.strip()}). Confirm which source governs before relying on "
                            f"either. Draft: {text}"
                        )
                    },
                    why,
                    record=record,
                )
        return Action("answer", {"answer": text}, why, record=record)


class LLMPolicy:
    """A policy driven by a chat model with native tool calling (see the module docstring).

    Args:
        client: a :class:`ragkit.agent.llm.LLMClient` (e.g. ``ragkit.agent.llm.configured()``).
        system: the system prompt (default: :func:`system_prompt` for the toolbox's caller).

    Attributes:
        last_run: the :class:`LLMRun` of the latest task (its conversation, requests and tokens).
    """

    def __init__(self, client: LLMClient, *, system: str | None = None):
        if client is None or not hasattr(client, "complete"):
            raise ValidationError(
                "LLMPolicy needs an LLM client (ragkit.agent.llm.configured() returned None: set "
                "RAGKIT_LLM, or use the offline policy)",
                field="client",
            )
        self.client = client
        self.system = system
        self.name = f"llm:{getattr(client, 'provider', '?')}:{getattr(client, 'model', '?')}"
        self.last_run: LLMRun | None = None

    def begin(self, state: AgentState) -> LLMRun:
        """Start the conversation: the system prompt for the caller, the tool schemas and the task."""
        system = self.system if self.system is not None else system_prompt(state.caller, state.as_of)
        run = LLMRun(self.client, system, list(TOOL_SPECS.values()))
        run.messages.append({"role": "user", "content": state.task})
        self.last_run = run
        return run


def _arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return {"_raw": arguments}
        return value if isinstance(value, dict) else {"_raw": arguments}
    return dict(arguments or {})
