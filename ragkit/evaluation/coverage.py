"""Does the candidate set hold the evidence? Candidate recall, measured through the funnel.

:func:`candidate_recall` asks the first question of CURRICULUM sections 11 and 12: does a
case's evidence even enter the candidate set at this width? That is the ceiling every later
stage works under. Each case is searched as its caller over the documents published by its
``as_of`` by a :class:`~ragkit.search.funnel.Funnel` without reranking; each retriever of
:data:`RETRIEVERS` (BM25, dense, both fused by RRF or by z-scores, the funnel's default)
reads its candidates from the search's trace, and they are matched to the evidence in one
of two ways:

* ``match="anchor"``: a candidate chunk with the item's doc_id and section anchor (only
  structure chunks have anchors);
* ``match="quote"``: a candidate chunk whose character span covers the item's whole verbatim
  quote, which works for sentence windows and fixed windows too, so chunkers can be compared
  (CURRICULUM section 2; :func:`span_recall`).

The module also keeps each case's first-stage lists (:func:`first_stage`) so fusion
settings can be swept without searching again (:func:`fusion_sweep`), and reads delivered
hits for the "would the reader have to open the whole file?" proxy (:func:`delivered_coverage`).

Example:
    >>> quote_span("EUR batches close at 16:00.\\nGBP at 15:30.", "GBP at  15:30")
    (28, 40)
    >>> covers((20, 45), (28, 40)), covers((30, 45), (28, 40))
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragkit.agent import AgentResult
from ragkit.core.ids import doc_of
from ragkit.core.scope import snapshot_filters
from ragkit.evaluation.cases import EvidenceCase
from ragkit.index.backend import as_backend
from ragkit.index.index import Index
from ragkit.retrieval.fusion import Ranking, fuse
from ragkit.search.funnel import Funnel, FunnelSettings, SearchResult

__all__ = ["RETRIEVERS", "STAGES", "MATCHES", "quote_span", "covers", "recall_settings", "stage_rows",
           "candidate_recall",
           "CaseLists", "first_stage", "span_recall", "fusion_sweep", "delivered_coverage", "evidence_share",
           "evidence_chunks", "whole_file_reads"]

#: The first stages candidate recall is measured for (the names of the funnel ablations of
#: :data:`ragkit.evaluation.compare.ABLATIONS`): BM25, dense, RRF and z-score fusion of the two.
RETRIEVERS = ("bm25", "dense", "rrf", "zscore")
#: Where each of :data:`RETRIEVERS` reads its candidates in a funnel search's trace: the rank
#: column, and the fusion the search must run (``None``: a retriever's own list is the same
#: under either fusion).
STAGES: dict[str, tuple[str, str | None]] = {"bm25": ("lexical_rank", None), "dense": ("dense_rank", None),
                                             "rrf": ("fused_rank", "rrf"), "zscore": ("fused_rank", "zscore")}
#: How a candidate chunk is matched to an evidence item (see the module docs).
MATCHES = ("anchor", "quote")


def quote_span(text: str, quote: str) -> tuple[int, int] | None:
    """Character span of ``quote`` in ``text``, tolerant of whitespace differences; ``None`` if absent."""
    at = text.find(quote)
    if at >= 0:
        return at, at + len(quote)
    words = quote.split()
    if not words:
        return None
    match = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return (match.start(), match.end()) if match else None


def covers(span: tuple[int, int], quote: tuple[int, int]) -> bool:
    """Whether ``span`` (start, end) contains the whole ``quote`` span."""
    return span[0] <= quote[0] and quote[1] <= span[1]


def recall_settings(fusion: str, width: int, base: FunnelSettings | None = None) -> FunnelSettings:
    """The funnel settings candidate recall searches with: both retrievers ``width`` deep, fused by
    ``fusion`` into ``width``; no reranking, one chunk delivered, no expansion.

    ``base`` supplies the rest (RRF k, list weights).

    Example:
        >>> s = recall_settings("rrf", 20)
        >>> s.retrievers, s.candidates, s.fusion, s.rerank_mode
        (('lexical', 'dense'), 20, 'rrf', 'none')
    """
    return replace(base or FunnelSettings(), candidates=width, deliver=1, expand=False, rerank_mode="none",
                   fusion=fusion, retrievers=("lexical", "dense"))


def stage_rows(result: SearchResult, stage: str) -> list[int]:
    """The rows one list of a funnel search held, best first: ``stage`` is a rank column of its trace
    (``lexical_rank``, ``dense_rank`` or ``fused_rank``)."""
    ranked = [(getattr(c, stage), c.row) for c in result.trace.candidates if getattr(c, stage) is not None]
    return [row for _, row in sorted(ranked)]


def _quotes(index: Index, case: EvidenceCase) -> tuple[tuple[str, int, int], ...] | None:
    """``(doc_id, start, end)`` of each evidence quote in its document; ``None`` if one is not found."""
    quotes = []
    backend = as_backend(index)
    for item in case.evidence:
        doc = backend.document(item.doc_id)
        span = quote_span(doc.text, item.quote) if doc is not None else None
        if span is None:
            return None
        quotes.append((item.doc_id, *span))
    return tuple(quotes)


def candidate_recall(index: Index, cases: Iterable[EvidenceCase], *, width: int = 50,
                     methods: Sequence[str] = RETRIEVERS, match: str = "anchor",
                     settings: FunnelSettings | None = None, by_tag: bool = True) -> Any:
    """Candidate recall at ``width`` per case tag and retriever, as a pandas DataFrame.

    Each answerable case is searched as its caller over the documents published by its
    ``as_of`` through ``Funnel(index, recall_settings(fusion, width, settings))``, once per
    fusion the methods need (:data:`STAGES`): BM25's and the dense retriever's candidates are
    their lists in the search's trace, a fusion's its fused list. With
    ``match="anchor"`` an evidence item counts as found when a candidate chunk has its doc_id
    and section anchor; with ``match="quote"`` when a candidate chunk covers its quote (a case
    with a quote that is not in its document is left out: it cannot be looked for).

    Args:
        index: the index (or snapshot, view or backend) to search.
        cases: evidence cases; unanswerable ones are skipped.
        width: candidates per retriever and fused.
        methods: a subset of :data:`RETRIEVERS`.
        match: ``"anchor"`` or ``"quote"`` (:data:`MATCHES`).
        settings: base funnel settings (RRF k, list weights); default the funnel's.
        by_tag: a row per case tag as well as ``"all"``.

    Returns:
        A DataFrame indexed by ``(tag, method)`` (tag ``"all"`` covers every case) with
        columns ``cases``, ``set_recall`` (share of cases whose whole minimum evidence set is
        among the candidates) and ``item_recall`` (mean share of evidence items found).
    """
    if match not in MATCHES:
        raise ValueError(f"match={match!r}; use one of {MATCHES}")
    unknown = [m for m in methods if m not in STAGES]
    if unknown:
        raise ValueError(f"methods {unknown}; use some of {RETRIEVERS}")
    needed = [f for f in dict.fromkeys(STAGES[m][1] for m in methods) if f is not None]
    fusions = needed or [(settings or FunnelSettings()).fusion]
    funnels = {f: Funnel(index, recall_settings(f, width, settings)) for f in fusions}
    rows = []
    for case in cases:
        if not case.answerable:
            continue
        quotes = _quotes(index, case) if match == "quote" else None
        if match == "quote" and quotes is None:
            continue
        filters = snapshot_filters(case.as_of)
        searched = {f: funnel.search(case.task, scope=case.caller, filters=filters)
                    for f, funnel in funnels.items()}
        for method in methods:
            stage, fusion = STAGES[method]
            found = stage_rows(searched[fusion or fusions[0]], stage)
            if quotes is not None:
                share = evidence_share(index, found, quotes)
            else:
                need = {(e.doc_id, e.anchor) for e in case.evidence}
                got = {(c.doc_id, c.anchor) for c in as_backend(index).fetch(found)}
                share = len(need & got) / len(need)
            for tag in ("all", *(case.tags if by_tag else ())):
                rows.append({"tag": tag, "method": method, "case": case.id, "set": share == 1.0,
                             "item": share})
    return _summarise(rows, ["tag", "method"]).set_index(["tag", "method"])


@dataclass(frozen=True)
class CaseLists:
    """One case's first-stage lists, searched once as its caller at its ``as_of``.

    Attributes:
        case: the evidence case.
        lexical, dense: BM25 and dense rankings (row ids into the index), ``width`` long.
        quotes: ``(doc_id, start, end)`` of each evidence quote found in its document.
    """

    case: EvidenceCase
    lexical: Ranking
    dense: Ranking
    quotes: tuple[tuple[str, int, int], ...]


def first_stage(index: Index, cases: Iterable[EvidenceCase], *, width: int = 100,
                query: Callable[[EvidenceCase], str] | None = None) -> list[CaseLists]:
    """BM25 and dense lists of every answerable case whose quotes are all found in the corpus.

    Args:
        index: the :class:`~ragkit.index.index.Index` to search.
        cases: evidence cases.
        width: how many rows each retriever returns.
        query: ``case -> str`` to search with instead of the case's task (query variants).
    """
    out = []
    for case in cases:
        if not case.answerable:
            continue
        quotes = _quotes(index, case)
        if quotes is None:
            continue  # a quote that is not in its document cannot be looked for
        mask = index.mask(case.caller, snapshot_filters(case.as_of))
        text = query(case) if query is not None else case.task
        out.append(CaseLists(case, index.search_lexical(text, width, mask),
                             index.search_dense(text, width, mask), quotes))
    return out


def evidence_share(index: Index, rows: Sequence[int], quotes: Sequence[tuple[str, int, int]]) -> float:
    """Share of ``quotes`` (``(doc_id, start, end)``) covered by one of the chunks at ``rows``."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for chunk in as_backend(index).fetch(list(rows)):
        spans.setdefault(chunk.doc_id, []).append((chunk.start, chunk.end))
    hit = sum(any(covers(s, (a, b)) for s in spans.get(doc, ())) for doc, a, b in quotes)
    return hit / len(quotes)


