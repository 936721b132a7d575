"""What each form of value looks like: the patterns and tables that :mod:`ragkit.text.values` reads with.

A *form* says what a value looks like (``time``, ``duration``, ``person``); :data:`FORM_KIND` maps
each to the kind (:data:`ragkit.text.normalise.VALUE_KINDS`) it is normalised and compared as, and
:data:`FORM_PATTERNS` holds the regex that finds it. Extend these tables for another domain.

Example:
    >>> FORM_KIND["person"], KIND_FORMS["text"]
    ('id', ('duration', 'percentage', 'count'))
    >>> FORM_PATTERNS["percentage"].findall("reserve 12% of 40 %")
    ['12%', '40 %']
"""

from __future__ import annotations

import re

from ragkit.text.normalise import MONTH_NUMBER
from ragkit.text.profile_views import ProfileRegex, ProfileText, ProfileWords
from ragkit.text.words import ID_VALUE_PATTERN, WEEKDAYS

__all__ = [
    "FORM_KIND",
    "FORMS",
    "KIND_FORMS",
    "CURRENCIES",
    "DURATION_QUALIFIERS",
    "written_numbers",
    "MONTH_WORDS",
    "STATUS_WORDS",
    "FORM_PATTERNS",
    "NOT_PEOPLE",
]

#: What a value looks like; each maps to the kind it is normalised and compared as.
FORM_KIND: dict[str, str] = {
    "time": "time",
    "amount": "amount",
    "date": "date",
    "id": "id",
    "person": "id",
    "status": "status",
    "duration": "text",
    "percentage": "text",
    "count": "text",
}
#: The forms of value, in the order :func:`ragkit.text.values.read_values` reads them.
FORMS = tuple(FORM_KIND)

#: The forms each kind reads by default (``text`` reads quantities written in words and digits).
KIND_FORMS: dict[str, tuple[str, ...]] = {
    "time": ("time",),
    "amount": ("amount",),
    "date": ("date",),
    "id": ("id", "person"),
    "status": ("status",),
    "text": ("duration", "percentage", "count"),
}

#: Currency codes an amount starts with (``EUR 25,000``), as one regex alternation (the profile's
#: ``currencies``).
CURRENCIES = ProfileText(lambda p: "|".join(p.currencies))
#: Month names and their abbreviations, longest first, as one regex alternation.
MONTH_WORDS = "|".join(
    sorted({m for m in MONTH_NUMBER} | {m[:3] for m in MONTH_NUMBER} | {"sept"}, key=len, reverse=True)
)
#: The words a status field holds (``Status: blocked``), as one regex alternation (the profile's
#: ``statuses``).
STATUS_WORDS = ProfileText(lambda p: "|".join(p.statuses))

#: Words that make a day or an hour a different unit ("3 business days" is not "3 days").
DURATION_QUALIFIERS = ("business", "working", "calendar")

#: Numbers written as words, and the figures they stand for ("two hours", "half an hour").
_WRITTEN = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty-five": 45,
    "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90,
}
_WRITTEN_NUMBER = re.compile(
    r"\bhalf an hour\b|\ban hour\b|\b(" + "|".join(_WRITTEN) + r")\b(?=\s+[a-z])", re.IGNORECASE
)


def written_numbers(text: str) -> str:
    """``text`` with its numbers in words as figures, so that a question's proposed "half an hour"
    or "two late days" reads as a duration or a count. (Documents are read as written: their
    boilerplate, "thirty days' notice", is rarely what is asked.)

    Example:
        >>> written_numbers("Was it picked up within half an hour, or after two hours?")
        'Was it picked up within 30 minutes, or after 2 hours?'
    """
    def figure(m: re.Match[str]) -> str:
        word = m.group(0).lower()
        return {"half an hour": "30 minutes", "an hour": "1 hour"}.get(word) or str(_WRITTEN[word])

    return _WRITTEN_NUMBER.sub(figure, text)


#: Words ending in "s" that are not plural nouns (a count is a number of something).
_NOT_PLURAL = (
    "was|has|does|goes|this|its|his|is|as|us|thus|plus|less|unless|across|towards|afterwards|always|perhaps"
)

