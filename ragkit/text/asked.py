"""What a question asks for: the form of value, an identifier's shape, a counted unit.

Evidence resolution reads the values of the kind a question asks for (:mod:`ragkit.text.values`
reads them). This module reads the question: :func:`asked_forms` maps it to the forms of value it
asks for ("what time" -> ``time``; "how many minutes" -> ``duration``; a yes/no question that
proposes "still 11:15?" -> ``time``), :func:`asked_kind` to the kind they compare as,
:func:`asked_id_shape` to the shape of identifier ("which commit" -> a hash),
:func:`proposed_identifiers` to the identifiers a yes/no question puts forward, :func:`asked_unit`
to what a count counts, and :func:`without_measures` blanks the values a question only checks;
:func:`asks_future` says whether it asks what is proposed or will apply rather than what holds now.
What thing a question asks about (rather than what of it) is read by :mod:`ragkit.text.subjects`.
The rules are the profile's ``ask_rules`` and ``asked_shapes`` (documented regexes, not a model).

Example:
    >>> asked_kind("Which settlement cutoff applies to Acme's Monday EUR batch on 19 January 2026?")
    'time'
    >>> asked_forms("Is Acme's USD cutoff still 11:15 CET?")[0]
    'time'
"""

from __future__ import annotations

import re

from ragkit.text.asking import (
    AUXILIARIES,
    QUESTION_PREPOSITIONS,
    QUESTION_WORDS,
    ask_of,
    is_yes_no,
    proposed_names,
    questions_of,
)
from ragkit.text.profile_views import ProfileSeq
from ragkit.text.value_patterns import DURATION_QUALIFIERS, FORM_KIND, MONTH_WORDS, written_numbers
from ragkit.text.values import Value, read_values
from ragkit.text.words import UNIT_ABBREVIATIONS, id_shape, stem

__all__ = [
    "asked_kind",
    "asked_forms",
    "asked_id_shape",
    "asked_unit",
    "counts_unit",
    "proposed_identifiers",
    "without_measures",
    "asks_future",
]

# the profile's ``ask_rules``: (pattern, forms), first match wins
_ASK_RULES: ProfileSeq[tuple[str, tuple[str, ...]]] = ProfileSeq(lambda p: p.ask_rules)

# a question word that opens a clause (perhaps after a preposition: "on which date", "after how
# many") and the three words after it; not "when", which asks a date or a time of day alike
_PHRASE_WORDS = "|".join(w for w in QUESTION_WORDS.split("|") if w != "when")
_QUESTION_PHRASE = re.compile(
    rf"(?:^|[,:;?.]\s*|\band\s+)(?:(?:{QUESTION_PREPOSITIONS})\s+)?"
    rf"(?:{_PHRASE_WORDS})(?:'s)?\b(?:\s+[\w'-]+){{0,3}}"
)

# "which of Wayne's accounts", "which of the batches": a which-question over someone's things
_WHICH_OF = re.compile(r"\bwhich of (?:the |our |their |its |[\w-]+'s )([\w-]+?ies|[\w-]+?)(?:e?s)?\b")
# "which bank holds ...": a which-question whose noun is followed by its verb asks an instance of that noun
_WHICH_NOUN = re.compile(rf"which (?!of\b|one\b)[\w-]+ (?:{AUXILIARIES}|[a-z]+(?:ed|s))\b")
_DO_SUBJECT = re.compile(r"\b(what|which|who|whom)\s+(?:do|does|did)\b.*")


