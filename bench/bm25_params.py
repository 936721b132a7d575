"""BM25's k1 (term-frequency saturation) and b (document-length normalisation), swept.

The lexical retriever alone (no dense list, no reranker), documents scored by their best chunk,
nDCG@10 on each BEIR-format set. Each set's index is the one ``bench/quality.py`` builds and
caches (same names, same settings), so the postings are shared; only the BM25 scorer over them
is rebuilt per (k1, b). Lexical-only runs are cheap, so every judged query is used unless
``--max-queries`` says otherwise.

    python bench/bm25_params.py --sets scifact-train pydoc ops-all
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from pathlib import Path

from _common import add_beir_flags, beir_folder, parser, publish

from ragkit import Funnel, FunnelSettings
from ragkit.evaluation import beir_index, doc_run, load_beir, score_run
from ragkit.index import IndexSettings
from ragkit.retrieval import BM25_PARAMS, SegmentedBM25

K1 = (0.9, 1.2, 1.5, 2.0)
B = (0.4, 0.6, 0.75, 0.9)


def sweep(path: Path, name: str, cache: Path, embedder: str, max_queries: int,
          grid: list[tuple[float, float]]) -> tuple[int, dict[tuple[float, float], float]]:
    """nDCG@10 of BM25 alone for each (k1, b) on one set; returns (queries, {(k1, b): ndcg})."""
    data = load_beir(path, split="train" if name == "scifact-train" else "test")
    index, back = beir_index(data, name=f"{name}-{embedder}", cache_dir=cache,
                             settings=IndexSettings(embedder=embedder))
    snap = index.snapshot()
    qids = sorted(q for q in data.queries if data.qrels.get(q))[: max_queries or None]
    qrels = {q: data.qrels[q] for q in qids}
    settings = FunnelSettings(retrievers=("lexical",), rerank_mode="none", candidates=100, deliver=1,
                              expand=False)
    out = {}
    for k1, b in grid:
        snap.lexical = SegmentedBM25([s.postings for s in snap.segments], snap.live,
                                     stemmer=snap.settings.bm25_stemmer,
                                     stopwords=snap.settings.bm25_stopwords, k1=k1, b=b)
        funnel = Funnel(snap, settings)
        runs = {q: doc_run(funnel.search(data.queries[q]), back) for q in qids}
        out[(k1, b)] = score_run(runs, qrels, ["ndcg@10"])["ndcg@10"]
        print(name, k1, b, round(out[(k1, b)], 4), flush=True)
    return len(qids), out


def main(argv: list[str] | None = None) -> str:
    """Run the sweep and write the Markdown table (also returned)."""
    ap = add_beir_flags(parser(__doc__, "bm25_params.md"))
    ap.add_argument("--sets", nargs="*", default=["scifact-train", "pydoc", "ops-all"])
    ap.add_argument("--embedder", default="bge")
    ap.add_argument("--max-queries", type=int, default=0, help="0: every judged query")
    ap.add_argument("--k1", type=float, nargs="*", default=list(K1))
    ap.add_argument("--b", type=float, nargs="*", default=list(B))
    args = ap.parse_args(argv)
    grid = [(k1, b) for k1 in args.k1 for b in args.b]
    default = (BM25_PARAMS["k1"].default, BM25_PARAMS["b"].default)
    lines = ["# BM25 k1 and b, swept (lexical retriever alone, nDCG@10)\n",
             f"Command: `python bench/bm25_params.py {' '.join(sys.argv[1:])}` on "
             f"{dt.date.today().isoformat()}; documents by their best chunk; ragkit's tokeniser "
             f"(identifiers kept whole and split, English stemmer, stopwords). The default is "
             f"k1={default[0]}, b={default[1]}.\n"]
    for name in args.sets:
        path = beir_folder(name, args.sets_dir)
        if not path.is_dir():
            lines.append(f"{name}: skipped ({path} is absent)\n")
            continue
        t = time.perf_counter()
        n, scores = sweep(path, name, args.cache, args.embedder, args.max_queries, grid)
        best = max(scores.values())
        lines.append(f"## {name} ({n} queries, {time.perf_counter() - t:.0f} s)\n")
        lines.append("| k1 \\ b | " + " | ".join(str(b) for b in args.b) + " |")
        lines.append("|---|" + "---|" * len(args.b))
        for k1 in args.k1:
            cells = []
            for b in args.b:
                v = scores[(k1, b)]
                text = f"{v:.4f}"
                if (k1, b) == default:
                    text += " (default)"
                cells.append(f"**{text}**" if v == best else text)
            lines.append(f"| {k1} | " + " | ".join(cells) + " |")
        lines.append("")
    text = "\n".join(lines) + "\n"
    return publish(args.result, text)


if __name__ == "__main__":
    main()
