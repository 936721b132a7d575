"""Tests for ragkit.retrieval.lexical: identifier tokens, hand-computed BM25, masks, engine parity."""

from __future__ import annotations

import importlib
import inspect
import math
import re
from pathlib import Path

import numpy as np
import pytest

from ragkit import ValidationError
from ragkit.retrieval import BM25Retriever, Ranking, tokenize

ENGINES = ["bm25s", "rank_bm25"]
REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- tokenize


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("E-4471", ["e-4471", "e", "4471"]),
        ("acme-9", ["acme-9", "acm", "9"]),
        ("reconcile_settlement", ["reconcile_settlement", "reconcil", "settlement"]),
        ("OPS-1423", ["ops-1423", "op", "1423"]),
        ("2026-01-15", ["2026-01-15", "2026", "01", "15"]),
    ],
)
def test_tokenize_keeps_identifier_whole_and_its_parts(identifier, expected):
    assert tokenize(f"See {identifier}.") == ["see", *expected]


def test_tokenize_stems_and_drops_stopwords_by_default():
    assert tokenize("The settlements were failing") == ["settlement", "were", "fail"]


def test_tokenize_can_turn_off_stemming_and_stopwords():
    assert tokenize("The settlements failing", stemmer=None, stopwords=None) == [
        "the",
        "settlements",
        "failing",
    ]
    assert tokenize("The cat sat", stemmer=None, stopwords=["cat"]) == ["the", "sat"]


def test_tokenize_identifier_itself_is_not_stemmed_or_stopworded():
    # "the-settlements" is an identifier: kept whole, only its parts are processed.
    assert tokenize("the-settlements") == ["the-settlements", "settlement"]


def test_tokenize_rejects_non_text_and_unknown_settings():
    with pytest.raises(ValidationError, match="expected a str"):
        tokenize(None)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="not a PyStemmer language"):
        tokenize("x", stemmer="klingon")
    with pytest.raises(ValidationError, match="stopwords='fr' is unknown"):
        tokenize("x", stopwords="fr")


# ---------------------------------------------------------------- scoring


@pytest.mark.parametrize("engine", ENGINES)
def test_bm25_scores_match_hand_computed_lucene_formula(engine):
    # N=3, avgdl=2, df(dog)=2: idf = ln(1 + 1.5/2.5) = ln 1.6
    # row 0: tf=1, dl=2 -> 1 / (1 + 1.5 * (0.25 + 0.75 * 2/2)) = 0.4
    # row 1: tf=2, dl=3 -> 2 / (2 + 1.5 * (0.25 + 0.75 * 3/2)) = 2 / 4.0625
    bm25 = BM25Retriever(["cat dog", "dog dog bird", "fish"], engine=engine, stemmer=None)
    ranking = bm25.search("dog", k=10)
    assert ranking.ids == [1, 0]
    assert ranking.scores == pytest.approx(
        [math.log(1.6) * 2 / 4.0625, math.log(1.6) * 0.4], rel=1e-6
    )


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "query", ["E-4471", "acme-9", "reconcile_settlement", "OPS-1423", "2026-01-15"]
)
def test_exact_identifier_query_finds_its_row_first(engine, query):
    texts = [
        "Settlement failed with error E-4471 for tenant acme-9 on 2026-01-15.",  # decoy mix
        "The job reconcile_settlement raised E-4471; see OPS-1423. Account acme-9, 2026-01-15.",
        "Error e 4471 and acme 9 and reconcile settlement ops 1423 on 2026 01 15, in words.",
        "Unrelated paragraph about lunch.",
    ]
    bm25 = BM25Retriever(texts, engine=engine)
    ranking = bm25.search(query, k=4)
    assert 1 in ranking.ids
    # Only rows holding the exact identifier outrank the row holding just its parts.
    exact_rows = [i for i, t in enumerate(texts) if query.lower() in t.lower()]
    assert set(ranking.ids[: len(exact_rows)]) == set(exact_rows)
    assert 3 not in ranking.ids


