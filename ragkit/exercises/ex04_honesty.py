"""Exercise 4: build unanswerable questions and measure the agent's honesty rate.

CURRICULUM sections 11 and 12: the no-result honesty rate on deliberately unanswerable
questions, reported apart from accuracy with its mirror, the false-assertion rate. The learner
writes unanswerable questions rich in near-evidence (the tenant, the system and the kind of
fact exist; the fact itself does not), states the missing fact as regexes, runs the reference
agent and computes the rates. The checker verifies each question is truly unanswerable for its
caller at its snapshot (no readable, published document matches the missing fact), that it is
near real evidence, and recomputes the rates from the learner's own agent results.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragkit.core.records import parse_time
from ragkit.core.scope import Scope
from ragkit.exercises.cells import check_cell, md, setup, solution_blocks, work
from ragkit.exercises.core import Blank, Exercise, Failure, NotAttempted

__all__ = [
    "CELLS",
    "EXERCISE",
    "check",
    "hint",
    "solution",
    "check_values",
    "answerable_by",
    "near_evidence",
    "MIN_QUESTIONS",
]

NUMBER = 4
TITLE = "Unanswerable questions and the honesty rate"
MINUTES = 30
MIN_QUESTIONS = 5
FIELDS = ("task", "tenant", "groups", "as_of", "absent")
_WORD = re.compile(r"[a-z][a-z0-9-]{4,}")
_COMMON = {
    "which",
    "what",
    "where",
    "there",
    "their",
    "about",
    "after",
    "before",
    "during",
    "while",
    "would",
    "could",
    "should",
    "settlement",
    "tenant",
    "january",
    "february",
    "march",
    "april",
    "august",
    "september",
    "october",
    "november",
    "december",
}

CELLS = [
    md("""
# Exercise 4 · Unanswerable questions and the honesty rate

**Goal.** An agent that always answers looks helpful and is dangerous. Write questions the
corpus *cannot* answer for the caller who asks, questions that sit right next to real evidence,
run the reference agent on them and measure its **honesty rate** (the share it declines to
answer) and its **false-assertion rate** (the share it answers anyway), reported apart from
accuracy.

**Practises** CURRICULUM section 11 (no-result honesty rate on deliberately unanswerable
questions) and section 12 (the unanswerable case rich in near-evidence; the boundary table's
23/29 honest = 79.3%). About 30 minutes.

**What makes a good unanswerable question.** The tenant, the system, the incident or the rule
it names exist, so retrieval finds plausible text; only the asked fact is missing *for this
caller at this date*. Ways to get there: ask before the fact existed (a cutover before its
rollout record), ask about a detail no document records (a cause never written down), ask for a
document the caller's groups may not read, or ask about a currency or tenant the rule does not
cover. For each question write `absent`: regexes that would **all** match one document if the
fact existed (`"(?i)cutover completed for acme"`). The checker verifies that no document the
caller may read, published by `as_of`, matches them all.

**The agent.** The reference agent with its offline policy (rules, not a language model), in the
hybrid placement, searching as the caller over the documents published by `as_of`. To keep the
notebook short its funnel runs without the cross-encoder (`rerank_mode="none"`).
"""),
    setup("""
from types import SimpleNamespace

from ragkit.core import Scope, parse_time
from ragkit.course import course_documents, course_index
from ragkit.evaluation import agent_runner
from ragkit.exercises import ____, ex04 as ex
from ragkit.search import FunnelSettings

index = course_index(progress=False)
docs, _report = course_documents()
run_agent = agent_runner(index, "hybrid", funnel_settings=FunnelSettings(rerank_mode="none"))


def ask(question):
    \"\"\"Run the agent on one question dict (task, tenant, groups, as_of).\"\"\"
    case = SimpleNamespace(task=question["task"], as_of=parse_time(question["as_of"], field_name="as_of"),
                           caller=Scope(question["tenant"], tuple(question["groups"])))
    return run_agent(case)
"""),
    md("""
## 1. Your unanswerable questions

At least five, each a dict with `task`, `tenant`, `groups`, `as_of` (ISO date) and `absent`
(a list of regexes). Check each one as you go with `ex.answerable_by(question, docs)`: it lists
the documents that *would* answer it (an empty list is what you want).
"""),
    work("""
