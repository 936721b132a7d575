"""Measuring retrieval apart from the agent, on evidence cases (CURRICULUM sections 11 and 12).

The evaluation unit is an evidence case (:class:`ragkit.evaluation.cases.EvidenceCase`): a task, the
caller, a snapshot time and the *minimum evidence set*. Two entry points:

* :func:`candidate_recall` asks the first question: does the evidence even enter the
  candidate set at this width? That is the ceiling every later stage works under.
* :func:`evaluate` runs a placement (the pipeline, or the agent with retrieval as a tool)
  over a case set, keeps every case's traces, and scores each case at every boundary of
  the evidence path (:func:`score_case`); the result is a :class:`ragkit.evaluation.report.Report`.

A *runner* is any callable ``runner(case) -> result`` where ``result`` looks like
:class:`ragkit.agent.loop.AgentResult` (``answer``, ``abstained``, ``value``, ``record``,
``verification``, ``steps``, ``delivered``, ``searches``, ``seconds``) and, ideally, carries
``traces``: the full :class:`~ragkit.search.trace.SearchTrace` of every funnel call.
:func:`agent_runner` builds one over an index for a placement and records those traces.

:func:`evaluate_full` runs several placements and the counterfactual tests case by case on
worker processes: the runs of one case share a :class:`SharedScores` reranker (a pair is
scored once, and each run is still timed as with a cold cache), and results are merged in
case order, so they equal :func:`evaluate`'s (``bench/eval_full.py --check N`` compares them).

Scoring has one set of definitions, used by the report, the gates, the counterfactual judges
and ``bench/agent_quality.py``: see :func:`score_case` (``asserted``, ``correct``, ``honest``,
``false_assertion``, ``over_abstained``, ``unverifiable``).

Evidence items are matched to candidates by ``(doc_id, section anchor)``: a chunk id is
``doc_id#anchor~n`` (a section's is ``doc_id#anchor``). An item counts as *delivered* when
its verbatim quote (whitespace and case folded) is inside evidence text that reached the
model from the same document.

Example:
    >>> from ragkit.course.shortcuts import course_index                 # doctest: +SKIP
    >>> from ragkit.evaluation.cases import load_cases                     # doctest: +SKIP
    >>> table = candidate_recall(course_index(), load_cases(path), width=50)  # doctest: +SKIP
    >>> table.loc[("identifier", "bm25"), "set_recall"]          # doctest: +SKIP
    1.0
    >>> report = evaluate(cases, agent_runner(course_index(), "pipeline"))   # doctest: +SKIP
    >>> report.boundaries().loc["all"]                                      # doctest: +SKIP
"""

from __future__ import annotations

import math
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any

from ragkit.core.ids import section_key
from ragkit.core.scope import snapshot_filters
from ragkit.retrieval.fusion import rrf

__all__ = ["RETRIEVERS", "BOUNDARIES", "candidate_recall", 
           "search_traces", "asserted", "answer_correct", "unverifiable_citation", "failure_kind",
           "score_case", "evaluate", "agent_runner", "RecordingFunnel", "SharedScores"]

RETRIEVERS = ("bm25", "dense", "rrf")

#: The boundaries of the evidence path, in order (CURRICULUM section 12). A failed answerable
#: case is lost at the first one its minimum evidence set does not pass.
BOUNDARIES = ("candidates", "rerank", "delivery", "answer")


def candidate_recall(index: Any, cases: Iterable[Any], *, width: int = 50,
                     methods: Sequence[str] = RETRIEVERS) -> Any:
    """Candidate recall at ``width`` per case tag and retriever, as a pandas DataFrame.

    Each answerable case is searched as its caller over the documents published by its
    ``as_of``. A case's evidence item counts as found when a candidate chunk has its doc_id
    and section anchor.

    Returns:
        A DataFrame indexed by ``(tag, method)`` (tag ``"all"`` covers every case) with
        columns ``cases``, ``set_recall`` (share of cases whose whole minimum evidence set is
        among the candidates) and ``item_recall`` (mean share of evidence items found).
    """
    import pandas as pd

    rows = []
    for case in cases:
        if not case.answerable:
            continue
        mask = index.mask(case.caller, snapshot_filters(case.as_of))
        lex = index.search_lexical(case.task, width, mask)
        den = index.search_dense(case.task, width, mask)
        runs = {"bm25": lex, "dense": den, "rrf": rrf([lex, den]).top(width)}
        need = {(e.doc_id, e.anchor) for e in case.evidence}
        for method in methods:
            got = {(index.rows[r].doc_id, index.rows[r].anchor) for r in runs[method].ids}
            share = len(need & got) / len(need)
            for tag in ("all", *case.tags):
                rows.append({"tag": tag, "method": method, "case": case.id, "set": share == 1.0,
                             "item": share})
    frame = pd.DataFrame(rows)
    out = frame.groupby(["tag", "method"]).agg(cases=("case", "nunique"), set_recall=("set", "mean"),
                                                item_recall=("item", "mean"))
    return out


