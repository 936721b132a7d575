"""Figures derived from a saved bench/results/eval_<placement>.json/.csv without re-running.

Reports faithfulness over delivered answers only, and counterfactual pass rates restricted to
the cases the baseline answered correctly (the rules of ragkit.evaluation's runner and counterfactuals
apply since commit c4ff29f / b7c0c0f, for result files written before them). Appends an
"Addendum" section to bench/results/eval_<placement>.md.

Usage: python bench/eval_addendum.py pipeline hybrid
"""

from __future__ import annotations

import json
import sys

import pandas as pd
from _common import RESULTS, publish


def addendum(placement: str) -> str:
    base = RESULTS / f"eval_{placement}"
    data = json.loads(base.with_suffix(".json").read_text())
    frame = pd.read_csv(base.with_suffix(".csv"))
    answered = frame[~frame["abstained"]]
    correct = set(frame.loc[frame["correct"], "case"])
    lines = [f"\n## Addendum (`python bench/eval_addendum.py {placement}`)\n",
             f"- Faithfulness over delivered answers (withheld drafts excluded): "
             f"{int(answered['claims_supported'].sum())}/{int(answered['claims'].sum())} claims supported.",
             "- Counterfactuals on the cases the baseline answered correctly:"]
    for name, r in data.get("counterfactuals", {}).items():
        failed = [f["case"] for f in r["failures"] if f["case"] in correct]
        before = r["baseline_correct"] or 0
        lines.append(f"  - {name}: {before - len(failed)}/{before}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    for placement in sys.argv[1:] or ["pipeline"]:
        text = addendum(placement)
        md = RESULTS / f"eval_{placement}.md"
        content = md.read_text()
        publish(md, content.split("\n## Addendum")[0].rstrip("\n") + "\n" + text, echo=False)
        print(text)
