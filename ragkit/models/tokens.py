"""Token counting with a real tokenizer, for budgets and token-turn economics.

Counts use the bundled embedder's WordPiece tokenizer (``tokenizers``, no torch):
real tokens, not a words-times-a-constant guess. Hosted LLMs tokenise
differently (BPE); expect their counts within about 10-20% of these for English
prose. Special tokens are not counted.

Example:
    >>> count_tokens("EUR batches close at 15:00.")   # doctest: +SKIP
    9
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ragkit.models.files import bundled_embedder_path

__all__ = ["count_tokens", "count_tokens_batch", "truncate_to_tokens", "known_word"]


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(bundled_embedder_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    """Number of tokens in ``text`` (no special tokens)."""
    return len(_tokenizer().encode(text, add_special_tokens=False).ids) if text else 0


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    """Token counts for many texts at once (fast, batched)."""
    if not texts:
        return []
    encs = _tokenizer().encode_batch(list(texts), add_special_tokens=False)
    return [len(e.ids) for e in encs]


def truncate_to_tokens(text: str, budget: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``budget`` tokens at a token boundary.

    Returns:
        ``(text, truncated)``: the (possibly) shortened text, a prefix of the input, and
        whether anything was cut.
    """
    if budget <= 0:
        return "", bool(text)
    enc = _tokenizer().encode(text, add_special_tokens=False)
    if len(enc.ids) <= budget:
        return text, False
    end = enc.offsets[budget - 1][1]
    return text[:end], True


@lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    return frozenset(w for w in _tokenizer().get_vocab() if w.isalpha())


def known_word(word: str) -> bool:
    """Whether the bundled tokenizer's vocabulary holds ``word`` whole (lower case): an English word
    or name common enough to have a token of its own ("clause", "commander"), not a misspelling
    ("comander") nor a rare name. Each part of a hyphenated word must be known.

    Example:
        >>> known_word("clause"), known_word("comander"), known_word("fail-over")
        (True, False, True)
    """
    parts = [p for p in word.lower().split("-") if p]
    return bool(parts) and all(p in _vocabulary() for p in parts)
