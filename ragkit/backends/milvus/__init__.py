"""The funnel on Milvus: a second implementation of the backend seam, and Ray Data ingestion into it.

When one machine's memory no longer holds the corpus, or many agents search at once, the
rows move into Milvus and ragkit keeps everything else: fusion, rerank, expansion, tools,
agent, trace and evaluation read a :class:`MilvusSnapshot` exactly as they read the
in-memory :class:`~ragkit.index.snapshots.Snapshot`. ``pymilvus`` and ``ray`` are imported only
when a function needs them, so importing this package stays light.

Modules, in the order data flows:

* :mod:`~ragkit.backends.milvus.config`: :class:`MilvusConfig` (a server URI and token, or a
  local file; ``RAGKIT_MILVUS_URI`` / ``RAGKIT_MILVUS_TOKEN``);
* :mod:`~ragkit.backends.milvus.server`: :func:`start_local` runs embedded Milvus
  (milvus-lite 2.5, the real Milvus C++ core) as a server process on a loopback port;
* :mod:`~ragkit.backends.milvus.expressions`: scope and filters as a filter expression
  (:func:`scope_expression`), every value quoted (:func:`quote`);
* :mod:`~ragkit.backends.milvus.schema`: the chunk and docs collections and their entities;
* :mod:`~ragkit.backends.milvus.catalog`: one small record per document (content hash, times,
  envelope fields, links) and the index's state: what sync, staleness and the tools' listings read;
* :mod:`~ragkit.backends.milvus.index`: :class:`MilvusIndex` (create, open, copy, write, delete);
* :mod:`~ragkit.backends.milvus.snapshot`: :class:`MilvusSnapshot`, what the funnel reads;
* :mod:`~ragkit.backends.milvus.reading`, :mod:`~ragkit.backends.milvus.ingest`,
  :mod:`~ragkit.backends.milvus.ray_stages`, :mod:`~ragkit.backends.milvus.ray_ingest`:
  ingestion of a corpus folder, in one process (:func:`ingest_milvus`) or on Ray Data
  (:func:`ingest_ray`), both reconciled with what the collection holds;
* :mod:`~ragkit.backends.milvus.sync`: :class:`MilvusTarget`, a collection kept fresh by
  ``ragkit sync DIR --backend milvus`` (:func:`ragkit.index.sync_folder`, the ``Watcher``).

Example:
    >>> from ragkit import Funnel, Scope                                  # doctest: +SKIP
    >>> from ragkit.course import course_index                            # doctest: +SKIP
    >>> with start_local("/tmp/milvus") as server:                        # doctest: +SKIP
    ...     mi = MilvusIndex.from_index(course_index(), MilvusConfig(server.uri), drop_existing=True)
    ...     Funnel(mi).search("EUR cutoff", scope=Scope("acme", ["ops"])).hits[0].citation
"""

from ragkit.backends.milvus.config import MilvusConfig
from ragkit.backends.milvus.expressions import quote, scope_expression
from ragkit.backends.milvus.index import MilvusIndex
from ragkit.backends.milvus.ingest import IngestReport, ingest_milvus
from ragkit.backends.milvus.ray_ingest import ingest_ray
from ragkit.backends.milvus.reading import corpus_files
from ragkit.backends.milvus.server import LocalMilvus, start_local
from ragkit.backends.milvus.snapshot import MilvusSelection, MilvusSnapshot
from ragkit.backends.milvus.sync import MilvusTarget

__all__ = [
    "IngestReport",
    "LocalMilvus",
    "MilvusConfig",
    "MilvusIndex",
    "MilvusSelection",
    "MilvusSnapshot",
    "MilvusTarget",
    "corpus_files",
    "ingest_milvus",
    "ingest_ray",
    "quote",
    "scope_expression",
    "start_local",
]
