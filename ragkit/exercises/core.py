"""The machinery every exercise shares: blanks, outcomes, graded hints, checks.

In the style of Kaggle's learntools: a notebook does ``from ragkit.exercises import ex01 as ex``
and then calls ``ex.check()``, ``ex.hint()`` and ``ex.solution()``. ``check()`` reads the
learner's variables from the notebook (by the names the exercise declares) and judges them
by what a correct result must satisfy, recomputed from the learner's own run. A failing
check says what is wrong and where to look; it never prints the expected answer.

Gaps in the starter code hold the placeholder :data:`____`. It is falsy, absorbs arithmetic
and comparisons, so an untouched starter runs top to bottom and ``check()`` then reports
"not attempted" rather than a confusing error.

Example:
    >>> ____ + 1 is ____, bool(____), contains_blank({"a": [1, ____]})
    (True, False, True)
    >>> Outcome("failed", "recall is above 1").passed
    False
"""

from __future__ import annotations

import dataclasses
import inspect
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "____",
    "Blank",
    "contains_blank",
    "Outcome",
    "Exercise",
    "Failure",
    "NotAttempted",
    "Shown",
    "sample_cases",
]


class Blank:
    """The placeholder a learner replaces. Falsy, and any operation on it gives it back."""

    _instance: Blank | None = None

    def __new__(cls) -> Blank:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "____"

    def __format__(self, spec: str) -> str:
        return "____"

    def __bool__(self) -> bool:
        return False

    def __len__(self) -> int:
        return 0

    def __iter__(self) -> Any:
        return iter(())

    def __call__(self, *args: Any, **kwargs: Any) -> Blank:
        return self

    def __getattr__(self, name: str) -> Blank:
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __getitem__(self, key: Any) -> Blank:
        return self

    def __hash__(self) -> int:
        return 0

    def _absorb(self, *args: Any) -> Blank:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _absorb
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = _absorb
    __and__ = __rand__ = __or__ = __ror__ = __neg__ = __abs__ = _absorb
    __lt__ = __le__ = __gt__ = __ge__ = _absorb  # type: ignore[assignment]


#: The gap marker in starter code.
____ = Blank()