# ------------------------------------------------------------------ reading results


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _fold(text: str) -> str:
    return " ".join(str(text).split()).lower()


def search_traces(result: Any) -> list[list[dict[str, Any]]]:
    """Candidates of every retrieval call of ``result``, one list of dicts per call.

    Reads ``result.traces`` (full :class:`~ragkit.search.trace.SearchTrace` objects, as recorded by
    :func:`agent_runner`) when present, else the ``trace`` of each search step's tool
    response (full, or the tools' compact ``{"columns", "candidates"}`` form).
    """
    out: list[list[dict[str, Any]]] = []
    traces = _get(result, "traces")
    if traces is not None:
        for t in traces:
            cands = _get(t, "candidates", [])
            out.append([_as_dict(c) for c in cands])
        return out
    for step in _get(result, "steps", None) or []:
        if _get(step, "action") != "search":
            continue
        trace = _get(_get(step, "response", {}) or {}, "trace", {}) or {}
        cands = _get(trace, "candidates", [])
        cols = _get(trace, "columns")
        if cols:
            out.append([dict(zip(cols, row, strict=True)) for row in cands])
        else:
            out.append([_as_dict(c) for c in cands])
    return out


def _as_dict(candidate: Any) -> dict[str, Any]:
    if is_dataclass(candidate) and not isinstance(candidate, type):
        return asdict(candidate)
    return dict(candidate)


def _delivered_texts(result: Any) -> list[tuple[str, str, int | None]]:
    """``(doc_id, text, step index)`` of every piece of evidence that reached the model."""
    out: list[tuple[str, str, int | None]] = []
    for i, step in enumerate(_get(result, "steps", None) or []):
        response = _get(step, "response", {}) or {}
        for item in [*(_get(response, "results", None) or []), *(_get(response, "documents", None) or [])]:
            if _get(item, "doc_id") and _get(item, "text"):
                out.append((str(_get(item, "doc_id")), str(_get(item, "text")), i))
    for ev in _get(result, "delivered", None) or []:
        text = _get(ev, "text") or _get(ev, "evidence")
        if _get(ev, "doc_id") and text:
            out.append((str(_get(ev, "doc_id")), str(text), None))
    return out


def _fetched(result: Any) -> list[tuple[str, str]]:
    out = []
    for step in _get(result, "steps", None) or []:
        for item in _get(_get(step, "response", {}) or {}, "documents", None) or []:
            if _get(item, "doc_id") and _get(item, "text"):
                out.append((str(_get(item, "doc_id")), str(_get(item, "text"))))
    return out


#: Citations written inline in an answer: ``[doc_id#anchor]``.
_CITATION = re.compile(r"\[([^\[\]\s]+#[^\[\]\s]*)\]")


def asserted(result: Any) -> bool:
    """Whether ``result`` put an answer in front of the user: it did not abstain and did not fail.

    This is the one definition of *asserting* used by every score here: an abstention (which
    may name the sources it found and the values they disagree on, CURRICULUM section 12) is
    not an assertion, and neither is a run that crashed (it produced nothing; it is counted
    as an error, not as an honest "I don't know").
    """
    return not bool(_get(result, "abstained", False)) and not _get(result, "error")


