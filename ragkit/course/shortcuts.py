"""Shortcuts the notebooks and exercises share: the course corpus, its cached indexes, its cases.

The index of the course corpus is built once and cached in ``.ragkit-cache/`` at the
repository root; every later notebook reopens it in a second or two (only changed
documents are re-encoded). Set ``RAGKIT_CACHE`` to put the cache elsewhere.

Notebook 03 compares chunkers and the contextual preamble; each variant is another index
of the same corpus (:func:`course_index` with ``chunker=`` or ``preamble=``), built on first
use and cached beside the default one.

Example:
    >>> from ragkit.course import course_funnel, course_variant_path  # doctest: +SKIP
    >>> funnel = course_funnel()                                      # doctest: +SKIP
    >>> funnel.search("E-4471").hits[0].citation                      # doctest: +SKIP
    >>> course_variant_path("fixed", "none").name
    'index-course-fixed-none'
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from ragkit.core.errors import IndexStateError
from ragkit.core.records import Document
from ragkit.documents.chunking import ChunkerSettings
from ragkit.documents.loaders import LoadReport, load_corpus
from ragkit.evaluation.cases import EvidenceCase, load_cases
from ragkit.index.build import build_or_update
from ragkit.index.index import Index
from ragkit.index.profiles import with_profile
from ragkit.index.settings import IndexSettings
from ragkit.models.bundled import embedder_identity
from ragkit.search.funnel import Funnel, FunnelSettings
from ragkit.text.profile import BUNDLED_PROFILE_PATH, load_profile

__all__ = ["REPO", "course_corpus", "course_cache", "course_index", "course_funnel", "course_documents",
           "course_cases", "course_variant_path"]

REPO = Path(__file__).resolve().parents[2]


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
def course_documents() -> tuple[tuple[Document, ...], LoadReport]:
    """``(documents, load_report)`` of the course corpus (cached per process)."""
    docs, report = load_corpus(course_corpus())
    return tuple(docs), report


@lru_cache(maxsize=1)
def course_cases() -> tuple[EvidenceCase, ...]:
    """The evidence cases of the course corpus (``datasets/opscorpus/cases.jsonl``, cached per process)."""
    return tuple(load_cases(REPO / "datasets" / "opscorpus" / "cases.jsonl"))


def course_variant_path(chunker: str = "structure", preamble: str = "extractive") -> Path:
    """Cache folder of the course index built with ``chunker`` and ``preamble``.

    The default pair is the shared course index (``index-course``); any other pair gets its
    own folder, ``index-course-<chunker>-<preamble>``.
    """
    if (chunker, preamble) == ("structure", "extractive"):
        return course_cache() / "index-course"
    return course_cache() / f"index-course-{chunker}-{preamble}"


@lru_cache(maxsize=6)
def course_index(progress: bool = True, *, chunker: str = "structure", preamble: str = "extractive") -> Index:
    """The course corpus index: built on first use, then reopened from the cache.

    Args:
        progress: show a progress bar while embedding.
        chunker: ``"structure"`` (the course index), ``"sentence"`` or ``"fixed"``
            (see :mod:`ragkit.documents.chunking`).
        preamble: ``"extractive"`` (the course index) or ``"none"`` (chunks embedded and
            indexed without their situating sentence).

    A variant other than the default costs one embedding pass over the corpus the first
    time (a few minutes on two cores); afterwards it reopens in seconds and re-encodes only
    changed documents. It is rebuilt when the configured embedder is not the one it was built
    with (as the course index is).
    """
    if (chunker, preamble) == ("structure", "extractive"):
        return build_or_update(course_corpus(), course_cache() / "index-course", progress=progress,
                               log=lambda _m: None, profile=BUNDLED_PROFILE_PATH)
    return _variant(chunker, preamble, progress)


def _variant(chunker: str, preamble: str, progress: bool) -> Index:
    settings = IndexSettings(chunker=ChunkerSettings(method=chunker, preamble=preamble))  # validates both
    path = course_variant_path(chunker, preamble)
    docs, _ = course_documents()
    index = None
    if (path / "CURRENT").exists() or (path / "manifest.json").exists():
        try:
            index = Index.load(path)
        except IndexStateError:
            index = None  # another format or damaged: build it again below
    profile = load_profile(BUNDLED_PROFILE_PATH)  # the course corpus's profile, given explicitly
    if index is not None and index.settings == settings and not _embedded_by_other_model(index):
        change = index.sync(docs, progress=progress)
        stale = index.manifest.get("profile") != profile.to_json()
        if change.added or change.updated or change.deleted or stale:
            index.manifest = with_profile(index.manifest, profile, str(BUNDLED_PROFILE_PATH))
            index.save(path)
        return index
    index = Index.build(docs, settings, progress=progress)
    index.manifest = with_profile(index.manifest, profile, str(BUNDLED_PROFILE_PATH))
    index.save(path)
    return index


def _embedded_by_other_model(index: Index) -> bool:
    """Whether ``index`` was embedded with another model than the one configured now."""
    recorded = index.manifest.get("embedder") or {}
    if not recorded.get("name"):
        return False
    return (recorded.get("name"), recorded.get("version")) != embedder_identity(index.settings.embedder)


def course_funnel(**settings: Any) -> Funnel:
    """A :class:`~ragkit.search.funnel.Funnel` over :func:`course_index` (settings override defaults)."""
    return Funnel(course_index(), FunnelSettings(**settings))
