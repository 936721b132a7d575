"""Which part of a message asks: the question inside a longer request.

Operators rarely send a bare question. "Hi all, Yara from Acme finance is planning a large
capture push next week. What's Acme's USD cutoff at the moment? Thanks" names a person, a plan
and a week, but asks for one thing. Reading every word of such a message as the question makes
the reader require passages that name Yara and speak of planning. :func:`ask_of` keeps the
sentences that ask (those ending in a question mark) and, when an asking sentence leans on the
one before it (a pronoun such as *it*, *that* or *them*, or fewer than three content words:
"Who is it?", "What's the deadline?"), that sentence too. A message with no question mark, or
with nothing but questions, is read whole. The rule is about English questions, not about any
corpus: what the message is *about* (its identifiers, tenant and dates) is still read from the
whole message by :func:`ragkit.text.taskparse.parse_task`; what it *asks* comes from here.

:func:`is_yes_no` says whether the ask is a yes/no question ("Is Acme's USD cutoff still
11:15?", "... closes at noon, right?"): its answer is the value of the attribute it names, which
may or may not be the value it proposes.

Example:
    >>> ask_of("Hi all, Yara is planning a push next week. What's Acme's USD cutoff now? Thanks")
    "What's Acme's USD cutoff now?"
    >>> ask_of("Their manager is asking when we must send the notice. What's the deadline?")
    "Their manager is asking when we must send the notice. What's the deadline?"
    >>> ask_of("I need the Q3 late days for Tyrell. What does the quarterly review say?")
    'I need the Q3 late days for Tyrell. What does the quarterly review say?'
    >>> ask_of("Which commit fixed OPS-3318?")
    'Which commit fixed OPS-3318?'
    >>> is_yes_no("Is Acme's USD cutoff still 11:15 CET?"), is_yes_no("Which cutoff applies?")
    (True, False)
"""

from __future__ import annotations

import re

from ragkit.text.words import TASK_STOPWORDS

__all__ = [
    "QUESTION_WORDS", "AUXILIARIES", "QUESTION_PREPOSITIONS", "message_sentences", "ask_of",
    "questions_of", "is_yes_no", "proposed_names", "compared_names", "asks_present_state",
    "without_tag", "split_asks",
]

# a sentence ends at . ? ! (or a line break) followed by a space and an upper-case letter or digit
_CUT = re.compile(r"(?<=[.?!])\s+(?=[A-Z0-9\"'(])|\n+")
# words that point back to something named in an earlier sentence
_BACK = re.compile(r"\b(it|its|that|this|they|them|their|those|these|one|he|she|her|his)\b", re.IGNORECASE)
# a question that opens with an auxiliary verb asks yes or no; so does a statement with a tag
#: The words that open an English question: question words, auxiliary verbs, and the prepositions
#: a question word may follow ("on which date", "after how many"). Written once; every pattern
#: below and :func:`ragkit.text.asked.asked_forms` build on them.
QUESTION_WORDS = "what|which|who|whom|whose|when|where|why|how"
AUXILIARIES = "is|are|was|were|do|does|did|has|have|had|can|could|should|will|would|may|must|am"
QUESTION_PREPOSITIONS = "on|in|at|by|for|after|before|above|below|under|within|from|to|with|of"
_YES_NO = re.compile(rf"^({AUXILIARIES})\b", re.IGNORECASE)
_TAG_ANYWHERE = re.compile(r",\s*(?:right|correct|yes|no|isn't it|aren't they|true)\s*\?", re.IGNORECASE)
_TAG = re.compile(_TAG_ANYWHERE.pattern + r"\s*$", re.IGNORECASE)
# ... unless it is a polite request ("Can you tell me ...?") or also asks a wh-question
_REQUEST = re.compile(r"^(can|could|would|will)\s+(you|someone|somebody)\b", re.IGNORECASE)
_WH = re.compile(rf"\b({QUESTION_WORDS})\b", re.IGNORECASE)
# a question that only asks what a source says ("What does the quarterly review say?") asks
# about the thing the sentence before it names
_SOURCE_SAYS = re.compile(r"^(?:and\s+|so\s+)?what\s+(?:does|do|did|would|will)\s+[^?]*\b(?:say|state|show|"
                          r"mention|report|tell\s+us)\s*\?$", re.IGNORECASE)


