"""The abstention curve on the answer's fit, from per-case rows of ``bench/agent_quality.py --rows``.

Each row carries ``fit``: the bundled cross-encoder's logit for the sentence the answer rests on
(:func:`ragkit.evaluation.answer_fit`; none when the agent abstained). Moving a threshold over it
(:func:`ragkit.evaluation.abstention_curve`) says what an abstention gate at that threshold would
trade: accuracy on answerable cases against false assertions on unanswerable ones. Only the
development split may choose the gate (``--split dev``, the default); sealed rows are refused.

Usage::

    python bench/agent_quality.py --split dev --placements hybrid --rows /tmp/bundled.jsonl
    python bench/agent_quality.py --cases datasets/opscorpus/paraphrases.jsonl --split dev \\
        --placements hybrid --rows /tmp/paraphrases.jsonl
    python bench/abstention_curve.py /tmp/bundled.jsonl /tmp/paraphrases.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _common import parser, publish

from ragkit.evaluation import abstention_curve

THRESHOLDS = [-99.0, -12.0, -11.0, -10.0, -9.0, -8.0, -6.0, -4.0, -2.0, 0.0, 2.0]


def main() -> None:
    ap = parser(__doc__, "abstention_curve_dev.md", flag="--out")
    ap.add_argument("rows", nargs="+", type=Path, help="--rows files of bench/agent_quality.py")
    ap.add_argument("--split", default="dev", help="the split whose rows draw the curve")
    ap.add_argument("--placement", default="hybrid")
    args = ap.parse_args()
    sets: dict[str, list[dict[str, object]]] = {}
    for path in args.rows:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if args.split == "sealed":
            raise SystemExit("sealed rows never choose a threshold: use --split dev")
        keep = [r for r in rows if r.get("placement") == args.placement]
        sets[path.stem] = [r for r in keep if r.get("split") == args.split]
    sets["all files"] = [r for rows in list(sets.values()) for r in rows]
    out = [
        "# Abstention curve on the answer's fit (development split)",
        "",
        f"Command: `python bench/abstention_curve.py {' '.join(sys.argv[1:])}`. Rows: "
        + ", ".join(f"{name} ({len(rows)} cases)" for name, rows in sets.items())
        + f"; split `{args.split}`, placement `{args.placement}`. A threshold of -99 keeps every answer "
        "(no gate). The gate is applied after the fact to each run's final answer.",
        "",
    ]
    for name, rows in sets.items():
        out += [f"## {name}", "", "| threshold | accuracy (answerable) | false assertions (unanswerable) "
                "| over-abstention |", "|---|---|---|---|"]
        for p in abstention_curve(rows, THRESHOLDS):
            out.append(f"| {p['threshold']:g} | {p['accuracy']:.3f} | {p['false_assertions']:.3f} "
                       f"| {p['over_abstention']:.3f} |")
        out.append("")
    publish(args.out, "\n".join(out))


if __name__ == "__main__":
    main()
