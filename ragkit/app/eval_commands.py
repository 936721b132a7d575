"""The evaluation commands: ``ragkit eval``, ``ragkit beir`` and ``ragkit demo``.

``eval`` evaluates a placement over evidence cases (boundaries, honesty, cost,
counterfactuals, gates); ``beir`` evaluates the funnel and its ablations on a BEIR-format
folder; ``demo`` indexes the course corpus and traces the course's key searches.
Each function is a Typer command, registered in :mod:`ragkit.app.cli`. All three take
``--workers`` and ``-q`` (:mod:`ragkit.app.options`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragkit.app.demo import run_demo
from ragkit.app.display import json_default
from ragkit.app.exits import err, fail
from ragkit.app.options import DEFAULT_WORKERS, Quiet, with_workers, workers_option
from ragkit.core.errors import RagkitError
from ragkit.evaluation.beir import load_beir
from ragkit.evaluation.compare import evaluate_beir, format_table
from ragkit.evaluation.evalrun import outcome_json, run_eval
from ragkit.index.build import DEFAULT_CACHE

__all__ = ["eval_cmd", "beir_cmd", "demo_cmd"]


@with_workers
def beir_cmd(
    folder: Annotated[Path, typer.Argument(help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/")],
    split: Annotated[str, typer.Option(help="qrels split")] = "test",
    candidates: Annotated[int, typer.Option(help="first-stage width")] = 100,
    rerank_depth: Annotated[int, typer.Option(help="fused candidates the cross-encoder scores "
                                                   "(0 = the funnel's default)")] = 0,
    max_queries: Annotated[int, typer.Option(help="evaluate only the first N queries (0 = all)")] = 0,
    cache: Annotated[Path, typer.Option(help="where the collection's index is cached")]
    = DEFAULT_CACHE / "beir",
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object: method -> metric -> value")]
    = False,
    workers: Annotated[int, workers_option("model runs side by side, and queries at a time")]
    = DEFAULT_WORKERS,
    quiet: Quiet = False,
) -> None:
    """Evaluate the funnel and its ablations (BM25, dense, RRF, rerank) on a BEIR-format folder.

    Progress (a line per stage, bars for embedding and queries) goes to stderr, also with --json.
    """
    try:
        if not quiet:
            err(f"loading {folder} (qrels split {split!r})")
        data = load_beir(folder, split=split)
        report = evaluate_beir(data, name=folder.resolve().name, candidates=candidates,
                               rerank_depth=rerank_depth or None,
                               max_queries=max_queries or None, cache_dir=cache, progress=not quiet,
                               log=err, workers=workers)
    except RagkitError as exc:
        fail(exc)
    if as_json:
        sys.stdout.write(json.dumps(report, default=json_default) + "\n")
    else:
        typer.echo(format_table(report))


@with_workers
def demo_cmd(
    corpus: Annotated[Path | None, typer.Option(help="folder to index (default: the course corpus)")] = None,
    index: Annotated[Path | None, typer.Option(help="index folder (default: .ragkit-cache/...)")] = None,
    workers: Annotated[int, workers_option("model runs side by side while indexing")] = DEFAULT_WORKERS,
    quiet: Quiet = False,
) -> None:
    """Index the bundled corpus (or reuse the cached index) and trace the course's key searches."""
    try:
        run_demo(corpus, index, progress=not quiet)
    except RagkitError as exc:
        fail(exc, 1)


@with_workers
def eval_cmd(
    cases: Annotated[Path, typer.Argument(help="evidence cases, one JSON object per line")],
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder (from `ragkit index`)")],
    placement: Annotated[str, typer.Option(help="pipeline | tool | hybrid")] = "pipeline",
    gates: Annotated[Path | None, typer.Option(help="gates TOML; exit 1 when a gate fails")] = None,
    counterfactuals: Annotated[bool, typer.Option("--counterfactuals", help="also run the four "
                                                  "counterfactual tests")] = False,
    html: Annotated[Path | None, typer.Option(help="write a self-contained HTML report")] = None,
    trec: Annotated[Path | None, typer.Option(help="write the first-call rankings as a TREC run")] = None,
    csv: Annotated[Path | None, typer.Option(help="write one row per case as CSV")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the whole report as one JSON object")]
    = False,
    strict: Annotated[bool, typer.Option(help="stop at the first malformed case")] = False,
    limit: Annotated[int, typer.Option(help="evaluate only the first N cases (0 = all)")] = 0,
    workers: Annotated[int, workers_option("cases at a time, each on its own process")] = DEFAULT_WORKERS,
    quiet: Quiet = False,
) -> None:
    """Evaluate a placement over evidence cases: boundaries, honesty, cost, counterfactuals, gates.

    With --workers N (default 2) N processes each run one case at a time; the report is the same
    as with --workers 1, case for case. Progress goes to stderr, also with --json.
    """
    try:
        outcome = run_eval(cases, index, placement=placement, gates=gates, counterfactuals=counterfactuals,
                           html=html, trec=trec, csv=csv, strict=strict, limit=limit, progress=not quiet,
                           log=err, workers=workers)
    except (RagkitError, FileNotFoundError) as exc:
        fail(exc)
    if as_json:
        sys.stdout.write(outcome_json(outcome) + "\n")
    else:
        typer.echo(str(outcome.report))
        for path in outcome.written:
            typer.echo(f"wrote {path}")
    raise typer.Exit(outcome.exit_code)
