"""The LLM boundary over real HTTP: wire format, and `ragkit ask` with a model under the agent's guards.

**The model is mocked at the HTTP boundary, and only there.** No hosted or local model is
reachable where this kit is tested, so a real HTTP server on loopback (pytest-httpserver)
plays the model: it answers in each API's wire format (OpenAI-compatible chat completions,
Anthropic Messages; tests/fixtures/llm/ was written by hand from the public API references),
either replaying recorded request/response pairs or following a short script (a model that
answers well, one that cites a source it was never given, one that keeps searching).
Everything on ragkit's side is real: the official ``openai`` and ``anthropic`` SDKs build and
send the requests, the toolbox runs every tool call against an index of the fixture corpus,
results go back wrapped as untrusted evidence, and the one agent loop
(:class:`ragkit.agent.loop.Agent` with :class:`ragkit.agent.llm_policy.LLMPolicy`, what
``ragkit ask`` runs when ``RAGKIT_LLM`` is set) applies its search cap, loop refusal,
resolution and citation verification. Mocking the socket rather than the client class keeps
the SDKs, retries and error mapping under test. These tests check the protocol and the
guards, never the quality of a model's answers.

The toolbox searches with BM25 only (``retrievers=("lexical",)``, no reranker), so no
model is loaded and the tests are fast; the one end-to-end subprocess test (marked slow)
uses a real saved index and the default funnel.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner
from werkzeug import Request, Response

from ragkit import Funnel, FunnelSettings, Index, Scope, Toolbox, chunk_documents, load_corpus
from ragkit.agent import (
    Agent,
    AnthropicMessages,
    LLMError,
    LLMNotConfigured,
    LLMPolicy,
    OpenAIChat,
    client_from_env,
)
from ragkit.agent.llm_policy import CITE_NUDGE
from ragkit.app.cli import app
from ragkit.index import IndexSettings
from ragkit.text import SYSTEM_NOTE

FIXTURES = Path(__file__).parent / "fixtures"
WIRE = FIXTURES / "llm"
LEXICAL = FunnelSettings(retrievers=("lexical",), rerank_mode="none")
GOOD = "EUR batches close at 16:00 CET [settlement-runbook-v2#eur-cutoff]."


def _wire(name: str) -> dict:
    return json.loads((WIRE / name).read_text())


class _NoModel:
    name, version, dim = "none", "0", 8

    def encode(self, texts, **kwargs):  # pragma: no cover - must never run
        raise AssertionError("wire tests must not encode")


@pytest.fixture(scope="module")
def lexical_index() -> Index:
    docs, _ = load_corpus(FIXTURES / "corpus")
    chunks = chunk_documents(docs)
    rows = sum(1 for c in chunks if c.kind == "chunk")
    return Index(docs, chunks, np.zeros((rows, 8), np.float32), IndexSettings(), embedder=_NoModel())


@pytest.fixture(scope="module")
def toolbox(lexical_index) -> Toolbox:
    return Toolbox(lexical_index, Scope("acme", ["ops"]), funnel=Funnel(lexical_index, LEXICAL))


def _serve(httpserver, name: str) -> None:
    pair = _wire(name)
    handler = httpserver.expect_ordered_request(pair["request"]["path"], method="POST")
    handler.respond_with_data(json.dumps(pair["response"]), status=pair.get("status", 200),
                              headers=pair.get("headers"), content_type="application/json")


def _bodies(httpserver) -> list[dict]:
    return [json.loads(req.get_data()) for req, _ in httpserver.log]


class ScriptedModel:
    """An OpenAI-compatible chat-completions endpoint whose replies follow a script.

    ``script(body)`` gets each request body the SDK sent and returns the model's turn: a string
    (its text) or ``(tool_name, arguments)`` (one tool call). A request with ``tool_choice:
    "none"`` (the loop told the model to stop searching) is answered with ``final``.
    """

    def __init__(self, httpserver, script: Callable[[dict], Any], final: str = GOOD):
        self.script, self.final, self.bodies = script, final, []
        httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(self)

    def __call__(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        self.bodies.append(body)
        turn = self.final if body.get("tool_choice") == "none" else self.script(body)
        n = len(self.bodies)
        if isinstance(turn, str):
            message: dict[str, Any] = {"role": "assistant", "content": turn, "refusal": None}
        else:
            name, arguments = turn
            message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
                {"id": f"call_{n}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}]}
        reply = {"id": f"chatcmpl-scripted-{n}", "object": "chat.completion", "created": 1767225600 + n,
                 "model": body["model"], "choices": [{"index": 0, "logprobs": None, "message": message,
                                                      "finish_reason": "stop" if isinstance(turn, str)
                                                      else "tool_calls"}],
                 "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
        return Response(json.dumps(reply), content_type="application/json")


def _search_once_then(answer: str) -> Callable[[dict], Any]:
    """A model that searches for the EUR cutoff once, then answers ``answer``."""
    def script(body: dict) -> Any:
        if not any(m["role"] == "tool" for m in body["messages"]):
            return ("search_knowledge", {"query": "EUR cutoff", "k": 3})
        return answer
    return script


def _client(httpserver) -> OpenAIChat:
    return OpenAIChat("gpt-4.1-mini", api_key="sk-test", base_url=httpserver.url_for("/v1"), max_retries=0)


# -- wire format: a full tool-calling exchange through each SDK, run by the agent loop ----------
def test_openai_tool_exchange_through_the_sdk(httpserver, toolbox):
    _serve(httpserver, "openai_tool_call.json")
    _serve(httpserver, "openai_answer.json")
    result = Agent(toolbox, LLMPolicy(_client(httpserver)), placement="tool").run(
        "What is the EUR cutoff?", as_of="2026-01-19")
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

    (search,) = [s for s in result.steps if s.action == "search"]
    assert search.arguments == {"query": "EUR cutoff", "k": 3} and search.ok
    assert "trace" in search.response  # the full response stays on ragkit's side
    assert result.policy == "llm:openai:gpt-4.1-mini" and result.record is not None
    assert "16:00" in result.answer  # delivered as verified, or withheld naming the value resolution chose
    assert result.abstained or result.citations == ["settlement-runbook-v2#eur-cutoff"]


def test_anthropic_tool_exchange_through_the_sdk(httpserver, toolbox):
    _serve(httpserver, "anthropic_tool_use.json")
    _serve(httpserver, "anthropic_answer.json")
    client = AnthropicMessages("claude-sonnet-4-6", api_key="sk-ant-test", base_url=httpserver.url_for(""),
                               max_retries=0)
    policy = LLMPolicy(client)
    result = Agent(toolbox, policy, placement="tool").run("What is the EUR cutoff?")
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

    assert result.policy == "llm:anthropic:claude-sonnet-4-6" and "16:00" in result.answer
    run = policy.last_run
    assert run is not None and run.requests == 2
    assert (run.input_tokens, run.output_tokens) == (905 + 1544, 61 + 22)


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


def test_a_bad_tool_call_is_an_error_the_model_can_act_on(httpserver, toolbox):
    """An empty query comes back as a structured error; at the step ceiling the model answers, tools off."""
    bad_call = _wire("openai_tool_call.json")
    bad_call["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"query": ""}'
    httpserver.expect_ordered_request("/v1/chat/completions").respond_with_json(bad_call["response"])
    _serve(httpserver, "openai_answer.json")
    result = Agent(toolbox, LLMPolicy(_client(httpserver)), placement="tool", max_steps=1).run("EUR cutoff?")
    first, second = _bodies(httpserver)
    assert first["tool_choice"] == "auto" and second["tool_choice"] == "none"
    (step,) = [s for s in result.steps if s.action == "search"]
    assert step.ok is False and step.response["error"]["code"] == "empty_query"
    tool_msg, stop = second["messages"][-2:]
    assert tool_msg["role"] == "tool" and '"code": "empty_query"' in tool_msg["content"]
    assert stop["role"] == "user" and "step ceiling" in stop["content"]


# -- the agent's guards apply to a model: verification, the search cap, loop refusal -----------
def test_a_good_run_answers_with_a_verified_citation(httpserver, toolbox):
    model = ScriptedModel(httpserver, _search_once_then(GOOD))
    result = Agent(toolbox, LLMPolicy(_client(httpserver))).run("What is the EUR cutoff?", as_of="2026-01-19")
    assert not result.abstained and result.verification is not None and result.verification.ok
    assert result.citations == ["settlement-runbook-v2#eur-cutoff"] and result.value == "16:00"
    assert result.record is not None and result.record.decision is not None
    assert result.record.decision.value == "16:00"  # the decision record agrees with the model
    assert model.bodies[0]["messages"][-1]["role"] == "tool"  # hybrid: the always-on search came first


def test_a_value_repeated_from_the_question_is_not_read_as_the_models_claim(httpserver, toolbox):
    """The draft restates the question's 15:00 and answers 16:00, the value resolution decides: delivered."""
    draft = "Not 15:00: EUR batches close at 16:00 CET [settlement-runbook-v2#eur-cutoff]."
    ScriptedModel(httpserver, _search_once_then(draft))
    result = Agent(toolbox, LLMPolicy(_client(httpserver))).run("Is the EUR cutoff still 15:00?",
                                                                as_of="2026-01-19")
    assert result.record is not None and result.record.decision is not None
    assert result.record.decision.value == "16:00"
    assert not result.abstained and result.citations == ["settlement-runbook-v2#eur-cutoff"]


