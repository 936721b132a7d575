"""Time to a first answer: ``ragkit ask QUESTION --json`` in a fresh process, with a breakdown.

For a few bundled cases (each with its own caller tenant, groups and ``as_of``), every run
starts a new Python process (``python -m ragkit ask ... --json``, the offline policy:
``RAGKIT_LLM`` unset) and times it from start to exit: what a user waits for. Each tree named
with ``--tree`` (a checkout of ragkit; default: this one) runs the same questions on the same
index, the trees interleaved run by run, so a before/after pair is measured side by side (one
unmeasured run per tree first writes its bytecode and warms the page cache).

The breakdown comes from a second, instrumented fresh process per run that calls the same
command in-process (``ragkit.app.cli.app``) with timers wrapped around its stages: the import
of the command line, opening the index (``Index.load``), building the Toolbox and Agent,
model loads (embedder, cross-encoder, token-count tokenizer), the first search and the
agent's remaining steps. It also counts how often each model file is loaded (each must load
once) and which heavy modules the answer imported.

Writes ``bench/results/first_answer.md`` (or ``--result``).

Usage: python bench/first_answer.py [--tree ../base --tree .] [--questions 3] [--runs 5]
"""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import COURSE_INDEX, ROOT, course_cases, evenly, parser, publish

#: Runs ``ragkit ask`` in-process with timers around its stages; prints one JSON line.
PROBE = r"""
import io, json, sys, time, contextlib
t0 = time.perf_counter()
import ragkit.app.cli as cli
t_import = time.perf_counter() - t0
import ragkit
from ragkit.index.index import Index
from ragkit.tools.toolbox import Toolbox
from ragkit.agent.loop import Agent
import ragkit.models.bundled as bundled
import ragkit.models.runtime as runtime
import ragkit.models.tokens as tokens

spans = {}       # stage -> seconds
loads = {}       # what was loaded -> times
model_s = []     # (start, end) of every model load, to take them out of the stage they fell in
calls = []       # (tool, start, end)

def add(name, s):
    spans[name] = spans.get(name, 0.0) + s

def timed_method(owner, attr, stage):
    inner = getattr(owner, attr)
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            add(stage, time.perf_counter() - t)
    setattr(owner, attr, wrapper)

load_inner = Index.__dict__["load"].__func__
def load(cls, *a, **k):
    t = time.perf_counter()
    try:
        return load_inner(cls, *a, **k)
    finally:
        add("open index", time.perf_counter() - t)
        loads["Index.load"] = loads.get("Index.load", 0) + 1
Index.load = classmethod(load)
timed_method(Toolbox, "__init__", "toolbox")
timed_method(Agent, "__init__", "agent setup")

def model_loader(module, attr, label):
    inner = getattr(module, attr, None)
    if inner is None:
        return
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            e = time.perf_counter()
            model_s.append((t, e))
            add("model: " + label, e - t)
    for key in ("cache_info", "cache_clear"):
        if hasattr(inner, key):
            setattr(wrapper, key, getattr(inner, key))
    setattr(module, attr, wrapper)

def counter(module, attr):
    inner = getattr(module, attr, None)
    if inner is None:
        return
    def wrapper(path, *a, **k):
        key = f"{attr}({getattr(path, 'name', path)})"
        loads[key] = loads.get(key, 0) + 1
        return inner(path, *a, **k)
    setattr(module, attr, wrapper)

originals = {fn: getattr(runtime, fn) for fn in ("onnx_session", "load_tokenizer")}
for mod in [m for name, m in list(sys.modules.items()) if name.startswith("ragkit") and m is not None]:
    for fn, original in originals.items():
        if getattr(mod, fn, None) is original:
            counter(mod, fn)
model_loader(bundled, "_load_embedder", "embedder")
model_loader(bundled, "_load_reranker", "cross-encoder")
tok_inner = tokens._tokenizer
def tok_wrapper():
    fresh = tok_inner.cache_info().currsize == 0
    t = time.perf_counter()
    out = tok_inner()
    if fresh:
        e = time.perf_counter()
        model_s.append((t, e))
        add("model: token counter", e - t)
        loads["token-count tokenizer"] = loads.get("token-count tokenizer", 0) + 1
    return out
tok_wrapper.cache_info = tok_inner.cache_info
tok_wrapper.cache_clear = tok_inner.cache_clear
tokens._tokenizer = tok_wrapper

call_inner = Toolbox.call
def call(self, name, arguments):
    t = time.perf_counter()
    try:
        return call_inner(self, name, arguments)
    finally:
        calls.append((name, t, time.perf_counter()))
Toolbox.call = call
run_inner = Agent.run
def run(self, *a, **k):
    t = time.perf_counter()
    try:
        return run_inner(self, *a, **k)
    finally:
        spans["_run"] = (t, time.perf_counter())
Agent.run = run

heavy = ("jsonschema", "onnxruntime", "tokenizers", "pyarrow", "pandas", "mcp", "torch", "lark", "faiss")
before = {m for m in heavy if m in sys.modules}
out = io.StringIO()
t1 = time.perf_counter()
with contextlib.redirect_stdout(out):
    try:
        cli.app(sys.argv[1:], standalone_mode=False)
    except SystemExit as exc:
        if exc.code:
            raise
t_cmd = time.perf_counter() - t1
answer = json.loads(out.getvalue().strip().splitlines()[-1])

def model_within(a, b):
    return sum(max(0.0, min(e, b) - max(s, a)) for s, e in model_s)

run_a, run_b = spans.pop("_run")
searches = [(s, e) for n, s, e in calls if n == "search_knowledge"]
first = searches[0] if searches else (run_a, run_a)
row = {"import CLI": t_import, "open index": spans.get("open index", 0.0),
       "toolbox + agent setup": spans.get("toolbox", 0.0) + spans.get("agent setup", 0.0)
       - model_within(0, run_a)}
for k, v in spans.items():
    if k.startswith("model: "):
        row[k] = v
row["first search (models excluded)"] = first[1] - first[0] - model_within(*first)
row["agent steps after it (models excluded)"] = (run_b - run_a) - (first[1] - first[0]) - (
    model_within(run_a, run_b) - model_within(*first))
row["whole answer in-process"] = time.perf_counter() - t0
print(json.dumps({"row": row, "loads": loads, "tool calls": len(calls), "searches": len(searches),
                  "imported": sorted(m for m in heavy if m in sys.modules and m not in before),
                  "file": ragkit.__file__, "value": answer.get("value"), "outcome": answer.get("outcome"),
                  "citations": answer.get("citations")}))
"""


