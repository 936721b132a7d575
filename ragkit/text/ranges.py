"""Bands: a figure the question names, read against the ranges a sentence states.

A schedule states one answer per band ("Tier 5 | 10,001 to 25,000 | head of operations",
"Tier 6 | 25,001 to 50,000 | ..."). Asked "who may grant a EUR 30,000 credit?", the answer is the
row whose band holds 30,000, whatever words the other rows share with the question.
:func:`in_band` says whether a sentence's band holds a figure the question names: ``True`` (it
does), ``False`` (it states a band, and no figure of the question falls in it) or ``None`` (the
sentence states no band, or the question names no figure). A period is a band too: a table row
for one month (:func:`other_month`) does not answer a question about another. A point figure (a
time of day, a rate) that a question looks a record up by is a key: only a sentence that states
it (:func:`states_point`) is about the instance asked.

Example:
    >>> q = "Who may grant a EUR 30,000 goodwill credit?"
    >>> in_band(q, "Tier 6 | 25,001 to 50,000 | head of operations")
    True
    >>> in_band(q, "Tier 5 | 10,001 to 25,000 | head of operations")
    False
    >>> in_band(q, "Credits are logged daily."), in_band("Who grants credits?", "Tier 6 | 25,001 to 50,000 |")
    (None, None)
    >>> other_month("On-time payouts in February 2026?", "| January | 748,000 | 99.79% |")
    True
    >>> other_month("On-time payout % for Feb?", "| February | 323,000 | 99.69% |")
    False
"""

from __future__ import annotations

import datetime as dt
import re

from ragkit.text.normalise import MONTH_NUMBER
from ragkit.text.values import read_values

__all__ = [
    "figures", "bands", "in_band", "other_month", "asked_period", "MONTH_NAMES", "month_number",
    "point_figures", "states_point",
]

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# "25,001 to 50,000", "25,001 - 50,000", "25,001–50,000" (not a date, a time or a clause number)
_BAND = re.compile(
    rf"(?<![\w:./-])({_NUMBER})\s*(?:\s(?:to|through)\s|\s-\s|–|—)\s*(?:[A-Z]{{3}}\s?)?({_NUMBER})(?![\w:/.-])"
)
# "above 50,000", "up to 10,000" (one-sided bands)
_CODE = r"(?:[A-Z]{3}\s?)?"  # a currency code before the figure
_ABOVE = re.compile(rf"\b(?:above|over|more than|from|at least)\s+{_CODE}({_NUMBER})(?![\w:/.-])", re.I)
_BELOW = re.compile(rf"\b(?:up to|below|under|less than|at most)\s+{_CODE}({_NUMBER})(?![\w:/.-])", re.I)
# a figure the question names: a grouped number or an amount (not a time, a date or an identifier)
_FIGURE = re.compile(
    rf"(?<![\w:./-])(\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d{{4,}})(?![\w:/.-])|(?:\b[A-Z]{{3}}\s?)({_NUMBER})\b"
)


def _value(text: str) -> float:
    return float(text.replace(",", ""))


def figures(question: str) -> list[float]:
    """The figures ``question`` names (amounts, grouped numbers): ``EUR 30,000`` -> ``[30000.0]``."""
    out = []
    for m in _FIGURE.finditer(question):
        raw = m.group(1) or m.group(2)
        if raw and not re.fullmatch(r"(19|20)\d\d", raw):  # a year is no figure
            out.append(_value(raw))
    return out


def bands(sentence: str) -> list[tuple[float, float]]:
    """The bands ``sentence`` states, as ``(low, high)`` (one-sided bands open on one side)."""
    found = [(_value(a), _value(b)) for a, b in _BAND.findall(sentence)]
    if not found:
        found = [(_value(a), float("inf")) for a in _ABOVE.findall(sentence)]
        found += [(float("-inf"), _value(b)) for b in _BELOW.findall(sentence)]
    return [(lo, hi) for lo, hi in found if lo <= hi]


def in_band(question: str, sentence: str) -> bool | None:
    """Whether a band ``sentence`` states holds a figure ``question`` names (module docstring)."""
    asked = figures(question)
    stated = bands(sentence) if asked else []
    if not stated:
        return None
    return any(lo <= x <= hi for x in asked for lo, hi in stated)