def test_a_citation_the_model_was_never_given_is_not_delivered(httpserver, toolbox):
    invented = "EUR batches close at 16:00 CET [settlement-runbook-v1#eur-cutoff]."  # v1 was never delivered
    ScriptedModel(httpserver, _search_once_then(invented))
    result = Agent(toolbox, LLMPolicy(_client(httpserver))).run("What is the EUR cutoff?", as_of="2026-01-19")
    assert result.abstained and result.citations == [] and result.value is None
    assert result.verification is not None and not result.verification.ok
    (claim,) = [c for c in result.verification.claims if not c.ok]
    assert [str(c) for c in claim.citations] == ["settlement-runbook-v1#eur-cutoff"]
    assert result.answer.startswith("I cannot give a verified answer") and "withheld" in result.answer


def test_a_reply_without_citations_is_not_an_answer(httpserver, toolbox):
    """An uncited draft gets one request to cite (tools off); still uncited, it is an abstention."""
    uncited = "The EUR cutoff is 16:00 CET."
    model = ScriptedModel(httpserver, _search_once_then(uncited), final=uncited)
    result = Agent(toolbox, LLMPolicy(_client(httpserver))).run("What is the EUR cutoff?", as_of="2026-01-19")
    assert result.abstained and result.value is None and result.citations == []
    assert result.answer.startswith("Not answered: the model's reply cites no evidence.")
    nudge = model.bodies[-1]
    assert nudge["tool_choice"] == "none" and nudge["messages"][-1]["content"].startswith(CITE_NUDGE)
    assert len(model.bodies) == 2  # the uncited draft (after the always-on search), the one request to cite


