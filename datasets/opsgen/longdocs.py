# ruff: noqa: E501  (long prose and fact strings are data, kept on one line each)
"""The long-document shelf: handbooks, runbooks, design documents, contracts, minutes and
quarterly reviews of 2k to 15k tokens, in Markdown, HTML and PDF (issue 24).

What the shelf plants, for the cases in ``casegen.long_document_cases``:

* numbered clauses that point at other clauses ("no more often than clause 14.3 allows")
  and at other documents ("section 7 of the multi-region failover design");
* the decisive fact deep inside (a late clause, the 19th section of a runbook);
* near-duplicate clauses that differ in one value (14.3 reopenings / 14.4 re-releases);
* versions that supersede each other clause by clause (each version lists the clauses it
  changes; unchanged clauses keep their text word for word);
* tables that span two sections (a schedule and its continuation, whose column meaning is
  stated only in the first part);
* tenants, ACL groups and envelopes like the rest of the corpus (risk-free: treasury-only
  and leadership-only documents beside open ones).

Randomness comes from its own generator (seeded from the corpus seed), never from the
world's, so adding the shelf leaves every other document and case byte for byte as it was.
Identifiers it needs (change ids) are taken through ``World.unique`` so they never collide.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from ragkit.models.tokens import count_tokens

from . import longprose as lp
from . import longprose2 as lp2
from . import pools
from .common import MONTHS, Doc, long_date, month_year
from .render import Blocks
from .world import World

LONG_KINDS = ("handbook", "runbook", "architecture", "contract", "minutes", "quarterly_review")
MIN_TOKENS, MAX_TOKENS = 2000, 15000
ORG = "the platform"


@dataclass
class Shelf:
    """The long documents and what they plant, by family of case."""

    docs: list[Doc] = field(default_factory=list)
    ops_chain: list[Doc] = field(default_factory=list)
    ops_values: list[dict[str, str]] = field(default_factory=list)  # per version: fact key -> value
    disputes_chain: list[Doc] = field(default_factory=list)
    disputes_values: list[dict[str, str]] = field(default_factory=list)
    treasury_chain: list[Doc] = field(default_factory=list)
    treasury_values: list[dict[str, str]] = field(default_factory=list)
    tenant_terms: dict[str, Doc] = field(default_factory=dict)
    tenant_runbooks: dict[str, Doc] = field(default_factory=dict)
    runbooks: dict[str, Doc] = field(default_factory=dict)
    designs: dict[str, Doc] = field(default_factory=dict)
    bank_contracts: dict[str, Doc] = field(default_factory=dict)
    tenant_contracts: dict[str, Doc] = field(default_factory=dict)
    orb_minutes: list[Doc] = field(default_factory=list)
    cab_minutes: list[Doc] = field(default_factory=list)
    steering: dict[str, Doc] = field(default_factory=dict)
    reviews: list[Doc] = field(default_factory=list)
    values: dict[tuple[str, str], str] = field(default_factory=dict)  # (doc_id, fact) -> surface
    meta: dict[str, dict] = field(default_factory=dict)  # doc_id -> planted details for casegen


def _fill(text: str, **slots: str) -> str:
    return text.format(org=ORG, **slots) if "{" in text else text


def _cap(s: str) -> str:
    return s[0].upper() + s[1:]


class Builder:
    """Shared helpers around the shelf's own random generator."""

    def __init__(self, w: World, seed: int):
        self.w = w
        self.rng = random.Random(f"long-documents-{seed}")
        self.shelf = Shelf()
        self.formats = ["md", "md", "html", "md", "pdf", "html", "md", "pdf", "md", "html"]
        self.fmt_i = 0
        self.used: set = set()

    def pick(self, items):
        return items[self.rng.randrange(len(items))]

    def sample(self, items, k):
        return self.rng.sample(items, min(k, len(items)))

    def fresh(self, pool, k):
        """``k`` items of ``pool``, preferring ones not yet used in the current document."""
        pool = list(pool)
        unused = [x for x in pool if x not in self.used]
        out = self.rng.sample(unused, min(k, len(unused)))
        if len(out) < k:
            rest = [x for x in pool if x not in out]
            out += self.rng.sample(rest, min(k - len(out), len(rest)))
        self.used.update(out)
        return out

    def fresh1(self, pool):
        return self.fresh(pool, 1)[0]

    def next_format(self) -> str:
        fmt = self.formats[self.fmt_i % len(self.formats)]
        self.fmt_i += 1
        return fmt

    def person(self, role: str) -> str:
        return self.pick(self.w.staff[role])

    def slots(self) -> dict[str, str]:
        rng = self.rng
        people = self.sample(self.w.staff["operations"] + self.w.staff["engineering"], 2)
        return {
            "system": self.pick(sorted(pools.SYSTEMS)), "bank": self.pick(pools.BANKS),
            "cur": self.pick(["EUR", "GBP", "USD", "SEK", "DKK", "NOK", "CZK"]),
            "amount": f"EUR {rng.randrange(4, 400) * 50:,}", "n": str(rng.randrange(2, 9)),
            "n2": f"{rng.randrange(3, 90) * 100:,}", "month": self.pick(MONTHS),
            "weekday": self.pick(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]),
            "person": people[0], "person2": people[1], "minutes": str(rng.randrange(8, 55)),
            "hours": str(rng.randrange(2, 7)), "pct": f"{rng.randrange(5, 40)}%",
            "channel": self.pick(["SFTP channel", "API channel", "host-to-host link"]),
        }

    def say(self, templates: list[str], k: int = 1, **fixed: str) -> list[str]:
        """``k`` different templates, each filled with fresh slot values."""
        return [t.format(**{**self.slots(), **fixed}) for t in self.fresh(templates, k)]

    def size(self, b: Blocks) -> int:
        return count_tokens(b.markdown())

    def doc(self, doc_id: str, title: str, source_type: str, authority: str, tenant: str, published,
            kind: str, fmt: str | None = None, **kw) -> Doc:
        fmt = fmt or self.next_format()
        self.used = set()
        d = Doc(doc_id, title, source_type, authority, tenant, published, **kw)
        d.extra = {"long_document": kind, **d.extra}
        d.fmt = fmt
        d.style = {"html": self.pick(["meta", "script"]), "pdf": self.pick(["json", "fields"])}.get(fmt, "")
        return d

    def finish(self, d: Doc, b: Blocks) -> Doc:
        b.check_ascii(d.doc_id)
        d.blocks = b
        d.body = b.markdown()
        self.w.add(d)
        self.shelf.docs.append(d)
        return d

    def plant(self, d: Doc, key: str, sentence: str, surface: str) -> str:
        assert surface in sentence, (key, surface, sentence)
        d.fact(key, sentence)
        self.shelf.values[(d.doc_id, key)] = surface
        return sentence


def _next_number(b: Blocks) -> int:
    """One more than the highest numbered level-2 heading so far ("12. Fees" -> 13)."""
    nums = [int(x.text.split(".")[0]) for x in b.blocks if x.kind == "h" and x.level == 2
            and x.text.split(".")[0].isdigit()]
    return max(nums, default=0) + 1


def pad(bd: Builder, b: Blocks, target: int, maker, limit: int = 30) -> None:
    """Append sections from ``maker(bd, b, number)`` until the text holds ``target`` tokens (at
    least ``MIN_TOKENS`` plus a margin: HTML and PDF text reads back a little shorter)."""
    target = max(target, MIN_TOKENS + 250)
    for _ in range(limit):
        if bd.size(b) >= target:
            return
        maker(bd, b, _next_number(b))


def guidance_section(bd: Builder, b: Blocks, num: int) -> None:
    b.h(2, f"{num}. " + bd.pick(["Guidance and worked examples", "Worked examples", "Guidance notes", "Cases from practice"]))
    for para in bd.say(lp2.HANDBOOK_EXAMPLES, 3):
        b.p(para)


def runbook_extra(bd: Builder, b: Blocks, num: int) -> None:
    b.h(2, f"{num}. " + bd.pick(["Worked example", "From past shifts", "What it looked like last time", "Lessons from the rota"]))
    for para in bd.say(lp2.RUNBOOK_EXAMPLES, 3):
        b.p(para)
    theme = bd.pick(sorted(lp2.THEME_STEPS))
    b.ol([_fill(x, **bd.slots()) for x in bd.fresh(lp2.THEME_STEPS[theme], 3)])


def minutes_item(bd: Builder, b: Blocks, num: int) -> None:
    turn = sum(1 for x in b.blocks if x.kind == "h") % 3
    if turn == 1:
        b.h(2, f"{num}. " + bd.pick(["Figures for the period", "Dashboard review", "Operational figures"]))
        b.p("The figures below were presented by the operations lead and are taken from the operations console.")
        b.table(["Measure", "This period", "Previous period"], [[m, str(bd.rng.randrange(2, 90)), str(bd.rng.randrange(2, 90))] for m in
                bd.sample(["Incidents opened", "Incidents with a financial effect", "Manual interventions", "Late acquirer files",
                           "Late bank acknowledgements", "Payout runs paused", "Exceptions older than a week", "Tenant complaints"], 5)])
        b.p(" ".join(bd.say(lp2.DISCUSSION_TEMPLATES, 1)))
        return
    if turn == 2:
        b.h(2, f"{num}. " + bd.pick(["Tenant updates", "Updates by tenant", "Tenant matters"]))
        for tname in bd.sample(pools.TENANTS, 3):
            b.p(bd.say(lp2.TENANT_COMMENTARY, 1, tenant=bd.w.tenants[tname].display)[0])
        return
    heading, text = bd.fresh1(lp.MINUTES_TOPICS)
    slots = bd.slots()
    b.h(2, f"{num}. {heading} (continued)" if any(x.text.endswith(heading) for x in b.blocks) else f"{num}. {heading}")
    b.p(text.format(person=slots["person"]))
    b.p(" ".join(bd.say(lp2.DISCUSSION_TEMPLATES, 2)))
    b.p(bd.fresh1(lp.MINUTES_DISCUSSION))


