"""The agent-facing tool contract (search_knowledge, retrieve_documents, related_documents), and MCP.

``schemas`` defines the tools once (settings, specs, provider formats); ``arguments`` checks a
call; ``toolbox`` binds the tools to an index and a caller; ``reading`` answers the tools that
take ids; ``responses`` shapes what a model is shown; ``mcp`` serves the tools over stdio.
"""

from ragkit.tools.arguments import ToolArgumentError
from ragkit.tools.mcp import build_server, caller_scope, read_tool_text, run_mcp, serve_stdio, tool_result
from ragkit.tools.reading import DocumentReader
from ragkit.tools.responses import as_text, for_model
from ragkit.tools.schemas import (
    TOOL_NAMES,
    TOOL_PARAMS,
    TOOL_SPECS,
    ToolSettings,
    ToolSpec,
    anthropic_tools,
    openai_tools,
    tool_schemas,
    tool_specs,
)
from ragkit.tools.toolbox import Toolbox

__all__ = [
    "DocumentReader",
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
    "as_text",
    "openai_tools",
    "read_tool_text",
    "run_mcp",
    "serve_stdio",
    "tool_result",
    "tool_schemas",
    "tool_specs",
]
