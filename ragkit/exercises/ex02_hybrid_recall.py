"""Exercise 2: add BM25 to vector search, fuse with RRF, re-measure candidate recall.

CURRICULUM section 3: dense retrieval misses exact tokens with no semantic neighbourhood
(error codes, account ids, function names); BM25 complements it and reciprocal rank fusion
keeps what either finds. The checker recomputes candidate recall from the learner's own runs,
checks the widths are equal and that the fused lists really hold BM25's finds, and asks that
identifier questions rise sharply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragkit.exercises.cells import check_cell, md, setup, solution_blocks, work
from ragkit.exercises.core import Blank, Exercise, Failure, NotAttempted

__all__ = ["CELLS", "EXERCISE", "check", "hint", "solution", "check_values", "recompute", "WIDTH", "RISE"]

NUMBER = 2
TITLE = "Hybrid search: add BM25, fuse with RRF"
MINUTES = 20
WIDTH = 10
#: How much identifier recall must rise from dense alone to the fused list ("sharply").
RISE = 0.2
METHODS = ("dense", "bm25", "rrf")
GROUPS = ("identifier", "other")

CELLS = [
    md("""
# Exercise 2 · Hybrid search: add BM25, fuse with RRF

**Goal.** Start from vector search alone, add BM25, fuse the two lists with reciprocal rank
fusion, and measure **candidate recall at width 10** before and after, separately for
questions that name an identifier (an error code, an account id, a function name) and for the
rest. Identifier questions should rise sharply.

We measure at width 10: the width of a narrow first stage, where the difference shows. At 50
dense retrieval alone already catches most identifier cases by luck of the long question;
repeat the measurement there at the end.

**Practises** CURRICULUM section 3 (hybrid search and fusion) and section 11 (candidate recall
at width, the ceiling of every later stage). About 20 minutes; every call here is
retrieval-only, so the whole notebook runs in seconds.

**Your data.** 60 answerable evidence cases sampled from the course cases. A case counts as
*found* at width 10 when every document of its minimum evidence set (`case.required_doc_ids`)
is among the 10 candidates. Each case is searched as its caller (`Scope`) over the documents
published by its snapshot time (`snapshot_filters(case.as_of)`): the same mask for every
retriever, so the comparison is fair.
"""),
    setup("""
from ragkit.core import Scope, snapshot_filters
from ragkit.course import course_cases, course_index
from ragkit.exercises import ____, ex02 as ex, sample_cases
from ragkit.retrieval import rrf

index = course_index(progress=False)
cases = sample_cases(course_cases(), 60, seed=2, where=lambda c: c.answerable)
WIDTH = ex.WIDTH


def doc_ids(ranking):
    \"\"\"The document of each row of a Ranking, best first.\"\"\"
    return [index.rows[row].doc_id for row in ranking.ids]


sum("identifier" in c.tags for c in cases), len(cases)
"""),
    md("""
## 1. Three candidate lists per case

Dense retrieval is done for you. Add BM25 (`index.search_lexical`, same arguments) and fuse
the two with `rrf` (from `ragkit.retrieval`), keeping the top `WIDTH` of the fused list so that
all three lists are compared at the same width.
"""),
    work("""
runs = {}
for case in cases:
    mask = index.mask(case.caller, snapshot_filters(case.as_of))
    dense = index.search_dense(case.task, WIDTH, mask)
    # [gap] Retrieve with BM25 under the same mask, then fuse BM25 and dense with rrf, top WIDTH.
    # [stub] bm25 = ____
    # [stub] fused = ____
    bm25 = index.search_lexical(case.task, WIDTH, mask)
    fused = rrf([bm25, dense]).top(WIDTH)
    # [end]
    runs[case.id] = {"dense": doc_ids(dense), "bm25": doc_ids(bm25), "rrf": doc_ids(fused)}
"""),
    md("""
## 2. Candidate recall per group and method
"""),
    work("""
def found(case, candidates):
    \"\"\"1.0 when every document of the case's minimum evidence set is among the candidates, else 0.0.\"\"\"
    # [gap] Compare case.required_doc_ids with the candidate doc ids.
    # [stub] return ____
    return float(set(case.required_doc_ids) <= set(candidates))
    # [end]


recall = {}
for group in ("identifier", "other"):
    members = [c for c in cases if ("identifier" in c.tags) == (group == "identifier")]
    for method in ("dense", "bm25", "rrf"):
        recall[group, method] = sum(found(c, runs[c.id][method]) for c in members) / len(members)
recall
"""),
    check_cell(),
    md("""
## 3. Look closer

Find an identifier case that dense retrieval missed and RRF found: at which rank did BM25 have
its decisive document, and at which rank did it land after fusion? Then find an `other` case
where BM25 alone misses: what words does the question use that the document does not?

Then set `WIDTH = 50`, rerun from the retrieval cell and compare: how much of the gap is left?

