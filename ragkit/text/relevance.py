"""Relevance: which sentences and values of a span speak to a question (used by resolution).

Small, documented text rules, not a model: content-word stems of a question
(:func:`question_terms`), the context that situates a sentence (its section heading and, for a
table row, the table header: :func:`context`), whether a text names a word (:func:`mentions`),
the month a question places its event in (:func:`named_month`), the event a condition waits
for (:func:`condition_event`), and the cue patterns for causal, deontic and completion
statements. Extend the patterns for another domain or language.

Example:
    >>> sorted(question_terms("Which settlement cutoff applies to Acme's Monday EUR batch?"))
    ['acme', 'batch', 'cutof', 'eur', 'settl']
    >>> condition_event("until cutover"), condition_event("for non-migrated tenants")
    ('cutov', 'migra')
    >>> named_month("initech-32644 had an issue in September 2025. What is the ticket key?")
    (2025, 9)
"""

from __future__ import annotations

import re

from ragkit.text.normalise import MONTH_NUMBER
from ragkit.text.profile_views import ProfileRegex, ProfileSeq, ProfileWords
from ragkit.text.words import QUESTION_STOPWORDS, TASK_STOPWORDS, WEEKDAYS, stem, word_stems

__all__ = [
    "unexcluded",
    "named_instance",
    "MONTH_NAMES",
    "COMPLETED",
    "CONDITION",
    "CAUSAL_QUESTION",
    "CAUSE",
    "DETECTION",
    "ROOT_CAUSE",
    "EXAMPLE",
    "illustrative",
    "DEONTIC_QUESTION",
    "DEONTIC",
    "CODE",
    "NOT_CODES",
    "named_codes",
    "with_codes",
    "question_terms",
    "context",
    "is_heading_or_table_head",
    "is_table_row",
    "table_cell",
    "mentions",
    "named_month",
    "condition_event",
]


#: "Jan", "Sept": a month, not a content word (but "sepa" and "marc" are words).
_MONTH_ABBREVIATIONS = {m[:3] for m in MONTH_NUMBER} | {"sept"}


def question_terms(text: str) -> set[str]:
    """Content-word stems of ``text`` (5-letter prefixes; no stop words, months, weekdays, numbers).

    Example:
        >>> sorted(question_terms("Which settlement cutoff applies to Acme's Monday EUR batch?"))
        ['acme', 'batch', 'cutof', 'eur', 'settl']
        >>> sorted(question_terms("What's ledger-core's page-to-acknowledgement target?"))
        ['ackno', 'ledge', 'page', 'targe']
        >>> sorted(question_terms("What's the sepa connector's RTO in Sept?"))
        ['conne', 'rto', 'sepa']
    """
    out = set()
    words = re.findall(r"[a-z][a-z0-9_-]*", text.lower().replace("'s", ""))
    # a hyphenated phrase ("page-to-acknowledgement") says its words; a name ("ledger-core") is one
    words = [p for w in words for p in (w.split("-") if set(w.split("-")) & QUESTION_STOPWORDS else [w])]
    for w in words:
        w = w.strip("-_")
        if len(w) < 3 or w in QUESTION_STOPWORDS or w in MONTH_NUMBER or w in _MONTH_ABBREVIATIONS:
            continue
        if w in WEEKDAYS:
            continue
        out.add(stem(w))
    return out


def negated_terms(text: str) -> set[str]:
    """Stems of the words a question rules out ("without any breach on their side", "other than
    fraud") or likens its subject to ("same as the scribe"): the first two content words after
    *without*, *except*, *excluding*, *other than*, *apart from*, *same as*, *unlike* or *as with*.
    A sentence about them states the other case, not the one asked.

    Example:
        >>> sorted(negated_terms("How much notice ends the agreement without any breach on their side?"))
        ['breac']
        >>> sorted(negated_terms("Does the incident commander hand over after 4 hours, same as the scribe?"))
        ['scrib']
        >>> sorted(negated_terms("Is the finance team's reply due in 6 hours, same as the disputes team?"))
        ['dispu']
    """
    out: set[str] = set()
    for m in _EXCLUDED.finditer(text):
        # (a word the question also asks with is no ruled-out case: "the finance team, the same as
        # the disputes team" rules out the disputes team, not teams)
        rest = question_terms(text[: m.start()] + " " + text[m.end():])
        out |= set(sorted(question_terms(m.group(1)), key=m.group(1).lower().find)[:2]) - rest
    return out