def review_extra(bd: Builder, b: Blocks, num: int) -> None:
    b.h(2, f"{num}. " + bd.pick(["Notable events", "Operations notes", "Things we learned", "Tenant notes"]))
    for para in bd.say(lp2.TENANT_COMMENTARY, 3, tenant="One tenant") + bd.say(lp2.DISCUSSION_TEMPLATES, 2):
        b.p(para)


def contract_schedule(bd: Builder, b: Blocks, num: int) -> None:
    title = bd.pick(["Reporting", "Contacts", "Service review meetings", "Security requirements", "Operational procedures"])
    b.h(2, f"Schedule {num}. {title}")
    pool = [x for _h, sents in lp2.MORE_CONTRACT_CLAUSES.values() for x in sents] + [x for _h, sents in lp.CONTRACT_CLAUSES.values() for x in sents]
    for para in bd.fresh(pool, 4):
        b.p(_fill(para))


def _clauses(b: Blocks, num: int, heading: str, subs: list[str]) -> None:
    b.h(2, f"{num}. {heading}")
    for k, text in enumerate(subs, 1):
        b.p(f"{num}.{k} {text}")


# --------------------------------------------------------------------------------------
# global handbooks in version chains


OPS_ORDER = ["purpose", "definitions", "roles", "business_day", "batches", "manual", "approvals", "holds",
             "returns", "bank_comms", "incidents", "records", "training", "LIMITS", "tenant_comms", "audit",
             "exceptions", "change", "data", "holding", "bank_holidays", "statements", "fees", "screening", "continuity"]

OPS_VALUES = [
    # fact key -> value per version (v1, v2, v3)
    {"reopen": "3", "rerelease": "3", "adjust": "EUR 20,000", "returns": "5", "hold": "10", "summary": "72", "sample": "20"},
    {"reopen": "2", "rerelease": "3", "adjust": "EUR 20,000", "returns": "3", "hold": "10", "summary": "48", "sample": "30"},
    {"reopen": "2", "rerelease": "2", "adjust": "EUR 15,000", "returns": "3", "hold": "7", "summary": "48", "sample": "30"},
]
OPS_FACTS = {
    # key -> (clause, sub-clause position, sentence template, surface template)
    "reopen": (14, 3, "No more than {v} closed batches of one tenant may be reopened by hand in one business day.", "{v} closed batches"),
    "rerelease": (14, 4, "No more than {v} payout files of one tenant may be released again by hand in one business day.", "{v} payout files"),
    "adjust": (14, 5, "A manual adjustment above {v} to a posted batch needs the payments controller as second approver.", "{v}"),
    "returns": (9, 3, "A returned credit transfer whose return reason has not been cleared with the tenant within {v} business days stays in the tenant's holding account until the tenant instructs otherwise.", "{v} business days"),
    "hold": (8, 4, "A payout hold placed by operations lapses after {v} business days unless risk confirms it in writing.", "{v} business days"),
    "summary": (11, 5, "The written incident summary for an affected tenant is sent within {v} hours of the incident being closed.", "{v} hours"),
    "sample": (16, 4, "The internal audit sample covers {v} settled batches per tenant in each quarter.", "{v} settled batches"),
}
OPS_REF = "A closed batch may be reopened by hand only by the settlement lead on shift, and no more often than clause 14.3 allows."
OPS_REF_POS = (6, 2)


def _topic_subs(b: Builder, topics, key: str, k: int | None = None, **slots) -> tuple[str, list[str]]:
    heading, pool = topics[key]
    chosen = sorted(b.fresh(pool, k or len(pool)), key=pool.index)
    return heading, [_fill(s, **slots) for s in chosen]


def ops_handbook(bd: Builder) -> None:
    """Payments operations handbook v1 -> v2 -> v3, clause by clause."""
    effs = [dt.date(2025, 6, 2), dt.date(2025, 12, 1), dt.date(2026, 6, 1)]
    pubs = [dt.date(2025, 5, 19), dt.date(2025, 11, 10), dt.date(2026, 5, 11)]
    fmts = ["pdf", "md", "html"]
    owner = bd.pick(["Rautenbach", "Quaresma", "Birkeland", "Coutinho"])
    # the clause texts are drawn once: versions differ only in the clauses they change
    base: dict[str, tuple[str, list[str]]] = {}
    examples: dict[str, list[str]] = {}
    topics = {**lp.HANDBOOK_TOPICS, **lp2.MORE_HANDBOOK_TOPICS}
    for key in OPS_ORDER:
        if key != "LIMITS":
            base[key] = _topic_subs(bd, topics, key)
            examples[key] = bd.say(lp2.HANDBOOK_EXAMPLES, bd.rng.randrange(1, 3))
    limits_intro = [
        "This clause collects the numeric limits that the procedures in this handbook refer to. The platform policies set further limits, which are not repeated here.",
        "A limit in this clause may be exceeded only with an exception granted under clause 17.",
    ]
    changed = {1: ["9.3", "11.5", "14.3", "16.4"], 2: ["8.4", "14.4", "14.5"]}
    for v in range(3):
        did = f"hb-payments-operations-v{v + 1}"
        d = bd.doc(did, "Payments operations handbook", "policy", "policy_owner", "global", pubs[v], "handbook",
                   fmts[v], version=str(v + 1), effective_from=effs[v], effective_to=effs[v + 1] if v < 2 else None,
                   entities=["settlement", "payout-service", "ledger-core"],
                   extra={"owner": owner, "status": "current" if v == 2 else "superseded"})
        if v:
            d.supersedes = [f"hb-payments-operations-v{v}"]
        if v < 2:
            d.superseded_by = [f"hb-payments-operations-v{v + 2}"]
        vals = OPS_VALUES[v]
        b = Blocks().h(1, f"Payments operations handbook, version {v + 1}")
        b.p(f"Owner: {owner}, policy owner for operations. Effective from {long_date(effs[v])}; published {long_date(pubs[v])}.")
        if v:
            b.p(f"This version replaces version {v} in full from its effective date. It changes clauses "
                f"{', '.join(changed[v][:-1])} and {changed[v][-1]}; every other clause is word for word as in version {v}. "
                "The amendment record at the end lists every change since the first version.")
        else:
            b.p("This is the first version of the handbook. It brings together rules that were previously spread over runbooks, team wiki pages and tickets.")
        planted: dict[tuple[int, int], str] = {}
        for key, (clause, pos, tmpl, surf) in OPS_FACTS.items():
            sentence = tmpl.format(v=vals[key])
            bd.plant(d, key, sentence, surf.format(v=vals[key]))
            planted[(clause, pos)] = sentence
        d.fact("reopen_ref", OPS_REF)
        planted[OPS_REF_POS] = OPS_REF
        for num, key in enumerate(OPS_ORDER, 1):
            if key == "LIMITS":
                heading, subs = "Limits and thresholds", list(limits_intro)
            else:
                heading, subs = base[key][0], list(base[key][1])
            for (clause, pos), sentence in sorted(planted.items()):
                if clause == num:
                    subs.insert(min(pos - 1, len(subs)), sentence)
            _clauses(b, num, heading, subs)
            for para in examples.get(key, []):
                b.p(para)
        b.h(2, "Schedule A. Amendment record")
        rows = [["1", effs[0].isoformat(), "all", "first version"]]
        for k in range(1, v + 1):
            rows.append([str(k + 1), effs[k].isoformat(), ", ".join(changed[k]), bd.fresh1(lp.AMEND_NOTES)])
        b.table(["Version", "Effective", "Clauses changed", "Note"], rows)
        b.h(2, "Schedule B. Where to find the numbers this handbook does not repeat")
        b.table(["Subject", "Where it is set"], [
            ["Cutoffs per currency", "Settlement policy and each tenant's settlement schedule"],
            ["Retry ceiling for payouts", "Payout retry policy"],
            ["Second-approver threshold for refunds", "Refund approval policy"],
            ["Notice deadline for tenant incidents", "Tenant incident notice policy"],
            ["Month-end freeze", "Ledger freeze policy"],
            ["File retention", "Settlement file retention policy"],
        ])
        bd.finish(d, b)
        bd.shelf.ops_chain.append(d)
        bd.shelf.ops_values.append(dict(vals))


DISPUTES_ORDER = ["purpose", "intake", "evidence", "committee", "deadlines_placeholder", "goodwill", "records",
                  "tenant_comms"]
GOODWILL_TIERS = [
    ["Tier 1", "up to 250", "support agent"],
    ["Tier 2", "251 to 1,000", "support team lead"],
    ["Tier 3", "1,001 to 5,000", "settlement lead on shift"],
    ["Tier 4", "5,001 to 10,000", "duty manager"],
    ["Tier 5", "10,001 to 25,000", "head of operations"],
    ["Tier 6", "25,001 to 50,000", "payments controller"],
    ["Tier 7", "50,001 to 100,000", "chief operating officer"],
    ["Tier 8", "above 100,000", "the disputes committee with the chief financial officer"],
]


