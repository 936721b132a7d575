"""Reranker proxies: shared scores with honest timings, a pinned passage, keyword checks."""

from __future__ import annotations

import numpy as np

from ragkit.evaluation import PIN_BONUS, PinnedReranker, SharedScores, takes
from ragkit.models import ScoreCache
from ragkit.retrieval import rerank


def test_takes_reads_names_and_kwargs():
    def named(query, passages, *, max_length=None): ...
    def loose(query, passages, **kwargs): ...
    def bare(query, passages): ...

    assert takes(named, "max_length") and takes(loose, "max_length") and not takes(bare, "max_length")
    assert not takes(42, "max_length")                            # not a callable: no signature


class _Counting:
    """A deterministic stand-in reranker that counts the pairs it scores."""

    name, version, max_length = "fake", "1", 256

    def __init__(self):
        self.pairs, self.lengths = 0, []

    def score(self, query, passages, *, batch_size=None, max_length=None):
        self.pairs += len(passages)
        self.lengths.append(max_length)
        return [float(len(p) % 7) + len(query) / 100 for p in passages]

    def count_pair_tokens(self, query, passages, *, max_length=None):
        return [min(max_length or 256, len(query) + len(p)) for p in passages]


def test_shared_scores_score_each_pair_once_and_replay_its_cost():
    inner = _Counting()
    shared = SharedScores(inner)
    shared.new_run()
    first = rerank("q", ["a", "bb", "ccc"], shared, max_length=128)
    assert inner.pairs == 3 and inner.lengths == [128]            # the funnel's pair length reaches it
    shared.score("q", ["a", "bb"], max_length=128)
    assert inner.pairs == 3 and shared.replayed_ms == 0.0       # a repeat inside one run is free
    shared.new_run()
    again = rerank("q", ["ccc", "a", "dddd"], shared, max_length=128)
    assert inner.pairs == 4                                      # only the new pair is scored
    assert shared.replayed_ms > 0.0                              # the others are charged what they cost
    plain = rerank("q", ["ccc", "a", "dddd"], _Counting(), max_length=128)
    assert again.scores.tolist() == plain.scores.tolist() and again.token_units == plain.token_units
    fresh = rerank("q", ["a", "bb", "ccc"], _Counting(), max_length=128)
    assert first.scores.tolist() == fresh.scores.tolist()
    shared.score("q", ["a"], max_length=256)                     # another pair length is another pair
    assert inner.pairs == 5


def test_shared_scores_keep_their_entries_in_score_caches_under_the_rerankers_key():
    inner = _Counting()
    shared = SharedScores(inner)
    shared.score("q", ["a", "bb"], max_length=128)
    shared.count_pair_tokens("q", ["a"], max_length=128)
    assert isinstance(shared.scores, ScoreCache) and len(shared.scores) == 2 and len(shared.units) == 1
    key = ("fake", "1", 128, "q", ScoreCache.digest("bb"))       # the bundled Reranker's own key layout
    assert shared.key("q", "bb", 128) == key and shared.scores.get(key) == float(2 % 7) + 0.01
    assert shared.key("q", "bb", None)[2] == 256                 # no length: the reranker's own
    assert (shared.hits, shared.misses) == (0, 2)
    shared.score("q", ["a", "ccc"], max_length=128)
    assert (shared.hits, shared.misses) == (1, 3)


def test_a_pinned_view_keeps_the_pair_length():
    seen = []

    class Inner:
        def score(self, query, passages, *, batch_size=None, max_length=None):
            seen.append(max_length)
            return np.zeros(len(passages))

        def count_pair_tokens(self, query, passages, *, max_length=None):
            return [1] * len(passages)

    out = rerank("q", ["x", "pinned"], PinnedReranker(Inner(), "pinned"), max_length=128)
    assert seen == [128] and out.scores[1] > out.scores[0]
    pinned = PinnedReranker(Inner(), "pinned")
    assert pinned.score("q", ["x", "pinned"]).tolist() == [0.0, PIN_BONUS]
    assert pinned.count_pair_tokens("q", ["a"]) == [1]          # everything else delegates