def asked_forms(question: str) -> tuple[str, ...]:
    """The forms of value a question asks for, most likely first; ``()`` for a free-text answer.

    Only the part of a message that asks is read (:func:`ragkit.text.asking.ask_of`). Rules are
    tried in order, first on the question phrases (a question word that opens a clause and the
    three words after it: "which rollout carried", "how long is"; not "when", which asks a date or
    a time of day alike), then on the whole ask; the first whose pattern matches wins (documented
    regexes, not a model: extend the profile's ``ask_rules`` for a new domain). A yes/no question
    (:func:`ragkit.text.asking.is_yes_no`) that proposes a value ("still 11:15?", "an 8%
    reserve?") asks for a value of that value's form: its forms come first.

    Example:
        >>> asked_forms("Which commit fixed OPS-3318?"), asked_forms("Why did the batch fail?")
        (('id',), ())
        >>> asked_forms("Follow OPS-1891 to the policy: what limit does the clause set?")[:2]
        ('amount', 'duration')
        >>> asked_forms("Are we still capped at 3 retries for payouts?")[0]
        'count'
        >>> asked_forms("Which rollout carried the fix for the early cutoff?")
        ('id',)
        >>> asked_forms("Is the controller still the lowest role that can approve a credit of EUR 40,000?")
        ()
        >>> asked_forms("What does the reserve hold policy set as the default holding time?")
        ('duration',)
        >>> asked_forms("Which of Wayne's accounts carries the EUR 230,000 sweep threshold?")
        ('id',)
    """
    ask = ask_of(question)
    # a value the question states is what it looks up by, not what it asks ("were 99.69% on time?")
    q = without_measures(ask).lower()
    # "which of Wayne's accounts ..." asks which account, as "which account ..." does
    q = _WHICH_OF.sub(lambda m: "which " + re.sub(r"ies$", "y", m.group(1)), q)
    ruled: tuple[str, ...] = ()
    found = None
    # "which rollout carried" says what is asked before a noun elsewhere does ("... early cutoff")
    # ("what does the reserve hold policy set as ...": after "what does" comes its subject, not what is asked)
    found_phrases = _QUESTION_PHRASE.finditer(questions_of(q))
    phrases = " ... ".join(_DO_SUBJECT.sub(r"\1", m.group(0)) for m in found_phrases)
    for text in (phrases, q):
        found = next((forms for pattern, forms in _ASK_RULES if _says(pattern, text)), None)
        if found is not None:
            ruled = found
            break
        if text == phrases and _WHICH_NOUN.match(phrases):
            break  # "which bank holds the account ...?" asks a bank, whatever else the ask names
    # a yes/no why-question ("Was the file refused on 5 January down to ...?") proposes a cause; its
    # date places the event
    why = found is not None and not found
    if is_yes_no(question):
        said = written_numbers(ask)  # "within half an hour?" proposes a duration
        proposed = [
            v.form for v in read_values(said)
            if (v.form != "id" or v.form in ruled or _proposed_as(said, v))
            and not _RELATIVE.search(said[: v.start]) and not (why and v.form == "date")
            # ("Soylent's review": whose, not who)
            and not (v.form == "person" and said[v.end:v.end + 2] in ("'s", "’s"))
        ]
        if proposed_names(question):
            proposed.insert(0, "person")  # "Is Hakimi the assignee?" asks who is
        if not proposed and not why and (_DAY_MONTH.search(ask) or found is None and _IN_MONTH.search(ask)):
            # "Did it ship on 29 January?", "Is it booked for June?" (when nothing else is asked;
            # not "Was the August 2026 problem down to ...?", whose month places the event)
            proposed.append("date")
        if proposed:
            return tuple(dict.fromkeys([*proposed, *ruled]))
    return ruled


# "... the lowest role that can approve a credit of EUR 40,000?": a value inside a relative clause
# restricts what the question is about; it is not the value the question proposes
_RELATIVE = re.compile(
    r"\b(?:that|who|which)\s+(?:can|could|may|might|must|shall|should|will|would|is|are|was|were)\b",
    re.IGNORECASE,
)

# a day of a month without a year ("29 January", "January 29"): no value to read, but a date asked
_DAY_MONTH = re.compile(rf"\b\d{{1,2}}\s+(?:{MONTH_WORDS})\b|\b(?:{MONTH_WORDS})\s+\d{{1,2}}\b", re.I)
# a month after a preposition, written as a name ("booked for June", not the modal "may")
_IN_MONTH = re.compile(r"\b(?:in|for|by|on|until|before|after|since|during)\s+(?:early |mid-?|late )?(?:"
                       + "|".join(m.capitalize() for m in MONTH_WORDS.split("|")) + r")\b(?!\s+\d{4})")


