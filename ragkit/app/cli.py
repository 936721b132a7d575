"""The ``ragkit`` command line.

Commands::

    ragkit index DIR [--out IDX]              build or update an index of a folder (or --backend milvus)
    ragkit search QUERY --index IDX [...]     search it as a caller, print cited hits and ranks
    ragkit beir DIR [--split test]            evaluate BM25, dense, fusion and rerank on a BEIR folder
    ragkit demo                               index the bundled course corpus and trace a few searches
    ragkit tools [--format openai]            print the retrieval tools' JSON Schemas
    ragkit mcp --index IDX --tenant T         serve the retrieval tools over MCP (stdio)
    ragkit sync DIR --index IDX [--watch]     reconcile an index with its folder by content hash
    ragkit staleness --index IDX              how far the index lags its sources
    ragkit eval CASES --index IDX [...]       evaluate a placement over evidence cases
    ragkit ask QUESTION --index IDX --tenant T   answer with the configured LLM (or the offline agent)
    ragkit profile DIR [--json] [--out FILE]  derive a folder's corpus profile (identifier shapes, ...)

The commands live by group in :mod:`ragkit.app.index_commands` (index, sync, staleness),
:mod:`ragkit.app.search_commands` (search, ask, tools, mcp) and
:mod:`ragkit.app.eval_commands` (eval, beir, demo); this module registers them on one
Typer app, which the ``ragkit`` console script, ``python -m ragkit`` and
``python -m ragkit.cli`` run. The bulk commands (index, sync, demo, beir, eval) take
``--workers N`` (default 2) and ``-q`` (:mod:`ragkit.app.options`) and report progress on
stderr in every mode.

Errors go to stderr as one line that says what was wrong and how to fix it; the
exit code is 2 for bad input and 1 for other failures (:mod:`ragkit.app.exits`). ``--json``
prints one JSON object on stdout and nothing else there.
"""

from __future__ import annotations

import typer

from ragkit.app.eval_commands import beir_cmd, demo_cmd, eval_cmd
from ragkit.app.index_commands import index_cmd, staleness_cmd, sync_cmd
from ragkit.app.profile_commands import profile_cmd
from ragkit.app.search_commands import ask_cmd, mcp_cmd, search_cmd, tools_cmd

__all__ = ["app", "main"]

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="ragkit: agentic retrieval, stage by stage (offline by default).")

# registration order is the order `ragkit --help` lists the commands in
app.command("index")(index_cmd)
app.command("search")(search_cmd)
app.command("beir")(beir_cmd)
app.command("demo")(demo_cmd)
app.command("tools")(tools_cmd)
app.command("mcp")(mcp_cmd)
app.command("sync")(sync_cmd)
app.command("staleness")(staleness_cmd)
app.command("eval")(eval_cmd)
app.command("ask")(ask_cmd)
app.command("profile")(profile_cmd)


def main() -> None:  # pragma: no cover - console entry point
    """Run the command line (what the ``ragkit`` console script does)."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
