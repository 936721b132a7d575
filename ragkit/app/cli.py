"""The ``ragkit`` command line.

Commands::

    ragkit index DIR [--out IDX]            build or update an index of a folder
    ragkit search QUERY --index IDX [...]   search it as a caller, print cited hits and ranks
    ragkit beir DIR [--split test]          evaluate BM25, dense, RRF and RRF+rerank on a BEIR folder
    ragkit demo                             index the bundled course corpus and trace a few searches

Errors go to stderr as one line that says what was wrong and how to fix it; the
exit code is 2 for bad input and 1 for other failures. ``--json`` prints one JSON
object on stdout and nothing else there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragkit.app.display import hit_json, json_default, print_result
from ragkit.core.errors import RagkitError
from ragkit.index.build import DEFAULT_CACHE, build_or_update, default_index_path

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="ragkit: agentic retrieval, stage by stage (offline by default).")

def _fail(exc: Exception, code: int = 2) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(code)


def _err(message: str) -> None:
    typer.echo(message, err=True)


@app.command("index")
def index_cmd(
    folder: Annotated[Path, typer.Argument(help="folder (or file) of .md/.txt/.html/.py/.jsonl/.pdf")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="index folder")] = None,
    rebuild: Annotated[bool, typer.Option(help="re-encode everything")] = False,
    strict: Annotated[bool, typer.Option(help="stop at the first broken file")] = False,
    chunker: Annotated[str, typer.Option(help="structure | sentence | fixed")] = "structure",
    max_tokens: Annotated[int, typer.Option(help="chunk budget in tokens")] = 200,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bars")] = False,
    backend: Annotated[str, typer.Option(help="memory (an index folder) | milvus (a Milvus collection)")]
    = "memory",
    milvus_uri: Annotated[str | None, typer.Option(
        "--milvus-uri", envvar="RAGKIT_MILVUS_URI", show_envvar=True,
        help="Milvus server URI (http://HOST:19530) or a local file (./milvus.db) for --backend milvus")]
    = None,
    milvus_token: Annotated[str | None, typer.Option(
        "--milvus-token", envvar="RAGKIT_MILVUS_TOKEN", show_envvar=True,
        help="Milvus 'user:password' or API key")] = None,
    collection: Annotated[str | None, typer.Option(help="Milvus collection (default: ragkit)")] = None,
    use_ray: Annotated[bool, typer.Option("--ray", help="with --backend milvus: ingest with Ray Data "
                                          "(read -> chunk -> embed -> write)")] = False,
    ray_address: Annotated[str | None, typer.Option(help="with --ray: a Ray cluster's address "
                                                    "(default: start a local Ray)")] = None,
    ray_actors: Annotated[int, typer.Option(help="with --ray: embedder actors")] = 1,
) -> None:
    """Build an index of FOLDER, or update it (only new and changed documents are encoded).

    With --backend milvus, FOLDER is chunked, embedded and upserted by document into a Milvus
    collection instead (in this process, or with --ray on a local or remote Ray cluster);
    --rebuild then drops and re-creates the collection.
    """
    if backend != "memory" or use_ray or ray_address or collection or ray_actors != 1:
        _index_milvus(folder, out=out, rebuild=rebuild, strict=strict, chunker=chunker,
                      max_tokens=max_tokens, quiet=quiet, backend=backend, uri=milvus_uri,
                      token=milvus_token, collection=collection, use_ray=use_ray,
                      ray_address=ray_address, actors=ray_actors)
        return
    target = out or default_index_path(folder)
    try:
        build_or_update(folder, target, rebuild=rebuild, strict=strict, chunker=chunker,
                        max_tokens=max_tokens, progress=not quiet)
    except RagkitError as exc:
        _fail(exc)
    typer.echo(str(target))


def _index_milvus(folder: Path, *, out: Path | None, rebuild: bool, strict: bool, chunker: str,
                  max_tokens: int, quiet: bool, backend: str, uri: str | None, token: str | None,
                  collection: str | None, use_ray: bool, ray_address: str | None, actors: int) -> None:
    """``ragkit index DIR --backend milvus [--ray]``: check the options, ingest, print the report."""
    problem = None
    if backend not in ("memory", "milvus"):
        problem = f"--backend {backend!r} is not a backend; use memory or milvus"
    elif backend == "memory":
        flag = "--ray" if use_ray else "--ray-address" if ray_address else "--collection" if collection \
            else "--ray-actors"
        problem = f"{flag} needs --backend milvus (the memory backend writes an index folder: --out)"
    elif (ray_address or actors != 1) and not use_ray:
        problem = f"{'--ray-address' if ray_address else '--ray-actors'} needs --ray"
    elif out is not None:
        problem = "--out is for the memory backend; --backend milvus writes to --collection at --milvus-uri"
    elif not uri:
        problem = ("--backend milvus needs --milvus-uri (or RAGKIT_MILVUS_URI): a server URI such as "
                   "http://127.0.0.1:19530, or a local file such as ./milvus.db")
    elif use_ray and strict:
        problem = "--strict is not supported with --ray: broken files are reported in the ingest report"
    if problem:
        _fail(ValueError(problem))
    from ragkit.backends.milvus.engine import MilvusConfig
    from ragkit.backends.milvus.ingest import ingest_milvus, ingest_ray
    from ragkit.documents.chunking import ChunkerSettings
    from ragkit.index.index import IndexSettings

    try:
        settings = IndexSettings(chunker=ChunkerSettings(method=chunker, max_tokens=max_tokens))
        config = MilvusConfig(uri or "", token=token or "", collection=collection or "ragkit")
        if use_ray:
            report = ingest_ray(folder, config, settings=settings, address=ray_address, actors=actors,
                                drop_existing=rebuild, progress=not quiet)
        else:
            report = ingest_milvus(folder, config, settings=settings, drop_existing=rebuild, strict=strict,
                                   progress=not quiet)
    except RagkitError as exc:
        _fail(exc)
    typer.echo(str(report))


@app.command("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="what to look for")],
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder (from `ragkit index`)")],
    tenant: Annotated[str, typer.Option(help="caller's tenant ('*' = every tenant)")] = "*",
    groups: Annotated[str, typer.Option(help="caller's ACL groups, comma separated")] = "",
    doc_type: Annotated[str, typer.Option(help="only these source types, comma separated")] = "",
    valid_at: Annotated[str, typer.Option(help="only documents valid at this ISO date")] = "",
    candidates: Annotated[int, typer.Option(help="width of each retriever and of fusion")] = 50,
    deliver: Annotated[int, typer.Option(help="hits to deliver")] = 4,
    rerank_mode: Annotated[str | None, typer.Option(
        help="fuse | rrf | rerank | none (default: the funnel's, fuse)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Search an index as a caller (tenant and groups) and print cited hits with per-stage ranks."""
    from ragkit.core.scope import Filters, Scope
    from ragkit.index.index import Index
    from ragkit.search.funnel import Funnel

    try:
        idx = Index.load(index)
        scope = Scope(tenant, groups, all_groups=(tenant == "*" and not groups))
        filters = Filters.make(doc_type=doc_type, valid_at=valid_at or None)
        mode = {"rerank_mode": rerank_mode} if rerank_mode else {}
        result = Funnel(idx).search(query, scope=scope, filters=filters, candidates=candidates,
                                    deliver=deliver, **mode)
    except RagkitError as exc:
        _fail(exc)
    if as_json:
        payload = {"query": query, "hits": [hit_json(h) for h in result.hits],
                   "trace": {"timings_ms": result.trace.timings_ms, "tokens": result.trace.tokens,
                             "rows_in_scope": result.trace.rows_in_scope,
                             "candidates": result.trace.to_frame().to_dict(orient="records")}}
        sys.stdout.write(json.dumps(payload, default=json_default) + "\n")
    else:
        print_result(result)


