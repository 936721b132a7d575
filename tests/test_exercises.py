"""The exercise checkers, each tested three ways, and the generated notebooks kept in sync.

For every exercise: the untouched starter reports "not attempted", the reference solution
passes, and at least two plausible wrong answers fail with a message that says where to look.
The starter and solution code run here are the exercise's own work cells (rendered from the
one source), executed on small hand-built fixtures; the full runs on the course index are the
solution notebooks under nbval.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ragkit.evaluation import parse_case
from ragkit.exercises import EXERCISES, Outcome, ____, load
from ragkit.exercises.cells import render, to_notebook
from ragkit.exercises.core import contains_blank
from ragkit.retrieval import Ranking
from ragkit.search import CandidateTrace

REPO = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------- helpers


def run_work(module: Any, version: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Execute the exercise's work cells (student or solution version) in ``namespace``."""
    namespace.setdefault("____", ____)
    for cell in module.CELLS:
        if cell.role == "work":
            exec(
                compile(render(cell.source, version), f"<ex{module.NUMBER:02d} {version}>", "exec"), namespace
            )
    return namespace


def outcome(module: Any, namespace: dict[str, Any]) -> Outcome:
    return module.check_values(**{name: namespace.get(name) for name in module.VARIABLES})


def case(i: int, doc: str, *, tags: tuple[str, ...] = (), extra_docs: tuple[str, ...] = ()) -> Any:
    evidence = [{"doc_id": doc, "anchor": "top", "quote": "the answer", "role": "decisive"}]
    evidence += [{"doc_id": d, "anchor": "top", "quote": "a hop", "role": "hop"} for d in extra_docs]
    return parse_case(
        {
            "id": f"c{i:02d}",
            "task": f"question number {i} about things",
            "as_of": "2026-01-19",
            "caller": {"tenant": "acme", "groups": ["ops"]},
            "answerable": True,
            "evidence": evidence,
            "reject": [],
            "expected": {"kind": "text", "value": "answer"},
            "tags": list(tags),
            "decoys": [],
        }
    )


# ----------------------------------------------------------------------------- core


def test_blank_absorbs_and_is_found_anywhere() -> None:
    assert (____ + 1) is ____ and (3 * ____) is ____ and not ____ and list(____) == []
    assert contains_blank({"a": [1, (2, ____)]}) and not contains_blank({"a": [1, 2]})


def test_hints_are_graded_and_solution_shows_code() -> None:
    module = load(1)
    module.EXERCISE._hints_shown = 0
    first, second, third = module.hint(), module.hint(), module.hint()
    assert first.startswith("Hint 1 of 2") and second.startswith("Hint 2 of 2") and third == second
    assert "fused_rank is not None" in second and "fused_rank is not None" not in first
    shown = module.solution()
    assert "def failed" in shown and "```python" in shown._repr_markdown_()


def test_learner_code_that_raises_is_a_failure_not_a_crash() -> None:
    ex = load(1)
    ns = run_work(ex, "solution", ex01_fixture())
    ns["in_candidates"] = lambda case, result: result.trace.candidate_list  # no such attribute
    result = outcome(ex, ns)
    assert result.status == "failed" and "AttributeError" in result.message


def test_check_reads_the_callers_globals() -> None:
    module = load(5)
    assert module.check().status == "not_attempted"  # none of the names exists in this module


def test_generated_notebooks_are_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("exercises_build", REPO / "exercises" / "build.py")
    assert spec and spec.loader
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    files = build.notebook_files()
    assert len(files) == 2 * len(EXERCISES)
    for path, text in files.items():
        assert path.is_file(), f"{path} is missing: run `.venv/bin/python exercises/build.py`"
        assert path.read_text(encoding="utf-8") == text, (
            f"{path} is stale: run `.venv/bin/python exercises/build.py`"
        )
        nb = json.loads(text)
        assert all(not c.get("outputs") for c in nb["cells"]), f"{path} has outputs"


