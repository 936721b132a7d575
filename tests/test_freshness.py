"""Folder sync, watching, staleness, deletes and revocation on every read path, CLI flags."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import pytest
from builders import write_doc
from hashing import HashEmbedder
from typer.testing import CliRunner

from ragkit import Document, Envelope, Funnel, FunnelSettings, Index, Scope, ValidationError
from ragkit.app.cli import app
from ragkit.index import Watcher, parse_duration, staleness, sync_folder

EMB = HashEmbedder()
UTC = dt.timezone.utc


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4):
        write_doc(docs, f"d{i}.md", f"d{i}", f"settlement note {i} about the EUR cutoff")
    return docs


def test_sync_folder_reconciles_by_content_hash_and_keeps_unreadable(folder, tmp_path):
    idx_path = tmp_path / "idx"
    first = sync_folder(folder, idx_path, embedder=EMB)
    assert sorted(first.report.added) == ["d0", "d1", "d2", "d3"] and first.generation == 1
    again = sync_folder(folder, idx_path, embedder=EMB)
    assert again.report.unchanged == 4 and not again.report.changed and again.generation == 1
    write_doc(folder, "d0.md", "d0", "settlement note 0 now says 16:00")          # updated
    (folder / "d1.md").unlink()                                                 # deleted
    write_doc(folder, "d9.md", "d9", "a brand new runbook")                        # added
    (folder / "d2.md").write_bytes(b"---\ndoc_id: d2\n---\nhalf written \xff\xfe")  # broken mid-write
    os.utime(folder / "d3.md")                                                  # touched, same content
    result = sync_folder(folder, idx_path, embedder=EMB)
    r = result.report
    assert (r.added, r.updated, r.deleted, r.unchanged) == (["d9"], ["d0"], ["d1"], 2)
    assert result.kept == ["d2"] and "not valid UTF-8" in str(result.problems[0])
    idx = Index.load(idx_path, embedder=EMB)
    assert sorted(idx.documents) == ["d0", "d2", "d3", "d9"]
    assert "16:00" in idx.documents["d0"].text
    assert "d1" in [t["doc_id"] for t in idx.manifest["tombstones"]]
    assert "added 1, updated 1, deleted 1, unchanged 2" in str(result)


def test_watcher_applies_changes_incrementally_and_reconciles_fully(folder, tmp_path):
    idx_path = tmp_path / "idx"
    w = Watcher(folder, idx_path, interval="1s", full_every="1h", embedder=EMB, log=lambda m: None)
    assert w.poll_once().full  # the first poll is a full reconciliation
    assert w.poll_once() is None  # nothing changed
    write_doc(folder, "d0.md", "d0", "edited: the cutoff moved to 16:00")
    (folder / "d1.md").unlink()
    write_doc(folder, "new.md", "new", "fresh document")
    change = w.poll_once()
    assert not change.full
    assert (change.report.added, change.report.updated, change.report.deleted) == (["new"], ["d0"], ["d1"])
    assert sorted(Index.load(idx_path, embedder=EMB).documents) == ["d0", "d2", "d3", "new"]
    # a change polling cannot see (same size, mtime restored) is caught by the full reconciliation
    path = folder / "d2.md"
    stat = path.stat()
    path.write_text(path.read_text().replace("note 2", "NOTE 2"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert w.poll_once() is None
    w.full_every = 0.0
    change = w.poll_once()
    assert change.full and change.report.updated == ["d2"]
    assert "NOTE 2" in Index.load(idx_path, embedder=EMB).documents["d2"].text


def test_staleness_reports_lag_distribution_and_pending_changes(folder, tmp_path):
    now = time.time()
    for i, age in enumerate([7200, 60, 30, 10]):  # sources changed 2h, 1m, 30s and 10s ago
        os.utime(folder / f"d{i}.md", (now - age, now - age))
    idx_path = tmp_path / "idx"
    sync_folder(folder, idx_path, embedder=EMB)
    idx = Index.load(idx_path, embedder=EMB)
    rep = staleness(idx, threshold="1h")
    assert set(rep.lags) == {"d0", "d1", "d2", "d3"} and not rep.pending
    assert rep.lags["d0"] == pytest.approx(7200, abs=60) and rep.lags["d3"] == pytest.approx(10, abs=60)
    q = rep.quantiles()
    assert q["count"] == 4 and q["max"] == pytest.approx(7200, abs=60) and q["p50"] < 120
    assert [key for key, _lag, _state in rep.past_threshold] == ["d0"]
    # changed but not yet indexed: pending, lag growing from the change
    write_doc(folder, "d1.md", "d1", "edited after the sync")
    (folder / "d2.md").unlink()
    write_doc(folder, "d7.md", "d7", "new, not indexed yet")
    later = dt.datetime.now(UTC) + dt.timedelta(hours=2)
    rep = staleness(idx, folder=folder, threshold="1h", now=later)
    assert {"d1", "d2"} <= set(rep.pending) and any(k.endswith("d7.md") for k in rep.pending)
    assert rep.pending["d1"] == pytest.approx(7200, abs=60)
    assert {k for k, _l, s in rep.past_threshold if s == "pending"} >= {"d1", "d2"}
    assert "past the threshold of 1.0h" in str(rep)
    sync_folder(folder, idx_path, embedder=EMB)
    rep = staleness(Index.load(idx_path, embedder=EMB), folder=folder)
    assert not rep.pending and rep.lags["d1"] < 60  # reflected within seconds of the edit


def test_parse_duration():
    assert parse_duration("90") == 90 and parse_duration("1h30m") == 5400 and parse_duration("2d") == 172800
    for bad in ["", "abc", "1x", "-5m", "0"]:
        with pytest.raises(ValidationError):
            parse_duration(bad)


@pytest.mark.parametrize("args", [
    ["staleness", "--index", "IDX", "--threshold", "soon"],
    ["staleness", "--index", "IDX", "--threshold", "0"],
    ["sync", "DIR", "--index", "IDX", "--interval", "-1"],
    ["sync", "DIR", "--index", "IDX", "--full-every", "often"],
    ["sync", "DIR", "--index", "IDX", "--max-polls", "-3"],
    ["sync", "DIR", "--index", "IDX", "--max-polls", "many"],
    ["sync", "NOT-A-FOLDER", "--index", "IDX"],
    ["staleness", "--index", "NOT-AN-INDEX"],
])
def test_cli_bad_values_exit_2_with_one_line(args, folder, tmp_path):
    sync_folder(folder, tmp_path / "idx", embedder=EMB)
    args = [str(folder) if a == "DIR" else str(tmp_path / "idx") if a == "IDX" else a for a in args]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.output, res.output


def test_cli_staleness_and_unchanged_sync(folder, tmp_path):
    sync_folder(folder, tmp_path / "idx", embedder=EMB)
    res = CliRunner().invoke(app, ["staleness", "--index", str(tmp_path / "idx"), "--threshold", "30m",
                                   "--folder", str(folder)])
    assert res.exit_code == 0 and "staleness of 4 documents (0 changed but not indexed)" in res.output
    res = CliRunner().invoke(app, ["sync", str(folder), "--index", str(tmp_path / "idx"), "--json"])
    assert res.exit_code == 0 and '"unchanged": 4' in res.output and '"added": []' in res.output
    res = CliRunner().invoke(app, ["sync", str(folder), "--index", str(tmp_path / "idx"), "--watch",
                                   "--interval", "0.1s", "--max-polls", "2"])
    assert res.exit_code == 0 and "full sync: added 0, updated 0, deleted 0, unchanged 4" in res.output


def _acl_docs(acl: str) -> list[Document]:
    return [Document(Envelope("pay-1", title="Payroll", tenant="acme", acl_groups=(acl,), links=("ops-1",)),
                      "# Payroll\n\nsecretpayroll cutoff is 15:00 for acme.\n"),
            Document(Envelope("ops-1", title="Ops", tenant="acme", links=("pay-1",)),
                     "# Ops\n\nops runbook for the cutoff at acme.\n")]


def test_deletes_and_acl_revocation_take_effect_on_every_read_path(tmp_path):
    from ragkit import Toolbox

    idx = Index.build(_acl_docs("finance"), embedder=EMB)
    funnel = Funnel(idx, FunnelSettings(rerank_mode="none"))
    caller = Scope("acme", ["finance"])
    tools = Toolbox(idx, caller, funnel=funnel)

    def seen() -> set[str]:
        out = {h.doc_id for h in funnel.search("secretpayroll cutoff", scope=caller).hits}
        res = tools.search_knowledge("secretpayroll cutoff")
        out |= {r["doc_id"] for r in res.get("results", [])}
        got = tools.retrieve_documents(["pay-1"])
        out |= {d["doc_id"] for d in got.get("documents", []) if "secretpayroll" in d.get("text", "")}
        rel = tools.related_documents("ops-1")
        out |= {s["doc_id"] for s in rel.get("links_to", []) + rel.get("linked_from", [])}
        return out

    assert "pay-1" in seen()
    idx.sync(_acl_docs("execs"))  # revoke: the document moves to a group the caller is not in
    assert "pay-1" not in seen()
    idx.sync(_acl_docs("finance"))
    assert "pay-1" in seen()
    idx.delete(["pay-1"])  # delete: gone from every path
    assert "pay-1" not in seen()
    got = tools.retrieve_documents(["pay-1"])
    assert not any("secretpayroll" in d.get("text", "") for d in got.get("documents", []))


def test_moved_folder_relocates_sources_without_reencoding(folder, tmp_path):
    import shutil

    from conftest import CountingEmbedder

    counting = CountingEmbedder(EMB)
    sync_folder(folder, tmp_path / "idx", embedder=counting)
    encoded = counting.encoded
    moved = tmp_path / "moved"
    shutil.copytree(folder, moved)
    result = sync_folder(moved, tmp_path / "idx", embedder=counting)
    assert counting.encoded == encoded and result.report.unchanged == 4
    assert sorted(result.report.relocated) == ["d0", "d1", "d2", "d3"]
    idx = Index.load(tmp_path / "idx", embedder=counting)
    assert all(Path(d.envelope.source_path).parent == moved for d in idx.documents.values())
    assert not staleness(idx, folder=moved).pending
    write_doc(moved, "d1.md", "d1", "edited in the moved folder")
    assert sync_folder(moved, tmp_path / "idx", embedder=counting).report.updated == ["d1"]


def test_build_or_update_recovers_a_damaged_index(folder, tmp_path):
    from ragkit.index import build_or_update

    idx_path = tmp_path / "idx"
    sync_folder(folder, idx_path, embedder=EMB)  # generation 1
    (folder / "d3.md").unlink()
    sync_folder(folder, idx_path, embedder=EMB)  # generation 2: d3 deleted
    (folder / "d3.md").write_text("---\ndoc_id: d3\n---\n# d3\n\nsettlement note 3 about the EUR cutoff\n")
    gen2 = idx_path / "gen-000002.json"
    gen2.write_text(gen2.read_text()[:-20])  # damaged generation manifest
    messages: list[str] = []
    index = build_or_update(folder, idx_path, progress=False, log=messages.append)
    assert any("recovered generation 1" in m for m in messages), messages
    assert sorted(index.documents) == ["d0", "d1", "d2", "d3"]  # generation 1 matches the folder again
