"""An index folder followed live: every read sees the generation committed last, by any process.

A server (``ragkit mcp``) that loads an index once keeps answering from that version while
``ragkit sync`` commits new ones beside it, so a deleted or revoked document would stay readable
until the server restarts. :class:`LiveIndex` reads the folder's ``CURRENT`` commit point (a few
bytes) whenever a reader takes a snapshot, and reloads the index when another generation was
committed. Readers take one snapshot per search or tool call, so a call that starts after a
commit never sees what the commit removed.

Example:
    >>> live = LiveIndex(".ragkit-cache/index-docs")                     # doctest: +SKIP
    >>> Toolbox(live, Scope("acme", ["ops"])).search_knowledge("EUR cutoff")  # doctest: +SKIP
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ragkit.core.errors import IndexStateError
from ragkit.index import storage
from ragkit.index.index import Index
from ragkit.index.snapshots import Snapshot

__all__ = ["LiveIndex"]


class LiveIndex:
    """The index saved at ``path``, reloaded whenever its ``CURRENT`` names another generation.

    Anything else (``embedder``, ``profile``, ``manifest``, ``stats()``...) is read from the
    index loaded last.

    Args:
        path: the index folder.
        embedder: passed to :meth:`Index.load <ragkit.index.index.Index.load>`.

    Raises:
        IndexStateError: the folder holds no index (when constructed), or a reload fails.
    """

    def __init__(self, path: str | Path, *, embedder: Any = None) -> None:
        self.path = Path(path)
        self._embedder = embedder
        self._lock = threading.Lock()
        self._current = storage.current_generation(self.path)
        self._index = Index.load(self.path, embedder=embedder)
        self.reloads = 0

    @property
    def index(self) -> Index:
        """The index of the generation committed last (reloaded if another one was committed)."""
        with self._lock:
            current = storage.current_generation(self.path)
            if current is None:
                raise IndexStateError(f"{self.path} no longer holds an index (its CURRENT file is gone)")
            if current != self._current:
                embedder = self._embedder if self._embedder is not None else self._index.embedder
                self._index = Index.load(self.path, embedder=embedder)
                self._current = current
                self.reloads += 1
            return self._index

    def snapshot(self) -> Snapshot:
        """The current snapshot of the generation committed last."""
        return self.index.snapshot()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.index, name)

    def __repr__(self) -> str:
        return f"LiveIndex({str(self.path)!r}, generation={self._index.manifest.get('generation')})"
