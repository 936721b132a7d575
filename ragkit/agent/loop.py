"""The reference agent: retrieval as an action inside a loop (CURRICULUM sections 0, 1, 5-7).

An :class:`Agent` answers a task by acting *only* through the retrieval tools
(:class:`ragkit.tools.toolbox.Toolbox`): it sees exactly what an external agent sees, the JSON
responses of ``search_knowledge``, ``retrieve_documents`` and ``related_documents``.
A *policy* chooses each action: ``search``, ``fetch``, ``related``, ``answer`` or
``abstain``. The default is the offline policy (:class:`ragkit.agent.offline.OfflinePolicy`),
a transparent baseline, not a model; :class:`ragkit.agent.llm_policy.LLMPolicy` drives the
same loop with a model's native tool calls.

Three placements (CURRICULUM section 1):

* ``pipeline``: always-on retrieval. One search with the task, one read, then answer or
  abstain; no follow-up.
* ``tool``: retrieval is a tool; the policy decides every call, the first included.
* ``hybrid``: the always-on first search with the task, then tool follow-ups.

The loop enforces what a policy cannot be trusted to: a cap on searches per task
(``max_searches``, default 6), refusal of near-duplicate searches (a search loop: the
same query reformulated again; token Jaccard >= ``loop_threshold`` with an earlier query
under the same filters), and a ceiling on steps. Whatever the policy drafts, the loop
resolves the delivered evidence (:func:`ragkit.evidence.resolution.resolve`) and verifies the
answer's citations against it (:func:`ragkit.evidence.citations.verify`): an answer whose
citations do not verify is never delivered; the agent abstains and says why.

Every step lands in the trace: the action, its arguments, the hits with their
per-stage ranks (from the tool's trace), time, tokens delivered, and for every piece of
evidence the turns it stayed in context.

Example:
    >>> from ragkit.course.shortcuts import course_index                            # doctest: +SKIP
    >>> box = Toolbox(course_index(), Scope("acme", ["ops"]))             # doctest: +SKIP
    >>> result = Agent(box).run("Why did Acme's January reconciliation fail?", as_of="2026-02-02")
    ... # doctest: +SKIP
    >>> print(result.answer)                                              # doctest: +SKIP
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragkit.core.errors import ValidationError
from ragkit.core.records import parse_time
from ragkit.text.taskparse import jaccard, normalise_query

__all__ = [
    "PLACEMENTS",
    "ACTIONS",
    "Action",
    "Step",
    "EvidenceUse",
    "AgentState",
    "AgentResult",
    "Agent",
    "Policy",
    "ask_offline",
    "PolicyRun",
]

PLACEMENTS = ("pipeline", "tool", "hybrid")
ACTIONS = ("search", "fetch", "related", "answer", "abstain")
_TOOL_OF = {"search": "search_knowledge", "fetch": "retrieve_documents", "related": "related_documents"}


@dataclass(frozen=True)
class Action:
    """What the policy wants next: a kind (:data:`ACTIONS`), its arguments and why.

    Tool actions carry the tool's JSON arguments (``search``: ``query`` and filters;
    ``fetch``: ``ids``; ``related``: ``doc_id``). ``answer`` carries ``answer`` (text with
    inline ``[doc_id#anchor]`` citations); ``abstain`` carries ``answer`` (what was searched,
    found, missing, and what to confirm).
    """

    kind: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    record: Any = field(default=None, compare=False, repr=False)  # the policy's decision record, if any

    def __post_init__(self) -> None:
        if self.kind not in ACTIONS:
            raise ValidationError(f"action {self.kind!r} is unknown; use one of {ACTIONS}", field="kind")


@dataclass
class Step:
    """One turn of the loop: the action, its arguments, the tool response and its cost.

    ``refused`` is the loop's message when the action was not run (search cap, search loop,
    step cap); the policy sees it as the step's response.
    """

    turn: int
    action: str
    arguments: dict[str, Any]
    ok: bool
    ms: float
    tokens: int
    response: dict[str, Any]
    reason: str = ""
    refused: str | None = None

    @property
    def hits(self) -> list[dict[str, Any]]:
        """Delivered items with per-stage ranks (``bm25``, ``dense``, ``rrf``, ``rerank``, ``final``)."""
        items = self.response.get("results") or self.response.get("documents") or []
        ranks: dict[str, dict[str, Any]] = {}
        trace = self.response.get("trace") or {}
        columns = trace.get("columns") or []
        for row in trace.get("candidates") or []:
            rec = dict(zip(columns, row, strict=False))
            if "chunk_id" in rec:
                ranks[rec["chunk_id"]] = rec
        out = []
        for item in items:
            rec = ranks.get(item.get("chunk_id", ""), {})
            out.append(
                {
                    "citation": item.get("citation"),
                    "rank": item.get("rank"),
                    "source_type": item.get("source_type"),
                    "tenant": item.get("tenant"),
                    "validity": item.get("validity"),
                    "score": item.get("score"),
                    "bm25": rec.get("lexical_rank"),
                    "dense": rec.get("dense_rank"),
                    "rrf": rec.get("fused_rank"),
                    "rerank": rec.get("rerank_rank"),
                    "final": rec.get("final_rank"),
                }
            )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "action": self.action,
            "arguments": self.arguments,
            "ok": self.ok,
            "ms": round(self.ms, 1),
            "tokens": self.tokens,
            "reason": self.reason,
            "refused": self.refused,
            "hits": self.hits,
            "response": self.response,
        }


@dataclass
class EvidenceUse:
    """A delivered piece of evidence, the tool item it came from, and when it entered context."""

    evidence: Any  # ragkit.evidence.resolution.Evidence
    item: dict[str, Any]  # the tool's JSON item (envelope fields, score, validity, ...)
    first_turn: int
    query: str = ""

    @property
    def citation(self) -> str:
        return str(self.item.get("citation"))


@dataclass
class AgentState:
    """What the policy may look at: the task, the caller, the steps so far and the delivered evidence."""

    task: str
    as_of: str | None
    tenant: str
    placement: str
    max_searches: int
    caller: Any = None  # the toolbox's Scope (for resolution and citation checks)
    steps: list[Step] = field(default_factory=list)
    evidence: dict[str, EvidenceUse] = field(default_factory=dict)
    searches: int = 0

    @property
    def turn(self) -> int:
        return len(self.steps) + 1

    @property
    def searches_left(self) -> int:
        return self.max_searches - self.searches

    def queries(self) -> list[str]:
        """Queries of the searches that ran."""
        return [
            s.arguments.get("query", "") for s in self.steps if s.action == "search" and s.refused is None
        ]

    def delivered(self) -> list[Any]:
        """Evidence objects in the order they entered context."""
        return [u.evidence for u in self.evidence.values()]


class PolicyRun(Protocol):
    """One task's worth of policy: proposes actions from the state."""

    def first_search(self, state: AgentState) -> Action: ...
    def next_action(self, state: AgentState) -> Action: ...
    def conclude(self, state: AgentState, why: str) -> Action: ...