def disputes_handbook(bd: Builder) -> None:
    effs = [dt.date(2025, 7, 1), dt.date(2026, 3, 2)]
    pubs = [dt.date(2025, 6, 16), dt.date(2026, 2, 9)]
    fmts = ["md", "pdf"]
    owner = bd.pick(["Rautenbach", "Quaresma", "Birkeland", "Coutinho"])
    values = [{"committee": "EUR 10,000", "card": "10", "sepa": "7", "tier6": "payments controller"},
              {"committee": "EUR 15,000", "card": "8", "sepa": "7", "tier6": "head of operations"}]
    base = {k: _topic_subs(bd, lp2.DISPUTES_TOPICS, k) for k in lp2.DISPUTES_TOPICS}
    for v in range(2):
        vals = values[v]
        d = bd.doc(f"hb-disputes-v{v + 1}", "Disputes and goodwill credits handbook", "policy", "policy_owner", "global",
                   pubs[v], "handbook", fmts[v], version=str(v + 1), effective_from=effs[v],
                   effective_to=effs[1] if v == 0 else None, entities=["card-settler", "disputes"],
                   extra={"owner": owner, "status": "current" if v else "superseded"})
        if v:
            d.supersedes = ["hb-disputes-v1"]
        else:
            d.superseded_by = ["hb-disputes-v2"]
        b = Blocks().h(1, f"Disputes and goodwill credits handbook, version {v + 1}")
        b.p(f"Owner: {owner}. Effective from {long_date(effs[v])}.")
        if v:
            b.p("Version 2 replaces version 1 in full from its effective date. It changes clause 4.6, clause 5.3 and the sixth row of Schedule 1; the rest is unchanged.")
        committee = bd.plant(d, "committee", f"A dispute whose amount is above {vals['committee']} goes to the disputes committee for decision.", vals["committee"])
        card = bd.plant(d, "card", f"Evidence for a card scheme dispute must reach the acquirer within {vals['card']} calendar days of the dispute notification.", f"{vals['card']} calendar days")
        sepa = bd.plant(d, "sepa", f"Evidence for a SEPA recall request must reach the originating bank within {vals['sepa']} calendar days of the recall notification.", f"{vals['sepa']} calendar days")
        ref = "Operations never concedes on its own a dispute whose amount is above the committee threshold in clause 4.6; the committee decides it."
        d.fact("committee_ref", ref)
        num = 0
        for key in ["purpose", "intake", "evidence", "committee", "deadlines", "goodwill", "records", "tenant_comms"]:
            num += 1
            heading, subs = base[key][0], list(base[key][1])
            if key == "committee":
                subs = subs[:5] + [committee] + subs[5:]
            if key == "deadlines":
                subs = subs[:2] + [card, sepa] + subs[2:]
            if key == "goodwill":
                subs = subs[:1] + [ref] + subs[1:]
            _clauses(b, num, heading, subs)
        extra_topics = [("Disputes raised by tenants", lp.HANDBOOK_TOPICS["tenant_comms"][1]),
                        ("Disputes with banks", lp.HANDBOOK_TOPICS["bank_comms"][1]),
                        ("Audit of dispute handling", lp.HANDBOOK_TOPICS["audit"][1]),
                        ("Exceptions", lp.HANDBOOK_TOPICS["exceptions"][1])]
        for heading, pool in extra_topics:
            num += 1
            _clauses(b, num, heading, [_fill(s) for s in bd.fresh(pool, 4)])
            b.p(bd.say(lp2.HANDBOOK_EXAMPLES, 1)[0])
        if v == 0:
            disputes_target = bd.rng.randrange(4200, 5600)
        pad(bd, b, disputes_target, guidance_section)
        tiers = [list(r) for r in GOODWILL_TIERS]
        tiers[5][2] = vals["tier6"]
        b.h(2, "Schedule 1. Goodwill credit authority")
        note = "Amounts in this schedule are per credit and in EUR. The role named is the most junior role that may grant a credit of that size; any more senior role may also grant it."
        d.fact("tiers_note", note)
        b.p(note)
        b.table(["Tier", "Amount", "Role"], tiers[:4])
        b.p("Tiers 5 to 8 continue below. A credit may not be split into smaller credits to bring it into a lower tier.")
        b.h(2, "Schedule 1 (continued)")
        b.table(["Tier", "Amount", "Role"], tiers[4:])
        for r in tiers:
            d.fact(f"tier:{r[0]}", " | ".join(r))
            bd.shelf.values[(d.doc_id, f"tier:{r[0]}")] = r[2]
        b.h(2, "Schedule 2. Amendment record")
        rows = [["1", effs[0].isoformat(), "all", "first version"]]
        if v:
            rows.append(["2", effs[1].isoformat(), "4.6, 5.3, Schedule 1 tier 6", bd.fresh1(lp.AMEND_NOTES)])
        b.table(["Version", "Effective", "Changes", "Note"], rows)
        bd.finish(d, b)
        bd.shelf.disputes_chain.append(d)
        bd.shelf.disputes_values.append(vals)


def treasury_handbook(bd: Builder) -> None:
    effs = [dt.date(2025, 9, 1), dt.date(2026, 4, 1)]
    pubs = [dt.date(2025, 8, 18), dt.date(2026, 3, 16)]
    fmts = ["md", "pdf"]
    values = [{"buffer": "EUR 2,500,000", "target": "EUR 1,000,000"}, {"buffer": "EUR 3,200,000", "target": "EUR 1,000,000"}]
    base = {k: _topic_subs(bd, lp2.TREASURY_TOPICS, k) for k in lp2.TREASURY_TOPICS}
    owner = bd.person("approvers")
    for v in range(2):
        vals = values[v]
        d = bd.doc(f"hb-treasury-v{v + 1}", "Treasury operations handbook", "policy", "policy_owner", "global", pubs[v],
                   "handbook", fmts[v], version=str(v + 1), effective_from=effs[v], effective_to=effs[1] if v == 0 else None,
                   acl_groups=["treasury"], entities=["treasury", "operating-account"],
                   extra={"owner": owner, "status": "current" if v else "superseded"})
        if v:
            d.supersedes = ["hb-treasury-v1"]
        else:
            d.superseded_by = ["hb-treasury-v2"]
        b = Blocks().h(1, f"Treasury operations handbook, version {v + 1}")
        b.p(f"Restricted to the treasury group. Owner: {owner}. Effective from {long_date(effs[v])}.")
        ref = "Payout runs are released only while the operating account stays above the intraday buffer in clause 10.2."
        d.fact("buffer_ref", ref)
        buffer = bd.plant(d, "buffer", f"The intraday liquidity buffer on the operating account is {vals['buffer']}.", vals["buffer"])
        target = bd.plant(d, "target", f"The end-of-day target balance on the operating account is {vals['target']}.", vals["target"])
        order = ["purpose", "accounts", "payout_funding", "forecasting", "fx", "banks", "controls"]
        num = 0
        for key in order:
            num += 1
            heading, subs = base[key][0], list(base[key][1])
            if key == "payout_funding":
                subs = [ref] + subs
            _clauses(b, num, heading, subs)
            if bd.rng.random() < 0.5:
                b.p(bd.say(lp2.HANDBOOK_EXAMPLES, 1)[0])
        for heading, pool in [("Records", lp.HANDBOOK_TOPICS["records"][1]), ("Training and access", lp.HANDBOOK_TOPICS["training"][1])]:
            num += 1
            _clauses(b, num, heading, [_fill(s) for s in bd.fresh(pool, 5)])
        num += 1
        assert num == 10
        _clauses(b, num, "Liquidity limits", [
            "This clause sets the balances treasury keeps on the platform's own accounts during and at the end of each business day.",
            buffer, target,
            "A breach of either figure is reported to the head of treasury at once and recorded in the treasury log.",
            "The figures are reviewed every six months against the largest payout runs of the period.",
        ])
        for key in ("exceptions", "continuity", "bank_holidays"):
            num += 1
            heading, pool = {**lp.HANDBOOK_TOPICS, **lp2.MORE_HANDBOOK_TOPICS}[key]
            _clauses(b, num, heading, [_fill(s) for s in bd.fresh(pool, 4)])
        pad(bd, b, bd.rng.randrange(2600, 3600), guidance_section)
        bd.finish(d, b)
        bd.shelf.treasury_chain.append(d)
        bd.shelf.treasury_values.append(vals)


# --------------------------------------------------------------------------------------
# tenant operating terms


def tenant_terms(bd: Builder) -> None:
    onboard_days = [3, 4, 5, 6, 7, 8, 10, 12, 14, 15]
    bd.rng.shuffle(onboard_days)
    for i, tname in enumerate(pools.TENANTS):
        t = bd.w.tenants[tname]
        disp = t.display
        pub = dt.date(2025, 6, 2) + dt.timedelta(days=bd.rng.randrange(0, 280))
        d = bd.doc(f"hb-{tname}-operating-terms", f"{disp} operating terms", "policy", "policy_owner", tname, pub,
                   "handbook", entities=[tname], extra={"owner": bd.person("approvers")})
        weeks = bd.pick([4, 6, 8, 12])
        disputes_h = bd.pick([4, 6, 8])
        finance_h = bd.pick([h for h in [12, 16, 24] if h != disputes_h])
        days = onboard_days[i]
        onboarding = bd.plant(d, "onboarding", f"Onboarding reviews for new {disp} merchants are completed within {days} business days of a complete application.", f"{days} business days")
        review = bd.plant(d, "review", f"Service reviews with {disp} take place every {weeks} weeks, alternating between a call and a meeting in person.", f"{weeks} weeks")
        ref = f"Figures on manual interventions for {disp} are not sent separately; they are presented at the service review under clause 9.1."
        d.fact("review_ref", ref)
        disputes = bd.plant(d, "disputes", f"Questions from {disp}'s disputes team are answered within {disputes_h} business hours.", f"{disputes_h} business hours")
        finance = bd.plant(d, "finance", f"Questions from {disp}'s finance team are answered within {finance_h} business hours.", f"{finance_h} business hours")
        b = Blocks().h(1, f"{disp} operating terms")
        b.p(f"Version 1, effective from {long_date(pub)}. Agreed between {disp}'s operations team and the platform's operations team.")
        num = 0
        order = ["scope", "contacts", "reporting_ref", "onboarding", "payouts", "reporting", "questions", "changes", "service_review", "review"]
        for key in order:
            num += 1
            if key == "reporting_ref":
                subs = [_fill(s, tenant=disp) for s in bd.fresh(lp.HANDBOOK_TOPICS["manual"][1], 3)]
                subs.insert(3, ref)
                _clauses(b, num, "Manual interventions", subs)
            elif key == "questions":
                _clauses(b, num, "Answering questions", [
                    f"Questions from {disp} reach the platform through the ticket queue; questions sent to individuals are moved to the queue.",
                    disputes, finance,
                    "Business hours are 08:00 to 18:00 CET on business days.",
                    f"Where an answer needs engineering, support tells {disp} when an answer can be expected.",
                ])
            elif key == "service_review":
                _clauses(b, num, "Service reviews", [review,
                    f"The platform prepares the figures for each review and sends them to {disp} three business days before it.",
                    "Actions agreed at a review are recorded on the tenant's review ticket with owners and dates.",
                    f"{disp} may ask for an extra review after a major incident."])
            else:
                heading, subs = _topic_subs(bd, lp2.TENANT_TERMS, key, tenant=disp)
                if key == "onboarding":
                    subs.insert(2, onboarding)
                _clauses(b, num, heading, subs)
        target = bd.rng.randrange(2500, 3600)
        more = [("Payout holds", "holds"), ("Returned payments", "returns"), ("Incidents", "incidents"), ("Data", "data"),
                ("Statements", "statements"), ("Fees", "fees"), ("Bank holidays", "bank_holidays"),
                ("Holding accounts", "holding"), ("Screening", "screening"), ("Business continuity", "continuity"),
                ("Records", "records"), ("Audit", "audit")]
        topics = {**lp.HANDBOOK_TOPICS, **lp2.MORE_HANDBOOK_TOPICS}
        for heading, key in bd.sample(more[:4], 4) + bd.sample(more[4:], len(more) - 4):
            if bd.size(b) >= target:
                break
            num += 1
            _clauses(b, num, heading, [_fill(s, tenant=disp) for s in sorted(bd.fresh(topics[key][1], 4), key=topics[key][1].index)])
            if bd.rng.random() < 0.5:
                b.p(bd.say(lp2.HANDBOOK_EXAMPLES, 1)[0])
        assert "9. Service reviews" in b.markdown(), d.doc_id
        bd.finish(d, b)
        bd.shelf.tenant_terms[tname] = d


