"""Every bench script runs at a tiny size and writes a result that parses (no timing assertions).

Each script runs in a real subprocess on the small fixture corpus (or a tiny BEIR set built
here), with the bundled models, and writes its Markdown table to a temporary file.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_CORPUS = Path(__file__).parent / "fixtures" / "corpus"
pytestmark = pytest.mark.slow


def run(script: str, *args: str, timeout: int = 300) -> str:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def table(path: Path) -> list[list[str]]:
    """The first Markdown table in ``path`` as rows of cells (header first, separator dropped)."""
    rows: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break  # the end of the first table
    assert len(rows) >= 3, path.read_text()
    cells = [[c.strip() for c in r.strip("|").split("|")] for r in rows if not re.match(r"^\|[-|]+\|$", r)]
    assert all(len(r) == len(cells[0]) for r in cells)
    return cells


def bench_common():
    """``bench/_common.py`` loaded from its file (scripts import it from their own folder)."""
    spec = importlib.util.spec_from_file_location("bench_common", ROOT / "bench" / "_common.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_common_helpers(tmp_path):
    common = bench_common()
    # nearest-rank quantiles, as every script's tables print them: 4 sorted values, q=0.5 -> index 2
    assert common.pct([3.0, 1.0, 2.0, 4.0], 0.5) == 3.0 and common.pct([3.0, 1.0, 2.0, 4.0], 0.95) == 4.0
    assert common.pct([], 0.5) != common.pct([], 0.5)  # NaN
    assert common.evenly(list(range(10)), 4) == [0, 2, 5, 7]  # int(i * 2.5)
    assert common.evenly(list(range(3)), 0) == [0, 1, 2] and common.evenly(list(range(3)), 5) == [0, 1, 2]
    assert common.beir_folder("pydoc", tmp_path) == tmp_path / "pydoc"
    assert common.beir_folder("scifact-train", tmp_path) == common.SCIFACT
    seconds, value = common.timed(lambda: 7)
    assert value == 7 and seconds >= 0
    out = tmp_path / "deeper" / "r.md"
    assert common.publish(out, "| a |\n", echo=False) == "| a |\n" and out.read_text() == "| a |\n"
    args = common.parser("Title line.\n\nMore.", "x.md").parse_args([])
    assert args.result == common.RESULTS / "x.md"
    cases = common.course_cases(answerable=True)
    assert cases and all(c.answerable for c in cases) and len(cases) < len(common.course_cases())


def test_no_script_edits_sys_path():
    for script in sorted((ROOT / "bench").glob("*.py")):
        text = script.read_text()
        assert "sys.path.insert" not in text.replace("sys.path.insert(0, sys.argv[1])", ""), script.name
        assert "noqa: E402" not in text, script.name


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory) -> Path:
    from ragkit import Index, load_corpus
    from ragkit.index import IndexSettings

    docs, _ = load_corpus(FIXTURE_CORPUS)
    out = tmp_path_factory.mktemp("idx") / "index"
    Index.build(docs, IndexSettings(embedder="bge")).save(out)
    return out


@pytest.fixture(scope="module")
def tiny_sets(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sets")
    folder = root / "tiny"
    (folder / "qrels").mkdir(parents=True)
    docs = [("a", "Error E-4471 means the ledger is locked by the settlement job."),
            ("b", "EUR batches close at 15:00 CET; later payments go the next day."),
            ("c", "The canteen serves soup on Fridays.")]
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n"
                                                 for i, t in docs))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "what is E-4471"}) + "\n"
                                          + json.dumps({"_id": "q2", "text": "euro batch cutoff"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ta\t1\nq2\tb\t1\n")
    return root


def test_scale(tmp_path):
    out = tmp_path / "scale.md"
    run("scale.py", "--sizes", "600", "--parts", "lexical", "dense", "index", "--queries", "20",
        "--latency-queries", "5", "--lexical-queries", "5", "--hnsw-cache", str(tmp_path / "hnsw"),
        "--index-dir", str(tmp_path / "idx"), "--result", str(out), "--fresh")
    sections = out.read_text().split("\n## ")[1:]
    assert [s.split("\n")[0] for s in sections] == [
        "Lexical: ragkit (index scorer, half scope mask) vs bm25s vs rank-bm25",
        "Dense: exact (flat) vs HNSW", "A whole ragkit Index"]
    rows = {}
    for section in sections:
        part = tmp_path / "part.md"
        part.write_text(section)
        rows.update({r[0]: r[1] for r in table(part)[1:]})
    assert 0.0 <= float(rows["hnsw recall@10 vs exact"]) <= 1.0
    assert float(rows["ratio ragkit/bm25s p50"]) > 0 and float(rows["rank_bm25 p50 ms (20 q)"]) > 0
    assert 0.0 <= float(rows["top-10 overlap ragkit vs bm25s (no mask)"]) <= 1.0
    assert rows["rows"] == rows["rows after load"] == "600" and rows["format"] == "3"
    assert float(rows["load s"]) > 0 and float(rows["after load dense p50 ms"]) > 0
    data = json.loads((tmp_path / "scale.json").read_text())
    assert set(data) == {"lexical", "dense", "index"} and all(set(v) == {"600"} for v in data.values())


def test_index_throughput(tmp_path):
    out = tmp_path / "it.md"
    run("index_throughput.py", "--corpus", str(FIXTURE_CORPUS), "--sample", "4", "--embedders", "bge",
        "--full", "bge", "--result", str(out))
    rows = table(out)
    assert rows[1][0] == "bge" and float(rows[1][3]) > 0 and float(rows[1][4]) > 0


def test_rerank_cost(tmp_path, tiny_index):
    out = tmp_path / "rc.md"
    run("rerank_cost.py", "--index", str(tiny_index), "--max-cases", "2", "--latency-queries", "1",
        "--result", str(out))
    rows = table(out)
    assert len(rows) == 1 + 13 and all(0.0 <= float(r[1]) <= 1.0 for r in rows[1:])


def test_quality(tmp_path, tiny_sets):
    out = tmp_path / "q.md"
    run("quality.py", "--sets", "tiny", "--sets-dir", str(tiny_sets), "--cache", str(tmp_path / "cache"),
        "--variants", "d10", "--max-queries", "2", "--result", str(out))
    rows = table(out)
    assert rows[0][:3] == ["set", "embedder", "queries"] and rows[1][0] == "tiny"
    assert all(0.0 <= float(c.strip("*")) <= 1.0 for c in rows[1][3:])


def test_bm25_params(tmp_path, tiny_sets):
    out = tmp_path / "bp.md"
    run("bm25_params.py", "--sets", "tiny", "--sets-dir", str(tiny_sets), "--cache", str(tmp_path / "cache"),
        "--k1", "1.2", "1.5", "--b", "0.75", "--result", str(out))
    rows = table(out)
    assert rows[0] == ["k1 \\ b", "0.75"] and [r[0] for r in rows[1:]] == ["1.2", "1.5"]
    assert "(default)" in rows[2][1]
    assert all(0.0 <= float(c.strip("*").split()[0]) <= 1.0 for r in rows[1:] for c in r[1:])


def test_rerank_modes(tmp_path, tiny_sets):
    out = tmp_path / "rm.md"
    run("rerank_modes.py", "--sets", "tiny", "--sets-dir", str(tiny_sets), "--no-build", "--max-queries", "2",
        "--result", str(out))
    rows = table(out)
    assert rows[1][0] == "tiny" and "default" in rows[0]


def test_startup(tmp_path, tiny_index):
    out = tmp_path / "s.md"
    run("startup.py", "--index", str(tiny_index), "--runs", "1", "--query", "ledger", "--result", str(out))
    rows = {r[0]: float(r[1]) for r in table(out)[1:]}
    assert rows["`import ragkit`"] > 0 and "first search s" in rows
    assert "torch imported by `import ragkit`: no" in out.read_text()


def test_build_beir_sets(tmp_path):
    run("build_beir_sets.py", "--only", "pydoc", "--out", str(tmp_path))
    from ragkit.evaluation import load_beir

    data = load_beir(tmp_path / "pydoc")
    assert len(data.queries) > 50 and all(len(r) == 1 for r in data.qrels.values())


def test_funnel_latency(tmp_path):
    out = tmp_path / "fl.md"
    run("funnel_latency.py", "--corpus", str(FIXTURE_CORPUS), "--queries", "2", "--result", str(out))
    rows = {r[0]: r[1] for r in table(out)[1:]}
    assert float(rows["save"]) >= 0
    assert "| total |" in out.read_text()


def test_corpus_recall(tmp_path, tiny_index):
    out = tmp_path / "cr.md"
    run("corpus_recall.py", "--index", str(tiny_index), "--result", str(out))
    rows = table(out)
    assert rows[1][0] == "all" and all("/" in c for c in rows[1][2:])


def test_rerankers_smoke(tmp_path, tiny_sets, tiny_index):
    out = tmp_path / "rr.md"
    run("rerankers.py", "--sets", "tiny", "--sets-dir", str(tiny_sets), "--cache", str(tmp_path / "cache"),
        "--max-queries", "2", "--options", "ce256", "colbert256", "--course-index", str(tiny_index),
        "--max-cases", "2", "--result", str(out))
    rows = table(out)
    assert [r[4] for r in rows[1:]] == ["ce256", "colbert256"] and rows[1][0] == "tiny"
    assert all(0.0 <= float(c) <= 1.0 for r in rows[1:] for c in r[2:4] + r[5:7])
    assert all(float(r[8]) >= 0 for r in rows[1:])
    course = tmp_path / "course.md"
    course.write_text(out.read_text().split("## Course corpus")[1])
    assert [r[0] for r in table(course)[1:]] == ["first stage (rrf, no rerank)", "ce256 rerank", "ce256 rrf",
                                                 "colbert256 rerank", "colbert256 rrf"]


def test_feedback_smoke(tmp_path, tiny_sets):
    out = tmp_path / "fb.md"
    run("feedback.py", "--sets", "tiny", "--sets-dir", str(tiny_sets), "--cache", str(tmp_path / "cache"),
        "--docs", "1", "--terms", "3", "--orig-weight", "0.5", "--funnel-queries", "1", "--result", str(out))
    text = out.read_text()
    assert "## BM25 alone" in text and "## The default funnel" in text
    rows = [r for r in table(out) if r[0].strip("*") in ("off", "docs=1 terms=3 w=0.5")]
    assert len(rows) == 2 and all(0.0 <= float(c) <= 1.0 for r in rows for c in r[1:2])


def test_update_cost_smoke(tmp_path):
    out = tmp_path / "uc.md"
    run("update_cost.py", "--sizes", "300", "--sections", "3", "--out", str(out))
    rows = table(out)
    assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows)


def test_mcp_session_smoke(tmp_path, tiny_index):
    out = tmp_path / "mcp.md"
    run("mcp_session.py", "--index", str(tiny_index), "--out", str(out))
    text = out.read_text()
    for part in ("## initialize", "## tools/list", "`search_knowledge`", "isError=false"):
        assert part in text, f"{part!r} missing from the MCP session transcript"


@pytest.mark.slow
def test_eval_full_smoke(tmp_path):
    run("eval_full.py", "--limit", "2", "--no-cf", "--workers", "1", "--out-dir", str(tmp_path), timeout=600)
    for placement in ("pipeline", "hybrid"):
        text = (tmp_path / f"eval_{placement}.md").read_text()
        assert "end to end" in text and "Wall time" in text
        assert (tmp_path / f"eval_{placement}.json").stat().st_size > 0


def test_parity_smoke(tmp_path):
    """Two dumps of the same checkout compare equal; a changed hit makes `compare` exit 1."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run("parity.py", "dump", str(a), "--limit", "2", "--every", "1", timeout=600)
    dumped = json.loads(a.read_text())
    assert len(dumped["funnel"]) == 2 and len(dumped["agent"]) == 2
    assert "0 differ" in run("parity.py", "compare", str(a), str(a))
    first = next(iter(dumped["funnel"]))
    dumped["funnel"][first][0][1] += 0.001
    b.write_text(json.dumps(dumped))
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "parity.py"), "compare", str(a), str(b)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 1 and "1 differ" in proc.stdout


