"""BM25 with pseudo-relevance feedback (RM3, :class:`ragkit.retrieval.Feedback`), on and off.

Two parts, nDCG@10 with documents scored by their best chunk, on each BEIR-format set's cached
index (the one ``bench/quality.py`` and ``bench/bm25_params.py`` build, same names and settings):

1. the lexical retriever alone (no dense list, no reranker), every judged query unless
   ``--max-queries``, without feedback and with each (docs, terms, orig_weight) of the grid;
2. the whole default :class:`~ragkit.search.funnel.Funnel` (``deliver=1, expand=False, candidates=100``
   as ``ragkit/evaluation/compare.py`` runs it), without feedback and with the single best setting of part 1
   (best = the highest smallest gain over the sets, then the highest mean gain), on the first
   ``--funnel-queries`` judged queries of each set (reranking is slow).

    python bench/feedback.py --sets scifact-train pydoc ops-all
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from typing import Any

from _common import add_beir_flags, beir_folder, parser, publish

from ragkit import Funnel, FunnelSettings
from ragkit.evaluation import beir_index, doc_run, load_beir, score_run
from ragkit.index import IndexSettings
from ragkit.retrieval import Feedback

LEXICAL = FunnelSettings(retrievers=("lexical",), rerank_mode="none", candidates=100, deliver=1, expand=False)
DEFAULT = FunnelSettings(candidates=100, deliver=1, expand=False)


def label(fb: Feedback | None) -> str:
    """A short name for a setting (``off`` without feedback)."""
    return "off" if fb is None else f"docs={fb.docs} terms={fb.terms} w={fb.orig_weight}"


def ndcg(snap: Any, settings: FunnelSettings, fb: Feedback | None, data: Any, back: dict[str, str],
         qids: list[str]) -> tuple[float, float]:
    """nDCG@10 of ``settings`` over ``qids`` with feedback ``fb``; returns (ndcg, seconds per query)."""
    snap.lexical.feedback = fb
    funnel = Funnel(snap, settings)
    t = time.process_time()
    runs = {q: doc_run(funnel.search(data.queries[q]), back) for q in qids}
    cpu = (time.process_time() - t) / max(1, len(qids))
    snap.lexical.feedback = None
    return score_run(runs, {q: data.qrels[q] for q in qids}, ["ndcg@10"])["ndcg@10"], cpu


def main(argv: list[str] | None = None) -> str:
    """Run both parts and write the Markdown tables (also returned)."""
    ap = add_beir_flags(parser(__doc__, "feedback.md"))
    ap.add_argument("--sets", nargs="*", default=["scifact-train", "pydoc", "ops-all"])
    ap.add_argument("--embedder", default="bge")
    ap.add_argument("--max-queries", type=int, default=0, help="lexical part; 0: every judged query")
    ap.add_argument("--funnel-queries", nargs="*", default=["scifact-train:100", "80"],
                        help="NAME:N for one set, or N for the others; 0 skips the funnel part")
    ap.add_argument("--docs", type=int, nargs="*", default=[5, 10])
    ap.add_argument("--terms", type=int, nargs="*", default=[10, 20])
    ap.add_argument("--orig-weight", type=float, nargs="*", default=[0.5, 0.7])
    args = ap.parse_args(argv)
    funnel_n = {"*": 80}
    for item in args.funnel_queries:
        name, _, n = item.rpartition(":")
        funnel_n[name or "*"] = int(n)
    grid: list[Feedback | None] = [None] + [Feedback(docs=d, terms=t, orig_weight=w) for d in args.docs
                                            for t in args.terms for w in args.orig_weight]
    loaded = {}
    lexical: dict[str, dict[str, float]] = {}
    lex_cpu: dict[str, dict[str, float]] = {}
    for name in args.sets:
        path = beir_folder(name, args.sets_dir)
        if not path.is_dir():
            print(f"{name}: skipped ({path} is absent)")
            continue
        data = load_beir(path, split="train" if name == "scifact-train" else "test")
        index, back = beir_index(data, name=f"{name}-{args.embedder}", cache_dir=args.cache,
                                 settings=IndexSettings(embedder=args.embedder))
        snap = index.snapshot()
        qids = sorted(q for q in data.queries if data.qrels.get(q))
        loaded[name] = (data, back, snap, qids)
        lexical[name], lex_cpu[name] = {}, {}
        for fb in grid:
            value, cpu = ndcg(snap, LEXICAL, fb, data, back, qids[: args.max_queries or None])
            lexical[name][label(fb)], lex_cpu[name][label(fb)] = value, cpu
            print(name, label(fb), round(value, 4), f"{cpu * 1000:.1f} ms/q", flush=True)
    names = list(loaded)
    gains = {label(fb): [lexical[n][label(fb)] - lexical[n]["off"] for n in names] for fb in grid[1:]}
    best_fb = max(grid[1:], key=lambda fb: (min(gains[label(fb)]), sum(gains[label(fb)])))
    load = os.getloadavg()[0]
    cli = sys.argv[1:] if argv is None else argv
    threads = f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} " if "OMP_NUM_THREADS" in os.environ else ""
    lines = ["# BM25 with pseudo-relevance feedback (RM3), nDCG@10\n",
             f"Command: `{threads}python bench/feedback.py {' '.join(cli)}` on "
             f"{dt.date.today().isoformat()} (load average {load:.1f} at the end); documents by their best "
             "chunk; each set's cached index (embedder "
             f"`{args.embedder}`). Feedback: `ragkit.retrieval.Feedback(docs, terms, orig_weight)` "
             "set on the "
             "index's `SegmentedBM25` (`snapshot.lexical.feedback`); `off` is today's BM25.\n",
             "## BM25 alone (lexical retriever, no reranker)\n",
             "| setting | " + " | ".join(f"{n} ({len(loaded[n][3][: args.max_queries or None])} q)"
                                       for n in names) + " | smallest gain | CPU ms/query |",
             "|---|" + "---|" * (len(names) + 2)]
    for fb in grid:
        key = label(fb)
        cells = [f"{lexical[n][key]:.4f}" for n in names]
        worst = "" if fb is None else f"{min(gains[key]):+.4f}"
        cpu = sum(lex_cpu[n][key] for n in names) / max(1, len(names)) * 1000
        text = f"**{key}**" if fb == best_fb else key
        lines.append(f"| {text} | " + " | ".join(cells) + f" | {worst} | {cpu:.1f} |")
    lines.append(f"\nBest (highest smallest gain, then mean gain): **{label(best_fb)}**; smallest gain "
                 f"{min(gains[label(best_fb)]):+.4f}, mean {sum(gains[label(best_fb)]) / len(names):+.4f}. "
                 "CPU ms/query is the mean over the sets of a lexical funnel call (first pass, feedback, "
                 "second pass, best-chunk bookkeeping).\n")
    funnel_rows = []
    for name in names:
        data, back, snap, qids = loaded[name]
        n = funnel_n.get(name, funnel_n["*"])
        if n <= 0:
            continue
        off, off_cpu = ndcg(snap, DEFAULT, None, data, back, qids[:n])
        on, on_cpu = ndcg(snap, DEFAULT, best_fb, data, back, qids[:n])
        print(name, "funnel", round(off, 4), round(on, 4), flush=True)
        funnel_rows.append(f"| {name} | {len(qids[:n])} | {off:.4f} | {on:.4f} | {on - off:+.4f} | "
                           f"{off_cpu:.2f} | {on_cpu:.2f} |")
    if funnel_rows:
        lines += [f"## The default funnel, without and with {label(best_fb)}\n",
                  "`Funnel(index, FunnelSettings(candidates=100, deliver=1, expand=False))`: BM25 + dense, "
                  "RRF, the bundled cross-encoder, the default rerank mode; first judged queries by id.\n",
                  "| set | queries | off | with feedback | gain | CPU s/query off | CPU s/query on "
                  "(reranker scores of pairs already seen come from the process's score cache) |",
                  "|---|---|---|---|---|---|---|", *funnel_rows, ""]
    text = "\n".join(lines) + "\n"
    return publish(args.result, text)


if __name__ == "__main__":
    main()