# --------------------------------------------------------------------------------------
# runbooks with 20+ sections

RUNBOOK_TITLES = {
    "bank-connectivity": ("Bank connectivity runbook", "acquirer-bridge"),
    "month-end-close": ("Month-end close runbook", "ledger-core"),
    "disaster-recovery": ("Disaster recovery runbook", "batch-scheduler"),
    "card-clearing": ("Card scheme clearing runbook", "clearing-gateway"),
    "payout-exceptions": ("Payout exceptions runbook", "payout-service"),
    "incident-command": ("Incident command runbook", "notify-hub"),
}
RUNBOOK_FACTS = {
    # slug -> (section heading, sentence, surface), (near-duplicate heading, sentence)
    "bank-connectivity": (("Backup channel", "If a bank has not acknowledged a payment file within {a} minutes, resubmit it once through the backup channel and tell the bank's help desk.", "{a} minutes"),
                          ("Scheme clearing files", "If a card scheme has not acknowledged a clearing file within {b} minutes, call the scheme's help desk before resubmitting anything.")),
    "month-end-close": (("Control report sign-off", "The payments controller signs the month-end control report only when every difference above {a} on it has a written explanation.", "{a}"),
                        ("Ledger checks", "On an ordinary day, differences below {b} on the daily control report may be explained in a single line.")),
    "disaster-recovery": (("Failing back", "Fail back to the primary region only after it has passed {a} health checks in a row, at least five minutes apart.", "{a} health checks"),
                          ("Regional health checks", "A single failed health check is logged and watched; the check runs again after {b} minutes.")),
    "card-clearing": (("Replay limits", "A clearing file may be replayed at most {a} times in one business day; after that, the scheme's help desk decides.", "{a} times"),
                      ("Late clearing files", "A clearing file that misses the scheme window is held for the next window, which opens {b} hours later.")),
    "payout-exceptions": (("Ageing exceptions", "Exceptions older than {a} business days are moved to the weekly exceptions review with a note of what has been tried.", "{a} business days"),
                          ("Daily triage", "New exceptions are triaged within {b} hours of arriving in the queue.")),
    "incident-command": (("Handing over", "An incident commander hands over after {a} hours in the role, even when the incident is nearly over.", "{a} hours"),
                         ("The scribe", "The scribe hands over after {b} hours, and the incoming scribe reads the whole channel before starting.")),
}
RUNBOOK_VALUES = {
    "bank-connectivity": ("35", "20"), "month-end-close": ("EUR 2,500", "EUR 500"), "disaster-recovery": ("3", "2"),
    "card-clearing": ("3", "4"), "payout-exceptions": ("4", "6"), "incident-command": ("6", "4"),
}


def theme_of(heading: str) -> str:
    low = heading.lower()
    for theme, words in lp2.THEME_KEYWORDS:
        if any(w in low for w in words):
            return theme
    return "shift"


def _relevant(heading: str, own: list[str]) -> list[str]:
    """The runbook's own steps that share a content word with the heading."""
    stems = {w[:6] for w in heading.lower().replace(":", " ").split() if len(w) >= 6}
    return [s for s in own if stems & {w.strip(".,;'").lower()[:6] for w in s.split() if len(w) >= 6}]


def _runbook_section(bd: Builder, b: Blocks, num: int, heading: str, slots: dict, planted: list[str] | None = None,
                     steps: tuple[int, int] = (3, 7), own: list[str] | None = None, examples: float = 0.5) -> None:
    b.h(2, f"{num}. {heading}")
    theme = theme_of(heading)
    note = bd.fresh1(lp.NOTES)
    if bd.rng.random() < 0.5:
        b.p(note)
    k = bd.rng.randrange(*steps)
    rel = _relevant(heading, own or [])
    mine = bd.fresh(rel, min(len(rel), 3)) if rel else []
    generic = bd.fresh(lp2.THEME_STEPS[theme], max(1, k - len(mine)))
    order = mine + generic
    b.ol([_fill(s, **slots) for s in order])
    for sentence in planted or []:
        b.p(sentence)
    if bd.rng.random() < examples:
        b.p(bd.say(lp2.RUNBOOK_EXAMPLES, 1, system=slots["system"])[0])
    if bd.rng.random() < 0.4:
        b.p(bd.fresh1(lp.NOTES))


def global_runbooks(bd: Builder) -> None:
    pubs = {"bank-connectivity": dt.date(2025, 9, 8), "month-end-close": dt.date(2025, 10, 20),
            "disaster-recovery": dt.date(2026, 2, 2), "card-clearing": dt.date(2025, 8, 11),
            "payout-exceptions": dt.date(2026, 1, 12), "incident-command": dt.date(2025, 11, 17)}
    fmts = {"bank-connectivity": "md", "month-end-close": "html", "disaster-recovery": "md", "card-clearing": "pdf",
            "payout-exceptions": "html", "incident-command": "md"}
    for slug, headings in lp2.RUNBOOK_HEADINGS.items():
        title, system = RUNBOOK_TITLES[slug]
        author = bd.person("operations")
        d = bd.doc(f"rb-{slug}", title, "runbook", "operations", "global", pubs[slug], "runbook", fmts[slug],
                   entities=[system], extra={"author": author})
        (fh, fs, fsurf), (nh, ns) = RUNBOOK_FACTS[slug]
        a, bval = RUNBOOK_VALUES[slug]
        fact = bd.plant(d, "deep", fs.format(a=a), fsurf.format(a=a))
        near = ns.format(b=bval)
        d.fact("near", near)
        slots = {"system": system, "bank": bd.pick(pools.BANKS), "channel": bd.pick(["SFTP channel", "API channel", "host-to-host link"])}
        b = Blocks().h(1, title)
        b.p(f"Owner: {author}. For everyone on the settlement rota. Read it once end to end before your first shift; after that, jump to the section you need.")
        b.p("Each section stands on its own. Where a step depends on another section, it names the section by number.")
        for num, heading in enumerate(headings, 1):
            planted = []
            if heading == fh:
                planted.append(fact)
            if heading == nh:
                planted.append(near)
            if slug == "month-end-close" and heading == "Reconciliation pack":
                ref = f"Send the reconciliation pack to the payments controller by the deadline in the sign-off calendar (section {headings.index('Sign-off calendar') + 1})."
                d.fact("pack_ref", ref)
                planted.append(ref)
            if slug == "disaster-recovery" and heading == "When recovery is complete":
                ref = "Recovery is complete only when every service is back within the recovery objectives in section 7 of the multi-region failover design, and the data checks in this runbook have passed."
                d.fact("rto_ref", ref)
                planted.append(ref)
            if heading == "Related documents":
                b.h(2, f"{num}. {heading}")
                b.ul(["Payments operations handbook (current version)", "The platform policies named in Schedule B of the handbook",
                      f"The {system} architecture note", "The incident command runbook"])
                continue
            if slug == "month-end-close" and heading == "Sign-off calendar":
                b.h(2, f"{num}. {heading}")
                b.p("Deadlines are business days after the last business day of the month, in CET.")
                rows = [["Reconciliation pack", "1st business day", "16:00"], ["Holding account confirmations", "1st business day", "18:00"],
                        ["Fee accrual journal", "2nd business day", "12:00"], ["Control report sign-off", "3rd business day", "10:00"],
                        ["Tenant statements released", "3rd business day", "15:00"]]
                b.table(["Item", "Due", "Time (CET)"], rows)
                pack = " | ".join(rows[0])
                d.fact("pack", pack)
                bd.shelf.values[(d.doc_id, "pack")] = "16:00"
                continue
            _runbook_section(bd, b, num, heading, slots, planted, steps=(3, 8) if slug == "month-end-close" else (3, 7),
                             own=lp2.RUNBOOK_STEPS[slug], examples=0.8 if slug == "month-end-close" else 0.6)
            if slug == "month-end-close" and num % 2 == 0:  # worked examples between the sections
                b.h(3, f"{num}.1 " + bd.pick(["Worked example", "From past month-ends", "What it looked like last time"]))
                for para in bd.say(lp2.RUNBOOK_EXAMPLES, 2) + bd.say(lp2.HANDBOOK_EXAMPLES, 2):
                    b.p(para)
        if slug == "month-end-close":
            b.h(2, f"{len(headings) + 2}. Appendix: month-end log")
            b.p("One line per month-end since this runbook was first used. Times are CET on the day named.")
            rows = []
            for k in range(14):
                m = dt.date(2024, 8, 1) + dt.timedelta(days=31 * k)
                rows.append([month_year(m), f"{bd.rng.randrange(20, 23)}:{bd.pick(['05', '20', '35', '50'])}", f"{bd.rng.randrange(1, 4)}",
                             f"{bd.rng.randrange(8, 11)}:{bd.pick(['10', '25', '40', '55'])}", bd.pick(["", "late acquirer file", "bank statement late", "one adjustment refused", "freeze extended by one hour", "no issues"])])
            b.table(["Month", "Trial balance exported", "Adjustments in freeze", "Control report signed", "Notes"], rows)
            pad(bd, b, 11000, runbook_extra, limit=20)
        if slug in ("month-end-close", "incident-command", "bank-connectivity"):
            b.h(2, f"{len(headings) + 1}. Appendix: symptoms seen before")
            rows = [[pools.SYMPTOMS[i][0], pools.CAUSES[j][0], bd.pick(["this runbook", "the service runbook", "engineering on-call"])]
                    for i, j in zip(bd.sample(range(len(pools.SYMPTOMS)), 8), bd.sample(range(len(pools.CAUSES)), 8), strict=True)]
            b.table(["Symptom", "Cause found", "Handled by"], rows)
        bd.finish(d, b)
        bd.shelf.runbooks[slug] = d


