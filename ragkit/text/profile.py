"""Corpus knowledge as data: the :class:`CorpusProfile` that holds every corpus- or domain-specific list.

The policy, the question reading and resolution need some knowledge of the corpus they read:
which source types exist and which authority outranks which, what a status or a currency looks
like, the shapes of its identifiers, the words that frame nearly every question, the cues of a
cause, a completion, a condition or a pointer to another record. A :class:`CorpusProfile` holds
all of it by name, as data: :func:`load_profile` reads one from a JSON file (with an error that
names the field and the fix when a field is wrong), :meth:`CorpusProfile.to_json` writes one,
and :func:`ragkit.text.derive_profile` builds one from any corpus. The bundled course corpus's
profile is ``datasets/opscorpus/profile.json`` (:func:`bundled_profile`); the text-layer modules
read their lists from it.

Field kinds (what :func:`load_profile` checks):

* ``words``: a list of strings; ``regex words`` are alternatives of one regex, each usually a
  plain phrase (``"in progress"``), joined with ``|``.
* ``regex``: one Python regex, as a string (what each field is matched with is said in its row).
* ``named regexes``: ``[name, regex]`` pairs, tried in order.
* ``ask rules``: ``[regex, [form, ...]]`` pairs, tried in order.
* ``groups``: lists of lists of strings.
* ``ranks``: an object of integers; ``roles``: an object of lists of strings.

Example:
    >>> p = bundled_profile()
    >>> p.authority_ranks["policy_owner"] > p.authority_ranks["operations"]
    True
    >>> load_profile_text(p.to_json()) == p
    True
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragkit.core.errors import ValidationError

__all__ = ["CorpusProfile", "PROFILE_FIELDS", "SOURCE_ROLES", "BUNDLED_PROFILE_PATH", "load_profile",
           "load_profile_text", "profile_from_mapping", "upgrade_profile_data", "bundled_profile",
           "active_profile", "using_profile"]

#: The bundled course corpus's profile (written from the lists the modules held before it existed).
BUNDLED_PROFILE_PATH = Path(__file__).resolve().parents[2] / "datasets" / "opscorpus" / "profile.json"


@dataclass(frozen=True)
class CorpusProfile:
    """What the policy, question reading and resolution know about one corpus, by name.

    Attributes:
        name: what the profile describes (a corpus name or folder).
        source_types: (words) the envelope ``source_type`` values the corpus uses.
        authority_ranks: (ranks) envelope ``authority`` -> rank; a higher rank wins a conflict
            (:mod:`ragkit.evidence.resolution`, ``lower_authority``); an unlisted authority ranks 0.
        source_roles: (roles) what the policy does with a source type -> the types that play it:
            ``thread`` (a thread's own links are read), ``thread_replies`` (listed and read by id),
            ``listed_by_links`` (listed by its links when no search is left), ``titled_thread`` (its
            title's key is searched), ``own_thread`` (named in its own thread), ``rule`` (a standing
            rule that a newer rule may cite), ``chain_rule_target`` / ``chain_change_target`` (the
            source type whose content a chain question asks for when it matches
            ``rule_target_cues`` / ``change_target_cues``; the first listed is the target), ``cause_review``
            (an event's review, read whole for a cause question). Only these names (:data:`SOURCE_ROLES`).
        statuses: (regex words) the values a status field holds (``blocked``, ``rolled back``),
            matched case-insensitively as whole words.
        currencies: (regex words) the currency codes an amount starts with (``EUR 25,000``),
            matched case-sensitively.
        task_id_patterns: (named regexes) kinds of identifier found in a task, tried in order;
            ``code`` reads its group 1 (:func:`ragkit.text.find_identifiers`).
        id_value_pattern: (regex) an identifier as a span's ``id`` value (:func:`ragkit.text.read_values`).
        id_shape_patterns: (named regexes) the shape of one whole identifier (:func:`ragkit.text.id_shape`).
        identifier_examples: (roles) shape -> a few identifiers of that shape seen in the corpus
            (informational: what :func:`ragkit.text.derive_profile` found; no module reads it).
        code_names: (groups) a code and the names it goes by in questions (``USD``, ``dollar``,
            ``us dollar``): a question that names one asks about the code
            (:func:`ragkit.text.named_codes`).
        synonyms: (groups) 5-letter stems of one meaning; the first names the class
            (:func:`ragkit.text.stem`).
        frame_words: (words) words that frame nearly every question of the corpus (``settlement``,
            ``batch``) or name the kind of value asked (``date``): never the asked attribute.
        generic_words: (words) task words that say nothing about what is asked (``applies``, ``issue``).
        not_people: (words) capitalised labels that are not people's names (table headers, field labels).
        not_codes: (words) upper-case words that are not codes a question can be about (``UTC``).
        contradiction_terms: (words) words that surface what would overturn a value.
        contradiction_rounds: (groups) the words of each narrow contradiction search, in order
            (exceptions first, then supersession).
        condition_stopwords: (words) the words of a condition that are not its event (``until``).
        ask_rules: (ask rules) what forms of value a question asks for, first match wins; matched
            against the lower-cased question.
        asked_shapes: (named regexes) shape -> the words of a question that ask for that shape of
            identifier; matched against the lower-cased question.
        instruction_sources: (regex words) the corpus's names of the sources that hold guidance
            (``polic(y|ies)``, ``runbook``): text that asks to ignore or override one is
            instruction-shaped (:func:`ragkit.text.looks_like_instruction`, next to the general
            words ``instructions``, ``guidance``, ``rules``, ``prompt``, ``sources``); matched
            case-insensitively as whole words.
        draft_statuses: (words) values of a document's envelope ``status`` that make it
            a draft or proposal: it states nothing in force (resolution's ``not_in_force``).
        cause_cues: (regex) a sentence states a cause (resolution's relevance).
        stated_cause_cues: (regex) a passage states a cause (the policy's reading).
        root_cause_cues: (regex) a sentence names the root cause.
        detection_cues: (regex) a sentence says how a problem was found, not what caused it.
        completion_cues: (regex) a sentence says something was completed.
        condition_grammar: (regex) a condition's event, in group ``event`` (``until cutover``).
        causal_question: (regex) a question asks why (resolution).
        cause_ask: (regex) a task asks for a cause (the policy).
        deontic_question: (regex) a question asks what is required.
        deontic_cues: (regex) a sentence states an obligation.
        event_cues: (regex) a task asks what happened, not which rule holds.
        rule_cues: (regex) a task asks which standing rule or state holds.
        hop_cues: (regex) a sentence points at another record (the policy follows it).
        relation_cues: (regex) the words before an identifier that make it the origin of a
            relation ("the fix for X"), matched at the end of the text before the identifier.
        rule_target_cues: (regex) a chain question asks for a rule's content (the source type of
            the ``chain_rule_target`` role).
        change_target_cues: (regex) a chain question asks for a shipped change's content (the
            source type of the ``chain_change_target`` role).
        example_cues: (regex) a paragraph's opening or section heading that illustrates ("Example.").
    """

    name: str = ""
    source_types: tuple[str, ...] = ()
    authority_ranks: Mapping[str, int] = field(default_factory=dict)
    source_roles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    statuses: tuple[str, ...] = ()
    currencies: tuple[str, ...] = ()
    task_id_patterns: tuple[tuple[str, str], ...] = ()
    id_value_pattern: str = r"`[^`\n]{2,60}`"
    id_shape_patterns: tuple[tuple[str, str], ...] = ()
    identifier_examples: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    code_names: tuple[tuple[str, ...], ...] = ()
    synonyms: tuple[tuple[str, ...], ...] = ()
    frame_words: tuple[str, ...] = ()
    generic_words: tuple[str, ...] = ()
    not_people: tuple[str, ...] = ()
    not_codes: tuple[str, ...] = ()
    contradiction_terms: tuple[str, ...] = ()
    contradiction_rounds: tuple[tuple[str, ...], ...] = ()
    condition_stopwords: tuple[str, ...] = ()
    ask_rules: tuple[tuple[str, tuple[str, ...]], ...] = ()
    asked_shapes: tuple[tuple[str, str], ...] = ()
    instruction_sources: tuple[str, ...] = ()
    draft_statuses: tuple[str, ...] = ("draft", "proposed", "proposal", "withdrawn", "rejected")
    cause_cues: str = r"(?!)"
    stated_cause_cues: str = r"(?!)"
    root_cause_cues: str = r"(?!)"
    detection_cues: str = r"(?!)"
    completion_cues: str = r"(?!)"
    condition_grammar: str = r"(?!)(?P<event>)"
    causal_question: str = r"(?!)"
    cause_ask: str = r"(?!)"
    deontic_question: str = r"(?!)"
    deontic_cues: str = r"(?!)"
    event_cues: str = r"(?!)"
    rule_cues: str = r"(?!)"
    hop_cues: str = r"(?!)"
    relation_cues: str = r"(?!)"
    rule_target_cues: str = r"(?!)"
    change_target_cues: str = r"(?!)"
    example_cues: str = r"(?!)"

    def to_dict(self) -> dict[str, Any]:
        """The profile as plain JSON values (lists for tuples), in field order."""
        return {f: _plain(getattr(self, f)) for f in PROFILE_FIELDS}

    def to_json(self) -> str:
        """The profile as a JSON document (what :func:`load_profile_text` reads back)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def replace(self, **changes: Any) -> CorpusProfile:
        """A copy with some fields changed (each checked like a loaded field)."""
        data = {**self.to_dict(), **{k: _plain(v) for k, v in changes.items()}}
        return profile_from_mapping(data, where="replace()")


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        items = sorted(value) if isinstance(value, (frozenset, set)) else value
        return [_plain(v) for v in items]
    return value


#: Each field of :class:`CorpusProfile` and its kind (see the module docstring).
PROFILE_FIELDS: dict[str, str] = {
    "name": "str", "source_types": "words", "authority_ranks": "ranks", "source_roles": "roles",
    "statuses": "regex words", "currencies": "regex words", "task_id_patterns": "named regexes",
    "id_value_pattern": "regex", "id_shape_patterns": "named regexes", "identifier_examples": "roles",
    "code_names": "groups", "synonyms": "groups", "frame_words": "words", "generic_words": "words",
    "not_people": "words", "not_codes": "words", "contradiction_terms": "words",
    "contradiction_rounds": "groups", "condition_stopwords": "words", "ask_rules": "ask rules",
    "asked_shapes": "named regexes", "instruction_sources": "regex words", "draft_statuses": "words",
    **{f.name: "regex" for f in dataclasses.fields(CorpusProfile) if f.name.endswith(
        ("_cues", "_grammar", "_question", "_ask"))},
}

#: The roles of ``source_roles`` (what the policy does with a source type; see :class:`CorpusProfile`).
SOURCE_ROLES = ("thread", "thread_replies", "listed_by_links", "titled_thread", "own_thread", "rule",
                "chain_rule_target", "chain_change_target", "cause_review")

#: Names of older profile files -> their names now: ``(field, None)`` for a field, ``(field, role)``
#: for a role of ``source_roles``.
RENAMED: dict[tuple[str, str | None], str] = {
    ("policy_target", None): "rule_target_cues",
    ("rollout_target", None): "change_target_cues",
    ("source_roles", "ticket"): "listed_by_links",
    ("source_roles", "policy"): "chain_rule_target",
    ("source_roles", "rollout"): "chain_change_target",
}

def upgrade_profile_data(data: Mapping[str, Any]) -> dict[str, Any]:
    """Parsed JSON of an older profile, upgraded: its names renamed (:data:`RENAMED`), the fields it
    lacked set to what the code held then; newer data comes back as is. For the profiles the kit
    wrote (an index manifest keeps one): a profile *file* with an old name is an error (the new name)."""
    roles = data.get("source_roles")
    roles = dict(roles) if isinstance(roles, Mapping) else {}
    if not ({(k, None) for k in data} | {("source_roles", r) for r in roles}) & RENAMED.keys():
        return dict(data)
    out = {RENAMED.get((k, None), k): v for k, v in data.items()}
    if roles:
        out["source_roles"] = {RENAMED.get(("source_roles", r), r): v for r, v in roles.items()}
    # what ragkit.text.looks_like_instruction read as guidance before instruction_sources
    out.setdefault("instruction_sources", ["polic(y|ies)", "runbook"])
    return out


_FIX = {
    "str": 'a string, e.g. "my-corpus"',
    "words": 'a list of strings, e.g. ["ticket", "runbook"]',
    "regex words": 'a list of strings, each a regex alternative, e.g. ["open", "in progress"]',
    "regex": 'one regex as a string, e.g. "\\\\bbecause\\\\b"',
    "named regexes": 'a list of [name, regex] pairs, e.g. [["key", "[A-Z]+-\\\\d+"]]',
    "ask rules": 'a list of [regex, [form, ...]] pairs, e.g. [["\\\\bwho\\\\b", ["person"]]]',
    "groups": 'a list of lists of strings, e.g. [["finis", "compl"]]',
    "ranks": 'an object of integers, e.g. {"policy_owner": 6, "support": 1}',
    "roles": 'an object of lists of strings, e.g. {"thread": ["ticket"]}',
}


def _bad(name: str, kind: str, why: str, where: str) -> ValidationError:
    return ValidationError(f"profile field '{name}' {why}; write it as {_FIX[kind]}", field=name, where=where)


def _words(name: str, kind: str, value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(name, kind, f"must be a list of strings, got {json.dumps(value)[:60]}", where)
    return tuple(value)


def _regex(name: str, kind: str, value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _bad(name, kind, f"must be a string, got {type(value).__name__}", where)
    try:
        re.compile(value)
    except re.error as exc:
        raise _bad(name, kind, f"is not a valid regex ({exc}): {value[:60]!r}", where) from None
    return value


def _field(name: str, kind: str, value: Any, where: str) -> Any:
    if kind == "str":
        if not isinstance(value, str):
            raise _bad(name, kind, f"must be a string, got {type(value).__name__}", where)
        return value
    if kind in ("words", "regex words"):
        words = _words(name, kind, value, where)
        if kind == "regex words":
            _regex(name, kind, "|".join(words), where)
        return words
    if kind == "regex":
        return _regex(name, kind, value, where)
    if kind == "groups":
        if not isinstance(value, list):
            raise _bad(name, kind, f"must be a list, got {type(value).__name__}", where)
        return tuple(_words(name, kind, g, where) for g in value)
    if kind in ("named regexes", "ask rules"):
        if not isinstance(value, list):
            raise _bad(name, kind, f"must be a list, got {type(value).__name__}", where)
        out: list[tuple[Any, Any]] = []
        for pair in value:
            if not isinstance(pair, list) or len(pair) != 2:
                raise _bad(name, kind, f"holds {json.dumps(pair)[:60]}, not a pair", where)
            if kind == "named regexes":
                if not isinstance(pair[0], str):
                    raise _bad(name, kind, f"names a pattern with {json.dumps(pair[0])}, not a string", where)
                out.append((pair[0], _regex(name, kind, pair[1], where)))
            else:
                out.append((_regex(name, kind, pair[0], where), _words(name, kind, pair[1], where)))
        return tuple(out)
    if not isinstance(value, dict):
        raise _bad(name, kind, f"must be an object, got {type(value).__name__}", where)
    if kind == "ranks":
        for k, v in value.items():
            if not isinstance(v, int) or isinstance(v, bool):
                raise _bad(name, kind, f"gives {k!r} the rank {json.dumps(v)}, not an integer", where)
        return dict(value)
    for role in value if name == "source_roles" else ():
        if role not in SOURCE_ROLES:
            new = RENAMED.get((name, role))
            why = f"the role '{role}', which is now called '{new}'; rename the key" if new else \
                f"an unknown role '{role}'; the roles are: {', '.join(SOURCE_ROLES)}"
            raise ValidationError(f"profile field 'source_roles' names {why}", field=name, where=where)
    return {k: _words(name, kind, v, where) for k, v in value.items()}


def profile_from_mapping(data: Mapping[str, Any], *, where: str = "profile",
                         upgrade: bool = False) -> CorpusProfile:
    """A :class:`CorpusProfile` from parsed JSON; a missing field keeps its default, an unknown or
    malformed one raises :class:`ragkit.core.ValidationError` naming the field and the fix (an old
    name: its new name). ``upgrade``: read an older profile's names (:func:`upgrade_profile_data`)."""
    if not isinstance(data, Mapping):
        raise ValidationError(f"a profile must be a JSON object, got {type(data).__name__}", where=where)
    if upgrade:
        data = upgrade_profile_data(data)
    unknown = sorted(set(data) - set(PROFILE_FIELDS))
    renamed = [k for k in unknown if (k, None) in RENAMED]
    if renamed:
        raise ValidationError(
            f"profile field '{renamed[0]}' is now called '{RENAMED[renamed[0], None]}'; rename it "
            f"(its value stays the same)", field=renamed[0], where=where)
    if unknown:
        raise ValidationError(
            f"unknown profile field '{unknown[0]}'; the fields are: {', '.join(PROFILE_FIELDS)}",
            field=unknown[0], where=where)
    return CorpusProfile(**{k: _field(k, PROFILE_FIELDS[k], v, where) for k, v in data.items()})


def load_profile_text(text: str, *, where: str = "profile", upgrade: bool = False) -> CorpusProfile:
    """A :class:`CorpusProfile` from JSON text (:func:`load_profile`, :func:`profile_from_mapping`)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"not valid JSON ({exc.msg} at line {exc.lineno}); fix the file's syntax",
                              where=where) from None
    return profile_from_mapping(data, where=where, upgrade=upgrade)


def load_profile(path: str | Path) -> CorpusProfile:
    """Read a :class:`CorpusProfile` from a JSON file.

    Raises:
        ragkit.core.ValidationError: a field is unknown or malformed (the message names the
            field and how to write it), or the file is not JSON.
        FileNotFoundError: no file at ``path``.
    """
    path = Path(path)
    return load_profile_text(path.read_text(encoding="utf-8"), where=str(path))


@functools.cache
def bundled_profile() -> CorpusProfile:
    """The bundled course corpus's profile (:data:`BUNDLED_PROFILE_PATH`), read once per process."""
    return load_profile(BUNDLED_PROFILE_PATH)


_ACTIVE: contextvars.ContextVar[CorpusProfile | None] = contextvars.ContextVar("ragkit_profile", default=None)


def active_profile() -> CorpusProfile:
    """The profile the text, evidence and policy modules read now: the one set by the innermost
    :func:`using_profile` of this context (thread or task), else :func:`bundled_profile`.

    Example:
        >>> active_profile() is bundled_profile()
        True
    """
    profile = _ACTIVE.get()
    return bundled_profile() if profile is None else profile


@contextlib.contextmanager
def using_profile(profile: CorpusProfile | None) -> Iterator[CorpusProfile]:
    """Make ``profile`` the :func:`active_profile` inside the ``with`` block (``None`` keeps the
    current one); the previous one is restored on leaving, also on an error.

    Example:
        >>> other = bundled_profile().replace(name="other")
        >>> with using_profile(other) as p:
        ...     active_profile().name
        'other'
        >>> active_profile() is bundled_profile()
        True
    """
    if profile is None:
        yield active_profile()
        return
    token = _ACTIVE.set(profile)
    try:
        yield profile
    finally:
        _ACTIVE.reset(token)
