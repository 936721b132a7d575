"""Interactive explorers for the notebooks (ipywidgets), usable headless too.

:class:`FunnelExplorer` runs one query through a :class:`~ragkit.search.funnel.Funnel` and shows,
for the leading candidates, their rank at every stage (BM25, dense, fused, rerank, final) as a
table and as a plot. Sliders set the candidate width, the delivered width and RRF's k; a
toggle sets the rerank mode. Every change re-runs the search.

Everything the explorer shows lives in plain widget values (an HTML table, a PNG image, a
summary line), so it works without a browser: build it, call :meth:`FunnelExplorer.update`,
and read :attr:`~FunnelExplorer.frame` or the widgets' ``value``. That is how the notebooks
run it under nbval and how the tests check it. The plot is drawn on a matplotlib
``Figure`` (Agg), never through pyplot, so nothing else appears in the notebook.

Example:
    >>> from ragkit.course import course_funnel                      # doctest: +SKIP
    >>> explorer = FunnelExplorer(course_funnel(), "E-4471")         # doctest: +SKIP
    >>> explorer.update(candidates=20, rerank_mode="none").hits[0].citation  # doctest: +SKIP
    >>> explorer                                                     # doctest: +SKIP
"""

from __future__ import annotations

import html
import io
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.course.viz import STAGES, plot_funnel
from ragkit.retrieval.rerank import RERANK_MODES

__all__ = ["FunnelExplorer", "CONTROLS"]

#: The explorer's controls: ``name -> (min, max, step)``; the rerank mode is a toggle.
CONTROLS: dict[str, tuple[int, int, int]] = {
    "candidates": (5, 200, 5),
    "deliver": (1, 10, 1),
    "rrf_k": (0, 200, 5),
}