def ask_args(case: object, index: Path) -> list[str]:
    """``ragkit ask`` arguments for ``case``: its question, caller scope and ``as_of``."""
    caller = case.caller  # type: ignore[attr-defined]
    args = ["ask", case.task, "--index", str(index), "--tenant", caller.tenant]  # type: ignore[attr-defined]
    groups = ",".join(sorted(caller.groups))
    if groups:
        args += ["--groups", groups]
    if case.as_of:  # type: ignore[attr-defined]
        args += ["--as-of", case.as_of.isoformat()]  # type: ignore[attr-defined]
    return args + ["--json"]


def env_for(tree: Path) -> dict[str, str]:
    """The environment of a run of ``tree``: its ragkit first on the path, no LLM configured."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAGKIT_LLM",)}
    env["PYTHONPATH"] = str(tree)
    return env


def wall(tree: Path, args: list[str]) -> tuple[float, float, dict]:
    """``python -m ragkit <args>`` run from ``tree``: seconds from start to exit, its CPU seconds
    (user + system, all threads), and its JSON answer."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "ragkit", *args], capture_output=True, text=True,
                         env=env_for(tree), cwd=tree)
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{tree}: ragkit {' '.join(args)} failed: {out.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu, json.loads(out.stdout.strip().splitlines()[-1])


def probe(tree: Path, args: list[str]) -> dict:
    """The instrumented in-process run of ``ragkit <args>`` from ``tree`` (a fresh process)."""
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                         env=env_for(tree), cwd=tree)
    if out.returncode != 0:
        raise RuntimeError(f"{tree}: probe failed: {out.stderr[-2000:]}")
    record = json.loads(out.stdout.strip().splitlines()[-1])
    if not record["file"].startswith(str(tree.resolve())):
        raise RuntimeError(f"{tree}: ragkit was imported from {record['file']}, not from the tree")
    return record


