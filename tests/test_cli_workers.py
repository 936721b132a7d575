"""Both cores for bulk work: ``--workers`` on the bulk commands, progress on stderr in every mode, ``-q``.

Every command that reports progress takes ``-q`` (found by reading each command's function: it
passes ``progress=`` on); the bulk commands take ``--workers`` (default 2); ``--workers 2`` gives
the same BEIR figures and the same evaluation report as ``--workers 1``; ``--json`` keeps stdout
one JSON object while the stage lines go to stderr, and ``-q`` silences them.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
import threading
from pathlib import Path

import pytest
import typer
from builders import eur_case, gbp_case
from conftest import FIXTURES
from hashing import HashEmbedder
from typer.testing import CliRunner

from ragkit import models
from ragkit.app.cli import app
from ragkit.app.options import DEFAULT_WORKERS, with_workers
from ragkit.index import sync_folder
from ragkit.models import parallel_map, set_workers, workers

BULK = {"index", "sync", "demo", "beir", "eval"}


@pytest.fixture(autouse=True)
def _default_workers():
    """Whatever a test sets, the next one starts from the default pool size."""
    yield
    set_workers(None)


def _commands() -> dict:
    """``ragkit``'s commands by name, as the Typer app registers them."""
    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def _options(command) -> dict[str, object]:
    """Every option string of ``command`` -> its parameter."""
    return {opt: p for p in command.params for opt in (*p.opts, *p.secondary_opts)}


