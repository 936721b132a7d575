"""Running a placement over evidence cases and scoring every case (CURRICULUM sections 11 and 12).

:func:`evaluate` runs a *runner* over a case set, keeps every case's traces, scores each case
at every boundary of the evidence path (:func:`ragkit.evaluation.scoring.score_case`) and
returns a :class:`ragkit.evaluation.report.Report` with the economics measured on the traces.

A runner is any callable ``runner(case) -> result`` where ``result`` is an
:class:`~ragkit.agent.loop.AgentResult` or looks like one (``answer``, ``abstained``,
``value``, ``record``, ``verification``, ``steps``, ``delivered``, ``searches``, ``seconds``)
and, ideally, carries ``traces``: the full :class:`~ragkit.search.trace.SearchTrace` of every
funnel call. :func:`agent_runner` builds one over an index for a placement and records those
traces (:class:`RecordingFunnel`). Candidate recall apart from the agent is
:func:`ragkit.evaluation.coverage.candidate_recall`; every placement with the counterfactuals
on several processes is :func:`ragkit.evaluation.parallel.evaluate_full`.

Example:
    >>> from ragkit.course.shortcuts import course_index                 # doctest: +SKIP
    >>> from ragkit.evaluation.cases import load_cases                     # doctest: +SKIP
    >>> report = evaluate(load_cases(path), agent_runner(course_index(), "pipeline"))  # doctest: +SKIP
    >>> report.boundaries().loc["all"]                                      # doctest: +SKIP
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tqdm.auto import tqdm

from ragkit.agent import Agent, AgentResult, Policy
from ragkit.core.scope import Filters, Scope, snapshot_filters
from ragkit.evaluation.cases import EvidenceCase
from ragkit.evaluation.costs import trace_economics
from ragkit.evaluation.fields import Result
from ragkit.evaluation.report import Report
from ragkit.evaluation.rerankers import SharedScores
from ragkit.evaluation.scoring import score_case
from ragkit.models import get_reranker
from ragkit.search import Funnel, FunnelSettings, SearchResult, SearchTrace
from ragkit.tools import Toolbox, ToolSettings

__all__ = ["Runner", "evaluate", "agent_runner", "RecordingFunnel", "MeteredToolbox", "failed_result"]

#: A runner: one evidence case in, the run's result out.
Runner = Callable[[EvidenceCase], Result]


def failed_result(exc: Exception, seconds: float) -> dict[str, Any]:
    """The result a case is scored as when its runner raised: nothing retrieved, abstained, the error."""
    return {"abstained": True, "answer": "", "value": None, "steps": [], "searches": 0,
            "seconds": seconds, "error": f"{type(exc).__name__}: {exc}"}


def evaluate(cases: Sequence[EvidenceCase], runner: Runner, *, progress: bool = True,
             placement: str = "custom", deliver: int | None = None) -> Report:
    """Run ``runner`` on every case and score it; returns a :class:`ragkit.evaluation.report.Report`.

    A runner that raises on one case does not stop the run: the case is scored as an
    empty result (nothing retrieved, abstained) with the error in its ``error`` column.

    Args:
        cases: evidence cases (:func:`ragkit.evaluation.cases.load_cases`).
        runner: ``runner(case) -> AgentResult``-like (see the module docs).
        progress: a tqdm bar on stderr.
        placement: a label stored in the report (``pipeline``, ``tool``, ``hybrid``).
        deliver: the delivered width precision is measured at (default: what was delivered).
    """
    rows, results = [], {}
    result: Result
    for case in tqdm(cases, desc=f"eval {placement}", unit="case", disable=not progress, file=sys.stderr):
        t = time.perf_counter()
        try:
            result = runner(case)
        except Exception as exc:  # noqa: BLE001 - a broken case must not stop a 349-case run
            result = failed_result(exc, time.perf_counter() - t)
        rows.append(score_case(case, result, deliver=deliver))
        results[case.id] = result
    report = Report(rows, cases=list(cases), results=results, placement=placement)
    report.economics = trace_economics(list(cases), results)
    return report


class RecordingFunnel(Funnel):
    """A :class:`~ragkit.search.funnel.Funnel` that keeps the full trace of every search in :attr:`traces`.

    Args:
        index, settings, reranker: as for :class:`~ragkit.search.funnel.Funnel`.
        meter: the :class:`~ragkit.evaluation.rerankers.SharedScores` its reranker draws from, if
            any: the milliseconds it replays during a search are added to that search's rerank timing.
    """

    def __init__(self, index: Any, settings: FunnelSettings | None = None, *, reranker: Any = None,
                 meter: SharedScores | None = None):
        super().__init__(index, settings, reranker=reranker)
        self.meter = meter
        self.traces: list[SearchTrace] = []

    def search(self, query: str, *, scope: Scope | None = None, filters: Filters | None = None,
               **overrides: Any) -> SearchResult:
        """:meth:`Funnel.search <ragkit.search.funnel.Funnel.search>`, its trace kept (and metered)."""
        before = self.meter.replayed_ms if self.meter is not None else 0.0
        result = super().search(query, scope=scope, filters=filters, **overrides)
        replayed = (self.meter.replayed_ms - before) if self.meter is not None else 0.0
        if replayed:
            timings = result.trace.timings_ms
            timings["rerank"] = timings.get("rerank", 0.0) + replayed
            timings["total"] = timings.get("total", 0.0) + replayed
        self.traces.append(result.trace)
        return result


class MeteredToolbox:
    """A :class:`~ragkit.tools.toolbox.Toolbox` proxy noting, per tool call, the reranker
    milliseconds a :class:`~ragkit.evaluation.rerankers.SharedScores` replayed during it."""

    def __init__(self, box: Toolbox, meter: SharedScores):
        self._box, self._meter = box, meter
        self.replayed: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._box, name)

    def call(self, name: str, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """:meth:`Toolbox.call <ragkit.tools.toolbox.Toolbox.call>`, the replayed milliseconds noted."""
        before = self._meter.replayed_ms
        try:
            return self._box.call(name, arguments)
        finally:
            self.replayed.append(self._meter.replayed_ms - before)


def add_replayed(result: AgentResult, replayed: list[float]) -> None:
    """Add each tool call's replayed reranker time to its step and to the task's seconds."""
    total = sum(replayed)
    if not total:
        return
    tools = ("search", "fetch", "related")
    steps = [s for s in (result.steps or []) if s.refused is None and s.action in tools]
    if len(steps) == len(replayed):
        for step, ms in zip(steps, replayed, strict=True):
            step.ms += ms
    result.seconds = float(result.seconds) + total / 1000


def agent_runner(index: Any, placement: str = "pipeline", *, funnel_settings: FunnelSettings | None = None,
                 reranker: Any = None, max_searches: int = 6, policy: Policy | None = None,
                 tool_settings: ToolSettings | None = None) -> Runner:
    """A runner for :func:`evaluate`: the reference agent over ``index`` at ``placement``.

    Each case gets a :class:`~ragkit.tools.toolbox.Toolbox` bound to its caller (tenant and groups)
    and its snapshot (documents published by ``as_of``); the full trace of every funnel
    call is recorded on the result as ``result.traces``. One reranker is shared by all
    cases; pass a :class:`~ragkit.evaluation.rerankers.SharedScores` to share scores between
    runners (placements, counterfactual views) with each run timed as if its cache were cold.

    Args:
        index: an :class:`~ragkit.index.index.Index`, one of its snapshots, a counterfactual
            :class:`~ragkit.evaluation.views.IndexView` or a backend index.
        placement: ``pipeline``, ``tool`` or ``hybrid`` (:data:`ragkit.agent.PLACEMENTS`).
        funnel_settings, tool_settings: the funnel's and the tools' settings (default theirs).
        reranker: the cross-encoder (default: the bundled one).
        max_searches: the agent's search budget.
        policy: the agent's policy (default: the offline policy).
    """
    meter = reranker if isinstance(reranker, SharedScores) else None
    shared = reranker if reranker is not None else get_reranker()
    shared = getattr(index, "wrap_reranker", lambda r: r)(shared)

    def run(case: EvidenceCase) -> AgentResult:
        if meter is not None:
            meter.new_run()
        funnel = RecordingFunnel(index, funnel_settings, reranker=shared, meter=meter)
        toolbox = Toolbox(index, case.caller, funnel=funnel, settings=tool_settings,
                          filters=snapshot_filters(case.as_of))
        box = MeteredToolbox(toolbox, meter) if meter is not None else toolbox
        agent = Agent(box, policy, placement=placement, max_searches=max_searches)
        result = agent.run(case.task, as_of=case.as_of)
        if isinstance(box, MeteredToolbox):
            add_replayed(result, box.replayed)
        try:  # the full traces, read by scoring and the economics
            result.traces = funnel.traces  # type: ignore[attr-defined]
        except AttributeError:
            pass
        return result

    return run
