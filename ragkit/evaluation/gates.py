"""Release gates and diagnosis: turn an evaluation report into pass/fail and next experiments.

CURRICULUM section 12. Gates live in a small TOML file, one table per gated figure of
:meth:`ragkit.evaluation.report.Report.summary` (or of the counterfactuals), with a ``min`` or a
``max`` and an optional ``note``::

    [gates.entered_rate]            # minimum evidence set enters the candidates
    min = 0.85
    note = "candidate recall: the ceiling of every later stage"

    [gates.tenant_leaks]            # zero tolerance, always on
    max = 0

Tenant isolation is always gated with zero tolerance: a file that omits it gets it, and a
file that allows any leak is rejected. A gated figure that was not measured (e.g. a
counterfactual rate without ``--counterfactuals``) fails, saying how to measure it.
``ragkit eval --gates FILE`` exits with status 1 when any gate fails, so it can run in CI.

:func:`diagnose` applies the diagnosis table (failure pattern -> boundary -> next
experiment) to a report.

Example:
    >>> gates = parse_gates({"gates": {"false_assertion_rate": {"max": 0.25}}})
    >>> [g.metric for g in gates]
    ['false_assertion_rate', 'tenant_leaks']
    >>> check_gates(gates, {"false_assertion_rate": 0.2, "tenant_leaks": 0}).ok
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.evaluation.report import Report

__all__ = ["Gate", "GateResult", "GateReport", "DIAGNOSIS", "load_gates", "parse_gates", "check_gates",
           "report_figures", "diagnose"]

ZERO_TOLERANCE = ("tenant_leaks", "counterfactual_tenant_leaks")


@dataclass(frozen=True)
class Gate:
    """One threshold: ``metric`` must be >= ``min`` and/or <= ``max``."""

    metric: str
    min: float | None = None
    max: float | None = None
    note: str = ""

    def describe(self) -> str:
        parts = ([f">= {self.min:g}"] if self.min is not None else []) + \
            ([f"<= {self.max:g}"] if self.max is not None else [])
        return f"{self.metric} {' and '.join(parts)}"


@dataclass(frozen=True)
class GateResult:
    """One gate checked: the figure's value (``None`` if the report lacks it), pass or fail, and why."""

    gate: Gate
    value: float | None
    passed: bool
    reason: str


class GateReport:
    """Results of every gate; ``ok`` is True only when all passed."""

    def __init__(self, results: Sequence[GateResult]):
        self.results = list(results)

    @property
    def ok(self) -> bool:
        return all(r.passed for r in self.results)

    def table(self) -> Any:
        import pandas as pd

        return pd.DataFrame([{"gate": r.gate.describe(), "value": r.value, "passed": r.passed,
                              "reason": r.reason} for r in self.results])

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "gates": [{"metric": r.gate.metric, "min": r.gate.min, "max": r.gate.max,
                                          "note": r.gate.note, "value": r.value, "passed": r.passed,
                                          "reason": r.reason} for r in self.results]}

    def __str__(self) -> str:
        lines = [f"Gates: {'PASS' if self.ok else 'FAIL'}"]
        lines += [f"  [{'ok' if r.passed else 'FAIL'}] {r.reason}" for r in self.results]
        return "\n".join(lines)


def parse_gates(data: Mapping[str, Any], *, where: str = "gates") -> list[Gate]:
    """Gates from parsed TOML (``{"gates": {metric: {"min"|"max": x, "note": s}}}``)."""
    table = data.get("gates")
    if not isinstance(table, Mapping):
        raise ValidationError("no [gates] table; write e.g. [gates.entered_rate] with min = 0.85",
                              field="gates", where=where)
    gates = []
    for metric, spec in table.items():
        if not isinstance(spec, Mapping):
            raise ValidationError(f"gates.{metric} must be a table with min and/or max, e.g. "
                                  f"[gates.{metric}] min = 0.8", field=f"gates.{metric}", where=where)
        unknown = sorted(set(spec) - {"min", "max", "note"})
        if unknown:
            raise ValidationError(f"gates.{metric} has unknown key(s) {unknown}; use min, max, note",
                                  field=f"gates.{metric}.{unknown[0]}", where=where)
        bounds = {}
        for key in ("min", "max"):
            value = spec.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ValidationError(f"gates.{metric}.{key} = {value!r}; expected a number",
                                      field=f"gates.{metric}.{key}", where=where)
            bounds[key] = float(value) if value is not None else None
        if bounds["min"] is None and bounds["max"] is None:
            raise ValidationError(f"gates.{metric} needs min or max", field=f"gates.{metric}", where=where)
        if metric in ZERO_TOLERANCE and (bounds["max"] is None or bounds["max"] != 0 or bounds["min"]):
            raise ValidationError(f"gates.{metric}: tenant isolation has zero tolerance; write max = 0",
                                  field=f"gates.{metric}.max", where=where)
        gates.append(Gate(str(metric), bounds["min"], bounds["max"], str(spec.get("note", ""))))
    if not any(g.metric == "tenant_leaks" for g in gates):
        gates.append(Gate("tenant_leaks", None, 0.0, "tenant isolation, zero tolerance (always on)"))
    return gates


