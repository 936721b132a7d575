"""Record one real MCP session, client side, to bench/results/mcp_session.md.

The official MCP SDK's stdio client spawns ``ragkit mcp`` over an index of the test
fixture corpus (built into a temporary folder unless ``--index`` is given), lists the
tools and calls each of them, plus an id outside the caller's scope, a bad argument, a
tenant that would widen the scope, and a search with an empty result. Every request
and every response is written as the client received it (long texts shortened, marked).

Run from the repository root::

    .venv/bin/python bench/mcp_session.py [--index IDX --tenant acme --groups ""] [--out FILE]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _common import ROOT, parser, publish

from ragkit import Index, load_corpus

SHORTEN = 700

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("search, first wording", "search_knowledge",
     {"query": "why did acme's January reconciliation fail", "k": 3}),
    ("search again with the ticket's words", "search_knowledge",
     {"query": "acme settlement job failed E-4471", "k": 3, "valid_at": "2026-01-19"}),
    ("read the cited section and a whole ticket", "retrieve_documents",
     {"ids": ["settlement-runbook-v2#retrying-a-failed-batch", "ops-1423"]}),
    ("follow links", "related_documents", {"doc_id": "ops-1423"}),
    ("an id outside the caller's scope (ACL)", "retrieve_documents", {"ids": ["ops-1423-c3"]}),
    ("an id that does not exist", "retrieve_documents", {"ids": ["ops-1423-zz"]}),
    ("a bad argument", "search_knowledge", {"query": "EUR cutoff", "top_k": 20}),
    ("a tenant that would widen the scope", "search_knowledge", {"query": "EUR cutoff", "tenant": "globex"}),
    ("an empty result", "search_knowledge", {"query": "EUR cutoff", "doc_type": "policy",
                                             "published_after": "2030-01-01"}),
]


def _shorten(value: Any) -> Any:
    if isinstance(value, str) and len(value) > SHORTEN:
        return value[:SHORTEN] + f" [... {len(value) - SHORTEN} more characters]"
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    return value


async def _run(index: Path, tenant: str, groups: str) -> tuple[Any, Any, list[tuple[Any, float]]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "ragkit.app.cli", "mcp", "--index", str(index), "--tenant", tenant, "--groups", groups],
        cwd=str(ROOT))
    out = []
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=300) as session:
        init = await session.initialize()
        listed = await session.list_tools()
        for _, name, args in CALLS:
            t0 = time.perf_counter()
            result = await session.call_tool(name, args)
            out.append((result, (time.perf_counter() - t0) * 1000))
    return init, listed, out


def _trace_summary(result: Any) -> Any:
    trace = (result.meta or {}).get("ragkit/trace", {})
    return trace.get("summary") or trace


def _fixture_index(folder: Path) -> Path:
    docs, _ = load_corpus(ROOT / "tests" / "fixtures" / "corpus")
    return Index.build(docs).save(folder / "index")


def main() -> None:
    ap = parser(__doc__, "mcp_session.md", flag="--out")
    ap.add_argument("--index", type=Path, help="index folder (default: build one of tests/fixtures/corpus)")
    ap.add_argument("--tenant", default="acme")
    ap.add_argument("--groups", default="")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        index = a.index or _fixture_index(Path(tmp))
        init, listed, results = anyio.run(_run, index, a.tenant, a.groups)
    where = "<an index of tests/fixtures/corpus>" if a.index is None else a.index
    lines = ["# One MCP session, client side", "",
             "Produced by `.venv/bin/python bench/mcp_session.py` "
             f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}): the official MCP Python SDK's "
             f"stdio client spawned `ragkit mcp --index {where} --tenant {a.tenant} --groups '{a.groups}'` "
             "and made the calls below. Responses are shown as the client received them; strings longer "
             f"than {SHORTEN} characters are shortened (marked). Timings are wall-clock on a shared, loaded "
             "machine; the first search includes loading the models.", "",
             "## initialize", "", f"server: `{init.server_info.name}` {init.server_info.version}, protocol "
             f"`{init.protocol_version}`", "", "instructions:", "", f"> {init.instructions}", "",
             "## tools/list", ""]
    for tool in listed.tools:
        lines += [f"- `{tool.name}`: {tool.description}", "",
                  "  arguments: " + ", ".join(f"`{k}` ({v.get('type')})"
                                              for k, v in tool.input_schema["properties"].items())
                  + f"; required: {tool.input_schema.get('required')}", ""]
    for (title, name, args), (result, ms) in zip(CALLS, results, strict=True):
        text = result.content[0].text
        head, _, rest = text.partition("\n")
        body = json.loads(rest.rsplit("\n", 1)[0])
        lines += [f"## tools/call `{name}`: {title}", "", "request:", "", "```json",
                  json.dumps({"name": name, "arguments": args}, ensure_ascii=False), "```", "",
                  f"response: isError={str(result.is_error).lower()}, {ms:.0f} ms; the text block opens with "
                  f"`{head}` and closes with `</untrusted_evidence>`; its JSON:", "", "```json",
                  json.dumps(_shorten(body), indent=1, ensure_ascii=False), "```", "",
                  "`_meta[\"ragkit/trace\"]` (kept out of the model's view): `"
                  + json.dumps(_shorten(_trace_summary(result)), ensure_ascii=False) + "`", ""]
    publish(a.out, "\n".join(lines), echo=False)
    print(a.out)


if __name__ == "__main__":
    main()
