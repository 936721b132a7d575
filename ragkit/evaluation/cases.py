"""Evidence cases: the evaluation unit of the course (CURRICULUM section 12).

An evidence case is more than a question and a gold document. It says who asks
(a :class:`~ragkit.core.scope.Scope`: tenant and groups), when (``as_of``, the snapshot time), whether
the question can be answered at all, the *minimum evidence set* (each item a
``doc_id``, section ``anchor`` and verbatim ``quote``), the evidence that must be
rejected or qualified and why (:data:`ragkit.evidence.decision.REJECT_REASONS`), and the expected
resolution as a normalised value (:func:`ragkit.text.normalise.normalise_value`).

Cases live in JSON Lines, one case per line, validated against
:data:`ragkit.evaluation.caseschema.CASE_SCHEMA` (also written to ``datasets/cases.schema.json``).
:func:`load_cases` raises :class:`~ragkit.core.errors.ValidationError` naming the file, the line
and the field.

Example:
    >>> import json, tempfile, os
    >>> line = {"id": "eur-1", "task": "Which EUR cutoff applies to Acme on 19 January?",
    ...         "caller": {"tenant": "acme", "groups": ["ops"]}, "as_of": "2026-01-19",
    ...         "answerable": True,
    ...         "evidence": [{"doc_id": "policy-v3", "anchor": "cutoffs-for-migrated-tenants",
    ...                       "quote": "Migrated tenants use 15:00 for the EUR cutoff.",
    ...                       "role": "decisive"}],
    ...         "reject": [{"doc_id": "runbook-v2", "reason": "lower_authority"}],
    ...         "expected": {"kind": "time", "value": "15:00", "surface": "15:00"},
    ...         "tags": ["conflict"], "decoys": []}
    >>> path = os.path.join(tempfile.mkdtemp(), "cases.jsonl")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write(json.dumps(line) + "\\n")
    >>> [case] = load_cases(path)
    >>> case.decisive.doc_id, case.expected.value, case.as_of.date().isoformat()
    ('policy-v3', '15:00', '2026-01-19')
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.core.records import Envelope, parse_time
from ragkit.core.scope import Scope
from ragkit.evaluation.caseschema import schema_errors
from ragkit.text.normalise import normalise_value

__all__ = [
    "EvidenceRef",
    "Rejection",
    "Expected",
    "Absent",
    "EvidenceCase",
    "load_cases",
    "load_cases_lenient",
    "parse_case",
]

# --------------------------------------------------------------------------------------
# records


@dataclass(frozen=True)
class EvidenceRef:
    """One member of the minimum evidence set: a quote inside a document section."""

    doc_id: str
    anchor: str
    quote: str
    role: str = "decisive"

    @property
    def citation(self) -> str:
        return f"{self.doc_id}#{self.anchor}"


@dataclass(frozen=True)
class Rejection:
    """A source that must be rejected or qualified, and the reason (see :data:`REJECT_REASONS`)."""

    doc_id: str
    reason: str
    anchor: str | None = None
    quote: str | None = None
    shared: str | None = None
    resolved_by: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Expected:
    """The expected resolution: ``kind`` (:data:`VALUE_KINDS`) and the normalised ``value``.

    ``surface`` is the text inside the decisive quote that the value was read from.
    """

    kind: str
    value: str
    surface: str | None = None

    def matches(self, answer: str) -> bool:
        """Whether ``answer`` normalises to the expected value (False if it has none)."""
        try:
            got = normalise_value(self.kind, answer)
        except ValidationError:
            return False
        if self.kind in ("text", "status"):
            return self.value in got
        return got == self.value


@dataclass(frozen=True)
class Absent:
    """For unanswerable cases: the missing fact, as regexes that would all match one document."""

    all_of: tuple[str, ...]
    note: str

    def found_in(self, text: str) -> bool:
        return all(re.search(p, text) for p in self.all_of)


@dataclass(frozen=True)
class EvidenceCase:
    """One evidence case (see the module docstring)."""

    id: str
    task: str
    caller: Scope
    as_of: dt.datetime
    answerable: bool
    evidence: tuple[EvidenceRef, ...]
    reject: tuple[Rejection, ...]
    expected: Expected | None
    tags: tuple[str, ...]
    decoys: tuple[str, ...]
    absent: Absent | None = None
    family: str = ""
    line: int = 0

    @property
    def decisive(self) -> EvidenceRef | None:
        """The evidence item that states the answer (``None`` for unanswerable cases)."""
        return next((e for e in self.evidence if e.role == "decisive"), None)

    @property
    def required_doc_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.doc_id for e in self.evidence))

    def in_scope(self, envelope: Envelope) -> bool:
        """Readable by the caller and already published at ``as_of``."""
        if not self.caller.allows(envelope):
            return False
        return envelope.published_at is None or envelope.published_at <= self.as_of


def parse_case(data: Mapping[str, Any], *, where: str | None = None, line: int = 0) -> EvidenceCase:
    """Validate one case mapping and build an :class:`EvidenceCase`.

    Raises:
        ValidationError: naming ``where`` (file:line) and the field.
    """
    problems = schema_errors(data)
    if problems:
        field, problem = problems[0]
        raise ValidationError(f"field '{field}': {problem}", field=field, where=where)

    def fail(field: str, message: str) -> ValidationError:
        return ValidationError(f"field '{field}': {message}", field=field, where=where)

    as_of = parse_time(data["as_of"], field_name="as_of", where=where)
    assert as_of is not None
    evidence = tuple(
        EvidenceRef(e["doc_id"], e["anchor"], e["quote"], e.get("role", "decisive"))
        for e in data["evidence"]
    )
    expected = Expected(**data["expected"]) if data["expected"] is not None else None
    absent = (
        Absent(tuple(data["absent"]["all_of"]), data["absent"]["note"])
        if "absent" in data
        else None
    )
    if data["answerable"]:
        if expected is None:
            raise fail("expected", "an answerable case needs an expected value")
        if not evidence:
            raise fail("evidence", "an answerable case needs a minimum evidence set")
        decisive = [e for e in evidence if e.role == "decisive"]
        if len(decisive) != 1:
            raise fail(
                "evidence", f"needs exactly one item with role 'decisive', found {len(decisive)}"
            )
        if absent is not None:
            raise fail("absent", "only unanswerable cases carry 'absent'")
        try:
            value = normalise_value(expected.kind, expected.value)
        except ValidationError as exc:
            raise fail("expected.value", str(exc)) from None
        if value != expected.value:
            raise fail("expected.value", f"{expected.value!r} is not normalised; write {value!r}")
    else:
        if expected is not None:
            raise fail("expected", "an unanswerable case has expected: null")
        if evidence:
            raise fail(
                "evidence",
                "an unanswerable case has an empty evidence list; put near-evidence "
                "in 'reject' with reason 'neighbouring_fact'",
            )
        if absent is None:
            raise fail(
                "absent", "an unanswerable case needs 'absent' (the missing fact as regexes)"
            )
        for i, pattern in enumerate(absent.all_of):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise fail(f"absent.all_of[{i}]", f"bad regex {pattern!r}: {exc}") from None
    for i, r in enumerate(data["reject"]):
        if r["reason"] == "lexical_decoy" and "shared" not in r:
            raise fail(f"reject[{i}].shared", "a lexical_decoy names the identifier it shares")
        if r["reason"] == "condition_met" and "resolved_by" not in r:
            raise fail(f"reject[{i}].resolved_by", "condition_met names the record that ended it")
    reject = tuple(Rejection(**r) for r in data["reject"])
    return EvidenceCase(
        id=data["id"],
        task=data["task"],
        caller=Scope(data["caller"]["tenant"], data["caller"]["groups"]),
        as_of=as_of,
        answerable=data["answerable"],
        evidence=evidence,
        reject=reject,
        expected=expected,
        tags=tuple(data["tags"]),
        decoys=tuple(data["decoys"]),
        absent=absent,
        family=data.get("family", ""),
        line=line,
    )


def load_cases(path: str | Path) -> list[EvidenceCase]:
    """Read a ``cases.jsonl`` file, validating every line against :data:`CASE_SCHEMA`.

    Blank lines are skipped. Case ids must be unique.

    Raises:
        ValidationError: the first bad line, as ``file:line: field 'x': problem``
            (``.where`` and ``.field`` are set).
        FileNotFoundError: no such file.

    Example:
        >>> cases = load_cases("datasets/opscorpus/cases.jsonl")   # doctest: +SKIP
        >>> sum(c.answerable for c in cases) >= 200                 # doctest: +SKIP
        True
    """
    out: list[EvidenceCase] = []
    for item in _read_cases(Path(path)):
        if isinstance(item, ValidationError):
            raise item
        out.append(item)
    return out


def load_cases_lenient(path: str | Path) -> tuple[list[EvidenceCase], list[ValidationError]]:
    """Like :func:`load_cases`, but keep going: the valid cases, and one error per bad line.

    Each error reads ``file:line: field 'x': problem`` (``.where`` and ``.field`` set); a
    duplicate id is an error on its later line and that line's case is left out. Used by
    ``ragkit eval`` so that one malformed case does not stop a run (``--strict`` stops).

    Example:
        >>> cases, errors = load_cases_lenient("datasets/opscorpus/cases.jsonl")  # doctest: +SKIP
        >>> [str(e) for e in errors]                                              # doctest: +SKIP
        []
    """
    out: list[EvidenceCase] = []
    errors: list[ValidationError] = []
    for item in _read_cases(Path(path)):
        if isinstance(item, ValidationError):
            errors.append(item)
        else:
            out.append(item)
    return out, errors


def _read_cases(file: Path) -> Iterator[EvidenceCase | ValidationError]:
    """Each non-blank line of ``file`` as a case, or as the error that names its line and field
    (bad JSON, a schema or field error, an id already used on an earlier line)."""
    seen: dict[str, int] = {}
    with file.open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            where = f"{file}:{number}"
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                yield ValidationError(f"not valid JSON ({exc.msg} at column {exc.colno})",
                                      field="(line)", where=where)
                continue
            try:
                case = parse_case(data, where=where, line=number)
            except ValidationError as exc:
                yield exc
                continue
            if case.id in seen:
                yield ValidationError(f"field 'id': duplicate id {case.id!r}, first on line "
                                      f"{seen[case.id]}", field="id", where=where)
                continue
            seen[case.id] = number
            yield case