# "... is asking when we must send the notice", "wants to know whether ...": a reported question
_REPORTED_ASK = re.compile(rf"\b(?:ask(?:s|ed|ing)?|wants? to know|wondering|wonders|needs? to know|"
                           rf"would like to know)\s+((?:{QUESTION_WORDS}|whether|if)\b)", re.IGNORECASE)


def message_sentences(message: str) -> list[str]:
    """The sentences of ``message``, stripped, in order (a line break also ends one).

    Example:
        >>> message_sentences("Board deck question. What is the reserve? Thanks")
        ['Board deck question.', 'What is the reserve?', 'Thanks']
    """
    return [s.strip() for s in _CUT.split(message) if s and s.strip()]


def _content(sentence: str) -> list[str]:
    words = re.findall(r"[A-Za-z][A-Za-z0-9_\-]*", sentence.lower())
    return [w for w in words if w not in TASK_STOPWORDS and len(w) > 2]


def ask_of(message: str) -> str:
    """The sentences of ``message`` that ask, with the sentence an asking one leans on.

    A message without a question mark, or whose sentences all ask, is returned unchanged.
    """
    sentences = message_sentences(message)
    asking = [n for n, s in enumerate(sentences) if s.rstrip().endswith("?")]
    if not asking or len(asking) == len(sentences):
        return message.strip()
    keep: set[int] = set()
    for n in asking:
        keep.add(n)
        s = sentences[n]
        leans = bool(_BACK.search(s) or _SOURCE_SAYS.match(s)) or len(_content(s)) < 3
        if leans and n > 0:
            keep.add(n - 1)
    return " ".join(sentences[n] for n in sorted(keep))


def questions_of(message: str) -> str:
    """The sentences of ``message`` that end in a question mark, and the question a sentence reports
    when they say too little by themselves ("... is asking when we must send the notice. What's the
    deadline?"); the whole message if none does.

    Unlike :func:`ask_of`, the sentence a question leans on is left out: it says who "their"
    is, not what is asked.

    Example:
        >>> questions_of("They submitted at 12:05. What is their PLN cutoff now? Thanks")
        'What is their PLN cutoff now?'
        >>> questions_of("Their manager is asking when we must send the notice. What's the deadline?")
        "when we must send the notice. What's the deadline?"
    """
    sentences = message_sentences(message)
    # (only when the question says too little by itself: "What's the deadline?")
    bare = any(s.rstrip().endswith("?") and len(_content(s)) < 3 for s in sentences)
    asking = []
    for s in sentences:
        reported = _REPORTED_ASK.search(s) if bare else None
        if s.rstrip().endswith("?") or reported:
            asking.append(s if s.rstrip().endswith("?") or reported is None else s[reported.start(1):])
    return " ".join(asking) if asking else message.strip()


def _asking_sentences(message: str) -> list[str]:
    """The question sentences of the ask of ``message`` (the ask itself if none ends in "?")."""
    ask = ask_of(message)
    return [s for s in message_sentences(ask) if s.endswith("?")] or [ask]


def without_tag(message: str) -> str:
    """``message`` without the tag that turns a statement into a question (", right?" -> "?").

    The tag asks for confirmation; it names nothing the evidence must say.

    Example:
        >>> without_tag("Umbrella's PLN batch closes at noon, right?")
        "Umbrella's PLN batch closes at noon?"
    """
    return _TAG_ANYWHERE.sub("?", message)


def is_yes_no(message: str) -> bool:
    """Whether the ask of ``message`` is a yes/no question (auxiliary first, or a tag: ", right?").

    A polite request ("Can you tell me the date ...?") and a question that also asks what,
    which, who, when, where, why or how are not yes/no questions.
    """
    return any(
        (_YES_NO.match(q) or _TAG.search(q)) and not _REQUEST.match(q) and not _WH.search(q)
        for q in _asking_sentences(message)
    )