class FunnelExplorer:
    """The funnel of one query with sliders for its widths, RRF k and the rerank mode.

    Args:
        funnel: the :class:`~ragkit.search.funnel.Funnel` to run.
        query: the search query.
        scope: the caller (:class:`~ragkit.core.scope.Scope`); default: operator scope.
        filters: narrowing filters (:class:`~ragkit.core.scope.Filters`).
        top: how many candidates (in final order) the table and plot show.
        candidates, deliver, rrf_k, rerank_mode: starting values (default: the funnel's
            settings).

    Attributes:
        result: the last :class:`~ragkit.search.funnel.SearchResult`.
        frame: the last table: one row per shown candidate, one rank column per stage.
        runs: how many searches the explorer has run.
        controls: the slider and toggle widgets by name.
        summary, table, plot: the output widgets (``HTML``, ``HTML``, ``Image``).
    """

    def __init__(self, funnel: Any, query: str, *, scope: Any = None, filters: Any = None, top: int = 10,
                 candidates: int | None = None, deliver: int | None = None, rrf_k: int | None = None,
                 rerank_mode: str | None = None) -> None:
        import ipywidgets as w

        if not query or not query.strip():
            raise ValidationError("the explorer needs a non-empty query", field="query")
        if top < 1:
            raise ValidationError(f"top={top}; show at least one candidate", field="top")
        self.funnel = funnel
        self.query = query
        self.scope = scope
        self.filters = filters
        self.top = top
        self.runs = 0
        self.result: Any = None
        self.frame: Any = None
        s = funnel.settings
        start = {"candidates": candidates if candidates is not None else s.candidates,
                 "deliver": deliver if deliver is not None else s.deliver,
                 "rrf_k": rrf_k if rrf_k is not None else int(s.rrf_k)}
        self.controls: dict[str, Any] = {}
        for name, (low, high, step) in CONTROLS.items():
            value = int(start[name])
            if not low <= value <= high:
                raise ValidationError(f"{name}={value} is outside the slider's range {low}..{high}",
                                      field=name)
            self.controls[name] = w.IntSlider(value=value, min=low, max=high, step=step,
                                              description=name, continuous_update=False,
                                              style={"description_width": "initial"})
        mode = rerank_mode or s.rerank_mode
        if mode not in RERANK_MODES:
            raise ValidationError(f"rerank_mode={mode!r}; use one of {RERANK_MODES}", field="rerank_mode")
        self.controls["rerank_mode"] = w.ToggleButtons(options=list(RERANK_MODES), value=mode,
                                                       description="rerank_mode")
        self.summary = w.HTML()
        self.table = w.HTML()
        self.plot = w.Image(format="png")
        self._holding = False
        for control in self.controls.values():
            control.observe(self._changed, names="value")
        self.widget = w.VBox([w.HTML(f"<b>Query:</b> {html.escape(query)}"),
                              w.HBox([self.controls["candidates"], self.controls["deliver"],
                                      self.controls["rrf_k"]]),
                              self.controls["rerank_mode"], self.summary,
                              w.HBox([self.table, self.plot])])
        self.refresh()

    # -- state ----------------------------------------------------------------------------
    @property
    def settings(self) -> dict[str, Any]:
        """The current control values, as funnel overrides."""
        return {name: control.value for name, control in self.controls.items()}

    def update(self, **changes: Any) -> Any:
        """Set controls programmatically (as if moved by hand), re-run once, return the result.

        Example: ``explorer.update(candidates=20, rerank_mode="rerank")``.
        """
        unknown = set(changes) - set(self.controls)
        if unknown:
            raise ValidationError(f"unknown control(s) {sorted(unknown)}; use {sorted(self.controls)}",
                                  field="changes")
        self._holding = True
        try:
            for name, value in changes.items():
                control = self.controls[name]
                if name == "rerank_mode":
                    if value not in RERANK_MODES:
                        raise ValidationError(f"rerank_mode={value!r}; use one of {RERANK_MODES}",
                                              field=name)
                elif not control.min <= value <= control.max:
                    raise ValidationError(f"{name}={value} is outside {control.min}..{control.max}",
                                          field=name)
                control.value = value
        finally:
            self._holding = False
        return self.refresh()

    def _changed(self, _change: Any) -> None:
        if not self._holding:
            self.refresh()

    def refresh(self) -> Any:
        """Run the search with the current controls and redraw the table, plot and summary."""
        settings = self.settings
        result = self.funnel.search(self.query, scope=self.scope, filters=self.filters, **settings)
        self.runs += 1
        self.result = result
        self.frame = self._table(result)
        self.table.value = self._table_html(self.frame)
        self.plot.value = self._png(result)
        t = result.trace
        self.summary.value = (
            f"<code>{html.escape(_settings_text(settings))}</code> &mdash; {len(t.candidates)} candidates, "
            f"{len(result.hits)} delivered ({t.tokens.get('delivered', 0)} tokens), "
            f"rerank {t.timings_ms.get('rerank', 0.0):.0f} ms, total {t.timings_ms.get('total', 0.0):.0f} ms"
            f"<br>delivered: {html.escape(', '.join(h.citation for h in result.hits))}")
        return result

    # -- rendering ------------------------------------------------------------------------
    def _table(self, result: Any) -> Any:
        frame = result.to_frame()
        if frame.empty:
            return frame
        cols = ["chunk_id", *STAGES, "delivered"]
        out = frame[cols].head(self.top).rename(columns=dict(STAGES))
        return out.reset_index(drop=True)

    @staticmethod
    def _table_html(frame: Any) -> str:
        if frame.empty:
            return "<i>no candidates in scope</i>"
        shown = frame.astype(object).where(frame.notna(), "–")  # "not in this stage's list"
        return shown.to_html(index=False, classes="ragkit-funnel", border=0)

    def _png(self, result: Any) -> bytes:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6.5, 3.6), dpi=80)
        ax = fig.add_subplot()
        plot_funnel(result, top=self.top, ax=ax)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        return buf.getvalue()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def __repr__(self) -> str:
        return f"FunnelExplorer(query={self.query!r}, {_settings_text(self.settings)}, runs={self.runs})"


def _settings_text(settings: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in settings.items())
