"""The search commands: ``ragkit search``, ``ragkit ask``, ``ragkit tools`` and ``ragkit mcp``.

``search`` runs the funnel as a caller and prints cited hits with per-stage ranks; ``ask``
answers a question with the agent loop (:class:`ragkit.agent.loop.Agent`) driven by the
configured LLM (:class:`ragkit.agent.llm_policy.LLMPolicy`) or, with none, the offline policy:
either way under the loop's search cap and loop refusal, with a decision record and citation
verification, and the output says whether the answer verified; ``tools`` prints the tools'
JSON Schemas; ``mcp`` serves them over MCP.
Each function is a Typer command, registered in :mod:`ragkit.app.cli`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragkit.agent.llm import LLMError, configured
from ragkit.agent.llm_policy import LLMPolicy
from ragkit.agent.loop import Agent
from ragkit.agent.result import AgentResult
from ragkit.app.display import hit_json, json_default, print_result
from ragkit.app.exits import fail
from ragkit.app.options import BackendOpt, Collection, MilvusToken, MilvusUri, milvus_config
from ragkit.backends.milvus.index import MilvusIndex
from ragkit.core.errors import RagkitError
from ragkit.core.records import parse_time
from ragkit.core.scope import Filters, Scope, snapshot_filters
from ragkit.index.index import Index
from ragkit.search.funnel import Funnel
from ragkit.tools.mcp import run_mcp
from ragkit.tools.schemas import ToolSettings, tool_schemas
from ragkit.tools.toolbox import Toolbox

__all__ = ["search_cmd", "ask_cmd", "tools_cmd", "mcp_cmd", "verdict"]


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
    tenant: Annotated[str, typer.Option(help="the caller's tenant, fixed for the session ('*' = all)")],
    index: Annotated[Path | None, typer.Option("--index", "-i", help="index folder (from `ragkit index`; "
                                                "followed live: each call reads the generation committed "
                                                "last)")] = None,
    groups: Annotated[str, typer.Option(help="the caller's ACL groups, comma separated")] = "",
    max_k: Annotated[int, typer.Option(help="server-side ceiling on search_knowledge k")] = 8,
    backend: BackendOpt = "memory",
    milvus_uri: MilvusUri = None,
    milvus_token: MilvusToken = None,
    collection: Collection = None,
) -> None:
    """Serve search_knowledge, retrieve_documents and related_documents over MCP (stdio).

    The index is an index folder (each call reads the generation committed last, so a `ragkit sync`
    beside the server takes effect on the next call) or, with --backend milvus, a Milvus collection.
    """
    try:
        config = milvus_config(backend, milvus_uri, milvus_token, collection, index)
        source = MilvusIndex.open(config) if config is not None else (index or Path())
        run_mcp(source, tenant, groups, settings=ToolSettings(max_k=max_k, default_k=min(4, max_k)))
    except (RagkitError, ValueError) as exc:
        fail(exc)


def ask_cmd(
    question: Annotated[str, typer.Argument(help="the question to answer")],
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder (from `ragkit index`)")],
    tenant: Annotated[str, typer.Option(help="the caller's tenant ('*' = all)")],
    groups: Annotated[str, typer.Option(help="the caller's ACL groups, comma separated")] = "",
    as_of: Annotated[str, typer.Option("--as-of", help="answer as of this ISO date")] = "",
    placement: Annotated[str, typer.Option(help="hybrid | tool | pipeline (where retrieval sits)")] \
        = "hybrid",
    max_searches: Annotated[int, typer.Option(help="cap on searches per question")] = 6,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Answer QUESTION with the agent loop, driven by the LLM set in RAGKIT_LLM (or the offline policy).

    The model (or, with RAGKIT_LLM unset, the offline reference policy) calls the retrieval tools
    in your scope, under a cap on searches with repeated searches refused; every citation of the
    answer is checked against the evidence delivered, and an answer that does not verify is
    withheld. The trace, the decision record and the verdict (verified or not) are printed.
    """
    try:
        if not question.strip():
            raise ValueError("the question is empty")
        moment = parse_time(as_of or None, field_name="--as-of")
        client = configured()  # None: no LLM configured; raises on a bad setting or a missing key
        policy = LLMPolicy(client) if client is not None else None
        idx = Index.load(index)
        scope = Scope(tenant, groups, all_groups=(tenant == "*" and not groups))
        box = Toolbox(idx, scope, filters=snapshot_filters(moment) if moment is not None else None)
        agent = Agent(box, policy, placement=placement, max_searches=max_searches)
    except (RagkitError, ValueError) as exc:
        fail(exc)
    try:
        result = agent.run(question, as_of=moment.date().isoformat() if moment else None)
    except LLMError as exc:
        fail(exc, 1)
    except RagkitError as exc:
        fail(exc)
    outcome, says = verdict(result)
    usage = _usage(policy)
    if as_json:
        payload = {**result.to_json(), "verified": outcome == "verified", "outcome": outcome, "verdict": says,
                   **({"model": usage} if usage else {})}
        sys.stdout.write(json.dumps(payload, default=json_default) + "\n")
        return
    typer.echo(str(result))
    typer.echo(says)
    if usage:
        plural = "" if usage["requests"] == 1 else "s"
        typer.echo(f"{usage['name']}: {usage['requests']} request{plural}, {usage['input_tokens']} input + "
                   f"{usage['output_tokens']} output tokens; {usage['text_calls']} tool call(s) written as "
                   f"JSON text, {usage['cite_requests']} request(s) to cite")


def verdict(result: AgentResult) -> tuple[str, str]:
    """Whether ``result`` is a verified answer, in a word and in a sentence for the reader.

    Returns ``("verified", ...)`` when the answer was delivered (the loop delivers an answer only
    when every citation verified), ``("not_verified", ...)`` when a drafted answer failed the
    citation check and was withheld, and ``("abstained", ...)`` otherwise.
    """
    if not result.abstained:
        cited = ", ".join(dict.fromkeys(result.citations))
        return "verified", ("VERIFIED: every citation checks against the evidence delivered in this run "
                             f"({cited}).")
    if result.verification is not None:
        problems = "; ".join(
            f"{', '.join(map(str, c.citations)) or 'no citation'}: {', '.join(c.reasons)}"
            for c in result.verification.claims if not c.ok
        ) or "the answer cites nothing"
        return "not_verified", ("NOT VERIFIED: the drafted answer's citations do not check against the "
                                f"evidence delivered in this run ({problems}); it is withheld, not an "
                                "answer.")
    return "abstained", "NO ANSWER: the agent abstained; nothing above is a verified answer."


def _usage(policy: LLMPolicy | None) -> dict[str, object]:
    run = policy.last_run if policy is not None else None
    if policy is None or run is None:
        return {}
    return {"name": policy.name, "requests": run.requests, "input_tokens": run.input_tokens,
            "output_tokens": run.output_tokens, "text_calls": run.text_calls,
            "cite_requests": run.cite_retries}
