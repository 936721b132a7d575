"""A tiny deterministic embedder for fast tests: hashed bag of words, L2-normalised.

Not a model: two texts are similar when they share words. Property and crash tests use it
so that thousands of generated cases run in seconds (the real MiniLM is tested elsewhere).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

DIM = 32


class HashEmbedder:
    name = "hash-bow"
    version = "1"
    dim = DIM

    def encode(self, texts, **kwargs):
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
                out[i, h % DIM] += 1.0 if (h >> 16) & 1 else -1.0
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else out[i]
            if not norm:
                out[i, 0] = 1.0
        return out