def _passes_progress(callback) -> bool:
    """Whether the command's function hands ``progress=`` to what it calls (how progress is printed)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(callback)))
    return any(isinstance(node, ast.keyword) and node.arg == "progress" for node in ast.walk(tree))


def test_set_workers_sizes_the_shared_model_pool(monkeypatch):
    monkeypatch.setenv("RAGKIT_WORKERS", "3")
    assert workers() == 3

    def name(_x: int) -> str:
        return threading.current_thread().name

    set_workers(1)
    assert workers() == 1 and set(parallel_map(name, range(8))) == {threading.current_thread().name}
    set_workers(2)
    assert workers() == 2 and parallel_map(lambda x: x * x, list(range(20))) == [x * x for x in range(20)]
    assert len(set(parallel_map(name, range(40)))) <= 2
    set_workers(None)
    assert workers() == 3  # back to RAGKIT_WORKERS
    with pytest.raises(ValueError, match="workers=0"):
        set_workers(0)


def test_a_command_sizes_the_pool_while_it_runs_and_restores_it_after():
    seen = []

    @with_workers
    def command(*, workers: int) -> str:
        seen.append(models.workers())  # the argument shadows the function here
        return "done"

    set_workers(3)
    assert command(workers=1) == "done" and seen == [1] and workers() == 3
    with pytest.raises(KeyError):
        command()  # a command without its workers argument is a programming error


def test_every_command_that_reports_progress_takes_quiet():
    commands = _commands()
    reporting = {name for name, cmd in commands.items() if _passes_progress(cmd.callback)}
    assert BULK <= reporting, reporting  # the reading of the source finds the bulk commands
    for name in sorted(reporting):
        opts = _options(commands[name])
        assert "-q" in opts and "--quiet" in opts, f"ragkit {name} reports progress but takes no -q"
    for name in sorted(BULK):
        param = _options(commands[name]).get("--workers")
        assert param is not None, f"ragkit {name} has no --workers"
        assert param.default == DEFAULT_WORKERS == 2 and param.envvar == "RAGKIT_WORKERS"
    for name in sorted(set(commands) - reporting):
        assert "--workers" not in _options(commands[name]), name


def test_workers_below_one_is_refused():
    res = CliRunner().invoke(app, ["sync", "DIR", "--index", "IDX", "--workers", "0"])
    assert res.exit_code == 2 and "--workers" in res.output


def _notes(folder: Path, n: int) -> Path:
    folder.mkdir()
    for i in range(n):
        (folder / f"d{i}.md").write_text(f"---\ndoc_id: d{i}\n---\n# d{i}\n\nsettlement note {i}\n")
    return folder


def test_sync_json_keeps_stdout_json_and_reports_stages_on_stderr_and_q_silences_them(tmp_path):
    folder, idx = _notes(tmp_path / "docs", 3), tmp_path / "idx"
    sync_folder(folder, idx, embedder=HashEmbedder())  # a deleted file needs no model to sync
    res = CliRunner().invoke(app, ["sync", str(folder), "--index", str(idx), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["unchanged"] == 3
    assert "loaded 3 documents" in res.stderr and "comparing with the index" in res.stderr
    (folder / "d0.md").unlink()
    res = CliRunner().invoke(app, ["sync", str(folder), "--index", str(idx), "--json", "-q",
                                   "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["deleted"] == ["d0"] and res.stderr == ""
    res = CliRunner().invoke(app, ["sync", str(folder), "--index", str(idx), "--quiet"])
    assert res.exit_code == 0 and "unchanged 2 documents" in res.stdout and res.stderr == ""


# ---------------------------------------------------------------- with the bundled models (slow)

TOPICS = ["EUR settlement batches close at 15:00 CET for migrated tenants",
          "Error E-4471 means the bank rejected the file header",
          "Payout runs send merchant funds every morning at six",
          "The canteen serves tomato soup on Fridays",
          "Chargebacks must be disputed within 30 days of notice",
          "API keys rotate every 90 days; old keys stop working after a grace week",
          "Ledger locks are held by the nightly reconciliation job",
          "GBP transfers use Faster Payments and settle within two hours"]
QUESTIONS = ["when do euro batches close", "what is E-4471", "when are merchants paid out",
             "what is for lunch on Friday", "how long to dispute a chargeback",
             "how often do API keys rotate", "who holds the ledger lock",
             "how fast do pound transfers settle"]


def _beir_folder(root: Path) -> Path:
    """Eight documents, eight queries, each query with its own relevant document (a misordered run shows)."""
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n" for i, t in enumerate(TOPICS)))
    (root / "queries.jsonl").write_text("".join(
        json.dumps({"_id": f"q{i}", "text": q}) + "\n" for i, q in enumerate(QUESTIONS)))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"q{i}\td{i}\t1\n" for i in range(len(QUESTIONS))))
    return root


def _figures(report: dict) -> dict:
    return {m: {k: v for k, v in row.items() if k != "ms_p50"} for m, row in report.items()}


@pytest.mark.slow
def test_beir_with_two_workers_equals_one_worker_and_json_reports_stages_on_stderr(tmp_path):
    from ragkit.models import get_reranker

    folder, cache = _beir_folder(tmp_path / "set"), tmp_path / "cache"
    runner = CliRunner()
    one = runner.invoke(app, ["beir", str(folder), "--json", "--cache", str(cache), "--workers", "1", "-q"])
    assert one.exit_code == 0, one.output
    assert "indexing" not in one.stderr and "queries" not in one.stderr  # -q: no stage lines, no bars
    get_reranker().cache.clear()  # the second run scores every pair again, two at a time
    two = runner.invoke(app, ["beir", str(folder), "--json", "--cache", str(cache), "--workers", "2"])
    assert two.exit_code == 0, two.output
    assert _figures(json.loads(two.stdout)) == _figures(json.loads(one.stdout))  # stdout: only the JSON
    assert json.loads(one.stdout)["bm25"]["queries"] == len(QUESTIONS)
    for stage in (f"loading {folder}", "reusing the cached index",
                  f"searching {len(QUESTIONS)} queries x 6 methods, 2 at a time", "queries"):
        assert stage in two.stderr, (stage, two.stderr)


@pytest.mark.slow
def test_beir_index_build_reports_its_stage(tmp_path):
    from ragkit.evaluation import evaluate_beir, load_beir

    lines: list[str] = []
    data = load_beir(_beir_folder(tmp_path / "set"))
    report = evaluate_beir(data, max_queries=3, methods={"bm25": {"retrievers": ("lexical",),
                                                                  "rerank_mode": "none"}},
                           progress=True, log=lines.append, workers=2)
    assert report["bm25"]["queries"] == 3
    assert lines[0] == f"indexing {len(TOPICS)} documents" and lines[1].startswith(f"indexed {len(TOPICS)}")
    assert "searching 3 queries x 1 methods, 2 at a time" in lines


@pytest.mark.slow
def test_eval_with_two_workers_equals_one_worker(tmp_path):
    from ragkit.evaluation import run_eval

    idx = tmp_path / "idx"
    res = CliRunner().invoke(app, ["index", str(FIXTURES / "corpus"), "--out", str(idx), "-q"])
    assert res.exit_code == 0, res.output
    good, absent = eur_case(), gbp_case()
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(c) for c in [
        good, absent,
        {**absent, "id": "gbp-2", "task": "Which GBP payout window applies on Mondays?"}]) + "\n")
    lines: list[str] = []
    one = run_eval(cases, idx, workers=1, counterfactuals=True, progress=False)
    two = run_eval(cases, idx, workers=2, counterfactuals=True, progress=True, log=lines.append)

    def rows(report):
        return report.frame.drop(columns=["seconds"]).astype(str).to_dict("records")

    assert rows(two.report) == rows(one.report)
    same = [json.dumps(r.report.counterfactuals.to_dict(), sort_keys=True) for r in (one, two)]  # NaN too
    assert same[0] == same[1]
    assert lines[0] == f"loaded 3 cases from {cases}" and "2 at a time" in lines[-1]
