"""Lexical retrieval: BM25 over identifier-preserving tokens, searched with a scope mask.

:class:`BM25Retriever` indexes a list of texts with the tokens of
:func:`~ragkit.retrieval.analysis.tokenize` (identifiers kept whole and split into their parts,
plain words stopworded and stemmed) and scores with bm25s (fast, sparse) by default; rank-bm25
is kept as the reference engine (:mod:`ragkit.retrieval.engines`). Both see the same tokens and
the same BM25 variant (Lucene: ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` and
``tf / (tf + k1 * (1 - b + b * dl / avgdl))``), so they rank the same documents;
``tests/test_lexical.py`` checks this on real text. The index's own scorer, over segments
with deleted rows and optional RM3 feedback, is :class:`~ragkit.retrieval.segmented.SegmentedBM25`.

The caller's scope arrives as a boolean ``mask`` over corpus rows and is applied
while scoring, before top-k selection: a row outside the mask is never returned,
at any ``k``.

Reference: Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25
and Beyond", 2009; Kamphuis et al., "Which BM25 Do You Mean?", ECIR 2020.

Example:
    >>> bm25 = BM25Retriever(["Error E-4471 during settlement.",
    ...                       "Reconciling settlements for acme-9.",
    ...                       "Lunch menu."])
    >>> bm25.search("e-4471", k=5).ids
    [0]
    >>> bm25.search("settlements", k=5).ids  # stemmed; the shorter row first
    [1, 0]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.core.params import Param
from ragkit.retrieval.analysis import analyse, stemmer_for, stopword_set
from ragkit.retrieval.engines import Bm25sScorer, RankBm25Scorer
from ragkit.retrieval.fusion import Ranking

__all__ = ["BM25_PARAMS", "ENGINES", "BM25Retriever", "best_rows"]

#: BM25's tunable parameters (Lucene/Elasticsearch defaults are k1=1.2, b=0.75).
BM25_PARAMS: Mapping[str, Param] = {
    "k1": Param("k1", 1.5, 0.0, None, "term-frequency saturation; 0 ignores repeats"),
    "b": Param("b", 0.75, 0.0, 1.0, "document-length normalisation; 0 turns it off"),
}

#: Scoring engines: bm25s (default, sparse matrix) and rank_bm25 (reference).
ENGINES = ("bm25s", "rank_bm25")


def best_rows(rows: np.ndarray, row_scores: np.ndarray, k: int) -> Ranking:
    """The ``k`` best of ``rows`` by score, ties to the lower row: the one top-k of both BM25 scorers.

    Rows tied with the ``k``-th score are all kept before the exact sort, so the lowest rows
    win ties at any ``k``.

    Example:
        >>> best_rows(np.array([4, 2, 9]), np.array([1.0, 3.0, 1.0]), 2)
        Ranking(ids=[2, 4], scores=[3.0, 1.0])
    """
    if len(rows) > k:  # keep every row tied with the k-th, then order exactly
        kth = np.partition(row_scores, len(rows) - k)[len(rows) - k]
        keep = row_scores >= kth
        rows, row_scores = rows[keep], row_scores[keep]
    order = np.lexsort((rows, -row_scores))[:k]
    return Ranking(rows[order].tolist(), row_scores[order].tolist())


class BM25Retriever:
    """BM25 over a list of texts, searched by query with an optional scope mask.

    Args:
        texts: the corpus; row ``i`` of every :class:`~ragkit.retrieval.fusion.Ranking` is ``texts[i]``.
        engine: ``"bm25s"`` (default, fast) or ``"rank_bm25"`` (reference implementation).
        stemmer: PyStemmer language, or ``None``; see :func:`~ragkit.retrieval.analysis.tokenize`.
        stopwords: ``"en"``, a word list, or ``None``; see :func:`~ragkit.retrieval.analysis.tokenize`.
        k1: term-frequency saturation (see :data:`BM25_PARAMS`).
        b: length normalisation (see :data:`BM25_PARAMS`).

    Raises:
        ValidationError: empty corpus, a text that is not a str, an unknown engine
            or stemmer, or k1/b out of range.

    Example:
        >>> import numpy as np
        >>> bm25 = BM25Retriever(["acme-9 ledger", "acme-9 ledger ledger", "other"])
        >>> bm25.search("acme-9 ledger", k=10).ids
        [1, 0]
        >>> bm25.search("acme-9 ledger", k=10, mask=np.array([True, False, True])).ids
        [0]
    """

    def __init__(
        self,
        texts: Sequence[str],
        *,
        engine: str = "bm25s",
        stemmer: str | None = "english",
        stopwords: str | Iterable[str] | None = "en",
        k1: float = BM25_PARAMS["k1"].default,
        b: float = BM25_PARAMS["b"].default,
    ) -> None:
        if engine not in ENGINES:
            raise ValidationError(
                f"BM25Retriever: engine={engine!r} is unknown; expected one of {list(ENGINES)}",
                field="engine",
            )
        self.k1 = float(BM25_PARAMS["k1"].check(k1, owner="BM25Retriever"))
        self.b = float(BM25_PARAMS["b"].check(b, owner="BM25Retriever"))
        self.engine = engine
        self.stemmer = stemmer
        self.stopwords = (
            stopwords if stopwords is None or isinstance(stopwords, str) else tuple(stopwords)
        )
        self._stem = stemmer_for(stemmer)
        self._stop = stopword_set(self.stopwords)
        texts = _check_texts(texts)
        self._n_rows = len(texts)
        corpus_tokens = [self.tokenize(t) for t in texts]
        self._vocabulary = {token for tokens in corpus_tokens for token in tokens}
        self._scorer: Bm25sScorer | RankBm25Scorer | None
        if not self._vocabulary:
            self._scorer = None  # nothing indexable: every search is empty
        elif engine == "bm25s":
            self._scorer = Bm25sScorer(corpus_tokens, self.k1, self.b)
        else:
            self._scorer = RankBm25Scorer(corpus_tokens, self.k1, self.b)

    def __len__(self) -> int:
        return self._n_rows

    def __repr__(self) -> str:
        return (
            f"BM25Retriever(rows={self._n_rows}, engine={self.engine!r}, stemmer={self.stemmer!r}, "
            f"stopwords={self.stopwords!r:.40}, k1={self.k1}, b={self.b})"
        )

    def tokenize(self, text: str) -> list[str]:
        """Tokens for ``text`` with this retriever's stemmer and stopwords."""
        return analyse(text, self._stem, self._stop)

    def scores(self, query: str, mask: np.ndarray | None = None) -> np.ndarray:
        """BM25 score of every row (float64); 0 for rows outside ``mask`` or with no query term.

        Example:
            >>> bm25 = BM25Retriever(["a cat", "a dog"], stemmer=None)
            >>> bm25.scores("dog").round(4).tolist()  # ln(1 + 1.5/1.5) * 1/(1 + 1.5)
            [0.0, 0.2773]
        """
        allowed = self._check_mask(mask)
        if not isinstance(query, str):
            raise ValidationError(
                f"search: query is a {type(query).__name__}; expected a str", field="query"
            )
        tokens = [t for t in self.tokenize(query) if t in self._vocabulary]
        if self._scorer is None or not tokens:
            return np.zeros(self._n_rows, dtype=np.float64)
        return self._scorer.scores(tokens, allowed)

    def search(self, query: str, k: int, mask: np.ndarray | None = None) -> Ranking:
        """The ``k`` best rows for ``query`` among those allowed by ``mask``.

        Only rows sharing at least one token with the query are returned, so a
        ``k`` larger than the matching allowed rows returns all of them. Ties
        break by the smaller row id. A query with no known token returns an
        empty Ranking.

        Args:
            query: free text; identifiers are matched exactly
                (see :func:`~ragkit.retrieval.analysis.tokenize`).
            k: how many rows to return, >= 1.
            mask: boolean array with one entry per row; rows with False are never
                scored into the result. ``None`` allows every row.

        Raises:
            ValidationError: ``k < 1`` or a mask of the wrong type or length.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValidationError(
                f"search: k={k!r}; expected an int >= 1 (the number of rows to return)",
                field="k",
            )
        allowed = self._check_mask(mask)
        scores = self.scores(query, allowed)
        hit = scores > 0
        if allowed is not None:
            hit &= allowed
        rows = np.flatnonzero(hit)
        return best_rows(rows, scores[rows], k)

    def _check_mask(self, mask: np.ndarray | None) -> np.ndarray | None:
        if mask is None:
            return None
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            kind = (
                f"a numpy array of dtype {mask.dtype}"
                if isinstance(mask, np.ndarray)
                else f"a {type(mask).__name__}"
            )
            raise ValidationError(
                f"search: mask is {kind}; expected a numpy bool array with one entry per row. "
                "Convert with np.asarray(mask, dtype=bool)",
                field="mask",
            )
        if mask.shape != (self._n_rows,):
            raise ValidationError(
                f"search: mask has shape {mask.shape}; expected ({self._n_rows},), "
                "one entry per indexed row",
                field="mask",
            )
        return mask


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise ValidationError(
            f"BM25Retriever: texts is a {type(texts).__name__}; expected a list of str "
            "(one per corpus row)",
            field="texts",
        )
    if len(texts) == 0:
        raise ValidationError(
            "BM25Retriever: texts is empty; pass at least one text to index", field="texts"
        )
    for row, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValidationError(
                f"BM25Retriever: texts[{row}] is a {type(text).__name__}; expected a str. "
                "Use '' for a row with no text",
                field="texts",
            )
    return list(texts)
