"""Exercise 6: from traces, compute the cost terms of each task at p50 and p95; find the tail term.

CURRICULUM section 5: report distributions, not means: reranker token-units, delivered
evidence tokens, turns evidence persists, retrieval calls per task, each at p50 and p95. The
learner computes the per-task terms from the funnel traces of a small agent-like loop (search,
judge, search again, at most three calls), their percentiles, and names the term whose p95 is
the largest multiple of its p50. The checker recomputes all of it from the learner's traces
and accepts any standard percentile definition.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragkit.exercises.cells import check_cell, md, setup, solution_blocks, work
from ragkit.exercises.core import Blank, Exercise, Failure, NotAttempted

__all__ = ["CELLS", "EXERCISE", "check", "hint", "solution", "check_values", "task_terms", "TERMS"]

NUMBER = 6
TITLE = "Costs from traces: p50, p95 and the tail term"
MINUTES = 25
TERMS = ("reranker_units", "delivered_tokens", "persistence_turns", "calls")

CELLS = [
    md("""
# Exercise 6 · Costs from traces: p50, p95 and the tail term

**Goal.** Every funnel call leaves a trace with its reranker work and its delivered tokens.
From the traces of whole tasks, compute per task: **reranker token-units**, **delivered evidence
tokens**, **persistence turns** (how many turns the first evidence stays in context) and
**calls per task**; report each at **p50 and p95**; and find the term that drives the tail: the
one whose p95 is the largest multiple of its p50.

**Practises** CURRICULUM section 5 (token-turns; "use p50 and p95, not means"; the four
distributions to report). About 25 minutes.

**Your data.** 16 answerable cases, each run as a small task loop: search; if the decisive
document was not delivered (an *oracle* judge that knows the answer, standing in for the
agent's judgement), search again wider (100 candidates, 6 hits), then once more with BM25 only;
at most three calls. Each call's `SearchTrace` holds `tokens["reranker_units"]` (tokens the
cross-encoder read) and `tokens["delivered"]` (evidence tokens handed to the model).

**Turns.** Every call is followed by one judging turn, and the task ends with one answer turn,
so the first call's evidence is present on `calls + 1` turns.
"""),
    setup("""
import pandas as pd

from ragkit.core import Scope, snapshot_filters
from ragkit.course import course_cases, course_index
from ragkit.exercises import ____, ex06 as ex, sample_cases
from ragkit.search import Funnel

index = course_index(progress=False)
funnel = Funnel(index)
cases = sample_cases(course_cases(), 16, seed=6, where=lambda c: c.answerable)
ATTEMPTS = [{}, {"candidates": 100, "deliver": 6}, {"retrievers": ("lexical",), "deliver": 6}]


def run_task(case):
    \"\"\"The traces of one task: search until the decisive document is delivered, at most 3 calls.\"\"\"
    traces = []
    for extra in ATTEMPTS:
        result = funnel.search(case.task, scope=case.caller,
                               filters=snapshot_filters(case.as_of), **extra)
        traces.append(result.trace)
        if case.decisive.doc_id in {h.doc_id for h in result.hits}:
            break
    return traces


traces = {c.id: run_task(c) for c in cases}
sum(len(t) for t in traces.values()), "calls for", len(traces), "tasks"
"""),
    md("""
## 1. One row per task
"""),
    work("""
def task_row(calls):
    \"\"\"The four cost terms of one task, from the traces of its calls.\"\"\"
    # [gap] Reranker token-units and delivered tokens of the task: sum them over its calls (trace.tokens).
    # [stub] reranker_units = ____
    # [stub] delivered_tokens = ____
    reranker_units = sum(t.tokens["reranker_units"] for t in calls)
    delivered_tokens = sum(t.tokens["delivered"] for t in calls)
    # [end]
    # [gap] Persistence turns: the first evidence stays one judging turn per call, plus the answer turn.
    # [stub] persistence_turns = ____
    persistence_turns = len(calls) + 1
    # [end]
    return {"reranker_units": reranker_units, "delivered_tokens": delivered_tokens,
            "persistence_turns": persistence_turns, "calls": len(calls)}


tasks = pd.DataFrame([task_row(traces[c.id]) for c in cases], index=[c.id for c in cases])
tasks.head()
"""),
    md("""
## 2. Percentiles and the tail term
"""),
    work("""
# [gap] p50 and p95 of every column of tasks: a DataFrame with rows "p50" and "p95".
# [stub] percentiles = ____
percentiles = tasks.quantile([0.50, 0.95]).set_axis(["p50", "p95"])
# [end]
tail_ratio = percentiles.loc["p95"] / percentiles.loc["p50"]
# [gap] The dominant tail term: the column whose p95 is the largest multiple of its p50.
# [stub] dominant = ____
dominant = tail_ratio.idxmax()
# [end]
print(percentiles.round(1))
print("dominant tail term:", dominant)
"""),
    check_cell(),
    md("""
## 3. What drives the tail?

The terms multiply: a task's main-model cost is roughly delivered tokens x persistence turns,
and its reranker cost grows with every call. Compute each task's token-turns (each call's
delivered tokens times the turns they persist: `calls - i + 1` judging turns after call *i*, plus
the answer turn) and compare its p95/p50 with the terms above.

