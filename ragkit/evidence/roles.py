"""Rule 9: the roles of the sources beside the decisive one: hops, qualifiers, support; the rest.

:func:`assign_roles` selects the sources on the link path from an identifier the question names
to the decisive source (``hop``), a completion record for the question's tenant whose event the
decisive source depends on (``qualifier``), and sources that link to the decisive one
(``support``). Whatever is still open then is a ``neighbouring_fact``, unless it is part of an
unresolved conflict.

Example:
    >>> from ragkit.evidence.spans import Evidence
    >>> ticket = Evidence.of("ops-1#s", "OPS-1: see rb-1.", {"doc_id": "ops-1"})
    >>> rb = Evidence.of("rb-1#s", "EUR cutoff 16:00.", {"doc_id": "rb-1"})
    >>> r = Resolution("Which EUR cutoff does OPS-1 point to?", [ticket, rb], None, None)
    >>> assign_roles(r, r.items[1])
    >>> r.items[0].state, r.items[0].role
    ('selected', 'hop')
"""

from __future__ import annotations

import re
from collections import deque

from ragkit.core.records import GLOBAL_TENANT
from ragkit.evidence.resolution_state import Item, Resolution, names_identifier, refers_to
from ragkit.text.relevance import COMPLETED, mentions
from ragkit.text.values import sentence_spans
from ragkit.text.words import letter_stems, stem

__all__ = ["assign_roles"]


def assign_roles(r: Resolution, winner: Item | None) -> None:
    """Select hops, qualifiers and support around ``winner`` (rule 9); reject what is left open
    as ``neighbouring_fact``."""
    alive = r.alive()
    if winner is not None:
        reachable = [i for i in r.items if i.state != "rejected" or i.reason == "lower_authority"]
        path = _hop_path(r, winner, reachable)
        for h in path:
            if h.state == "rejected" and h.reason != "lower_authority":
                continue
            h.state, h.reason, h.by = "open", "", None
            h.select(
                "hop",
                f"on the link path from {', '.join(r.ids)} (named in the question) "
                f"to {winner.ev.doc_id}",
            )
        dec_words = letter_stems(winner.ev.text)
        for it in alive:
            if it.state != "open":
                continue
            for a, b in sentence_spans(it.ev.text):
                sentence = it.ev.text[a:b]
                m = re.search(r"\b([A-Za-z]+)\s+" + COMPLETED.pattern[2:], sentence, re.IGNORECASE)
                if not m or stem(m.group(1).lower()) not in dec_words:
                    continue
                tenant = it.ev.envelope.tenant
                if tenant != GLOBAL_TENANT and (not r.asked_tenants or tenant in r.asked_tenants):
                    it.select(
                        "qualifier",
                        f"records that {m.group(1).lower()} completed for {tenant}, "
                        f'which {winner.ev.doc_id} depends on: "{sentence}"',
                    )
                    break
        for it in alive:
            if it.state == "open" and (
                winner.ev.doc_id in it.ev.envelope.links or mentions(it.ev.text, winner.ev.doc_id)
            ):
                it.select("support", f"refers to {winner.ev.doc_id}")
    disputed = {c.a for c in r.unresolved} | {c.b for c in r.unresolved}
    for it in r.alive():
        if it.state == "open" and it.ev.citation not in disputed:
            what = (
                f"{it.value.surface} is not what is asked"
                if it.value
                else f"its values are stated for other codes than {', '.join(sorted(r.codes))}"
                if it.off_code
                else f"holds no {'/'.join(r.forms) or 'text'} value relevant to the question"
            )
            it.reject("neighbouring_fact", what)


def _hop_path(r: Resolution, winner: Item, alive: list[Item]) -> list[Item]:
    """Items on a link path from any item naming a question identifier to ``winner``.

    Edges: ``envelope.links`` or the doc id written in the text (case-insensitive).
    Each naming item is searched from separately and the paths are united.
    """
    if not r.ids:
        return []
    starts = [i for i in alive if i is not winner and any(names_identifier(i, x) for x in r.ids)]
    on_path: list[Item] = []
    for start in starts:
        parent: dict[int, Item | None] = {id(start): None}
        queue = deque([start])
        while queue:
            cur = queue.popleft()
            if cur is winner:
                node = parent[id(cur)]
                while node is not None:
                    if node not in on_path:
                        on_path.append(node)
                    node = parent[id(node)]
                break
            for nxt in alive:
                if id(nxt) not in parent and refers_to(cur, nxt):
                    parent[id(nxt)] = cur
                    queue.append(nxt)
    return on_path
