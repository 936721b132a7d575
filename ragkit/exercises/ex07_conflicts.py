"""Exercise 7: conflict cases (current rule, superseded rule, conditional exception).

CURRICULUM section 7: the wrong evidence can be perfectly cited. The learner builds conflict
cases from corpus documents (a current rule beside a superseded one, a conditional exception
beside the general rule it overrides or the record that ended it), states the value each case
should resolve to, and writes the guard an agent applies to every decision record: a decision,
selected evidence, and a reason for every rejection. The checker re-resolves the learner's own
cases with :func:`ragkit.evidence.resolution.resolve` and probes the guard with broken records.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.evidence.resolution import resolve
from ragkit.exercises.cells import check_cell, md, setup, solution_blocks, work
from ragkit.exercises.core import Blank, Exercise, Failure, NotAttempted
from ragkit.text.asked import asked_kind
from ragkit.text.normalise import normalise_value

__all__ = ["CELLS", "EXERCISE", "check", "hint", "solution", "check_values", "broken_records"]

NUMBER = 7
TITLE = "Conflict cases: selected evidence and a reason for every rejection"
MINUTES = 35
FIELDS = ("question", "as_of", "caller", "evidence", "expected")

CELLS = [
    md("""
# Exercise 7 · Conflict cases: selected evidence and a reason for every rejection

**Goal.** Build your own conflict cases from the corpus and make the evidence resolver prove
its decisions: for each case, *which* source was selected and *why* each other source was
rejected. Then write the guard an agent applies before it answers: no decision without
selected evidence, and no rejection without a reason.

**Practises** CURRICULUM section 7 (evidence resolution: dates, authority and conditions decide,
not relevance) and section 12 (negatives: superseded source, conditional exception). About 35
minutes; nothing here needs the index.

**What to build.** At least three cases that, between them, contain the three kinds of source
the course story turns on:

* a **current rule** that must win;
* a **superseded rule** (a policy or runbook version that a later one replaced);
* a **conditional exception** ("X stays on 16:00 until cutover"), either still open (it beats the
  general rule) or ended by a later record (the rule applies again).

The corpus has many: global policies in `v1 -> v2 -> v3` chains, tenant settlement schedules,
and one "stays on 16:00 until cutover" comment per tenant that has not migrated, with a rollout
record when its cutover completes. Use `find` to locate them and `show` to read an envelope.
"""),
    setup("""
import re

from ragkit.core import Scope
from ragkit.course import course_documents
from ragkit.evidence import Evidence, resolve
from ragkit.exercises import ____, ex07 as ex

docs, _report = course_documents()
by_id = {d.doc_id: d for d in docs}


def find(pattern, tenant=None):
    \"\"\"Documents whose text matches a regex (optionally of one tenant): id, type, tenant, dates.\"\"\"
    return [(d.doc_id, d.envelope.source_type, d.envelope.tenant, str(d.envelope.published_at.date()))
            for d in docs if re.search(pattern, d.text) and tenant in (None, d.envelope.tenant)]


def show(doc_id):
    \"\"\"The envelope of one document (dates, authority, supersedes, conditions).\"\"\"
    return by_id[doc_id].envelope


def evidence(doc_id, anchor=None):
    \"\"\"One section (or the whole document) as delivered evidence.\"\"\"
    return Evidence.from_document(by_id[doc_id], anchor)


find(r"stays on 16:00 until cutover")[:3], find(r"(?i)representment window: \\d+ days")[:3]
"""),
    md("""
## 1. Your conflict cases

Each case is a dict with the `question` (name the tenant and the date), the snapshot `as_of`
(ISO date), the `caller` (a `Scope`), the `evidence` (a list of `evidence(...)` items: *every*
source that retrieval might deliver, the wrong ones included) and the value you `expected`, as
you would write it (`"15:00"`, `"18 days"`).
"""),
    work("""
