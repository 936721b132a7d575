"""What an excerpt says: causes, the section it stands in, the record it belongs to.

Helpers over the tool's JSON items (an :class:`ragkit.agent.state.EvidenceUse` each) that the
offline policy's judging and moves share: whether a sentence states a cause
(:func:`states_cause`), the heading and table header around a quote (:func:`situation`),
whether another sentence states the same value for the same codes (:func:`stated_for`), the
line that named an identifier (:func:`named_in`), the evidence a decision rests on
(:func:`holder`), and the ticket thread an excerpt belongs to (:func:`thread_of`,
:func:`refers_to`).

Example:
    >>> states_cause("The batch ran twice because the scheduler failed over.")
    True
    >>> states_cause("Finance noticed the gap, which is how they spotted it.")
    False
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence

from ragkit.agent.state import AgentState, EvidenceUse
from ragkit.evidence.decision import Decision
from ragkit.models.tokens import known_word
from ragkit.text.asking import ask_of, is_yes_no
from ragkit.text.profile_views import ProfileRegex, ProfileSeq
from ragkit.text.ranges import asked_period
from ragkit.text.references import clause_called, clause_names
from ragkit.text.relevance import DETECTION, context, mentions
from ragkit.text.taskparse import find_identifiers
from ragkit.text.values import read_values, sentence_spans
from ragkit.text.words import compound_stems, stem

__all__ = [
    "CAUSAL",
    "best_thread",
    "of_other_event",
    "UNSTATED",
    "referred_as",
    "contrasts",
    "heading_words",
    "respelled",
    "reworded",
    "states_cause",
    "situation",
    "stated_for",
    "named_in",
    "holder",
    "refers_to",
    "thread_of",
    "thread_roots",
    "record_text",
    "names",
]

#: English markers of a stated cause (a finding, not a symptom; the profile's ``stated_cause_cues``);
#: resolution's markers (:data:`ragkit.text.relevance.CAUSE`: "that is how", "which is why",
#: "led to", ...) count as well.
CAUSAL = ProfileRegex("stated_cause_cues", re.IGNORECASE)
# the source types named in their own thread (the profile's ``source_roles["own_thread"]``)
_OWN_THREAD: ProfileSeq[str] = ProfileSeq(lambda p: p.source_roles["own_thread"])

#: How judging sets aside a passage about the task that does not state the asked attribute.
UNSTATED = "a sentence that states "


def states_cause(text: str) -> bool:
    """Whether a sentence of ``text`` states a cause ("X, and that is how Y"), not how a problem
    was noticed ("... which is how they spotted it")."""
    return any(
        CAUSAL.search(text[a:b]) and not DETECTION.search(text[a:b]) for a, b in sentence_spans(text)
    )


def situation(text: str, quote: str) -> str:
    """The heading of the section and the header row of the table that hold ``quote`` in ``text``."""
    pos = max(0, text.find(quote)) if quote else 0
    heading = next((ln for ln in reversed(text[:pos].splitlines()) if ln.lstrip().startswith("#")), "")
    return heading + "\n" + context(text, pos)


def stated_for(
    uses: Sequence[EvidenceUse],
    surface: str,
    codes: Sequence[str],
    focus: Sequence[str] = (),
    *,
    besides: str = "",
) -> bool:
    """Whether a sentence of ``uses`` other than ``besides`` states ``surface``, names every code
    of ``codes`` and (if given) a word of ``focus``."""
    if not surface.strip():
        return False
    for use in uses:
        text = str(use.item.get("text", ""))
        for a, b in sentence_spans(text):
            sentence = text[a:b]
            if surface not in sentence or not all(re.search(rf"\b{re.escape(c)}\b", sentence) for c in codes):
                continue
            if besides and " ".join(sentence.split()) == " ".join(besides.split()):
                continue
            if not focus or any(stem(w.lower()) in compound_stems(sentence) for w in focus):
                return True
    return False


def named_in(state: AgentState, citation: str, ident: str, sentence: str = "") -> str:
    """The line of ``citation``'s text that names ``ident`` (or ``sentence``), situated by its
    heading and table header, and the record's title."""
    use = state.evidence.get(citation)
    if use is None:
        return sentence
    # (a record linked from a document's top is named in another of its sections: "| OPS-2011 |"
    # under "Action items")
    doc_id = use.item.get("doc_id")
    same = [u for u in state.evidence.values() if u is not use and u.item.get("doc_id") == doc_id]
    for text in [str(u.item.get("text", "")) for u in [use, *same]]:
        line = sentence or next((ln for ln in text.splitlines() if ident.lower() in ln.lower()), "")
        if line:
            return " ".join([line, situation(text, line), str(use.item.get("title", ""))])
    return " ".join(["", "", str(use.item.get("title", ""))])


