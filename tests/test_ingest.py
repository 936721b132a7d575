"""Distributed ingestion (issue 15, item 5): Ray Data read -> chunk -> embed -> write into Milvus.

One local Ray cluster for the module (``ray.init(num_cpus=2)``, shut down at the end) and the
session's Milvus (``milvus_uri``: embedded Milvus on loopback, or RAGKIT_MILVUS_URI). The corpus
is a copy of tests/fixtures/corpus plus a file that does not load (bad front matter) and one that
loads but that Milvus refuses (a chunk over its 64 KiB text field).
"""

from __future__ import annotations

import logging
import os
import shutil

import numpy as np
import pytest
from conftest import FIXTURES, start_with_retries

# Ray's DataContext re-sets its deprecated fields whenever it is copied to a worker
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")

COLLECTION = "test_ingest_ray"


#: Attempts to start the local Ray (its raylet must register within a fixed 30 s, which a loaded
#: 2-core machine can miss); override with RAGKIT_RAY_START_ATTEMPTS.
RAY_START_ATTEMPTS = int(os.environ.get("RAGKIT_RAY_START_ATTEMPTS", "4"))


@pytest.fixture(scope="module")
def ray_session():
    """A local Ray for the module, started with retries (each failed attempt is shut down first);
    a start that still fails errors the tests that need it with the reason and what to change."""
    ray = pytest.importorskip("ray")

    def start():
        if ray.is_initialized():
            ray.shutdown()
        # a small object store starts faster and leaves memory to the rest of a busy machine
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING,
                 object_store_memory=200 * 2**20)
        return ray

    def ready(handle):
        handle.get(handle.put(1), timeout=120)  # the node answers, not only registered

    start_with_retries(start, ready, attempts=RAY_START_ATTEMPTS, what="a local Ray (ray.init)",
                       fix="The machine is too loaded for Ray's fixed 30 s raylet start: raise "
                           "RAGKIT_RAY_START_ATTEMPTS (default 4), rerun when the load is lower, or deselect "
                           "the Ray tests with -m 'not slow'.")
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("ingest") / "corpus"
    shutil.copytree(FIXTURES / "corpus", root)
    (root / "acme" / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    # loads and chunks, but its one chunk is over Milvus's 64 KiB text field: refused at write time
    (root / "acme" / "huge.txt").write_text("start " + "x" * 70_000 + " end.", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def config(milvus_uri):
    from ragkit.backends.milvus import MilvusConfig

    return MilvusConfig(milvus_uri, token=os.environ.get("RAGKIT_MILVUS_TOKEN", ""), collection=COLLECTION)


@pytest.fixture(scope="module")
def ingested(ray_session, config, corpus):
    from ragkit.backends.milvus import ingest_ray

    # batch_size=3: the 8 documents go through several embed and write batches
    return ingest_ray(corpus, config, drop_existing=True, batch_size=3, progress=False)


@pytest.fixture(scope="module")
def reference(corpus, embedder):
    from ragkit import Index, load_corpus

    docs, _ = load_corpus(corpus)
    return Index.build([d for d in docs if d.doc_id != "acme/huge"], embedder=embedder)


def milvus_rows(config) -> dict[str, np.ndarray]:
    """chunk_id -> dense vector of every retrievable row in the collection (read with pymilvus)."""
    from pymilvus import MilvusClient

    # a dedicated connection that pings only during calls (see ragkit.backends.milvus.ray_ingest._flush)
    client = MilvusClient(uri=config.uri, token=config.token, dedicated=True,
                          grpc_options={"grpc.keepalive_permit_without_calls": 0})
    try:
        rows = client.query(config.collection, filter='chunk_id != ""', output_fields=["chunk_id", "dense"],
                            limit=16384)
    finally:
        client.close()
    ids = [r["chunk_id"] for r in rows]
    assert len(ids) == len(set(ids)), "a chunk is stored twice"
    return {r["chunk_id"]: np.asarray(r["dense"], dtype=np.float32) for r in rows}


@pytest.mark.milvus
@pytest.mark.slow
def test_report_counts_documents_and_names_the_broken_file(ingested, reference, corpus):
    assert ingested.mode == "ray"
    assert ingested.documents == len(reference.documents) == 8
    assert ingested.chunks == len(reference.rows)
    assert ingested.sections == len(reference.sections)
    assert ingested.rows_written == ingested.chunks
    broken, huge = sorted(ingested.skipped, key=lambda s: s.path)
    assert broken.path.endswith("broken.md") and "YAML" in broken.reason and broken.line == 2
    assert huge.path.endswith("huge.txt") and "'acme/huge' not written to Milvus" in huge.reason
    assert "skipped 2" in str(ingested) and "broken.md" in str(ingested)


@pytest.mark.milvus

def assert_same_rows(rows, expected, *, atol):
    """The same chunk ids, each with a vector within ``atol`` of the expected one."""
    assert set(rows) == set(expected)
    for chunk_id, vector in expected.items():
        np.testing.assert_allclose(rows[chunk_id], vector, atol=atol, err_msg=chunk_id)

@pytest.mark.slow
def test_rows_equal_index_build(ingested, reference, config):
    ref = {c.chunk_id: v for c, v in zip(reference.rows, reference.vectors, strict=True)}
    assert_same_rows(milvus_rows(config), ref, atol=1e-5)


@pytest.mark.milvus
@pytest.mark.slow
def test_search_through_milvus_finds_a_known_document(ingested, config, embedder):
    from ragkit.backends.milvus import MilvusIndex

    index = MilvusIndex.open(config, embedder=embedder)
    hits = index.search_lexical("settlement cutoff", 5, None)
    assert hits.ids, "no hit"
    assert any("settlement" in c.doc_id for c in index.snapshot().fetch(hits.ids))


@pytest.mark.milvus
@pytest.mark.slow
def test_cli_reingest_with_ray_is_idempotent(ingested, config, corpus, ray_session):
    from typer.testing import CliRunner

    from ragkit.app.cli import app

    before = milvus_rows(config)
    result = CliRunner().invoke(app, ["index", str(corpus), "--backend", "milvus", "--ray", "--milvus-uri",
                                      config.uri, "--collection", config.collection, "-q"],
                                env={"RAGKIT_MILVUS_TOKEN": config.token})
    assert result.exit_code == 0, result.output
    # reconciled by content hash: nothing changed, so nothing is embedded or written again
    assert "ingested 0 documents" in result.output and "unchanged 8" in result.output
    assert "broken.md" in result.output
    after = milvus_rows(config)  # checks there is no duplicate
    assert set(after) == set(before)


@pytest.mark.milvus
@pytest.mark.slow
def test_ray_reconciles_deletes_and_keeps_good_jsonl_lines(ray_session, config, corpus, tmp_path):
    from dataclasses import replace

    from ragkit.backends.milvus import MilvusIndex, ingest_milvus, ingest_ray
    from ragkit.documents import load_file

    folder = tmp_path / "corpus"
    shutil.copytree(corpus, folder)
    (folder / "acme" / "huge.txt").unlink()
    synced = replace(config, collection=COLLECTION + "_sync")
    first = ingest_ray(folder, synced, drop_existing=True, batch_size=4, progress=False)
    assert first.documents == 8
    assert sorted(first.changes.added) == sorted(MilvusIndex.open(synced).doc_states())
    leaving = next(p for p in sorted(folder.rglob("*.md")) if p.name != "broken.md")
    gone = load_file(leaving, root=folder)[0].doc_id
    leaving.unlink()
    (folder / "lines.jsonl").write_text('{"doc_id": "line-a", "text": "first good line"}\n'
                                        '{"doc_id": "line-b", "text": \n'
                                        '{"doc_id": "line-c", "text": "third good line"}\n', encoding="utf-8")
    second = ingest_ray(folder, synced, batch_size=4, progress=False)
    assert second.changes.deleted == [gone] and sorted(second.changes.added) == ["line-a", "line-c"]
    assert second.changes.unchanged == 7 and second.documents == 2  # only the new documents are written
    bad = [s for s in second.skipped if s.path.endswith("lines.jsonl")]
    assert [s.line for s in bad] == [2] and "lines.jsonl:2" in str(second)
    states = MilvusIndex.open(synced).doc_states()
    assert gone not in states and {"line-a", "line-c"} <= set(states) and "line-b" not in states
    assert second.generation == first.generation + 1
    # the single-process ingestion applies the same rule: nothing is left to do
    third = ingest_milvus(folder, synced, batch_size=4, progress=False)
    assert third.documents == 0 and third.changes.unchanged == len(states) and not third.changes.deleted
    MilvusIndex.open(synced).drop()


def test_a_failed_engine_start_says_what_to_change():
    attempts = []

    def start():
        attempts.append(1)
        raise TimeoutError("The current node timed out during startup")

    with pytest.raises(pytest.fail.Exception) as failed:
        start_with_retries(start, lambda handle: None, attempts=3, what="a local Ray", pause=0.0,
                           fix="Raise RAGKIT_RAY_START_ATTEMPTS.")
    assert len(attempts) == 3
    message = str(failed.value)
    assert "a local Ray did not start in 3 attempts" in message and "attempt 3: TimeoutError" in message
    assert message.endswith("Raise RAGKIT_RAY_START_ATTEMPTS.")


def test_ray_needs_a_server_uri(corpus, tmp_path):
    from ragkit import ValidationError
    from ragkit.backends.milvus import MilvusConfig, ingest_ray

    with pytest.raises(ValidationError, match="server URI"):
        ingest_ray(corpus, MilvusConfig(str(tmp_path / "local.db")))


@pytest.mark.parametrize(("args", "message"), [
    (["--ray"], "--ray needs --backend milvus"),
    (["--collection", "x"], "--collection needs --backend milvus"),
    (["--backend", "milvus"], "needs --milvus-uri (or RAGKIT_MILVUS_URI)"),
    (["--backend", "milvus", "--milvus-uri", "http://127.0.0.1:1", "--ray-address", "auto"],
     "--ray-address needs --ray"),
    (["--backend", "milvus", "--milvus-uri", "http://127.0.0.1:1", "--out", "idx"],
     "--out is for the memory"),
    (["--backend", "elastic"], "not a backend"),
    (["--backend", "milvus", "--milvus-uri", "http://127.0.0.1:1", "--ray-actors", "2"],
     "--ray-actors needs --ray"),
    (["--backend", "milvus", "--milvus-uri", "./local.db", "--ray"], "is a local file"),
    (["--backend", "milvus", "--milvus-uri", "http://127.0.0.1:1", "--ray", "--ray-actors", "0"],
     "actors=0: must be a whole number >= 1"),
])
def test_index_rejects_bad_backend_combinations(corpus, args, message):
    from typer.testing import CliRunner

    from ragkit.app.cli import app

    result = CliRunner().invoke(app, ["index", str(corpus), *args], env={"RAGKIT_MILVUS_URI": ""})
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())


@pytest.mark.milvus
@pytest.mark.slow
def test_single_process_ingest_writes_the_same_rows(ingested, config, corpus):
    from dataclasses import replace

    from ragkit.backends.milvus import ingest_milvus

    single = replace(config, collection=COLLECTION + "_single")
    report = ingest_milvus(corpus, single, drop_existing=True, batch_size=3, progress=False)
    assert report.mode == "single"
    assert (report.documents, report.chunks, report.rows_written) == \
        (ingested.documents, ingested.chunks, ingested.rows_written)
    assert sorted(s.path for s in report.skipped) == sorted(s.path for s in ingested.skipped)
    assert_same_rows(milvus_rows(single), milvus_rows(config), atol=1e-6)


@pytest.mark.milvus
@pytest.mark.slow
def test_cli_milvus_backend_without_ray_ingests_in_one_process(config, corpus, reference):
    from dataclasses import replace

    from typer.testing import CliRunner

    from ragkit.app.cli import app

    single = replace(config, collection=COLLECTION + "_cli")
    result = CliRunner().invoke(app, ["index", str(corpus), "--backend", "milvus", "--milvus-uri", config.uri,
                                      "--collection", single.collection, "--rebuild", "-q"],
                                env={"RAGKIT_MILVUS_TOKEN": config.token})
    assert result.exit_code == 0, result.output
    assert "in one process" in result.output and "skipped 2" in result.output
    assert set(milvus_rows(single)) == {c.chunk_id for c in reference.rows}
