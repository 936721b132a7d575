"""Reading a task the way an analyst would before searching: identifiers, names, dates, the ask.

The offline policy (:mod:`ragkit.agent.offline`) plans its searches from a :class:`TaskFrame`:

* **identifiers**: error codes (``E-4471``), ticket keys (``OPS-3318``), rollout ids
  (``RO-7719``), commit hashes (``a41c9e2``), function names (``reconcile_settlement``),
  account ids (``acme-9``), build numbers (``3.9.4``). They have no semantic
  neighbourhood, so they get a query of their own (BM25 finds them exactly).
* **names**: capitalised words that are not sentence openers (tenants, people, systems).
  The caller's tenant is recognised by name; any other name is an entity to cover.
* **dates**: a full date in the task (``19 January 2026``, ``2026-01-19``) and a month
  period (``in January``, ``in July 2025``; a month without a year is the latest one not
  after ``as_of``).
* **the ask**: the content words that name the predicate (``cutoff``, ``build number``)
  and whether the task asks which *rule applies* at a moment (validity filtering is
  right) or what *happened* (validity filtering would hide the incident records).

Everything here is a transparent pattern, documented as such; nothing is learned.

Example:
    >>> frame = parse_task("Why did Acme's January reconciliation fail?", tenant="acme",
    ...                    as_of="2026-02-02")
    >>> frame.tenant_named, frame.event, frame.period
    (True, True, ('2026-01-01', '2026-02-01'))
    >>> parse_task("Which commit fixed OPS-3318?", tenant="acme").identifiers
    ('OPS-3318',)
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ragkit.core.errors import ValidationError
from ragkit.core.records import parse_time
from ragkit.text.asked import proposed_identifiers
from ragkit.text.asking import (
    ask_of,
    asks_obligation,
    asks_present_state,
    compared_names,
    proposed_names,
    questions_of,
    without_tag,
)
from ragkit.text.normalise import MONTHS
from ragkit.text.profile_views import ProfileRegex, ProfileSeq, ProfileWords
from ragkit.text.ranges import MONTH_NAMES, asked_period, month_number
from ragkit.text.relevance import named_codes, with_codes
from ragkit.text.subjects import requesters
from ragkit.text.words import TASK_ID_PATTERNS, TASK_STOPWORDS, WEEKDAYS, prefix5

__all__ = [
    "TaskFrame",
    "parse_task",
    "find_identifiers",
    "content_words",
    "misspells",
    "keyword_query",
    "feedback_terms",
    "jaccard",
    "normalise_query",
]


# words that mark a question about what happened (an event), not which rule holds
_EVENT = ProfileRegex("event_cues", re.IGNORECASE)

# words that mark a question about a standing rule or state, where validity at a moment matters
_RULE = ProfileRegex("rule_cues", re.IGNORECASE)

# the codes that narrow a question: the profile's currencies and the codes it names in words
_CODES = ProfileWords(lambda p: {c.upper() for c in p.currencies} | {row[0].upper() for row in p.code_names})

# each code with the words of its names in the profile ("DKK": danish, krone, kroner, ...)
_CODE_NAME_WORDS = ProfileSeq(
    lambda p: [(row[0].upper(), frozenset(" ".join(row[1:]).split())) for row in p.code_names]
)

@dataclass(frozen=True)
class TaskFrame:
    """What the task asks, as the offline policy reads it.

    Attributes:
        task: the task text.
        tenant: the caller's tenant (``"*"`` for an operator).
        identifiers: identifiers in the order they appear.
        names: capitalised names in the asking sentences, other than the caller's tenant and months.
        tenant_named: whether the task names the caller's tenant (``Acme``, ``our``).
        words: content words (lower case; stopwords, identifiers and dates removed) of the whole
            message for an event question, of its asking sentences for a rule: what finds it.
        predicate: content words of the asking sentences (:func:`ragkit.text.asking.ask_of`) that
            are not names: what is asked about the entity.
        date: a full date in the task (ISO), if any.
        period: ``(start, end)`` ISO dates of a month named in the task, end exclusive.
        event: True when the task asks what happened (past tense), False when it asks which
            rule or state holds.
        valid_at: the moment whose rules apply: the task's date, else ``as_of``; ``None`` for
            event questions (validity filtering would hide the records of what happened).
        as_of: the snapshot time (ISO), if given.
        qualifiers: the codes in the task that narrow the question (``EUR``, ``CHF``, ``GBP``: the
            profile's currencies and the codes it names in words): a passage that states a value
            must name them. Other acronyms (``SLA``, ``SFTP``) are content words, not qualifiers.
        typos: names in the task that misspell the caller's tenant ("Wane" for Wayne,
            :func:`misspells`), as written: the tenant is what they name.
    """

    task: str
    tenant: str
    identifiers: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    tenant_named: bool = False
    words: tuple[str, ...] = ()
    predicate: tuple[str, ...] = ()
    date: str | None = None
    period: tuple[str, str] | None = None
    event: bool = False
    valid_at: str | None = None
    as_of: str | None = None
    id_kinds: dict[str, str] = field(default_factory=dict)
    qualifiers: tuple[str, ...] = ()
    typos: tuple[str, ...] = ()

    @property
    def entities(self) -> tuple[str, ...]:
        """Identifiers and names: what evidence must be about (lower case)."""
        return tuple(dict.fromkeys(x.lower() for x in (*self.identifiers, *self.names)))


def find_identifiers(text: str) -> list[tuple[str, str]]:
    """``(identifier, kind)`` pairs in ``text``, in order of appearance, without repeats.

    Example:
        >>> find_identifiers("E-4471 in reconcile_settlement, commit a41c9e2 (RO-7702, 3.9.4)")
        [('E-4471', 'key'), ('reconcile_settlement', 'function'), ('a41c9e2', 'commit'), \
('RO-7702', 'key'), ('3.9.4', 'version')]
    """
    found: list[tuple[int, str, str]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in TASK_ID_PATTERNS:
        for m in pattern.finditer(text):
            span = m.span(1) if m.groups() else m.span()
            if any(s < span[1] and span[0] < e for s, e in taken):
                continue
            value = text[span[0] : span[1]]
            if kind == "code" and (" " in value or not re.search(r"[_\-.\d]", value)):
                continue
            if kind == "account" and value.split("-")[0] in MONTHS:
                continue
            taken.append(span)
            found.append((span[0], value, kind))
    out: dict[str, str] = {}
    for _, value, kind in sorted(found):
        out.setdefault(value, kind)
    return list(out.items())


def misspells(word: str, name: str) -> bool:
    """Whether ``word`` is a near miss of ``name``, not ``name`` itself: both of 5+ letters and
    a :class:`difflib.SequenceMatcher` ratio of at least 0.85 (one letter dropped, added or
    changed in a name of 7 letters or more), or ``name`` with one of its letters dropped
    ("Wane" for Wayne; a letter *changed* in a short name is another word: "Acne").

    Example:
        >>> misspells("Umbrela", "umbrella"), misspells("Umbrella", "umbrella"), misspells("Acne", "acme")
        (True, False, False)
        >>> misspells("Wane", "wayne"), misspells("Way", "wayne")
        (True, False)
    """
    a, b = word.lower(), name.lower()
    if a == b or b in ("*", ""):
        return False
    if len(a) >= 4 and len(b) == len(a) + 1 and any(b[:i] + b[i + 1:] == a for i in range(len(b))):
        return True
    return min(len(a), len(b)) >= 5 and difflib.SequenceMatcher(None, a, b).ratio() >= 0.85


def content_words(text: str, *, drop: Iterable[str] = ()) -> list[str]:
    """Lower-case words of ``text`` minus stopwords, numbers-only tokens and ``drop``.

    Example:
        >>> content_words("Why did Acme's January reconciliation fail?")
        ['acme', 'january', 'reconciliation', 'fail']
    """
    dropped = {d.lower() for d in drop}
    words = re.findall(r"[A-Za-z][A-Za-z0-9_\-]*(?:'s)?", text)
    out = []
    for w in words:
        w = w.lower().removesuffix("'s")
        if w in TASK_STOPWORDS or w in dropped or len(w) < 2:
            continue
        out.append(w)
    return list(dict.fromkeys(out))


def keyword_query(frame: TaskFrame) -> str:
    """Identifiers plus content words: the task without its question scaffolding."""
    parts = [*frame.identifiers, *(w for w in frame.words if w not in {i.lower() for i in frame.identifiers})]
    return " ".join(dict.fromkeys(parts))


def feedback_terms(texts: Sequence[str], query: str, *, n: int = 4, min_docs: int = 2) -> list[str]:
    """Pseudo-relevance feedback: terms frequent across ``texts`` (top excerpts) and not in ``query``.

    A term counts once per text; it must appear in at least ``min_docs`` texts (or in the
    only one), be a content word of at least 4 letters, and share no 5-letter stem with
    the query. Ties break by total frequency, then alphabetically, so the choice is stable.

    Example:
        >>> feedback_terms(["the settlement ran twice", "settlement batch ran twice again"],
        ...                "acme reconciliation failure")
        ['settlement', 'twice']
    """
    seen = {prefix5(w) for w in content_words(query)}
    per_doc: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for text in texts:
        words = [
            w
            for w in content_words(text)
            if len(w) >= 4 and not w.isdigit() and "-" not in w and "_" not in w and prefix5(w) not in seen
        ]
        total.update(words)
        per_doc.update(set(words))
    need = min(min_docs, len(texts)) or 1
    ranked = sorted((w for w in per_doc if per_doc[w] >= need), key=lambda w: (-per_doc[w], -total[w], w))
    out: list[str] = []
    stems: set[str] = set()
    for w in ranked:
        if prefix5(w) in stems:
            continue
        stems.add(prefix5(w))
        out.append(w)
        if len(out) == n:
            break
    return out


def normalise_query(query: str) -> str:
    """Lower case, punctuation dropped, words sorted: queries equal up to order and case."""
    return " ".join(sorted(set(re.findall(r"[a-z0-9_\-.]+", query.lower()))))


def jaccard(a: str, b: str) -> float:
    """Token Jaccard similarity of two queries (after :func:`normalise_query`).

    Example:
        >>> jaccard("acme settlement failure january", "January settlement failure, Acme")
        1.0
    """
    x, y = set(normalise_query(a).split()), set(normalise_query(b).split())
    if not x and not y:
        return 1.0
    return len(x & y) / len(x | y)


def _iso(moment: dt.date) -> str:
    return moment.isoformat()


def _task_date(task: str) -> str | None:
    m = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", task)
    if m:
        return f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
    m = re.search(rf"\b(\d{{1,2}})\s+({MONTH_NAMES})\.?,?\s+(\d{{4}})\b", task)
    if m:
        return _iso(dt.date(int(m.group(3)), month_number(m.group(2)), int(m.group(1))))
    m = re.search(rf"\b({MONTH_NAMES})\.?\s+(\d{{1,2}}),?\s+(\d{{4}})\b", task)
    if m:
        return _iso(dt.date(int(m.group(3)), month_number(m.group(1)), int(m.group(2))))
    return None


def parse_task(task: str, *, tenant: str = "*", as_of: object = None) -> TaskFrame:
    """Read ``task`` into a :class:`TaskFrame` for a caller of ``tenant`` at ``as_of``.

    Raises:
        ValidationError: an empty task, or an ``as_of`` that is not an ISO date.
    """
    if not isinstance(task, str) or not task.strip():
        raise ValidationError(
            "task must be a non-empty question, e.g. 'Which commit fixed OPS-3318?'", field="task"
        )
    moment = parse_time(as_of, field_name="as_of")
    proposed = set(proposed_names(task)) | set(compared_names(task))
    # who relays the request is not what it is about (the caller's own tenant still is)
    asking_people = {w for w in requesters(task) if w.lower() != tenant.lower()}
    message, task = task, without_tag(task)  # a tag (", right?") names nothing the evidence must say
    # what is asked comes from the asking sentences of a longer message (ragkit.text.asking);
    # identifiers, the tenant and dates from the whole message
    ask = ask_of(task)
    # an identifier a yes/no question puts forward ("shipped as RO-8103?") is checked, not searched for
    checked = set(proposed_identifiers(task))
    ids = [(v, kind) for v, kind in find_identifiers(task) if v not in checked]
    id_values = [v for v, _ in ids]
    id_words = {w.lower() for v in [*id_values, *checked] for w in re.findall(r"[A-Za-z0-9_\-.]+", v)}
    month_words = set(MONTHS) | {m[:3] for m in MONTHS} | set(WEEKDAYS)
    # capitalised words that do not open the sentence, plus possessives anywhere
    names: list[str] = []
    # a currency named in words ("Polish zloty") is a code, not a name
    coded_task = with_codes(task)
    # ("Danish payment runs ... their DKK payments": a word of the name of a code the task names
    # is that code, which the evidence must name anyway)
    task_codes = set(named_codes(task))
    code_words = {w for code, words in _CODE_NAME_WORDS if code in task_codes for w in words}
    for m in re.finditer(r"(?<![\w'])([A-Z][a-z][A-Za-z\-]+)('s)?", coded_task):
        word = m.group(1)
        opener = m.start() == 0 or bool(re.search(r"[.?!:]\s*$", coded_task[: m.start()]))
        if word not in ask and word.lower() != tenant.lower():
            continue  # named only around the question (who is asking, for whom): not what is asked
        if word.lower() in month_words or word.lower() in TASK_STOPWORDS or word.lower() in code_words:
            continue
        if opener and not m.group(2):
            continue
        if word in proposed or word in asking_people:
            continue  # "Is Hakimi the assignee?" checks Hakimi: the evidence need not name him
        names.append(word)
    lowered_tenant = tenant.lower()
    # a near miss of the caller's tenant ("Umbrela") names the tenant: a typo is no other name the
    # evidence must carry
    typo_names = tuple(dict.fromkeys(n for n in names if misspells(n, tenant)))
    typos = {n.lower() for n in typo_names}
    if typos:
        names = [n for n in names if n.lower() not in typos] + [tenant]
    tenant_named = any(n.lower() == lowered_tenant for n in names) or bool(
        re.search(r"\b(our|we|us)\b", task, re.IGNORECASE)
    )
    named = [n.lower() for n in names]
    names = [n for n in names if n.lower() != lowered_tenant]
    date = _task_date(task)
    period = None if date else asked_period(task, moment)
    # an event unless the ask names a standing rule or speaks of the present ("still", "Can I ...?");
    # "how many days did we have to ...?" measures what a rule required, whatever the tense
    obligation = asks_obligation(message)
    # (a word after an article is no verb: "a fixed limit" says nothing happened.) The question's own
    # tense decides, then a rule it names ("... it rolled into tomorrow's batch. What DKK cutoff are
    # they on today?" asks a rule), then the tense of the story it leans on ("The review produced a
    # follow-up ticket. Where does it stand?")
    verbs, question = (re.sub(r"\b(?:a|an|the|any)\s+[\w-]+", " ", t, flags=re.IGNORECASE)
                       for t in (ask, questions_of(ask)))
    happened = bool(_EVENT.search(question)) or not _RULE.search(question) and bool(_EVENT.search(verbs))
    event = happened and not obligation or not (
        _RULE.search(ask) or asks_present_state(message) or obligation
    )
    # what happened is found by everything the message says about it ("the complaint was that
    # weekend sales were missing"); a standing rule by its question sentences and the names the ask
    # gives them ("...they submitted at 12:05. What is their PLN cutoff?" asks Umbrella's PLN cutoff,
    # not about the missed batch). What is asked of it is the ask's words either way, with a
    # currency named in words read as its code ("US dollar payments" asks about USD: "dollar" is
    # no further word a passage must share)
    if event:
        words = content_words(coded_task, drop=id_words)
    else:
        words = content_words(with_codes(questions_of(task)), drop=id_words)
        words += [w for w in named if w not in words]
    words = [w for w in words if not re.fullmatch(r"\d+(st|nd|rd|th)?", w) and w not in typos]
    asked = set(content_words(with_codes(ask), drop=id_words))
    # a name a yes/no question proposes ("Is Hakimi the assignee?") is checked, not asked about
    name_words = {n.lower() for n in names} | {lowered_tenant} | month_words | {p.lower() for p in proposed}
    predicate = tuple(w for w in words if w not in name_words and w in asked)
    valid_at = None if event else (date or (moment.date().isoformat() if moment else None))
    # the codes the questions name ("US dollar" names USD); an acronym in the sentence a question
    # leans on says who is asking ("Umbrella's AP team"), not what the answer is about
    coded = with_codes(questions_of(ask))
    qualifiers = tuple(
        dict.fromkeys(
            m
            for m in re.findall(r"\b[A-Z]{2,5}\b", coded)
            if m in _CODES and not any(m in v for v in id_values)
        )
    )
    words += [c.lower() for c in qualifiers if c not in ask and c.lower() not in words]
    return TaskFrame(
        task=message,
        qualifiers=qualifiers,
        typos=typo_names,
        tenant=tenant,
        identifiers=tuple(id_values),
        names=tuple(dict.fromkeys(names)),
        tenant_named=tenant_named,
        words=tuple(words),
        predicate=predicate,
        date=date,
        period=period,
        event=event,
        valid_at=valid_at,
        as_of=moment.isoformat() if moment else None,
        id_kinds=dict(ids),
    )
