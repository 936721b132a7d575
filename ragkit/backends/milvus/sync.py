"""Keeping a Milvus index fresh: :class:`MilvusTarget`, a Milvus collection as a sync target.

:func:`ragkit.index.freshness.sync_folder`, the :class:`~ragkit.index.freshness.Watcher` and
:func:`ragkit.index.staleness.staleness` work on any :class:`~ragkit.index.reconcile.SyncTarget`.
A :class:`MilvusTarget` is one for a Milvus collection: its stored states are the catalog's records
(:mod:`ragkit.backends.milvus.catalog`), and ``apply(plan)`` writes the added and updated documents
(an upsert by document), deletes the deleted ones, records moved sources, flushes and commits a
generation (:func:`~ragkit.backends.milvus.ingest.apply_plan`). What changed is decided by
:func:`ragkit.index.reconcile.plan_sync`, the rule the in-memory sync uses: nothing here re-implements it.

A deleted or revoked document never resurfaces: its chunks, texts, sections and catalog record
are removed (or rewritten with the new ACL groups) before ``apply`` returns, the collections are
``Strong``-consistent, and every reader's next snapshot sees the new version.

Example:
    >>> from ragkit.index import sync_folder                                 # doctest: +SKIP
    >>> target = MilvusTarget(MilvusConfig("http://127.0.0.1:19530", collection="docs"))  # doctest: +SKIP
    >>> print(sync_folder("docs", target=target).report)                     # doctest: +SKIP
    added 1, updated 2, deleted 1, unchanged 57 documents; encoded 9 chunks
"""

from __future__ import annotations

from typing import Any

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.index import MilvusIndex
from ragkit.backends.milvus.ingest import apply_plan, check_count, open_or_create
from ragkit.documents.loaders import Skipped
from ragkit.index.reconcile import DocState, SyncPlan
from ragkit.index.settings import IndexSettings, SyncReport
from ragkit.models.bundled import get_embedder

__all__ = ["MilvusTarget"]


class MilvusTarget:
    """A Milvus collection kept fresh by a folder sync (a :class:`~ragkit.index.reconcile.SyncTarget`).

    Args:
        config: the collection (:class:`~ragkit.backends.milvus.config.MilvusConfig`).
        settings: chunker and embedder of a collection created here (an existing one keeps its own).
        embedder: the embedder (default: the one the collection records, else the settings' one).
        batch_size: documents per embed and write batch.

    Attributes:
        skipped: documents the last :meth:`apply` could not write (Milvus refused them; they keep
            what they had).
    """

    def __init__(self, config: MilvusConfig, *, settings: IndexSettings | None = None, embedder: Any = None,
                 batch_size: int = 64) -> None:
        check_count(batch_size, "batch_size")
        self.config = config
        self.settings = settings or IndexSettings()
        self.embedder = embedder
        self.batch_size = batch_size
        self.index: MilvusIndex | None = None
        self.skipped: list[Skipped] = []

    def open(self) -> MilvusIndex:
        """The index: the existing collection (with its recorded settings), else a new one."""
        if self.index is None:
            client = self.config.client()
            if client.has_collection(self.config.collection):
                self.index = MilvusIndex.open(self.config, embedder=self.embedder)
            else:
                embedder = self.embedder
                if embedder is None:
                    embedder = get_embedder(self.settings.embedder)
                self.index = open_or_create(self.config, self.settings, embedder, False)
        return self.index

    def doc_states(self) -> dict[str, DocState]:
        """The catalog's records: each document's content hash, source file and times."""
        return self.open().doc_states()

    def apply(self, plan: SyncPlan, *, progress: bool = False) -> SyncReport:
        """Write, delete, relocate, flush and commit (:func:`~ragkit.backends.milvus.ingest.apply_plan`)."""
        index = self.open()
        embedder = self.embedder
        if embedder is None and plan.changed:  # loaded only when something is to be embedded
            embedder = index.embedder
        counts = apply_plan(index, plan, embedder, batch_size=self.batch_size, progress=progress)
        self.skipped = counts.skipped
        return plan.report

    @property
    def generation(self) -> int:
        """The collection's last committed generation."""
        return self.open().generation

    def __str__(self) -> str:
        return f"Milvus collection {self.config.collection!r} at {self.config.uri}"
