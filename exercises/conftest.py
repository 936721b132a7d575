"""pytest: under ``exercises/`` only the solution notebooks run (the student notebooks have open gaps).

The student versions are generated from the same source as the solutions and their gap cells
are executed on fixtures by ``tests/test_exercises.py``; running them here would repeat every
slow setup cell for no extra check.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path: Path, config: object) -> bool | None:
    if collection_path.suffix == ".ipynb" and collection_path.resolve().parent == HERE:
        return True
    return None
