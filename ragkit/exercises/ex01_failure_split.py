"""Exercise 1: split failures into retrieval problems and reranking problems.

CURRICULUM sections 4 and 12: rerank only when candidate recall is adequate; if the decisive
source never enters the candidate set, fix retrieval first. The learner runs the funnel on a
sample of answerable cases, finds the failures (the decisive document was not delivered) and
splits them by whether that document was among the fused candidates at all.

The checker recomputes both judgements from the learner's own :class:`~ragkit.search.funnel.SearchResult`
objects and compares them with the learner's split.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ragkit.exercises.cells import check_cell, md, setup, solution_blocks, work
from ragkit.exercises.core import Blank, Exercise, Failure, NotAttempted

__all__ = ["CELLS", "EXERCISE", "check", "hint", "solution", "check_values", "truth"]

NUMBER = 1
TITLE = "Retrieval problem or reranking problem?"
MINUTES = 25

CELLS = [
    md("""
# Exercise 1 · Retrieval problem or reranking problem?

**Goal.** Take the cases the funnel gets wrong and split them by *where* they failed: did the
document that answers the question never enter the candidate set (a **retrieval** problem), or
was it among the candidates and then ranked out of the delivered few (a **reranking** problem)?
The two call for different fixes: no reranker can deliver what retrieval never found.

**Practises** CURRICULUM section 4 (rerank only when candidate recall is adequate) and
section 12 (boundaries: enters candidates, survives rerank). About 25 minutes.

**Your data.** 20 answerable evidence cases sampled from the course cases (a sample keeps the
run short; the whole set has 306). Each is searched as its own caller, over the documents
published by its snapshot time, through the full funnel: BM25 + dense, RRF, cross-encoder,
4 hits delivered. A case's *decisive* document (`case.decisive.doc_id`) is the one that states
the answer. Every call's trace lists each candidate with its rank in every list
(`result.trace.candidates`, or `result.to_frame()`).
"""),
    setup("""
from ragkit.core import Scope, snapshot_filters
from ragkit.course import course_cases, course_index
from ragkit.exercises import ____, ex01 as ex, sample_cases
from ragkit.search import Funnel

index = course_index(progress=False)
funnel = Funnel(index)
cases = sample_cases(course_cases(), 20, seed=1, where=lambda c: c.answerable)
results = {}
for case in cases:  # one full funnel call per case (about a second each on a laptop)
    results[case.id] = funnel.search(case.task, scope=case.caller,
                                     filters=snapshot_filters(case.as_of))
len(results)
"""),
    md("""
## 1. Which cases failed, and where?

Fill in the two functions. A case **failed** when its decisive document is not among the
delivered hits. It is a **reranking** problem when that document was nevertheless among the
**fused** candidates (the list that goes to the reranker: the candidate has a `fused_rank`);
otherwise it is a **retrieval** problem. Careful: the trace also lists rows that only one
retriever returned and that did not make the fused list.
"""),
    work("""
def failed(case, result):
    \"\"\"True when the case's decisive document is not among the delivered hits.\"\"\"
    # [gap] Compare case.decisive.doc_id with the doc_id of every delivered hit (result.hits).
    # [stub] return ____
    return case.decisive.doc_id not in {hit.doc_id for hit in result.hits}
    # [end]


def in_candidates(case, result):
    \"\"\"True when the decisive document made the fused candidate list (the reranker's input).\"\"\"
    # [gap] Look through result.trace.candidates for the decisive doc_id with a fused_rank.
    # [stub] return ____
    return any(c.doc_id == case.decisive.doc_id and c.fused_rank is not None
               for c in result.trace.candidates)
    # [end]


split = {"retrieval": [], "reranking": []}
for case in cases:
    result = results[case.id]
    if failed(case, result):
        split["reranking" if in_candidates(case, result) else "retrieval"].append(case.id)
{problem: len(ids) for problem, ids in split.items()}
"""),
    check_cell(),
    md("""
## 2. Read one of each

Pick one case from each list and look at its trace (`results[case_id].to_frame()`): for a
reranking problem, where did BM25, dense retrieval and fusion put the decisive document, and
where did the cross-encoder put it? For a retrieval problem, what did the candidates have in
common instead?

