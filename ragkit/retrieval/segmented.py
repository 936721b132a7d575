"""BM25 over segments with live-row masks: the index's lexical scorer, with optional RM3 feedback.

Row ``i`` of segment ``s`` is *slot* ``offset[s] + i`` of one slot space. Only raw counts are
stored (:class:`~ragkit.retrieval.postings.Postings`), so N, avgdl and every df are taken over
the live slots at query time: scores equal those of a
:class:`~ragkit.retrieval.lexical.BM25Retriever` built from scratch on the live rows' texts, and
adding a segment or deleting rows never leaves a stale statistic behind.

The caller's scope arrives as a boolean ``mask`` over slots and is applied before top-k
selection. With :attr:`SegmentedBM25.feedback` set (:class:`~ragkit.retrieval.feedback.Feedback`,
RM3), the terms of the best first-pass rows *inside the mask* are added to the query with a
weight, and the expanded query is scored again.

Example:
    >>> from ragkit.retrieval.analysis import tokenize
    >>> a = Postings.from_tokens([tokenize("acme-9 ledger"), tokenize("old text")])
    >>> b = Postings.from_tokens([tokenize("acme-9 ledger ledger")])
    >>> SegmentedBM25([a, b], np.array([True, False, True])).search("ledger", k=5).ids
    [2, 0]
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.retrieval.analysis import analyse, stemmer_for, stopword_set
from ragkit.retrieval.feedback import Feedback, rm3_weights
from ragkit.retrieval.fusion import Ranking
from ragkit.retrieval.lexical import BM25_PARAMS, best_rows
from ragkit.retrieval.postings import Postings

__all__ = ["SegmentedBM25"]


class SegmentedBM25:
    """BM25 (Lucene variant, as :class:`BM25Retriever`) over several segments with live-row masks.

    Row ``i`` of segment ``s`` is *slot* ``offset[s] + i`` of one slot space; a slot is
    searched only where ``live`` is True. N, avgdl and every df are taken over live
    slots at query time, so the scores equal those of a :class:`BM25Retriever` built
    from scratch on the live rows' texts (tested in ``tests/test_lexical.py``): there
    is no statistics drift to reconcile, and merging segments changes no score.

    Example:
        >>> from ragkit.retrieval.analysis import tokenize
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
        self._stem = stemmer_for(stemmer)
        self._stop = stopword_set(stopwords)
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
                                  "ragkit.retrieval.Feedback or None", field="feedback")
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
        """Tokens for ``text`` with this scorer's stemmer and stop words (see :func:`tokenize`)."""
        return analyse(text, self._stem, self._stop)

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
                return best_rows(rows, scores[rows], k)
        if mask is not None:
            np.multiply(scores, mask, out=scores)
        return self._top(scores, k)

    def expand(self, query: str, mask: np.ndarray | None = None,
               feedback: Feedback | None = None) -> dict[str, float]:
        """The weighted query that feedback scores: ``{token: weight}`` (RM3, see :class:`Feedback`).

        Only the best first-pass slots allowed by ``mask`` (and live) are read. ``feedback``
        defaults to :attr:`feedback`; with neither, the query's own token counts.

        Example:
            >>> from ragkit.retrieval.analysis import tokenize
            >>> from ragkit.retrieval.feedback import Feedback
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
        return rm3_weights(self.tokenize(query), self._top(first, fb.docs), self._slot_terms, fb)

    def _slot_terms(self, slot: int) -> tuple[list[str], np.ndarray]:
        """The terms of one slot and their counts (for :func:`~ragkit.retrieval.feedback.rm3_weights`)."""
        s = int(np.searchsorted(self.offsets, slot, side="right") - 1)
        terms, tfs = self._row_terms(s, slot - int(self.offsets[s]))
        vocab = self.segments[s].vocab
        return [vocab[t] for t in terms.tolist()], tfs

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
