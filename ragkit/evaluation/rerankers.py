"""Reranker proxies the evaluation puts in front of the cross-encoder.

* :class:`SharedScores` shares scores between the runs of one process (placements,
  counterfactual views) while timing every run as with a cold cache;
* :class:`PinnedReranker` makes one passage score highest (the ``insert_rejected``
  counterfactual pins a rejected source at rank 1);
* :func:`takes` asks whether a reranker's method accepts a keyword (a custom reranker may not
  offer ``max_length``): both proxies pass it on only where it is accepted.

Example:
    >>> def score(query, passages, *, batch_size=None): ...
    >>> takes(score, "batch_size"), takes(score, "max_length")
    (True, False)
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ragkit.models import ScoreCache

__all__ = ["PIN_BONUS", "takes", "SharedScores", "PinnedReranker"]

#: What :class:`PinnedReranker` adds to the pinned passage's score.
PIN_BONUS = 1e6


def takes(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` accepts the keyword ``name`` (by name or through ``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


class SharedScores:
    """A reranker proxy whose scores are shared by every run in a process, with honest timings.

    Scores and pair token counts are kept in two unbounded :class:`ragkit.models.ScoreCache`
    maps under the reranker's own key ``(reranker, version, length, query, sha1(passage))``,
    so the pipeline's search is not scored again as the hybrid's first search, nor in the
    counterfactual runs of the same case. The bundled cross-encoder scores every pair alone,
    so a cached score is the score the pair would get again: results do not depend on what
    was cached.

    What a run *measures* must not depend on it either: every entry keeps the milliseconds it
    cost to compute (score and token count), and a hit on an entry another run computed is
    *replayed*: its cost is added to :attr:`replayed_ms`, which
    :func:`ragkit.evaluation.runner.agent_runner` adds back to the step, the trace and the
    task's seconds. A run's timings are therefore those of a run with a cold cache (hits on
    pairs the same run scored earlier stay free).

    Args:
        inner: the reranker (:class:`ragkit.models.Reranker` or one with its interface).
    """

    def __init__(self, inner: Any):
        self.inner = inner
        self.run = 0
        self.replayed_ms = 0.0
        self.hits = 0
        self.misses = 0
        self.scores = ScoreCache(max_entries=sys.maxsize)
        self.units = ScoreCache(max_entries=sys.maxsize)
        # per cache and key: the milliseconds the entry cost and the run that computed it
        self._paid: dict[int, dict[tuple[Any, ...], tuple[float, int]]] = {id(self.scores): {},
                                                                           id(self.units): {}}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def new_run(self) -> None:
        """Start a new run: hits on entries computed before now are replayed."""
        self.run += 1

    def key(self, query: str, passage: str, length: int | None) -> tuple[Any, ...]:
        """The cache key of one pair at ``length`` tokens (the inner reranker's when ``None``)."""
        return (getattr(self.inner, "name", type(self.inner).__name__), getattr(self.inner, "version", ""),
                int(length or getattr(self.inner, "max_length", 0) or 0), query, ScoreCache.digest(passage))

    def _cached(self, cache: ScoreCache, query: str, passages: list[str], length: int | None,
                compute: Callable[[list[str]], Sequence[float]]) -> list[float]:
        """Each pair's value from ``cache``, computing the missing ones with ``compute`` in one call."""
        keys = [self.key(query, p, length) for p in passages]
        paid = self._paid[id(cache)]
        known: list[float | None] = []
        for k in keys:
            value = cache.get(k)
            if value is not None:
                self.hits += 1
                ms, run = paid[k]
                if run != self.run:
                    self.replayed_ms += ms
            known.append(value)
        todo = [i for i, v in enumerate(known) if v is None]
        if todo:
            t = time.perf_counter()
            fresh = compute([passages[i] for i in todo])
            each = (time.perf_counter() - t) * 1000 / len(todo)
            for i, value in zip(todo, fresh, strict=True):
                cache.put(keys[i], value)
                paid[keys[i]] = (each, self.run)
                known[i] = value
        return [v for v in known if v is not None]

    def score(self, query: str, passages: Sequence[str], *, batch_size: int | None = None,
              max_length: int | None = None) -> np.ndarray:
        """The inner reranker's scores, computing only the pairs not seen before."""
        passages = list(passages)
        kwargs: dict[str, Any] = {"batch_size": batch_size}
        if max_length is not None and takes(self.inner.score, "max_length"):
            kwargs["max_length"] = max_length
        before = self.hits

        def compute(todo: list[str]) -> list[float]:
            return [float(v) for v in self.inner.score(query, todo, **kwargs)]

        values = self._cached(self.scores, query, passages, max_length, compute)
        self.misses += len(passages) - (self.hits - before)
        return np.asarray(values, dtype=np.float32)

    def count_pair_tokens(self, query: str, passages: Sequence[str], *,
                          max_length: int | None = None) -> list[int]:
        """The inner reranker's pair token counts, counting only the pairs not seen before."""
        kwargs = {"max_length": max_length} if max_length is not None and \
            takes(self.inner.count_pair_tokens, "max_length") else {}

        def compute(todo: list[str]) -> list[float]:
            return [int(v) for v in self.inner.count_pair_tokens(query, todo, **kwargs)]

        return [int(v) for v in self._cached(self.units, query, list(passages), max_length, compute)]


class PinnedReranker:
    """A reranker proxy that adds :data:`PIN_BONUS` to one passage's score, so it comes first.

    Args:
        inner: the reranker to delegate to.
        passage: the pinned passage's text (as the funnel passes it: the row's contextual text).
    """

    def __init__(self, inner: Any, passage: str):
        self.inner, self.passage = inner, passage

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def score(self, query: str, passages: Sequence[str], *, batch_size: int | None = None,
              max_length: int | None = None) -> np.ndarray:
        """The inner reranker's scores, the pinned passage's raised by :data:`PIN_BONUS`."""
        # explicit keywords: ragkit.retrieval.rerank passes max_length only to a score() that names it
        kwargs: dict[str, Any] = {"batch_size": batch_size}
        if max_length is not None and takes(self.inner.score, "max_length"):
            kwargs["max_length"] = max_length
        scores = np.asarray(self.inner.score(query, passages, **kwargs), dtype=np.float32).copy()
        for i, p in enumerate(passages):
            if p == self.passage:
                scores[i] += PIN_BONUS
        return scores
