"""What the offline policy remembers across one task's turns.

The policy is a set of rules over the task and the tool responses, but it keeps a little
state per task (a :class:`RunMemory`): the task frame, the kind of value asked, the query
variants already tried, the identifiers and documents it followed (and what named them), and
how many contradiction searches ran. :class:`ragkit.agent.offline.judging.Judging`,
:class:`ragkit.agent.offline.moves.Moves` and :class:`ragkit.agent.offline.policy.OfflineRun`
add, in turn, the rules that read and extend it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragkit.agent.state import EvidenceUse
from ragkit.evidence.fit import SentenceFit
from ragkit.text.taskparse import TaskFrame

__all__ = ["RunMemory"]


@dataclass
class RunMemory:
    """What the offline policy keeps across one task's turns (its task frame and every lead followed)."""

    frame: TaskFrame
    asked: str
    k: int = 5
    followed: set[str] = field(default_factory=set)  # identifiers searched as hops
    anchors: set[str] = field(default_factory=set)  # identifiers that make an excerpt count
    fetched: set[str] = field(default_factory=set)
    related_done: set[str] = field(default_factory=set)
    tried: set[str] = field(default_factory=set)  # names of variants already issued
    contradiction: int = 0
    conditions_checked: set[str] = field(default_factory=set)
    searched_ids: set[str] = field(default_factory=set)
    deferred: set[str] = field(default_factory=set)
    cause: bool = False  # the task asks for a cause
    target: str | None = None  # for a chain question: the source type whose content is asked
    linked: set[str] = field(default_factory=set)  # doc ids reached through a link
    # what named each identifier or document the agent followed: the sentence (with its heading and
    # table header) and the title of the record it stood in; it carries the chain's predicate
    leads: dict[str, str] = field(default_factory=dict)
    # a comment's own ticket, reached by the thread's link and not along a chain the task asked for:
    # what named it situates it but does not predicate the asked attribute of it
    threaded: set[str] = field(default_factory=set)
    referents: list[str] = field(default_factory=list)  # identifiers of what the ask describes (a row's)
    via: set[str] = field(default_factory=set)  # task identifiers named only as a chain's origin
    titled: list[str] = field(default_factory=list)  # compounds of the ask that title a delivered record
    sections: list[EvidenceUse] = field(default_factory=list)  # what was delivered, at the last judging
    described: set[str] = field(default_factory=set)  # words of a table row the ask named a thing by
    asked_words: tuple[str, ...] = ()  # the ask's content words as the task spells them
    read: str = ""  # the task with those words spelled as the evidence spells them, at the last judging
    fit: SentenceFit | None = None  # judges answering sentences (None: shared words only)
    # abstain when the decisive sentence's fit is below this logit (None: no such gate)
    gate: tuple[SentenceFit, float] | None = None
