"""Property-based tests (hypothesis): isolation, deletion and rebuild-equality under random updates.

Random corpora (tenants, ACL groups, types, dates), random callers, queries, filters and
update sequences (upsert, delete, save + reload, compaction) over the hashing embedder.
Every document's text carries a marker unique to its id *and version* (``mk<id>v<n>``), so
a leak or a resurrected old version is visible in any delivered string.

1. No leak: every row, hit, section, tool result and related-document summary belongs to a
   document the caller may read under the filters, and no string carries the marker of
   another document (search, parent expansion, search_knowledge, retrieve_documents,
   related_documents).
2. Deleted and replaced versions never resurface on any of those paths, even when searched
   for by their own marker.
3. After any update sequence the index equals one rebuilt from scratch on the final corpus:
   same documents and chunks, same BM25 scores, same dense scores, same scope masks.

The fast suite runs a few dozen cases per property; ``-m slow`` runs ``RAGKIT_PROPERTY_CASES``
(default 3400) per property, over 10,000 in all. Each test prints how many cases it ran.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hashing import HashEmbedder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragkit import Document, Envelope, Filters, Funnel, FunnelSettings, Index, Scope
from ragkit.core import ScopeError
from ragkit.index import storage

EMB = HashEmbedder()
WORDS = ["settlement", "cutoff", "eur", "ledger", "payout", "acme-9", "e-4471", "runbook", "policy",
         "batch", "clearing", "gateway"]
IDS = [f"d{i}" for i in range(8)]
TENANTS = ["acme", "globex", "global"]
GROUPS = ["ops", "finance"]
TYPES = ["runbook", "policy", "ticket"]
DATES = [dt.datetime(2026, m, 1, tzinfo=dt.timezone.utc) for m in (1, 3, 6)]
FAST = 30
SLOW = int(os.environ.get("RAGKIT_PROPERTY_CASES", "3400"))
COUNTS: dict[str, int] = {}
TMP = "/dev/shm" if os.path.isdir("/dev/shm") else None



@pytest.fixture(autouse=True, scope="module")
def _no_fsync():
    """Throwaway indexes skip fsync (crash safety is tested, with fsync, in test_crash.py)."""
    storage.FSYNC = False
    yield
    storage.FSYNC = True


doc_spec = st.fixed_dictionaries({
    "doc_id": st.sampled_from(IDS), "tenant": st.sampled_from(TENANTS),
    "acl": st.lists(st.sampled_from(GROUPS), max_size=2, unique=True), "type": st.sampled_from(TYPES),
    "published": st.sampled_from(DATES), "links": st.lists(st.sampled_from(IDS), max_size=2, unique=True),
    "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), "sections": st.integers(1, 3)})
corpus_spec = st.lists(doc_spec, min_size=1, max_size=6, unique_by=lambda d: d["doc_id"])
op_spec = st.one_of(st.tuples(st.just("upsert"), doc_spec),
                    st.tuples(st.just("delete"), st.sampled_from(IDS)),
                    st.tuples(st.just("reload"), st.none()), st.tuples(st.just("compact"), st.none()))
caller_spec = st.one_of(
    st.builds(lambda t, g: Scope(t, g), st.sampled_from(["acme", "globex"]),
              st.lists(st.sampled_from(GROUPS), max_size=2, unique=True)),
    st.builds(lambda g: Scope("*", g), st.lists(st.sampled_from(GROUPS), max_size=2, unique=True)))
query_spec = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
filters_spec = st.fixed_dictionaries({
    "doc_types": st.lists(st.sampled_from(TYPES), max_size=2, unique=True),
    "narrow_tenant": st.booleans(), "published_after": st.one_of(st.none(), st.sampled_from(DATES))})


def _doc(spec: dict, version: int) -> Document:
    marker = f"mk{spec['doc_id']}v{version}"
    body = "".join(f"## Part {s}\n\n{' '.join(spec['words'][s::spec['sections']])} {marker}\n\n"
                   for s in range(spec["sections"]))
    env = Envelope(spec["doc_id"], title=f"Doc {spec['doc_id']}", version=str(version), tenant=spec["tenant"],
                   acl_groups=tuple(spec["acl"]), source_type=spec["type"], published_at=spec["published"],
                   links=tuple(x for x in spec["links"] if x != spec["doc_id"]))
    return Document(env, f"# Doc {spec['doc_id']}\n\n{marker} intro\n\n{body}")


def _filters(spec: dict, scope: Scope) -> Filters:
    tenants: tuple[str, ...] = ()
    if spec["narrow_tenant"]:
        tenants = ("global",) if scope.tenant == "*" else (scope.tenant,)
    return Filters(doc_types=tuple(spec["doc_types"]), tenants=tenants,
                   published_after=spec["published_after"])


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _doc_ids(value) -> list[str]:
    if isinstance(value, dict):  # an error's "example" call is a fixed illustration, not a read
        return ([value["doc_id"]] if isinstance(value.get("doc_id"), str) else []) + \
            [d for k, v in value.items() if k != "example" for d in _doc_ids(v)]
    if isinstance(value, list):
        return [d for v in value for d in _doc_ids(v)]
    return []


def _apply(ops, corpus: list[dict], tmp: Path):
    """Build from ``corpus``, apply ``ops``; return the index, the live docs and every retired marker."""
    versions = {s["doc_id"]: 1 for s in corpus}
    live = {s["doc_id"]: _doc(s, 1) for s in corpus}
    retired: set[str] = set()
    idx = Index.build(list(live.values()), embedder=EMB)
    saved = False
    for kind, arg in ops:
        if kind == "upsert":
            v = versions.get(arg["doc_id"], 0) + 1
            versions[arg["doc_id"]] = v
            if arg["doc_id"] in live:
                retired.add(f"mk{arg['doc_id']}v{v - 1}")
            live[arg["doc_id"]] = _doc(arg, v)
            idx.add([live[arg["doc_id"]]])
        elif kind == "delete" and arg in live and len(live) > 1:
            retired.add(f"mk{arg}v{versions[arg]}")
            del live[arg]
            idx.delete([arg])
        elif kind == "reload":
            idx.save(tmp)
            saved = True
            idx = Index.load(tmp, embedder=EMB)
        elif kind == "compact":
            idx.compact()
    if saved:
        idx.save(tmp)
        idx = Index.load(tmp, embedder=EMB)
    return idx, live, retired


def _read_everything(idx: Index, scope: Scope, filters: Filters, query: str) -> list:
    """Every read path a caller has: raw retrievers, the funnel with expansion, the three tools."""
    from ragkit import Toolbox

    out: list = []
    snap = idx.snapshot()
    mask = snap.mask(scope, filters)
    for ranking in (snap.search_lexical(query, 50, mask), snap.search_dense(query, 50, mask)):
        out += [(snap.documents[snap.rows[r].doc_id].envelope, snap.rows[r].text) for r in ranking.ids]
    funnel = Funnel(idx, FunnelSettings(rerank_mode="none", candidates=20, deliver=6))
    res = funnel.search(query, scope=scope, filters=filters)
    out += [(h.envelope, h.evidence) for h in res.hits] + [(h.envelope, h.text) for h in res.hits]
    tools = Toolbox(idx, scope, funnel=funnel)
    answers = [tools.search_knowledge(query, k=6)]
    answers += [tools.retrieve_documents(list(IDS[i:i + 4])) for i in range(0, len(IDS), 4)]
    answers += [tools.related_documents(d) for d in IDS]
    out += [("tool", a) for a in answers]
    return out


def _check_no_leak(idx: Index, live: dict[str, Document], retired: set[str], scope: Scope,
                   filters: Filters, query: str) -> None:
    def may_read(env: Envelope, with_filters: bool = True) -> bool:
        return scope.allows(env) and (not with_filters or filters.allows(env))

    forbidden = {f"mk{d}v{doc.envelope.version}" for d, doc in live.items() if not scope.allows(doc.envelope)}
    forbidden |= retired
    for query_text in (query, *sorted(forbidden)[:1]):  # also search for hidden markers by name
        for env, payload in _read_everything(idx, scope, filters, query_text):
            if env == "tool":
                ids = _doc_ids(payload)
                assert all(d in live and scope.allows(live[d].envelope) for d in ids), (ids, scope)
                text = " ".join(_strings(payload)).replace(query_text, "")  # the tool echoes the query
            else:
                assert env.doc_id in live and may_read(env), (env.doc_id, scope, filters)
                assert live[env.doc_id].envelope == env  # the current envelope, not a stale copy
                text = payload
            leaked = [m for m in forbidden if m in text]
            assert not leaked, (leaked, scope)


def _check_rebuild_equal(idx: Index, live: dict[str, Document], scope: Scope, filters: Filters,
                         query: str) -> None:
    ref = Index.build(list(live.values()), embedder=EMB)
    assert {k: (d.envelope, d.text) for k, d in idx.documents.items()} == \
        {k: (d.envelope, d.text) for k, d in ref.documents.items()}
    assert sorted(c.chunk_id for c in idx.rows) == sorted(c.chunk_id for c in ref.rows)
    assert sorted(idx.sections) == sorted(ref.sections)
    mine, theirs = idx.snapshot(), ref.snapshot()
    m1, m2 = mine.mask(scope, filters), theirs.mask(scope, filters)
    assert {mine.rows[r].chunk_id for r in np.flatnonzero(m1)} == \
        {theirs.rows[r].chunk_id for r in np.flatnonzero(m2)}
    n = max(1, len(mine.rows))
    for search in ("search_lexical", "search_dense"):
        a, b = getattr(mine, search)(query, n, None), getattr(theirs, search)(query, n, None)
        got = {mine.rows[r].chunk_id: s for r, s in zip(a.ids, a.scores, strict=True)}
        want = {theirs.rows[r].chunk_id: s for r, s in zip(b.ids, b.scores, strict=True)}
        assert got.keys() == want.keys(), search
        assert all(abs(got[k] - want[k]) <= 1e-5 * max(1.0, abs(want[k])) for k in want), search


def _count(name: str) -> None:
    COUNTS[name] = COUNTS.get(name, 0) + 1


def _no_leak_case(corpus, ops, caller, fspec, query):
    _count("no_leak")
    with tempfile.TemporaryDirectory(dir=TMP) as tmp:
        idx, live, retired = _apply(ops, corpus, Path(tmp) / "idx")
    filters = _filters(fspec, caller)
    try:
        filters.check_narrows(caller)
    except ScopeError:
        return
    _check_no_leak(idx, live, retired, caller, filters, query)


def _rebuild_case(corpus, ops, caller, fspec, query):
    _count("rebuild_equal")
    with tempfile.TemporaryDirectory(dir=TMP) as tmp:
        idx, live, _retired = _apply(ops, corpus, Path(tmp) / "idx")
    _check_rebuild_equal(idx, live, caller, _filters(fspec, caller), query)


def _deleted_case(corpus, ops, query):
    _count("deleted_never_resurface")
    with tempfile.TemporaryDirectory(dir=TMP) as tmp:
        idx, live, retired = _apply(ops, corpus, Path(tmp) / "idx")
    operator = Scope.operator()
    for text in (query, *sorted(retired)[:2]):
        for env, payload in _read_everything(idx, operator, Filters(), text):
            strings = " ".join(_strings(payload)).replace(text, "") if env == "tool" else payload
            assert not [m for m in retired if m in strings], text
            if env != "tool":
                assert env.doc_id in live and live[env.doc_id].envelope.version == env.version


ARGS = dict(corpus=corpus_spec, ops=st.lists(op_spec, max_size=6), caller=caller_spec, fspec=filters_spec,
            query=query_spec)
DEL_ARGS = dict(corpus=corpus_spec, ops=st.lists(op_spec, min_size=1, max_size=8), query=query_spec)


def _settings(n: int):
    return settings(max_examples=n, deadline=None, database=None, derandomize=n == FAST,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_settings(FAST)
@given(**ARGS)
def test_no_cross_scope_text_on_any_read_path(corpus, ops, caller, fspec, query):
    _no_leak_case(corpus, ops, caller, fspec, query)


@_settings(FAST)
@given(**ARGS)
def test_updates_equal_a_rebuild(corpus, ops, caller, fspec, query):
    _rebuild_case(corpus, ops, caller, fspec, query)


@_settings(FAST)
@given(**DEL_ARGS)
def test_deleted_and_replaced_versions_never_resurface(corpus, ops, query):
    _deleted_case(corpus, ops, query)


@_settings(SLOW)
@given(**ARGS)
def _no_leak_many(corpus, ops, caller, fspec, query):
    _no_leak_case(corpus, ops, caller, fspec, query)


@_settings(SLOW)
@given(**ARGS)
def _rebuild_many(corpus, ops, caller, fspec, query):
    _rebuild_case(corpus, ops, caller, fspec, query)


@_settings(SLOW)
@given(**DEL_ARGS)
def _deleted_many(corpus, ops, query):
    _deleted_case(corpus, ops, query)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "run"), [("no_leak", _no_leak_many), ("rebuild_equal", _rebuild_many),
                                           ("deleted_never_resurface", _deleted_many)])
def test_properties_many_cases(name, run, capsys):
    """The slow run: SLOW generated cases per property (3 x 3400 = 10,200 by default)."""
    before = COUNTS.get(name, 0)
    run()
    ran = COUNTS[name] - before
    with capsys.disabled():
        print(f"\n{name}: {ran} generated cases, 0 leaks or mismatches (any would fail this test)")
    assert ran >= SLOW


def test_zz_report_case_counts(capsys):
    """Prints the generated cases this session ran (and the leaks: any leak fails a test above)."""
    with capsys.disabled():
        print(f"\nproperty cases run: {sum(COUNTS.values())} {COUNTS}; "
              "leaks found: 0 (a leak fails the test)")
    assert sum(COUNTS.values()) >= 3 * FAST or not COUNTS
