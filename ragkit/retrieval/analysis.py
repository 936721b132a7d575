"""Text analysis for BM25: identifier-preserving tokens, the stemmer and the stop words.

Dense retrieval misses exact strings with no semantic neighbourhood: error codes
(``E-4471``), account ids (``acme-9``), function names (``reconcile_settlement``).
:func:`tokenize` therefore keeps each identifier whole, lower-cased, *and* emits
its parts, while plain words are stopworded and stemmed as configured (PyStemmer's
Snowball stemmers; the 33 Lucene English stop words as shipped by bm25s).

These are the lexical retriever's rules, for scoring; the text layer's word rules for
reading tasks live in :mod:`ragkit.text.words`.

Example:
    >>> tokenize("E-4471 on 2026-01-15", stemmer=None, stopwords=None)
    ['e-4471', 'e', '4471', 'on', '2026-01-15', '2026', '01', '15']
    >>> analyse("Settlements failed", stemmer_for("english"), stopword_set("en"))
    ['settlement', 'fail']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from ragkit.core.errors import ValidationError

__all__ = ["tokenize", "analyse", "stemmer_for", "stopword_set"]

# A word, or words joined by - _ . / : with no space (E-4471, acme-9, 2026-01-15, a.b/c).
_TOKEN_RE = re.compile(r"\w+(?:[-./:]\w+)*")
_SEPARATOR_RE = re.compile(r"[-_./:]+")


def tokenize(
    text: str,
    *,
    stemmer: str | None = "english",
    stopwords: str | Iterable[str] | None = "en",
) -> list[str]:
    """Split text into BM25 tokens, keeping identifiers findable by exact query.

    A run of word characters joined by ``- _ . / :`` (no spaces) is an
    identifier: it is emitted whole, lower-cased and unstemmed, followed by its
    parts treated as plain words. Plain words are lower-cased, dropped if they
    are stopwords, then stemmed.

    Args:
        text: the text to split.
        stemmer: a PyStemmer language (``"english"``) or ``None`` for no stemming.
        stopwords: ``"en"`` (the 33 Lucene English stopwords), your own word list,
            or ``None`` to keep every word.

    Returns:
        Tokens in text order (a bag of words for BM25).

    Example:
        >>> tokenize("The acme-9 job failed at reconcile_settlement")
        ['acme-9', 'acm', '9', 'job', 'fail', 'reconcile_settlement', 'reconcil', 'settlement']
        >>> tokenize("E-4471 on 2026-01-15", stemmer=None, stopwords=None)
        ['e-4471', 'e', '4471', 'on', '2026-01-15', '2026', '01', '15']
    """
    return analyse(text, stemmer_for(stemmer), stopword_set(stopwords))


def analyse(text: str, stem: Callable[[str], str] | None, stop: frozenset[str]) -> list[str]:
    """:func:`tokenize` with a loaded stemmer (or ``None``) and a stop-word set: what retrievers call.

    Raises:
        ValidationError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise ValidationError(
            f"tokenize: got {type(text).__name__} {text!r:.60}; expected a str", field="text"
        )
    tokens: list[str] = []

    def add_word(word: str) -> None:
        if word not in stop:
            tokens.append(stem(word) if stem else word)

    for match in _TOKEN_RE.findall(text.lower()):
        if _SEPARATOR_RE.search(match):
            tokens.append(match)
            for part in _SEPARATOR_RE.split(match):
                if part:
                    add_word(part)
        else:
            add_word(match)
    return tokens


def stemmer_for(language: str | None) -> Callable[[str], str] | None:
    """PyStemmer's ``stemWord`` for ``language`` (loaded once), or ``None`` for no stemming.

    Raises:
        ValidationError: ``language`` is not a str or not a PyStemmer language.
    """
    if language is None:
        return None
    if not isinstance(language, str):
        raise ValidationError(
            f"stemmer={language!r} is a {type(language).__name__}; expected a language name "
            "such as 'english', or None for no stemming",
            field="stemmer",
        )
    return _load_stemmer(language)


@lru_cache(maxsize=8)
def _load_stemmer(language: str) -> Callable[[str], str]:
    import Stemmer

    if language not in Stemmer.algorithms():
        raise ValidationError(
            f"stemmer={language!r} is not a PyStemmer language; use None (no stemming) "
            f"or one of {sorted(Stemmer.algorithms())}",
            field="stemmer",
        )
    return Stemmer.Stemmer(language).stemWord


def stopword_set(stopwords: str | Iterable[str] | None) -> frozenset[str]:
    """The stop words to drop: ``"en"`` (Lucene's 33 English words), your own list (lower-cased), or none.

    Raises:
        ValidationError: a string other than ``"en"``.
    """
    if stopwords is None:
        return frozenset()
    if isinstance(stopwords, str):
        if stopwords != "en":
            raise ValidationError(
                f"stopwords={stopwords!r} is unknown; use 'en', a list of words, or None",
                field="stopwords",
            )
        return _english_stopwords()
    return frozenset(w.lower() for w in stopwords)


#: bm25s' English stop words (the Lucene/Elasticsearch list), written out so that opening an index
#: does not import bm25s and numba (about 0.25 s) just to read 33 words; ``tests/test_lexical.py``
#: checks that the two lists stay equal.
STOPWORDS_EN = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with".split())


def _english_stopwords() -> frozenset[str]:
    return STOPWORDS_EN