def tenant_runbooks(bd: Builder) -> None:
    times = ["07:30", "07:45", "08:00", "08:15", "08:30", "08:45", "09:00", "09:15", "09:30", "10:00"]
    bd.rng.shuffle(times)
    for i, tname in enumerate(pools.TENANTS):
        t = bd.w.tenants[tname]
        disp = t.display
        pub = dt.date(2025, 7, 1) + dt.timedelta(days=bd.rng.randrange(0, 300))
        author = bd.person("operations")
        d = bd.doc(f"rb-{tname}-daily-operations", f"{disp} daily operations runbook", "runbook", "operations", tname, pub,
                   "runbook", entities=[tname], extra={"author": author})
        fact = bd.plant(d, "exceptions", f"{disp}'s exceptions report must reach their finance team by {times[i]} CET on each business day.", times[i])
        slots = {"system": bd.pick(sorted(pools.SYSTEMS)), "bank": bd.pick(t.banks), "channel": "SFTP channel"}
        b = Blocks().h(1, f"{disp} daily operations runbook")
        b.p(f"Owner: {author}. What the person on shift does for {disp}, from the first batch to the handover. The tenant's operating terms and the payments operations handbook take precedence over this runbook.")
        for num, heading in enumerate(lp2.TENANT_RUNBOOK_HEADINGS, 1):
            if heading == "The tenant in brief":
                b.h(2, f"{num}. {heading}")
                b.p(f"{disp} settles in {', '.join(t.currencies)} through {', '.join(t.banks)}. Their operations contacts are listed on the account overview page.")
                continue
            if heading == "Related documents":
                b.h(2, f"{num}. {heading}")
                b.ul([f"{disp} operating terms", f"{disp} account overview", "Payments operations handbook", "Payout exceptions runbook"])
                continue
            planted = [fact] if heading == "Exceptions report" else []
            _runbook_section(bd, b, num, heading, slots, planted, steps=(2, 5), examples=0.45)
        pad(bd, b, bd.rng.randrange(2400, 3400), runbook_extra)
        bd.finish(d, b)
        bd.shelf.tenant_runbooks[tname] = d


# --------------------------------------------------------------------------------------
# design documents

DESIGNS = {
    "multi-region": ("Multi-region failover design", "batch-scheduler"),
    "ledger-slicing": ("Ledger slicing design", "ledger-core"),
    "payout-pipeline": ("Payout pipeline design", "payout-service"),
    "recon-matching": ("Reconciliation matching design", "recon-engine"),
    "notifications": ("Tenant notifications design", "notify-hub"),
    "key-management": ("Signing key management design", "acquirer-bridge"),
    "fx-cache": ("FX rate cache design", "fx-rates"),
    "statement-rendering": ("Statement rendering design", "notify-hub"),
}
DESIGN_FACTS = {
    "ledger-slicing": ("Each posting slice holds at most {v} ledger entries, and a slice never spans two merchants' postings.", "5,000", "{v} ledger entries"),
    "payout-pipeline": ("The payout-service worker pool is capped at {v} workers per region.", "24", "{v} workers"),
    "recon-matching": ("Statement lines that stay unmatched for {v} business days are flagged to the payments controller's team.", "3", "{v} business days"),
    "notifications": ("A failed webhook delivery is retried {v} times over twelve hours before the tenant's operations contact is emailed.", "8", "{v} times"),
    "key-management": ("Signing keys for payment files are rotated every {v} days.", "90", "{v} days"),
}
RECOVERY = [
    ["ledger-core", "5 minutes", "45 minutes"], ["batch-scheduler", "1 minute", "20 minutes"],
    ["payout-service", "5 minutes", "60 minutes"], ["file-ingest", "15 minutes", "60 minutes"],
    ["acquirer-bridge", "15 minutes", "90 minutes"], ["sepa-connector", "15 minutes", "90 minutes"],
    ["recon-engine", "60 minutes", "240 minutes"], ["notify-hub", "60 minutes", "240 minutes"],
]


def designs(bd: Builder) -> None:
    fmt_cycle = {"multi-region": "md", "ledger-slicing": "html", "payout-pipeline": "md", "recon-matching": "pdf",
                 "notifications": "md", "key-management": "html", "fx-cache": "md", "statement-rendering": "pdf"}
    for slug, (title, system) in DESIGNS.items():
        author = bd.person("engineering")
        pub = dt.date(2025, 5, 12) + dt.timedelta(days=bd.rng.randrange(0, 480))
        if slug == "multi-region":
            pub = dt.date(2025, 11, 24)
        d = bd.doc(f"arch-design-{slug}", title, "architecture", "engineering", "global", pub, "architecture",
                   fmt_cycle[slug], entities=[system], extra={"author": author, "status": "accepted"})
        slots = {"system": system}
        b = Blocks().h(1, title)
        b.p(f"Author: {author}. Status: accepted. Reviewers: {', '.join(bd.sample(bd.w.staff['engineering'], 3))}.")
        sections = [("Context", "context"), ("Goals", "goals"), ("Non-goals", "nongoals"), ("Current design", None),
                    ("Proposed design", "design"), ("Components", "components"), ("Failure handling", "failure"),
                    ("Capacity", "capacity"), ("Observability", "observability"), ("Security", "security"),
                    ("Rollout", "rollout"), ("Alternatives considered", "alternatives"), ("Open questions", "questions"),
                    ("Decision log", "decisions")]
        if slug == "multi-region":
            sections.insert(6, ("Recovery objectives", "recovery"))
        for num, (heading, key) in enumerate(sections, 1):
            b.h(2, f"{num}. {heading}")
            if key is None:
                for para in lp2.DESIGN_SPECIFIC[slug]:
                    b.p(_fill(para, **slots))
            elif key == "components":
                funcs = pools.FUNCTIONS.get(system, [])
                b.table(["Function", "Runs", "Notes"], [[f, bd.pick(["per batch", "per merchant", "per file", "on retry", "nightly"]),
                                                         bd.pick(["idempotent", "holds a lock", "writes to the state table", "reads only", "calls the bank channel"])]
                                                        for f in funcs] or [[system, "always", "single component"]])
                b.p(_fill(bd.fresh1(lp.ARCH_PARAS["design"]), **slots))
            elif key == "capacity":
                rows = [[m, f"{bd.rng.randrange(20, 95)}%", f"{bd.rng.randrange(2, 40)}x"] for m in ["CPU at the Monday peak", "Queue depth at month-end", "Database connections", "Disk on the state store"]]
                b.table(["Measure", "Peak use", "Headroom to limit"], rows)
                b.p("Figures are from the last three months of production. Monday batches and month-end days set the peaks.")
                if slug in DESIGN_FACTS:
                    tmpl, v, surf = DESIGN_FACTS[slug]
                    b.p(bd.plant(d, "deep", tmpl.format(v=v), surf.format(v=v)))
            elif key == "recovery":
                note = "The recovery point objective (RPO) is the most data the service may lose, measured in time; the recovery time objective (RTO) is how long it may take to be serving again after failover is declared."
                d.fact("rto_note", note)
                b.p(note)
                b.table(["Service", "RPO", "RTO"], RECOVERY[:4])
                b.p("The remaining services follow in the next section, which also explains why their objectives are looser.")
                b.h(3, f"{num}.1 Recovery objectives (continued)")
                b.p("Services whose work can be repeated from files or from the ledger have looser objectives, because nothing is lost that cannot be rebuilt.")
                b.table(["Service", "RPO", "RTO"], RECOVERY[4:])
                for r in RECOVERY:
                    d.fact(f"rto:{r[0]}", " | ".join(r))
                    bd.shelf.values[(d.doc_id, f"rto:{r[0]}")] = r[2]
            elif key == "decisions":
                rows = []
                for _k in range(bd.rng.randrange(3, 6)):
                    day = pub - dt.timedelta(days=bd.rng.randrange(5, 120))
                    rows.append([day.isoformat(), bd.pick(["adopt per-tenant queues", "keep the scheduler as owner of batches", "use idempotency keys per step",
                                                           "reject the managed workflow engine", "roll out behind a per-tenant flag", "alert on oldest unit age"]),
                                 bd.pick(bd.w.staff["engineering"])])
                b.table(["Date", "Decision", "Recorded by"], sorted(rows))
            else:
                pool = lp.ARCH_PARAS[key]
                for para in bd.fresh(pool, min(len(pool), bd.rng.randrange(3, 6))):
                    b.p(_fill(para, **slots))
                if key in ("design", "failure"):
                    b.ul([_fill(s, **slots) for s in bd.fresh(lp.ARCH_PARAS["failure" if key == "design" else "design"], 3)])
                if key == "context":
                    for para in bd.say(lp2.DESIGN_MEASUREMENTS, 3, system=system):
                        b.p(para)
        target = bd.rng.randrange(2600, 4200)
        extra = 0
        while bd.size(b) < target and extra < 12:
            extra += 1
            b.h(2, f"Appendix {'ABCDEFGHIJKL'[extra - 1]}. " + bd.pick(["Incident notes", "Measurements", "Review comments", "Migration notes", "Operational notes", "Design history"]))
            for para in bd.say(lp2.DESIGN_MEASUREMENTS, 2, system=system) + bd.say(lp2.RUNBOOK_EXAMPLES, 2, system=system):
                b.p(para)
            b.p(_fill(bd.fresh1(lp.ARCH_PARAS["failure"]), **slots))
        bd.finish(d, b)
        bd.shelf.designs[slug] = d