# [gap] Build three or more conflict cases: a current rule, a superseded rule, a conditional exception.
# [stub] conflict_cases = ____
conflict_cases = [
    {"question": "What is the chargeback representment window on 10 August 2026?",
     "as_of": "2026-08-10", "caller": Scope("acme", ["ops"]),
     "evidence": [evidence("pol-chargeback-window-v2", "representment-window"),
                  evidence("pol-chargeback-window-v3", "representment-window")],
     "expected": "18 days"},
    {"question": "Which EUR settlement cutoff applies to Globex on 20 January 2026?",
     "as_of": "2026-01-20", "caller": Scope("globex", ["ops"]),
     "evidence": [evidence("ops-7210-c1"), evidence("policy-v3", "cutoffs-for-migrated-tenants"),
                  evidence("runbook-v1", "eur-cutoff")],
     "expected": "16:00"},
    {"question": "Which EUR settlement cutoff applies to Hooli on 2 February 2026?",
     "as_of": "2026-02-02", "caller": Scope("hooli", ["ops"]),
     "evidence": [evidence("ops-9655-c1"), evidence("policy-v3", "cutoffs-for-migrated-tenants"),
                  evidence("ro-2458"), evidence("runbook-v2", "eur-cutoff")],
     "expected": "15:00"},
]
# [end]
records = [resolve(c["question"], c["evidence"], as_of=c["as_of"], caller=c["caller"])
           for c in conflict_cases]
for record in records:
    print(record, end="\\n\\n")
"""),
    md("""
## 2. The guard

An agent must not answer from a record that cannot justify itself. Write `justified(record,
evidence)`: True only when the record has a decision, the decision's source is among the
*selected* evidence, every delivered source is either selected or rejected, and every rejection
names a reason from `ragkit.evaluation.REJECT_REASONS` and says why (`because`).
"""),
    work("""
from ragkit.evaluation import REJECT_REASONS


def justified(record, evidence):
    \"\"\"True when the record decides, from selected evidence, and explains every rejection.\"\"\"
    # [gap] Require a decision from a selected source, every source accounted for, every rejection explained.
    # [stub] return ____
    if record.decision is None or not record.selected:
        return False
    selected = {s.doc_id for s in record.selected}
    rejected = {r.doc_id for r in record.rejected}
    if record.decision.doc_id not in selected:
        return False
    if any(e.doc_id not in selected | rejected for e in evidence):
        return False
    return all(r.reason in REJECT_REASONS and r.because.strip() for r in record.rejected)
    # [end]


[justified(r, c["evidence"]) for r, c in zip(records, conflict_cases)]
"""),
    check_cell(),
    md("""
## 3. Break it on purpose

Take your conditional-exception case and move its `as_of` to the other side of the cutover (or
drop the rollout record from its evidence). Does the decision change? Does the record say why?
Now remove the current rule from a case: what does the resolver do when only the superseded
rule is left (look at `status`, `rejected` and `to_confirm`)?

**Discuss.** The reranker usually puts the conditional exception first: it is the most
*relevant* text. Why is relevance the wrong criterion here, and which envelope fields carry the
right one? Which of your rejections would a human reviewer want to see in the answer itself?
"""),
]

VARIABLES = ("conflict_cases", "records", "justified")

HINTS = (
    "Try `find(r'stays on 16:00 until cutover')` for conditional exceptions and "
    "`find(r'Cutover completed for globex')` for the record that ends one; `show('policy-v3')` prints an "
    "envelope. A superseded rule is a version whose `superseded_by` names a later one in effect on "
    "your date.",
    "One case per kind works: a policy chain at a date after the newer version took effect (e.g. "
    "`pol-chargeback-window-v2` and `-v3` in August 2026); a tenant's 'stays on 16:00 until cutover' comment "
    "with policy-v3 *before* its cutover; the same *after* the cutover with its rollout record. The guard: "
    "`record.decision`, `{s.doc_id for s in record.selected}`, `{r.doc_id for r in record.rejected}`, and "
    "`r.reason in REJECT_REASONS and r.because`.",
)


def broken_records(record: Any) -> list[tuple[str, Any]]:
    """Copies of ``record`` that a guard must refuse, each with what is wrong with it."""
    out = [("it has no selected evidence", dataclasses.replace(record, selected=[]))]
    if record.rejected:
        first = record.rejected[0]
        out.append(
            (
                "a rejection without a reason (`because` is empty)",
                dataclasses.replace(
                    record, rejected=[dataclasses.replace(first, because=""), *record.rejected[1:]]
                ),
            )
        )
        out.append(
            (
                "a delivered source that is neither selected nor rejected",
                dataclasses.replace(record, rejected=list(record.rejected[1:])),
            )
        )
    out.append(("it has no decision", dataclasses.replace(record, decision=None)))
    return out


def _ask(guard: Callable, record: Any, evidence: Any, what: str) -> Any:
    """Call the learner's guard; an exception is a failure that says on which record."""
    try:
        return guard(record, evidence)
    except Exception as exc:  # the learner's code: report, do not crash the check
        raise Failure(
            f"`justified` raised {type(exc).__name__} ({exc}) on {what}: a guard answers False, not crash."
        ) from None


