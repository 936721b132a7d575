"""Generate the exercise notebooks from their single source in ``ragkit/exercises/``.

Each exercise module (``ragkit/exercises/exNN_*.py``) holds the brief, the cells with marked
gaps, the reference solution and the checker. This script writes, for each one,

* ``exercises/NN_<name>.ipynb``: the student version (gaps open, ``check()``, hints commented out);
* ``exercises/solutions/NN_<name>.ipynb``: the solution version (gaps filled; the check must pass).

Run it from the repository root after editing an exercise::

    .venv/bin/python exercises/build.py          # write the notebooks
    .venv/bin/python exercises/build.py --check  # exit 1 if a committed notebook is out of date

``tests/test_exercises.py`` regenerates the notebooks in memory and compares them with the
committed files, so the student and solution versions cannot drift from their source.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ragkit.exercises import EXERCISES, load  # noqa: E402
from ragkit.exercises.cells import to_notebook  # noqa: E402


def notebook_files() -> dict[Path, str]:
    """Every generated notebook: path (under ``exercises/``) -> file text."""
    out: dict[Path, str] = {}
    for number, module_name in sorted(EXERCISES.items()):
        module = load(number)
        stem = f"{number:02d}_{module_name.split('_', 1)[1]}.ipynb"
        for version, folder in (("student", HERE), ("solution", HERE / "solutions")):
            nb = to_notebook(module.CELLS, version, number=number)
            out[folder / stem] = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report notebooks that are out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, text in notebook_files().items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for path in stale:
        print(("out of date: " if args.check else "wrote ") + str(path.relative_to(HERE.parent)))
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    raise SystemExit(main())