# what a question rules out, and what it likens its subject to
_RULED_OUT = r"without|except|excluding|other than|apart from"
_EXCLUDED = re.compile(rf"\b(?:{_RULED_OUT}|same as|unlike|as with)\b((?:\W+[\w'-]+){{1,4}})", re.IGNORECASE)


def unexcluded(text: str) -> str:
    """``text`` without the first word the question rules out after *without*, *except* (...):
    "end the agreement without cause" asks for notice, not for a cause.

    Example:
        >>> unexcluded("How much notice ends our agreement without cause?")
        'How much notice ends our agreement ?'
    """
    return re.sub(rf"\b(?:{_RULED_OUT})\s+(?:any\s+|a\s+)?[\w'-]+\s*", "", text, flags=re.IGNORECASE)


#: A sentence says something was completed (the profile's ``completion_cues``).
COMPLETED = ProfileRegex("completion_cues", re.IGNORECASE)
#: A condition's event, in group ``event`` (``until cutover``; the profile's ``condition_grammar``).
CONDITION = ProfileRegex("condition_grammar", re.IGNORECASE)
#: A question asks why (the profile's ``causal_question``).
CAUSAL_QUESTION = ProfileRegex("causal_question", re.IGNORECASE)
#: A sentence states a cause (the profile's ``cause_cues``).
CAUSE = ProfileRegex("cause_cues", re.IGNORECASE)

CODE = re.compile(r"(?<![\w-])[A-Z]{3}(?![\w-])")
#: Upper-case words that are not codes of things a question can be about (time zones, clock
#: words; the profile's ``not_codes``).
NOT_CODES = ProfileWords("not_codes")
#: "... which is how they spotted it" says how a problem was found, not what caused it
#: (the profile's ``detection_cues``).
DETECTION = ProfileRegex("detection_cues", re.IGNORECASE)
#: A question asks what is required (the profile's ``deontic_question``).
DEONTIC_QUESTION = ProfileRegex("deontic_question", re.IGNORECASE)
#: A sentence states an obligation (the profile's ``deontic_cues``).
DEONTIC = ProfileRegex("deontic_cues", re.IGNORECASE)
#: A sentence names the root cause (the profile's ``root_cause_cues``).
ROOT_CAUSE = ProfileRegex("root_cause_cues", re.IGNORECASE)
#: A paragraph or section illustrates one occurrence (the profile's ``example_cues``).
EXAMPLE = ProfileRegex("example_cues", re.IGNORECASE)

#: (pattern, code) for every name of the profile's ``code_names``, longest name first.
_CODE_NAMES: ProfileSeq[tuple[re.Pattern[str], str]] = ProfileSeq(
    lambda p: (
        (re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE), code)
        for name, code in sorted(((n, g[0]) for g in p.code_names for n in g[1:]), key=lambda nc: -len(nc[0]))
    )
)


def with_codes(text: str) -> str:
    """``text`` with every name of the profile's ``code_names`` written as its code.

    Example:
        >>> with_codes("By what time do US dollar payments close? And zloty ones?")
        'By what time do USD payments close? And PLN ones?'
    """
    taken: list[tuple[int, int, str]] = []
    for pattern, code in _CODE_NAMES:  # longest names first: "Canadian dollar" before "dollar"
        for m in pattern.finditer(text):
            if not any(a < m.end() and m.start() < b for a, b, _ in taken):
                taken.append((m.start(), m.end(), code))
    for a, b, code in sorted(taken, reverse=True):
        text = text[:a] + code + text[b:]
    return text


def named_codes(text: str) -> list[str]:
    """The codes ``text`` names: written as codes (``EUR``) or by a name of the profile's
    ``code_names`` ("US dollar" -> ``USD``: :func:`with_codes`), in order of first mention.

    Example:
        >>> named_codes("Is the zloty cutoff later than the EUR one?")
        ['PLN', 'EUR']
    """
    found = [m.group(0) for m in CODE.finditer(with_codes(text))]
    return list(dict.fromkeys(c for c in found if c not in NOT_CODES))


MONTH_NAMES = sorted(MONTH_NUMBER, key=MONTH_NUMBER.__getitem__)