@app.command("beir")
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
    from ragkit.evaluation.beir import load_beir
    from ragkit.evaluation.compare import evaluate_beir, format_table

    try:
        data = load_beir(folder, split=split)
        report = evaluate_beir(data, name=folder.resolve().name, candidates=candidates,
                               rerank_depth=rerank_depth or None,
                               max_queries=max_queries or None, cache_dir=cache, progress=not as_json,
                               log=_err)
    except RagkitError as exc:
        _fail(exc)
    if as_json:
        sys.stdout.write(json.dumps(report, default=json_default) + "\n")
    else:
        typer.echo(format_table(report))


@app.command("demo")
def demo_cmd(
    corpus: Annotated[Path | None, typer.Option(help="folder to index (default: the course corpus)")] = None,
    index: Annotated[Path | None, typer.Option(help="index folder (default: .ragkit-cache/...)")] = None,
) -> None:
    """Index the bundled corpus (or reuse the cached index) and trace the course's key searches."""
    from ragkit.app.demo import run_demo

    try:
        run_demo(corpus, index)
    except RagkitError as exc:
        _fail(exc, 1)


@app.command("tools")
def tools_cmd(
    index: Annotated[Path | None, typer.Option("--index", "-i", help="index folder (checked to exist)")]
    = None,
    fmt: Annotated[str, typer.Option("--format", help="openai | anthropic")] = "openai",
    max_k: Annotated[int, typer.Option(help="server-side ceiling on search_knowledge k")] = 8,
) -> None:
    """Print the retrieval tools' JSON Schemas (OpenAI function calling or Anthropic tool format)."""
    from ragkit.tools.toolbox import tool_schemas

    try:
        sys.stdout.write(json.dumps(tool_schemas(fmt, index=index, max_k=max_k), indent=2) + "\n")
    except RagkitError as exc:
        _fail(exc)


