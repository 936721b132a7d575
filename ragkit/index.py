"""The persisted index: chunks, envelopes, BM25, embeddings and faiss in one folder.

An :class:`Index` holds every retrievable chunk (one *row* each), its parent
sections, the documents with their envelopes, a BM25 retriever and a dense
retriever over the same rows. It is built once, saved to a folder, and reloaded
without re-encoding anything.

Folder layout (``manifest.json`` describes and checksums the rest)::

    manifest.json    ragkit version, models and versions, chunker and BM25 settings,
                     corpus fingerprint, per-document fingerprints, file checksums,
                     deletion log (tombstones)
    documents.jsonl  envelope + full text per document
    chunks.jsonl     parent sections and retrievable chunks
    vectors.npy      one embedding per retrievable chunk (row order)

Saving is atomic: the new index is written to a temporary sibling folder and
renamed into place, so a crash mid-save leaves the previous index readable.
:meth:`Index.sync` brings an index up to date with a folder: new and changed
documents are chunked and encoded, removed ones deleted; unchanged documents are
never re-encoded.

Example:
    >>> idx = Index.build(docs)                          # doctest: +SKIP
    >>> idx.save(".ragkit-cache/course")                 # doctest: +SKIP
    >>> Index.load(".ragkit-cache/course").stats()       # doctest: +SKIP
    {'documents': 1620, 'sections': 5230, 'rows': 6011, ...}
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.chunking import ChunkerSettings, chunk_documents
from ragkit.errors import IndexStateError, ValidationError
from ragkit.fusion import Ranking
from ragkit.records import Chunk, Document, Envelope
from ragkit.scope import Filters, Scope, scope_mask

__all__ = ["Index", "IndexSettings", "SyncReport", "FORMAT_VERSION"]

FORMAT_VERSION = 1
_FILES = ("documents.jsonl", "chunks.jsonl", "vectors.npy")


@dataclass(frozen=True)
class IndexSettings:
    """How an index is built; recorded in the manifest and checked on load.

    Attributes:
        chunker: chunking method, budget, overlap and preamble mode.
        dense_kind: ``"flat"`` (exact) or ``"hnsw"``.
        bm25_stemmer / bm25_stopwords: BM25 analysis (``None`` disables).
        embedder: model name (``None``: ``RAGKIT_EMBEDDER`` or the bundled MiniLM).
    """

    chunker: ChunkerSettings = field(default_factory=ChunkerSettings)
    dense_kind: str = "flat"
    bm25_stemmer: str | None = "english"
    bm25_stopwords: str | None = "en"
    embedder: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "chunker": asdict(self.chunker)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IndexSettings:
        return cls(**{**data, "chunker": ChunkerSettings(**data["chunker"])})


@dataclass
class SyncReport:
    """What :meth:`Index.sync` changed."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    encoded_rows: int = 0

    def __str__(self) -> str:
        return (f"added {len(self.added)}, updated {len(self.updated)}, deleted {len(self.deleted)}, "
                f"unchanged {self.unchanged} documents; encoded {self.encoded_rows} chunks")


def _doc_fingerprint(doc: Document) -> str:
    env = {k: v for k, v in doc.envelope.to_mapping().items() if k not in ("source_path", "ingested_at")}
    payload = json.dumps(env, sort_keys=True, default=str) + "\0" + doc.text
    return hashlib.sha1(payload.encode()).hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _chunk_to_json(c: Chunk) -> dict[str, Any]:
    return {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "version": c.version, "start": c.start,
            "end": c.end, "title": c.title, "section_path": list(c.section_path), "anchor": c.anchor,
            "parent_id": c.parent_id, "preamble": c.preamble, "kind": c.kind}


class _LazyEmbedder:
    """Loads the embedder on first query, and checks it is the one the index was built with."""

    def __init__(self, name: str | None, expected: dict[str, Any] | None) -> None:
        self.name = name
        self.expected = expected
        self._model: Any = None

    def get(self) -> Any:
        if self._model is None:
            from ragkit.models import get_embedder

            model = get_embedder(self.name)
            exp = self.expected
            if exp and (model.name != exp["name"] or model.version != exp["version"]):
                raise IndexStateError(
                    f"this index was built with embedder {exp['name']!r} (version {exp['version']}), "
                    f"but {model.name!r} (version {model.version}) is configured. Rebuild the index "
                    f"(`ragkit index DIR --out IDX --rebuild`) or use the same model "
                    f"(RAGKIT_EMBEDDER={exp['name']})"
                )
            self._model = model
        return self._model

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        return self.get().encode(texts, **kwargs)