def _says(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches ``text`` in whole words: a hyphenated name is one word (the
    percentage rule's "reserve" is not said by the service "reserve-keeper")."""
    return any(
        not re.match(r"-\w", text[m.end():]) and not re.search(r"\w-$", text[: m.start()])
        for m in re.finditer(pattern, text)
    )


def _proposed_as(text: str, v: Value) -> bool:
    """Whether ``v`` follows "as" ("shipped as RO-8103", "filed as P1"): a value put forward."""
    return re.search(r"\bas\s+$", text[: v.start]) is not None


def proposed_identifiers(question: str) -> tuple[str, ...]:
    """Identifiers a yes/no question puts forward as its answer ("... shipped as RO-8103?").

    Like a proposed name (:func:`ragkit.text.asking.proposed_names`), a proposed identifier is
    what the question checks: the evidence need not name it, and the answer is whichever
    identifier of that shape the sources state.

    Example:
        >>> proposed_identifiers("Was the Soylent fix shipped as RO-8103?")
        ('RO-8103',)
        >>> proposed_identifiers("Did the OPS-7879 patch ship on 29 January?")
        ()
    """
    if not is_yes_no(question):
        return ()
    ask = ask_of(question)
    return tuple(v.surface for v in read_values(ask, forms=("id",)) if _proposed_as(ask, v))


# the profile's ``asked_shapes``, as (pattern, shape)
_ASKED_SHAPES: ProfileSeq[tuple[str, str]] = ProfileSeq(
    lambda p: ((pattern, shape) for shape, pattern in p.asked_shapes)
)


def asked_id_shape(question: str) -> str | None:
    """The identifier shape an identifier question asks for ("which commit" -> ``hash``), or ``None``.

    Only the part of the question that asks is read: "Which rollout fixed OPS-8013?" asks for a
    ``key`` (the rollout's), whatever else the question names.

    Example:
        >>> asked_id_shape("Which commit fixed OPS-3318?"), asked_id_shape("Which rollout fixed OPS-8013?")
        ('hash', 'key')
    """
    proposed = proposed_identifiers(question)
    if proposed:
        return id_shape(proposed[0])  # "shipped as RO-8103?" asks for a rollout key
    q = question.lower()
    m = re.search(r"\b(which|what)\s+([\w-]+\s+)?([\w-]+)", q)
    asking = q[m.start() : m.end()] if m else q
    if "where in the code" in q:
        return "function"
    for text in (asking, q):  # the asking phrase first, then the whole question ("... which one?")
        for pattern, shape in _ASKED_SHAPES:
            if re.search(pattern, text):
                return shape
    return None


# a question about a change still to come: what a proposal suggests or what will apply later
_FUTURE = re.compile(
    r"\b(?:will\s+(?:be|apply|change)|going\s+(?:up|down|to\s+be)|upcoming|proposed|proposal|"
    r"put\s+forward|once\b[^?]{0,60}?\b(?:applies|apply|takes\s+effect|comes\s+into\s+force))\b",
    re.IGNORECASE,
)


def asks_future(message: str) -> bool:
    """Whether an asking sentence asks what is proposed or what will apply, not what holds now.

    Example:
        >>> asks_future("Is the refund limit going up to EUR 40,000 from June?")
        True
        >>> asks_future("What rolling reserve has been proposed for the renewal?")
        True
        >>> asks_future("How long will the bank take to confirm?"), asks_future("What's the cutoff?")
        (False, False)
    """
    return bool(_FUTURE.search(questions_of(message)))


_HOW_MANY = re.compile(r"\b(?:how many|the most(?=\s+[a-z-]+s\b))\s+((?:[a-z][a-z-]*\s*){1,3})")
_HOW_MANY_OF = re.compile(r"\bhow many of (?:[\w-]+ ){0,3}?[\w-]+'s ([a-z][a-z-]*)")
#: Words that end the noun phrase after "how many" (a verb, a preposition).
_PHRASE_END = re.compile(
    r"\b(?:of|do|does|did|can|could|may|might|must|shall|should|will|would|is|are|was|were|have|has|had|"
    r"per|in|on|for|before|after|to|at|from|with|within|by|a|an|the|we|you|they|it|"
    r"allowed|permitted|needed|required)\b.*"
)


def asked_unit(question: str) -> str | None:
    """The noun a "how many" or "the most" question counts ("how many batches": batches), or ``None``.

    A count or a duration answers it only when it counts the same thing: "3 payout files" does not
    answer "how many closed batches", nor "4 weeks" "how many business days". Only the part of
    a message that asks is read (:func:`ragkit.text.asking.ask_of`).

    Example:
        >>> asked_unit("How many closed batches may be reopened?"), asked_unit("How many business days?")
        ('batches', 'business days')
        >>> asked_unit("How many times may it be retried?"), asked_unit("What's the most resends allowed?")
        ('times', 'resends')
        >>> asked_unit("Hand over after how many hrs?"), asked_unit("How many of Vireo's acks came late?")
        ('hours', 'acks')
    """
    owned = _HOW_MANY_OF.search(ask_of(question).lower())  # "how many of Vireo Bank's acks"
    if owned:
        return owned.group(1)
    m = _HOW_MANY.search(ask_of(question).lower())
    words = [UNIT_ABBREVIATIONS.get(w, w) for w in _PHRASE_END.sub("", m.group(1)).split()] if m else []
    if len(words) >= 2 and words[-2] in DURATION_QUALIFIERS:
        return " ".join(words[-2:])  # a business day is not a calendar day
    return words[-1] if words else None


def counts_unit(surface: str, unit: str) -> bool:
    """Whether a count or duration counts ``unit``, the noun :func:`asked_unit` read ("times" and
    "attempts" count tries of anything).

    Example:
        >>> counts_unit("2 closed batches", "batches"), counts_unit("3 payout files", "batches")
        (True, False)
        >>> counts_unit("8 attempts", "times"), counts_unit("54 minutes", "times")
        (True, False)
    """
    if unit in ("times", "attempts", "tries"):  # (any count of tries; not a length of time)
        return not re.search(r"\b(?:second|minute|hour|day|week|month|year)s?$", surface.lower())
    want = unit.split()
    have = surface.lower().split()[-len(want):]
    if len(have) != len(want):
        return False
    return all(stem(h.rstrip("s")) == stem(w.rstrip("s")) for h, w in zip(have, want, strict=True))



#: Values whose words are units of measure, not what the question is about.
_MEASURES = ("time", "amount", "duration", "percentage")


def without_measures(text: str) -> str:
    """``text`` with its measured values (times, amounts, durations, percentages) blanked out.

    A value a question proposes ("within 30 minutes", "a EUR 30,000 refund") is what is checked:
    its unit says nothing about which sentence answers, so a sentence that only shares "minutes"
    with the question is not about the question. A count keeps its noun ("3 retries" is about
    retries).

    Example:
        >>> without_measures("Is it done within 30 minutes at p95?")
        'Is it done within            at p95?'
        >>> without_measures("Are we capped at 3 retries?")
        'Are we capped at 3 retries?'
    """
    for v in read_values(text, forms=_MEASURES):
        text = text[: v.start] + " " * (v.end - v.start) + text[v.end :]
    return text


def asked_kind(question: str) -> str:
    """The kind of value (:data:`ragkit.text.normalise.VALUE_KINDS`) a question asks for.

    ``"what time / which cutoff"`` -> ``time``; ``"how much / threshold"`` -> ``amount``;
    ``"when / which date"`` -> ``date``; ``"which commit / ticket / who"`` -> ``id``;
    ``"status"`` -> ``status``; durations, percentages, counts and free text
    (``"why"``) -> ``text``. See :func:`asked_forms` for the finer form.

    Example:
        >>> [asked_kind(q) for q in ("Who approved RO-7702?", "What is the status of OPS-6087?",
        ...                          "When was the change completed?", "Why did it fail?")]
        ['id', 'status', 'date', 'text']
    """
    forms = asked_forms(question)
    return FORM_KIND[forms[0]] if forms else "text"
