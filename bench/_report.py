"""The one step every bench script ends with: write its Markdown result and print it.

Scripts run as ``python bench/<name>.py``, so this folder is on ``sys.path`` and they import
it as ``from _report import publish``.
"""

from __future__ import annotations

from pathlib import Path


def publish(path: Path, text: str) -> str:
    """Write ``text`` (UTF-8) to ``path``, creating its folder; print it; return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(text)
    return text
