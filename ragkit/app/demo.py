"""The main job: index the bundled course corpus and trace the course's key searches.

``ragkit demo`` (what ``./run demo`` calls) loads ``datasets/opscorpus/docs``,
builds the index or reuses the cached one (only changed documents are
re-encoded), and prints the funnel trace for:

* the two stories of the course (Acme's January reconciliation failure; the EUR
  cutoff for Acme's Monday batch on 19 January), searched as an Acme operator;
* an identifier query where BM25 rescues dense retrieval, and a paraphrase where
  dense retrieval rescues BM25. Whether each rescue happened is read off the
  trace of this run (the named section's rank in each list, and whether it was
  delivered) and printed, not asserted in advance;
* then both stories asked of a retrieve-once pipeline and of the reference agent
  (:mod:`ragkit.agent.loop`, offline policy): the queries the agent issued, what each
  returned, the links it followed, the decision record and the verified citations.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragkit.agent.loop import Agent
from ragkit.agent.result import AgentResult
from ragkit.app.display import print_result
from ragkit.core.records import parse_time
from ragkit.core.scope import Filters, Scope, snapshot_filters
from ragkit.course.shortcuts import course_cache, course_corpus
from ragkit.index.build import build_or_update, default_index_path
from ragkit.index.index import Index
from ragkit.search.funnel import Funnel
from ragkit.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["DEMO_SEARCHES", "AGENT_STORIES", "DemoSearch", "run_demo", "run_agent_stories", "rescue"]


@dataclass(frozen=True)
class DemoSearch:
    """One traced search of the demo: what it shows, the query, the caller and filters."""

    title: str
    query: str
    tenant: str = "acme"
    groups: tuple[str, ...] = ("ops",)
    valid_at: str | None = None
    lesson: str | None = None  # "bm25_rescue" | "dense_rescue"
    target: str | None = None  # chunk id prefix of the section the lesson is about


DEMO_SEARCHES = (
    DemoSearch("Story 1: a retrieve-once search for the reconciliation failure",
               "Why did Acme's January reconciliation fail?"),
    DemoSearch("Story 2: which EUR cutoff applies on Monday 19 January",
               "Which settlement cutoff applies to Acme's Monday EUR batch on 19 January?",
               valid_at="2026-01-19"),
    DemoSearch("An identifier with no semantic neighbourhood: BM25 rescues dense",
               "E-4471", lesson="bm25_rescue", target="ro-7702#change-summary"),
    # The policy says "A batch is closed once. Reopening needs a ticket ...": the question shares
    # only "batch", a word in thousands of chunks, so BM25 does not rank the section at all.
    DemoSearch("A paraphrase in other words: dense rescues BM25",
               "can a finished batch be opened again", lesson="dense_rescue",
               target="policy-v3#batch-integrity"),
)


def rescue(frame: Any, lesson: str, target: str) -> str:
    """Say, from a trace DataFrame, whether one retriever rescued ``target`` for the other.

    ``bm25_rescue``: the target is ranked better by BM25 than by dense retrieval (or only by
    BM25) and fusion carries it into the fused candidates; ``dense_rescue`` the other way round.
    Ranks beyond the candidate width show as "absent".
    """
    rows = frame[frame.chunk_id.str.startswith(target)]
    if rows.empty:
        return f"{target}: not among the candidates of either retriever -> no rescue"
    row = rows.sort_values("fused_rank").iloc[0]

    def show(v: Any) -> str:
        return "absent" if str(v) == "<NA>" else f"{int(v)}"

    def num(v: Any) -> int:
        return 10**9 if str(v) == "<NA>" else int(v)

    better, worse, who = ((row.lexical_rank, row.dense_rank, "BM25") if lesson == "bm25_rescue"
                          else (row.dense_rank, row.lexical_rank, "dense retrieval"))
    carried = num(better) < num(worse) and num(row.fused_rank) < 10**9
    delivered = bool(row.delivered)
    # a rescue counts only when the rescued source reaches the reader, not when fusion merely ranks it
    missed = f"no (fusion carried it to rank {show(row.fused_rank)}, but it was not delivered)"
    verdict = "yes" if carried and delivered else (missed if carried else "no")
    return (f"{row.chunk_id}: BM25 rank {show(row.lexical_rank)}, dense rank {show(row.dense_rank)}, "
            f"fused rank {show(row.fused_rank)}, final rank {show(row.final_rank)}"
            f"{', delivered' if delivered else ', not delivered'} -> rescued by {who}: {verdict}")


def run_demo(corpus: Path | None = None, index_path: Path | None = None, *, progress: bool = True) -> None:
    """Index (or reuse) the corpus and print each demo search with its funnel trace.

    ``progress``: stage lines and loading and embedding bars while the index is built or updated.
    """
    from rich.console import Console

    console = Console(width=160)
    folder = corpus or course_corpus()
    target = index_path or (default_index_path(folder) if corpus else course_cache() / "index-course")
    t = time.perf_counter()
    index = build_or_update(folder, target, progress=progress, log=lambda m: console.print(m, markup=False))
    console.print(f"index ready in {time.perf_counter() - t:.1f}s: {index.stats()}\n")
    funnel = Funnel(index)
    funnel.search("warm up the models", deliver=1)
    for demo in DEMO_SEARCHES:
        console.rule(demo.title)
        result = funnel.search(demo.query, scope=Scope(demo.tenant, demo.groups),
                               filters=Filters.make(valid_at=demo.valid_at))
        print_result(result)
        if demo.lesson and demo.target:
            console.print("  " + rescue(result.to_frame(), demo.lesson, demo.target), style="bold",
                          markup=False)
        console.print()
    run_agent_stories(index, funnel, console)
    console.print("Every hit is cited as doc_id#section. Explore further: "
                  f"ragkit search \"QUERY\" --index {target} --tenant acme --groups ops; "
                  f"ragkit ask \"QUESTION\" --index {target} --tenant acme --groups ops")


#: The course's stories, asked of the pipeline and of the agent: (title, task, as_of).
AGENT_STORIES = (
    ("Story 1: why did Acme's January reconciliation fail?", "Why did Acme's January reconciliation fail?",
     "2026-02-02"),
    ("Story 2: the EUR cutoff on 19 January (after Acme's cutover)",
     "Which settlement cutoff applies to Acme's Monday EUR batch on 19 January 2026?", "2026-01-19"),
    ("Story 2, before the cutover: the same question on 12 January",
     "Which settlement cutoff applies to Acme's Monday EUR batch on 12 January 2026?", "2026-01-12"),
)


def run_agent_stories(index: Index, funnel: Funnel, console: Console,
                      stories: Sequence[tuple[str, str, str]] = AGENT_STORIES) -> list[AgentResult]:
    """Ask each story of a retrieve-once pipeline and of the agent (hybrid), as an Acme operator.

    Each run sees the documents published by the story's date. Printed per run: the queries
    issued and what each returned (with per-stage ranks), the links followed, the decision
    record, the answer or abstention and the verified citations. Returns the results.
    """
    from rich.markup import escape

    out = []
    for title, task, as_of in stories:
        moment = parse_time(as_of) or dt.datetime.now(dt.timezone.utc)
        for placement in ("pipeline", "hybrid"):
            console.rule(escape(f"{title} [{placement}, offline policy]"))
            box = Toolbox(index, Scope("acme", ("ops",)), funnel=funnel, filters=snapshot_filters(moment))
            result = Agent(box, placement=placement).run(task, as_of=as_of)
            console.print(str(result), markup=False)
            console.print()
            out.append(result)
    return out
