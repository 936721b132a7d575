"""Start-up cost: ``import ragkit``, and the first search in a fresh process (model loads included).

Each measurement runs in a new Python process (``--runs`` times, median reported):

* ``import ragkit`` wall time, and whether torch got imported (it must not);
* opening the index (``Index.load``), the first funnel search (the embedder and the
  cross-encoder load on first use) and a second search in the same process.

Writes ``bench/results/startup.md`` (or ``--result``).

Usage: python bench/startup.py [--index .ragkit-cache/index-course] [--runs 3]
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import COURSE_INDEX, ROOT, parser, publish

IMPORT = ("import time, sys; t = time.perf_counter(); import ragkit; "
          "print(time.perf_counter() - t, 'torch' in sys.modules)")
SEARCH = """
import json, sys, time
t0 = time.perf_counter()
from ragkit import Funnel, Index
t1 = time.perf_counter()
index = Index.load(sys.argv[1])
t2 = time.perf_counter()
funnel = Funnel(index)
first = funnel.search(sys.argv[2])
t3 = time.perf_counter()
funnel.search(sys.argv[2] + " again")
t4 = time.perf_counter()
print(json.dumps({"import s": t1 - t0, "open index s": t2 - t1, "first search s": t3 - t2,
                  "second search s": t4 - t3, "fresh process to first hits s": t3 - t0,
                  "hits": len(first.hits), "embedder": index.manifest.get("embedder", {}).get("name"),
                  "format": index.manifest.get("format_version")}))
"""


def measure(index: Path, query: str, runs: int,
            env: dict[str, str]) -> tuple[dict[str, list[float]], str, int]:
    """Median inputs: each run a fresh process that opens ``index`` and searches twice."""
    rows: dict[str, list[float]] = {}
    embedder, fmt = "", 0
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", SEARCH, str(index), query], capture_output=True,
                             text=True, check=True, env=env).stdout.strip().splitlines()[-1]
        record = json.loads(out)
        embedder, fmt = record.pop("embedder"), record.pop("format")
        for k, v in record.items():
            rows.setdefault(k, []).append(float(v))
    return rows, embedder, fmt


def main(argv: list[str] | None = None) -> str:
    ap = parser(__doc__, "startup.md")
    ap.add_argument("--index", type=Path, nargs="+", default=[COURSE_INDEX],
                    help="one or more saved indexes (e.g. the same corpus in index formats 2 and 3)")
    ap.add_argument("--query", default="EUR payment batch cutoff time")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    imports, torch_seen = [], False
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", IMPORT], capture_output=True, text=True, check=True,
                             env=env).stdout.split()
        imports.append(float(out[0]))
        torch_seen |= out[1] == "True"
    measured = [measure(index, args.query, args.runs, env) for index in args.index]
    head = " | ".join(f"{i.name} (format {fmt}) median s" for i, (_, _, fmt) in zip(args.index, measured,
                                                                                      strict=True))
    lines = [f"| measure | {head} | runs |", "|---|" + "---|" * (len(args.index) + 1),
             f"| `import ragkit` | {' | '.join([f'{statistics.median(imports):.2f}'] * len(args.index))} "
             f"| {args.runs} |"]
    for k in measured[0][0]:
        if k == "hits":
            continue
        cells = " | ".join(f"{statistics.median(rows[k]):.2f}" for rows, _, _ in measured)
        lines.append(f"| {k} | {cells} | {args.runs} |")
    cmd = "python bench/startup.py " + " ".join(argv if argv is not None else sys.argv[1:])
    names = ", ".join(f"`{i.name}`" for i in args.index)
    text = ("# Start-up: import and first search in a fresh process\n\n"
            f"Index {names} (embedder {measured[0][1]}); query {args.query!r}. torch imported by "
            f"`import ragkit`: {'yes' if torch_seen else 'no'}.\n\n" + "\n".join(lines)
            + f"\n\nProduced by `{cmd.strip()}` on {dt.date.today().isoformat()}, 2-core machine shared with "
            f"other jobs (load average {os.getloadavg()[0]:.0f} at the end): wall times are inflated.\n")
    return publish(args.result, text)


if __name__ == "__main__":
    main()
