"""The retrieval funnel: Filter -> Retrieve -> Fuse -> Rerank -> Expand, with a full trace.

CURRICULUM section 4, as one call::

    result = Funnel(index).search("EUR cutoff for acme", scope=Scope("acme", ["ops"]),
                                  filters=Filters.make(valid_at="2026-01-19"), deliver=4)

1. **Filter**: the caller's scope and the filters become a selection (a row mask in memory,
   a filter expression in Milvus: :mod:`ragkit.index.backend`), applied inside both retrievers
   before ranking (no out-of-scope row is ever scored).
2. **Retrieve**: BM25 and dense search each return ``candidates`` rows.
3. **Fuse**: ``fusion="zscore"`` (the default: CombSUM of z-scored BM25 and dense scores)
   or ``"rrf"`` (reciprocal rank fusion, k = ``rrf_k``), with optional per-list weights.
4. **Rerank**: the cross-encoder scores the first ``rerank_depth`` fused candidates;
   :func:`ragkit.retrieval.rerank.combine` turns its scores and the first stage into the final
   order (``rerank_mode``; the default ``"fuse"`` adds the cross-encoder's scores to the
   same fusion as a third list, weighted ``rerank_weight``).
5. **Expand**: each of the ``deliver`` survivors is expanded to its parent section,
   within a per-section and a total token budget; cuts are flagged, never silent.

Every stage's time, the reranker's token units, the delivered tokens and every
candidate's ranks land in the :class:`~ragkit.search.trace.SearchTrace`.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from ragkit.core.errors import ValidationError
from ragkit.core.params import Param
from ragkit.core.records import Envelope
from ragkit.core.scope import Filters, Scope, validity
from ragkit.index.backend import Backend, as_backend
from ragkit.index.index import Index
from ragkit.models.bundled import get_reranker
from ragkit.models.tokens import count_tokens_batch, truncate_to_tokens
from ragkit.retrieval.fusion import FUSIONS, Ranking, fuse, rank_positions
from ragkit.retrieval.rerank import DEPTH_POLICIES, RERANK_MODES, combine, plan_depth, rerank
from ragkit.search.trace import CandidateTrace, SearchTrace

__all__ = ["FUNNEL_PARAMS", "FunnelSettings", "Hit", "SearchResult", "Funnel"]

#: Every tunable width and budget of the funnel, declared once (validation, repr and docs).
FUNNEL_PARAMS: Mapping[str, Param] = {
    "candidates": Param("candidates", 50, 1, 1000, "rows each retriever returns, and the fused width"),
    "rerank_depth": Param("rerank_depth", 30, 0, 1000, "fused candidates the cross-encoder scores"),
    "confident_margin": Param("confident_margin", 1.0, 0, None,
                              "depth_policy='adaptive': a leader both retrievers rank first, ahead by "
                              "this many standard deviations of the head's fused scores, is not reranked"),
    "rerank_tokens": Param("rerank_tokens", 256, 16, 512,
                           "tokens of one (query, passage) pair the cross-encoder reads"),
    "deliver": Param("deliver", 4, 1, 50, "hits delivered to the reader"),
    "rrf_k": Param("rrf_k", 60, 0, None, "RRF rank offset (fusion='rrf', rerank_mode='rrf')"),
    "lexical_weight": Param("lexical_weight", 1.0, 0, None, "RRF weight of the BM25 list"),
    "dense_weight": Param("dense_weight", 1.0, 0, None, "RRF weight of the dense list"),
    "rerank_weight": Param("rerank_weight", 2.0, 0, None,
                           "weight of the reranker against each first-stage list (rerank_mode="
                           "'fuse') or against the fused ranks (rerank_mode='rrf')"),
    "section_budget": Param("section_budget", 800, 0, 100_000,
                            "token ceiling of one expanded parent section"),
    "total_budget": Param("total_budget", 3000, 0, 1_000_000,
                          "token ceiling of all delivered evidence in one call"),
}


@dataclass(frozen=True)
class FunnelSettings:
    """Widths, budgets and modes of the funnel (see :data:`FUNNEL_PARAMS` for ranges).

    ``fusion`` joins BM25 and dense: ``"zscore"`` (CombSUM of each list's z-scored scores,
    the default) or ``"rrf"`` (reciprocal rank fusion). ``rerank_mode`` is ``"fuse"`` (the
    default: the cross-encoder's scores join BM25 and dense in that same fusion as a third
    list, weighted ``rerank_weight`` = 2 against 1 each), ``"rrf"`` (RRF of the fused rank and
    the reranker's rank, weighted 1 : ``rerank_weight``), ``"rerank"`` (reranker order alone)
    or ``"none"``. The defaults were chosen by measurement on SciFact's train claims, the
    stdlib docstrings and the course corpus (``bench/results/fusion.md``).
    ``depth_policy`` decides per query how many candidates the cross-encoder scores:
    ``"adaptive"`` (the default since 2 December) keeps the first stage's order when BM25 and
    dense rank the same leader first and it leads by ``confident_margin`` standard deviations,
    else reranks ``rerank_depth``; ``"fixed"`` always reranks ``rerank_depth``
    (:func:`ragkit.retrieval.rerank.plan_depth`, ``bench/results/rerank_depth.md``).
    ``retrievers`` may drop one of ``("lexical", "dense")`` for ablations.
    ``expand=False`` delivers chunks only.
    """

    candidates: int = 50
    rerank_depth: int = 30
    confident_margin: float = 1.0
    rerank_tokens: int = 256
    deliver: int = 4
    rrf_k: float = 60
    lexical_weight: float = 1.0
    dense_weight: float = 1.0
    rerank_weight: float = 2.0
    section_budget: int = 800
    total_budget: int = 3000
    fusion: str = "zscore"
    rerank_mode: str = "fuse"
    depth_policy: str = "adaptive"
    expand: bool = True
    retrievers: tuple[str, ...] = ("lexical", "dense")

    def __post_init__(self) -> None:
        for name, param in FUNNEL_PARAMS.items():
            param.check(getattr(self, name), owner="FunnelSettings")
        if self.fusion not in FUSIONS:
            raise ValidationError(f"fusion={self.fusion!r}; use one of {FUSIONS}", field="fusion")
        if self.rerank_mode not in RERANK_MODES:
            raise ValidationError(f"rerank_mode={self.rerank_mode!r}; use one of {RERANK_MODES}",
                                  field="rerank_mode")
        if self.depth_policy not in DEPTH_POLICIES:
            raise ValidationError(f"depth_policy={self.depth_policy!r}; use one of {DEPTH_POLICIES}",
                                  field="depth_policy")
        unknown = set(self.retrievers) - {"lexical", "dense"}
        if not self.retrievers or unknown:
            raise ValidationError(f"retrievers={self.retrievers!r}; use 'lexical', 'dense' or both",
                                  field="retrievers")


@dataclass(frozen=True)
class Hit:
    """One delivered result: the chunk, its citation, its envelope and (if expanded) its section."""

    rank: int
    row: int
    chunk_id: str
    doc_id: str
    citation: str
    score: float
    text: str
    envelope: Envelope
    validity: str
    section_id: str | None = None
    section_text: str | None = None
    truncated: bool = False
    tokens: int = 0

    @property
    def evidence(self) -> str:
        """What the reader gets: the expanded section if any, else the chunk."""
        return self.section_text if self.section_text is not None else self.text

    def _repr_html_(self) -> str:
        env = self.envelope
        date = env.effective_from or env.published_at
        cut = " (cut to budget)" if self.truncated else ""
        return (f"<b>[{self.rank}] <code>{_html_escape(self.citation)}</code></b> "
                f"{_html_escape(env.source_type)}, tenant={_html_escape(env.tenant)}, "
                f"v{_html_escape(env.version)}, "
                f"{date.date() if date else 'undated'}, validity={self.validity}, score={self.score:.4f}, "
                f"{self.tokens} tokens{cut}<br><small>{_html_escape(self.evidence[:400])}</small>")


@dataclass
class SearchResult:
    """Delivered hits plus the trace of how they were chosen."""

    query: str
    hits: list[Hit]
    trace: SearchTrace

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def to_frame(self) -> Any:
        """The per-candidate trace as a pandas DataFrame."""
        return self.trace.to_frame()

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{h.rank}</td><td><code>{h.citation}</code></td><td>{h.envelope.source_type}</td>"
            f"<td>{h.envelope.tenant}</td><td>{h.validity}</td><td>{h.score:.4f}</td>"
            f"<td>{_html_escape(h.text[:160])}</td></tr>" for h in self.hits)
        return (f"<b>{_html_escape(self.query)}</b> &mdash; {len(self.hits)} hits, "
                f"{self.trace.rows_in_scope}/{self.trace.rows_total} rows in scope"
                "<table><tr><th>#</th><th>citation</th><th>type</th><th>tenant</th><th>validity</th>"
                f"<th>score</th><th>text</th></tr>{rows}</table>")


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Funnel:
    """Runs the funnel over an :class:`~ragkit.index.index.Index` (or any backend, see below).

    Every read goes through the backend seam (:func:`ragkit.index.backend.as_backend`), taken once
    per search: fusion, rerank, expansion and the trace are the same for every backend.

    Args:
        index: the index to search: an :class:`~ragkit.index.index.Index`, one of its snapshots,
            an ``IndexView``, or a :class:`ragkit.backends.milvus.MilvusIndex`.
        settings: default widths and modes; any of them can be overridden per call.
        reranker: a :class:`~ragkit.models.reranker.Reranker` (default: the bundled cross-encoder,
            loaded on first use).
    """

    def __init__(self, index: Index, settings: FunnelSettings | None = None, *, reranker: Any = None):
        self.index = index
        self.settings = settings or FunnelSettings()
        self._reranker = reranker

    @property
    def reranker(self) -> Any:
        """The second-stage scorer: the one passed in, else the bundled cross-encoder (loaded lazily)."""
        if self._reranker is None:
            self._reranker = get_reranker()
        return self._reranker

    def search(self, query: str, *, scope: Scope | None = None, filters: Filters | None = None,
               **overrides: Any) -> SearchResult:
        """Search as ``scope`` (default: operator scope, everything) under ``filters``.

        Keyword overrides replace :class:`FunnelSettings` fields for this call only, e.g.
        ``candidates=30, deliver=5, rerank_mode="rerank"``.
        """
        s = replace(self.settings, **overrides) if overrides else self.settings
        scope = scope or Scope.operator()
        filters = filters or Filters()
        idx: Backend = as_backend(self.index)  # one snapshot, read only through the seam
        trace = SearchTrace(query=query, scope=str(scope), filters=_describe(filters),
                            settings=asdict(s), rows_total=idx.size())
        clock = time.perf_counter

        t = clock()
        selection = idx.select(scope, filters)  # a row mask, or a filter the engine applies before top-k
        trace.rows_in_scope = selection.count()
        trace.timings_ms["filter"] = (clock() - t) * 1000
        lists: list[Ranking] = []
        weights: list[float] = []
        lexical = dense = Ranking([], [])
        if "lexical" in s.retrievers:
            t = clock()
            lexical = idx.search_lexical(query, s.candidates, selection) if trace.rows_in_scope else lexical
            trace.timings_ms["lexical"] = (clock() - t) * 1000
            lists.append(lexical)
            weights.append(s.lexical_weight)
        if "dense" in s.retrievers:
            t = clock()
            dense = idx.search_dense(query, s.candidates, selection) if trace.rows_in_scope else dense
            trace.timings_ms["dense"] = (clock() - t) * 1000
            lists.append(dense)
            weights.append(s.dense_weight)
        t = clock()
        fused = fuse(lists, method=s.fusion, k=s.rrf_k, weights=weights).top(s.candidates)
        trace.timings_ms["fuse"] = (clock() - t) * 1000

        plan = plan_depth(fused, lists, max_depth=s.rerank_depth if s.rerank_mode != "none" else 0,
                          policy=s.depth_policy, confident=s.confident_margin)
        depth = plan.depth
        trace.depth_plan = asdict(plan)
        head, tail = fused.top(depth), Ranking(fused.ids[depth:], fused.scores[depth:])
        t = clock()
        rerank_scores: dict[int, float] = {}
        rerank_ranks: dict[int, int] = {}
        if depth:
            passages = [c.contextual_text() for c in idx.fetch(head.ids)]
            out = rerank(query, passages, self.reranker, max_length=s.rerank_tokens)
            rerank_scores = {r: float(x) for r, x in zip(head.ids, out.scores, strict=True)}
            rerank_ranks = dict(zip(head.ids, out.ranks, strict=True))
            trace.tokens["reranker_units"] = int(sum(out.token_units))
            head = combine(head, out.scores, mode=s.rerank_mode, k=s.rrf_k, fusion=s.fusion, lists=lists,
                           weights=((*weights, s.rerank_weight) if s.rerank_mode == "fuse"
                                    else (1.0, s.rerank_weight)))
        else:
            trace.tokens["reranker_units"] = 0
        trace.timings_ms["rerank"] = (clock() - t) * 1000
        final = Ranking(list(head.ids) + list(tail.ids), list(head.scores) + list(tail.scores))

        t = clock()
        hits = self._deliver(final, s, scope, filters, idx)
        trace.timings_ms["expand"] = (clock() - t) * 1000
        trace.tokens["delivered"] = sum(h.tokens for h in hits)
        trace.tokens["candidate_chunks"] = sum(count_tokens_batch([c.text for c in idx.fetch(fused.ids)]))
        trace.candidates = self._candidates(lexical, dense, fused, rerank_scores, rerank_ranks, final,
                                            hits, filters, idx)
        trace.timings_ms["total"] = sum(trace.timings_ms.values())
        return SearchResult(query, hits, trace)

    def _deliver(self, final: Ranking, s: FunnelSettings, scope: Scope, filters: Filters,
                 idx: Backend | None = None) -> list[Hit]:
        idx = as_backend(self.index) if idx is None else idx
        moment = filters.valid_at or dt.datetime.now(dt.timezone.utc)
        budget = s.total_budget
        seen_sections: set[str] = set()
        hits: list[Hit] = []
        rows = final.ids[: s.deliver]
        chunks = idx.fetch(rows)
        chunk_tokens = count_tokens_batch([c.text for c in chunks])
        for rank, (row, score) in enumerate(zip(rows, final.scores[: s.deliver], strict=True), start=1):
            chunk = chunks[rank - 1]
            env = idx.envelope(row)
            scope.require(env)  # every read re-checks scope, not just retrieval
            section = idx.parent(row) if s.expand else None
            section_text: str | None = None
            truncated = False
            tokens = chunk_tokens[rank - 1]
            if section is not None and section.chunk_id in seen_sections:
                section = None  # its section is already delivered with a better-ranked hit
                tokens = 0
            elif section is not None:
                seen_sections.add(section.chunk_id)
                allowed = max(0, min(s.section_budget, budget))
                section_text, truncated = truncate_to_tokens(section.text, allowed)
                tokens = count_tokens_batch([section_text])[0]
            else:
                text, truncated = truncate_to_tokens(chunk.text, max(0, budget))
                tokens = min(tokens, count_tokens_batch([text])[0]) if truncated else tokens
            budget -= tokens
            hits.append(Hit(rank=rank, row=row, chunk_id=chunk.chunk_id, doc_id=chunk.doc_id,
                            citation=chunk.citation, score=float(score), text=chunk.text, envelope=env,
                            validity=validity(env, moment),
                            section_id=section.chunk_id if section is not None else None,
                            section_text=section_text, truncated=truncated, tokens=tokens))
        return hits

    def _candidates(self, lexical: Ranking, dense: Ranking, fused: Ranking, rerank_scores: dict[int, float],
                    rerank_ranks: dict[int, int], final: Ranking, hits: list[Hit],
                    filters: Filters, idx: Backend | None = None) -> list[CandidateTrace]:
        idx = as_backend(self.index) if idx is None else idx
        lex, den, fus, fin = (rank_positions(x) for x in (lexical, dense, fused, final))
        fused_scores = dict(zip(fused.ids, fused.scores, strict=True))
        by_row = {h.row: h for h in hits}
        moment = filters.valid_at or dt.datetime.now(dt.timezone.utc)
        out = []
        rows = list(dict.fromkeys([*fused.ids, *lexical.ids, *dense.ids]))
        for row, chunk in zip(rows, idx.fetch(rows), strict=True):
            env = idx.envelope(row)
            hit = by_row.get(row)
            out.append(CandidateTrace(
                row=row, chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, lexical_rank=lex.get(row),
                dense_rank=den.get(row), fused_rank=fus.get(row), fused_score=fused_scores.get(row),
                rerank_score=rerank_scores.get(row), rerank_rank=rerank_ranks.get(row),
                final_rank=fin.get(row), delivered=hit is not None,
                expanded=bool(hit and hit.section_text is not None), truncated=bool(hit and hit.truncated),
                validity=validity(env, moment), version=env.version, source_type=env.source_type,
                tenant=env.tenant))
        return out


def _describe(filters: Filters) -> str:
    parts = []
    if filters.doc_types:
        parts.append("doc_type=" + ",".join(filters.doc_types))
    if filters.tenants:
        parts.append("tenant=" + ",".join(filters.tenants))
    for name in ("published_after", "published_before", "valid_at"):
        value = getattr(filters, name)
        if value is not None:
            parts.append(f"{name}={value.date().isoformat()}")
    return " ".join(parts) or "none"