def holder(pool: Sequence[EvidenceUse], decision: Decision) -> EvidenceUse | None:
    """The evidence the decision rests on: its citation, or the whole document it was read from."""
    found = next((u for u in pool if u.citation == decision.citation), None)
    if found is not None:
        return found
    quote = " ".join(str(decision.quote).split())[:60]
    for u in pool:
        if str(u.item.get("doc_id")) == str(decision.doc_id) and quote in " ".join(
            str(u.item.get("text", "")).split()
        ):
            return u
    return None


def refers_to(use: EvidenceUse, key: str) -> bool:
    """Whether an excerpt names the ticket ``key`` or links to its thread."""
    links = " ".join(map(str, use.item.get("links") or [])).lower()
    hay = " ".join([str(use.item.get("title", "")), str(use.item.get("text", "")), links]).lower()
    return key.lower() in hay


def thread_of(use: EvidenceUse) -> str | None:
    """The ticket key a ticket or comment belongs to (from its title), else None."""
    if use.item.get("source_type") not in _OWN_THREAD:
        return None
    found = [i for i, kind in find_identifiers(str(use.item.get("title", ""))) if kind == "key"]
    return found[0].lower() if found else None


def names(hay: str, name: str) -> bool:
    """Whether lower-cased ``hay`` names ``name``, in the singular or plural ("the Nordics" and
    "Nordic currencies").

    Example:
        >>> names("sek, dkk and nok: nordic currencies", "Nordics"), names("the eur batch", "Nordics")
        (True, False)
    """
    low = name.lower()
    return low in hay or re.search(rf"\b{re.escape(low.removesuffix('s'))}s?\b", hay) is not None


def contrasts(task: str, text: str) -> bool:
    """Whether ``text`` states a value the yes/no ``task`` proposes: "Has Tyrell moved to the 15:00
    EUR close yet?" and "Tyrell stays on 16:00 until cutover; the 15:00 rule does not reach them"
    speak of one thing, though the passage never says EUR.

    Example:
        >>> text = "Stays on 16:00 until cutover; the 15:00 rule does not reach them."
        >>> contrasts("Has Tyrell moved to the 15:00 EUR close yet?", text), contrasts("Which cutoff?", text)
        (True, False)
    """
    if not is_yes_no(task):
        return False
    return any(v.form != "id" and mentions(text, v.surface) for v in read_values(ask_of(task)))


def referred_as(text: str, use: EvidenceUse, uses: Sequence[EvidenceUse]) -> str:
    """What the references of ``use``'s document (in ``uses``) call the clauses ``text`` opens:
    "cap" for "12.4 The total ..." when a section says "subject to the cap in clause 12.4"."""
    doc_id = use.item.get("doc_id")
    names = clause_names([str(u.item.get("text", "")) for u in uses if u.item.get("doc_id") == doc_id])
    return " ".join(filter(None, (clause_called(line, names) for line in text.splitlines()))) if names else ""