# "Is Hakimi the assignee ...?": a name right after a form of "be", before the thing it is said to be
_PROPOSED = re.compile(
    r"^(?:[Ii]s|[Aa]re|[Ww]as|[Ww]ere)\s+([A-Z][A-Za-z]+(?:-[A-Z][A-Za-z]+)?)\s+(?:still\s+)?(?:the|a|an|our|their|its)\b"
)


def proposed_names(message: str) -> tuple[str, ...]:
    """Names a yes/no question proposes as its answer ("Is Hakimi the assignee?" -> ``Hakimi``).

    The proposed name is what the question checks, not what the evidence must be about: the
    answer is whoever the sources name, Hakimi or not.

    Example:
        >>> proposed_names("Is Hakimi the assignee on OPS-1847?"), proposed_names("Is Acme on 11:00?")
        (('Hakimi',), ())
    """
    if not is_yes_no(message):
        return ()
    return tuple(m.group(1) for q in _asking_sentences(message) if (m := _PROPOSED.match(q)))


# "... closes with the rest of the Nordics", "... same as Globex": a name the claim compares with
_COMPARED = re.compile(
    r"\b(?:same as|such as|like|than|(?:the )?rest of|along with|together with|as do|as does)\s+"
    r"(?:(?:with|at|for|in|on|to)\s+)?(?:the\s+|our\s+|other\s+)*([A-Z][a-z][A-Za-z]+(?:\s+[A-Z][a-z][A-Za-z]+)*)"
)


def compared_names(message: str) -> tuple[str, ...]:
    """Names a yes/no question compares its claim with ("... with the rest of the Nordics, right?").

    Like a proposed name, a name the claim is likened to is part of what the question checks, and
    may be wrong: the source that states the fact need not name it.

    Example:
        >>> compared_names("Soylent NOK closes with the rest of the Nordics at 12:00, right?")
        ('Nordics',)
        >>> compared_names("Which bank holds the account of Nordics Ltd?")
        ()
        >>> compared_names("Does our agreement with Solent Bank commit them to 99.9%?")
        ()
        >>> compared_names("Can we leave Kestrel Bank on 90 days' notice, like with Harbor Clearing?")
        ('Harbor', 'Clearing')
    """
    if not is_yes_no(message):
        return ()
    found = [m.group(1) for q in _asking_sentences(message) for m in _COMPARED.finditer(q)]
    return tuple(w for name in found for w in name.split())


# words that put a question in the present: what holds now, not what happened
_NOW = re.compile(
    r"\b(still|currently|now|nowadays|these days|at the moment|at present|presently|today|"
    r"any ?more|yet|in force|in effect|right now)\b",
    re.IGNORECASE,
)
# a question about permission or obligation: "Can I approve ...?", "Do we need ...?", "Am I allowed ...?"
_MODAL = re.compile(
    r"^(?:(?:can|may|must|should|need)\s+(?:i|we|you|they|a|an|the)\b|"
    r"(?:do|does)\s+(?:i|we|you|they)\s+(?:need|have to)\b|"
    r"(?:am|are|is)\s+\w+\s+(?:allowed|permitted|required)\b)",
    re.IGNORECASE,
)

# the simple present asks what holds as a rule or habit ("When does the batch close?", "By what time
# do payments have to be in?"), and so does what someone is expected to do ("within what time are
# we supposed to acknowledge?") and a hypothetical ("If we wanted out, how much notice would
# we owe?"); the past ("When did it close?") asks what happened
_HABITUAL = re.compile(
    r"\b(?:do|does)\b(?!\s+not\b)|\b(?:have|has|need|needs)\s+to\b|\b(?:would|could)\b(?!\s+have\b)|"
    r"\b(?:supposed|expected|obliged|required)\s+to\b",
    re.IGNORECASE,
)


# how much of an obligation held then ("How many calendar days did we have to get the evidence in?")
_OBLIGATION = re.compile(
    r"\bhow (?:many|much|long|soon)\b.*\b(?:did|do|does|would|will|should)\s+(?:[\w'-]+\s+){1,3}?"
    r"(?:(?:have|need)\b.*\bto\b|owe\b)",
    re.IGNORECASE,
)


