"""End-to-end quality of the reference agent on evidence cases, per placement and split.

Every case runs as its caller (tenant and groups), at its ``as_of``, over the documents
published by then (the Toolbox applies :func:`ragkit.core.snapshot_filters`), with the
offline policy in three placements: ``pipeline`` (one always-on search), ``tool`` (the policy
decides every call) and ``hybrid`` (always-on first search, then tool follow-ups).

Scoring, per case, is :func:`ragkit.evaluation.score_case` (the same definitions as
``ragkit eval``):

* answerable: *correct* when the agent did not abstain and asserted the expected value (its
  recorded value, else the first value of the expected kind in the answer; for ``text`` and
  ``status`` kinds the expected phrase may also be stated anywhere in the answer).
* unanswerable: *honest* when the agent abstained; a *false assertion* when it answered; a run
  that crashed is neither.
* every delivered (not abstained) answer: each inline citation must be a span delivered in
  that run and :func:`ragkit.evidence.verify` must pass; failures are counted.

Splits (:mod:`ragkit.evaluation.splits`, ``datasets/opscorpus/splits.json``): the bundled cases
are split by template family, whole families held out from development (``heldout``; the file's
``how_chosen`` says how they were chosen); any other case file (``--cases FILE``) is split by its
own key in that file (for ``paraphrases.jsonl``, the ``sealed`` facts against the rest). Sealed
cases run only with ``--split sealed`` or ``--split all``, and the report never lists their ids.
Per split and placement the report gives end-to-end accuracy on answerable cases, honest
abstention and false assertions on unanswerable ones, over-abstention (abstained on an answerable
case) and delivered answers with an unverifiable citation, and the same per tag. Identical tool
calls of one case are cached across placements (the pipeline's search is the hybrid's first
search); a cached call counts the time it took when it ran.

Usage::

    OMP_NUM_THREADS=1 python bench/agent_quality.py                 # all bundled cases, three placements
    python bench/agent_quality.py --per-split 40 --placements hybrid  # about 40 cases of each split
    python bench/agent_quality.py --cases datasets/opscorpus/paraphrases.jsonl --split dev
    python bench/agent_quality.py --ids story-eur-cutoff --show      # print one trace
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from _common import CASES, SPLITS, course_cases, evenly, parser, pct, per_split, publish

from ragkit import PLACEMENTS, Agent, Funnel, Toolbox
from ragkit.agent import OfflinePolicy
from ragkit.agent.offline import ABSTAIN_BELOW
from ragkit.core import parse_time, snapshot_filters
from ragkit.course import course_index
from ragkit.evaluation import answer_fit, assign_splits, failure_kind, load_splits, score_case, splits_key
from ragkit.evidence import FITS, SentenceFit

CITE = re.compile(r"\[([^\[\]\s]+#[^\[\]\s]*)\]")


class CachedToolbox:
    """A Toolbox whose identical calls (same case, same arguments) are answered once."""

    def __init__(self, inner: Any, cache: dict[str, dict[str, Any]]):
        self.inner, self.cache, self.scope = inner, cache, inner.scope

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        key = name + json.dumps(arguments, sort_keys=True, default=str)
        if key not in self.cache:
            self.cache[key] = self.inner.call(name, arguments)
        return copy.deepcopy(self.cache[key])


class SnapshotToolbox:
    """Fallback while ``Toolbox`` takes no default ``filters``: the snapshot at ``as_of`` enforced outside.

    Searches get ``published_before``; read and related documents published later are dropped.
    """

    def __init__(self, inner: Any, as_of: Any):
        self.inner, self.scope = inner, inner.scope
        self.cut = as_of + dt.timedelta(seconds=1)

    def _late(self, item: dict[str, Any]) -> bool:
        published = parse_time(item.get("published_at"))
        return published is not None and published >= self.cut

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        args = dict(arguments)
        if name == "search_knowledge":
            cut = self.cut.isoformat()
            if not args.get("published_before") or str(args["published_before"]) > cut:
                args["published_before"] = cut
            return self.inner.call(name, args)
        response = self.inner.call(name, args)
        if name == "retrieve_documents" and response.get("ok"):
            response["documents"] = [d for d in response["documents"] if not self._late(d)]
            if not response["documents"]:
                response = {
                    "tool": name,
                    "ok": False,
                    "notices": [],
                    "tokens": 20,
                    "trace": {},
                    "error": {"code": "unknown_id", "message": "no document is available to you"},
                }
        if name == "related_documents" and response.get("ok"):
            for key in ("links_to", "linked_from", "supersedes", "superseded_by"):
                response[key] = [d for d in response.get(key, []) if not self._late(d)]
        return response


def make_toolbox(index: Any, case: Any, funnel: Any) -> Any:
    """A Toolbox bound to the case's caller and to the snapshot at its as_of."""
    scope = case.caller
    try:
        return Toolbox(index, scope, funnel=funnel, filters=snapshot_filters(case.as_of))
    except TypeError:
        return SnapshotToolbox(Toolbox(index, scope, funnel=funnel), case.as_of)


