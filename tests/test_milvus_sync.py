"""Freshness on Milvus (issue 23, item 1): sync, watching, staleness, deletes and revocation on every
read path, the catalog's engine-served listings (item 2) and counterfactual views as expressions.

Against the session's Milvus (the `milvus_uri` fixture: embedded Milvus on loopback, or
RAGKIT_MILVUS_URI). The reconciliation rule is the in-memory sync's (ragkit.index.reconcile): the
tests run the same folder changes through both backends and compare the reports.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest
from builders import write_doc
from hashing import HashEmbedder
from typer.testing import CliRunner

from ragkit import Envelope, Filters, Funnel, FunnelSettings, Scope, Toolbox
from ragkit.app.cli import app
from ragkit.backends.milvus import MilvusConfig, MilvusIndex, MilvusTarget
from ragkit.backends.milvus.catalog import Catalog
from ragkit.evaluation import CounterfactualSetup, EngineView, IndexView
from ragkit.index import Index, IndexFolder, IndexSettings, Watcher, staleness, sync_folder
from ragkit.tools.mcp import tool_result

pytestmark = pytest.mark.milvus
EMB = HashEmbedder()
UTC = dt.timezone.utc


@pytest.fixture
def config(milvus_uri, request):
    name = "sync_" + re.sub(r"\W", "_", request.node.name)[:60]
    cfg = MilvusConfig(milvus_uri, token=os.environ.get("RAGKIT_MILVUS_TOKEN", ""), collection=name)
    yield cfg
    client = cfg.client()
    for coll in (cfg.collection, cfg.docs_collection, cfg.catalog_collection):
        if client.has_collection(coll):
            client.drop_collection(coll)


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4):
        write_doc(docs, f"d{i}.md", f"d{i}", f"settlement note {i} about the EUR cutoff")
    return docs


def _target(config: MilvusConfig) -> MilvusTarget:
    return MilvusTarget(config, embedder=EMB, settings=IndexSettings())


def _ids(report):
    return sorted(report.added), sorted(report.updated), sorted(report.deleted), report.unchanged


def test_sync_reconciles_by_the_in_memory_rule_and_keeps_unreadable(folder, config, tmp_path):
    memory, milvus = IndexFolder(tmp_path / "idx", embedder=EMB), _target(config)
    steps = []
    for target in (memory, milvus):
        first = sync_folder(folder, target=target)
        assert sorted(first.report.added) == ["d0", "d1", "d2", "d3"] and first.generation == 1
        again = sync_folder(folder, target=target)
        assert again.report.unchanged == 4 and not again.report.changed and again.generation == 1
        steps.append((first, again))
    write_doc(folder, "d0.md", "d0", "settlement note 0 now says 16:00")          # updated
    (folder / "d1.md").unlink()                                                 # deleted
    write_doc(folder, "d9.md", "d9", "a brand new runbook")                        # added
    (folder / "d2.md").write_bytes(b"---\ndoc_id: d2\n---\nhalf written \xff\xfe")  # broken mid-write
    os.utime(folder / "d3.md")                                                  # touched, same content
    results = [sync_folder(folder, target=t) for t in (memory, milvus)]
    assert _ids(results[0].report) == _ids(results[1].report) == (["d9"], ["d0"], ["d1"], 2)  # one rule
    assert results[0].kept == results[1].kept == ["d2"]
    assert results[1].generation == 2 and "not valid UTF-8" in str(results[1].problems[0])
    mi = MilvusIndex.open(config, embedder=EMB)
    assert sorted(mi.doc_states()) == sorted(Index.load(tmp_path / "idx", embedder=EMB).documents) == \
        ["d0", "d2", "d3", "d9"]
    snap = mi.snapshot()
    assert "16:00" in snap.document("d0").text and snap.document("d1") is None
    assert all(c.doc_id != "d1" for c in snap.fetch(range(snap.size())))
    # a moved folder: unchanged documents are relocated, nothing is written again
    moved = tmp_path / "moved"
    folder.rename(moved)
    (moved / "d2.md").unlink()
    relocated = sync_folder(moved, target=milvus).report
    assert relocated.encoded_rows == 0 and sorted(relocated.relocated) == ["d0", "d3", "d9"]
    assert {Path(s.source_path).parent for s in mi.doc_states().values()} == {moved}


def test_watcher_applies_changes_to_milvus_incrementally(folder, config):
    w = Watcher(folder, target=_target(config), interval="1s", full_every="1h", log=lambda m: None)
    assert w.poll_once().full and w.poll_once() is None
    write_doc(folder, "d0.md", "d0", "edited: the cutoff moved to 16:00")
    (folder / "d1.md").unlink()
    write_doc(folder, "new.md", "new", "fresh document")
    (folder / "lines.jsonl").write_text('{"doc_id": "j1", "text": "line one"}\n{"doc_id": \n'
                                        '{"doc_id": "j3", "text": "line three"}\n')
    change = w.poll_once()
    assert not change.full
    r = change.report
    assert (sorted(r.added), r.updated, r.deleted) == (["j1", "j3", "new"], ["d0"], ["d1"])
    assert [p.line for p in change.problems] == [2]  # the JSONL file keeps its good lines
    stored = MilvusIndex.open(config, embedder=EMB).doc_states()
    assert sorted(stored) == ["d0", "d2", "d3", "j1", "j3", "new"]


def test_staleness_on_milvus_reads_the_catalog(folder, config):
    now = time.time()
    for i, age in enumerate([7200, 60, 30, 10]):
        os.utime(folder / f"d{i}.md", (now - age, now - age))
    target = _target(config)
    sync_folder(folder, target=target)
    mi = MilvusIndex.open(config, embedder=EMB)
    rep = staleness(mi, threshold="1h")
    assert set(rep.lags) == {"d0", "d1", "d2", "d3"} and not rep.pending
    assert rep.lags["d0"] == pytest.approx(7200, abs=60) and [k for k, _l, _s in rep.past_threshold] == ["d0"]
    write_doc(folder, "d1.md", "d1", "edited after the sync")
    (folder / "d2.md").unlink()
    later = dt.datetime.now(UTC) + dt.timedelta(hours=2)
    rep = staleness(mi, folder=folder, threshold="1h", now=later)
    assert {"d1", "d2"} <= set(rep.pending) and rep.pending["d1"] == pytest.approx(7200, abs=60)
    # the command line, on the same collection: a sync that only deletes needs no embedder
    base = ["--backend", "milvus", "--milvus-uri", config.uri, "--collection", config.collection]
    write_doc(folder, "d1.md", "d1", "settlement note 1 about the EUR cutoff")
    os.utime(folder / "d1.md", (now - 60, now - 60))
    res = CliRunner().invoke(app, ["sync", str(folder), *base, "--json", "-q"],
                             env={"RAGKIT_MILVUS_TOKEN": config.token})
    assert res.exit_code == 0, res.output
    assert '"deleted": ["d2"]' in res.output and '"unchanged": 3' in res.output
    assert '"generation": 2' in res.output
    res = CliRunner().invoke(app, ["staleness", *base, "--folder", str(folder), "--threshold", "30m"],
                             env={"RAGKIT_MILVUS_TOKEN": config.token})
    assert res.exit_code == 0 and "staleness of 3 documents (0 changed but not indexed)" in res.output
    for args, message in ((["sync", str(folder), "--backend", "milvus"], "needs --milvus-uri"),
                          (["staleness", *base, "--index", "x"], "--index is for the memory backend"),
                          (["sync", str(folder)], "--index is required")):
        res = CliRunner().invoke(app, args, env={"RAGKIT_MILVUS_URI": ""})
        assert res.exit_code == 2 and message in res.output, res.output


def _acl_folder(folder: Path, acl: str) -> None:
    write_doc(folder, "pay.md", "pay-1",
              "payroll cutoff is 15:00 for acme (zqsecret).\n\n## Detail\n\n"
              "payroll detail section (zqsecret).",
              tenant="acme", acl_groups=acl, links="[ops-1]", title="Payroll")
    write_doc(folder, "ops.md", "ops-1", "ops runbook for the cutoff at acme.", tenant="acme",
              links="[pay-1]", title="Ops")


def test_deletes_and_revocation_never_resurface_on_any_read_path(tmp_path, config):
    folder = tmp_path / "acl"
    folder.mkdir()
    _acl_folder(folder, "[finance]")
    target = _target(config)
    sync_folder(folder, target=target)
    reader = MilvusIndex.open(config, embedder=EMB)  # another handle, as a server in another process
    funnel = Funnel(reader, FunnelSettings(rerank_mode="none"))
    caller = Scope("acme", ["finance"])
    tools = Toolbox(reader, caller, funnel=funnel)

    def seen() -> set[str]:
        out = set()
        for expand in (False, True):  # expansion reads the parent sections
            for h in funnel.search("payroll cutoff", scope=caller, expand=expand).hits:
                out.add(h.doc_id)
                assert "zqsecret" not in h.text or h.doc_id == "pay-1"
        calls = [tools.search_knowledge("payroll cutoff"), tools.retrieve_documents(["pay-1"]),
                 tools.retrieve_documents(["pay-1#detail"]), tools.related_documents("ops-1"),
                 tools.search_knowledge("payroll detail", doc_type="text")]
        for res in calls:
            out |= {r["doc_id"] for r in res.get("results", [])}
            out |= {d["doc_id"] for d in res.get("documents", []) if "zqsecret" in d.get("text", "")}
            out |= {s["doc_id"] for s in res.get("links_to", []) + res.get("linked_from", [])}
            mcp_text = tool_result(res).content[0].text  # what an MCP client receives
            if "zqsecret" in mcp_text:
                out.add("pay-1")
        return out

    assert "pay-1" in seen()
    _acl_folder(folder, "[execs]")  # revoke: the document moves to a group the caller is not in
    assert sync_folder(folder, target=target).report.updated == ["pay-1"]
    assert "pay-1" not in seen()
    _acl_folder(folder, "[finance]")
    sync_folder(folder, target=target)
    assert "pay-1" in seen()
    (folder / "pay.md").unlink()  # delete: gone from every path
    assert sync_folder(folder, target=target).report.deleted == ["pay-1"]
    assert "pay-1" not in seen()
    snap = reader.snapshot()
    assert snap.document("pay-1") is None and snap.sections_of("pay-1") == []
    assert snap.links("ops-1").linked_from == ()


def _spread_folder(folder: Path, n: int) -> None:
    for i in range(n):
        tenant = ("acme", "globex", "initech")[i % 3]
        kind = ("runbook", "policy", "ticket", "wiki")[i % 4]
        write_doc(folder, f"doc{i:03d}.md", f"{tenant}-{i:03d}",
                  f"quokka ledger rotation step {i} for {tenant}.", tenant=tenant, source_type=kind,
                  links=f"[{tenant}-{(i + 3) % n:03d}]")


class _Counting:
    """A pymilvus client that counts the entities each collection returns to queries and searches."""

    def __init__(self, inner):
        self.inner, self.read = inner, {}

    def _count(self, collection, rows):
        self.read[collection] = self.read.get(collection, 0) + len(rows)
        return rows

    def query(self, collection, **kw):
        return self._count(collection, self.inner.query(collection, **kw))

    def search(self, collection, **kw):
        res = self.inner.search(collection, **kw)
        self._count(collection, res[0] if res else [])
        return res

    def query_iterator(self, collection, **kw):
        it, outer = self.inner.query_iterator(collection, **kw), self

        class Counted:
            def next(self):
                return outer._count(collection, it.next())

            def close(self):
                it.close()
        return Counted()

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_toolbox_on_milvus_never_reads_every_document(tmp_path, config):
    folder = tmp_path / "many"
    folder.mkdir()
    n = 90
    _spread_folder(folder, n)
    sync_folder(folder, target=_target(config))
    mi = MilvusIndex.open(config, embedder=EMB)
    spy = _Counting(mi.client)
    mi.client, mi.catalog = spy, Catalog(spy, config)
    caller = Scope("acme")
    box = Toolbox(mi, caller, funnel=Funnel(mi, FunnelSettings(rerank_mode="none")))
    assert box.specs["search_knowledge"].parameters["properties"]["doc_type"]  # types came from the engine
    found = box.search_knowledge("quokka ledger rotation")
    assert found["ok"] and {r["tenant"] for r in found["results"]} == {"acme"}
    assert box.search_knowledge("quokka", doc_type="nosuchtype")["error"]["code"] == "unknown_doc_type"
    empty = box.search_knowledge("zzzz qqqq", doc_type="runbook", published_after="2030-01-01")
    assert "documents that pass the filters" in empty["message"]
    assert "30 documents in your scope" in empty["message"]
    missing = box.retrieve_documents(["acme-00"])
    assert missing["error"]["code"] == "unknown_id" and "acme-0" in str(missing["error"]["valid"])
    assert "globex" not in str(missing["error"]["valid"])  # close ids are in scope only
    rel = box.related_documents("acme-003")
    assert [d["doc_id"] for d in rel["linked_from"]] == ["acme-000"]
    docs_read = spy.read.get(config.docs_collection, 0) + spy.read.get(config.catalog_collection, 0)
    assert docs_read < n, spy.read  # bounded queries: never a scan of every document
    assert box.specs["search_knowledge"].parameters["properties"]["doc_type"]["description"]


def test_counterfactual_views_reach_milvus_as_expressions(tmp_path, config):
    folder = tmp_path / "cf"
    folder.mkdir()
    _spread_folder(folder, 12)
    sync_folder(folder, target=_target(config))
    sync_folder(folder, tmp_path / "idx", embedder=EMB)
    memory = Index.load(tmp_path / "idx", embedder=EMB)
    mi = MilvusIndex.open(config, embedder=EMB)
    swapped = Envelope("globex-001", title="x", tenant="acme", source_type="policy")
    views = [IndexView(idx, hidden=["acme-000"], envelopes={"globex-001": swapped}) for idx in (memory, mi)]
    assert isinstance(views[1], EngineView) and not isinstance(views[0], EngineView)
    for scope in (Scope("acme"), Scope("globex"), Scope.operator()):
        sel = views[1].select(scope, Filters())
        assert "doc_id not in" in sel.inner.expr and "pk in" not in sel.inner.expr
        mem_rows = np.flatnonzero(views[0].mask(scope, Filters()))
        got = {c.doc_id for c in mi.snapshot().fetch(np.flatnonzero(np.asarray(sel.inner)))}
        assert got == {memory.rows[r].doc_id for r in mem_rows}, scope
        ranking = views[1].search_lexical("quokka ledger rotation", 50, sel)
        assert "acme-000" not in {c.doc_id for c in views[1].fetch(ranking.ids)}
    assert views[1].document("acme-000") is None and views[1].document("globex-001").envelope.tenant == "acme"
    setup = CounterfactualSetup(mi)
    assert "acme-000" in setup.docs and setup.tenants == ["acme", "globex", "initech"]
    row = setup.row_of("acme-003", None)
    assert row is not None and mi.snapshot().fetch([row])[0].doc_id == "acme-003"
    hidden = Toolbox(setup.view(hidden=["acme-003"]), Scope("acme"))
    assert hidden.retrieve_documents(["acme-003"])["ok"] is False


async def _mcp_reads(args: list[str], env: dict[str, str], between) -> list[dict]:
    """One MCP session: read pay-1, run ``between()`` (a sync), read it again (and its section)."""
    import sys

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from ragkit.tools import read_tool_text

    params = StdioServerParameters(command=sys.executable, args=["-m", "ragkit.app.cli", "mcp", *args],
                                   env={**os.environ, **env, "OMP_NUM_THREADS": "1"})
    out = []
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=300) as s:
        await s.initialize()
        for step in range(2):
            if step == 1:
                between()
            for name, call in (("retrieve_documents", {"ids": ["pay-1"]}),
                               ("search_knowledge", {"query": "payroll detail cutoff"})):
                result = await s.call_tool(name, call)
                out.append(read_tool_text(result.content[0].text))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["memory", "milvus"])
def test_a_running_mcp_server_follows_a_sync_by_another_process(backend, tmp_path, config, embedder):
    import anyio

    folder = tmp_path / "acl"
    folder.mkdir()
    _acl_folder(folder, "[finance]")
    if backend == "milvus":
        target = MilvusTarget(config, embedder=embedder)
        args = ["--backend", "milvus", "--milvus-uri", config.uri, "--collection", config.collection]
    else:
        target = IndexFolder(tmp_path / "idx", embedder=embedder)
        args = ["--index", str(tmp_path / "idx")]
    sync_folder(folder, target=target)

    def revoke() -> None:
        _acl_folder(folder, "[execs]")
        assert sync_folder(folder, target=target).report.updated == ["pay-1"]

    before_read, before_search, after_read, after_search = anyio.run(
        _mcp_reads, [*args, "--tenant", "acme", "--groups", "finance"],
        {"RAGKIT_MILVUS_TOKEN": config.token}, revoke)
    assert before_read["ok"] and "zqsecret" in json.dumps(before_read)
    assert any(r["doc_id"] == "pay-1" for r in before_search["results"])
    assert not after_read["ok"] and after_read["error"]["code"] == "unknown_id"
    assert "zqsecret" not in json.dumps(after_read) + json.dumps(after_search)