def load_gates(path: str | Path) -> list[Gate]:
    """Read a gates TOML file (see the module docs)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValidationError(f"gates file {file} does not exist", field="gates", where=str(file)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(f"not valid TOML: {exc}", field="gates", where=str(file)) from None
    return parse_gates(data, where=str(file))


def report_figures(report: Report) -> dict[str, Any]:
    """The figures gates can name: the report summary plus counterfactual rates and leaks."""
    figures = dict(report.summary())
    cf = getattr(report, "counterfactuals", None)
    if cf is not None:
        for name, r in cf.results.items():
            figures[f"counterfactual_{name}_rate"] = r.rate
        figures["counterfactual_tenant_leaks"] = cf.tenant_leaks
    return figures


def check_gates(gates: Sequence[Gate], figures: Mapping[str, Any]) -> GateReport:
    """Check every gate against ``figures`` (:func:`report_figures` or a summary dict)."""
    results = []
    for g in gates:
        value = figures.get(g.metric)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            hint = " (run with --counterfactuals)" if g.metric.startswith("counterfactual_") else ""
            known = "" if g.metric in figures else f"; known figures: {', '.join(sorted(figures)[:40])}"
            results.append(GateResult(g, None, False, f"{g.describe()}: not measured{hint}{known}"))
            continue
        v = float(value)
        low = g.min is not None and v < g.min
        high = g.max is not None and v > g.max
        passed = not (low or high)
        verdict = "holds" if passed else ("below the minimum" if low else "above the maximum")
        note = f" ({g.note})" if g.note else ""
        results.append(GateResult(g, v, passed, f"{g.describe()}: measured {v:.4g}, {verdict}{note}"))
    return GateReport(results)


#: The diagnosis table: failure pattern -> boundary -> next experiment.
DIAGNOSIS: tuple[tuple[str, str, str], ...] = (
    ("evidence never enters the candidates", "candidates (retrieval)",
     "raise the candidate width; check filters and scope; add BM25 for identifiers, dense or query "
     "variants (reformulation, HyDE) for vocabulary mismatch; check chunking did not split the evidence"),
    ("enters the candidates, cut by reranking", "rerank",
     "rerank deeper; compare rerank modes (rrf vs rerank alone); widen the delivered width; "
     "measure the reranker in domain before trusting it"),
    ("survives reranking, not delivered", "delivery (expansion and budget)",
     "raise section and total token budgets; expand to the parent section; look for truncation notices"),
    ("delivered, resolution chose a rejected source", "resolution",
     "check effective dates, supersedes links, conditions and authority; add contradiction search "
     "for the entity and predicate"),
    ("delivered, wrong or no answer otherwise", "answer (reading and resolution)",
     "inspect the decision record: value reading, conditions, abstention threshold"),
    ("unanswerable case answered (false assertion)", "honesty",
     "require a decisive cited span for every value; abstain when the record is insufficient or in "
     "conflict; add unanswerable cases rich in near-evidence"),
    ("answerable case abstained with the evidence delivered", "answer (over-abstention)",
     "loosen the abstention rule; read the record's unresolved conflicts and to_confirm"),
    ("correct answer without the minimum evidence set", "evaluation data",
     "check the case: is the evidence set minimal and unique? was the answer guessed?"),
    ("candidate of another tenant in a trace", "access control",
     "filter by caller scope before ranking, re-check on every read; zero tolerance"),
)


def diagnose(report: Report) -> Any:
    """The diagnosis table applied to ``report``: cases per pattern, examples, next experiment."""
    import pandas as pd

    f = report.frame
    ans = f["answerable"].astype(bool)
    masks = [
        ans & (f["lost_at"] == "candidates"),
        ans & (f["lost_at"] == "rerank"),
        ans & (f["lost_at"] == "delivery"),
        ans & (f["lost_at"] == "answer") & f["chose_rejected"].astype(bool),
        ans & (f["lost_at"] == "answer") & ~f["chose_rejected"].astype(bool),
        ~ans & (f["lost_at"] == "honesty"),
        ans & f["delivered"].astype(bool) & f["abstained"].astype(bool),
        ans & f["correct"].astype(bool) & ~f["delivered"].astype(bool),
        f["leak"].astype(bool) if "leak" in f else ans & False,
    ]
    rows = []
    for (pattern, boundary, experiment), mask in zip(DIAGNOSIS, masks, strict=True):
        ids = f.loc[mask, "case"].tolist()
        rows.append({"pattern": pattern, "boundary": boundary, "cases": len(ids),
                     "examples": ", ".join(ids[:5]), "next_experiment": experiment})
    return pd.DataFrame(rows)