def test_student_notebooks_hide_the_solution() -> None:
    for number in EXERCISES:
        module = load(number)
        student = to_notebook(module.CELLS, "student", number=number)
        solution = to_notebook(module.CELLS, "solution", number=number)
        student_code = "\n".join("".join(c["source"]) for c in student["cells"] if c["cell_type"] == "code")
        solution_code = "\n".join("".join(c["source"]) for c in solution["cells"] if c["cell_type"] == "code")
        assert "____" in student_code and "TODO" in student_code
        assert "____ =" not in solution_code and "= ____" not in solution_code and "TODO" not in solution_code
        assert "assert outcome.passed" in solution_code and "ex.hint()" in student_code


# ----------------------------------------------------------------------------- exercise 1


def ex01_fixture() -> dict[str, Any]:
    """24 cases: i % 3 == 0 delivered, 1 fused but ranked out, 2 only in BM25's list (not fused)."""
    cases, results = [], {}
    for i in range(24):
        c = case(i, f"d{i}")
        cases.append(c)
        others = [
            CandidateTrace(
                row=100 + j,
                chunk_id=f"x{i}-{j}#top",
                doc_id=f"x{i}-{j}",
                fused_rank=j + 1,
                final_rank=j + 1,
                delivered=j < 4,
            )
            for j in range(6)
        ]
        if i % 3 == 0:
            hits = [f"d{i}", *[f"x{i}-{j}" for j in range(3)]]
            others.append(
                CandidateTrace(
                    row=i, chunk_id=f"d{i}#top", doc_id=f"d{i}", fused_rank=7, final_rank=1, delivered=True
                )
            )
        else:
            hits = [f"x{i}-{j}" for j in range(4)]
            fused = 8 if i % 3 == 1 else None
            others.append(
                CandidateTrace(
                    row=i,
                    chunk_id=f"d{i}#top",
                    doc_id=f"d{i}",
                    lexical_rank=55,
                    fused_rank=fused,
                    final_rank=9 if fused else None,
                )
            )
        results[c.id] = SimpleNamespace(
            hits=[SimpleNamespace(doc_id=d) for d in hits], trace=SimpleNamespace(candidates=others)
        )
    return {"cases": cases, "results": results}


def test_ex01_three_ways() -> None:
    ex = load(1)
    assert outcome(ex, run_work(ex, "student", ex01_fixture())).status == "not_attempted"
    good = outcome(ex, run_work(ex, "solution", ex01_fixture()))
    assert good.passed, good.message
    assert "16 of 24 cases failed: 8 retrieval" in good.message


def test_ex01_wrong_any_candidate_counts() -> None:
    ex = load(1)
    ns = run_work(ex, "solution", ex01_fixture())
    ns["in_candidates"] = lambda case, result: any(
        c.doc_id == case.decisive.doc_id for c in result.trace.candidates
    )
    ns["split"] = {"retrieval": [], "reranking": []}
    for c in ns["cases"]:
        if ns["failed"](c, ns["results"][c.id]):
            ns["split"]["reranking" if ns["in_candidates"](c, ns["results"][c.id]) else "retrieval"].append(
                c.id
            )
    result = outcome(ex, ns)
    assert (
        result.status == "failed"
        and "never made the fused" in result.message
        and "fused_rank" in result.message
    )


def test_ex01_wrong_swapped_labels_and_non_failures() -> None:
    ex = load(1)
    ns = run_work(ex, "solution", ex01_fixture())
    ns["split"] = {"retrieval": ns["split"]["reranking"], "reranking": ns["split"]["retrieval"]}
    swapped = outcome(ex, ns)
    assert swapped.status == "failed" and "swapped" in swapped.message
    ns = run_work(ex, "solution", ex01_fixture())
    ns["split"]["retrieval"] = ns["split"]["retrieval"] + ["c00"]  # c00's document was delivered
    extra = outcome(ex, ns)
    assert extra.status == "failed" and "did not fail" in extra.message
    assert "c00" in extra.message  # names the learner's own wrong entry, never the expected split