def test_rerank_depth_smoke(tmp_path, tiny_sets, tiny_index):
    out, dump = tmp_path / "rd.md", tmp_path / "rd.jsonl"
    run("rerank_depth.py", "--sets", "tiny", "course", "--sets-dir", str(tiny_sets), "--cache",
        str(tmp_path / "cache"), "--index", str(tiny_index), "--max-queries", "2", "--confident", "1",
        "--latency-queries", "1", "--score-cache", str(tmp_path / "scores.pkl"), "--dump", str(dump),
        "--result", str(out))
    rows = table(out)
    assert [r[0] for r in rows[1:]] == ["depth 30 (fixed; the default until 2 December)", "depth 20",
                                        "depth 10", "depth 0 (first stage)", "adaptive, margin 1"]
    assert float(rows[4][4]) == 0.0 and float(rows[4][5]) == 0.0  # depth 0 reranks nothing
    records = [json.loads(line) for line in dump.read_text().splitlines()]
    assert {r["set"] for r in records} == {"tiny", "course"} and all(r["half"] in ("dev", "held-out")
                                                                     for r in records)
    assert (tmp_path / "scores.pkl").is_file()


def test_rerank_speed_smoke(tmp_path, tiny_index):
    out = tmp_path / "rs.md"
    run("rerank_speed.py", "--index", str(tiny_index), "--queries", "2", "--rounds", "1", "--batches", "4",
        "--result", str(out))
    rows = table(out)
    assert rows[1][0].startswith("one pair per run") and float(rows[1][3]) == 0.0  # the reference itself
    assert len(rows) == 1 + 3 + 2 and all(float(r[1]) > 0 for r in rows[1:])