@pytest.mark.parametrize("engine", ENGINES)
def test_ties_break_by_smaller_row_id(engine):
    bm25 = BM25Retriever(["alpha beta", "gamma", "alpha beta", "alpha beta"], engine=engine)
    ranking = bm25.search("alpha", k=2)
    assert ranking.ids == [0, 2]
    assert ranking.scores[0] == ranking.scores[1]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("query", ["", "   ", "zebra", "the of and"])
def test_query_with_no_known_token_returns_empty_ranking(engine, query):
    bm25 = BM25Retriever(["alpha beta", "gamma"], engine=engine)
    assert bm25.search(query, k=5) == Ranking([], [])


@pytest.mark.parametrize("engine", ENGINES)
def test_corpus_with_no_indexable_token_searches_empty(engine):
    bm25 = BM25Retriever(["", "the of", "!!"], engine=engine)
    assert bm25.search("anything", k=3) == Ranking([], [])


@pytest.mark.parametrize("engine", ENGINES)
def test_k_larger_than_matches_returns_only_matching_rows(engine):
    bm25 = BM25Retriever(["red apple", "green apple", "blue sky", "apple pie"], engine=engine)
    ranking = bm25.search("apple", k=50)
    assert sorted(ranking.ids) == [0, 1, 3]
    assert all(score > 0 for score in ranking.scores)


# ---------------------------------------------------------------- mask


@pytest.mark.parametrize("engine", ENGINES)
def test_masked_rows_never_appear_at_any_k(engine):
    texts = [f"ledger entry {i} " + "ledger " * (i % 4) for i in range(12)]
    mask = np.array([i % 3 != 0 for i in range(12)])
    bm25 = BM25Retriever(texts, engine=engine)
    for k in range(1, 16):
        ids = bm25.search("ledger entry", k=k, mask=mask).ids
        assert ids, k
        assert all(mask[i] for i in ids), (k, ids)
        assert len(ids) == min(k, int(mask.sum()))


@pytest.mark.parametrize("engine", ENGINES)
def test_mask_is_applied_before_top_k(engine):
    # Row 0 is the best match; masked out, k=1 must still return the next allowed row.
    bm25 = BM25Retriever(["ops ops ops", "ops", "ops and more words here"], engine=engine)
    assert bm25.search("ops", k=1).ids == [0]
    assert bm25.search("ops", k=1, mask=np.array([False, True, True])).ids == [1]
    assert bm25.search("ops", k=5, mask=np.zeros(3, dtype=bool)) == Ranking([], [])


@pytest.mark.parametrize("engine", ENGINES)
def test_masked_scores_are_zero_and_unmasked_unchanged(engine):
    bm25 = BM25Retriever(["ops ops", "ops", "other ops"], engine=engine)
    full = bm25.scores("ops")
    masked = bm25.scores("ops", mask=np.array([True, False, True]))
    assert masked[1] == 0
    assert masked[[0, 2]] == pytest.approx(full[[0, 2]])


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        ([True, False], "expected a numpy bool array"),
        (np.array([1, 0]), "dtype int"),
        (np.array([True, False, True]), r"shape \(3,\); expected \(2,\)"),
    ],
)
def test_bad_mask_raises_with_fix(mask, message):
    bm25 = BM25Retriever(["a b", "c d"])
    with pytest.raises(ValidationError, match=message):
        bm25.search("c", k=1, mask=mask)


