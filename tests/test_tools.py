"""The tool contract: schemas, argument errors, scope, truncation, links (ragkit.tools.toolbox).

Fast tests run on a hand-built index whose embedder refuses to run (only lexical
structures, sections and envelopes are needed for everything but search). Tests that
search are marked slow: they use the real bundled embedder and cross-encoder.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from jsonschema import Draft202012Validator

from ragkit import Document, Envelope, Index, Scope, Toolbox, ToolSettings, chunk_documents
from ragkit.index import IndexSettings, doc_fingerprint
from ragkit.models import count_tokens
from ragkit.tools import TOOL_NAMES, anthropic_tools, for_model, openai_tools
from ragkit.tools.arguments import combine_filters

SECRETS = ("GLOBEX-SECRET-7731", "ACME-FINANCE-SECRET-5512")

LONG_BODY = "\n\n".join(
    f"## Step {n}\n\n" + " ".join(f"Operators check settlement item {n}.{i} before release."
                                  for i in range(6))
    for n in range(1, 5))


def _docs() -> list[Document]:
    def doc(text: str, **env: object) -> Document:
        return Document(Envelope.from_mapping(env), text)

    return [
        doc("# Policy v1\n\n## Cutoffs\n\nEUR cutoff 14:00 CET.", doc_id="policy-v1", title="Policy v1",
            source_type="policy", published_at="2025-01-01", effective_from="2025-01-01",
            effective_to="2025-10-01"),
        doc("# Policy v2\n\n## Cutoffs\n\nEUR cutoff 16:00 CET.", doc_id="policy-v2", title="Policy v2",
            source_type="policy", supersedes=["policy-v1"], effective_from="2025-10-01"),
        doc("# Policy v3\n\n## Cutoffs\n\nEUR cutoff 15:00 CET for migrated tenants.", doc_id="policy-v3",
            title="Policy v3", source_type="policy", supersedes=["policy-v2"], effective_from="2026-01-01"),
        doc("# Loop A\n\nA note.", doc_id="loop-a", source_type="wiki", supersedes=["loop-b"]),
        doc("# Loop B\n\nB note.", doc_id="loop-b", source_type="wiki", supersedes=["loop-a"]),
        doc("# OPS-1 Acme migration\n\nMigrate Acme. See the rollout.", doc_id="acme-t1", title="OPS-1",
            source_type="ticket", tenant="acme",
            links=["acme-rollout", "policy-v3", "globex-secret", "missing-doc", "acme-restricted"]),
        doc("# Acme rollout\n\nCutover done on 15 January 2026.", doc_id="acme-rollout",
            source_type="rollout", tenant="acme", links=["acme-t1"], published_at="2026-01-15"),
        doc(f"# Finance note\n\n{SECRETS[1]} acme finance only.", doc_id="acme-restricted",
            source_type="ticket_comment", tenant="acme", acl_groups=["finance"], links=["policy-v3"],
            supersedes=["acme-rollout"]),
        doc(f"# Globex note\n\n{SECRETS[0]} globex only.", doc_id="globex-secret", source_type="postmortem",
            tenant="globex", links=["policy-v3", "acme-t1"], supersedes=["policy-v3"]),
        doc("# Long runbook\n\n" + LONG_BODY, doc_id="long-runbook", title="Long runbook",
            source_type="runbook"),
    ]


class _NoModel:
    """Stands in for the embedder in fast tests: any attempt to encode fails the test."""

    name, version, dim = "none", "0", 8

    def encode(self, texts, **kwargs):  # pragma: no cover - must never run
        raise AssertionError("fast tests must not encode")


def _hand_index() -> Index:
    docs = _docs()
    chunks = chunk_documents(docs)
    rows = sum(1 for c in chunks if c.kind == "chunk")
    manifest = {"doc_fingerprints": {d.doc_id: doc_fingerprint(d) for d in docs}}  # as a built index has
    return Index(docs, chunks, np.zeros((rows, 8), np.float32), IndexSettings(), embedder=_NoModel(),
                 manifest=manifest)


@pytest.fixture
def box() -> Toolbox:
    return Toolbox(_hand_index(), Scope("acme", ["ops"]), settings=ToolSettings(doc_tokens=80))


def _assert_error(resp: dict, code: str, field: str | None = None) -> dict:
    assert resp["ok"] is False, resp
    err = resp["error"]
    assert err["code"] == code, err
    if field is not None:
        assert err["field"] == field, err
    assert err["message"] and err["example"], err
    # the example in every error is itself a valid call
    spec = {t["name"]: t for t in anthropic_tools()}[err["example"]["name"]]
    Draft202012Validator(spec["input_schema"]).validate(err["example"]["arguments"])
    assert "Traceback" not in json.dumps(resp)
    return err


# -- schemas -------------------------------------------------------------------------------------
def test_one_definition_two_formats():
    oa, an = openai_tools(), anthropic_tools()
    assert [t["function"]["name"] for t in oa] == [t["name"] for t in an] == list(TOOL_NAMES)
    for o, a in zip(oa, an, strict=True):
        assert o["type"] == "function"
        assert o["function"]["parameters"] == a["input_schema"]
        assert o["function"]["description"] == a["description"]
        assert a["input_schema"]["additionalProperties"] is False
    narrow = openai_tools(ToolSettings(max_k=5, default_k=3))
    assert "At most 5 results" in narrow[0]["function"]["description"]


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_example_calls_validate_against_each_schema(fmt):
    tools = openai_tools() if fmt == "openai" else anthropic_tools()
    schemas = {(t["function"]["name"] if fmt == "openai" else t["name"]):
               (t["function"]["parameters"] if fmt == "openai" else t["input_schema"]) for t in tools}
    good = {
        "search_knowledge": [{"query": "EUR cutoff"}, {"query": "x", "k": 8, "doc_type": "policy,runbook",
                                                       "valid_at": "2026-01-19", "tenant": "acme",
                                                       "published_after": "2025-01-01",
                                                       "published_before": "2026-02-01"}],
        "retrieve_documents": [{"ids": ["a#b", "c"]}],
        "related_documents": [{"doc_id": "ops-1423"}],
    }
    bad = {
        "search_knowledge": [{}, {"query": ""}, {"query": "x", "k": 0}, {"query": "x", "k": "4"},
                             {"query": "x", "top_k": 4}],
        "retrieve_documents": [{"ids": []}, {"ids": "a"}, {"ids": [""]}, {"ids": ["a"], "extra": 1}],
        "related_documents": [{"doc_id": ""}, {"id": "a"}, {"doc_id": 3}],
    }
    for name, schema in schemas.items():
        validator = Draft202012Validator(schema)
        Draft202012Validator.check_schema(schema)
        for args in good[name]:
            validator.validate(args)
        for args in bad[name]:
            assert list(validator.iter_errors(args)), (name, args)


def test_settings_ranges():
    from ragkit import ValidationError

    with pytest.raises(ValidationError, match="max_k"):
        ToolSettings(max_k=0)
    with pytest.raises(ValidationError, match="default_k"):
        ToolSettings(max_k=3, default_k=4)


# -- bad arguments: structured errors, never a traceback -------------------------------------------
def test_bad_arguments_give_actionable_errors(box):
    _assert_error(box.call("nope", {}), "unknown_tool", "name")
    err = _assert_error(box.call("search_knowledge", {"query": "x", "top_k": 3}), "unknown_argument", "top_k")
    assert "k" in err["valid"] and "query" in err["valid"]
    _assert_error(box.call("search_knowledge", {"query": "x", "k": 0}), "bad_value", "k")
    _assert_error(box.call("search_knowledge", {"query": "x", "k": "4"}), "bad_value", "k")
    _assert_error(box.call("search_knowledge", {"query": "   "}), "empty_query", "query")
    _assert_error(box.call("search_knowledge", {"query": ""}), "empty_query", "query")
    _assert_error(box.call("search_knowledge", {}), "missing_argument", "query")
    err = _assert_error(box.call("search_knowledge", {"query": "x", "valid_at": "19/01/2026"}), "bad_date",
                        "valid_at")
    assert "2026-01-19" in err["valid"]
    _assert_error(box.call("search_knowledge", {"query": "x", "published_after": "2026-02-01",
                                                "published_before": "2026-01-01"}), "bad_range")
    _assert_error(box.call("search_knowledge", '{"query": "x",'), "invalid_json")
    _assert_error(box.call("search_knowledge", "[1, 2]"), "invalid_arguments")
    _assert_error(box.call("retrieve_documents", {"ids": []}), "bad_value", "ids")
    _assert_error(box.call("retrieve_documents", {"ids": ["  "]}), "bad_value", "ids")
    _assert_error(box.call("related_documents", {"doc_id": 3}), "bad_value", "doc_id")


def test_null_arguments_count_as_absent_and_json_text_is_accepted(box):
    assert box.call("related_documents", '{"doc_id": "acme-t1"}')["ok"]
    assert box.call("retrieve_documents", {"ids": ["policy-v3"], "unused": None})["ok"]


def test_doc_type_valid_values_are_those_in_scope(box):
    err = _assert_error(box.call("search_knowledge", {"query": "x", "doc_type": "postmortem"}),
                        "unknown_doc_type", "doc_type")
    # postmortem exists only in globex's scope: it is not offered to an acme caller
    assert "postmortem" not in err["valid"] and "policy" in err["valid"] and "ticket" in err["valid"]


def test_tenant_argument_only_narrows(box):
    err = _assert_error(box.call("search_knowledge", {"query": "cutoff", "tenant": "globex"}), "out_of_scope",
                        "tenant")
    assert err["valid"] == ["acme", "global"]
    assert "globex" in err["message"] and "narrow" in err["message"]


def test_internal_failure_becomes_an_error_dict(box, caplog):
    def boom(*_, **__):
        raise KeyError("x")

    box._handlers["related_documents"] = boom
    err = _assert_error(box.call("related_documents", {"doc_id": "acme-t1"}), "internal")
    assert "KeyError" in err["message"] and "tool related_documents failed" in caplog.text


# -- retrieve_documents ------------------------------------------------------------------------
def test_retrieve_section_document_and_chunk_id(box):
    resp = box.retrieve_documents(["policy-v3#cutoffs", "acme-rollout", "policy-v2#cutoffs~0"])
    assert resp["ok"] and [d["kind"] for d in resp["documents"]] == ["section", "document", "section"]
    docs = box.index.documents
    for d in resp["documents"]:
        assert docs[d["doc_id"]].text[d["start"]:d["end"]] == d["text"]
        assert d["trust"] == "untrusted" and d["tokens"] == count_tokens(d["text"])
    assert resp["documents"][0]["text"] == "## Cutoffs\n\nEUR cutoff 15:00 CET for migrated tenants."
    assert resp["documents"][1]["citation"] == "acme-rollout" and resp["documents"][1]["start"] == 0
    assert any("chunk id" in n for n in resp["notices"])


def test_retrieve_caps_ids_and_names_the_rest(box):
    ids = ["policy-v1", "policy-v2", "policy-v3", "loop-a", "loop-b", "acme-t1", "policy-v1"]
    resp = box.retrieve_documents(ids)
    assert [d["id"] for d in resp["documents"]] == ids[:4]
    notice = next(n for n in resp["notices"] if "at most 4 ids" in n)
    assert "'loop-b'" in notice and "'acme-t1'" in notice and "NOT read" in notice
    assert "duplicate ids were read once" in resp["notices"]


def test_retrieve_truncation_names_what_was_cut(box):
    resp = box.retrieve_documents(["long-runbook"])
    doc = resp["documents"][0]
    assert doc["truncated"] and doc["tokens"] <= 80
    full = box.index.documents["long-runbook"].text
    assert full.startswith(doc["text"]) and doc["end"] == len(doc["text"])
    note = doc["truncation"]
    assert f"of {count_tokens(full)} tokens" in note
    assert "sections not included: step-3, step-4" in note and "partly included: step-2" in note
    assert box.retrieve_documents(["long-runbook#step-4"])["documents"][0]["truncated"] is False


def test_retrieve_unknown_anchor_lists_the_sections(box):
    err = _assert_error(box.retrieve_documents(["long-runbook#step-9"]), "unknown_anchor", "ids")
    assert "long-runbook#step-2" in err["valid"]


def test_unreadable_and_missing_ids_get_the_same_answer(box):
    def answer(asked: str, tool: str) -> str:
        resp = box.call(tool, {"ids": [asked]} if tool == "retrieve_documents" else {"doc_id": asked})
        err = resp["error"]
        assert err["code"] == "unknown_id"
        return json.dumps([err, resp["notices"]]).replace(asked, "ID")

    for tool in ("retrieve_documents", "related_documents"):
        for hidden in ("globex-secret", "acme-restricted"):  # another tenant; an ACL the caller lacks
            same_shape = hidden[:-3] + "zzz"                  # does not exist, same length and prefix
            assert answer(hidden, tool) == answer(same_shape, tool)
    mixed = box.retrieve_documents(["policy-v3", "globex-secret"])
    assert mixed["ok"] and [d["doc_id"] for d in mixed["documents"]] == ["policy-v3"]
    assert any("not in this index or not in your scope" in n for n in mixed["notices"])


# -- related_documents -------------------------------------------------------------------------
def test_related_links_in_and_out_within_scope(box):
    resp = box.related_documents("acme-t1")
    assert [d["doc_id"] for d in resp["links_to"]] == ["acme-rollout", "policy-v3"]
    assert [d["doc_id"] for d in resp["linked_from"]] == ["acme-rollout"]  # globex-secret also links here
    hidden = next(n for n in resp["notices"] if "not available" in n)
    assert "3 id(s)" in hidden  # globex-secret, missing-doc, acme-restricted: same words for each
    assert box.related_documents("acme-rollout")["superseded_by"] == []  # acme-restricted is ACL'd


def test_related_chains_are_transitive_and_cycle_safe(box):
    resp = box.related_documents("policy-v3#cutoffs")
    assert [(d["doc_id"], d["depth"], d["via"]) for d in resp["supersedes"]] == [
        ("policy-v2", 1, "policy-v3"), ("policy-v1", 2, "policy-v2")]
    assert resp["superseded_by"] == []  # globex-secret claims to supersede it, out of scope
    assert resp["supersedes"][1]["validity"] == "expired"
    assert [d["doc_id"] for d in box.related_documents("policy-v1")["superseded_by"]] == ["policy-v2",
                                                                                         "policy-v3"]
    loop = box.related_documents("loop-a")
    assert [d["doc_id"] for d in loop["supersedes"]] == ["loop-b"]
    assert [d["doc_id"] for d in loop["superseded_by"]] == ["loop-b"]
    lonely = box.related_documents("long-runbook")
    assert lonely["ok"] and "links to no document" in lonely["message"]


def test_related_follows_index_changes(box):
    assert "acme-t1" in [d["doc_id"] for d in box.related_documents("acme-rollout")["linked_from"]]
    box.index.delete(["acme-t1"])  # deletion re-chunks nothing and encodes nothing
    assert box.related_documents("acme-rollout")["linked_from"] == []


def test_standing_filters_apply_to_every_tool():
    from ragkit import Filters
    from ragkit.core import ScopeError

    snapshot = Filters.make(published_before="2026-01-10")  # the corpus as it was on 2026-01-09
    box = Toolbox(_hand_index(), Scope("acme", ["ops"]), filters=snapshot)
    assert box.retrieve_documents(["acme-rollout"])["error"]["code"] == "unknown_id"  # published 2026-01-15
    assert box.related_documents("acme-rollout")["error"]["message"] == \
        box.related_documents("acme-nothing")["error"]["message"].replace("acme-nothing", "acme-rollout")
    assert box.retrieve_documents(["policy-v1"])["ok"]  # published 2025-01-01
    assert box.related_documents("policy-v1")["superseded_by"] == []  # v2, v3 have no publication date
    assert _combine_dates(box)
    with pytest.raises(ScopeError):
        Toolbox(_hand_index(), Scope("acme"), filters=Filters.make(tenant="globex"))


def _combine_dates(box: Toolbox) -> bool:
    from ragkit import Filters
    both = combine_filters(box.filters, Filters.make(published_before="2026-02-01",
                                                     published_after="2025-06-01", doc_type="policy"))
    assert both.published_before == box.filters.published_before  # the earlier bound wins
    assert both.published_after is not None and both.doc_types == ("policy",)
    disjoint = combine_filters(Filters.make(doc_type="runbook"), Filters.make(doc_type="policy"))
    assert not disjoint.allows(Envelope("x", source_type="policy"))
    assert not disjoint.allows(Envelope("y", source_type="runbook"))
    return True


# -- scope: no text outside the caller's scope, from any tool ----------------------------------
def _forbidden_texts(index: Index, scope: Scope) -> list[str]:
    return [d.text for d in index.documents.values() if not scope.allows(d.envelope)]


def test_read_tools_never_return_text_outside_scope(box):
    forbidden = _forbidden_texts(box.index, box.scope)
    assert len(forbidden) == 2
    for doc_id in box.index.documents:
        for resp in (box.retrieve_documents([doc_id]), box.related_documents(doc_id),
                     box.retrieve_documents([doc_id + "#" + "finance-note"])):
            payload = json.dumps(resp)
            assert not any(s in payload for s in SECRETS)
            assert not any(text in payload for text in forbidden)


def test_tokens_is_the_size_of_what_the_model_sees(box):
    resp = box.retrieve_documents(["policy-v3"])
    view = for_model(resp)
    assert "trace" not in view and "trace" in resp
    view.pop("tokens")
    assert resp["tokens"] == count_tokens(json.dumps(view, ensure_ascii=False))
    assert resp["trace"]["ms"] >= 0 and resp["trace"]["ids_read"] == 1
    item = for_model(resp)["documents"][0]
    assert {"start", "end", "anchor", "truncation", "effective_to", "links"}.isdisjoint(item)
    assert item["effective_from"] == "2026-01-01" and resp["documents"][0]["effective_from"].startswith(
        "2026-01-01T00:00:00")
    assert "truncated" not in item and item["trust"] == "untrusted"
    assert for_model(box.retrieve_documents(["long-runbook"]))["documents"][0]["truncated"] is True
    empty = for_model(box.related_documents("long-runbook"))
    assert empty["links_to"] == [] and "notices" not in empty  # an empty result list is kept


# -- search_knowledge (real models) -------------------------------------------------------------
@pytest.fixture(scope="module")
def model_index(embedder):
    return Index.build(_docs(), embedder=embedder)


@pytest.fixture
def model_box(model_index):
    return Toolbox(model_index, Scope("acme", ["ops"]))


@pytest.mark.slow
def test_search_items_carry_the_contract_fields(model_box):
    resp = model_box.search_knowledge("EUR cutoff for migrated tenants", k=3, valid_at="2026-01-19")
    assert resp["ok"] and len(resp["results"]) == 3
    top = resp["results"][0]
    assert top["citation"] == "policy-v3#cutoffs" and top["validity"] == "valid"
    assert "valid at 2026-01-19 (effective from 2026-01-01, no end date)" == top["validity_note"]
    for item in resp["results"]:
        doc = model_box.index.documents[item["doc_id"]]
        assert doc.text[item["start"]:item["end"]] == item["text"]
        assert item["trust"] == "untrusted" and item["citation"] == f"{item['doc_id']}#{item['anchor']}"
        for key in ("chunk_id", "version", "source_type", "authority", "published_at", "effective_from",
                    "effective_to", "score", "links", "supersedes", "superseded_by", "conditions", "status"):
            assert key in item
    assert [i["rank"] for i in resp["results"]] == [1, 2, 3]
    assert resp["trace"]["summary"]["rows_in_scope"] > 0 and resp["trace"]["candidates"]
    assert model_box.last_result.query == "EUR cutoff for migrated tenants"
    unknown = model_box.search_knowledge("Acme migration ticket", k=8)["results"]
    assert any(i["validity"] == "unknown" and "do not assume it is current" in i["validity_note"]
               for i in unknown)


@pytest.mark.slow
def test_search_k_above_ceiling_is_cut_and_said(model_box):
    resp = model_box.search_knowledge("settlement", k=20)
    assert len(resp["results"]) == 8
    assert any("ceiling of 8" in n for n in resp["notices"])
    assert len(model_box.search_knowledge("settlement", k=2)["results"]) == 2


@pytest.mark.slow
def test_search_offset_reads_the_next_page_of_the_same_ranking(model_box):
    whole = model_box.search_knowledge("settlement", k=6)["results"]
    first = model_box.search_knowledge("settlement", k=3)["results"]
    second = model_box.search_knowledge("settlement", k=3, offset=3)["results"]
    assert [i["citation"] for i in first + second] == [i["citation"] for i in whole]
    assert [i["rank"] for i in second] == [4, 5, 6]  # results keep their overall rank
    past = model_box.search_knowledge("settlement", k=3, offset=500)
    assert past["ok"] and past["results"] == [] and "No results past rank 500" in past["message"]
    bad = model_box.call("search_knowledge", {"query": "settlement", "offset": -1})
    assert not bad["ok"] and bad["error"]["field"] == "offset"


@pytest.mark.slow
def test_search_excerpt_is_capped(model_index):
    index = model_index
    box = Toolbox(index, Scope("acme"), settings=ToolSettings(excerpt_tokens=20))
    for item in box.search_knowledge("settlement item before release", k=3)["results"]:
        assert count_tokens(item["text"]) <= 20
        assert index.documents[item["doc_id"]].text[item["start"]:item["end"]] == item["text"]


@pytest.mark.slow
def test_empty_result_says_what_was_tried_and_what_to_change(model_box):
    resp = model_box.search_knowledge("EUR cutoff", doc_type="rollout", published_after="2027-01-01")
    assert resp["ok"] and resp["results"] == []
    msg = resp["message"]
    assert "lexical (BM25) and semantic (dense)" in msg
    assert "doc_type=rollout" in msg and "published_after=2027-01-01" in msg
    assert "0 documents that pass the filters" in msg and "documents in your scope (tenant=acme" in msg
    assert "drop published_after" in msg and "other words" in msg


@pytest.mark.slow
@pytest.mark.parametrize("scope", [Scope("acme", ["ops"]), Scope("acme", ["finance"]), Scope("globex")])
def test_search_never_returns_text_outside_scope(model_index, scope):
    index = model_index
    box = Toolbox(index, scope)
    forbidden = _forbidden_texts(index, scope)
    assert forbidden
    for query in ("globex only", "acme finance only", SECRETS[0], SECRETS[1], "note", "cutoff"):
        for tenant in (None, scope.tenant, "global"):
            resp = box.search_knowledge(query, k=8, tenant=tenant)
            payload = json.dumps(resp)
            assert not any(text in payload for text in forbidden)
            assert all(scope.allows(index.documents[i["doc_id"]].envelope) for i in resp["results"])
            trace_docs = {row[0].split("#")[0] for row in resp["trace"]["candidates"]}
            assert all(scope.allows(index.documents[d].envelope) for d in trace_docs)


@pytest.mark.slow
def test_course_index_tools_stay_in_scope():  # builds the course index if no test has yet (cached after)
    from ragkit.course import course_index

    index = course_index(progress=False)
    tenants = sorted({d.envelope.tenant for d in index.documents.values()} - {"global"})[:2]
    for tenant in tenants:
        scope = Scope(tenant)
        box = Toolbox(index, scope)
        for query in ("settlement failure", "EUR cutoff", "payout delayed incident"):
            resp = box.search_knowledge(query, k=8)
            ids = [i["doc_id"] for i in resp["results"]]
            assert ids and all(scope.allows(index.documents[d].envelope) for d in ids)
            fetched = box.retrieve_documents(ids[:4])
            assert all(scope.allows(index.documents[d["doc_id"]].envelope) for d in fetched["documents"])
            for d in ids[:2]:
                rel = box.related_documents(d)
                listed = [x["doc_id"] for key in ("links_to", "linked_from", "supersedes", "superseded_by")
                          for x in rel[key]]
                assert all(scope.allows(index.documents[x].envelope) for x in listed)


def test_cli_tools_prints_the_schemas(tmp_path):
    from typer.testing import CliRunner

    from ragkit.app.cli import app

    runner = CliRunner()
    out = runner.invoke(app, ["tools", "--format", "anthropic", "--max-k", "6"])
    assert out.exit_code == 0
    tools = json.loads(out.stdout)
    assert [t["name"] for t in tools] == list(TOOL_NAMES) and "At most 6 results" in tools[0]["description"]
    assert json.loads(runner.invoke(app, ["tools"]).stdout) == openai_tools()
    bad = runner.invoke(app, ["tools", "--format", "xml"])
    assert bad.exit_code == 2 and "use 'openai' or 'anthropic'" in bad.stderr
    missing = runner.invoke(app, ["tools", "--index", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "is not a ragkit index" in missing.stderr
