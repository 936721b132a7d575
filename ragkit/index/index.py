"""The persisted index: build, update, save and load; reads go to its current snapshot.

An :class:`Index` holds every retrievable chunk (one *row* each), its parent sections, the
documents with their envelopes, a BM25 retriever and a dense retriever over the same rows.
It is built once, saved to a folder, reopened without re-encoding anything, and kept fresh
by :meth:`Index.sync`. Its pieces live one level down: settings and sync reports
(:mod:`ragkit.index.settings`), immutable segments and their merge policy
(:mod:`ragkit.index.segments`), snapshots (:mod:`ragkit.index.snapshots`), the manifest
(:mod:`ragkit.index.manifest`) and the crash-safe folder layout (:mod:`ragkit.index.storage`).

Freshness without rebuilds: an update adds one small segment for the new and changed
documents and marks the old rows of changed and deleted documents dead; nothing else is
re-chunked, re-encoded or re-tokenised. Every update builds a new immutable
:class:`~ragkit.index.snapshots.Snapshot` and swaps it in with one assignment.

Durability: :meth:`Index.save` writes only segments not yet on disk, then a new
generation manifest, then the ``CURRENT`` commit point (see :mod:`ragkit.index.storage`);
a crash at any step leaves the previous or the new version loadable.

Example:
    >>> idx = Index.build(docs)                          # doctest: +SKIP
    >>> idx.save(".ragkit-cache/course")                 # doctest: +SKIP
    >>> Index.load(".ragkit-cache/course").stats()       # doctest: +SKIP
    {'documents': 1620, 'sections': 5230, 'rows': 6011, ...}
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.core.errors import IndexStateError, ValidationError
from ragkit.core.records import Chunk, Document, Envelope
from ragkit.core.scope import Filters, Scope
from ragkit.documents.chunking import chunk_documents
from ragkit.index import storage
from ragkit.index.embedder import LazyEmbedder
from ragkit.index.manifest import new_manifest, now, source_changed_at, updated_manifest
from ragkit.index.profiles import manifest_profile
from ragkit.index.reconcile import DocState, SyncPlan, plan_sync, states_from_manifest
from ragkit.index.segments import Segment, merge_if_needed, merge_segments, recover_hint
from ragkit.index.settings import FORMAT_VERSION, READABLE_FORMATS, IndexSettings, SyncReport
from ragkit.index.snapshots import Snapshot
from ragkit.retrieval.fusion import Ranking

__all__ = ["Index"]


class Index:
    """Rows (retrievable chunks) with envelopes, BM25 and dense retrievers, and parent sections.

    Build with :meth:`build`, persist with :meth:`save`, reopen with :meth:`load`, keep
    fresh with :meth:`sync`. Reads go to the current :class:`Snapshot`; take
    ``index.snapshot()`` once when a read makes several calls.
    """

    def __init__(self, documents: Sequence[Document], chunks: Sequence[Chunk], vectors: np.ndarray,
                 settings: IndexSettings, *, embedder: Any = None, manifest: dict[str, Any] | None = None):
        self.settings = settings
        self.manifest: dict[str, Any] = manifest or {}
        self._embedder = embedder if embedder is not None else LazyEmbedder(
            settings.embedder, self.manifest.get("embedder"))
        self._write_lock = threading.RLock()
        segment = Segment(Segment.new_name(), documents, chunks, vectors, settings=settings)
        self._install([segment], {d.doc_id: segment.name for d in documents},
                      int(self.manifest.get("generation", 0)))

    @property
    def embedder(self) -> Any:
        """The query embedder (loaded on first use; the same model the vectors were built with)."""
        return self._embedder

    # -- state ----------------------------------------------------------------------------

    def _install(self, segments: Sequence[Segment], doc_home: dict[str, str], generation: int,
                 manifest: dict[str, Any] | None = None) -> None:
        manifest = self.manifest if manifest is None else manifest
        dim = int(self.manifest.get("embedder", {}).get("dim") or 0) or \
            (segments[0].vectors.shape[1] if segments and segments[0].vectors.ndim == 2 else 384)
        self._snap = Snapshot(segments, doc_home, self.settings, self._embedder, generation, dim,
                              manifest.get("relocated"))

    profile = property(lambda self: manifest_profile(self.manifest),
                       doc="The corpus profile kept with the index (the bundled one for an older index).")

    def snapshot(self) -> Snapshot:
        """The current immutable version; use it for every read of one search or tool call."""
        return self._snap

    rows = property(lambda self: self._snap.rows, doc="Live chunks, one per row.")
    documents = property(lambda self: self._snap.documents, doc="doc_id -> Document (live).")
    sections = property(lambda self: self._snap.sections, doc="chunk_id -> parent section.")
    row_doc = property(lambda self: self._snap.row_doc, doc="Row -> document position.")
    row_of = property(lambda self: self._snap.row_of, doc="chunk_id -> row.")
    vectors = property(lambda self: self._snap.vectors, doc="Embeddings of live rows.")
    lexical = property(lambda self: self._snap.lexical, doc="The BM25 scorer of the current snapshot.")
    segments = property(lambda self: self._snap.segments, doc="Segments of the current snapshot.")

    def stats(self) -> dict[str, Any]:
        """Counts and model names, for display."""
        return {**self._snap.stats(), "embedder": self.manifest.get("embedder", {}).get("name")}

    def mask(self, scope: Scope, filters: Filters | None = None) -> np.ndarray:
        """The current snapshot's row mask (:meth:`Snapshot.mask`)."""
        return self._snap.mask(scope, filters)

    def envelope(self, row: int) -> Envelope:
        """The current snapshot's envelope of ``row``."""
        return self._snap.envelope(row)

    def search_lexical(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        """BM25 on the current snapshot (:meth:`Snapshot.search_lexical`)."""
        return self._snap.search_lexical(query, k, mask)

    def search_dense(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        """Dense search on the current snapshot (:meth:`Snapshot.search_dense`)."""
        return self._snap.search_dense(query, k, mask)

    def parent(self, row: int) -> Chunk | None:
        """The parent section of ``row`` in the current snapshot."""
        return self._snap.parent(row)

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def _encode(chunks: Sequence[Chunk], embedder: Any, progress: bool) -> np.ndarray:
        rows = [c for c in chunks if c.kind == "chunk"]
        return np.asarray(embedder.encode([c.contextual_text() for c in rows], progress=progress),
                          dtype=np.float32)

    @classmethod
    def build(cls, documents: Iterable[Document], settings: IndexSettings | None = None, *,
              embedder: Any = None, progress: bool = False) -> Index:
        """Chunk and embed ``documents`` into a new in-memory index."""
        settings = settings or IndexSettings()
        docs = list(documents)
        if not docs:
            raise ValidationError("no documents to index; check the folder and the load report")
        chunks = chunk_documents(docs, settings.chunker)
        lazy = embedder or LazyEmbedder(settings.embedder, None)
        vectors = cls._encode(chunks, lazy, progress)
        model = lazy.get() if isinstance(lazy, LazyEmbedder) else lazy
        manifest = new_manifest(settings, model, docs)
        return cls(docs, chunks, vectors, settings, embedder=lazy, manifest=manifest)

    # -- incremental change ---------------------------------------------------------------
    def sync(self, documents: Iterable[Document], *, delete_missing: bool = True,
             progress: bool = False) -> SyncReport:
        """Make the index match ``documents``: add new, re-encode changed, delete missing ones.

        Only new and changed documents are chunked, encoded and tokenised (into one new
        segment); unchanged ones are untouched. The new version becomes visible to readers
        in one step; on any error the index is left as it was.
        """
        with self._write_lock:
            snap = self._snap
            plan = plan_sync(documents, states_from_manifest(snap.documents, self.manifest),
                             delete_missing=delete_missing)
            return self._apply(snap, plan, progress) if plan.report.changed else plan.report

    def doc_states(self) -> dict[str, DocState]:
        """Each document's content hash, source file and times, as the current version records them."""
        return states_from_manifest(self._snap.documents, self.manifest)

    def apply_plan(self, plan: SyncPlan, *, progress: bool = False) -> SyncReport:
        """Apply a :class:`~ragkit.index.reconcile.SyncPlan` made against this index's current states."""
        with self._write_lock:
            return self._apply(self._snap, plan, progress) if plan.report.changed else plan.report

    def _apply(self, snap: Snapshot, plan: SyncPlan, progress: bool) -> SyncReport:
        """Encode ``plan.changed`` into one new segment, retire replaced and deleted rows, swap the snapshot.

        Called with the write lock held."""
        report, changed = plan.report, plan.changed
        segments = list(snap.segments)
        doc_home = dict(snap.doc_home)
        if changed:
            chunks = chunk_documents(changed, self.settings.chunker)
            vectors = self._encode(chunks, self._embedder, progress)
            report.encoded_rows = int(len(vectors))
            segment = Segment(Segment.new_name(), changed, chunks, vectors, settings=self.settings)
            segments.append(segment)
            doc_home.update({d.doc_id: segment.name for d in changed})
        for doc_id in report.deleted:
            doc_home.pop(doc_id, None)
        segments = merge_if_needed(segments, doc_home)
        manifest = updated_manifest(self.manifest, changed, report.deleted, plan.relocated)
        self._install(segments, doc_home, snap.generation, manifest)
        self.manifest = manifest
        return report

    def add(self, documents: Iterable[Document], *, progress: bool = False) -> SyncReport:
        """Add or update documents; existing documents keep their vectors."""
        return self.sync(documents, delete_missing=False, progress=progress)

    def delete(self, doc_ids: Iterable[str]) -> SyncReport:
        """Remove documents, their chunks and vectors; logs a tombstone for each."""
        gone = list(dict.fromkeys(doc_ids))
        with self._write_lock:
            snap = self._snap
            unknown = sorted(set(gone) - set(snap.documents))
            if unknown:
                raise ValidationError(f"cannot delete unknown doc ids {unknown[:5]}")
            report = SyncReport(deleted=gone, unchanged=len(snap.documents) - len(gone))
            return self._apply(snap, SyncPlan(report), False) if gone else report

    def compact(self) -> None:
        """Merge every segment into one, dropping dead rows (nothing is re-encoded)."""
        with self._write_lock:
            snap = self._snap
            if len(snap.segments) > 1 or snap.dead_rows:
                merged = merge_segments(snap.segments, snap.doc_home)  # moves every document to it
                self._install([merged], dict(snap.doc_home), snap.generation)

    # -- persistence ----------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Commit this index to ``path`` as a new generation (crash-safe; see :mod:`ragkit.index.storage`).

        Only segments not already in the folder are written, so saving after a small
        update costs about the size of the update.
        """
        root = Path(path)
        with self._write_lock, storage.writer_lock(root):
            snap = self._snap
            seg_root = root / storage.SEGMENTS
            entries = []
            known = {s["name"]: s for s in self._saved_entries.get(str(root.resolve()), [])}
            for seg in snap.segments:
                entry = known.get(seg.name)
                if entry and entry.get("format") == FORMAT_VERSION and (seg_root / seg.name).is_dir():
                    entries.append(entry)
                    continue
                if (seg_root / seg.name).exists():  # saved in an older format: rewrite under a new name
                    old, seg.name = seg.name, Segment.new_name()
                    snap.doc_home = {d: (seg.name if h == old else h) for d, h in snap.doc_home.items()}
                entries.append(seg.write(seg_root, dense_kind=self.settings.dense_kind))
            names = storage.generation_names(root)
            generation = (storage.generation_number(names[-1]) if names else 0) + 1
            manifest = dict(self.manifest)
            manifest.update({
                "format_version": FORMAT_VERSION, "generation": generation, "committed_at": now(),
                "settings": self.settings.to_json(), "segments": entries, "doc_home": snap.doc_home,
                "counts": {"documents": len(snap.documents), "sections": len(snap.sections),
                           "rows": len(snap.rows), "segments": len(snap.segments),
                           "dead_rows": snap.dead_rows},
                "corpus_fingerprint": hashlib.sha1("".join(sorted(
                    manifest.get("doc_fingerprints", {}).values())).encode()).hexdigest(),
            })
            storage.commit_generation(root, manifest)
            self.manifest = manifest
            self._saved_entries[str(root.resolve())] = entries
            self._snap.generation = generation
            storage.cleanup(root, current_segments=[e["name"] for e in entries])
        return root

    @property
    def _saved_entries(self) -> dict[str, list[dict[str, Any]]]:
        if not hasattr(self, "_saved"):
            self._saved: dict[str, list[dict[str, Any]]] = {}
        return self._saved

    @classmethod
    def load(cls, path: str | Path, *, embedder: Any = None, verify: bool = True,
             generation: int | None = None) -> Index:
        """Open a saved index (the generation ``CURRENT`` names, or ``generation``); nothing is re-encoded.

        Raises:
            IndexStateError: missing folder, a missing or damaged file (named, with how to
                recover), a format from another ragkit version, or (on first query) an
                embedder that differs from the one the index was built with.
        """
        root = Path(path)
        for attempt in range(3):  # a concurrent writer may delete an old generation mid-read
            cur = storage.current_generation(root)
            if cur is None:
                if (root / "manifest.json").is_file():
                    raise IndexStateError(
                        f"{root} has index format 1; this ragkit reads format {FORMAT_VERSION}. Rebuild "
                        f"or upgrade it with `ragkit index DIR --out {root}` (upgrades without "
                        "re-encoding)")
                raise IndexStateError(f"{root} is not a ragkit index (no CURRENT file); build one "
                                      f"with `ragkit index DIR --out {root}`")
            name, sha = cur[0], cur[1] if generation is None else None
            if generation is not None:
                name = f"gen-{generation:06d}.json"
            try:
                return cls._load_generation(root, name, sha, embedder=embedder, verify=verify)
            except IndexStateError:
                if attempt == 2 or generation is not None or storage.current_generation(root) == cur:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @classmethod
    def _load_generation(cls, root: Path, name: str, sha: str | None, *, embedder: Any,
                         verify: bool) -> Index:
        manifest = storage.read_generation(root, name, sha)
        if manifest.get("format_version") not in READABLE_FORMATS:
            raise IndexStateError(f"{root / name} has index format {manifest.get('format_version')}, this "
                                  f"ragkit reads formats {READABLE_FORMATS}; rebuild the index")
        try:
            settings = IndexSettings.from_json(manifest["settings"])
            entries = list(manifest["segments"])
            doc_home = dict(manifest["doc_home"])
        except (KeyError, TypeError) as exc:
            raise IndexStateError(f"{root / name} lacks {exc}; {recover_hint(root)}") from None
        segments = [Segment.read(root / storage.SEGMENTS, e, verify=verify, root=root) for e in entries]
        lazy = embedder or LazyEmbedder(settings.embedder, manifest.get("embedder"))
        index = cls.__new__(cls)
        index.settings = settings
        index.manifest = manifest
        index._embedder = lazy
        index._write_lock = threading.RLock()
        index._install(segments, doc_home, int(manifest.get("generation", 0)))
        index._saved_entries[str(root.resolve())] = entries
        return index

    @classmethod
    def recover(cls, path: str | Path, *, embedder: Any = None) -> Index:
        """Point ``CURRENT`` at the newest generation that loads and verifies, and return it.

        Raises:
            IndexStateError: no generation in the folder is intact (rebuild the index).
        """
        root = Path(path)
        problems = []
        with storage.writer_lock(root):
            for name in reversed(storage.generation_names(root)):
                try:
                    index = cls._load_generation(root, name, None, embedder=embedder, verify=True)
                except IndexStateError as exc:
                    problems.append(str(exc))
                    continue
                data = (root / name).read_bytes()
                storage.write_durable(root / "CURRENT",
                                      f"{name} {hashlib.sha256(data).hexdigest()}\n".encode())
                return index
        raise IndexStateError(f"no intact generation in {root} ({'; '.join(problems[:2]) or 'none found'});"
                              " rebuild the index with `ragkit index DIR --out IDX --rebuild`")

    @classmethod
    def upgrade(cls, path: str | Path, *, embedder: Any = None) -> Index:
        """Convert an index folder of an older format to the current one in place, without re-encoding.

        Format 1 (one flat folder) becomes one segment; a format-2 generation (JSON lines) is read
        and committed again as a new format-3 generation whose segments are rewritten as columns
        (the format-2 generation stays, as the previous one, until the next commit).
        """
        root = Path(path)
        with storage.writer_lock(root):
            if storage.current_generation(root) is not None:  # format 2, or upgraded by another process
                index = cls.load(root, embedder=embedder)
                if index.manifest.get("format_version") != FORMAT_VERSION:
                    index.save(root)  # rewrites every segment not in the current format
                return index
            return cls._upgrade_locked(root, embedder)

    @classmethod
    def _upgrade_locked(cls, root: Path, embedder: Any) -> Index:
        try:
            manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
            settings = IndexSettings.from_json(manifest["settings"])
            docs = [Document(Envelope.from_mapping(r["envelope"]), r["text"]) for r in
                    map(json.loads, (root / "documents.jsonl").read_text(encoding="utf-8").splitlines())]
            by_id = {d.doc_id: d for d in docs}
            chunks = []
            for rec in map(json.loads, (root / "chunks.jsonl").read_text(encoding="utf-8").splitlines()):
                text = by_id[rec["doc_id"]].text[rec["start"]:rec["end"]]
                chunks.append(Chunk(text=text, **{**rec, "section_path": tuple(rec["section_path"])}))
            vectors = np.load(root / "vectors.npy")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IndexStateError(f"{root}: cannot upgrade the format-1 index ({exc}); rebuild it") from None
        manifest.update({"format_version": FORMAT_VERSION, "generation": 0})
        manifest.setdefault("source_changed_at", {d.doc_id: source_changed_at(d) for d in docs})
        lazy = embedder or LazyEmbedder(settings.embedder, manifest.get("embedder"))
        index = cls(docs, chunks, vectors, settings, embedder=lazy, manifest=manifest)
        index.save(root)
        return index