def test_a_draft_cited_after_one_request_is_checked_like_any_answer(httpserver, toolbox):
    model = ScriptedModel(httpserver, _search_once_then("The EUR cutoff is 16:00 CET."))  # final: GOOD, cited
    policy = LLMPolicy(_client(httpserver))
    result = Agent(toolbox, policy).run("What is the EUR cutoff?", as_of="2026-01-19")
    assert not result.abstained and result.verification is not None and result.verification.ok
    assert policy.last_run is not None and policy.last_run.cite_retries == 1 and len(model.bodies) == 2


WORDS = ["settlement", "batch", "clearing", "deadline", "schedule", "window", "bank", "close", "roll",
         "policy", "runbook", "migration", "tenant", "platform", "console", "ticket", "rollout", "time"]


def _new_words_every_time(body: dict) -> Any:
    """A model that searches again and again, each time with other words (no loop to refuse)."""
    return ("search_knowledge", {"query": f"EUR {WORDS[(len(body['messages']) // 2) % len(WORDS)]} cutoff"})


def test_a_model_that_keeps_searching_hits_the_search_cap(httpserver, toolbox):
    model = ScriptedModel(httpserver, _new_words_every_time)
    result = Agent(toolbox, LLMPolicy(_client(httpserver)), placement="tool", max_searches=3).run(
        "What is the EUR cutoff?", as_of="2026-01-19")
    ran = [s for s in result.steps if s.action == "search" and s.refused is None]
    refused = [s for s in result.steps if s.refused]
    assert result.searches == 3 and len(ran) == 3
    assert refused and all("search cap reached" in s.refused for s in refused)
    assert len(ran) + len(refused) == 14  # then the step ceiling ends the run
    assert model.bodies[-1]["tool_choice"] == "none" and len(model.bodies) == 15
    assert "search cap reached" in model.bodies[4]["messages"][-1]["content"]  # the model is told why


def test_a_model_that_repeats_its_search_is_refused_as_a_loop(httpserver, toolbox):
    model = ScriptedModel(httpserver, lambda body: ("search_knowledge", {"query": "EUR cutoff"}))
    result = Agent(toolbox, LLMPolicy(_client(httpserver)), placement="tool", max_steps=4).run(
        "What is the EUR cutoff?", as_of="2026-01-19")
    refused = [s for s in result.steps if s.refused]
    assert result.searches == 1 and len(refused) == 3
    assert all(s.refused.startswith("search loop") for s in refused)
    second = model.bodies[2]["messages"][-1]
    assert second["role"] == "tool" and "search loop" in second["content"]
    assert model.bodies[-1]["tool_choice"] == "none"


