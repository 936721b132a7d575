"""Counterfactual tests: change one thing the answer should depend on, check that it does.

CURRICULUM section 12. Each test edits the *index view* a case runs against, never the
index itself and never a vector (no re-embedding): a :class:`~ragkit.evaluation.views.IndexView`
wraps an index (or one of its snapshots) and hides documents, replaces envelopes, or pins a
row at rank 1 of both first-stage lists (and at the top of the reranker's scores),
delegating everything else. The four tests, and exactly what passing means:

``remove_source``
    The case's decisive source (the evidence item that states the answer) is hidden.
    Passes when the result is *uncertain*: the agent abstains, or its decision record is
    not ``decided`` (``conflict`` or ``insufficient``). Asserting the original value fails
    ("the answer did not depend on its source"); asserting another value with a decided
    record fails ("a confident different answer"). Applies to answerable cases.
``insert_rejected``
    The strongest rejected source (the first ``reject`` entry the caller may read at
    ``as_of``) is pinned at rank 1 of every search. Passes when the expected value is
    still asserted (the resolution holds).
``swap_dates``
    The effective dates (``effective_from``/``effective_to``) of the decisive source and
    its strongest *temporal* competitor (first rejection for ``superseded``,
    ``condition_met``, ``expired`` or ``not_yet_effective``, both with dates) are swapped;
    the prose and every other envelope field stay. Passes when the answer changes (an
    abstention or another value).
``change_tenant``
    Only the caller's tenant changes (to the next tenant of the corpus in sorted order, or
    ``not-<tenant>`` in a one-tenant corpus; groups kept). Passes when no candidate of the
    original tenant appears in any list of any retrieval call and no delivered evidence
    belongs to it. One leak fails the run.

Given the baseline run, the first three run only on cases it answered correctly: a
counterfactual of a wrong answer passes or fails vacuously.

Example:
    >>> from ragkit.evaluation.runner import agent_runner                         # doctest: +SKIP
    >>> cf = run_counterfactuals(cases, index, lambda view: agent_runner(view, "hybrid"))
    ... # doctest: +SKIP
    >>> cf.table()                                                          # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from tqdm.auto import tqdm

from ragkit.core.errors import ScopeError, ValidationError
from ragkit.core.records import GLOBAL_TENANT, Document, Envelope
from ragkit.evaluation.cases import EvidenceCase, Rejection
from ragkit.evaluation.fields import Result, field
from ragkit.evaluation.scoring import answer_correct, search_traces
from ragkit.evaluation.views import CounterfactualSetup, IndexView

__all__ = ["COUNTERFACTUALS", "TEMPORAL_REASONS", "MakeRunner", "CounterfactualResult", "Counterfactuals",
           "counterfactual_case", "run_counterfactuals", "judge"]

COUNTERFACTUALS = ("remove_source", "insert_rejected", "swap_dates", "change_tenant")
#: Rejection reasons that make a source a temporal competitor for ``swap_dates``.
TEMPORAL_REASONS = ("superseded", "condition_met", "expired", "not_yet_effective")
#: ``make_runner(view) -> runner``: the runner to test over one counterfactual view.
MakeRunner = Callable[[IndexView], Callable[[EvidenceCase], Result]]


@dataclasses.dataclass
class CounterfactualResult:
    """One counterfactual over a case set: applicable cases, passes and why each failure failed."""

    name: str
    applicable: int = 0
    passed: int = 0
    skipped: int = 0
    failures: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    baseline_correct: int | None = None

    @property
    def rate(self) -> float:
        """Passed over applicable (NaN when none applied)."""
        return self.passed / self.applicable if self.applicable else float("nan")


class Counterfactuals:
    """The four results; ``ok`` is False when a tenant leak was found (zero tolerance)."""

    def __init__(self, results: Sequence[CounterfactualResult]):
        self.results = {r.name: r for r in results}

    @classmethod
    def from_outcomes(cls, outcomes: Iterable[tuple[str, str, str, dict[str, Any] | None, bool]], *,
                      which: Sequence[str] = COUNTERFACTUALS, with_baseline: bool = False) -> Counterfactuals:
        """Gather per-case outcomes ``(name, case id, outcome, failure, correct before)`` (the
        :func:`counterfactual_case` tuple after the name), in the order given."""
        results = {name: CounterfactualResult(name) for name in which}
        before = dict.fromkeys(which, 0)
        for name, _case, outcome, failure, correct in outcomes:
            res = results[name]
            if outcome == "skipped":
                res.skipped += 1
                continue
            res.applicable += 1
            before[name] += int(bool(correct))
            if outcome == "passed":
                res.passed += 1
            else:
                res.failures.append(dict(failure or {}))
        for name, res in results.items():
            res.baseline_correct = before[name] if with_baseline else None
        return cls(list(results.values()))

    @property
    def tenant_leaks(self) -> int:
        """Failed ``change_tenant`` cases: each is a leak."""
        r = self.results.get("change_tenant")
        return len(r.failures) if r else 0

    def table(self) -> Any:
        """One row per counterfactual (a pandas DataFrame): applicable, passed, rate, failing cases."""
        import pandas as pd

        return pd.DataFrame([{"counterfactual": r.name, "applicable": r.applicable, "passed": r.passed,
                              "pass_rate": r.rate, "not_applicable": r.skipped,
                              "correct_before": r.baseline_correct,
                              "failing_cases": ", ".join(f["case"] for f in r.failures[:12])
                              + (" ..." if len(r.failures) > 12 else "")}
                             for r in self.results.values()]).set_index("counterfactual")

    def to_dict(self) -> dict[str, Any]:
        """Every result as JSON-ready data, failures included."""
        return {name: {"applicable": r.applicable, "passed": r.passed, "pass_rate": r.rate,
                       "not_applicable": r.skipped, "baseline_correct": r.baseline_correct,
                       "failures": r.failures} for name, r in self.results.items()}

    def __str__(self) -> str:
        lines = ["Counterfactuals:"]
        for r in self.results.values():
            base = f"; correct before: {r.baseline_correct}" if r.baseline_correct is not None else ""
            lines.append(f"  {r.name:<16} {r.passed:>4}/{r.applicable:<4} {r.rate:7.1%}  "
                         f"(not applicable: {r.skipped}{base})")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return str(self.table()._repr_html_())


def _readable(case: EvidenceCase, env: Envelope) -> bool:
    return bool(case.in_scope(env))


def _competitor(case: EvidenceCase, docs: Mapping[str, Document],
                reasons: Sequence[str] | None) -> Rejection | None:
    for r in case.reject:
        doc = docs.get(r.doc_id)
        if doc is None or (reasons is not None and r.reason not in reasons):
            continue
        if _readable(case, doc.envelope) and (case.decisive is None or r.doc_id != case.decisive.doc_id):
            return r
    return None


def run_counterfactuals(cases: Sequence[EvidenceCase], index: Any, make_runner: MakeRunner,
                        *, which: Sequence[str] = COUNTERFACTUALS, progress: bool = True,
                        baseline: Mapping[str, bool] | None = None) -> Counterfactuals:
    """Run the counterfactual tests (see the module docs) over ``cases``.

    Args:
        cases: evidence cases.
        index: the index the baseline ran on.
        make_runner: ``make_runner(index_view) -> runner``, e.g.
            ``lambda view: agent_runner(view, "hybrid")``.
        which: a subset of :data:`COUNTERFACTUALS`.
        baseline: optional ``case id -> answered correctly`` of the unmodified run. When given,
            ``remove_source``, ``insert_rejected`` and ``swap_dates`` run only on cases the
            baseline answered correctly (on the others they would pass or fail vacuously);
            the rest count as not applicable. ``change_tenant`` runs on every case.
    """
    _check_which(which)
    setup = CounterfactualSetup(index)
    outcomes: list[tuple[str, str, str, dict[str, Any] | None, bool]] = []
    for name in which:
        for case in tqdm(cases, desc=f"counterfactual {name}", unit="case", disable=not progress,
                         file=sys.stderr):
            ok = baseline.get(case.id) if baseline is not None else None
            outcomes.append((name, *counterfactual_case(name, case, setup, make_runner, ok)))
    return Counterfactuals.from_outcomes(outcomes, which=which, with_baseline=baseline is not None)


def _check_which(which: Sequence[str]) -> None:
    unknown = [w for w in which if w not in COUNTERFACTUALS]
    if unknown:
        raise ValidationError(f"unknown counterfactual(s) {unknown}; use {COUNTERFACTUALS}", field="which")


def counterfactual_case(name: str, case: EvidenceCase, setup: CounterfactualSetup, make_runner: MakeRunner,
                        correct_before: bool | None = None) -> tuple[str, str, dict[str, Any] | None, bool]:
    """One counterfactual on one case: ``(case id, outcome, failure, applicable and correct before)``.

    ``outcome`` is ``"skipped"`` (not applicable), ``"passed"`` or ``"failed"`` (then
    ``failure`` is ``{"case", "why"}``). ``correct_before`` is the baseline's verdict on the
    case (``None``: no baseline; ``False`` skips all but ``change_tenant``).
    """
    docs = setup.docs
    view, run_case, why = None, case, ""
    skipped = (case.id, "skipped", None, False)
    if correct_before is False and name != "change_tenant":
        return skipped
    if name == "remove_source":
        if case.decisive is None or case.decisive.doc_id not in docs:
            return skipped
        view = setup.view(hidden=[case.decisive.doc_id])
    elif name == "insert_rejected":
        rej = _competitor(case, docs, None) if case.answerable else None
        row = setup.row_of(rej.doc_id, rej.anchor) if rej is not None else None
        if rej is None or row is None:
            return skipped
        view = setup.view(pinned=row)
        why = rej.doc_id
    elif name == "swap_dates":
        rej = _competitor(case, docs, TEMPORAL_REASONS) if case.answerable else None
        dec = docs.get(case.decisive.doc_id) if case.decisive is not None else None
        if rej is None or dec is None or dec.envelope.effective_from is None or \
                docs[rej.doc_id].envelope.effective_from is None:
            return skipped
        a, b = dec.envelope, docs[rej.doc_id].envelope
        if (a.effective_from, a.effective_to) == (b.effective_from, b.effective_to):
            return skipped
        swap = dataclasses.replace
        view = setup.view(envelopes={
            a.doc_id: swap(a, effective_from=b.effective_from, effective_to=b.effective_to),
            b.doc_id: swap(b, effective_from=a.effective_from, effective_to=a.effective_to)})
        why = f"{a.doc_id} <-> {b.doc_id}"
    else:  # change_tenant
        if case.caller.tenant in (GLOBAL_TENANT, "*"):
            return skipped
        tenants = setup.tenants
        others = [t for t in tenants if t > case.caller.tenant] or \
            [t for t in tenants if t != case.caller.tenant] or [f"not-{case.caller.tenant}"]
        caller = dataclasses.replace(case.caller, tenant=others[0])
        run_case = dataclasses.replace(case, caller=caller)
        view = setup.view()
    before = bool(correct_before)
    try:
        result = make_runner(view)(run_case)
    except ScopeError as exc:  # a read-time check stopped an out-of-scope candidate: still a leak
        why = f"an out-of-scope candidate reached a read: {exc}"
        return case.id, "failed", {"case": case.id, "why": why}, before
    except Exception as exc:  # noqa: BLE001 - one broken case must not stop the run
        why = f"runner error: {type(exc).__name__}: {exc}"
        return case.id, "failed", {"case": case.id, "why": why}, before
    verdict = judge(name, case, result, why)
    if verdict is None:
        return case.id, "passed", None, before
    return case.id, "failed", {"case": case.id, "why": verdict}, before


def judge(name: str, case: EvidenceCase, result: Result, why: str = "") -> str | None:
    """``None`` when counterfactual ``name`` passed on ``case`` with ``result``, else why it failed.

    ``why`` names what was changed (the pinned source, the swapped pair), for the message.
    """
    abstained = bool(field(result, "abstained", False))
    record = field(result, "record")
    status = field(record, "status") if record is not None else None
    value = field(result, "value")
    if name == "remove_source":
        if abstained or (status is not None and status != "decided"):
            return None
        if answer_correct(case, result):
            gone = case.decisive.doc_id if case.decisive is not None else "its source"
            return f"still asserted {value!r} without {gone}: the answer did not depend on it"
        return f"a confident different answer {value!r} (record {status})"
    if name == "insert_rejected":
        if answer_correct(case, result):
            return None
        return f"with {why} at rank 1: " + ("abstained" if abstained else f"answered {value!r}")
    if name == "swap_dates":
        if abstained or not answer_correct(case, result):
            return None
        return f"dates swapped ({why}) but the answer stayed {value!r}"
    original = case.caller.tenant
    leaked = sorted({c.get("chunk_id", "") for cands in search_traces(result) for c in cands
                     if c.get("tenant") == original})
    for ev in field(result, "delivered", None) or []:
        env = field(ev, "envelope")
        if env is not None and field(env, "tenant") == original:
            leaked.append(str(field(ev, "citation", "")))
    if leaked:
        return f"{len(leaked)} candidate(s) of tenant {original!r} seen: {', '.join(leaked[:5])}"
    return None