def contains_blank(value: Any, _depth: int = 0) -> bool:
    """Whether ``value`` is, or holds (in containers, frames, dataclasses), the placeholder."""
    if value is ____ or _depth > 6:
        return value is ____
    if isinstance(value, Mapping):
        return any(contains_blank(k, _depth + 1) or contains_blank(v, _depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(contains_blank(v, _depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(contains_blank(getattr(value, f.name), _depth + 1) for f in dataclasses.fields(value))
    module = type(value).__module__
    if module.startswith("pandas"):
        values = value.to_numpy().ravel().tolist() if hasattr(value, "to_numpy") else []
        index = list(getattr(value, "index", [])) + list(getattr(value, "columns", []))
        return any(v is ____ for v in values + index)
    return False


@dataclass(frozen=True)
class Outcome:
    """The verdict of a check: ``passed``, ``failed`` or ``not_attempted``, and what to do."""

    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __str__(self) -> str:
        head = {"passed": "Correct", "failed": "Incorrect", "not_attempted": "Not attempted"}[self.status]
        return f"{head}: {self.message}"

    def _repr_markdown_(self) -> str:
        colour = {"passed": "#33925D", "failed": "#cc3333", "not_attempted": "#ccaa33"}[self.status]
        return (
            f'<span style="color:{colour}">{str(self).split(":", 1)[0]}:</span>{str(self).split(":", 1)[1]}'
        )


class Failure(Exception):
    """Raised inside a checker to stop with a failed outcome (message: what is wrong, where to look)."""


class NotAttempted(Exception):
    """Raised inside a checker when a gap is still open."""


@dataclass
class Exercise:
    """One exercise: its learner-facing names, its checker, graded hints and reference solution.

    Args:
        number: 1-8, as in CURRICULUM.md.
        title: a short title.
        variables: the names ``check()`` reads from the notebook.
        checker: ``checker(**values)``; returns a success message, raises :class:`Failure`
            (wrong) or :class:`NotAttempted` (a gap is open).
        hints: graded hints, the first a nudge, the later ones stronger pointers.
        solution_code: the reference code of the gaps (filled in by the module).
    """

    number: int
    title: str
    variables: tuple[str, ...]
    checker: Callable[..., str]
    hints: tuple[str, ...]
    solution_code: str = ""
    _hints_shown: int = field(default=0, repr=False)

    def check_values(self, **values: Any) -> Outcome:
        """Judge explicit values (what :meth:`check` does after reading the notebook's names)."""
        missing = [name for name in self.variables if name not in values or values[name] is None]
        if missing:
            return Outcome("not_attempted", f"define {', '.join(missing)} (run the cells above first).")
        blank = [name for name in self.variables if contains_blank(values[name])]
        if blank:
            return Outcome(
                "not_attempted",
                f"{', '.join(blank)} still holds a blank (____); fill in the gaps "
                "marked TODO and run those cells again.",
            )
        try:
            message = self.checker(**{name: values[name] for name in self.variables})
        except NotAttempted as exc:
            return Outcome("not_attempted", str(exc))
        except Failure as exc:
            return Outcome("failed", str(exc))
        except Exception as exc:  # the learner's functions run inside the check: say where it broke
            return Outcome(
                "failed",
                f"checking your work raised {type(exc).__name__}: {exc}. One of your functions "
                "or variables does not have the shape the exercise expects; rerun the cells from the "
                "top and compare with the starter's signatures.",
            )
        return Outcome("passed", message)

    def check(self, **values: Any) -> Outcome:
        """Check the learner's work: read the declared names from the notebook unless given."""
        if not values:
            found = _caller_globals()
            values = {name: found.get(name) for name in self.variables}
        return self.check_values(**values)

    def hint(self, n: int | None = None) -> Shown:
        """The next hint (first a nudge, then stronger pointers); ``n`` picks one (1-based)."""
        if n is None:
            self._hints_shown = min(self._hints_shown + 1, len(self.hints))
            n = self._hints_shown
        n = max(1, min(n, len(self.hints)))
        return Shown(f"Hint {n} of {len(self.hints)}: {self.hints[n - 1]}")

    def solution(self) -> Shown:
        """The reference solution of the gaps, as code."""
        return Shown(f"Solution to exercise {self.number}:", code=self.solution_code)


class Shown(str):
    """Text for the learner: a ``str`` that a notebook renders as Markdown (code as a code block)."""

    code: str

    def __new__(cls, text: str, *, code: str = "") -> Shown:
        shown = super().__new__(cls, f"{text}\n\n{code}" if code else text)
        shown.code = code
        return shown

    def __repr__(self) -> str:
        return str(self)

    def _repr_markdown_(self) -> str:
        if self.code:
            head = str(self)[: len(str(self)) - len(self.code)].strip()
            return f'<span style="color:#3366cc">{head}</span>\n\n```python\n{self.code}\n```'
        head, _, rest = str(self).partition(":")
        return f'<span style="color:#3366cc">{head}:</span>{rest}'


def _caller_globals() -> dict[str, Any]:
    """The globals of the first frame outside this package (the notebook's namespace)."""
    frame = inspect.currentframe()
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not str(name).startswith("ragkit.exercises"):
            return dict(frame.f_globals)
        frame = frame.f_back
    return {}


def require(condition: bool, message: str) -> None:
    """Fail the check with ``message`` unless ``condition`` holds."""
    if not condition:
        raise Failure(message)


def sample_cases(
    cases: Sequence[Any], n: int, *, seed: int = 0, where: Callable[[Any], bool] | None = None
) -> list[Any]:
    """A reproducible sample of ``n`` cases (those passing ``where``), in file order.

    Example:
        >>> sample_cases(list(range(10)), 3, seed=1)
        [1, 2, 4]
    """
    pool = [c for c in cases if where is None or where(c)]
    if n >= len(pool):
        return list(pool)
    chosen = set(random.Random(seed).sample(range(len(pool)), n))
    return [c for i, c in enumerate(pool) if i in chosen]
