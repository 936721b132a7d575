"""Real LLM clients for the retrieval tools: OpenAI-compatible chat completions and Anthropic Messages.

One small interface, :class:`LLMClient`: ``complete(messages, tools, system)`` returns a
:class:`Reply` (text or tool calls, and the token usage the endpoint reported). Two
implementations use the official SDKs: :class:`OpenAIChat` (OpenAI, and any
OpenAI-compatible server through its base URL: Ollama, vLLM, llama.cpp server) and
:class:`AnthropicMessages`; :class:`LocalLlama` runs a GGUF model in this process with
``llama-cpp-python`` and the same chat-completions messages. :func:`client_from_env` picks
one from a single setting::

    RAGKIT_LLM=openai:gpt-4.1-mini        key OPENAI_API_KEY, base URL OPENAI_BASE_URL (optional)
    RAGKIT_LLM=ollama:qwen2.5:7b          http://localhost:11434/v1, or OLLAMA_HOST; no key needed
    RAGKIT_LLM=anthropic:claude-sonnet-4-6  key ANTHROPIC_API_KEY, base URL ANTHROPIC_BASE_URL (optional)
    RAGKIT_LLM=local                      Qwen2.5-Coder-1.5B-Instruct on the CPU, in process, no key
                                          (./run setup-llm; ragkit.agent.llm_local)

``RAGKIT_LLM_TIMEOUT`` (seconds, default 60) and ``RAGKIT_LLM_MAX_RETRIES`` (default 3)
set the per-request timeout and the number of retries; the SDKs retry 408/409/429/5xx
and connection errors with exponential backoff (0.5 s doubling to 8 s, with jitter, or
the server's ``Retry-After``). An unreachable endpoint, a missing or rejected key, and a
rate limit that outlasts the retries each raise :class:`LLMError` saying what to set.

The LLM policy of the agent loop (:class:`ragkit.agent.llm_policy.LLMPolicy`, which ``ragkit ask``
runs when ``RAGKIT_LLM`` is set) uses these clients.

The tests of this module (tests/test_llm.py) are wire-format tests: a real HTTP server
on loopback replays request/response pairs in each API's format through the real SDKs.
They check the protocol, not the quality of any model's answers.

Example:
    >>> client_from_env(env={"RAGKIT_LLM": "ollama:qwen2.5:7b"}).base_url
    'http://localhost:11434/v1/'
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragkit.agent.llm_local import LocalLlama
from ragkit.agent.llm_wire import (
    ContextFull,
    LLMClient,
    LLMError,
    LLMNotConfigured,
    Reply,
    ToolCall,
    Usage,
    arguments_object,
    openai_choice,
    openai_messages,
)
from ragkit.core.errors import ModelNotAvailable
from ragkit.models.local_llm import PINNED, local_model_path
from ragkit.tools.schemas import ToolSpec

__all__ = ["LLMError", "LLMNotConfigured", "ContextFull", "ToolCall", "Usage", "Reply", "LLMClient",
           "OpenAIChat", "AnthropicMessages", "LocalLlama", "client_from_env", "PROVIDERS", "configured",
           "arguments_object", "openai_messages"]

PROVIDERS = ("openai", "ollama", "anthropic", "local")
_EXAMPLES = "RAGKIT_LLM=openai:gpt-4.1-mini, ollama:qwen2.5:7b, anthropic:claude-sonnet-4-6 or local"


class OpenAIChat(LLMClient):
    """Chat completions with function calling, via the official ``openai`` SDK (any compatible server)."""

    provider = "openai"
    _base_var = "OPENAI_BASE_URL"
    _key_var = "OPENAI_API_KEY"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, timeout: float = 60.0,
                 max_retries: int = 3, provider: str = "openai"):
        import openai

        self.model, self.provider, self.max_retries = model, provider, max_retries
        if provider == "ollama":
            self._base_var, self._key_var = "OLLAMA_HOST", "OLLAMA_HOST"
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout,
                                     max_retries=max_retries)
        self.base_url = str(self._client.base_url)

    def _complete(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec], system: str,
                  use_tools: bool, force: str | None = None) -> Reply:
        wire = openai_messages(messages, system)
        create: Any = self._client.chat.completions.create  # plain dicts, not the SDK's TypedDicts
        resp = create(model=self.model, messages=wire, tools=[t.openai() for t in tools],
                      tool_choice=openai_choice(use_tools, force))
        choice = resp.choices[0]
        calls = tuple(ToolCall(c.id, c.function.name, c.function.arguments)
                      for c in (choice.message.tool_calls or ()) if getattr(c, "function", None))
        usage = Usage(resp.usage.prompt_tokens, resp.usage.completion_tokens) if resp.usage else Usage()
        return Reply(choice.message.content or "", calls, usage, choice.finish_reason or "")


class AnthropicMessages(LLMClient):
    """The Messages API with tool use, via the official ``anthropic`` SDK."""

    provider = "anthropic"
    _base_var = "ANTHROPIC_BASE_URL"
    _key_var = "ANTHROPIC_API_KEY"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, timeout: float = 60.0,
                 max_retries: int = 3, max_tokens: int = 2048):
        import anthropic

        self.model, self.max_retries, self.max_tokens = model, max_retries, max_tokens
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout,
                                           max_retries=max_retries)
        self.base_url = str(self._client.base_url)

    def _complete(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec], system: str,
                  use_tools: bool, force: str | None = None) -> Reply:
        wire: list[dict[str, Any]] = []
        for m in messages:
            if m["role"] == "assistant":
                blocks: list[dict[str, Any]] = [{"type": "text", "text": m["content"]}] \
                    if m.get("content") else []
                blocks += [{"type": "tool_use", "id": c.id, "name": c.name,
                            "input": arguments_object(c.arguments)} for c in m.get("tool_calls", ())]
                wire.append({"role": "assistant", "content": blocks})
            elif m["role"] == "tool":
                block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"],
                         "is_error": bool(m.get("is_error"))}
                if wire and wire[-1]["role"] == "user" and isinstance(wire[-1]["content"], list):
                    wire[-1]["content"].append(block)  # results of one turn's calls go in one user message
                else:
                    wire.append({"role": "user", "content": [block]})
            else:
                wire.append({"role": "user", "content": m["content"]})
        create: Any = self._client.messages.create  # plain dicts, not the SDK's TypedDicts
        resp = create(model=self.model, max_tokens=self.max_tokens, system=system, messages=wire,
                      tools=[t.anthropic() for t in tools],
                      tool_choice={"type": "tool", "name": force} if force and use_tools
                      else {"type": "auto"} if use_tools else {"type": "none"})
        text = "".join(b.text for b in resp.content if b.type == "text")
        calls = tuple(ToolCall(b.id, b.name, b.input) for b in resp.content if b.type == "tool_use")
        usage = Usage(resp.usage.input_tokens, resp.usage.output_tokens)
        return Reply(text, calls, usage, resp.stop_reason or "")


def configured(env: Mapping[str, str] | None = None) -> LLMClient | None:
    """The client ``RAGKIT_LLM`` names, or ``None`` when no LLM is configured (use the offline agent).

    Raises:
        LLMError: ``RAGKIT_LLM`` is set but unusable (unknown provider, missing key).
    """
    try:
        return client_from_env(env=env)
    except LLMNotConfigured:
        return None


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "")
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise LLMError(f"{name}={raw!r} is not a number") from None
    if value < 0:
        raise LLMError(f"{name}={raw!r} must be >= 0")
    return value


def _local_client(model: str, env: Mapping[str, str]) -> LocalLlama:
    """``RAGKIT_LLM=local`` (the pinned model) or ``local:/path/to/model.gguf`` (a file of your own)."""
    if model and model not in ("qwen2.5-coder-1.5b", PINNED.file_name):
        path = Path(model).expanduser()
        if not path.is_file():
            raise LLMError(f"RAGKIT_LLM=local:{model}: no such GGUF file; write RAGKIT_LLM=local for the "
                           "pinned model, or local:/path/to/model.gguf")
    else:
        try:
            path = local_model_path()
        except ModelNotAvailable as exc:
            raise LLMError(f"RAGKIT_LLM=local: {exc}") from exc
    threads = int(_number(env, "RAGKIT_LLM_THREADS", 0)) or None
    return LocalLlama(path, threads=threads, context=int(_number(env, "RAGKIT_LLM_CONTEXT", 16384)),
                      max_output=int(_number(env, "RAGKIT_LLM_MAX_OUTPUT", 512)))


def client_from_env(spec: str | None = None, env: Mapping[str, str] | None = None) -> LLMClient:
    """The client ``spec`` (default: ``RAGKIT_LLM``) names, configured from the usual variables.

    Raises:
        LLMNotConfigured: no spec and ``RAGKIT_LLM`` unset.
        LLMError: an unknown provider, or a missing key (the message names the variable).
    """
    env = os.environ if env is None else env
    spec = spec or env.get("RAGKIT_LLM", "").strip()
    if not spec:
        raise LLMNotConfigured(f"no LLM is configured: set {_EXAMPLES} (with OPENAI_API_KEY or "
                               "ANTHROPIC_API_KEY), or run the offline reference agent, which needs no LLM "
                               "(ragkit.agent.loop.Agent)")
    provider, _, model = spec.partition(":")
    if provider == "local":
        return _local_client(model, env)
    if provider not in PROVIDERS or not model:
        raise LLMError(f"RAGKIT_LLM={spec!r}: write provider:model with provider one of {PROVIDERS}, e.g. "
                       f"{_EXAMPLES}")
    timeout = _number(env, "RAGKIT_LLM_TIMEOUT", 60.0)
    retries = int(_number(env, "RAGKIT_LLM_MAX_RETRIES", 3))
    if provider == "anthropic":
        key = env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")
        if not key:
            raise LLMError(f"RAGKIT_LLM={spec} needs an API key: set ANTHROPIC_API_KEY")
        return AnthropicMessages(model, api_key=key, base_url=env.get("ANTHROPIC_BASE_URL") or None,
                                 timeout=timeout, max_retries=retries)
    if provider == "ollama":
        host = env.get("OLLAMA_HOST") or "localhost:11434"
        host = host if "://" in host else f"http://{host}"
        return OpenAIChat(model, api_key="ollama", base_url=host.rstrip("/") + "/v1", timeout=timeout,
                          max_retries=retries, provider="ollama")
    base = env.get("OPENAI_BASE_URL") or None
    key = env.get("OPENAI_API_KEY")
    if not key and base is None:
        raise LLMError(f"RAGKIT_LLM={spec} needs an API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a "
                       "local OpenAI-compatible server such as vLLM or llama.cpp)")
    return OpenAIChat(model, api_key=key or "not-needed", base_url=base, timeout=timeout, max_retries=retries)