# --------------------------------------------------------------------------------------
# contracts


CREDITS = [["99.9% or above", "0%"], ["99.5% to below 99.9%", "5%"], ["99.0% to below 99.5%", "10%"],
           ["98.0% to below 99.0%", "15%"], ["97.0% to below 98.0%", "20%"], ["below 97.0%", "30%"]]


def bank_contracts(bd: Builder) -> None:
    banks = bd.sample(pools.BANKS, 8)
    restricted = set(banks[-2:])
    caps = [10, 15, 20, 25, 10, 15, 20, 25]
    bd.rng.shuffle(caps)
    notices = [90, 120, 180, 270, 365, 90, 180, 120]
    bd.rng.shuffle(notices)
    for i, bank in enumerate(banks):
        slug = bank.lower().replace(" ", "-")
        pub = dt.date(2025, 4, 14) + dt.timedelta(days=bd.rng.randrange(0, 420))
        d = bd.doc(f"ctr-{slug}-payment-services", f"Payment services agreement with {bank}", "policy", "policy_owner",
                   "global", pub, "contract", acl_groups=["leadership"] if bank in restricted else [],
                   entities=[slug, "acquirer-bridge", "sepa-connector"], extra={"counterparty": bank})
        avail = bd.pick(["99.9%", "99.8%", "99.95%"])
        cap = f"{caps[i]}%"
        notice = notices[i]
        breach = bd.pick([30, 45, 60])
        sl = bd.plant(d, "availability", f"The Bank shall make the primary Channel available at least {avail} of the time in each calendar month.", avail)
        ref = "If availability of the primary Channel in a calendar month falls below the level in clause 6.1, the Customer is entitled to service credits under Schedule 2, subject to the cap in clause 12.4."
        d.fact("credit_ref", ref)
        capline = bd.plant(d, "cap", f"The total service credits payable for any calendar month shall not exceed {cap} of the Monthly Fees for that month.", cap)
        conv = bd.plant(d, "convenience", f"Either party may terminate this Agreement for convenience by giving not less than {notice} days' written notice to the other.", f"{notice} days")
        brch = f"Either party may terminate this Agreement with immediate effect by written notice if the other party commits a material breach that it has not remedied within {breach} days of being asked to do so."
        d.fact("breach", brch)
        b = Blocks().h(1, f"Payment services agreement between the platform and {bank}")
        b.p(f"This Agreement is made on {long_date(pub)} between the platform (the Customer) and {bank} (the Bank).")
        if bank in restricted:
            b.p("Commercially sensitive. Distribution is limited to the leadership group.")
        b.p("Background: the Customer operates a payments platform for client tenants and wishes the Bank to execute payment instructions on its behalf. The parties agree as follows.")
        order = [("definitions", None), ("services", None), ("channels", None), ("COMMENCEMENT", None), ("service_levels", None),
                 ("SL", None), ("fees", None), ("data", None), ("audit", None), ("subcontracting", None), ("liability", None),
                 ("CAP", None), ("force_majeure", None), ("notices", None), ("law", None), ("TERM", None), ("general", None),
                 ("continuity", None), ("insurance", None), ("compliance", None), ("records", None), ("change_control", None),
                 ("exit", None)]
        for num, (key, _) in enumerate(order, 1):
            if key == "COMMENCEMENT":
                _clauses(b, num, "Commencement and onboarding", [
                    "This Agreement starts on the date above and continues until terminated under clause 16.",
                    "The Bank shall complete the onboarding steps in Schedule 4 within sixty days of the date of this Agreement.",
                    "Until onboarding is complete, the Customer may continue to use its existing arrangements."])
            elif key == "SL":
                _clauses(b, num, "Availability and service credits", [sl, ref,
                                                                      "Service credits are the Customer's sole financial remedy for unavailability, without prejudice to its right to terminate under clause 16.",
                                                                      "Service credits are deducted from the next invoice after the month in which they arise."])
            elif key == "CAP":
                _clauses(b, num, "Limits on liability", [
                    "Subject to clause 11.1, each party's total liability in any contract year is limited to the Monthly Fees paid in the preceding twelve months.",
                    "The limit in clause 12.1 does not apply to the Bank's liability for incorrectly executed payments under clause 11.3.",
                    "Service credits paid count towards the limit in clause 12.1.", capline])
            elif key == "TERM":
                _clauses(b, num, "Termination", [
                    "This clause sets out how this Agreement ends.", conv, brch,
                    "On termination, the Bank shall process every Payment File received before the termination date and shall return or delete the Customer's data as instructed.",
                    "Termination does not affect rights that accrued before it."])
            else:
                heading, pool = {**lp.CONTRACT_CLAUSES, **lp2.MORE_CONTRACT_CLAUSES}[key]
                _clauses(b, num, heading, [_fill(s) for s in pool])
        b.h(2, "Schedule 1. The Services")
        b.ul(["Execution of SEPA credit transfers and domestic payments submitted in Payment Files",
              "Acknowledgement files for each Payment File", "Daily statements for each account by 06:00 CET",
              "A test environment for format changes"])
        b.h(2, "Schedule 2. Service credits")
        note = "Service credits in this Schedule are a percentage of the Monthly Fees for the month in which availability fell short, and are subject to the cap in clause 12.4."
        d.fact("credits_note", note)
        b.p(note)
        b.table(["Availability in the month", "Service credit"], CREDITS[:3])
        b.p("The remaining bands follow in the continuation of this Schedule.")
        b.h(2, "Schedule 2 (continued)")
        b.table(["Availability in the month", "Service credit"], CREDITS[3:])
        for r in CREDITS:
            d.fact(f"credit:{r[0]}", " | ".join(r))
            bd.shelf.values[(d.doc_id, f"credit:{r[0]}")] = r[1]
        b.h(2, "Schedule 3. Fees")
        b.table(["Item", "Fee"], [["Per payment instruction", f"EUR 0.0{bd.rng.randrange(2, 9)}"],
                                  ["Per Payment File", f"EUR {bd.rng.randrange(1, 6)}.00"],
                                  ["Monthly channel fee", f"EUR {bd.rng.randrange(4, 20) * 100:,}"]])
        b.h(2, "Schedule 4. Onboarding and credentials")
        b.ol(["Exchange of public keys through the Bank's secure portal", "Connectivity test in the test environment",
              "Parallel run of one week", "Go-live confirmation by both relationship managers"])
        b.h(2, "Schedule 5. Notices and governing law")
        b.p("Notices to the Bank go to its relationship manager; notices to the Customer go to the head of treasury. This Agreement is governed by the law of the place of the Bank's processing centre.")
        n = 6
        target = bd.rng.randrange(3000, 4400)
        while bd.size(b) < target and n < 14:
            contract_schedule(bd, b, n)
            n += 1
        bd.finish(d, b)
        bd.shelf.bank_contracts[bank] = d
        bd.shelf.meta[d.doc_id] = {"bank": bank, "restricted": bank in restricted}


def tenant_contracts(bd: Builder) -> None:
    fees = [1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000, 6000, 7500]
    bd.rng.shuffle(fees)
    for i, tname in enumerate(pools.TENANTS):
        t = bd.w.tenants[tname]
        disp = t.display
        pub = dt.date(2025, 4, 7) + dt.timedelta(days=bd.rng.randrange(0, 360))
        d = bd.doc(f"ctr-{tname}-services", f"Services agreement with {disp}", "policy", "policy_owner", tname, pub,
                   "contract", entities=[tname], extra={"counterparty": disp})
        fee = f"EUR {fees[i]:,}"
        months = bd.pick([12, 18, 24])
        minimum = bd.plant(d, "minimum", f"The minimum monthly fee payable by {disp} is {fee}, whatever the volume processed in the month.", fee)
        review = f"Prices are reviewed every {months} months from the date of this Agreement."
        d.fact("price_review", review)
        b = Blocks().h(1, f"Services agreement between the platform and {disp}")
        b.p(f"This Agreement is made on {long_date(pub)} between the platform (the Provider) and {disp} (the Client).")
        for num, key in enumerate(["definitions", "services", "service_levels", "FEES", "data", "audit", "liability",
                                   "force_majeure", "subcontracting", "continuity", "compliance", "records", "change_control",
                                   "notices", "law", "general"], 1):
            if key == "FEES":
                _clauses(b, num, "Fees", [
                    f"{disp} shall pay the transaction fees in Schedule 1 for each transaction processed.", minimum, review,
                    "Scheme fees and bank charges are passed through at cost and shown separately on each invoice.",
                    "Invoices are issued monthly in arrears and are payable within thirty days."])
            else:
                heading, pool = {**lp.CONTRACT_CLAUSES, **lp2.MORE_CONTRACT_CLAUSES}[key]
                subs = [_fill(s).replace("the Bank", "the Provider").replace("The Bank", "The Provider").replace("the Customer", "the Client").replace("The Customer", "The Client") for s in pool]
                _clauses(b, num, heading, subs)
        b.h(2, "Schedule 1. Transaction fees")
        b.table(["Transaction", "Fee"], [["Card capture", f"{bd.rng.randrange(8, 25) / 100:.2f}% + EUR 0.0{bd.rng.randrange(2, 9)}"],
                                         ["Bank transfer received", f"EUR 0.{bd.rng.randrange(10, 40)}"],
                                         ["Payout to merchant", f"EUR 0.{bd.rng.randrange(10, 40)}"],
                                         ["Dispute handling", f"EUR {bd.rng.randrange(5, 25)}.00"]])
        b.h(2, "Schedule 2. Operating terms")
        b.p(f"The day-to-day operation of the services is described in the {disp} operating terms, which both parties' operations teams maintain.")
        n = 3
        target = bd.rng.randrange(2300, 3100)
        while bd.size(b) < target and n < 12:
            contract_schedule(bd, b, n)
            n += 1
        bd.finish(d, b)
        bd.shelf.tenant_contracts[tname] = d