def named_month(question: str) -> tuple[int, int] | None:
    """``(year, month)`` when the question places its event in a month: "in September 2025"."""
    m = re.search(r"\bin\s+(" + "|".join(MONTH_NAMES) + r")\s+(\d{4})\b", question, re.IGNORECASE)
    return (int(m.group(2)), MONTH_NUMBER[m.group(1).lower()]) if m else None


def condition_event(condition: str) -> str | None:
    """``"until cutover"`` -> ``"cutov"``; ``"for non-migrated tenants"`` -> ``"migra"``."""
    m = CONDITION.match(condition)
    return stem(m.group("event").lower()) if m else None


def context(text: str, position: int, *, cell: bool = False) -> str:
    """What situates a sentence: the span's first heading and, for a table row, the table's header row.

    With ``cell``, a table row is situated by the header of the column ``position`` lies in only:
    "| Account | Currency | Amount |" says that the row's amount is an amount, not an account.

    Example:
        >>> t = "## Details\\n| Account | Amount |\\n|---|---|\\n| a-1 | EUR 5 |"
        >>> context(t, t.find("EUR 5"), cell=True)
        '## Details\\nAmount'
    """
    lines = text.splitlines()
    heading = next((ln for ln in lines if ln.lstrip().startswith("#")), "")
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", line_start)
    if not is_table_row(text[line_start : None if line_end < 0 else line_end]):
        return heading
    head, pos = "", line_start
    while pos > 0:
        prev = text.rfind("\n", 0, pos - 1) + 1
        if not is_table_row(text[prev:pos]):
            break
        head, pos = text[prev:pos], prev
    if cell and head:
        before = text[line_start:position].lstrip()
        column = before.count("|") - (1 if before.startswith("|") else 0)
        cells = head.strip().strip("|").split("|")
        head = cells[column].strip() if 0 <= column < len(cells) else head
    return heading + "\n" + head


def illustrative(text: str, position: int) -> bool:
    """Whether ``position`` lies in a paragraph that opens an example ("Example. A merchant asked
    ...") or in a section headed as one ("Worked examples", "What it looked like last time"):
    what it states is one occurrence's, not the rule's (:data:`EXAMPLE`).

    Example:
        >>> t = "## Limits\\n\\nAbove EUR 25,000 two approve.\\n\\nExample. EUR 14,050 was held."
        >>> illustrative(t, t.find("25,000")), illustrative(t, t.find("14,050"))
        (False, True)
    """
    start = max(text.rfind("\n\n", 0, position), text.rfind("\n \n", 0, position))
    opening = text[start + 1 :].lstrip()[:60]
    headings = re.findall(r"^#+ (.*)$", text[:position], re.M)
    return bool(EXAMPLE.search(opening)) or bool(headings and EXAMPLE.search(headings[-1]))


def is_heading_or_table_head(text: str, a: int, b: int) -> bool:
    """A Markdown heading, a table's separator row, or the header row just above one."""
    line = text[a:b].strip()
    if line.startswith("#") or re.fullmatch(r"\|?[\s:|-]*-{3,}[\s:|-]*", line):
        return True
    rest = text[b:].lstrip("\r\n").split("\n", 1)[0].strip()
    return line.startswith("|") and re.fullmatch(r"\|?[\s:|-]*-{3,}[\s:|-]*", rest) is not None


def is_table_row(line: str) -> bool:
    """A Markdown table row ("| a | b |"), or one a PDF's text kept without its outer bars
    ("Tier 6 | 25,001 to 50,000 | head of operations")."""
    row = line.strip()
    return row.startswith("|") or row.count(" | ") >= 2