def main(argv: list[str] | None = None) -> str:
    ap = parser(__doc__, "first_answer.md")
    ap.add_argument("--index", type=Path, default=COURSE_INDEX)
    ap.add_argument("--tree", type=Path, action="append", default=None,
                    help="a ragkit checkout to run (repeat; default: this one); the first is the baseline")
    ap.add_argument("--label", action="append", default=None, help="a name for each --tree, in order")
    ap.add_argument("--questions", type=int, default=3, help="bundled answerable cases, spread evenly")
    ap.add_argument("--runs", type=int, default=5, help="fresh processes per tree and question")
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    labels = args.label or [t.name for t in trees]
    if len(labels) != len(trees):
        ap.error("give one --label per --tree")
    index = args.index.resolve()
    cases = evenly(course_cases(answerable=True), args.questions)
    for tree in trees:  # unmeasured: writes each tree's bytecode, warms the page cache
        wall(tree, ask_args(cases[0], index))
    loads_start = os.getloadavg()
    walls: dict[str, list[float]] = {lb: [] for lb in labels}
    cpus: dict[str, list[float]] = {lb: [] for lb in labels}
    per_q: dict[tuple[str, str], list[float]] = {}
    rows: dict[str, dict[str, list[float]]] = {lb: {} for lb in labels}
    answers: dict[tuple[str, str], set[str]] = {}
    extra: dict[str, dict] = {lb: {"loads": {}, "imported": set(), "searches": [], "calls": []}
                              for lb in labels}
    for _ in range(args.runs):
        for case in cases:
            for tree, label in zip(trees, labels, strict=True):
                seconds, cpu, answer = wall(tree, ask_args(case, index))
                walls[label].append(seconds)
                cpus[label].append(cpu)
                per_q.setdefault((label, case.id), []).append(seconds)
                answers.setdefault((label, case.id), set()).add(
                    json.dumps([answer.get("outcome"), answer.get("value"), answer.get("citations")]))
                record = probe(tree, ask_args(case, index))
                for k, v in record["row"].items():
                    rows[label].setdefault(k, []).append(v)
                for k, v in record["loads"].items():
                    extra[label]["loads"][k] = max(extra[label]["loads"].get(k, 0), v)
                extra[label]["imported"] |= set(record["imported"])
                extra[label]["searches"].append(record["searches"])
                extra[label]["calls"].append(record["tool calls"])
    loads_end = os.getloadavg()
    base = labels[0]

    head = " | ".join(f"{lb} median s" for lb in labels)
    ratio_head = "".join(f" | {lb} / {base}" for lb in labels[1:])
    lines = [f"| question (case) | {head}{ratio_head} | runs |", "|---|" + "---|" * (2 * len(labels))]
    for case in cases:
        meds = [statistics.median(per_q[(lb, case.id)]) for lb in labels]
        ratios = "".join(f" | {m / meds[0]:.2f}" for m in meds[1:])
        lines.append(f"| `{case.id}` | {' | '.join(f'{m:.2f}' for m in meds)}{ratios} | {args.runs} |")
    meds = [statistics.median(walls[lb]) for lb in labels]
    ratios = "".join(f" | **{m / meds[0]:.2f}**" for m in meds[1:])
    lines.append(f"| **all questions** | {' | '.join(f'**{m:.2f}**' for m in meds)}{ratios} "
                 f"| {args.runs * len(cases)} |")
    meds = [statistics.median(cpus[lb]) for lb in labels]
    ratios = "".join(f" | {m / meds[0]:.2f}" for m in meds[1:])
    lines.append(f"| CPU s per answer (user + system, all questions) | {' | '.join(f'{m:.2f}' for m in meds)}"
                 f"{ratios} | {args.runs * len(cases)} |")

    keys = list(dict.fromkeys(k for lb in labels for k in rows[lb]))
    bd = [f"| stage (in-process) | {head} |", "|---|" + "---|" * len(labels)]
    for k in keys:
        cells = " | ".join(f"{statistics.median(rows[lb][k]):.2f}" if k in rows[lb] else "-" for lb in labels)
        bd.append(f"| {k} | {cells} |")
    bd.append("| tool calls per answer (median) | "
              + " | ".join(f"{statistics.median(extra[lb]['calls']):.0f}" for lb in labels) + " |")
    bd.append("| searches per answer (median) | "
              + " | ".join(f"{statistics.median(extra[lb]['searches']):.0f}" for lb in labels) + " |")
    loaded = [f"| loaded (most times in one answer) | {head.replace(' median s', '')} |",
              "|---|" + "---|" * len(labels)]
    for k in sorted({k for lb in labels for k in extra[lb]["loads"]}):
        loaded.append(f"| {k} | " + " | ".join(str(extra[lb]["loads"].get(k, 0)) for lb in labels) + " |")
    loaded.append("| heavy modules imported | "
                  + " | ".join(", ".join(sorted(extra[lb]["imported"])) or "-" for lb in labels) + " |")
    same = all(len({a for lb in labels for a in answers.get((lb, c.id), set())}) == 1 for c in cases)

    cmd = "python bench/first_answer.py " + " ".join(argv if argv is not None else sys.argv[1:])
    trees_txt = "; ".join(f"{lb} = `{t}`" for lb, t in zip(labels, trees, strict=True))
    text = (
        "# Time to a first answer: `ragkit ask` in a fresh process\n\n"
        f"Index `{args.index}`; offline policy (`RAGKIT_LLM` unset), hybrid placement; {len(cases)} bundled "
        f"answerable cases spread evenly over `datasets/opscorpus/cases.jsonl`, each asked with its own "
        f"tenant, groups and `--as-of`, {args.runs} fresh processes per tree and question, the trees "
        f"interleaved run by run. Trees: {trees_txt}. Answers (outcome, value, citations) identical "
        f"across trees and runs: {'yes' if same else 'NO'}.\n\n"
        "## Wall time from process start to the printed answer\n\n" + "\n".join(lines)
        + "\n\n## Where the time goes (an instrumented fresh process per run, medians)\n\n"
        "Model loads are taken out of the stage they fell in and listed on their own.\n\n"
        + "\n".join(bd) + "\n\n" + "\n".join(loaded)
        + f"\n\nProduced by `{cmd.strip()}` on {dt.date.today().isoformat()}, 2-core machine shared with "
        f"other jobs (load average {loads_start[0]:.1f} at the start, {loads_end[0]:.1f} at the end): "
        "wall times are inflated; compare the trees by their ratio.\n"
    )
    return publish(args.result, text)


if __name__ == "__main__":
    main()
