"""Every placement and the counterfactual tests over a case set, case by case, on worker processes.

:func:`evaluate_full` is :func:`ragkit.evaluation.runner.evaluate` for several placements at
once, plus the counterfactuals (:mod:`ragkit.evaluation.counterfactuals`): the runs of one case
share a :class:`~ragkit.evaluation.rerankers.SharedScores` reranker (a pair is scored once,
and each run is still timed as with a cold cache), and results are merged in case order,
so they equal :func:`~ragkit.evaluation.runner.evaluate`'s (``bench/eval_full.py --check N``
compares them).

Example:
    >>> import functools                                                   # doctest: +SKIP
    >>> from ragkit.course.shortcuts import course_cases, course_index     # doctest: +SKIP
    >>> reports, timings = evaluate_full(course_cases(),                   # doctest: +SKIP
    ...     functools.partial(course_index, progress=False), workers=4)
    >>> reports["hybrid"].counterfactuals.table()                          # doctest: +SKIP
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from tqdm.auto import tqdm

from ragkit.agent import PLACEMENTS
from ragkit.core.errors import ValidationError
from ragkit.evaluation.cases import EvidenceCase
from ragkit.evaluation.costs import trace_economics
from ragkit.evaluation.counterfactuals import (
    COUNTERFACTUALS,
    Counterfactuals,
    CounterfactualSetup,
    IndexView,
    counterfactual_case,
)
from ragkit.evaluation.fields import Result
from ragkit.evaluation.report import Report
from ragkit.evaluation.rerankers import SharedScores
from ragkit.evaluation.runner import Runner, agent_runner, failed_result
from ragkit.evaluation.scoring import score_case
from ragkit.models import get_reranker

__all__ = ["PARTS", "evaluate_full"]

#: The parts of :func:`evaluate_full`'s work whose CPU and wall seconds it reports.
PARTS = ("run", "score", "counterfactuals")


def evaluate_full(cases: Sequence[EvidenceCase], load_index: Callable[[], Any], *,
                  placements: Sequence[str] = ("pipeline", "hybrid"), counterfactuals: bool = True,
                  cf_cases: Iterable[str] | None = None, workers: int = 1, progress: bool = True,
                  deliver: int | None = None) -> tuple[dict[str, Report], dict[str, Any]]:
    """Every placement over every case, with counterfactuals, on ``workers`` processes.

    Each case is one job: its runs at every placement, their scores, then the counterfactual
    runs of each placement (:func:`ragkit.evaluation.counterfactuals.counterfactual_case`), all in one
    process sharing one :class:`SharedScores` reranker, so a pair scored once (the pipeline's
    search, which is the hybrid's first; the same query over a counterfactual view) is not
    scored again, while each run is still timed as with a cold cache. Jobs go to ``workers``
    processes (each single-threaded: ``OMP_NUM_THREADS=1``, ``RAGKIT_WORKERS=1``) as they
    free up, and results are merged in case order, so the reports do not depend on the
    number of workers or on which worker ran which case (timings aside).

    Args:
        cases: evidence cases.
        load_index: a picklable callable returning the index (called once per process), e.g.
            ``functools.partial(ragkit.course.shortcuts.course_index, progress=False)``.
        placements: the agent placements to evaluate.
        counterfactuals: run the four counterfactual tests.
        cf_cases: ids of the cases to run counterfactuals on (default: every case).
        workers: processes (1: run here, in this process).
        progress: a tqdm bar on stderr.
        deliver: as for :func:`evaluate`.

    Returns:
        ``(reports, timings)``: a :class:`ragkit.evaluation.report.Report` per placement (with
        ``economics`` and, if run, ``counterfactuals``), and per placement and part
        (:data:`PARTS`) the CPU and wall seconds summed over jobs, plus ``wall_s`` and ``workers``.
    """
    if workers < 1:
        raise ValueError(f"workers={workers}: use 1 or more processes")
    bad = [p for p in placements if p not in PLACEMENTS]
    if bad:
        raise ValidationError(f"unknown placement(s) {bad}; use {list(PLACEMENTS)}", field="placements")
    cases = list(cases)
    cf = set(cf_cases) if cf_cases is not None else {c.id for c in cases}
    jobs = [(i, bool(counterfactuals and c.id in cf)) for i, c in enumerate(cases)]
    config = {"placements": list(placements), "deliver": deliver}
    t0 = time.perf_counter()
    done: dict[int, dict[str, Any]] = {}
    bar = tqdm(total=len(jobs), desc="eval " + "+".join(placements), unit="case", disable=not progress,
               file=sys.stderr)
    if workers == 1:
        _init_worker(load_index, cases, config, single=True)
        for job in jobs:
            done[job[0]] = _case_job(job)
            bar.update()
    else:
        ctx = mp.get_context("spawn")  # a clean interpreter: no OpenMP or ONNX threads forked
        with ctx.Pool(workers, initializer=_init_worker, initargs=(load_index, cases, config)) as pool:
            for out in pool.imap_unordered(_case_job, jobs, chunksize=1):
                done[out["i"]] = out
                bar.update()
    bar.close()
    ordered = [done[i] for i in range(len(cases))]
    reports: dict[str, Report] = {}
    timings: dict[str, Any] = {"workers": workers, "wall_s": time.perf_counter() - t0}
    for p in placements:
        results = {cases[o["i"]].id: o["results"][p] for o in ordered}
        report = Report([o["rows"][p] for o in ordered], cases=cases, results=results, placement=p)
        report.economics = trace_economics(cases, results)
        if counterfactuals:
            outcomes = [(name, *rest) for name in COUNTERFACTUALS for o in ordered
                        for (n, *rest) in o["cf"].get(p, []) if n == name]
            report.counterfactuals = Counterfactuals.from_outcomes(outcomes, with_baseline=True)
        reports[p] = report
        timings[p] = {part: {k: sum(o["time"][p][part][k] for o in ordered) for k in ("cpu_s", "wall_s")}
                      for part in PARTS}
    timings["cf_cases"] = sum(1 for _, run_cf in jobs if run_cf)
    return reports, timings


_WORKER: dict[str, Any] = {}


def _init_worker(load_index: Callable[[], Any], cases: Sequence[EvidenceCase], config: Mapping[str, Any],
                 single: bool = False) -> None:
    """Load the index and the reranker once per process (the pool's initializer)."""
    if not single:
        os.environ["OMP_NUM_THREADS"] = "1"
        os.environ["RAGKIT_WORKERS"] = "1"  # one ONNX run at a time: the processes share the cores
    index = load_index()
    _WORKER.update(index=index, cases=list(cases), config=dict(config),
                   meter=SharedScores(get_reranker()), setup=CounterfactualSetup(index))


def _case_job(job: tuple[int, bool]) -> dict[str, Any]:
    """One case: every placement, its scores and (if asked) its counterfactuals."""
    i, run_cf = job
    w = _WORKER
    case, meter, config = w["cases"][i], w["meter"], w["config"]
    out: dict[str, Any] = {"i": i, "rows": {}, "results": {}, "cf": {}, "time": {}}
    for p in config["placements"]:
        clock = {part: {"cpu_s": 0.0, "wall_s": 0.0} for part in PARTS}
        runner = agent_runner(w["index"], p, reranker=meter)
        result: Result
        t = time.perf_counter()
        try:
            result = _timed(clock["run"], runner, case)
        except Exception as exc:  # noqa: BLE001 - a broken case must not stop the run
            result = failed_result(exc, time.perf_counter() - t)
        row = _timed(clock["score"], score_case, case, result, deliver=config["deliver"])
        out["rows"][p], out["results"][p] = row, result
        if run_cf:
            make = _ViewRunner(p, meter)
            out["cf"][p] = [(name, *_timed(clock["counterfactuals"], counterfactual_case, name, case,
                                           w["setup"], make, bool(row["correct"])))
                            for name in COUNTERFACTUALS]
        out["time"][p] = clock
    return out


class _ViewRunner:
    """``make_runner(view)`` for the counterfactuals: the agent at a placement over the view."""

    def __init__(self, placement: str, meter: SharedScores):
        self.placement, self.meter = placement, meter

    def __call__(self, view: IndexView) -> Runner:
        return agent_runner(view, self.placement, reranker=self.meter)


def _timed(clock: dict[str, float], fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, adding its CPU and wall seconds to ``clock``."""
    c, t = time.process_time(), time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        clock["cpu_s"] += time.process_time() - c
        clock["wall_s"] += time.perf_counter() - t
