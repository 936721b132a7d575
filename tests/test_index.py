from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from conftest import FIXTURES, CountingEmbedder

from ragkit.errors import IndexStateError, ValidationError
from ragkit.index import Index
from ragkit.loaders import load_corpus
from ragkit.records import Document

pytestmark = pytest.mark.slow


@pytest.fixture
def docs():
    return load_corpus(FIXTURES / "corpus")[0]


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
    assert again.sections.keys() == idx.sections.keys()
    for c in again.rows:
        assert again.documents[c.doc_id].text[c.start:c.end] == c.text
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["embedder"]["name"] == embedder.name
    assert manifest["counts"]["rows"] == len(idx.rows)
    assert manifest["settings"]["chunker"]["method"] == "structure"
    assert len(manifest["corpus_fingerprint"]) == 40


def test_sync_encodes_only_new_and_changed(tmp_path, docs, embedder):
    counting = CountingEmbedder(embedder)
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


def test_crash_mid_save_keeps_previous_index(tmp_path, docs, embedder, monkeypatch):
    idx = Index.build(docs, embedder=embedder)
    idx.save(tmp_path / "idx")
    idx.sync(docs[:2])

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "save", boom)
    with pytest.raises(OSError, match="disk full"):
        idx.save(tmp_path / "idx")
    monkeypatch.undo()
    reopened = Index.load(tmp_path / "idx", embedder=embedder)
    assert len(reopened.documents) == len(docs)  # the previous, complete index
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".idx.tmp")]


def test_damaged_files_and_model_mismatch(tmp_path, docs, embedder):
    Index.build(docs, embedder=embedder).save(tmp_path / "idx")
    with pytest.raises(IndexStateError, match="not a ragkit index"):
        Index.load(tmp_path / "missing")
    vec = tmp_path / "idx" / "vectors.npy"
    data = bytearray(vec.read_bytes())
    data[-1] ^= 0xFF
    vec.write_bytes(bytes(data))
    with pytest.raises(IndexStateError, match="vectors.npy does not match its checksum"):
        Index.load(tmp_path / "idx")
    Index.build(docs, embedder=embedder).save(tmp_path / "idx2")
    man = tmp_path / "idx2" / "manifest.json"
    m = json.loads(man.read_text())
    m["embedder"]["version"] = "other"
    man.write_text(json.dumps(m))
    idx = Index.load(tmp_path / "idx2")  # loads; the first query checks the model
    with pytest.raises(IndexStateError, match="built with embedder"):
        idx.search_dense("EUR cutoff", 3, None)
    (tmp_path / "idx2" / "chunks.jsonl").unlink()
    with pytest.raises(IndexStateError, match="chunks.jsonl is missing"):
        Index.load(tmp_path / "idx2")


def test_empty_corpus_is_an_error():
    with pytest.raises(ValidationError, match="no documents"):
        Index.build([])
