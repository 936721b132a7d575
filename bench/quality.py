"""Choose the funnel's defaults on several collections at once: ablations and variants, side by side.

For each BEIR-format set (SciFact train from ``../shared/data/scifact-train`` when present,
and the sets of ``bench/build_beir_sets.py``) and each embedder, builds (or reuses) the
collection's index and runs :func:`ragkit.evaluation.compare.evaluate_beir` with the funnel's ablations
(BM25, dense, RRF, z-score fusion, reranker alone) and the variants below, all as settings of the same
Funnel. Reranker scores are cached per (pair length, query, passage), so variants that
differ only in how ranks are fused cost no extra reranking. Reports nDCG@10 per set and
method, and whether each method stays at or above both first stages (RRF, z-score) and above
BM25 on every set.

Writes ``bench/results/quality.md`` (or ``--result``).

Usage: python bench/quality.py [--sets scifact-train pydoc ops-all] [--embedders bge] [--max-queries 200]
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
from pathlib import Path
from typing import Any

from _common import add_beir_flags, beir_folder, parser, publish

from ragkit import Index
from ragkit.evaluation import ABLATIONS, evaluate_beir, load_beir
from ragkit.index import IndexSettings
from ragkit.models import get_embedder

SETS = ("scifact-train", "pydoc", "ops-all", "ops-multi_hop", "ops-vocabulary_mismatch")

#: Variants of the funnel (settings overrides) measured beside the ablations.
VARIANTS: dict[str, dict[str, Any]] = {
    # fusion of the two retrievers and of the reranker (bench/results/fusion.md)
    "former": {"fusion": "rrf", "rerank_mode": "rrf", "rerank_weight": 1.0},  # the default until 2026-12-01
    "rrf+rr1:2": {"fusion": "rrf", "rerank_mode": "rrf", "rerank_weight": 2.0},
    "z+rr1:1": {"rerank_mode": "rrf", "rerank_weight": 1.0},
    "z+rr1:2": {"rerank_mode": "rrf", "rerank_weight": 2.0},
    "fuse1:1:1": {"rerank_weight": 1.0},
    "fuse1:1:3": {"rerank_weight": 3.0},
    "fuse-rrf": {"fusion": "rrf"},
    # one setting changed from the default
    "w1:1": {"rerank_weight": 1.0},
    "w2:3": {"rerank_weight": 1.5},
    "w1:3": {"rerank_weight": 3.0},
    "fixed30": {"depth_policy": "fixed"},  # the default until 2 December (bench/results/rerank_depth.md)
    "d20": {"rerank_depth": 20, "depth_policy": "fixed"},
    "d10": {"rerank_depth": 10, "depth_policy": "fixed"},
    "t128": {"rerank_tokens": 128},
    "t512": {"rerank_tokens": 512},
    "k20": {"rrf_k": 20},
}


class ReusedVectors:
    """An embedder that returns vectors an existing index already holds for the same text (else encodes).

    The ``ops-*`` sets hold the course corpus's documents, chunked exactly as the course index
    chunks them, so their vectors can be taken from an index built with the same model
    (``--reuse-index``) instead of being encoded again. Queries are always encoded.
    """

    def __init__(self, index_path: Path, model: Any) -> None:
        index = Index.load(index_path)
        self.name, self.version, self.dim = model.name, model.version, model.dim
        self.model = model
        self.table = {c.contextual_text(): index.vectors[i] for i, c in enumerate(index.rows)}
        recorded = index.manifest.get("embedder", {})
        if (recorded.get("name"), recorded.get("version")) != (model.name, model.version):
            raise SystemExit(f"{index_path} was embedded with {recorded}, not {model.name}: not reusable")

    def encode(self, texts: list[str], **kwargs: Any) -> Any:
        import numpy as np

        missing = [t for t in texts if t not in self.table]
        fresh = dict(zip(missing, self.model.encode(missing), strict=True)) if missing else {}
        return np.stack([self.table[t] if t in self.table else fresh[t] for t in texts]).astype(np.float32)

    def encode_queries(self, queries: list[str]) -> Any:
        return self.model.encode_queries(queries)


def main(argv: list[str] | None = None) -> str:
    ap = add_beir_flags(parser(__doc__, "quality.md"))
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    ap.add_argument("--embedders", nargs="*", default=["bge"])
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS))
    ap.add_argument("--max-queries", type=int, default=200)
    ap.add_argument("--reuse-index", type=Path, default=None,
                        help="take ops-* corpus vectors from this course index (same embedder)")
    args = ap.parse_args(argv)
    methods = {**ABLATIONS, **{v: VARIANTS[v] for v in args.variants}}
    table: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    notes = []
    for set_name in args.sets:
        path = beir_folder(set_name, args.sets_dir)
        if not path.is_dir():
            notes.append(f"{set_name}: skipped ({path} is absent)")
            continue
        split = "train" if set_name == "scifact-train" else "test"
        data = load_beir(path, split=split)
        for emb in args.embedders:
            t = time.perf_counter()
            reuse = None
            if args.reuse_index is not None and set_name.startswith("ops-"):
                reuse = ReusedVectors(args.reuse_index, get_embedder(emb))
            report = evaluate_beir(data, name=f"{set_name}-{emb}", cache_dir=args.cache, embedder=reuse,
                                   index_settings=IndexSettings(embedder=emb), methods=methods,
                                   max_queries=args.max_queries, progress=False,
                                   log=lambda m: print(m, file=sys.stderr, flush=True))
            table[(set_name, emb)] = report
            line = {m: round(r["ndcg@10"], 4) for m, r in report.items()}
            print(set_name, emb, f"{time.perf_counter() - t:.0f}s", json.dumps(line), flush=True)
    names = list(methods)
    head = "| set | embedder | queries | " + " | ".join(names) + " |"
    lines = [head, "|---|---|---|" + "---|" * len(names)]
    for (set_name, emb), report in table.items():
        n = int(next(iter(report.values())).get("queries", 0))
        best = max(r["ndcg@10"] for r in report.values())
        cells = [(f"**{report[m]['ndcg@10']:.4f}**" if report[m]["ndcg@10"] == best else
                  f"{report[m]['ndcg@10']:.4f}") for m in names]
        lines.append(f"| {set_name} | {emb} | {n} | " + " | ".join(cells) + " |")
    checks = ["| method | >= rrf on every set | >= zscore on every set | > bm25 on every set "
              "| mean nDCG@10 |",
              "|---|---|---|---|---|"]
    for m in names:
        rows = list(table.values())
        if not rows:
            break
        yes = {True: "yes", False: "no"}
        ge_rrf = all(r[m]["ndcg@10"] >= r["rrf"]["ndcg@10"] - 1e-9 for r in rows)
        ge_z = all(r[m]["ndcg@10"] >= r["zscore"]["ndcg@10"] - 1e-9 for r in rows)
        gt_bm25 = all(r[m]["ndcg@10"] > r["bm25"]["ndcg@10"] for r in rows)
        mean = sum(r[m]["ndcg@10"] for r in rows) / len(rows)
        checks.append(f"| {m} | {yes[ge_rrf]} | {yes[ge_z]} | {yes[gt_bm25]} | {mean:.4f} |")
    lat = ["| set | embedder | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for (set_name, emb), report in table.items():
        cells = " | ".join(f"{report[m]['ms_p50']:.0f}" for m in names)
        lat.append(f"| {set_name} | {emb} | {cells} |")
    legend = "; ".join(f"`{k}` = {v}" for k, v in VARIANTS.items() if k in methods)
    cmd = "python bench/quality.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = ("# Funnel quality on BEIR-format sets: ablations and variants\n\n"
            "nDCG@10 (bold: best on the set); documents scored by their best chunk; every method is the "
            "same Funnel with settings changed (`ragkit.evaluation.compare`). `default` = FunnelSettings() "
            "as "
            f"committed; variants change settings from it: {legend}. "
            + (f"First {args.max_queries} judged queries of each set (sorted by id).\n\n" if args.max_queries
               else "All judged queries of each set.\n\n") + "\n".join(lines) + "\n\n## Checks\n\n"
            + "\n".join(checks) + "\n\n## Median funnel ms per query (2-core machine shared with other "
            "jobs; noisy)\n\n" + "\n".join(lat) + "\n\n" + "\n".join(notes)
            + f"\n\nProduced by `{cmd.strip()}` on {dt.date.today().isoformat()}. SciFact: Wadden et al. "
            "2020, BEIR packaging (Thakur et al. 2021), CC BY-NC 2.0; train split only.\n")
    return publish(args.result, text)


if __name__ == "__main__":
    main()