def _fused(lists: CaseLists, width: int, k: float, weights: tuple[float, float],
           depth: int | None = None) -> dict[str, Ranking]:
    lex, den = lists.lexical.top(depth or width), lists.dense.top(depth or width)
    return {"bm25": lex.top(width), "dense": den.top(width),
            "rrf": fuse([lex, den], method="rrf", k=k, weights=list(weights)).top(width),
            "zscore": fuse([lex, den], method="zscore", weights=list(weights)).top(width)}


def _summarise(rows: list[dict[str, Any]], keys: list[str]) -> Any:
    import pandas as pd

    frame = pd.DataFrame(rows)
    return frame.groupby(keys).agg(cases=("case", "nunique"), set_recall=("set", "mean"),
                                   item_recall=("item", "mean")).reset_index()


def span_recall(index: Index, lists: Sequence[CaseLists], *, width: int = 50, k: float = 60,
                weights: tuple[float, float] = (1.0, 1.0), by_tag: bool = True) -> Any:
    """Quote-covering candidate recall at ``width`` per retriever (and per tag) of the cases in ``lists``.

    :func:`candidate_recall` with ``match="quote"`` over the cases :func:`first_stage` kept,
    the funnel's RRF k and list weights set to ``k`` and ``weights``.

    Returns:
        A DataFrame with columns ``tag`` (``all`` plus each case tag, when ``by_tag``),
        ``method`` (``bm25``, ``dense``, ``rrf``, ``zscore``), ``cases``, ``set_recall`` (share of cases
        whose every quote is covered by one candidate chunk) and ``item_recall``.
    """
    base = FunnelSettings(rrf_k=k, lexical_weight=weights[0], dense_weight=weights[1])
    return candidate_recall(index, [item.case for item in lists], width=width, match="quote",
                            settings=base, by_tag=by_tag).reset_index()


