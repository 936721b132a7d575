"""Read the value a question asks for out of a span, with exact character offsets.

Evidence resolution (CURRICULUM section 7) compares *values*, not passages: a
cutoff of 16:00 against one of 15:00, EUR 25,000 against EUR 40,000. This module
reads them. :func:`read_values` finds every value of a kind in a text and returns
:class:`Value` records whose ``start``/``end`` point at the characters they were read
from (``text[v.start:v.end] == v.surface``), so that every decision can point at
the characters it rests on. :func:`asked_kind` maps a question to the kind of value
it asks for.

Values are normalised with :func:`ragkit.text.normalise.normalise_value` (one normaliser for
the whole kit): ``"3 pm"`` and ``"15:00"`` both read as ``"15:00"``.

Forms are finer than kinds: a *form* says what the value looks like (``duration``,
``percentage``, ``person``), its *kind* (one of :data:`ragkit.text.normalise.VALUE_KINDS`) says
how it is normalised and compared (:data:`ragkit.text.value_patterns.FORM_KIND`).

Not read: currency symbols (``€25,000``: write ``EUR 25,000``), numbers written as
words (``five days``), relative dates (``next Monday``), names of banks or firms.

Example:
    >>> [(v.value, v.start, v.end) for v in read_values("EUR cutoff 16:00 CET; GBP at 2 pm.", "time")]
    [('16:00', 11, 16), ('14:00', 29, 33)]
    >>> read_values("The threshold is EUR 25,000.", "amount")[0].value
    'EUR 25000'
    >>> asked_kind("Which settlement cutoff applies to Acme's Monday EUR batch on 19 January 2026?")
    'time'
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ragkit.core.errors import ValidationError
from ragkit.text.asking import (
    QUESTION_PREPOSITIONS,
    QUESTION_WORDS,
    ask_of,
    is_yes_no,
    proposed_names,
    questions_of,
)
from ragkit.text.normalise import VALUE_KINDS, normalise_value
from ragkit.text.profile_views import ProfileSeq
from ragkit.text.value_patterns import (
    CURRENCIES,
    DURATION_QUALIFIERS,
    FORM_KIND,
    FORM_PATTERNS,
    FORMS,
    KIND_FORMS,
    MONTH_WORDS,
    NOT_PEOPLE,
)
from ragkit.text.words import id_shape

__all__ = [
    "Value",
    "read_values",
    "asked_kind",
    "asked_forms",
    "asked_id_shape",
    "asked_unit",
    "proposed_identifiers",
    "without_measures",
    "sentence_spans",
    "sentence_at",
]


@dataclass(frozen=True)
class Value:
    """A value read from a text.

    Attributes:
        kind: how it compares, one of :data:`ragkit.text.normalise.VALUE_KINDS`.
        value: normalised with :func:`ragkit.text.normalise.normalise_value` (``"15:00"``, ``"EUR 25000"``).
        surface: the characters as written (``"3 pm"``, ``"EUR 25,000"``).
        start: first character of ``surface`` in the text it was read from.
        end: one past its last character (``text[start:end] == surface``).
        form: what it looks like (:data:`ragkit.text.value_patterns.FORMS`), e.g. ``duration`` for a
            ``text`` value.
    """

    kind: str
    value: str
    surface: str
    start: int
    end: int
    form: str = ""

    def shifted(self, offset: int) -> Value:
        """The same value with offsets moved by ``offset`` (span offsets -> document offsets)."""
        return Value(self.kind, self.value, self.surface, self.start + offset, self.end + offset, self.form)


def _forms_for(kind: str | None) -> tuple[str, ...]:
    if kind is None:
        return FORMS
    if kind in KIND_FORMS:
        return KIND_FORMS[kind]
    if kind in FORM_KIND:
        return (kind,)
    raise ValidationError(
        f"value kind {kind!r} is unknown; use one of {list(VALUE_KINDS)} or a form {list(FORMS)}",
        field="kind",
    )


def _iter_form(text: str, form: str) -> Iterator[Value]:
    for m in FORM_PATTERNS[form].finditer(text):
        surface = m.group(0)
        start, end = m.start(), m.end()
        if form == "id" and surface.startswith("`"):
            surface, start, end = surface[1:-1], start + 1, end - 1
        if form == "person" and surface in NOT_PEOPLE:
            continue
        if form == "id" and re.fullmatch(r"[A-Z]{3}-\d{4}|\d{4}-\d+", surface):
            # a year range like 2025-2026 or a currency code is not an identifier
            if surface[:3] in CURRENCIES.split("|") or surface[0].isdigit():
                continue
        kind = FORM_KIND[form]
        try:
            value = normalise_value(kind, surface)
        except ValidationError:
            continue
        yield Value(kind, value, surface, start, end, form)


def read_values(text: str, kind: str | None = None, *, forms: Sequence[str] | None = None) -> list[Value]:
    """Every value of ``kind`` in ``text``, in reading order, with exact offsets.

    Args:
        text: the span to read (a chunk, a section, a sentence).
        kind: a kind of :data:`ragkit.text.normalise.VALUE_KINDS` (``"text"`` reads durations,
            percentages and counts; ``"id"`` reads identifiers and surnames), a form of
            :data:`ragkit.text.value_patterns.FORMS`, or ``None`` for every form.
        forms: read exactly these forms instead (``("id",)`` reads identifiers but not surnames);
            overrides ``kind``.

    Raises:
        ValidationError: unknown kind.

    Example:
        >>> [(v.form, v.surface) for v in read_values("Retention stays at 5 years; reserve 12%.", "text")]
        [('duration', '5 years'), ('percentage', '12%')]
        >>> [v.surface for v in read_values("Commit a41c9e2 (RO-7702), approved by Esterhazy.", "id")]
        ['a41c9e2', 'RO-7702', 'Esterhazy']
    """
    found: list[Value] = []
    chosen = tuple(forms) if forms is not None else _forms_for(kind)
    unknown = [f for f in chosen if f not in FORM_KIND]
    if unknown:
        raise ValidationError(f"unknown value form(s) {unknown}; use {list(FORMS)}", field="forms")
    for form in chosen:
        found.extend(_iter_form(text, form))
    found.sort(key=lambda v: (v.start, -(v.end - v.start)))
    out: list[Value] = []
    for v in found:  # drop values nested inside an earlier, longer one (a time inside a date-time)
        if out and v.start < out[-1].end and v.form != out[-1].form and v.end <= out[-1].end:
            continue
        out.append(v)
    return out


# --------------------------------------------------------------------------------------
# what a question asks for

# the profile's ``ask_rules``: (pattern, forms), first match wins
_ASK_RULES: ProfileSeq[tuple[str, tuple[str, ...]]] = ProfileSeq(lambda p: p.ask_rules)

# a question word that opens a clause (perhaps after a preposition: "on which date", "after how
# many") and the three words after it; not "when", which asks a date or a time of day alike
_PHRASE_WORDS = "|".join(w for w in QUESTION_WORDS.split("|") if w != "when")
_QUESTION_PHRASE = re.compile(
    rf"(?:^|[,:;?.]\s*|\band\s+)(?:(?:{QUESTION_PREPOSITIONS})\s+)?"
    rf"(?:{_PHRASE_WORDS})(?:'s)?\b(?:\s+[\w'-]+){{0,3}}"
)


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
    """
    ask = ask_of(question)
    q = ask.lower()
    ruled: tuple[str, ...] = ()
    # "which rollout carried" says what is asked before a noun elsewhere does ("... early cutoff")
    phrases = " ... ".join(m.group(0) for m in _QUESTION_PHRASE.finditer(questions_of(ask).lower()))
    for text in (phrases, q):
        found = next((forms for pattern, forms in _ASK_RULES if _says(pattern, text)), None)
        if found is not None:
            ruled = found
            break
    if is_yes_no(question):
        proposed = [
            v.form for v in read_values(ask) if v.form != "id" or v.form in ruled or _proposed_as(ask, v)
        ]
        if proposed_names(question):
            proposed.insert(0, "person")  # "Is Hakimi the assignee?" asks who is
        if not proposed and _DAY_MONTH.search(ask):
            proposed.append("date")  # "Did it ship on 29 January?": a date, its year left to context
        if proposed:
            return tuple(dict.fromkeys([*proposed, *ruled]))
    return ruled


