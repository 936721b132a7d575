"""The search commands: ``ragkit search``, ``ragkit ask``, ``ragkit tools`` and ``ragkit mcp``.

``search`` runs the funnel as a caller and prints cited hits with per-stage ranks; ``ask``
answers a question with the configured LLM (or the offline reference agent) calling the
retrieval tools; ``tools`` prints the tools' JSON Schemas; ``mcp`` serves them over MCP.
Each function is a Typer command, registered in :mod:`ragkit.app.cli`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragkit.agent.llm import LLMNotConfigured
from ragkit.agent.loop import ask_offline
from ragkit.agent.tool_loop import format_result, prepare_ask, run_tool_loop
from ragkit.app.display import hit_json, json_default, print_result
from ragkit.app.exits import fail
from ragkit.core.errors import RagkitError
from ragkit.core.scope import Filters, Scope
from ragkit.index.index import Index
from ragkit.search.funnel import Funnel
from ragkit.tools.mcp import run_mcp
from ragkit.tools.schemas import ToolSettings, tool_schemas

__all__ = ["search_cmd", "ask_cmd", "tools_cmd", "mcp_cmd"]


def search_cmd(
    query: Annotated[str, typer.Argument(help="what to look for")],
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder (from `ragkit index`)")],
    tenant: Annotated[str, typer.Option(help="caller's tenant ('*' = every tenant)")] = "*",
    groups: Annotated[str, typer.Option(help="caller's ACL groups, comma separated")] = "",
    doc_type: Annotated[str, typer.Option(help="only these source types, comma separated")] = "",
    valid_at: Annotated[str, typer.Option(help="only documents valid at this ISO date")] = "",
    candidates: Annotated[int, typer.Option(help="width of each retriever and of fusion")] = 50,
    deliver: Annotated[int, typer.Option(help="hits to deliver")] = 4,
    rerank_mode: Annotated[str | None, typer.Option(
        help="fuse | rrf | rerank | none (default: the funnel's, fuse)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Search an index as a caller (tenant and groups) and print cited hits with per-stage ranks."""
    try:
        idx = Index.load(index)
        scope = Scope(tenant, groups, all_groups=(tenant == "*" and not groups))
        filters = Filters.make(doc_type=doc_type, valid_at=valid_at or None)
        mode = {"rerank_mode": rerank_mode} if rerank_mode else {}
        result = Funnel(idx).search(query, scope=scope, filters=filters, candidates=candidates,
                                    deliver=deliver, **mode)
    except RagkitError as exc:
        fail(exc)
    if as_json:
        payload = {"query": query, "hits": [hit_json(h) for h in result.hits],
                   "trace": {"timings_ms": result.trace.timings_ms, "tokens": result.trace.tokens,
                             "rows_in_scope": result.trace.rows_in_scope,
                             "candidates": result.trace.to_frame().to_dict(orient="records")}}
        sys.stdout.write(json.dumps(payload, default=json_default) + "\n")
    else:
        print_result(result)


def tools_cmd(
    index: Annotated[Path | None, typer.Option("--index", "-i", help="index folder (checked to exist)")]
    = None,
    fmt: Annotated[str, typer.Option("--format", help="openai | anthropic")] = "openai",
    max_k: Annotated[int, typer.Option(help="server-side ceiling on search_knowledge k")] = 8,
) -> None:
    """Print the retrieval tools' JSON Schemas (OpenAI function calling or Anthropic tool format)."""
    try:
        sys.stdout.write(json.dumps(tool_schemas(fmt, index=index, max_k=max_k), indent=2) + "\n")
    except RagkitError as exc:
        fail(exc)


def mcp_cmd(
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder (from `ragkit index`)")],
    tenant: Annotated[str, typer.Option(help="the caller's tenant, fixed for the session ('*' = all)")],
    groups: Annotated[str, typer.Option(help="the caller's ACL groups, comma separated")] = "",
    max_k: Annotated[int, typer.Option(help="server-side ceiling on search_knowledge k")] = 8,
) -> None:
    """Serve search_knowledge, retrieve_documents and related_documents over MCP (stdio)."""
    try:
        run_mcp(index, tenant, groups, settings=ToolSettings(max_k=max_k, default_k=min(4, max_k)))
    except RagkitError as exc:
        fail(exc)


def ask_cmd(
    question: Annotated[str, typer.Argument(help="the question to answer")],
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder (from `ragkit index`)")],
    tenant: Annotated[str, typer.Option(help="the caller's tenant ('*' = all)")],
    groups: Annotated[str, typer.Option(help="the caller's ACL groups, comma separated")] = "",
    as_of: Annotated[str, typer.Option("--as-of", help="answer as of this ISO date")] = "",
    max_turns: Annotated[int, typer.Option(help="rounds of tool calls before the model must answer")] = 6,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Answer QUESTION with the LLM set in RAGKIT_LLM, which calls the retrieval tools in your scope.

    With no LLM configured (RAGKIT_LLM unset), the offline reference agent answers instead
    (ragkit.agent.loop, hybrid placement, offline policy): its trace, decision record and verified
    citations are printed.
    """
    try:
        if max_turns < 0:
            raise ValueError(f"--max-turns={max_turns} must be 0 or more")
        client, toolbox, day = prepare_ask(index, tenant, groups, as_of=as_of or None)
    except LLMNotConfigured:
        try:
            offline = ask_offline(Index.load(index), question, tenant=tenant, groups=groups,
                                  as_of=as_of or None)
        except RagkitError as exc:
            fail(exc)
        if as_json:
            sys.stdout.write(json.dumps(offline.to_json(), default=json_default) + "\n")
        else:
            typer.echo(str(offline))
        return
    except (RagkitError, ValueError) as exc:
        fail(exc)
    try:
        result = run_tool_loop(client, toolbox, question, max_turns=max_turns, as_of=day)
    except RagkitError as exc:
        fail(exc, 1)
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), default=json_default) + "\n")
    else:
        typer.echo(format_result(result))