def answer_correct(case: Any, result: Any) -> bool:
    """Whether an answerable case was answered with its expected value (False for abstentions).

    The asserted value is the result's ``value`` (the decision record's); when it has none,
    the first value of the expected kind read from the answer (:func:`ragkit.text.values.read_values`).
    For ``text`` and ``status`` kinds the expected phrase may also be stated anywhere in the
    answer's prose: a free-text value is a sentence, and the answer that states the expected
    cause in another sentence than the one recorded as ``value`` still gives it.
    """
    expected = case.expected
    if expected is None or not asserted(result):
        return False
    value = _get(result, "value")
    answer = str(_get(result, "answer", "") or "")
    if expected.kind in ("text", "status"):
        return bool((value is not None and expected.matches(str(value))) or expected.matches(answer))
    if value is None:
        from ragkit.text.values import read_values

        found = read_values(answer, expected.kind)
        value = found[0].surface if found else None
    return value is not None and bool(expected.matches(str(value)))


def unverifiable_citation(result: Any) -> bool:
    """Whether a delivered answer carries a citation that cannot be checked against this run.

    True when the answer cites nothing, cites a span that was not delivered in this run (a
    section of a whole document read in the run counts as delivered), or its citation
    verification (:func:`ragkit.evidence.citations.verify`) failed. Always False for abstentions and
    failed runs: there is no answer to check.
    """
    if not asserted(result):
        return False
    delivered = _get(result, "delivered", None) or []
    spans = {str(_get(e, "citation", "")) for e in delivered}
    whole = {str(_get(e, "doc_id", "")) for e in delivered if not _get(e, "anchor", "")}
    cited = _CITATION.findall(str(_get(result, "answer", "") or ""))
    verification = _get(result, "verification")
    return (not cited or any(c not in spans and c.split("#")[0] not in whole for c in cited)
            or (verification is not None and not bool(_get(verification, "ok", True))))


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


def _faithfulness(result: Any) -> tuple[int, int]:
    """``(claims, supported claims)`` from the result's citation verification.

    Counted on delivered answers only: a draft the agent withheld (and abstained on) is not
    an answer a user read."""
    verification = _get(result, "verification")
    if verification is None:
        return 0, 0
    claims = _get(verification, "claims", None) or []
    return len(claims), sum(1 for c in claims if _get(c, "ok", False))


def score_case(case: Any, result: Any, *, deliver: int | None = None) -> dict[str, Any]:
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

    def quoted(item: Any, pool: Iterable[tuple[str, str]]) -> bool:
        q = _fold(item.quote)
        return any(doc == item.doc_id and q in _fold(text) for doc, text in pool)

    candidate_keys = {section_key(c["chunk_id"]) for cands in calls for c in cands
                      if c.get("fused_rank") is not None}
    survivor_keys = {section_key(c["chunk_id"]) for cands in calls for c in cands if c.get("delivered")}
    entered_items = [(e.doc_id, e.anchor) in candidate_keys or quoted(e, fetched) for e in case.evidence]
    survived_items = [(e.doc_id, e.anchor) in survivor_keys or quoted(e, fetched) for e in case.evidence]
    delivered_items = [quoted(e, [(d, t) for d, t, _ in texts]) for e in case.evidence]
    answerable = bool(case.answerable)
    abstained = bool(_get(result, "abstained", False))
    failed = bool(_get(result, "error"))
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
    record = _get(result, "record")
    decision = _get(record, "decision") if record is not None else None
    chosen = _get(decision, "doc_id") if decision is not None else None
    steps = _get(result, "steps", None) or []
    return {
        "case": case.id, "tags": ";".join(case.tags), "answerable": answerable,
        "items": len(need), "entered": entered, "survived": survived, "delivered": delivered,
        "answered": answered, "end_to_end": answered, "correct": correct, "lost_at": lost,
        "abstained": abstained, "asserted": says,
        "honest": (not answerable) and abstained and not failed, "false_assertion": (not answerable) and says,
        "over_abstained": answerable and abstained and not failed,
        "passed": correct if answerable else (abstained and not failed),
        "unverifiable": unverifiable_citation(result),
        "value": _get(result, "value"), "expected": case.expected.value if case.expected else None,
        "status": _get(record, "status") if record is not None else None,
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
        "searches": int(_get(result, "searches", len(calls)) or 0), "tool_calls": len(steps),
        "seconds": float(_get(result, "seconds", 0.0) or 0.0),
        "tenant_leaks": ";".join(leaks), "leak": bool(leaks),
        "full_traces": _get(result, "traces") is not None,
        "error": _get(result, "error"),
    }


# ------------------------------------------------------------------ running


