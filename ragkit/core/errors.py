"""One exception hierarchy for ragkit.

Every error says what was received, what was expected, and how to fix it.
Catch :class:`RagkitError` to handle any of them.
"""

from __future__ import annotations

__all__ = [
    "RagkitError",
    "ValidationError",
    "LoadError",
    "ModelNotAvailable",
    "IndexStateError",
    "ScopeError",
]


class RagkitError(Exception):
    """Base class of every error ragkit raises on purpose."""


class ValidationError(RagkitError, ValueError):
    """A record or parameter failed validation.

    Attributes:
        field: the field (or parameter) that was wrong, when known.
        where: the file (and line) the value came from, when known.
    """

    def __init__(self, message: str, *, field: str | None = None, where: str | None = None):
        self.field = field
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(prefix + message)


class LoadError(RagkitError):
    """A file could not be read into a Document (names the file and, where known, the line)."""

    def __init__(self, path: str, message: str, *, line: int | None = None, field: str | None = None):
        self.path = path
        self.line = line
        self.field = field
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}")


class ModelNotAvailable(RagkitError):
    """A bundled model is missing, or a named model cannot be loaded offline."""


class IndexStateError(RagkitError):
    """A persisted index is missing, damaged, or was built with other models/settings."""


class ScopeError(RagkitError):
    """A filter tried to widen the caller's scope, or a read fell outside it."""
