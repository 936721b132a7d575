"""Tunable parameters, declared once: default, allowed range and meaning.

A :class:`Param` drives validation (:meth:`Param.check`), its ``repr`` and the docstring tables
of the functions that use it (:func:`with_param_table`): BM25's ``k1`` and ``b``, RRF's ``k``,
the funnel's widths and budgets, the tools' limits.

Example:
    >>> Param("k", 60, 0, None, "rank offset").check(10, owner="rrf")
    10
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np

from ragkit.core.errors import ValidationError

__all__ = ["Param", "with_param_table"]


class Param(NamedTuple):
    """A tunable parameter declared once: default, allowed range and meaning.

    Validation (:meth:`check`), ``repr`` and the docstring tables of the functions
    that use it all come from this one declaration.

    Example:
        >>> Param("k", 60, 0, None, "rank offset").describe()
        'k: rank offset (default 60, range >= 0)'
    """

    name: str
    default: float
    low: float | None
    high: float | None
    doc: str

    def range_text(self) -> str:
        """The allowed range in words, e.g. ``>= 0`` or ``0 to 1``."""
        if self.low is not None and self.high is not None:
            return f"{self.low} to {self.high}"
        if self.low is not None:
            return f">= {self.low}"
        if self.high is not None:
            return f"<= {self.high}"
        return "any number"

    def describe(self) -> str:
        """One line for docs: name, meaning, default and range."""
        return f"{self.name}: {self.doc} (default {self.default}, range {self.range_text()})"

    def check(self, value: object, *, owner: str) -> float:
        """Return ``value`` as a number if it is in range, else raise ValidationError.

        Args:
            value: what the caller passed.
            owner: the function or class it was passed to, for the message.
        """
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValidationError(
                f"{owner}: {self.name}={value!r} is a {type(value).__name__}; expected a number "
                f"({self.range_text()}). Pass e.g. {self.name}={self.default}",
                field=self.name,
            )
        number = float(value)
        too_low = self.low is not None and number < self.low
        too_high = self.high is not None and number > self.high
        if math.isnan(number) or too_low or too_high:
            raise ValidationError(
                f"{owner}: {self.name}={value!r} is out of range; expected {self.range_text()}. "
                f"Use the default {self.name}={self.default} unless you measured a better value",
                field=self.name,
            )
        return value if isinstance(value, int) else number  # type: ignore[return-value]


def with_param_table(params: Mapping[str, Param]) -> Callable[[Callable], Callable]:
    """A decorator appending a 'Tunable parameters' section, rendered from ``params``, to a docstring.

    Example:
        >>> @with_param_table({"k": Param("k", 60, 0, None, "rank offset")})
        ... def f():
        ...     '''Do f.'''
        >>> print(f.__doc__.splitlines()[-1].strip())
        k: rank offset (default 60, range >= 0)
    """

    def decorate(func: Callable) -> Callable:
        lines = "\n".join(f"        {p.describe()}" for p in params.values())
        header = "\n\n    Tunable parameters:\n"
        func.__doc__ = (func.__doc__ or "").rstrip() + header + lines + "\n"
        return func

    return decorate
