"""Exercise 3: compare reranking at several delivered widths.

CURRICULUM sections 4 and 5: 3-5 survivors is not a universal optimum; choose widths by
evidence-set recall and task quality, and count the cost of the calls a too-narrow width
forces. The learner reranks each case once, cuts the delivered list at several widths and
builds a table: evidence-set recall, answer quality (decisive document delivered), tokens per
turn, calls per task with recovery calls, and token-turns per task; then picks a width by a
stated rule. The checker recomputes the table from the learner's own results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragkit.exercises.cells import check_cell, md, setup, solution_blocks, work
from ragkit.exercises.core import Blank, Exercise, Failure, NotAttempted

__all__ = [
    "CELLS",
    "EXERCISE",
    "check",
    "hint",
    "solution",
    "check_values",
    "recompute",
    "WIDTHS",
    "RECOVERY_CALLS",
    "CARRIED_TURNS",
    "QUALITY_SLACK",
]

NUMBER = 3
TITLE = "How many survivors? Reranking at several widths"
MINUTES = 30
WIDTHS = (1, 2, 3, 4, 6, 8)
RECOVERY_CALLS = 2
CARRIED_TURNS = 6
QUALITY_SLACK = 0.05
COLUMNS = ("set_recall", "answer_quality", "tokens_per_turn", "calls_per_task", "token_turns_per_task")

CELLS = [
    md("""
# Exercise 3 · How many survivors? Reranking at several widths

**Goal.** After the cross-encoder has ordered the candidates, how many should reach the model?
Compare delivered widths 1 to 8 on four things at once: **evidence-set recall** (is the whole
minimum evidence set delivered?), **answer quality** (is the decisive document delivered, so the
reader *can* answer?), **tokens per turn** (what the width puts into the context), and the
**total cost per task** once the recovery calls that a too-narrow width forces are counted.

**Practises** CURRICULUM section 4 (widths chosen by evidence-set recall and task quality, not
by habit) and section 5 (token-turns; calls per task `1 + p_insufficient x extra calls`).
About 30 minutes.

**Your data.** 20 answerable cases, each searched once through the full funnel delivering 8
hits (expanded to their sections). Cutting those at width *w* gives exactly what a call with
`deliver=w` would have delivered, so one reranking per case serves every width.

**The cost model.** A task whose evidence set is incomplete makes `RECOVERY_CALLS` = 2 more
calls; each call's delivered evidence is carried for `CARRIED_TURNS` = 6 turns. Token-turns per
task = tokens per turn x carried turns x calls per task.
"""),
    setup("""
import pandas as pd

from ragkit.core import Scope, snapshot_filters
from ragkit.course import course_cases, course_index
from ragkit.exercises import ____, ex03 as ex, sample_cases
from ragkit.search import Funnel

index = course_index(progress=False)
funnel = Funnel(index)
cases = sample_cases(course_cases(), 20, seed=3, where=lambda c: c.answerable)
WIDTHS, RECOVERY_CALLS, CARRIED_TURNS = ex.WIDTHS, ex.RECOVERY_CALLS, ex.CARRIED_TURNS
results = {c.id: funnel.search(c.task, scope=c.caller,
                               filters=snapshot_filters(c.as_of), deliver=max(WIDTHS))
           for c in cases}
len(results)
"""),
    md("""
## 1. One row per width
"""),
    work("""
def evidence_set_delivered(case, hits):
    \"\"\"True when every document of the case's minimum evidence set is among these hits.\"\"\"
    # [gap] Compare case.required_doc_ids with the doc_id of each hit.
    # [stub] return ____
    return set(case.required_doc_ids) <= {h.doc_id for h in hits}
    # [end]