def respelled(asked: Sequence[str], texts: Sequence[str]) -> tuple[str, ...]:
    """The task's names as the evidence spells them: a name of six or more letters that no text
    names, where exactly one word of the texts is one edit away from it ("Kestral" for the
    "Kestrel" every contract says), is read as that word, and so is a five-letter name with two
    neighbouring letters swapped ("Strak" for "Stark"; not "Stark" for "start"); other names are
    kept as asked.

    A name the evidence does state is never changed, so a near namesake (Soylent the tenant,
    Solent the bank) stays itself whenever the asked one is found; nor is a word the bundled
    tokenizer knows whole (:func:`ragkit.models.tokens.known_word`: "clause" is no misspelt "cause").

    Example:
        >>> respelled(["Kestral", "Acme", "Strak"], ["Kestrel Bank may terminate", "acme", "Stark's"])
        ('Kestrel', 'Acme', 'Stark')
        >>> respelled(["Soylent"], ["Solent Bank", "Soylent cutoff"])
        ('Soylent',)
    """
    hay = " ".join(texts).lower()
    # (a word the bundled tokenizer knows whole is spelled right: "clause" is no misspelt "cause")
    unfound = [n for n in asked if len(n) >= 5 and not names(hay, n) and not known_word(n)]
    if not unfound:
        return tuple(asked)  # (the usual case: no word set to build)
    words = set(re.findall(r"[a-z][a-z-]+", hay))
    words |= {p for w in words if "-" in w for p in w.split("-") if len(p) > 2}  # "conector": sepa-connector
    out = []
    for name in asked:
        low = name.lower()
        near = {w for w in words if w[0] == low[0] and _one_edit(w, low, swap_only=len(low) < 6)
                } if name in unfound else set()
        read = near.pop() if len(near) == 1 else low
        out.append(name if read == low else read.capitalize() if name[:1].isupper() else read)
    return tuple(out)


def reworded(task: str, asked: Sequence[str], read: Sequence[str]) -> str:
    """``task`` with each word of ``asked`` replaced by its reading in ``read`` (see :func:`respelled`).

    Example:
        >>> reworded("incident comander hand-off?", ["comander"], ["commander"])
        'incident commander hand-off?'
    """
    for was, now in zip(asked, read, strict=True):
        if was != now:
            task = re.sub(rf"\b{re.escape(was)}\b", now, task, flags=re.IGNORECASE)
    return task


