"""Index views: hidden documents, replaced envelopes and a pinned row, without touching the index."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from ragkit import Scope
from ragkit.core.records import Document, Envelope
from ragkit.evaluation import CounterfactualSetup, IndexView


def tiny():
    """Three rows of two documents of tenant acme and one of globex; no retriever needed."""
    envs = {d: Envelope(doc_id=d, tenant=t) for d, t in (("a", "acme"), ("b", "acme"), ("g", "globex"))}
    rows = [SimpleNamespace(doc_id="a", anchor="x"), SimpleNamespace(doc_id="a", anchor="y"),
            SimpleNamespace(doc_id="b", anchor="x"), SimpleNamespace(doc_id="g", anchor="x")]
    docs = {d: Document(e, f"text of {d}") for d, e in envs.items()}

    class Base:
        documents, sections = docs, {}

        def __init__(self):
            self.rows = rows

        def mask(self, scope, filters=None):
            return np.array([scope.allows(envs[r.doc_id]) for r in rows])

        def envelope(self, row):
            return envs[rows[row].doc_id]

    return Base(), envs


def test_setup_finds_rows_tenants_and_builds_views():
    base, envs = tiny()
    setup = CounterfactualSetup(base)
    assert setup.tenants == ["acme", "globex"]
    assert setup.doc_rows == {"a": [0, 1], "b": [2], "g": [3]}
    assert (setup.row_of("a", "y"), setup.row_of("a", "nope"), setup.row_of("zzz", None)) == (1, 0, None)
    view = setup.view(hidden=["a"], envelopes={"b": dataclasses.replace(envs["b"], tenant="globex")})
    assert sorted(view.documents) == ["b", "g"] and view.snapshot() is view
    assert view.mask(Scope("acme")).tolist() == [False, False, False, False]   # a hidden, b moved away
    assert view.mask(Scope("globex")).tolist() == [False, False, True, True]
    assert view.envelope(2).tenant == "globex" and base.envelope(2).tenant == "acme"  # base untouched


def test_a_replacement_envelope_must_keep_its_doc_id():
    base, envs = tiny()
    with pytest.raises(Exception, match="has doc_id 'a'"):
        IndexView(base, envelopes={"b": envs["a"]})


@pytest.mark.slow
def test_view_hides_documents_everywhere(fixture_index):
    view = IndexView(fixture_index, hidden=["settlement-policy-v3"])
    assert "settlement-policy-v3" not in view.documents
    scope = Scope("acme", ["ops"])
    rows = [i for i, c in enumerate(view.rows) if c.doc_id == "settlement-policy-v3"]
    assert rows and not view.mask(scope)[rows].any()
    ranking = view.search_lexical("15:00 CET cutoff migrated tenants", 20, view.mask(scope))
    assert not set(ranking.ids) & set(rows)
    # the base index is untouched and nothing was re-encoded (vectors shared)
    assert fixture_index.mask(scope)[rows].all()
    assert view.vectors is fixture_index.vectors


@pytest.mark.slow
def test_view_replaces_envelopes_and_masks_by_them(fixture_index):
    env = fixture_index.documents["settlement-runbook-v2"].envelope
    view = IndexView(fixture_index, envelopes={env.doc_id: dataclasses.replace(env, tenant="globex")})
    rows = [i for i, c in enumerate(view.rows) if c.doc_id == env.doc_id]
    assert not view.mask(Scope("acme"))[rows].any() and view.mask(Scope("globex"))[rows].all()
    assert view.envelope(rows[0]).tenant == "globex"
    assert view.documents[env.doc_id].envelope.tenant == "globex"


@pytest.mark.slow
def test_pinned_row_is_first_in_both_lists_and_in_the_reranker_but_never_out_of_scope(fixture_index):
    row = next(i for i, c in enumerate(fixture_index.rows) if c.doc_id == "ops-1423-c3")
    view = IndexView(fixture_index, pinned=row)
    mask = view.mask(Scope("acme", ["ops"]))
    assert view.search_lexical("payout run", 5, mask).ids[0] == row
    assert view.search_dense("payout run", 5, mask).ids[0] == row
    # a caller outside the comment's ACL never gets it, pinned or not
    assert row not in view.search_lexical("payout run", 5, view.mask(Scope("acme", ["finance"]))).ids

    class Flat:
        def score(self, query, passages, **kw):
            return np.zeros(len(passages))

    wrapped = view.wrap_reranker(Flat())
    scores = wrapped.score("q", ["other", view.rows[row].contextual_text()])
    assert scores[1] > scores[0]