class Policy(Protocol):
    """A policy: ``name`` and ``begin(state)`` that returns a :class:`PolicyRun` for one task."""

    name: str

    def begin(self, state: AgentState) -> PolicyRun: ...


@dataclass
class AgentResult:
    """The answer, the decision record, the verified citations and the full trace of one task."""

    task: str
    answer: str
    abstained: bool
    value: str | None
    record: Any
    verification: Any
    steps: list[Step]
    delivered: list[Any]
    searches: int
    seconds: float
    tokens_delivered: int
    placement: str = "hybrid"
    policy: str = "offline"
    as_of: str | None = None
    evidence_turns: dict[str, tuple[int, int]] = field(default_factory=dict)
    asked: str = "text"

    @property
    def calls(self) -> int:
        """Tool calls that ran (refused ones excluded)."""
        return sum(1 for s in self.steps if s.action in _TOOL_OF and s.refused is None)

    @property
    def citations(self) -> list[str]:
        """Citations of the delivered answer that verified (empty when abstained)."""
        if self.abstained or self.verification is None:
            return []
        return [str(c) for claim in self.verification.claims if claim.ok for c in claim.citations]

    @property
    def token_turns(self) -> int:
        """Evidence tokens times the turns each piece stayed in context (CURRICULUM section 5)."""
        tokens = {u.get("citation"): u.get("tokens", 0) for u in self._uses}
        return sum(tokens.get(c, 0) * (last - first + 1) for c, (first, last) in self.evidence_turns.items())

    _uses: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        record = (
            self.record.to_dict() if self.record is not None and hasattr(self.record, "to_dict") else None
        )
        verification = None
        if self.verification is not None:
            verification = {
                "ok": self.verification.ok,
                "claims": [
                    {
                        "text": c.text,
                        "citations": [str(x) for x in c.citations],
                        "ok": c.ok,
                        "reasons": list(c.reasons),
                    }
                    for c in self.verification.claims
                ],
            }
        return {
            "task": self.task,
            "as_of": self.as_of,
            "placement": self.placement,
            "policy": self.policy,
            "asked": self.asked,
            "answer": self.answer,
            "abstained": self.abstained,
            "value": self.value,
            "citations": self.citations,
            "record": record,
            "verification": verification,
            "searches": self.searches,
            "calls": self.calls,
            "seconds": round(self.seconds, 3),
            "tokens_delivered": self.tokens_delivered,
            "token_turns": self.token_turns,
            "evidence_turns": {k: list(v) for k, v in self.evidence_turns.items()},
            "steps": [s.to_json() for s in self.steps],
        }

    def __str__(self) -> str:
        lines = [
            f"task: {self.task}  (as of {self.as_of or 'now'}; {self.placement} placement, "
            f"{self.policy} policy)"
        ]
        for s in self.steps:
            args = ", ".join(f"{k}={v!r}" for k, v in s.arguments.items() if k != "answer" and v is not None)
            head = f"  [{s.turn}] {s.action}({args})"
            if s.refused:
                lines.append(f"{head} -> REFUSED: {s.refused}")
                continue
            if s.action in ("answer", "abstain"):
                continue
            lines.append(
                f"{head} -> {len(s.hits)} item(s), {s.tokens} tokens, {s.ms:.0f} ms"
                + (f"  [{s.reason}]" if s.reason else "")
            )
            for h in s.hits[:8]:
                stages = " ".join(
                    f"{k}={h[k] if h[k] is not None else '-'}"
                    for k in ("bm25", "dense", "rrf", "rerank", "final")
                    if k in h
                )
                lines.append(f"        {h['citation']} ({h['source_type']}, {h['tenant']}) {stages}")
        if self.record is not None:
            lines.append("decision record:")
            lines.extend("  " + line for line in str(self.record).splitlines())
        lines.append(("ABSTAINED: " if self.abstained else "ANSWER: ") + self.answer)
        if self.citations:
            lines.append("verified citations: " + ", ".join(dict.fromkeys(self.citations)))
        lines.append(
            f"{self.searches} searches, {self.calls} tool calls, {self.tokens_delivered} tokens "
            f"delivered, {self.token_turns} token-turns, {self.seconds:.1f} s"
        )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = []
        for s in self.steps:
            args = esc(json.dumps({k: v for k, v in s.arguments.items() if k != "answer" and v is not None}))
            hits = "<br>".join(
                f"<code>{esc(str(h['citation']))}</code> bm25={h['bm25']} dense={h['dense']} rrf={h['rrf']} "
                f"rerank={h['rerank']} final={h['final']}"
                for h in s.hits
            )
            what = f"<b>refused</b>: {esc(s.refused)}" if s.refused else hits
            rows.append(
                f"<tr><td>{s.turn}</td><td>{s.action}</td><td><code>{args}</code></td>"
                f"<td>{s.ms:.0f}</td><td>{s.tokens}</td><td>{what}</td></tr>"
            )
        turns = "".join(
            f"<tr><td><code>{esc(c)}</code></td><td>{a}..{b}</td></tr>"
            for c, (a, b) in self.evidence_turns.items()
        )
        record = (
            self.record._repr_html_()
            if self.record is not None and hasattr(self.record, "_repr_html_")
            else ""
        )
        verdict = "abstained" if self.abstained else f"answered (value {esc(str(self.value))})"
        return (
            f"<div><b>{esc(self.task)}</b> &mdash; {self.placement} placement, {self.policy} policy, "
            f"{verdict}<p style='border-left:3px solid #888;padding-left:8px'>{esc(self.answer)}</p>"
            "<table><tr><th>turn</th><th>action</th><th>arguments</th><th>ms</th><th>tokens</th>"
            f"<th>hits (per-stage ranks)</th></tr>{''.join(rows)}</table>"
            f"<details><summary>evidence in context (turns)</summary><table>{turns}</table></details>"
            f"{record}<p>{self.searches} searches, {self.calls} calls, {self.tokens_delivered} tokens, "
            f"{self.token_turns} token-turns, {self.seconds:.1f} s</p></div>"
        )


