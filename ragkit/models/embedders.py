"""Dense embedders: the bundled ONNX one (one text per run) and a sentence-transformers wrapper.

Both offer ``encode(texts) -> float32 (n, dim)`` with L2-normalised rows and
``encode_queries(queries)``; :func:`ragkit.models.bundled.get_embedder` picks one by name.

Example:
    >>> emb = get_embedder()                          # doctest: +SKIP
    >>> emb.encode(["EUR cutoff is 15:00"]).shape     # doctest: +SKIP
    (1, 384)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragkit.models.runtime import feed, parallel_map

__all__ = ["Embedder", "OnnxEmbedder"]


@dataclass
class Embedder:
    """A sentence-transformers embedder: ``encode(texts) -> float32 (n, dim)``, L2-normalised rows.

    Attributes:
        name: the model name (Hugging Face id, or the default's id when bundled).
        version: a fingerprint of the model files; an index records it to detect mismatches.
        dim: embedding width.
    """

    name: str
    version: str
    model: Any

    @property
    def dim(self) -> int:
        """Embedding width."""
        getter = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str], *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Embed ``texts`` (batched, optional progress bar); returns normalised float32 rows."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(
            list(texts), batch_size=batch_size, show_progress_bar=progress,
            convert_to_numpy=True, normalize_embeddings=True,
        )
        return np.asarray(vectors, dtype=np.float32)

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Embed search queries (the same as :meth:`encode` for this model family)."""
        return self.encode(queries)


class OnnxEmbedder:
    """A BERT-style ONNX embedder (CLS pooling, L2-normalised), one text per run.

    Each text runs alone (no padding, no batch-mates): its vector does not depend on what it
    was indexed with, so re-encoding a changed document reproduces unchanged rows exactly.

    Attributes:
        name, version, dim: as for :class:`Embedder`.
        max_length: token truncation of each text (512).
        query_instruction: prepended to queries by :meth:`encode_queries`.
    """

    def __init__(self, name: str, version: str, session: Any, tokenizer: Any, *, dim: int = 384,
                 max_length: int = 512, query_instruction: str = "") -> None:
        self.name, self.version, self.dim = name, version, dim
        self.max_length = max_length
        self.query_instruction = query_instruction
        self._session, self._tokenizer = session, tokenizer

    def __repr__(self) -> str:
        return f"OnnxEmbedder(name={self.name!r}, dim={self.dim})"

    def _one(self, text: str) -> np.ndarray:
        hidden = self._session.run(None, feed(self._tokenizer.encode(text)))[0]
        vector = np.asarray(hidden[0, 0], dtype=np.float32)  # CLS token
        return vector / max(float(np.linalg.norm(vector)), 1e-12)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Embed ``texts``; returns normalised float32 rows (``batch_size`` is accepted, unused)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # longest first keeps the pool's workers evenly loaded to the end
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        step = 256
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc="embedding", unit="chunk")
        for start in range(0, len(order), step):
            part = order[start:start + step]
            for i, vector in zip(part, parallel_map(self._one, [texts[i] for i in part]), strict=True):
                out[i] = vector
            if bar is not None:
                bar.update(len(part))
        if bar is not None:
            bar.close()
        return out

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Embed search queries, each with :attr:`query_instruction` in front."""
        return self.encode([self.query_instruction + q for q in queries])
