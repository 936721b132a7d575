"""Token size of a search_knowledge response versus reading the top documents, on the course corpus.

CURRICULUM section 1 says five 300-token snippets cost about 1.5k tokens and five full
documents about 20k. This script measures what ragkit's tools actually hand a model,
over evidence cases of the course corpus (every Nth answerable case, each searched as its
caller over the corpus as published at its ``as_of``):

- ``search_knowledge(task, k=5)``: the whole response a model sees (JSON with envelopes and
  excerpts), and the excerpt texts alone;
- ``retrieve_documents`` of the 5 top distinct documents (doc_id, whole document, capped
  at 3,000 tokens each; max 4 ids per call, so two calls), response and texts alone;
- the same 5 documents uncapped (their full text).

Tokens are counted with ragkit's tokenizer (the bundled embedder's WordPiece; hosted BPE
tokenizers differ by roughly 10-20%). Writes bench/results/tool_sizes.md.

Run from the repository root (needs the cached course index)::

    OMP_NUM_THREADS=1 .venv/bin/python bench/tool_sizes.py [--cases 20]
"""

from __future__ import annotations

import statistics
import time

from _common import COURSE_INDEX, course_cases, parser, publish

from ragkit import Index, Toolbox
from ragkit.core import snapshot_filters
from ragkit.models import count_tokens


def _quantiles(values: list[int]) -> str:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return (f"{statistics.median(values):,.0f} (IQR {q[0]:,.0f}-{q[2]:,.0f}; "
            f"min {min(values):,}, max {max(values):,})")


def main() -> None:
    ap = parser(__doc__, "tool_sizes.md", flag="--out")
    ap.add_argument("--cases", type=int, default=20, help="how many answerable cases (spread over the file)")
    a = ap.parse_args()

    index = Index.load(COURSE_INDEX)  # read only: never rebuilds the shared cache
    cases = course_cases(answerable=True)
    step = max(1, len(cases) // a.cases)
    chosen = cases[::step][: a.cases]
    rows = []
    t0 = time.perf_counter()
    for case in chosen:
        caller = case.caller
        box = Toolbox(index, caller, filters=snapshot_filters(case.as_of))
        search = box.search_knowledge(case.task, k=5)
        wider = box.search_knowledge(case.task, k=8)  # enough ranked hits to name 5 distinct documents
        top = list(dict.fromkeys(r["doc_id"] for r in search["results"] + wider["results"]))[:5]
        fetched = [box.retrieve_documents(top[:4]), box.retrieve_documents(top[4:])] if len(top) > 4 \
            else [box.retrieve_documents(top)]
        docs = [d for f in fetched for d in f.get("documents", [])]
        rows.append({
            "case": case.id, "results": len(search["results"]), "docs": len(top),
            "search_response": search["tokens"],
            "search_text": sum(count_tokens(r["text"]) for r in search["results"]),
            "retrieve_response": sum(f["tokens"] for f in fetched),
            "retrieve_text": sum(d["tokens"] for d in docs),
            "truncated": sum(d["truncated"] for d in docs),
            "full_docs": sum(count_tokens(index.documents[d].text) for d in top)})
    seconds = time.perf_counter() - t0

    def col(name: str) -> list[int]:
        return [r[name] for r in rows]

    ratio = statistics.median(r["retrieve_response"] / r["search_response"] for r in rows)
    lines = [
        "# Tool response sizes: search_knowledge (k=5) vs retrieve_documents of the top 5 documents", "",
        f"Produced by `OMP_NUM_THREADS=1 .venv/bin/python bench/tool_sizes.py --cases {a.cases}` on "
        f"{time.strftime('%Y-%m-%d', time.gmtime())} over the cached course index ({len(index.documents)} "
        f"documents), {len(rows)} answerable evidence cases (every {step}th of "
        f"datasets/opscorpus/cases.jsonl), each searched as its caller over the corpus as published at its "
        f"as_of. Tokens: ragkit's tokenizer (WordPiece of the bundled embedder; hosted BPE tokenizers differ "
        f"by roughly 10-20%). {seconds:.0f} s on a shared, loaded 2-core machine.", "",
        "Median over cases (interquartile range, min, max), tokens:", "",
        "| what the model is handed | tokens |", "|---|---|",
        "| search_knowledge k=5: whole response (JSON, envelopes, 5 excerpts) | "
        f"{_quantiles(col('search_response'))} |",
        f"| search_knowledge k=5: the 5 excerpt texts alone | {_quantiles(col('search_text'))} |",
        f"| retrieve_documents, 5 top documents (2 calls, 4 + 1 ids, capped 3,000 each): whole responses | "
        f"{_quantiles(col('retrieve_response'))} |",
        f"| retrieve_documents, the 5 document texts alone (capped) | {_quantiles(col('retrieve_text'))} |",
        f"| the same 5 documents uncapped (full text) | {_quantiles(col('full_docs'))} |", "",
        f"Median ratio retrieve / search (whole responses): {ratio:.1f}x. Documents cut by the 3,000-token "
        f"cap: {sum(col('truncated'))} of {sum(col('docs'))}.", "",
        "CURRICULUM section 1 for comparison: five 300-token snippets ~ 1.5k tokens; five full documents "
        "~ 20k.", "", "Per case:", "",
        "| case | results | docs | search resp. | search text | retrieve resp. | retrieve text | cut "
        "| full docs |",
        "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['results']} | {r['docs']} | {r['search_response']:,} | "
              f"{r['search_text']:,} | {r['retrieve_response']:,} | {r['retrieve_text']:,} | "
              f"{r['truncated']} | {r['full_docs']:,} |"
              for r in rows]
    publish(a.out, "\n".join(lines) + "\n", echo=False)
    print("\n".join(lines[:14]))


if __name__ == "__main__":
    main()
