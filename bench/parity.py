"""Same outputs from two checkouts: the funnel on every course case and the agent on a sample.

A refactor must not move a figure. This script dumps what the figures are made of, from
whichever ``ragkit`` is importable, and compares two dumps exactly:

* the funnel's delivered hits (chunk id and score to 5 decimals) for every course case, searched
  as the case's caller at its ``as_of``;
* the reference agent (hybrid placement) on every ``--every``-th case: answer, abstention, value,
  searches, tokens delivered and the actions taken.

Run it once per checkout, each with its own index cache so the index build is compared too::

    RAGKIT_CACHE=/tmp/old-cache PYTHONPATH=/path/to/old/checkout python bench/parity.py dump old.json
    RAGKIT_CACHE=/tmp/new-cache python bench/parity.py dump new.json
    python bench/parity.py compare old.json new.json     # exit 1 when anything differs
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import ragkit
from ragkit import Funnel
from ragkit.core import snapshot_filters
from ragkit.course import course_cases, course_index
from ragkit.evaluation import agent_runner


def dump(out: Path, *, every: int = 5, limit: int = 0) -> dict[str, Any]:
    """Search every case (or the first ``limit``) and run the agent on every ``every``-th; write ``out``."""
    index = course_index(progress=False)
    cases = list(course_cases())[: limit or None]
    funnel = Funnel(index)
    result: dict[str, Any] = {"ragkit": ragkit.__file__, "funnel": {}, "agent": {}}
    started = time.perf_counter()
    for case in cases:
        found = funnel.search(case.task, scope=case.caller, filters=snapshot_filters(case.as_of))
        result["funnel"][case.id] = [(h.chunk_id, round(float(h.score), 5)) for h in found.hits]
    print(f"funnel: {len(cases)} cases in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    run = agent_runner(index, "hybrid")
    for case in cases[::every]:
        r = run(case)
        result["agent"][case.id] = {"answer": r.answer, "abstained": bool(r.abstained), "value": r.value,
                                    "searches": r.searches, "tokens": r.tokens_delivered,
                                    "steps": [s.action for s in r.steps]}
    seconds = time.perf_counter() - started
    print(f"agent: {len(result['agent'])} cases, {seconds:.0f} s in all", file=sys.stderr)
    out.write_text(json.dumps(result, indent=0, sort_keys=True), encoding="utf-8")
    return result


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Every case whose funnel hits or agent run differ between two dumps (empty: identical)."""
    diffs = []
    for part in ("funnel", "agent"):
        for key in sorted(set(a[part]) | set(b[part])):
            if a[part].get(key) != b[part].get(key):
                diffs.append(f"{part} {key}: {a[part].get(key)!r:.160} != {b[part].get(key)!r:.160}")
    return diffs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="write this checkout's outputs to a JSON file")
    d.add_argument("out", type=Path)
    d.add_argument("--every", type=int, default=5, help="run the agent on every n-th case (default 5)")
    d.add_argument("--limit", type=int, default=0, help="only the first n cases (0: all)")
    c = sub.add_parser("compare", help="compare two dumps; exit 1 when they differ")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = p.parse_args()
    if args.command == "dump":
        dump(args.out, every=args.every, limit=args.limit)
        return 0
    a, b = (json.loads(path.read_text(encoding="utf-8")) for path in (args.a, args.b))
    diffs = compare(a, b)
    print(f"funnel: {len(a['funnel'])} vs {len(b['funnel'])} cases; agent: {len(a['agent'])} vs "
          f"{len(b['agent'])} runs; {len(diffs)} differ")
    print("\n".join(diffs[:20]))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