# --------------------------------------------------------------------------------------
# minutes


DEFERRED = [
    ("weekend payout window", "A proposal to add a weekend payout window for card merchants was discussed at length. The board deferred the item until engineering has costed the change and treasury has looked at weekend funding."),
    ("second GBP settlement bank", "The idea of a second GBP settlement bank was raised again. Members wanted a comparison of the candidate banks first, so the item was deferred to a later meeting."),
]


def minutes(bd: Builder) -> None:
    members = bd.sample(bd.w.staff["operations"], 4) + bd.sample(bd.w.staff["approvers"], 2)
    chair = members[0]
    action_owner_by_verb: dict[str, list[tuple[Doc, str]]] = {}
    months = [dt.date(2026, m, 1) for m in range(1, 11)]
    for i, month in enumerate(months):
        day = month + dt.timedelta(days=(1 - month.weekday()) % 7 + 7)  # second Tuesday-ish
        pub = day + dt.timedelta(days=bd.rng.randrange(2, 6))
        d = bd.doc(f"min-orb-{month.strftime('%Y-%m')}", f"Operations review board minutes, {month_year(month)}", "wiki",
                   "operations", "global", pub, "minutes", entities=["operations-review-board"],
                   extra={"meeting": day.isoformat(), "chair": chair})
        present = bd.sample(members, 5)
        if chair not in present:
            present[0] = chair
        b = Blocks().h(1, f"Operations review board: minutes of {long_date(day)}")
        b.p(f"Chair: {chair}. Present: {', '.join(p for p in present if p != chair)}. Minutes: {bd.pick(bd.w.staff['support'])}.")
        b.p(bd.pick(["The minutes of the previous meeting were accepted without changes.",
                     "The minutes of the previous meeting were accepted with one correction to the attendance list.",
                     "The chair opened the meeting and noted that two items had been added to the agenda at short notice."]))
        items = bd.fresh(lp.MINUTES_TOPICS, bd.rng.randrange(6, 9))
        num = 1
        b.h(2, "1. Matters arising")
        b.p(" ".join(bd.fresh(lp.MINUTES_DISCUSSION, 2)))
        target = bd.rng.randrange(2300, 2900)
        for heading, text in items:
            num += 1
            b.h(2, f"{num}. {heading}")
            b.p(text.format(person=bd.pick(members)))
            b.p(" ".join(bd.say(lp2.DISCUSSION_TEMPLATES, bd.rng.randrange(1, 3), person=bd.pick(members), person2=bd.pick(members))
                         + bd.fresh(lp.MINUTES_DISCUSSION, 1)))
        for heading, text in bd.fresh(lp.MINUTES_TOPICS, 2):
            if bd.size(b) >= target - 350:
                break
            num += 1
            b.h(2, f"{num}. {heading}")
            b.p(text.format(person=bd.pick(members)))
            b.p(" ".join(bd.say(lp2.DISCUSSION_TEMPLATES, 2, person=bd.pick(members), person2=bd.pick(members))))
        pad(bd, b, target, minutes_item)
        if i in (4, 7):  # May and August: the board confirms a handbook clause
            num += 1
            clause, what = ("14.4", "the limit on payout files released again by hand") if i == 4 else ("14.5", "the second-approver amount for manual adjustments")
            b.h(2, f"{num}. Payments operations handbook")
            line = f"The board reviewed clause {clause} of the payments operations handbook, on {what}, and confirmed that the clause stays as it is in the version now in force."
            d.fact("handbook_ref", line)
            b.p(line + " " + bd.fresh1(lp.MINUTES_DISCUSSION))
            bd.shelf.meta[d.doc_id] = {"clause": clause, "what": what}
        if i in (2, 6):  # deferred items, never decided later
            num += 1
            topic, text = DEFERRED[0 if i == 2 else 1]
            b.h(2, f"{num}. {_cap(topic)}")
            b.p(text)
            d.fact("deferred", text.split(". ")[0] + ".")
            bd.shelf.meta.setdefault(d.doc_id, {})["deferred"] = topic
        num += 1
        b.h(2, f"{num}. Actions")
        verbs = bd.fresh(lp.ACTION_VERBS, bd.rng.randrange(4, 7))
        rows = []
        for k, verb in enumerate(verbs, 1):
            owner = bd.pick(members)
            due = day + dt.timedelta(days=bd.rng.randrange(10, 40))
            rows.append([f"{month.strftime('%Y-%m')}/{k}", verb, owner, due.isoformat()])
            d.fact(f"action:{verb}", " | ".join(rows[-1]))
            bd.shelf.values[(d.doc_id, f"action:{verb}")] = owner
            action_owner_by_verb.setdefault(verb, []).append((d, owner))
        b.table(["Action", "What", "Owner", "Due"], rows)
        num += 1
        b.h(2, f"{num}. Any other business")
        b.p(bd.pick(["None.", "The chair thanked the outgoing minute-taker.", "Members were reminded to send apologies in advance."]))
        b.p(f"Next meeting: {long_date(day + dt.timedelta(days=28))}.")
        bd.finish(d, b)
        bd.shelf.orb_minutes.append(d)
    bd.shelf.meta["action_owners"] = {k: [(d.doc_id, o) for d, o in v] for k, v in action_owner_by_verb.items()}
    # change advisory board
    for month in [dt.date(2026, 2, 1), dt.date(2026, 4, 1), dt.date(2026, 6, 1), dt.date(2026, 8, 1)]:
        day = month + dt.timedelta(days=(3 - month.weekday()) % 7)
        pub = day + dt.timedelta(days=1)
        d = bd.doc(f"min-cab-{month.strftime('%Y-%m')}", f"Change advisory board minutes, {month_year(month)}", "wiki",
                   "operations", "global", pub, "minutes", entities=["change-advisory-board"], extra={"meeting": day.isoformat()})
        b = Blocks().h(1, f"Change advisory board: minutes of {long_date(day)}")
        b.p(f"Chair: {bd.pick(bd.w.staff['approvers'])}. Present: {', '.join(bd.sample(bd.w.staff['engineering'], 4))}, {bd.pick(bd.w.staff['operations'])}.")
        b.h(2, "1. Review of last period's changes")
        b.p(" ".join(bd.fresh(lp.MINUTES_DISCUSSION, 2) + bd.say(lp2.DISCUSSION_TEMPLATES, 3)))
        b.p(bd.pick(["All changes in the period were deployed in their windows; one was rolled back and has since been redeployed.",
                     "Two emergency changes were made during incidents and are reviewed under item 2.",
                     "No change in the period caused an incident."]))
        rows = []
        for _k in range(bd.rng.randrange(6, 10)):
            chg = bd.w.unique(lambda: f"CHG-{bd.rng.randrange(1000, 9999)}")
            system = bd.pick(sorted(pools.SYSTEMS))
            wday = day + dt.timedelta(days=bd.rng.randrange(7, 40))
            start = bd.pick(["21:00", "22:00", "22:30", "23:00", "05:00", "05:30"])
            end = {"21:00": "23:00", "22:00": "00:30", "22:30": "01:00", "23:00": "01:30", "05:00": "06:30", "05:30": "06:45"}[start]
            what = bd.pick(["database minor version upgrade", "queue broker upgrade", "certificate renewal", "new worker image",
                            "configuration clean-up", "index rebuild", "operating system patches"])
            decision = bd.pick(["approved", "approved", "approved", "approved with conditions", "deferred"])
            window = f"{wday.isoformat()} {start}-{end} CET" if decision != "deferred" else "none"
            rows.append([chg, f"{system}: {what}", window, decision])
            if decision != "deferred":
                d.fact(f"chg:{chg}", " | ".join(rows[-1]))
                bd.shelf.values[(d.doc_id, f"chg:{chg}")] = f"{wday.isoformat()}"
                bd.shelf.meta.setdefault(d.doc_id, {}).setdefault("changes", []).append((chg, system, what, wday.isoformat(), start))
        b.h(2, "2. Emergency changes")
        b.p(" ".join(bd.fresh(lp.MINUTES_DISCUSSION, 3)))
        for k, (heading, text) in enumerate(bd.fresh(lp.MINUTES_TOPICS, 3), 1):
            b.h(3, f"2.{k} {heading}")
            b.p(text.format(person=bd.pick(bd.w.staff["engineering"])) + " " + " ".join(bd.say(lp2.DISCUSSION_TEMPLATES, 2)))
        b.h(2, "3. Freeze periods")
        b.p("No changes to services that move money are deployed during the month-end freeze or in the last hour before any tenant's cutoff. The board reminded teams that the freeze includes configuration changes.")
        b.h(2, "4. Change statistics")
        b.table(["Measure", "This period", "Previous period"], [[m, str(bd.rng.randrange(2, 60)), str(bd.rng.randrange(2, 60))] for m in
                                                               ["Standard changes", "Normal changes", "Emergency changes", "Rolled back", "Caused an incident"]])
        for k, (heading, text) in enumerate(bd.fresh(lp.MINUTES_TOPICS, 7), 5):
            b.h(2, f"{k}. {heading}")
            b.p(text.format(person=bd.pick(bd.w.staff["engineering"])))
            b.p(" ".join(bd.say(lp2.DISCUSSION_TEMPLATES, 2)))
        pad(bd, b, bd.rng.randrange(1900, 2500), minutes_item)
        b.h(2, f"{_next_number(b)}. Changes for approval")
        b.p("Each change below was presented by its owner. The window is the only time the change may be deployed; a change that misses its window comes back to the board.")
        b.table(["Change", "What", "Window", "Decision"], rows)
        b.p("Changes approved with conditions may go ahead only once the conditions are recorded as met on the change record.")
        b.h(2, f"{_next_number(b)}. Any other business")
        b.p(" ".join(bd.fresh(lp.MINUTES_DISCUSSION, 2)))
        bd.finish(d, b)
        bd.shelf.cab_minutes.append(d)
    # tenant steering groups
    for tname in pools.TENANTS[:6]:
        t = bd.w.tenants[tname]
        disp = t.display
        day = dt.date(2026, 3, 2) + dt.timedelta(days=bd.rng.randrange(0, 200))
        d = bd.doc(f"min-{tname}-steering-{day.strftime('%Y-%m')}", f"{disp} steering group minutes, {month_year(day)}", "wiki",
                   "operations", tname, day + dt.timedelta(days=2), "minutes", entities=[tname],
                   extra={"meeting": day.isoformat()})
        exercise = day + dt.timedelta(days=bd.rng.randrange(30, 90))
        fact = bd.plant(d, "exercise", f"The next joint incident exercise with {disp} is set for {long_date(exercise)}.", long_date(exercise))
        b = Blocks().h(1, f"{disp} steering group: minutes of {long_date(day)}")
        b.p(f"Present for {disp}: {', '.join(t.contacts)}. Present for the platform: {bd.pick(bd.w.staff['operations'])} (account lead), {bd.pick(bd.w.staff['engineering'])}, {bd.pick(bd.w.staff['support'])}.")
        sections = [("Service since the last meeting", " ".join(bd.fresh(lp.REVIEW_PARAS["incidents"], 2) + bd.fresh(lp.MINUTES_DISCUSSION, 2))),
                    ("Volumes and growth", " ".join(bd.fresh(lp.REVIEW_PARAS["volumes"], 2) + bd.fresh(lp.MINUTES_DISCUSSION, 1))),
                    ("Tenant requests", f"{disp} asked for earlier notice of maintenance and for statements in a second format. " + " ".join(bd.fresh(lp.MINUTES_DISCUSSION, 2))),
                    ("Roadmap", " ".join(bd.fresh(lp.REVIEW_PARAS["outlook"], 2) + bd.fresh(lp.MINUTES_DISCUSSION, 1))),
                    ("Incident exercise", fact + " Both operations teams will take part; the scenario is a delayed payout run on a Monday."),
                    ("Commercial matters", "Pricing was not discussed; it follows the review cycle in the services agreement. " + bd.fresh1(lp.MINUTES_DISCUSSION))]
        first, last = sections[:4], sections[4:]
        for k, (heading, text) in enumerate(first, 1):
            b.h(2, f"{k}. {heading}")
            b.p(text)
            if k in (1, 2):
                for _heading, topic_text in bd.fresh(lp.MINUTES_TOPICS, 2):
                    b.p(topic_text.format(person=bd.pick(bd.w.staff["operations"])))
        for k, (heading, text) in enumerate(bd.fresh(lp.MINUTES_TOPICS, 8), len(first) + 1):
            b.h(2, f"{k}. {heading}")
            b.p(text.format(person=bd.pick(bd.w.staff["operations"])) + " " + " ".join(bd.say(lp2.DISCUSSION_TEMPLATES, 2)))
        pad(bd, b, bd.rng.randrange(1900, 2600), minutes_item)
        for heading, text in last:
            b.h(2, f"{_next_number(b)}. {heading}")
            b.p(text)
        b.h(2, f"{_next_number(b)}. Actions")
        b.table(["What", "Owner", "Due"], [[verb, bd.pick([bd.pick(bd.w.staff["operations"]), bd.pick(t.contacts)]),
                                            (day + dt.timedelta(days=bd.rng.randrange(10, 40))).isoformat()] for verb in bd.fresh(lp.ACTION_VERBS, 4)])
        bd.finish(d, b)
        bd.shelf.steering[tname] = d