def test_ex01_wrong_delivered_means_candidate() -> None:
    ex = load(1)
    ns = ex01_fixture()
    src = render(ex.CELLS[3].source, "solution").replace("c.fused_rank is not None", "c.delivered")
    exec(src, ns)
    result = outcome(ex, ns)
    assert result.status == "failed" and "filed under 'retrieval'" in result.message


# ----------------------------------------------------------------------------- exercise 2


class TinyIndex:
    """Six documents; BM25 matches exact tokens, 'dense' ranks by a fixed list that misses identifiers."""

    def __init__(self) -> None:
        self.rows = [SimpleNamespace(doc_id=f"doc{i}") for i in range(6)]

    def mask(self, scope: Any, filters: Any) -> Any:
        return None

    def search_lexical(self, query: str, k: int, mask: Any) -> Ranking:
        token = query.split()[-1]
        ids = [i for i in range(6) if f"doc{i}" == token] + [i for i in range(6) if f"doc{i}" != token]
        return Ranking(ids[:k], [float(6 - n) for n in range(len(ids[:k]))])

    def search_dense(self, query: str, k: int, mask: Any) -> Ranking:
        ids = [5, 4] if "E-" in query else [0, 1]  # identifier questions: dense finds only 4 and 5
        return Ranking(ids[:k], [0.9, 0.8][:k])


def ex02_fixture() -> dict[str, Any]:
    index = TinyIndex()
    cases = [case(i, f"doc{i}", tags=("identifier",)) for i in range(4)] + [
        case(10, "doc2", extra_docs=("doc3",)),
        case(11, "doc3", extra_docs=("doc2",)),
    ]
    cases = [
        c.__class__(
            **{
                **c.__dict__,
                "task": (
                    f"what is E-{c.id} doc{c.decisive.doc_id[-1]}"
                    if "identifier" in c.tags
                    else f"why did it fail doc{c.decisive.doc_id[-1]}"
                ),
            }
        )
        for c in cases
    ]
    from ragkit import Scope
    from ragkit.core import snapshot_filters
    from ragkit.retrieval import rrf

    return {
        "index": index,
        "cases": cases,
        "WIDTH": 3,
        "rrf": rrf,
        "Scope": Scope,
        "snapshot_filters": snapshot_filters,
        "doc_ids": lambda r: [index.rows[i].doc_id for i in r.ids],
    }


def test_ex02_three_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = load(2)
    monkeypatch.setattr(ex, "WIDTH", 3)
    assert outcome(ex, run_work(ex, "student", ex02_fixture())).status == "not_attempted"
    good = outcome(ex, run_work(ex, "solution", ex02_fixture()))
    assert good.passed, good.message
    assert "identifier questions: dense 0% -> RRF 100%" in good.message


def test_ex02_wrong_dense_twice_and_unequal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = load(2)
    monkeypatch.setattr(ex, "WIDTH", 3)
    ns = ex02_fixture()
    src = "\n".join(render(c.source, "solution") for c in ex.CELLS if c.role == "work")
    exec(src.replace("rrf([bm25, dense])", "rrf([dense])"), ns)
    result = outcome(ex, ns)
    assert result.status == "failed" and "identical to the dense list" in result.message
    ns = ex02_fixture()
    exec(src.replace("rrf([bm25, dense]).top(WIDTH)", "rrf([bm25, dense])"), ns)
    result = outcome(ex, ns)
    assert result.status == "failed" and "same width" in result.message


