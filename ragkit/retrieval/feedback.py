"""RM3 pseudo-relevance feedback: expand a query with the terms of its best first-pass rows.

:class:`Feedback` holds the settings; :func:`rm3_weights` turns a first pass (its best rows, and
the terms of each) into the weighted query that a second BM25 pass scores.
:class:`~ragkit.retrieval.segmented.SegmentedBM25` runs both passes, reading only rows inside
the caller's mask.

Example:
    >>> from ragkit.retrieval.fusion import Ranking
    >>> rows = {0: (["ledger", "audit", "trail"], np.array([1.0, 1.0, 1.0]))}
    >>> weights = rm3_weights(["ledger"], Ranking([0], [2.0]), rows.__getitem__,
    ...                       Feedback(docs=1, terms=3, orig_weight=0.5))
    >>> {t: round(w, 4) for t, w in sorted(weights.items())}
    {'audit': 0.1667, 'ledger': 0.6667, 'trail': 0.1667}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragkit.core.errors import ValidationError
from ragkit.retrieval.fusion import Ranking

__all__ = ["Feedback", "RowTerms", "rm3_weights"]


@dataclass(frozen=True)
class Feedback:
    """RM3 pseudo-relevance feedback for :class:`SegmentedBM25` (``retriever.feedback = Feedback()``).

    After a first BM25 pass, the ``docs`` best rows (inside the caller's mask; never any other
    row) give a relevance model: ``p(t|R) = sum_d w_d * tf(t, d) / len(d)`` with ``w_d`` the
    row's first-pass score divided by the sum of the ``docs`` scores. Its ``terms`` most likely
    terms (ties: alphabetical; tokens of one character are skipped), renormalised to sum 1, are
    mixed with the query's own term distribution ``q(t) = count / len(query tokens)`` as
    ``orig_weight * q(t) + (1 - orig_weight) * p(t|R)``, scaled by ``len(query tokens)`` (so
    with ``orig_weight=1`` the query is scored exactly as without feedback), and the weighted
    query is scored in a second BM25 pass (a term's BM25 contribution times its weight).

    Reference: Lavrenko and Croft, "Relevance-Based Language Models", SIGIR 2001; RM3 as in
    Anserini (Lin et al., "Anserini", 2017), whose defaults are ``docs=10, terms=10,
    orig_weight=0.5``.

    :func:`rm3_weights` computes the weighted query from the first pass's best rows.

    Raises:
        ValidationError: ``docs`` or ``terms`` not an int >= 1, ``orig_weight`` outside [0, 1].

    Example:
        >>> Feedback(docs=5, terms=20, orig_weight=0.7)
        Feedback(docs=5, terms=20, orig_weight=0.7)
    """

    docs: int = 10
    terms: int = 10
    orig_weight: float = 0.5

    def __post_init__(self) -> None:
        for name in ("docs", "terms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValidationError(f"Feedback: {name}={value!r}; expected an int >= 1 (use "
                                      "retriever.feedback = None to turn feedback off)", field=name)
        w = self.orig_weight
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0.0 <= float(w) <= 1.0:
            raise ValidationError(f"Feedback: orig_weight={w!r}; expected a number in [0, 1] (the weight "
                                  "of the original query; 1 keeps it unexpanded)", field="orig_weight")
        object.__setattr__(self, "orig_weight", float(w))


#: ``row -> (terms, counts)``: the analysed terms of one row and how often each occurs.
RowTerms = Callable[[int], tuple[Sequence[str], np.ndarray]]


def rm3_weights(tokens: Sequence[str], top: Ranking, row_terms: RowTerms, fb: Feedback) -> dict[str, float]:
    """The weighted query of RM3 (see :class:`Feedback`): ``{token: weight}``, zero weights dropped.

    Args:
        tokens: the query's analysed tokens.
        top: the first pass's best ``fb.docs`` rows with their scores (only rows the caller
            may read).
        row_terms: ``row -> (terms, counts)`` of one row of ``top``.
        fb: the feedback settings.

    Returns:
        The query's own tokens weighted ``orig_weight * count``, plus the relevance model's
        ``fb.terms`` best terms; with no positive first-pass score or ``orig_weight == 1``,
        the query's tokens alone.
    """
    counts = Counter(tokens)
    n_tokens = sum(counts.values())
    weights = {t: fb.orig_weight * c for t, c in counts.items()}
    total = sum(top.scores)
    if not top.ids or total <= 0 or fb.orig_weight == 1.0:
        return {t: float(w) for t, w in weights.items()}
    model: dict[str, float] = {}
    for row, score in zip(top.ids, top.scores, strict=True):
        terms, tfs = row_terms(row)
        length = float(tfs.sum())
        if not length:
            continue
        w = score / total / length
        for term, tf in zip(terms, tfs.tolist(), strict=True):
            model[term] = model.get(term, 0.0) + w * tf
    kept = sorted((t for t in model if len(t) > 1), key=lambda t: (-model[t], t))[: fb.terms]
    mass = sum(model[t] for t in kept)
    for t in kept:
        weights[t] = weights.get(t, 0.0) + (1.0 - fb.orig_weight) * n_tokens * model[t] / mass
    return {t: float(w) for t, w in weights.items() if w > 0}
