"""Abstention as a threshold on the evidence: how sure the answering sentence is, and the curve it draws.

An agent that answers everything asserts falsehoods on every question the corpus cannot answer;
one that abstains too readily fails the questions it could answer. The offline agent decides with
the bundled cross-encoder whether a sentence answers the task
(:class:`ragkit.evidence.fit.SentenceFit`). :func:`answer_fit` reads that score back for a run's
decisive sentence, and :func:`abstention_curve` moves a threshold over it: at each threshold a run
whose answer's fit is below it would have abstained. The curve shows accuracy on answerable cases
against false assertions on unanswerable ones (and over-abstention), so a threshold is chosen by
looking at what it trades, on development cases only.

The curve is *post hoc*: it gates each run's final answer; a run that abstained stays abstained at
every threshold (a lower threshold inside the agent could have let it answer). It shows the
trade-off of the last gate, not of every decision the agent made on the way.

Example:
    >>> rows = [{"answerable": True, "correct": True, "abstained": False, "fit": 3.0},
    ...         {"answerable": True, "correct": False, "abstained": True, "fit": None},
    ...         {"answerable": False, "correct": False, "abstained": False, "fit": -1.0}]
    >>> [(p["threshold"], p["accuracy"], p["false_assertions"]) for p in abstention_curve(rows, [-2, 0])]
    [(-2, 0.5, 1.0), (0, 0.5, 0.0)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragkit.evidence.fit import SentenceFit, quote_fit

__all__ = ["answer_fit", "abstention_curve"]


def answer_fit(result: Any, fit: SentenceFit) -> float | None:
    """The fit of ``result``'s decisive sentence, situated in its delivered evidence (``None``: no answer).

    Args:
        result: an :class:`ragkit.agent.AgentResult` (or anything with ``task``, ``abstained``,
            ``record`` and ``delivered``).
        fit: the :class:`ragkit.evidence.fit.SentenceFit` to score with.
    """
    record = getattr(result, "record", None)
    decision = getattr(record, "decision", None)
    if getattr(result, "abstained", True) or decision is None:
        return None
    quote = str(decision.quote or decision.surface or "")
    for ev in getattr(result, "delivered", []):
        if ev.doc_id == decision.doc_id and quote and quote in ev.text:
            return quote_fit(fit, str(result.task), quote, ev.text, ev.envelope.title)
    return quote_fit(fit, str(result.task), quote) if quote else None


def abstention_curve(rows: Iterable[Mapping[str, Any]], thresholds: Sequence[float]) -> list[dict[str, Any]]:
    """Accuracy, false assertions and over-abstention at each threshold on the answer's fit.

    Args:
        rows: one mapping per case with ``answerable``, ``correct`` (the answer was right),
            ``abstained`` and ``fit`` (:func:`answer_fit`; ``None`` when it abstained).
        thresholds: the logits to try.

    Returns:
        one dict per threshold: ``threshold``; ``accuracy`` (answerable cases answered right with
        a fit at or above it); ``false_assertions`` (unanswerable cases answered with such a fit);
        ``over_abstention`` (answerable cases not answered at that threshold); and the counts
        ``answerable`` and ``unanswerable``. A rate over no cases is ``nan``.
    """
    rows = list(rows)
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]

    def kept(r: Mapping[str, Any], t: float) -> bool:
        return not r["abstained"] and r.get("fit") is not None and float(r["fit"]) >= t

    def rate(n: int, d: int) -> float:
        return n / d if d else float("nan")

    return [
        {
            "threshold": t,
            "accuracy": rate(sum(1 for r in ans if r["correct"] and kept(r, t)), len(ans)),
            "false_assertions": rate(sum(1 for r in una if kept(r, t)), len(una)),
            "over_abstention": rate(sum(1 for r in ans if not kept(r, t)), len(ans)),
            "answerable": len(ans),
            "unanswerable": len(una),
        }
        for t in thresholds
    ]
