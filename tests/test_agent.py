"""The reference agent: parsing, query variants, loop guards, placements, abstention, stories.

Fast tests drive the real loop, the real offline policy, resolution and citation checks
over ``ShelfToolbox``: a hand-built stand-in for :class:`ragkit.tools.toolbox.Toolbox` that answers
the same JSON contract from six hand-written documents with word-overlap ranking (so that
the tests need no model). Slow tests use the real Toolbox over the course index.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ragkit import Agent, Scope, ValidationError
from ragkit.agent import Action, AgentState, OfflinePolicy
from ragkit.text import feedback_terms, find_identifiers, jaccard, keyword_query, parse_task

# -- a hand-built shelf of documents behind the tool contract -------------------------------

SHELF = [
    {
        "doc_id": "rb-recon",
        "anchor": "causes",
        "tenant": "global",
        "source_type": "runbook",
        "authority": "operations",
        "published_at": "2025-10-01T00:00:00+00:00",
        "effective_from": "2025-10-01T00:00:00+00:00",
        "links": [],
        "conditions": [],
        "text": "Common causes of a failed reconciliation: a late bank file, a stale exchange rate.",
    },
    {
        "doc_id": "ops-11",
        "anchor": "top",
        "tenant": "acme",
        "source_type": "ticket",
        "authority": "support",
        "published_at": "2026-01-12T08:00:00+00:00",
        "effective_from": "2026-01-12T08:00:00+00:00",
        "links": ["ops-11-c2"],
        "conditions": [],
        "entities": ["acme"],
        "text": "OPS-11: Acme totals for 9 January do not match the bank statement.",
    },
    {
        "doc_id": "ops-11-c2",
        "anchor": "top",
        "tenant": "acme",
        "source_type": "ticket_comment",
        "authority": "engineering",
        "published_at": "2026-01-13T08:00:00+00:00",
        "effective_from": "2026-01-13T08:00:00+00:00",
        "links": ["ops-11"],
        "conditions": [],
        "entities": ["acme"],
        "text": "The totals are off because the settlement for 9 January ran twice after the scheduler "
        "failover. Fixed in RO-55.",
    },
    {
        "doc_id": "ro-55",
        "anchor": "top",
        "tenant": "acme",
        "source_type": "rollout",
        "authority": "deployment_system",
        "published_at": "2026-01-14T08:00:00+00:00",
        "effective_from": "2026-01-14T08:00:00+00:00",
        "links": [],
        "conditions": [],
        "entities": ["acme"],
        "text": "RO-55 shipped build 3.9.4 with commit a41c9e2. Approved by Esterhazy.",
    },
    {
        "doc_id": "pol-cut",
        "anchor": "eur",
        "tenant": "global",
        "source_type": "policy",
        "authority": "policy_owner",
        "published_at": "2025-12-10T00:00:00+00:00",
        "effective_from": "2026-01-01T00:00:00+00:00",
        "links": [],
        "conditions": [],
        "text": "Migrated tenants use 15:00 for the EUR cutoff.",
    },
    {
        "doc_id": "pm-globex",
        "anchor": "why",
        "tenant": "globex",
        "source_type": "postmortem",
        "authority": "incident_review",
        "published_at": "2026-01-20T00:00:00+00:00",
        "effective_from": "2026-01-20T00:00:00+00:00",
        "links": [],
        "conditions": [],
        "text": "Globex reconciliation failed in January because of a stale exchange rate.",
    },
]


class ShelfToolbox:
    """The Toolbox contract (``call`` and ``scope``) over :data:`SHELF`, ranked by shared words."""

    def __init__(self, tenant: str = "acme", docs: list[dict[str, Any]] | None = None):
        self.scope = Scope(tenant, ["ops"])
        self.docs = [d for d in (docs if docs is not None else SHELF) if d["tenant"] in (tenant, "global")]
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def _item(self, d: dict[str, Any], rank: int) -> dict[str, Any]:
        return {
            **{k: v for k, v in d.items()},
            "rank": rank,
            "citation": f"{d['doc_id']}#{d['anchor']}",
            "chunk_id": f"{d['doc_id']}#{d['anchor']}",
            "title": d["doc_id"],
            "version": "1",
            "entities": d.get("entities", []),
            "supersedes": [],
            "superseded_by": [],
            "effective_to": None,
            "validity": "valid",
            "score": 1.0 / rank,
            "start": 0,
            "end": len(d["text"]),
            "trust": "untrusted",
        }

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((name, dict(arguments)))
        if name == "search_knowledge":
            words = set(re.findall(r"[a-z0-9\-]+", arguments["query"].lower()))
            pool = [d for d in self.docs if not arguments.get("tenant") or d["tenant"] == arguments["tenant"]]
            if arguments.get("published_after"):
                pool = [d for d in pool if d["published_at"][:10] >= arguments["published_after"]]
            scored = sorted(
                pool, key=lambda d: -len(words & set(re.findall(r"[a-z0-9\-]+", d["text"].lower())))
            )
            hits = [d for d in scored if words & set(re.findall(r"[a-z0-9\-]+", d["text"].lower()))]
            hits = hits[: arguments.get("k", 4)]
            items = [self._item(d, r) for r, d in enumerate(hits, 1)]
            return {
                "tool": name,
                "ok": True,
                "notices": [],
                "results": items,
                "tokens": 40 * len(items),
                "trace": {
                    "columns": [
                        "chunk_id",
                        "lexical_rank",
                        "dense_rank",
                        "fused_rank",
                        "rerank_rank",
                        "final_rank",
                        "delivered",
                    ],
                    "candidates": [
                        [i["chunk_id"], i["rank"], None, i["rank"], i["rank"], i["rank"], True] for i in items
                    ],
                },
            }
        if name == "retrieve_documents":
            found = [self._item(d, 1) for d in self.docs if d["doc_id"] in arguments["ids"]]
            return {
                "tool": name,
                "ok": bool(found),
                "notices": [],
                "documents": found,
                "tokens": 40 * len(found),
                "trace": {},
            }
        if name == "related_documents":
            return {
                "tool": name,
                "ok": True,
                "notices": [],
                "doc_id": arguments["doc_id"],
                "links_to": [],
                "linked_from": [],
                "supersedes": [],
                "superseded_by": [],
                "tokens": 10,
                "trace": {},
            }
        return {"tool": name, "ok": False, "error": {"code": "unknown_tool"}, "tokens": 5, "trace": {}}


class ScriptedRun:
    """A policy run that plays a fixed list of actions (to test the loop's guards)."""

    def __init__(self, actions: list[Action]):
        self.actions = list(actions)

    def first_search(self, state: AgentState) -> Action:
        return Action("search", {"query": state.task})

    def next_action(self, state: AgentState) -> Action:
        return self.actions.pop(0) if self.actions else Action("abstain", {"answer": "nothing more to try"})

    def conclude(self, state: AgentState, why: str) -> Action:
        return Action("abstain", {"answer": f"stopped: {why}"})


class Scripted:
    name = "scripted"

    def __init__(self, actions: list[Action]):
        self.actions = actions

    def begin(self, state: AgentState) -> ScriptedRun:
        return ScriptedRun(self.actions)


# -- parsing and variants ------------------------------------------------------------------


def test_parse_task_reads_identifiers_tenant_dates_and_the_ask():
    f = parse_task("Why did Acme's January reconciliation fail?", tenant="acme", as_of="2026-02-02")
    assert f.tenant_named and f.event and f.valid_at is None  # what happened: no validity filter
    assert f.period == ("2026-01-01", "2026-02-01")  # January before as_of -> 2026
    assert "reconciliation" in f.predicate and "acme" not in f.predicate
    rule = parse_task(
        "Which settlement cutoff applies to Acme's Monday EUR batch on 19 January 2026?",
        tenant="acme",
        as_of="2026-01-19",
    )
    assert not rule.event and rule.valid_at == "2026-01-19" and rule.date == "2026-01-19"
    assert rule.names == ()  # Monday is not a name
    other = parse_task("What rolling reserve applies to Globex?", tenant="acme", as_of="2026-03-01")
    assert other.names == ("Globex",) and not other.tenant_named
    assert parse_task("Which ticket tracked acme-9 in March?", tenant="acme", as_of="2026-02-10").period == (
        "2025-03-01",
        "2025-04-01",
    )
    with pytest.raises(ValidationError, match="task"):
        parse_task("  ")


def test_identifiers_of_every_kind():
    found = find_identifiers(
        "E-4471 in `reconcile_settlement`, commit a41c9e2 (RO-7702, build 3.9.4) on acme-9 for OPS-3318"
    )
    assert found == [
        ("E-4471", "key"),
        ("reconcile_settlement", "function"),
        ("a41c9e2", "commit"),
        ("RO-7702", "key"),
        ("3.9.4", "version"),
        ("acme-9", "account"),
        ("OPS-3318", "key"),
    ]
    assert find_identifiers("on 15 January 2026 at 15:00") == []


def test_keyword_query_feedback_and_jaccard():
    f = parse_task("Which commit fixed OPS-3318?", tenant="acme")
    assert keyword_query(f) == "OPS-3318 commit fixed"
    texts = ["the settlement ran twice after failover", "settlement postings twice", "a note on postings"]
    # settlement and twice occur in 2 texts, postings in 2 (ties: total count, then alphabetical)
    assert feedback_terms(texts, "acme reconciliation failure", n=3) == ["postings", "settlement", "twice"]
    assert feedback_terms(texts, "settlement failure", n=2) == ["postings", "twice"]  # no query stems
    assert jaccard("a b c d e", "a b c d f") == pytest.approx(4 / 6)


# -- the loop's guards ---------------------------------------------------------------------


def test_search_loop_is_refused_with_a_message():
    repeat = [
        Action("search", {"query": "why did acme reconciliation fail"}),
        Action("search", {"query": "Why did Acme's reconciliation fail?"}),
    ]
    box = ShelfToolbox()
    result = Agent(box, Scripted(repeat), placement="hybrid").run(
        "Why did Acme's reconciliation fail?", as_of="2026-02-02"
    )
    refused = [s for s in result.steps if s.refused]
    assert len(refused) == 2 and all("search loop" in s.refused for s in refused)
    assert result.searches == 1 and len([c for c in box.calls if c[0] == "search_knowledge"]) == 1


def test_search_cap():
    many = [Action("search", {"query": f"word{i} other{i} thing{i}"}) for i in range(10)]
    box = ShelfToolbox()
    result = Agent(box, Scripted(many), placement="tool", max_searches=3).run("anything at all here?")
    assert result.searches == 3
    assert sum(1 for c in box.calls if c[0] == "search_knowledge") == 3
    assert any(s.refused and "search cap" in s.refused for s in result.steps)
    with pytest.raises(ValidationError, match="placement"):
        Agent(box, placement="always")
    with pytest.raises(ValidationError, match="max_searches"):
        Agent(box, max_searches=0)


def test_placements_first_calls():
    task = "Which commit fixed OPS-11?"
    box = ShelfToolbox()
    pipe = Agent(box, placement="pipeline").run(task, as_of="2026-02-02")
    assert [s.action for s in pipe.steps if s.action in ("search", "fetch", "related")] == ["search"]
    assert pipe.steps[0].arguments["query"] == task
    tool = Agent(ShelfToolbox(), placement="tool").run(task, as_of="2026-02-02")
    assert tool.steps[0].arguments["query"] == "OPS-11 commit fixed"  # the policy's own first query
    hybrid = Agent(ShelfToolbox(), placement="hybrid").run(task, as_of="2026-02-02")
    assert hybrid.steps[0].arguments["query"] == task and hybrid.searches >= 1


def test_agent_follows_the_ticket_link_and_answers_with_a_verified_citation():
    result = Agent(ShelfToolbox(), placement="hybrid").run(
        "Why did Acme's January reconciliation fail?", as_of="2026-02-02"
    )
    assert not result.abstained, result.answer
    assert "ran twice after the scheduler failover" in result.answer.lower()
    assert "ops-11-c2#top" in result.citations
    assert result.verification is not None and result.verification.ok
    # the global runbook and the other tenant's postmortem were never the answer
    assert "rb-recon" not in " ".join(result.citations)
    # every piece of evidence stayed in context from the turn it arrived to the final turn
    last = result.steps[-1].turn
    assert all(b == last and 1 <= a <= b for a, b in result.evidence_turns.values())


def test_honest_abstention_names_searches_findings_and_what_to_confirm():
    result = Agent(ShelfToolbox(), placement="hybrid").run("What is Acme's CHF cutoff?", as_of="2026-02-02")
    assert result.abstained and result.value is None
    assert "Searched: 'What is Acme's CHF cutoff?'" in result.answer
    assert "To confirm:" in result.answer and ("Missing:" in result.answer or "Conflicting" in result.answer)
    assert result.citations == []


def test_unverifiable_answer_is_withheld():
    lie = [Action("answer", {"answer": "The cutoff is 17:00 [pol-cut#eur]."})]
    result = Agent(ShelfToolbox(), Scripted(lie), placement="hybrid").run(
        "What is the EUR cutoff?", as_of="2026-02-02"
    )
    assert result.abstained and result.value is None
    assert "failed citation checks" in result.answer


# -- the course corpus (slow) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def course():
    from ragkit.course import course_index

    return course_index()


def _box(index: Any, tenant: str, as_of: str, **kw: Any) -> Any:
    from ragkit import Toolbox
    from ragkit.core import parse_time, snapshot_filters

    moment = parse_time(as_of)
    return Toolbox(index, Scope(tenant, ["ops"]), filters=snapshot_filters(moment), **kw)


@pytest.mark.slow
def test_story_reconciliation_agent_solves_it(course):
    """The agent finds the comment that says settlement and cites it; the pipeline reads one page.

    Whether the pipeline's single page already holds the comment depends on the funnel: with
    the current funnel it does, so the pipeline answers from that comment, verified (measured
    on the course index; see bench/results/agent_quality.md for both placements on every case).
    If a change to the funnel pushes the comment off the page, the pipeline assert below fails:
    that is a change in the course's story, to be checked, not a flake.
    """
    task = "Why did Acme's January reconciliation fail?"
    pipe = Agent(_box(course, "acme", "2026-02-02"), placement="pipeline").run(task, as_of="2026-02-02")
    assert [s.action for s in pipe.steps[:-1]] == ["search"] and pipe.steps[0].arguments["query"] == task
    # was "abstained or verified", which could not fail; today the pipeline answers, verified
    assert not pipe.abstained and pipe.verification is not None and pipe.verification.ok, pipe.answer
    assert pipe.record.decision.doc_id == "ops-3318-c2" and "ops-3318-c2#top" in pipe.citations
    agent = Agent(_box(course, "acme", "2026-02-02"), placement="hybrid").run(task, as_of="2026-02-02")
    assert not agent.abstained, agent.answer
    assert "ran twice after the batch-scheduler failover" in agent.answer.lower()
    assert any(c.startswith("ops-3318-c2#") for c in agent.citations)
    assert agent.record.decision.doc_id == "ops-3318-c2"


@pytest.mark.slow
@pytest.mark.parametrize(("as_of", "expected"), [("2026-01-19", "15:00"), ("2026-01-12", "16:00")])
def test_story_eur_cutoff_both_dates(course, as_of, expected):
    day = int(as_of[-2:])
    task = f"Which settlement cutoff applies to Acme's Monday EUR batch on {day} January 2026?"
    result = Agent(_box(course, "acme", as_of)).run(task, as_of=as_of)
    assert not result.abstained and result.value == expected, result.answer


def test_demo_rescue_counts_only_delivered_sources():
    import pandas as pd

    from ragkit.app.demo import rescue

    cols = ["chunk_id", "lexical_rank", "dense_rank", "fused_rank", "final_rank", "delivered"]
    df = pd.DataFrame([("a#x~0", 1, None, 7, 9, False), ("b#y~0", 2, 5, 1, 1, True)], columns=cols)
    for col in cols[1:5]:
        df[col] = df[col].astype("Int64")
    line = rescue(df, "bm25_rescue", "a#x")
    assert "not delivered" in line and "rescued by BM25: no (fusion carried it to rank 7" in line
    assert rescue(df, "bm25_rescue", "b#y").endswith("rescued by BM25: yes")


# -- the LLM policy over loopback servers (protocol, not model quality) ----------------------

WIRE = __import__("pathlib").Path(__file__).parent / "fixtures" / "llm"


@pytest.fixture(scope="module")
def bm25_toolbox():
    """A real Toolbox over the fixture corpus, BM25 only and no reranker (no model is loaded)."""
    import numpy as np

    from ragkit import Funnel, FunnelSettings, Index, Toolbox, chunk_documents, load_corpus
    from ragkit.index import IndexSettings

    class NoModel:
        name, version, dim = "none", "0", 8

        def encode(self, texts, **kwargs):  # pragma: no cover - must never run
            raise AssertionError("these tests must not encode")

    docs, _ = load_corpus(WIRE.parent / "corpus")
    chunks = chunk_documents(docs)
    rows = sum(1 for c in chunks if c.kind == "chunk")
    index = Index(docs, chunks, np.zeros((rows, 8), np.float32), IndexSettings(), embedder=NoModel())
    funnel = Funnel(index, FunnelSettings(retrievers=("lexical",), rerank_mode="none"))
    return Toolbox(index, Scope("acme", ["ops"]), funnel=funnel)


def _serve(httpserver, name: str) -> None:
    import json

    pair = json.loads((WIRE / name).read_text())
    handler = httpserver.expect_ordered_request(pair["request"]["path"], method="POST")
    handler.respond_with_data(
        json.dumps(pair["response"]), status=pair.get("status", 200), content_type="application/json"
    )


def test_llm_policy_drives_the_loop_with_native_tool_calls(httpserver, bm25_toolbox):
    import json

    from ragkit.agent import LLMPolicy, OpenAIChat

    _serve(httpserver, "openai_tool_call.json")  # the model calls search_knowledge("EUR cutoff", k=3)
    _serve(httpserver, "openai_answer.json")  # then answers 16:00 citing settlement-runbook-v2#eur-cutoff
    client = OpenAIChat("gpt-4.1-mini", api_key="sk-test", base_url=httpserver.url_for("/v1"), max_retries=0)
    result = Agent(bm25_toolbox, LLMPolicy(client), placement="tool").run("What is the EUR cutoff?")
    httpserver.check_assertions()
    searches = [s for s in result.steps if s.action == "search"]
    assert [s.arguments for s in searches] == [{"query": "EUR cutoff", "k": 3}]  # the model's own call
    body = json.loads(httpserver.log[1][0].get_data())
    tool_msg = body["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_search_1"
    assert tool_msg["content"].startswith('<untrusted_evidence source="ragkit:search_knowledge">')
    assert result.policy == "llm:openai:gpt-4.1-mini" and result.record is not None
    if result.abstained:  # resolution disagreed with the model: both values are named
        assert "16:00" in result.answer and "resolving the delivered evidence" in result.answer
    else:  # the draft's citation verified against the delivered span
        assert result.citations == ["settlement-runbook-v2#eur-cutoff"] and result.value == "16:00"


def test_llm_policy_obeys_the_search_cap(httpserver, bm25_toolbox):
    from ragkit.agent import LLMPolicy, OpenAIChat

    for _ in range(2):
        _serve(httpserver, "openai_tool_call.json")  # the same search twice: the second is a loop
    _serve(httpserver, "openai_answer.json")  # the forced final answer (tools disabled)
    client = OpenAIChat("gpt-4.1-mini", api_key="sk-test", base_url=httpserver.url_for("/v1"), max_retries=0)
    result = Agent(bm25_toolbox, LLMPolicy(client), placement="tool", max_searches=1).run(
        "What is the EUR cutoff?"
    )
    httpserver.check_assertions()
    refused = [s for s in result.steps if s.refused]
    assert result.searches == 1 and len(refused) == 1 and "search cap" in refused[0].refused
    import json

    bodies = [json.loads(req.get_data()) for req, _ in httpserver.log]
    last = bodies[2]["messages"][-1]  # the refusal went back to the model as an error tool result
    assert last["role"] == "tool" and "search cap" in last["content"]


@pytest.mark.slow
def test_injection_documents_change_no_search_and_no_answer(course):
    """The injection cases, with and without the instruction-shaped documents in the index."""
    from ragkit import Index, load_cases
    from ragkit.course import course_cache

    clean = Index.load(course_cache() / "index-course")
    injected = [d for d, doc in clean.documents.items() if (doc.envelope.extra or {}).get("injection")]
    assert len(injected) >= 2
    clean.delete(injected)  # in memory only: the cached index on disk is untouched
    cases = [
        c
        for c in load_cases("datasets/opscorpus/cases.jsonl")
        if any(r.reason == "untrusted_instruction" for r in c.reject)
    ]
    assert cases
    for case in cases:
        runs = []
        for index in (course, clean):
            box = _box(index, case.caller.tenant, case.as_of.date().isoformat())
            runs.append(Agent(box).run(case.task, as_of=case.as_of.date().isoformat()))
        with_inj, without = runs
        # the searches (queries and filters) and the answer do not change; deleting documents also
        # changes BM25 statistics, so a later page can differ by a document (seen: one fetch list)
        searches = [[s.arguments for s in r.steps if s.action == "search"] for r in runs]
        assert searches[0] == searches[1], case.id
        assert (with_inj.abstained, with_inj.value) == (without.abstained, without.value), case.id
        assert not any(c.split("#")[0] in injected for c in with_inj.citations)


def test_demo_agent_part_prints_pipeline_and_agent_runs(bm25_toolbox):
    import io

    from rich.console import Console

    from ragkit.app.demo import run_agent_stories

    out = io.StringIO()
    stories = (("EUR cutoff", "What is the EUR cutoff?", "2026-01-19"),)
    results = run_agent_stories(
        bm25_toolbox.index, bm25_toolbox.funnel, Console(file=out, width=160), stories
    )
    text = out.getvalue()
    assert [r.placement for r in results] == ["pipeline", "hybrid"]
    assert "EUR cutoff [pipeline, offline policy]" in text and "EUR cutoff [hybrid, offline policy]" in text
    assert "search(query='What is the EUR cutoff?'" in text and "decision record:" in text
    assert results[0].searches == 1 and results[1].searches >= 1


def test_a_value_about_the_entity_but_not_the_asked_attribute_is_not_an_answer():
    """The ask names an attribute (a sweep threshold) that no source states; a passage that names
    the entity with an amount of another attribute must not be asserted: the agent abstains."""
    shelf = [
        *SHELF,
        {
            "doc_id": "ops-12",
            "anchor": "impact",
            "tenant": "acme",
            "source_type": "ticket",
            "authority": "support",
            "published_at": "2026-01-12T08:00:00+00:00",
            "effective_from": "2026-01-12T08:00:00+00:00",
            "links": [],
            "conditions": [],
            "text": "Affected account acme-77; roughly 38 merchants and EUR 481,009.21 in the batch.",
        },
    ]
    for placement in ("tool", "hybrid"):
        result = Agent(ShelfToolbox(docs=shelf), placement=placement).run(
            "What is the sweep threshold for acme-77?", as_of="2026-02-02"
        )
        assert result.abstained and result.value is None, result.answer
        assert "481,009.21" not in result.answer and "sweep" in result.answer.lower()


def test_a_stated_attribute_is_answered():
    shelf = [
        *SHELF,
        {
            "doc_id": "rb-sweeps",
            "anchor": "thresholds",
            "tenant": "acme",
            "source_type": "runbook",
            "authority": "operations",
            "published_at": "2025-10-01T00:00:00+00:00",
            "effective_from": "2025-10-01T00:00:00+00:00",
            "links": [],
            "conditions": [],
            "text": "Sweep threshold for acme-77: EUR 640,000; anything above it moves at 17:00.",
        },
    ]
    result = Agent(ShelfToolbox(docs=shelf), placement="hybrid").run(
        "What is the sweep threshold for acme-77?", as_of="2026-02-02"
    )
    assert not result.abstained, result.answer
    assert "640,000" in result.answer and "rb-sweeps#thresholds" in result.citations


def test_an_answer_below_the_fit_gate_becomes_an_abstention_that_says_why():
    task = "Why did Acme's January reconciliation fail?"
    answered = Agent(ShelfToolbox(), OfflinePolicy(abstain_below=-100.0), placement="hybrid").run(
        task, as_of="2026-02-02")
    assert not answered.abstained  # a gate no sentence falls below changes nothing
    gated = Agent(ShelfToolbox(), OfflinePolicy(abstain_below=100.0), placement="hybrid").run(
        task, as_of="2026-02-02")
    assert gated.abstained and gated.value is None
    assert "does not answer the question (fit" in gated.answer


class ChunkedShelf(ShelfToolbox):
    """A shelf whose entries keep their own offsets: several chunks of one long section."""

    def _item(self, d: dict[str, Any], rank: int) -> dict[str, Any]:
        item = super()._item(d, rank)
        end = d["start"] + len(d["text"])
        item.update(start=d["start"], end=end, chunk_id=f"{item['citation']}~{d['part']}")
        return item


def test_a_second_excerpt_of_a_section_joins_the_first_and_answers():
    """Two chunks of one long section arrive under one citation; the second (the answering
    one, shorter than the first) is kept beside it, not dropped as a repeat."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor")}
    chunks = [
        {**base, "doc_id": "arch-recon", "anchor": "top", "part": 0, "start": 0,
         "text": "Unmatched statement lines are listed in the matching report; matching runs when each "
                 "statement arrives and again at the end of the business day."},
        {**base, "doc_id": "arch-recon", "anchor": "top", "part": 1, "start": 1800,
         "text": "Statement lines that stay unmatched for 3 business days are flagged."},
    ]
    box = ChunkedShelf(docs=chunks)
    result = Agent(box, OfflinePolicy(), placement="hybrid").run(
        "After how many business days are unmatched statement lines flagged?", as_of="2026-02-02"
    )
    assert not result.abstained and result.value == "3 business days", result.answer
    [text] = [e.text for e in result.delivered if e.citation == "arch-recon#top"]
    assert "matching report" in text and "3 business days" in text
    assert result.verification is not None and result.verification.ok


class TitledShelf(ShelfToolbox):
    """A shelf whose entries keep their own titles (a comment is titled by its ticket's key)."""

    def _item(self, d: dict[str, Any], rank: int) -> dict[str, Any]:
        return {**super()._item(d, rank), "title": d.get("title", d["doc_id"])}


def _fee_thread(ticket_title: str, ticket_links: list[str], comment: str) -> list[dict[str, Any]]:
    """A ticket, its comment naming the fix's rollout RO-1717, and the rollout's approval."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    rollout = {**base, "tenant": "acme", "source_type": "rollout", "authority": "deployment_system",
               "doc_id": "ro-1717", "title": "RO-1717: fx-rates 3.10.6", "links": []}
    return [
        {**base, "doc_id": "ops-2727", "anchor": "top", "tenant": "acme", "source_type": "ticket",
         "title": ticket_title, "links": ticket_links,
         "text": "OPS-2727: after the settlement on 22 Oct, fee lines were posted in the wrong currency."},
        {**base, "doc_id": "ops-2727-c4", "anchor": "top", "tenant": "acme", "source_type": "ticket_comment",
         "title": "OPS-2727 comment by Kowalczyk", "links": ["ops-2727", "ro-1717"], "text": comment},
        {**rollout, "anchor": "approvals", "text": "RO-1717 was approved by Gallardo."},
    ]


def test_a_chain_carries_what_its_thread_is_about_to_the_record_it_reaches():
    """No identifier in the question: the ticket states the problem, its comment names the
    rollout, and the rollout states who approved it. The rollout's sentence states the asked
    relation; what it is about comes from the thread that led to it."""
    docs = _fee_thread("OPS-2727: [Acme] settlement problem on 22 Oct", [],
                       "Plan: invalidate the rate cache.\n\nFix merged as ccb378e; it goes out with RO-1717.")
    box = TitledShelf(docs=docs)
    result = Agent(box, OfflinePolicy(), placement="hybrid").run(
        "Who signed off the deploy that fixed the fee lines posted in the wrong currency?", as_of="2026-02-02"
    )
    assert not result.abstained and result.value == "Gallardo", result.answer


def test_the_second_ask_follows_a_link_the_first_ask_already_read():
    """Two asks over one thread: the first ask's hop delivers the rollout; the second ask reaches
    the same rollout by the ticket's link and reads its approver from it (it was set aside as
    "does not name OPS-2727" when only the run that fetched a record counted it as reached)."""
    docs = _fee_thread("OPS-2727: [Acme] fee lines in the wrong currency", ["ops-2727-c4", "ro-1717"],
                       "Fix merged as ccb378e; it goes out with RO-1717.")
    changes = {**docs[-1], "anchor": "changes", "text": "| Commit | ccb378e |"}
    docs.append(changes)
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "On OPS-2727: which commit carried the fix, and who approved the release it went out in?",
        as_of="2026-02-02",
    )
    assert not result.abstained, result.answer
    assert "Gallardo" in result.values and "ccb378e" in result.values, result.answer


def test_a_table_continued_under_a_new_heading_keeps_the_currency_its_first_part_states():
    """A schedule's continuation lists bands without their currency; its first part says "in EUR".
    The continuation is not set aside as "does not name EUR": it states the EUR 12,000 band's role."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    book = {**base, "doc_id": "hb-credits", "tenant": "global", "source_type": "policy",
            "authority": "policy_owner", "title": "Goodwill credits handbook", "links": []}
    docs = [
        {**book, "anchor": "schedule-1-credit-authority", "text": "Schedule 1: credit authority. Amounts "
         "in this schedule are per credit and in EUR.\n\n| Tier | Amount | Lowest approving role |\n"
         "|---|---|---|\n| Tier 1 | 0 to 500 | support agent |\n| Tier 2 | 501 to 2,500 | team lead |"},
        {**book, "anchor": "schedule-1-continued", "text": "Schedule 1 (continued): credit authority.\n\n"
         "| Tier 3 | 2,501 to 10,000 | payments controller |\n"
         "| Tier 4 | 10,001 to 50,000 | head of operations |"},
    ]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "Which role at the lowest level can approve a goodwill credit of EUR 12,000 on its own?",
        as_of="2026-02-02",
    )
    assert not result.abstained and "head of operations" in result.answer, result.answer


