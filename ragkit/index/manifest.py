"""The manifest: what a generation records about its documents, and how an update changes it.

Beside the segments, a generation manifest records per document its content fingerprint
(:func:`doc_fingerprint`: what :meth:`~ragkit.index.index.Index.sync` compares to find changed
documents), when it was indexed and when its source last changed (for staleness reports), the
files that moved without changing, and a tombstone per deleted document.

Example:
    >>> from ragkit.core.records import Document, Envelope
    >>> a, b = Document(Envelope("a"), "x"), Document(Envelope("a"), "y")
    >>> doc_fingerprint(a) == doc_fingerprint(a), doc_fingerprint(a) == doc_fingerprint(b)
    (True, False)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ragkit.core.records import Document
from ragkit.core.version import __version__
from ragkit.index.settings import FORMAT_VERSION, IndexSettings

__all__ = ["now", "doc_fingerprint", "source_changed_at", "new_manifest", "updated_manifest"]


def now() -> str:
    """The current UTC time, ISO formatted (the manifest's timestamps)."""
    return dt.datetime.now(dt.timezone.utc).isoformat()


def doc_fingerprint(doc: Document) -> str:
    """Content hash of a document: envelope (without load-time fields) and text."""
    env = {k: v for k, v in doc.envelope.to_mapping().items() if k not in ("source_path", "ingested_at")}
    payload = json.dumps(env, sort_keys=True, default=str) + "\0" + doc.text
    return hashlib.sha1(payload.encode()).hexdigest()


def source_changed_at(doc: Document) -> str | None:
    """When the source last changed: the file's mtime, else the envelope's ``ingested_at``."""
    path = doc.envelope.source_path
    if path:
        try:
            return dt.datetime.fromtimestamp(os.stat(path).st_mtime, dt.timezone.utc).isoformat()
        except OSError:
            pass
    return doc.envelope.ingested_at.isoformat() if doc.envelope.ingested_at else None


def new_manifest(settings: IndexSettings, model: Any, docs: Sequence[Document]) -> dict[str, Any]:
    """The manifest of a new index of ``docs`` built with ``settings`` and the embedder ``model``."""
    stamp = now()
    return {
        "format_version": FORMAT_VERSION, "ragkit_version": __version__, "generation": 0,
        "embedder": {"name": getattr(model, "name", "custom"),
                     "version": getattr(model, "version", "unknown"),
                     "dim": int(getattr(model, "dim", 0) or 0)},
        "settings": settings.to_json(), "created_at": stamp, "updated_at": stamp,
        "indexed_at": {d.doc_id: stamp for d in docs},
        "source_changed_at": {d.doc_id: source_changed_at(d) for d in docs},
        "doc_fingerprints": {d.doc_id: doc_fingerprint(d) for d in docs},
        "tombstones": [],
    }


def updated_manifest(manifest: dict[str, Any], changed: Sequence[Document], deleted: Sequence[str],
                     relocated: Mapping[str, str | None]) -> dict[str, Any]:
    """A copy of ``manifest`` after an update (``manifest`` itself is not changed: readers never see
    a half update).

    Args:
        manifest: the current manifest.
        changed: documents added or re-encoded (new fingerprints and times).
        deleted: doc ids removed (a tombstone each).
        relocated: doc id -> new source path of unchanged documents whose file moved.
    """
    stamp = now()
    manifest = dict(manifest)  # copy what changes: readers never see a half update
    for key in ("doc_fingerprints", "indexed_at", "source_changed_at", "relocated"):
        manifest[key] = dict(manifest.get(key) or {})
    manifest["tombstones"] = list(manifest.get("tombstones") or [])
    for d in changed:
        manifest["doc_fingerprints"][d.doc_id] = doc_fingerprint(d)
        manifest.setdefault("indexed_at", {})[d.doc_id] = stamp
        manifest.setdefault("source_changed_at", {})[d.doc_id] = source_changed_at(d)
    for doc_id in deleted:
        for key in ("doc_fingerprints", "indexed_at", "source_changed_at"):
            manifest.get(key, {}).pop(doc_id, None)
        manifest.setdefault("tombstones", []).append({"doc_id": doc_id, "deleted_at": stamp})
    moved = manifest.setdefault("relocated", {})
    moved.update(relocated)
    for doc_id in [*(d.doc_id for d in changed), *deleted]:
        moved.pop(doc_id, None)
    manifest["updated_at"] = stamp
    return manifest
