"""The backend seam (ragkit.index.backend): the funnel reads the in-memory index through it, unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from hashing import HashEmbedder

from ragkit import Document, Envelope, Filters, Funnel, Index, Scope, load_corpus
from ragkit.core import ScopeError
from ragkit.evaluation import IndexView
from ragkit.index import Backend, DocumentLinks, MaskSelection, SnapshotBackend, as_backend


class WordOverlapReranker:
    """Deterministic stand-in cross-encoder: shared words between query and passage."""

    name, version = "overlap", "1"

    def score(self, query, passages, **kwargs):
        q = set(query.lower().split())
        return np.array([len(q & set(p.lower().split())) + 1 / (1 + len(p)) for p in passages], np.float32)

    def count_pair_tokens(self, query, passages, **kwargs):
        return [len(query.split()) + len(p.split()) for p in passages]


@pytest.fixture(scope="module")
def index(corpus_dir):
    docs, _ = load_corpus(corpus_dir)
    return Index.build(docs, embedder=HashEmbedder())


@pytest.fixture(scope="module")
def corpus_dir():
    from conftest import FIXTURES

    return FIXTURES / "corpus"


def _direct(snap, query, scope, filters, k):
    """What the funnel read before the seam: the snapshot's own mask and searches."""
    mask = snap.mask(scope, filters)
    return int(mask.sum()), snap.search_lexical(query, k, mask), snap.search_dense(query, k, mask)


@pytest.mark.parametrize("scope, filters", [
    (Scope.operator(), Filters()),
    (Scope("acme", ["ops"]), Filters()),
    (Scope("acme"), Filters.make(valid_at="2026-01-19")),
    (Scope("acme", ["ops"]), Filters.make(doc_type="runbook,policy")),
])
def test_seam_returns_what_the_snapshot_returns(index, scope, filters):
    snap = index.snapshot()
    backend = as_backend(index)
    assert isinstance(backend, SnapshotBackend) and isinstance(backend, Backend)
    assert backend.snap is snap and backend.size() == len(snap.rows)
    sel = backend.select(scope, filters)
    assert isinstance(sel, MaskSelection)
    count, lex, den = _direct(snap, "E-4471 settlement cutoff", scope, filters, 10)
    assert sel.count() == count
    assert backend.search_lexical("E-4471 settlement cutoff", 10, sel) == lex
    assert backend.search_dense("E-4471 settlement cutoff", 10, sel) == den
    rows = lex.ids + den.ids
    assert backend.fetch(rows) == [snap.rows[r] for r in rows]
    assert [backend.envelope(r) for r in rows] == [snap.envelope(r) for r in rows]
    assert [backend.parent(r) for r in rows] == [snap.parent(r) for r in rows]


def test_funnel_through_the_seam_is_identical(index):
    """Same hits, scores and per-retriever ranks as the funnel computed straight from the snapshot."""
    snap = index.snapshot()
    funnel = Funnel(index, reranker=WordOverlapReranker())
    scope, filters = Scope("acme", ["ops"]), Filters.make(valid_at="2026-01-19")
    for mode in ("rrf", "none"):
        result = funnel.search("E-4471 bank file rejected", scope=scope, filters=filters, candidates=10,
                               rerank_mode=mode)
        count, lex, den = _direct(snap, "E-4471 bank file rejected", scope, filters, 10)
        assert result.trace.rows_in_scope == count and result.trace.rows_total == len(snap.rows)
        ranks = {c.row: (c.lexical_rank, c.dense_rank) for c in result.trace.candidates}
        assert {r: ranks[r][0] for r in lex.ids} == {r: i for i, r in enumerate(lex.ids, start=1)}
        assert {r: ranks[r][1] for r in den.ids} == {r: i for i, r in enumerate(den.ids, start=1)}
        assert result.hits and all(h.envelope == snap.envelope(h.row) for h in result.hits)
        # the funnel given the snapshot itself, or the seam object, returns the very same result
        again = Funnel(as_backend(snap), reranker=WordOverlapReranker()).search(
            "E-4471 bank file rejected", scope=scope, filters=filters, candidates=10, rerank_mode=mode)
        assert [(h.row, h.score, h.evidence) for h in again.hits] == \
            [(h.row, h.score, h.evidence) for h in result.hits]