def test_the_asked_records_own_comment_points_to_where_the_value_is():
    """The ticket's comment says where the patch went ("ships in RO-1717") without saying "fix";
    it is set aside, yet it names the rollout, whose table row holds the change number asked (the
    rollout is delivered by the first search, but counts only once the comment has led to it)."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    docs = [
        {**base, "doc_id": "ops-2727", "anchor": "top", "tenant": "acme", "source_type": "ticket",
         "title": "OPS-2727: [Acme] fee lines in the wrong currency", "links": [],
         "text": "OPS-2727: after the settlement on 22 Oct, fee lines were posted in the wrong currency."},
        {**base, "doc_id": "ops-2727-c3", "anchor": "top", "tenant": "acme", "source_type": "ticket_comment",
         "title": "OPS-2727 comment by Kowalczyk", "links": ["ops-2727"],
         "text": "Plan: invalidate the rate cache. Patched in ccb378e, ships in RO-1717."},
        {**base, "doc_id": "ro-1717", "anchor": "top", "tenant": "acme", "source_type": "rollout",
         "authority": "deployment_system", "title": "RO-1717: fx-rates 3.10.6", "links": [],
         "text": "RO-1717: fx-rates 3.10.6\n\n| Field | Value |\n|---|---|\n| Change | CHG-4411 |"},
    ]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "Under which change number did the fix for OPS-2727 go to production?", as_of="2026-02-02"
    )
    assert not result.abstained and result.value == "CHG-4411", result.answer


def test_a_which_noun_question_is_answered_by_the_identifier_after_that_noun():
    """"Which merchant ...?" names no kind of value; the sentence "wants merchant M69123 on manual
    release" answers it with the merchant's identifier, not with the whole sentence."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    docs = [{**base, "doc_id": "ops-5360", "anchor": "top", "tenant": "acme", "source_type": "ticket",
             "title": "OPS-5360: Add a merchant to the manual release list", "links": [],
             "text": "Acme wants merchant M69123 on manual release while they review its refund rate."}]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "Which merchant does OPS-5360 want put on manual release?", as_of="2026-02-02"
    )
    assert not result.abstained and result.value == "M69123", result.answer


