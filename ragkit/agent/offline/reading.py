"""Reading the task: what kind of answer it asks for and how it reaches it.

The offline policy plans from :func:`ragkit.text.taskparse.parse_task`; this module adds what
the policy reads on top of the task frame: whether the task asks for a *cause*
(:data:`CAUSE_ASK`), whether it runs along a chain of records (:data:`HOP_CUES`; the source
type whose content is asked, :func:`target_type`), which identifiers it names only as the
origin of a relation ("the fix for OPS-1003": :func:`origins`), and a short phrase of what it is
about (:func:`about_task`, for abstentions).

Example:
    >>> sorted(origins("Where does the fix for OPS-1003 stand?", ["OPS-1003"]))
    ['ops-1003']
    >>> target_type("Which policy does the fix cite?"), bool(CAUSE_ASK.search("Why did it fail?"))
    ('policy', True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragkit.text.profile_views import ProfileMap, ProfileRegex
from ragkit.text.taskparse import TaskFrame

__all__ = ["ROLES", "HOP_CUES", "CAUSE_ASK", "origins", "target_type", "about_task"]

#: What the policy does with a source type -> the types that play that part (the profile's
#: ``source_roles``: ``thread``, ``rule``, ``chain_rule_target``, ...).
ROLES: ProfileMap[tuple[str, ...]] = ProfileMap("source_roles")

#: A sentence that points at another record: the policy follows the identifiers it names
#: (the profile's ``hop_cues``).
HOP_CUES = ProfileRegex("hop_cues", re.IGNORECASE)


#: The task asks for a cause: the answer must be a sentence that states one (the profile's
#: ``cause_ask``).
CAUSE_ASK = ProfileRegex("cause_ask", re.IGNORECASE)


# a record reached *from* an identifier: "the fix for X", "the review of X", "the action item
# from the postmortem for X", "the deployment that resolved X" (the profile's ``relation_cues``)
_RELATION = ProfileRegex("relation_cues", re.IGNORECASE)
# a chain question asks for a rule's / a shipped change's content (the profile's
# ``rule_target_cues`` / ``change_target_cues``; the type asked is the first of the role's types)
_TARGET_CUES = (("chain_rule_target", ProfileRegex("rule_target_cues", re.IGNORECASE)),
                ("chain_change_target", ProfileRegex("change_target_cues", re.IGNORECASE)))

def origins(task: str, identifiers: Sequence[str]) -> set[str]:
    """Identifiers the task names as the origin of a relation to another record (lower case)."""
    out = set()
    for ident in identifiers:
        at = task.find(ident)
        if at > 0 and _RELATION.search(task[:at].rstrip() + " "):
            out.add(ident.lower())
    return out


def target_type(task: str) -> str | None:
    """For a question along a chain, the source type whose content is asked for (or None)."""
    if not HOP_CUES.search(task):
        return None
    for role, cues in _TARGET_CUES:
        if cues.search(task):
            types = ROLES.get(role) or ()  # a derived profile lacks a role its corpus has no type for
            return types[0] if types else None
    return None


def about_task(frame: TaskFrame) -> str:
    """What the task is about, in a few words: its identifiers, names, predicate and period."""
    parts = [*frame.identifiers, *frame.names]
    if frame.tenant_named:
        parts.insert(0, frame.tenant)
    what = " ".join(frame.predicate[:5])
    when = f" in {frame.period[0][:7]}" if frame.period else (f" on {frame.date}" if frame.date else "")
    return (" ".join(parts) + " " + what).strip() + when
