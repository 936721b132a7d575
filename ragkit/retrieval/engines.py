"""The two BM25 scoring engines behind :class:`~ragkit.retrieval.lexical.BM25Retriever`.

Both score the Lucene variant of BM25 (``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` and
``tf / (tf + k1 * (1 - b + b * dl / avgdl))``) over the same tokens, so they rank the same
rows: bm25s (fast, a sparse matrix of precomputed scores) is the default, rank-bm25 the
reference implementation ``tests/test_lexical.py`` compares it with.

Example:
    >>> import numpy as np
    >>> engine = Bm25sScorer([["a", "cat"], ["a", "dog"]], k1=1.5, b=0.75)
    >>> engine.scores(["dog"], None).round(4).tolist()  # ln(1 + 1.5/1.5) * 1/(1 + 1.5)
    [0.0, 0.2773]
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Bm25sScorer", "RankBm25Scorer"]


class Bm25sScorer:
    """bm25s with the Lucene variant; the mask goes in as bm25s' ``weight_mask``."""

    def __init__(self, corpus_tokens: list[list[str]], k1: float, b: float) -> None:
        import bm25s

        self._model = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._model.index(corpus_tokens, show_progress=False)

    def scores(self, tokens: list[str], mask: np.ndarray | None) -> np.ndarray:
        """BM25 score of every row for ``tokens`` (float64); rows outside ``mask`` score 0."""
        weight_mask = None if mask is None else mask.astype(np.float32)
        raw = self._model.get_scores(tokens, weight_mask=weight_mask)
        return np.asarray(raw, dtype=np.float64)


class RankBm25Scorer:
    """rank-bm25's Okapi scorer with the Lucene idf, so it matches bm25s.

    rank-bm25's own BM25Okapi uses ``ln((N - df + 0.5) / (df + 0.5))`` with a floor
    for negative values, and multiplies by ``k1 + 1``; here the idf is Lucene's and
    the constant ``k1 + 1`` is divided out, so scores equal bm25s' (to float32).
    With a mask, only allowed rows are scored (``get_batch_scores``).
    """

    def __init__(self, corpus_tokens: list[list[str]], k1: float, b: float) -> None:
        from rank_bm25 import BM25Okapi

        class _LuceneIdfOkapi(BM25Okapi):
            def _calc_idf(self, nd: dict[str, int]) -> None:
                for word, df in nd.items():
                    self.idf[word] = math.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5))

        self._k1 = k1
        self._n_rows = len(corpus_tokens)
        self._model = _LuceneIdfOkapi(corpus_tokens, k1=k1, b=b)

    def scores(self, tokens: list[str], mask: np.ndarray | None) -> np.ndarray:
        """BM25 score of every row for ``tokens`` (float64); rows outside ``mask`` score 0."""
        if mask is None:
            raw = np.asarray(self._model.get_scores(tokens), dtype=np.float64)
        else:
            raw = np.zeros(self._n_rows, dtype=np.float64)
            rows = np.flatnonzero(mask)
            if len(rows):
                raw[rows] = self._model.get_batch_scores(tokens, rows.tolist())
        return raw / (self._k1 + 1)
