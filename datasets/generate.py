#!/usr/bin/env python3
"""Regenerate the ragkit course corpus and its evidence cases, byte for byte.

    python datasets/generate.py                 # writes datasets/opscorpus/ (seed 20260119)
    python datasets/generate.py --seed 7 --out /tmp/other
    python datasets/generate.py --stats         # counts by category, from the files on disk
    python datasets/generate.py --check         # regenerate in memory, compare with disk

Outputs: ``<out>/docs/<tenant|global>/<source_type>/<doc_id>.md`` (Markdown with the
evidence envelope as YAML front matter; the long-document shelf of ``opsgen/longdocs.py`` also
writes ``.html`` and ``.pdf`` files, the envelope in HTML meta tags or a JSON script and in PDF
document information), ``<out>/cases.jsonl`` and ``datasets/cases.schema.json``. Hand-written
documents and cases under ``datasets/handwritten/`` are copied in verbatim.

Licence: this generator is Apache-2.0 (like ragkit); the data it writes is CC-BY-4.0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import yaml  # noqa: E402
from opsgen import casegen, incidents, longdocs, reference  # noqa: E402
from opsgen.common import Doc  # noqa: E402
from opsgen.world import World  # noqa: E402

from ragkit.core.records import Envelope  # noqa: E402
from ragkit.documents.loaders import load_corpus  # noqa: E402
from ragkit.documents.sections import sections  # noqa: E402
from ragkit.evaluation import CASE_SCHEMA, REJECT_REASONS, parse_case  # noqa: E402
from ragkit.models.tokens import count_tokens_batch  # noqa: E402

DEFAULT_SEED = 20260119
DEFAULT_OUT = HERE / "opscorpus"
HANDWRITTEN = HERE / "handwritten"
INCIDENTS_PER_TENANT = 22

# How many cases to keep per family (all of them when there are fewer).
FAMILY_CAPS = {
    "incident_cause_vocabulary": 56,
    "code_to_function": 22,
    "function_to_code": 8,
    "account_to_ticket": 12,
    "rollout_approver": 8,
    "approver_to_rollout": 8,
    "ticket_to_build": 18,
    "ticket_to_deploy_date": 12,
    "ticket_to_policy": 18,
    "postmortem_action_status": 10,
    "postmortem_detection": 6,
    "ticket_status": 6,
    "twin_scoped": 16,
    "policy_as_of": 26,
    "tenant_cutoff": 16,
    "eur_cutoff_after_cutover": 20,
    "eur_cutoff_before_policy": 4,
    "eur_cutoff_exception": 12,
    "reserve_scoped": 14,
    "sweep_scoped": 8,
    "escalation_scoped": 8,
    "account_to_bank": 10,
    "unanswerable_cause": 10,
    "unanswerable_fix": 5,
    "unanswerable_cutover": 6,
    "unanswerable_reserve_acl": 8,
    "unanswerable_sweep_acl": 4,
    "unanswerable_escalation_acl": 4,
    "unanswerable_chf": 4,
}


def split_front_matter(raw: str) -> tuple[dict, str]:
    assert raw.startswith("---\n"), "hand-written documents start with front matter"
    end = raw.index("\n---\n", 4)
    return yaml.safe_load(raw[4:end]), raw[end + 5 :]


def load_handwritten(w: World) -> list[Doc]:
    docs = []
    for path in sorted((HANDWRITTEN / "docs").rglob("*.md")):
        raw = path.read_text(encoding="utf-8")
        meta, body = split_front_matter(raw)
        d = Doc(
            meta["doc_id"],
            meta["title"],
            meta["source_type"],
            meta["authority"],
            meta["tenant"],
            meta["published_at"],
            version=str(meta["version"]),
            extra=dict(meta.get("extra") or {}),
            body=body,
            raw=raw,
        )
        d.acl_groups = list(meta.get("acl_groups") or [])
        expected = f"{d.tenant}/{d.source_type}/{d.doc_id}.md"
        rel = path.relative_to(HANDWRITTEN / "docs").as_posix()
        if rel != expected:
            raise SystemExit(f"{path}: should live at handwritten/docs/{expected}")
        docs.append(w.add(d))
    return docs


def build(seed: int) -> tuple[World, list[dict]]:
    w = World(seed)
    load_handwritten(w)
    chains = reference.policy_chains(w)
    runbooks = reference.global_runbooks(w, chains)
    reference.architecture_notes(w)
    reference.glossary(w)
    tdocs = reference.tenant_docs(w)
    schedules = reference.tenant_schedules(w)
    migrations = reference.migrations(w)
    routine = reference.routine(w)
    planned = incidents.plan_incidents(w, INCIDENTS_PER_TENANT)
    followups: list[Doc] = []
    for inc in planned:
        for d in incidents.build_incident(
            w, inc, lambda slug, day: reference.policy_at(chains, slug, day)
        ):
            w.add(d)
        if inc.has_pm and inc.resolved:
            for d in incidents.build_postmortem(w, inc, followups):
                w.add(d)
    for d in followups:
        w.add(d)
    for d in incidents.quarterly_reviews(w, planned):
        w.add(d)
    w.add(incidents.platform_overview(w))
    families = casegen.incident_cases(w, planned)
    for name, items in casegen.reference_cases(
        w, chains, runbooks, tdocs, schedules, migrations, routine["injections"]
    ).items():
        families.setdefault(name, []).extend(items)
    selected: list[dict] = []
    for name in sorted(families):
        items = families[name]
        cap = FAMILY_CAPS.get(name, len(items))
        if len(items) > cap:
            keep = sorted(w.rng.sample(range(len(items)), cap))
            items = [items[i] for i in keep]
        selected.extend(items)
    for n, c in enumerate(selected, 1):
        c["id"] = f"case-{n:04d}"
    # the long-document shelf: its own random generator, so everything above stays as it was
    shelf = longdocs.build_shelf(w, seed)
    check_shelf(shelf)
    long_cases = casegen.long_document_cases(w, shelf)
    start = len(selected)
    for name in sorted(long_cases):
        selected.extend(long_cases[name])
    for n, c in enumerate(selected[start:], start + 1):
        c["id"] = f"case-{n:04d}"
    handwritten = [
        json.loads(line)
        for line in (HANDWRITTEN / "cases.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    cases = handwritten + selected
    resolve_anchors(w, cases)
    parsed = [parse_case(c, where=f"generated case {c['id']} (#{i})") for i, c in enumerate(cases, 1)]
    check_absent(shelf, parsed + paraphrase_cases())
    return w, cases


def check_shelf(shelf: longdocs.Shelf) -> None:
    """Every long document holds 2k to 15k tokens as ragkit loads it (PDF and HTML included)."""
    texts = [d.loaded_text() for d in shelf.docs]
    for d, n in zip(shelf.docs, count_tokens_batch(texts), strict=True):
        if not longdocs.MIN_TOKENS <= n <= longdocs.MAX_TOKENS:
            raise SystemExit(f"{d.doc_id}: {n} tokens, outside {longdocs.MIN_TOKENS}..{longdocs.MAX_TOKENS}")
        if d.fmt != "md":  # the envelope inside the HTML or PDF file reads back as the Markdown one would
            want = Envelope.from_mapping(d.front_matter()).to_mapping()
            got = _loaded_envelope(d)
            if got != want:
                raise SystemExit(
                    f"{d.doc_id}: the envelope read back from the {d.fmt} file differs: {got} != {want}"
                )


def _loaded_envelope(d: Doc) -> dict:
    import tempfile

    from ragkit.documents.loaders import load_file

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"x.{d.fmt}"
        path.write_bytes(d.render_bytes())
        (doc,) = load_file(path)
    out = doc.envelope.to_mapping()
    out["source_path"] = ""
    return out


def paraphrase_cases() -> list:
    """The hand-written paraphrase set, when present (its unanswerable cases must stay unanswerable)."""
    path = DEFAULT_OUT / "paraphrases.jsonl"
    if not path.exists():
        return []
    lines = [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [parse_case(json.loads(x), where=f"{path}:{i}") for i, x in enumerate(lines, 1)]


def check_absent(shelf: longdocs.Shelf, cases: list) -> None:
    """No long document in an unanswerable case's scope states the fact the case says is missing."""
    envs = [(d, Envelope.from_mapping(d.front_matter())) for d in shelf.docs]
    for c in cases:
        if c.answerable or c.absent is None:
            continue
        for d, env in envs:
            if c.in_scope(env) and c.absent.found_in(d.title + "\n" + d.loaded_text()):
                raise SystemExit(f"{c.id}: its missing fact is stated by long document {d.doc_id}")