def asks_obligation(message: str) -> bool:
    """Whether an asking sentence measures an obligation ("how many days did we have to ...?"): what a
    rule required at a date, not what happened, whatever the tense.

    Example:
        >>> asks_obligation("How many calendar days did we have on 2 September to get the evidence in?")
        True
        >>> asks_obligation("How much notice would we have to give Kestrel to end the agreement?")
        True
        >>> asks_obligation("How many days did the fix take?")
        False
    """
    return any(_OBLIGATION.search(q) for q in _asking_sentences(message))


def asks_present_state(message: str) -> bool:
    """Whether the ask of ``message`` is about what holds now (a standing rule or state).

    A yes/no question checks a claim against what holds ("Is the cutoff 11:15?"; the caller
    reads a question in the past tense as an event first). Words of the present ("still",
    "currently", "these days", "yet", "in force") and a question of permission or obligation
    ("Can I approve ...?", "Do we need ...?") ask what holds at the moment of asking; "What went
    wrong?" asks what happened. A question with neither says nothing either way (``False``).

    Example:
        >>> asks_present_state("Are we still capped at 3 retries?")
        True
        >>> asks_present_state("Can I approve it alone?")
        True
        >>> asks_present_state("Who fixed the rounding bug?")
        False
    """
    return is_yes_no(message) or any(
        _NOW.search(q) or _MODAL.match(q) or _HABITUAL.search(q) for q in _asking_sentences(message)
    )


# "..., and which rollout carried it?", "... and has their cutover happened?": a second ask joined
# to the first by a conjunction, opening with a question word or an auxiliary verb (perhaps after a
# preposition: "and on which bridge?")
_TWO_THINGS = re.compile(r"^(what|which)\s+(?:are|were)\s+(.+?)\s+and\s+((?:its|their)\s.+)$", re.IGNORECASE)
_JOINED_ASK = re.compile(
    rf"(?:,\s*|\s+)(?:and|but|also|plus)\s+(?=(?:(?:{QUESTION_PREPOSITIONS})\s+)?"
    rf"(?:(?:{QUESTION_WORDS})(?:'s)?|{AUXILIARIES})\b)",
    re.IGNORECASE,
)
# a sentence that opens with "And ...?" or "Also ...?" asks a further question
_FURTHER = re.compile(r"^(?:and|also|plus)\b[\s,]*", re.IGNORECASE)
# where an ask starts: its question word, or an auxiliary verb that opens it
_ASK_START = re.compile(rf"\b(?:{QUESTION_WORDS})(?:'s)?\b|^(?:{AUXILIARIES})\b", re.IGNORECASE)
# a question word that stands for the subject: the word after it is the verb ("who approved X")
_SUBJECT_WH = re.compile(r"^(?:who|who's|what|which)\s+(?=[a-z]+(?:ed|es|s)\b)", re.IGNORECASE)
_AUXILIARY = re.compile(rf"^(?:'s|{AUXILIARIES})\b\s*", re.IGNORECASE)


def _lead_in(ask: str) -> tuple[str, str]:
    """``(lead-in, ask)``: "OPS-5559: what caused it" -> ("OPS-5559: ", "what caused it")."""
    m = _ASK_START.search(ask)
    if m is None or m.start() == 0:
        return "", ask
    head = ask[: m.start()]
    # only a lead-in that ends a clause ("Risk review: for Acme, what ...") is shared by every ask
    return (head, ask[m.start():]) if re.search(r"[:,;\u2013\u2014-]\s*$", head) else ("", ask)


def _what_it_is(ask: str) -> str:
    """What an ask is about, without its question words: "Who maintains reserve-keeper" ->
    "reserve-keeper"; "What follow-up action came out of the OPS-1847 postmortem" -> "follow-up
    action came out of the OPS-1847 postmortem"."""
    text = ask.strip().rstrip("?").strip()
    m = _SUBJECT_WH.match(text)
    if m is not None:
        # "who approved the fix": the asker's verb is not what the ask is about
        text = re.sub(r"^[A-Za-z]+\s*", "", text[m.end():])
    else:
        text = re.sub(rf"^(?:{QUESTION_WORDS})\b\s*", "", text, flags=re.IGNORECASE)
        text = _AUXILIARY.sub("", text)
    words = [w for w in text.split() if w.lower().strip(",.") not in TASK_STOPWORDS or "-" in w]
    return " ".join(words) or text


