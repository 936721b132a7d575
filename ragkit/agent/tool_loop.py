"""A model answers one question with the retrieval tools: the plain tool loop of ``ragkit ask``.

:func:`run_tool_loop` sends the three tool schemas (generated from :mod:`ragkit.tools.schemas`),
executes every tool call the model makes through :meth:`ragkit.tools.toolbox.Toolbox.call` (in
the toolbox's fixed scope), returns each result wrapped by
:func:`ragkit.text.untrusted.wrap_untrusted`, and stops when the model answers (or, after
``max_turns`` rounds of tool calls, asks it to answer without tools). :func:`prepare_ask` checks
every input of ``ragkit ask`` before any request; :func:`format_result` prints the transcript.
Unlike :class:`ragkit.agent.loop.Agent`, this loop has no search cap or citation check: it is
the baseline an external agent would run.

Example:
    >>> client = client_from_env()                                  # doctest: +SKIP
    >>> result = run_tool_loop(client, toolbox, "EUR cutoff for acme?")   # doctest: +SKIP
    >>> result.answer, [c["name"] for c in result.tool_calls]       # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ragkit.agent.llm import LLMClient, LLMError, Usage, arguments_object, client_from_env
from ragkit.core.records import parse_time
from ragkit.core.scope import Scope
from ragkit.index.index import Index
from ragkit.text.untrusted import SYSTEM_NOTE, wrap_untrusted
from ragkit.tools.responses import for_model
from ragkit.tools.toolbox import Toolbox

__all__ = ["system_prompt", "LoopResult", "run_tool_loop", "answer_with_llm", "prepare_ask", "format_result"]


def system_prompt(toolbox: Toolbox, as_of: str | None = None) -> str:
    """The system prompt of :func:`run_tool_loop`: how to use the tools, cite, abstain, and the trust note."""
    when = (f" Answer as of {as_of}: pass valid_at=\"{as_of}\" to search_knowledge." if as_of else "")
    return ("You answer questions from a document collection using the retrieval tools, as the caller "
            f"({toolbox.scope}). Search before answering; search again with other words or identifiers when "
            "results do not answer the question; read a section with retrieve_documents when an excerpt is "
            "not enough. Cite every claim inline as [doc_id#anchor] from tool results. Prefer documents "
            "that are valid at the asked date and not superseded. If the evidence is insufficient, say so "
            f"and name what is missing instead of guessing.{when} {SYSTEM_NOTE}")


@dataclass
class LoopResult:
    """One question answered by a model with the tools: the answer and the tool-call transcript."""

    question: str
    answer: str
    model: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    stopped: str = "answer"   # "answer", or "max_turns" when the model was asked to answer without tools
    usage: Usage = Usage()
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "usage": asdict(self.usage)}


def run_tool_loop(client: LLMClient, toolbox: Toolbox, question: str, *, max_turns: int = 6,
                  as_of: str | None = None, system: str | None = None) -> LoopResult:
    """Ask ``question``; execute the model's tool calls through ``toolbox`` until it answers.

    Each round the model may call several tools; each call runs through
    :meth:`Toolbox.call` (never raises; a bad call returns a structured error the model can
    fix) and its result goes back wrapped as untrusted evidence. After ``max_turns``
    rounds of tool calls the model is asked once more, with tools disabled, to answer.
    The transcript keeps every call's arguments and full response (trace included).
    """
    if not question.strip():
        raise LLMError("the question is empty")
    t0 = time.perf_counter()
    specs = list(toolbox.specs.values())
    prompt = system if system is not None else system_prompt(toolbox, as_of)
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    result = LoopResult(question, "", f"{client.provider}:{client.model}")
    for turn in range(max_turns + 1):
        reply = client.complete(messages, specs, prompt, use_tools=turn < max_turns)
        result.usage += reply.usage
        result.turns = turn + 1
        if not reply.tool_calls or turn == max_turns:
            result.answer = reply.text
            result.stopped = "answer" if turn < max_turns else "max_turns"
            break
        messages.append({"role": "assistant", "content": reply.text, "tool_calls": list(reply.tool_calls)})
        for call in reply.tool_calls:
            response = toolbox.call(call.name, call.arguments)
            result.tool_calls.append({"turn": turn + 1, "id": call.id, "name": call.name,
                                      "arguments": arguments_object(call.arguments), "ok": response["ok"],
                                      "tokens": response["tokens"], "response": response})
            content = wrap_untrusted(json.dumps(for_model(response), ensure_ascii=False),
                                     source=f"ragkit:{call.name}")
            messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content,
                             "is_error": not response["ok"]})
    result.seconds = time.perf_counter() - t0
    return result


def answer_with_llm(toolbox: Toolbox, question: str, *, as_of: str | None = None, max_turns: int = 6,
                    env: Mapping[str, str] | None = None) -> LoopResult:
    """Answer ``question`` with the LLM ``RAGKIT_LLM`` names, using ``toolbox``: the ``ragkit ask`` path.

    Returns the final text and the tool-call transcript (:class:`LoopResult`).

    Raises:
        LLMNotConfigured: ``RAGKIT_LLM`` is unset (use the offline agent, :mod:`ragkit.agent.loop`).
        LLMError: a bad setting, a missing key, or an endpoint that cannot be used.
    """
    return run_tool_loop(client_from_env(env=env), toolbox, question, max_turns=max_turns, as_of=as_of)


def prepare_ask(index: Any, tenant: str, groups: str = "", *, as_of: str | None = None,
                env: Mapping[str, str] | None = None) -> tuple[LLMClient, Toolbox, str | None]:
    """Check every input of ``ragkit ask`` before any request: the date, the LLM setting, the index.

    Returns ``(client, toolbox, as_of)`` with ``as_of`` normalised to an ISO date (or ``None``).

    Raises:
        ValidationError: a malformed ``as_of`` or an empty tenant.
        LLMNotConfigured / LLMError: no LLM configured, a bad setting or a missing key.
        IndexStateError: ``index`` is not a readable ragkit index.
    """
    moment = parse_time(as_of, field_name="--as-of")
    scope = Scope(tenant, groups, all_groups=(tenant == "*" and not groups))
    client = client_from_env(env=env)
    toolbox = Toolbox(Index.load(index), scope)
    return client, toolbox, moment.date().isoformat() if moment else None


def format_result(result: LoopResult) -> str:
    """The answer, then one line per tool call and the token usage (for the terminal)."""
    lines = [result.answer.strip() or "(the model returned no text)", ""]
    for call in result.tool_calls:
        state = "ok" if call["ok"] else f"error {call['response']['error']['code']}"
        args = json.dumps(call["arguments"], ensure_ascii=False)
        lines.append(f"  turn {call['turn']}: {call['name']}({args}) -> {state}, {call['tokens']} tokens")
    budget = " (tool budget used up: answered without tools)" if result.stopped == "max_turns" else ""
    lines.append(f"  {result.model}: {result.turns} requests, {result.usage.input_tokens} input + "
                 f"{result.usage.output_tokens} output tokens, {result.seconds:.1f} s{budget}")
    return "\n".join(lines)