def test_which_policy_a_chain_reaches_is_answered_by_the_reference_that_names_it():
    """"Which policy governs the release ...?" asks which record, not what the policy says: the
    rollout's sign-off names the policy; the policy's own text (also delivered) names no policy."""
    docs = _fee_thread("OPS-2727: [Acme] fee lines in the wrong currency", ["ops-2727-c4"],
                       "Fix merged as ccb378e; it goes out with RO-1717.")
    docs[-1] = {**docs[-1], "anchor": "sign-off", "links": ["pol-fees-v2"],
                "text": "Approval for RO-1717: Gallardo (release manager). Governed by pol-fees-v2, "
                        "section \"Fee currency\"."}
    docs.append({**docs[0], "doc_id": "pol-fees-v2", "anchor": "fee-currency", "tenant": "global",
                 "source_type": "policy", "authority": "policy_owner", "title": "Fee policy v2", "links": [],
                 "text": "Fee lines are posted in the currency of the settlement batch they belong to."})
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "Which policy governs the release that shipped the fix for OPS-2727?", as_of="2026-02-02"
    )
    assert not result.abstained and result.value == "pol-fees-v2", result.answer


class HiddenSectionShelf(TitledShelf):
    """A shelf whose ``hidden`` sections no search finds: only reading their document whole does."""

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name != "search_knowledge":
            return super().call(name, arguments)
        shown, self.docs = self.docs, [d for d in self.docs if not d.get("hidden")]
        try:
            return super().call(name, arguments)
        finally:
            self.docs = shown


