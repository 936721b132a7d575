"""Evaluation splits by template family: which cases were used for development, which were not.

A case file's split lives in a splits file (``datasets/opscorpus/splits.json`` for the bundled
corpus) under one key per case set, each holding lists named ``<split>_families``::

    {"bundled": {"heldout_families": [...], "how_chosen": "..."},
     "paraphrases": {"sealed_families": [...]}}

A case whose ``family`` is in ``heldout_families`` belongs to the split ``heldout``, one in
``sealed_families`` to ``sealed``; every other case is ``dev`` (development). Whole families are
held out, so no held-out case shares a generator template with a development case (an even/odd
split by file position shares every template).

:func:`choose_heldout` is the rule the bundled split was chosen by, blind to how any agent does:
each family gets a *kind* (``unanswerable`` for a family of unanswerable cases, else the tag most
of its cases carry, ties broken in :data:`KIND_ORDER`); within each kind the families are ordered
by the SHA-256 of their name and every third one from the second on is held out, so each kind
with two or more families gives about a third of them and a kind with one family (the stories,
the vocabulary-mismatch family) stays in development.

A family whose every case carries a tag of :data:`OWN_KIND_TAGS` (``long_document``: the shelf
of long documents added by issue 24) is a kind of its own, ``long_document`` or
``long_document/unanswerable``. A shelf of new families added later therefore leaves the kinds of
the older families, and so their split, exactly as they were: no family that was developed
against becomes held out, and no held-out family is handed to development.

Example:
    >>> splits = {"bundled": {"heldout_families": ["b"], "how_chosen": "by hand"}}
    >>> split_families(splits, "bundled")
    {'b': 'heldout'}
    >>> family_kind([(True, ("identifier", "scoped")), (True, ("scoped",))])
    'scoped'
    >>> family_kind([(False, ("long_document", "scoped")), (False, ("long_document",))])
    'long_document/unanswerable'
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "DEV",
    "KIND_ORDER",
    "OWN_KIND_TAGS",
    "assign_splits",
    "choose_heldout",
    "family_kind",
    "load_splits",
    "split_families",
    "splits_key",
]

#: The split of every case whose family no list names.
DEV = "dev"
#: Tie-break order when a family's cases carry two tags equally often (the more specific first).
KIND_ORDER = ("story", "scoped", "conflict", "multi_hop", "temporal", "vocabulary_mismatch", "identifier")
#: Tags that make a family a kind of its own when every one of its cases carries them.
OWN_KIND_TAGS = ("long_document",)


def load_splits(path: str | Path) -> dict[str, Any]:
    """The splits file as a dict (an empty one when the file does not exist)."""
    p = Path(path)
    if not p.exists():
        return {}
    data = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{p}: a splits file is a JSON object, got {type(data).__name__}")
    return data


def split_families(splits: Mapping[str, Any], key: str) -> dict[str, str]:
    """Family name -> split name under ``splits[key]`` (``heldout_families`` -> ``heldout``).

    Raises:
        ValueError: a family listed under two splits.
    """
    out: dict[str, str] = {}
    for field, families in (splits.get(key) or {}).items():
        if not field.endswith("_families") or not isinstance(families, list):
            continue
        name = field.removesuffix("_families")
        for family in families:
            if out.get(family, name) != name:
                raise ValueError(f"family {family!r} is in both {out[family]!r} and {name!r}")
            out[family] = name
    return out


def assign_splits(cases: Iterable[Any], splits: Mapping[str, Any], key: str) -> dict[str, str]:
    """Case id -> split (``dev`` unless its ``family`` is listed under ``splits[key]``)."""
    families = split_families(splits, key)
    return {c.id: families.get(c.family, DEV) for c in cases}


def splits_key(cases_path: str | Path) -> str:
    """The splits-file key of a case file: ``bundled`` for ``cases.jsonl``, else the file's stem."""
    stem = Path(cases_path).stem
    return "bundled" if stem == "cases" else stem


def family_kind(members: Iterable[tuple[bool, Iterable[str]]]) -> str:
    """The kind of a family from its cases' ``(answerable, tags)``: see the module docstring."""
    members = list(members)
    for tag in OWN_KIND_TAGS:
        if members and all(tag in tags for _, tags in members):
            return tag if any(answerable for answerable, _ in members) else f"{tag}/unanswerable"
    if not any(answerable for answerable, _ in members):
        return "unanswerable"
    counts = Counter(t for _, tags in members for t in tags)
    if not counts:
        return "untagged"
    top = max(counts.values())
    tied = [t for t, n in counts.items() if n == top]
    return min(tied, key=lambda t: (KIND_ORDER.index(t) if t in KIND_ORDER else len(KIND_ORDER), t))


def choose_heldout(cases: Iterable[Any], every: int = 3) -> list[str]:
    """The families to hold out: in each kind, by SHA-256 of the name, positions 1, 1+every, ...

    Only ``family``, ``answerable`` and ``tags`` of each case are read (never a run's outcome).
    """
    members: dict[str, list[tuple[bool, tuple[str, ...]]]] = defaultdict(list)
    for c in cases:
        members[c.family].append((bool(c.answerable), tuple(c.tags)))
    by_kind: dict[str, list[str]] = defaultdict(list)
    for family, items in members.items():
        by_kind[family_kind(items)].append(family)
    held: list[str] = []
    for families in by_kind.values():
        ordered = sorted(families, key=lambda f: hashlib.sha256(f.encode("utf-8")).hexdigest())
        held += [f for i, f in enumerate(ordered) if i % every == 1]
    return sorted(held)
