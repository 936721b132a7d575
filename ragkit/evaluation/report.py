"""The evaluation report: boundary table, retrieval quality, honesty, cost, failures.

Built by :func:`ragkit.evaluation.runner.evaluate` from one scored row per case. Every table is a
pandas DataFrame; the report shows itself in a notebook (``_repr_html_``), prints as text,
serialises to one JSON object (:meth:`Report.to_json`) and writes a per-case CSV a team can
open in a spreadsheet (:meth:`Report.to_csv`).

The boundary table follows CURRICULUM section 12: of the answerable cases, how many have
their whole minimum evidence set enter the candidates, survive reranking, get delivered,
and get resolved and answered correctly; each row gives the cases that reached the
boundary, the cases that passed it and the conditional rate; end to end is the last count
over all answerable cases. Honesty on unanswerable cases is reported apart from accuracy:
an honest "I don't know" is a success there, never a NaN or a zero.

Example:
    >>> rows = [dict(case="a", tags="conflict", answerable=True, entered=True, survived=True,
    ...              delivered=True, answered=False, correct=False, lost_at="answer"),
    ...         dict(case="u", tags="", answerable=False, entered=False, survived=False,
    ...              delivered=False, answered=False, correct=False, lost_at="", abstained=True)]
    >>> Report(rows).boundaries().loc[("all", "answered"), ["reached", "passed"]].tolist()
    [1, 0]
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.core.ids import section_key
from ragkit.evaluation.cases import EvidenceCase
from ragkit.evaluation.costs import distribution
from ragkit.evaluation.counterfactuals import Counterfactuals
from ragkit.evaluation.fields import Result
from ragkit.evaluation.metrics import score_run as metric_means

__all__ = ["BOUNDARY_LABELS", "Report"]

#: Boundary column -> the row label of CURRICULUM section 12's table.
BOUNDARY_LABELS: dict[str, str] = {
    "entered": "minimum evidence set enters the candidates",
    "survived": "survives reranking",
    "delivered": "is delivered",
    "answered": "resolved and answered correctly",
    "end_to_end": "end to end",
}


def _rate(passed: int, reached: int) -> float:
    return passed / reached if reached else math.nan


class Report:
    """Scored cases and the tables computed from them.

    Attributes:
        frame: one row per case (see :func:`ragkit.evaluation.scoring.score_case` for the columns).
        placement: what was evaluated (``pipeline``, ``tool``, ``hybrid``, ...).
        results: the raw result of every case (``case id -> AgentResult``), for drilling in.
        counterfactuals: filled by :func:`ragkit.evaluation.counterfactuals.run_counterfactuals`.
        gates: filled by :func:`ragkit.evaluation.gates.check_gates`.
    """

    def __init__(self, rows: Sequence[Mapping[str, Any]], *, cases: Sequence[EvidenceCase] = (),
                 results: Mapping[str, Result] | None = None, placement: str = "custom"):
        import pandas as pd

        self.frame = pd.DataFrame([dict(r) for r in rows])
        self.cases = list(cases)
        self.results = dict(results or {})
        self.placement = placement
        self.counterfactuals: Counterfactuals | None = None
        self.gates: Any = None  # a ragkit.evaluation.gates.GateReport (gates read reports: a layer above)
        self.economics: dict[str, Any] | None = None

    # -- tables -------------------------------------------------------------------------
    def _by_tag(self) -> list[tuple[str, Any]]:
        f = self.frame
        tags = sorted({t for ts in f.get("tags", []) for t in str(ts).split(";") if t})
        return [("all", f)] + [(t, f[f["tags"].str.split(";").apply(lambda ts, t=t: t in ts)]) for t in tags]

    def boundaries(self, by_tag: bool = True) -> Any:
        """The boundary table: ``(tag, boundary)`` -> ``label, reached, passed, rate``."""
        import pandas as pd

        rows = []
        for tag, sub in (self._by_tag() if by_tag else self._by_tag()[:1]):
            ans = sub[sub["answerable"].astype(bool)] if len(sub) else sub
            reached = len(ans)
            for col in ("entered", "survived", "delivered", "answered"):
                passed = int(ans[col].astype(bool).sum()) if reached else 0
                rows.append({"tag": tag, "boundary": col, "label": BOUNDARY_LABELS[col], "reached": reached,
                             "passed": passed, "rate": _rate(passed, reached)})
                reached = passed
            total = len(ans)
            e2e = int(ans["answered"].astype(bool).sum()) if total else 0
            rows.append({"tag": tag, "boundary": "end_to_end", "label": BOUNDARY_LABELS["end_to_end"],
                         "reached": total, "passed": e2e, "rate": _rate(e2e, total)})
        return pd.DataFrame(rows).set_index(["tag", "boundary"])

    def honesty(self) -> Any:
        """Per tag: unanswerable cases, honest abstentions, false assertions and their rates;
        and over-abstention (abstained although answerable)."""
        import pandas as pd

        missing = [c for c in ("honest", "false_assertion", "over_abstained") if c not in self.frame]
        if missing:
            raise ValidationError(f"the report's rows lack the columns {missing}; score each case with "
                                  "ragkit.evaluation.scoring.score_case", field="rows")
        rows = []
        for tag, sub in self._by_tag():
            un = sub[~sub["answerable"].astype(bool)]
            an = sub[sub["answerable"].astype(bool)]
            # the definitions live in ragkit.evaluation.scoring.score_case (honest, false_assertion,
            # over_abstained); a failed run is neither honest nor a false assertion
            honest = int(un["honest"].astype(bool).sum()) if len(un) else 0
            false = int(un["false_assertion"].astype(bool).sum()) if len(un) else 0
            over = int(an["over_abstained"].astype(bool).sum()) if len(an) else 0
            rows.append({"tag": tag, "unanswerable": len(un), "honest": honest,
                         "false_assertions": false, "honesty_rate": _rate(honest, len(un)),
                         "false_assertion_rate": _rate(false, len(un)),
                         "answerable": len(an), "over_abstained": over,
                         "over_abstention_rate": _rate(over, len(an)),
                         "accuracy": _rate(int(an["correct"].astype(bool).sum()), len(an)) if len(an)
                         else math.nan})
        return pd.DataFrame(rows).set_index("tag")

    def retrieval(self) -> dict[str, float]:
        """Retrieval quality of the first call: candidate recall, precision at the delivered
        width, MRR@10 and nDCG@10 of the decisive source (:mod:`ragkit.evaluation.metrics`)."""
        f = self.frame
        ans = f[f["answerable"].astype(bool)]
        out: dict[str, float] = {"cases": float(len(ans))}
        if not len(ans):
            return out
        out["candidate_set_recall"] = float(ans["first_set_recall"].astype(float).mean())
        out["candidate_item_recall"] = float(ans["first_item_recall"].astype(float).mean())
        out["precision_at_delivered"] = float(ans["first_precision"].astype(float).mean())
        run, qrels = self.decisive_run()
        if qrels:
            out.update(metric_means(run, qrels, ("mrr@10", "ndcg@10")))
        return out

    def decisive_run(self) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
        """The first call's ranking of sections per case (a run) and the decisive section (qrels),
        keyed ``doc_id#anchor``: the input of :mod:`ragkit.evaluation.metrics` and of TREC run files."""
        run: dict[str, dict[str, float]] = {}
        qrels: dict[str, dict[str, int]] = {}
        by_id = {c.id: c for c in self.cases}
        for row in self.frame.to_dict("records"):
            case = by_id.get(row["case"])
            if case is None or case.decisive is None:
                continue
            sections: dict[str, float] = {}
            for chunk_id, score in (row.get("first_run") or {}).items():
                key = "#".join(section_key(chunk_id))
                sections[key] = max(sections.get(key, -math.inf), score)
            run[case.id] = sections
            qrels[case.id] = {case.decisive.citation: 1}
        return run, qrels

    def costs(self) -> Any:
        """Retrieval calls, tool calls and seconds per task as distributions (p50, p95, max)."""
        import pandas as pd

        f = self.frame
        rows = {col: distribution(f[col].tolist()) for col in ("searches", "tool_calls", "seconds")
                if col in f}
        return pd.DataFrame(rows).T

    def economics_table(self) -> Any:
        """Cost distributions (p50, p95, max) from :func:`ragkit.evaluation.costs.trace_economics`."""
        import pandas as pd

        data = {k: v for k, v in (self.economics or {}).items() if k != "dominant_tail"}
        return pd.DataFrame(data).T if data else pd.DataFrame()

    def faithfulness(self) -> dict[str, float]:
        """Share of answer claims supported by their cited spans: per case mean and over all claims."""
        f = self.frame
        claims = int(f["claims"].sum()) if "claims" in f else 0
        supported = int(f["claims_supported"].sum()) if claims else 0
        per_case = f["faithfulness"].dropna() if "faithfulness" in f else f.iloc[0:0]
        return {"claims": claims, "supported": supported, "claim_rate": _rate(supported, claims),
                "case_mean": float(per_case.mean()) if len(per_case) else math.nan,
                "cases_with_claims": int(len(per_case))}

    def failures(self) -> Any:
        """Every failed case and the boundary that lost it (honesty for unanswerable cases)."""
        f = self.frame
        cols = [c for c in ("case", "tags", "answerable", "lost_at", "value", "expected", "status",
                            "chose_rejected", "items", "items_entered", "items_survived", "items_delivered",
                            "error") if c in f]
        return f[f["lost_at"].astype(str) != ""][cols].reset_index(drop=True)

    def leaks(self) -> Any:
        """Cases in whose traces a candidate of another tenant appeared (must be empty)."""
        f = self.frame
        return f[f["leak"].astype(bool)][["case", "tenant_leaks"]] if "leak" in f else f.iloc[0:0]

    # -- headline and serialisation -------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """The headline figures, flat (what gates read and what the CLI prints first)."""
        b = self.boundaries(by_tag=False).loc["all"]
        h = self.honesty().loc["all"]
        out: dict[str, Any] = {"placement": self.placement, "cases": int(len(self.frame)),
                               "answerable": int(h["answerable"]), "unanswerable": int(h["unanswerable"])}
        for name, row in b.iterrows():
            out[f"{name}_passed"] = int(row["passed"])
            out[f"{name}_rate"] = float(row["rate"])
        out.update({"accuracy": float(h["accuracy"]), "honesty_rate": float(h["honesty_rate"]),
                    "false_assertion_rate": float(h["false_assertion_rate"]),
                    "over_abstention_rate": float(h["over_abstention_rate"]),
                    "tenant_leaks": int(self.frame["leak"].astype(bool).sum()) if "leak" in self.frame else 0,
                    "errors": int(self.frame["error"].notna().sum()) if "error" in self.frame else 0})
        out.update({f"retrieval_{k}": v for k, v in self.retrieval().items() if k != "cases"})
        out.update({f"faithfulness_{k}": v for k, v in self.faithfulness().items()})
        for col, dist in self.costs().iterrows():
            for stat in ("p50", "p95", "max"):
                out[f"{col}_{stat}"] = float(dist[stat])
        return out

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready data (NaN becomes null)."""
        def records(frame: Any) -> list[dict[str, Any]]:
            return json.loads(frame.reset_index().to_json(orient="records"))

        out: dict[str, Any] = {
            "summary": self.summary(), "boundaries": records(self.boundaries()),
            "honesty": records(self.honesty()), "retrieval": self.retrieval(),
            "faithfulness": self.faithfulness(), "costs": records(self.costs()),
            "failures": records(self.failures()), "leaks": records(self.leaks()),
            "cases": records(self.case_frame()),
        }
        if self.economics is not None:
            out["economics"] = self.economics
        if self.counterfactuals is not None:
            out["counterfactuals"] = self.counterfactuals.to_dict()
        if self.gates is not None:
            out["gates"] = self.gates.to_dict()
        return _clean(json.loads(json.dumps(out, default=_json_default)))

    def to_json(self, **kwargs: Any) -> str:
        """The whole report as one JSON object."""
        return json.dumps(self.to_dict(), **kwargs)

    def case_frame(self) -> Any:
        """The per-case table without the nested run column (what the CSV holds)."""
        return self.frame.drop(columns=[c for c in ("first_run",) if c in self.frame])

    def to_csv(self, path: Any) -> Any:
        """Write one row per case to ``path`` (opens in a spreadsheet)."""
        self.case_frame().to_csv(path, index=False)
        return path

    def __str__(self) -> str:
        s = self.summary()
        lines = [f"ragkit evaluation: {s['cases']} cases ({s['answerable']} answerable, "
                 f"{s['unanswerable']} unanswerable), placement {self.placement}", "",
                 "Boundary table (answerable cases):"]
        for _key, row in self.boundaries(by_tag=False).iterrows():
            lines.append(f"  {row['label']:<44} {row['passed']:>4}/{row['reached']:<4} {row['rate']:7.1%}")
        lines += ["", f"Answer accuracy {s['accuracy']:.1%};  unanswerable: honesty {s['honesty_rate']:.1%}, "
                  f"false assertions {s['false_assertion_rate']:.1%};  over-abstention "
                  f"{s['over_abstention_rate']:.1%}",
                  "Retrieval (first call): candidate set recall "
                  f"{s.get('retrieval_candidate_set_recall', 0):.3f}, "
                  f"precision@delivered {s.get('retrieval_precision_at_delivered', 0):.3f}, "
                  f"MRR@10 {s.get('retrieval_mrr@10', 0):.3f}, nDCG@10 {s.get('retrieval_ndcg@10', 0):.3f}",
                  f"Faithfulness: {s['faithfulness_supported']}/{s['faithfulness_claims']} claims supported",
                  f"Calls per task p50/p95/max {s.get('searches_p50', 0):.0f}/{s.get('searches_p95', 0):.1f}/"
                  f"{s.get('searches_max', 0):.0f};  seconds per task p50/p95/max "
                  f"{s.get('seconds_p50', 0):.2f}/{s.get('seconds_p95', 0):.2f}/"
                  f"{s.get('seconds_max', 0):.2f}",
                  f"Tenant leaks: {s['tenant_leaks']};  runner errors: {s['errors']}"]
        lost = self.failures()["lost_at"].value_counts().to_dict()
        lines.append("Failed cases by boundary: "
                     + (", ".join(f"{k} {v}" for k, v in lost.items()) or "none"))
        econ = self.economics_table()
        if len(econ):
            lines += ["", "Economics from traces (p50 / p95 / max):"]
            for name, row in econ.iterrows():
                lines.append(f"  {name:<28} {row['p50']:>10.1f} {row['p95']:>10.1f} {row['max']:>10.1f}")
            tail = (self.economics or {}).get("dominant_tail", {})
            if tail.get("term"):
                lines.append(f"  dominant tail term: {tail['term']} (p95/p50 = {tail['p95_over_p50']:.2f})")
        if self.counterfactuals is not None:
            lines += ["", str(self.counterfactuals)]
        if self.gates is not None:
            lines += ["", str(self.gates)]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        parts = [f"<h3>ragkit evaluation ({self.placement})</h3>",
                 "<h4>Boundary table</h4>", self.boundaries()._repr_html_(),
                 "<h4>Honesty (unanswerable cases, apart from accuracy)</h4>", self.honesty()._repr_html_(),
                 "<h4>Retrieval (first call)</h4>", _dict_html(self.retrieval()),
                 "<h4>Faithfulness</h4>", _dict_html(self.faithfulness()),
                 "<h4>Cost per task</h4>", self.costs()._repr_html_(),
                 "<h4>Economics from traces</h4>", self.economics_table()._repr_html_(),
                 "<h4>Failures</h4>", self.failures()._repr_html_()]
        if self.counterfactuals is not None:
            parts += ["<h4>Counterfactuals</h4>", self.counterfactuals.table()._repr_html_()]
        if self.gates is not None:
            parts += ["<h4>Gates</h4>", self.gates.table()._repr_html_()]
        return "\n".join(parts)


def _dict_html(data: Mapping[str, Any]) -> str:
    cells = "".join(f"<tr><td>{k}</td><td>{v:.4g}</td></tr>" if isinstance(v, float) else
                    f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in data.items())
    return f"<table>{cells}</table>"


def _clean(value: Any) -> Any:
    """NaN and infinities become None (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)