def test_ex02_wrong_recall_counts_one_document(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = load(2)
    monkeypatch.setattr(ex, "WIDTH", 3)
    ns = ex02_fixture()
    src = "\n".join(render(c.source, "solution") for c in ex.CELLS if c.role == "work")
    exec(
        src.replace("set(case.required_doc_ids) <= set(candidates)", "case.decisive.doc_id in candidates"), ns
    )
    result = outcome(ex, ns)
    assert result.status == "failed" and "does not match your own runs" in result.message
    assert "*every* document" in result.message


# ----------------------------------------------------------------------------- exercise 5


def ex05_fixture() -> dict[str, Any]:
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    hours = [1 + (i % 12) for i in range(40)] + [30, 100]  # one document over the 72 h ceiling, one over 24 h
    docs = [
        SimpleNamespace(
            doc_id=f"d{i}", envelope=SimpleNamespace(published_at=t0, ingested_at=t0 + dt.timedelta(hours=h))
        )
        for i, h in enumerate(hours)
    ]
    import pandas as pd

    ex = load(5)
    return {"docs": docs, "pd": pd, "P95_TARGET_H": ex.P95_TARGET_H, "CEILING_H": ex.CEILING_H}


def test_ex05_three_ways() -> None:
    ex = load(5)
    assert outcome(ex, run_work(ex, "student", ex05_fixture())).status == "not_attempted"
    good = outcome(ex, run_work(ex, "solution", ex05_fixture()))
    assert good.passed, good.message
    assert "1 document(s) over the 72 h ceiling, so the index misses" in good.message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (".total_seconds() / 3600", ".total_seconds()"),  # seconds, not hours
        (
            "(d.envelope.ingested_at - d.envelope.published_at)",
            "(d.envelope.published_at - d.envelope.ingested_at)",
        ),
        ("lags.quantile(0.95)", "lags.mean()"),  # a mean is not a p95
        ('summary["p95"] <= P95_TARGET_H and summary["max"] <= CEILING_H', 'summary["p95"] <= P95_TARGET_H'),
        ("lags[lags > CEILING_H]", "lags[lags > P95_TARGET_H]"),
    ],
)
def test_ex05_wrong_answers(change: str, expected: str) -> None:
    ex = load(5)
    src = "\n".join(render(c.source, "solution") for c in ex.CELLS if c.role == "work")
    assert change in src
    ns = ex05_fixture()
    exec(src.replace(change, expected), ns)
    result = outcome(ex, ns)
    assert result.status == "failed", result
    words = {
        ".total_seconds()": "unit",
        "(d.envelope.published_at": "negative",
        "lags.mean()": "mean",
        'summary["p95"] <= P95_TARGET_H': "verdict",
        "lags[lags > P95_TARGET_H]": "ceiling",
    }
    assert next(v for k, v in words.items() if expected.startswith(k)) in result.message


# ----------------------------------------------------------------------------- exercise 3


def ex03_fixture() -> dict[str, Any]:
    """12 cases, decisive document at rank (i % 4) + 1 of 8 hits of 100 tokens: width 4 wins."""
    import pandas as pd

    ex = load(3)
    cases, results = [], {}
    for i in range(12):
        c = case(i, f"d{i}")
        cases.append(c)
        docs = [f"x{i}-{j}" for j in range(8)]
        docs[i % 4] = f"d{i}"
        results[c.id] = SimpleNamespace(hits=[SimpleNamespace(doc_id=d, tokens=100) for d in docs])
    return {
        "cases": cases,
        "results": results,
        "pd": pd,
        "ex": ex,
        "WIDTHS": ex.WIDTHS,
        "RECOVERY_CALLS": ex.RECOVERY_CALLS,
        "CARRIED_TURNS": ex.CARRIED_TURNS,
    }


def ex03_solution_source() -> str:
    return "\n".join(render(c.source, "solution") for c in load(3).CELLS if c.role == "work")


def test_ex03_three_ways() -> None:
    ex = load(3)
    assert outcome(ex, run_work(ex, "student", ex03_fixture())).status == "not_attempted"
    good = outcome(ex, run_work(ex, "solution", ex03_fixture()))
    assert good.passed, good.message
    # width 4: recall 1, 400 tokens, 1 call, 2,400 token-turns; width 1: 2.5 calls, 1,500 token-turns
    assert (
        good.message.startswith("width 4: evidence-set recall 100%") and "2,400 token-turns" in good.message
    )


