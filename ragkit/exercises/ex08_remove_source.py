"""Exercise 8: remove one required source from answerable cases; the agent must become uncertain.

CURRICULUM section 12, the first counterfactual: hide the source the answer rests on and the
answer must become uncertain (an abstention, or a decision record that does not decide).
The learner hides each case's decisive document in an :class:`ragkit.evaluation.counterfactuals.IndexView`
(nothing re-embedded), runs the reference agent on that view, judges each result and lists the
cases where the agent stayed confident. The checker verifies the hidden document is one the
case requires, that the agent really ran without it, and recomputes every judgement.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from ragkit.exercises.cells import check_cell, md, setup, solution_blocks, work
from ragkit.exercises.core import Blank, Exercise, Failure, NotAttempted

__all__ = ["CELLS", "EXERCISE", "check", "hint", "solution", "check_values", "is_uncertain"]

NUMBER = 8
TITLE = "Remove a required source: the agent must become uncertain"
MINUTES = 25

CELLS = [
    md("""
# Exercise 8 · Remove a required source: the agent must become uncertain

**Goal.** A counterfactual test changes one thing the answer should depend on and checks that it
does. Hide the source a case's answer rests on, run the agent again, and check that it becomes
**uncertain** every time: it abstains, or its decision record does not decide. An agent that
still answers confidently either found the same fact elsewhere (check!) or was never using its
evidence.

**Practises** CURRICULUM section 12 (counterfactuals: remove a required source, the answer must
become uncertain). About 25 minutes.

**Your data.** 10 answerable cases. `IndexView(index, hidden=[doc_id])` shows the agent the
course index with that document gone from every search, read and link; nothing is re-embedded.
The agent is the reference agent with its offline policy (rules, not a language model), hybrid
placement; its funnel runs without the cross-encoder here (`rerank_mode="none"`) to keep the
notebook short.
"""),
    setup("""
from ragkit.course import course_cases, course_index
from ragkit.evaluation import IndexView, agent_runner
from ragkit.exercises import ____, ex08 as ex, sample_cases
from ragkit.search import FunnelSettings

index = course_index(progress=False)
cases = sample_cases(course_cases(), 10, seed=8, where=lambda c: c.answerable)
settings = FunnelSettings(rerank_mode="none")


def run_agent(view, case):
    \"\"\"The reference agent on one case, searching the given index view (a blank view gives a blank).\"\"\"
    if view is ____:
        return ____
    return agent_runner(view, "hybrid", funnel_settings=settings)(case)


[(c.id, c.required_doc_ids) for c in cases]
"""),
    md("""
## 1. Hide the source, run again
"""),
    work("""
removed, results = {}, {}
for case in cases:
    # [gap] Pick the required source the answer rests on (the decisive one) and build a view that hides it.
    # [stub] removed[case.id] = ____
    # [stub] view = ____
    removed[case.id] = case.decisive.doc_id
    view = IndexView(index, hidden=[removed[case.id]])
    # [end]
    results[case.id] = run_agent(view, case)
"""),
    md("""
## 2. Uncertain or not?
"""),
    work("""
def uncertain(result):
    \"\"\"True when the agent abstained or its decision record did not decide.\"\"\"
    # [gap] Look at result.abstained and result.record (None, or a DecisionRecord with a status).
    # [stub] return ____
    return bool(result.abstained or result.record is None or result.record.status != "decided")
    # [end]


stayed_confident = [case.id for case in cases if not uncertain(results[case.id])]
print(f"uncertain on {len(cases) - len(stayed_confident)} of {len(cases)}; stayed confident on:",
      stayed_confident)
"""),
    check_cell(),
    md("""
## 3. Read the confident ones

For each case in `stayed_confident`, print the result (`print(results[case_id])`) and the case's
evidence (`[e for e in case.evidence]`). Did the agent answer with the *original* value from
another source (a support document that states it too: legitimate, but then the case's
"minimum evidence set" is not minimal), or with a *different* value, confidently (a failure:
a neighbouring fact promoted to an answer)?

