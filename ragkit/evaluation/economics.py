"""Unit economics of the funnel: token-turns, break-even, calls per task, latency, concurrency.

CURRICULUM section 5. A *token-turn* is one token present on one model turn: evidence
delivered once is paid again on every later turn that still carries it. The functions
below are the section's arithmetic, one concept each, computed in exact decimal
arithmetic (:class:`fractions.Fraction` over the decimal text of each input), so that
``1 + 0.30 x 2`` is exactly ``1.6`` and ``25 x 2.704`` exactly ``67.6``.
:class:`CostModel` declares every parameter of the worked example once, with its default;
:meth:`CostModel.worked_example` reproduces every figure of the section.

The same quantities measured on real traces (candidate count, reranker token-units,
delivered tokens, turns each piece of evidence persists, calls per task, time to first
evidence / sufficient evidence / final answer) come from
:func:`ragkit.evaluation.costs.trace_costs` and :func:`ragkit.evaluation.costs.trace_economics`,
at p50 and p95.

Example (the section's worked example, figure by figure):
    >>> m = CostModel()
    >>> reranker_units(m.candidates, m.candidate_tokens)
    8800
    >>> delivered_tokens(m.survivors, m.section_tokens)
    2600
    >>> token_turns(2600, m.remaining_turns), token_turns(delivered_tokens(10, 700), 6)
    (15600, 42000)
    >>> calls_per_task(0.30, 2), calls_per_task(0.15, 2), relative_fall(1.6, 1.3)
    (1.6, 1.3, 0.1875)
    >>> task_latency_ms(pass_latency_ms(70, 210, 1800), 0.30)
    2704
    >>> concurrency(25, 2.704)
    67.6
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ragkit.core.errors import ValidationError

__all__ = [
    "CostModel",
    "reranker_units",
    "delivered_tokens",
    "token_turns",
    "token_turns_avoided",
    "daily_calls",
    "calls_per_task",
    "relative_fall",
    "reranking_pays",
    "break_even_turns",
    "pass_latency_ms",
    "task_latency_ms",
    "concurrency",
]

Number = int | float | Fraction


def _q(value: Any, name: str) -> Fraction:
    """Exact value of a number as written (0.3 is 3/10, not the nearest binary float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise ValidationError(f"{name}={value!r} is a {type(value).__name__}; expected a number",
                              field=name)
    if isinstance(value, float) and value != value:
        raise ValidationError(f"{name} is NaN; expected a number", field=name)
    q = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    if q < 0:
        raise ValidationError(f"{name}={value!r} is negative; costs, counts and rates are >= 0",
                              field=name)
    return q


def _out(value: Fraction) -> int | float:
    """An int when the result is whole, else the nearest float (67.6, 1.6, 0.1875)."""
    return int(value) if value.denominator == 1 else float(value)


@dataclass(frozen=True)
class CostModel:
    """Every parameter of CURRICULUM section 5's worked example, declared once.

    Attributes:
        candidates: first-stage candidates the reranker scores (40).
        candidate_tokens: tokens of one candidate chunk (220).
        survivors: reranked candidates kept and expanded (4).
        section_tokens: tokens of one expanded parent section (650).
        wide_sections: the unranked alternative: sections delivered without reranking (10).
        wide_section_tokens: tokens of one such section (700).
        remaining_turns: later turns the evidence is carried over (6).
        tasks_per_day: task volume (10,000).
        calls_per_task: retrieval calls per task (1.8).
        retrieve_ms / rerank_ms / judge_ms: one pass's stage latencies (70, 210, 1,800 ms).
        repeat_rate: share of passes followed by another pass (0.30).
        arrival_rate: tasks per second arriving, for Little's law (25).

    Example:
        >>> CostModel().worked_example()["token_turns_avoided"]
        26400
    """

    candidates: int = 40
    candidate_tokens: int = 220
    survivors: int = 4
    section_tokens: int = 650
    wide_sections: int = 10
    wide_section_tokens: int = 700
    remaining_turns: int = 6
    tasks_per_day: int = 10_000
    calls_per_task: float = 1.8
    retrieve_ms: float = 70
    rerank_ms: float = 210
    judge_ms: float = 1800
    repeat_rate: float = 0.30
    arrival_rate: float = 25

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            _q(value, name)

    def worked_example(self) -> dict[str, int | float | bool]:
        """Every figure of the section, computed from this model's parameters.

        Example:
            >>> figures = CostModel().worked_example()
            >>> figures["reranker_units_per_day"], figures["token_turns_avoided_per_day"]
            (158400000, 475200000)
            >>> figures["immediate_saving"], figures["immediate_reranking_pays"]
            (4400, False)
        """
        units = reranker_units(self.candidates, self.candidate_tokens)
        narrow = delivered_tokens(self.survivors, self.section_tokens)
        wide = delivered_tokens(self.wide_sections, self.wide_section_tokens)
        calls = daily_calls(self.tasks_per_day, self.calls_per_task)
        avoided = token_turns_avoided(wide, narrow, self.remaining_turns)
        per_pass = pass_latency_ms(self.retrieve_ms, self.rerank_ms, self.judge_ms)
        half_repeat = _out(_q(self.repeat_rate, "repeat_rate") / 2)
        slow = task_latency_ms(per_pass, self.repeat_rate)
        fast = task_latency_ms(per_pass, half_repeat)
        passes = _out(1 + _q(self.repeat_rate, "repeat_rate"))
        return {
            "reranker_units": units,
            "delivered_tokens": narrow,
            "wide_tokens": wide,
            "narrow_token_turns": token_turns(narrow, self.remaining_turns),
            "wide_token_turns": token_turns(wide, self.remaining_turns),
            "token_turns_avoided": avoided,
            "calls_per_day": calls,
            "token_turns_avoided_per_day": _out(_q(avoided, "avoided") * _q(calls, "calls")),
            "reranker_units_per_day": _out(_q(units, "units") * _q(calls, "calls")),
            "immediate_saving": token_turns_avoided(wide, narrow, 1),
            "immediate_reranking_pays": reranking_pays(wide, narrow, 1, units),
            "calls_per_task_30": calls_per_task(0.30, 2),
            "calls_per_task_15": calls_per_task(0.15, 2),
            "calls_fall": relative_fall(calls_per_task(0.30, 2), calls_per_task(0.15, 2)),
            "pass_ms": per_pass,
            "task_ms": slow,
            "task_ms_half_repeats": fast,
            "saving_half_rerank_ms": _out(_q(passes, "passes") * _q(self.rerank_ms, "rerank_ms") / 2),
            "saving_half_repeats_ms": _out(_q(slow, "slow") - _q(fast, "fast")),
            "concurrent_paths": concurrency(self.arrival_rate, _out(_q(slow, "slow") / 1000)),
            "concurrent_paths_half_repeats": concurrency(self.arrival_rate, _out(_q(fast, "fast") / 1000)),
        }


def reranker_units(candidates: Number, tokens_each: Number) -> int | float:
    """Reranker work for one call: candidates x tokens per candidate.

    Example:
        >>> reranker_units(40, 220)
        8800
    """
    return _out(_q(candidates, "candidates") * _q(tokens_each, "tokens_each"))


def delivered_tokens(sections: Number, tokens_each: Number) -> int | float:
    """Evidence tokens delivered to the model by one call: sections x tokens per section.

    Example:
        >>> delivered_tokens(4, 650), delivered_tokens(10, 700)
        (2600, 7000)
    """
    return _out(_q(sections, "sections") * _q(tokens_each, "tokens_each"))


def token_turns(tokens: Number, turns: Number) -> int | float:
    """Token-turns: tokens present on each of ``turns`` model turns.

    Example:
        >>> token_turns(2600, 6), token_turns(7000, 6)
        (15600, 42000)
    """
    return _out(_q(tokens, "tokens") * _q(turns, "turns"))


def token_turns_avoided(wide_tokens: Number, narrow_tokens: Number, turns: Number) -> int | float:
    """Main-model token-turns saved by delivering ``narrow`` instead of ``wide`` evidence.

    May be negative when the narrow delivery is larger.

    Example:
        >>> token_turns_avoided(7000, 2600, 6), token_turns_avoided(7000, 2600, 1)
        (26400, 4400)
    """
    diff = _q(wide_tokens, "wide_tokens") - _q(narrow_tokens, "narrow_tokens")
    return _out(diff * _q(turns, "turns"))


def daily_calls(tasks_per_day: Number, calls_per_task_: Number) -> int | float:
    """Retrieval calls per day: tasks x calls per task.

    Example:
        >>> daily_calls(10_000, 1.8)
        18000
    """
    return _out(_q(tasks_per_day, "tasks_per_day") * _q(calls_per_task_, "calls_per_task"))


def calls_per_task(insufficient_rate: Number, extra_calls: Number) -> int | float:
    """Expected retrieval calls per task: ``1 + insufficient_rate x extra_calls``.

    Example:
        >>> calls_per_task(0.30, 2), calls_per_task(0.15, 2)
        (1.6, 1.3)
    """
    rate = _q(insufficient_rate, "insufficient_rate")
    if rate > 1:
        raise ValidationError(f"insufficient_rate={insufficient_rate!r} is a share; use 0 to 1",
                              field="insufficient_rate")
    return _out(1 + rate * _q(extra_calls, "extra_calls"))


def relative_fall(before: Number, after: Number) -> int | float:
    """``(before - after) / before``: 1.6 -> 1.3 calls per task is an 18.75% fall.

    Example:
        >>> relative_fall(1.6, 1.3)
        0.1875
    """
    b = _q(before, "before")
    if b == 0:
        raise ValidationError("before=0: a relative change from zero is undefined", field="before")
    return _out((b - _q(after, "after")) / b)


def reranking_pays(wide_tokens: Number, narrow_tokens: Number, remaining_turns: Number,
                   reranker_work: Number, *, main_price: Number = 1, reranker_price: Number = 1) -> bool:
    """The break-even condition: does reranking cost less than the token-turns it avoids?

    ``(wide - narrow evidence tokens) x remaining turns x main-model input price
    > reranker token-units x reranker price per unit``. Prices are per token in any one
    currency unit; both default to 1 (token-units compared with token-turns). Evaluate it
    at p50 and p95 of the measured distributions, not at means.

    Example:
        >>> reranking_pays(7000, 2600, 6, 8800)    # 26,400 > 8,800
        True
        >>> reranking_pays(7000, 2600, 1, 8800)    # answering at once: 4,400 < 8,800
        False
    """
    saved = (_q(wide_tokens, "wide_tokens") - _q(narrow_tokens, "narrow_tokens")) * \
        _q(remaining_turns, "remaining_turns")
    return saved * _q(main_price, "main_price") > _q(reranker_work, "reranker_work") * \
        _q(reranker_price, "reranker_price")


def break_even_turns(wide_tokens: Number, narrow_tokens: Number, reranker_work: Number, *,
                     main_price: Number = 1, reranker_price: Number = 1) -> int | float:
    """Remaining turns above which reranking pays (the break-even condition solved for turns).

    Returns ``inf`` when narrowing saves nothing.

    Example:
        >>> break_even_turns(7000, 2600, 8800)     # 8,800 / 4,400: pays from the 3rd turn on
        2
    """
    saved = _q(wide_tokens, "wide_tokens") - _q(narrow_tokens, "narrow_tokens")
    if saved <= 0:
        return float("inf")
    cost = _q(reranker_work, "reranker_work") * _q(reranker_price, "reranker_price")
    return _out(cost / (saved * _q(main_price, "main_price")))


def pass_latency_ms(retrieve_ms: Number, rerank_ms: Number, judge_ms: Number) -> int | float:
    """One retrieval pass: retrieve + rerank + the judging model turn.

    Example:
        >>> pass_latency_ms(70, 210, 1800)
        2080
    """
    return _out(_q(retrieve_ms, "retrieve_ms") + _q(rerank_ms, "rerank_ms") + _q(judge_ms, "judge_ms"))


def task_latency_ms(pass_ms: Number, repeat_rate: Number) -> int | float:
    """Expected latency per task when a share ``repeat_rate`` of tasks needs one more pass.

    Example:
        >>> task_latency_ms(2080, 0.30), task_latency_ms(2080, 0.15)
        (2704, 2392)
    """
    return _out(_q(pass_ms, "pass_ms") * (1 + _q(repeat_rate, "repeat_rate")))


def concurrency(arrival_rate: Number, seconds_per_task: Number) -> int | float:
    """Little's law: tasks in flight = arrival rate x time each spends in the system.

    Example:
        >>> concurrency(25, 2.704), concurrency(25, 2.392)
        (67.6, 59.8)
    """
    return _out(_q(arrival_rate, "arrival_rate") * _q(seconds_per_task, "seconds_per_task"))
