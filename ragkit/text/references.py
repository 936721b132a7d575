"""References inside a document: "subject to the cap in clause 12.4", "the fees in Schedule 3".

Contracts, handbooks and long policies state a rule in one clause and its figure in another. A
sentence that matches the question may only point at the clause that answers it; these helpers
find the references a text makes (:func:`references`), whether a section is the one a reference
names (:func:`holds`), and where the named clause sits in that section's text (:func:`clause_span`).
They read general document structure (numbered clauses, lettered or numbered schedules), nothing
of one corpus.

Example:
    >>> refs = references("Service credits apply, subject to the cap in clause 12.4 and Schedule 2.")
    >>> refs
    [('clause', '12.4'), ('schedule', '2')]
    >>> holds("12-limits-on-liability", "12.4 The total ...", *refs[0])
    True
    >>> holds("schedule-2-fees", "", *refs[1]), holds("schedule-3-fees", "", *refs[1])
    (True, False)
    >>> text = "12.3 Nothing limits fraud.\\n12.4 Credits shall not exceed 25%.\\n12.5 Other."
    >>> a, b = clause_span(text, "12.4"); text[a:b]
    '12.4 Credits shall not exceed 25%.'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ragkit.text.words import word_stems

__all__ = [
    "REFERENCE", "references", "named_references", "clause_names", "clause_called", "holds", "clause_span",
    "definitions", "defined_terms", "defines_asked",
]

#: A reference to a numbered part of the same document ("clause 9.1", "section 4", "Schedule B").
REFERENCE = re.compile(
    r"\b(clause|section|paragraph|schedule|appendix|annex)\s+(\d+(?:\.\d+)*|[A-Z])\b(?![.-]?\w)",
    re.IGNORECASE,
)
#: Kinds of part that number the document's body (a clause lives in its top-level section).
_BODY = ("clause", "section", "paragraph")
#: A line that opens a numbered clause ("12.4 The total ...", "12.4. The total ...").
_CLAUSE_LINE = re.compile(r"^[ \t>*-]*(\d+(?:\.\d+)+)\.?\s", re.MULTILINE)


def references(text: str) -> list[tuple[str, str]]:
    """The parts of the same document that ``text`` refers to, as ``(kind, number)`` in order of
    first mention (kind lower case: clause, section, paragraph, schedule, appendix, annex)."""
    found: dict[tuple[str, str], None] = {}
    for m in REFERENCE.finditer(text):
        found.setdefault((m.group(1).lower(), m.group(2)), None)
    return list(found)


# "subject to the cap in clause 12.4": what a reference calls the part it names
_NAMED_REFERENCE = re.compile(
    r"\bthe\s+((?:[a-z][a-z-]*\s+){0,2}[a-z][a-z-]*)\s+(?:in|under|of|set out in)\s+"
    r"(clause|section|paragraph)\s+(\d+(?:\.\d+)+)\b",
    re.IGNORECASE,
)


def named_references(text: str) -> list[tuple[str, str]]:
    """The numbered clauses ``text`` refers to by what they hold, as ``(what, number)``: "subject
    to the cap in clause 12.4" says that clause 12.4 states the cap, in whatever words it uses.

    Example:
        >>> named_references("Credits are due under Schedule 2, subject to the cap in clause 12.4.")
        [('cap', '12.4')]
    """
    return [(m.group(1).lower(), m.group(3)) for m in _NAMED_REFERENCE.finditer(text)]


def clause_names(texts: Sequence[str]) -> dict[str, str]:
    """What the references in ``texts`` (one document's) call each clause they name: number ->
    words ("12.4" -> "cap"). Read once per document; :func:`clause_called` looks a sentence up."""
    names: dict[str, dict[str, None]] = {}
    for t in texts:
        for what, number in named_references(t):
            names.setdefault(number, {})[what] = None
    return {number: " ".join(whats) for number, whats in names.items()}


def clause_called(sentence: str, names: Mapping[str, str]) -> str:
    """What a document's references (:func:`clause_names`) call the clause ``sentence`` opens.

    Example:
        >>> names = clause_names(["Credits are due, subject to the cap in clause 12.4."])
        >>> clause_called("12.4 Credits shall not exceed 25%.", names)
        'cap'
    """
    m = re.match(r"\s*(\d+(?:\.\d+)+)\b", sentence)
    return names.get(m.group(1), "") if m else ""


def holds(anchor: str, text: str, kind: str, number: str) -> bool:
    """Whether the section with ``anchor`` (and ``text``) is the part that ``(kind, number)`` names.

    A clause, section or paragraph ``9.1`` lives in the body section numbered ``9`` (anchor
    ``9-...``) or in a text with a line that opens clause ``9.1``; a schedule, appendix or annex
    ``2`` is the section whose anchor starts ``schedule-2``.
    """
    anchor = anchor.lower()
    if kind in _BODY:
        top = number.split(".")[0]
        if re.match(rf"{re.escape(top.lower())}(-|$)", anchor):
            return True
        return "." in number and clause_span(text, number) is not None
    return re.match(rf"{kind}-{re.escape(number.lower())}(-|$)", anchor) is not None


def clause_span(text: str, number: str) -> tuple[int, int] | None:
    """Where clause ``number`` ("12.4") sits in ``text``: from the line that opens it to the next
    numbered clause or heading; ``None`` when no line opens it."""
    lines = list(_CLAUSE_LINE.finditer(text))
    for n, m in enumerate(lines):
        if m.group(1) == number:
            end = lines[n + 1].start() if n + 1 < len(lines) else len(text)
            heading = re.search(r"^#", text[m.end() : end], re.MULTILINE)
            if heading:
                end = m.end() + heading.start()
            start = m.start() + len(m.group(0)) - len(m.group(0).lstrip(" \t>*-"))
            while end > start and text[end - 1].isspace():
                end -= 1
            return start, end
    return None


# "the recovery time objective (RTO) is how long it may take ...": a term, its short form, its meaning
_DEFINITION = re.compile(
    r"\b((?:[a-z][a-z-]*\s+){0,3}[a-z][a-z-]*)\s+\(([A-Z][A-Za-z]{1,7})\)\s+(?:is|are|means|measures)\s+([^.;]+)"
)


def definitions(text: str) -> list[tuple[str, str, str]]:
    """The terms ``text`` defines with a short form: ``(term, short form, what it is)``.

    A document that defines "the recovery time objective (RTO)" as "how long it may take to be
    serving again" answers a question asked in the definition's words in its "RTO" column.

    Example:
        >>> definitions("The recovery time objective (RTO) is how long it may take to serve again.")
        [('recovery time objective', 'RTO', 'how long it may take to serve again')]
    """
    return [
        (" ".join(w for w in term.split() if w.lower() != "the"), short, meaning.strip())
        for term, short, meaning in _DEFINITION.findall(text)
    ]


def defined_terms(texts: Sequence[str], predicate: set[str]) -> set[str]:
    """Stems of the term (and its short form) that ``texts`` define in the question's words
    (``predicate``: its content-word stems), when the best definition shares two or more of them.

    Asked "how long may it take to be serving again after failover?", a text defining "the recovery
    time objective (RTO)" as "how long it may take to be serving again after failover is declared"
    makes "RTO" a word of the question (so its table column answers).

    Example:
        >>> text = "The recovery time objective (RTO) is how long it may take to be serving again."
        >>> sorted(defined_terms([text], word_stems("how long to be serving again")))
        ['objec', 'recov', 'rto', 'time']
    """
    shared = {(term, short): len(word_stems(meaning) & predicate)
              for text in texts for term, short, meaning in definitions(text)}
    best = max(shared.values(), default=0)
    if best < 2:
        return set()
    # the definition the question's words follow best (not every term it shares a word with)
    return {s for (term, short), n in shared.items() if n == best for s in word_stems(f"{term} {short}")}


#: A question that asks what a term means ("What does RTO stand for?").
_MEANING = re.compile(r"\b(?:mean|means|meant|stands? for|defined?|definition)\b", re.IGNORECASE)


def defines_asked(sentence: str, question: str) -> bool:
    """Whether ``sentence`` defines a short form the question names, which does not ask what it
    means: "the recovery time objective (RTO) is how long ..." says what an RTO is, not what the
    RTO of a service is, so it does not answer "What's the RTO for sepa-connector?".

    Example:
        >>> s = "The recovery time objective (RTO) is how long it may take to serve again."
        >>> defines_asked(s, "What's the RTO for sepa-connector?"), defines_asked(s, "What does RTO mean?")
        (True, False)
    """
    if _MEANING.search(question):
        return False
    return any(re.search(rf"\b{re.escape(short)}\b", question) for _, short, _ in definitions(sentence))
