"""The provider-neutral parts of an LLM client: messages, tool calls, replies, errors, and the
chat-completions wire format.

:class:`LLMClient` is the one interface every client implements (``complete(messages, tools,
system)`` returns a :class:`Reply`); :func:`openai_messages` writes ragkit's provider-neutral
messages in the chat-completions format that OpenAI, OpenAI-compatible servers and llama.cpp
read. The clients themselves are in :mod:`ragkit.agent.llm` (hosted and HTTP) and
:mod:`ragkit.agent.llm_local` (a GGUF model in this process).

Example:
    >>> openai_messages([{"role": "user", "content": "hi"}], "Be brief.")
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'hi'}]
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragkit.core.errors import RagkitError
from ragkit.tools.schemas import TOOL_SPECS, ToolSpec

__all__ = ["LLMError", "LLMNotConfigured", "ContextFull", "ToolCall", "Usage", "Reply", "LLMClient",
           "arguments_object", "openai_messages", "openai_choice", "as_specs"]


class LLMError(RagkitError):
    """The LLM endpoint could not be used: unreachable, key missing or rejected, rate limited."""


class LLMNotConfigured(LLMError):
    """No LLM is configured (``RAGKIT_LLM`` is unset)."""


class ContextFull(LLMError):
    """The conversation no longer fits the model's context window."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asked for; ``arguments`` as the model sent them (JSON text or object)."""

    id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class Usage:
    """Tokens the endpoint reported for one request (or a sum of them)."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@dataclass(frozen=True)
class Reply:
    """One model turn: its text, the tool calls it asked for, usage, and why it stopped."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    stop: str = ""


class LLMClient:
    """Messages and tools in, :class:`Reply` out.

    Messages are provider-neutral dicts: ``{"role": "user", "content": str}``,
    ``{"role": "assistant", "content": str, "tool_calls": [ToolCall, ...]}`` and
    ``{"role": "tool", "tool_call_id": str, "name": str, "content": str, "is_error": bool}``.
    """

    provider = ""
    model = ""
    base_url = ""
    max_retries = 0
    _base_var = ""
    _key_var = ""

    def chat(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None = None, *,
             system: str = "", use_tools: bool = True) -> Reply:
        """:meth:`complete` with looser inputs: ``{"role": "system"}`` messages become the system prompt;
        ``tools`` may be :class:`~ragkit.tools.schemas.ToolSpec` objects or dicts in OpenAI or Anthropic
        format (default: the three ragkit tools)."""
        prompt = [system] if system else []
        prompt += [str(m["content"]) for m in messages if m["role"] == "system"]
        rest = [m for m in messages if m["role"] != "system"]
        return self.complete(rest, as_specs(tools), "\n\n".join(prompt), use_tools=use_tools)

    def complete(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec], system: str = "",
                 *, use_tools: bool = True, force: str | None = None) -> Reply:
        """One request. ``use_tools=False`` sends the tools but asks the model not to call them;
        ``force`` names the one tool the model must call in this turn."""
        try:
            # force goes by keyword and only when set: clients written before it (e.g. a scripted
            # stand-in with _complete(messages, tools, system, use_tools)) keep working
            return self._complete(messages, tools, system, use_tools, **({"force": force} if force else {}))
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - SDK errors become one clear ragkit error
            raise self._explain(exc) from exc

    def _complete(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec], system: str,
                  use_tools: bool, force: str | None = None) -> Reply:
        raise NotImplementedError

    def _explain(self, exc: Exception) -> LLMError:
        kind = type(exc).__name__
        status = getattr(exc, "status_code", None)
        where = f"the {self.provider} endpoint at {self.base_url}"
        if kind in ("APIConnectionError", "APITimeoutError"):
            return LLMError(f"cannot reach {where} ({exc}); start the server (Ollama: `ollama serve`) or "
                            f"set {self._base_var} to a reachable URL")
        if status in (401, 403):
            return LLMError(f"{where} rejected the key (HTTP {status}); check {self._key_var}")
        if status == 429:
            return LLMError(f"{where} is still rate limiting (HTTP 429) after {self.max_retries} retries; "
                            "wait, or raise RAGKIT_LLM_MAX_RETRIES")
        if status is not None:
            return LLMError(f"{where} answered HTTP {status} for model {self.model!r}: {exc}")
        return LLMError(f"{where} failed: {kind}: {exc}")


def openai_messages(messages: Sequence[Mapping[str, Any]], system: str = "", *,
                    object_arguments: bool = False) -> list[dict[str, Any]]:
    """Provider-neutral messages in the chat-completions format, the system prompt first.

    An assistant turn's empty content is sent as ``""`` (some servers reject ``null``); tool call
    arguments go as JSON text, or as objects with ``object_arguments`` (a chat template that
    writes them with ``tojson`` would quote JSON text twice).

    Example:
        >>> openai_messages([{"role": "assistant", "content": None, "tool_calls": [
        ...     ToolCall("c1", "search_knowledge", {"query": "x"})]}])[0]["content"]
        ''
    """
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m["role"] == "assistant":
            asked = [{"id": c.id, "type": "function", "function": {
                "name": c.name,
                "arguments": arguments_object(c.arguments) if object_arguments
                else c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)}}
                for c in m.get("tool_calls", ())]
            wire.append({"role": "assistant", "content": m.get("content") or "",
                         **({"tool_calls": asked} if asked else {})})
        elif m["role"] == "tool":
            wire.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
        else:
            wire.append({"role": m["role"], "content": m["content"]})
    return wire


def openai_choice(use_tools: bool, force: str | None) -> Any:
    """The chat-completions ``tool_choice``: ``"none"``, ``"auto"``, or the one tool ``force`` names."""
    if not use_tools:
        return "none"
    return {"type": "function", "function": {"name": force}} if force else "auto"


def as_specs(tools: Sequence[Any] | None) -> list[ToolSpec]:
    """``tools`` as :class:`ToolSpec` objects (ToolSpecs, OpenAI or Anthropic dicts; default: all three)."""
    if tools is None:
        return list(TOOL_SPECS.values())
    out = []
    for t in tools:
        if isinstance(t, ToolSpec):
            out.append(t)
        elif isinstance(t, Mapping) and t.get("type") == "function":
            f = t["function"]
            out.append(ToolSpec(f["name"], f.get("description", ""), f.get("parameters", {}), {}))
        elif isinstance(t, Mapping) and "input_schema" in t:
            out.append(ToolSpec(t["name"], t.get("description", ""), t["input_schema"], {}))
        else:
            raise LLMError(f"cannot read tool {t!r}: give a ToolSpec or a tool in OpenAI or Anthropic format")
    return out


def arguments_object(arguments: Any) -> Any:
    """A tool call's arguments as an object: JSON text parsed (``{"_unparsed": text}`` if it is not JSON)."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except json.JSONDecodeError:
            return {"_unparsed": arguments}
    return arguments