def fusion_sweep(index: Index, lists: Sequence[CaseLists], *, widths: Sequence[int] = (50,),
                 ks: Sequence[float] = (60,), weights: Sequence[tuple[float, float]] = ((1.0, 1.0),),
                 tags: Sequence[str] = ("all",), depth: int | None = None) -> Any:
    """Quote-covering recall over a grid of widths, RRF k and (BM25, dense) weights.

    Nothing is searched again: every setting fuses the stored lists. By default each list is
    cut at ``width`` before fusing; with ``depth``, lists ``depth`` deep are fused and the fused
    list is cut at ``width`` (then k and the weights decide *which* candidates go forward).

    Returns:
        Columns ``width``, ``k``, ``weights`` (``"a:b"``), ``tag``, ``method``, ``cases``,
        ``set_recall``, ``item_recall``. ``bm25`` and ``dense`` rows do not depend on k or weights.
    """
    rows = []
    for item in lists:
        case_tags = [t for t in tags if t == "all" or t in item.case.tags]
        if not case_tags:
            continue
        for width in widths:
            for k in ks:
                for w in weights:
                    for method, ranking in _fused(item, width, k, w, depth).items():
                        share = evidence_share(index, ranking.ids, item.quotes)
                        for tag in case_tags:
                            rows.append({"width": width, "k": k, "weights": f"{w[0]:g}:{w[1]:g}", "tag": tag,
                                         "method": method, "case": item.case.id, "set": share == 1.0,
                                         "item": share})
    return _summarise(rows, ["width", "k", "weights", "tag", "method"])


