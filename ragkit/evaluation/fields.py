"""Reading a run's result, whatever its shape: one field reader, one text fold.

A result may be an :class:`~ragkit.agent.loop.AgentResult`, a dict (a failed run is scored
as ``{"abstained": True, "error": ...}``; results loaded back from JSON are dicts) or any
object with the same attribute names; its steps, traces and delivered evidence likewise.
Scoring, economics and the counterfactual judges read them all through :func:`field`.
Quotes are matched to evidence text after :func:`fold` (whitespace and case folded).

Example:
    >>> field({"abstained": True}, "abstained"), field(object(), "abstained", False)
    (True, False)
    >>> fold("  Migrated tenants\\n use 15:00 ")
    'migrated tenants use 15:00'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from ragkit.agent import AgentResult

__all__ = ["Result", "field", "fold"]

#: What a runner returns for a case: the agent's result, or a dict of its fields (a failed run).
Result: TypeAlias = "AgentResult | Mapping[str, Any]"


def field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for a mapping, else ``obj.name``; ``default`` when it has no such field."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def fold(text: Any) -> str:
    """``text`` with runs of whitespace made one space and letters lower-cased."""
    return " ".join(str(text).split()).lower()