# --------------------------------------------------------------------------------------
# quarterly reviews


def reviews(bd: Builder) -> None:
    quarters = [(2025, 1), (2025, 2), (2025, 3), (2025, 4), (2026, 1), (2026, 2), (2026, 3)]
    services = sorted(pools.SYSTEMS)
    for year, q in quarters:
        nxt = dt.date(year + (q == 4), 1 if q == 4 else 3 * q + 1, 1)
        pub = nxt + dt.timedelta(days=bd.rng.randrange(12, 28))
        d = bd.doc(f"qr-platform-{year}-q{q}", f"Platform operations review, Q{q} {year}", "wiki", "operations", "global",
                   pub, "quarterly_review", extra={"author": bd.person("operations"), "quarter": f"{year}-Q{q}"})
        b = Blocks().h(1, f"Platform operations review, Q{q} {year}")
        b.h(2, "1. Summary")
        for para in bd.fresh(lp.REVIEW_PARAS["summary"], 3):
            b.p(para)
        b.h(2, "2. Volumes")
        rows = []
        for m in range(3):
            month = dt.date(year, 3 * q - 2 + m, 1)
            rows.append([month.strftime("%B"), f"{bd.rng.randrange(4000, 9000) * 1000:,}", f"{bd.rng.randrange(200, 900) * 100:,}",
                         f"{bd.rng.randrange(150, 400)}"])
        b.table(["Month", "Card captures", "Bank transfers", "Batches"], rows)
        for para in bd.fresh(lp.REVIEW_PARAS["volumes"], 3):
            b.p(para)
        b.h(2, "3. Availability")
        note = f"Availability is the share of the quarter's minutes in which the service passed its health check. The objective column is the internal objective for Q{q} {year}, not a contractual level."
        d.fact("avail_note", note)
        b.p(note)
        avail = {}
        for s in services:
            got = bd.pick(["99.99%", "99.98%", "99.97%", "99.95%", "99.93%", "99.90%", "99.87%", "99.81%"])
            avail[s] = [s, got, bd.pick(["99.95%", "99.90%"])]
        b.table(["Service", "Achieved", "Objective"], [avail[s] for s in services[:6]])
        b.p("The table continues in the next section with the remaining services.")
        b.h(2, "4. Availability (continued)")
        b.table(["Service", "Achieved", "Objective"], [avail[s] for s in services[6:]])
        b.p(" ".join(bd.fresh(lp.REVIEW_PARAS["incidents"], 1)))
        for s in services:
            d.fact(f"avail:{s}", " | ".join(avail[s]))
            bd.shelf.values[(d.doc_id, f"avail:{s}")] = avail[s][1]
        b.h(2, "5. Incidents")
        sev = {k: bd.rng.randrange(a, c) for k, a, c in [("1", 0, 4), ("2", 3, 12), ("3", 10, 40)]}
        b.table(["Severity", "Incidents", "With a financial effect"], [[k, str(v), str(bd.rng.randrange(0, v + 1))] for k, v in sev.items()])
        for para in bd.fresh(lp.REVIEW_PARAS["incidents"], 3):
            b.p(para)
        b.h(2, "6. Payout timeliness")
        b.p(bd.pick(["Payouts left on time on all but a handful of days; the late ones were caused by late acquirer files.",
                     "On-time payouts stayed within every tenant contract. Most late payouts were on Mondays.",
                     "Timeliness improved on the previous quarter after the payout pipeline changes."]))
        b.table(["Tenant", "On-time payouts", "Late days"], [[bd.w.tenants[t].display, f"{bd.rng.randrange(9950, 10000) / 100:.2f}%",
                                                             str(bd.rng.randrange(0, 5))] for t in pools.TENANTS])
        b.h(2, "7. Banks")
        b.table(["Bank", "Files sent", "Late acknowledgements", "Maintenance notices"],
                [[bank, f"{bd.rng.randrange(200, 3000):,}", str(bd.rng.randrange(0, 12)), str(bd.rng.randrange(0, 5))] for bank in bd.sample(pools.BANKS, 8)])
        b.p(bd.fresh1(lp.MINUTES_TOPICS)[1].format(person=bd.person("operations")))
        b.h(2, "8. Manual interventions")
        b.p(bd.fresh1(lp.MINUTES_TOPICS[2:3])[1].format(person=bd.person("operations")) + " " + bd.fresh1(lp.MINUTES_DISCUSSION))
        b.h(2, "9. Tenants")
        for tname in pools.TENANTS:
            b.p(bd.say(lp2.TENANT_COMMENTARY, 1, tenant=bd.w.tenants[tname].display)[0])
        b.h(2, "10. People")
        for para in lp.REVIEW_PARAS["people"]:
            b.p(para)
        b.h(2, "11. Cost")
        for para in lp.REVIEW_PARAS["cost"]:
            b.p(para)
        b.h(2, "12. Outlook")
        for para in lp.REVIEW_PARAS["outlook"]:
            b.p(para)
        pad(bd, b, bd.rng.randrange(2600, 3800), review_extra)
        b.h(2, "Appendix. Volumes per tenant")
        b.table(["Tenant", "Card captures", "Bank transfers", "Share of volume"],
                [[bd.w.tenants[t].display, f"{bd.rng.randrange(100, 1500) * 1000:,}", f"{bd.rng.randrange(10, 120) * 100:,}",
                  f"{bd.rng.randrange(3, 20)}%"] for t in pools.TENANTS])
        bd.finish(d, b)
        bd.shelf.reviews.append(d)


def build_shelf(w: World, seed: int) -> Shelf:
    """Every long document, added to ``w``; what they plant is in the returned :class:`Shelf`."""
    bd = Builder(w, seed)
    ops_handbook(bd)
    disputes_handbook(bd)
    treasury_handbook(bd)
    tenant_terms(bd)
    global_runbooks(bd)
    tenant_runbooks(bd)
    designs(bd)
    bank_contracts(bd)
    tenant_contracts(bd)
    minutes(bd)
    reviews(bd)
    return bd.shelf

