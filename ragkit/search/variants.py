"""Query variants: several wordings of one request, searched separately and fused.

CURRICULUM section 3 asks for two or three variants, including a *hypothetical answer*
embedded instead of the question (HyDE: Gao et al., "Precise Zero-Shot Dense Retrieval
without Relevance Labels", 2022). HyDE needs a language model to write that answer. Offline
we use a transparent stand-in, :func:`declarative_rewrite`: the question turned into the
opening of a statement ("Which cutoff applies to Acme?" -> "The cutoff that applies to Acme
is"). It invents no facts, so it measures only what a statement-shaped query does to dense
retrieval, not what a model's (possibly wrong) guess would add. Say so wherever it is used.

Example:
    >>> declarative_rewrite("Which settlement cutoff applies to Acme's EUR batch?")
    "The settlement cutoff that applies to Acme's EUR batch is"
    >>> declarative_rewrite("Why did the January reconciliation fail?")
    'The January reconciliation failed because'
    >>> sorted(query_variants("Which commit fixed OPS-3318?"))
    ['declarative', 'identifiers', 'keywords', 'question']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragkit.retrieval.fusion import Ranking, rrf
from ragkit.text.taskparse import keyword_query, parse_task

__all__ = ["declarative_rewrite", "query_variants", "multi_query"]

_AUX = r"(?:is|are|was|were|does|do|did|has|have|had|should|can|will|would)"
_IRREGULAR = {"fail": "failed", "break": "broke", "run": "ran", "go": "went", "take": "took",
              "win": "won", "begin": "began", "send": "sent", "stop": "stopped", "ship": "shipped",
              "hold": "held"}
_NOT_VERBS = {"as", "is", "was", "has", "this", "its", "us", "our", "yes", "less", "across", "plus"}


def _past(verb: str) -> str:
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    return verb + "d" if verb.endswith("e") else verb + "ed"


def declarative_rewrite(question: str) -> str:
    """The opening of a statement that would answer ``question`` (a template, no model).

    Only the last sentence is rewritten (any context before it is kept). Rules, tried in
    order: ``Why did X <verb>?`` -> ``X <verb>ed because``; ``Which|What <noun phrase>
    did|does <subject> <verb> ...?`` -> ``The <noun phrase> that <subject> <verb>ed ... is``;
    ``What|Which is|was X?`` -> ``X is``; ``Which|What <noun phrase> <verb>s|<verb>ed ...?`` ->
    ``The <noun phrase> that <verb> ... is``; ``When|Who|Where|How ...?`` -> the question
    without its question word. Anything else is returned without its question mark.
    """
    text = question.strip().rstrip("?").strip()
    parts = re.split(r"(?<=[.!])\s+", text)
    context, q = " ".join(parts[:-1]), parts[-1]
    statement = _statement(q)
    return f"{context} {statement}" if context else statement


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _statement(q: str) -> str:
    m = re.match(r"(?i)^why\s+(?:did|does|do)\s+(.+?)\s+(\w+)$", q)
    if m:
        return f"{_cap(m.group(1))} {_past(m.group(2).lower())} because"
    m = re.match(r"(?i)^(?:what|which)\s+(.+?)\s+(?:did|does|do)\s+(\w+)\s+(\w+)\b\s*(.*)$", q)
    if m:
        rest = f" {m.group(4)}" if m.group(4) else ""
        return f"The {m.group(1)} that {m.group(2)} {_past(m.group(3).lower())}{rest} is"
    m = re.match(rf"(?i)^(?:what|which)\s+{_AUX}\s+(.+)$", q)
    if m:
        return f"{_cap(m.group(1))} is"
    for m in re.finditer(r"(?i)^(?:what|which)\s+(.+?)\s+(\w+(?:s|ed))\b\s*(.*)$", q):
        if m.group(2).lower() not in _NOT_VERBS:
            rest = f" {m.group(3)}" if m.group(3) else ""
            return f"The {m.group(1)} that {m.group(2)}{rest} is"
    m = re.match(rf"(?i)^(?:when|who|where|how)\s+(?:{_AUX}\s+)?(.+)$", q)
    if m:
        return _cap(m.group(1))
    return q


def query_variants(task: str, *, tenant: str = "*", as_of: Any = None) -> dict[str, str]:
    """Up to four wordings of ``task``, by name.

    * ``question``: the task as asked;
    * ``keywords``: identifiers and content words (:func:`ragkit.text.taskparse.keyword_query`);
    * ``identifiers``: the identifiers alone (only when the task has some);
    * ``declarative``: :func:`declarative_rewrite`, the offline stand-in for a hypothetical answer.
    """
    frame = parse_task(task, tenant=tenant, as_of=as_of)
    out = {"question": task, "keywords": keyword_query(frame) or task}
    if frame.identifiers:
        out["identifiers"] = " ".join(frame.identifiers)
    out["declarative"] = declarative_rewrite(task)
    return out


def multi_query(index: Any, queries: Sequence[str] | Mapping[str, str], width: int, mask: Any, *,
                k: float = 60) -> Ranking:
    """Search every query with BM25 and dense retrieval and fuse all the lists with RRF."""
    texts = list(queries.values()) if isinstance(queries, Mapping) else list(queries)
    lists: list[Ranking] = []
    for text in dict.fromkeys(texts):
        lists.append(index.search_lexical(text, width, mask))
        lists.append(index.search_dense(text, width, mask))
    return rrf(lists, k=k).top(width)