@app.command("mcp")
def mcp_cmd(
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder (from `ragkit index`)")],
    tenant: Annotated[str, typer.Option(help="the caller's tenant, fixed for the session ('*' = all)")],
    groups: Annotated[str, typer.Option(help="the caller's ACL groups, comma separated")] = "",
    max_k: Annotated[int, typer.Option(help="server-side ceiling on search_knowledge k")] = 8,
) -> None:
    """Serve search_knowledge, retrieve_documents and related_documents over MCP (stdio)."""
    from ragkit.tools.mcp import run_mcp
    from ragkit.tools.toolbox import ToolSettings

    try:
        run_mcp(index, tenant, groups, settings=ToolSettings(max_k=max_k, default_k=min(4, max_k)))
    except RagkitError as exc:
        _fail(exc)


@app.command("sync")
def sync_cmd(
    folder: Annotated[Path, typer.Argument(help="folder the index should mirror")],
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder (created if missing)")],
    watch: Annotated[bool, typer.Option(help="keep polling and apply changes as they happen")] = False,
    interval: Annotated[str, typer.Option(help="poll interval with --watch (e.g. 2s, 1m)")] = "2s",
    full_every: Annotated[str, typer.Option(help="full reconciliation period with --watch")] = "5m",
    max_polls: Annotated[str, typer.Option(help="with --watch: stop after N polls (0 = never)")] = "0",
    recover: Annotated[bool, typer.Option(help="first point the index at its newest intact generation")]
    = False,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object (without --watch)")] = False,
) -> None:
    """Reconcile INDEX with FOLDER by content hash: print added / updated / deleted / unchanged."""
    from ragkit.index.freshness import Watcher, parse_duration, sync_folder
    from ragkit.index.index import Index

    try:
        every, full = parse_duration(interval, field_name="--interval"), \
            parse_duration(full_every, field_name="--full-every")
        if not max_polls.isdigit():
            raise ValueError(f"--max-polls={max_polls!r} must be a whole number >= 0 (0 = never stop)")
        polls = int(max_polls)
        if not folder.is_dir():
            raise ValueError(f"{folder} is not a folder; pass the folder the index should mirror")
        if recover:
            Index.recover(index)
        if watch:
            Watcher(folder, index, interval=every, full_every=full, log=typer.echo).run(
                max_polls=polls or None)
            return
        result = sync_folder(folder, index)
    except (RagkitError, ValueError) as exc:
        _fail(exc)
    if as_json:
        r = result.report
        sys.stdout.write(json.dumps({"added": r.added, "updated": r.updated, "deleted": r.deleted,
                                     "unchanged": r.unchanged, "encoded_rows": r.encoded_rows,
                                     "generation": result.generation, "kept": result.kept,
                                     "problems": [str(p) for p in result.problems]}) + "\n")
    else:
        typer.echo(str(result))


