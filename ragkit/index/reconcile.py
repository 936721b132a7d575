"""Reconciliation: the one rule that diffs what a folder holds against what an index stored.

Every way ragkit keeps an index current (:meth:`Index.sync <ragkit.index.index.Index.sync>`,
:func:`~ragkit.index.freshness.sync_folder`, the :class:`~ragkit.index.freshness.Watcher`, the
Milvus sync and both Milvus ingestions) decides *what changed* here, and only *applies* the change
itself:

* :func:`diff_states` compares incoming ``(doc_id, fingerprint, source_path)`` triples with the
  stored :class:`DocState` of each document: new ids are *added*, a different content hash
  (:func:`~ragkit.index.manifest.doc_fingerprint`) is *updated*, the same hash is *unchanged*
  (and *relocated* when its file moved), and a stored id that no longer arrives is *deleted*
  unless it is in ``keep``: the documents of files that failed to load (:func:`unreadable_ids`),
  so a half-written file never deletes what was indexed. A revoked ACL group is an envelope
  change, so the document is *updated* and every copy of it is rewritten with the new groups.
* :func:`plan_sync` is the same for loaded documents: a :class:`SyncPlan` (the report, the
  documents to encode, the new source paths of moved ones).
* A :class:`SyncTarget` is what a backend implements to be kept fresh: its stored states, and
  ``apply(plan)`` committing the change durably.

Example:
    >>> stored = {"a": DocState("h1", "/d/a.md"), "b": DocState("h2", "/d/b.md")}
    >>> report = diff_states([Incoming("a", "h1", "/d/a.md"), Incoming("c", "h3", "/d/c.md")], stored)
    >>> report.added, report.updated, report.deleted, report.unchanged
    (['c'], [], ['b'], 1)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ragkit.core.errors import ValidationError
from ragkit.core.records import Document
from ragkit.documents.loaders import Skipped
from ragkit.index.manifest import doc_fingerprint
from ragkit.index.settings import SyncReport

__all__ = ["DocState", "Incoming", "SyncPlan", "SyncTarget", "diff_states", "plan_sync", "unreadable_ids",
           "states_from_manifest"]


class DocState(NamedTuple):
    """What an index stored about one document: its content hash, source file and times (ISO UTC)."""

    fingerprint: str
    source_path: str | None = None
    indexed_at: str | None = None
    source_changed_at: str | None = None


class Incoming(NamedTuple):
    """One document as the folder holds it now: id, content hash, source file."""

    doc_id: str
    fingerprint: str
    source_path: str | None = None


@dataclass
class SyncPlan:
    """What a sync must do: the report (ids), the documents to encode, and moved sources.

    Attributes:
        report: added, updated, deleted, relocated ids and the unchanged count.
        changed: the added and updated documents, in the order they arrived.
        relocated: doc id -> new source path of unchanged documents whose file moved.
    """

    report: SyncReport
    changed: list[Document] = field(default_factory=list)
    relocated: dict[str, str | None] = field(default_factory=dict)

    def with_deleted(self, doc_ids: Iterable[str], stored: Mapping[str, Any]) -> SyncPlan:
        """This plan plus the deletion of ``doc_ids`` (those ``stored`` holds and the plan keeps)."""
        keep = {d.doc_id for d in self.changed}
        extra = [d for d in dict.fromkeys(doc_ids) if d in stored and d not in keep
                 and d not in self.report.deleted]
        self.report.deleted += extra
        return self


def diff_states(incoming: Iterable[Incoming], stored: Mapping[str, DocState], *,
                delete_missing: bool = True, keep: Collection[str] = ()) -> SyncReport:
    """The reconciliation rule: which incoming documents are added, updated, unchanged or moved, and
    which stored ones are deleted (every stored id that did not arrive, except those in ``keep``,
    which count as unchanged).

    Raises:
        ValidationError: a doc id arrives twice (doc ids must be unique).
    """
    report = SyncReport()
    seen: set[str] = set()
    for doc_id, fingerprint, source_path in incoming:
        if doc_id in seen:
            raise ValidationError(f"sync: doc_id {doc_id!r} appears twice; doc ids must be unique",
                                  field="doc_id")
        seen.add(doc_id)
        state = stored.get(doc_id)
        if state is None:
            report.added.append(doc_id)
        elif state.fingerprint != fingerprint:
            report.updated.append(doc_id)
        else:
            report.unchanged += 1
            if source_path != state.source_path:
                report.relocated.append(doc_id)
    if delete_missing:
        report.deleted = [d for d in stored if d not in seen and d not in keep]
        report.unchanged += sum(1 for d in keep if d in stored and d not in seen)  # kept as indexed
    return report


def plan_sync(documents: Iterable[Document], stored: Mapping[str, DocState], *, delete_missing: bool = True,
              keep: Collection[str] = ()) -> SyncPlan:
    """:func:`diff_states` for loaded documents: the :class:`SyncPlan` a backend applies."""
    docs = list(documents)
    report = diff_states((Incoming(d.doc_id, doc_fingerprint(d), d.envelope.source_path) for d in docs),
                         stored, delete_missing=delete_missing, keep=keep)
    changed_ids = set(report.added) | set(report.updated)
    moved = set(report.relocated)
    return SyncPlan(report, [d for d in docs if d.doc_id in changed_ids],
                    {d.doc_id: d.envelope.source_path for d in docs if d.doc_id in moved})


def unreadable_ids(stored: Mapping[str, DocState], skipped: Iterable[Skipped]) -> list[str]:
    """Stored documents whose source file is still there but failed to load (kept as indexed)."""
    broken = {_resolved(s.path) for s in skipped if Path(s.path).exists()}
    if not broken:
        return []
    return [d for d, state in stored.items() if state.source_path and _resolved(state.source_path) in broken]


def states_from_manifest(documents: Mapping[str, Document],
                         manifest: Mapping[str, Any]) -> dict[str, DocState]:
    """The :class:`DocState` of every document of an in-memory index version (its manifest's records)."""
    fps = manifest.get("doc_fingerprints") or {}
    indexed = manifest.get("indexed_at") or {}
    changed = manifest.get("source_changed_at") or {}
    # a document without a recorded hash (an index older than fingerprints) counts as changed
    return {d: DocState(fps.get(d, ""), doc.envelope.source_path, indexed.get(d), changed.get(d))
            for d, doc in documents.items()}


@runtime_checkable
class SyncTarget(Protocol):
    """An index that a folder sync keeps fresh: the in-memory index folder or a Milvus collection."""

    def doc_states(self) -> dict[str, DocState]:
        """Every stored document's state (``{}`` for an index not created yet)."""
        ...

    def apply(self, plan: SyncPlan, *, progress: bool = False) -> SyncReport:
        """Encode ``plan.changed``, delete ``plan.report.deleted``, record the moves, commit durably."""
        ...

    @property
    def generation(self) -> int:
        """The number of the last committed version."""
        ...


def _resolved(path: str) -> Path:
    try:
        return Path(path).resolve()
    except OSError:
        return Path(path)
