"""Words: the stop-word lists, the stemming rules and the identifier shapes that text reading uses.

One module holds every word rule of the text layer, so that a reader can see them side by side.
Where two readers use different lists or patterns today, both are kept, each under a name that
says what it is for (merging them would change what the kit finds):

* **stop words**: :data:`TASK_STOPWORDS` (what a *search* drops from a task: question words,
  auxiliaries, fillers; :mod:`ragkit.text.taskparse`) and :data:`QUESTION_STOPWORDS` (what is
  not a *content word* of a question when relevance compares it with a sentence;
  :mod:`ragkit.text.relevance`). :data:`WEEKDAYS` are not content either.
* **stems**: :func:`prefix5` (the first five letters; taskparse's pseudo-relevance feedback) and
  :func:`stem` (the same prefix, then mapped to its class of :data:`SAME_MEANING`, so that
  "finished" and "completed" compare equal; relevance and resolution). :func:`word_stems`,
  :func:`letter_stems` and :func:`compound_stems` apply :func:`stem` to the words of a text,
  each with its own idea of a word.
* **identifier shapes**: :data:`TASK_ID_PATTERNS` find identifiers in a task
  (:func:`ragkit.text.taskparse.find_identifiers`), :data:`ID_VALUE_PATTERN` reads identifier
  values out of a span (:func:`ragkit.text.values.read_values`), and :data:`ID_SHAPE_PATTERNS`
  classify one identifier into :data:`ID_SHAPES` (:func:`id_shape`).

The lexical retriever's BM25 stemmer and stop words (:mod:`ragkit.retrieval.lexical`) are a
different rule, for scoring, and live there.

Example:
    >>> stem("finished"), stem("completed"), prefix5("finished")
    ('finis', 'finis', 'finis')
    >>> sorted(compound_stems("reserve-keeper ran open_batch_day"))
    ['open_batch_day', 'reserve-keeper', 'run']
    >>> id_shape("RO-7702"), id_shape("a41c9e2")
    ('key', 'hash')
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ragkit.text.profile_views import ProfileMap, ProfileRegex, ProfileSeq

__all__ = [
    "TASK_STOPWORDS",
    "QUESTION_STOPWORDS",
    "WEEKDAYS",
    "SAME_MEANING",
    "IRREGULAR",
    "RATING_WORDS",
    "VALUE_KIND_WORDS",
    "UNIT_ABBREVIATIONS",
    "prefix5",
    "stem",
    "word_stems",
    "letter_stems",
    "compound_stems",
    "TASK_ID_PATTERNS",
    "ID_VALUE_PATTERN",
    "ID_SHAPES",
    "ID_SHAPE_PATTERNS",
    "id_shape",
]

# --------------------------------------------------------------------------------------
# stop words

#: Words that carry no search signal in a task (question words, auxiliaries, fillers): dropped
#: from a task's content words, keyword queries and feedback terms (:mod:`ragkit.text.taskparse`).
TASK_STOPWORDS = frozenset(
    """
a an the and or but of to in on at by for from with within without into onto over under about as is are was
were be been being do does did done doing have has had having it its this that these those there here
what which who whom whose when where why how whether if then than so such not no nor any all each
every some one ones our we us you your they their them he she his her i me my mine can could should
would will shall may might must also just only very still yet again ever ask asked tell say says said
please know find show give out up down off via per under between after before during while since
until upon against among around across get got make made take took taken use used one first last
happen happened happens actually exactly anything something thing things way ways kind sort
according supposed
""".split()
)

#: Modifiers that rate or place a thing rather than name it or tell it from its siblings ("the
#: *current* cutoff", "the *latest* time a release may go out"): never a contrast
#: (:mod:`ragkit.text.contrast`), and never the thing a question asks about.
RATING_WORDS = frozenset(
    "current latest present actual usual normal standard default maximum minimum total overall exact "
    "whole given same other first last next previous final official formal real main specific "
    "particular general single each every earliest longest shortest highest lowest most least".split()
)

#: Units of time as questions abbreviate them ("after how many *hrs*?"), and as documents write them.
UNIT_ABBREVIATIONS = {"sec": "seconds", "secs": "seconds", "min": "minutes", "mins": "minutes", "hr": "hours",
                      "hrs": "hours", "wk": "weeks", "wks": "weeks", "yr": "years", "yrs": "years"}

#: Words that name the form a value takes, not what it is of ("what *share* of the payouts", "after
#: how many *hrs*", "credits per *month*"): never the attribute a question asks. ("second", "sec"
#: and "min" are left out: a *second* approver, the *min* balance.)
VALUE_KIND_WORDS = frozenset(
    "share proportion fraction portion percent percentage ratio amount sum figure number value date time "
    "seconds minute minutes hour hours day days week weeks month months year years".split()
    + [short for short in UNIT_ABBREVIATIONS if short not in ("sec", "min")]
)

#: Words that are not content words of a question when relevance compares it with a sentence
#: (:func:`ragkit.text.relevance.question_terms`). Shorter than :data:`TASK_STOPWORDS`, and it
#: also drops generic predicate words (``applies``, ``value``, ``set``, ``work``) that every
#: rule states.
QUESTION_STOPWORDS = frozenset(
    """a an the of to in on at for by with within from and or but is are was were be been being it its