**Discuss.** Which of your failures would a better reranker fix? Which would a wider candidate
set fix, and which need a different query (another word, an identifier, a filter)?
"""),
]

VARIABLES = ("cases", "results", "failed", "in_candidates", "split")

HINTS = (
    "A hit's document is `hit.doc_id`; the case's answer document is `case.decisive.doc_id`. "
    "For the second function, each entry of `result.trace.candidates` is a CandidateTrace with "
    "`doc_id` and the ranks it got in each list.",
    "`failed`: `return case.decisive.doc_id not in {h.doc_id for h in result.hits}`. "
    "`in_candidates`: the fused list is the set of candidates whose `fused_rank is not None`; "
    "a row with only a `lexical_rank` or only a `dense_rank` did not reach the reranker.",
)


def truth(cases: Sequence[Any], results: Mapping[str, Any]) -> dict[str, list[str]]:
    """The split recomputed from the learner's own results (not printed to the learner)."""
    out: dict[str, list[str]] = {"retrieval": [], "reranking": []}
    for case in cases:
        result = results.get(case.id)
        if result is None or case.decisive is None:
            continue
        want = case.decisive.doc_id
        if want in {h.doc_id for h in result.hits}:
            continue
        fused = any(c.doc_id == want and c.fused_rank is not None for c in result.trace.candidates)
        out["reranking" if fused else "retrieval"].append(case.id)
    return out


def _example(ids: Collection[str]) -> str:
    return f" (e.g. {sorted(ids)[0]})" if ids else ""


def _checker(
    cases: Sequence[Any],
    results: Mapping[str, Any],
    failed: Callable,
    in_candidates: Callable,
    split: Mapping[str, Sequence[str]],
) -> str:
    probe = next((c for c in cases if c.id in results), None)
    if probe is None:
        raise NotAttempted("`results` holds no search result for any case in `cases`; run the setup cell.")
    if isinstance(failed(probe, results[probe.id]), Blank) or isinstance(
        in_candidates(probe, results[probe.id]), Blank
    ):
        raise NotAttempted("a function still returns ____; fill in `failed` and `in_candidates`.")
    if not isinstance(split, Mapping) or set(split) != {"retrieval", "reranking"}:
        raise Failure(
            "`split` must be a dict with exactly two keys, 'retrieval' and 'reranking', each a "
            "list of case ids."
        )
    if len(cases) < 20:
        raise Failure(f"only {len(cases)} cases: a split over so few says little. Keep the 20 of the setup.")
    want = truth(cases, results)
    yours = {k: set(v) for k, v in split.items()}
    both = yours["retrieval"] & yours["reranking"]
    if both:
        raise Failure(f"{len(both)} case(s) are in both lists{_example(both)}; each failure has one cause.")
    all_failed = set(want["retrieval"]) | set(want["reranking"])
    not_failed = (yours["retrieval"] | yours["reranking"]) - all_failed
    if not_failed:
        raise Failure(
            f"{len(not_failed)} case(s) in your split did not fail{_example(not_failed)}: their "
            "decisive document is among the delivered hits. A failure is a case whose "
            "`case.decisive.doc_id` is missing from `result.hits`; check `failed`."
        )
    missing = all_failed - yours["retrieval"] - yours["reranking"]
    if missing:
        raise Failure(
            f"{len(missing)} failed case(s) are in neither list{_example(missing)}: their decisive "
            "document was not delivered. Check `failed`."
        )
    to_rerank = yours["retrieval"] & set(want["reranking"])
    to_retrieve = yours["reranking"] & set(want["retrieval"])
    if to_rerank and to_retrieve and len(to_rerank) + len(to_retrieve) == len(all_failed):
        raise Failure(
            "every failure is in the wrong list: the two labels look swapped. A reranking "
            "problem is one where the document *was* among the fused candidates."
        )
    if to_rerank:
        raise Failure(
            f"{len(to_rerank)} case(s) you filed under 'retrieval' had the decisive document in "
            f"the fused candidate list{_example(to_rerank)}: look for a candidate with a "
            "`fused_rank` in `result.trace.candidates` (not only in one retriever's list, and "
            "not only among the delivered hits)."
        )
    if to_retrieve:
        raise Failure(
            f"{len(to_retrieve)} case(s) you filed under 'reranking' never made the fused "
            f"candidate list{_example(to_retrieve)}: a row found by one retriever only, beyond "
            "the fused width, has `fused_rank` None and never reached the reranker."
        )
    n_fail, n_ret = len(all_failed), len(want["retrieval"])
    return (
        f"{n_fail} of {len(cases)} cases failed: {n_ret} retrieval problem(s) (the decisive document never "
        f"entered the candidates) and {n_fail - n_ret} reranking problem(s). Fix retrieval first for the "
        f"{n_ret}: no reranker can deliver a document it never sees."
    )


EXERCISE = Exercise(NUMBER, TITLE, VARIABLES, _checker, HINTS, solution_blocks(CELLS))
check = EXERCISE.check
hint = EXERCISE.hint
solution = EXERCISE.solution
check_values = EXERCISE.check_values
