"""Scoring one case: how far its evidence got, the answer, honesty, cost and timings.

Pure functions over an evidence case (:class:`~ragkit.evaluation.cases.EvidenceCase`) and
a run's result: an :class:`~ragkit.agent.loop.AgentResult`, or a dict of the same fields (a
failed run is scored as ``{"abstained": True, "error": ...}``). :func:`score_case` returns the
one flat row per case every report, gate, counterfactual judge and ``bench/agent_quality.py``
reads; its parts (:func:`asserted`, :func:`answer_correct`, :func:`unverifiable_citation`,
:func:`failure_kind`) are the one set of definitions of asserting, being correct and being
honest.

Evidence items are matched to candidates by ``(doc_id, section anchor)``: a chunk id is
``doc_id#anchor~n`` (a section's is ``doc_id#anchor``, :mod:`ragkit.core.ids`). An item counts
as *delivered* when its verbatim quote (whitespace and case folded) is inside evidence text
that reached the model from the same document.

Example:
    >>> asserted({"abstained": True}), asserted({"abstained": False, "error": "boom"})
    (False, False)
    >>> unverifiable_citation({"abstained": False, "answer": "15:00 [policy-v3#cutoffs]",
    ...                        "delivered": [{"citation": "policy-v3#cutoffs", "doc_id": "policy-v3"}]})
    False
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, is_dataclass
from typing import Any

from ragkit.core.ids import doc_of, section_key
from ragkit.evaluation.cases import EvidenceCase, EvidenceRef
from ragkit.evaluation.fields import Result, field, fold
from ragkit.text.values import read_values

__all__ = ["BOUNDARIES", "search_traces", "asserted", "answer_correct", "unverifiable_citation",
           "failure_kind", "score_case"]

#: The boundaries of the evidence path, in order (CURRICULUM section 12). A failed answerable
#: case is lost at the first one its minimum evidence set does not pass.
BOUNDARIES = ("candidates", "rerank", "delivery", "answer")


def search_traces(result: Result) -> list[list[dict[str, Any]]]:
    """Candidates of every retrieval call of ``result``, one list of dicts per call.

    Reads ``result.traces`` (full :class:`~ragkit.search.trace.SearchTrace` objects, as recorded by
    :func:`agent_runner`) when present, else the ``trace`` of each search step's tool
    response (full, or the tools' compact ``{"columns", "candidates"}`` form).
    """
    out: list[list[dict[str, Any]]] = []
    traces = field(result, "traces")
    if traces is not None:
        for t in traces:
            cands = field(t, "candidates", [])
            out.append([_as_dict(c) for c in cands])
        return out
    for step in field(result, "steps", None) or []:
        if field(step, "action") != "search":
            continue
        trace = field(field(step, "response", {}) or {}, "trace", {}) or {}
        cands = field(trace, "candidates", [])
        cols = field(trace, "columns")
        if cols:
            out.append([dict(zip(cols, row, strict=True)) for row in cands])
        else:
            out.append([_as_dict(c) for c in cands])
    return out


def _as_dict(candidate: Any) -> dict[str, Any]:
    if is_dataclass(candidate) and not isinstance(candidate, type):
        return asdict(candidate)
    return dict(candidate)


def _delivered_texts(result: Result) -> list[tuple[str, str, int | None]]:
    """``(doc_id, text, step index)`` of every piece of evidence that reached the model."""
    out: list[tuple[str, str, int | None]] = []
    for i, step in enumerate(field(result, "steps", None) or []):
        response = field(step, "response", {}) or {}
        for item in [*(field(response, "results", None) or []), *(field(response, "documents", None) or [])]:
            if field(item, "doc_id") and field(item, "text"):
                out.append((str(field(item, "doc_id")), str(field(item, "text")), i))
    for ev in field(result, "delivered", None) or []:
        text = field(ev, "text") or field(ev, "evidence")
        if field(ev, "doc_id") and text:
            out.append((str(field(ev, "doc_id")), str(text), None))
    return out


def _fetched(result: Result) -> list[tuple[str, str]]:
    out = []
    for step in field(result, "steps", None) or []:
        for item in field(field(step, "response", {}) or {}, "documents", None) or []:
            if field(item, "doc_id") and field(item, "text"):
                out.append((str(field(item, "doc_id")), str(field(item, "text"))))
    return out


#: Citations written inline in an answer: ``[doc_id#anchor]``.
_CITATION = re.compile(r"\[([^\[\]\s]+#[^\[\]\s]*)\]")


def asserted(result: Result) -> bool:
    """Whether ``result`` put an answer in front of the user: it did not abstain and did not fail.

    This is the one definition of *asserting* used by every score here: an abstention (which
    may name the sources it found and the values they disagree on, CURRICULUM section 12) is
    not an assertion, and neither is a run that crashed (it produced nothing; it is counted
    as an error, not as an honest "I don't know").
    """
    return not bool(field(result, "abstained", False)) and not field(result, "error")


def answer_correct(case: EvidenceCase, result: Result) -> bool:
    """Whether an answerable case was answered with its expected value (False for abstentions).

    The asserted value is the result's ``value`` (the decision record's); when it has none,
    the first value of the expected kind read from the answer (:func:`ragkit.text.values.read_values`),
    leaving out its ``[doc_id#anchor]`` citations and any value it only repeats from the question
    (a model's prose answer often restates the account or ticket it was asked about).
    For ``text`` and ``status`` kinds the expected phrase may also be stated anywhere in the
    answer's prose: a free-text value is a sentence, and the answer that states the expected
    cause in another sentence than the one recorded as ``value`` still gives it. Not when the
    value is one typed value (a duration, an amount, a name): "15 minutes" quoting a table row
    that also shows "90 minutes" asserts 15 minutes.

    A message that asks several things ("Who maintains reserve-keeper, and what's its p95 batch
    duration?") is answered ask by ask, and the result's ``values`` holds one value per answered
    ask (never more values than the message has asks: :func:`ragkit.text.asking.split_asks`). Its
    case expects the value of one of the asks, so the answer is right when one of ``values`` is
    the expected value.
    """
    expected = case.expected
    if expected is None or not asserted(result):
        return False
    value = field(result, "value")
    answer = str(field(result, "answer", "") or "")
    values = [str(v) for v in field(result, "values", None) or ()]
    # the answer's prose completes a free-text value (a sentence), never a typed one: "15 minutes"
    # is wrong even when the table row it quotes shows 90 minutes in another column
    prose = expected.kind in ("text", "status") and not any(_typed(v) for v in values or [value] if v)
    if len(values) > 1:
        return any(expected.matches(v) for v in values) or (prose and expected.matches(answer))
    if expected.kind in ("text", "status"):
        stated = value is not None and expected.matches(str(value))
        return bool(stated or (prose and expected.matches(answer)))
    if value is None:
        repeated = {v.value for v in read_values(case.task, expected.kind)}
        found = [v for v in read_values(_CITATION.sub(" ", answer), expected.kind) if v.value not in repeated]
        value = found[0].surface if found else None
    return value is not None and bool(expected.matches(str(value)))


def _typed(value: object) -> bool:
    """Whether ``value`` is one typed value (a duration, an amount, a time, a name), not a sentence."""
    text = str(value).strip()
    found = read_values(text)
    return len(found) == 1 and found[0].surface.strip() == text


def unverifiable_citation(result: Result) -> bool:
    """Whether a delivered answer carries a citation that cannot be checked against this run.

    True when the answer cites nothing, cites a span that was not delivered in this run (a
    section of a whole document read in the run counts as delivered), or its citation
    verification (:func:`ragkit.evidence.citations.verify`) failed. Always False for abstentions and
    failed runs: there is no answer to check.
    """
    if not asserted(result):
        return False
    delivered = field(result, "delivered", None) or []
    spans = {str(field(e, "citation", "")) for e in delivered}
    whole = {str(field(e, "doc_id", "")) for e in delivered if not field(e, "anchor", "")}
    cited = _CITATION.findall(str(field(result, "answer", "") or ""))
    verification = field(result, "verification")
    return (not cited or any(c not in spans and doc_of(c) not in whole for c in cited)
            or (verification is not None and not bool(field(verification, "ok", True))))


def failure_kind(row: Mapping[str, Any]) -> str:
    """What went wrong in one scored case (a :func:`score_case` row), in words; ``""`` if it passed.

    Answerable cases are named by the boundary that lost them and by what the agent then did
    (answered from other evidence, or abstained); unanswerable ones by the false assertion.
    A result without full traces (``full_traces`` False) is read from the tools' compact
    traces, which show only the best candidates of each call: "never entered" is then not known.
    """
    if row.get("error"):
        return "runner error"
    if not row["answerable"]:
        return "" if row["honest"] else "asserted a value on an unanswerable case"
    if row["correct"]:
        return ""
    then = "abstained" if row["abstained"] else "answered with another value"
    never = ("evidence set never entered the candidates" if row.get("full_traces", True)
             else "evidence set not among the candidates the tool traces show")
    where = {"candidates": never,
             "rerank": "evidence set entered but did not survive reranking",
             "delivery": "evidence survived but its quote was not delivered",
             "answer": "evidence delivered"}.get(row["lost_at"], "evidence delivered")
    return f"{where}, {then}"


def _faithfulness(result: Result) -> tuple[int, int]:
    """``(claims, supported claims)`` from the result's citation verification.

    Counted on delivered answers only: a draft the agent withheld (and abstained on) is not
    an answer a user read."""
    verification = field(result, "verification")
    if verification is None:
        return 0, 0
    claims = field(verification, "claims", None) or []
    return len(claims), sum(1 for c in claims if field(c, "ok", False))


def score_case(case: EvidenceCase, result: Result, *, deliver: int | None = None) -> dict[str, Any]:
    """One flat row: how far the case's evidence got, the answer, honesty, cost and timings.

    Boundaries (each requires the previous): ``entered`` (every evidence item among the
    fused candidates of some retrieval call, or in a document read by id), ``survived``
    (every item among the delivered hits of some call, or read by id), ``delivered`` (every
    item's quote inside evidence text that reached the model), ``answered`` (the asserted
    value equals the expected one). ``lost_at`` names the first boundary a failed case did
    not pass (:data:`BOUNDARIES`; ``"honesty"`` for an unanswerable case that asserted a
    value, ``"error"`` for one whose run failed). Retrieval quality (``first_*``) is measured
    on the first call alone, so that placements compare on the same footing.

    Answers and honesty (the one set of definitions every ragkit score uses):

    * ``asserted``: the run put an answer in front of the user (:func:`asserted`);
    * ``correct``: an answerable case answered with the expected value (:func:`answer_correct`);
    * ``honest``: an unanswerable case where the run abstained (an abstention says what was
      searched and what is missing; it asserts no value); a failed run is not honest;
    * ``false_assertion``: an unanswerable case where the run asserted an answer;
    * ``over_abstained``: an answerable case where the run abstained;
    * ``passed``: ``correct`` for answerable cases, ``honest`` for unanswerable ones;
    * ``unverifiable``: a delivered answer with a citation that cannot be checked
      (:func:`unverifiable_citation`).
    """
    calls = search_traces(result)
    need = [(e.doc_id, e.anchor) for e in case.evidence]
    fetched = _fetched(result)
    texts = _delivered_texts(result)

    def quoted(item: EvidenceRef, pool: Iterable[tuple[str, str]]) -> bool:
        q = fold(item.quote)
        return any(doc == item.doc_id and q in fold(text) for doc, text in pool)

    candidate_keys = {section_key(c["chunk_id"]) for cands in calls for c in cands
                      if c.get("fused_rank") is not None}
    survivor_keys = {section_key(c["chunk_id"]) for cands in calls for c in cands if c.get("delivered")}
    entered_items = [(e.doc_id, e.anchor) in candidate_keys or quoted(e, fetched) for e in case.evidence]
    survived_items = [(e.doc_id, e.anchor) in survivor_keys or quoted(e, fetched) for e in case.evidence]
    delivered_items = [quoted(e, [(d, t) for d, t, _ in texts]) for e in case.evidence]
    answerable = bool(case.answerable)
    abstained = bool(field(result, "abstained", False))
    failed = bool(field(result, "error"))
    says = asserted(result)
    correct = answerable and answer_correct(case, result)
    entered = answerable and all(entered_items)
    survived = entered and all(survived_items)
    delivered = survived and all(delivered_items)
    answered = delivered and correct
    if not answerable:
        lost = "error" if failed else ("honesty" if says else "")
    else:
        lost = next((b for b, ok in zip(BOUNDARIES, (entered, survived, delivered, answered), strict=True)
                     if not ok), "")

    first = calls[0] if calls else []
    first_keys = [section_key(c["chunk_id"]) for c in first if c.get("fused_rank") is not None]
    first_delivered = sorted((c for c in first if c.get("delivered")),
                             key=lambda c: c.get("final_rank") or 10**9)
    width = deliver or max(len(first_delivered), 1)
    relevant = set(need)
    decisive = case.decisive
    decisive_rank = None
    if decisive is not None:
        ranked = sorted((c for c in first if c.get("final_rank") is not None), key=lambda c: c["final_rank"])
        decisive_rank = next((i for i, c in enumerate(ranked, 1)
                              if section_key(c["chunk_id"]) == (decisive.doc_id, decisive.anchor)), None)
    tenants = {c.get("tenant") for cands in calls for c in cands if c.get("tenant")}
    leaks = sorted(str(t) for t in tenants if t not in (case.caller.tenant, "global"))
    claims, supported = _faithfulness(result) if says else (0, 0)  # delivered answers only
    record = field(result, "record")
    decision = field(record, "decision") if record is not None else None
    chosen = field(decision, "doc_id") if decision is not None else None
    steps = field(result, "steps", None) or []
    return {
        "case": case.id, "tags": ";".join(case.tags), "answerable": answerable,
        "items": len(need), "entered": entered, "survived": survived, "delivered": delivered,
        "answered": answered, "end_to_end": answered, "correct": correct, "lost_at": lost,
        "abstained": abstained, "asserted": says,
        "honest": (not answerable) and abstained and not failed, "false_assertion": (not answerable) and says,
        "over_abstained": answerable and abstained and not failed,
        "passed": correct if answerable else (abstained and not failed),
        "unverifiable": unverifiable_citation(result),
        "value": field(result, "value"), "expected": case.expected.value if case.expected else None,
        "status": field(record, "status") if record is not None else None,
        "chose_rejected": bool(chosen and chosen in {r.doc_id for r in case.reject}),
        "items_entered": sum(entered_items), "items_survived": sum(survived_items),
        "items_delivered": sum(delivered_items),
        "first_set_recall": bool(need) and all(k in set(first_keys) for k in need),
        "first_item_recall": (sum(k in set(first_keys) for k in need) / len(need)) if need else math.nan,
        "first_precision": (sum(section_key(c["chunk_id"]) in relevant for c in first_delivered) / width
                            if need else math.nan),
        "decisive_rank": decisive_rank,
        "first_run": {c["chunk_id"]: -float(c["final_rank"]) for c in first if c.get("final_rank")},
        "claims": claims, "claims_supported": supported,
        "faithfulness": supported / claims if claims else math.nan,
        "searches": int(field(result, "searches", len(calls)) or 0), "tool_calls": len(steps),
        "seconds": float(field(result, "seconds", 0.0) or 0.0),
        "tenant_leaks": ";".join(leaks), "leak": bool(leaks),
        "full_traces": field(result, "traces") is not None,
        "error": field(result, "error"),
    }