@pytest.mark.parametrize("k", [0, -3, 2.5, True])
def test_k_below_one_or_not_int_is_an_error(k):
    bm25 = BM25Retriever(["alpha"])
    with pytest.raises(ValidationError, match="expected an int >= 1"):
        bm25.search("alpha", k=k)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"engine": "lucene"}, "engine='lucene' is unknown"),
        ({"k1": -0.1}, "k1=-0.1 is out of range; expected >= 0.0"),
        ({"b": 1.5}, "b=1.5 is out of range; expected 0.0 to 1.0"),
        ({"stemmer": "elvish"}, "not a PyStemmer language"),
    ],
)
def test_bad_settings_raise(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        BM25Retriever(["alpha"], **kwargs)


@pytest.mark.parametrize(
    ("texts", "message"),
    [([], "texts is empty"), ("one string", "expected a list of str"), (["ok", 3], r"texts\[1\]")],
)
def test_bad_corpus_raises(texts, message):
    with pytest.raises(ValidationError, match=message):
        BM25Retriever(texts)


def test_repr_shows_settings():
    text = repr(BM25Retriever(["a b"], engine="rank_bm25", k1=1.2, b=0.5))
    assert text.startswith("BM25Retriever(rows=1, engine='rank_bm25'")
    assert "k1=1.2, b=0.5" in text


# ---------------------------------------------------------------- parity on real text

STDLIB_MODULES = [
    "argparse", "asyncio.tasks", "collections", "csv", "datetime", "decimal", "email.message",
    "fractions", "functools", "http.client", "itertools", "json", "logging", "os", "pathlib",
    "re", "shutil", "sqlite3", "string", "subprocess", "tarfile", "textwrap", "unittest.case",
    "urllib.parse", "zipfile",
]  # fmt: skip


def _paragraphs(docs: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for doc in docs:
        for para in re.split(r"\n\s*\n", doc):
            para = " ".join(para.split())
            if len(para.split()) >= 8 and para not in seen:
                seen.add(para)
                out.append(para)
    return out


def _stdlib_docstrings() -> list[str]:
    docs = []
    for name in STDLIB_MODULES:
        module = importlib.import_module(name)
        objects: list[object] = [module]
        for _, obj in sorted(vars(module).items()):
            if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj):
                objects.append(obj)
                if inspect.isclass(obj):
                    objects += [m for _, m in sorted(vars(obj).items()) if callable(m)]
        docs += [inspect.cleandoc(o.__doc__) for o in objects if isinstance(o.__doc__, str)]
    return docs


def _opscorpus_docs() -> list[str]:
    paths = sorted(REPO.glob("datasets/opscorpus/docs/**/*.md"))
    return [path.read_text(encoding="utf-8") for path in paths]


def _queries(paragraphs: list[str]) -> list[str]:
    """About 200 word queries (4 words of a paragraph) plus every identifier seen."""
    queries = []
    for para in paragraphs[:: max(1, len(paragraphs) // 200)]:
        words = [w for w in re.findall(r"[A-Za-z_]\w+", para) if len(w) > 3]
        if len(words) >= 5:
            queries.append(" ".join(words[1:5]))
    identifiers = sorted({m for p in paragraphs for m in re.findall(r"\b\w+(?:[-_]\w+)+\b", p)})
    return queries + identifiers[:: max(1, len(identifiers) // 100)]


@pytest.fixture(scope="module", params=["stdlib", "opscorpus"])
def real_text(request) -> list[str]:
    docs = _stdlib_docstrings() if request.param == "stdlib" else _opscorpus_docs()
    paragraphs = _paragraphs(docs)
    if len(paragraphs) < 300:
        pytest.skip(f"{request.param}: only {len(paragraphs)} paragraphs here, need 300")
    return paragraphs[:: math.ceil(len(paragraphs) / 2500)]  # at most 2,500: keeps it fast


def test_engines_rank_the_same_documents_on_real_text(real_text):
    """bm25s and rank-bm25 see the same tokens and the same BM25 variant.

    Tolerance, stated honestly: bm25s scores in float32, rank-bm25 in float64, so
    scores agree to a relative 1e-5, and a top-10 set may differ only where the
    10th and 11th scores tie to within float32 noise. We require identical top-10
    sets for at least 95% of queries (measured: 100% on the stdlib docstrings)
    and the same top-1 for every query whose two best scores are not tied.
    """
    fast = BM25Retriever(real_text, engine="bm25s")
    reference = BM25Retriever(real_text, engine="rank_bm25")
    queries = _queries(real_text)
    assert len(queries) >= 100
    same_top10 = 0
    for query in queries:
        a, b = fast.search(query, k=10), reference.search(query, k=10)
        assert a.ids, query
        same_top10 += set(a.ids) == set(b.ids)
        tied = len(a.scores) > 1 and a.scores[0] - a.scores[1] <= 1e-5 * a.scores[0]
        if not tied:
            assert a.ids[0] == b.ids[0], query
        np.testing.assert_allclose(fast.scores(query), reference.scores(query), rtol=1e-5)
    assert same_top10 / len(queries) >= 0.95


# ---------------------------------------------------------------- segments (incremental BM25)

SEGMENT_TEXTS = [
    ["Error E-4471 during settlement.", "Reconciling settlements for acme-9.", "Lunch menu."],
    ["acme-9 ledger ledger settlement", "The EUR cutoff is 15:00", ""],
    ["settlement runbook for EUR batches", "old text about E-4471"],
]


def _segmented(live_flags):
    from ragkit.retrieval import Postings, SegmentedBM25, tokenize

    postings = [Postings.from_tokens([tokenize(t) for t in seg]) for seg in SEGMENT_TEXTS]
    return postings, SegmentedBM25(postings, np.array(live_flags))


@pytest.mark.parametrize("live", [[True] * 8, [True, False, True, True, True, False, False, True],
                                  [False, False, False, True, False, True, True, False]])
def test_segmented_bm25_equals_a_rebuild_on_live_rows(live):
    postings, seg = _segmented(live)
    texts = [t for s in SEGMENT_TEXTS for t in s]
    live_texts = [t for t, ok in zip(texts, live, strict=True) if ok]
    ref = BM25Retriever(live_texts)
    for query in ["settlement", "acme-9 ledger", "e-4471 EUR cutoff", "menu lunch", "nothing here"]:
        got = seg.scores(query)
        assert np.all(got[~np.array(live)] == 0)
        assert np.allclose(got[np.array(live)], ref.scores(query), atol=1e-5), query
        ranked = seg.search(query, k=3)
        assert all(live[r] for r in ranked.ids)


def test_postings_merge_keeps_counts_and_scores():
    from ragkit.retrieval import Postings, SegmentedBM25

    live = [True, False, True, True, True, False, False, True]
    postings, seg = _segmented(live)
    offsets = np.cumsum([0] + [len(p) for p in postings])
    keep = [np.flatnonzero(np.array(live[a:b])) for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    merged = Postings.merge(list(zip(postings, keep, strict=True)))
    one = SegmentedBM25([merged], np.ones(len(merged), dtype=bool))
    for query in ["settlement", "acme-9 ledger E-4471", "cutoff"]:
        assert np.allclose(one.scores(query), seg.scores(query)[np.array(live)], atol=1e-9)
    assert merged.column("ledger")[1].tolist() == [2.0]


def test_segmented_bm25_warm_cache_scores_equal_cold_and_respect_masks():
    live = [True, False, True, True, True, False, False, True]
    _, seg = _segmented(live)
    mask = np.array([True, True, False, True, True, True, True, True])
    for query in ["settlement", "acme-9 ledger settlement", "EUR EUR cutoff"]:
        seg.clear_cache()
        cold = seg.scores(query), seg.search(query, 5, mask)
        warm = seg.scores(query), seg.search(query, 5, mask)  # the term weights now come from the cache
        assert np.array_equal(cold[0], warm[0]) and cold[1] == warm[1]
        assert all(live[r] and mask[r] for r in warm[1].ids)


def test_postings_from_a_generator_in_small_batches_equal_one_batch():
    from ragkit.retrieval import Postings, tokenize

    rows = [tokenize(t) for s in SEGMENT_TEXTS for t in s]
    one = Postings.from_tokens(rows)
    streamed = Postings.from_tokens((r for r in rows), batch=3)
    assert streamed.vocab == one.vocab and streamed.lengths.tolist() == one.lengths.tolist()
    for term in one.vocab:
        assert [a.tolist() for a in streamed.column(term)] == [a.tolist() for a in one.column(term)]


# ---------------------------------------------------------------- pseudo-relevance feedback (RM3)

FEEDBACK_TEXTS = [
    "settlement ledger reconciliation for acme-9 batches",
    "settlement ledger audit trail and reconciliation",
    "ledger settlement cutoff window eurozone",
    "lunch menu and cafeteria hours",
    "settlement settlement secretword tenant-b payroll ledger",
    "reconciliation audit for payroll",
]


def _feedback_index(live=None):
    from ragkit.retrieval import Postings, SegmentedBM25, tokenize

    segs = [Postings.from_tokens([tokenize(t) for t in FEEDBACK_TEXTS[:3]]),
            Postings.from_tokens([tokenize(t) for t in FEEDBACK_TEXTS[3:]])]
    return SegmentedBM25(segs, np.ones(6, dtype=bool) if live is None else np.array(live))


def _random_segmented(rng, n_rows, n_segments=3, vocab=40):
    from ragkit.retrieval import Postings, SegmentedBM25

    words = [f"w{i}" for i in range(vocab)]
    p = 1.0 / np.arange(1, vocab + 1)
    p /= p.sum()
    rows = [[words[i] for i in rng.choice(vocab, size=int(rng.integers(0, 12)), p=p)] for _ in range(n_rows)]
    cuts = np.sort(rng.choice(np.arange(1, n_rows), size=n_segments - 1, replace=False))
    parts = np.split(np.arange(n_rows), cuts)
    segs = [Postings.from_tokens([rows[i] for i in part]) for part in parts]
    live = rng.random(n_rows) < 0.85
    return rows, SegmentedBM25(segs, live, stemmer=None, stopwords=None), live


def test_feedback_default_off_and_weight_one_leave_results_unchanged_bit_for_bit():
    from ragkit.retrieval import Feedback

    plain, fb = _feedback_index(), _feedback_index()
    assert fb.feedback is None
    mask = np.array([True, True, False, True, True, True])
    for query in ["settlement ledger", "audit audit payroll", "acme-9", "nothing"]:
        fb.feedback = Feedback(docs=3, terms=5, orig_weight=1.0)
        assert fb.search(query, 4, mask) == plain.search(query, 4, mask)
        assert np.array_equal(fb.scores(query, mask), plain.scores(query, mask))
        fb.feedback = None
        assert fb.search(query, 4) == plain.search(query, 4)
        assert np.array_equal(fb.scores(query), plain.scores(query))


def test_feedback_expansion_terms_come_from_the_feedback_rows():
    from ragkit.retrieval import Feedback, tokenize

    bm25 = _feedback_index()
    fb = Feedback(docs=2, terms=4, orig_weight=0.5)
    first = bm25.search("audit", 2)
    expanded = bm25.expand("audit", feedback=fb)
    allowed = {t for r in first.ids for t in tokenize(FEEDBACK_TEXTS[r])}
    added = set(expanded) - {"audit"}
    assert added and added <= allowed
    assert len(added) <= 4
    # the expanded query weighs the original term by orig_weight and the rest sums to 1 - orig_weight
    assert sum(expanded.values()) == pytest.approx(1.0)
    assert expanded["audit"] >= 0.5
    bm25.feedback = fb
    ranked = bm25.search("audit", 6)
    assert set(ranked.ids) > set(first.ids)  # rows without 'audit' are reached through the expansion
    assert bm25.expand("audit") == expanded  # the attribute is the default of expand()


def test_feedback_never_reads_a_row_outside_the_mask():
    # Row 4 holds 'secretword' and the query terms twice: unmasked, it is the best row and its
    # terms enter the expansion; masked out, none of its own terms may, at any setting.
    from ragkit.retrieval import Feedback, tokenize

    bm25 = _feedback_index()
    fb = Feedback(docs=6, terms=50, orig_weight=0.5)
    assert "secretword" in bm25.expand("settlement", feedback=fb)
    mask = np.array([True, True, True, True, False, True])
    visible = {t for r in np.flatnonzero(mask) for t in tokenize(FEEDBACK_TEXTS[r])}
    for docs in (1, 3, 6):
        for terms in (1, 5, 50):
            for query in ["settlement", "settlement ledger", "payroll", "tenant-b"]:
                feedback = Feedback(docs=docs, terms=terms, orig_weight=0.3)
                expanded = bm25.expand(query, mask, feedback=feedback)
                assert set(expanded) - set(tokenize(query)) <= visible
                assert "secretword" not in expanded
                bm25.feedback = feedback
                assert 4 not in bm25.search(query, 6, mask).ids
                assert bm25.scores(query, mask)[4] == 0
                bm25.feedback = None


def test_feedback_respects_masks_and_dead_rows_on_random_corpora():
    from ragkit.retrieval import Feedback

    rng = np.random.default_rng(3)
    for _ in range(20):
        rows, bm25, live = _random_segmented(rng, 60)
        mask = rng.random(60) < 0.5
        seen = {t for r in np.flatnonzero(mask & live) for t in rows[r]}
        for query in ["w0 w5", "w12", "w3 w3 w30"]:
            expanded = bm25.expand(query, mask, feedback=Feedback(docs=5, terms=8, orig_weight=0.4))
            assert set(expanded) - set(query.split()) <= seen
            bm25.feedback = Feedback(docs=5, terms=8, orig_weight=0.4)
            assert all(mask[r] and live[r] for r in bm25.search(query, 60, mask).ids)
            bm25.feedback = None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"docs": 0}, "docs=0; expected an int >= 1"),
    ({"docs": 2.5}, "docs=2.5; expected an int >= 1"),
    ({"terms": -1}, "terms=-1; expected an int >= 1"),
    ({"terms": True}, "terms=True; expected an int >= 1"),
    ({"orig_weight": 1.5}, r"orig_weight=1.5; expected a number in \[0, 1\]"),
    ({"orig_weight": -0.1}, r"orig_weight=-0.1; expected a number in \[0, 1\]"),
    ({"orig_weight": "0.5"}, r"orig_weight='0.5'; expected a number in \[0, 1\]"),
])
def test_feedback_settings_are_validated(kwargs, message):
    from ragkit.retrieval import Feedback

    with pytest.raises(ValidationError, match=message):
        Feedback(**kwargs)


def test_feedback_attribute_must_be_a_feedback():
    bm25 = _feedback_index()
    with pytest.raises(ValidationError, match="expected a ragkit.retrieval.Feedback or None"):
        bm25.feedback = {"docs": 10}  # type: ignore[assignment]


# ---------------------------------------------------------------- fast top-k equals the simple path


def _reference_search(bm25, query, k, mask):
    """The simple path: every posting scatter-added into a full array, masked, then partitioned."""
    from collections import Counter

    scores = np.zeros(len(bm25), dtype=np.float64)
    for term, times in Counter(bm25.tokenize(query)).items():
        for slots, weight in bm25._term(term):
            scores[slots] += weight if times == 1 else times * weight
    if mask is not None:
        scores = scores * mask
    rows = np.flatnonzero(scores > 0)
    row_scores = scores[rows]
    order = np.lexsort((rows, -row_scores))[:k]
    return scores, Ranking(rows[order].tolist(), row_scores[order].tolist())


@pytest.mark.parametrize("seed", range(6))
def test_search_equals_the_simple_path_bit_for_bit_on_random_corpora(seed):
    rng = np.random.default_rng(seed)
    _, bm25, live = _random_segmented(rng, int(rng.integers(300, 900)), n_segments=int(rng.integers(1, 4)),
                                      vocab=int(rng.integers(8, 60)))
    masks = [None, rng.random(len(bm25)) < 0.5, rng.random(len(bm25)) < 0.05,
             np.zeros(len(bm25), dtype=bool), np.ones(len(bm25), dtype=bool)]
    for _ in range(15):
        query = " ".join(f"w{i}" for i in rng.integers(0, 70, size=int(rng.integers(1, 6))))
        for mask in masks:
            for k in (1, 2, 5, 10, 50):
                ref_scores, ref = _reference_search(bm25, query, k, mask)
                got = bm25.search(query, k, mask)
                assert got == ref, (query, k)
                assert got.ids == [] or all(live[r] and (mask is None or mask[r]) for r in got.ids)
            assert np.array_equal(bm25.scores(query, mask), ref_scores)


# ---------------------------------------------------------------- the shared pieces, by hand


def test_best_rows_keeps_ties_with_the_kth_and_prefers_lower_rows():
    from ragkit.retrieval import best_rows

    rows = np.array([9, 4, 7, 2, 5])
    scores = np.array([1.0, 2.0, 1.0, 1.0, 3.0])
    assert best_rows(rows, scores, 3) == Ranking([5, 4, 2], [3.0, 2.0, 1.0])  # 2 wins the tie of 1.0
    assert best_rows(rows, scores, 10).ids == [5, 4, 2, 7, 9]
    assert best_rows(np.array([], dtype=np.int64), np.array([]), 3) == Ranking([], [])


def test_rm3_weights_by_hand():
    from ragkit.retrieval import Feedback, rm3_weights

    terms = {0: (["ledger", "audit"], np.array([3.0, 1.0])), 1: (["audit", "x"], np.array([1.0, 1.0]))}
    fb = Feedback(docs=2, terms=1, orig_weight=0.5)
    # p(t|R): row 0 weighs 3/4 of the score mass, row 1 1/4
    #   ledger 3/4 * 3/4 = 0.5625; audit 3/4 * 1/4 + 1/4 * 1/2 = 0.3125; 'x' is one letter: skipped
    # terms=1 keeps ledger, renormalised to 1; the query 'ledger ledger' has two tokens:
    #   ledger = 0.5 * 2 + (1 - 0.5) * 2 * 1.0 = 2.0
    out = rm3_weights(["ledger", "ledger"], Ranking([0, 1], [3.0, 1.0]), terms.__getitem__, fb)
    assert out == {"ledger": 2.0}
    fb2 = Feedback(docs=2, terms=5, orig_weight=0.5)
    out2 = rm3_weights(["ledger"], Ranking([0, 1], [3.0, 1.0]), terms.__getitem__, fb2)
    assert out2 == pytest.approx({"ledger": 0.5 + 0.5 * 0.5625 / 0.875, "audit": 0.5 * 0.3125 / 0.875})
    # no positive first-pass score, or orig_weight 1: the query alone
    assert rm3_weights(["a", "a"], Ranking([], []), terms.__getitem__, fb) == {"a": 1.0}
    assert rm3_weights(["a"], Ranking([0], [2.0]), terms.__getitem__, Feedback(orig_weight=1.0)) == {"a": 1.0}


def test_analysis_helpers_reject_unknown_settings():
    from ragkit.retrieval import analyse, stemmer_for, stopword_set

    assert stemmer_for(None) is None and stopword_set(None) == frozenset()
    assert stopword_set(["The", "a"]) == {"the", "a"}
    assert analyse("The ledgers", stemmer_for("english"), stopword_set("en")) == ["ledger"]
    with pytest.raises(ValidationError, match="not a PyStemmer language"):
        stemmer_for("klingon")
    with pytest.raises(ValidationError, match="stopwords='de' is unknown"):
        stopword_set("de")


def test_the_english_stop_words_are_bm25s_own_list():
    from bm25s.stopwords import STOPWORDS_EN

    from ragkit.retrieval.analysis import STOPWORDS_EN as OURS

    assert frozenset(STOPWORDS_EN) == OURS
