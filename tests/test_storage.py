"""ragkit.index.storage on a tmp folder: the commit point, checksums, generation numbers, cleanup, locks.

Every expectation is written out by hand (file names, the exact bytes of a manifest, what a
cleanup removes); the only computed values are sha256 digests of literal bytes.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import threading

import pytest

from ragkit.core.errors import IndexStateError
from ragkit.index import storage


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_sha256_of_known_bytes(tmp_path):
    (tmp_path / "a").write_bytes(b"abc")
    (tmp_path / "b").write_bytes(b"")
    # FIPS 180-2 test vectors
    abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert storage.sha256_file(tmp_path / "a") == abc
    assert storage.sha256_files([tmp_path / "b", tmp_path / "a"], threads=2) == [empty, abc]  # order kept


def test_commit_writes_the_manifest_then_the_commit_point(tmp_path):
    name = storage.commit_generation(tmp_path, {"generation": 7, "b": [1, 2], "a": "x"})
    assert name == "gen-000007.json"
    body = b'{"a":"x","b":[1,2],"generation":7}'  # sorted keys, compact
    expected = body[:-1] + b',"checksum":"' + _sha(body).encode() + b'"}'
    assert (tmp_path / name).read_bytes() == expected
    assert (tmp_path / "CURRENT").read_text() == f"gen-000007.json {_sha(expected)}\n"
    assert storage.current_generation(tmp_path) == ("gen-000007.json", _sha(expected))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CURRENT", "gen-000007.json"]  # no temp left
    assert storage.read_generation(tmp_path, name, _sha(expected)) == {
        "a": "x", "b": [1, 2], "generation": 7, "checksum": _sha(body)}


def test_a_crash_before_the_commit_point_keeps_the_previous_generation(tmp_path, monkeypatch):
    storage.commit_generation(tmp_path, {"generation": 1})
    before = (tmp_path / "CURRENT").read_text()

    def crash(step: str) -> None:
        if step == "save:manifest":
            raise SystemExit(1)  # the process would end here (os._exit in a real crash)

    monkeypatch.setattr(storage, "crash_point", crash)
    with pytest.raises(SystemExit):
        storage.commit_generation(tmp_path, {"generation": 2})
    assert (tmp_path / "gen-000002.json").is_file()  # written, but not committed
    assert (tmp_path / "CURRENT").read_text() == before
    assert storage.current_generation(tmp_path)[0] == "gen-000001.json"


def test_a_crash_before_the_replace_of_current_keeps_it(tmp_path, monkeypatch):
    storage.commit_generation(tmp_path, {"generation": 1})
    before = (tmp_path / "CURRENT").read_text()

    def crash(step: str) -> None:
        if step == "save:current-tmp":
            raise SystemExit(1)

    monkeypatch.setattr(storage, "crash_point", crash)
    with pytest.raises(SystemExit):
        storage.commit_generation(tmp_path, {"generation": 2})
    assert (tmp_path / "CURRENT").read_text() == before
    assert (tmp_path / "CURRENT.tmp").read_text().startswith("gen-000002.json ")  # the unfinished write


def test_checksums_refuse_a_changed_manifest(tmp_path):
    name = storage.commit_generation(tmp_path, {"generation": 3, "rows": 10})
    recorded = storage.current_generation(tmp_path)[1]
    path = tmp_path / name
    path.write_bytes(path.read_bytes().replace(b'"rows":10', b'"rows":11'))
    with pytest.raises(IndexStateError, match="checksum recorded in CURRENT"):
        storage.read_generation(tmp_path, name, recorded)
    with pytest.raises(IndexStateError, match="its own checksum"):  # without CURRENT's digest
        storage.read_generation(tmp_path, name, None)
    with pytest.raises(IndexStateError, match="is missing"):
        storage.read_generation(tmp_path, "gen-000004.json", None)


def test_a_legacy_manifest_is_checked_by_its_checksum_member(tmp_path):
    body = {"generation": 1, "rows": 2}
    legacy = _sha(json.dumps(body, sort_keys=True).encode())
    (tmp_path / "gen-000001.json").write_text(json.dumps({**body, "checksum": legacy}, indent=2))
    assert storage.read_generation(tmp_path, "gen-000001.json", None)["rows"] == 2
    (tmp_path / "gen-000002.json").write_text(json.dumps({**body, "rows": 3, "checksum": legacy}, indent=2))
    with pytest.raises(IndexStateError, match="its own checksum"):
        storage.read_generation(tmp_path, "gen-000002.json", None)


def test_generations_are_numbered_and_sorted_by_number(tmp_path):
    for name in ("gen-000010.json", "gen-000002.json", "gen-1000000.json", "gen-12.json", "gen-000003.txt",
                 "CURRENT"):
        (tmp_path / name).write_text("")
    assert storage.generation_names(tmp_path) == ["gen-000002.json", "gen-000010.json", "gen-1000000.json"]
    assert [storage.generation_number(n) for n in ("gen-000010.json", "gen-1000000.json", "gen-12.json")] \
        == [10, 1000000, 0]
    assert storage.generation_names(tmp_path / "absent") == []


def test_current_is_none_without_a_commit_and_refused_when_damaged(tmp_path):
    assert storage.current_generation(tmp_path) is None
    (tmp_path / "CURRENT").write_text("gen-7.json abc\n")
    with pytest.raises(IndexStateError, match="CURRENT is damaged"):
        storage.current_generation(tmp_path)


def test_cleanup_keeps_the_newest_generations_and_the_segments_they_use(tmp_path):
    segs = tmp_path / storage.SEGMENTS
    for n in (1, 2, 3):
        (segs / f"s{n}").mkdir(parents=True)
        storage.commit_generation(tmp_path, {"generation": n, "segments": [{"name": f"s{n}"}]})
    (segs / "orphan").mkdir()                                   # no generation uses it
    (tmp_path / "gen-000004.json").write_text("{}")             # written by a save that never committed
    (tmp_path / "x.tmp").write_text("")                         # a temp file of an unfinished save
    (tmp_path / "manifest.json").write_text("{}")               # a format-1 leftover
    removed = storage.cleanup(tmp_path, keep_generations=2)
    assert removed == ["gen-000001.json", "gen-000004.json", "manifest.json", "x.tmp",
                       "segments/orphan", "segments/s1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CURRENT", "gen-000002.json", "gen-000003.json",
                                                          "segments"]
    assert sorted(p.name for p in segs.iterdir()) == ["s2", "s3"]


def test_cleanup_with_the_current_segments_given(tmp_path):
    (tmp_path / storage.SEGMENTS / "old").mkdir(parents=True)
    (tmp_path / storage.SEGMENTS / "new").mkdir()
    storage.commit_generation(tmp_path, {"generation": 1, "segments": [{"name": "old"}]})
    storage.commit_generation(tmp_path, {"generation": 2, "segments": [{"name": "new"}]})
    assert storage.cleanup(tmp_path, keep_generations=1, current_segments=["new"]) == \
        ["gen-000001.json", "segments/old"]
    assert storage.cleanup(tmp_path / "empty") == []  # no CURRENT: nothing is touched


def test_write_durable_replaces_the_file_atomically(tmp_path):
    target = tmp_path / "CURRENT"
    target.write_bytes(b"old")
    storage.write_durable(target, b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CURRENT"]


def test_writer_lock_excludes_other_writers_and_is_reentrant(tmp_path):
    root = tmp_path / "idx"
    entered = threading.Event()

    def other_writer() -> None:
        with storage.writer_lock(root):
            entered.set()

    with storage.writer_lock(root):
        assert (root / ".lock").is_file()
        with storage.writer_lock(root):  # the same thread again (an upgrade that saves)
            pass
        with open(root / ".lock", "a+") as fh, pytest.raises(BlockingIOError):  # another process's view
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        thread = threading.Thread(target=other_writer)
        thread.start()
        assert not entered.wait(0.3)  # a second writer waits
    thread.join(5)
    assert entered.is_set()
    with open(root / ".lock", "a+") as fh:  # released: anyone may take it now
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def test_crash_point_is_a_no_op_unless_named(monkeypatch):
    monkeypatch.delenv("RAGKIT_CRASH_AT", raising=False)
    for step in storage.CRASH_POINTS:
        storage.crash_point(step)  # returns
    assert storage.CRASH_POINTS[0] == "save:segment-partial" and storage.CRASH_POINTS[-1] == "save:cleanup"