**Discuss.** RRF only sees ranks. Why does that make it safe to fuse a BM25 score (unbounded)
with a cosine similarity (between -1 and 1)? What would you tune next: `k`, the widths, or
per-list weights, and how would you know it helped?
"""),
]

VARIABLES = ("cases", "runs", "found", "recall")

HINTS = (
    "BM25 takes the same arguments as dense retrieval: `index.search_lexical(case.task, WIDTH, mask)`. "
    "`rrf` takes a list of rankings; a Ranking has `.top(n)`.",
    "`bm25 = index.search_lexical(case.task, WIDTH, mask)`; `fused = rrf([bm25, dense]).top(WIDTH)`. "
    "For `found`: `float(set(case.required_doc_ids) <= set(candidates))`.",
)


def recompute(
    cases: Sequence[Any], runs: Mapping[str, Mapping[str, Sequence[str]]]
) -> dict[tuple[str, str], float]:
    """Candidate recall per (group, method), recomputed from the learner's runs."""
    out: dict[tuple[str, str], float] = {}
    for group in GROUPS:
        members = [c for c in cases if ("identifier" in c.tags) == (group == "identifier")]
        for method in METHODS:
            hits = [set(c.required_doc_ids) <= set(runs[c.id][method]) for c in members]
            out[group, method] = sum(hits) / len(hits) if hits else 0.0
    return out


def _checker(
    cases: Sequence[Any],
    runs: Mapping[str, Mapping[str, Sequence[str]]],
    found: Callable,
    recall: Mapping[tuple[str, str], float],
) -> str:
    missing = [c.id for c in cases if c.id not in runs]
    if missing:
        raise NotAttempted(f"`runs` has no entry for {len(missing)} case(s); run the retrieval cell.")
    if all(not runs[c.id].get("rrf") for c in cases):
        raise NotAttempted("every fused list is empty: fill in BM25 and the fusion, then rerun the cell.")
    if isinstance(found(cases[0], list(runs[cases[0].id]["rrf"])), Blank):
        raise NotAttempted("`found` still returns ____.")
    if any(set(runs[c.id]) != set(METHODS) for c in cases):
        raise Failure("each entry of `runs` must hold exactly the lists 'dense', 'bm25' and 'rrf'.")
    for method in METHODS:
        longest = max(len(runs[c.id][method]) for c in cases)
        if longest > WIDTH:
            raise Failure(
                f"a '{method}' list holds {longest} candidates: compare at the same width. Keep the "
                f"top WIDTH={WIDTH} of the fused list (`.top(WIDTH)`)."
            )
    if all(list(runs[c.id]["rrf"]) == list(runs[c.id]["dense"]) for c in cases):
        raise Failure(
            "every fused list is identical to the dense list: BM25's ranking never reached the "
            "fusion. Pass both rankings to `rrf`."
        )
    outside = [
        c.id for c in cases if set(runs[c.id]["rrf"]) - set(runs[c.id]["bm25"]) - set(runs[c.id]["dense"])
    ]
    if outside:
        raise Failure(
            f"{len(outside)} fused list(s) hold documents neither retriever returned (e.g. "
            f"{outside[0]}): fuse the two lists you retrieved for that case."
        )
    if all(not set(runs[c.id]["rrf"]) & (set(runs[c.id]["bm25"]) - set(runs[c.id]["dense"])) for c in cases):
        raise Failure(
            "no fused list holds a document that only BM25 found: BM25's ranking did not take "
            "part in the fusion. Pass both rankings to `rrf`."
        )
    if not isinstance(recall, Mapping) or set(recall) != {(g, m) for g in GROUPS for m in METHODS}:
        raise Failure(
            "`recall` must map each (group, method) pair, group in ('identifier', 'other') and "
            "method in ('dense', 'bm25', 'rrf'), to a share between 0 and 1."
        )
    want = recompute(cases, runs)
    for key, value in recall.items():
        if isinstance(value, Blank):
            raise NotAttempted("`recall` still holds ____.")
        if not 0 <= float(value) <= 1:
            raise Failure(f"recall{key} = {value!r} is not a share between 0 and 1.")
        if abs(float(value) - want[key]) > 1e-9:
            raise Failure(
                f"recall{key} = {float(value):.3f} does not match your own runs. A case counts as "
                "found only when *every* document of `case.required_doc_ids` is among the "
                "candidates (not just one of them, not just the decisive one); check `found`."
            )
    rise = want["identifier", "rrf"] - want["identifier", "dense"]
    if rise < RISE:
        raise Failure(
            f"identifier recall rose by only {rise:+.2f} from dense to RRF; with BM25's exact-token "
            "matches fused in it should rise sharply. Check that the fused list comes from the "
            "BM25 and dense rankings of the same case, under the same mask."
        )
    return (
        f"identifier questions: dense {want['identifier', 'dense']:.0%} -> RRF "
        f"{want['identifier', 'rrf']:.0%} (BM25 alone {want['identifier', 'bm25']:.0%}); other questions: "
        f"dense {want['other', 'dense']:.0%} -> RRF {want['other', 'rrf']:.0%}. Fusion keeps what either "
        "retriever finds."
    )


EXERCISE = Exercise(NUMBER, TITLE, VARIABLES, _checker, HINTS, solution_blocks(CELLS))
check = EXERCISE.check
hint = EXERCISE.hint
solution = EXERCISE.solution
check_values = EXERCISE.check_values