def _whose(ask: str) -> str:
    """Who or what an ask names (a name, an identifier, a hyphenated name): what a later "its" or
    "their" points back to ("What's Tyrell's EUR cutoff" -> "Tyrell's"); "" if it names none."""
    tokens = re.findall(r"[A-Za-z0-9][\w'-]*", ask)
    named = [t for n, t in enumerate(tokens)
             if n and (re.match(r"[A-Z][a-z]", t) or re.search(r"\d|-", t))]
    return " ".join(named)


def split_asks(message: str) -> list[str]:
    """The asks of a message that asks two things at once, each as a message of its own.

    "Who maintains reserve-keeper, and what's its p95 batch duration?" asks two questions; read as
    one, its words describe neither answer. A second ask is one joined to the first by "and" (or
    "but", "also", "plus") and opening with a question word or an auxiliary verb, or a question
    sentence opening with "And" or "Also". Each ask keeps the message's other sentences and the
    lead-in the asks share ("OPS-5559: what caused it, and which rollout fixed it?" gives
    "OPS-5559: what caused it?" and "OPS-5559: which rollout fixed it?"). A word in a later ask
    that points back with no shared lead-in to point to is replaced: *its* or *their* by the names
    and identifiers of the earlier ask, *it* or *that* by what the earlier ask is about, without
    its question words. A message with one ask is returned as the only item.

    Example:
        >>> split_asks("Who maintains reserve-keeper, and what's its p95 batch duration?")
        ['Who maintains reserve-keeper?', "what's reserve-keeper p95 batch duration?"]
        >>> split_asks("OPS-5559: what caused it, and which rollout fixed it?")
        ['OPS-5559: what caused it?', 'OPS-5559: which rollout fixed it?']
        >>> split_asks("What are ledger-core's ack target and its p95 batch duration?")
        ["What is ledger-core's ack target?", "What is ledger-core's p95 batch duration?"]
        >>> split_asks("Which commit fixed OPS-3318 and its follow-up?")
        ['Which commit fixed OPS-3318 and its follow-up?']
    """
    sentences = message_sentences(message)
    at = [n for n, s in enumerate(sentences) if s.rstrip().endswith("?")]
    if not at:
        return [message.strip()]
    first = at[0]
    asks: list[str] = []
    n_last = first
    pieces = _JOINED_ASK.split(sentences[first].rstrip().rstrip("?"))
    both = _TWO_THINGS.match(sentences[first].rstrip().rstrip("?"))
    if len(pieces) > 1 and _ASK_START.search(pieces[0]):
        asks = [p.strip() for p in pieces]
    elif both is not None:  # "What are X's A and its B?": one question word, two things asked
        owner = re.search(r"[\w-]+'s(?=\s)", both.group(2))  # whose "its" is
        second = re.sub(r"^\w+", owner.group(0), both.group(3)) if owner else both.group(3)
        asks = [f"{both.group(1)} is {both.group(2)}", f"{both.group(1)} is {second}"]
    else:
        asks = [sentences[first].rstrip().rstrip("?")]
    for n in at[1:]:
        if n == n_last + 1 and _FURTHER.match(sentences[n]):
            asks.append(_FURTHER.sub("", sentences[n]).rstrip().rstrip("?"))
            n_last = n
    if len(asks) < 2:
        return [message.strip()]
    lead, first_ask = _lead_in(asks[0])
    asks[0] = first_ask
    about, whose = _what_it_is(first_ask), _whose(first_ask)
    out = []
    for i, ask in enumerate(asks):
        back = _BACK.search(ask)
        if i and not lead and back is not None:
            # "its p95", "their cutover": whose (the earlier ask's name); "who owns it": what
            # the earlier ask asks about
            possessive = back.group(0).lower() in ("its", "their", "his", "her")
            ask = ask[: back.start()] + ((possessive and whose) or about) + ask[back.end():]
        out.append(lead + ask + "?")
    before, after = sentences[:first], sentences[n_last + 1:]
    return [" ".join([*before, ask, *after]) for ask in out]
