"""The Milvus backend against a live engine (the `milvus_uri` fixture: embedded Milvus on loopback,
or RAGKIT_MILVUS_URI / RAGKIT_MILVUS_TOKEN for a real cluster)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from conftest import FIXTURES
from hashing import HashEmbedder
from test_backend import WordOverlapReranker

from ragkit import (
    Document,
    Envelope,
    Filters,
    Funnel,
    Index,
    Scope,
    Toolbox,
    ValidationError,
    chunk_documents,
    load_corpus,
)
from ragkit.backends import MilvusConfig, MilvusIndex, MilvusSelection, quote, scope_expression
from ragkit.core import ScopeError, parse_time
from ragkit.index import Backend, DocumentLinks, as_backend

pytestmark = pytest.mark.milvus

ODD = 'acme" or tenant != "x'  # a tenant name that would widen an unescaped expression
SLASH = "back\\slash"


def _extra_docs():
    mk = lambda doc_id, tenant, text, **kw: Document(  # noqa: E731
        Envelope(doc_id, title=doc_id, tenant=tenant, source_type="wiki", **kw), text)
    return [mk("odd-tenant-note", ODD, "# Odd note\n\nQuokka ledger rotation for the odd tenant.\n"),
            mk("slash-tenant-note", SLASH, "# Slash note\n\nQuokka ledger rotation for the slash tenant.\n"),
            mk("dated-note", "acme", "# Dated\n\nQuokka ledger rotation, valid in January only.\n",
               acl_groups=("ops",), published_at=parse_time("2026-01-02"),
               effective_from=parse_time("2026-01-01"), effective_to=parse_time("2026-02-01"))]


@pytest.fixture(scope="module")
def memory():
    docs, _ = load_corpus(FIXTURES / "corpus")
    return Index.build([*docs, *_extra_docs()], embedder=HashEmbedder())


@pytest.fixture(scope="module")
def milvus(milvus_uri, memory):
    config = MilvusConfig(milvus_uri, token=os.environ.get("RAGKIT_MILVUS_TOKEN", ""),
                          collection="ragkit_test_milvus")
    index = MilvusIndex.from_index(memory, config, drop_existing=True)
    yield index
    index.drop()


def _ids(snap, rows):
    return {c.chunk_id for c in as_backend(snap).fetch([int(r) for r in rows])}


SCOPES = [
    (Scope.operator(), Filters()),
    (Scope("acme"), Filters()),
    (Scope("acme", ["ops"]), Filters()),
    (Scope("acme", ["ops"]), Filters.make(valid_at="2026-01-15")),
    (Scope("acme", ["ops"]), Filters.make(valid_at="2026-03-01", drop_unknown_validity=True)),
    (Scope("acme", ["ops"]), Filters.make(published_after="2026-01-01", published_before="2026-01-03")),
    (Scope("acme", all_groups=True), Filters.make(doc_type="wiki,runbook")),
    (Scope(ODD), Filters()),
    (Scope(SLASH), Filters()),
    (Scope("nobody"), Filters.make(tenant="global")),
]


@pytest.mark.parametrize("scope, filters", SCOPES, ids=str)
def test_scope_in_the_engine_selects_exactly_the_in_memory_rows(memory, milvus, scope, filters):
    snap, mem = milvus.snapshot(), memory.snapshot()
    sel = snap.select(scope, filters)
    assert isinstance(sel, MilvusSelection) and sel.expr == scope_expression(scope, filters)
    mask = mem.mask(scope, filters)
    assert _ids(snap, np.flatnonzero(np.asarray(sel))) == _ids(mem, np.flatnonzero(mask))
    assert sel.count() == int(mask.sum())
    # and inside the searches, before top-k: no out-of-scope row at any width
    for k in (1, 5, 1000):
        for ranking in (snap.search_lexical("quokka ledger rotation settlement", k, sel),
                        snap.search_dense("quokka ledger rotation settlement", k, sel)):
            envs = [snap.envelope(r) for r in ranking.ids]
            assert all(scope.allows(e) and filters.allows(e) for e in envs)
    # the documents' envelopes: the same documents, by the one access rule (Scope.allows)
    readable = [env.doc_id for env in snap.envelopes(scope, filters)]
    assert sorted(readable) == sorted(env.doc_id for env in as_backend(mem).envelopes(scope, filters))
    assert [env.doc_id for env in snap.envelopes(scope, filters, limit=2)] == readable[:2]


def test_values_are_escaped_never_spliced(milvus):
    assert quote(ODD) == '"acme\\" or tenant != \\"x"'
    assert quote(SLASH) == '"back\\\\slash"'
    with pytest.raises(ValidationError, match="control character"):
        quote("acme\n or true")
    snap = milvus.snapshot()
    odd = snap.search_lexical("quokka ledger rotation", 50, snap.select(Scope(ODD), Filters()))
    seen = {snap.envelope(r).tenant for r in odd.ids}
    assert ODD in seen and seen <= {ODD, "global"}  # not acme, not every tenant
    acme = snap.search_lexical("quokka ledger rotation", 50, snap.select(Scope("acme", ["ops"]), Filters()))
    seen = {snap.envelope(r).tenant for r in acme.ids}
    assert "acme" in seen and seen <= {"acme", "global"}
    with pytest.raises(ScopeError):
        snap.select(Scope("acme"), Filters.make(tenant=ODD))


def test_search_parity_on_the_fixture_corpus(memory, milvus):
    snap, mem = milvus.snapshot(), memory.snapshot()
    assert snap.size() == len(mem.rows)
    assert (snap.stats()["documents"], snap.stats()["sections"]) == (len(mem.documents), len(mem.sections))
    scope = Scope("acme", ["ops"])
    for query in ("E-4471 bank file rejected", "EUR cutoff", "reconcile settlement job"):
        dense_m = mem.search_dense(query, 10, mem.mask(scope))
        dense_v = snap.search_dense(query, 10, snap.select(scope, Filters()))
        np.testing.assert_allclose(dense_m.scores, dense_v.scores, rtol=1e-4, atol=1e-5)
        # same vectors, exact search: the same rows (ties at the cut may be broken differently)
        cut = dense_m.scores[-1] + 1e-4
        above = [{c.chunk_id for c, x in zip(as_backend(s).fetch(d.ids), d.scores, strict=True) if x > cut}
                 for s, d in ((mem, dense_m), (snap, dense_v))]
        assert above[0] == above[1]
        lex_m = mem.search_lexical(query, 10, mem.mask(scope))
        lex_v = snap.search_lexical(query, 10, snap.select(scope, Filters()))
        assert lex_v.ids, query
        # BM25 tokenisation differs (Milvus 'english' analyzer vs ragkit's identifier-keeping tokenizer):
        # the best row agrees, the lists overlap mostly
        assert mem.rows[lex_m.ids[0]].chunk_id == snap.fetch(lex_v.ids[:1])[0].chunk_id, query
        overlap = len(_ids(mem, lex_m.ids) & _ids(snap, lex_v.ids)) / max(len(lex_m.ids), 1)
        assert overlap >= 0.5, (query, overlap)


def test_reads_by_id_equal_the_in_memory_backend(memory, milvus):
    snap, mem = milvus.snapshot(), as_backend(memory)
    assert isinstance(snap, Backend) and as_backend(milvus) is snap
    assert snap.tenants() == mem.tenants() and ODD in snap.tenants()
    for doc_id in memory.snapshot().documents:
        assert snap.document(doc_id) == mem.document(doc_id), doc_id
        assert snap.sections_of(doc_id) == mem.sections_of(doc_id), doc_id
        for sec in mem.sections_of(doc_id):
            assert snap.section(sec.chunk_id) == sec
    for chunk in memory.snapshot().rows[:20]:
        row = snap.row_for(chunk.chunk_id)
        assert row is not None and snap.fetch([row]) == [chunk]
    assert snap.parent(snap.row_for(memory.snapshot().rows[0].chunk_id)) == mem.parent(0)
    # unknown ids, and ids no stored value can have, are absent (never an error, never a splice)
    for missing in ("no-such-doc", "bad\nid", 'x" or kind != "y'):
        assert snap.document(missing) is None and snap.section(missing + "#a") is None
        assert snap.sections_of(missing) == [] and snap.row_for(missing + "#a~0") is None
    for doc_id in ("settlement-runbook-v2", "no-such-doc"):
        assert snap.links(doc_id) == mem.links(doc_id)


def test_links_are_read_both_ways(milvus_uri):
    mk = lambda doc_id, text, **kw: Document(Envelope(doc_id, tenant="acme", **kw), text)  # noqa: E731
    # a links to b; c replaces b, named on both sides (counted once)
    docs = [mk("link-a", "# A\n\nSee note B.\n", links=("link-b",)),
            mk("link-b", "# B\n\nReplaced by C.\n", superseded_by=("link-c",)),
            mk("link-c", "# C\n\nReplaces B.\n", supersedes=("link-b",))]
    config = MilvusConfig(milvus_uri, token=os.environ.get("RAGKIT_MILVUS_TOKEN", ""),
                          collection="ragkit_test_milvus_links")
    index = MilvusIndex.from_index(Index.build(docs, embedder=HashEmbedder()), config, drop_existing=True)
    try:
        snap = index.snapshot()
        assert snap.links("link-b") == DocumentLinks("link-b", linked_from=("link-a",),
                                                     superseded_by=("link-c",))
        assert snap.links("link-c") == DocumentLinks("link-c", supersedes=("link-b",))
        assert snap.links("link-a") == DocumentLinks("link-a")
        assert snap.tenants() == ["acme"]
        assert sorted(e.doc_id for e in snap.envelopes(Scope("acme"))) == ["link-a", "link-b", "link-c"]
        assert snap.envelopes(Scope("other")) == [] and len(snap.envelopes(Scope("acme"), limit=1)) == 1
    finally:
        index.drop()


def test_funnel_tools_and_trace_unchanged_on_milvus(memory, milvus):
    scope, filters = Scope("acme", ["ops"]), Filters.make(valid_at="2026-01-19")
    runs = []
    for index in (memory, milvus):
        funnel = Funnel(index, reranker=WordOverlapReranker())
        result = funnel.search("E-4471 bank file rejected", scope=scope, filters=filters, candidates=10,
                               rerank_mode="none", retrievers=("dense",))
        runs.append(result)
        frame = result.to_frame()
        assert frame.delivered.sum() == len(result) > 0
        full = funnel.search("E-4471 bank file rejected", scope=scope, filters=filters, candidates=10)
        ranks = full.to_frame()
        assert ranks.lexical_rank.notna().any() and ranks.dense_rank.notna().any()
        assert set(full.trace.timings_ms) >= {"filter", "lexical", "dense", "fuse", "rerank", "expand"}
        box = Toolbox(index, scope, funnel=funnel)
        found = box.call("search_knowledge", {"query": "E-4471 bank file rejected", "k": 3})
        assert "error" not in found, found
        cited = [r["citation"] if isinstance(r, dict) else r for r in found.get("results", [])]
        assert cited
        got = box.call("retrieve_documents", {"ids": ["settlement-runbook-v2"]})
        assert "error" not in got and "E-4471" in str(got)
        hidden = box.call("retrieve_documents", {"ids": ["odd-tenant-note"]})
        assert "Quokka" not in str(hidden)  # another tenant: never read
    mem_run, milvus_run = runs
    assert [(h.citation, h.evidence) for h in mem_run.hits] == \
        [(h.citation, h.evidence) for h in milvus_run.hits]
    assert mem_run.trace.rows_in_scope == milvus_run.trace.rows_in_scope


def test_deleted_never_resurfaces_and_old_text_never_returns(milvus_uri):
    config = MilvusConfig(milvus_uri, token=os.environ.get("RAGKIT_MILVUS_TOKEN", ""),
                          collection="ragkit_test_milvus_updates")
    embedder = HashEmbedder()
    index = MilvusIndex.create(config, settings=Index.build(
        [Document(Envelope("seed"), "# Seed\n\nseed text\n")], embedder=embedder).settings,
        embedder=embedder, dim=embedder.dim, drop_existing=True)
    try:
        def put(doc):
            chunks = chunk_documents([doc], index.settings.chunker)
            vectors = embedder.encode([c.contextual_text() for c in chunks if c.kind == "chunk"])
            return index.write([doc], chunks, vectors)

        old = "# Zebra\n\nZebra quantum flux 9931 calibrates the left turbine.\n"
        new = "# Zebra\n\nNarwhal sonar 4410 aligns the right turbine.\n"
        other = Document(Envelope("other-doc"), "# Other\n\nAn unrelated turbine note.\n")
        assert put(Document(Envelope("zebra-doc"), old)) >= 1 and put(other) >= 1
        before = index.snapshot()
        hit = before.search_lexical("Zebra quantum flux 9931", 10, None)
        assert any(c.doc_id == "zebra-doc" for c in before.fetch(hit.ids))

        assert index.delete(["zebra-doc"]) >= 1
        for snap in (before, index.snapshot()):  # an old snapshot too: Milvus no longer returns it
            for ranking in (snap.search_lexical("Zebra quantum flux 9931", 100, None),
                            snap.search_dense(old, 100, None)):
                assert all(c.doc_id != "zebra-doc" for c in snap.fetch(ranking.ids))
        assert index.snapshot().document("zebra-doc") is None

        put(Document(Envelope("zebra-doc", version="2"), new))  # re-added with changed text
        snap = index.snapshot()
        found = snap.search_lexical("Narwhal sonar 4410", 10, None)
        assert [c.doc_id for c in snap.fetch(found.ids)][:1] == ["zebra-doc"]
        for ranking in (snap.search_lexical("Zebra quantum flux 9931 calibrates", 100, None),
                        snap.search_dense(old, 100, None)):
            assert all("Zebra quantum" not in c.text for c in snap.fetch(ranking.ids))
        assert snap.document("zebra-doc").text == new
        assert sum(c.doc_id == "zebra-doc" for c in snap.fetch(range(snap.size()))) == \
            sum(c.kind == "chunk" for c in chunk_documents([Document(Envelope("zebra-doc"), new)],
                                                           index.settings.chunker))
        reopened = MilvusIndex.open(config, embedder=embedder)  # a second handle sees the same state
        assert reopened.snapshot().size() == snap.size()
        with pytest.raises(ValidationError, match="vectors"):
            index.write([other], chunk_documents([other], index.settings.chunker),
                        np.zeros((0, embedder.dim)))
        # a new version the engine would refuse (a chunk over the VARCHAR limit) keeps the old rows
        huge = Document(Envelope("zebra-doc", version="3"), "# Zebra\n\n" + "x" * 70_000 + "\n")
        huge_chunks = [c for c in chunk_documents([huge], index.settings.chunker)]
        with pytest.raises(ValidationError, match="VARCHAR"):
            index.write([huge], huge_chunks,
                        np.zeros((sum(c.kind == "chunk" for c in huge_chunks), embedder.dim), np.float32))
        kept = index.snapshot()
        assert kept.document("zebra-doc").text == new
        narwhal = kept.search_lexical("Narwhal sonar 4410", 10, None)
        assert any(c.doc_id == "zebra-doc" for c in kept.fetch(narwhal.ids))
    finally:
        index.drop()


def test_config_validates_and_reads_the_environment(monkeypatch):
    with pytest.raises(ValidationError, match="collection"):
        MilvusConfig("http://127.0.0.1:1", collection="bad-name")
    monkeypatch.delenv("RAGKIT_MILVUS_URI", raising=False)
    with pytest.raises(ValidationError, match="RAGKIT_MILVUS_URI"):
        MilvusConfig.from_env()
    monkeypatch.setenv("RAGKIT_MILVUS_URI", "http://db:19530")
    monkeypatch.setenv("RAGKIT_MILVUS_TOKEN", "root:Milvus")
    assert MilvusConfig.from_env("c1") == dataclasses.replace(
        MilvusConfig("http://db:19530", "root:Milvus"), collection="c1")


# -- no server needed: the expressions and the stored entities, hand-computed -------------------------

def test_scope_expression_is_the_scope_rule_term_by_term():
    assert scope_expression(Scope.operator()) == ""  # every row
    assert scope_expression(Scope("acme")) == 'tenant in ["acme", "global"] and array_length(acl) == 0'
    # 2026-01-15 is 20468 days after the epoch: 20468 * 86400 * 10**6 microseconds
    m = 20468 * 86400 * 10**6
    assert scope_expression(Scope("acme", ["ops", "fin"]), Filters.make(valid_at="2026-01-15")) == (
        'tenant in ["acme", "global"] and (array_length(acl) == 0 or array_contains_any(acl, ["fin", "ops"]))'
        f" and (has_from == false or (has_from == true and eff_from <= {m}"
        f" and (has_to == false or eff_to > {m})))")


def test_long_texts_are_stored_in_parts_and_a_missing_part_hides_the_text():
    from ragkit.backends.milvus.schema import PIECE, assemble_texts, text_entities

    text = "a" * PIECE + "b" * PIECE + "c" * 5
    parts = text_entities("document", "d1", "d1", {"k": 1}, text)
    assert [p["part"] for p in parts] == [0, 1, 2] and len({p["pk"] for p in parts}) == 3
    assert assemble_texts(parts[::-1]) == {"d1": ({"k": 1}, text)}  # any order
    assert assemble_texts([parts[0], parts[2]]) == {}  # a write in flight: absent, never half a text
    assert assemble_texts(text_entities("section", "d1", "d1#s", {}, "")) == {"d1#s": ({}, "")}


def test_a_chunk_entity_refuses_what_a_filter_could_not_hold():
    from ragkit.backends.milvus.schema import ACL_CAPACITY, chunk_entity

    chunk = chunk_documents([Document(Envelope("d"), "# T\n\nbody\n")])[-1]
    vector = np.zeros(4, np.float32)
    ok = chunk_entity(chunk, Envelope("d", tenant="acme", acl_groups=("ops",)), vector)
    assert (ok["tenant"], ok["acl"], ok["has_published"], ok["published"]) == ("acme", ["ops"], False, 0)
    with pytest.raises(ValidationError, match="ACL groups"):
        chunk_entity(chunk, Envelope("d", acl_groups=tuple(f"g{i}" for i in range(ACL_CAPACITY + 1))), vector)
    with pytest.raises(ValidationError, match="control character"):
        chunk_entity(chunk, Envelope("d", tenant="acme\n"), vector)