@pytest.mark.parametrize(
    ("change", "replacement", "words"),
    [
        ("1 + (1 - set_recall) * RECOVERY_CALLS", "1", "recovery calls"),
        (
            "sum(sum(h.tokens for h in cut[c.id]) for c in cases)",
            "sum(cut[c.id][-1].tokens for c in cases)",
            "*all* first w hits",
        ),
        (
            "good_enough.token_turns_per_task.idxmin()",
            "widths.token_turns_per_task.idxmin()",
            "loses more than",
        ),
        ("good_enough.token_turns_per_task.idxmin()", "good_enough.index.max()", "not the cheapest"),
    ],
)
def test_ex03_wrong_answers(change: str, replacement: str, words: str) -> None:
    ex = load(3)
    src = ex03_solution_source()
    assert change in src
    ns = ex03_fixture()
    exec(src.replace(change, replacement), ns)
    result = outcome(ex, ns)
    assert result.status == "failed" and words in result.message, result


# ----------------------------------------------------------------------------- exercise 6


def ex06_fixture() -> dict[str, Any]:
    """20 tasks: 14 of one call, 3 of two, 3 of three; first calls deliver 1,500 tokens, later ones 2,500."""
    import pandas as pd

    cases, traces = [], {}
    for i in range(20):
        c = case(i, f"d{i}")
        cases.append(c)
        n = 1 if i < 14 else 2 if i < 17 else 3
        traces[c.id] = [
            SimpleNamespace(tokens={"reranker_units": 6000, "delivered": 1500 if j == 0 else 2500})
            for j in range(n)
        ]
    return {"cases": cases, "traces": traces, "pd": pd}


def test_ex06_three_ways() -> None:
    ex = load(6)
    assert outcome(ex, run_work(ex, "student", ex06_fixture())).status == "not_attempted"
    good = outcome(ex, run_work(ex, "solution", ex06_fixture()))
    assert good.passed, good.message
    assert good.message.startswith("'delivered_tokens' drives the tail: p50 1,500 -> p95 6,500")


@pytest.mark.parametrize(
    ("change", "replacement", "words"),
    [
        ("tail_ratio.idxmax()", 'percentiles.loc["p95"].idxmax()', "different units"),
        (
            "tasks.quantile([0.50, 0.95]).set_axis",
            "pd.concat([tasks.mean(), tasks.quantile(0.95)], axis=1).T.set_axis",
            "not an average",
        ),
        ("persistence_turns = len(calls) + 1", "persistence_turns = len(calls)", "answer turn"),
        (
            'delivered_tokens = sum(t.tokens["delivered"] for t in calls)',
            'delivered_tokens = calls[0].tokens["delivered"]',
            "*every* call",
        ),
    ],
)
def test_ex06_wrong_answers(change: str, replacement: str, words: str) -> None:
    ex = load(6)
    src = "\n".join(render(c.source, "solution") for c in ex.CELLS if c.role == "work")
    assert change in src
    ns = ex06_fixture()
    exec(src.replace(change, replacement), ns)
    result = outcome(ex, ns)
    assert result.status == "failed" and words in result.message, result


# ----------------------------------------------------------------------------- exercise 7


@pytest.fixture(scope="module")
def ex07_setup() -> dict[str, Any]:
    """The exercise's own setup cell: it loads the course documents (a few seconds, no model)."""
    ex = load(7)
    ns: dict[str, Any] = {}
    for cell in ex.CELLS:
        if cell.role == "setup":
            exec(render(cell.source, "solution"), ns)
    return ns


def ex07_source() -> str:
    return "\n".join(render(c.source, "solution") for c in load(7).CELLS if c.role == "work")


def test_ex07_three_ways(ex07_setup: dict[str, Any]) -> None:
    ex = load(7)
    assert outcome(ex, run_work(ex, "student", dict(ex07_setup))).status == "not_attempted"
    good = outcome(ex, run_work(ex, "solution", dict(ex07_setup)))
    assert good.passed, good.message