def tool_seconds(result: Any) -> float:
    """Seconds per task: each tool call's own time (cached repeats count their first run) + the rest."""
    tools = (
        sum(
            float((s.response.get("trace") or {}).get("ms", s.ms))
            for s in result.steps
            if s.action in ("search", "fetch", "related") and s.refused is None
        )
        / 1000
    )
    own = (
        result.seconds - sum(s.ms for s in result.steps if s.action in ("search", "fetch", "related")) / 1000
    )
    return tools + max(0.0, own)


def score(case: Any, result: Any) -> dict[str, Any]:
    """One case's row: :func:`ragkit.evaluation.score_case` (the one scoring of ragkit) plus cost fields.

    ``correct`` (answerable), ``honest`` and ``false_assertion`` (unanswerable) and
    ``unverifiable`` are ragkit.evaluation's definitions; this script only adds the fields its
    tables and its ``--rows`` file show.
    """
    row = score_case(case, result)
    docs = {str(getattr(e, "doc_id", "")) for e in result.delivered}
    decisive = case.decisive
    row.update({
        "id": case.id,
        "tags": list(case.tags),
        "answer": result.answer[:400],
        "calls": result.calls,
        "seconds": tool_seconds(result),
        "tokens": result.tokens_delivered,
        "decisive_delivered": (decisive is not None and decisive.doc_id in docs) if case.answerable else None,
        "citations": CITE.findall(result.answer) if not result.abstained else [],
        "delivered": sorted({str(getattr(e, "citation", "")) for e in result.delivered}),
        "first_run": None,  # the first call's ranking: large, and not shown here
    })
    return row


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    out: dict[str, Any] = {
        "answerable": len(ans),
        "correct": sum(r["correct"] for r in ans),
        "unanswerable": len(una),
        "honest": sum(r["honest"] for r in una),
        "false": sum(r["false_assertion"] for r in una),
        "unverifiable": sum(r["unverifiable"] for r in rows),
        "over": sum(bool(r.get("over_abstained")) for r in ans),
    }
    out["accuracy"] = out["correct"] / len(ans) if ans else float("nan")
    out["honesty"] = out["honest"] / len(una) if una else float("nan")
    out["false_rate"] = out["false"] / len(una) if una else float("nan")
    out["over_rate"] = out["over"] / len(ans) if ans else float("nan")
    return out


def ratio(n: int, d: int) -> str:
    """``0.875 (7/8)``, or ``-`` when there is nothing to count."""
    return f"{n / d:.3f} ({n}/{d})" if d else "-"


