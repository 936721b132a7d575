"""Running the bundled ONNX models: sessions, tokenizers, one input per run, a small worker pool.

Both bundled ONNX models are dynamically quantised: activation scales are computed per run
over every input in it, padding included, so a batched text's output would depend on its
batch-mates. Each text (or query-passage pair) therefore runs alone, single-threaded, and
several run side by side on a small thread pool (:func:`set_workers`, what the bulk commands'
``--workers`` sets; else ``RAGKIT_WORKERS``; else the CPU count, at most 4): outputs are
independent of the other inputs and every core is busy.

Example:
    >>> workers() >= 1
    True
    >>> parallel_map(lambda x: x * 2, [1, 2, 3])
    [2, 4, 6]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

__all__ = ["workers", "set_workers", "parallel_map", "onnx_session", "load_tokenizer", "feed"]

T = TypeVar("T")
_SET: dict[str, int] = {}  # "workers": the count set_workers() chose, when it chose one


def workers() -> int:
    """How many single-threaded ONNX runs go side by side: the count :func:`set_workers` chose,
    else ``RAGKIT_WORKERS``, else the CPU count (at most 4)."""
    if "workers" in _SET:
        return _SET["workers"]
    value = os.environ.get("RAGKIT_WORKERS")
    if value and value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, min(4, os.cpu_count() or 1))


def set_workers(n: int | None) -> int | None:
    """Run ``n`` ONNX inputs side by side from now on (``None``: back to ``RAGKIT_WORKERS`` or the CPUs).

    What ``--workers N`` of ``ragkit index``, ``sync``, ``demo``, ``beir`` and ``eval`` calls. The
    shared pool is rebuilt at its next use with the new size; runs already on the old pool finish
    there (its idle threads end when it is collected). Returns the count set before (``None``:
    none was), to restore it.

    Example::

        before = set_workers(1)   # one input at a time, in the calling thread
        set_workers(before)       # as it was

    Raises:
        ValueError: ``n`` is below 1.
    """
    if n is not None and n < 1:
        raise ValueError(f"workers={n}: use 1 or more")
    before = _SET.get("workers")
    if n is None:
        _SET.pop("workers", None)
    else:
        _SET["workers"] = n
    _pool.cache_clear()
    return before


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="ragkit-onnx")


def parallel_map(fn: Callable[[Any], T], items: Sequence[Any]) -> list[T]:
    """``fn`` over ``items`` on the shared pool, results in input order.

    onnxruntime releases the GIL while it runs, so threads keep every worker busy. One item, or
    ``workers() == 1``, runs in the calling thread.
    """
    if len(items) <= 1 or workers() == 1:
        return [fn(x) for x in items]
    return list(_pool().map(fn, items))


def onnx_session(path: Path) -> Any:
    """An onnxruntime CPU session for ``path / "model.onnx"``, one thread per run.

    ``RAGKIT_ORT_THREADS`` sets the intra-op threads (default 1).
    """
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


def load_tokenizer(path: Path, max_length: int) -> Any:
    """The model's ``tokenizer.json``, truncating to ``max_length`` tokens and never padding."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
    tokenizer.no_padding()  # inputs run alone: no padding, ever
    return tokenizer


def feed(enc: Any) -> dict[str, np.ndarray]:
    """The session inputs of one tokenizer encoding (a batch of one, int64)."""
    return {"input_ids": np.array([enc.ids], dtype=np.int64),
            "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([enc.type_ids], dtype=np.int64)}
