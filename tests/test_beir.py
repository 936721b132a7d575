"""Tests for ragkit.evaluation.beir: a good folder, each broken kind, and split handling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragkit import LoadError, ValidationError
from ragkit.evaluation import BeirData, BeirDoc, load_beir

CORPUS = [
    {"_id": "d1", "title": "Settlement runbook", "text": "Run reconcile_settlement nightly."},
    {"_id": "d2", "text": "Error E-4471 means the ledger is locked."},  # no title
    {"_id": 3, "title": "", "text": "Numeric id."},  # int _id becomes "3"
]
QUERIES = [
    {"_id": "q1", "text": "how to reconcile settlements"},
    {"_id": "q2", "text": "what is E-4471"},
    {"_id": "q3", "text": "judged only in dev"},
]
TEST_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n\nq2\td2\t1\nq2\td9\t1\n"
DEV_QRELS = "query-id\tcorpus-id\tscore\nq3\t3\t1\n"


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _write(root: Path, *, corpus: str | None = None, queries: str | None = None,
           qrels: dict[str, str] | None = None) -> Path:  # fmt: skip
    files = {
        "corpus.jsonl": _jsonl(CORPUS) if corpus is None else corpus,
        "queries.jsonl": _jsonl(QUERIES) if queries is None else queries,
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "qrels").mkdir(exist_ok=True)
    for split, text in (qrels or {"test": TEST_QRELS, "dev": DEV_QRELS}).items():
        (root / "qrels" / f"{split}.tsv").write_text(text, encoding="utf-8")
    return root


# ---------------------------------------------------------------- good


def test_good_folder_loads_exactly(tmp_path):
    data = load_beir(_write(tmp_path))
    assert isinstance(data, BeirData)
    assert data.corpus == {
        "d1": BeirDoc("Settlement runbook", "Run reconcile_settlement nightly."),
        "d2": BeirDoc("", "Error E-4471 means the ledger is locked."),
        "3": BeirDoc("", "Numeric id."),
    }
    # q3 is judged only in dev, so the test split leaves it out.
    assert data.queries == {"q1": "how to reconcile settlements", "q2": "what is E-4471"}
    # Zero grades and ids missing from the corpus (d9) are kept, as BEIR keeps them.
    assert data.qrels == {"q1": {"d1": 2, "d2": 0}, "q2": {"d2": 1, "d9": 1}}


def test_other_split_selects_its_queries(tmp_path):
    data = load_beir(_write(tmp_path), split="dev")
    assert data.queries == {"q3": "judged only in dev"}
    assert data.qrels == {"q3": {"3": 1}}
    assert len(data.corpus) == 3


def test_qrels_without_header_and_blank_lines_load(tmp_path):
    root = _write(tmp_path, qrels={"test": "q1\td1\t1\n\nq1\td1\t1\n"})  # a repeated row is fine
    assert load_beir(root).qrels == {"q1": {"d1": 1}}


# ---------------------------------------------------------------- missing split


def test_unknown_split_lists_available_ones(tmp_path):
    root = _write(tmp_path)
    expected = r"split 'train'.*available splits: \['dev', 'test'\]"
    with pytest.raises(ValidationError, match=expected):
        load_beir(root, split="train")


def test_no_qrels_folder_is_a_missing_file(tmp_path):
    root = _write(tmp_path)
    for path in (root / "qrels").iterdir():
        path.unlink()
    (root / "qrels").rmdir()
    with pytest.raises(LoadError, match=r"qrels: missing.*holds: corpus.jsonl, queries.jsonl"):
        load_beir(root)


# ---------------------------------------------------------------- broken files


def test_missing_corpus_names_file_lists_folder_and_layout(tmp_path):
    root = _write(tmp_path)
    (root / "corpus.jsonl").unlink()
    with pytest.raises(LoadError) as info:
        load_beir(root)
    message = str(info.value)
    assert info.value.path == str(root / "corpus.jsonl")
    assert "holds: qrels/, queries.jsonl" in message
    assert "qrels/<split>.tsv" in message and '"_id"' in message


def test_folder_that_does_not_exist(tmp_path):
    with pytest.raises(LoadError, match="not a folder"):
        load_beir(tmp_path / "nope")


@pytest.mark.parametrize(
    ("corpus", "line", "message"),
    [
        (_jsonl(CORPUS[:1]) + '{"_id": "d2", "text": \n', 2, "bad JSON"),
        (_jsonl(CORPUS[:2]) + '["d3", "text"]\n', 3, "expected a JSON object"),
        (_jsonl(CORPUS[:2]) + '{"title": "t", "text": "no id"}\n', 3, "field '_id' is missing"),
        (_jsonl(CORPUS[:1]) + '{"_id": "d2", "title": "no text"}\n', 2, "field 'text' is missing"),
        (_jsonl(CORPUS[:1]) + '{"_id": "d2", "text": 7}\n', 2, "field 'text' is a int"),
        (_jsonl(CORPUS[:2]) + '\n{"_id": "d1", "text": "again"}\n', 4, "appeared on line 1"),
    ],
)
def test_broken_corpus_line_is_named(tmp_path, corpus, line, message):
    root = _write(tmp_path, corpus=corpus)
    with pytest.raises(LoadError, match=message) as info:
        load_beir(root)
    assert info.value.path == str(root / "corpus.jsonl")
    assert info.value.line == line
    assert f"corpus.jsonl:{line}:" in str(info.value)


def test_broken_queries_line_is_named(tmp_path):
    root = _write(tmp_path, queries=_jsonl(QUERIES[:1]) + '{"text": "no id"}\n')
    with pytest.raises(LoadError, match=r"queries.jsonl:2: field '_id'"):
        load_beir(root)


@pytest.mark.parametrize(
    ("qrels", "line"),
    [
        ("query-id\tcorpus-id\tscore\nq1\td1\tyes\n", 2),  # score not an int
        ("query-id\tcorpus-id\tscore\nq1\td1\t1.5\n", 2),  # not an int either
        ("query-id\tcorpus-id\tscore\nq1\td1\n", 2),  # two fields
        ("q1 0 d1 1\n", 1),  # TREC layout with spaces
        ("qid\tdocid\tscore\nq1\td1\t1\n", 1),  # a header with other names
    ],
)
def test_bad_qrels_row_names_file_and_line(tmp_path, qrels, line):
    root = _write(tmp_path, qrels={"test": qrels})
    with pytest.raises(LoadError, match="bad qrels row") as info:
        load_beir(root)
    assert info.value.path == str(root / "qrels" / "test.tsv")
    assert info.value.line == line


def test_conflicting_grades_for_one_pair(tmp_path):
    root = _write(tmp_path, qrels={"test": "q1\td1\t1\nq1\td1\t2\n"})
    with pytest.raises(LoadError, match=r"test.tsv:2: .*graded 2 here but 1 on line 1"):
        load_beir(root)


def test_judged_query_missing_from_queries(tmp_path):
    root = _write(tmp_path, qrels={"test": "q1\td1\t1\nq7\td1\t1\n"})
    expected = r"test.tsv: 1 judged query id\(s\) are not in queries.jsonl, e.g. \['q7'\]"
    with pytest.raises(LoadError, match=expected):
        load_beir(root)


# ---------------------------------------------------------------- evaluate_beir runs the Funnel


@pytest.mark.slow
def test_evaluate_beir_runs_the_funnel_and_its_ablations(tmp_path):
    from ragkit.evaluation import ABLATIONS, evaluate_beir, format_table

    corpus = [
        {"_id": "ledger", "title": "Ledger locks", "text": "Error E-4471 means the ledger is locked by the "
         "nightly settlement job. Wait for the job to finish, then retry the posting."},
        {"_id": "euro", "title": "EUR cutoff", "text": "EUR payment batches close at 15:00 CET. Payments "
         "submitted later are processed on the next business day."},
        {"_id": "soup", "title": "Canteen", "text": "The canteen serves tomato soup on Fridays."},
        {"_id": "bad id!", "title": "Odd id", "text": "Documents with odd ids are still evaluated."},
    ]
    queries = [{"_id": "q1", "text": "what does E-4471 mean"},
               {"_id": "q2", "text": "when do euro batches close"},
               {"_id": "q3", "text": "odd ids evaluated"}]
    qrels = "query-id\tcorpus-id\tscore\nq1\tledger\t1\nq2\teuro\t1\nq3\tbad id!\t1\n"
    (tmp_path / "set").mkdir()
    data = load_beir(_write(tmp_path / "set", corpus=_jsonl(corpus), queries=_jsonl(queries),
                            qrels={"test": qrels}))
    logs: list[str] = []
    report = evaluate_beir(data, name="tiny", cache_dir=tmp_path / "cache", progress=False, log=logs.append)
    assert list(report) == list(ABLATIONS)
    for method, row in report.items():
        assert row["ndcg@10"] == pytest.approx(1.0), method  # each query has one obvious answer
    assert report["default"]["ndcg@10_gain"] == pytest.approx(0.0)
    assert report["bm25"]["queries"] == 3 and (tmp_path / "cache" / "tiny.key").is_file()
    again = evaluate_beir(data, name="tiny", cache_dir=tmp_path / "cache", progress=False, log=logs.append,
                          methods={"bm25": ABLATIONS["bm25"]})
    assert any("reusing the cached index" in m for m in logs)
    assert again["bm25"]["ndcg@10"] == report["bm25"]["ndcg@10"]
    assert "default *" in format_table(report)
