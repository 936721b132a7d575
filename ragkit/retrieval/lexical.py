"""Lexical retrieval: BM25 over identifier-preserving tokens.

Dense retrieval misses exact strings with no semantic neighbourhood: error codes
(``E-4471``), account ids (``acme-9``), function names (``reconcile_settlement``).
:func:`tokenize` therefore keeps each identifier whole, lower-cased, *and* emits
its parts, while plain words are stopworded and stemmed as configured.

:class:`BM25Retriever` scores with bm25s (fast, sparse) by default; rank-bm25 is
kept as the reference engine. Both see the same tokens and the same BM25 variant
(Lucene: ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` and
``tf / (tf + k1 * (1 - b + b * dl / avgdl))``), so they rank the same documents;
``tests/test_lexical.py`` checks this on real text.

The caller's scope arrives as a boolean ``mask`` over corpus rows and is applied
while scoring, before top-k selection: a row outside the mask is never returned,
at any ``k``.

:class:`SegmentedBM25` (the index's scorer) can also expand a query by pseudo-relevance
feedback (:class:`Feedback`, RM3): the terms of the best first-pass rows *inside the
mask* are added to the query with a weight, and the expanded query is scored again.

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

import itertools
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.retrieval.fusion import Param, Ranking

__all__ = ["BM25_PARAMS", "ENGINES", "BM25Retriever", "Feedback", "Postings", "SegmentedBM25", "tokenize"]

#: BM25's tunable parameters (Lucene/Elasticsearch defaults are k1=1.2, b=0.75).
BM25_PARAMS: Mapping[str, Param] = {
    "k1": Param("k1", 1.5, 0.0, None, "term-frequency saturation; 0 ignores repeats"),
    "b": Param("b", 0.75, 0.0, 1.0, "document-length normalisation; 0 turns it off"),
}

#: Scoring engines: bm25s (default, sparse matrix) and rank_bm25 (reference).
ENGINES = ("bm25s", "rank_bm25")

# A word, or words joined by - _ . / : with no space (E-4471, acme-9, 2026-01-15, a.b/c).
_TOKEN_RE = re.compile(r"\w+(?:[-./:]\w+)*")
_SEPARATOR_RE = re.compile(r"[-_./:]+")


def tokenize(
    text: str,
    *,
    stemmer: str | None = "english",
    stopwords: str | Iterable[str] | None = "en",
) -> list[str]:
    """Split text into BM25 tokens, keeping identifiers findable by exact query.

    A run of word characters joined by ``- _ . / :`` (no spaces) is an
    identifier: it is emitted whole, lower-cased and unstemmed, followed by its
    parts treated as plain words. Plain words are lower-cased, dropped if they
    are stopwords, then stemmed.

    Args:
        text: the text to split.
        stemmer: a PyStemmer language (``"english"``) or ``None`` for no stemming.
        stopwords: ``"en"`` (the 33 Lucene English stopwords), your own word list,
            or ``None`` to keep every word.

    Returns:
        Tokens in text order (a bag of words for BM25).

    Example:
        >>> tokenize("The acme-9 job failed at reconcile_settlement")
        ['acme-9', 'acm', '9', 'job', 'fail', 'reconcile_settlement', 'reconcil', 'settlement']
        >>> tokenize("E-4471 on 2026-01-15", stemmer=None, stopwords=None)
        ['e-4471', 'e', '4471', 'on', '2026-01-15', '2026', '01', '15']
    """
    return _tokens(text, _stemmer(stemmer), _stopword_set(stopwords))


def _tokens(text: str, stem: Callable[[str], str] | None, stop: frozenset[str]) -> list[str]:
    if not isinstance(text, str):
        raise ValidationError(
            f"tokenize: got {type(text).__name__} {text!r:.60}; expected a str", field="text"
        )
    tokens: list[str] = []

    def add_word(word: str) -> None:
        if word not in stop:
            tokens.append(stem(word) if stem else word)

    for match in _TOKEN_RE.findall(text.lower()):
        if _SEPARATOR_RE.search(match):
            tokens.append(match)
            for part in _SEPARATOR_RE.split(match):
                if part:
                    add_word(part)
        else:
            add_word(match)
    return tokens


class BM25Retriever:
    """BM25 over a list of texts, searched by query with an optional scope mask.

    Args:
        texts: the corpus; row ``i`` of every :class:`~ragkit.retrieval.fusion.Ranking` is ``texts[i]``.
        engine: ``"bm25s"`` (default, fast) or ``"rank_bm25"`` (reference implementation).
        stemmer: PyStemmer language, or ``None``; see :func:`tokenize`.
        stopwords: ``"en"``, a word list, or ``None``; see :func:`tokenize`.
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
        self._stem = _stemmer(stemmer)
        self._stop = _stopword_set(self.stopwords)
        texts = _check_texts(texts)
        self._n_rows = len(texts)
        corpus_tokens = [self.tokenize(t) for t in texts]
        self._vocabulary = {token for tokens in corpus_tokens for token in tokens}
        self._scorer: _Bm25sScorer | _RankBm25Scorer | None
        if not self._vocabulary:
            self._scorer = None  # nothing indexable: every search is empty
        elif engine == "bm25s":
            self._scorer = _Bm25sScorer(corpus_tokens, self.k1, self.b)
        else:
            self._scorer = _RankBm25Scorer(corpus_tokens, self.k1, self.b)

    def __len__(self) -> int:
        return self._n_rows

    def __repr__(self) -> str:
        return (
            f"BM25Retriever(rows={self._n_rows}, engine={self.engine!r}, stemmer={self.stemmer!r}, "
            f"stopwords={self.stopwords!r:.40}, k1={self.k1}, b={self.b})"
        )

    def tokenize(self, text: str) -> list[str]:
        """Tokens for ``text`` with this retriever's stemmer and stopwords."""
        return _tokens(text, self._stem, self._stop)

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
            query: free text; identifiers are matched exactly (see :func:`tokenize`).
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
        row_scores = scores[rows]
        if len(rows) > k:  # keep every row tied with the k-th, then order exactly
            kth = np.partition(row_scores, len(rows) - k)[len(rows) - k]
            keep = row_scores >= kth
            rows, row_scores = rows[keep], row_scores[keep]
        order = np.lexsort((rows, -row_scores))[:k]
        return Ranking(rows[order].tolist(), row_scores[order].tolist())

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


