"""Lazy views of the active corpus profile: module constants that follow :func:`active_profile`.

The text, evidence and policy modules keep their lists as module-level names (``GENERIC``,
``HOP_CUES``, ``ROLES``), but each name is a *view*: it reads the field of the profile that is
active when it is used (:func:`ragkit.text.profile.active_profile`, the bundled profile unless a
caller runs under :func:`ragkit.text.profile.using_profile`), not the bundled one at import.
What a view computes (a frozenset, a compiled regex, a tuple of compiled patterns) is computed
once per profile and cached.

* :class:`ProfileValue`: any value computed from the profile (``.get()``).
* :class:`ProfileWords`: behaves like a frozenset of strings.
* :class:`ProfileRegex`: behaves like a compiled regex (``search``, ``match``, ``finditer``...).
* :class:`ProfileSeq`: behaves like a tuple; :class:`ProfileMap`: like a read-only mapping.
* :class:`ProfileText`: behaves like a string (``str()``, ``split``, ``==``).

Example:
    >>> from ragkit.text.profile import bundled_profile, using_profile
    >>> statuses = ProfileWords("statuses")
    >>> "blocked" in statuses
    True
    >>> with using_profile(bundled_profile().replace(statuses=["open"])):
    ...     sorted(statuses), bool(ProfileRegex("statuses").search("it is blocked"))
    (['open'], False)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from typing import Any, Generic, TypeVar, overload

from ragkit.text.profile import CorpusProfile, active_profile

__all__ = ["ProfileValue", "ProfileWords", "ProfileRegex", "ProfileSeq", "ProfileMap", "ProfileText"]

_T = TypeVar("_T")
_V = TypeVar("_V")

#: How many profiles one view keeps its computed value for (the latest ones).
CACHE_SIZE = 8


def _getter(source: str | Callable[[CorpusProfile], Any]) -> Callable[[CorpusProfile], Any]:
    if callable(source):
        return source
    name = source
    return lambda p: getattr(p, name)


class ProfileValue(Generic[_T]):
    """A value computed from the active profile by ``fn``, once per profile (by identity).

    Example:
        >>> n = ProfileValue(lambda p: len(p.source_types))
        >>> n.get() == len(active_profile().source_types)
        True
    """

    __slots__ = ("_fn", "_last", "_cache")

    def __init__(self, fn: Callable[[CorpusProfile], _T]) -> None:
        self._fn = fn
        self._last: tuple[CorpusProfile, _T] | None = None
        self._cache: dict[int, tuple[CorpusProfile, _T]] = {}

    def get(self) -> _T:
        """The value for the active profile."""
        profile = active_profile()
        last = self._last
        if last is not None and last[0] is profile:
            return last[1]
        hit = self._cache.get(id(profile))
        if hit is None or hit[0] is not profile:  # the profile held keeps its id from being reused
            hit = (profile, self._fn(profile))
            if len(self._cache) >= CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[id(profile)] = hit
        self._last = hit
        return hit[1]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.get()!r})"


class ProfileWords(Set[str]):
    """A frozenset of the active profile's ``field`` (a field name, or a function of the profile
    that returns words): ``in``, iteration, ``len``, ``==``, ``<=``, ``|`` and ``&`` work.

    Example:
        >>> sorted(ProfileWords(lambda p: ["b", "a"]))
        ['a', 'b']
    """

    __slots__ = ("_value",)

    def __init__(self, field: str | Callable[[CorpusProfile], Iterable[str]]) -> None:
        get = _getter(field)
        self._value: ProfileValue[frozenset[str]] = ProfileValue(lambda p: frozenset(get(p)))

    def get(self) -> frozenset[str]:
        """The words, for the active profile."""
        return self._value.get()

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> frozenset[Any]:  # what ``|``, ``&``, ``-`` return
        return frozenset(it)

    def __contains__(self, word: object) -> bool:
        return word in self._value.get()

    def __iter__(self) -> Iterator[str]:
        return iter(self._value.get())

    def __len__(self) -> int:
        return len(self._value.get())

    def __hash__(self) -> int:
        return hash(self._value.get())

    def __repr__(self) -> str:
        return f"ProfileWords({sorted(self._value.get())!r})"


class ProfileRegex:
    """A compiled regex of the active profile's ``field`` (a field name, or a function of the
    profile that returns a pattern), compiled with ``flags`` once per profile.

    A field of *regex words* (a list) is joined with ``|``; ``transform`` rewrites the pattern
    text before compiling (``lambda s: rf"\\b(?:{s})\\b"``).

    Example:
        >>> bool(ProfileRegex("hop_cues", re.IGNORECASE).search("the fix cites the policy"))
        True
    """

    __slots__ = ("_value",)

    def __init__(self, field: str | Callable[[CorpusProfile], str | Sequence[str]], flags: int = 0,
                 transform: Callable[[str], str] | None = None) -> None:
        get = _getter(field)

        def build(p: CorpusProfile) -> re.Pattern[str]:
            raw = get(p)
            text = raw if isinstance(raw, str) else "|".join(raw)
            return re.compile(transform(text) if transform else text, flags)

        self._value: ProfileValue[re.Pattern[str]] = ProfileValue(build)

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern, for the active profile."""
        return self._value.get()

    @property
    def pattern(self) -> str:
        """The pattern text, for the active profile."""
        return self._value.get().pattern

    @property
    def flags(self) -> int:
        """The compiled pattern's flags."""
        return self._value.get().flags

    def search(self, string: str, *args: int) -> re.Match[str] | None:
        """:meth:`re.Pattern.search` of the active profile's pattern."""
        return self._value.get().search(string, *args)

    def match(self, string: str, *args: int) -> re.Match[str] | None:
        """:meth:`re.Pattern.match` of the active profile's pattern."""
        return self._value.get().match(string, *args)

    def fullmatch(self, string: str, *args: int) -> re.Match[str] | None:
        """:meth:`re.Pattern.fullmatch` of the active profile's pattern."""
        return self._value.get().fullmatch(string, *args)

    def finditer(self, string: str, *args: int) -> Iterator[re.Match[str]]:
        """:meth:`re.Pattern.finditer` of the active profile's pattern."""
        return self._value.get().finditer(string, *args)

    def findall(self, string: str, *args: int) -> list[Any]:
        """:meth:`re.Pattern.findall` of the active profile's pattern."""
        return self._value.get().findall(string, *args)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        """:meth:`re.Pattern.sub` of the active profile's pattern."""
        return self._value.get().sub(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        """:meth:`re.Pattern.split` of the active profile's pattern."""
        return self._value.get().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"ProfileRegex({self._value.get()!r})"


class ProfileSeq(Sequence[_T]):
    """A tuple computed from the active profile by ``fn`` (once per profile): indexing, slicing,
    iteration, ``len`` and ``==`` with a tuple work.

    Example:
        >>> ProfileSeq(lambda p: ("a", "b"))[-1:] == ("b",)
        True
    """

    __slots__ = ("_value",)

    def __init__(self, fn: Callable[[CorpusProfile], Iterable[_T]]) -> None:
        self._value: ProfileValue[tuple[_T, ...]] = ProfileValue(lambda p: tuple(fn(p)))

    def get(self) -> tuple[_T, ...]:
        """The tuple, for the active profile."""
        return self._value.get()

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[_T, ...]: ...

    def __getitem__(self, index: int | slice) -> _T | tuple[_T, ...]:
        return self._value.get()[index]

    def __len__(self) -> int:
        return len(self._value.get())

    def __iter__(self) -> Iterator[_T]:
        return iter(self._value.get())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ProfileSeq, tuple, list)):
            return self._value.get() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._value.get())

    def __repr__(self) -> str:
        return f"ProfileSeq({self._value.get()!r})"


