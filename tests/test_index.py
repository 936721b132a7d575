"""Index: save/load, incremental sync by segments, merging, recovery from damage, snapshot reads.

Most tests use the hashing embedder (tests/hashing.py) so they run in seconds; the roundtrip
with the real bundled model is marked slow.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from conftest import FIXTURES, CountingEmbedder
from hashing import HashEmbedder

from ragkit import Document, Envelope, Funnel, Index, Scope, ValidationError, load_corpus
from ragkit.core import IndexStateError
from ragkit.index import FORMAT_VERSION, Segment
from ragkit.index import segments as segments_mod
from ragkit.retrieval import BM25Retriever

EMB = HashEmbedder()


@pytest.fixture
def docs():
    return load_corpus(FIXTURES / "corpus")[0]


def _gen_manifest(root):
    name = (root / "CURRENT").read_text().split()[0]
    return json.loads((root / name).read_text())


@pytest.mark.slow
def test_save_load_roundtrip_without_reencoding(tmp_path, docs, embedder):
    counting = CountingEmbedder(embedder)
    idx = Index.build(docs, embedder=counting)
    built = counting.encoded
    assert built == len(idx.rows) > 0
    idx.save(tmp_path / "idx")
    again = Index.load(tmp_path / "idx", embedder=counting)
    assert counting.encoded == built  # loading encodes nothing
    assert [c.chunk_id for c in again.rows] == [c.chunk_id for c in idx.rows]
    assert np.array_equal(again.vectors, idx.vectors)
    manifest = _gen_manifest(tmp_path / "idx")
    assert manifest["embedder"]["name"] == embedder.name
    assert manifest["counts"]["rows"] == len(idx.rows)
    assert again.search_dense("EUR cutoff", 3, None).ids == idx.search_dense("EUR cutoff", 3, None).ids


def test_roundtrip_layout_and_manifest(tmp_path, docs):
    idx = Index.build(docs, embedder=EMB)
    idx.save(tmp_path / "idx")
    root = tmp_path / "idx"
    assert {p.name for p in root.iterdir()} == {".lock", "CURRENT", "gen-000001.json", "segments"}
    manifest = _gen_manifest(root)
    assert manifest["format_version"] == FORMAT_VERSION == 3
    assert manifest["counts"]["rows"] == len(idx.rows)
    assert manifest["settings"]["chunker"]["method"] == "structure"
    assert len(manifest["corpus_fingerprint"]) == 40
    again = Index.load(root, embedder=EMB)
    assert [c.chunk_id for c in again.rows] == [c.chunk_id for c in idx.rows]
    assert np.array_equal(again.vectors, idx.vectors)
    assert again.sections.keys() == idx.sections.keys()
    for c in again.rows:
        assert again.documents[c.doc_id].text[c.start:c.end] == c.text


def test_sync_encodes_only_new_and_changed(docs):
    counting = CountingEmbedder(EMB)
    idx = Index.build(docs[:-1], embedder=counting)
    before = counting.encoded
    old_vectors = {c.chunk_id: idx.vectors[i] for i, c in enumerate(idx.rows)}
    changed = Document(replace(docs[0].envelope, version="9"), docs[0].text + "\n\nOne more line.\n")
    report = idx.sync([changed, *docs[1:]])
    assert report.added == [docs[-1].doc_id] and report.updated == [docs[0].doc_id]
    assert report.unchanged == len(docs) - 2
    new_rows = sum(1 for c in idx.rows if c.doc_id in (docs[0].doc_id, docs[-1].doc_id))
    assert counting.encoded - before == new_rows == report.encoded_rows
    for i, c in enumerate(idx.rows):  # untouched documents keep their exact vectors
        if c.doc_id not in (docs[0].doc_id, docs[-1].doc_id):
            assert np.array_equal(idx.vectors[i], old_vectors[c.chunk_id])
    gone = idx.delete([docs[1].doc_id])
    assert gone.deleted == [docs[1].doc_id]
    assert all(c.doc_id != docs[1].doc_id for c in idx.rows)
    assert idx.manifest["tombstones"][-1]["doc_id"] == docs[1].doc_id
    with pytest.raises(ValidationError, match="unknown doc ids"):
        idx.delete(["nope"])


def test_save_after_update_writes_only_the_new_segment(tmp_path, docs):
    idx = Index.build(docs, embedder=EMB)
    idx.save(tmp_path / "idx")
    segs = tmp_path / "idx" / "segments"
    first = {p.name: p.stat().st_mtime_ns for p in segs.iterdir()}
    idx.add([Document(replace(docs[2].envelope, title="Retitled"), docs[2].text)])
    idx.save(tmp_path / "idx")
    after = {p.name: p.stat().st_mtime_ns for p in segs.iterdir()}
    assert set(first) < set(after) and len(after) == 2
    assert all(after[n] == t for n, t in first.items())  # the base segment was not rewritten
    assert len(list((tmp_path / "idx").glob("gen-*.json"))) == 2  # current + previous kept


def test_bm25_after_updates_equals_a_rebuild(docs):
    idx = Index.build(docs[:4], embedder=EMB)
    idx.add(docs[4:])
    idx.delete([docs[0].doc_id])
    idx.add([Document(replace(docs[1].envelope, version="2"), docs[1].text + "\nsettlement settlement\n")])
    rebuilt = Index.build(list(idx.documents.values()), embedder=EMB)
    assert len(idx.segments) > 1 or idx.snapshot().dead_rows
    for query in ["settlement cutoff", "acme-9 EUR", "ops-1423 reconcile_settlement", "jobs"]:
        got = dict(zip([idx.rows[r].chunk_id for r in idx.search_lexical(query, 100, None).ids],
                       idx.search_lexical(query, 100, None).scores, strict=True))
        ref = rebuilt.search_lexical(query, 100, None)
        want = dict(zip([rebuilt.rows[r].chunk_id for r in ref.ids], ref.scores, strict=True))
        assert got.keys() == want.keys() and got, query
        assert all(abs(got[k] - want[k]) < 1e-6 * max(1, want[k]) for k in want), query
        bm = BM25Retriever([c.contextual_text() for c in idx.rows])  # the bm25s engine agrees
        assert np.allclose(idx.lexical.scores(query)[idx.snapshot().row_slot], bm.scores(query), atol=1e-5)


def test_merge_policy_bounds_segments_and_dead_rows(docs, monkeypatch):
    monkeypatch.setattr(segments_mod, "MAX_SEGMENTS", 3)
    idx = Index.build(docs, embedder=EMB)
    for n in range(6):
        d = docs[n % len(docs)]
        idx.add([Document(replace(d.envelope, version=f"v{n}"), d.text + f"\nrevision {n}\n")])
        assert len(idx.segments) <= 3 + 1
        snap = idx.snapshot()
        assert snap.dead_rows <= segments_mod.MAX_DEAD_FRACTION * len(snap.live) + 1e-9
    idx.compact()
    assert len(idx.segments) == 1 and idx.snapshot().dead_rows == 0
    assert {c.doc_id for c in idx.rows} == {d.doc_id for d in docs}


def test_damaged_files_name_the_file_and_recover_to_the_previous_generation(tmp_path, docs):
    root = tmp_path / "idx"
    idx = Index.build(docs, embedder=EMB)
    idx.save(root)
    idx.add([Document(Envelope("late-doc", title="Late"), "# Late\n\nA late zebra document.\n")])
    idx.save(root)
    newest = max((root / "segments").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    import pyarrow.parquet as pq

    assert "late-doc" in pq.read_table(newest / "documents.parquet").column("envelope").to_pylist()[0]
    vec = newest / "vectors.npy"
    vec.write_bytes(vec.read_bytes()[:-7])  # truncated vectors
    with pytest.raises(IndexStateError, match=r"vectors.npy does not match its checksum.*Index.recover"):
        Index.load(root, embedder=EMB)
    recovered = Index.recover(root, embedder=EMB)
    assert "late-doc" not in recovered.documents and len(recovered.documents) == len(docs)
    assert len(Index.load(root, embedder=EMB).documents) == len(docs)  # CURRENT now points there
    (root / "segments" / next(iter(recovered.manifest["doc_home"].values())) / "chunks.parquet").unlink()
    with pytest.raises(IndexStateError, match="chunks.parquet is missing"):
        Index.load(root, embedder=EMB)
    with pytest.raises(IndexStateError, match="rebuild"):
        Index.recover(root, embedder=EMB)


def test_edited_manifest_is_detected(tmp_path, docs):
    root = tmp_path / "idx"
    idx = Index.build(docs, embedder=EMB)
    idx.save(root)
    idx.delete([docs[0].doc_id])
    idx.save(root)
    gen = root / (root / "CURRENT").read_text().split()[0]
    gen.write_text(gen.read_text().replace('"rows"', '"rowz"'))
    with pytest.raises(IndexStateError, match=r"gen-000002.json does not match the checksum"):
        Index.load(root, embedder=EMB)
    assert docs[0].doc_id in Index.recover(root, embedder=EMB).documents  # generation 1
    with pytest.raises(IndexStateError, match="not a ragkit index"):
        Index.load(tmp_path / "missing")


def test_model_mismatch_is_reported_on_first_query(tmp_path, docs):
    Index.build(docs, embedder=EMB).save(tmp_path / "idx")
    idx = Index.load(tmp_path / "idx")  # loads; the first dense query checks the model
    with pytest.raises(IndexStateError, match="built with embedder 'hash-bow'"):
        idx.search_dense("EUR cutoff", 3, None)


def test_format_1_folder_is_refused_then_upgraded_without_reencoding(tmp_path, docs):
    root = tmp_path / "old"
    root.mkdir()
    idx = Index.build(docs, embedder=EMB)
    with open(root / "documents.jsonl", "w") as fh:
        for d in docs:
            fh.write(json.dumps({"envelope": d.envelope.to_mapping(), "text": d.text}) + "\n")
    with open(root / "chunks.jsonl", "w") as fh:
        for c in [*idx.sections.values(), *idx.rows]:
            fh.write(json.dumps(_chunk_json(c)) + "\n")
    np.save(root / "vectors.npy", idx.vectors)
    (root / "manifest.json").write_text(json.dumps({**idx.manifest, "format_version": 1}))
    with pytest.raises(IndexStateError, match="format 1.*ragkit index DIR --out"):
        Index.load(root)
    counting = CountingEmbedder(EMB)
    up = Index.upgrade(root, embedder=counting)
    assert counting.encoded == 0 and len(up.rows) == len(idx.rows)
    assert not (root / "manifest.json").exists()
    assert [c.chunk_id for c in Index.load(root, embedder=EMB).rows] == [c.chunk_id for c in idx.rows]


def _chunk_json(c):
    """A chunk as formats 1 and 2 wrote it (JSON lines; the text is a slice of its document)."""
    return {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "version": c.version, "start": c.start,
            "end": c.end, "title": c.title, "section_path": list(c.section_path), "anchor": c.anchor,
            "parent_id": c.parent_id, "preamble": c.preamble, "kind": c.kind}


def _downgrade_to_format_2(root):
    """Rewrite the current generation of ``root`` as format 2 wrote it (JSON lines, postings.npz)."""
    from ragkit.index import storage
    from ragkit.retrieval import Postings

    manifest = _gen_manifest(root)
    for entry in manifest["segments"]:
        folder = root / "segments" / entry["name"]
        seg = Segment.read(root / "segments", entry, verify=True, root=root)
        with open(folder / "documents.jsonl", "w") as fh:
            for d in seg.documents:
                fh.write(json.dumps({"envelope": d.envelope.to_mapping(), "text": d.text}) + "\n")
        with open(folder / "chunks.jsonl", "w") as fh:
            for c in [*seg.sections, *seg.rows]:
                fh.write(json.dumps(_chunk_json(c)) + "\n")
        Postings.load(folder).save(folder, legacy=True)
        for name in ("documents.parquet", "chunks.parquet", *Postings.FILES[:4]):
            (folder / name).unlink()
        entry.pop("format", None)
        entry["files"] = {n: storage.sha256_file(folder / n) for n in segments_mod.SEGMENT_FILES_V2}
    manifest.update({"format_version": 2, "generation": manifest["generation"] + 1})
    manifest.pop("checksum", None)
    storage.commit_generation(root, manifest)


def test_format_2_folder_loads_and_upgrades_to_columnar_without_reencoding(tmp_path, docs):
    root = tmp_path / "idx"
    idx = Index.build(docs, embedder=EMB)
    idx.save(root)
    _downgrade_to_format_2(root)
    old = Index.load(root, embedder=EMB)  # format 2 is still read
    assert old.manifest["format_version"] == 2
    assert [c.chunk_id for c in old.rows] == [c.chunk_id for c in idx.rows]
    counting = CountingEmbedder(EMB)
    up = Index.upgrade(root, embedder=counting)
    assert counting.encoded == 0
    manifest = _gen_manifest(root)
    assert manifest["format_version"] == FORMAT_VERSION == 3
    folder = root / "segments" / manifest["segments"][0]["name"]
    assert (folder / "chunks.parquet").is_file() and not (folder / "chunks.jsonl").exists()
    again = Index.load(root, embedder=EMB)
    assert [c.chunk_id for c in again.rows] == [c.chunk_id for c in idx.rows] == [c.chunk_id for c in up.rows]
    assert [c.text for c in again.rows] == [c.text for c in idx.rows]
    assert again.sections == idx.sections and again.documents == idx.documents
    assert np.array_equal(again.vectors, idx.vectors)
    assert again.search_lexical("EUR cutoff", 5, None) == idx.search_lexical("EUR cutoff", 5, None)
    previous = Index.load(root, embedder=EMB, generation=manifest["generation"] - 1)
    assert previous.manifest["format_version"] == 2  # kept as the previous generation (recoverable)


def test_large_segment_saves_its_hnsw_graph(tmp_path, monkeypatch):
    """A segment whose dense index is HNSW saves the graph; a load reads it instead of rebuilding."""
    from ragkit import Chunk
    from ragkit.index import IndexSettings
    from ragkit.retrieval import dense as dense_mod

    monkeypatch.setattr(dense_mod, "HNSW_MIN_ROWS", 5000)
    rng = np.random.default_rng(0)
    docs, chunks = [], []
    for d in range(500):
        text = "\n\n".join(f"row {d} {j} word{rng.integers(0, 300)}" for j in range(10))
        docs.append(Document(Envelope(f"d{d}", title=f"D{d}"), text))
        at = 0
        for j, part in enumerate(text.split("\n\n")):
            chunks.append(Chunk(f"d{d}#c{j}", f"d{d}", "1", at, at + len(part), part, f"D{d}"))
            at += len(part) + 2
    vectors = rng.standard_normal((len(chunks), 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    settings = IndexSettings(dense_kind="auto")
    idx = Index(docs, chunks, vectors, settings, embedder=EMB)
    idx.save(tmp_path / "idx")
    manifest = _gen_manifest(tmp_path / "idx")
    assert "dense.faiss" in manifest["segments"][0]["files"]
    again = Index.load(tmp_path / "idx", embedder=EMB)
    seg = again.segments[0]
    assert seg._dense is not None and seg._dense.kind == "hnsw"  # read, not rebuilt
    q = vectors[17]
    assert seg.dense("auto").search("q", 1, query_vector=q).ids == [17]


def test_empty_corpus_is_an_error():
    with pytest.raises(ValidationError, match="no documents"):
        Index.build([])


def _versioned(tag: str, n: int = 6) -> list[Document]:
    return [Document(Envelope(f"d{i}", title=f"Doc {i}", version=tag, tenant="acme"),
                     f"# Doc {i}\n\nmarker{tag} settlement cutoff note {i} for acme.\n") for i in range(n)]


def test_concurrent_searches_see_one_version_never_a_mix():
    """A writer flips every document between versions A and B; readers must never mix them."""
    idx = Index.build(_versioned("A"), embedder=EMB)
    funnel = Funnel(idx, reranker=None)
    stop = threading.Event()
    errors: list[str] = []
    searches = [0]

    flips = [0]

    def writer():
        while not stop.is_set():
            flips[0] += 1
            flip = flips[0]
            idx.sync(_versioned("B" if flip % 2 else "A", n=6 if flip % 3 else 5))

    def reader():
        while not stop.is_set():
            res = funnel.search("settlement cutoff note", scope=Scope("acme"), rerank_mode="none",
                                deliver=6, candidates=10)
            tags = {h.envelope.version for h in res.hits} | \
                {("A" if "markerA" in h.evidence else "B") for h in res.hits}
            if len(tags) > 1:
                errors.append(f"mixed versions {tags}")
            snap = idx.snapshot()
            tags = {snap.envelope(r).version for r in range(len(snap.rows))}
            tags |= {("A" if "markerA" in c.text else "B") for c in snap.rows}
            if len(tags) > 1:
                errors.append(f"snapshot mixed {tags}")
            searches[0] += 1

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60  # long enough on a loaded machine
    while (searches[0] < 40 or flips[0] < 10) and time.monotonic() < deadline and not errors:
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert searches[0] >= 40 and flips[0] >= 10


def test_generation_manifests_of_the_first_format_2_layout_still_load(tmp_path, docs):
    import hashlib

    root = tmp_path / "idx"
    Index.build(docs, embedder=EMB).save(root)
    gen = root / "gen-000001.json"
    body = {k: v for k, v in json.loads(gen.read_text()).items() if k != "checksum"}
    body["checksum"] = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    data = json.dumps(body, indent=1, sort_keys=True).encode()  # how 21:07-21:55 builds wrote it
    gen.write_bytes(data)
    (root / "CURRENT").write_text(f"gen-000001.json {hashlib.sha256(data).hexdigest()}\n")
    assert len(Index.load(root, embedder=EMB).documents) == len(docs)
    gen.write_bytes(data.replace(b'"rows"', b'"rowz"'))
    with pytest.raises(IndexStateError, match="checksum"):
        Index.recover(root, embedder=EMB)
