"""Exercise 5: compute index staleness as a distribution and judge it.

CURRICULUM section 9: measure index staleness (source change -> index reflects it) as a
distribution, like replication lag. The learner computes each document's lag from its envelope
(``published_at`` -> ``ingested_at``), summarises it by percentiles and the maximum, lists the
documents over the hard ceiling and judges the objective. The checker recomputes every lag from
the documents the learner used and accepts any standard percentile definition.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragkit.exercises.cells import check_cell, md, setup, solution_blocks, work
from ragkit.exercises.core import Exercise, Failure, NotAttempted

__all__ = [
    "CELLS",
    "EXERCISE",
    "check",
    "hint",
    "solution",
    "check_values",
    "true_lags",
    "P95_TARGET_H",
    "CEILING_H",
]

NUMBER = 5
TITLE = "Index staleness as a distribution"
MINUTES = 20
P95_TARGET_H = 24.0
CEILING_H = 72.0
QUANTILES = {"p50": 0.50, "p95": 0.95, "p99": 0.99}

CELLS = [
    md("""
# Exercise 5 · Index staleness as a distribution

**Goal.** Measure how long it takes for a change in a source to reach the index, for every
document, and judge it the way you would judge replication lag: by its distribution (median,
tail, worst case), not by its mean.

**Practises** CURRICULUM section 9 (freshness and invalidation). About 20 minutes; no model
runs here.

**Your data.** The 2,008 documents of the course corpus. Each envelope records when the source
was published or changed (`published_at`) and when the ingestion pipeline took that version in
(`ingested_at`): the moment the index could reflect it. The corpus is a historical snapshot, so
these two timestamps, not today's date, are what to compare.

**The objective** the platform team promised: 95% of changes indexed within
**24 hours** (`P95_TARGET_H`), and none later than **72 hours** (`CEILING_H`).
"""),
    setup("""
import pandas as pd

from ragkit.course import course_documents
from ragkit.exercises import ____, ex05 as ex

docs, _report = course_documents()
P95_TARGET_H, CEILING_H = ex.P95_TARGET_H, ex.CEILING_H
len(docs)
"""),
    md("""
## 1. One lag per document, then the distribution
"""),
    work("""
# [gap] Lag of each document in hours, from published_at to ingested_at (a Series indexed by doc_id).
# [stub] lags = ____
lags = pd.Series({d.doc_id: (d.envelope.ingested_at - d.envelope.published_at).total_seconds() / 3600
                  for d in docs})
# [end]

# [gap] Summarise the distribution: p50, p95 and p99 (quantiles) and the maximum, in hours.
# [stub] summary = {"p50": ____, "p95": ____, "p99": ____, "max": ____}
summary = {"p50": lags.quantile(0.50), "p95": lags.quantile(0.95), "p99": lags.quantile(0.99),
           "max": lags.max()}
# [end]
summary
"""),
    md("""
## 2. The tail, and the verdict
"""),
    work("""
# [gap] The documents whose lag exceeds CEILING_H, worst first (a Series: doc_id -> hours).
# [stub] late = ____
late = lags[lags > CEILING_H].sort_values(ascending=False)
# [end]

# [gap] Does the index meet the objective (p95 within P95_TARGET_H and nothing above CEILING_H)?
# [stub] meets_objective = ____
meets_objective = bool(summary["p95"] <= P95_TARGET_H and summary["max"] <= CEILING_H)
# [end]
print("meets the objective:", meets_objective)
late
"""),
    check_cell(),
    md("""
## 3. Judge it

Look at the late documents' envelopes (`source_type`, `authority`, `effective_from`): what
kind of document was late, and was it already *in effect* while the index did not have it?
Group the lags by source type (`lags.groupby(pd.Series({d.doc_id: d.envelope.source_type for d in
docs}))`) and compare the medians.