def _pm_1935() -> tuple[dict[str, Any], dict[str, Any]]:
    """The shelf's base entry, and the postmortem of OPS-1935 (its timeline row states the workaround)."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    pm = {**base, "doc_id": "pm-acme-ops-1935", "tenant": "acme", "source_type": "postmortem",
          "authority": "incident_review", "title": "Acme reconciliation: misallocated refunds",
          "entities": ["acme", "OPS-1935"], "links": ["ops-1935"]}
    return base, pm


#: The postmortem's timeline: the ticket's opening and the workaround, each a row.
_TIMELINE_1935 = ("| Time (UTC) | Event |\n|---|---|\n| 07:34 | OPS-1935 opened |\n"
                  "| 11:34 | workaround in place |")


def test_a_record_about_the_asked_key_is_read_whole():
    """The postmortem of OPS-1935 is not the ticket, but its envelope names OPS-1935: when its
    summary is all a search delivers, the agent reads it whole and finds the timeline row."""
    base, pm = _pm_1935()
    docs = [
        {**base, "doc_id": "ops-1935", "anchor": "top", "tenant": "acme", "source_type": "ticket",
         "title": "OPS-1935: refunds charged to the wrong merchant", "links": [],
         "text": "OPS-1935: refunds were charged to the wrong merchant after the Sunday run."},
        {**pm, "anchor": "summary", "text": "Refunds were charged to the wrong merchant (OPS-1935)."},
        {**pm, "anchor": "timeline", "hidden": True, "text": _TIMELINE_1935},
    ]
    result = Agent(HiddenSectionShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "At what time was the workaround in place for OPS-1935?", as_of="2026-02-02"
    )
    assert not result.abstained and result.value == "11:34", result.answer


def test_a_time_zone_the_question_names_is_not_the_attribute_it_asks():
    """"What time (UTC) did we have a workaround running?": the rollout linked from the ticket
    says "finished at 17:21 UTC", which names the zone but no workaround; it is set aside and the
    postmortem's timeline row of the workaround answers (or, unread, the agent abstains)."""
    base, pm = _pm_1935()
    docs = [
        {**base, "doc_id": "ops-1935", "anchor": "top", "tenant": "acme", "source_type": "ticket",
         "title": "OPS-1935: refunds charged to the wrong merchant", "links": ["ro-8062"],
         "text": "OPS-1935: refunds were charged to the wrong merchant. The fix goes out with RO-8062."},
        {**base, "doc_id": "ro-8062", "anchor": "result", "tenant": "acme", "source_type": "rollout",
         "authority": "deployment_system", "title": "RO-8062: clearing-gateway 2.5.6", "links": [],
         "text": "RO-8062 for OPS-1935: deployment finished at 17:21 UTC on 26 May 2025."},
        {**pm, "anchor": "timeline", "hidden": True, "text": _TIMELINE_1935},
    ]
    question = "OPS-1935: what time (UTC) did we have a workaround running?"
    result = Agent(HiddenSectionShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        question, as_of="2026-02-02")
    assert result.value != "17:21", result.answer
    found = [{**d, "hidden": False} for d in docs]
    result = Agent(HiddenSectionShelf(docs=found), OfflinePolicy(), placement="hybrid").run(
        question, as_of="2026-02-02")
    assert not result.abstained and result.value == "11:34", result.answer