def _cells(line: str, offset: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each cell's stripped text in a table row starting at ``offset``."""
    spans, pos = [], (line.find("|") + 1 if line.lstrip().startswith("|") else 0)
    while pos < len(line):
        end = line.find("|", pos)
        end = len(line) if end < 0 else end
        cell = line[pos:end]
        left = len(cell) - len(cell.lstrip())
        spans.append((offset + pos + left, offset + pos + len(cell.rstrip())))
        pos = end + 1
    return [(a, b) for a, b in spans if b >= a]


#: Header words that label a column by what it names ("Bank name", "Merchant id").
_LABELS = ("name", "names", "id", "ids", "identifier", "code", "key")


def table_cell(text: str, a: int, b: int, question: str) -> tuple[int, int] | None:
    """The cell of the table row ``text[a:b]`` that answers ``question``, as ``(start, end)``.

    A row states several values; the question asks for one column of it. The answer is a cell
    the question does not name (its own account, its own currency, also by name: "dollar")
    whose column header shares the most word stems with the question ("Which bank ..." reads the
    *Bank* column); when no header shares a word, the only cell the question does not name.
    ``None`` when ``text[a:b]`` is no table row under a header, or no single cell answers.

    Example:
        >>> t = "| Account | Currency | Bank |\\n|---|---|---|\\n| acme-25788 | USD | Solent Bank |"
        >>> row = t.rindex("| acme")
        >>> a, b = table_cell(t, row, len(t), "Which bank is acme-25788 with?"); t[a:b]
        'Solent Bank'
        >>> a, b = table_cell(t, row, len(t), "What is the id of our dollar account at Solent Bank?"); t[a:b]
        'acme-25788'
        >>> v = "| Month | Bank transfers |\\n|---|---|\\n| April | 3,400 |"
        >>> table_cell(v, v.rindex("| April"), len(v), "Which bank sent us 4 notices?") is None
        True
    """
    line = text[a:b]
    if not is_table_row(line):
        return None
    header = next((ln for ln in reversed(context(text, a).splitlines()) if ln.strip()), "")
    if not is_table_row(header) or header.strip() == line.strip():
        return None
    cells = _cells(line, a)
    heads = [header[x:y] for x, y in _cells(header, 0)]
    if len(heads) != len(cells):
        return None
    asked = with_codes(question)
    # the column the question word names ("In which month ...?") before any other shared word
    noun = _asked_noun(question)

    def kind(head: str) -> int:
        """10 for a header that is the asked noun ("Bank", "Bank name"), -1 for one that only
        qualifies another noun by it ("Bank transfers" counts transfers), else 0."""
        words = re.findall(r"[a-z]+", head.lower())
        if not noun or stem(noun) not in {stem(w) for w in words}:
            return 0
        return 10 if stem(words[-1]) == stem(noun) or words[-1] in _LABELS else -1

    open_cells = [
        (len(word_stems(head) & question_terms(question)) + kind(head), (x, y))
        for head, (x, y) in zip(heads, cells, strict=True)
        if y > x and not mentions(asked, text[x:y]) and not mentions(question, text[x:y]) and kind(head) >= 0
    ]
    which = noun and re.search(rf"\bwhich\s+{noun}\b", question.lower())
    if not open_cells or which and max(kind(head) for head in heads) < 10:
        return None  # "which bank" and no *Bank* column: no cell of this row is a bank
    best = max(score for score, _ in open_cells)
    chosen = [span for score, span in open_cells if score == best]
    return chosen[0] if len(chosen) == 1 else None


def _asked_noun(question: str) -> str | None:
    """The noun right after "which"/"what" ("In which *month* ..."), or ``None``."""
    m = re.search(r"\b(?:which|what)\s+([a-z]{3,})\b", question.lower())
    return m.group(1) if m and m.group(1) not in TASK_STOPWORDS else None


def named_instance(text: str, a: int, b: int, question: str) -> tuple[int, int] | None:
    """The identifier after the noun a "which X" question asks for, in ``text[a:b]``, as
    ``(start, end)``: "Which merchant ...?" is answered by the M69123 of "wants merchant M69123".

    Example:
        >>> t = "Stark wants merchant M69123 on manual release."
        >>> a, b = named_instance(t, 0, len(t), "Which merchant does OPS-5360 want released?"); t[a:b]
        'M69123'
    """
    noun = _asked_noun(question)
    if noun is None:
        return None
    found = re.search(rf"\b{noun}s?\s+([A-Za-z][\w-]*\d[\w-]*)", text[a:b], re.IGNORECASE)
    if found is None or mentions(question, found.group(1)):
        return None
    return a + found.start(1), a + found.end(1)


def mentions(text: str, word: str) -> bool:
    """Whether ``text`` names ``word`` as a whole word (any case; ``-`` joins words).

    Example:
        >>> mentions("Cutover completed for Acme.", "acme"), mentions("acme-9 failed", "acme")
        (True, False)
    """
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE) is not None
