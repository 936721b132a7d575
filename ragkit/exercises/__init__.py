"""Hands-on exercises with automatic checks, one module per exercise (CURRICULUM, "Exercises").

In a notebook::

    from ragkit.exercises import ex01 as ex
    ex.check()      # judges your variables, recomputed from your own run
    ex.hint()       # first a nudge; call again for a stronger pointer
    ex.solution()   # the reference code for the gaps

Each module holds the brief, the starter cells with marked gaps, the reference solution and
the checker; ``exercises/build.py`` generates the student and solution notebooks from it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ragkit.core.errors import ValidationError
from ragkit.exercises.core import Outcome, ____, sample_cases

__all__ = ["EXERCISES", "____", "Outcome", "load", "sample_cases"]

#: Exercise number -> module name (inside this package).
EXERCISES: dict[int, str] = {
    1: "ex01_failure_split",
    2: "ex02_hybrid_recall",
    3: "ex03_widths",
    4: "ex04_honesty",
    5: "ex05_staleness",
    6: "ex06_trace_costs",
    7: "ex07_conflicts",
    8: "ex08_remove_source",
}


def load(number: int) -> ModuleType:
    """The module of exercise ``number``."""
    if number not in EXERCISES:
        raise ValidationError(f"no exercise {number}; available: {sorted(EXERCISES)}", field="number")
    return importlib.import_module(f"ragkit.exercises.{EXERCISES[number]}")


def __getattr__(name: str) -> ModuleType:
    if len(name) == 4 and name.startswith("ex") and name[2:].isdigit() and int(name[2:]) in EXERCISES:
        return load(int(name[2:]))
    raise AttributeError(f"module 'ragkit.exercises' has no attribute {name!r}")
