"""How an index is built and what an update changed: :class:`IndexSettings`, :class:`SyncReport`.

The settings are recorded in every generation manifest and checked on load, so an index is
always searched with the chunker, BM25 analysis and embedder it was built with.
:data:`FORMAT_VERSION` is the on-disk format this ragkit writes; :data:`READABLE_FORMATS` the
ones it reads.

Example:
    >>> IndexSettings.from_json(IndexSettings().to_json()) == IndexSettings()
    True
    >>> str(SyncReport(added=["a"], unchanged=2, encoded_rows=3))
    'added 1, updated 0, deleted 0, unchanged 2 documents; encoded 3 chunks'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ragkit.documents.chunking import ChunkerSettings

__all__ = ["IndexSettings", "SyncReport", "FORMAT_VERSION", "READABLE_FORMATS"]

#: Format 3 (2026-12-01): per-row data is columnar (Parquet for documents and chunks, one ``.npy``
#: per postings array, memory-mapped) and an HNSW graph is saved with its segment; format 2 (JSON
#: lines, ``postings.npz``) is still read, and rewritten by :meth:`Index.upgrade` or the next save.
FORMAT_VERSION = 3
#: Generation formats :meth:`Index.load` reads.
READABLE_FORMATS = (2, 3)


@dataclass(frozen=True)
class IndexSettings:
    """How an index is built; recorded in the manifest and checked on load.

    Attributes:
        chunker: chunking method, budget, overlap and preamble mode.
        dense_kind: ``"auto"`` (the default): HNSW for a segment of
            :data:`ragkit.retrieval.dense.HNSW_MIN_ROWS`
            rows or more (exact search would exceed 5 ms per query there, and HNSW keeps recall@10
            >= 0.97 against exact up to 1M rows; ``bench/results/scale.md``), exact below; or force
            ``"flat"`` (exact) or ``"hnsw"``. The HNSW graph is saved with its segment.
        bm25_stemmer / bm25_stopwords: BM25 analysis (``None`` disables).
        embedder: model name (``None``: ``RAGKIT_EMBEDDER`` or the bundled default,
            :data:`ragkit.models.bundled.DEFAULT_EMBEDDER`).
    """

    chunker: ChunkerSettings = field(default_factory=ChunkerSettings)
    dense_kind: str = "auto"
    bm25_stemmer: str | None = "english"
    bm25_stopwords: str | None = "en"
    embedder: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The settings as JSON-ready data (the manifest's ``settings``)."""
        return {**asdict(self), "chunker": asdict(self.chunker)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IndexSettings:
        """The settings :meth:`to_json` wrote."""
        return cls(**{**data, "chunker": ChunkerSettings(**data["chunker"])})


@dataclass
class SyncReport:
    """What :meth:`Index.sync` changed (doc ids), and how many chunks were encoded."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    encoded_rows: int = 0

    relocated: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Anything to commit: content changes, or unchanged documents whose source file moved."""
        return bool(self.added or self.updated or self.deleted or self.relocated)

    def __str__(self) -> str:
        moved = f" ({len(self.relocated)} moved to a new path)" if self.relocated else ""
        return (f"added {len(self.added)}, updated {len(self.updated)}, deleted {len(self.deleted)}, "
                f"unchanged {self.unchanged} documents{moved}; encoded {self.encoded_rows} chunks")