def test_a_forwarding_view_is_wrapped_not_bypassed(index):
    """IndexView forwards unknown attributes; the seam must still read through its mask (hidden docs)."""
    snap = index.snapshot()
    hidden = snap.rows[0].doc_id
    view = IndexView(snap, hidden=[hidden])
    backend = as_backend(view)
    assert isinstance(backend, SnapshotBackend) and backend.snap is view
    result = Funnel(view, reranker=WordOverlapReranker()).search(snap.rows[0].text[:80], candidates=20)
    assert all(c.doc_id != hidden for c in result.trace.candidates)


def test_filters_that_widen_still_raise(index):
    with pytest.raises(ScopeError):
        as_backend(index).select(Scope("acme"), Filters.make(tenant="globex"))


def _linked_index():
    """Four documents: a links to b and replaces c; b links to a and is replaced by d (named twice)."""
    docs = [
        Document(Envelope("a", tenant="acme", source_type="runbook", links=("b",), supersedes=("c",)),
                 "# A\n\n## One\n\nalpha text here.\n\n## Two\n\nbeta text here.\n"),
        Document(Envelope("b", tenant="globex", source_type="policy", links=("a",), superseded_by=("d",)),
                 "# B\n\nbravo text.\n"),
        Document(Envelope("c", tenant="global", source_type="policy"), "# C\n\ncharlie text.\n"),
        Document(Envelope("d", tenant="acme", source_type="policy", acl_groups=("ops",), supersedes=("b",)),
                 "# D\n\ndelta text.\n"),
    ]
    return Index.build(docs, embedder=HashEmbedder())


def test_reads_by_id_through_the_seam():
    backend = as_backend(_linked_index())
    assert backend.document("a").envelope.links == ("b",) and backend.document("zzz") is None
    assert [c.chunk_id for c in backend.sections_of("a")] == ["a#one", "a#two"]  # by start
    assert backend.sections_of("zzz") == []
    assert "alpha text" in backend.section("a#one").text and backend.section("a#three") is None
    assert backend.row_for("a#two~0") == 1 and backend.fetch([1])[0].chunk_id == "a#two~0"
    assert backend.row_for("a#two~9") is None
    assert backend.tenants() == ["acme", "global", "globex"]


def test_envelopes_apply_the_scope_and_the_filters():
    backend = as_backend(_linked_index())
    ids = lambda envs: [e.doc_id for e in envs]  # noqa: E731
    assert ids(backend.envelopes(Scope("acme"))) == ["a", "c"]               # d needs the ops group
    assert ids(backend.envelopes(Scope("acme", ["ops"]))) == ["a", "c", "d"]
    assert ids(backend.envelopes(Scope("acme", ["ops"]), Filters.make(doc_type="policy"))) == ["c", "d"]
    assert ids(backend.envelopes(Scope.operator(), limit=2)) == ["a", "b"]


def test_links_in_both_directions():
    backend = as_backend(_linked_index())
    assert backend.links("a") == DocumentLinks("a", linked_from=("b",), supersedes=("c",), superseded_by=())
    assert backend.links("b") == DocumentLinks("b", linked_from=("a",), supersedes=(), superseded_by=("d",))
    assert backend.links("c") == DocumentLinks("c", superseded_by=("a",))
    assert backend.links("d") == DocumentLinks("d", supersedes=("b",))  # named by b and by d: listed once
    assert backend.links("zzz") == DocumentLinks("zzz")


def test_reads_by_id_respect_a_view_that_hides_documents():
    view = IndexView(_linked_index().snapshot(), hidden=["a"])
    backend = as_backend(view)
    assert backend.document("a") is None and backend.document("b") is not None
    assert [e.doc_id for e in backend.envelopes(Scope.operator())] == ["b", "c", "d"]
    assert backend.links("b") == DocumentLinks("b", superseded_by=("d",))  # a's link to b is not read
    assert backend.links("c") == DocumentLinks("c")  # only the hidden a named c