**Discuss.** The mean of these lags is a few hours. What would a dashboard that shows only the
mean hide? Which matters more, a runbook ingested 13 hours late or a policy ingested 12 days late,
and how would you change the objective (per source type? by authority?) so the dashboard says so?
What would a periodic full reconciliation add to event-driven indexing here?
"""),
]

VARIABLES = ("docs", "lags", "summary", "late", "meets_objective")

HINTS = (
    "Subtracting two datetimes gives a timedelta; `.total_seconds() / 3600` is hours. A pandas Series "
    "has `.quantile(q)` and `.max()`; use the maximum as well as the percentiles, because the worst case "
    "is part of the objective.",
    "`lags = pd.Series({d.doc_id: (d.envelope.ingested_at - d.envelope.published_at).total_seconds() / 3600 "
    "for d in docs})`; `late = lags[lags > CEILING_H].sort_values(ascending=False)`; the objective holds "
    "only if `summary['p95'] <= P95_TARGET_H and summary['max'] <= CEILING_H`.",
)


def true_lags(docs: Sequence[Any]) -> dict[str, float]:
    """Hours from ``published_at`` to ``ingested_at`` per document that has both."""
    out = {}
    for d in docs:
        env = d.envelope
        if env.published_at is not None and env.ingested_at is not None:
            out[d.doc_id] = (env.ingested_at - env.published_at).total_seconds() / 3600
    return out


def _as_mapping(value: Any, name: str) -> dict[str, float]:
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if not isinstance(value, Mapping):
        raise Failure(
            f"`{name}` must be a pandas Series (or dict) from doc_id to hours; got {type(value).__name__}."
        )
    try:
        return {str(k): float(v) for k, v in value.items()}
    except (TypeError, ValueError):
        raise Failure(f"`{name}` must map doc ids to numbers of hours.") from None


def _quantile_bounds(values: Sequence[float], q: float) -> tuple[float, float]:
    """The range any standard quantile definition can give (between the neighbouring order statistics)."""
    ordered = sorted(values)
    n = len(ordered)
    position = q * (n - 1)
    low = ordered[max(0, math.floor(position) - 1)]
    high = ordered[min(n - 1, math.ceil(position) + 1)]
    return low, high


def _checker(
    docs: Sequence[Any], lags: Any, summary: Mapping[str, Any], late: Any, meets_objective: Any
) -> str:
    want = true_lags(docs)
    if not want:
        raise NotAttempted("`docs` holds no document with both published_at and ingested_at; run the setup.")
    yours = _as_mapping(lags, "lags")
    if set(yours) != set(want):
        raise Failure(
            f"`lags` covers {len(yours)} documents; it should hold one lag per document "
            f"({len(want)}), indexed by doc_id."
        )
    wrong = {k: v for k, v in yours.items() if abs(v - want[k]) > 1e-6}
    if wrong:
        sample = next(iter(wrong))
        ratio = yours[sample] / want[sample] if want[sample] else float("nan")
        if any(v < 0 for v in yours.values()):
            raise Failure(
                "some lags are negative: the lag runs from the source change (published_at) to the "
                "moment the index took it in (ingested_at); check the order of the subtraction."
            )
        if abs(ratio - 3600) < 1e-3 or abs(ratio - 60) < 1e-3 or abs(ratio * 24 - 1) < 1e-3:
            raise Failure(
                "your lags are in the wrong unit: the objective is in hours. A timedelta's "
                "`.total_seconds()` divided by 3600 gives hours."
            )
        raise Failure(
            f"{len(wrong)} lag(s) do not match the envelopes (e.g. {sample}): use "
            "`ingested_at - published_at` of each document's envelope, in hours."
        )
    if not isinstance(summary, Mapping) or not {"p50", "p95", "p99", "max"} <= set(summary):
        raise Failure("`summary` must hold 'p50', 'p95', 'p99' and 'max'.")
    values = list(yours.values())
    for key, q in QUANTILES.items():
        low, high = _quantile_bounds(values, q)
        got = float(summary[key])
        if not low - 1e-9 <= got <= high + 1e-9:
            mean = sum(values) / len(values)
            extra = " It looks like a mean: a percentile is not an average." if abs(got - mean) < 1e-6 else ""
            raise Failure(
                f"summary['{key}'] = {got:.2f} h is not the {q:.0%} quantile of your lags.{extra} "
                "Use `lags.quantile(q)`."
            )
    if abs(float(summary["max"]) - max(values)) > 1e-6:
        raise Failure("summary['max'] is not the largest lag: the worst case is part of the objective.")
    late_map = _as_mapping(late, "late")
    over = {k for k, v in yours.items() if v > CEILING_H}
    if set(late_map) != over:
        raise Failure(
            f"`late` holds {len(late_map)} document(s), but {len(over)} of your lags exceed "
            "CEILING_H: keep exactly the documents above the ceiling (strictly greater)."
        )
    order = list(late_map.values())
    if order != sorted(order, reverse=True):
        raise Failure("`late` is not sorted worst first.")
    if not isinstance(meets_objective, bool) and type(meets_objective).__name__ != "bool_":
        raise Failure("`meets_objective` must be True or False.")
    holds = float(summary["p95"]) <= P95_TARGET_H and max(values) <= CEILING_H
    if bool(meets_objective) != holds:
        raise Failure(
            "your verdict does not follow from your own figures: the objective needs both the p95 "
            "within P95_TARGET_H *and* no document above CEILING_H."
        )
    verdict = "meets" if holds else "misses"
    tail = (
        " The percentiles alone would have looked fine: only the worst case shows it."
        if (not holds and float(summary["p95"]) <= P95_TARGET_H)
        else ""
    )
    return (
        f"p50 {float(summary['p50']):.1f} h, p95 {float(summary['p95']):.1f} h, max "
        f"{float(summary['max']):.1f} h; {len(over)} document(s) over the {CEILING_H:.0f} h ceiling, so the "
        f"index {verdict} its objective.{tail}"
    )


EXERCISE = Exercise(NUMBER, TITLE, VARIABLES, _checker, HINTS, solution_blocks(CELLS))
check = EXERCISE.check
hint = EXERCISE.hint
solution = EXERCISE.solution
check_values = EXERCISE.check_values