def _checker(conflict_cases: Sequence[Any], records: Sequence[Any], justified: Callable) -> str:
    if not isinstance(conflict_cases, (list, tuple)) or len(conflict_cases) < 3:
        raise Failure("`conflict_cases` must be a list of at least three cases.")
    if not records or isinstance(justified(records[0], conflict_cases[0]["evidence"]), Blank):
        raise NotAttempted("`justified` still returns ____.")
    kinds: set[str] = set()
    questions = set()
    fresh = []
    for i, case in enumerate(conflict_cases, start=1):
        if not isinstance(case, dict) or any(k not in case for k in FIELDS):
            raise Failure(f"case {i} must be a dict with the keys {list(FIELDS)}.")
        if case["as_of"] is None or case["caller"] is None:
            raise Failure(
                f"case {i} has no as_of or no caller: without a date no version or condition can be "
                "judged, and without a caller no scope."
            )
        if len(case["evidence"]) < 2:
            raise Failure(
                f"case {i} has {len(case['evidence'])} source: a conflict needs at least two sources "
                "that disagree."
            )
        questions.add(case["question"])
        record = resolve(case["question"], case["evidence"], as_of=case["as_of"], caller=case["caller"])
        fresh.append(record)
        if record.status != "decided" or record.decision is None:
            raise Failure(
                f"case {i} does not resolve to a decision (status {record.status!r}); read its record's "
                "`unresolved` and `to_confirm`: is a source missing, or two of equal standing?"
            )
        try:
            expected = normalise_value(record.asked or asked_kind(case["question"]), str(case["expected"]))
        except ValidationError:
            raise Failure(
                f"case {i}: your expected value {case['expected']!r} is not a value of the kind the "
                f"question asks for ({record.asked})."
            ) from None
        if expected != record.decision.value:
            raise Failure(
                f"case {i}: the evidence does not resolve to the value you expected. Read the record: "
                "which source is selected, and why is the one you relied on rejected (its dates, "
                "its authority, its condition)?"
            )
        if not record.rejected:
            raise Failure(
                f"case {i} has no rejected source: the sources agree, so it is not a conflict case."
            )
        reasons = {r.reason for r in record.rejected}
        if "superseded" in reasons:
            kinds.add("superseded rule")
        if reasons & {"condition_met", "exception_applies"} or any(
            e.envelope.conditions and e.doc_id in {s.doc_id for s in record.selected}
            for e in case["evidence"]
        ):
            kinds.add("conditional exception")
        kinds.add("current rule")
    if len(questions) < len(conflict_cases):
        raise Failure("two of your cases ask the same question; make each case a different conflict.")
    missing = {"current rule", "superseded rule", "conditional exception"} - kinds
    if missing:
        raise Failure(
            f"your cases hold no {' and no '.join(sorted(missing))} that the resolver had to set aside "
            "or apply: add a case with one (see the brief for where the corpus has them)."
        )
    for i, (record, case) in enumerate(zip(fresh, conflict_cases, strict=True), start=1):
        if _ask(justified, record, case["evidence"], "a sound record") is not True:
            raise Failure(
                f"`justified` refuses the record of case {i}, which decides from selected evidence and "
                "gives a reason for each rejection: check what your guard requires."
            )
        for what, broken in broken_records(record):
            if _ask(justified, broken, case["evidence"], f"a record where {what}") is not False:
                raise Failure(f"`justified` accepts a record where {what}: make the guard refuse it.")
    return (
        f"{len(conflict_cases)} conflict cases resolve as you expected, holding a current rule, a superseded "
        "rule and a conditional exception; every rejection has a reason, and your guard refuses records "
        "without selected evidence, without a reason, or with a source left unexplained."
    )


EXERCISE = Exercise(NUMBER, TITLE, VARIABLES, _checker, HINTS, solution_blocks(CELLS))
check = EXERCISE.check
hint = EXERCISE.hint
solution = EXERCISE.solution
check_values = EXERCISE.check_values
