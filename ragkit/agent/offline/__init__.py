"""The offline policy: a transparent baseline that drives the agent loop without a model.

It is *not* a model and does not pretend to be one: every choice is a documented rule
over the task (:func:`ragkit.text.taskparse.parse_task`) and the tool responses, so a learner
can predict it, and a model-driven policy (:mod:`ragkit.agent.llm_policy`) can be compared
with it on the same loop, caps and checks.

The rules, in the order the loop meets them (CURRICULUM sections 1 and 7):

0. **One ask at a time**: a message that asks two things ("Who maintains reserve-keeper, and
   what's its p95 batch duration?", :func:`ragkit.text.asking.split_asks`) runs the rules below
   once per ask, over one shared trace, each ask with its share of the search cap and step
   ceiling (:mod:`~ragkit.agent.offline.asks`); it is answered in part when its first ask is.
1. **Read the task**: identifiers, names, the caller's tenant, a date or month period,
   the kind of value asked (:func:`ragkit.text.asked.asked_kind`), and whether it asks which
   rule *applies* at a moment (searches carry ``valid_at``) or what *happened* (no
   validity filter: it would hide the incident records).
2. **Query variants**, each tried only while the evidence is insufficient: the task
   itself; a structured query (the caller's tenant, the month named, when the task asks
   about an event); the identifiers alone; a keyword query (content words); and a query
   widened by pseudo-relevance feedback (terms frequent in the excerpts already seen but
   absent from the task: the cure for vocabulary mismatch).
3. **Judge each page**: an excerpt counts only if it is about the task: it names the
   task's identifiers (or an identifier the policy followed to reach it), belongs to the
   caller's tenant when the task asks about the caller's own event, and falls in the
   month named. A page with nothing that counts is "nothing here" and leads to a new query.
4. **Follow the evidence**: links in a counted excerpt's envelope are read with
   ``retrieve_documents``; identifiers the excerpt names in a sentence about a fix, a
   rollout, a policy or a follow-up are searched (ticket -> comment -> rollout -> policy).
5. **Sufficiency** is judged on the evidence, not on scores: :func:`ragkit.evidence.resolution.resolve`
   over the counted evidence decides a value of the asked kind, and the decisive sentence
   must *predicate the asked attribute of the asked entity*: situated by its heading, table
   header, title and the chain that led to it, it names a word of the asked attribute (the
   thing, not only "completed"), and the codes and names the task qualifies it with (a value
   stated without the code counts when a counted source states the same value for it). What
   only names the thing asked about is no attribute: a lead-in ("For the service that builds
   the SEPA files, ..."), the subject a relative clause describes ("What does the bank that
   holds ... charge?"), the table row a look-up named it by. A misspelt word of the ask is
   read as the evidence spells it ("comander"), unless the tokenizer knows it as a word. A
   decisive source that fails is set aside and resolution runs again; when nothing in scope
   states the attribute, the agent abstains and says what is missing. Cause questions take a
   sentence that states a cause, from the thread of the asked event (the ticket the task's
   own searches place best, by the cross-encoder's ranks, summed over the searches); so does
   any question about an event it describes without a key: another ticket's thread, and a record
   only another thread led to, tell of another event (a postmortem of the asked event brings the
   follow-up tickets it names into it). A status
   or date asked of a record reached *from* an identifier ("the fix for OPS-1003") is not read
   from that identifier's own thread. Rule questions try the task's query variants before
   following incident threads; an exception whose condition has ended sends the agent to the
   rule it deferred to at once.
6. **Contradiction search** once a value is decided: the condition of any conditional
   source (``until cutover`` -> ``<tenant> cutover completed``); when resolution finds the
   condition met, the rule the exception deferred, searched with the exception's own words;
   then two narrow queries for
   the same entity and predicate, one with ``exception until cutover``, one with
   ``superseded revoked effective completed`` (CURRICULUM section 7's words); then resolve
   again, and check the condition of any conditional source the new evidence brought.
7. **Answer** with the resolved value first and the decisive sentence quoted, cited
   ``[doc_id#anchor]``; or **abstain**, saying what was searched, what was found, what
   is missing or which sources conflict, and what to confirm.

The modules, in the order a run uses them: :mod:`~ragkit.agent.offline.reading` (the task),
:mod:`~ragkit.agent.offline.page` (what the policy reads of each search),
:mod:`~ragkit.agent.offline.passages` (what an excerpt says), :mod:`~ragkit.agent.offline.memory`
(what a run remembers), :mod:`~ragkit.agent.offline.judging` (rules 3 and 5),
:mod:`~ragkit.agent.offline.moves` (rules 2, 4 and 6), :mod:`~ragkit.agent.offline.answers`
(rule 7), :mod:`~ragkit.agent.offline.policy` (the policy and one task's run) and
:mod:`~ragkit.agent.offline.asks` (rule 0: a run per ask).

Example:
    >>> from ragkit.agent.state import AgentState
    >>> state = AgentState("Which commit fixed OPS-3318?", "2026-02-02", "acme", "tool", 6)
    >>> OfflinePolicy().begin(state).next_action(state).arguments["query"]
    'OPS-3318 commit fixed'
"""

from ragkit.agent.offline.answers import abstention_text, answer_text, cite_each
from ragkit.agent.offline.asks import AskByAsk
from ragkit.agent.offline.judging import Judgement
from ragkit.agent.offline.moves import CONTRADICTION_TERMS
from ragkit.agent.offline.policy import ABSTAIN_BELOW, OfflinePolicy, OfflineRun

__all__ = [
    "ABSTAIN_BELOW",
    "AskByAsk",
    "CONTRADICTION_TERMS",
    "Judgement",
    "OfflinePolicy",
    "OfflineRun",
    "abstention_text",
    "answer_text",
    "cite_each",
]
