"""Course shortcuts for notebooks (the bundled corpus and its cached index), plots and widgets.

Notebooks and exercises import from here, e.g. ``from ragkit.course import course_index``:

* :mod:`ragkit.course.shortcuts`: :func:`course_index` (built once, cached in ``.ragkit-cache/``),
  :func:`course_funnel`, :func:`course_documents`, :func:`course_cases`, :func:`course_corpus`, ``REPO``;
* :mod:`ragkit.course.viz`: the shared plots (matplotlib and seaborn load on first use);
* :mod:`ragkit.course.widgets`: :class:`FunnelExplorer` (ipywidgets loads on first use).
"""

from ragkit.course.shortcuts import (
    REPO,
    course_cache,
    course_cases,
    course_corpus,
    course_documents,
    course_funnel,
    course_index,
    course_variant_path,
)
from ragkit.course.viz import (
    STAGES,
    plot_funnel,
    plot_latency,
    plot_recall_at_width,
    plot_recall_by_tag,
    stage_ranks,
    timings_frame,
)
from ragkit.course.widgets import CONTROLS, FunnelExplorer

__all__ = [
    "CONTROLS",
    "FunnelExplorer",
    "REPO",
    "STAGES",
    "course_cache",
    "course_cases",
    "course_corpus",
    "course_documents",
    "course_funnel",
    "course_index",
    "course_variant_path",
    "plot_funnel",
    "plot_latency",
    "plot_recall_at_width",
    "plot_recall_by_tag",
    "stage_ranks",
    "timings_frame",
]
