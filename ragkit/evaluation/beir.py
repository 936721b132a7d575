"""Load a BEIR-format folder: corpus, queries and the qrels of one split.

BEIR (Thakur et al., "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation
of Information Retrieval Models", NeurIPS 2021) ships every collection in one
layout, shown in :data:`EXPECTED_LAYOUT`. :func:`load_beir` reads it, keeps only
the queries judged in the chosen split, and names the file and line of anything
it cannot read.

Example:
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": "T", "text": "x"}))
    >>> _ = (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "find x"}))
    >>> (root / "qrels").mkdir()
    >>> rows = ["query-id\\tcorpus-id\\tscore", "q1\\td1\\t1"]
    >>> _ = (root / "qrels" / "test.tsv").write_text("\\n".join(rows) + "\\n")
    >>> data = load_beir(root)
    >>> data.corpus["d1"], data.queries, data.qrels
    (BeirDoc(title='T', text='x'), {'q1': 'find x'}, {'q1': {'d1': 1}})
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ragkit.core.errors import LoadError, ValidationError

__all__ = ["EXPECTED_LAYOUT", "QRELS_HEADER", "BeirDoc", "BeirData", "load_beir"]

#: What a BEIR folder holds; quoted in every "missing file" error.
EXPECTED_LAYOUT = """\
  corpus.jsonl        one JSON object a line: {"_id": "d1", "title": "...", "text": "..."}
  queries.jsonl       one JSON object a line: {"_id": "q1", "text": "..."}
  qrels/<split>.tsv   query-id<TAB>corpus-id<TAB>score (int), after that header line"""

#: The header line of a qrels file (optional; skipped when present).
QRELS_HEADER = ("query-id", "corpus-id", "score")


class BeirDoc(NamedTuple):
    """One corpus document: its title (``""`` when absent) and text."""

    title: str
    text: str


class BeirData(NamedTuple):
    """A BEIR collection restricted to one split.

    Attributes:
        corpus: doc id -> :class:`BeirDoc`, every document of corpus.jsonl.
        queries: query id -> text, only the queries judged in the split.
        qrels: query id -> {doc id: graded relevance}, as in ``qrels/<split>.tsv``.
    """

    corpus: dict[str, BeirDoc]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_beir(folder: str | Path, split: str = "test") -> BeirData:
    """Read a BEIR folder (see :data:`EXPECTED_LAYOUT`) for one split.

    Args:
        folder: the collection folder, e.g. ``datasets/scifact``.
        split: the qrels file to use, ``qrels/<split>.tsv``.

    Returns:
        :class:`BeirData` with the whole corpus, the queries judged in ``split``
        and their qrels.

    Raises:
        LoadError: a missing file (the message lists what the folder holds and
            the expected layout), bad JSON, a record without ``_id`` or ``text``,
            a duplicate id, a bad qrels row, or a judged query missing from
            queries.jsonl; each names the file and line.
        ValidationError: ``split`` has no qrels file (the message lists the splits).
    """
    root = Path(folder)
    if not root.is_dir():
        raise LoadError(
            str(root),
            "not a folder. Point to the collection folder, which holds:\n" + EXPECTED_LAYOUT,
        )
    qrels_dir = root / "qrels"
    if not qrels_dir.is_dir():
        raise _missing(qrels_dir, root)
    splits = sorted(p.stem for p in qrels_dir.glob("*.tsv"))
    if split not in splits:
        fix = (
            f"pass one of them, e.g. split={splits[0]!r}"
            if splits
            else "add qrels/<split>.tsv; a BEIR folder holds:\n" + EXPECTED_LAYOUT
        )
        raise ValidationError(
            f"split {split!r} has no qrels file {split}.tsv; available splits: {splits}; {fix}",
            field="split",
            where=str(qrels_dir),
        )
    qrels = _read_qrels(qrels_dir / f"{split}.tsv")
    corpus = {
        doc_id: BeirDoc(_text_field(rec, "title", path, line, required=False),
                        _text_field(rec, "text", path, line))
        for doc_id, rec, path, line in _records(root / "corpus.jsonl", root)
    }  # fmt: skip
    queries_path = root / "queries.jsonl"
    all_queries = {
        query_id: _text_field(rec, "text", path, line)
        for query_id, rec, path, line in _records(queries_path, root)
    }
    unknown = [query_id for query_id in qrels if query_id not in all_queries]
    if unknown:
        raise LoadError(
            str(qrels_dir / f"{split}.tsv"),
            f"{len(unknown)} judged query id(s) are not in {queries_path.name}, "
            f"e.g. {unknown[:5]}; the qrels and queries files must come from the same collection",
        )
    queries = {query_id: all_queries[query_id] for query_id in qrels}
    return BeirData(corpus, queries, qrels)


# ---------------------------------------------------------------- readers


def _missing(path: Path, root: Path) -> LoadError:
    held = sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir())
    listing = ", ".join(held[:20]) + (f" and {len(held) - 20} more" if len(held) > 20 else "")
    return LoadError(
        str(path),
        f"missing. {root} holds: {listing or 'nothing'}. A BEIR folder holds:\n" + EXPECTED_LAYOUT,
    )


def _records(path: Path, root: Path) -> Iterator[tuple[str, dict[str, Any], str, int]]:
    """Yield (id, record, file, line) for every non-blank line of a JSONL file."""
    if not path.is_file():
        raise _missing(path, root)
    first_line: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LoadError(
                    str(path), f"bad JSON ({exc.msg} at column {exc.colno})", line=line_no
                ) from None
            if not isinstance(record, dict):
                raise LoadError(
                    str(path),
                    f'expected a JSON object like {{"_id": ..., "text": ...}}, '
                    f"got a {type(record).__name__}",
                    line=line_no,
                )
            record_id = record.get("_id")
            if isinstance(record_id, int) and not isinstance(record_id, bool):
                record_id = str(record_id)
            if not isinstance(record_id, str) or not record_id:
                raise LoadError(
                    str(path),
                    f"field '_id' is missing or not a non-empty string (got {record_id!r}); "
                    'every line needs its own "_id"',
                    line=line_no,
                    field="_id",
                )
            if record_id in first_line:
                raise LoadError(
                    str(path),
                    f"_id {record_id!r} already appeared on line {first_line[record_id]}; "
                    "ids must be unique",
                    line=line_no,
                    field="_id",
                )
            first_line[record_id] = line_no
            yield record_id, record, str(path), line_no


def _text_field(
    record: dict[str, Any], name: str, path: str, line: int, *, required: bool = True
) -> str:
    value = record.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        problem = "is missing" if value is None else f"is a {type(value).__name__}"
        raise LoadError(path, f"field '{name}' {problem}; expected a string", line=line, field=name)
    return value


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    seen_on: dict[tuple[str, str], int] = {}
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if line_no == 1 and tuple(f.strip() for f in fields) == QRELS_HEADER:
                continue
            score = fields[2].strip() if len(fields) == 3 else ""
            if len(fields) != 3 or not fields[0] or not fields[1] or not _is_int(score):
                raise LoadError(
                    str(path),
                    f"bad qrels row {line.rstrip()!r}; expected query-id<TAB>corpus-id<TAB>"
                    "integer score (3 tab-separated fields; a header, if any, must be line 1 "
                    "and read query-id<TAB>corpus-id<TAB>score)",
                    line=line_no,
                )
            query_id, doc_id = fields[0].strip(), fields[1].strip()
            grade = int(score)
            earlier = qrels.get(query_id, {}).get(doc_id)
            if earlier is not None and earlier != grade:
                raise LoadError(
                    str(path),
                    f"({query_id!r}, {doc_id!r}) is graded {grade} here but {earlier} on line "
                    f"{seen_on[(query_id, doc_id)]}; keep one grade per pair",
                    line=line_no,
                )
            seen_on.setdefault((query_id, doc_id), line_no)
            qrels.setdefault(query_id, {})[doc_id] = grade
    return qrels


def _is_int(text: str) -> bool:
    return text.lstrip("+-").isdigit()
