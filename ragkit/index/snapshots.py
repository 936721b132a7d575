"""Snapshots: one immutable version of an index, the unit every read speaks of.

Every update builds a new :class:`Snapshot` from the segments and the map of which segment
holds each live document (``doc_home``), and swaps it in with one assignment. A reader that
takes ``index.snapshot()`` once (the funnel, a tool call) sees one version throughout, old
or new, never a mix. Row numbers ``0..len(rows)-1`` are the live chunks of all segments in
order; dead rows keep their *slots* in the segments' BM25 postings and vectors, so BM25
statistics are taken over live rows only and scores equal a rebuild's
(:class:`~ragkit.retrieval.segmented.SegmentedBM25`).

Example:
    >>> snap = index.snapshot()                                   # doctest: +SKIP
    >>> snap.search_lexical("EUR cutoff", 3, snap.mask(Scope("acme", ["ops"]))).ids
    ... # doctest: +SKIP
    [412, 17, 3050]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope, scope_mask
from ragkit.index.embedder import encode_query
from ragkit.index.segments import Segment
from ragkit.index.settings import IndexSettings
from ragkit.retrieval.fusion import Ranking
from ragkit.retrieval.segmented import SegmentedBM25

__all__ = ["Snapshot"]


class Snapshot:
    """One immutable version of an index: every read a caller makes inside one search uses it.

    Rows are the live chunks of all segments in order; ``mask``, ``search_lexical``,
    ``search_dense``, ``envelope`` and ``parent`` all speak of these row numbers.
    """

    def __init__(self, segments: Sequence[Segment], doc_home: dict[str, str], settings: IndexSettings,
                 embedder: Any, generation: int, dim: int, relocated: dict[str, str] | None = None) -> None:
        self.segments = list(segments)
        self.doc_home = dict(doc_home)
        self.settings = settings
        self.generation = generation
        self._embedder = embedder
        self._dim = dim
        self.documents: dict[str, Document] = {}
        self.sections: dict[str, Chunk] = {}
        rows: list[Chunk] = []
        live_parts, doc_parts = [], []
        for seg in self.segments:  # vectorised per segment: an update costs O(documents), not O(rows)
            alive = np.fromiter((doc_home.get(d) == seg.name for d in seg.doc_ids), dtype=bool,
                                count=len(seg.doc_ids))
            base = len(self.documents)
            for d, ok in zip(seg.documents, alive, strict=True):
                if ok:
                    if relocated and d.doc_id in relocated:  # same content, source file moved
                        d = Document(replace(d.envelope, source_path=relocated[d.doc_id]), d.text)
                    self.documents[d.doc_id] = d
            position = np.full(len(seg.doc_ids), -1, dtype=np.int64)
            position[alive] = np.arange(base, base + int(alive.sum()))
            live = alive[seg.row_local_doc] if len(seg.rows) else np.zeros(0, dtype=bool)
            if alive.all():
                rows.extend(seg.rows)
                self.sections.update(seg.section_map)
            else:
                rows.extend(itertools.compress(seg.rows, live))
                dead = {d for d, ok in zip(seg.doc_ids, alive, strict=True) if not ok}
                self.sections.update((k, c) for k, c in seg.section_map.items() if c.doc_id not in dead)
            live_parts.append(live)
            doc_parts.append(position[seg.row_local_doc][live] if len(seg.rows) else np.zeros(0, np.int64))
        self.rows = rows
        self.live = np.concatenate(live_parts) if live_parts else np.zeros(0, dtype=bool)
        self.row_slot = np.flatnonzero(self.live)
        self.slot_row = np.full(len(self.live), -1, dtype=np.int64)
        self.slot_row[self.row_slot] = np.arange(len(self.row_slot))
        self._doc_order = list(self.documents)
        self._envelopes = [self.documents[d].envelope for d in self._doc_order]
        self.row_doc = np.concatenate(doc_parts).astype(np.int64) if doc_parts else np.zeros(0, np.int64)
        self.lexical = SegmentedBM25([s.postings for s in self.segments], self.live,
                                     stemmer=settings.bm25_stemmer, stopwords=settings.bm25_stopwords)

    def snapshot(self) -> Snapshot:
        """Itself (a snapshot is already immutable)."""
        return self

    @cached_property
    def row_of(self) -> dict[str, int]:
        """``chunk_id -> row``."""
        return {c.chunk_id: i for i, c in enumerate(self.rows)}

    @cached_property
    def vectors(self) -> np.ndarray:
        """Embeddings of the live rows, in row order."""
        if not self.segments:
            return np.zeros((0, self._dim), np.float32)
        if len(self.segments) == 1 and len(self.row_slot) == len(self.live):
            return np.asarray(self.segments[0].vectors)  # no copy (read-only when memory-mapped)
        return np.vstack([s.vectors for s in self.segments])[self.row_slot]

    @property
    def dead_rows(self) -> int:
        """Rows of the segments that belong to replaced or deleted documents."""
        return int(len(self.live) - len(self.rows))

    def stats(self) -> dict[str, Any]:
        """Counts, for display."""
        return {"documents": len(self.documents), "sections": len(self.sections), "rows": len(self.rows),
                "segments": len(self.segments), "dead_rows": self.dead_rows, "generation": self.generation,
                "chunker": self.settings.chunker.method}

    def mask(self, scope: Scope, filters: Filters | None = None) -> np.ndarray:
        """Rows the caller may see under ``filters`` (computed from envelopes, before ranking)."""
        return scope_mask(self._envelopes, self.row_doc, scope, filters)

    def envelope(self, row: int) -> Envelope:
        """The envelope of the document of ``row``."""
        return self._envelopes[int(self.row_doc[row])]

    def _slot_mask(self, mask: np.ndarray | None) -> np.ndarray:
        if mask is None:
            return self.live.copy()
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != (len(self.rows),):
            raise ValidationError(f"mask must be a bool array of shape ({len(self.rows)},), one entry per "
                                  f"row of this snapshot; got {mask.dtype} {mask.shape}", field="mask")
        out = np.zeros(len(self.live), dtype=bool)
        out[self.row_slot] = mask
        return out

    def _rows(self, slots: Ranking) -> Ranking:
        return Ranking([int(self.slot_row[s]) for s in slots.ids], list(slots.scores))

    def search_lexical(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        """BM25: the ``k`` best rows for ``query`` among ``mask`` (``None``: every row)."""
        if not self.rows:
            return Ranking([], [])
        if mask is None:  # dead slots never score: no slot mask to build and apply
            return self._rows(self.lexical.search(query, k))
        return self._rows(self.lexical.search(query, k, self._slot_mask(mask)))

    def search_dense(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        """Embeddings: the ``k`` nearest rows to ``query`` among ``mask``, searched segment by segment."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValidationError(f"k={k!r}: ask for at least one result (k >= 1)", field="k")
        slots = self._slot_mask(mask)
        if not slots.any() or not query.strip():
            return Ranking([], [])
        q = encode_query(self._embedder, query)
        found: list[tuple[float, int]] = []
        offset = 0
        for seg in self.segments:
            part = slots[offset:offset + len(seg)]
            if part.any():
                r = seg.dense(self.settings.dense_kind).search(query, int(k), part, query_vector=q)
                found += [(s, offset + i) for i, s in zip(r.ids, r.scores, strict=True)]
            offset += len(seg)
        found.sort(key=lambda x: (-x[0], x[1]))
        top = found[: int(k)]
        return Ranking([int(self.slot_row[s]) for _, s in top], [float(x) for x, _ in top])

    def parent(self, row: int) -> Chunk | None:
        """The parent section of a row (``None`` when its chunker has no sections)."""
        pid = self.rows[row].parent_id
        return self.sections.get(pid) if pid else None