class Index:
    """Rows (retrievable chunks) with envelopes, BM25 and dense retrievers, and parent sections.

    Build with :meth:`build`, persist with :meth:`save`, reopen with :meth:`load`.
    """

    def __init__(self, documents: Sequence[Document], chunks: Sequence[Chunk], vectors: np.ndarray,
                 settings: IndexSettings, *, embedder: Any = None, manifest: dict[str, Any] | None = None):
        self.settings = settings
        self.documents: dict[str, Document] = {d.doc_id: d for d in documents}
        self.rows: list[Chunk] = [c for c in chunks if c.kind == "chunk"]
        self.sections: dict[str, Chunk] = {c.chunk_id: c for c in chunks if c.kind == "section"}
        if len(self.rows) != len(vectors):
            raise IndexStateError(f"{len(self.rows)} chunks but {len(vectors)} vectors: the index is "
                                  "inconsistent; rebuild it")
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.manifest: dict[str, Any] = manifest or {}
        self._embedder = embedder if embedder is not None else _LazyEmbedder(
            settings.embedder, self.manifest.get("embedder"))
        self._reindex()

    # -- construction ---------------------------------------------------------------------
    def _reindex(self) -> None:
        from ragkit.dense import DenseRetriever
        from ragkit.lexical import BM25Retriever

        self._doc_order = list(self.documents)
        self._envelopes = [self.documents[d].envelope for d in self._doc_order]
        pos = {d: i for i, d in enumerate(self._doc_order)}
        self.row_doc = np.array([pos[c.doc_id] for c in self.rows], dtype=np.int64)
        self.row_of = {c.chunk_id: i for i, c in enumerate(self.rows)}
        texts = [c.contextual_text() for c in self.rows]
        self.lexical = BM25Retriever(texts or [""], stemmer=self.settings.bm25_stemmer,
                                     stopwords=self.settings.bm25_stopwords) if texts else None
        self.dense = DenseRetriever(self.vectors.reshape(len(self.rows), -1) if len(self.rows)
                                    else np.zeros((0, 384), np.float32),
                                    self._embedder, kind=self.settings.dense_kind)

    @staticmethod
    def _encode(chunks: Sequence[Chunk], embedder: Any, progress: bool) -> np.ndarray:
        rows = [c for c in chunks if c.kind == "chunk"]
        return embedder.encode([c.contextual_text() for c in rows], progress=progress)

    @classmethod
    def build(cls, documents: Iterable[Document], settings: IndexSettings | None = None, *,
              embedder: Any = None, progress: bool = False) -> Index:
        """Chunk and embed ``documents`` into a new in-memory index."""
        settings = settings or IndexSettings()
        docs = list(documents)
        if not docs:
            raise ValidationError("no documents to index; check the folder and the load report")
        chunks = chunk_documents(docs, settings.chunker)
        lazy = embedder or _LazyEmbedder(settings.embedder, None)
        vectors = cls._encode(chunks, lazy, progress)
        model = lazy.get() if isinstance(lazy, _LazyEmbedder) else lazy
        manifest = cls._new_manifest(settings, model, docs)
        return cls(docs, chunks, vectors, settings, embedder=lazy, manifest=manifest)

    @staticmethod
    def _new_manifest(settings: IndexSettings, model: Any, docs: Sequence[Document]) -> dict[str, Any]:
        from ragkit import __version__

        now = dt.datetime.now(dt.timezone.utc).isoformat()
        return {
            "format_version": FORMAT_VERSION, "ragkit_version": __version__,
            "embedder": {"name": getattr(model, "name", "custom"),
                         "version": getattr(model, "version", "unknown"),
                         "dim": int(getattr(model, "dim", 0) or 0)},
            "settings": settings.to_json(), "created_at": now, "updated_at": now,
            "indexed_at": {d.doc_id: now for d in docs},
            "doc_fingerprints": {d.doc_id: _doc_fingerprint(d) for d in docs},
            "tombstones": [],
        }

    # -- incremental change ---------------------------------------------------------------
    def sync(self, documents: Iterable[Document], *, delete_missing: bool = True,
             progress: bool = False) -> SyncReport:
        """Make the index match ``documents``: add new, re-encode changed, delete missing ones.

        Unchanged documents keep their vectors (never re-encoded). On any error the index
        is left as it was.
        """
        docs = list(documents)
        report = SyncReport()
        fps = self.manifest.setdefault("doc_fingerprints", {})
        incoming = {d.doc_id: d for d in docs}
        changed: list[Document] = []
        for d in docs:
            fp = _doc_fingerprint(d)
            if d.doc_id not in self.documents:
                report.added.append(d.doc_id)
                changed.append(d)
            elif fps.get(d.doc_id) != fp:
                report.updated.append(d.doc_id)
                changed.append(d)
            else:
                report.unchanged += 1
        if delete_missing:
            report.deleted = [d for d in self.documents if d not in incoming]
        drop = set(report.updated) | set(report.deleted)
        new_chunks = chunk_documents(changed, self.settings.chunker)
        new_vectors = self._encode(new_chunks, self._embedder, progress) if new_chunks else \
            np.zeros((0, self.vectors.shape[1] if self.vectors.ndim == 2 else 384), np.float32)
        report.encoded_rows = int(len(new_vectors))
        if not changed and not report.deleted:
            return report
        keep = [i for i, c in enumerate(self.rows) if c.doc_id not in drop]
        now = dt.datetime.now(dt.timezone.utc).isoformat()
        docs_after = [d for k, d in self.documents.items() if k not in drop] + changed
        chunks_after = [c for c in self.sections.values() if c.doc_id not in drop] + \
            [self.rows[i] for i in keep] + list(new_chunks)
        vectors_after = np.vstack([self.vectors[keep].reshape(len(keep), -1), new_vectors]) \
            if len(keep) else new_vectors
        # everything computed: now swap state in one step
        self.documents = {d.doc_id: d for d in docs_after}
        self.rows = [c for c in chunks_after if c.kind == "chunk"]
        self.sections = {c.chunk_id: c for c in chunks_after if c.kind == "section"}
        self.vectors = np.asarray(vectors_after, dtype=np.float32)
        for d in changed:
            fps[d.doc_id] = _doc_fingerprint(d)
            self.manifest.setdefault("indexed_at", {})[d.doc_id] = now
        for doc_id in report.deleted:
            fps.pop(doc_id, None)
            self.manifest.setdefault("indexed_at", {}).pop(doc_id, None)
            self.manifest.setdefault("tombstones", []).append({"doc_id": doc_id, "deleted_at": now})
        self.manifest["updated_at"] = now
        self._reindex()
        return report

    def add(self, documents: Iterable[Document], *, progress: bool = False) -> SyncReport:
        """Add or update documents; existing documents keep their vectors."""
        return self.sync(documents, delete_missing=False, progress=progress)

    def delete(self, doc_ids: Iterable[str]) -> SyncReport:
        """Remove documents, their chunks and vectors; logs a tombstone for each."""
        gone = set(doc_ids)
        unknown = sorted(gone - set(self.documents))
        if unknown:
            raise ValidationError(f"cannot delete unknown doc ids {unknown[:5]}")
        return self.sync([d for k, d in self.documents.items() if k not in gone])

    # -- persistence ----------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the index to ``path`` atomically (temporary folder, then rename)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        try:
            with open(tmp / "documents.jsonl", "w", encoding="utf-8") as fh:
                for d in self.documents.values():
                    fh.write(json.dumps({"envelope": d.envelope.to_mapping(), "text": d.text},
                                        ensure_ascii=False) + "\n")
            with open(tmp / "chunks.jsonl", "w", encoding="utf-8") as fh:
                for c in [*self.sections.values(), *self.rows]:
                    fh.write(json.dumps(_chunk_to_json(c), ensure_ascii=False) + "\n")
            np.save(tmp / "vectors.npy", self.vectors)
            manifest = dict(self.manifest)
            manifest["settings"] = self.settings.to_json()
            manifest["counts"] = {"documents": len(self.documents), "sections": len(self.sections),
                                  "rows": len(self.rows)}
            manifest["corpus_fingerprint"] = hashlib.sha1(
                "".join(sorted(manifest.get("doc_fingerprints", {}).values())).encode()).hexdigest()
            manifest["files"] = {name: _sha256(tmp / name) for name in _FILES}
            with open(tmp / "manifest.json", "w", encoding="utf-8") as fh:
                json.dump(manifest, fh, indent=1, sort_keys=True)
            self.manifest = manifest
            old = None
            if target.exists():
                old = target.with_name(f".{target.name}.old-{os.getpid()}")
                os.replace(target, old)
            os.replace(tmp, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return target

    @classmethod
    def load(cls, path: str | Path, *, embedder: Any = None, verify: bool = True) -> Index:
        """Open a saved index; nothing is re-encoded.

        Raises:
            IndexStateError: missing folder or file, checksum mismatch (damaged file), a
                format from another ragkit version, or (on first query) an embedder that
                differs from the one the index was built with.
        """
        root = Path(path)
        if not (root / "manifest.json").is_file():
            olds = sorted(root.parent.glob(f".{root.name}.old-*")) if root.parent.exists() else []
            if olds:  # a crash between the two renames of save(): the previous index survives
                os.replace(olds[-1], root)
            else:
                raise IndexStateError(f"{root} is not a ragkit index (no manifest.json); build one "
                                      f"with `ragkit index DIR --out {root}`")
        try:
            manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise IndexStateError(f"{root}/manifest.json is damaged ({exc}); rebuild the index") from None
        if manifest.get("format_version") != FORMAT_VERSION:
            raise IndexStateError(f"{root} has index format {manifest.get('format_version')}, this "
                                  f"ragkit reads format {FORMAT_VERSION}; rebuild the index")
        for name in _FILES:
            file = root / name
            if not file.is_file():
                raise IndexStateError(f"{file} is missing; rebuild the index")
            if verify and _sha256(file) != manifest.get("files", {}).get(name):
                raise IndexStateError(f"{file} does not match its checksum in manifest.json (damaged "
                                      "or edited by hand); rebuild the index")
        settings = IndexSettings.from_json(manifest["settings"])
        docs = []
        for line in (root / "documents.jsonl").read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            docs.append(Document(Envelope.from_mapping(rec["envelope"]), rec["text"]))
        by_id = {d.doc_id: d for d in docs}
        chunks = []
        for line in (root / "chunks.jsonl").read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            text = by_id[rec["doc_id"]].text[rec["start"]:rec["end"]]
            chunks.append(Chunk(text=text, **{**rec, "section_path": tuple(rec["section_path"])}))
        vectors = np.load(root / "vectors.npy")
        lazy = embedder or _LazyEmbedder(settings.embedder, manifest.get("embedder"))
        return cls(docs, chunks, vectors, settings, embedder=lazy, manifest=manifest)

    # -- reading --------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Counts and model names, for display."""
        return {"documents": len(self.documents), "sections": len(self.sections), "rows": len(self.rows),
                "embedder": self.manifest.get("embedder", {}).get("name"),
                "chunker": self.settings.chunker.method}

    def mask(self, scope: Scope, filters: Filters | None = None) -> np.ndarray:
        """Rows the caller may see under ``filters`` (computed from envelopes, before ranking)."""
        return scope_mask(self._envelopes, self.row_doc, scope, filters)

    def envelope(self, row: int) -> Envelope:
        return self._envelopes[int(self.row_doc[row])]

    def search_lexical(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        if self.lexical is None:
            return Ranking([], [])
        return self.lexical.search(query, k, mask)

    def search_dense(self, query: str, k: int, mask: np.ndarray | None) -> Ranking:
        return self.dense.search(query, k, mask)

    def parent(self, row: int) -> Chunk | None:
        """The parent section of a row (``None`` when its chunker has no sections)."""
        pid = self.rows[row].parent_id
        return self.sections.get(pid) if pid else None
