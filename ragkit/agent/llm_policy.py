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
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ragkit.agent.llm import ContextFull, LLMClient, Reply, ToolCall
from ragkit.agent.state import Action, AgentState
from ragkit.core.errors import ValidationError
from ragkit.core.scope import Scope
from ragkit.evidence.citations import CITATION_RE
from ragkit.evidence.resolution import resolve
from ragkit.text.untrusted import SYSTEM_NOTE, wrap_untrusted
from ragkit.text.values import read_values
from ragkit.tools.responses import as_text, for_model
from ragkit.tools.schemas import TOOL_SPECS, ToolSpec

__all__ = ["LLMPolicy", "LLMRun", "KIND_OF_TOOL", "system_prompt", "calls_in_text", "CITE_NUDGE",
           "LOCAL_TOKEN_BUDGET"]

#: Which loop action each tool call becomes.
KIND_OF_TOOL = {"search_knowledge": "search", "retrieve_documents": "fetch", "related_documents": "related"}
_ALWAYS_ON_ID = "always_on_1"
#: Prompt plus generated tokens one task may spend on the local model (about four requests on the
#: course corpus; at roughly 60 prompt tokens a second on two cores, a few minutes at most).
LOCAL_TOKEN_BUDGET = 24_000
#: Sent once when a draft cites nothing (tools off for the reply).
CITE_NUDGE = ("Your answer cites nothing, so it cannot be checked. Which tool result supports it? Reply "
              "with that result's citation in brackets, or say that no result supports it.")
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def calls_in_text(text: str) -> tuple[list[ToolCall], str]:
    r"""Tool calls a model wrote as JSON in its text, and the text without them.

    Small models often answer a tool-enabled request with ``<tool_call>{"name": ..., "arguments":
    ...}</tool_call>`` (Qwen's chat template asks for exactly that), a fenced JSON block, or a bare
    JSON object, instead of the API's ``tool_calls``. Only objects that name one of the three
    tools and carry an ``arguments`` object count; anything else stays text.

    Example:
        >>> calls, rest = calls_in_text('<tool_call>\n{"name": "search_knowledge", '
        ...                             '"arguments": {"query": "EUR cutoff"}}\n</tool_call>')
        >>> calls[0].name, calls[0].arguments, rest
        ('search_knowledge', {'query': 'EUR cutoff'}, '')
    """
    found: list[ToolCall] = []
    rest = text
    candidates = [(m.group(0), m.group(1)) for m in _TAGGED.finditer(text)]
    candidates += [(m.group(0), m.group(1)) for m in _FENCED.finditer(text)]
    stripped = text.strip()
    if not candidates and stripped.startswith("{") and stripped.endswith("}"):
        candidates.append((text, stripped))
    for whole, body in candidates:
        try:
            obj = json.loads(body)
        except json.JSONDecodeError:
            continue
        named = isinstance(obj, dict) and obj.get("name") in KIND_OF_TOOL
        if not (named and isinstance(obj.get("arguments"), dict)):
            continue
        found.append(ToolCall(f"text_call_{len(found) + 1}", obj["name"], obj["arguments"]))
        rest = rest.replace(whole, "")
    return found, rest.strip()


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
        "Pass only the arguments a call needs (usually just the query); add a filter only when the "
        "question asks for it. "
        "Cite every claim inline as [doc_id#anchor], copying the \"citation\" field of the tool result it "
        "comes from: every citation is checked "
        "against the evidence the tools delivered in this conversation, and an answer whose citations "
        "do not check is withheld. Answer in one or two sentences, each ending with the bracketed "
        "citation of the result it comes from. Prefer documents that are valid at the "
        "asked date and not superseded. If the evidence is insufficient, say so and name what is "
        f"missing instead of guessing.{when} {SYSTEM_NOTE}"
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
    text_calls: int = 0  # tool calls the model wrote as JSON in its text (run like native ones)
    cite_retries: int = 0  # times the model was asked to add citations to an uncited draft
    max_cite_retries: int = 1
    force_first_search: bool = False
    token_budget: int | None = None
    view: str = "json"  # how tool results are written for the model: "json" or "text" (as_text)

    def first_search(self, state: AgentState) -> Action:
        """The always-on first search, shown to the model as a search it made.

        With an ``as_of`` date it passes ``valid_at`` (as the system prompt asks the model to do),
        so each result's validity is judged at that date.
        """
        arguments: dict[str, Any] = {"query": state.task}
        if state.as_of:
            arguments["valid_at"] = state.as_of
        self.waiting = ToolCall(_ALWAYS_ON_ID, "search_knowledge", arguments)
        self.messages.append({"role": "assistant", "content": "", "tool_calls": [self.waiting]})
        return Action("search", dict(arguments), "always-on retrieval with the task")

    def next_action(self, state: AgentState) -> Action:
        """The model's next tool call as a loop action; its text as the draft when it stops calling tools."""
        self._report(state)
        if not self.pending:
            spent = self.input_tokens + self.output_tokens
            if self.token_budget is not None and spent >= self.token_budget:
                return self.conclude(state, f"token budget of {self.token_budget} spent ({spent} tokens)")
            searched = any(m.get("tool_calls") for m in self.messages if m["role"] == "assistant")
            force = "search_knowledge" if self.force_first_search and not searched else None
            try:
                reply = self._ask(use_tools=True, force=force)
            except ContextFull as exc:
                return Action("abstain", {"answer": f"Not answered: {exc}"}, "context window full")
            calls, text = list(reply.tool_calls), reply.text
            if not calls:
                calls, text = calls_in_text(reply.text)
                self.text_calls += len(calls)
            if not calls:
                return self._draft(state, reply.text, "the model answered")
            self.messages.append({"role": "assistant", "content": text, "tool_calls": calls})
            self.pending = list(calls)
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
        how = " (written as JSON in its text)" if call.id.startswith("text_call_") else ""
        return Action(kind, _arguments(call.arguments), f"the model called {call.name}{how}")

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
        try:
            reply = self._ask(use_tools=False)
        except ContextFull as exc:
            return Action("abstain", {"answer": f"Not answered: {exc}"}, why)
        text = reply.text
        if not reply.tool_calls:
            _, text = calls_in_text(reply.text)  # a call written after tools were turned off is not an answer
        return self._draft(state, text, why)

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
        if self.view == "text":
            body = as_text(response)
        else:
            body = json.dumps(for_model(response) if "trace" in response else response, ensure_ascii=False,
                              default=str)
        content = wrap_untrusted(body, source=f"ragkit:{call.name}")
        return {
            "role": "tool",
            "tool_call_id": call.id,
            "name": call.name,
            "content": content,
            "is_error": not response.get("ok", False),
        }

    def _ask(self, *, use_tools: bool, force: str | None = None) -> Reply:
        reply = self.client.complete(self.messages, self.specs, self.system, use_tools=use_tools, force=force)
        self.requests += 1
        self.input_tokens += reply.usage.input_tokens
        self.output_tokens += reply.usage.output_tokens
        return reply

    def _ask_to_cite(self, state: AgentState, text: str, why: str) -> Action:
        """One request for the citation of an uncited draft (small models often answer right but cite
        nothing, and repeat themselves when asked to rewrite). The model names the supporting result;
        a reply that is a cited answer of its own replaces the draft, a bare citation is appended to
        it; either way the draft is then checked like any other."""
        self.cite_retries += 1
        self.messages.append({"role": "assistant", "content": text})
        labels = list(dict.fromkeys(str(e.citation) for e in state.delivered()))[:8]
        choices = f" One of: {', '.join(f'[{c}]' for c in labels)}." if labels else ""
        self.messages.append({"role": "user", "content": CITE_NUDGE + choices})
        try:
            reply = self._ask(use_tools=False)
        except ContextFull as exc:
            return Action("abstain", {"answer": f"Not answered: {exc}"}, why)
        self.messages.append({"role": "assistant", "content": reply.text})
        said = calls_in_text(reply.text)[1]
        cited = [m.group(0) for m in CITATION_RE.finditer(said)]
        if cited and len(CITATION_RE.sub("", said).split()) < 4:  # a bare citation: it supports the draft
            said = f"{text.rstrip()} {' '.join(dict.fromkeys(cited[:2]))}"
        return self._draft(state, said, why + "; asked once for a citation")

    def _draft(self, state: AgentState, text: str, why: str) -> Action:
        """The model's final text: no citation -> an abstention; else an answer checked by resolution."""
        text = (text or "").strip()
        if text and not CITATION_RE.search(text) and self.cite_retries < self.max_cite_retries:
            return self._ask_to_cite(state, text, why)
        if not CITATION_RE.search(text):
            words = f" The model said: {text}" if text else " The model gave no answer."
            answer = "Not answered: the model's reply cites no evidence." + words
            return Action("abstain", {"answer": answer}, why)
        record = resolve(state.task, state.delivered(), as_of=state.as_of, caller=state.caller)
        decision = record.decision
        if decision is not None and decision.kind in ("time", "amount", "date", "id"):
            # values the draft states of the asked kind, less those it repeats from the question
            asked = {v.value for v in read_values(state.task, decision.kind)}
            said = [v for v in read_values(text, decision.kind) if v.value not in asked]
            if said and decision.value not in {v.value for v in said}:
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
        force_first_search: make the model's first own turn a ``search_knowledge`` call (the
            request names the tool). Default: on for the local model, whose first turn otherwise
            often answers from memory; off for hosted ones (the hybrid placement searches first anyway).
        token_budget: prompt plus generated tokens one task may spend; when they are spent the model
            is told to answer from what it has. Default: ``RAGKIT_LLM_TOKEN_BUDGET``, else
            :data:`LOCAL_TOKEN_BUDGET` for the local model and none for hosted ones.
        view: how tool results are written for the model: ``"json"`` (:func:`ragkit.tools.for_model`)
            or ``"text"`` (:func:`ragkit.tools.as_text`, labelled blocks, the same fields). Default:
            text for the local model, JSON for hosted ones.

    Attributes:
        last_run: the :class:`LLMRun` of the latest task (its conversation, requests and tokens).
    """

    def __init__(self, client: LLMClient, *, system: str | None = None,
                 force_first_search: bool | None = None, token_budget: int | None = None,
                 view: str | None = None):
        if client is None or not hasattr(client, "complete"):
            raise ValidationError(
                "LLMPolicy needs an LLM client (ragkit.agent.llm.configured() returned None: set "
                "RAGKIT_LLM, or use the offline policy)",
                field="client",
            )
        self.client = client
        self.system = system
        small = getattr(client, "provider", "") == "local"
        self.force_first_search = small if force_first_search is None else force_first_search
        self.view = view or ("text" if small else "json")
        if self.view not in ("json", "text"):
            raise ValidationError(f"view={self.view!r}: use 'json' or 'text'", field="view")
        budget = os.environ.get("RAGKIT_LLM_TOKEN_BUDGET", "")
        self.token_budget = token_budget if token_budget is not None \
            else int(budget) if budget.isdigit() else LOCAL_TOKEN_BUDGET if small else None
        self.name = f"llm:{getattr(client, 'provider', '?')}:{getattr(client, 'model', '?')}"
        self.last_run: LLMRun | None = None

    def begin(self, state: AgentState) -> LLMRun:
        """Start the conversation: the system prompt for the caller, the tool schemas and the task."""
        system = self.system if self.system is not None else system_prompt(state.caller, state.as_of)
        run = LLMRun(self.client, system, list(TOOL_SPECS.values()),
                     force_first_search=self.force_first_search, token_budget=self.token_budget,
                     view=self.view)
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
