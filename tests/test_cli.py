"""The command line, run as a user would: real subprocesses of the installed `ragkit` script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

pytestmark = pytest.mark.slow
RAGKIT = shutil.which("ragkit", path=str(Path(sys.executable).parent)) or "ragkit"


def run(*args, cwd=None, check=True):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    out = subprocess.run([RAGKIT, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env)
    if check and out.returncode != 0:
        raise AssertionError(f"ragkit {args} exited {out.returncode}:\n{out.stderr}")
    return out


COMMANDS = ("index", "search", "beir", "demo", "tools", "mcp", "sync", "staleness", "eval", "ask")


def test_the_three_entry_points_print_the_same_help():
    """`ragkit`, `python -m ragkit` and `python -m ragkit.cli` run the one Typer app."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    helps = []
    for cmd in ([RAGKIT, "--help"], [sys.executable, "-m", "ragkit", "--help"],
                [sys.executable, "-m", "ragkit.cli", "--help"]):
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        lines = [line.strip("│ ") for line in out.stdout.splitlines()]
        listed = [line.split()[0] for line in lines if line and line.split()[0] in COMMANDS]
        assert listed == list(COMMANDS), out.stdout  # every command once, in registration order
        helps.append([line for line in lines if not line.startswith("Usage:")])  # the program name differs
    assert helps[0] == helps[1] == helps[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    corpus = tmp / "corpus"
    shutil.copytree(FIXTURES / "corpus", corpus)
    out = run("index", corpus, "--out", tmp / "idx", "--quiet")
    return tmp, corpus, out


def test_index_then_reindex_only_encodes_changes(built):
    tmp, corpus, first = built
    assert first.stdout.strip() == str(tmp / "idx")
    assert "indexed 8 documents" in first.stderr
    again = run("index", corpus, "--out", tmp / "idx", "--quiet")
    assert "added 0, updated 0, deleted 0, unchanged 8 documents; encoded 0 chunks" in again.stderr
    (corpus / "global" / "new.md").write_text("---\ndoc_id: new-note\n---\n# New\n\nE-9999 appeared.\n")
    third = run("index", corpus, "--out", tmp / "idx", "--quiet")
    assert "added 1, updated 0, deleted 0, unchanged 8 documents; encoded 1 chunks" in third.stderr


def test_search_json_is_scoped_and_traced(built):
    tmp, _, _ = built
    out = run("search", "EUR cutoff", "--index", tmp / "idx", "--tenant", "globex", "--deliver", "3",
              "--json")
    payload = json.loads(out.stdout)
    assert len(payload["hits"]) == 3
    assert all(h["envelope"]["tenant"] in ("globex", "global") for h in payload["hits"])
    assert all(c["tenant"] in ("globex", "global") for c in payload["trace"]["candidates"])
    assert {"lexical", "dense", "rerank"} <= set(payload["trace"]["timings_ms"])
    assert payload["hits"][0]["citation"].count("#") == 1


def test_search_prints_citations_and_ranks(built):
    tmp, _, _ = built
    out = run("search", "E-4471", "--index", tmp / "idx", "--tenant", "acme", "--groups", "ops")
    assert "settlement-runbook-v2#retrying-a-failed-batch" in out.stdout
    assert "bm25" in out.stdout and "rerank" in out.stdout


def test_errors_are_one_clear_line(tmp_path, built):
    out = run("search", "x", "--index", tmp_path / "none", check=False)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "not a ragkit index" in out.stderr
    out = run("search", "x", "--index", built[0] / "idx", "--valid-at", "soon", check=False)
    assert out.returncode == 2 and "valid_at" in out.stderr
    out = run("index", tmp_path / "nothing", check=False)
    assert out.returncode == 2 and "no such file or folder" in out.stderr


def test_beir_json(tmp_path):
    corpus = [("d1", "Settlement cutoff", "EUR batches close at 15:00 for migrated tenants."),
              ("d2", "Lunch", "The canteen serves soup."),
              ("d3", "Error codes", "E-4471 means the bank rejected the file header."),
              ("d4", "Payout", "Payout runs send merchant funds every morning.")]
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in corpus))
    (tmp_path / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "when do euro batches close"}) + "\n"
        + json.dumps({"_id": "q2", "text": "E-4471"}) + "\n")
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    out = run("beir", tmp_path, "--json", "--cache", tmp_path / "cache")
    report = json.loads(out.stdout)
    assert set(report) == {"bm25", "dense", "rrf", "zscore", "default", "rerank"}
    for method in report.values():
        assert {"ndcg@10", "mrr@10", "recall@50", "recall@100"} <= set(method)
    assert report["rrf"]["recall@50"] == 1.0 and report["default"]["mrr@10"] == 1.0
    assert "ndcg@10_gain" in report["rerank"]
    assert list((tmp_path / "cache").iterdir())  # the collection's index is cached
    second = run("beir", tmp_path, "--json", "--cache", tmp_path / "cache")
    assert "reusing the cached index" in second.stderr
    quality = {k: v for k, v in report["dense"].items() if k != "ms_p50"}
    assert {k: v for k, v in json.loads(second.stdout)["dense"].items() if k != "ms_p50"} == quality
