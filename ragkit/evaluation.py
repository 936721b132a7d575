"""Measuring retrieval apart from the agent, on evidence cases.

The evaluation unit is an evidence case (:class:`ragkit.cases.EvidenceCase`): a task, the
caller, a snapshot time and the *minimum evidence set*. :func:`candidate_recall` asks the
first question of CURRICULUM section 11: does the evidence even enter the candidate set at
this width? That is the ceiling every later stage works under.

Example:
    >>> from ragkit.course import course_index                 # doctest: +SKIP
    >>> from ragkit.cases import load_cases                     # doctest: +SKIP
    >>> table = candidate_recall(course_index(), load_cases(path), width=50)  # doctest: +SKIP
    >>> table.loc[("identifier", "bm25"), "set_recall"]          # doctest: +SKIP
    1.0
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from ragkit.fusion import rrf
from ragkit.scope import Filters, Scope

__all__ = ["RETRIEVERS", "snapshot_filters", "candidate_recall"]

RETRIEVERS = ("bm25", "dense", "rrf")


def snapshot_filters(as_of: dt.datetime) -> Filters:
    """Filters that show the corpus as it was at ``as_of``: only documents published by then."""
    return Filters(published_before=as_of + dt.timedelta(seconds=1))


def candidate_recall(index: Any, cases: Iterable[Any], *, width: int = 50,
                     methods: Sequence[str] = RETRIEVERS) -> Any:
    """Candidate recall at ``width`` per case tag and retriever, as a pandas DataFrame.

    Each answerable case is searched as its caller over the documents published by its
    ``as_of``. A case's evidence item counts as found when a candidate chunk has its doc_id
    and section anchor.

    Returns:
        A DataFrame indexed by ``(tag, method)`` (tag ``"all"`` covers every case) with
        columns ``cases``, ``set_recall`` (share of cases whose whole minimum evidence set is
        among the candidates) and ``item_recall`` (mean share of evidence items found).
    """
    import pandas as pd

    rows = []
    for case in cases:
        if not case.answerable:
            continue
        mask = index.mask(Scope(case.caller.tenant, case.caller.groups), snapshot_filters(case.as_of))
        lex = index.search_lexical(case.task, width, mask)
        den = index.search_dense(case.task, width, mask)
        runs = {"bm25": lex, "dense": den, "rrf": rrf([lex, den]).top(width)}
        need = {(e.doc_id, e.anchor) for e in case.evidence}
        for method in methods:
            got = {(index.rows[r].doc_id, index.rows[r].anchor) for r in runs[method].ids}
            share = len(need & got) / len(need)
            for tag in ("all", *case.tags):
                rows.append({"tag": tag, "method": method, "case": case.id, "set": share == 1.0,
                             "item": share})
    frame = pd.DataFrame(rows)
    out = frame.groupby(["tag", "method"]).agg(cases=("case", "nunique"), set_recall=("set", "mean"),
                                                item_recall=("item", "mean"))
    return out