def test_the_occasion_a_question_leads_in_with_is_not_what_it_asks():
    """"On the Sunday when Acme's refunds were charged to the wrong merchant, what time did we get a
    workaround running?": the lead-in says which day is meant; the ask is a workaround's time. A
    timeline whose only row is the ticket's opening, under a title about the refunds, does not state
    it: the agent abstains rather than answer 07:34."""
    base, pm = _pm_1935()
    docs = [
        {**pm, "anchor": "timeline", "title": "Acme: refunds charged to the wrong merchant",
         "text": "| Time (UTC) | Event |\n|---|---|\n| 07:34 | OPS-1935 opened |"},
    ]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "On the Sunday when Acme's refunds were charged to the wrong merchant, what time did we get a "
        "workaround running?", as_of="2026-02-02")
    assert result.abstained, result.answer


def test_a_misspelt_word_is_searched_as_the_evidence_spells_it():
    """"the dispute commitee": the first search finds a passage that spells it "committee", so the
    agent's keyword search asks for "committee" and finds the clause the misspelling never would."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    hb = {**base, "doc_id": "hb-disputes", "source_type": "policy", "authority": "policy_owner", "links": []}
    docs = [
        {**hb, "anchor": "3-intake", "text": "3.1 Disputes are logged on intake; the disputes committee "
                                             "sees the weekly list."},
        {**hb, "anchor": "4-committee", "spelt": "committee",
         "text": "4.6 A dispute whose amount is above EUR 15,000 goes to the disputes committee."},
    ]

    class SpeltShelf(ShelfToolbox):
        """A passage marked ``spelt`` is found only by a query that spells that word right."""

        def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            if name != "search_knowledge":
                return super().call(name, arguments)
            shown = self.docs
            self.docs = [d for d in shown if d.get("spelt", "") in str(arguments.get("query", ""))]
            try:
                return super().call(name, arguments)
            finally:
                self.docs = shown

    result = Agent(SpeltShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "What's the threshold for sending a dispute to the dispute commitee?", as_of="2026-04-15")
    assert not result.abstained and result.value == "EUR 15000", result.answer


def test_before_abstaining_the_agent_lists_what_links_to_the_record_the_question_names():
    """"How long did it take before the OPS-1099 failure was detected?": the ticket's thread does not
    say, and no search finds the postmortem, which links to the ticket (the ticket does not link to
    it). Before abstaining, the agent lists what links to OPS-1099 and reads the review it shows."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    docs = [
        {**base, "doc_id": "ops-1099", "anchor": "top", "tenant": "acme", "source_type": "ticket",
         "title": "OPS-1099: duplicate captures in Acme settlement", "links": [],
         "text": "OPS-1099: the card batch was sent twice; the failure was seen at the bank."},
        {**base, "doc_id": "pm-acme-ops-1099", "anchor": "detection", "tenant": "acme", "hidden": True,
         "source_type": "postmortem", "authority": "incident_review", "links": ["ops-1099"],
         "title": "Postmortem: duplicate captures",
         "text": "Detection took 10 minutes; the tenant noticed it first."},
    ]

    class LinkedShelf(HiddenSectionShelf):
        """``related_documents`` lists the documents that link to the one asked about."""

        def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            out = super().call(name, arguments)
            if name == "related_documents":
                out["linked_from"] = [
                    self._item(d, 1) for d in self.docs if arguments["doc_id"] in d["links"]]
            return out

    box = LinkedShelf(docs=docs)
    result = Agent(box, OfflinePolicy(), placement="hybrid").run(
        "How long did it take before the OPS-1099 failure was detected?", as_of="2026-02-02")
    assert not result.abstained and result.value == "10 minutes", result.answer
    assert ("related_documents", {"doc_id": "ops-1099"}) in box.calls


