"""The three retrieval tools over MCP (stdio), for Claude Desktop or any MCP host.

``ragkit mcp --index IDX --tenant T --groups G`` serves ``search_knowledge``,
``retrieve_documents`` and ``related_documents`` with the official ``mcp`` Python SDK
(low-level :class:`mcp.server.lowlevel.Server`, so that ragkit's own validation, not the
SDK's, answers bad arguments with a structured error). The caller scope is fixed from the
command line when the server starts; no tool argument and no client message can change
it (a ``tenant`` argument only narrows, see :mod:`ragkit.tools.toolbox`).

Each call returns:

- ``content``: one text block, the response a model should see (:func:`ragkit.tools.responses.for_model`)
  as JSON wrapped in ``<untrusted_evidence>`` delimiters (:func:`ragkit.text.untrusted.wrap_untrusted`);
- ``structuredContent``: the same response as a JSON object, for programs;
- ``isError``: true when the call was refused (bad argument, out of scope, unknown id);
- ``_meta["ragkit/trace"]``: the call's trace (funnel ranks and timings), kept out of the model's view.

Register it in an MCP host (e.g. ``claude_desktop_config.json``)::

    {"mcpServers": {"ragkit": {
      "command": "/path/to/ragkit/.venv/bin/ragkit",
      "args": ["mcp", "--index", "/path/to/.ragkit-cache/index-docs",
               "--tenant", "acme", "--groups", "ops"]}}}

Example:
    >>> print(caller_scope("acme", "ops,finance"))
    tenant=acme, finance,ops
    >>> server = build_server(Toolbox(index, Scope("acme", ["ops"])))   # doctest: +SKIP
    >>> anyio.run(serve_stdio, server)                                    # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragkit.core.scope import Scope
from ragkit.core.version import __version__
from ragkit.index.live import LiveIndex
from ragkit.text.untrusted import SYSTEM_NOTE, UNTRUSTED_CLOSE, wrap_untrusted
from ragkit.tools.responses import for_model
from ragkit.tools.schemas import ToolSettings
from ragkit.tools.toolbox import Toolbox

if TYPE_CHECKING:  # the SDK costs about 0.4 s to import: it loads when a server is built
    import mcp_types as types
    from mcp.server.lowlevel import Server

__all__ = ["build_server", "serve_stdio", "run_mcp", "tool_result", "read_tool_text", "caller_scope"]

_WRAPPED = re.compile(r'\A<untrusted_evidence source="[^"]*">\n(.*)\n' + re.escape(UNTRUSTED_CLOSE) + r"\Z",
                      re.DOTALL)


def caller_scope(tenant: str, groups: str = "") -> Scope:
    """The scope ``--tenant``/``--groups`` name: ``'*'`` with no groups is the operator (everything)."""
    return Scope(tenant, groups, all_groups=(tenant == "*" and not groups))


def tool_result(response: dict[str, Any]) -> types.CallToolResult:
    """A ragkit tool response as an MCP ``CallToolResult`` (wrapped text, structured copy, trace in _meta)."""
    import mcp_types as types

    view = for_model(response)
    text = wrap_untrusted(json.dumps(view, ensure_ascii=False), source=f"ragkit:{response['tool']}")
    meta = {"ragkit/trace": response.get("trace", {})}
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=view,
                                is_error=not response["ok"], _meta=meta)


def read_tool_text(text: str) -> dict[str, Any]:
    """The JSON response inside a wrapped text block (what a client program reads back)."""
    match = _WRAPPED.match(text)
    return json.loads(match.group(1) if match else text)


def build_server(toolbox: Toolbox, *, name: str = "ragkit") -> Server[Any]:
    """An MCP server exposing ``toolbox``'s three tools; its scope is the toolbox's, fixed."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tools = [types.Tool(name=spec.name, description=spec.description, input_schema=spec.parameters,
                        annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                                          idempotent_hint=True, open_world_hint=False))
             for spec in toolbox.specs.values()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # the work is CPU-bound (retrieval, reranking): keep the event loop free for the protocol
        response = await anyio.to_thread.run_sync(toolbox.call, params.name, params.arguments or {})
        return tool_result(response)

    instructions = (f"Retrieval over a ragkit index as the fixed caller ({toolbox.scope}). Search with "
                    "search_knowledge, read sections with retrieve_documents, follow links with "
                    f"related_documents; cite results as [doc_id#anchor]. {SYSTEM_NOTE}")
    return Server(name, version=__version__, instructions=instructions, on_list_tools=list_tools,
                  on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over stdin/stdout until the client closes the connection."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_mcp(index: Path | Any, tenant: str, groups: str = "", *,
            settings: ToolSettings | None = None) -> None:
    """Serve the tools over stdio as the caller ``tenant``/``groups`` (blocks).

    ``index`` is an index folder, followed live (:class:`~ragkit.index.live.LiveIndex`: every call
    reads the generation committed last, so a sync by another process takes effect on the next
    call), or an index object such as a :class:`~ragkit.backends.milvus.MilvusIndex` (which checks
    its engine's version before each call).

    Raises:
        IndexStateError: the index is missing or damaged (before anything is served).
        ValidationError: an empty tenant.
    """
    import anyio

    scope = caller_scope(tenant, groups)
    source = LiveIndex(index) if isinstance(index, (str, Path)) else index
    toolbox = Toolbox(source, scope, settings=settings)
    anyio.run(serve_stdio, build_server(toolbox))
