"""Notebook 03's chunker comparison restricted to the long-document cases (issue 24).

Builds (or reopens from the cache) the course index with each chunker (structure, sentence,
fixed; one embedding pass each the first time), then on the answerable cases tagged
``long_document`` and, for contrast, on every third of the other answerable cases:

* quote-covering candidate set recall of BM25, dense and RRF at widths 5..100, and the best RRF
  set recall each chunker reaches within the candidate tokens 50 structure chunks hold (the
  notebook's "equal tokens" reading: bigger chunks win at equal width by being bigger);
* the "read the whole file" proxy: the funnel (no reranker) delivers 4 hits; share of cases
  whose decisive document was delivered but not its quote, per chunker, with and without the
  structure chunker's parent-section expansion.

Writes ``bench/results/chunking_long_documents.md``.

Usage: python bench/chunking_long_documents.py [--others-every 3]
"""

from __future__ import annotations

import datetime as dt
import time

import pandas as pd
from _common import course_cases, parser, publish

from ragkit import Funnel
from ragkit.core import snapshot_filters
from ragkit.course import course_index
from ragkit.evaluation import delivered_coverage, first_stage, span_recall
from ragkit.models import count_tokens_batch

WIDTHS = (5, 10, 20, 50, 100)


def measure(indexes, mean_tokens, cases, label):
    lists = {name: first_stage(idx, cases, width=100) for name, idx in indexes.items()}
    curve = pd.concat([span_recall(indexes[n], lists[n], width=w, by_tag=False).assign(chunker=n, width=w)
                       for n in indexes for w in WIDTHS], ignore_index=True)
    curve["candidate tokens"] = curve.width * curve.chunker.map(mean_tokens)
    rrf = curve[curve.method == "rrf"]
    budget = float(50 * mean_tokens["structure"])
    rows = []
    for n in indexes:
        mine = curve[curve.chunker == n]
        at50 = mine[mine.width == 50].set_index("method").set_recall
        within = rrf[(rrf.chunker == n) & (rrf["candidate tokens"] <= budget * 1.05)]
        best = within.set_recall.max() if len(within) else float("nan")
        width_best = int(within.loc[within.set_recall.idxmax(), "width"]) if len(within) else 0
        rows.append({"cases": label, "chunker": n, "measured": len(lists[n]),
                     "mean chunk tokens": round(float(mean_tokens[n])),
                     "bm25 @50": at50["bm25"], "dense @50": at50["dense"], "rrf @50": at50["rrf"],
                     f"rrf within {budget:,.0f} tokens": best, "at width": width_best})
    return pd.DataFrame(rows), rrf.pivot(index="width", columns="chunker", values="set_recall")


def tell(indexes, cases):
    configs = {"structure + parent section": (indexes["structure"], True),
               "structure, chunk only": (indexes["structure"], False),
               "sentence": (indexes["sentence"], False), "fixed": (indexes["fixed"], False)}
    rows = []
    for name, (idx, expand) in configs.items():
        funnel = Funnel(idx)
        for case in cases:
            result = funnel.search(case.task, scope=case.caller, filters=snapshot_filters(case.as_of),
                                   rerank_mode="none", expand=expand)
            cov = delivered_coverage(idx, case, result)
            tokens = sum(h.tokens or count_tokens_batch([h.evidence])[0] for h in result.hits)
            rows.append({"config": name, **cov, "delivered tokens": tokens})
    t = pd.DataFrame(rows)
    t["quote delivered"] = t.in_chunk | t.in_section
    out = t.groupby("config", sort=False).agg(
        cases=("case", "count"), doc_delivered=("doc_delivered", "mean"),
        quote_delivered=("quote delivered", "mean"), median_delivered_tokens=("delivered tokens", "median"))
    out["doc but not quote"] = t[t.doc_delivered].groupby("config", sort=False)["quote delivered"].apply(
        lambda s: 1 - s.mean())
    return out


def main() -> None:
    ap = parser(__doc__, "chunking_long_documents.md")
    ap.add_argument("--others-every", type=int, default=3, help="sample every Nth other answerable case")
    args = ap.parse_args()
    start = time.time()
    indexes = {"structure": course_index(), "sentence": course_index(chunker="sentence"),
               "fixed": course_index(chunker="fixed")}
    built = time.time() - start
    mean_tokens = pd.Series({n: float(pd.Series(count_tokens_batch([r.text for r in idx.rows])).mean())
                             for n, idx in indexes.items()})
    answerable = course_cases(answerable=True)
    long = [c for c in answerable if "long_document" in c.tags]
    others = [c for c in answerable if "long_document" not in c.tags][:: args.others_every]
    t1, curve_long = measure(indexes, mean_tokens, long, "long_document")
    t2, curve_other = measure(indexes, mean_tokens, others, f"other (1 in {args.others_every})")
    proxy_long = tell(indexes, long)
    proxy_other = tell(indexes, others[::2])
    fmt = lambda df: df.round(3).to_markdown()  # noqa: E731
    text = (
        "# Chunkers on the long-document cases\n\n"
        f"{len(long)} answerable long-document cases, {len(others)} other answerable cases (one in "
        f"{args.others_every}). Quote-covering candidate set recall (a candidate chunk must hold the whole "
        "evidence quote), searched as each case's caller over the documents published by its as_of.\n\n"
        "## Set recall at width 50, and at equal candidate tokens\n\n"
        + pd.concat([t1, t2]).round(3).to_markdown(index=False)
        + "\n\n## RRF set recall by width, long-document cases\n\n" + fmt(curve_long)
        + "\n\n## RRF set recall by width, other cases\n\n" + fmt(curve_other)
        + "\n\n## The 'read the whole file' proxy (4 hits delivered, no reranker)\n\nLong-document cases:\n\n"
        + fmt(proxy_long) + f"\n\nOther cases (1 in {2 * args.others_every}):\n\n" + fmt(proxy_other)
        + f"\n\nIndexes opened or built in {built:.0f} s. Produced by "
        f"`python bench/chunking_long_documents.py` on {dt.date.today().isoformat()}, 2 shared cores.\n"
    )
    publish(args.result, text)


if __name__ == "__main__":
    main()