class Agent:
    """The search loop over a toolbox, driven by a policy, in one of three placements.

    Args:
        toolbox: a :class:`ragkit.tools.toolbox.Toolbox` (or anything with its ``call(name, arguments)``
            and a ``scope`` with a ``tenant``).
        policy: a :class:`Policy` (default: :class:`ragkit.agent.offline.OfflinePolicy`).
        placement: ``"pipeline"``, ``"tool"`` or ``"hybrid"`` (:data:`PLACEMENTS`).
        max_searches: cap on ``search_knowledge`` calls per task.
        loop_threshold: token Jaccard at or above which a search repeats an earlier one.
        max_steps: ceiling on tool steps per task (searches, fetches and related calls).
    """

    def __init__(
        self,
        toolbox: Any,
        policy: Any = None,
        *,
        placement: str = "hybrid",
        max_searches: int = 6,
        loop_threshold: float = 0.8,
        max_steps: int = 14,
    ):
        if placement not in PLACEMENTS:
            raise ValidationError(f"placement={placement!r}; use one of {PLACEMENTS}", field="placement")
        if not isinstance(max_searches, int) or max_searches < 1:
            raise ValidationError(f"max_searches={max_searches!r}; use an integer >= 1", field="max_searches")
        if not 0 < loop_threshold <= 1:
            raise ValidationError(
                f"loop_threshold={loop_threshold!r}; use a number in (0, 1]", field="loop_threshold"
            )
        if policy is None:
            from ragkit.agent.offline import OfflinePolicy

            policy = OfflinePolicy()
        self.toolbox = toolbox
        self.policy = policy
        self.placement = placement
        self.max_searches = max_searches
        self.loop_threshold = loop_threshold
        self.max_steps = max_steps

    @property
    def tenant(self) -> str:
        scope = getattr(self.toolbox, "scope", None)
        return str(getattr(scope, "tenant", "*"))

    def run(self, task: str, *, as_of: object = None) -> AgentResult:
        """Answer ``task`` as the toolbox's caller, at ``as_of`` (ISO date; default: now)."""
        if not isinstance(task, str) or not task.strip():
            raise ValidationError(
                "task must be a non-empty question, e.g. 'Which commit fixed OPS-3318?'", field="task"
            )
        moment = parse_time(as_of, field_name="as_of")
        t0 = time.perf_counter()
        state = AgentState(
            task=task.strip(),
            as_of=moment.date().isoformat() if moment else None,
            tenant=self.tenant,
            placement=self.placement,
            max_searches=self.max_searches,
            caller=self._caller(),
        )
        run = self.policy.begin(state)
        final: Action | None = None
        if self.placement in ("pipeline", "hybrid"):
            self._execute(state, run.first_search(state))
        if self.placement == "pipeline":
            final = run.conclude(state, "pipeline placement: one retrieval, no follow-up")
        while final is None:
            tool_steps = sum(1 for s in state.steps if s.action in _TOOL_OF)
            if tool_steps >= self.max_steps:
                final = run.conclude(state, f"step ceiling of {self.max_steps} tool calls reached")
                break
            action = run.next_action(state)
            if action.kind in ("answer", "abstain"):
                final = action
                break
            self._execute(state, action)
        return self._finish(state, final, time.perf_counter() - t0)

    # -- one tool step ---------------------------------------------------------------------
    def _refusal(self, state: AgentState, action: Action) -> str | None:
        if action.kind != "search":
            return None
        if state.searches >= self.max_searches:
            return (
                f"search cap reached: {self.max_searches} searches per task. Answer from the evidence "
                "already delivered, or abstain and say what is missing"
            )
        query = str(action.arguments.get("query", ""))
        filters = {k: v for k, v in action.arguments.items() if k not in ("query", "k") and v is not None}
        for step in state.steps:
            if step.action != "search" or step.refused is not None:
                continue
            earlier = {k: v for k, v in step.arguments.items() if k not in ("query", "k") and v is not None}
            if earlier != filters:
                continue
            old = str(step.arguments.get("query", ""))
            if normalise_query(old) == normalise_query(query) or jaccard(old, query) >= self.loop_threshold:
                return (
                    f"search loop: {query!r} repeats the earlier search {old!r} (turn {step.turn}) under "
                    "the same filters. Use other words, an identifier from the evidence, another filter, "
                    "or follow a link"
                )
        return None

    def _execute(self, state: AgentState, action: Action) -> None:
        turn = state.turn
        refused = self._refusal(state, action)
        if refused is not None:
            state.steps.append(
                Step(
                    turn,
                    action.kind,
                    dict(action.arguments),
                    False,
                    0.0,
                    0,
                    {"ok": False, "refused": refused},
                    action.reason,
                    refused,
                )
            )
            return
        args = {k: v for k, v in action.arguments.items() if v is not None}
        t = time.perf_counter()
        response = self.toolbox.call(_TOOL_OF[action.kind], args)
        ms = (time.perf_counter() - t) * 1000
        if action.kind == "search":
            state.searches += 1
        step = Step(
            turn,
            action.kind,
            args,
            bool(response.get("ok")),
            ms,
            int(response.get("tokens", 0)),
            response,
            action.reason,
        )
        state.steps.append(step)
        items = response.get("results") or response.get("documents") or []
        if items:
            from ragkit.evidence.spans import Evidence

            for item in items:
                citation = str(item.get("citation"))
                if citation in state.evidence:
                    known = state.evidence[citation]
                    if len(str(item.get("text", ""))) > len(str(known.item.get("text", ""))):
                        known.item = dict(item)  # a fuller read of the same span replaces the excerpt
                        known.evidence = _evidence(Evidence, item, args.get("query", ""))
                    continue
                state.evidence[citation] = EvidenceUse(
                    _evidence(Evidence, item, args.get("query", "")),
                    dict(item),
                    turn,
                    str(args.get("query", "")),
                )

    # -- the end: resolve, verify, answer or abstain ------------------------------------------
    def _finish(self, state: AgentState, final: Action, seconds_so_far: float) -> AgentResult:
        from ragkit.evidence.citations import verify
        from ragkit.evidence.resolution import resolve
        from ragkit.text.values import asked_kind

        t = time.perf_counter()
        delivered = state.delivered()
        record = (
            final.record
            if final.record is not None
            else resolve(state.task, delivered, as_of=state.as_of, caller=self._caller())
        )
        asked = asked_kind(state.task)
        text = str(final.arguments.get("answer", "")).strip()
        verification = None
        abstained = final.kind == "abstain"
        value: str | None = None
        if not abstained:
            verification = verify(text, delivered, caller=self._caller(), question=state.task)
            cited = [c for claim in verification.claims for c in claim.citations]
            if not verification.ok or not cited:
                problems = (
                    "; ".join(
                        f"{', '.join(map(str, c.citations)) or 'no citation'}: {', '.join(c.reasons)}"
                        for c in verification.claims
                        if not c.ok
                    )
                    or "the answer cites nothing"
                )
                text = (
                    f"I cannot give a verified answer. The drafted answer failed citation checks "
                    f"({problems}), so it is withheld. Draft: {text}"
                )
                abstained = True
            else:
                value = final.arguments.get("value") or _first_value(asked, text)
        turn = state.turn
        state.steps.append(
            Step(
                turn,
                "abstain" if abstained else "answer",
                {"answer": text},
                True,
                (time.perf_counter() - t) * 1000,
                0,
                {"ok": True},
                final.reason,
            )
        )
        uses = [{"citation": u.citation, "tokens": _item_tokens(u.item)} for u in state.evidence.values()]
        delivered_tokens = sum(s.tokens for s in state.steps if s.action in ("search", "fetch") and s.ok)
        result = AgentResult(
            task=state.task,
            answer=text,
            abstained=abstained,
            value=None if abstained else value,
            record=record,
            verification=verification if not abstained else verification,
            steps=state.steps,
            delivered=delivered,
            searches=state.searches,
            seconds=seconds_so_far + (time.perf_counter() - t),
            tokens_delivered=delivered_tokens,
            placement=self.placement,
            policy=getattr(self.policy, "name", type(self.policy).__name__),
            as_of=state.as_of,
            asked=asked,
            evidence_turns={u.citation: (u.first_turn, turn) for u in state.evidence.values()},
        )
        result._uses = uses
        return result

    def _caller(self) -> Any:
        return getattr(self.toolbox, "scope", None)