@app.command("staleness")
def staleness_cmd(
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder")],
    threshold: Annotated[str, typer.Option(help="report documents lagging more than this (30m, 1h, 2d)")]
    = "1h",
    folder: Annotated[Path | None, typer.Option(help="source folder: also count changed, not yet indexed")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """How far the index lags its sources: p50 / p95 / max and the documents past the threshold."""
    from ragkit.index.freshness import parse_duration, staleness
    from ragkit.index.index import Index

    try:
        limit = parse_duration(threshold, field_name="--threshold")
        if folder is not None and not folder.is_dir():
            raise ValueError(f"--folder {folder} is not a folder")
        result = staleness(Index.load(index), folder=folder, threshold=limit)
    except (RagkitError, ValueError) as exc:
        _fail(exc)
    if as_json:
        sys.stdout.write(json.dumps(result.to_json()) + "\n")
    else:
        typer.echo(str(result))


@app.command("eval")
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
    from ragkit.evaluation.evalrun import outcome_json, run_eval

    try:
        outcome = run_eval(cases, index, placement=placement, gates=gates, counterfactuals=counterfactuals,
                           html=html, trec=trec, csv=csv, strict=strict, limit=limit, progress=not quiet,
                           log=_err)
    except (RagkitError, FileNotFoundError) as exc:
        _fail(exc)
    if as_json:
        sys.stdout.write(outcome_json(outcome) + "\n")
    else:
        typer.echo(str(outcome.report))
        for path in outcome.written:
            typer.echo(f"wrote {path}")
    raise typer.Exit(outcome.exit_code)


@app.command("ask")
def ask_cmd(
    question: Annotated[str, typer.Argument(help="the question to answer")],
    index: Annotated[Path, typer.Option("--index", "-i", help="index folder (from `ragkit index`)")],
    tenant: Annotated[str, typer.Option(help="the caller's tenant ('*' = all)")],
    groups: Annotated[str, typer.Option(help="the caller's ACL groups, comma separated")] = "",
    as_of: Annotated[str, typer.Option("--as-of", help="answer as of this ISO date")] = "",
    max_turns: Annotated[int, typer.Option(help="rounds of tool calls before the model must answer")] = 6,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Answer QUESTION with the LLM set in RAGKIT_LLM, which calls the retrieval tools in your scope.

    With no LLM configured (RAGKIT_LLM unset), the offline reference agent answers instead
    (ragkit.agent.loop, hybrid placement, offline policy): its trace, decision record and verified
    citations are printed.
    """
    from ragkit.agent.llm import LLMNotConfigured, format_result, prepare_ask, run_tool_loop

    try:
        if max_turns < 0:
            raise ValueError(f"--max-turns={max_turns} must be 0 or more")
        client, toolbox, day = prepare_ask(index, tenant, groups, as_of=as_of or None)
    except LLMNotConfigured:
        from ragkit.agent.loop import ask_offline
        from ragkit.index.index import Index

        try:
            offline = ask_offline(Index.load(index), question, tenant=tenant, groups=groups,
                                  as_of=as_of or None)
        except RagkitError as exc:
            _fail(exc)
        if as_json:
            sys.stdout.write(json.dumps(offline.to_json(), default=json_default) + "\n")
        else:
            typer.echo(str(offline))
        return
    except (RagkitError, ValueError) as exc:
        _fail(exc)
    try:
        result = run_tool_loop(client, toolbox, question, max_turns=max_turns, as_of=day)
    except RagkitError as exc:
        _fail(exc, 1)
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), default=json_default) + "\n")
    else:
        typer.echo(format_result(result))


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
