"""TREC interoperability: run files out, qrels in, qrels from evidence cases.

A TREC *run* file has one line per retrieved document, ``qid Q0 docid rank score tag``;
a *qrels* file one line per judgement, ``qid 0 docid relevance``. These are what
trec_eval, ranx and pytrec_eval read, so a team can score ragkit's rankings with the
tools they already trust, and score their own system's run against ragkit's cases.
Ranks are written in the order of :func:`ragkit.evaluation.metrics.rank_run` (score descending,
ties by doc id descending, trec_eval's rule).

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "run.txt")
    >>> _ = write_run({"q1": {"a#x": 2.0, "b#y": 1.0}}, path, tag="demo")
    >>> open(path).read().splitlines()[0]
    'q1 Q0 a#x 1 2 demo'
    >>> read_run(path)
    {'q1': {'a#x': 2.0, 'b#y': 1.0}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from ragkit.core.errors import ValidationError
from ragkit.evaluation.cases import EvidenceCase
from ragkit.evaluation.metrics import rank_run

__all__ = ["write_run", "read_run", "write_qrels", "read_qrels", "qrels_from_cases"]


def write_run(run: Mapping[str, Mapping[str, float]], path: str | Path, *, tag: str = "ragkit") -> Path:
    """Write ``{qid: {docid: score}}`` as a TREC run file; returns the path."""
    if not tag or any(ch.isspace() for ch in tag):
        raise ValidationError(f"run tag {tag!r} must be one word (no spaces)", field="tag")
    lines = []
    for qid, scores in run.items():
        for rank, doc in enumerate(rank_run(scores), start=1):
            _check_token(qid, "query id")
            _check_token(doc, "doc id")
            lines.append(f"{qid} Q0 {doc} {rank} {float(scores[doc]):g} {tag}")
    out = Path(path)
    out.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return out


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{qid: {docid: score}}``."""
    run: dict[str, dict[str, float]] = {}
    for where, parts in _lines(path, 6, "qid Q0 docid rank score tag"):
        try:
            run.setdefault(parts[0], {})[parts[2]] = float(parts[4])
        except ValueError:
            raise ValidationError(f"score {parts[4]!r} is not a number", field="score", where=where) from None
    return run


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | Path) -> Path:
    """Write ``{qid: {docid: relevance}}`` as a TREC qrels file."""
    lines = [f"{qid} 0 {doc} {int(rel)}" for qid, docs in qrels.items() for doc, rel in docs.items()]
    out = Path(path)
    out.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return out


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file (``qid 0 docid relevance``) into ``{qid: {docid: relevance}}``."""
    qrels: dict[str, dict[str, int]] = {}
    for where, parts in _lines(path, 4, "qid 0 docid relevance"):
        try:
            qrels.setdefault(parts[0], {})[parts[2]] = int(parts[3])
        except ValueError:
            raise ValidationError(f"relevance {parts[3]!r} is not an integer", field="relevance",
                                  where=where) from None
    return qrels


def qrels_from_cases(cases: Iterable[EvidenceCase], *, level: str = "section") -> dict[str, dict[str, int]]:
    """Graded qrels from evidence cases: the decisive item 2, every other evidence item 1.

    ``level="section"`` judges ``doc_id#anchor`` (the unit ragkit cites); ``"document"``
    judges ``doc_id``. Unanswerable cases have no relevant document and are left out.
    """
    if level not in ("section", "document"):
        raise ValidationError(f"level={level!r}; use 'section' or 'document'", field="level")
    out: dict[str, dict[str, int]] = {}
    for case in cases:
        judged: dict[str, int] = {}
        for item in case.evidence:
            key = item.citation if level == "section" else item.doc_id
            judged[key] = max(judged.get(key, 0), 2 if item.role == "decisive" else 1)
        if judged:
            out[case.id] = judged
    return out


def _check_token(value: str, what: str) -> None:
    if not value or any(ch.isspace() for ch in str(value)):
        raise ValidationError(f"{what} {value!r} contains whitespace; TREC files are space separated",
                              field=what)


def _lines(path: str | Path, width: int, layout: str) -> Iterable[tuple[str, list[str]]]:
    file = Path(path)
    with file.open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            parts = raw.split()
            where = f"{file}:{number}"
            if len(parts) != width:
                raise ValidationError(f"expected {width} columns ({layout}), found {len(parts)}",
                                      field="(line)", where=where)
            yield where, parts
