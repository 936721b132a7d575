"""Course shortcuts for notebooks (the bundled corpus and its cached index), plots and widgets."""

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
