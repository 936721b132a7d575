"""Postings: the raw term counts of one immutable batch of rows (a segment), column-major.

The index stores only counts (``tf`` per row and term, row lengths), never scores, so the
corpus statistics BM25 needs are computed at query time over the rows live *now*
(:class:`~ragkit.retrieval.segmented.SegmentedBM25`). Segments are built from token lists
in batches, merged without re-tokenising, and saved as memory-mappable ``.npy`` arrays.

Example:
    >>> p = Postings.from_tokens([["ledger", "audit"], ["ledger"]])
    >>> p.column("ledger")[0].tolist(), p.lengths.tolist()
    ([0, 1], [2.0, 1.0])
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ragkit.core.errors import ValidationError

__all__ = ["Postings"]


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