def _ws(text: str) -> str:
    return " ".join(text.split())


def anchor_of(doc: Doc, quote: str) -> str:
    """The anchor of the section of ``doc`` (as ragkit loads it) that holds ``quote``."""
    body = doc.loaded_text()
    if doc.fmt == "md":
        hits = body.count(quote)
        if hits != 1:
            raise SystemExit(f"quote occurs {hits} times in {doc.doc_id}: {quote!r}")
        pos = body.index(quote)
        for sec in sections(body):
            if sec.start <= pos and pos + len(quote) <= sec.end:
                return sec.anchor
        raise SystemExit(f"quote in {doc.doc_id} crosses a section boundary: {quote!r}")
    # HTML and PDF: the loaded text re-wraps lines, so compare with whitespace folded
    q = _ws(quote)
    hits = _ws(body).count(q)
    if hits != 1:
        raise SystemExit(f"quote occurs {hits} times in {doc.doc_id} ({doc.fmt}): {quote!r}")
    for sec in sections(body):
        if q in _ws(body[sec.start : sec.end]):
            return sec.anchor
    raise SystemExit(f"quote in {doc.doc_id} ({doc.fmt}) crosses a section boundary: {quote!r}")


def resolve_anchors(w: World, cases: list[dict]) -> None:
    for c in cases:
        for item in c["evidence"] + c["reject"]:
            if item["doc_id"] not in w.docs:
                raise SystemExit(f"{c['id']}: unknown doc {item['doc_id']}")
            if "quote" in item:
                anchor = anchor_of(w.docs[item["doc_id"]], item["quote"])
                if item.get("anchor") not in (None, anchor):
                    raise SystemExit(f"{c['id']}: anchor {item['anchor']} should be {anchor}")
                item["anchor"] = anchor
        order = ["doc_id", "anchor", "quote", "role", "reason", "shared", "resolved_by", "note"]
        c["evidence"] = [{k: e[k] for k in order if k in e} for e in c["evidence"]]
        c["reject"] = [{k: r[k] for k in order if k in r} for r in c["reject"]]