def evaluate(cases: Sequence[Any], runner: Callable[[Any], Any], *, progress: bool = True,
             placement: str = "custom", deliver: int | None = None) -> Any:
    """Run ``runner`` on every case and score it; returns a :class:`ragkit.evaluation.report.Report`.

    A runner that raises on one case does not stop the run: the case is scored as an
    empty result (nothing retrieved, abstained) with the error in its ``error`` column.

    Args:
        cases: evidence cases (:func:`ragkit.evaluation.cases.load_cases`).
        runner: ``runner(case) -> AgentResult``-like (see the module docs).
        progress: a tqdm bar on stderr.
        placement: a label stored in the report (``pipeline``, ``tool``, ``hybrid``).
        deliver: the delivered width precision is measured at (default: what was delivered).
    """
    from tqdm.auto import tqdm

    from ragkit.evaluation.report import Report

    rows, results = [], {}
    for case in tqdm(cases, desc=f"eval {placement}", unit="case", disable=not progress, file=sys.stderr):
        t = time.perf_counter()
        try:
            result = runner(case)
        except Exception as exc:  # noqa: BLE001 - a broken case must not stop a 349-case run
            result = {"abstained": True, "answer": "", "value": None, "steps": [], "searches": 0,
                      "seconds": time.perf_counter() - t, "error": f"{type(exc).__name__}: {exc}"}
        rows.append(score_case(case, result, deliver=deliver))
        results[case.id] = result
    from ragkit.evaluation.economics import trace_economics

    report = Report(rows, cases=list(cases), results=results, placement=placement)
    report.economics = trace_economics(list(cases), results)
    return report


class SharedScores:
    """A reranker proxy whose scores are shared by every run in a process, with honest timings.

    Scores are cached by ``(reranker, version, length, query, sha1(passage))`` (the key of
    :class:`ragkit.models.bundled.ScoreCache`), so the pipeline's search is not scored again as the
    hybrid's first search, nor in the counterfactual runs of the same case. The bundled
    cross-encoder scores every pair alone, so a cached score is the score the pair would get
    again: results do not depend on what was cached.

    What a run *measures* must not depend on it either: every entry keeps the milliseconds it
    cost to compute (score and token count), and a hit on an entry another run computed is
    *replayed*: its cost is added to :attr:`replayed_ms`, which :func:`agent_runner` adds back
    to the step, the trace and the task's seconds. A run's timings are therefore those of a
    run with a cold cache (hits on pairs the same run scored earlier stay free).

    Args:
        inner: the reranker (:class:`ragkit.models.bundled.Reranker` or one with its interface).
    """

    def __init__(self, inner: Any):
        self.inner = inner
        self.run = 0
        self.replayed_ms = 0.0
        self.hits = 0
        self.misses = 0
        self._scores: dict[tuple[Any, ...], tuple[float, float, int]] = {}
        self._units: dict[tuple[Any, ...], tuple[int, float, int]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def new_run(self) -> None:
        """Start a new run: hits on entries computed before now are replayed."""
        self.run += 1

    def _key(self, query: str, passage: str, length: int | None) -> tuple[Any, ...]:
        from ragkit.models.bundled import ScoreCache

        return (getattr(self.inner, "name", type(self.inner).__name__), getattr(self.inner, "version", ""),
                int(length or getattr(self.inner, "max_length", 0) or 0), query, ScoreCache.digest(passage))

    def _lookup(self, table: dict[tuple[Any, ...], Any], keys: list[tuple[Any, ...]]) -> list[Any]:
        out = []
        for k in keys:
            entry = table.get(k)
            if entry is not None:
                self.hits += 1
                if entry[2] != self.run:
                    self.replayed_ms += entry[1]
            out.append(entry)
        return out

    def score(self, query: str, passages: Sequence[str], *, batch_size: int | None = None,
              max_length: int | None = None) -> Any:
        """The inner reranker's scores, computing only the pairs not seen before."""
        import numpy as np

        passages = list(passages)
        kwargs: dict[str, Any] = {"batch_size": batch_size}
        if max_length is not None and _takes(self.inner.score, "max_length"):
            kwargs["max_length"] = max_length
        keys = [self._key(query, p, max_length) for p in passages]
        known = self._lookup(self._scores, keys)
        todo = [i for i, v in enumerate(known) if v is None]
        if todo:
            self.misses += len(todo)
            t = time.perf_counter()
            fresh = self.inner.score(query, [passages[i] for i in todo], **kwargs)
            each = (time.perf_counter() - t) * 1000 / len(todo)
            for i, value in zip(todo, fresh, strict=True):
                self._scores[keys[i]] = known[i] = (float(value), each, self.run)
        return np.asarray([v[0] for v in known], dtype=np.float32)

    def count_pair_tokens(self, query: str, passages: Sequence[str], *,
                          max_length: int | None = None) -> list[int]:
        """The inner reranker's pair token counts, counting only the pairs not seen before."""
        passages = list(passages)
        kwargs = {"max_length": max_length} if max_length is not None and \
            _takes(self.inner.count_pair_tokens, "max_length") else {}
        keys = [self._key(query, p, max_length) for p in passages]
        known = self._lookup(self._units, keys)
        todo = [i for i, v in enumerate(known) if v is None]
        if todo:
            t = time.perf_counter()
            fresh = self.inner.count_pair_tokens(query, [passages[i] for i in todo], **kwargs)
            each = (time.perf_counter() - t) * 1000 / len(todo)
            for i, value in zip(todo, fresh, strict=True):
                self._units[keys[i]] = known[i] = (int(value), each, self.run)
        return [int(v[0]) for v in known]


class RecordingFunnel:
    """A :class:`~ragkit.search.funnel.Funnel` proxy that keeps the full trace of every search.

    Args:
        funnel: the funnel to delegate to.
        meter: the :class:`SharedScores` its reranker draws from, if any: the milliseconds
            it replays during a search are added to that search's rerank timing.
    """

    def __init__(self, funnel: Any, meter: SharedScores | None = None):
        self._funnel = funnel
        self._meter = meter
        self.traces: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._funnel, name)

    def search(self, query: str, **kwargs: Any) -> Any:
        before = self._meter.replayed_ms if self._meter is not None else 0.0
        result = self._funnel.search(query, **kwargs)
        replayed = (self._meter.replayed_ms - before) if self._meter is not None else 0.0
        if replayed:
            timings = result.trace.timings_ms
            timings["rerank"] = timings.get("rerank", 0.0) + replayed
            timings["total"] = timings.get("total", 0.0) + replayed
        self.traces.append(result.trace)
        return result