class ProfileMap(Mapping[str, _V]):
    """A read-only mapping computed from the active profile by ``fn`` (a field name or a
    function), once per profile: ``[key]``, ``get``, iteration, ``items`` and ``==`` work.

    Example:
        >>> ProfileMap("authority_ranks").get("nobody", 0)
        0
    """

    __slots__ = ("_value",)

    def __init__(self, fn: str | Callable[[CorpusProfile], Mapping[str, _V]]) -> None:
        get = _getter(fn)
        self._value: ProfileValue[dict[str, _V]] = ProfileValue(lambda p: dict(get(p)))

    def get_all(self) -> dict[str, _V]:
        """The mapping, for the active profile."""
        return self._value.get()

    def __getitem__(self, key: str) -> _V:
        return self._value.get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._value.get())

    def __len__(self) -> int:
        return len(self._value.get())

    def __repr__(self) -> str:
        return f"ProfileMap({self._value.get()!r})"


class ProfileText:
    """A string computed from the active profile by ``fn`` (once per profile): ``str()``,
    ``split``, ``in`` and ``==`` with a string work.

    Example:
        >>> str(ProfileText(lambda p: "|".join(["EUR", "USD"]))).split("|")
        ['EUR', 'USD']
    """

    __slots__ = ("_value",)

    def __init__(self, fn: Callable[[CorpusProfile], str]) -> None:
        self._value: ProfileValue[str] = ProfileValue(fn)

    def __str__(self) -> str:
        return self._value.get()

    def split(self, sep: str | None = None, maxsplit: int = -1) -> list[str]:
        """:meth:`str.split` of the text, for the active profile."""
        return self._value.get().split(sep, maxsplit)

    def __contains__(self, part: str) -> bool:
        return part in self._value.get()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (str, ProfileText)):
            return self._value.get() == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._value.get())

    def __repr__(self) -> str:
        return f"ProfileText({self._value.get()!r})"
