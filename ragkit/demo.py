"""The main job: index the bundled course corpus and trace the course's key searches.

``ragkit demo`` (what ``./run demo`` calls) loads ``datasets/opscorpus/docs``,
builds the index or reuses the cached one (only changed documents are
re-encoded), and prints the funnel trace for:

* the two stories of the course (Acme's January reconciliation failure; the EUR
  cutoff for Acme's Monday batch on 19 January), searched as an Acme operator;
* an identifier query where BM25 rescues dense retrieval, and a paraphrase where
  dense retrieval rescues BM25. Whether each rescue happened is read off the
  trace of this run and printed, not asserted in advance.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragkit.scope import Filters, Scope

__all__ = ["DEMO_SEARCHES", "DemoSearch", "run_demo", "course_corpus", "rescue"]

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class DemoSearch:
    """One traced search of the demo: what it shows, the query, the caller and filters."""

    title: str
    query: str
    tenant: str = "acme"
    groups: tuple[str, ...] = ("ops",)
    valid_at: str | None = None
    lesson: str | None = None  # "bm25_rescue" | "dense_rescue"


DEMO_SEARCHES = (
    DemoSearch("Story 1: a retrieve-once search for the reconciliation failure",
               "Why did Acme's January reconciliation fail?"),
    DemoSearch("Story 2: which EUR cutoff applies on Monday 19 January",
               "Which settlement cutoff applies to Acme's Monday EUR batch on 19 January?",
               valid_at="2026-01-19"),
    DemoSearch("An identifier with no semantic neighbourhood: BM25 rescues dense",
               "E-4471", lesson="bm25_rescue"),
    DemoSearch("A paraphrase with no shared words: dense rescues BM25",
               "money sent to merchants arrived twice", lesson="dense_rescue"),
)


def course_corpus() -> Path:
    """The bundled course corpus folder (falls back to the small test fixture corpus)."""
    for candidate in (REPO / "datasets" / "opscorpus" / "docs", REPO / "tests" / "fixtures" / "corpus"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("no bundled corpus found; pass --corpus DIR")


def rescue(frame: Any, lesson: str, *, top: int = 1) -> str:
    """Describe, from a trace DataFrame, whether one retriever rescued the other at the top.

    ``bm25_rescue``: the delivered top hit ranks better with BM25 than with dense retrieval.
    ``dense_rescue``: the other way round. Ranks beyond the candidate width show as "absent".
    """
    delivered = frame[frame.delivered].sort_values("final_rank").head(top)
    if delivered.empty:
        return "nothing delivered, so no rescue to report"
    row = delivered.iloc[0]

    def show(v: Any) -> str:
        return "absent" if str(v) == "<NA>" else f"rank {int(v)}"

    lex, den = show(row.lexical_rank), show(row.dense_rank)
    lex_n = 10**9 if lex == "absent" else int(row.lexical_rank)
    den_n = 10**9 if den == "absent" else int(row.dense_rank)
    if lesson == "bm25_rescue":
        held = lex_n < den_n
        who = "BM25"
    else:
        held = den_n < lex_n
        who = "dense retrieval"
    verdict = "yes" if held else "no"
    return (f"top hit {row.chunk_id}: BM25 {lex}, dense {den} -> rescued by {who}: {verdict}")


def run_demo(corpus: Path | None = None, index_path: Path | None = None) -> None:
    """Index (or reuse) the corpus and print each demo search with its funnel trace."""
    from rich.console import Console

    from ragkit.cli import build_or_update, default_index_path, print_result
    from ragkit.funnel import Funnel

    console = Console(width=160)
    folder = corpus or course_corpus()
    target = index_path or default_index_path(folder)
    t = time.perf_counter()
    index = build_or_update(folder, target, progress=True, log=lambda m: console.print(m, markup=False))
    console.print(f"index ready in {time.perf_counter() - t:.1f}s: {index.stats()}\n")
    funnel = Funnel(index)
    funnel.search("warm up the models", deliver=1)
    for demo in DEMO_SEARCHES:
        console.rule(demo.title)
        result = funnel.search(demo.query, scope=Scope(demo.tenant, demo.groups),
                               filters=Filters.make(valid_at=demo.valid_at))
        print_result(result)
        if demo.lesson:
            console.print("  [bold]" + rescue(result.to_frame(), demo.lesson) + "[/bold]")
        console.print()
    console.print("Every hit is cited as doc_id#section. Explore further: "
                  f"ragkit search \"QUERY\" --index {target} --tenant acme --groups ops")