def _evidence(cls: Any, item: Mapping[str, Any], query: str) -> Any:
    return cls.from_tool_item(item, query=str(query or ""))


def _item_tokens(item: Mapping[str, Any]) -> int:
    if "tokens" in item:
        return int(item["tokens"])
    from ragkit.models.tokens import count_tokens

    return count_tokens(str(item.get("text", "")))


def _first_value(kind: str, text: str) -> str | None:
    """The first value of ``kind`` in ``text`` (normalised), as evaluation reads an answer."""
    from ragkit.text.normalise import normalise_value
    from ragkit.text.values import read_values

    values = read_values(text, kind)
    if values:
        return str(values[0].value)
    try:
        return normalise_value(kind, text)
    except ValidationError:
        return None


def ask_offline(
    index: Any,
    task: str,
    *,
    tenant: str = "*",
    groups: Any = (),
    as_of: object = None,
    placement: str = "hybrid",
    policy: Any = None,
    max_searches: int = 6,
) -> AgentResult:
    """Answer ``task`` over ``index`` as a caller (tenant and groups), seeing what was published by ``as_of``.

    The entry point of ``ragkit ask`` when no LLM is configured: a :class:`~ragkit.tools.toolbox.Toolbox`
    bound to the caller and to the snapshot at ``as_of`` (all documents when ``as_of`` is None),
    and an :class:`Agent` with the offline policy (or ``policy``).
    """
    from ragkit.core.scope import Scope, snapshot_filters
    from ragkit.tools.toolbox import Toolbox

    moment = parse_time(as_of, field_name="as_of")
    scope = Scope(tenant, groups, all_groups=(tenant == "*" and not groups))
    kwargs: dict[str, Any] = {}
    if moment is not None:
        kwargs["filters"] = snapshot_filters(moment)
    box = Toolbox(index, scope, **kwargs)
    return Agent(box, policy, placement=placement, max_searches=max_searches).run(task, as_of=as_of)
