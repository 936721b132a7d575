"""One score cache for every pair scorer (cross-encoder, ColBERT): a pair is scored once.

Scores are keyed by the scorer's name and version, the pair length, the query and a hash of
the passage text (:meth:`ScoreCache.key`): a pair is scored once however often an agent repeats
a search, and an updated or deleted chunk can never be served its old score, because new text
means a new key. :func:`cached_scores` is the one lookup-then-score-the-rest loop both
rerankers run.

Example:
    >>> cache = ScoreCache()
    >>> calls = []
    >>> def score(texts):
    ...     calls.append(list(texts))
    ...     return [float(len(t)) for t in texts]
    >>> cached_scores(cache, ("m", "v", 256), "q", ["ab", "abc"], score).tolist()
    [2.0, 3.0]
    >>> cached_scores(cache, ("m", "v", 256), "q", ["abc", "abcd"], score).tolist()
    [3.0, 4.0]
    >>> calls  # "abc" was scored once
    [['ab', 'abc'], ['abcd']]
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["ScoreCache", "cached_scores"]


class ScoreCache:
    """A bounded LRU map ``(scorer, version, length, query, sha1(passage)) -> score``, thread-safe.

    Keying by the passage text's hash (not its chunk id) means an updated chunk gets a new
    key and a deleted one is simply never asked for again: the cache cannot serve old text's
    score. Entries are evicted oldest-first beyond ``max_entries``.

    Example:
        >>> cache = ScoreCache(max_entries=2)
        >>> cache.put(("m", 256, "q", ScoreCache.digest("text")), 1.5)
        >>> cache.get(("m", 256, "q", ScoreCache.digest("text"))), cache.hits, cache.misses
        (1.5, 1, 0)
        >>> cache.get(("m", 256, "q", ScoreCache.digest("other text"))) is None
        True
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[tuple[Any, ...], float] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def digest(text: str) -> str:
        """The sha1 hex digest of ``text`` (UTF-8): the passage part of a key."""
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    @staticmethod
    def key(name: str, version: str, length: int, query: str, passage: str) -> tuple[str, str, int, str, str]:
        """The key of one scored pair: ``(name, version, length, query, digest(passage))``.

        Example:
            >>> ScoreCache.key("m", "v1", 256, "q", "text")[:4]
            ('m', 'v1', 256, 'q')
        """
        return (name, version, length, query, ScoreCache.digest(passage))

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: tuple[Any, ...]) -> float | None:
        """The cached score of ``key`` (counted as a hit), or ``None`` (counted as a miss)."""
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: tuple[Any, ...], value: float) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entries beyond the bound."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry and reset the hit and miss counts."""
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


def cached_scores(cache: ScoreCache | None, scorer: tuple[str, str, int], query: str,
                  passages: Sequence[str], compute: Callable[[list[str]], Iterable[float]]) -> np.ndarray:
    """Scores of ``passages`` for ``query``: cached pairs looked up, the rest computed in one call.

    Args:
        cache: the cache, or ``None`` to compute every pair.
        scorer: ``(name, version, length)`` of the scorer, the first part of each key.
        query: the search query.
        passages: the texts to score.
        compute: scores the uncached passages (in the order given), one float per passage.

    Returns:
        float32 scores in input order; every computed score is stored in ``cache``.
    """
    keys = [ScoreCache.key(*scorer, query, p) for p in passages] if cache is not None else []
    known: list[float | None] = [cache.get(k) for k in keys] if cache is not None else [None] * len(passages)
    todo = [i for i, v in enumerate(known) if v is None]
    if todo:
        fresh = compute([passages[i] for i in todo])
        for i, value in zip(todo, fresh, strict=True):
            known[i] = float(value)
            if cache is not None:
                cache.put(keys[i], float(value))
    return np.asarray(known, dtype=np.float32)
