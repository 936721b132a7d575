"""The local model's speed: prompt and generation tokens per second by threads, wait policy and load.

Each configuration runs in a fresh process (the OpenMP wait policy is read when the library
loads): load the checked GGUF (:func:`ragkit.models.local_llm.local_model_path`), read a fixed
prompt of about 1,000 tokens, then generate 64 tokens greedily, ``--repeats`` times, with the
prompt cache cleared between repeats. "busy" runs one spinning process beside it on the other
core, as on a shared machine. Medians are reported.

Usage::

    ./run setup-llm
    .venv/bin/python bench/local_llm_speed.py --repeats 3
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

from _common import parser, publish

CHILD = r"""
import json, os, sys, time
from llama_cpp import Llama
from ragkit.models.local_llm import local_model_path
threads, repeats = int(sys.argv[1]), int(sys.argv[2])
t = time.perf_counter()
llm = Llama(model_path=str(local_model_path(progress=False)), n_ctx=4096, n_threads=threads,
            n_threads_batch=threads, seed=0, verbose=False)
load = time.perf_counter() - t
prompt = " ".join(f"Settlement batch {i} closes at {10 + i % 8}:00 CET for tenant t{i % 10}."
                  for i in range(70))
tokens = llm.tokenize(prompt.encode())
out = []
for _ in range(repeats):
    llm.reset()
    t = time.perf_counter()
    llm.eval(tokens)
    read = time.perf_counter() - t
    t = time.perf_counter()
    made = 0
    for tok in llm.generate([], temp=0.0, reset=False):
        made += 1
        if made >= 64:
            break
    gen = time.perf_counter() - t
    out.append({"prompt_tps": len(tokens) / read, "gen_tps": made / gen})
print(json.dumps({"load_s": load, "prompt_tokens": len(tokens), "runs": out}))
"""


def run(threads: int, policy: str, busy: bool, repeats: int) -> dict:
    env = {**os.environ, "OMP_WAIT_POLICY": policy, "OMP_NUM_THREADS": str(threads)}
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(threads), str(repeats)], env=env,
                              capture_output=True, text=True, check=True, timeout=900)
    finally:
        if spinner is not None:
            spinner.kill()
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = parser(__doc__, "local_llm_speed.md", flag="--out")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows = []
    start = time.perf_counter()
    for busy in (False, True):
        for threads in (1, 2):
            for policy in ("PASSIVE", "ACTIVE"):
                r = run(threads, policy, busy, args.repeats)
                rows.append((busy, threads, policy, r))
                print(busy, threads, policy, json.dumps(r), flush=True)
    lines = [
        "# The local model's speed on this machine",
        "",
        f"Command: `.venv/bin/python bench/local_llm_speed.py --repeats {args.repeats}` "
        f"({os.cpu_count()} CPUs, {(time.perf_counter() - start) / 60:.0f} min). Qwen2.5-Coder-1.5B-Instruct "
        "Q4_K_M, llama-cpp-python 0.3.36 (portable AVX2 build), a prompt of "
        f"{rows[0][3]['prompt_tokens']} tokens then 64 generated, greedy; medians of {args.repeats}. "
        "busy: one spinning process on the other core.",
        "",
        "| machine | threads | OMP_WAIT_POLICY | load s | prompt tokens/s | generated tokens/s |",
        "|---|---|---|---|---|---|",
    ]
    for busy, threads, policy, r in rows:
        lines.append(
            f"| {'busy' if busy else 'idle'} | {threads} | {policy} | {r['load_s']:.1f} | "
            f"{statistics.median(x['prompt_tps'] for x in r['runs']):.0f} | "
            f"{statistics.median(x['gen_tps'] for x in r['runs']):.1f} |"
        )
    publish(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
