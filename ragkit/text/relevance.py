"""Relevance: which sentences and values of a span speak to a question (used by resolution).

Small, documented text rules, not a model: content-word stems of a question
(:func:`question_terms`), the context that situates a sentence (its section heading and, for a
table row, the table header: :func:`context`), whether a text names a word (:func:`mentions`),
the month a question places its event in (:func:`named_month`), the event a condition waits
for (:func:`condition_event`), and the cue patterns for causal, deontic and completion
statements. Extend the patterns for another domain or language.

Example:
    >>> sorted(question_terms("Which settlement cutoff applies to Acme's Monday EUR batch?"))
    ['acme', 'batch', 'cutof', 'eur', 'settl']
    >>> condition_event("until cutover"), condition_event("for non-migrated tenants")
    ('cutov', 'migra')
    >>> named_month("initech-32644 had an issue in September 2025. What is the ticket key?")
    (2025, 9)
"""

from __future__ import annotations

import re

from ragkit.text.normalise import MONTH_NUMBER
from ragkit.text.profile_views import ProfileRegex, ProfileWords
from ragkit.text.words import QUESTION_STOPWORDS, WEEKDAYS, stem

__all__ = [
    "MONTH_NAMES",
    "COMPLETED",
    "CONDITION",
    "CAUSAL_QUESTION",
    "CAUSE",
    "DETECTION",
    "ROOT_CAUSE",
    "DEONTIC_QUESTION",
    "DEONTIC",
    "CODE",
    "NOT_CODES",
    "question_terms",
    "context",
    "is_heading_or_table_head",
    "mentions",
    "named_month",
    "condition_event",
]


def question_terms(text: str) -> set[str]:
    """Content-word stems of ``text`` (5-letter prefixes; no stop words, months, weekdays, numbers).

    Example:
        >>> sorted(question_terms("Which settlement cutoff applies to Acme's Monday EUR batch?"))
        ['acme', 'batch', 'cutof', 'eur', 'settl']
    """
    out = set()
    for w in re.findall(r"[a-z][a-z0-9_-]*", text.lower().replace("'s", "")):
        w = w.strip("-_")
        if (len(w) < 3 or w in QUESTION_STOPWORDS or w in MONTH_NUMBER
                or (w[:3] in {m[:3] for m in MONTH_NUMBER} and len(w) <= 4)):
            continue
        if w in WEEKDAYS:
            continue
        out.add(stem(w))
    return out


#: A sentence says something was completed (the profile's ``completion_cues``).
COMPLETED = ProfileRegex("completion_cues", re.IGNORECASE)
#: A condition's event, in group ``event`` (``until cutover``; the profile's ``condition_grammar``).
CONDITION = ProfileRegex("condition_grammar", re.IGNORECASE)
#: A question asks why (the profile's ``causal_question``).
CAUSAL_QUESTION = ProfileRegex("causal_question", re.IGNORECASE)
#: A sentence states a cause (the profile's ``cause_cues``).
CAUSE = ProfileRegex("cause_cues", re.IGNORECASE)

CODE = re.compile(r"(?<![\w-])[A-Z]{3}(?![\w-])")
#: Upper-case words that are not codes of things a question can be about (time zones, clock
#: words; the profile's ``not_codes``).
NOT_CODES = ProfileWords("not_codes")
#: "... which is how they spotted it" says how a problem was found, not what caused it
#: (the profile's ``detection_cues``).
DETECTION = ProfileRegex("detection_cues", re.IGNORECASE)
#: A question asks what is required (the profile's ``deontic_question``).
DEONTIC_QUESTION = ProfileRegex("deontic_question", re.IGNORECASE)
#: A sentence states an obligation (the profile's ``deontic_cues``).
DEONTIC = ProfileRegex("deontic_cues", re.IGNORECASE)
#: A sentence names the root cause (the profile's ``root_cause_cues``).
ROOT_CAUSE = ProfileRegex("root_cause_cues", re.IGNORECASE)

MONTH_NAMES = sorted(MONTH_NUMBER, key=MONTH_NUMBER.__getitem__)


def named_month(question: str) -> tuple[int, int] | None:
    """``(year, month)`` when the question places its event in a month: "in September 2025"."""
    m = re.search(r"\bin\s+(" + "|".join(MONTH_NAMES) + r")\s+(\d{4})\b", question, re.IGNORECASE)
    return (int(m.group(2)), MONTH_NUMBER[m.group(1).lower()]) if m else None


def condition_event(condition: str) -> str | None:
    """``"until cutover"`` -> ``"cutov"``; ``"for non-migrated tenants"`` -> ``"migra"``."""
    m = CONDITION.match(condition)
    return stem(m.group("event").lower()) if m else None


def context(text: str, position: int) -> str:
    """What situates a sentence: the span's first heading and, for a table row, the table's header row."""
    lines = text.splitlines()
    heading = next((ln for ln in lines if ln.lstrip().startswith("#")), "")
    line_start = text.rfind("\n", 0, position) + 1
    if not text[line_start:].lstrip().startswith("|"):
        return heading
    head, pos = "", line_start
    while pos > 0:
        prev = text.rfind("\n", 0, pos - 1) + 1
        if not text[prev:pos].lstrip().startswith("|"):
            break
        head, pos = text[prev:pos], prev
    return heading + "\n" + head


def is_heading_or_table_head(text: str, a: int, b: int) -> bool:
    """A Markdown heading, a table's separator row, or the header row just above one."""
    line = text[a:b].strip()
    if line.startswith("#") or re.fullmatch(r"\|?[\s:|-]*-{3,}[\s:|-]*", line):
        return True
    rest = text[b:].lstrip("\r\n").split("\n", 1)[0].strip()
    return line.startswith("|") and re.fullmatch(r"\|?[\s:|-]*-{3,}[\s:|-]*", rest) is not None


def mentions(text: str, word: str) -> bool:
    """Whether ``text`` names ``word`` as a whole word (any case; ``-`` joins words).

    Example:
        >>> mentions("Cutover completed for Acme.", "acme"), mentions("acme-9 failed", "acme")
        (True, False)
    """
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE) is not None
