"""The embedder of an index: loaded on first query, and checked against the one it was built with.

Opening an index must not load a model (the lexical search and every read need none); the
first dense search or encode does, through :class:`LazyEmbedder`, which refuses a model whose
name or version differs from the manifest's, since its vectors would not be comparable.

Example:
    >>> lazy = LazyEmbedder("bge-small", {"name": "bge-small", "version": "1"})
    >>> lazy.name, lazy.expected["version"]
    ('bge-small', '1')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragkit.core.errors import IndexStateError
from ragkit.models.bundled import get_embedder

__all__ = ["LazyEmbedder", "encode_query"]


class LazyEmbedder:
    """Loads the embedder on first query, and checks it is the one the index was built with.

    Args:
        name: the model name (``None``: ``RAGKIT_EMBEDDER`` or the bundled default).
        expected: the manifest's ``embedder`` record (``name``, ``version``), or ``None`` for a
            new index (nothing to check against).
    """

    def __init__(self, name: str | None, expected: dict[str, Any] | None) -> None:
        self.name = name
        self.expected = expected
        self._model: Any = None

    def get(self) -> Any:
        """The model (loaded and checked on the first call).

        Raises:
            IndexStateError: the configured model is not the one the index was built with.
        """
        if self._model is None:
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
        """``get().encode(texts, **kwargs)``."""
        return self.get().encode(texts, **kwargs)


def encode_query(embedder: Any, query: str) -> np.ndarray:
    """The query's vector: ``encode_queries`` when the model has one (a retrieval instruction)."""
    target = embedder.get() if isinstance(embedder, LazyEmbedder) else embedder
    encode = getattr(target, "encode_queries", None) or target.encode
    return np.asarray(encode([query]), dtype=np.float32).reshape(1, -1)
