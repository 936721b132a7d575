"""What thing a question asks about, as opposed to what it asks of that thing.

"What does *the bank that holds Soylent's Danish krone account* charge us per instruction?" asks
a bank's fee: the bank is named by a relative clause (:func:`described_subject`,
:func:`described_clause`), and DKK there says which bank, not the fee's currency. "By what time
must *the daily cash report* be checked?" asks of the report (:func:`asked_subject`): a sentence
that only shares "checked" is about something else. "For the service that builds the SEPA files,
within what time must an alert be acknowledged?" asks in its last clause (:func:`asking_clause`,
:func:`in_clause`). English word rules, nothing of one corpus; :mod:`ragkit.text.asked` reads the
kind of value asked. Who relays the request ("Kemi Petrakis from Acme wants ...") is not what it
is about either (:func:`requesters`).

Example:
    >>> asked_subject("By what time must the daily cash report be checked?")
    ('daily', 'cash', 'report')
    >>> q = "What does the bank that holds acme-9 charge?"
    >>> described_subject(q), described_clause(q)
    ('bank', ('holds', 'acme-9'))
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragkit.text.asking import (
    QUESTION_PREPOSITIONS,
    QUESTION_WORDS,
    ask_of,
    message_sentences,
    questions_of,
)
from ragkit.text.relevance import with_codes
from ragkit.text.words import IRREGULAR, TASK_STOPWORDS

__all__ = ["asking_clause", "in_clause", "relative_thing", "described_subject",
           "described_clause", "asked_subject", "subject_words", "requesters", "typed_records", "which_noun",
           "required_words", "source_named"]


# where a phrase names the source, not what is asked ("..., according to its design note?")
_ACCORDING = re.compile(r"\b(?:according to|as (?:set out|stated|written|described) in|per)\b[^,;:?.]*",
                        re.IGNORECASE)
# a lead-in that says when, where, under what or about what a question is asked: it opens with a
# preposition or a subordinating conjunction ("On the day when ...", "Once we have failed over, ...")
_LEADS_IN = re.compile(
    r"(?:for|on|in|at|after|before|under|from|across|during|since|until|once|if|when|while|given|"
    r"assuming|suppose|supposing|about|regarding|concerning|as for|as to)\b", re.IGNORECASE)
# a clause that opens with its question word, after at most a linking word and a preposition
_OPENS_WH = re.compile(
    rf"(?:(?:and|so|but|then)\s+)?(?:(?:{QUESTION_PREPOSITIONS})\s+)?(?:{QUESTION_WORDS})\b", re.IGNORECASE)


def asking_clause(question: str) -> str:
    """The clause of the asking sentence that opens with its question word (after at most a
    preposition: "within what time ..."), without the clauses before it and any "according to ..."
    phrase, when a clause that opens with a preposition or a subordinating conjunction leads in
    before it; ``""`` otherwise (a yes/no question, a question that opens the sentence, a topic or
    an instruction before it: "Incident commander hand-off - after how many hours?").

    What leads in says which thing or occasion is meant, not what is asked of it: in "For the
    service that builds the SEPA files, within what time must an alert be acknowledged?" the asked
    attribute is the alert's acknowledgement, and a sentence about the service's builds does not
    state it; in "On the day Acme's refunds failed, what time was a workaround running?" a sentence
    about the failure does not state when a workaround ran.

    Example:
        >>> asking_clause("For the service that builds the SEPA files, within what time must an "
        ...               "alert be acknowledged, according to its design note?")
        'within what time must an alert be acknowledged'
        >>> asking_clause("On the day when Acme's refunds failed, what time was a workaround running?")
        'what time was a workaround running'
        >>> asking_clause("What is Acme's USD cutoff?")
        ''
    """
    ask = questions_of(ask_of(question)).strip()
    sentences = [s for s in message_sentences(ask) if s.rstrip().endswith("?")]
    if not sentences:
        return ""  # a request without a question ("I want to check whether ..., and what it is.")
    clauses = re.split(r"\s*(?:[,;:]|\s-+\s|\u2014)\s*", sentences[-1])
    first = next((n for n, c in enumerate(clauses) if _OPENS_WH.match(c)), None)
    if not first or not _LEADS_IN.match(clauses[0]):
        return ""  # nothing leads in, or a topic ("Incident commander hand-off - after how many hours?")
    kept = " ".join(_ACCORDING.sub(" ", c) for c in clauses[first:])
    return " ".join(kept.replace("?", " ").split())


def typed_records(question: str, ids: Sequence[str], kinds: Sequence[str]) -> set[str]:
    """The record types (of ``kinds``) the question names together with one of its identifiers:
    "the OPS-4025 postmortem", "OPS-4025's postmortem", "the postmortem for OPS-4025".

    Such a type word says which record holds the answer, not what is asked of it: "What fix does
    the OPS-9577 postmortem record?" asks a fix, and every sentence of the postmortem is in a
    postmortem.

    Example:
        >>> typed_records("What fix does the OPS-9577 postmortem record?", ["OPS-9577"], ["postmortem"])
        {'postmortem'}
        >>> typed_records("Which postmortem covers OPS-9577?", ["OPS-9577"], ["postmortem"])
        set()
    """
    if not ids:
        return set()
    ask, alts = ask_of(question).lower(), "|".join(re.escape(i.lower()) for i in ids)
    together = r"\b(?:{ids})(?:'s)?\s+{kind}s?\b|\b{kind}s?\s+(?:for|of|on|about)\s+(?:{ids})\b"
    return {kind for kind in kinds if re.search(together.format(ids=alts, kind=kind), ask)}


# "according to the thread", "as per its design note": the last word names where it is written
_SOURCE = re.compile(r"\b(?:according to|as per)\s+(?:[\w'-]+\s+){0,4}?([\w-]+)\s*(?=[,.;:?!]|$)", re.I)


def source_named(question: str) -> str | None:
    """The noun a question names as where the answer is written ("according to *the thread*"):
    it says which record to read, not what is asked of it.

    Example:
        >>> source_named("What status is OPS-1075 in according to the thread?")
        'thread'
        >>> source_named("According to the Q2 2026 platform review, which bank sent 4 notices?")
        'review'
    """
    m = _SOURCE.search(question)
    return m.group(1).lower() if m else None


# "the bank that holds ...": a thing (group 1) a relative clause describes
_RELATIVE_THING = r"\bthe\s+([a-z]+)\s+(?:(?:that|which|who)\s+[a-z]+|behind\s+\S)"
# "What does the bank that holds ... charge?": that thing is the subject, something else is asked
_DESCRIBED_SUBJECT = re.compile(
    r"\b(?:what|which|how(?:\s+\w+)?)\s+(?:does|do|did|will|would|can|could|should|must)\s+"
    + _RELATIVE_THING, re.IGNORECASE)


def relative_thing(question: str) -> str | None:
    """The noun of the first thing the question's ask describes by a relative clause ("the *bank*
    that holds ..."), or ``None``; :func:`described_subject` when it is the asked subject.

    Example:
        >>> relative_thing("Who approved the fix for the bank that holds acme-9?")
        'bank'
    """
    m = re.search(_RELATIVE_THING, ask_of(question), re.IGNORECASE)
    return m.group(1).lower() if m else None


def described_clause(question: str) -> tuple[str, ...]:
    """The words of the relative clause that names the :func:`described_subject` ("that *holds
    Soylent's Danish krone account*"): they say which thing is meant, not what is asked of it. The
    clause ends at the main verb, the word before its object or a preposition ("charge us per ...").

    Example:
        >>> described_clause("What does the bank that holds Soylent's krone account charge us per item?")
        ('holds', "Soylent's", 'krone', 'account')
    """
    m = _DESCRIBED_SUBJECT.search(ask_of(question))
    if m is None:
        return ()
    rest = re.findall(r"[\w'-]+|\?", ask_of(question)[m.end(1):])[1:]  # after "that"
    stop = next((n for n, w in enumerate(rest) if w == "?" or w.lower() in _VP_START), len(rest))
    return tuple(rest[: max(stop - 1, 1)])


#: Words that open what follows a main verb ("charge *us* per instruction", "settle *on* Mondays").
_VP_START = {"us", "me", "them", "you", "per", "for", "on", "in", "at", "to", "each", "every", "by", "with"}


def described_subject(question: str) -> str | None:
    """The noun a question describes by a relative clause and asks something else of ("What does
    *the bank* that holds our DKK account charge?": its charge, not which bank), or ``None``.

    Example:
        >>> described_subject("What does the bank that holds Soylent's DKK account charge per instruction?")
        'bank'
        >>> described_subject("What is the lowest role that can approve it?") is None
        True
    """
    m = _DESCRIBED_SUBJECT.search(ask_of(question))
    return m.group(1).lower() if m else None


# "By what time must the daily cash report be checked?", "How long is a payout hold kept?", "when the
# report has to be reviewed": the thing a passive ask is asked of (a determiner, up to four words, a
# participle)
_PARTICIPLE = (rf"(?:[a-z]{{3,}}(?:ed|en|wn)|{'|'.join(IRREGULAR)}|sent|set|put|run|told|made|done|cut|shut|"
               r"read|used)")
_NOUNS = (r"(?:the|a|an|our|their|its|[A-Z][\w-]*'s)\s+"
          r"((?:(?!(?:that|which|who|for|of|in|on|at|to|from|with|by)\b)[a-z][\w-]*\s+){0,3}?[a-z][\w-]*)\s+")
# (not "does": "what limit does the clause set?" asks what the clause sets, not of the clause)
_AUX = r"(?:must|should|can|may|will|would|could|is|are|was|were)"
# (a question word with its noun, "how" with its word, or "when"; a yes/no question opens with its auxiliary)
_SUBJECT = re.compile(
    rf"(?:\b(?:(?:what|which)\s+\w+|how\s+\w+)(?:\s+\w+){{0,3}}?\s+{_AUX}\s+|\bwhen\s+(?:{_AUX}\s+)?"
    rf"|^\s*{_AUX}\s+)"
    rf"{_NOUNS}"
    rf"(?:(?:must|should|can|may|will|has\s+to|have\s+to|needs?\s+to)\s+)?(?:(?:be|get|being)\s+)?"
    rf"{_PARTICIPLE}\b"
    # "Does the daily cash report have to be checked ...?"
    rf"|^\s*(?:does|do|did)\s+{_NOUNS}(?:has|have|needs?)\s+to\s+be\s+{_PARTICIPLE}\b",
    re.IGNORECASE)


# "The dashboard panel we promised Cyberdyne ...: is it finished?": a topic, then a question of "it"
_TOPIC_END = r"(?:we|you|they|that|which|who|from|for|of|in|on|at|after|before|with)\b"
_TOPIC = re.compile(rf"^\s*(?:the|our|their|a|an)\s+((?:(?!{_TOPIC_END})[a-z][\w-]*\s+){{0,2}}[a-z][\w-]*)"
                    rf"(?=\s+{_TOPIC_END}|\s*:)[^:?]*:\s*(?:is|was|has|did|are|were|have)\s+(?:it|they)\b",
                    re.IGNORECASE)


def asked_subject(question: str) -> tuple[str, ...]:
    """The words of the thing a passive ask is asked of ("By what time must *the daily cash report*
    be checked?"): an answer must be about that thing, not only share the verb.

    Example:
        >>> asked_subject("By what time each morning must the daily cash report be checked by a second?")
        ('daily', 'cash', 'report')
        >>> asked_subject("Does the daily cash report have to be checked by 10:00?")
        ('daily', 'cash', 'report')
        >>> asked_subject("The dashboard panel we promised Acme after the June incident: is it finished?")
        ('dashboard', 'panel')
        >>> asked_subject("What is Acme's USD cutoff?")
        ()
    """
    ask = ask_of(question)
    m = _SUBJECT.search(ask) or _TOPIC.search(ask)
    return tuple(next(g for g in m.groups() if g).split()) if m else ()


def subject_words(question: str) -> tuple[str, ...]:
    """The content words of :func:`asked_subject`, a currency named in words as its code ("krone
    payments": NOK), without identifiers (the task's own, judged apart) and stop words.

    Example:
        >>> subject_words("When must the Norwegian krone payments be sent?")
        ('NOK', 'payments')
        >>> subject_words("When was the OPS-12 fix shipped?")
        ('fix',)
    """
    named = with_codes(" ".join(asked_subject(question))).split()
    return tuple(w for w in named if not any(c.isdigit() for c in w) and w.lower() not in TASK_STOPWORDS)


def in_clause(words: Sequence[str], question: str) -> list[str]:
    """The ``words`` that stand in the question's :func:`asking_clause` (``[]`` when it has none).

    Example:
        >>> in_clause(["service", "builds", "alert"], "For the service that builds the SEPA files, "
        ...           "within what time must an alert be acknowledged?")
        ['alert']
    """
    clause = asking_clause(question).lower()
    return [w for w in words if clause and re.search(rf"\b{re.escape(w.lower())}\b", clause)]


def which_noun(words: Sequence[str], question: str) -> list[str]:
    """The one of ``words`` a "which ...?" question asks an instance of ("Which *bank* holds the
    account affected in OPS-1769?" asks a bank: a sentence that names only the account does not
    answer it); ``[]`` when the ask is no "which" question or that noun is not among ``words``.

    Example:
        >>> which_noun(["bank", "holds", "account"], "Which bank holds the account in OPS-1769?")
        ['bank']
        >>> which_noun(["bank", "account"], "What does the bank charge?")
        []
    """
    m = re.search(r"\bwhich\s+([a-z-]+)", questions_of(ask_of(question)), re.IGNORECASE)
    return [w for w in words if m is not None and w.lower() == m.group(1).lower()]


def required_words(words: Sequence[str], question: str, *, free_text: bool = False) -> list[str]:
    """The ``words`` an answering sentence must name one of: for a free-text answer, the noun a
    "which" question asks an instance of (:func:`which_noun`: a typed value says what it is by its
    form, "pol-fees-v2" for "which policy"), else those of the :func:`asking_clause`; ``[]``: no rule.

    Example:
        >>> q = "If a batch is stuck at night, which phone line gets me a senior person?"
        >>> required_words(["phone", "line", "senior", "person"], q, free_text=True)
        ['phone']
        >>> required_words(["phone", "line", "senior", "person"], q)
        ['phone', 'line', 'senior', 'person']
    """
    return (which_noun(words, question) if free_text else []) or in_clause(words, question)


# "Kemi Petrakis from Acme wants ...", "Jonas at Wayne is writing ...", "Yara says ...": who asks
_REQUESTER = re.compile(
    r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+(?:-[A-Z][a-z]+)?)?)\s+(?:from|at)\s+[A-Z][\w&-]*\b|"
    r"\b([A-Z][a-z]+\s+[A-Z][a-z]+(?:-[A-Z][a-z]+)?)\s+(?:says|said|wants|wanted|asks|asked|is asking|"
    r"was asking|needs|writes|wrote|mentioned|reports|reported|pinged|emailed|called|insists|tells|told)\b|"
    # "Hamid Gallardo in Stark's CTO office wants ...": a first name and surname placed in an organisation
    r"\b([A-Z][a-z]+\s+[A-Z][a-z]+(?:-[A-Z][a-z]+)?)\s+(?:in|of|on)\s+[A-Z][\w&-]*(?:'s)?\s+[\w\s]{0,30}?"
    r"(?:team|office|desk|department|group|finance|treasury|operations|side)\b"
)


def requesters(message: str) -> tuple[str, ...]:
    """Names of the people a message says are asking ("Kemi Petrakis from Acme wants ...").

    The person who relays a request is who wants the answer, not what it is about: "Kemi from
    Acme wants a contact for the rounding drift ticket. Who's the owner?" asks for the ticket's
    owner, and the evidence need not name Kemi. A requester is a name before "from" or "at" an
    organisation, or a first name and surname before a verb of asking or saying ("Kemi Petrakis
    says"); one word before such a verb may be an organisation ("Globex wants ...") and is kept.
    Each word of a name is returned.

    Example:
        >>> requesters("Kemi Petrakis from Acme wants a contact for the ticket. Who owns it?")
        ('Kemi', 'Petrakis')
        >>> requesters("Hamid Gallardo in Stark's CTO office wants to know why. Above what balance?")
        ('Hamid', 'Gallardo')
        >>> requesters("Thorsby owns an Acme ticket about drift. What's its key?")
        ()
    """
    return tuple(
        w for m in _REQUESTER.finditer(message)
        for w in re.split(r"\s+", next(g for g in m.groups() if g))
    )