def write(w: World, cases: list[dict], out: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for doc in sorted(w.docs.values(), key=lambda d: d.rel_path()):
        files[f"docs/{doc.rel_path()}"] = doc.render_bytes()
    files["cases.jsonl"] = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases).encode(
        "utf-8"
    )
    return files


def schema_bytes() -> bytes:
    return (json.dumps(CASE_SCHEMA, indent=2) + "\n").encode("utf-8")


def stats(out: Path) -> str:
    loaded, report = load_corpus(out / "docs")
    if not report.ok:
        raise SystemExit(f"the corpus does not load cleanly: {report}")
    docs = [d.envelope for d in loaded]
    words = [len(d.text.split()) for d in loaded]
    tokens = count_tokens_batch([d.text for d in loaded])
    suffix = [Path(e.source_path).suffix.lstrip(".") for e in docs]
    cases = [
        json.loads(x) for x in (out / "cases.jsonl").read_text(encoding="utf-8").splitlines() if x
    ]
    lines = []
    months = sorted({e.published_at.strftime("%Y-%m") for e in docs})
    files = [p for p in (out / "docs").rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    lines.append(
        f"- documents: {len(docs)}  ({size / 1e6:.1f} MB on disk, {sum(words):,} words, "
        f"{sum(tokens):,} tokens)"
    )
    ordered = sorted(words)
    lines.append(
        f"- words per document: min {ordered[0]}, median {ordered[len(ordered) // 2]}, "
        f"p90 {ordered[int(len(ordered) * 0.9)]}, max {ordered[-1]}"
    )
    lines.append(f"- published: {months[0]} .. {months[-1]} ({len(months)} months)")
    lines.append(
        "- tokens are counted with `ragkit.models.tokens.count_tokens` on the text ragkit loads "
        "(front matter and markup excluded)"
    )
    lines.append("")
    lines.append("| tenant | documents |\n|---|---|")
    for k, v in sorted(Counter(e.tenant for e in docs).items()):
        lines.append(f"| {k} | {v} |")
    lines.append("")
    lines.append("| source type | documents | tokens | long documents |\n|---|---|---|---|")
    by_type: dict[str, list[int]] = {}
    long_by_type: Counter = Counter()
    for e, n in zip(docs, tokens, strict=True):
        by_type.setdefault(e.source_type, []).append(n)
        long_by_type[e.source_type] += bool(e.extra.get("long_document"))
    for k in sorted(by_type):
        lines.append(f"| {k} | {len(by_type[k])} | {sum(by_type[k]):,} | {long_by_type[k]} |")
    long = [(e, n, f) for e, n, f in zip(docs, tokens, suffix, strict=True) if e.extra.get("long_document")]
    if long:
        lines.append("")
        lines.append(
            "| long-document kind | documents | tokens | min | median | max | md / html / pdf |\n"
            "|---|---|---|---|---|---|---|"
        )
        kinds = sorted({e.extra["long_document"] for e, _, _ in long})
        for kind in kinds + ["all"]:
            rows = [(n, f) for e, n, f in long if kind in ("all", e.extra["long_document"])]
            ns = sorted(n for n, _ in rows)
            fmts = Counter(f for _, f in rows)
            lines.append(
                f"| {kind} | {len(ns)} | {sum(ns):,} | {ns[0]:,} | {ns[len(ns) // 2]:,} | {ns[-1]:,} | "
                f"{fmts['md']} / {fmts['html']} / {fmts['pdf']} |"
            )
    seams = Counter()
    for m in docs:
        extra = m.extra or {}
        seams["hand-written"] += bool(extra.get("handwritten"))
        seams["injection (extra.injection)"] += bool(extra.get("injection"))
        seams["supersedes a version"] += bool(m.supersedes)
        seams["conditional (conditions set)"] += bool(m.conditions)
        seams["ACL-restricted"] += bool(m.acl_groups)
        seams["long document (2k-15k tokens)"] += bool(extra.get("long_document"))
    lines.append("")
    lines.append("| document seam | documents |\n|---|---|")
    for k, v in sorted(seams.items()):
        lines.append(f"| {k} | {v} |")
    ans = [c for c in cases if c["answerable"]]
    lines.append("")
    lines.append(
        f"- cases: {len(cases)} ({len(ans)} answerable, {len(cases) - len(ans)} unanswerable)"
    )
    lines.append("")
    lines.append("| tag | answerable | unanswerable |\n|---|---|---|")
    tags = sorted({t for c in cases for t in c["tags"]})
    for t in tags:
        a = sum(t in c["tags"] for c in ans)
        u = sum(t in c["tags"] for c in cases if not c["answerable"])
        lines.append(f"| {t} | {a} | {u} |")
    lines.append("")
    lines.append("| decoy kind | cases |\n|---|---|")
    for k, v in sorted(Counter(d for c in cases for d in c["decoys"]).items()):
        lines.append(f"| {k} | {v} |")
    lines.append("")
    lines.append("| reject reason | uses |\n|---|---|")
    counts = Counter(r["reason"] for c in cases for r in c["reject"])
    for k in sorted(REJECT_REASONS):
        lines.append(f"| {k} | {counts.get(k, 0)} |")
    lines.append("")
    lines.append("| evidence set size (answerable) | cases |\n|---|---|")
    for k, v in sorted(Counter(len({e["doc_id"] for e in c["evidence"]}) for c in ans).items()):
        lines.append(f"| {k} document(s) | {v} |")
    lines.append("")
    lines.append("| family | cases |\n|---|---|")
    for k, v in sorted(Counter(c.get("family", "") for c in cases).items()):
        lines.append(f"| {k} | {v} |")
    return "\n".join(lines)


README = HERE / "README.md"
BEGIN, END = "<!-- stats:begin -->", "<!-- stats:end -->"


def readme_with_stats(text: str, block: str) -> str:
    """The dataset card with the counts block between the markers replaced."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--stats", action="store_true", help="print counts from the files on disk")
    ap.add_argument("--check", action="store_true", help="fail if the files on disk differ")
    args = ap.parse_args(argv)
    if args.stats:
        print(stats(args.out))
        return 0
    w, cases = build(args.seed)
    files = write(w, cases, args.out)
    if args.check:
        bad = []
        for rel, data in files.items():
            p = args.out / rel
            if not p.exists() or p.read_bytes() != data:
                bad.append(rel)
        on_disk = {p.relative_to(args.out).as_posix() for p in (args.out / "docs").rglob("*") if p.is_file()}
        bad += sorted(on_disk - set(files))
        if args.out.resolve() == DEFAULT_OUT.resolve():
            text = README.read_text(encoding="utf-8")
            if readme_with_stats(text, stats(args.out)) != text:
                bad.append(str(README))
        schema_file = HERE / "cases.schema.json"
        if not schema_file.exists() or schema_file.read_bytes() != schema_bytes():
            bad.append(str(schema_file))
        if bad:
            print(f"{len(bad)} file(s) differ from a fresh generation, e.g. {bad[:5]}")
            return 1
        digest = hashlib.sha256(b"".join(files[k] for k in sorted(files))).hexdigest()[:16]
        print(f"ok: {len(files)} files match (sha256 {digest})")
        return 0
    if (args.out / "docs").exists():
        shutil.rmtree(args.out / "docs")
    for rel, data in files.items():
        p = args.out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    if args.out.resolve() == DEFAULT_OUT.resolve():
        (HERE / "cases.schema.json").write_bytes(schema_bytes())
        README.write_text(
            readme_with_stats(README.read_text(encoding="utf-8"), stats(args.out)), encoding="utf-8"
        )
    ndocs = sum(r.startswith("docs/") for r in files)
    print(f"wrote {ndocs} documents and {len(cases)} cases to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
