"""The agent: its records, the loop, the offline and LLM policies, and the LLM clients.

Modules, bottom to top (import-linter's ``ragkit.agent`` contract in ``pyproject.toml``):
:mod:`~ragkit.agent.state` (the records a policy sees and proposes, and the policy protocol),
:mod:`~ragkit.agent.llm` (LLM clients), :mod:`~ragkit.agent.result` (what a run returns),
:mod:`~ragkit.agent.offline` and :mod:`~ragkit.agent.llm_policy` (the policies), and
:mod:`~ragkit.agent.loop` (the :class:`Agent` that runs a policy under its guards). Every policy
runs in that one loop, with its search cap, loop refusal, decision record and citation checks:
``ragkit ask`` runs ``Agent(toolbox, LLMPolicy(client))`` when ``RAGKIT_LLM`` is set and the
offline policy otherwise.
"""

from ragkit.agent.llm import (
    PROVIDERS,
    AnthropicMessages,
    LLMClient,
    LLMError,
    LLMNotConfigured,
    LocalLlama,
    OpenAIChat,
    Reply,
    ToolCall,
    Usage,
    client_from_env,
    configured,
)
from ragkit.agent.llm_policy import CITE_NUDGE, KIND_OF_TOOL, LLMPolicy, LLMRun, calls_in_text, system_prompt
from ragkit.agent.loop import Agent, ask_offline
from ragkit.agent.offline import CONTRADICTION_TERMS, Judgement, OfflinePolicy, OfflineRun, abstention_text
from ragkit.agent.result import AgentResult
from ragkit.agent.state import ACTIONS, PLACEMENTS, Action, AgentState, EvidenceUse, Policy, PolicyRun, Step

__all__ = [
    "ACTIONS",
    "Action",
    "Agent",
    "AgentResult",
    "AgentState",
    "AnthropicMessages",
    "CITE_NUDGE",
    "CONTRADICTION_TERMS",
    "EvidenceUse",
    "Judgement",
    "KIND_OF_TOOL",
    "LLMClient",
    "LLMError",
    "LLMNotConfigured",
    "LLMPolicy",
    "LLMRun",
    "LocalLlama",
    "OfflinePolicy",
    "OfflineRun",
    "OpenAIChat",
    "PLACEMENTS",
    "PROVIDERS",
    "Policy",
    "PolicyRun",
    "Reply",
    "Step",
    "ToolCall",
    "Usage",
    "abstention_text",
    "ask_offline",
    "calls_in_text",
    "client_from_env",
    "configured",
    "system_prompt",
]