# [gap] Write five or more unanswerable questions, each near real evidence, with the missing fact as regexes.
# [stub] questions = ____
questions = [
    {"task": "On which date was Hooli's cutover to settlement platform v3 completed?",
     "tenant": "hooli", "groups": ["ops"], "as_of": "2026-01-20",
     "absent": [r"(?i)cutover completed for hooli"]},
    {"task": "On which date was Cyberdyne's cutover to settlement platform v3 completed?",
     "tenant": "cyberdyne", "groups": ["ops"], "as_of": "2026-03-01",
     "absent": [r"(?i)cutover completed for cyberdyne"]},
    {"task": "What is the settlement cutoff for Acme's CHF batches?",
     "tenant": "acme", "groups": ["ops"], "as_of": "2026-01-19",
     "absent": [r"\\bCHF\\b"]},
    {"task": "What rolling reserve percentage applies to Globex?",
     "tenant": "globex", "groups": ["ops"], "as_of": "2026-06-30",
     "absent": [r"(?i)rolling reserve[^\\n]{0,40}\\d+(\\.\\d+)?\\s?%"]},
    {"task": "Who takes out-of-hours escalations for Hooli incidents?",
     "tenant": "hooli", "groups": ["ops"], "as_of": "2026-06-30",
     "absent": [r"(?i)out of hours, escalate"]},
]
# [end]
[(q["task"][:60], ex.answerable_by(q, docs)) for q in questions]
"""),
    md("""
## 2. Run the agent and measure
"""),
    work("""
results = [ask(q) for q in questions]

# [gap] The honesty rate (share of questions the agent abstained on) and the false-assertion rate.
# [stub] honesty_rate = ____
# [stub] false_assertion_rate = ____
honesty_rate = sum(r.abstained for r in results) / len(results)
false_assertion_rate = sum(not r.abstained for r in results) / len(results)
# [end]
print(f"honest on {honesty_rate:.0%}, asserted a value on {false_assertion_rate:.0%}")
for q, r in zip(questions, results):
    print("ABSTAINED" if r.abstained else f"ANSWERED {r.value!r}", "|", q["task"])
"""),
    check_cell(),
    md("""
## 3. Read the failures

For a question the agent answered, print its result (`print(results[i])`): which source did it
rely on, and why did the resolver accept it? Was it another tenant's rule, a plan rather than a
record, a neighbouring value? For an abstention, does the text say what was searched, what was
missing and what to confirm?