@pytest.mark.parametrize(
    ("change", "replacement", "words"),
    [
        # trusting the current rule over a still-open exception
        ('"expected": "16:00"},', '"expected": "15:00"},', "does not resolve to the value you expected"),
        # no conditional exception anywhere: keep only the policy-chain case, asked on three dates
        (
            "conflict_cases = [",
            'conflict_cases = [{**c0, "question": c0["question"].replace("10 August", d)} '
            'for d in ("10 August", "11 August", "12 August")] or [',
            "no conditional exception",
        ),
        # a guard that never looks at the decision itself
        ("    if record.decision is None or not record.selected:\n        return False\n", "", "no decision"),
        (
            "if any(e.doc_id not in selected | rejected for e in evidence):",
            "if False:",
            "neither selected nor rejected",
        ),
        (
            "return all(r.reason in REJECT_REASONS and r.because.strip() for r in record.rejected)",
            "return True",
            "without a reason",
        ),
    ],
)
def test_ex07_wrong_answers(
    ex07_setup: dict[str, Any], change: str, replacement: str, words: str | None
) -> None:
    ex = load(7)
    src = ex07_source()
    assert change in src
    if not replacement:  # the decision check goes, and so does the line that reads the decision
        src = src.replace("if record.decision.doc_id not in selected:", "if False:")
    ns = dict(ex07_setup)
    if "c0" in replacement:
        ns["c0"] = {
            "question": "What is the chargeback representment window on 10 August 2026?",
            "as_of": "2026-08-10",
            "caller": ns["Scope"]("acme", ["ops"]),
            "expected": "18 days",
            "evidence": [
                ns["evidence"]("pol-chargeback-window-v2", "representment-window"),
                ns["evidence"]("pol-chargeback-window-v3", "representment-window"),
            ],
        }
    exec(src.replace(change, replacement), ns)
    result = outcome(ex, ns)
    assert result.status == "failed", result
    if words:
        assert words in result.message, result


def test_ex07_single_source_case_is_no_conflict(ex07_setup: dict[str, Any]) -> None:
    ex = load(7)
    ns = run_work(ex, "solution", dict(ex07_setup))
    ns["conflict_cases"][0] = {**ns["conflict_cases"][0], "evidence": ns["conflict_cases"][0]["evidence"][1:]}
    result = outcome(ex, ns)
    assert result.status == "failed" and "at least two sources" in result.message


# ----------------------------------------------------------------------------- exercise 4


@pytest.fixture(scope="module")
def corpus_docs() -> Any:
    from ragkit.course import course_documents

    return course_documents()[0]


def fake_agent_results(answered: set[str]) -> Any:
    """Stand-in for the reference agent (slow; it runs in the solution notebook): abstains unless told."""

    def ask(question: dict[str, Any]) -> Any:
        if question["task"] in answered:
            return SimpleNamespace(
                task=question["task"],
                abstained=False,
                value="2026-01-26",
                answer="2026-01-26 [ro-2458#result]",
            )
        return SimpleNamespace(
            task=question["task"], abstained=True, value=None, answer="I could not find it. Searched: ..."
        )

    return ask


def ex04_namespace(corpus_docs: Any) -> dict[str, Any]:
    hooli = "On which date was Hooli's cutover to settlement platform v3 completed?"
    return {"docs": corpus_docs, "ex": load(4), "ask": fake_agent_results({hooli})}


def ex04_source() -> str:
    return "\n".join(render(c.source, "solution") for c in load(4).CELLS if c.role == "work")


def test_ex04_three_ways(corpus_docs: Any) -> None:
    ex = load(4)
    assert outcome(ex, run_work(ex, "student", ex04_namespace(corpus_docs))).status == "not_attempted"
    good = outcome(ex, run_work(ex, "solution", ex04_namespace(corpus_docs)))
    assert good.passed, good.message
    assert (
        "abstained on 4/5 (honesty 80.0%)" in good.message and "(false-assertion rate 20.0%)" in good.message
    )