rows = []
for w in WIDTHS:
    cut = {c.id: results[c.id].hits[:w] for c in cases}
    set_recall = sum(evidence_set_delivered(c, cut[c.id]) for c in cases) / len(cases)
    answer_quality = sum(c.decisive.doc_id in {h.doc_id for h in cut[c.id]} for c in cases) / len(cases)
    # [gap] Tokens per turn: the mean, over cases, of the delivered tokens (hit.tokens) of the first w hits.
    # [stub] tokens_per_turn = ____
    tokens_per_turn = sum(sum(h.tokens for h in cut[c.id]) for c in cases) / len(cases)
    # [end]
    # [gap] Calls per task: a task whose evidence set is incomplete makes RECOVERY_CALLS more calls.
    # [stub] calls_per_task = ____
    calls_per_task = 1 + (1 - set_recall) * RECOVERY_CALLS
    # [end]
    # [gap] Token-turns per task: tokens per turn, carried CARRIED_TURNS turns, on every call of the task.
    # [stub] token_turns_per_task = ____
    token_turns_per_task = tokens_per_turn * CARRIED_TURNS * calls_per_task
    # [end]
    rows.append({"width": w, "set_recall": set_recall, "answer_quality": answer_quality,
                 "tokens_per_turn": tokens_per_turn, "calls_per_task": calls_per_task,
                 "token_turns_per_task": token_turns_per_task})
widths = pd.DataFrame(rows).set_index("width")
widths
"""),
    md("""
## 2. Choose a width

The rule: among the widths whose answer quality is within `QUALITY_SLACK` = 0.05 of the best
answer quality in your table, take the one with the **lowest token-turns per task**.
"""),
    work("""
# [gap] Apply the rule to your table (widths): the cheapest width whose answer quality is near the best.
# [stub] best_width = ____
good_enough = widths[widths.answer_quality >= widths.answer_quality.max() - ex.QUALITY_SLACK]
best_width = int(good_enough.token_turns_per_task.idxmin())
# [end]
best_width
"""),
    check_cell(),
    md("""
## 3. Read the table

Plot `widths[["set_recall", "answer_quality"]]` and `widths.token_turns_per_task` against width.
Where does recall stop rising? Is the cheapest width by token-turns the narrowest one?

**Discuss.** Why can a *wider* delivery be cheaper per task than a narrow one? What would change
if the evidence were carried for 1 turn instead of 6 (answering at once), or if recovery calls
cost 3 more calls instead of 2? The contextual-retrieval experiment delivered 20 chunks: under
which conditions would you widen that far?
"""),
]

VARIABLES = ("cases", "results", "evidence_set_delivered", "widths", "best_width")

HINTS = (
    "Each row works on `cut[c.id]`, the first w hits of a case; a hit carries its delivered tokens in "
    "`hit.tokens`. Calls per task follow CURRICULUM section 5: `1 + share_insufficient x extra_calls`.",
    "`tokens_per_turn = sum(sum(h.tokens for h in cut[c.id]) for c in cases) / len(cases)`; "
    "`calls_per_task = 1 + (1 - set_recall) * RECOVERY_CALLS`; `token_turns_per_task = tokens_per_turn * "
    "CARRIED_TURNS * calls_per_task`. For the width: keep rows with "
    "`answer_quality >= max - QUALITY_SLACK`, "
    "then `idxmin()` of token_turns_per_task.",
)


def recompute(cases: Sequence[Any], results: Mapping[str, Any]) -> dict[int, dict[str, float]]:
    """The width table recomputed from the learner's results."""
    out: dict[int, dict[str, float]] = {}
    for w in WIDTHS:
        cut = {c.id: list(results[c.id].hits[:w]) for c in cases}
        set_recall = sum(set(c.required_doc_ids) <= {h.doc_id for h in cut[c.id]} for c in cases) / len(cases)
        quality = sum(c.decisive.doc_id in {h.doc_id for h in cut[c.id]} for c in cases) / len(cases)
        tokens = sum(sum(h.tokens for h in cut[c.id]) for c in cases) / len(cases)
        calls = 1 + (1 - set_recall) * RECOVERY_CALLS
        out[w] = {
            "set_recall": set_recall,
            "answer_quality": quality,
            "tokens_per_turn": tokens,
            "calls_per_task": calls,
            "token_turns_per_task": tokens * CARRIED_TURNS * calls,
        }
    return out