**Discuss.** Why must the false-assertion rate be reported apart from accuracy, and why is
"the agent answered 95% of questions" not a quality figure? Which of your questions was the
hardest to make truly unanswerable, and what does that tell you about writing evaluation sets?
"""),
]

VARIABLES = ("docs", "questions", "results", "honesty_rate", "false_assertion_rate")

HINTS = (
    "Start from a fact that exists and move the question just off it: ask for Acme's cutover date on a date "
    "*before* the rollout record was published, or a tenant's figure in a document the `ops` group may not "
    "read. `ex.answerable_by(question, docs)` tells you whether a document would answer it.",
    "An AgentResult has `abstained` (True when it declined). `honesty_rate = sum(r.abstained for r in "
    "results) / len(results)`; the false-assertion rate counts the others. Good questions: cutovers asked "
    "before their rollout records (search the documents for 'Cutover completed for'), reserve terms (ACL "
    "`risk`) asked as `ops`.",
)


def _readable(question: Mapping[str, Any], env: Any) -> bool:
    caller = Scope(str(question["tenant"]), tuple(question["groups"]))
    as_of = parse_time(question["as_of"], field_name="as_of")
    return caller.allows(env) and (env.published_at is None or as_of is None or env.published_at <= as_of)


def answerable_by(question: Mapping[str, Any], docs: Sequence[Any]) -> list[str]:
    """Doc ids the caller may read at ``as_of`` whose text matches every ``absent`` regex.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> env = NS(tenant="acme", acl_groups=(), published_at=None)
        >>> q = {"tenant": "acme", "groups": ["ops"], "as_of": "2026-01-10", "absent": ["(?i)cutover done"]}
        >>> answerable_by(q, [NS(doc_id="d1", envelope=env, text="Cutover done.")])
        ['d1']
    """
    patterns = [re.compile(p) for p in question["absent"]]
    return [
        d.doc_id for d in docs if _readable(question, d.envelope) and all(p.search(d.text) for p in patterns)
    ]


def near_evidence(question: Mapping[str, Any], docs: Sequence[Any]) -> list[str]:
    """Readable documents that share at least two distinctive words of the task (near-evidence)."""
    words = {w for w in _WORD.findall(question["task"].lower()) if w not in _COMMON}
    out = []
    for d in docs:
        if not _readable(question, d.envelope):
            continue
        text = d.text.lower()
        if sum(w in text for w in words) >= 2:
            out.append(d.doc_id)
    return out


def _checker(
    docs: Sequence[Any],
    questions: Sequence[Any],
    results: Sequence[Any],
    honesty_rate: Any,
    false_assertion_rate: Any,
) -> str:
    if not isinstance(questions, (list, tuple)) or len(questions) < MIN_QUESTIONS:
        raise Failure(f"write at least {MIN_QUESTIONS} questions (a rate over fewer says little).")
    tasks = set()
    for i, q in enumerate(questions, start=1):
        if not isinstance(q, Mapping) or any(k not in q for k in FIELDS):
            raise Failure(f"question {i} must be a dict with the keys {list(FIELDS)}.")
        if not q["absent"] or isinstance(q["absent"], str):
            raise Failure(
                f"question {i}: `absent` must be a list of regexes that would all match the document "
                "holding the missing fact."
            )
        try:
            would = answerable_by(q, docs)
        except re.error as exc:
            raise Failure(f"question {i}: a regex in `absent` does not compile ({exc}).") from None
        if would:
            raise Failure(
                f"question {i} is answerable: {len(would)} document(s) the caller may read at as_of "
                f"match its missing fact (e.g. {would[0]}). Move the date, the caller or the detail "
                "asked until no document does."
            )
        if not near_evidence(q, docs):
            raise Failure(
                f"question {i} is far from every document the caller may read: an unanswerable case "
                "should be *rich in near-evidence* (the tenant, system or rule exists; only the fact "
                "is missing), or it tests nothing."
            )
        tasks.add(q["task"])
    if len(tasks) < len(questions):
        raise Failure("two of your questions ask the same thing; make each one different.")
    if not isinstance(results, (list, tuple)) or len(results) != len(questions):
        raise NotAttempted("run the agent on every question (`results`), then rerun the measuring cell.")
    if [getattr(r, "task", None) for r in results] != [q["task"] for q in questions]:
        raise Failure(
            "`results` are not the agent's runs of your current questions, in order: rerun the cell."
        )
    honest = sum(bool(r.abstained) for r in results) / len(results)
    if isinstance(honesty_rate, Blank) or isinstance(false_assertion_rate, Blank):
        raise NotAttempted("the rates still hold ____.")
    if abs(float(honesty_rate) - honest) > 1e-9:
        raise Failure(
            "`honesty_rate` does not follow from your results: it is the share of questions on which "
            "the agent *abstained* (`result.abstained`), not the share with an empty value or answer."
        )
    if abs(float(false_assertion_rate) - (1 - honest)) > 1e-9:
        raise Failure(
            "`false_assertion_rate` does not follow from your results: on an unanswerable question every "
            "answer that is not an abstention asserts something false."
        )
    n = len(results)
    honest_n = sum(bool(r.abstained) for r in results)
    return (
        f"{n} unanswerable questions, each near real evidence: the agent abstained on {honest_n}/{n} "
        f"(honesty {honest:.1%}) and asserted a value on {n - honest_n}/{n} (false-assertion rate "
        f"{1 - honest:.1%})."
    )


EXERCISE = Exercise(NUMBER, TITLE, VARIABLES, _checker, HINTS, solution_blocks(CELLS))
check = EXERCISE.check
hint = EXERCISE.hint
solution = EXERCISE.solution
check_values = EXERCISE.check_values