@pytest.mark.parametrize(
    ("change", "replacement", "words"),
    [
        # asked after the rollout record was published: the corpus answers it
        (
            '"tenant": "hooli", "groups": ["ops"], "as_of": "2026-01-20"',
            '"tenant": "hooli", "groups": ["ops"], "as_of": "2026-02-01"',
            "is answerable",
        ),
        # the caller may read the reserve terms when in the risk group
        (
            '"tenant": "globex", "groups": ["ops"]',
            '"tenant": "globex", "groups": ["ops", "risk"]',
            "is answerable",
        ),
        # nothing near it: a question about nothing tests nothing
        (
            "What is the settlement cutoff for Acme's CHF batches?",
            "How tall is the zorblax quantum lighthouse?",
            "near-evidence",
        ),
        (
            "honesty_rate = sum(r.abstained for r in results) / len(results)",
            "honesty_rate = sum(not r.answer for r in results) / len(results)",
            "*abstained*",
        ),
    ],
)
def test_ex04_wrong_answers(corpus_docs: Any, change: str, replacement: str, words: str) -> None:
    ex = load(4)
    src = ex04_source()
    assert change in src
    ns = ex04_namespace(corpus_docs)
    exec(src.replace(change, replacement), ns)
    result = outcome(ex, ns)
    assert result.status == "failed" and words in result.message, result


# ----------------------------------------------------------------------------- exercise 8


def ex08_namespace() -> dict[str, Any]:
    """Six cases; a stand-in agent (the real one runs in the solution notebook) honours the view's hidden
    documents: it stays confident on c01 (a support source states the same value) and on c04 (it asserts
    another value), and abstains elsewhere."""
    cases = [case(i, f"d{i}", extra_docs=(f"s{i}",)) for i in range(6)]

    def run_agent(view: Any, c: Any) -> Any:
        hidden = set(getattr(view, "hidden", ()))
        delivered = [SimpleNamespace(doc_id=d) for d in c.required_doc_ids if d not in hidden]
        if c.id in ("c01", "c04"):
            record = SimpleNamespace(status="decided")
            value = "answer" if c.id == "c01" else "something else"
            return SimpleNamespace(
                abstained=False, record=record, value=value, answer=value, delivered=delivered
            )
        status = "insufficient" if c.id == "c02" else "decided"
        abstained = c.id != "c02"  # c02: the record is insufficient but the answer text hedges
        return SimpleNamespace(
            abstained=abstained,
            record=SimpleNamespace(status=status),
            value=None,
            answer="hedged" if not abstained else "",
            delivered=delivered,
        )

    return {
        "cases": cases,
        "index": SimpleNamespace(hidden=()),
        "run_agent": run_agent,
        "IndexView": lambda index, hidden: SimpleNamespace(hidden=tuple(hidden)),
    }


def test_ex08_three_ways() -> None:
    ex = load(8)
    assert outcome(ex, run_work(ex, "student", ex08_namespace())).status == "not_attempted"
    good = outcome(ex, run_work(ex, "solution", ex08_namespace()))
    assert good.passed, good.message
    assert (
        "uncertain on 4 of 6; it stayed confident on 2 (c01, c04), 1 of them with the original value"
        in good.message
    )


@pytest.mark.parametrize(
    ("change", "replacement", "words"),
    [
        (
            "removed[case.id] = case.decisive.doc_id",
            'removed[case.id] = "runbook-v2"',
            "not in its minimum evidence",
        ),
        ("view = IndexView(index, hidden=[removed[case.id]])", "view = index", "still delivered"),
        (
            'return bool(result.abstained or result.record is None or result.record.status != "decided")',
            "return bool(result.abstained)",
            "'insufficient'",
        ),
        (
            'return bool(result.abstained or result.record is None or result.record.status != "decided")',
            "return not result.answer",
            "an abstention",
        ),
    ],
)
def test_ex08_wrong_answers(change: str, replacement: str, words: str) -> None:
    ex = load(8)
    src = "\n".join(render(c.source, "solution") for c in ex.CELLS if c.role == "work")
    assert change in src
    ns = ex08_namespace()
    exec(src.replace(change, replacement), ns)
    result = outcome(ex, ns)
    assert result.status == "failed" and words in result.message, result


