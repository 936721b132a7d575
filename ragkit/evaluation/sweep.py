"""Width sweeps: candidate width x delivered width (x rerank depth) -> recall, tokens, total cost.

CURRICULUM sections 4 and 5, exercise 3: 3-5 delivered chunks is not a universal optimum;
choose widths by evidence-set recall and cost. For every answerable case and every
``(candidates, rerank_depth)`` pair the funnel runs once, as the case's caller over its
snapshot, delivering the widest width asked; each narrower delivered width ``k`` is read off
the same final ranking (the top ``k`` hits, their expanded-section tokens). Reported per grid
point:

* ``set_recall``: share of cases whose whole minimum evidence set is among the ``k``
  delivered sections;
* ``delivered_tokens``: mean evidence tokens per call (the tokens carried on every later turn);
* ``reranker_units``: mean cross-encoder token-units per call;
* ``calls_per_task``: ``1 + (1 - set_recall) x extra_calls`` (an insufficient first call
  causes ``extra_calls`` recovery calls, :func:`ragkit.evaluation.economics.calls_per_task`);
* ``total_cost``: ``calls_per_task x (reranker_units x reranker_price + delivered_tokens x
  remaining_turns x main_price)``, in main-model token-turn units.

Example:
    >>> frame = width_sweep(course_index(), cases[:40])        # doctest: +SKIP
    >>> frame.sort_values("total_cost").head(3)                # doctest: +SKIP
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.core.ids import section_key
from ragkit.core.scope import snapshot_filters
from ragkit.evaluation.cases import EvidenceCase
from ragkit.evaluation.economics import calls_per_task
from ragkit.search.funnel import Funnel

__all__ = ["width_sweep"]


def width_sweep(index: Any, cases: Sequence[EvidenceCase], *, candidates: Sequence[int] = (10, 30, 50, 100),
                deliver: Sequence[int] = (1, 2, 3, 4, 6, 8), rerank_depth: Sequence[int] = (30,),
                remaining_turns: float = 6, extra_calls: float = 2, main_price: float = 1.0,
                reranker_price: float = 1.0, funnel: Funnel | None = None, progress: bool = True) -> Any:
    """The sweep as a DataFrame, one row per ``(candidates, rerank_depth, deliver)``.

    A rerank depth above the candidate width is cut to it (and reported as such).
    """
    import pandas as pd
    from tqdm.auto import tqdm

    if not deliver or min(deliver) < 1 or not candidates or min(candidates) < 1:
        raise ValidationError("candidates and deliver need widths >= 1, e.g. candidates=(30, 50), "
                              "deliver=(2, 4)", field="deliver")
    funnel = funnel or Funnel(index)
    widest = max(deliver)
    grid = sorted({(c, min(d, c)) for c in candidates for d in rerank_depth})
    answerable = [c for c in cases if c.answerable]
    rows = []
    for case in tqdm(answerable, desc="width sweep", unit="case", disable=not progress, file=sys.stderr):
        need = {(e.doc_id, e.anchor) for e in case.evidence}
        scope = case.caller
        for c, d in grid:
            result = funnel.search(case.task, scope=scope, filters=snapshot_filters(case.as_of), candidates=c,
                                   rerank_depth=d, deliver=min(widest, c))
            units = result.trace.tokens.get("reranker_units", 0)
            for k in deliver:
                hits = result.hits[:k]
                got = {section_key(h.chunk_id) for h in hits}
                rows.append({"case": case.id, "candidates": c, "rerank_depth": d, "deliver": k,
                             "found": need <= got, "delivered_tokens": sum(h.tokens for h in hits),
                             "reranker_units": units})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    out = frame.groupby(["candidates", "rerank_depth", "deliver"], as_index=False).agg(
        cases=("case", "nunique"), set_recall=("found", "mean"),
        delivered_tokens=("delivered_tokens", "mean"), reranker_units=("reranker_units", "mean"))
    out["calls_per_task"] = [float(calls_per_task(round(1 - r, 6), extra_calls)) for r in out["set_recall"]]
    out["cost_per_call"] = out["reranker_units"] * reranker_price + \
        out["delivered_tokens"] * remaining_turns * main_price
    out["total_cost"] = out["calls_per_task"] * out["cost_per_call"]
    return out