class _MeteredToolbox:
    """A Toolbox proxy noting, per tool call, the reranker milliseconds replayed during it."""

    def __init__(self, box: Any, meter: SharedScores):
        self._box, self._meter = box, meter
        self.replayed: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._box, name)

    def call(self, name: str, arguments: Any) -> Any:
        before = self._meter.replayed_ms
        try:
            return self._box.call(name, arguments)
        finally:
            self.replayed.append(self._meter.replayed_ms - before)


def _add_replayed(result: Any, replayed: list[float]) -> None:
    """Add each tool call's replayed reranker time to its step and to the task's seconds."""
    total = sum(replayed)
    if not total:
        return
    tools = ("search", "fetch", "related")
    steps = [s for s in (getattr(result, "steps", None) or [])
             if getattr(s, "refused", None) is None and getattr(s, "action", "") in tools]
    if len(steps) == len(replayed):
        for step, ms in zip(steps, replayed, strict=True):
            step.ms += ms
    result.seconds = float(result.seconds) + total / 1000


def agent_runner(index: Any, placement: str = "pipeline", *, funnel_settings: Any = None,
                 reranker: Any = None, max_searches: int = 6, policy: Any = None,
                 tool_settings: Any = None) -> Callable[[Any], Any]:
    """A runner for :func:`evaluate`: the reference agent over ``index`` at ``placement``.

    Each case gets a :class:`~ragkit.tools.toolbox.Toolbox` bound to its caller (tenant and groups)
    and its snapshot (documents published by ``as_of``); the full trace of every funnel
    call is recorded on the result as ``result.traces``. One reranker is shared by all
    cases; pass a :class:`SharedScores` to share scores between runners (placements,
    counterfactual views) with each run timed as if its cache were cold.
    """
    from ragkit.agent.loop import Agent
    from ragkit.models.bundled import get_reranker
    from ragkit.search.funnel import Funnel
    from ragkit.tools.toolbox import Toolbox

    meter = reranker if isinstance(reranker, SharedScores) else None
    shared = reranker if reranker is not None else get_reranker()
    shared = getattr(index, "wrap_reranker", lambda r: r)(shared)

    def run(case: Any) -> Any:
        if meter is not None:
            meter.new_run()
        funnel = RecordingFunnel(Funnel(index, funnel_settings, reranker=shared), meter)
        scope = case.caller
        box: Any = Toolbox(index, scope, funnel=funnel, settings=tool_settings,
                           filters=snapshot_filters(case.as_of))
        if meter is not None:
            box = _MeteredToolbox(box, meter)
        agent = Agent(box, policy, placement=placement, max_searches=max_searches)
        result: Any = agent.run(case.task, as_of=case.as_of)
        if meter is not None:
            _add_replayed(result, box.replayed)
        try:
            result.traces = funnel.traces
        except AttributeError:
            pass
        return result

    return run