# ----------------------------------------------------------------------------- other correct solutions pass


def test_ex05_other_correct_solution_passes() -> None:
    """Lags as a dict, nearest-rank percentiles from numpy, the verdict written another way."""
    import numpy as np

    ex = load(5)
    ns = ex05_fixture()
    docs = ns["docs"]
    lags = {
        d.doc_id: (d.envelope.ingested_at - d.envelope.published_at) / dt.timedelta(hours=1) for d in docs
    }
    values = np.array(list(lags.values()))
    summary = {f"p{q}": float(np.percentile(values, q, method="nearest")) for q in (50, 95, 99)}
    summary["max"] = float(values.max())
    late = dict(sorted(((k, v) for k, v in lags.items() if v > ex.CEILING_H), key=lambda kv: -kv[1]))
    meets = not (summary["p95"] > ex.P95_TARGET_H or late)
    result = ex.check_values(docs=docs, lags=lags, summary=summary, late=late, meets_objective=meets)
    assert result.passed, result.message


def test_ex06_other_correct_solution_passes() -> None:
    """Percentiles by numpy's inverted-CDF definition; the tail term read off a loop."""
    import numpy as np
    import pandas as pd

    ex = load(6)
    ns = run_work(ex, "solution", ex06_fixture())
    tasks = ns["tasks"]
    percentiles = pd.DataFrame(
        {t: [np.percentile(tasks[t], q, method="inverted_cdf") for q in (50, 95)] for t in tasks.columns},
        index=["p50", "p95"],
    )
    ratios = {t: percentiles.loc["p95", t] / percentiles.loc["p50", t] for t in tasks.columns}
    dominant = max(ratios, key=ratios.get)
    result = ex.check_values(
        cases=ns["cases"],
        traces=ns["traces"],
        task_row=ns["task_row"],
        tasks=tasks,
        percentiles=percentiles,
        dominant=dominant,
    )
    assert result.passed, result.message


def test_ex07_other_conflict_cases_pass(ex07_setup: dict[str, Any]) -> None:
    """Different documents, tenants and dates than the reference: judged by what the records must show."""
    ex = load(7)
    ns = run_work(ex, "solution", dict(ex07_setup))
    evidence, scope = ns["evidence"], ns["Scope"]
    cases = [
        {
            "question": "What is the duplicate-detection window on 1 December 2025?",
            "as_of": "2025-12-01",
            "caller": scope("initech", ["ops"]),
            "expected": "72 hours",
            "evidence": [
                evidence("pol-duplicate-detection-v1", "detection-window"),
                evidence("pol-duplicate-detection-v2", "detection-window"),
            ],
        },
        {
            "question": "Which EUR settlement cutoff applies to Umbrella on 21 January 2026?",
            "as_of": "2026-01-21",
            "caller": scope("umbrella", ["ops"]),
            "expected": "4 pm",
            "evidence": [evidence("policy-v3", "cutoffs-for-migrated-tenants"), evidence("ops-8469-c1")],
        },
        {
            "question": "Which EUR settlement cutoff applies to Globex on 16 February 2026?",
            "as_of": "2026-02-16",
            "caller": scope("globex", ["ops"]),
            "expected": "15.00",
            "evidence": [
                evidence("ops-7210-c1"),
                evidence("policy-v3", "cutoffs-for-migrated-tenants"),
                evidence("ro-3239"),
            ],
        },
    ]
    records = [
        ns["resolve"](c["question"], c["evidence"], as_of=c["as_of"], caller=c["caller"]) for c in cases
    ]
    result = ex.check_values(conflict_cases=cases, records=records, justified=ns["justified"])
    assert result.passed, result.message