#: What each form of :data:`FORMS` looks like in a text (``id`` is
#: :data:`ragkit.text.words.ID_VALUE_PATTERN`).
FORM_PATTERNS: dict[str, re.Pattern[str] | ProfileRegex] = {
    "time": re.compile(
        r"(?<![\d.,:-])(?:[01]?\d|2[0-3]):[0-5]\d(?![\d:])"
        r"|(?<![\d.,])(?:[01]?\d|2[0-3])\.[0-5]\d(?=\s*(?:am|pm|a\.m\.|p\.m\.|CET|CEST|UTC|GMT|h)\b)"
        r"|(?<![\d.,:])(?:1[0-2]|0?[1-9])\s*[ap](?:\.m\.|m\b)"
        r"|\b(?:noon|midday|midnight)\b",
        re.IGNORECASE,
    ),
    # the code and the figure on one line ("currency=EUR" ending a log line is no amount); a price of
    # a rate plus a fixed amount ("0.18% + EUR 0.07") is one amount
    "amount": ProfileRegex(
        "currencies",
        transform=lambda c: rf"(?:\b\d+(?:\.\d+)?\s?%\s?\+\s?)?"
                            rf"\b(?:{c})[ \t\u00a0]?\d[\d,]*(?:\.\d+)?(?![\d.]*\d)",
    ),
    "date": re.compile(
        rf"\b\d{{4}}-\d{{2}}-\d{{2}}(?!\d)"
        rf"|\b\d{{1,2}}\s+(?:{MONTH_WORDS})\.?,?\s+\d{{4}}\b"
        rf"|\b(?:{MONTH_WORDS})\.?\s+\d{{1,2}},?\s+\d{{4}}\b",
        re.IGNORECASE,
    ),
    "id": ID_VALUE_PATTERN,
    "person": re.compile(
        r"(?:(?<=\bby )|(?<=\bfrom )|(?<=: )|(?<=\bowner )|(?<=\bto ))"
        r"[A-Z][a-z]{2,}(?:-[A-Z][a-z]+)?\b(?![ -]?[A-Z]?[a-z]*\d)"
        # a table cell holds a name alone ("| Albrecht |"), not a sentence ("| Move the job |")
        r"|(?<=\| )[A-Z][a-z]{2,}(?:-[A-Z][a-z]+)?\b(?=(?:\s+[A-Z][a-z]+)?\s*\|)"
    ),
    "status": ProfileRegex("statuses", re.IGNORECASE, lambda s: rf"(?<![\w-])(?:{s})(?![\w-])"),
    # (units in lower case: "7.4 Business hours" opens a numbered clause)
    "duration": re.compile(
        rf"\b\d+(?:\.\d+)?\s*(?:(?:{'|'.join(DURATION_QUALIFIERS)}) (?:days?|hours?)|seconds?|minutes?|"
        r"hours?|days?|weeks?|months?|years?)\b",
    ),
    "percentage": re.compile(r"\b\d+(?:\.\d+)?\s?%"),
    # a number counting a plural noun, with up to two words before it ("4 attempts", "3 closed
    # batches", "2 payout files"); never a clause number ("14.3 applies"), a year or a grouped amount
    "count": re.compile(
        r"(?<![\d.,:/-])\b(?!(?:19|20)\d\d\b)\d{1,4}\s+(?:(?!(?:of|and|or|to|in|on|at|for|per|by|the|a|an)\b)[a-z][a-z-]*\s+){0,2}?"
        rf"(?!(?:{_NOT_PLURAL})\b)[a-z][a-z-]*[a-rt-z]s\b"
        r"|\b\d+\s+(?:times|tries)\b",
        re.IGNORECASE,
    ),
}

#: Capitalised words that are not people: months, weekdays and the profile's ``not_people``
#: (table headers, common labels).
NOT_PEOPLE = ProfileWords(
    lambda p: {m.capitalize() for m in MONTH_NUMBER} | {d.capitalize() for d in WEEKDAYS} | set(p.not_people)
)