def test_the_source_a_question_reads_from_is_not_what_it_asks():
    """"What status is OPS-1075 in according to the thread?" asks a status; "the thread" says
    where to read it, so the comment "Status: investigating." answers without naming a thread."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    docs = [
        {**base, "doc_id": "ops-1075", "anchor": "top", "tenant": "acme", "source_type": "ticket",
         "title": "OPS-1075: funding run problem on 31 Dec", "links": ["ops-1075-c4"],
         "text": "OPS-1075: the funding run on 31 Dec did not start."},
        {**base, "doc_id": "ops-1075-c4", "anchor": "top", "tenant": "acme", "source_type": "ticket_comment",
         "title": "OPS-1075 comment by Vasquez-Lind", "links": ["ops-1075"],
         "text": "Still looking at the scheduler logs. Status: investigating."},
    ]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "What status is OPS-1075 in according to the thread?", as_of="2026-01-12")
    assert not result.abstained and result.value == "investigating", result.answer


def test_how_a_value_rates_and_what_is_permitted_name_no_thing_a_sentence_must_state():
    """"What's the latest time of day a file-ingest release is allowed to go out?" asks when a
    release may go out: "latest" rates the time and "allowed" says it is permitted, so "Releases of
    file-ingest go out on weekdays before 15:00 CET" states it without either word."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    note = {**base, "doc_id": "arch-file-ingest", "tenant": "global", "source_type": "architecture_note",
            "authority": "engineering", "title": "file-ingest architecture", "links": []}
    docs = [
        {**note, "anchor": "overview", "text": "file-ingest reads the acquirer files into the platform."},
        {**note, "anchor": "deployment",
         "text": "Releases of file-ingest go out on weekdays before 15:00 CET, never during a batch close."},
    ]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "What's the latest time of day a file-ingest release is allowed to go out?", as_of="2026-05-01")
    assert not result.abstained and result.value == "15:00", result.answer


