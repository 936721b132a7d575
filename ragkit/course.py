"""Shortcuts the notebooks and exercises share: the course corpus, its cached index, its cases.

The index of the course corpus is built once and cached in ``.ragkit-cache/`` at the
repository root; every later notebook reopens it in a second or two (only changed
documents are re-encoded). Set ``RAGKIT_CACHE`` to put the cache elsewhere.

Example:
    >>> from ragkit.course import course_index, course_funnel  # doctest: +SKIP
    >>> funnel = course_funnel()                               # doctest: +SKIP
    >>> funnel.search("E-4471").hits[0].citation               # doctest: +SKIP
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["REPO", "course_corpus", "course_cache", "course_index", "course_funnel", "course_documents"]

REPO = Path(__file__).resolve().parent.parent


def course_corpus() -> Path:
    """The bundled course corpus folder, ``datasets/opscorpus/docs``."""
    path = REPO / "datasets" / "opscorpus" / "docs"
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is missing: run `python datasets/generate.py` from the repo root")
    return path


def course_cache() -> Path:
    """Where cached indexes live (``RAGKIT_CACHE`` or ``<repo>/.ragkit-cache``)."""
    return Path(os.environ.get("RAGKIT_CACHE") or REPO / ".ragkit-cache")


@lru_cache(maxsize=2)
def course_documents() -> tuple[Any, Any]:
    """``(documents, load_report)`` of the course corpus (cached per process)."""
    from ragkit.loaders import load_corpus

    docs, report = load_corpus(course_corpus())
    return tuple(docs), report


@lru_cache(maxsize=2)
def course_index(progress: bool = True) -> Any:
    """The course corpus index: built on first use, then reopened from the cache."""
    from ragkit.build import build_or_update

    return build_or_update(course_corpus(), course_cache() / "index-course", progress=progress,
                           log=lambda _m: None)


def course_funnel(**settings: Any) -> Any:
    """A :class:`~ragkit.funnel.Funnel` over :func:`course_index` (settings override defaults)."""
    from ragkit.funnel import Funnel, FunnelSettings

    return Funnel(course_index(), FunnelSettings(**settings))