def _takes(fn: Any, name: str) -> bool:
    """Whether ``fn`` accepts the keyword ``name`` (a custom reranker may not offer max_length)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


# ------------------------------------------------------------------ the full run, on every core

#: The parts of :func:`evaluate_full`'s work whose CPU and wall seconds it reports.
PARTS = ("run", "score", "counterfactuals")


def evaluate_full(cases: Sequence[Any], load_index: Callable[[], Any], *,
                  placements: Sequence[str] = ("pipeline", "hybrid"), counterfactuals: bool = True,
                  cf_cases: Iterable[str] | None = None, workers: int = 1, progress: bool = True,
                  deliver: int | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every placement over every case, with counterfactuals, on ``workers`` processes.

    Each case is one job: its runs at every placement, their scores, then the counterfactual
    runs of each placement (:func:`ragkit.evaluation.counterfactuals.counterfactual_case`), all in one
    process sharing one :class:`SharedScores` reranker, so a pair scored once (the pipeline's
    search, which is the hybrid's first; the same query over a counterfactual view) is not
    scored again, while each run is still timed as with a cold cache. Jobs go to ``workers``
    processes (each single-threaded: ``OMP_NUM_THREADS=1``, ``RAGKIT_WORKERS=1``) as they
    free up, and results are merged in case order, so the reports do not depend on the
    number of workers or on which worker ran which case (timings aside).

    Args:
        cases: evidence cases.
        load_index: a picklable callable returning the index (called once per process), e.g.
            ``functools.partial(ragkit.course.shortcuts.course_index, progress=False)``.
        placements: the agent placements to evaluate.
        counterfactuals: run the four counterfactual tests.
        cf_cases: ids of the cases to run counterfactuals on (default: every case).
        workers: processes (1: run here, in this process).
        progress: a tqdm bar on stderr.
        deliver: as for :func:`evaluate`.

    Returns:
        ``(reports, timings)``: a :class:`ragkit.evaluation.report.Report` per placement (with
        ``economics`` and, if run, ``counterfactuals``), and per placement and part
        (:data:`PARTS`) the CPU and wall seconds summed over jobs, plus ``wall_s`` and ``workers``.
    """
    from tqdm.auto import tqdm

    from ragkit.evaluation.counterfactuals import COUNTERFACTUALS, Counterfactuals
    from ragkit.evaluation.economics import trace_economics
    from ragkit.evaluation.report import Report

    if workers < 1:
        raise ValueError(f"workers={workers}: use 1 or more processes")
    from ragkit.agent.loop import PLACEMENTS

    bad = [p for p in placements if p not in PLACEMENTS]
    if bad:
        from ragkit.core.errors import ValidationError

        raise ValidationError(f"unknown placement(s) {bad}; use {list(PLACEMENTS)}", field="placements")
    cases = list(cases)
    cf = set(cf_cases) if cf_cases is not None else {c.id for c in cases}
    jobs = [(i, bool(counterfactuals and c.id in cf)) for i, c in enumerate(cases)]
    config = {"placements": list(placements), "deliver": deliver}
    t0 = time.perf_counter()
    done: dict[int, dict[str, Any]] = {}
    bar = tqdm(total=len(jobs), desc="eval " + "+".join(placements), unit="case", disable=not progress,
               file=sys.stderr)
    if workers == 1:
        _init_worker(load_index, cases, config, single=True)
        for job in jobs:
            done[job[0]] = _case_job(job)
            bar.update()
    else:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")  # a clean interpreter: no OpenMP or ONNX threads forked
        with ctx.Pool(workers, initializer=_init_worker, initargs=(load_index, cases, config)) as pool:
            for out in pool.imap_unordered(_case_job, jobs, chunksize=1):
                done[out["i"]] = out
                bar.update()
    bar.close()
    ordered = [done[i] for i in range(len(cases))]
    reports: dict[str, Any] = {}
    timings: dict[str, Any] = {"workers": workers, "wall_s": time.perf_counter() - t0}
    for p in placements:
        results = {cases[o["i"]].id: o["results"][p] for o in ordered}
        report = Report([o["rows"][p] for o in ordered], cases=cases, results=results, placement=p)
        report.economics = trace_economics(cases, results)
        if counterfactuals:
            outcomes = [(name, *rest) for name in COUNTERFACTUALS for o in ordered
                        for (n, *rest) in o["cf"].get(p, []) if n == name]
            report.counterfactuals = Counterfactuals.from_outcomes(outcomes, with_baseline=True)
        reports[p] = report
        timings[p] = {part: {k: sum(o["time"][p][part][k] for o in ordered) for k in ("cpu_s", "wall_s")}
                      for part in PARTS}
    timings["cf_cases"] = sum(1 for _, run_cf in jobs if run_cf)
    return reports, timings