_WHERE = {
    "set_recall": "a case counts only when *every* document of `case.required_doc_ids` is among its first w "
    "hits; check `evidence_set_delivered`",
    "answer_quality": "answer quality is the share of cases whose decisive document is among the first "
    "w hits",
    "tokens_per_turn": "add up `hit.tokens` of *all* first w hits of a case (not only the w-th), then "
    "take the "
    "mean over cases",
    "calls_per_task": "count the recovery calls: a task whose evidence set is incomplete makes "
    "RECOVERY_CALLS "
    "more calls (1 + share incomplete x RECOVERY_CALLS)",
    "token_turns_per_task": "token-turns per task = tokens per turn x CARRIED_TURNS x calls per task",
}


def _checker(
    cases: Sequence[Any],
    results: Mapping[str, Any],
    evidence_set_delivered: Any,
    widths: Any,
    best_width: Any,
) -> str:
    if not cases or any(c.id not in results for c in cases):
        raise NotAttempted("`results` lacks some cases; run the setup cell.")
    if isinstance(evidence_set_delivered(cases[0], list(results[cases[0].id].hits[:1])), Blank):
        raise NotAttempted("`evidence_set_delivered` still returns ____.")
    if not hasattr(widths, "loc") or any(col not in widths.columns for col in COLUMNS):
        raise Failure(f"`widths` must be a DataFrame indexed by width with the columns {list(COLUMNS)}.")
    if sorted(int(w) for w in widths.index) != sorted(WIDTHS):
        raise Failure(f"`widths` must have one row per width in {WIDTHS}.")
    want = recompute(cases, results)
    for col in COLUMNS:
        for w in WIDTHS:
            got = widths.loc[w, col]
            if isinstance(got, Blank):
                raise NotAttempted(f"column {col} still holds ____.")
            if abs(float(got) - want[w][col]) > 1e-6 * max(1.0, abs(want[w][col])):
                raise Failure(
                    f"{col} at width {w} ({float(got):.3f}) does not follow from your results: {_WHERE[col]}."
                )
    if isinstance(best_width, Blank):
        raise NotAttempted("`best_width` is still ____.")
    quality = {w: want[w]["answer_quality"] for w in WIDTHS}
    floor = max(quality.values()) - QUALITY_SLACK
    # a width exactly at the floor may fall either side in floating point: accept both readings
    allowed = [w for w in WIDTHS if quality[w] >= floor - 1e-9]
    strict = [w for w in WIDTHS if quality[w] >= floor + 1e-9] or allowed
    cheapest = {min(group, key=lambda w: want[w]["token_turns_per_task"]) for group in (allowed, strict)}
    if best_width not in WIDTHS:
        raise Failure(f"best_width={best_width!r} is not one of the widths you measured {WIDTHS}.")
    if best_width not in allowed:
        raise Failure(
            f"width {best_width} loses more than {QUALITY_SLACK} of answer quality against the best "
            "width in your table: the rule keeps only widths near the best quality."
        )
    if best_width not in cheapest:
        raise Failure(
            f"width {best_width} is good enough but not the cheapest such width by token-turns per "
            "task: filter by quality first, then take the lowest token_turns_per_task."
        )
    row = want[best_width]
    narrow = want[min(WIDTHS)]
    return (
        f"width {best_width}: evidence-set recall {row['set_recall']:.0%}, answer quality "
        f"{row['answer_quality']:.0%}, {row['tokens_per_turn']:.0f} tokens per turn, "
        f"{row['calls_per_task']:.2f} calls and {row['token_turns_per_task']:,.0f} token-turns per task "
        f"(width {min(WIDTHS)}: {narrow['calls_per_task']:.2f} calls, {narrow['token_turns_per_task']:,.0f} "
        "token-turns)."
    )


EXERCISE = Exercise(NUMBER, TITLE, VARIABLES, _checker, HINTS, solution_blocks(CELLS))
check = EXERCISE.check
hint = EXERCISE.hint
solution = EXERCISE.solution
check_values = EXERCISE.check_values
