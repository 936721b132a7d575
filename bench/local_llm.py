"""The local model and the offline policy side by side, on the same cases in the same run.

For each case both policies run the hybrid placement (the always-on first search with the task,
then follow-ups the policy chooses) through one Toolbox bound to the case's caller and snapshot,
so they see the same index, scope and date. Scoring is :func:`ragkit.evaluation.score_case`
(``bench/agent_quality.py`` and ``ragkit eval`` use the same), and a delivered answer counts as
*unverifiable* when a citation fails :func:`ragkit.evidence.verify`. Per policy the report gives
accuracy on answerable cases, honest abstention and false assertions on unanswerable ones,
over-abstention, unverifiable answers, tool calls, prompt and generated tokens (as llama.cpp
counted them), tool calls the model wrote as JSON text, and median seconds per task.

Samples, stratified by template family (round robin over the families, in file order):

* ``--bundled N``: N bundled cases from the development and held-out splits (half each);
* ``--sealed N``: N of the sealed paraphrases (``datasets/opscorpus/paraphrases.jsonl``). Their
  report shows aggregates only: no ids, questions or answers, and no per-case rows are written,
  so that no rule is developed against them.

Usage::

    ./run setup-llm
    .venv/bin/python bench/local_llm.py --bundled 40 --sealed 40 --every 10
    .venv/bin/python bench/local_llm.py --bundled 2 --sealed 0 --show   # a quick look, with traces
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from _common import CASES, SPLITS, course_cases, parser, publish
from agent_quality import CachedToolbox, make_toolbox, score, summarise

from ragkit import Agent, Funnel
from ragkit.agent import LLMPolicy, OfflinePolicy
from ragkit.agent.llm import client_from_env
from ragkit.course import course_index
from ragkit.evaluation import assign_splits, load_splits, splits_key

PARAPHRASES = CASES.parent / "paraphrases.jsonl"
T = TypeVar("T")


def stratified(items: Sequence[T], family: Callable[[T], str], n: int) -> list[T]:
    """``n`` items taken round robin over their families (in first-seen order), each family in file order."""
    groups: dict[str, list[T]] = defaultdict(list)
    for item in items:
        groups[family(item)].append(item)
    out: list[T] = []
    depth = 0
    while len(out) < n and any(len(g) > depth for g in groups.values()):
        for g in groups.values():
            if len(g) > depth and len(out) < n:
                out.append(g[depth])
        depth += 1
    return out


def sample(args: Any) -> list[tuple[str, Any]]:
    """(set name, case) pairs: bundled dev + held-out, then sealed paraphrases."""
    out: list[tuple[str, Any]] = []
    if args.bundled:
        cases = course_cases(CASES)
        split = assign_splits(cases, load_splits(SPLITS), splits_key(CASES))
        half = args.bundled // 2
        for name, want in (("dev", args.bundled - half), ("heldout", half)):
            part = [c for c in cases if split[c.id] == name]
            out += [(f"bundled {name}", c) for c in stratified(part, lambda c: c.family, want)]
    if args.sealed:
        cases = course_cases(PARAPHRASES)
        split = assign_splits(cases, load_splits(SPLITS), splits_key(PARAPHRASES))
        sealed = [c for c in cases if split[c.id] == "sealed"]
        out += [("sealed paraphrases", c) for c in stratified(sealed, lambda c: c.family, args.sealed)]
    return out


def run_case(policy: Any, box: Any, case: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    agent = Agent(box, policy, placement="hybrid", max_searches=4)
    result = agent.run(case.task, as_of=case.as_of.isoformat())
    return result, time.perf_counter() - start


def main() -> None:
    ap = parser(__doc__, "local_llm.md", flag="--out")
    ap.add_argument("--bundled", type=int, default=40, help="bundled cases (half dev, half held-out)")
    ap.add_argument("--sealed", type=int, default=40, help="sealed paraphrases (aggregates only)")
    ap.add_argument("--every", type=int, default=0, help="rewrite the report every N cases (0 = at the end)")
    ap.add_argument("--show", action="store_true", help="print each trace (never for sealed cases)")
    ap.add_argument("--rows", type=Path, default=None, help="per-case rows, JSON Lines (bundled only)")
    ap.add_argument("--transcript", type=Path, default=None,
                    help="write the first bundled case's full model conversation here (JSON)")
    args = ap.parse_args()

    cases = sample(args)
    index = course_index()
    funnel = Funnel(index)
    funnel.search("warm up", deliver=1)
    t_load = time.perf_counter()
    client = client_from_env(env={**os.environ, "RAGKIT_LLM": os.environ.get("RAGKIT_LLM") or "local"})
    load_s = time.perf_counter() - t_load
    llm = LLMPolicy(client)
    offline = OfflinePolicy()
    rows: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    transcript: dict[str, Any] | None = None
    t0 = time.perf_counter()
    for n, (group, case) in enumerate(cases, 1):
        box = CachedToolbox(make_toolbox(index, case, funnel), {})
        for name, policy in (("offline", offline), ("local model", llm)):
            result, seconds = run_case(policy, box, case)
            row = score(case, result)
            row.update(group=group, policy=name, wall_seconds=seconds, family=case.family)
            run = llm.last_run if name == "local model" else None
            row.update(requests=run.requests if run else 0, prompt_tokens=run.input_tokens if run else 0,
                       generated_tokens=run.output_tokens if run else 0,
                       text_calls=run.text_calls if run else 0, cite_retries=run.cite_retries if run else 0)
            rows[(group, name)].append(row)
            sealed = group.startswith("sealed")
            if args.show and not sealed:
                print(f"--- {name}\n{result}\n")
            if name == "local model" and transcript is None and not sealed and run is not None:
                transcript = {"case": case.id, "task": case.task, "expected": case.expected,
                              "system": run.system, "messages": run.messages, "answer": result.answer,
                              "abstained": result.abstained, "citations": result.citations,
                              "verified": bool(result.verification and result.verification.ok),
                              "requests": run.requests, "prompt_tokens": run.input_tokens,
                              "generated_tokens": run.output_tokens, "seconds": round(seconds, 1)}
        marks = " ".join(f"{p}:{'ok' if rows[(group, p)][-1]['passed'] else 'x'}"
                         for p in ("offline", "local model"))
        shown = case.id if not group.startswith("sealed") else "(sealed)"
        print(f"[{n}/{len(cases)}] {group} {shown} {marks} ({time.perf_counter() - t0:.0f}s)", flush=True)
        if args.every and n % args.every == 0 and n < len(cases):
            publish(args.out, report(rows, client, load_s, time.perf_counter() - t0, args, n, len(cases)),
                    echo=False)
    if args.rows:
        with args.rows.open("w") as f:
            for (group, _), rs in rows.items():
                if not group.startswith("sealed"):
                    for r in rs:
                        f.write(json.dumps(r, default=str) + "\n")
    if args.transcript and transcript is not None:
        args.transcript.write_text(json.dumps(transcript, indent=1, default=str))
    publish(args.out, report(rows, client, load_s, time.perf_counter() - t0, args, len(cases), len(cases)))


def report(rows: dict[tuple[str, str], list[dict[str, Any]]], client: Any, load_s: float, total_s: float,
           args: Any, done: int, planned: int) -> str:
    lines = [
        "# The local model beside the offline policy",
        "",
        f"Command: `.venv/bin/python bench/local_llm.py --bundled {args.bundled} "
        f"--sealed {args.sealed}` ({dt.date.today().isoformat()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs; {total_s / 60:.0f} min in all)."
        + (f" **Partial: {done} of {planned} cases so far.**" if done < planned else ""),
        "",
        f"Model: {client.model} (`RAGKIT_LLM=local`, llama.cpp in process, {client.threads} threads, "
        f"context {client.context}, greedy decoding; loaded in {load_s:.1f} s). Both policies run the "
        "hybrid placement with at most 4 searches, over the same Toolbox (caller, snapshot, funnel) "
        "per case.",
        "",
        "| cases | policy | accuracy | honest abstention | false assertions | over-abstention | "
        "unverifiable | calls / task | prompt tokens / task | generated / task | JSON-text calls | "
        "s / task (median) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (group, name), rs in rows.items():
        s = summarise(rs)
        k = len(rs)
        lines.append(
            f"| {group} ({k}) | {name} | {s['correct']}/{s['answerable']} = {s['accuracy']:.2f} | "
            f"{s['honest']}/{s['unanswerable']} | {s['false']}/{s['unanswerable']} | "
            f"{s['over']}/{s['answerable']} | {s['unverifiable']} | "
            f"{statistics.mean(r['calls'] for r in rs):.1f} | "
            f"{statistics.mean(r['prompt_tokens'] for r in rs):.0f} | "
            f"{statistics.mean(r['generated_tokens'] for r in rs):.0f} | "
            f"{sum(r['text_calls'] for r in rs)} | {statistics.median(r['wall_seconds'] for r in rs):.1f} |"
        )
    lines += ["", "Sealed paraphrases: aggregates only (no ids, questions or answers are shown or stored).",
              ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
