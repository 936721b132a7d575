"""Does the candidate set hold the evidence? First-stage recall that works for any chunker.

:func:`ragkit.evaluation.runner.candidate_recall` matches evidence by section anchor, which only
structure chunks have. To compare chunkers (CURRICULUM section 2) we match by *text*
instead: an evidence item of a case is its verbatim quote in a document, and a candidate
chunk holds it when the chunk's character span covers the whole quote. The same test works
for sentence windows and fixed windows, which have no anchors.

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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragkit.core.scope import snapshot_filters
from ragkit.retrieval.fusion import Ranking, rrf, zscore_fusion

__all__ = ["quote_span", "covers", "CaseLists", "first_stage", "span_recall", "fusion_sweep",
           "delivered_coverage", "evidence_share", "evidence_chunks", "whole_file_reads"]


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


@dataclass(frozen=True)
class CaseLists:
    """One case's first-stage lists, searched once as its caller at its ``as_of``.

    Attributes:
        case: the evidence case.
        lexical, dense: BM25 and dense rankings (row ids into the index), ``width`` long.
        quotes: ``(doc_id, start, end)`` of each evidence quote found in its document.
    """

    case: Any
    lexical: Ranking
    dense: Ranking
    quotes: tuple[tuple[str, int, int], ...]


def first_stage(index: Any, cases: Iterable[Any], *, width: int = 100,
                query: Any = None) -> list[CaseLists]:
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
        quotes = []
        for item in case.evidence:
            doc = index.documents.get(item.doc_id)
            span = quote_span(doc.text, item.quote) if doc is not None else None
            if span is not None:
                quotes.append((item.doc_id, *span))
        if len(quotes) != len(case.evidence):
            continue  # a quote that is not in its document cannot be looked for
        mask = index.mask(case.caller, snapshot_filters(case.as_of))
        text = query(case) if query is not None else case.task
        out.append(CaseLists(case, index.search_lexical(text, width, mask),
                             index.search_dense(text, width, mask), tuple(quotes)))
    return out


def evidence_share(index: Any, rows: Sequence[int], quotes: Sequence[tuple[str, int, int]]) -> float:
    """Share of ``quotes`` (``(doc_id, start, end)``) covered by one of the chunks at ``rows``."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for r in rows:
        chunk = index.rows[r]
        spans.setdefault(chunk.doc_id, []).append((chunk.start, chunk.end))
    hit = sum(any(covers(s, (a, b)) for s in spans.get(doc, ())) for doc, a, b in quotes)
    return hit / len(quotes)


def _fused(lists: CaseLists, width: int, k: float, weights: tuple[float, float],
           depth: int | None = None) -> dict[str, Ranking]:
    lex, den = lists.lexical.top(depth or width), lists.dense.top(depth or width)
    return {"bm25": lex.top(width), "dense": den.top(width),
            "rrf": rrf([lex, den], k=k, weights=list(weights)).top(width),
            "zscore": zscore_fusion([lex, den], list(weights)).top(width)}


def _summarise(rows: list[dict[str, Any]], keys: list[str]) -> Any:
    import pandas as pd

    frame = pd.DataFrame(rows)
    return frame.groupby(keys).agg(cases=("case", "nunique"), set_recall=("set", "mean"),
                                   item_recall=("item", "mean")).reset_index()


def span_recall(index: Any, lists: Sequence[CaseLists], *, width: int = 50, k: float = 60,
                weights: tuple[float, float] = (1.0, 1.0), by_tag: bool = True) -> Any:
    """Quote-covering candidate recall at ``width`` per retriever (and per tag).

    Returns:
        A DataFrame with columns ``tag`` (``all`` plus each case tag, when ``by_tag``),
        ``method`` (``bm25``, ``dense``, ``rrf``, ``zscore``), ``cases``, ``set_recall`` (share of cases
        whose every quote is covered by one candidate chunk) and ``item_recall``.
    """
    rows = []
    for item in lists:
        for method, ranking in _fused(item, width, k, weights).items():
            share = evidence_share(index, ranking.ids, item.quotes)
            for tag in ("all", *(item.case.tags if by_tag else ())):
                rows.append({"tag": tag, "method": method, "case": item.case.id, "set": share == 1.0,
                             "item": share})
    return _summarise(rows, ["tag", "method"])


def fusion_sweep(index: Any, lists: Sequence[CaseLists], *, widths: Sequence[int] = (50,),
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


def evidence_chunks(index: Any, case: Any, *, role: str | None = None) -> set[str]:
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


def delivered_coverage(index: Any, case: Any, result: Any) -> dict[str, Any]:
    """What the reader got for a case's *decisive* evidence from one funnel result.

    Returns a dict: ``doc_delivered`` (a hit comes from the decisive document),
    ``in_chunk`` (a delivered chunk covers the decisive quote), ``in_section`` (a delivered
    expanded section, after any token cut, covers it), ``truncated`` (a delivered section of
    that document was cut by the budget). When the document is delivered but neither the
    chunk nor its section holds the quote, a reader has to open the document: the
    "reads the whole file anyway" tell.
    """
    decisive = case.decisive
    doc = index.documents.get(decisive.doc_id)
    span = quote_span(doc.text, decisive.quote) if doc is not None else None
    out = {"case": case.id, "doc_delivered": False, "in_chunk": False, "in_section": False,
           "truncated": False}
    if span is None:
        return out
    for hit in result.hits:
        if hit.doc_id != decisive.doc_id:
            continue
        out["doc_delivered"] = True
        chunk = index.rows[hit.row]
        out["in_chunk"] |= covers((chunk.start, chunk.end), span)
        section = index.sections.get(hit.section_id) if hit.section_id else None
        if section is not None and hit.section_text is not None:
            out["in_section"] |= covers((section.start, section.start + len(hit.section_text)), span)
            out["truncated"] |= bool(hit.truncated)
    return out


def whole_file_reads(results: Iterable[Any]) -> dict[str, Any]:
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
            if any("#" in x and x.split("#", 1)[0] in shown for x in later):
                sections += 1
    return {"tasks": tasks, "searches": searches, "followed_by_whole_read": whole,
            "share": whole / searches if searches else 0.0, "section_reads": sections}