def split_table(rows_by_split: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """The quality bar's table: one row per split and placement."""
    lines = [
        "| split | placement | cases | answerable: end-to-end accuracy | unanswerable: honest abstention "
        "| false assertions (answered an unanswerable case) "
        "| over-abstention (abstained on an answerable case) "
        "| delivered answers with an unverifiable citation |",
        "|" + "---|" * 8,
    ]
    for name, by_placement in rows_by_split.items():
        for placement, rows in by_placement.items():
            if not rows:
                continue
            s = summarise(rows)
            lines.append(
                f"| {name} | {placement} | {len(rows)} | {ratio(s['correct'], s['answerable'])} "
                f"| {ratio(s['honest'], s['unanswerable'])} | {ratio(s['false'], s['unanswerable'])} "
                f"| {ratio(s['over'], s['answerable'])} | {s['unverifiable']} |"
            )
    return "\n".join(lines)


def table(rows_by_placement: dict[str, list[dict[str, Any]]]) -> str:
    tags = sorted({t for rows in rows_by_placement.values() for r in rows for t in r["tags"]})
    head = "| category | answerable | " + " | ".join(rows_by_placement) + " |"
    lines = [head, "|" + "---|" * (2 + len(rows_by_placement))]
    for tag in ["all", *tags]:
        cells = []
        n = 0
        for rows in rows_by_placement.values():
            sel = [r for r in rows if r["answerable"] and (tag == "all" or tag in r["tags"])]
            n = len(sel)
            good = sum(r["correct"] for r in sel)
            cells.append(f"{good / n:.3f} ({good}/{n})" if n else "-")
        lines.append(f"| {tag} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def honesty_table(rows_by_placement: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "| measure | " + " | ".join(rows_by_placement) + " |",
        "|" + "---|" * (1 + len(rows_by_placement)),
    ]
    sums = {p: summarise(rows) for p, rows in rows_by_placement.items()}
    lines.append(
        "| unanswerable: honest abstention | "
        + " | ".join(f"{s['honesty']:.3f} ({s['honest']}/{s['unanswerable']})" for s in sums.values())
        + " |"
    )
    lines.append(
        "| unanswerable: false assertions | "
        + " | ".join(f"{s['false_rate']:.3f} ({s['false']}/{s['unanswerable']})" for s in sums.values())
        + " |"
    )
    lines.append(
        "| answerable: over-abstention | "
        + " | ".join(ratio(s["over"], s["answerable"]) for s in sums.values())
        + " |"
    )
    lines.append(
        "| delivered answers with an unverifiable citation | "
        + " | ".join(str(s["unverifiable"]) for s in sums.values())
        + " |"
    )
    cost = {
        p: ([r["calls"] for r in rows], [r["seconds"] for r in rows], [r["tokens"] for r in rows])
        for p, rows in rows_by_placement.items()
    }
    lines.append(
        "| tool calls per task, median / p95 | "
        + " | ".join(f"{statistics.median(c):.0f} / {pct(c, 0.95):.0f}" for c, _, _ in cost.values())
        + " |"
    )
    lines.append(
        "| seconds per task, median / p95 | "
        + " | ".join(f"{statistics.median(s):.1f} / {pct(s, 0.95):.1f}" for _, s, _ in cost.values())
        + " |"
    )
    lines.append(
        "| evidence tokens delivered per task, median / p95 | "
        + " | ".join(f"{statistics.median(t):.0f} / {pct(t, 0.95):.0f}" for _, _, t in cost.values())
        + " |"
    )
    return "\n".join(lines)


SPLIT_LABELS = {
    "dev": "development (families open to rule development)",
    "heldout": "held-out template families",
    "sealed": "sealed (no rule developed against it; failures not listed)",
}


def main() -> None:
    ap = parser(__doc__, "agent_quality.md", flag="--out")
    ap.add_argument("--placements", default=",".join(PLACEMENTS))
    ap.add_argument("--cases", type=Path, default=CASES, help="a case file (default: the bundled cases)")
    ap.add_argument("--splits", type=Path, default=SPLITS, help="the splits file")
    ap.add_argument("--split-key", default="", help="its key for these cases (default: from the file name)")
    ap.add_argument(
        "--split", default="unsealed",
        help="dev, heldout, sealed, ... ; unsealed (default): every case but sealed ones; all: every case",
    )
    ap.add_argument(
        "--sample", type=int, default=0, help="every n-th case to reach about this many (0 = all)"
    )
    ap.add_argument("--per-split", type=int, default=0, help="about this many cases of each split (0 = all)")
    ap.add_argument("--ids", default="", help="comma-separated case ids")
    ap.add_argument("--show", action="store_true", help="print each trace")
    ap.add_argument("--every", type=int, default=0, help="rewrite the report every N cases (0 = at the end)")
    ap.add_argument(
        "--order",
        choices=("file", "stride"),
        default="file",
        help="stride: visit cases with a stride of 7 so that any prefix spans every family",
    )
    ap.add_argument("--rows", type=Path, default=None, help="write per-case rows as JSON Lines")
    ap.add_argument(
        "--fit-threshold", type=float, default=None,
        help="with --fit: the logit at which a sentence answers (default ragkit.evidence.FITS); "
        "the answer fit reported per row uses the same scorer",
    )
    ap.add_argument(
        "--abstain-below", default="default",
        help="the policy's abstention gate on the answer's fit: a logit, 'none' or 'default' (ABSTAIN_BELOW)",
    )
    ap.add_argument(
        "--fit", action="store_true",
        help="let resolution count a value whose sentence the cross-encoder finds answering (off by default)",
    )
    args = ap.parse_args()

    cases = course_cases(args.cases)
    split = assign_splits(cases, load_splits(args.splits), args.split_key or splits_key(args.cases))
    if args.split == "unsealed":
        cases = [c for c in cases if split[c.id] != "sealed"]
    elif args.split != "all":
        cases = [c for c in cases if split[c.id] == args.split]
    if args.ids:
        wanted = set(args.ids.split(","))
        cases = [c for c in cases if c.id in wanted]
    cases = per_split(cases, lambda c: split[c.id], args.per_split)
    cases = evenly(cases, args.sample)
    if args.order == "stride":
        cases = [cases[(i * 7) % len(cases)] for i in range(len(cases))] if len(cases) % 7 else cases
    placements = [p for p in args.placements.split(",") if p]
    index = course_index()
    funnel = Funnel(index)
    funnel.search("warm up", deliver=1)
    fit = SentenceFit(threshold=FITS if args.fit_threshold is None else args.fit_threshold)
    gate = {"default": ABSTAIN_BELOW, "none": None}.get(args.abstain_below)
    if args.abstain_below not in ("default", "none"):
        gate = float(args.abstain_below)
    policy = OfflinePolicy(fit=fit if args.fit else None, abstain_below=gate)
    rows: dict[str, list[dict[str, Any]]] = {p: [] for p in placements}
    t0 = time.perf_counter()
    for n, case in enumerate(cases, 1):
        inner = make_toolbox(index, case, funnel)
        box = CachedToolbox(inner, {})
        for placement in placements:
            result = Agent(box, policy, placement=placement).run(case.task, as_of=case.as_of.isoformat())
            row = score(case, result)
            row["fit"] = answer_fit(result, fit)
            row["split"] = split[case.id]
            row["family"] = case.family
            row["placement"] = placement
            rows[placement].append(row)
            if args.show:
                print(result, "\n")
        done = " ".join(f"{p}:{'ok' if rows[p][-1]['passed'] else 'x'}" for p in placements)
        shown = case.id if split[case.id] != "sealed" else "(sealed)"
        print(f"[{n}/{len(cases)}] {shown} {done} ({time.perf_counter() - t0:.0f}s)", flush=True)

        if args.every and n % args.every == 0 and n < len(cases):
            write_report(rows, n, len(cases), time.perf_counter() - t0, args, partial=True)
    write_report(rows, len(cases), len(cases), time.perf_counter() - t0, args)


def shown(ids: list[str]) -> list[str]:
    """The first four case ids that may be shown (sealed cases are not)."""
    return [i for i in ids if i != "(sealed)"][:4]


def write_report(
    rows: dict[str, list[dict[str, Any]]],
    done: int,
    total: int,
    wall: float,
    args: Any,
    *,
    partial: bool = False,
) -> None:
    """Write the tables (and per-case rows) for the cases run so far."""
    names = sorted({r["split"] for rs in rows.values() for r in rs}, key=lambda n: (n != "dev", n))
    by_split = {"all": rows}
    by_split |= {n: {p: [r for r in rs if r["split"] == n] for p, rs in rows.items()} for n in names}
    families = {
        n: sorted({r["family"] for rs in rows.values() for r in rs if r["split"] == n}) for n in names
    }
    parts = [
        "# Reference agent: end-to-end quality per placement\n",
        f"Command: `OMP_NUM_THREADS=1 python bench/agent_quality.py {' '.join(sys.argv[1:])}`; "
        f"{done} cases of `{args.cases.name}`{f' (PARTIAL: {done} of {total})' if partial else ''}, "
        f"{wall / 60:.1f} min wall on a shared, loaded 2-core machine (times are "
        "noisy). Offline policy (a transparent rule-based baseline, not a model). Each case runs as its "
        "caller at its as_of over the documents published by then. A message that asks two things is "
        "answered ask by ask (in part when its first ask is answered); its case is right when one of "
        "the answer's values (one per ask) is the expected one (`ragkit.evaluation.answer_correct`).\n",
        "## Per split and placement\n",
        f"Splits from `{args.splits.name}` key `{args.split_key or splits_key(args.cases)}`: "
        + "; ".join(
            f"{n}: {len(families[n])} families"
            + (f" ({', '.join(families[n])})" if n not in ("dev", "sealed") else "")
            for n in names
        )
        + ".\n",
        split_table(by_split),
        "",
        "## Correct end-to-end answers on answerable cases (all cases)\n",
        table(rows),
        "",
        "## Unanswerable cases, citations, cost (all cases)\n",
        honesty_table(rows),
        "",
    ]
    for name in names:
        sub = by_split[name]
        parts += [f"## Split: {SPLIT_LABELS.get(name, name)}\n", table(sub), "", honesty_table(sub), ""]
    parts.append("## What the failures have in common\n")
    for placement, rs in rows.items():
        kinds: dict[str, list[str]] = defaultdict(list)
        for r in rs:
            if failure_kind(r):
                kinds[failure_kind(r)].append(r["id"] if r["split"] != "sealed" else "(sealed)")
        parts.append(
            f"**{placement}**: "
            + (
                "; ".join(
                    f"{k}: {len(v)} (e.g. {', '.join(shown(v)) or 'sealed only'})"
                    for k, v in sorted(kinds.items(), key=lambda x: -len(x[1]))
                )
                or "none"
            )
            + "\n"
        )
    publish(args.out, "\n".join(parts) + "\n", echo=False)
    if args.rows:
        with args.rows.open("w") as fh:
            for rs in rows.values():
                for r in rs:
                    if r["split"] != "sealed":
                        fh.write(json.dumps(r, default=str) + "\n")
    if not partial:
        print("\n".join(parts))


if __name__ == "__main__":
    main()
