"""The plots the notebooks share, drawn with seaborn on matplotlib Axes.

Every function takes the records ragkit computes (a :class:`~ragkit.search.funnel.SearchResult`, a
:func:`~ragkit.evaluation.coverage.candidate_recall` table, a list of traces) and returns the
matplotlib ``Axes`` it drew on, so a notebook can add titles or save the figure. Pass
``ax=`` to draw into an existing figure (the explorer in :mod:`ragkit.course.widgets` draws on a
figure without pyplot). matplotlib and seaborn are imported inside the functions:
``import ragkit.course.viz`` costs nothing.

The data helpers (:func:`stage_ranks`, :func:`timings_frame`) return tidy pandas frames and
need no plotting library.

Example:
    >>> from ragkit.search.trace import CandidateTrace, SearchTrace
    >>> trace = SearchTrace("q", "acme", "none", {"candidates": 50})
    >>> trace.candidates = [CandidateTrace(0, "a#x~0", "a", lexical_rank=2, dense_rank=9, fused_rank=1,
    ...                                    final_rank=1, delivered=True)]
    >>> ranks = stage_ranks(trace)
    >>> ranks["stage"].tolist(), ranks["rank"].tolist()  # not reranked: rank 51 = width + 1
    (['BM25', 'dense', 'fused', 'rerank', 'final'], [2, 9, 1, 51, 1])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragkit.core.errors import ValidationError

__all__ = ["STAGES", "stage_ranks", "timings_frame", "plot_funnel", "plot_recall_by_tag",
           "plot_recall_at_width", "plot_latency"]

#: Trace columns of the ranking stages, in funnel order, with the label each plot uses.
STAGES: Mapping[str, str] = {"lexical_rank": "BM25", "dense_rank": "dense", "fused_rank": "fused",
                             "rerank_rank": "rerank", "final_rank": "final"}


def _trace_of(result: Any) -> Any:
    trace = getattr(result, "trace", result)
    if not hasattr(trace, "candidates") or not hasattr(trace, "to_frame"):
        raise ValidationError(f"expected a SearchResult or SearchTrace, got {type(result).__name__}; "
                              "pass what Funnel.search returned", field="result")
    return trace


def stage_ranks(result: Any, *, top: int = 12, beyond: int | None = None) -> Any:
    """Rank of each of the ``top`` candidates at every stage, as a long pandas frame.

    Candidates are taken in final order (then fused order). A candidate missing from a
    stage's list (beyond that retriever's width, or not reranked) gets rank ``beyond``
    (default: the call's candidate width + 1) and ``listed=False``.

    Returns:
        Columns ``chunk_id``, ``label`` (short chunk id), ``stage`` (``BM25``, ``dense``, ``fused``,
        ``rerank``, ``final``), ``rank``, ``listed``, ``delivered``.
    """
    import pandas as pd

    trace = _trace_of(result)
    frame = trace.to_frame()
    if top < 1:
        raise ValidationError(f"top={top}; show at least one candidate (top >= 1)", field="top")
    width = int(trace.settings.get("candidates", 50)) if isinstance(trace.settings, Mapping) else 50
    beyond = width + 1 if beyond is None else beyond
    rows = []
    for _, cand in frame.head(top).iterrows():
        for column, stage in STAGES.items():
            rank = cand[column]
            listed = not pd.isna(rank)
            rows.append({"chunk_id": cand["chunk_id"], "label": _short(cand["chunk_id"]), "stage": stage,
                         "rank": int(rank) if listed else beyond, "listed": listed,
                         "delivered": bool(cand["delivered"])})
    return pd.DataFrame(rows, columns=["chunk_id", "label", "stage", "rank", "listed", "delivered"])


def _short(chunk_id: str, limit: int = 34) -> str:
    return chunk_id if len(chunk_id) <= limit else chunk_id[: limit - 1] + "…"


def timings_frame(results: Iterable[Any]) -> Any:
    """Per-stage milliseconds of many searches, long format: ``call``, ``stage``, ``ms``.

    ``total`` is left out (it is the sum of the others).
    """
    import pandas as pd

    rows = []
    for call, result in enumerate(results):
        trace = _trace_of(result)
        for stage, ms in trace.timings_ms.items():
            if stage != "total":
                rows.append({"call": call, "stage": stage, "ms": float(ms)})
    if not rows:
        raise ValidationError("no traces given; pass the results of one or more Funnel.search calls",
                              field="results")
    return pd.DataFrame(rows)


def _axes(ax: Any, size: tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new = plt.subplots(figsize=size)
    return new


def plot_funnel(result: Any, *, top: int = 12, ax: Any = None) -> Any:
    """Where each of the top candidates stood at every stage: one line per candidate.

    Rank 1 is at the top. Delivered candidates are drawn solid and thick; a point on the
    dashed line at the bottom means "not in this stage's list". Returns the Axes.
    """
    import seaborn as sns

    data = stage_ranks(result, top=top)
    ax = _axes(ax, (8, 4.5))
    if data.empty:
        ax.set_title("no candidates")
        return ax
    beyond = int(data["rank"].max()) if not data["listed"].all() else None
    sns.lineplot(data=data, x="stage", y="rank", hue="label", style="delivered",
                 style_order=[True, False], size="delivered", sizes={True: 2.6, False: 1.0},
                 size_order=[True, False], markers=True, dashes={True: "", False: (2, 2)},
                 sort=False, ax=ax, legend="brief")
    if beyond is not None:
        ax.axhline(beyond, color="grey", linestyle=":", linewidth=1)
        ax.annotate("not in list", (0, beyond), xytext=(2, -12), textcoords="offset points",
                    fontsize=8, color="grey")
    ax.invert_yaxis()
    ax.set(xlabel="stage", ylabel="rank (1 = best)",
           title=f"{getattr(result, 'query', getattr(_trace_of(result), 'query', ''))[:70]}")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
    return ax


def _long_recall(table: Any, metric: str, hue: str = "method") -> Any:
    frame = table.reset_index() if "tag" not in getattr(table, "columns", ()) else table
    missing = {"tag", hue, metric} - set(frame.columns)
    if missing:
        raise ValidationError(f"the recall table lacks {sorted(missing)}; pass the frame that "
                              "ragkit.evaluation.coverage.candidate_recall returned (or columns tag, "
                              f"{hue}, {metric})", field="table")
    return frame


def plot_recall_by_tag(table: Any, *, metric: str = "set_recall", tags: Sequence[str] | None = None,
                       hue: str = "method", ax: Any = None) -> Any:
    """Bars of candidate recall per case tag, one bar per retriever (or per ``hue`` value).

    Args:
        table: :func:`ragkit.evaluation.coverage.candidate_recall` output (indexed by tag and method),
            or any frame with columns ``tag``, ``method`` and ``metric``.
        metric: the column to plot (``set_recall`` or ``item_recall``).
        tags: the tags to show, in order (default: every tag, ``all`` first).
        hue: the column that tells the bars of one tag apart (e.g. ``chunker``).
    """
    import seaborn as sns

    frame = _long_recall(table, metric, hue)
    order = list(tags) if tags is not None else sorted(frame["tag"].unique(), key=lambda t: (t != "all", t))
    frame = frame[frame["tag"].isin(order)]
    ax = _axes(ax, (9, 4))
    sns.barplot(data=frame, x="tag", y=metric, hue=hue, order=order, ax=ax)
    ax.set(ylim=(0, 1.05), xlabel="case tag", ylabel=metric.replace("_", " "))
    ax.tick_params(axis="x", labelrotation=30)
    return ax


def plot_recall_at_width(frame: Any, *, x: str = "width", y: str = "set_recall", hue: str = "method",
                         ax: Any = None) -> Any:
    """Recall as the candidate width grows: one line per ``hue`` value, log-scaled width."""
    import seaborn as sns

    missing = {x, y, hue} - set(frame.columns)
    if missing:
        raise ValidationError(f"the frame lacks columns {sorted(missing)}; expected {x}, {y} and {hue}",
                              field="frame")
    ax = _axes(ax, (7, 4))
    sns.lineplot(data=frame, x=x, y=y, hue=hue, marker="o", ax=ax)
    ax.set_xscale("log")
    widths = sorted(frame[x].unique())
    ax.set_xticks(widths)
    ax.set_xticklabels([str(w) for w in widths])
    ax.set(ylim=(0, 1.05), xlabel=f"{x} (log scale)", ylabel=y.replace("_", " "))
    return ax


def plot_latency(results: Iterable[Any], *, ax: Any = None) -> Any:
    """Per-stage latency of many searches: one box per stage (milliseconds, log scale)."""
    import seaborn as sns

    frame = timings_frame(results)
    frame = frame.assign(ms=frame["ms"].clip(lower=0.01))
    ax = _axes(ax, (7, 3.5))
    order = list(dict.fromkeys(frame["stage"]))
    sns.boxplot(data=frame, y="stage", x="ms", order=order, ax=ax, color="#9ecae1", fliersize=2)
    ax.set_xscale("log")
    ax.set(xlabel="milliseconds per call (log scale)", ylabel="stage",
           title=f"{frame['call'].nunique()} searches")
    return ax
