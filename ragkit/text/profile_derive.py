"""Derive a :class:`ragkit.text.CorpusProfile` from any corpus: what it knows, read from the documents.

:func:`derive_profile` reads a list of documents (what :func:`ragkit.documents.load_corpus`
returns) and fills the corpus-specific fields of a profile from them:

* **source types and authorities** from the envelopes (each type and authority that occurs,
  most frequent first). An authority the base profile ranks keeps its rank; any other ranks
  :data:`NEW_AUTHORITY_RANK` (above ``unknown``, below nothing): the corpus cannot say which
  authority outranks which, so write the ranks in a profile file to order them.
* **identifier shapes** mined from the text with :data:`SHAPE_CATALOGUE` (keys like ``ABC-123``,
  error codes, hex hashes, snake_case names, versions, slugs ending in a number, other tokens
  mixing letters and digits): a shape is kept when it occurs at least ``min_ids`` times.
* **statuses** from field values: ``Status: X`` lines and the ``status`` column of tables.
* **frame words**: words in at least ``frame_share`` of the documents (document frequency),
  except stop words and short words.
* **currencies**: upper-case codes written before an amount (``EUR 25,000``) that the base
  profile knows as currencies; the base list when the text has none.
* **contradiction words**: the base profile's, kept only where the corpus uses them.
* **source roles**: the base profile's roles, each with the corpus's types among its members
  (a role none of whose types occurs is left out).
* **instruction sources** (the names of guidance sources that an injection asks to ignore): the
  base profile's words that name a source type of the corpus, and the corpus's ``rule`` types
  that no word names (escaped); none when the corpus has no such type.

Every other field (the general-English cue lists, the synonyms, the ask rules) comes from the
base profile, :func:`ragkit.text.bundled_profile` unless one is given.

Example:
    >>> from ragkit.core import Document, Envelope
    >>> docs = [Document(Envelope("t-1", source_type="ticket", authority="support"),
    ...                  "ABC-12 failed. Status: blocked. See abc-12 and run_job in 1.2.3.")]
    >>> p = derive_profile(docs, min_ids=1)
    >>> p.source_types, p.statuses, [s for s, _ in p.id_shape_patterns]
    (('ticket',), ('blocked',), ['key', 'function', 'version', 'slug'])
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ragkit.core.records import Document
from ragkit.text.profile import CorpusProfile, bundled_profile
from ragkit.text.words import QUESTION_STOPWORDS, TASK_STOPWORDS

__all__ = ["SHAPE_CATALOGUE", "NEW_AUTHORITY_RANK", "derive_profile"]

#: The rank of an authority the base profile does not know (``unknown`` ranks 0).
NEW_AUTHORITY_RANK = 1

#: ``(shape, task-id kind, pattern)`` of the identifier shapes :func:`derive_profile` looks for,
#: most specific first (an earlier shape claims its characters first).
SHAPE_CATALOGUE: tuple[tuple[str, str, str], ...] = (
    ("code", "key", r"\b[A-Z]-\d{2,}\b"),
    ("key", "key", r"\b[A-Z][A-Z0-9]{1,7}-\d{2,}(?:-[A-Z0-9]+)*\b"),
    ("hash", "commit", r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),
    ("function", "function", r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"),
    ("version", "version", r"\bv?\d+\.\d+\.\d+\b"),
    ("slug", "account", r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)*-[a-z]?\d+\b"),
    ("alnum", "other", r"\b(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*\d)[A-Za-z][A-Za-z0-9]{2,}\b"),
)

_STATUS_LINE = re.compile(r"\bstatus\**\s*[:=]\s*\**([A-Za-z][A-Za-z' -]{1,30}?)\**\s*(?:[.;,|\n]|$)",
                          re.IGNORECASE)
_CELLS = re.compile(r"^\s*\|(.+)\|\s*$")
_WORD = re.compile(r"[a-z][a-z-]{2,}")


def _table_statuses(text: str) -> list[str]:
    """Status values of Markdown tables: a key-value row (``| Status | completed |``) or the
    ``status`` column under a header row (the row above a ``|---|`` separator)."""
    out: list[str] = []
    column: int | None = None
    previous: list[str] = []
    for line in text.splitlines():
        m = _CELLS.match(line)
        if not m:
            column, previous = None, []
            continue
        cells = [c.strip().strip("*`").lower() for c in m.group(1).split("|")]
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            column = previous.index("status") if "status" in previous else None
            continue
        previous = cells
        value = ""
        if column is not None and column < len(cells):
            value = cells[column]
        elif column is None and len(cells) == 2 and cells[0] == "status":
            value = cells[1]
        if re.fullmatch(r"[a-z][a-z' -]{1,30}", value):
            out.append(value)
    return out


def _shapes(texts: Sequence[str], min_ids: int) -> list[tuple[str, str, str, list[str]]]:
    """Catalogue shapes that occur at least ``min_ids`` times, with their commonest examples."""
    found: dict[str, Counter[str]] = {shape: Counter() for shape, _, _ in SHAPE_CATALOGUE}
    for text in texts:
        taken: list[tuple[int, int]] = []
        for shape, _, pattern in SHAPE_CATALOGUE:
            for m in re.finditer(pattern, text):
                if any(a < m.end() and m.start() < b for a, b in taken):
                    continue
                taken.append(m.span())
                found[shape][m.group()] += 1
    return [(shape, kind, pattern, [x for x, _ in found[shape].most_common(3)])
            for shape, kind, pattern in SHAPE_CATALOGUE if sum(found[shape].values()) >= min_ids]


def derive_profile(documents: Sequence[Document], *, name: str = "", base: CorpusProfile | None = None,
                   frame_share: float = 0.5, min_ids: int = 2) -> CorpusProfile:
    """A profile of ``documents``: corpus-specific fields read from them, the rest from ``base``.

    Args:
        documents: the corpus (any loader's documents).
        name: the profile's name (a folder, say).
        base: where the general fields come from (default: the bundled profile).
        frame_share: a word in at least this share of the documents is a frame word.
        min_ids: an identifier shape must occur this often to be kept.
    """
    base = base or bundled_profile()
    texts = [f"{d.envelope.title}\n{d.text}" for d in documents]
    envs = [d.envelope for d in documents]
    types = Counter(e.source_type for e in envs)
    authorities = Counter(e.authority for e in envs)
    ranks = {a: base.authority_ranks.get(a, NEW_AUTHORITY_RANK) for a, _ in authorities.most_common()}
    ranks.setdefault("unknown", 0)
    ranks = dict(sorted(ranks.items(), key=lambda kv: -kv[1]))  # highest first (ties: most frequent)
    roles = {role: kept for role, members in base.source_roles.items()
             if (kept := tuple(t for t in members if t in types))}

    statuses: Counter[str] = Counter()
    for text in texts:
        statuses.update(v.strip().lower() for v in _STATUS_LINE.findall(text))
        statuses.update(_table_statuses(text))

    shapes = _shapes(texts, min_ids)
    task_ids = [(kind, pattern) for shape, kind, pattern, _ in shapes if shape != "alnum"]
    task_ids.append(("code", r"`([^`\s]{3,})`"))
    value_pattern = "|".join([r"`[^`\n]{2,60}`", *(pattern for *_, pattern, _ in shapes)])

    stop = TASK_STOPWORDS | QUESTION_STOPWORDS
    df: Counter[str] = Counter()
    for text in texts:
        df.update({w.strip("-") for w in _WORD.findall(text.lower())} - stop)
    need = max(2, frame_share * len(documents))
    frame = sorted(w for w, n in df.items() if n >= need and len(w) > 3)

    rule_types = roles.get("rule", ())
    instruction_sources = [w for w in base.instruction_sources
                           if any(re.fullmatch(w, t, re.IGNORECASE) for t in types)]
    instruction_sources += [re.escape(t) for t in rule_types
                            if not any(re.fullmatch(w, t, re.IGNORECASE) for w in instruction_sources)]

    known_money = set(base.currencies)
    money = Counter(c for t in texts for c in re.findall(r"\b([A-Z]{3})\s?\d", t) if c in known_money)
    corpus_words = {w for t in texts for w in _WORD.findall(t.lower())}
    return base.replace(
        name=name or base.name,
        source_types=[t for t, _ in types.most_common()],
        authority_ranks=ranks,
        source_roles=roles,
        statuses=[re.escape(s).replace("\\ ", " ") for s, _ in statuses.most_common()],
        currencies=[c for c, _ in money.most_common()] or list(base.currencies),
        task_id_patterns=task_ids,
        id_value_pattern=value_pattern,
        id_shape_patterns=[(shape, pattern.removeprefix(r"\b").removesuffix(r"\b"))
                           for shape, _, pattern, _ in shapes],
        identifier_examples={shape: examples for shape, _, _, examples in shapes},
        frame_words=frame,
        contradiction_terms=[w for w in base.contradiction_terms if w in corpus_words],
        contradiction_rounds=[[w for w in r if w in corpus_words] for r in base.contradiction_rounds],
        instruction_sources=instruction_sources,
    )
