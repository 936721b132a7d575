"""Many agents at once, small and fast (issue 23, item 3): bench/load_agents.py's harness at N=4 for a few
seconds against the session's Milvus (and an index folder followed live), while a sync edits, deletes
and revokes. Zero errors and zero leaks, checked from the responses alone; the checker itself is
tested on hand-made responses so that it can fail.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hashing import HashEmbedder

from ragkit import Index, Scope
from ragkit.index import sync_folder

ROOT = Path(__file__).resolve().parent.parent
EMB = HashEmbedder()
ARGS = SimpleNamespace(seconds=4.0, max_calls=400, sync_every=0.4, rerank="none")


@pytest.fixture(scope="module")
def load_bench():
    """``bench/load_agents.py`` loaded from its file (it imports ``_common`` from its own folder)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location("load_agents", ROOT / "bench" / "load_agents.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["load_agents"] = module  # its dataclasses look their module up while it loads
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return module


@pytest.fixture
def corpus(load_bench, tmp_path):
    folder = tmp_path / "corpus"
    load_bench.write_corpus(folder, 72)
    sync_folder(folder, tmp_path / "base", embedder=EMB)
    return folder, tmp_path / "base"


def test_the_leak_checker_reads_responses_alone(load_bench):
    run = load_bench.Run("milvus", 1)
    caller = Scope("acme", ["ops"])
    run.syncs = [("delete", "acme-ops-0003", 10.0, 0.1), ("revoke", "acme-open-0006", 20.0, 0.1)]
    ok = {"ok": True, "results": [
        {"doc_id": "acme-ops-0001", "tenant": "acme", "text": "Marker acme-ops-0001."},
        {"doc_id": "global-open-0015", "tenant": "global", "links": ["globex-ops-0002"]}],
        "notices": ["globex-finance-0009 is not available to you"]}
    run.record("search_knowledge", caller, 30.0, 30.5, ok)
    assert run.row()["leaks"] == {"tenant": 0, "deleted": 0, "revoked": 0}  # links and notices name, not show
    run.record("retrieve_documents", caller, 30.0, 30.5, {"ok": True, "documents": [
        {"doc_id": "acme-finance-0004", "text": "Marker acme-finance-0004."}]})      # another group
    run.record("search_knowledge", caller, 30.0, 30.5, {"ok": True, "results": [
        {"doc_id": "acme-ops-0001", "tenant": "globex", "text": "x"}]})           # another tenant
    run.record("retrieve_documents", caller, 11.0, 12.0, {"ok": True, "documents": [
        {"doc_id": "acme-ops-0003", "text": "Marker acme-ops-0003."}]})           # deleted 1 s before
    run.record("related_documents", caller, 19.5, 20.5, {"ok": True, "linked_from": [
        {"doc_id": "acme-open-0006"}]})                                          # revoked while in flight
    run.record("retrieve_documents", caller, 1.0, 2.0, {"ok": False, "error": {
        "code": "unknown_id", "message": "no document 'acme-finance-0004'", "valid": "ids"}})
    run.record("retrieve_documents", caller, 1.0, 2.0, {"ok": False, "error": {"code": "internal"}})
    row = run.row()
    assert row["leaks"] == {"tenant": 2, "deleted": 1, "revoked": 0} and row["in_flight"] == 1
    assert row["refused"] == 1 and row["errors"] == 1 and row["calls"] == 7


@pytest.mark.milvus
def test_four_agents_on_milvus_never_see_a_deleted_revoked_or_foreign_document(load_bench, corpus,
                                                                              milvus_uri):
    folder, base = corpus
    run = load_bench.run_milvus(milvus_uri, folder, Index.load(base, embedder=EMB), 4, ARGS, embedder=EMB)
    row = run.row()
    assert row["errors"] == 0, row["first_errors"]
    assert row["leaks"] == {"tenant": 0, "deleted": 0, "revoked": 0}, row["first_leaks"]
    assert row["calls"] >= 12 and row["by_kind"]["delete"] >= 1 and row["by_kind"]["revoke"] >= 1, row


def test_four_agents_on_a_live_index_folder_never_see_a_deleted_revoked_or_foreign_document(
        load_bench, corpus, tmp_path):
    folder, base = corpus
    run = load_bench.run_memory_tools(folder, base, tmp_path, 4, ARGS, embedder=EMB)
    row = run.row()
    assert row["errors"] == 0, row["first_errors"]
    assert row["leaks"] == {"tenant": 0, "deleted": 0, "revoked": 0}, row["first_leaks"]
    assert row["calls"] >= 12 and row["by_kind"]["delete"] >= 1 and row["by_kind"]["revoke"] >= 1, row