# -- small models: calls written as text, a forced first search, a token budget ------------------
TEXT_CALL = ('<tool_call>\n{"name": "search_knowledge", "arguments": {"query": "EUR cutoff", "k": 3}}\n'
             '</tool_call>')


def test_a_call_written_as_json_text_is_run_and_counted(httpserver, toolbox):
    """Qwen-style ``<tool_call>`` JSON in the text runs as a search; the conversation shows it as a call."""
    def script(body: dict) -> Any:
        return TEXT_CALL if not any(m["role"] == "tool" for m in body["messages"]) else GOOD
    model = ScriptedModel(httpserver, script)
    policy = LLMPolicy(_client(httpserver))
    result = Agent(toolbox, policy, placement="tool").run("What is the EUR cutoff?", as_of="2026-01-19")
    (search,) = [s for s in result.steps if s.action == "search"]
    assert search.arguments == {"query": "EUR cutoff", "k": 3} and search.ok
    assert "written as JSON in its text" in search.reason
    assert policy.last_run is not None and policy.last_run.text_calls == 1
    assistant, tool_msg = model.bodies[1]["messages"][-2:]
    assert assistant["content"] == "" and assistant["tool_calls"][0]["function"]["name"] == "search_knowledge"
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert "16:00" in result.answer  # delivered, or withheld naming the value resolution chose


def test_text_that_only_looks_like_a_call_stays_text():
    from ragkit.agent.llm_policy import calls_in_text

    assert calls_in_text('{"name": "delete_everything", "arguments": {}}')[0] == []
    assert calls_in_text('<tool_call>{"name": "search_knowledge"}</tool_call>')[0] == []  # no arguments
    calls, rest = calls_in_text('Let me look.\n```json\n{"name": "retrieve_documents", '
                                '"arguments": {"doc_id": "a"}}\n```')
    assert [c.name for c in calls] == ["retrieve_documents"] and rest == "Let me look."


def test_the_first_turn_can_be_forced_to_search(httpserver, toolbox):
    model = ScriptedModel(httpserver, _search_once_then(GOOD))
    Agent(toolbox, LLMPolicy(_client(httpserver), force_first_search=True), placement="tool").run(
        "What is the EUR cutoff?", as_of="2026-01-19")
    assert model.bodies[0]["tool_choice"] == {"type": "function", "function": {"name": "search_knowledge"}}
    assert model.bodies[1]["tool_choice"] == "auto"


def test_a_spent_token_budget_makes_the_model_answer(httpserver, toolbox):
    model = ScriptedModel(httpserver, _new_words_every_time)  # each reply reports 110 tokens
    result = Agent(toolbox, LLMPolicy(_client(httpserver), token_budget=300), placement="tool").run(
        "What is the EUR cutoff?", as_of="2026-01-19")
    assert result.searches == 3 and len(model.bodies) == 4
    assert model.bodies[-1]["tool_choice"] == "none"
    assert "token budget of 300 spent (330 tokens)" in model.bodies[-1]["messages"][-1]["content"]


