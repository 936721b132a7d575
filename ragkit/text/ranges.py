"""Bands: a figure the question names, read against the ranges a sentence states.

A schedule states one answer per band ("Tier 5 | 10,001 to 25,000 | head of operations",
"Tier 6 | 25,001 to 50,000 | ..."). Asked "who may grant a EUR 30,000 credit?", the answer is the
row whose band holds 30,000, whatever words the other rows share with the question.
:func:`in_band` says whether a sentence's band holds a figure the question names: ``True`` (it
does), ``False`` (it states a band, and no figure of the question falls in it) or ``None`` (the
sentence states no band, or the question names no figure). A period is a band too: a table row
for one month (:func:`other_month`) does not answer a question about another.

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

import re

from ragkit.text.normalise import MONTH_NUMBER

__all__ = ["figures", "bands", "in_band", "other_month"]

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
