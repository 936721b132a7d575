"""The MCP server end to end: the SDK's own stdio client spawns ``ragkit mcp`` and calls every tool.

Slow: the server process loads the bundled embedder and cross-encoder on its first search.
The caller is tenant ``acme`` without the ``ops`` group, so the fixture corpus's
ACL-restricted ticket comment ``ops-1423-c3`` (groups ops, acme-implementation) exists
but is outside the caller's scope.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from ragkit.tools import openai_tools, read_tool_text

FIXTURES = Path(__file__).parent / "fixtures"
HIDDEN_TEXT = "Acme stays on 16:00 until cutover"  # the body of ops-1423-c3


@pytest.fixture(scope="session")
def mcp_index(tmp_path_factory, embedder) -> Path:
    from ragkit import Index, load_corpus

    docs, _ = load_corpus(FIXTURES / "corpus")
    path = tmp_path_factory.mktemp("mcp") / "index"
    Index.build(docs, embedder=embedder).save(path)
    return path


async def _session(index: Path, calls: list[tuple[str, dict]]) -> tuple[object, object, list]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "ragkit.app.cli", "mcp", "--index", str(index), "--tenant", "acme", "--groups", ""],
        env={"OMP_NUM_THREADS": "1"})
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=120) as s:
        init = await s.initialize()
        listed = await s.list_tools()
        results = [await s.call_tool(name, args) for name, args in calls]
    return init, listed, results


@pytest.mark.slow
def test_mcp_stdio_session_end_to_end(mcp_index):
    calls = [
        ("search_knowledge", {"query": "EUR cutoff for acme", "k": 3}),
        ("retrieve_documents", {"ids": ["settlement-runbook-v2#eur-cutoff", "ops-1423"]}),
        ("related_documents", {"doc_id": "ops-1423"}),
        ("retrieve_documents", {"ids": ["ops-1423-c3"]}),           # exists, ACL outside the caller
        ("retrieve_documents", {"ids": ["ops-1423-zz"]}),           # does not exist
        ("search_knowledge", {"query": "EUR cutoff", "k": 0}),      # bad argument
        ("search_knowledge", {"query": "EUR cutoff", "tenant": "globex"}),  # tries to widen scope
        ("search_knowledge", {"query": "EUR cutoff", "published_after": "2030-01-01"}),  # empty
        ("search_knowledge", {"query": "cutover migration comment", "k": 8}),
    ]
    init, listed, results = anyio.run(_session, mcp_index, calls)

    assert "tenant=acme" in init.instructions and "untrusted_evidence" in init.instructions
    assert [t.name for t in listed.tools] == ["search_knowledge", "retrieve_documents", "related_documents"]
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in openai_tools()}
    assert all(t.input_schema == schemas[t.name] and t.annotations.read_only_hint for t in listed.tools)

    texts = [r.content[0].text for r in results]
    assert all(t.startswith('<untrusted_evidence source="ragkit:') for t in texts)
    body = [read_tool_text(t) for t in texts]
    assert all(b == r.structured_content for b, r in zip(body, results, strict=True))
    assert all(HIDDEN_TEXT not in t for t in texts)  # no tool ever shows the restricted comment

    search, fetch, related, hidden, missing, bad, widen, empty, broad = results
    assert not search.is_error and len(body[0]["results"]) == 3
    assert body[0]["results"][0]["trust"] == "untrusted" and body[0]["tokens"] > 0
    assert search.meta["ragkit/trace"]["summary"]["rows_in_scope"] > 0  # the trace travels in _meta
    assert "trace" not in body[0]

    assert [d["kind"] for d in body[1]["documents"]] == ["section", "document"]
    assert body[1]["documents"][0]["text"].startswith("## EUR cutoff")

    assert [d["doc_id"] for d in body[2]["linked_from"]] == []  # ops-1423-c3 links here, but is hidden
    assert body[2]["document"]["doc_id"] == "ops-1423"

    assert hidden.is_error and missing.is_error
    assert body[3]["error"]["code"] == body[4]["error"]["code"] == "unknown_id"
    assert body[3]["error"]["message"].replace("ops-1423-c3", "ID") == \
        body[4]["error"]["message"].replace("ops-1423-zz", "ID")

    assert bad.is_error and body[5]["error"]["code"] == "bad_value" and body[5]["error"]["field"] == "k"
    assert body[5]["error"]["example"]["name"] == "search_knowledge"
    assert widen.is_error and body[6]["error"]["code"] == "out_of_scope"

    assert not empty.is_error and body[7]["results"] == []
    assert "published_after=2030-01-01" in body[7]["message"] and "drop published_after" in body[7]["message"]

    assert "ops-1423-c3" not in {r["doc_id"] for r in body[8]["results"]}
    json.dumps(body)  # everything the client got is plain JSON


def test_mcp_bad_index_fails_before_serving(tmp_path):
    import subprocess

    out = subprocess.run([sys.executable, "-m", "ragkit.app.cli", "mcp", "--index", str(tmp_path / "none"),
                          "--tenant", "acme"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: ") and "ragkit index" in out.stderr
