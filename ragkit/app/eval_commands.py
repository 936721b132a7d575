"""The evaluation commands: ``ragkit eval``, ``ragkit beir`` and ``ragkit demo``.

``eval`` evaluates a placement over evidence cases (boundaries, honesty, cost,
counterfactuals, gates); ``beir`` evaluates the funnel and its ablations on a BEIR-format
folder; ``demo`` indexes the course corpus and traces the course's key searches.
Each function is a Typer command, registered in :mod:`ragkit.app.cli`.
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
from ragkit.core.errors import RagkitError
from ragkit.evaluation.beir import load_beir
from ragkit.evaluation.compare import evaluate_beir, format_table
from ragkit.evaluation.evalrun import outcome_json, run_eval
from ragkit.index.build import DEFAULT_CACHE

__all__ = ["eval_cmd", "beir_cmd", "demo_cmd"]


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
) -> None:
    """Evaluate the funnel and its ablations (BM25, dense, RRF, rerank) on a BEIR-format folder."""
    try:
        data = load_beir(folder, split=split)
        report = evaluate_beir(data, name=folder.resolve().name, candidates=candidates,
                               rerank_depth=rerank_depth or None,
                               max_queries=max_queries or None, cache_dir=cache, progress=not as_json,
                               log=err)
    except RagkitError as exc:
        fail(exc)
    if as_json:
        sys.stdout.write(json.dumps(report, default=json_default) + "\n")
    else:
        typer.echo(format_table(report))


def demo_cmd(
    corpus: Annotated[Path | None, typer.Option(help="folder to index (default: the course corpus)")] = None,
    index: Annotated[Path | None, typer.Option(help="index folder (default: .ragkit-cache/...)")] = None,
) -> None:
    """Index the bundled corpus (or reuse the cached index) and trace the course's key searches."""
    try:
        run_demo(corpus, index)
    except RagkitError as exc:
        fail(exc, 1)


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
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bars")] = False,
) -> None:
    """Evaluate a placement over evidence cases: boundaries, honesty, cost, counterfactuals, gates."""
    try:
        outcome = run_eval(cases, index, placement=placement, gates=gates, counterfactuals=counterfactuals,
                           html=html, trec=trec, csv=csv, strict=strict, limit=limit, progress=not quiet,
                           log=err)
    except (RagkitError, FileNotFoundError) as exc:
        fail(exc)
    if as_json:
        sys.stdout.write(outcome_json(outcome) + "\n")
    else:
        typer.echo(str(outcome.report))
        for path in outcome.written:
            typer.echo(f"wrote {path}")
    raise typer.Exit(outcome.exit_code)
