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

A run reads questions and evidence with the corpus profile of the toolbox's index
(:attr:`Agent.profile`, set with :func:`ragkit.text.profile.using_profile` for the run).

Example:
    >>> from ragkit.course.shortcuts import course_index                            # doctest: +SKIP
    >>> box = Toolbox(course_index(), Scope("acme", ["ops"]))             # doctest: +SKIP
    >>> result = Agent(box).run("Why did Acme's January reconciliation fail?", as_of="2026-02-02")
    ... # doctest: +SKIP
    >>> print(result.answer)                                              # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ragkit.agent.offline import OfflinePolicy
from ragkit.agent.result import AgentResult
from ragkit.agent.state import PLACEMENTS, TOOL_OF_ACTION, Action, AgentState, EvidenceUse, Policy, Step
from ragkit.core.errors import ValidationError
from ragkit.core.records import parse_time
from ragkit.core.scope import Scope, snapshot_filters
from ragkit.evidence.citations import verify
from ragkit.evidence.resolution import resolve
from ragkit.evidence.spans import Evidence
from ragkit.models.tokens import count_tokens
from ragkit.text.asked import asked_kind
from ragkit.text.normalise import normalise_value
from ragkit.text.profile import CorpusProfile, active_profile, using_profile
from ragkit.text.taskparse import jaccard, normalise_query
from ragkit.text.values import read_values
from ragkit.tools.toolbox import Toolbox

__all__ = ["Agent", "ask_offline"]


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
        policy: Policy | None = None,
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
            policy = OfflinePolicy()
        self.toolbox = toolbox
        self.policy = policy
        self.placement = placement
        self.max_searches = max_searches
        self.loop_threshold = loop_threshold
        self.max_steps = max_steps

    @property
    def tenant(self) -> str:
        """The tenant of the toolbox's caller (``*``: every tenant)."""
        scope = getattr(self.toolbox, "scope", None)
        return str(getattr(scope, "tenant", "*"))

    @property
    def profile(self) -> CorpusProfile:
        """The corpus profile a run reads with: the toolbox index's ``profile``, else the active one."""
        found = getattr(getattr(self.toolbox, "index", None), "profile", None)
        return found if isinstance(found, CorpusProfile) else active_profile()

    def run(self, task: str, *, as_of: object = None) -> AgentResult:
        """Answer ``task`` as the toolbox's caller, at ``as_of`` (ISO date; default: now), reading
        with :attr:`profile`."""
        with using_profile(self.profile):
            return self._run(task, as_of)

    def _run(self, task: str, as_of: object) -> AgentResult:
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
            max_steps=self.max_steps,
        )
        run = self.policy.begin(state)
        final: Action | None = None
        if self.placement in ("pipeline", "hybrid"):
            self._execute(state, run.first_search(state))
        if self.placement == "pipeline":
            final = run.conclude(state, "pipeline placement: one retrieval, no follow-up")
        while final is None:
            tool_steps = sum(1 for s in state.steps if s.action in TOOL_OF_ACTION)
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
        response = self.toolbox.call(TOOL_OF_ACTION[action.kind], args)
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
            for item in items:
                citation = str(item.get("citation"))
                if citation in state.evidence:
                    # a fuller read replaces the excerpt; another excerpt of the section joins it
                    state.evidence[citation].absorb(dict(item), _evidence(item, args.get("query", "")))
                    continue
                state.evidence[citation] = EvidenceUse(
                    _evidence(item, args.get("query", "")),
                    dict(item),
                    turn,
                    str(args.get("query", "")),
                )

    # -- the end: resolve, verify, answer or abstain ------------------------------------------
    def _finish(self, state: AgentState, final: Action, seconds_so_far: float) -> AgentResult:
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
        values: tuple[str, ...] = ()
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
                values = tuple(str(v) for v in final.arguments.get("values") or ([value] if value else []))
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
            values=() if abstained else values,
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
            uses=uses,
        )
        return result

    def _caller(self) -> Scope | None:
        return getattr(self.toolbox, "scope", None)


def _evidence(item: Mapping[str, Any], query: str) -> Evidence:
    return Evidence.from_tool_item(item, query=str(query or ""))


def _item_tokens(item: Mapping[str, Any]) -> int:
    if "tokens" in item:
        return int(item["tokens"])
    return count_tokens(str(item.get("text", "")))


def _first_value(kind: str, text: str) -> str | None:
    """The first value of ``kind`` in ``text`` (normalised), as evaluation reads an answer."""
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
    policy: Policy | None = None,
    max_searches: int = 6,
) -> AgentResult:
    """Answer ``task`` over ``index`` as a caller (tenant and groups), seeing what was published by ``as_of``.

    The entry point of ``ragkit ask`` when no LLM is configured: a :class:`~ragkit.tools.toolbox.Toolbox`
    bound to the caller and to the snapshot at ``as_of`` (all documents when ``as_of`` is None),
    and an :class:`Agent` with the offline policy (or ``policy``).
    """
    moment = parse_time(as_of, field_name="as_of")
    scope = Scope(tenant, groups, all_groups=(tenant == "*" and not groups))
    kwargs: dict[str, Any] = {}
    if moment is not None:
        kwargs["filters"] = snapshot_filters(moment)
    box = Toolbox(index, scope, **kwargs)
    return Agent(box, policy, placement=placement, max_searches=max_searches).run(task, as_of=as_of)