**Discuss.** If you could halve one term at p95, which would you pick, and what would you
change in the funnel or the agent to get there (better first-call recall? a cap on calls? a
narrower recovery call)? Why does a mean hide exactly the tasks that cost the most?
"""),
]

VARIABLES = ("cases", "traces", "task_row", "tasks", "percentiles", "dominant")

HINTS = (
    "A trace's token counts are in `trace.tokens`, a dict with the keys 'reranker_units' and 'delivered'. "
    "A DataFrame's `.quantile([0.5, 0.95])` gives both percentiles of every column at once.",
    "`reranker_units = sum(t.tokens['reranker_units'] for t in calls)`, the same for 'delivered'; "
    "`persistence_turns = len(calls) + 1`. Then `percentiles = tasks.quantile([0.5, 0.95]).set_axis(['p50', "
    "'p95'])` and `dominant = (percentiles.loc['p95'] / percentiles.loc['p50']).idxmax()`.",
)


def task_terms(calls: Sequence[Any]) -> dict[str, float]:
    """The four terms of one task, recomputed from its traces."""
    return {
        "reranker_units": sum(t.tokens["reranker_units"] for t in calls),
        "delivered_tokens": sum(t.tokens["delivered"] for t in calls),
        "persistence_turns": len(calls) + 1,
        "calls": len(calls),
    }


def _bounds(values: Sequence[float], q: float) -> tuple[float, float]:
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    return ordered[max(0, math.floor(position) - 1)], ordered[min(len(ordered) - 1, math.ceil(position) + 1)]


_WHERE = {
    "reranker_units": "sum `trace.tokens['reranker_units']` over *every* call of the task",
    "delivered_tokens": "sum `trace.tokens['delivered']` over *every* call of the task",
    "persistence_turns": "the first evidence stays for one judging turn per call plus the answer turn",
    "calls": "one call per trace",
}


def _checker(
    cases: Sequence[Any],
    traces: Mapping[str, Sequence[Any]],
    task_row: Callable,
    tasks: Any,
    percentiles: Any,
    dominant: Any,
) -> str:
    if not cases or any(c.id not in traces for c in cases):
        raise NotAttempted("`traces` lacks some cases; run the setup cell.")
    probe = task_row(traces[cases[0].id])
    if isinstance(probe, Blank) or any(isinstance(v, Blank) for v in dict(probe).values()):
        raise NotAttempted("`task_row` still returns ____.")
    if not hasattr(tasks, "loc") or any(t not in tasks.columns for t in TERMS):
        raise Failure(f"`tasks` must be a DataFrame with one row per case and the columns {list(TERMS)}.")
    want = {c.id: task_terms(traces[c.id]) for c in cases}
    for term in TERMS:
        for c in cases:
            if abs(float(tasks.loc[c.id, term]) - want[c.id][term]) > 1e-9:
                raise Failure(f"{term} of task {c.id} does not follow from its traces: {_WHERE[term]}.")
    if not hasattr(percentiles, "loc") or not {"p50", "p95"} <= set(percentiles.index):
        raise Failure(
            "`percentiles` must be a DataFrame with the rows 'p50' and 'p95' and one column per term."
        )
    for term in TERMS:
        values = [want[c.id][term] for c in cases]
        for row, q in (("p50", 0.5), ("p95", 0.95)):
            got = percentiles.loc[row, term]
            if isinstance(got, Blank):
                raise NotAttempted("`percentiles` still holds ____.")
            low, high = _bounds(values, q)
            if not low - 1e-9 <= float(got) <= high + 1e-9:
                mean = sum(values) / len(values)
                extra = (
                    " It equals the mean: a percentile is not an average."
                    if abs(float(got) - mean) < 1e-9
                    else ""
                )
                raise Failure(
                    f"percentiles['{term}'] at {row} ({float(got):.1f}) is not the {q:.0%} quantile of "
                    f"your tasks.{extra} Use `tasks.quantile(...)`."
                )
    ratio = {
        t: float(percentiles.loc["p95", t]) / float(percentiles.loc["p50", t])
        for t in TERMS
        if float(percentiles.loc["p50", t])
    }
    if isinstance(dominant, Blank):
        raise NotAttempted("`dominant` is still ____.")
    if dominant not in TERMS:
        raise Failure(f"dominant={dominant!r} is not one of the terms {list(TERMS)}.")
    top = max(ratio.values())
    if ratio.get(dominant, 0.0) < top - 1e-9:
        biggest = max(TERMS, key=lambda t: float(percentiles.loc["p95", t]))
        extra = (
            (
                " The largest p95 in absolute terms is not the question: terms have different units; compare "
                "each term's p95 with its own p50."
            )
            if dominant == biggest
            else ""
        )
        raise Failure(
            f"'{dominant}' grows by {ratio.get(dominant, 0.0):.2f}x from p50 to p95, but another term "
            f"grows more.{extra}"
        )
    return (
        f"'{dominant}' drives the tail: p50 {float(percentiles.loc['p50', dominant]):,.0f} -> p95 "
        f"{float(percentiles.loc['p95', dominant]):,.0f} ({top:.2f}x); calls per task p50 "
        f"{float(percentiles.loc['p50', 'calls']):.0f}, p95 {float(percentiles.loc['p95', 'calls']):.1f}."
    )


EXERCISE = Exercise(NUMBER, TITLE, VARIABLES, _checker, HINTS, solution_blocks(CELLS))
check = EXERCISE.check
hint = EXERCISE.hint
solution = EXERCISE.solution
check_values = EXERCISE.check_values
