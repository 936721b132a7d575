"""Plots of an evaluation report, and the self-contained HTML report (plots as base64 PNG).

Each ``plot_*`` function draws with seaborn on a matplotlib ``Axes`` (pass ``ax=`` or get a
new figure) and returns it, so notebooks can call them. :func:`html_report` renders a
:class:`~ragkit.evaluation.report.Report` as one HTML file with no external resources: the tables
and four figures (funnel survival by boundary, cost distributions, retrieval calls per
task, honesty on unanswerable cases), plus the width sweep when one is given.

Example:
    >>> html = html_report(report)                          # doctest: +SKIP
    >>> Path("report.html").write_text(html)                # doctest: +SKIP
"""

from __future__ import annotations

import base64
import html as _html
import io
from typing import Any

from ragkit.evaluation.gates import diagnose
from ragkit.evaluation.report import Report

__all__ = ["plot_boundaries", "plot_costs", "plot_calls", "plot_honesty", "plot_width_sweep", "html_report"]


def _axes(ax: Any, size: tuple[float, float] = (6.4, 3.6)) -> Any:
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained").subplots()


def plot_boundaries(report: Report, *, ax: Any = None) -> Any:
    """Cases whose minimum evidence set passed each boundary (answerable cases), with rates."""
    import seaborn as sns

    ax = _axes(ax)
    table = report.boundaries(by_tag=False).loc["all"].reset_index()
    table = table[table["boundary"] != "end_to_end"]
    sns.barplot(data=table, x="passed", y="label", ax=ax, color="#4c72b0", orient="h")
    for i, (passed, rate) in enumerate(zip(table["passed"], table["rate"], strict=True)):
        ax.text(passed, i, f" {passed} ({rate:.0%})", va="center")
    total = int(table["reached"].iloc[0]) if len(table) else 0
    ax.set(xlabel=f"cases (of {total} answerable)", ylabel="", title="Funnel survival by boundary")
    ax.set_xlim(0, max(total, 1) * 1.25)
    return ax


def plot_costs(report: Report, *, ax: Any = None) -> Any:
    """Distribution of seconds per task (with the p50 and p95 marked)."""
    import seaborn as sns

    ax = _axes(ax)
    seconds = report.frame["seconds"].astype(float)
    sns.histplot(seconds, ax=ax, bins=30, color="#55a868")
    for q, style in ((0.5, "--"), (0.95, ":")):
        ax.axvline(seconds.quantile(q), color="black", linestyle=style, label=f"p{int(q * 100)}")
    ax.legend()
    ax.set(xlabel="seconds per task", ylabel="tasks", title="Cost: seconds per task")
    return ax


def plot_calls(report: Report, *, ax: Any = None) -> Any:
    """How many retrieval calls each task made."""
    import seaborn as sns

    ax = _axes(ax)
    sns.countplot(x=report.frame["searches"].astype(int), ax=ax, color="#8172b2")
    ax.set(xlabel="retrieval calls per task", ylabel="tasks", title="Retrieval calls per task")
    return ax


def plot_honesty(report: Report, *, ax: Any = None) -> Any:
    """Unanswerable cases: honest abstentions versus false assertions, per tag."""
    import pandas as pd
    import seaborn as sns

    ax = _axes(ax)
    h = report.honesty()
    h = h[h["unanswerable"] > 0]
    long = pd.DataFrame([{"tag": tag, "outcome": outcome, "cases": int(row[col])}
                         for tag, row in h.iterrows()
                         for outcome, col in (("honest", "honest"), ("false assertion", "false_assertions"))])
    if len(long):
        sns.barplot(data=long, x="cases", y="tag", hue="outcome", ax=ax, orient="h",
                    palette={"honest": "#55a868", "false assertion": "#c44e52"})
    ax.set(xlabel="unanswerable cases", ylabel="", title="Honesty (apart from accuracy)")
    return ax


def plot_width_sweep(frame: Any, *, y: str = "set_recall", ax: Any = None) -> Any:
    """A width sweep (:func:`ragkit.evaluation.sweep.width_sweep`): ``y`` against delivered width, one line
    per candidate width."""
    import seaborn as sns

    ax = _axes(ax)
    sns.lineplot(data=frame, x="deliver", y=y, hue="candidates", marker="o", ax=ax, palette="viridis")
    ax.set(xlabel="delivered width", ylabel=y.replace("_", " "), title=f"Width sweep: {y.replace('_', ' ')}")
    return ax


def _png(ax: Any) -> str:
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png", dpi=90)
    return base64.b64encode(buf.getvalue()).decode()


def html_report(report: Report, *, sweep: Any = None, title: str = "ragkit evaluation") -> str:
    """The whole report as one self-contained HTML page (tables and base64 PNG figures)."""
    figures = [plot_boundaries(report), plot_costs(report), plot_calls(report)]
    if int(report.honesty().loc["all", "unanswerable"]):
        figures.append(plot_honesty(report))
    if sweep is not None and len(sweep):
        figures += [plot_width_sweep(sweep), plot_width_sweep(sweep, y="total_cost")]
    imgs = "\n".join(f'<img alt="figure" src="data:image/png;base64,{_png(ax)}">' for ax in figures)
    body = report._repr_html_()
    return ("<!doctype html><html><head><meta charset='utf-8'><link rel='icon' href='data:,'>"
            f"<title>{_html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;"
            "font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}img{max-width:48%;margin:4px}</style>"
            f"</head><body><h1>{_html.escape(title)}</h1><pre>{_html.escape(str(report))}</pre>"
            f"<h2>Figures</h2>{imgs}<h2>Tables</h2>{body}<h4>Diagnosis</h4>{diagnose(report)._repr_html_()}"
            "</body></html>")
