"""Notebooks are committed without outputs: nbval runs them fresh, and asserts in the cells check them.

Reads the ``.ipynb`` JSON of every notebook under ``notebooks/`` and ``exercises/`` (no kernel, no
execution). A stored output would go stale the next time a default changes, and a cell marked
``# NBVAL_CHECK_OUTPUT`` would be compared with that stale output; both are refused here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(
    p
    for folder in ("notebooks", "exercises")
    for p in (REPO / folder).rglob("*.ipynb")
    if ".ipynb_checkpoints" not in p.parts
)


def test_there_are_notebooks_to_check() -> None:
    names = {p.relative_to(REPO).as_posix() for p in NOTEBOOKS}
    assert (
        "notebooks/01_first_search.ipynb" in names and "exercises/solutions/01_failure_split.ipynb" in names
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_notebook_has_no_outputs(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    rel = path.relative_to(REPO).as_posix()
    fix = f"clear them before committing: `.venv/bin/jupyter nbconvert --clear-output --inplace {rel}`"
    dirty = [
        i
        for i, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)
    ]
    assert not dirty, f"{rel}: code cells {dirty} carry outputs or execution counts; {fix}"
    marked = [i for i, cell in enumerate(nb["cells"]) if "NBVAL_CHECK_OUTPUT" in "".join(cell["source"])]
    assert not marked, (
        f"{rel}: cells {marked} are marked # NBVAL_CHECK_OUTPUT, which compares with a stored output; "
        "remove the marker and assert what the cell's output must show instead"
    )