def evidence_chunks(index: Index, case: EvidenceCase, *, role: str | None = None) -> set[str]:
    """Ids of the index rows whose span covers an evidence quote of ``case`` (of ``role`` if given).

    These are the relevance judgements for ranking metrics (:mod:`ragkit.evaluation.metrics`) over chunks:
    ``{chunk_id: 1 for chunk_id in evidence_chunks(index, case, role="decisive")}``.
    """
    wanted: dict[str, list[tuple[int, int]]] = {}
    for item in case.evidence:
        doc = index.documents.get(item.doc_id)
        span = quote_span(doc.text, item.quote) if doc is not None else None
        if span is not None and (role is None or item.role == role):
            wanted.setdefault(item.doc_id, []).append(span)
    return {row.chunk_id for row in index.rows
            if any(covers((row.start, row.end), s) for s in wanted.get(row.doc_id, ()))}


def delivered_coverage(index: Index, case: EvidenceCase, result: SearchResult) -> dict[str, Any]:
    """What the reader got for a case's *decisive* evidence from one funnel result.

    Returns a dict: ``doc_delivered`` (a hit comes from the decisive document),
    ``in_chunk`` (a delivered chunk covers the decisive quote), ``in_section`` (a delivered
    expanded section, after any token cut, covers it), ``truncated`` (a delivered section of
    that document was cut by the budget). When the document is delivered but neither the
    chunk nor its section holds the quote, a reader has to open the document: the
    "reads the whole file anyway" tell.
    """
    decisive = case.decisive
    if decisive is None:
        raise ValueError(f"case {case.id!r} has no decisive evidence item")
    backend = as_backend(index)
    doc = backend.document(decisive.doc_id)
    span = quote_span(doc.text, decisive.quote) if doc is not None else None
    out: dict[str, Any] = {"case": case.id, "doc_delivered": False, "in_chunk": False, "in_section": False,
           "truncated": False}
    if span is None:
        return out
    for hit in result.hits:
        if hit.doc_id != decisive.doc_id:
            continue
        out["doc_delivered"] = True
        [chunk] = backend.fetch([hit.row])
        out["in_chunk"] |= covers((chunk.start, chunk.end), span)
        section = backend.section(hit.section_id) if hit.section_id else None
        if section is not None and hit.section_text is not None:
            out["in_section"] |= covers((section.start, section.start + len(hit.section_text)), span)
            out["truncated"] |= bool(hit.truncated)
    return out


def whole_file_reads(results: Iterable[AgentResult]) -> dict[str, Any]:
    """The "reads the whole file anyway" tell, measured from agent traces.

    For each agent result (:class:`ragkit.agent.loop.AgentResult`), every successful search is
    checked: did a *later* ``fetch`` (``retrieve_documents``) ask for a whole document (an id
    without ``#anchor``) that this search had delivered an excerpt of? A high share means the
    delivered chunks did not carry enough to judge them, so the agent opened the file.

    Returns:
        ``{"tasks", "searches", "followed_by_whole_read", "share", "section_reads"}`` where
        ``section_reads`` counts later fetches of a section (``doc#anchor``) of a searched
        document, the cheaper read that parent expansion stands in for.

    Example:
        >>> from types import SimpleNamespace as S
        >>> steps = [S(action="search", ok=True, refused=None,
        ...            response={"results": [{"doc_id": "a"}, {"doc_id": "b"}]}),
        ...          S(action="fetch", ok=True, refused=None, arguments={"ids": ["b"]}, response={})]
        >>> whole_file_reads([S(steps=steps)])["share"]
        1.0
    """
    tasks = searches = whole = sections = 0
    for result in results:
        tasks += 1
        steps = [s for s in result.steps if getattr(s, "refused", None) is None and s.ok]
        for i, step in enumerate(steps):
            if step.action != "search":
                continue
            searches += 1
            shown = {item.get("doc_id") for item in step.response.get("results") or []}
            later = [str(x) for s in steps[i + 1:] if s.action == "fetch"
                     for x in (s.arguments.get("ids") or [])]
            if any("#" not in x and x in shown for x in later):
                whole += 1
            if any("#" in x and doc_of(x) in shown for x in later):
                sections += 1
    return {"tasks": tasks, "searches": searches, "followed_by_whole_read": whole,
            "share": whole / searches if searches else 0.0, "section_reads": sections}