def test_a_shared_record_that_names_the_tenant_tells_of_the_tenants_own_event():
    """"What share of the platform's volume came from Acme in Q4 2025?" asks what happened to Acme;
    the platform review is a shared record, not Acme's own, but its row names Acme, so it is about
    Acme and answers; a shared record that does not name Acme stays aside."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    shared = {**base, "tenant": "global", "source_type": "wiki", "authority": "operations", "links": [],
              "published": "2026-01-20", "valid_from": "2026-01-20"}
    docs = [
        {**shared, "doc_id": "qr-platform-2025-q4", "anchor": "volumes-per-tenant",
         "title": "Platform operations review Q4 2025",
         "text": "| Tenant | Card captures | Share of volume |\n|---|---|---|\n| Acme | 690,000 | 18% |"},
        {**shared, "doc_id": "qr-platform-2025-q4", "anchor": "availability",
         "title": "Platform operations review Q4 2025",
         "text": "Platform availability over the quarter was 99.85% of all volume windows."},
    ]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "What share of the platform's total volume came from Acme in Q4 2025?", as_of="2026-05-15")
    assert not result.abstained and result.value == "18%", result.answer


def test_a_thing_named_by_its_relation_to_an_identifier_is_looked_up_first():
    """"The bank that holds acme-19559": the accounts table names the bank (Vireo Bank); the
    agent searches that bank's agreement, whose documents then count although they never name
    the account, while another bank's agreement stays aside."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    contract = {**base, "tenant": "global", "source_type": "policy", "authority": "policy_owner", "links": []}
    docs = [
        {**base, "doc_id": "wiki-acme-accounts", "anchor": "accounts", "tenant": "acme",
         "source_type": "wiki",
         "title": "Acme accounts", "links": [],
         "text": "| Account | Currency | Bank |\n|---|---|---|\n| acme-19559 | EUR | Vireo Bank |"},
        {**contract, "doc_id": "ctr-vireo", "anchor": "12-limits", "title": "Vireo Bank payment services",
         "text": "12.4 The service credits payable by Vireo Bank for any month shall not exceed 10%."},
        {**contract, "doc_id": "ctr-kestrel", "anchor": "12-limits", "title": "Kestrel Bank payment services",
         "text": "12.4 The service credits payable by Kestrel Bank for any month shall not exceed 15%."},
    ]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "What is the monthly cap on service credits in our agreement with the bank that holds acme-19559?",
        as_of="2026-05-01",
    )
    assert not result.abstained and result.value == "10%", result.answer


def test_a_cause_the_question_rules_out_does_not_make_it_a_why_question():
    """"... to end our agreement without cause?" asks for a notice period; the word "cause"
    after "without" does not make it a question about causes (which reads only causal sentences)."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    docs = [{**base, "doc_id": "ctr-kestrel", "anchor": "16-termination", "tenant": "global", "links": [],
             "source_type": "policy", "authority": "policy_owner", "title": "Agreement with Kestrel Bank",
             "text": "16.2 Either party may terminate this Agreement for convenience by giving not less "
                     "than 120 days' written notice to the other."}]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "How much notice would we have to give Kestrel Bank to end our agreement without cause?",
        as_of="2026-04-01",
    )
    assert not result.abstained and result.value == "120 days", result.answer


def test_a_clause_a_section_refers_to_by_the_asked_word_is_read():
    """"... subject to the cap in clause 12.4": no search delivers clause 12.4, so the agent reads
    the agreement whole; the clause states the cap (25%), and the availability clause, which shares
    more of the message's context words, does not answer "What is that cap?"."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    contract = {**base, "doc_id": "ctr-kestrel", "tenant": "global", "source_type": "policy", "links": [],
                "authority": "policy_owner", "title": "Agreement with Kestrel Bank"}
    docs = [
        {**contract, "anchor": "6-availability", "text": "## 6 Availability\n\n"
         "6.1 The Bank shall make the primary Channel available at least 99.9% of the time in each "
         "calendar month.\n6.2 If availability falls below that level, the Customer is entitled to "
         "service credits, subject to the cap in clause 12.4."},
        {**contract, "anchor": "12-limits", "hidden": True, "text": "## 12 Limits\n\n"
         "12.4 The total service credits payable for any calendar month shall not exceed 25%."},
    ]
    result = Agent(HiddenSectionShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "Our agreement with Kestrel Bank gives service credits when the primary channel misses its "
        "availability level, subject to a cap set in another clause. What is that cap?", as_of="2026-02-02",
    )
    assert not result.abstained and result.value == "25%", result.answer


def test_the_record_a_question_names_by_type_and_key_is_read_whole_before_it_answers():
    """"What fix does the OPS-9577 postmortem record?": the postmortem's summary, delivered first,
    names OPS-9577 but says nothing of the fix; the agent reads the postmortem whole, and the
    sentence that states the fix answers. ("postmortem" says which record, not what is asked.)"""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    pm = {**base, "doc_id": "pm-acme-ops-9577", "tenant": "acme", "source_type": "postmortem",
          "authority": "incident_review", "title": "Postmortem: Acme settlement incident, May 2025",
          "entities": ["acme", "OPS-9577"], "links": ["ops-9577"]}
    docs = [
        {**pm, "anchor": "summary",
         "text": "The bank rejected the instruction file as malformed. Tracked in OPS-9577."},
        {**pm, "anchor": "root-cause", "hidden": True,
         "text": "## Root cause\n\nDisk on the export host filled up. The fix was to add disk alerts "
                 "and rotate old exports."},
    ]
    result = Agent(HiddenSectionShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "What fix does the OPS-9577 postmortem record?", as_of="2026-02-02"
    )
    assert not result.abstained and "add disk alerts" in str(result.value), result.answer