# ---------------------------------------------------------------- feedback


@dataclass(frozen=True)
class Feedback:
    """RM3 pseudo-relevance feedback for :class:`SegmentedBM25` (``retriever.feedback = Feedback()``).

    After a first BM25 pass, the ``docs`` best rows (inside the caller's mask; never any other
    row) give a relevance model: ``p(t|R) = sum_d w_d * tf(t, d) / len(d)`` with ``w_d`` the
    row's first-pass score divided by the sum of the ``docs`` scores. Its ``terms`` most likely
    terms (ties: alphabetical; tokens of one character are skipped), renormalised to sum 1, are
    mixed with the query's own term distribution ``q(t) = count / len(query tokens)`` as
    ``orig_weight * q(t) + (1 - orig_weight) * p(t|R)``, scaled by ``len(query tokens)`` (so
    with ``orig_weight=1`` the query is scored exactly as without feedback), and the weighted
    query is scored in a second BM25 pass (a term's BM25 contribution times its weight).

    Reference: Lavrenko and Croft, "Relevance-Based Language Models", SIGIR 2001; RM3 as in
    Anserini (Lin et al., "Anserini", 2017), whose defaults are ``docs=10, terms=10,
    orig_weight=0.5``.

    Raises:
        ValidationError: ``docs`` or ``terms`` not an int >= 1, ``orig_weight`` outside [0, 1].

    Example:
        >>> Feedback(docs=5, terms=20, orig_weight=0.7)
        Feedback(docs=5, terms=20, orig_weight=0.7)
    """

    docs: int = 10
    terms: int = 10
    orig_weight: float = 0.5

    def __post_init__(self) -> None:
        for name in ("docs", "terms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValidationError(f"Feedback: {name}={value!r}; expected an int >= 1 (use "
                                      "retriever.feedback = None to turn feedback off)", field=name)
        w = self.orig_weight
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0.0 <= float(w) <= 1.0:
            raise ValidationError(f"Feedback: orig_weight={w!r}; expected a number in [0, 1] (the weight "
                                  "of the original query; 1 keeps it unexpanded)", field="orig_weight")
        object.__setattr__(self, "orig_weight", float(w))


# ---------------------------------------------------------------- segments


class Postings:
    """Term frequencies of one immutable batch of rows (a *segment*), column-major.

    Only raw counts are stored (``tf`` per row and term, row lengths), never scores, so
    the corpus statistics BM25 needs (N, avgdl, df) are computed at query time over the
    rows that are live *now*: adding a segment or deleting rows never leaves a stale
    idf behind, and scores always equal those of a rebuild on the live rows.

    Example:
        >>> p = Postings.from_tokens([["a", "b", "a"], ["b"]])
        >>> p.column("a")
        (array([0], dtype=int32), array([2.], dtype=float32))
        >>> p.lengths.tolist()
        [3.0, 1.0]
    """

    def __init__(self, vocab: Sequence[str], indptr: np.ndarray, indices: np.ndarray,
                 data: np.ndarray, lengths: np.ndarray) -> None:
        self.vocab = list(vocab)
        self.term_id = {t: i for i, t in enumerate(self.vocab)}
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = np.asarray(indices, dtype=np.int32)
        self.data = np.asarray(data, dtype=np.float32)
        self.lengths = np.asarray(lengths, dtype=np.float32)
        if len(self.indptr) != len(self.vocab) + 1 or len(self.indices) != len(self.data):
            raise ValidationError("Postings: inconsistent arrays (indptr must have len(vocab) + 1 "
                                  "entries, indices and data the same length)")

    def __len__(self) -> int:
        return len(self.lengths)

    @classmethod
    def from_tokens(cls, rows: Iterable[Sequence[str]], *, batch: int = 20_000) -> Postings:
        """Count the tokens of each row (row ``i`` of the segment is the ``i``-th of ``rows``).

        ``rows`` may be a generator: rows are consumed and counted ``batch`` at a time with numpy
        (no Python object per posting, no list of every row's tokens), so a million rows of 80
        tokens need a few hundred MB, not gigabytes.
        """
        term_id: dict[str, int] = {}
        intern = term_id.setdefault
        cols: list[np.ndarray] = []
        row_ids: list[np.ndarray] = []
        tfs: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        source = iter(rows)
        start = 0
        while part := list(itertools.islice(source, batch)):
            sizes = np.fromiter((len(t) for t in part), dtype=np.int64, count=len(part))
            lengths.append(sizes.astype(np.float32))
            ids = np.fromiter((intern(t, len(term_id)) for tokens in part for t in tokens), dtype=np.int64,
                              count=int(sizes.sum()))
            local = np.repeat(np.arange(len(part), dtype=np.int64), sizes)
            keys, counts = np.unique((local << 32) | ids, return_counts=True)  # sorted by row, then term
            cols.append((keys & 0xFFFFFFFF).astype(np.int32))
            row_ids.append(((keys >> 32) + start).astype(np.int32))
            tfs.append(counts.astype(np.float32))
            start += len(part)
        cat = np.concatenate
        return cls._from_triples(list(term_id), cat(cols) if cols else np.zeros(0, np.int32),
                                 cat(row_ids) if row_ids else np.zeros(0, np.int32),
                                 cat(tfs) if tfs else np.zeros(0, np.float32),
                                 cat(lengths) if lengths else np.zeros(0, np.float32), rows_sorted=True)

    @classmethod
    def _from_triples(cls, vocab: list[str], cols: np.ndarray, rows: np.ndarray, tfs: np.ndarray,
                      lengths: np.ndarray, *, rows_sorted: bool = False) -> Postings:
        # column-major, rows ascending within a column; a stable sort by column keeps rows in order
        order = np.argsort(cols, kind="stable") if rows_sorted else np.lexsort((rows, cols))
        counts = np.bincount(cols, minlength=len(vocab)) if len(cols) else np.zeros(len(vocab), np.int64)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cls(vocab, indptr, rows[order], tfs[order], lengths)

    def column(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, tf)`` of the rows containing ``term`` (empty arrays if none)."""
        t = self.term_id.get(term)
        if t is None:
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        lo, hi = self.indptr[t], self.indptr[t + 1]
        return self.indices[lo:hi], self.data[lo:hi]

    @staticmethod
    def merge(parts: Sequence[tuple[Postings, np.ndarray]]) -> Postings:
        """One segment from the kept rows of several (``(postings, kept_rows)`` pairs, in order).

        Nothing is re-tokenised: counts are copied and row ids renumbered.
        """
        vocab: dict[str, int] = {}
        cols, rows, tfs, lengths = [], [], [], []
        offset = 0
        for postings, keep in parts:
            keep = np.asarray(keep, dtype=np.int64)
            new_id = np.full(len(postings), -1, dtype=np.int64)
            new_id[keep] = np.arange(len(keep)) + offset
            remap = np.array([vocab.setdefault(t, len(vocab)) for t in postings.vocab], dtype=np.int64)
            col_of = np.repeat(np.arange(len(postings.vocab)), np.diff(postings.indptr))
            moved = new_id[postings.indices]
            ok = moved >= 0
            cols.append(remap[col_of[ok]] if len(remap) else col_of[ok])
            rows.append(moved[ok])
            tfs.append(postings.data[ok])
            lengths.append(postings.lengths[keep])
            offset += len(keep)
        empty_i, empty_f = np.zeros(0, np.int64), np.zeros(0, np.float32)
        return Postings._from_triples(
            list(vocab), np.concatenate(cols) if cols else empty_i,
            (np.concatenate(rows) if rows else empty_i).astype(np.int32),
            np.concatenate(tfs) if tfs else empty_f, np.concatenate(lengths) if lengths else empty_f)

    #: Files of :meth:`save` (format 3: one ``.npy`` per array, memory-mapped by :meth:`load`).
    FILES = ("postings-indptr.npy", "postings-indices.npy", "postings-data.npy", "postings-lengths.npy",
             "vocab.txt")

    def save(self, folder: Path, *, legacy: bool = False) -> list[str]:
        """Write the arrays (one ``.npy`` each) and ``vocab.txt`` into ``folder``; returns the file names.

        ``legacy=True`` writes format 2's single ``postings.npz`` instead.
        """
        if legacy:
            with open(folder / "postings.npz", "wb") as fh:
                np.savez(fh, indptr=self.indptr, indices=self.indices, data=self.data, lengths=self.lengths)
        else:
            arrays: list[np.ndarray] = [self.indptr, self.indices, self.data, self.lengths]
            for name, array in zip(self.FILES[:4], arrays, strict=True):
                np.save(folder / name, array)
        (folder / "vocab.txt").write_text("".join(t + "\n" for t in self.vocab), encoding="utf-8")
        return ["postings.npz", "vocab.txt"] if legacy else list(self.FILES)

    @classmethod
    def load(cls, folder: Path) -> Postings:
        """Read what :meth:`save` wrote (the ``.npy`` arrays memory-mapped, read-only; or format 2's npz)."""
        vocab = (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
        if (folder / "postings.npz").is_file():
            with np.load(folder / "postings.npz") as z:
                return cls(vocab, z["indptr"], z["indices"], z["data"], z["lengths"])
        arrays = [np.load(folder / name, mmap_mode="r") for name in cls.FILES[:4]]
        return cls(vocab, *arrays)


class SegmentedBM25:
    """BM25 (Lucene variant, as :class:`BM25Retriever`) over several segments with live-row masks.

    Row ``i`` of segment ``s`` is *slot* ``offset[s] + i`` of one slot space; a slot is
    searched only where ``live`` is True. N, avgdl and every df are taken over live
    slots at query time, so the scores equal those of a :class:`BM25Retriever` built
    from scratch on the live rows' texts (tested in ``tests/test_lexical.py``): there
    is no statistics drift to reconcile, and merging segments changes no score.

    Example:
        >>> a = Postings.from_tokens([tokenize("acme-9 ledger"), tokenize("old text")])
        >>> b = Postings.from_tokens([tokenize("acme-9 ledger ledger")])
        >>> bm25 = SegmentedBM25([a, b], np.array([True, False, True]))
        >>> bm25.search("ledger", k=5).ids  # slot 1 is deleted
        [2, 0]
    """

    def __init__(self, segments: Sequence[Postings], live: np.ndarray, *,
                 stemmer: str | None = "english", stopwords: str | Iterable[str] | None = "en",
                 k1: float = BM25_PARAMS["k1"].default, b: float = BM25_PARAMS["b"].default,
                 feedback: Feedback | None = None) -> None:
        self.segments = list(segments)
        self.offsets = np.cumsum([0] + [len(s) for s in self.segments])
        self.live = np.asarray(live, dtype=bool)
        if self.live.shape != (int(self.offsets[-1]),):
            raise ValidationError(f"SegmentedBM25: live has shape {self.live.shape}; expected "
                                  f"({int(self.offsets[-1])},), one entry per slot")
        self.k1 = float(BM25_PARAMS["k1"].check(k1, owner="SegmentedBM25"))
        self.b = float(BM25_PARAMS["b"].check(b, owner="SegmentedBM25"))
        self._stem = _stemmer(stemmer)
        self._stop = _stopword_set(stopwords)
        self._live_by_seg = [self.live[lo:hi] for lo, hi in zip(self.offsets[:-1], self.offsets[1:],
                                                                strict=True)]
        self.n_live = int(self.live.sum())
        total = sum(float(s.lengths[m].sum()) for s, m in zip(self.segments, self._live_by_seg, strict=True))
        self.avgdl = total / self.n_live if self.n_live else 0.0
        self._all_live = [bool(m.all()) for m in self._live_by_seg]
        self._norm: list[np.ndarray | None] = [None] * len(self.segments)
        self._cache: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        self._cached = 0
        self._cache_lock = threading.Lock()
        self._forward: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [None] * len(self.segments)
        self.feedback = feedback

    @property
    def feedback(self) -> Feedback | None:
        """Pseudo-relevance feedback applied by :meth:`search` and :meth:`scores` (``None``: off)."""
        return self._feedback

    @feedback.setter
    def feedback(self, value: Feedback | None) -> None:
        if value is not None and not isinstance(value, Feedback):
            raise ValidationError(f"SegmentedBM25: feedback is a {type(value).__name__}; expected a "
                                  "ragkit.retrieval.lexical.Feedback or None", field="feedback")
        self._feedback = value

    #: Postings whose per-term weights one snapshot keeps (16 bytes each: slot and weight, at most
    #: 256 MB); see :meth:`_term`.
    CACHE_POSTINGS = 16_000_000

    def _length_norm(self, s: int) -> np.ndarray:
        """``k1 * (1 - b + b * dl / avgdl)`` per row of segment ``s`` (float32, made on first use)."""
        norm = self._norm[s]
        if norm is None:
            lengths = np.asarray(self.segments[s].lengths, np.float64)
            norm = (self.k1 * (1 - self.b + self.b * lengths / (self.avgdl or 1.0))).astype(np.float32)
            self._norm[s] = norm
        return norm

    def _term(self, term: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(slots, weight)`` pairs of ``term`` over the live slots, idf included.

        N, avgdl and df are fixed for the life of this object (one snapshot), so the weights of a
        term are computed once and kept (up to :data:`CACHE_POSTINGS` postings in all): a frequent
        term then costs one gather-add per query, as in bm25s, which precomputes scores at index time.
        """
        hit = self._cache.get(term)
        if hit is not None:
            return hit
        found = []
        df = 0
        for s, (seg, live) in enumerate(zip(self.segments, self._live_by_seg, strict=True)):
            rows, tf = seg.column(term)
            if not len(rows):
                continue
            if not self._all_live[s]:
                keep = live[rows]
                rows, tf = rows[keep], tf[keep]
            if len(rows):
                df += len(rows)
                found.append((s, rows, tf))
        out = []
        if df:
            idf = math.log(1 + (self.n_live - df + 0.5) / (df + 0.5))
            for s, rows, tf in found:
                tf32 = np.asarray(tf, dtype=np.float32)
                weight = (idf * tf32 / (tf32 + self._length_norm(s)[rows])).astype(np.float32)
                # kept as the types the scatter-add uses (intp, float64): no conversion per query
                slots = np.asarray(rows, dtype=np.intp) + int(self.offsets[s])
                out.append((slots, weight.astype(np.float64)))
        size = sum(len(w) for _, w in out)
        with self._cache_lock:
            if self._cached + size <= self.CACHE_POSTINGS:
                self._cache[term] = out
                self._cached += size
        return out

    def clear_cache(self) -> None:
        """Forget the per-term weights (to measure cold queries)."""
        with self._cache_lock:
            self._cache.clear()
            self._cached = 0

    def _accumulate(self, query: str) -> np.ndarray:
        return self._accumulate_lists(query)[0]

    def _accumulate_lists(self, query: str) -> tuple[np.ndarray, list[np.ndarray]]:
        """Scores of every slot, and the slot arrays of the query's postings (for :meth:`_select`)."""
        if not isinstance(query, str):
            raise ValidationError(f"search: query is a {type(query).__name__}; expected a str",
                                  field="query")
        out = np.zeros(len(self), dtype=np.float64)
        lists: list[np.ndarray] = []
        if not self.n_live:
            return out, lists
        for term, times in Counter(self.tokenize(query)).items():
            for slots, weight in self._term(term):  # a term's slots are distinct
                w = weight if times == 1 else times * weight
                if lists:
                    np.add.at(out, slots, w)  # unbuffered: no gather-add-scatter copies as in out[slots] += w
                else:
                    out[slots] = w  # the first list lands on zeros: 0 + w == w, so assign
                lists.append(slots)
        return out, lists

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def tokenize(self, text: str) -> list[str]:
        return _tokens(text, self._stem, self._stop)

    def df(self, term: str) -> int:
        """Live rows containing ``term`` (an analysed token)."""
        return sum(int(m[s.column(term)[0]].sum()) for s, m in zip(self.segments, self._live_by_seg,
                                                                    strict=True))

    def scores(self, query: str, mask: np.ndarray | None = None) -> np.ndarray:
        """BM25 score of every slot (float64); 0 outside ``mask``, for dead slots and non-matches.

        With :attr:`feedback` set, the scores of the expanded query (see :meth:`expand`).
        """
        out = self._accumulate(query)
        if mask is not None:
            np.multiply(out, mask, out=out)  # in place, and ten times faster than out[~mask] = 0
        if self._feedback is not None:
            out = self._feedback_scores(query, out, mask)
        return out

    def search(self, query: str, k: int, mask: np.ndarray | None = None) -> Ranking:
        """The ``k`` best live slots for ``query`` among those allowed by ``mask`` (ties: lower slot).

        With :attr:`feedback` set, the query is expanded from its best first-pass slots inside
        ``mask`` (see :meth:`expand`) and the expanded query ranks the slots.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValidationError(f"search: k={k!r}; expected an int >= 1", field="k")
        self._check_mask(mask)
        scores, lists = self._accumulate_lists(query)  # dead slots score 0: their postings are never added
        if self._feedback is not None:
            if mask is not None:
                np.multiply(scores, mask, out=scores)
            return self._top(self._feedback_scores(query, scores, mask), k)
        return self._select(scores, k, mask, lists)

    def _select(self, scores: np.ndarray, k: int, mask: np.ndarray | None,
                lists: list[np.ndarray]) -> Ranking:
        """:meth:`_top` of ``scores * mask``, touching the mask and sorting only near the top.

        The ``k``-th best score among any ``k`` or more distinct allowed rows is a lower bound
        of the ``k``-th best allowed score overall. Rows of the query's rarest posting list
        (its first ``16 * k``) score high, so their bound is tight; only rows scoring at least
        the bound are then masked and ranked, instead of masking and partitioning every slot.
        The result equals ``_top(scores * mask, k)`` (tested): every row of the true top ``k``
        scores at least the bound, and ties still go to the lower slot.
        """
        if len(scores) > 64 * k:
            for slots in sorted(lists, key=len):
                if len(slots) < k:
                    continue
                sample = slots[: 16 * k]
                if mask is not None:
                    sample = sample[mask[sample]]
                    if len(sample) < k and len(slots) > 16 * k:
                        sample = slots[mask[slots]]
                if len(sample) < k:
                    continue
                values = scores[sample]
                bound = np.partition(values, len(values) - k)[len(values) - k]  # > 0: matching rows
                rows = np.flatnonzero(scores >= bound)
                if mask is not None:
                    rows = rows[mask[rows]]
                row_scores = scores[rows]
                if len(rows) > k:
                    kth = np.partition(row_scores, len(rows) - k)[len(rows) - k]
                    keep = row_scores >= kth
                    rows, row_scores = rows[keep], row_scores[keep]
                order = np.lexsort((rows, -row_scores))[:k]
                return Ranking(rows[order].tolist(), row_scores[order].tolist())
        if mask is not None:
            np.multiply(scores, mask, out=scores)
        return self._top(scores, k)

    def expand(self, query: str, mask: np.ndarray | None = None,
               feedback: Feedback | None = None) -> dict[str, float]:
        """The weighted query that feedback scores: ``{token: weight}`` (RM3, see :class:`Feedback`).

        Only the best first-pass slots allowed by ``mask`` (and live) are read. ``feedback``
        defaults to :attr:`feedback`; with neither, the query's own token counts.

        Example:
            >>> seg = Postings.from_tokens([tokenize("ledger audit trail"), tokenize("lunch menu")])
            >>> bm25 = SegmentedBM25([seg], np.ones(2, dtype=bool))
            >>> sorted(bm25.expand("ledger", feedback=Feedback(docs=1, terms=3, orig_weight=0.5)).items())
            [('audit', 0.16666666666666666), ('ledger', 0.6666666666666666), ('trail', 0.16666666666666666)]
        """
        if not isinstance(query, str):
            raise ValidationError(f"expand: query is a {type(query).__name__}; expected a str",
                                  field="query")
        self._check_mask(mask)
        fb = self._feedback if feedback is None else feedback
        if fb is None:
            return {t: float(c) for t, c in Counter(self.tokenize(query)).items()}
        first = self._accumulate(query)
        if mask is not None:
            np.multiply(first, mask, out=first)
        return self._expansion(query, first, fb)

    def _expansion(self, query: str, first: np.ndarray, fb: Feedback) -> dict[str, float]:
        counts = Counter(self.tokenize(query))
        n_tokens = sum(counts.values())
        weights = {t: fb.orig_weight * c for t, c in counts.items()}
        top = self._top(first, fb.docs)
        total = sum(top.scores)
        if not top.ids or total <= 0 or fb.orig_weight == 1.0:
            return {t: float(w) for t, w in weights.items()}
        model: dict[str, float] = {}
        seg_of = np.searchsorted(self.offsets, top.ids, side="right") - 1
        for slot, score, s in zip(top.ids, top.scores, seg_of.tolist(), strict=True):
            terms, tfs = self._row_terms(s, slot - int(self.offsets[s]))
            length = float(tfs.sum())
            if not length:
                continue
            vocab = self.segments[s].vocab
            w = score / total / length
            for t, tf in zip(terms.tolist(), tfs.tolist(), strict=True):
                term = vocab[t]
                model[term] = model.get(term, 0.0) + w * tf
        kept = sorted((t for t in model if len(t) > 1), key=lambda t: (-model[t], t))[: fb.terms]
        mass = sum(model[t] for t in kept)
        for t in kept:
            weights[t] = weights.get(t, 0.0) + (1.0 - fb.orig_weight) * n_tokens * model[t] / mass
        return {t: float(w) for t, w in weights.items() if w > 0}

    def _feedback_scores(self, query: str, first: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        assert self._feedback is not None
        weights = self._expansion(query, first, self._feedback)
        out = np.zeros(len(self), dtype=np.float64)
        if not self.n_live:
            return out
        for term, weight in weights.items():
            for slots, term_weight in self._term(term):
                np.add.at(out, slots, weight * term_weight)
        if mask is not None:
            np.multiply(out, mask, out=out)
        return out

    def _row_terms(self, s: int, row: int) -> tuple[np.ndarray, np.ndarray]:
        """Term ids and counts of one row of segment ``s`` (a row-major copy, made on first use)."""
        forward = self._forward[s]
        if forward is None:
            import scipy.sparse as sp

            seg = self.segments[s]
            by_term = sp.csc_matrix((np.asarray(seg.data), np.asarray(seg.indices), np.asarray(seg.indptr)),
                                    shape=(len(seg), len(seg.vocab)))
            by_row = by_term.tocsr()
            forward = (by_row.indptr, by_row.indices, by_row.data)
            with self._cache_lock:
                self._forward[s] = forward
        indptr, indices, data = forward
        lo, hi = indptr[row], indptr[row + 1]
        return indices[lo:hi], data[lo:hi]

    def _check_mask(self, mask: np.ndarray | None) -> None:
        if mask is not None and (not isinstance(mask, np.ndarray) or mask.shape != (len(self),)):
            raise ValidationError(f"search: mask must be a bool array of shape ({len(self)},)",
                                  field="mask")

    @staticmethod
    def _top(scores: np.ndarray, k: int) -> Ranking:
        """The ``k`` best positive entries of ``scores`` (ties: lower slot)."""
        if len(scores) > 64 * k:
            # frequent terms give most slots a score: find the k-th best value in one pass over the
            # scores, then keep the few slots at or above it (all ties, so the lowest slots win)
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            rows = np.flatnonzero(scores >= kth) if kth > 0 else np.flatnonzero(scores > 0)
        else:
            rows = np.flatnonzero(scores > 0)
        row_scores = scores[rows]
        order = np.lexsort((rows, -row_scores))[:k]
        return Ranking(rows[order].tolist(), row_scores[order].tolist())


# ---------------------------------------------------------------- engines


class _Bm25sScorer:
    """bm25s with the Lucene variant; the mask goes in as bm25s' ``weight_mask``."""

    def __init__(self, corpus_tokens: list[list[str]], k1: float, b: float) -> None:
        import bm25s

        self._model = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._model.index(corpus_tokens, show_progress=False)

    def scores(self, tokens: list[str], mask: np.ndarray | None) -> np.ndarray:
        weight_mask = None if mask is None else mask.astype(np.float32)
        raw = self._model.get_scores(tokens, weight_mask=weight_mask)
        return np.asarray(raw, dtype=np.float64)


class _RankBm25Scorer:
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
        if mask is None:
            raw = np.asarray(self._model.get_scores(tokens), dtype=np.float64)
        else:
            raw = np.zeros(self._n_rows, dtype=np.float64)
            rows = np.flatnonzero(mask)
            if len(rows):
                raw[rows] = self._model.get_batch_scores(tokens, rows.tolist())
        return raw / (self._k1 + 1)


# ---------------------------------------------------------------- helpers


def _stemmer(language: str | None) -> Callable[[str], str] | None:
    if language is None:
        return None
    if not isinstance(language, str):
        raise ValidationError(
            f"stemmer={language!r} is a {type(language).__name__}; expected a language name "
            "such as 'english', or None for no stemming",
            field="stemmer",
        )
    return _load_stemmer(language)


@lru_cache(maxsize=8)
def _load_stemmer(language: str) -> Callable[[str], str]:
    import Stemmer

    if language not in Stemmer.algorithms():
        raise ValidationError(
            f"stemmer={language!r} is not a PyStemmer language; use None (no stemming) "
            f"or one of {sorted(Stemmer.algorithms())}",
            field="stemmer",
        )
    return Stemmer.Stemmer(language).stemWord


def _stopword_set(stopwords: str | Iterable[str] | None) -> frozenset[str]:
    if stopwords is None:
        return frozenset()
    if isinstance(stopwords, str):
        if stopwords != "en":
            raise ValidationError(
                f"stopwords={stopwords!r} is unknown; use 'en', a list of words, or None",
                field="stopwords",
            )
        return _english_stopwords()
    return frozenset(w.lower() for w in stopwords)


@lru_cache(maxsize=1)
def _english_stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


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