this that these those what which who whom whose when where why how does do did done has have had can
could should would will shall may might must any all each every some our their there then than into
about after before during over under again also only just not no so as if per via out up down off
own same such very stand applies apply use used uses work works value values set sets""".split()
)

#: Day names (lower case): not names, not content words, not people.
WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"})

# --------------------------------------------------------------------------------------
# stems

#: Words of one meaning (a small thesaurus of stems, the profile's ``synonyms``: extend it there
#: for another domain): a predicate stated with one of them is stated with any ("finish rolling
#: out" is what "| Completed | 2026-01-22 |" in a rollout record states).
SAME_MEANING: ProfileSeq[tuple[str, ...]] = ProfileSeq(lambda p: p.synonyms)
_CANON: ProfileMap[str] = ProfileMap(lambda p: {w: group[0] for group in p.synonyms for w in group})


#: Irregular past forms of English verbs, read as the verb ("swept" states what "sweep" does, "held"
#: what "hold" does): a five-letter prefix cannot join them. General English, not one corpus's
#: words; forms that are also other words ("left", "found", "done", "bound") and the light verbs of
#: a request ("told", "made", "took", "got": "can you tell me ...") are left out.
IRREGULAR = {
    form: verb
    for verb, forms in {
        "arise": "arose arisen", "bear": "bore borne", "begin": "began begun", "break": "broke broken",
        "bring": "brought", "build": "built", "buy": "bought", "catch": "caught",
        "choose": "chose chosen", "deal": "dealt", "draw": "drew drawn", "drive": "drove driven",
        "fall": "fell fallen", "fight": "fought", "fly": "flew flown", "forget": "forgot forgotten",
        "freeze": "froze frozen", "grow": "grew grown", "hide": "hid hidden", "hold": "held",
        "keep": "kept", "lead": "led", "lend": "lent", "lose": "lost", "meet": "met", "pay": "paid",
        "rebuild": "rebuilt", "rerun": "reran", "rise": "rose risen", "run": "ran", "seek": "sought",
        "sell": "sold", "send": "sent", "shake": "shook shaken", "sink": "sank sunk",
        "speak": "spoke spoken", "spend": "spent", "stand": "stood", "stick": "stuck",
        "strike": "struck", "sweep": "swept", "teach": "taught", "throw": "threw thrown",
        "understand": "understood", "uphold": "upheld", "wake": "woke woken", "win": "won",
        "withdraw": "withdrew withdrawn", "withhold": "withheld", "write": "wrote written",
    }.items()
    for form in forms.split()
}


def prefix5(word: str) -> str:
    """A word's first five characters, without the :data:`SAME_MEANING` thesaurus.

    Example:
        >>> prefix5("settlement"), prefix5("fix")
        ('settl', 'fix')
    """
    return word[:5]


def stem(word: str) -> str:
    """A word's 5-letter prefix, mapped to its class in :data:`SAME_MEANING` if it has one.

    The word is taken as given (lower-case it first). An irregular past form is read as its verb
    (:data:`IRREGULAR`) and a final "-ies" or "-ied" as "-y" first, so "swept" stems like
    "sweep", and "retries" and "retried" like "retry"; a short plural drops its "-s" ("banks",
    "days") and a short verb's past its "-d" ("cured", "noted"), which a five-letter prefix would
    otherwise keep apart from "bank", "day", "cure" and "note".

    Example:
        >>> stem("settlement"), stem("deployed"), stem("resolved"), stem("retries") == stem("retry")
        ('settl', 'rolli', 'fix', True)
        >>> stem("swept") == stem("sweeps"), stem("held") == stem("hold"), stem("banks") == stem("bank")
        (True, True, True)
        >>> stem("cured") == stem("cure"), stem("speed") == stem("speeds")
        (True, True)
    """
    word = IRREGULAR.get(word, word)  # "swept" stems like "sweep"
    if len(word) > 4 and word.endswith(("ies", "ied")):
        word = word[:-3] + "y"
    canon = _CANON.get_all()
    if 3 < len(word) <= 5 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word if word in canon else word[:-1]  # ("acks" and "ships" are named in the thesaurus)
    if len(word) == 5 and re.fullmatch(r"[a-z]{2}[^aeiou]ed", word) and word not in canon:
        word = word[:-1]  # a short verb's past in "-d": "cured" stems like "cure", "noted" like "note"
    out = word[:5] if len(word) >= 5 else word
    return canon.get(out, out)


def word_stems(text: str) -> set[str]:
    """:func:`stem` of every word of ``text`` (lower case, ``'s`` dropped; a word may hold
    digits, ``-`` and ``_``, and is stemmed whole: ``reserve-keeper`` -> ``reser``).

    Example:
        >>> sorted(word_stems("Acme's settlement-batch finished"))
        ['acme', 'finis', 'settl']
    """
    return {stem(w) for w in re.findall(r"[a-z][a-z0-9_-]*", text.lower().replace("'s", ""))}


def letter_stems(text: str) -> set[str]:
    """:func:`stem` of every run of letters of ``text`` (lower case; digits, ``-`` and ``_``
    split words: ``open_batch`` -> ``open``, ``batch``).

    Example:
        >>> sorted(letter_stems("Cutover completed for acme-9"))
        ['acme', 'cutov', 'finis', 'for']
    """
    return {stem(w) for w in re.findall(r"[a-z]+", text.lower())}


def compound_stems(text: str, asked: Collection[str] = ()) -> set[str]:
    """:func:`stem` of the words of ``text``, where a hyphenated or underscored compound
    (``reserve-keeper``, a service; ``open_batch_day``, a function) stays one whole word; a
    hyphenated compound whose every part is one of the ``asked`` stems also gives its parts
    ("second-approver" says the "second approver" a question asks about).

    Example:
        >>> sorted(compound_stems("The reserve-keeper deployed 3.9.4"))
        ['3', '4', '9', 'reserve-keeper', 'rolli', 'the']
        >>> asked = {stem("second"), stem("approver")}
        >>> found = compound_stems("a second-approver limit", asked)
        >>> "second-approver" in found and asked <= found
        True
    """
    found = re.findall(r"[a-z0-9]+(?:[-_][a-z0-9]+)*", text.lower())
    out = {w if ("-" in w or "_" in w) else stem(w) for w in found}
    for w in [w for w in out if "-" in w and asked]:
        parts = {stem(p) for p in w.split("-")}
        if parts <= set(asked):
            out |= parts
    return out


# --------------------------------------------------------------------------------------
# identifier shapes

#: ``(kind, pattern)`` pairs that find identifiers in a task, tried in this order (an earlier
#: kind claims its characters first); ``code`` takes its group 1, the text inside backticks.
#: Used by :func:`ragkit.text.taskparse.find_identifiers`.
TASK_ID_PATTERNS: ProfileSeq[tuple[str, re.Pattern[str]]] = ProfileSeq(
    lambda p: ((kind, re.compile(pattern)) for kind, pattern in p.task_id_patterns)
)  # key OPS-3318, account acme-9, function, docref runbook-v2, version 3.9.4, commit a41c9e2, code

#: An identifier written in a span, as :func:`ragkit.text.values.read_values` reads the ``id``
#: form (the profile's ``id_value_pattern``): anything in backticks (2-60 characters), a key
#: (``OPS-3318``), a slug (``acme-9``, ``ops-2987-c3``, ``policy-v3``), a function name, a commit
#: hash, or a build number. Wider than :data:`TASK_ID_PATTERNS` (one-digit keys, any slug ending
#: in a number).
ID_VALUE_PATTERN = ProfileRegex("id_value_pattern")

#: ``(shape, pattern)`` pairs (the profile's ``id_shape_patterns``); the first pattern that matches
#: a whole identifier names its shape (:func:`id_shape`): an error code (``E-4471``), a
#: ticket/rollout/change key (``OPS-3318``), a commit hash, a function name, a build/version
#: number, a lower-case slug (account, document id).
ID_SHAPE_PATTERNS: ProfileSeq[tuple[str, re.Pattern[str]]] = ProfileSeq(
    lambda p: ((shape, re.compile(pattern)) for shape, pattern in p.id_shape_patterns)
)

#: The shapes of :data:`ID_SHAPE_PATTERNS`, and ``other`` for anything else (backticked).
ID_SHAPES: ProfileSeq[str] = ProfileSeq(lambda p: (*(shape for shape, _ in p.id_shape_patterns), "other"))


def id_shape(surface: str) -> str:
    """The shape of an identifier (:data:`ID_SHAPES`).

    Example:
        >>> [id_shape(x) for x in ("RO-7702", "a41c9e2", "reconcile_settlement", "3.9.4", "acme-9")]
        ['key', 'hash', 'function', 'version', 'slug']
    """
    for shape, pattern in ID_SHAPE_PATTERNS:
        if pattern.fullmatch(surface):
            return shape
    return "other"
