"""Dense retrieval: sentence embeddings in a faiss index, searched under a row mask.

The default index is exact inner product over L2-normalised vectors (cosine
similarity, ``faiss.IndexFlatIP``); ``kind="hnsw"`` builds an approximate HNSW
graph for large corpora. The caller's scope arrives as a boolean mask over rows
and is handed to faiss as an ID selector, so rows outside scope are never
scored: they cannot appear in results at any ``k``.

Example:
    >>> from ragkit.models.bundled import get_embedder            # doctest: +SKIP
    >>> dense = DenseRetriever.build(["EUR batches close at 15:00", "Lunch menu"],
    ...                              get_embedder())      # doctest: +SKIP
    >>> dense.search("when is the euro cutoff?", k=1).ids  # doctest: +SKIP
    [0]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.retrieval.fusion import Ranking

__all__ = ["DenseRetriever", "INDEX_KINDS", "HNSW_MIN_ROWS", "HNSW_M", "EF_CONSTRUCTION", "EF_SEARCH",
           "choose_kind"]

INDEX_KINDS = ("flat", "hnsw", "auto")
#: ``kind="auto"`` builds HNSW from this many rows, exact search below it. Measured in
#: ``bench/results/scale.md`` (synthetic 384-d vectors of intrinsic dimension 32, one thread, 2 cores
#: under load): exact search p50 was 0.28 ms at 10k rows, 2.4 ms at 30k and 16 ms at 100k (the
#: matrix no longer fits in cache), so it crosses the 5 ms dense budget at about 40k rows (linear
#: between 30k and 100k); HNSW (M=32, efConstruction=64, efSearch=128) answered in 0.5 ms at 30k
#: and 100k with recall@10 against exact of 0.999 and 0.997 (1M rows: see the results file), at a
#: build cost of about 0.3 ms of CPU per row. Below 40k rows exact search is within budget and
#: loses nothing.
HNSW_MIN_ROWS = 40_000
#: HNSW graph degree, build beam and search beam (see ``bench/results/scale.md``).
HNSW_M = 32
EF_CONSTRUCTION = 64
EF_SEARCH = 128


def choose_kind(kind: str, rows: int) -> str:
    """The index kind to build: ``kind`` itself, or for ``"auto"`` HNSW from :data:`HNSW_MIN_ROWS` rows.

    Example:
        >>> choose_kind("auto", 4875), choose_kind("auto", 1_000_000), choose_kind("flat", 10**6)
        ('flat', 'hnsw', 'flat')
    """
    if kind not in INDEX_KINDS:
        raise ValidationError(f"dense index kind {kind!r} is unknown; use one of {INDEX_KINDS}", field="kind")
    if kind == "auto":
        return "hnsw" if rows >= HNSW_MIN_ROWS else "flat"
    return kind


@lru_cache(maxsize=1)
def _faiss() -> Any:
    """faiss, set to ``RAGKIT_FAISS_THREADS`` OpenMP threads (default 1).

    One query at a time gains nothing from OpenMP's threads, and on a busy machine their
    spin-waits cost dearly: exact search over 10k rows took 225 ms with two threads and
    0.2 ms with one on this 2-core machine under load (``bench/results/scale.md``).
    """
    import faiss  # lazy: a large native library

    faiss.omp_set_num_threads(int(os.environ.get("RAGKIT_FAISS_THREADS", "1") or 1))
    return faiss


class DenseRetriever:
    """A faiss index over row embeddings, with masked search.

    With ``kind="hnsw"`` a selective mask (few allowed rows) is searched exactly, since a
    filtered graph walk can miss allowed rows.

    Args:
        vectors: ``(n, dim)`` float32, L2-normalised rows (as
            :class:`~ragkit.models.embedders.Embedder` makes).
        embedder: used to embed queries (anything with ``encode(list[str]) -> ndarray``).
        kind: ``"flat"`` (exact, default), ``"hnsw"`` (approximate) or ``"auto"`` (HNSW from
            :data:`HNSW_MIN_ROWS` rows, see :func:`choose_kind`).
        hnsw_m: HNSW graph degree.
    """

    def __init__(self, vectors: np.ndarray, embedder: Any, *, kind: str = "flat", hnsw_m: int = HNSW_M,
                 ef_search: int = EF_SEARCH, ef_construction: int = EF_CONSTRUCTION,
                 index: Any = None) -> None:
        if not (isinstance(vectors, np.ndarray) and vectors.dtype == np.float32
                and vectors.flags.c_contiguous):
            vectors = np.ascontiguousarray(vectors, dtype=np.float32)  # a read-only memory map stays as is
        if vectors.ndim != 2:
            raise ValidationError(f"vectors must be 2-D (n, dim), got shape {vectors.shape}")
        kind = choose_kind(kind, len(vectors))
        self.vectors = vectors
        self.embedder = embedder
        self.kind = kind
        self.ef_search = ef_search
        faiss = _faiss()
        dim = vectors.shape[1]
        self._storage: Any = None
        if index is not None:  # a saved index (see :meth:`save_index`): nothing is rebuilt
            if index.ntotal != len(vectors) or index.d != dim:
                raise ValidationError(f"the saved faiss index holds {index.ntotal} rows of dim {index.d}; "
                                      f"expected {len(vectors)} of dim {dim}: rebuild the index")
            if hasattr(index, "hnsw") and index.storage is None:  # a graph saved without its vectors
                self._storage = faiss.IndexFlatIP(dim)  # kept referenced: the graph does not own it
                if len(vectors):
                    self._storage.add(np.ascontiguousarray(vectors))
                index.storage = self._storage
                index.own_fields = False
            self.index = index
            self.kind = "hnsw" if hasattr(index, "hnsw") else "flat"
            return
        if kind == "flat":
            self.index = faiss.IndexFlatIP(dim)
        else:
            self.index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            self.index.hnsw.efConstruction = ef_construction
        if len(vectors):
            self.index.add(vectors)

    def save_index(self, path: str | os.PathLike[str]) -> None:
        """Write the faiss index to ``path``: for HNSW the graph only (the vectors are saved apart,
        once; :meth:`read_index` and ``index=`` put them back), else the whole index."""
        faiss = _faiss()
        if self.kind == "hnsw":
            faiss.write_index(self.index, str(path), faiss.IO_FLAG_SKIP_STORAGE)
        else:
            faiss.write_index(self.index, str(path))

    @staticmethod
    def read_index(path: str | os.PathLike[str]) -> Any:
        """A faiss index written by :meth:`save_index`; pass it as ``index=`` with the same vectors."""
        faiss = _faiss()
        return faiss.read_index(str(path), faiss.IO_FLAG_SKIP_STORAGE)

    @classmethod
    def build(cls, texts: Sequence[str], embedder: Any, *, kind: str = "flat",
              progress: bool = False, batch_size: int = 64) -> DenseRetriever:
        """Embed ``texts`` (batched, optional progress bar) and index them."""
        vectors = embedder.encode(list(texts), batch_size=batch_size, progress=progress)
        return cls(vectors, embedder, kind=kind)

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def __repr__(self) -> str:
        return f"DenseRetriever(rows={len(self)}, dim={self.vectors.shape[1]}, kind={self.kind!r})"

    def add(self, vectors: np.ndarray) -> None:
        """Append rows (already embedded): existing rows are never re-encoded."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(vectors):
            self.index.add(vectors)
            self.vectors = np.vstack([self.vectors, vectors]) if len(self.vectors) else vectors

    def encode_query(self, query: str) -> np.ndarray:
        """The query's vector: the embedder's ``encode_queries`` when it has one (e.g. bge's
        retrieval instruction), else plain ``encode``."""
        model = self.embedder
        inner = getattr(model, "get", None)  # ragkit.index.index's lazy wrapper loads on first use
        target = inner() if callable(inner) else model
        encode = getattr(target, "encode_queries", None) or target.encode
        return np.asarray(encode([query]), dtype=np.float32).reshape(1, -1)

    def search(self, query: str, k: int, mask: np.ndarray | None = None, *,
               query_vector: np.ndarray | None = None) -> Ranking:
        """The ``k`` rows most similar to ``query`` among rows where ``mask`` is True."""
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise ValidationError(f"k={k!r}: ask for at least one result (k >= 1)", field="k")
        n = len(self)
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if mask.shape != (n,):
                raise ValidationError(f"mask has shape {mask.shape}, expected ({n},): one flag per row",
                                      field="mask")
            allowed = int(mask.sum())
        else:
            allowed = n
        if allowed == 0 or not query.strip():
            return Ranking([], [])
        k = min(int(k), allowed)
        q = self.encode_query(query) if query_vector is None else query_vector.reshape(1, -1)
        if self.kind == "hnsw" and mask is not None and allowed < n and allowed <= max(4096, 8 * k):
            # a selective filter starves an HNSW walk; scoring the few allowed rows exactly is
            # both cheaper and complete
            rows = np.flatnonzero(mask)
            sims = self.vectors[rows] @ q[0]
            top = np.argsort(-sims, kind="stable")[:k]
            return Ranking([int(r) for r in rows[top]], [float(x) for x in sims[top]])
        faiss = _faiss()
        if mask is None or allowed == n:
            params = faiss.SearchParametersHNSW(efSearch=max(self.ef_search, k)) \
                if self.kind == "hnsw" else None
        else:
            if allowed > 4096:  # a bitmap costs n/8 bytes per query, a batch a hash set of the allowed ids
                bits = np.packbits(mask, bitorder="little")
                selector = faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits))
            else:
                selector = faiss.IDSelectorBatch(np.flatnonzero(mask).astype(np.int64))
            if self.kind == "hnsw":
                params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(self.ef_search, k))
            else:
                params = faiss.SearchParameters(sel=selector)
        scores, ids = self.index.search(q, k, params=params)
        keep = ids[0] >= 0
        return Ranking([int(i) for i in ids[0][keep]], [float(s) for s in scores[0][keep]])
