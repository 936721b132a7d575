"""What every bench script shares: paths, common flags, the course cases, timing, and publishing.

Scripts run as ``python bench/<name>.py``, so this folder is on ``sys.path`` and they import it
as ``from _common import ...`` (ragkit itself is installed in the virtual environment; no script
edits ``sys.path``). Each script ends with :func:`publish`, which writes its Markdown result and
prints it.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ragkit import load_cases
from ragkit.course import course_cache
from ragkit.evaluation import EvidenceCase

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
#: ragkit's cache folder (``RAGKIT_CACHE``, else ``.ragkit-cache`` in the repository).
CACHE = course_cache()
CASES = ROOT / "datasets" / "opscorpus" / "cases.jsonl"
DOCS = ROOT / "datasets" / "opscorpus" / "docs"
COURSE_INDEX = CACHE / "index-course"
SETS_DIR = CACHE / "beir-sets"
BEIR_CACHE = CACHE / "beir"
#: SciFact train in BEIR format, when the shared data folder beside the repository holds it.
SCIFACT = ROOT.parent / "shared" / "data" / "scifact-train"


def parser(doc: str | None, result: str | None = None, *, flag: str = "--result") -> argparse.ArgumentParser:
    """An argument parser described by the first line of ``doc``, with the result file's flag.

    Args:
        doc: the script's module docstring (its first line becomes ``--help``'s description).
        result: the result file's name under ``bench/results/`` (``None``: the script adds its own).
        flag: the flag that overrides it (``--result`` in most scripts, ``--out`` in a few).
    """
    p = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    if result is not None:
        p.add_argument(flag, type=Path, default=RESULTS / result)
    return p


def add_beir_flags(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--sets-dir`` (the BEIR folders ``bench/build_beir_sets.py`` builds) and ``--cache``."""
    p.add_argument("--sets-dir", type=Path, default=SETS_DIR)
    p.add_argument("--cache", type=Path, default=BEIR_CACHE)
    return p


def beir_folder(name: str, sets_dir: Path) -> Path:
    """Where a set named on the command line lives (``scifact-train``: :data:`SCIFACT`)."""
    return SCIFACT if name == "scifact-train" else sets_dir / name


def course_cases(path: Path = CASES, *, answerable: bool = False) -> list[EvidenceCase]:
    """The bundled evidence cases in file order (only the answerable ones with ``answerable=True``)."""
    cases = load_cases(path)
    return [c for c in cases if c.answerable] if answerable else cases


def evenly(items: Sequence[T], n: int) -> list[T]:
    """About ``n`` items spread evenly over ``items`` (all of them when ``n`` is 0 or not smaller)."""
    if not n or len(items) <= n:
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def pct(values: Sequence[float], q: float) -> float:
    """The nearest-rank quantile ``q`` (0 to 1) of ``values``; NaN when there are none.

    >>> pct([3.0, 1.0, 2.0, 4.0], 0.5), pct([3.0, 1.0, 2.0, 4.0], 0.95)
    (3.0, 4.0)
    """
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Call ``fn()``; return the seconds it took and its result."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def meter(reranker: Any, total: list[float]) -> None:
    """Add the CPU seconds of every ``reranker.score`` call to ``total[0]`` (wraps the bound method)."""
    inner = reranker.score

    @functools.wraps(inner)
    def score(*args: Any, **kwargs: Any) -> Any:
        c = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            total[0] += time.process_time() - c

    reranker.score = score


def found(index: Any, result: Any, case: EvidenceCase) -> float:
    """Share of the case's evidence items (doc id, section anchor) among the delivered hits."""
    need = {(e.doc_id, e.anchor) for e in case.evidence}
    got = {(index.rows[h.row].doc_id, index.rows[h.row].anchor) for h in result.hits}
    return len(need & got) / len(need)


def publish(path: Path, text: str, *, echo: bool = True) -> str:
    """Write ``text`` (UTF-8) to ``path``, creating its folder; print it unless ``echo=False``; return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if echo:
        print(text)
    return text


#: The splits file of the bundled case sets (``ragkit.evaluation.splits``).
SPLITS = ROOT / "datasets" / "opscorpus" / "splits.json"
#: The hand-written paraphrase cases over the bundled corpus.
PARAPHRASES = ROOT / "datasets" / "opscorpus" / "paraphrases.jsonl"


def per_split(items: Sequence[T], split_of: Callable[[T], str], n: int) -> list[T]:
    """About ``n`` items from each split (:func:`evenly` within it), in their original order."""
    if not n:
        return list(items)
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(split_of(item), []).append(item)
    keep = {id(x) for group in groups.values() for x in evenly(group, n)}
    return [x for x in items if id(x) in keep]