def other_month(question: str, row: str) -> bool:
    """Whether a table ``row`` is labelled with a month (its first cell) that the question, which
    names a month, does not name: "| January | ... |" does not answer a question about February."""
    cells = [c.strip().lower() for c in row.strip().strip("|").split("|")]
    label = _month(cells[0].split()[0]) if cells and cells[0] else None
    words = re.findall(r"[A-Za-z]+", question)  # (the modal "may" is no month: "May" inside a sentence is)
    asked = {m for i, w in enumerate(words) if (m := _month(w.lower())) and (m != "may" or w == "May" and i)}
    return label is not None and bool(asked) and label not in asked


def _month(word: str) -> str | None:
    """The month ``word`` names, written out or cut to three letters ("Feb"), else ``None``."""
    return next((m for m in MONTH_NUMBER if word in (m, m[:3]) or word == "sept" == m[:4]), None)


#: A month written out or cut to three letters, capitalised ("August", "Aug"; not the modal "may"):
#: a regex alternation.
MONTH_NAMES = "|".join([m.capitalize() for m in MONTH_NUMBER] + [m[:3].capitalize() for m in MONTH_NUMBER])
# a quarter: "Q3 2026", "the third quarter of 2026"
_QUARTER = re.compile(r"\bQ([1-4])\b(?:\s+(\d{4}))?|"
                      r"\b(first|second|third|fourth)\s+quarter(?:\s+of)?(?:\s+(\d{4}))?", re.IGNORECASE)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}


def asked_period(task: str, as_of: dt.datetime | None) -> tuple[str, str] | None:
    """The months a task asks about, as ISO dates ``(first day, day after)``: a month ("in August
    2026"), a range of months ("from July to September") or a quarter ("Q3 2026"); a year left out
    is the last one that had them by ``as_of``; ``None`` when it names none.

    Example:
        >>> import datetime as dt
        >>> asked_period("Late days in Q3 2026?", None), asked_period("In June?", dt.datetime(2026, 5, 1))
        (('2026-07-01', '2026-10-01'), ('2025-06-01', '2025-07-01'))
        >>> asked_period("From July to September 2026", None)
        ('2026-07-01', '2026-10-01')
    """
    q = _QUARTER.search(task)
    quarter = int(q.group(1) or _ORDINAL[q.group(3).lower()]) if q else 0
    months = [(3 * quarter - 2, q.group(2) or q.group(4))] if q else []
    if not months:
        found = list(re.finditer(rf"\b({MONTH_NAMES})\b\.?(?:,?\s+(\d{{4}}))?", task))
        if not found:
            return None
        months = [(month_number(found[0].group(1)), found[0].group(2))]
        between = task[found[0].end():found[1].start()] if len(found) > 1 else ""
        if re.fullmatch(r"\s*(?:to|and|through|until|till|-|\u2013)\s*", between):
            months.append((month_number(found[1].group(1)), found[1].group(2)))  # "from July to September"
    first, year_named = months[0]
    last = months[-1][0] if len(months) > 1 else first + (2 if q else 0)
    if year_named or months[-1][1]:
        year = int(year_named or months[-1][1])
    elif as_of is not None:
        year = as_of.year if last <= as_of.month else as_of.year - 1
    else:
        return None
    start = dt.date(year, first, 1)
    end = dt.date(year + (last == 12), last % 12 + 1, 1)
    return start.isoformat(), end.isoformat()


def month_number(word: str) -> int:
    """The number of the month ``word`` names ("Aug": 8); ``word`` must name one (:data:`MONTH_NAMES`).

    Example:
        >>> month_number("Aug"), month_number("September")
        (8, 9)
    """
    return MONTH_NUMBER[_month(word.lower()) or ""]


#: Forms of figures that name one point (a time of day, a rate), not a band or a limit.
POINT_FORMS = ("time", "percentage")


def point_figures(text: str) -> dict[str, set[str]]:
    """The point figures ``text`` states, by form: ``{"time": {"10:00"}}`` for "... due by 10:00?"."""
    out: dict[str, set[str]] = {}
    for v in read_values(text, forms=POINT_FORMS):
        out.setdefault(v.form, set()).add(v.value)
    return out


def states_point(sentence: str, keys: dict[str, set[str]]) -> bool:
    """Whether ``sentence`` states one of the point figures ``keys`` (by form) a question looks up by.

    Example:
        >>> states_point("Reports reach finance by 07:45 CET.", {"time": {"10:00"}})
        False
        >>> states_point("Reports reach finance by 10:00 CET.", {"time": {"10:00"}})
        True
    """
    stated = point_figures(sentence)
    return any(stated.get(form, set()) & values for form, values in keys.items())