# a day of a month without a year ("29 January", "January 29"): no value to read, but a date asked
_DAY_MONTH = re.compile(rf"\b\d{{1,2}}\s+(?:{MONTH_WORDS})\b|\b(?:{MONTH_WORDS})\s+\d{{1,2}}\b", re.I)


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


_HOW_MANY = re.compile(r"\b(?:how many|the most(?=\s+[a-z-]+s\b))\s+((?:[a-z][a-z-]*\s*){1,3})")
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
    """
    m = _HOW_MANY.search(ask_of(question).lower())
    words = _PHRASE_END.sub("", m.group(1)).split() if m else []
    if len(words) >= 2 and words[-2] in DURATION_QUALIFIERS:
        return " ".join(words[-2:])  # a business day is not a calendar day
    return words[-1] if words else None


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


# --------------------------------------------------------------------------------------
# sentences

_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[`|])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence; lines (table rows, list items, headings) count as one.

    Example:
        >>> t = "EUR cutoff 16:00. Captures after roll.\\n| USD | 11:15 |"
        >>> [t[a:b] for a, b in sentence_spans(t)]
        ['EUR cutoff 16:00.', 'Captures after roll.', '| USD | 11:15 |']
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        cuts = [0, *(m.end() for m in _SENT_END.finditer(body)), len(body)]
        for a, b in zip(cuts, cuts[1:], strict=False):
            seg = body[a:b]
            stripped = seg.strip()
            if not stripped:
                continue
            lead = len(seg) - len(seg.lstrip())
            spans.append((pos + a + lead, pos + a + lead + len(stripped)))
        pos += len(line)
    return spans


def sentence_at(text: str, position: int) -> tuple[int, int]:
    """The span of the sentence holding ``position`` (``(position, position)`` if none does)."""
    for a, b in sentence_spans(text):
        if a <= position < b:
            return a, b
    return position, position
