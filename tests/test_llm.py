"""LLM clients over real HTTP: wire-format tests, not model-quality tests.

No hosted model is reachable here, so a real HTTP server on loopback (pytest-httpserver)
replays request/response pairs in each API's wire format (tests/fixtures/llm/, written
from the public API references) and the official ``openai`` and ``anthropic`` SDKs talk
to it. A full tool-calling exchange runs: the model asks for ``search_knowledge``, ragkit
executes it against an index of the fixture corpus, the result goes back wrapped as
untrusted evidence, and the model answers. These tests check the protocol, retries and
errors, never the quality of an answer.

The toolbox searches with BM25 only (``retrievers=("lexical",)``, no reranker), so no
model is loaded and the tests are fast.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragkit import Funnel, FunnelSettings, Index, Scope, Toolbox, chunk_documents, load_corpus
from ragkit.agent import (
    AnthropicMessages,
    LLMError,
    LLMNotConfigured,
    OpenAIChat,
    client_from_env,
    run_tool_loop,
)
from ragkit.index import IndexSettings
from ragkit.text import SYSTEM_NOTE

FIXTURES = Path(__file__).parent / "fixtures"
WIRE = FIXTURES / "llm"


def _wire(name: str) -> dict:
    return json.loads((WIRE / name).read_text())


class _NoModel:
    name, version, dim = "none", "0", 8

    def encode(self, texts, **kwargs):  # pragma: no cover - must never run
        raise AssertionError("wire tests must not encode")


@pytest.fixture(scope="module")
def toolbox() -> Toolbox:
    docs, _ = load_corpus(FIXTURES / "corpus")
    chunks = chunk_documents(docs)
    rows = sum(1 for c in chunks if c.kind == "chunk")
    index = Index(docs, chunks, np.zeros((rows, 8), np.float32), IndexSettings(), embedder=_NoModel())
    funnel = Funnel(index, FunnelSettings(retrievers=("lexical",), rerank_mode="none"))
    return Toolbox(index, Scope("acme", ["ops"]), funnel=funnel)


def _serve(httpserver, name: str) -> None:
    pair = _wire(name)
    handler = httpserver.expect_ordered_request(pair["request"]["path"], method="POST")
    handler.respond_with_data(json.dumps(pair["response"]), status=pair.get("status", 200),
                              headers=pair.get("headers"), content_type="application/json")


def _bodies(httpserver) -> list[dict]:
    return [json.loads(req.get_data()) for req, _ in httpserver.log]


def test_openai_tool_exchange_through_the_sdk(httpserver, toolbox):
    _serve(httpserver, "openai_tool_call.json")
    _serve(httpserver, "openai_answer.json")
    client = OpenAIChat("gpt-4.1-mini", api_key="sk-test", base_url=httpserver.url_for("/v1"), max_retries=0)
    result = run_tool_loop(client, toolbox, "What is the EUR cutoff?", as_of="2026-01-19")
    httpserver.check_assertions()

    first, second = _bodies(httpserver)
    assert [t["function"]["name"] for t in first["tools"]] == ["search_knowledge", "retrieve_documents",
                                                               "related_documents"]
    assert first["tools"][0]["function"]["parameters"]["additionalProperties"] is False
    assert first["messages"][0]["role"] == "system" and SYSTEM_NOTE in first["messages"][0]["content"]
    assert 'valid_at="2026-01-19"' in first["messages"][0]["content"]
    assert first["tool_choice"] == "auto" and first["model"] == "gpt-4.1-mini"
    assert httpserver.log[0][0].headers["Authorization"] == "Bearer sk-test"

    assistant, tool_msg = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_search_1"
    assert assistant["tool_calls"][0]["function"]["name"] == "search_knowledge"
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_search_1"
    content = tool_msg["content"]
    assert content.startswith('<untrusted_evidence source="ragkit:search_knowledge">\n')
    assert content.endswith("\n</untrusted_evidence>")
    payload = json.loads(content.split("\n", 1)[1].rsplit("\n", 1)[0])
    assert payload["ok"] and "trace" not in payload
    assert "settlement-runbook-v2#eur-cutoff" in [r["citation"] for r in payload["results"]]

    assert result.answer == "EUR batches close at 16:00 CET [settlement-runbook-v2#eur-cutoff]."
    assert result.stopped == "answer" and result.turns == 2 and result.model == "openai:gpt-4.1-mini"
    assert [(c["name"], c["arguments"], c["ok"]) for c in result.tool_calls] == [
        ("search_knowledge", {"query": "EUR cutoff", "k": 3}, True)]
    assert "trace" in result.tool_calls[0]["response"]  # the full response stays on ragkit's side
    assert (result.usage.input_tokens, result.usage.output_tokens) == (812 + 1430, 24 + 19)


def test_anthropic_tool_exchange_through_the_sdk(httpserver, toolbox):
    _serve(httpserver, "anthropic_tool_use.json")
    _serve(httpserver, "anthropic_answer.json")
    client = AnthropicMessages("claude-sonnet-4-6", api_key="sk-ant-test", base_url=httpserver.url_for(""),
                               max_retries=0)
    result = run_tool_loop(client, toolbox, "What is the EUR cutoff?")
    httpserver.check_assertions()

    first, second = _bodies(httpserver)
    assert [t["name"] for t in first["tools"]] == ["search_knowledge", "retrieve_documents",
                                                   "related_documents"]
    assert "input_schema" in first["tools"][0] and SYSTEM_NOTE in first["system"]
    assert first["tool_choice"] == {"type": "auto"} and first["max_tokens"] > 0
    headers = httpserver.log[0][0].headers  # the SDK sends the key as x-api-key or as a bearer token
    assert headers.get("x-api-key") == "sk-ant-test" or headers.get("Authorization") == "Bearer sk-ant-test"
    assert "anthropic-version" in httpserver.log[0][0].headers

    assistant, user = second["messages"][-2:]
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use"]
    assert assistant["content"][1] == {"type": "tool_use", "id": "toolu_search_1", "name": "search_knowledge",
                                       "input": {"query": "EUR cutoff", "k": 3}}
    (block,) = user["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_search_1"
    assert block["is_error"] is False
    assert block["content"].startswith('<untrusted_evidence source="ragkit:search_knowledge">')
    assert "settlement-runbook-v2#eur-cutoff" in block["content"]

    assert result.answer == "EUR batches close at 16:00 CET [settlement-runbook-v2#eur-cutoff]."
    assert (result.usage.input_tokens, result.usage.output_tokens) == (905 + 1544, 61 + 22)


def test_rate_limit_is_retried_with_backoff(httpserver, toolbox):
    _serve(httpserver, "openai_rate_limited.json")
    _serve(httpserver, "openai_answer.json")
    client = OpenAIChat("gpt-4.1-mini", api_key="sk-test", base_url=httpserver.url_for("/v1"), max_retries=2)
    reply = client.complete([{"role": "user", "content": "hi"}], list(toolbox.specs.values()))
    httpserver.check_assertions()
    assert len(httpserver.log) == 2 and httpserver.log[0][1].status_code == 429
    assert reply.text.startswith("EUR batches close")


def test_rate_limit_beyond_retries_is_a_clear_error(httpserver, toolbox):
    _serve(httpserver, "openai_rate_limited.json")
    client = OpenAIChat("gpt-4.1-mini", api_key="sk-test", base_url=httpserver.url_for("/v1"), max_retries=0)
    with pytest.raises(LLMError, match="rate limiting .HTTP 429. after 0 retries.*RAGKIT_LLM_MAX_RETRIES"):
        client.complete([{"role": "user", "content": "hi"}], list(toolbox.specs.values()))


def test_server_errors_are_retried(httpserver, toolbox):
    overloaded = httpserver.expect_ordered_request("/v1/messages", method="POST")
    overloaded.respond_with_data("overloaded", status=529)
    _serve(httpserver, "anthropic_answer.json")
    client = AnthropicMessages("claude-sonnet-4-6", api_key="k", base_url=httpserver.url_for(""),
                               max_retries=1)
    assert client.complete([{"role": "user", "content": "hi"}], list(toolbox.specs.values())).text
    assert [r.status_code for _, r in httpserver.log] == [529, 200]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_unreachable_endpoint_is_a_clear_error(provider, toolbox):
    url = f"http://127.0.0.1:{_free_port()}"
    if provider == "openai":
        client: OpenAIChat | AnthropicMessages = OpenAIChat("m", api_key="k", base_url=url + "/v1",
                                                            max_retries=0, timeout=5)
    else:
        client = AnthropicMessages("m", api_key="k", base_url=url, max_retries=0, timeout=5)
    variable = "OPENAI_BASE_URL" if provider == "openai" else "ANTHROPIC_BASE_URL"
    with pytest.raises(LLMError, match=f"cannot reach the {provider} endpoint at {url}.*set {variable}"):
        client.complete([{"role": "user", "content": "hi"}], list(toolbox.specs.values()))


def test_rejected_key_names_the_variable(httpserver, toolbox):
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": "Incorrect API key", "type": "invalid_request_error",
                   "code": "invalid_api_key"}}, status=401)
    client = OpenAIChat("gpt-4.1-mini", api_key="bad", base_url=httpserver.url_for("/v1"), max_retries=0)
    with pytest.raises(LLMError, match="rejected the key .HTTP 401.; check OPENAI_API_KEY"):
        client.complete([{"role": "user", "content": "hi"}], list(toolbox.specs.values()))


def test_chat_accepts_system_messages_and_tool_dicts(httpserver):
    from ragkit.tools import anthropic_tools

    _serve(httpserver, "openai_answer.json")
    client = OpenAIChat("gpt-4.1-mini", api_key="k", base_url=httpserver.url_for("/v1"), max_retries=0)
    reply = client.chat([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
                        anthropic_tools()[:1])
    (body,) = _bodies(httpserver)
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert [t["function"]["name"] for t in body["tools"]] == ["search_knowledge"]
    assert reply.text and reply.usage.input_tokens == 1430


def test_lexical_toolbox_search_accepts_integral_floats(toolbox):
    resp = toolbox.call("search_knowledge", '{"query": "EUR cutoff", "k": 2.0}')
    assert resp["ok"] and len(resp["results"]) == 2


# -- configuration from the environment ---------------------------------------------------------
def test_missing_configuration_points_to_the_offline_agent():
    from ragkit.agent import configured

    with pytest.raises(LLMNotConfigured, match="RAGKIT_LLM=.*ragkit.agent.loop"):
        client_from_env(env={})
    assert configured(env={}) is None
    assert configured(env={"RAGKIT_LLM": "ollama:x"}).model == "x"


@pytest.mark.parametrize(("spec", "variable"), [("openai:gpt-4.1-mini", "OPENAI_API_KEY"),
                                                 ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY")])
def test_missing_key_names_the_variable(spec, variable):
    with pytest.raises(LLMError, match=f"set {variable}"):
        client_from_env(env={"RAGKIT_LLM": spec})


def test_settings_come_from_the_usual_variables():
    c = client_from_env(env={"RAGKIT_LLM": "ollama:qwen2.5:7b", "OLLAMA_HOST": "10.0.0.5:11500",
                             "RAGKIT_LLM_MAX_RETRIES": "5", "RAGKIT_LLM_TIMEOUT": "12"})
    assert (c.provider, c.model, c.base_url, c.max_retries) == ("ollama", "qwen2.5:7b", "http://10.0.0.5:11500/v1/",
                                                                5)
    assert client_from_env(env={"RAGKIT_LLM": "ollama:llama3"}).base_url == "http://localhost:11434/v1/"
    local = client_from_env(env={"RAGKIT_LLM": "openai:qwen", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"})
    assert local.base_url == "http://127.0.0.1:8000/v1/"  # vLLM / llama.cpp: no key needed
    a = client_from_env(env={"RAGKIT_LLM": "anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY": "k",
                             "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"})
    assert isinstance(a, AnthropicMessages) and a.base_url.startswith("http://127.0.0.1:9")
    with pytest.raises(LLMError, match="provider:model"):
        client_from_env(env={"RAGKIT_LLM": "gemini:pro"})
    with pytest.raises(LLMError, match="RAGKIT_LLM_TIMEOUT"):
        client_from_env(env={"RAGKIT_LLM": "ollama:x", "RAGKIT_LLM_TIMEOUT": "soon"})


def test_tool_budget_then_an_answer_without_tools(httpserver, toolbox):
    bad_call = _wire("openai_tool_call.json")
    bad_call["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"query": ""}'
    httpserver.expect_ordered_request("/v1/chat/completions").respond_with_json(bad_call["response"])
    _serve(httpserver, "openai_answer.json")
    client = OpenAIChat("gpt-4.1-mini", api_key="k", base_url=httpserver.url_for("/v1"), max_retries=0)
    result = run_tool_loop(client, toolbox, "EUR cutoff?", max_turns=1)
    first, second = _bodies(httpserver)
    assert first["tool_choice"] == "auto" and second["tool_choice"] == "none"
    assert result.stopped == "max_turns" and result.tool_calls[0]["ok"] is False
    assert result.tool_calls[0]["response"]["error"]["code"] == "empty_query"  # an error the model can act on
    assert '"code": "empty_query"' in second["messages"][-1]["content"]


def _ask(tmp_path, **extra_env):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGKIT_LLM", "OPENAI", "ANTHROPIC"))}
    command = [sys.executable, "-m", "ragkit.app.cli", "ask", "EUR cutoff?", "--index", str(tmp_path),
               "--tenant", "acme"]
    return subprocess.run(command, capture_output=True, text=True, env={**env, **extra_env}, timeout=120)


def test_ask_bad_llm_settings_exit_2_with_one_line(tmp_path):
    out = _ask(tmp_path, RAGKIT_LLM="openai:gpt-4.1-mini")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "set OPENAI_API_KEY" in out.stderr
    out = _ask(tmp_path, RAGKIT_LLM="gemini:pro")
    assert out.returncode == 2 and "provider:model" in out.stderr and out.stderr.count("\n") == 1


@pytest.mark.slow
def test_ragkit_ask_end_to_end_over_http(httpserver, tmp_path, embedder):
    """`ragkit ask --json` as a subprocess: real index and funnel, the SDK talking to the loopback server."""
    import os

    docs, _ = load_corpus(FIXTURES / "corpus")
    Index.build(docs, embedder=embedder).save(tmp_path / "index")
    _serve(httpserver, "openai_tool_call.json")
    _serve(httpserver, "openai_answer.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGKIT_LLM", "OPENAI", "ANTHROPIC"))}
    env.update(RAGKIT_LLM="openai:gpt-4.1-mini", OPENAI_API_KEY="sk-test", OMP_NUM_THREADS="1",
               OPENAI_BASE_URL=httpserver.url_for("/v1"), RAGKIT_LLM_MAX_RETRIES="0")
    out = subprocess.run([sys.executable, "-m", "ragkit.app.cli", "ask", "What is the EUR cutoff?", "--index",
                          str(tmp_path / "index"), "--tenant", "acme", "--groups", "ops", "--as-of",
                          "2026-01-19", "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["answer"] == "EUR batches close at 16:00 CET [settlement-runbook-v2#eur-cutoff]."
    (call,) = result["tool_calls"]
    assert call["name"] == "search_knowledge" and call["ok"] and call["response"]["trace"]["summary"]
    cited = [r["citation"] for r in call["response"]["results"]]
    assert "settlement-runbook-v2#eur-cutoff" in cited
    second = _bodies(httpserver)[1]
    assert second["messages"][-1]["content"].startswith('<untrusted_evidence source="ragkit:search_')
    assert 'valid_at="2026-01-19"' in second["messages"][0]["content"]