# -- `ragkit ask` with an LLM: the same loop, and the output says whether the answer verified ---
@pytest.fixture
def ask(httpserver, lexical_index, monkeypatch):
    """Run `ragkit ask` in-process against the loopback model, over the lexical fixture index."""
    for name in ("RAGKIT_LLM", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAGKIT_LLM", "openai:gpt-4.1-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", httpserver.url_for("/v1"))
    monkeypatch.setenv("RAGKIT_LLM_MAX_RETRIES", "0")
    monkeypatch.setattr(Index, "load", classmethod(lambda cls, path, **kwargs: lexical_index))
    monkeypatch.setattr("ragkit.tools.toolbox.Funnel", lambda index: Funnel(index, LEXICAL))  # no model

    def run(*extra: str):
        args = ["ask", "What is the EUR cutoff?", "--index", "unused", "--tenant", "acme", "--groups", "ops",
                "--as-of", "2026-01-19", *extra]
        return CliRunner().invoke(app, args)
    return run


def test_ask_with_an_llm_runs_the_guarded_loop_and_says_verified(httpserver, ask):
    model = ScriptedModel(httpserver, _search_once_then(GOOD))
    out = ask()
    assert out.exit_code == 0, out.output
    assert "llm:openai:gpt-4.1-mini policy" in out.stdout and "decision record:" in out.stdout
    assert f"ANSWER: {GOOD}" in out.stdout
    assert "VERIFIED: every citation checks" in out.stdout and "NOT VERIFIED" not in out.stdout
    # hybrid placement: the always-on search is shown to the model as its own call, so it answers at once
    assert "llm:openai:gpt-4.1-mini: 1 request, 100 input + 10 output tokens" in out.stdout
    first = model.bodies[0]["messages"]
    assert 'valid_at="2026-01-19"' in first[0]["content"]
    assert first[-1]["role"] == "tool" and first[-1]["content"].startswith("<untrusted_evidence")

    out = ask("--json")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["verified"] is True and result["outcome"] == "verified" and not result["abstained"]
    assert result["answer"] == GOOD and result["citations"] == ["settlement-runbook-v2#eur-cutoff"]
    assert result["verification"]["ok"] and result["record"]["decision"]["value"] == "16:00"
    assert result["model"] == {"name": "llm:openai:gpt-4.1-mini", "requests": 1, "input_tokens": 100,
                               "output_tokens": 10, "text_calls": 0, "cite_requests": 0}


def test_ask_says_plainly_when_the_citations_do_not_verify(httpserver, ask):
    never_given = "EUR batches close at 16:00 CET [settlement-runbook-v1#eur-cutoff]."  # v1 was not delivered
    ScriptedModel(httpserver, _search_once_then(never_given))
    out = ask()
    assert out.exit_code == 0, out.output
    assert "\nANSWER:" not in out.stdout and "verified citations:" not in out.stdout
    assert "ABSTAINED: I cannot give a verified answer" in out.stdout
    assert "NOT VERIFIED: the drafted answer's citations do not check" in out.stdout
    assert "it is withheld, not an answer" in out.stdout and "settlement-runbook-v1#eur-cutoff" in out.stdout

    result = json.loads(ask("--json").stdout)
    assert result["verified"] is False and result["outcome"] == "not_verified" and result["abstained"]
    assert result["value"] is None and result["citations"] == []
    assert result["verification"]["ok"] is False and result["verdict"].startswith("NOT VERIFIED")


def test_ask_does_not_deliver_a_value_the_evidence_contradicts(httpserver, ask):
    ScriptedModel(httpserver, _search_once_then("EUR batches close at 17:00 CET [ops-1500#top]."))
    result = json.loads(ask("--json").stdout)
    assert result["verified"] is False and result["abstained"] and result["value"] is None
    assert result["outcome"] in ("not_verified", "abstained") and "17:00" in result["answer"]
    assert result["answer"].startswith(("Not answered", "I cannot give a verified answer"))


def test_ask_with_an_llm_obeys_the_search_cap(httpserver, ask):
    ScriptedModel(httpserver, _new_words_every_time)
    result = json.loads(ask("--json", "--placement", "tool", "--max-searches", "2").stdout)
    assert result["searches"] == 2 and result["policy"] == "llm:openai:gpt-4.1-mini"
    refused = [s for s in result["steps"] if s.get("refused")]
    assert refused and all("search cap reached: 2 searches" in s["refused"] for s in refused)


def test_ask_without_an_llm_runs_the_same_loop_with_the_offline_policy(ask, monkeypatch):
    monkeypatch.delenv("RAGKIT_LLM")
    result = json.loads(ask("--json").stdout)
    assert result["policy"] == "offline" and "model" not in result
    assert result["verified"] is (result["outcome"] == "verified") is (not result["abstained"])
    assert result["verdict"].startswith(("VERIFIED", "NOT VERIFIED", "NO ANSWER"))


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
    assert result["policy"] == "llm:openai:gpt-4.1-mini" and result["placement"] == "hybrid"
    searches = [s for s in result["steps"] if s["action"] == "search"]
    assert searches[0]["arguments"]["query"] == "What is the EUR cutoff?"  # the always-on first search
    assert searches[0]["ok"] and searches[0]["response"]["trace"]["summary"]
    assert any(h["citation"] == "settlement-runbook-v2#eur-cutoff" for s in searches for h in s["hits"])
    assert result["verified"] is (not result["abstained"]) and result["outcome"] in ("verified", "abstained")
    if result["verified"]:
        assert result["answer"] == GOOD and result["citations"] == ["settlement-runbook-v2#eur-cutoff"]
    bodies = _bodies(httpserver)
    assert bodies[0]["messages"][-1]["content"].startswith('<untrusted_evidence source="ragkit:search_')
    assert 'valid_at="2026-01-19"' in bodies[0]["messages"][0]["content"]


def test_a_client_written_before_force_still_works():
    """A client whose ``_complete`` predates ``force`` is called as before when nothing is forced."""
    from ragkit.agent import LLMClient, Reply

    class Older(LLMClient):
        def _complete(self, messages, tools, system, use_tools):
            return Reply("ok")

    assert Older().complete([{"role": "user", "content": "hi"}], []).text == "ok"
