"""Contrasts: a sentence that swaps the question's phrase for a sibling's ("disputes team" for
"treasury team") states a neighbouring fact, not the answer.

Used by resolution (:mod:`ragkit.evidence.relevant_values`) beside the relevance rules of
:mod:`ragkit.text.relevance`: the same head word with another modifier is another thing. Small,
documented word rules, nothing of one corpus.

Example:
    >>> s = "Questions from Hooli's disputes team are answered within 6 business hours."
    >>> contrasting("How fast do we answer Hooli's treasury team?", s, s)
    'treasury team'
"""

from __future__ import annotations

import re

from ragkit.text.words import (
    ID_VALUE_PATTERN,
    QUESTION_STOPWORDS,
    RATING_WORDS,
    TASK_STOPWORDS,
    compound_stems,
    stem,
)

__all__ = ["contrasting"]

_WORD = re.compile(r"[a-z][a-z]+(?:-[a-z]+)*")
# a word after a modal or "to" is a verb ("may exceed the retention period"), not a modifier
_VERB_BEFORE = frozenset("may must can shall will should would could to not never does did do".split())
# what opens a noun phrase, before its modifier ("the *daily* deadline")
_DETERMINERS = frozenset("the a an our their its your my his her this that these those".split())


def _pairs(text: str, *, in_noun_phrase: bool = False) -> list[tuple[str, str]]:
    """Adjacent (modifier, head) pairs of words in one phrase, lower case: no punctuation between
    them, no possessive modifier ("platform's retention" is an owner, not a kind of retention) and
    no modifier in a verb's place. ``in_noun_phrase``: only modifiers that follow a determiner or
    an owner's name ("the *daily* deadline", "Hooli's *treasury* team")."""
    out = []
    # (an identifier, "wayne-99306", names one thing: it is no modifier and ends the phrase)
    parts = re.split(r"([^\w\s'-]+|'s\b)", ID_VALUE_PATTERN.sub(",", text).lower())
    for k in range(0, len(parts), 2):
        words = _WORD.findall(parts[k])
        owned = k > 0 and parts[k - 1] == "'s"  # a phrase after "'s" starts with what is owned
        for n in range(1, len(words)):
            if n >= 2 and words[n - 2] in _VERB_BEFORE:
                continue
            # (also the last of two modifiers: "the daily *cash* report", "Hooli's daily *treasury* team")
            opens = (words[n - 2] in _DETERMINERS if n >= 2 else owned) or (
                words[n - 3] in _DETERMINERS if n >= 3 else n == 2 and owned)
            if in_noun_phrase and not opens:
                continue
            out.append((words[n - 1], words[n]))
    return out


# function words the stop lists leave in (they are no modifiers: "within business days")
_FUNCTION = frozenset(
    "many much more most less least within both either neither ours yours theirs long often".split()
)


def _content(word: str) -> bool:
    return (
        len(word) >= 4
        and word not in TASK_STOPWORDS
        and word not in QUESTION_STOPWORDS
        and word not in _FUNCTION
    )


def _proper(sentence: str, word: str, opener: int) -> bool:
    """Whether ``word`` is capitalised in ``sentence`` somewhere other than its first word (a name)."""
    return any(
        m.start() != opener
        for m in re.finditer(rf"(?<![\w-]){re.escape(word.capitalize())}(?![\w-])", sentence)
    )


def contrasting(question: str, sentence: str, situated: str) -> str | None:
    """The question's phrase that ``sentence`` swaps for a sibling's, or ``None``.

    A sentence that says "disputes team" where the question asks about the "treasury team" (and
    never names the treasury) states a neighbouring fact: the same head word with another
    modifier. Codes are judged elsewhere (:data:`ragkit.text.relevance.CODE`); modifiers that
    rate rather than tell apart ("current", "maximum") never contrast.

    Example:
        >>> s = "Questions from Hooli's disputes team are answered within 6 business hours."
        >>> contrasting("How fast do we answer Hooli's treasury team?", s, s)
        'treasury team'
        >>> contrasting("How fast do we answer Hooli's disputes team?", s, s) is None
        True
        >>> contrasting("Do we answer Hooli's finance team as fast as its disputes team?", s, s) is None
        True
        >>> r = "Initech's exceptions report must reach their finance team by 08:00 CET."
        >>> contrasting("By what time must the daily cash report be checked?", r, r)
        'cash report'
        >>> c = "Either party may terminate if the other party commits a material breach."
        >>> contrasting("If the bank that holds wayne-99306 commits a breach, can we end it?", c, c)
    """
    have = compound_stems(situated)
    found: dict[str, set[str]] = {}
    opener = re.search(r"[A-Za-z]+", sentence)
    for mod, head in _pairs(sentence):
        if _proper(sentence, mod, opener.start() if opener else 0):
            continue  # "Solent Bank" names one bank; it is no kind of bank beside "the receiving bank"
        if _content(mod) and _content(head) and mod not in RATING_WORDS:
            found.setdefault(head.removesuffix("s"), set()).add(stem(mod))
    asked = [(m, h) for m, h in _pairs(question, in_noun_phrase=True)
             if _content(m) and _content(h) and m not in RATING_WORDS]
    # the question's own kinds of that noun: "the finance team, the same as the disputes team?"
    # names both teams, and a sentence about either states one of them
    kinds = {h.removesuffix("s"): {stem(m) for m, x in asked if x == h} for _, h in asked}
    for mod, head in asked:
        others = found.get(head.removesuffix("s"))  # the same noun ("team"), not a kin ("confirms")
        if others and not others & kinds[head.removesuffix("s")] and not (compound_stems(mod) & have):
            return f"{mod} {head}"
    return None
