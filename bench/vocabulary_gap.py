"""Where the decisive document of a development paraphrase ranks in each first-stage retriever.

The offline agent's first search is the question as written. A question in other words than the
document's ("What slice of Acme's takings do we keep back as collateral?" for "Acme rolling
reserve: 12% ...") can only be found by the dense retriever, and the cross-encoder only ever sees
the fused candidates down to the funnel's rerank depth. This bench asks, per phrasing style, how
far down BM25 and the dense retriever put the case's decisive document (its best chunk) when the
question is the query, as the case's caller over the documents published by its ``as_of``, and
how often the fused list holds it within the rerank depth.

Development paraphrases only: sealed families are never scored here (their cases are run only
by ``bench/agent_quality.py --split sealed``, which reports aggregates).

Usage: python bench/vocabulary_gap.py [--depth 200] [--limit N] [--result bench/results/vocabulary_gap.md]
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from typing import Any

from _common import PARAPHRASES, SPLITS, parser, publish

from ragkit import FunnelSettings, load_cases
from ragkit.core import snapshot_filters
from ragkit.course import course_index
from ragkit.evaluation import assign_splits, load_splits
from ragkit.retrieval.fusion import Ranking, fuse


def best_rank(ranking: Ranking, index: Any, doc_ids: set[str]) -> int | None:
    """The 1-based rank of the first row of one of ``doc_ids`` in ``ranking`` (``None``: absent)."""
    for n, row in enumerate(ranking.ids, 1):
        if index.envelope(row).doc_id in doc_ids:
            return n
    return None


def within(ranks: list[int | None], limit: int) -> str:
    """How many of ``ranks`` are at most ``limit``, as ``n/N``."""
    return f"{sum(1 for r in ranks if r is not None and r <= limit)}/{len(ranks)}"


def median_rank(ranks: list[int | None], depth: int) -> str:
    """The median rank, an absent document counted as beyond ``depth``."""
    values = [r if r is not None else depth + 1 for r in ranks]
    m = statistics.median(values) if values else 0
    return f">{depth}" if m > depth else f"{m:g}"


def main() -> int:
    p = parser(__doc__, "vocabulary_gap.md")
    p.add_argument("--depth", type=int, default=200, help="rows each retriever returns for the ranks")
    p.add_argument("--limit", type=int, default=0, help="only the first N development cases (0 = all)")
    args = p.parse_args()
    settings = FunnelSettings()
    index = course_index(progress=False)
    cases = load_cases(PARAPHRASES)
    split = assign_splits(cases, load_splits(SPLITS), "paraphrases")
    ranks: dict[str, dict[str, list[int | None]]] = defaultdict(lambda: defaultdict(list))
    depth, width = settings.rerank_depth, settings.candidates
    for case in cases:
        if split[case.id] != "dev" or not case.answerable:
            continue
        if args.limit and len(ranks["all"]["bm25"]) >= args.limit:
            break
        decisive = {e.doc_id for e in case.evidence if e.role == "decisive"}
        mask = index.mask(case.caller, snapshot_filters(case.as_of))
        lexical = index.search_lexical(case.task, args.depth, mask)
        dense = index.search_dense(case.task, args.depth, mask)
        # the funnel's first stage: each list cut to its width, fused as the funnel fuses them
        fused = fuse([Ranking(lexical.ids[:width], lexical.scores[:width]),
                      Ranking(dense.ids[:width], dense.scores[:width])],
                     method=settings.fusion, k=settings.rrf_k,
                     weights=[settings.lexical_weight, settings.dense_weight]).top(width)
        style = case.id.rsplit(".", 1)[-1].split("-")[0]
        for name, ranking in (("bm25", lexical), ("dense", dense), ("fused", fused)):
            rank = best_rank(ranking, index, decisive)
            ranks[style][name].append(rank)
            ranks["all"][name].append(rank)
    lines = [
        "# Where a development paraphrase's decisive document ranks in the first stage",
        "",
        f"Command: `{' '.join(['python', *sys.argv])}`. Answerable development paraphrases "
        f"({len(ranks['all']['bm25'])} cases), the question as the query, as the case's caller over "
        "the documents published by its `as_of` (no `valid_at` filter: the agent adds one when the "
        f"question is about what holds). Funnel defaults: {width} candidates per retriever, fused by "
        f"`{settings.fusion}`, the cross-encoder scores the fused top {depth} (adaptive: fewer when it "
        "is confident). A rank is that of the document's best chunk; medians count an absent "
        f"document as beyond {args.depth}.",
        "",
        f"| style | cases | BM25 median rank | dense median rank | dense within {width} | "
        f"dense within 100 | fused within the rerank depth ({depth}) |",
        "|---|---|---|---|---|---|---|",
    ]
    for style in sorted(ranks, key=lambda s: (s == "all", s)):
        r = ranks[style]
        lines.append(
            f"| {style} | {len(r['bm25'])} | {median_rank(r['bm25'], args.depth)} | "
            f"{median_rank(r['dense'], args.depth)} | {within(r['dense'], width)} | "
            f"{within(r['dense'], 100)} | {within(r['fused'], depth)} |"
        )
    publish(args.result, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
