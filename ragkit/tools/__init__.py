"""The agent-facing tool contract (search_knowledge, retrieve_documents, related_documents) and the MCP server."""

from ragkit.tools.mcp import build_server, caller_scope, read_tool_text, run_mcp, serve_stdio, tool_result
from ragkit.tools.toolbox import (
    TOOL_NAMES,
    TOOL_PARAMS,
    TOOL_SPECS,
    ToolArgumentError,
    Toolbox,
    ToolSettings,
    ToolSpec,
    anthropic_tools,
    for_model,
    openai_tools,
    tool_schemas,
)

__all__ = [
    "TOOL_NAMES",
    "TOOL_PARAMS",
    "TOOL_SPECS",
    "ToolArgumentError",
    "ToolSettings",
    "ToolSpec",
    "Toolbox",
    "anthropic_tools",
    "build_server",
    "caller_scope",
    "for_model",
    "openai_tools",
    "read_tool_text",
    "run_mcp",
    "serve_stdio",
    "tool_result",
    "tool_schemas",
]