**Discuss.** Why does "the answer did not change when we removed its source" say more about an
agent than an accuracy figure does? Which other counterfactuals from CURRICULUM section 12 would
you run next (insert the strongest rejected source at rank 1; swap effective dates; change only the
tenant), and what must each one show?
"""),
]

VARIABLES = ("cases", "removed", "results", "uncertain", "stayed_confident")

HINTS = (
    "The source a case's answer rests on is `case.decisive.doc_id`; `IndexView(index, hidden=[...])` "
    "hides documents. A result is uncertain when `result.abstained` is True *or* its `result.record` did not "
    "decide.",
    "`removed[case.id] = case.decisive.doc_id`; `view = IndexView(index, hidden=[removed[case.id]])`. "
    "`uncertain`: `return bool(result.abstained or result.record is None or result.record.status != "
    "'decided')`.",
)


def is_uncertain(result: Any) -> bool:
    """Abstained, or no decision record, or a record that did not decide."""
    record = getattr(result, "record", None)
    return bool(result.abstained or record is None or getattr(record, "status", None) != "decided")


def _probes() -> list[tuple[str, Any, bool]]:
    decided = SimpleNamespace(status="decided")
    return [
        (
            "an abstention",
            SimpleNamespace(abstained=True, record=decided, value=None, answer="I cannot say."),
            True,
        ),
        (
            "an answer whose decision record is 'insufficient'",
            SimpleNamespace(
                abstained=False,
                record=SimpleNamespace(status="insufficient"),
                value=None,
                answer="Possibly 15:00.",
            ),
            True,
        ),
        (
            "an answer whose decision record is 'conflict'",
            SimpleNamespace(
                abstained=False,
                record=SimpleNamespace(status="conflict"),
                value=None,
                answer="Either 15:00 or 16:00.",
            ),
            True,
        ),
        (
            "a decided answer",
            SimpleNamespace(
                abstained=False, record=decided, value="15:00", answer="15:00 [policy-v3#cutoffs]"
            ),
            False,
        ),
    ]


def _delivered_docs(result: Any) -> set[str]:
    return {getattr(e, "doc_id", "") for e in getattr(result, "delivered", [])}


def _checker(
    cases: Sequence[Any],
    removed: Mapping[str, Any],
    results: Mapping[str, Any],
    uncertain: Callable,
    stayed_confident: Sequence[str],
) -> str:
    if any(c.id not in removed or c.id not in results for c in cases):
        raise NotAttempted("run the agent on every case (the loop fills `removed` and `results`).")
    if isinstance(uncertain(_probes()[0][1]), Blank):
        raise NotAttempted("`uncertain` still returns ____.")
    for c in cases:
        if removed[c.id] not in c.required_doc_ids:
            raise Failure(
                f"case {c.id}: the document you removed is not in its minimum evidence set "
                "(`case.required_doc_ids`); removing a rejected or unrelated source tests nothing."
            )
    for c in cases:
        if removed[c.id] in _delivered_docs(results[c.id]):
            raise Failure(
                f"case {c.id}: the agent was still delivered the document you removed. Run it on the "
                "IndexView that hides the document, not on the full index."
            )
    for what, probe, want in _probes():
        try:
            got = uncertain(probe)
        except Exception as exc:  # the learner's code
            raise Failure(f"`uncertain` raised {type(exc).__name__} on {what}.") from None
        if bool(got) != want:
            raise Failure(
                f"`uncertain` calls {what} {'uncertain' if got else 'confident'}: an abstention, and an "
                "answer whose decision record did not decide, are uncertain; only a decided record is "
                "confident. Use `result.abstained` and `result.record.status`."
            )
    for c in cases:
        if bool(uncertain(results[c.id])) != is_uncertain(results[c.id]):
            raise Failure(
                f"`uncertain` misjudges the result of case {c.id}; read its `abstained` and its record."
            )
    want_confident = [c.id for c in cases if not is_uncertain(results[c.id])]
    if sorted(stayed_confident) != sorted(want_confident):
        raise Failure("`stayed_confident` does not list exactly the cases your `uncertain` judged confident.")
    n = len(cases)
    same = [
        cid
        for cid in want_confident
        if (case := next(c for c in cases if c.id == cid)).expected is not None
        and getattr(results[cid], "value", None) == case.expected.value
    ]
    if not want_confident:
        return (
            f"the agent became uncertain on all {n} cases once the source was gone: its answers depend on it."
        )
    return (
        f"the agent became uncertain on {n - len(want_confident)} of {n}; it stayed confident on "
        f"{len(want_confident)} ({', '.join(want_confident)}), {len(same)} of them with the original value. "
        "Those are findings, not your mistakes: read them in part 3."
    )


EXERCISE = Exercise(NUMBER, TITLE, VARIABLES, _checker, HINTS, solution_blocks(CELLS))
check = EXERCISE.check
hint = EXERCISE.hint
solution = EXERCISE.solution
check_values = EXERCISE.check_values
