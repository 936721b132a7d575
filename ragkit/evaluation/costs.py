"""Costs measured on real traces: the section 5 quantities as distributions (p50, p95, max).

CURRICULUM section 5 asks for distributions, not means: :func:`trace_costs` reads, per
retrieval call and per task, the quantities :mod:`ragkit.evaluation.economics` computes for
the worked example (candidates, reranker token-units, delivered tokens, calls per task,
token-turns, the turns each piece of evidence persists, and the times to first evidence,
to sufficient evidence and to the answer); :func:`trace_economics` reduces each to a
:func:`distribution` and names the dominant tail term.

Example:
    >>> distribution([1, 2, 3, 4])["p50"], distribution([])["n"]
    (2.5, 0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ragkit.evaluation.cases import EvidenceCase
from ragkit.evaluation.fields import Result, field, fold

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MEASURED", "distribution", "trace_costs", "trace_economics"]

#: Distributions reported from traces (CURRICULUM section 5: "report four distributions", plus
#: reranker work, token-turns and the three times).
MEASURED = ("candidates_per_call", "reranker_units_per_call", "delivered_tokens_per_call", "calls_per_task",
            "evidence_persistence_turns", "token_turns_per_task", "delivered_tokens_per_task",
            "ms_to_first_evidence", "ms_to_sufficient_evidence", "ms_to_answer")


def trace_costs(cases: Sequence[EvidenceCase],
                results: Mapping[str, Result]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per retrieval call and per task costs measured on real results (pandas DataFrames).

    Per call: fused candidates, reranker token-units (the cross-encoder's real pair tokens)
    and evidence tokens delivered to the model (the tool response's ``tokens``, counted with
    :mod:`ragkit.models.tokens`; the funnel's delivered tokens when there is no step). Per task:
    calls, delivered tokens, token-turns (tokens x turns each piece stayed in context), and
    the time to first evidence (end of the first step that delivered anything), to
    sufficient evidence (end of the step after which every evidence quote of the case had
    been delivered; empty if never) and to the final answer. Step times are tool time;
    the rest of the task's seconds is the policy's.

    Args:
        cases: the evidence cases.
        results: ``case id -> result`` (:attr:`ragkit.evaluation.report.Report.results`).
    """
    import pandas as pd

    calls, tasks = [], []
    for case in cases:
        result = results.get(case.id)
        if result is None:
            continue
        steps = list(field(result, "steps", None) or [])
        search_steps = [s for s in steps if field(s, "action") == "search" and field(s, "refused") is None]
        traces = list(field(result, "traces", None) or [])
        for i, trace in enumerate(traces):
            cands = field(trace, "candidates", []) or []
            tokens = field(trace, "tokens", {}) or {}
            step = search_steps[i] if i < len(search_steps) else None
            calls.append({"case": case.id, "call": i + 1,
                          "candidates": sum(1 for c in cands if field(c, "fused_rank") is not None),
                          "reranker_units": int(tokens.get("reranker_units", 0)),
                          "delivered_tokens": int(field(step, "tokens", 0) if step is not None
                                                  else tokens.get("delivered", 0))})
        turns = [last - begin + 1 for begin, last in (field(result, "evidence_turns", None) or {}).values()]
        clock, first, sufficient = 0.0, None, None
        need = [(e.doc_id, fold(e.quote)) for e in case.evidence]
        seen: list[tuple[str, str]] = []
        for s in steps:
            clock += float(field(s, "ms", 0.0) or 0.0)
            response = field(s, "response", {}) or {}
            items = [*(response.get("results") or []), *(response.get("documents") or [])]
            if items and first is None:
                first = clock
            seen += [(str(it.get("doc_id")), fold(it.get("text", ""))) for it in items]
            if need and sufficient is None and all(any(d == doc and q in t for doc, t in seen)
                                                   for d, q in need):
                sufficient = clock
        token_turns_ = field(result, "token_turns", None)
        delivered = field(result, "tokens_delivered", None)
        if delivered is None:
            delivered = sum(c["delivered_tokens"] for c in calls if c["case"] == case.id)
        tasks.append({"case": case.id, "calls": int(field(result, "searches", len(traces)) or 0),
                      "delivered_tokens": int(delivered), "token_turns": token_turns_,
                      "mean_persistence_turns": sum(turns) / len(turns) if turns else None,
                      "ms_to_first_evidence": first, "ms_to_sufficient_evidence": sufficient,
                      "ms_to_answer": float(field(result, "seconds", 0.0) or 0.0) * 1000})
    return pd.DataFrame(calls), pd.DataFrame(tasks)


def trace_economics(cases: Sequence[EvidenceCase], results: Mapping[str, Result]) -> dict[str, Any]:
    """p50, p95 and max of every :data:`MEASURED` distribution, and the dominant tail term.

    The dominant tail term is the distribution whose p95 is the largest multiple of its p50
    (CURRICULUM exercise 6): where the tail of cost comes from.
    """
    per_call, per_task = trace_costs(cases, results)
    persist = []
    for case in cases:
        result = results.get(case.id)
        turns = (field(result, "evidence_turns", None) or {}) if result is not None else {}
        persist += [last - begin + 1 for begin, last in turns.values()]

    def col(frame: pd.DataFrame, name: str) -> list[Any]:
        return frame[name].dropna().tolist() if name in frame else []

    out: dict[str, Any] = {
        "candidates_per_call": distribution(col(per_call, "candidates")),
        "reranker_units_per_call": distribution(col(per_call, "reranker_units")),
        "delivered_tokens_per_call": distribution(col(per_call, "delivered_tokens")),
        "calls_per_task": distribution(col(per_task, "calls")),
        "evidence_persistence_turns": distribution(persist),
        "token_turns_per_task": distribution(col(per_task, "token_turns")),
        "delivered_tokens_per_task": distribution(col(per_task, "delivered_tokens")),
        "ms_to_first_evidence": distribution(col(per_task, "ms_to_first_evidence")),
        "ms_to_sufficient_evidence": distribution(col(per_task, "ms_to_sufficient_evidence")),
        "ms_to_answer": distribution(col(per_task, "ms_to_answer")),
    }
    ratios = {k: v["p95"] / v["p50"] for k, v in out.items() if k in MEASURED[:7] and v["n"] and v["p50"]}
    dominant = max(ratios, key=lambda k: ratios[k]) if ratios else ""
    out["dominant_tail"] = {"term": dominant, "p95_over_p50": ratios.get(dominant, float("nan"))}
    return out


def distribution(values: Sequence[float]) -> dict[str, float]:
    """p50, p95, max and mean of ``values`` (linear-interpolated percentiles; NaN when empty).

    Example:
        >>> distribution([1, 2, 3, 4])["p50"]
        2.5
    """
    arr = np.asarray([v for v in values if v is not None and not _isnan(v)], dtype=float)
    if not len(arr):
        return {"n": 0, "p50": math.nan, "p95": math.nan, "max": math.nan, "mean": math.nan}
    return {"n": int(len(arr)), "p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95)),
            "max": float(arr.max()), "mean": float(arr.mean())}


def _isnan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)