def test_beir_workers_smoke(tmp_path, tiny_sets):
    out = tmp_path / "bw.md"
    run("beir_workers.py", "--set", "tiny", "--sets-dir", str(tiny_sets), "--cache", str(tmp_path / "cache"),
        "--max-queries", "2", "--chunks", "3", "--result", str(out))
    rows = table(out)
    assert [r[0] for r in rows[1:]] == ["1 worker, fixed depth 30 (before)", "2 workers, fixed depth 30",
                                        "2 workers, adaptive depth", "1 worker, adaptive depth"]
    assert rows[1][4] == "1.00x" and all(0.0 <= float(r[5]) <= 1.0 for r in rows[1:])


def test_vocabulary_gap_smoke(tmp_path):
    out = tmp_path / "gap.md"
    run("vocabulary_gap.py", "--limit", "6", "--depth", "50", "--result", str(out))
    rows = table(out)
    assert rows[0][:2] == ["style", "cases"] and rows[-1][:2] == ["all", "6"]
    # every style row's cases add up to the "all" row, and a rank is a number or beyond the depth
    assert sum(int(r[1]) for r in rows[1:-1]) == 6
    assert all(re.fullmatch(r"\d+(\.\d+)?|>50", r[2]) for r in rows[1:])


def test_sentence_judges_smoke(tmp_path):
    out = tmp_path / "judges.md"
    run("sentence_judges.py", "--limit", "3", "--result", str(out))
    rows = table(out)
    assert rows[0][:4] == ["group", "cases", "with candidates", "expected value among them"]
    groups = {r[0]: r for r in rows[1:]}
    assert set(groups) == {"answerable: synonyms", "unanswerable (every style)"}
    for r in groups.values():  # at most the limit, and a judge is right no more often than it could be
        assert 0 <= int(r[2]) <= int(r[1]) <= 3
    answerable = groups["answerable: synonyms"]
    assert int(answerable[4]) <= int(answerable[3]) and int(answerable[5]) <= int(answerable[3])
