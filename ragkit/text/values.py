"""Read the value a question asks for out of a span, with exact character offsets.

Evidence resolution (CURRICULUM section 7) compares *values*, not passages: a
cutoff of 16:00 against one of 15:00, EUR 25,000 against EUR 40,000. This module
reads them. :func:`read_values` finds every value of a kind in a text and returns
:class:`Value` records whose ``start``/``end`` point at the characters they were read
from (``text[v.start:v.end] == v.surface``), so that every decision can point at
the characters it rests on. What kind of value a question asks for is read by
:mod:`ragkit.text.asked`.

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
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ragkit.core.errors import ValidationError
from ragkit.text.normalise import VALUE_KINDS, normalise_value
from ragkit.text.value_patterns import (
    CURRENCIES,
    FORM_KIND,
    FORM_PATTERNS,
    FORMS,
    KIND_FORMS,
    NOT_PEOPLE,
)

__all__ = [
    "cell_value",
    "Value",
    "read_values",
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


#: A table cell that holds only a whole number ("| 3,600 |"): under a header that names what it counts
_CELL_NUMBER = re.compile(r"(?<=\|)[ \t]*(\d{1,3}(?:,\d{3})+|\d{1,6})[ \t]*(?=\|)")


def _cell_counts(text: str) -> Iterator[Value]:
    """Whole numbers alone in a table's body cells, after its first column (which names the row):
    "| February | 323,000 | 3,600 |" under "| Month | Card captures | Bank transfers |" counts
    card captures and bank transfers."""
    lines = text.splitlines(keepends=True)
    offset = 0
    for n, line in enumerate(lines):
        below = lines[n + 1] if n + 1 < len(lines) else ""
        body = line.lstrip().startswith("|") and not re.match(r"\s*\|[\s:|-]*$", line)
        if body and not re.match(r"\s*\|[\s:|-]+\|", below):  # (not the header above a separator)
            first = line.find("|", line.find("|") + 1)
            for m in _CELL_NUMBER.finditer(line, max(first, 0)):
                if not re.fullmatch(r"(?:19|20)\d\d", m.group(1)):  # a year
                    yield Value("text", normalise_value("text", m.group(1)), m.group(1),
                                offset + m.start(1), offset + m.end(1), "count")
        offset += len(line)


def _iter_form(text: str, form: str) -> Iterator[Value]:
    if form == "count":
        yield from _cell_counts(text)
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
# sentences

_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[`|])")


def cell_value(text: str, start: int, end: int) -> Value:
    """The value ``text[start:end]`` (a table cell) holds: typed when the whole of it is one value
    ("EUR 11.00" is an amount, "6 minutes" a duration), else its text.

    Example:
        >>> t = "| Dispute handling | EUR 11.00 | Kestrel Bank |"
        >>> cell_value(t, 21, 30).value, cell_value(t, 33, 45).kind
        ('EUR 11', 'text')
    """
    whole = [v for v in read_values(text[start:end]) if (v.start, v.end) == (0, end - start)]
    if len(whole) != 1:
        return Value("text", normalise_value("text", text[start:end]), text[start:end], start, end, "text")
    return Value(whole[0].kind, whole[0].value, text[start:end], start, end, whole[0].form)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence; lines (table rows, list items, headings) count as one.

    Example:
        >>> t = "EUR cutoff 16:00. Captures after roll.\\n| USD | 11:15 |"
        >>> [t[a:b] for a, b in sentence_spans(t)]
        ['EUR cutoff 16:00.', 'Captures after roll.', '| USD | 11:15 |']
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    for line in _wrapped_lines(text):
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


def _wrapped_lines(text: str) -> list[str]:
    """The lines of ``text``, with a paragraph wrapped over several lines (as PDFs are: "giving not
    less than 365\\ndays' notice") joined: a line of prose that ends no sentence runs on into a next
    line that starts in lower case.

    Example:
        >>> _wrapped_lines("not less than 365\\ndays' notice.\\n```\\nservice ledger-core\\nbuild 3\\n```")
        ["not less than 365\\ndays' notice.\\n", '```\\n', 'service ledger-core\\n', 'build 3\\n', '```']
    """
    out: list[str] = []
    fenced = False  # (a code block's lines are records, each its own)
    for line in text.splitlines(keepends=True):
        head = line.lstrip()
        fence = head.startswith("```")
        if out and not fenced and not fence and head[:1].islower() and _runs_on(out[-1]):
            out[-1] += line
        else:
            out.append(line)
        fenced = fenced != fence
    return out


def _runs_on(line: str) -> bool:
    body = line.rstrip().rsplit("\n", 1)[-1].strip()
    return bool(body) and not body.startswith(("#", "|")) and body[-1] not in ".!?:;|"


def sentence_at(text: str, position: int) -> tuple[int, int]:
    """The span of the sentence holding ``position`` (``(position, position)`` if none does)."""
    for a, b in sentence_spans(text):
        if a <= position < b:
            return a, b
    return position, position