_WORKER: dict[str, Any] = {}


def _init_worker(load_index: Callable[[], Any], cases: Sequence[Any], config: Mapping[str, Any],
                 single: bool = False) -> None:
    """Load the index and the reranker once per process (the pool's initializer)."""
    import os

    if not single:
        os.environ["OMP_NUM_THREADS"] = "1"
        os.environ["RAGKIT_WORKERS"] = "1"  # one ONNX run at a time: the processes share the cores
    from ragkit.evaluation.counterfactuals import CounterfactualSetup
    from ragkit.models.bundled import get_reranker

    index = load_index()
    _WORKER.update(index=index, cases=list(cases), config=dict(config),
                   meter=SharedScores(get_reranker()), setup=CounterfactualSetup(index))


def _case_job(job: tuple[int, bool]) -> dict[str, Any]:
    """One case: every placement, its scores and (if asked) its counterfactuals."""
    from ragkit.evaluation.counterfactuals import COUNTERFACTUALS, counterfactual_case

    i, run_cf = job
    w = _WORKER
    case, meter, config = w["cases"][i], w["meter"], w["config"]
    out: dict[str, Any] = {"i": i, "rows": {}, "results": {}, "cf": {}, "time": {}}
    for p in config["placements"]:
        clock = {part: {"cpu_s": 0.0, "wall_s": 0.0} for part in PARTS}
        runner = agent_runner(w["index"], p, reranker=meter)
        t = time.perf_counter()
        try:
            result = _timed(clock["run"], runner, case)
        except Exception as exc:  # noqa: BLE001 - a broken case must not stop the run
            result = {"abstained": True, "answer": "", "value": None, "steps": [], "searches": 0,
                      "seconds": time.perf_counter() - t, "error": f"{type(exc).__name__}: {exc}"}
        row = _timed(clock["score"], score_case, case, result, deliver=config["deliver"])
        out["rows"][p], out["results"][p] = row, result
        if run_cf:
            make = _ViewRunner(p, meter)
            out["cf"][p] = [(name, *_timed(clock["counterfactuals"], counterfactual_case, name, case,
                                           w["setup"], make, bool(row["correct"])))
                            for name in COUNTERFACTUALS]
        out["time"][p] = clock
    return out


class _ViewRunner:
    """``make_runner(view)`` for the counterfactuals: the agent at a placement over the view."""

    def __init__(self, placement: str, meter: SharedScores):
        self.placement, self.meter = placement, meter

    def __call__(self, view: Any) -> Callable[[Any], Any]:
        return agent_runner(view, self.placement, reranker=self.meter)


def _timed(clock: dict[str, float], fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, adding its CPU and wall seconds to ``clock``."""
    c, t = time.process_time(), time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        clock["cpu_s"] += time.process_time() - c
        clock["wall_s"] += time.perf_counter() - t
