"""Whether a sentence answers the question, judged by the bundled cross-encoder.

Word overlap is a brittle judge of an answering sentence: "How many times may a failed payout
be retried?" shares no word stem with "The retry ceiling is 4 attempts", and "Who is OPS-1847
assigned to?" none with "Owner: Thorsby". A cross-encoder reads the pair together and scores
whether the sentence answers the question; the kit already ships one (the funnel's reranker,
:func:`ragkit.models.get_reranker`). :class:`SentenceFit` scores (question, sentence) pairs with
it; :data:`FITS` is the logit at and above which it says a sentence speaks to the question (0:
even odds for a model trained with a logistic loss, as the MS MARCO cross-encoders are). Given a
fit, resolution counts a value whose sentence fits even when no word of it matches
(:mod:`ragkit.evidence.relevant_values`), and reads the form of the answer from the best-fitting
sentence when the question's words name none; :func:`ragkit.evaluation.answer_fit` reads it back
for an answer, and :func:`ragkit.evaluation.abstention_curve` moves a threshold over it.

What it was measured to do (development cases only; the closing note of issue 21 has the
figures): as a *confidence*, the bundled model's logit is weak on this corpus. Right answers that
rest on terse table rows and log lines score as low as -11, and false assertions as high as +4,
so an abstention threshold on it removes right answers as fast as wrong ones. Used to *accept*
a decisive sentence the offline agent's word rules set aside, it turned honest abstentions into
false assertions. The offline policy therefore runs without it unless asked
(``OfflinePolicy(fit=True)``).

The sentence is read *situated*: after its document's title, the section heading above it and,
for a table row, the table's header (:func:`situated_sentence`), so that "| USD | 11:00 |" under
"Cutoffs" in "Acme settlement schedule" reads as Acme's cutoff. Only the asking part of a longer
message is scored (:func:`ragkit.text.asking.ask_of`).

The evaluation notebook draws the abstention curve on development paraphrases;
``bench/agent_quality.py --rows`` writes each answer's fit for a whole split.

Example:
    >>> fit = SentenceFit()
    >>> answers, lunch = fit("How quickly must customers be told about an outage?",
    ...                      ["Notify affected merchants within 90 minutes.", "Lunch is at noon."])
    >>> answers > lunch
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragkit.models.bundled import get_reranker
from ragkit.text.asking import ask_of
from ragkit.text.relevance import context

__all__ = ["FITS", "SentenceFit", "situated_sentence", "quote_fit"]

#: The cross-encoder logit at and above which a sentence speaks to the question (chosen on the
#: development split; see the module docstring).
FITS = 0.0


def situated_sentence(text: str, start: int, end: int, title: str = "") -> str:
    """The sentence ``text[start:end]`` after the document's title, its section heading and table
    header (heading marks dropped): "Payout retry policy / Retry ceiling / The retry ceiling is 4
    attempts." says what the bare sentence leaves to its place."""
    where = context(text, start).replace("#", " ")
    lines = [" ".join(part.split()) for part in (title, *where.splitlines())]
    head = [ln for n, ln in enumerate(lines) if ln and ln not in lines[:n]]
    return "\n".join([*head, " ".join(text[start:end].split())])


class SentenceFit:
    """Scores (question, sentence) pairs with a cross-encoder: higher means the sentence answers it.

    Args:
        reranker: an object with ``score(query, passages)`` (default: the bundled cross-encoder,
            loaded on first use; its scores are cached).
        threshold: the logit at and above which :meth:`fits` says yes (default :data:`FITS`).
    """

    def __init__(self, reranker: Any = None, *, threshold: float = FITS) -> None:
        self._reranker = reranker
        self.threshold = threshold

    @property
    def reranker(self) -> Any:
        """The cross-encoder in use (the bundled one unless another was given)."""
        if self._reranker is None:
            self._reranker = get_reranker()
        return self._reranker

    def __call__(self, question: str, sentences: Sequence[str]) -> list[float]:
        """The logit of each sentence for the asking part of ``question``."""
        if not sentences:
            return []
        return [float(s) for s in self.reranker.score(ask_of(question), list(sentences))]

    def fits(self, question: str, sentence: str) -> bool:
        """Whether ``sentence`` speaks to ``question`` (its logit is at least :attr:`threshold`)."""
        return self(question, [sentence])[0] >= self.threshold


def quote_fit(fit: SentenceFit, question: str, quote: str, text: str = "", title: str = "") -> float:
    """The fit of a decision's quoted sentence for ``question``, situated in ``text`` (its span) when
    the quote is found there, else read bare."""
    at = text.find(quote) if quote and text else -1
    sentence = situated_sentence(text, at, at + len(quote), title) if at >= 0 else " ".join(quote.split())
    return fit(question, [sentence])[0]
