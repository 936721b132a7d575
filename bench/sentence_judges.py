"""Can a shipped model tell which sentence answers a question asked in other words?

The offline agent accepts a value only from a sentence that shares a word with the ask, which is
why it fails questions in other words ("What sum was at stake?" for "Amount in question: CZK
17,696.17"). The obvious remedy is to let a model judge instead. This bench measures whether the
models the kit ships could: for each development paraphrase (sealed families are never scored
here), it searches with the question as the query (as the case's caller, over the documents
published by its ``as_of``), takes every sentence of the top ``--passages`` results that holds a
value of the asked form (:func:`ragkit.text.asked.asked_forms`), situated by title and heading,
and lets each judge pick one:

* ``cross-encoder``: the bundled cross-encoder's logit for (question, sentence)
  (:class:`ragkit.evidence.fit.SentenceFit`); it would answer when the best logit is at least
  :data:`ragkit.evidence.fit.FITS`;
* ``dense``: cosine of the bundled embedder's query and passage vectors;
* ``local-llm`` (``--llm``; needs ``./run setup-llm``): the local model is shown the numbered
  sentences and asked for the number of the one that states the exact answer, or 0.

For answerable cases it counts how often the candidates hold the expected value at all and how
often each judge picks a sentence holding it; for unanswerable ones, how often a judge would
answer (cross-encoder: best logit at or above the threshold; local model: any number but 0).

Usage: python bench/sentence_judges.py [--styles synonyms] [--passages 3] [--limit N] [--llm]

To judge with a stronger cross-encoder than the bundled one (online, or from a local folder), name
it the way the funnel's reranker is named: ``RAGKIT_RERANKER=BAAI/bge-reranker-base python
bench/sentence_judges.py``. The funnel's reranking and :class:`ragkit.evidence.fit.SentenceFit`
then both use that model; the first stage (BM25 and dense over the course index) stays the same.
With no network only the bundled model loads, and the run stops with a message that says so.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from typing import Any

import numpy as np
from _common import PARAPHRASES, SPLITS, parser, publish

from ragkit import load_cases
from ragkit.core import snapshot_filters
from ragkit.course import course_index
from ragkit.evaluation import assign_splits, load_splits
from ragkit.evidence.fit import FITS, SentenceFit, situated_sentence
from ragkit.models.bundled import get_embedder
from ragkit.search.funnel import Funnel
from ragkit.text.asked import asked_forms
from ragkit.text.values import read_values, sentence_spans

PROMPT = ("Question: {question}\n\nSentences:\n{listing}\n\nWhich sentence states the exact answer to the "
          "question? A sentence about a similar but different thing does not count. Reply with its number "
          "only, or 0 if none of them answers the question.")


def candidates(hits: list[Any], forms: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    """(situated sentence, normalised values of the asked forms) for each sentence that holds one."""
    out = []
    for hit in hits:
        title = str(getattr(hit.envelope, "title", "") or "")
        for a, b in sentence_spans(hit.text):
            values = read_values(hit.text[a:b], forms=forms)
            if values:
                out.append((situated_sentence(hit.text, a, b, title),
                            [str(v.value).lower() for v in values]))
    return out


def local_judge() -> Any:
    """A function (question, sentences) -> 1-based pick or 0, backed by the local model."""
    from ragkit.agent.llm_local import LocalLlama
    from ragkit.models.local_llm import local_model_path

    client = LocalLlama(local_model_path(progress=False), context=4096, max_output=8)

    def judge(question: str, sentences: list[str]) -> int:
        listing = "\n".join(f"{n}. {' '.join(s.split())}" for n, s in enumerate(sentences, 1))
        reply = client.chat([{"role": "user", "content": PROMPT.format(question=question, listing=listing)}],
                            tools=[], use_tools=False)
        digits = "".join(ch for ch in reply.text if ch.isdigit())[:2]
        pick = int(digits) if digits else 0
        return pick if pick <= len(sentences) else 0

    return judge


def main() -> int:
    p = parser(__doc__, "sentence_judges.md")
    p.add_argument("--styles", nargs="+", default=["synonyms"], help="answerable phrasing styles to score")
    p.add_argument("--passages", type=int, default=3, help="top results whose sentences are candidates")
    p.add_argument("--max-sentences", type=int, default=12, help="candidates shown to a judge, at most")
    p.add_argument("--limit", type=int, default=0, help="only the first N cases of each group (0 = all)")
    p.add_argument("--llm", action="store_true", help="also judge with the local model (./run setup-llm)")
    args = p.parse_args()
    index = course_index(progress=False)
    funnel, fit, embedder = Funnel(index), SentenceFit(), get_embedder()
    llm = local_judge() if args.llm else None
    cases = load_cases(PARAPHRASES)
    split = assign_splits(cases, load_splits(SPLITS), "paraphrases")
    judges = ["cross-encoder", "dense"] + (["local-llm"] if llm else [])
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    best_fits: dict[str, list[float]] = defaultdict(list)
    for case in cases:
        style = case.id.rsplit(".", 1)[-1]
        if split[case.id] != "dev" or (case.answerable and style not in args.styles):
            continue
        group = f"answerable: {', '.join(args.styles)}" if case.answerable else "unanswerable (every style)"
        c = counts[group]
        if args.limit and c["cases"] >= args.limit:
            continue
        c["cases"] += 1
        forms = asked_forms(case.task)
        hits = funnel.search(case.task, scope=case.caller, filters=snapshot_filters(case.as_of),
                             deliver=args.passages).hits if forms else []
        found = candidates(hits, forms)[: args.max_sentences]
        if not found:
            continue
        c["with candidates"] += 1
        sentences = [s for s, _ in found]
        expected = str(case.expected.value).lower() if case.expected is not None else None
        holds = [expected in values for _, values in found] if expected else [False] * len(found)
        c["expected among them"] += any(holds)
        logits = fit(case.task, sentences)
        vectors = np.asarray(embedder.encode(sentences))
        cosines = list(vectors @ np.asarray(embedder.encode_queries([case.task]))[0])
        picks = {"cross-encoder": int(np.argmax(logits)) + 1, "dense": int(np.argmax(cosines)) + 1}
        if llm is not None:
            picks["local-llm"] = llm(case.task, sentences)
        best_fits["right" if case.answerable and holds[picks["cross-encoder"] - 1] else
                  "wrong" if case.answerable else "unanswerable"].append(max(logits))
        for name, pick in picks.items():
            if case.answerable:
                c[f"{name} right"] += bool(pick) and holds[pick - 1]
            else:
                would = max(logits) >= FITS if name == "cross-encoder" else pick > 0 if name == "local-llm" \
                    else None
                if would is not None:
                    c[f"{name} would answer"] += would
    lines = [
        "# Can a shipped model pick the answering sentence?",
        "",
        f"Command: `{' '.join(['python', *sys.argv])}`. Development paraphrases only (sealed families are "
        f"never scored here); answerable styles: {', '.join(args.styles)}; every unanswerable development "
        f"case. Candidates: the sentences of the top {args.passages} search results (the question as the "
        "query, as the case's caller over the documents published by its `as_of`) that hold a value of the "
        f"asked form, at most {args.max_sentences}, situated by title and heading. A judge is right when the "
        "sentence it picks holds the expected value. For unanswerable cases, 'would answer' counts the "
        f"cross-encoder's best logit at or above FITS = {FITS:g}, and any pick but 0 from the local model "
        "(the dense judge has no threshold).",
        "",
        "| group | cases | with candidates | expected value among them | " +
        " | ".join(f"{j}: right / would answer" for j in judges) + " |",
        "|---|---|---|---|" + "---|" * len(judges),
    ]
    for group, c in sorted(counts.items()):
        answerable = group.startswith("answerable")
        cells = [str(c[f"{j} right"]) if answerable else
                 ("-" if j == "dense" else str(c[f"{j} would answer"])) for j in judges]
        lines.append(f"| {group} | {c['cases']} | {c['with candidates']} | "
                     f"{c['expected among them'] if answerable else '-'} | " + " | ".join(cells) + " |")
    lines += ["", "The cross-encoder's best logit per case, median (min to max):", ""]
    for kind in ("right", "wrong", "unanswerable"):
        v = best_fits.get(kind, [])
        if v:
            median = statistics.median(v)
            lines.append(f"- {kind} ({len(v)} cases): {median:.2f} ({min(v):.2f} to {max(v):.2f})")
    publish(args.result, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
