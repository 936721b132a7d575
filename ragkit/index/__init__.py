"""The persisted index: segments, snapshots, durable storage, build and sync, and the backend seam.

``settings`` (how an index is built, what a sync changed), ``embedder`` (the lazily loaded,
checked model), ``segments`` (immutable batches of rows and their merge policy), ``snapshots``
(one immutable version), ``manifest`` (what a generation records per document), ``profiles``
(the corpus profile a generation keeps), ``storage``
(the crash-safe folder), ``index`` (the :class:`Index` itself), ``reconcile`` (the one sync rule),
``build``, ``freshness``, ``staleness`` and ``live``
(keeping an index current), ``links`` and ``backend`` (the seam every reader goes through).
"""

from ragkit.index.backend import Backend, MaskSelection, Selection, SnapshotBackend, as_backend
from ragkit.index.build import DEFAULT_CACHE, build_or_update, default_index_path, read_profile_file
from ragkit.index.embedder import LazyEmbedder
from ragkit.index.freshness import (
    FolderSync,
    IndexFolder,
    StalenessReport,
    Watcher,
    parse_duration,
    protect_unreadable,
    scan_folder,
    staleness,
    sync_folder,
)
from ragkit.index.index import Index
from ragkit.index.links import DocumentLinks, LinkGraph
from ragkit.index.live import LiveIndex
from ragkit.index.manifest import doc_fingerprint, new_manifest
from ragkit.index.profiles import manifest_profile, with_profile
from ragkit.index.reconcile import (
    DocState,
    Incoming,
    SyncPlan,
    SyncTarget,
    diff_states,
    plan_sync,
    states_from_manifest,
    unreadable_ids,
)
from ragkit.index.segments import MAX_SEGMENTS, Segment
from ragkit.index.settings import FORMAT_VERSION, IndexSettings, SyncReport
from ragkit.index.snapshots import Snapshot
from ragkit.index.storage import (
    CRASH_POINTS,
    LEGACY_FILES,
    SEGMENTS,
    cleanup,
    commit_generation,
    crash_point,
    current_generation,
    fsync_dir,
    fsync_file,
    generation_names,
    generation_number,
    read_generation,
    sha256_file,
    sha256_files,
    write_durable,
    writer_lock,
)

__all__ = [
    "Backend",
    "CRASH_POINTS",
    "DEFAULT_CACHE",
    "DocumentLinks",
    "FORMAT_VERSION",
    "FolderSync",
    "Index",
    "IndexSettings",
    "LEGACY_FILES",
    "LazyEmbedder",
    "LinkGraph",
    "MAX_SEGMENTS",
    "MaskSelection",
    "SEGMENTS",
    "Segment",
    "Selection",
    "Snapshot",
    "SnapshotBackend",
    "StalenessReport",
    "SyncReport",
    "Watcher",
    "as_backend",
    "build_or_update",
    "read_profile_file",
    "manifest_profile",
    "with_profile",
    "cleanup",
    "commit_generation",
    "crash_point",
    "current_generation",
    "default_index_path",
    "doc_fingerprint",
    "fsync_dir",
    "fsync_file",
    "generation_names",
    "generation_number",
    "new_manifest",
    "parse_duration",
    "protect_unreadable",
    "read_generation",
    "scan_folder",
    "sha256_file",
    "sha256_files",
    "staleness",
    "IndexFolder",
    "LiveIndex",
    "DocState",
    "Incoming",
    "SyncPlan",
    "SyncTarget",
    "diff_states",
    "plan_sync",
    "states_from_manifest",
    "unreadable_ids",
    "sync_folder",
    "write_durable",
    "writer_lock",
]
