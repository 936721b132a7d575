"""Crash safety: a child process is killed (os._exit) at every step of a save; the index must load.

``RAGKIT_CRASH_AT=<step>`` makes :func:`ragkit.index.storage.crash_point` end the process at that
step. After each crash the parent loads the folder and checks it holds exactly the previous
version or exactly the new one (every document's text and version), never neither and never
a mix; then a normal save succeeds and leaves no temporary files behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hashing import HashEmbedder

from ragkit import Index, load_corpus
from ragkit.index import CRASH_POINTS

TESTS = Path(__file__).parent
EMB = HashEmbedder()

CHILD = """
import sys
sys.path.insert(0, {tests!r})
from hashing import HashEmbedder
from ragkit.index.index import Index
from ragkit.documents.loaders import load_corpus
docs, _ = load_corpus({corpus!r})
{action}
"""
UPDATE = "idx = Index.load({root!r}, embedder=HashEmbedder()); idx.sync(docs); idx.save({root!r})"
FIRST = "Index.build(docs, embedder=HashEmbedder()).save({root!r})"


def _corpus(path: Path, version: int, n: int) -> Path:
    with open(path, "w") as fh:
        for i in range(n):
            if version == 2 and i == 1:
                continue  # deleted in version 2
            tag = version if i % 2 == 0 else 1  # version 2 edits the even documents
            fh.write(json.dumps({"doc_id": f"doc-{i}", "version": str(tag), "title": f"Doc {i}",
                                 "text": f"# Doc {i}\n\nsettlement note {i} revision v{tag} acme.\n"}) + "\n")
    return path


def _state(idx: Index) -> dict[str, tuple[str, str]]:
    return {k: (d.envelope.version, d.text) for k, d in idx.documents.items()}


def _run_child(action: str, corpus: Path, root: Path, step: str) -> int:
    code = CHILD.format(tests=str(TESTS), corpus=str(corpus), action=action.format(root=str(root)))
    env = {**os.environ, "RAGKIT_CRASH_AT": step, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code], env=env, timeout=120).returncode


@pytest.mark.parametrize("step", CRASH_POINTS)
def test_crash_during_update_leaves_old_or_new(tmp_path, step):
    root = tmp_path / "idx"
    v1 = _corpus(tmp_path / "v1.jsonl", 1, 6)
    v2 = _corpus(tmp_path / "v2.jsonl", 2, 7)  # adds doc-6, deletes doc-1, edits doc-0/2/4
    old_docs, new_docs = load_corpus(v1)[0], load_corpus(v2)[0]
    idx = Index.build(old_docs[:4], embedder=EMB)
    idx.save(root)              # generation 1
    idx.sync(old_docs)
    idx.save(root)              # generation 2: the committed "previous" version
    old = _state(idx)
    new = _state(Index.build(new_docs, embedder=EMB))
    assert old != new
    assert _run_child(UPDATE, v2, root, step) == 1, f"the crash point {step} was never reached"
    after = Index.load(root, embedder=EMB)
    state = _state(after)
    assert state in (old, new), f"crash at {step}: neither the old nor the new version"
    if step in ("save:committed", "save:cleanup"):
        assert state == new  # committed before the crash: nothing committed is lost
    else:
        assert state == old
    assert sorted(after.row_of) == sorted(c.chunk_id for c in after.rows)
    after.sync(new_docs)  # the next save cleans up whatever the crash left
    after.save(root)
    assert _state(Index.load(root, embedder=EMB)) == new
    leftovers = [p.name for p in root.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".tmp-")]
    assert not leftovers
    assert len(list(root.glob("gen-*.json"))) == 2


@pytest.mark.parametrize("step", ["save:segment-partial", "save:manifest", "save:current-tmp"])
def test_crash_during_first_save_leaves_no_half_index(tmp_path, step):
    root = tmp_path / "idx"
    corpus = _corpus(tmp_path / "v1.jsonl", 1, 4)
    assert _run_child(FIRST, corpus, root, step) == 1
    from ragkit.core import IndexStateError

    with pytest.raises(IndexStateError, match="not a ragkit index"):
        Index.load(root, embedder=EMB)
    Index.build(load_corpus(corpus)[0], embedder=EMB).save(root)  # a later save just works
    assert len(Index.load(root, embedder=EMB).documents) == 4