def _one_edit(a: str, b: str, *, swap_only: bool = False) -> bool:
    """Whether ``a`` and ``b`` differ by a swap of two neighbouring letters or (unless
    ``swap_only``) by exactly one substitution, insertion or deletion."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = next((k for k in range(len(a)) if a[k] != b[k]), len(a))
    if len(a) == len(b) and a[i + 2:] == b[i + 2:] and a[i:i + 2] == b[i:i + 2][::-1]:
        return True  # "strak" and "stark"
    return not swap_only and a[i + (len(a) == len(b)):] == b[i + 1:]


def record_text(use: EvidenceUse) -> str:
    """``use``'s title, doc id and text, lower-cased: where a followed identifier shows that the
    agent reached this record along a chain (a rollout names its commit in its text)."""
    return " ".join(str(use.item.get(k, "")) for k in ("title", "doc_id", "text")).lower()


def thread_roots(use: EvidenceUse, sections: Sequence[EvidenceUse], leads: Mapping[str, str]) -> str:
    """The delivered text of the tickets whose threads led the agent to ``use``'s record: a
    delivered comment carries an identifier the agent followed (``leads``) that ``use`` carries."""
    own = record_text(use)
    followed = [i for i in leads if i in own]
    keys = {thread_of(u) for u in sections if any(i in str(u.item.get("text", "")).lower() for i in followed)}
    roots = [u for u in sections if str(u.item.get("doc_id")).lower() in keys]
    return " ".join(str(u.item.get("text", "")) for u in roots)


#: Reasons of the searches made with the task's own words (not hops, thread reads, contradictions).
_TASK_SEARCH = ("always-on retrieval", "first query", "the task as written", "identifiers alone",
                "keywords of the task", "structured:", "pseudo-relevance")


def best_thread(state: AgentState, counted: Sequence[EvidenceUse]) -> str | None:
    """The thread (ticket key) that the searches with the task's own words place best.

    The asked event is the ticket whose report matches the task: each search of the task's
    words (the task, its keywords, the structured and feedback variants; not hops, thread reads
    or contradiction searches) votes for the threads of the counted excerpts it delivered,
    ``1 / rank`` for a thread's best excerpt by the cross-encoder's rank (the best judge of
    question-passage fit the tool shows). One search's ordering is noisy; several phrasings
    agreeing on one ticket are less so.
    """
    keep = {u.citation for u in counted}
    votes: dict[str, float] = {}
    first_seen: dict[str, int] = {}
    for step in state.steps:
        if step.action != "search" or step.refused is not None:
            continue
        if not step.reason.startswith(_TASK_SEARCH):
            continue
        best: dict[str, int] = {}
        reranked = {str(h.get("citation")): h.get("rerank") for h in step.hits}
        for n, item in enumerate(step.response.get("results") or [], 1):
            citation = str(item.get("citation"))
            if citation not in keep:
                continue
            key = thread_of(state.evidence[citation])
            rank = int(reranked.get(citation) or n)  # the cross-encoder judges question-passage fit
            if key is not None and rank < best.get(key, 10**6):
                best[key] = rank
        for key, rank in best.items():
            votes[key] = votes.get(key, 0.0) + 1.0 / rank
            first_seen.setdefault(key, len(first_seen))
    if not votes:
        return None
    return max(votes, key=lambda k: (votes[k], -first_seen[k]))


def of_other_event(use: EvidenceUse, key: str, sections: Sequence[EvidenceUse],
                   leads: Mapping[str, str]) -> bool:
    """Whether ``use`` tells of another event than the ticket ``key``: it is in another ticket's
    thread, or the agent reached it through identifiers that only other threads named. A record
    about the event (its thread, its postmortem) that names or links it brings it into the event:
    the follow-up ticket a postmortem's action items name."""
    own = thread_of(use)
    if own == key or own is None and key in record_text(use):
        return False
    named = [own] if own is not None else [i for i in leads if i in record_text(use)]
    where = [u for u in sections if u is not use and _names_any(u, named)]
    if any(thread_of(u) == key or key in f"{u.item.get('doc_id', '')} {u.item.get('title', '')}".lower()
           for u in where):
        return False
    return own is not None or any(thread_of(u) not in (None, key) for u in where)


def _names_any(use: EvidenceUse, idents: Sequence[str]) -> bool:
    """Whether ``use`` names one of ``idents`` (lower case) in its text or by its links."""
    hay = f"{use.item.get('text', '')} {' '.join(map(str, use.item.get('links') or []))}".lower()
    return any(i in hay for i in idents)


#: A quarter a record's title says it covers ("Platform operations review, Q2 2026").
_QUARTER_TITLE = re.compile(r"\bQ[1-4]\s+\d{4}\b")


def outside_period(item: Mapping[str, object], period: tuple[str, str] | None, *, event: bool) -> str | None:
    """Why a delivered record is not about the months asked (``period``: ISO first day, day after),
    or ``None``: its title names another quarter ("..., Q2 2026" asked about Q3), or, for an event,
    it was published before the period or more than 45 days after it."""
    if period is None:
        return None
    start, end = period
    own = _QUARTER_TITLE.search(str(item.get("title", "")))  # "... review, Q2 2026": that quarter's
    if own and (other := asked_period(own.group(0), None)) and not (other[0] < end and start < other[1]):
        return f"a record of {own.group(0)}, not of the period asked about ({start[:7]})"
    published = str(item.get("published_at") or "")[:10]
    late = (dt.date.fromisoformat(end) + dt.timedelta(days=45)).isoformat()
    if event and published and not (start <= published < late):
        return f"published {published}, outside the period asked about ({start[:7]})"
    return None


def heading_words(anchor: str) -> set[str]:
    """The words of a section's anchor that name its topic (no numbers, no "continued")."""
    return {w for w in anchor.split("-") if len(w) > 3 and not w.isdigit() and w not in ("continued", "cont")}