def test_a_status_is_asked_by_where_it_stands_or_by_a_proposed_status():
    """"Where does OPS-1075 stand at the moment?" and "Has OPS-1075 been resolved yet?" ask the
    ticket's status; the latest comment's status field states it (the question's "resolved" is the
    status it proposes, not a word the answer must repeat)."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    ticket = {**base, "tenant": "acme", "source_type": "ticket"}
    docs = [
        {**ticket, "doc_id": "ops-1075", "anchor": "top", "title": "OPS-1075: Acme funding run problem",
         "links": ["ops-1075-c4"], "text": "OPS-1075: the funding run of 31 December failed."},
        {**ticket, "doc_id": "ops-1075-c4", "anchor": "top", "source_type": "ticket_comment",
         "title": "OPS-1075 comment by Eberhardt", "links": ["ops-1075"],
         "text": "Update sent to the tenant.\n\nStatus: investigating."},
    ]
    for question in ("Where does OPS-1075 stand at the moment?", "Has OPS-1075 been resolved yet?"):
        result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(question,
                                                                                        as_of="2026-02-02")
        assert not result.abstained and result.value == "investigating", (question, result.answer)


def test_which_thing_holds_what_a_record_names_is_read_from_that_things_row():
    """"Which bank holds the account affected in OPS-1769?" asks a bank: the ticket names the
    account ("Affected account acme-45727"), not its bank, so it does not answer; the agent searches
    the account and reads the bank from the accounts table's row of that account."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    docs = [
        {**base, "doc_id": "ops-1769", "anchor": "top", "tenant": "acme", "source_type": "ticket",
         "title": "OPS-1769: Acme file sending hangs", "links": [],
         "text": "Affected account acme-45727; roughly 5 merchants and EUR 649,975.83 in the batch."},
        {**base, "doc_id": "wiki-acme-accounts", "anchor": "accounts", "tenant": "acme",
         "source_type": "wiki", "title": "Acme accounts", "links": [], "hidden": True,
         "text": "| Account | Currency | Bank |\n|---|---|---|\n| acme-72448 | EUR | Pellucid Bank |\n"
                 "| acme-45727 | EUR | Meridian Trust |"},
    ]

    class AccountShelf(HiddenSectionShelf):
        """The accounts table is found only by searching an account's id."""

        def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            if name == "search_knowledge" and "acme-45727" in str(arguments.get("query", "")):
                return TitledShelf.call(self, name, arguments)
            return super().call(name, arguments)

    result = Agent(AccountShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "Which bank holds the account affected in OPS-1769?", as_of="2026-02-02"
    )
    assert not result.abstained and result.value == "meridian trust", result.answer


def test_the_bank_behind_an_account_is_read_from_the_accounts_row_and_its_agreement_answers():
    """"How many days does the bank behind Acme's euro account get to remedy a breach?" asks a
    duration of a bank the question describes, not a cause ("behind"). The accounts table's row of
    Acme's EUR account names the bank (a ticket's row of the same account, with no bank column,
    names none); the question is then about that bank, and its agreement answers, not another
    bank's that the searches also deliver."""
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    breach = ("16.3 Either party may terminate with immediate effect if the other party commits a material "
              "breach that it has not remedied within {} days.")
    contract = {**base, "source_type": "policy", "authority": "policy_owner", "anchor": "16-termination",
                "links": []}
    docs = [
        {**contract, "doc_id": "ctr-quarry", "title": "Payment services agreement with Quarry Street Bank",
         "entities": ["quarry-street-bank"], "text": breach.format(45)},
        {**contract, "doc_id": "ctr-vireo", "title": "Payment services agreement with Vireo Bank",
         "entities": ["vireo-bank"], "effective_from": "2025-11-01T00:00:00+00:00",
         "text": breach.format(60)},
        {**base, "doc_id": "ops-7879", "anchor": "details", "tenant": "acme", "source_type": "ticket",
         "title": "OPS-7879: Acme misallocated refunds", "links": [],
         "text": "| Account | Currency | Amount | Merchants |\n|---|---|---|---|\n"
                 "| acme-99306 | EUR | EUR 441,785.24 | 46 |"},
        {**base, "doc_id": "wiki-acme-accounts", "anchor": "accounts", "tenant": "acme",
         "source_type": "wiki", "title": "Acme account overview", "links": [],
         "text": "| Account | Currency | Bank |\n|---|---|---|\n| acme-99306 | EUR | Quarry Street Bank |\n"
                 "| acme-31731 | NOK | Vireo Bank |"},
    ]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "How many days does the bank behind Acme's euro account get to remedy a material breach before "
        "we may end our agreement with it?", as_of="2026-05-12")
    assert not result.abstained and result.value == "45 days", result.answer


def test_a_patch_is_a_fix_and_the_rollout_carrying_it_completes_on_its_date():
    """A comment says "Patch 4952b17 is approved, deploying via RO-2016": the rollout it names is
    the fix's ("patch" and "fix" are one meaning in the profile's synonyms), so the rollout's
    completion row answers when the fix was completed; "carrying" names no attribute."""
    docs = _fee_thread("OPS-2727: [Acme] fee lines in the wrong currency", ["ops-2727-c4"],
                       "Patch 4952b17 is approved, deploying via RO-1717 this afternoon.")
    docs[-1] = {**docs[-1], "anchor": "record",
                "text": "| Field | Value |\n|---|---|\n| Started | 2026-02-15 08:41 UTC |\n"
                        "| Completed | 2026-02-15 10:03 UTC |"}
    for question in ("On what day was the fix for OPS-2727 completed in production?",
                     "When did the rollout carrying the OPS-2727 fix complete?"):
        result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(question,
                                                                                        as_of="2026-03-01")
        assert not result.abstained and result.value == "2026-02-15", (question, result.answer)


def test_a_rollout_named_in_another_events_thread_does_not_answer_for_the_asked_event():
    """"Which rollout pinned the schedules to UTC after a daylight-saving shift broke the July
    postings?" names no ticket: the thread the task's words place best (OPS-1333, whose comment
    states that cause and fix) is the event. Another ticket's thread (OPS-6965, a stale FX rate in
    the same month) names a rollout for *its* fix; that is another event's rollout, and with none
    recorded for the asked event the agent abstains."""
    july = "2025-07-23T09:00:00+00:00"
    base = {k: v for k, v in SHELF[0].items() if k not in ("text", "doc_id", "anchor", "links")}
    base.update(published_at=july, effective_from=july)
    ticket = {**base, "tenant": "acme", "source_type": "ticket"}
    comment = {**ticket, "source_type": "ticket_comment", "anchor": "top"}
    docs = [
        {**ticket, "doc_id": "ops-1333", "anchor": "top", "title": "OPS-1333: Acme ledger postings stopped",
         "links": ["ops-1333-c2"],
         "text": "OPS-1333: in July, ledger postings stopped halfway through the batch."},
        {**comment, "doc_id": "ops-1333-c2", "title": "OPS-1333 comment by Mbeki", "links": ["ops-1333"],
         "text": "A daylight-saving shift moved the cron schedule. The fix was to pin every schedule "
                 "to UTC."},
        {**ticket, "doc_id": "ops-6965", "anchor": "top", "title": "OPS-6965: Acme reports stale FX rate",
         "links": ["ops-6965-c4"],
         "text": "OPS-6965: in July, after a schedule change, conversions used the previous day's FX "
                 "rate (times below are UTC)."},
        {**comment, "doc_id": "ops-6965-c4", "title": "OPS-6965 comment by Cavanagh", "links": ["ops-6965"],
         "text": "Fix merged as 3f17be5; it goes out with RO-7781."},
        {**base, "doc_id": "ro-7781", "anchor": "top", "tenant": "acme", "source_type": "rollout",
         "authority": "deployment_system", "title": "RO-7781: card-settler 2.3.0", "links": [],
         "text": "RO-7781 rolled out card-settler 2.3.0."},
    ]
    result = Agent(TitledShelf(docs=docs), OfflinePolicy(), placement="hybrid").run(
        "Which Acme rollout pinned the schedules to UTC after a daylight-saving shift broke the July "
        "postings?", as_of="2025-09-15",
    )
    assert result.abstained, result.answer
