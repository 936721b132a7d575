"""``ragkit eval``: evaluate a placement over a case file, gate it, write reports.

The command line only parses arguments; this module does the work so notebooks and CI
scripts can call :func:`run_eval` directly. Exit codes: 0 all gates pass (or none given),
1 a gate failed, 2 bad input (a malformed case with ``--strict``, no valid case, a bad
gates file). The cases run through :func:`ragkit.evaluation.parallel.evaluate_full`: in this
process, or with ``workers=N`` on N processes, with the same report either way.

Example:
    >>> outcome = run_eval("datasets/opscorpus/cases.jsonl", ".ragkit-cache/index-course",
    ...                    placement="pipeline", limit=20, workers=2)     # doctest: +SKIP
    >>> outcome.exit_code, outcome.report.summary()["end_to_end_rate"]   # doctest: +SKIP
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ragkit.agent import PLACEMENTS
from ragkit.core.errors import ValidationError
from ragkit.evaluation.cases import EvidenceCase, load_cases, load_cases_lenient
from ragkit.evaluation.gates import check_gates, load_gates, report_figures
from ragkit.evaluation.parallel import evaluate_full
from ragkit.evaluation.plots import html_report
from ragkit.evaluation.report import Report
from ragkit.evaluation.trec import write_run
from ragkit.index.index import Index

__all__ = ["EvalOutcome", "run_eval", "outcome_json"]


@dataclass
class EvalOutcome:
    """What ``ragkit eval`` did: the report, the case-file errors, the exit code."""

    report: Report
    case_errors: list[ValidationError] = field(default_factory=list)
    exit_code: int = 0
    written: list[str] = field(default_factory=list)


def run_eval(cases_path: str | Path, index: str | Path | Index, *, placement: str = "pipeline",
             gates: str | Path | None = None, counterfactuals: bool = False, html: str | Path | None = None,
             trec: str | Path | None = None, csv: str | Path | None = None, strict: bool = False,
             limit: int = 0, progress: bool = True, workers: int = 1,
             log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> EvalOutcome:
    """Load cases (tolerantly unless ``strict``), run the agent at ``placement``, score, gate, write.

    Args:
        cases_path: a ``cases.jsonl`` file.
        index: an index folder or a loaded index (a loaded index runs in this process only).
        placement: ``pipeline``, ``tool`` or ``hybrid``.
        gates: a gates TOML file (:mod:`ragkit.evaluation.gates`).
        counterfactuals: also run the four counterfactual tests.
        html / trec / csv: where to write the HTML report, the TREC run, the per-case CSV.
        strict: stop at the first malformed case.
        limit: evaluate only the first N cases (0 = all).
        progress: a line as each stage starts (through ``log``) and a bar of cases on stderr.
        workers: cases run at a time, each on its own process (1: in this process); the report
            does not depend on it.
        log: where skipped-case warnings and stage lines go (default: stderr).
    """
    if workers < 1:
        raise ValidationError(f"workers={workers}: use 1 or more", field="workers")
    if placement not in PLACEMENTS:
        raise ValidationError(f"placement {placement!r}; use one of {PLACEMENTS}", field="placement")
    gate_list = load_gates(gates) if gates else None  # bad gates fail before any work
    if html:
        try:
            import matplotlib  # noqa: F401
            import seaborn  # noqa: F401
        except ImportError:
            raise ValidationError("--html needs seaborn and matplotlib: pip install 'ragkit[course]'",
                                  field="html") from None
    errors: list[ValidationError] = []
    cases: list[EvidenceCase]
    if strict:
        cases = load_cases(cases_path)
    else:
        cases, errors = load_cases_lenient(cases_path)
        for err in errors:
            log(f"skipped case: {err}")
    if not cases:
        bad = f" ({len(errors)} malformed)" if errors else ""
        raise ValidationError(f"no valid case in {cases_path}{bad}", field="cases", where=str(cases_path))
    if limit:
        cases = cases[:limit]
    say = log if progress else (lambda _m: None)
    say(f"loaded {len(cases)} cases from {cases_path}")
    load: Callable[[], Index]
    if isinstance(index, (str, Path)):
        say(f"loading the index {index}")
        folder, index = Path(index), Index.load(index)  # a bad index fails here, before any worker starts
        workers = min(workers, len(cases))
        load = functools.partial(Index.load, folder) if workers > 1 else functools.partial(_given, index)
    else:
        load, workers = functools.partial(_given, index), 1  # a loaded index stays in this process
    say(f"evaluating {len(cases)} cases at placement {placement}"
        f"{' with counterfactuals' if counterfactuals else ''}: "
        + (f"{workers} at a time, on worker processes that each load the index and the models"
           if workers > 1 else "one at a time"))
    # per process, one score per (query, passage) for a case's runs; each run timed as if cold
    reports, _ = evaluate_full(cases, load, placements=(placement,), counterfactuals=counterfactuals,
                               workers=workers, progress=progress)
    report = reports[placement]
    outcome = EvalOutcome(report, errors)
    if gate_list is not None:
        report.gates = check_gates(gate_list, report_figures(report))
        outcome.exit_code = 0 if report.gates.ok else 1
    if html:
        Path(html).write_text(html_report(report, title=f"ragkit eval: {Path(cases_path).name}, {placement}"),
                              encoding="utf-8")
        outcome.written.append(str(html))
    if trec:
        write_run(report.decisive_run()[0], trec, tag=f"ragkit-{placement}")
        outcome.written.append(str(trec))
    if csv:
        report.to_csv(csv)
        outcome.written.append(str(csv))
    return outcome


def _given(index: Index) -> Index:
    """``index`` itself: the index loader of a run in this process."""
    return index


def outcome_json(outcome: EvalOutcome) -> str:
    """The whole report plus the case-file errors, as one JSON object."""
    data = outcome.report.to_dict()
    data["case_errors"] = [{"where": e.where, "field": e.field, "message": str(e)}
                           for e in outcome.case_errors]
    data["exit_code"] = outcome.exit_code
    data["written"] = outcome.written
    return json.dumps(data)
