# ruff: noqa: E501  (long prose and task strings are data, kept on one line each)
"""Evidence cases built from the facts the generator planted.

Every case names its minimum evidence set by (doc_id, quote); anchors are resolved
after rendering from the section that contains the quote. Families aim at one seam
each; tags and decoys are derived from what the case contains.
"""

from __future__ import annotations

import datetime as dt
import re

from ragkit.evaluation import DECOY_OF_REASON
from ragkit.text.normalise import normalise_value

from . import pools
from .common import Doc, content_stems, long_date, month_year, pick
from .incidents import Incident
from .world import World

RUNBOOK_V2 = {
    "EUR": ("EUR cutoff 16:00 CET, the same for every tenant.", "16:00"),
    "GBP": ("GBP cutoff 14:30 UK time.", "14:30"),
    "USD": ("USD cutoff 17:45 CET.", "17:45"),
    "SEK": ("SEK, DKK and NOK close together at 12:00 CET.", "12:00"),
    "DKK": ("SEK, DKK and NOK close together at 12:00 CET.", "12:00"),
    "NOK": ("SEK, DKK and NOK close together at 12:00 CET.", "12:00"),
}
POLICY_V3_QUOTE = "Migrated tenants use 15:00 for the EUR cutoff."
POLICY_V2_QUOTE = "All tenants use the cutoffs in the settlement runbook."



def ev(doc: Doc, key: str, role: str = "decisive") -> dict:
    return {"doc_id": doc.doc_id, "quote": doc.facts[key], "role": role}


def evq(doc_id: str, quote: str, role: str = "decisive") -> dict:
    return {"doc_id": doc_id, "quote": quote, "role": role}


def rj(doc: Doc | str, reason: str, key: str | None = None, **extra) -> dict:
    doc_id = doc if isinstance(doc, str) else doc.doc_id
    out = {"doc_id": doc_id, "reason": reason}
    if key is not None and not isinstance(doc, str):
        out["quote"] = doc.facts[key]
    out.update(extra)
    return out


def expected(kind: str, surface: str) -> dict:
    return {"kind": kind, "value": normalise_value(kind, surface), "surface": surface}


def value_kind(value: str) -> str:
    if re.fullmatch(r"\d{1,2}:\d{2}", value):
        return "time"
    if re.match(r"[A-Z]{3} [\d,.]+$", value):
        return "amount"
    return "text"


def as_of_after(w: World, moment: dt.datetime | dt.date, lo: int = 2, hi: int = 25) -> str:
    day = moment.date() if isinstance(moment, dt.datetime) else moment
    day = day + dt.timedelta(days=w.rng.randrange(lo, hi))
    return min(day, dt.date(2026, 11, 30)).isoformat()


def case(
    task: str,
    tenant: str,
    as_of: str,
    evidence: list[dict],
    exp: dict | None,
    tags: list[str],
    family: str,
    reject: list[dict] | None = None,
    groups: list[str] | None = None,
    absent: dict | None = None,
) -> dict:
    reject = reject or []
    decoys = sorted(
        {DECOY_OF_REASON[r["reason"]] for r in reject if r["reason"] in DECOY_OF_REASON}
    )
    out = {
        "id": "",
        "task": task,
        "caller": {"tenant": tenant, "groups": groups or ["ops"]},
        "as_of": as_of,
        "answerable": exp is not None,
        "evidence": evidence,
        "reject": reject,
        "expected": exp,
        "tags": sorted(set(tags)),
        "decoys": decoys,
        "family": family,
    }
    if absent is not None:
        out["absent"] = absent
    return out


def surface_in(quote: str, phrase: str) -> str:
    """``phrase`` as it is written (capitalised or not) inside ``quote``."""
    i = quote.lower().index(phrase.lower())
    return quote[i : i + len(phrase)]


def no_overlap(task: str, quote: str, allowed: set[str]) -> bool:
    return not ((content_stems(task) - allowed) & content_stems(quote))


# --------------------------------------------------------------------------------------
# incident families


def incident_cases(w: World, incidents: list[Incident]) -> dict[str, list[dict]]:
    rng = w.rng
    fam: dict[str, list[dict]] = {}
    by_code: dict[str, list[Incident]] = {}
    by_acct_month: dict[tuple[str, str], list[Incident]] = {}
    for inc in incidents:
        by_code.setdefault(inc.code, []).append(inc)
        by_acct_month.setdefault((inc.account, inc.opened.strftime("%Y-%m")), []).append(inc)
    approvals: dict[tuple[str, str, str], int] = {}
    for d in w.docs.values():
        if d.source_type == "rollout" and d.extra.get("approved_by"):
            k = (d.tenant, d.extra["approved_by"], day_month(d.published_at))
            approvals[k] = approvals.get(k, 0) + 1
    for inc in incidents:
        if inc.approver:
            k = (inc.tenant.name, inc.approver, day_month(inc.completed))
            approvals[k] = approvals.get(k, 0) + 1

    def add(name: str, c: dict) -> None:
        fam.setdefault(name, []).append(c)

    for inc in incidents:
        t = inc.tenant
        docs = {role: w.docs[did] for role, did in inc.docs.items()}
        my = month_year(inc.opened.date())
        tstem = content_stems(t.display)
        if inc.resolved and "cause" in docs and "pm" not in docs:
            cause_doc = docs["cause"]
            _ev, ask, _short = pools.SYMPTOMS[inc.symptom]
            cev = pools.CAUSES[inc.cause][0]
            as_of = as_of_after(w, inc.last)
            # vocabulary mismatch: ask wording, another event term
            terms = [x for x in pools.EVENT_TERMS if x not in inc.terms]
            for _attempt in range(6):
                w2 = pick(rng, terms)
                task = pick(
                    rng,
                    [
                        f"In {my}, {ask} at {t.display}. What was the underlying explanation?",
                        f"{t.display} told us that {ask} back in {my}. What had gone wrong on our side?",
                        f"What was behind {t.display}'s {w2} trouble in {my}, when {ask}?",
                        f"According to engineering, what made {t.display}'s {w2} go wrong in {my}? "
                        f"The complaint was that {ask}.",
                    ],
                )
                if no_overlap(task, cause_doc.facts["cause"], tstem):
                    rejects = []
                    if inc.twin_of is not None and "cause" in inc.twin_of.docs:
                        rejects.append(
                            rj(w.docs[inc.twin_of.docs["cause"]], "other_tenant", "cause")
                        )
                    add(
                        "incident_cause_vocabulary",
                        case(
                            task,
                            t.name,
                            as_of,
                            [ev(cause_doc, "cause")],
                            expected("text", surface_in(cause_doc.facts["cause"], cev)),
                            ["vocabulary_mismatch"],
                            "incident_cause_vocabulary",
                            rejects,
                        ),
                    )
                    break
            # identifier: error code -> function
            rejects = []
            for other in by_code[inc.code]:
                if other is inc or "cause" not in other.docs:
                    continue
                od = w.docs[other.docs["cause"]]
                if other.tenant is t:
                    rejects.append(rj(od, "lexical_decoy", "code_func", shared=inc.code))
                else:
                    rejects.append(rj(od, "other_tenant", "code_func"))
            same_month = [
                o
                for o in by_code[inc.code]
                if o.tenant is t and o is not inc and month_year(o.opened.date()) == my
            ]
            if not same_month:
                task = pick(
                    rng,
                    [
                        f"Which function raised {inc.code} during {t.display}'s {my} incident?",
                        f"{inc.code} showed up in {t.display}'s logs in {my}. Which function throws it?",
                        f"Where in the code does {inc.code} come from, for the {t.display} problem in {my}?",
                    ],
                )
                add(
                    "code_to_function",
                    case(
                        task,
                        t.name,
                        as_of,
                        [ev(cause_doc, "code_func")],
                        expected("id", inc.func),
                        ["identifier"],
                        "code_to_function",
                        rejects,
                    ),
                )
                task = pick(
                    rng,
                    [
                        f"Which error code did `{inc.func}` raise in {t.display}'s {my} incident?",
                        f"In {my}, {inc.func} failed for {t.display}. What error code did it log?",
                    ],
                )
                add(
                    "function_to_code",
                    case(
                        task,
                        t.name,
                        as_of,
                        [ev(cause_doc, "code_func")],
                        expected("id", inc.code),
                        ["identifier"],
                        "function_to_code",
                        rejects,
                    ),
                )
            # scoped: near-duplicate in another tenant, task does not name the tenant
            if inc.twin_of is not None and "cause" in inc.twin_of.docs:
                task = pick(
                    rng,
                    [
                        f"Which underlying problem explains why {ask} around {long_date(inc.opened.date())}?",
                        f"What caused the {pools.SYMPTOMS[inc.symptom][2]} reported on {long_date(inc.opened.date())}?",
                    ],
                )
                add(
                    "twin_scoped",
                    case(
                        task,
                        t.name,
                        as_of,
                        [ev(cause_doc, "cause")],
                        expected("text", surface_in(cause_doc.facts["cause"], cev)),
                        ["scoped"],
                        "twin_scoped",
                        [rj(w.docs[inc.twin_of.docs["cause"]], "other_tenant", "cause")],
                    ),
                )
        if inc.resolved and "closing" in docs:
            key = (inc.account, inc.opened.strftime("%Y-%m"))
            if len(by_acct_month[key]) == 1:
                rejects = []
                for other in incidents:
                    if (
                        other is not inc
                        and other.account == inc.account
                        and "closing" in other.docs
                    ):
                        rejects.append(
                            rj(
                                w.docs[other.docs["closing"]],
                                "lexical_decoy",
                                "closing",
                                shared=inc.account,
                            )
                        )
                task = pick(
                    rng,
                    [
                        f"Which ticket tracked the problem on account {inc.account} in {my}?",
                        f"{inc.account} had an issue in {my}. What is the ticket key?",
                    ],
                )
                add(
                    "account_to_ticket",
                    case(
                        task,
                        t.name,
                        as_of_after(w, inc.last),
                        [ev(docs["closing"], "closing")],
                        expected("id", inc.key),
                        ["identifier"],
                        "account_to_ticket",
                        rejects[:3],
                    ),
                )
        if inc.rollout and "fix" in docs:
            rdoc = w.docs[inc.rollout.lower()]
            as_of = as_of_after(w, inc.last)
            # identifier: rollout id -> approver
            add(
                "rollout_approver",
                case(
                    pick(
                        rng,
                        [
                            f"Who approved {inc.rollout}?",
                            f"Which release manager signed off {inc.rollout}?",
                        ],
                    ),
                    t.name,
                    as_of,
                    [ev(rdoc, "approved")],
                    expected("id", inc.approver),
                    ["identifier"],
                    "rollout_approver",
                ),
            )
            if approvals.get((t.name, inc.approver, day_month(inc.completed)), 0) == 1:
                add(
                    "approver_to_rollout",
                    case(
                        pick(
                            rng,
                            [
                                f"Which {t.display} rollout did {inc.approver} approve in {month_year(inc.completed.date())}?",
                                f"{inc.approver} signed off one {t.display} deployment in {month_year(inc.completed.date())}. Which one?",
                            ],
                        ),
                        t.name,
                        as_of,
                        [ev(rdoc, "approved")],
                        expected("id", inc.rollout),
                        ["identifier"],
                        "approver_to_rollout",
                    ),
                )
            # multi-hop: ticket -> rollout -> build / date
            build_surface = inc.build
            add(
                "ticket_to_build",
                case(
                    pick(
                        rng,
                        [
                            f"Which {inc.system} build carried the fix for {inc.key}?",
                            f"What build number shipped the fix for {inc.key}?",
                        ],
                    ),
                    t.name,
                    as_of,
                    [ev(docs["fix"], "fix_link", "hop"), ev(rdoc, "build")],
                    expected("id", build_surface),
                    ["multi_hop"],
                    "ticket_to_build",
                ),
            )
            done = rdoc.facts["completed"]
            m = re.search(r"\d{4}-\d{2}-\d{2}|\d{1,2} [A-Z][a-z]+ \d{4}", done)
            add(
                "ticket_to_deploy_date",
                case(
                    pick(
                        rng,
                        [
                            f"On what date did the fix for {inc.key} finish rolling out?",
                            f"When was the change for {inc.key} completed in production?",
                        ],
                    ),
                    t.name,
                    as_of,
                    [ev(docs["fix"], "fix_link", "hop"), ev(rdoc, "completed")],
                    expected("date", m.group(0)),
                    ["multi_hop"],
                    "ticket_to_deploy_date",
                ),
            )
            # three hops: ticket -> rollout -> policy clause
            pol = inc.policy
            chain = [w.docs[f"{pol.doc_id.rsplit('-v', 1)[0]}-v{k}"] for k in (1, 2, 3)]
            nxt = [d for d in chain if int(d.version) > int(pol.version)]
            limit = dt.date.fromisoformat(as_of)
            if nxt:
                limit = min(limit, nxt[0].effective_from - dt.timedelta(days=1))
            if limit > inc.last.date():
                as_of3 = limit.isoformat()
                rejects = [
                    rj(d, "superseded", "value") for d in chain if int(d.version) < int(pol.version)
                ]
                rejects += [
                    rj(d, "not_yet_effective", "value") for d in nxt if d.published_at <= limit
                ]
                value = pol.extra["value"]
                add(
                    "ticket_to_policy",
                    case(
                        pick(
                            rng,
                            [
                                f"{inc.key} was fixed by a rollout that cites a policy clause. What value does that clause set?",
                                f"Follow {inc.key} to the rollout that fixed it and the policy that rollout cites: what limit does the clause set?",
                                f"Which limit applies under the policy clause named in the deployment that resolved {inc.key}?",
                            ],
                        ),
                        t.name,
                        as_of3,
                        [
                            ev(docs["fix"], "fix_link", "hop"),
                            ev(rdoc, "policy", "hop"),
                            ev(pol, "value"),
                        ],
                        expected(value_kind(value), value),
                        ["multi_hop"] + (["conflict"] if rejects else []),
                        "ticket_to_policy",
                        rejects,
                    ),
                )
        if "pm" in docs:
            pm = docs["pm"]
            st = docs["followup_status"]
            as_of = as_of_after(w, st.published_at, 1, 30)
            add(
                "postmortem_action_status",
                case(
                    pick(
                        rng,
                        [
                            f"What is the status of the action item from the postmortem for {inc.key}?",
                            f"The review of {inc.key} produced a follow-up ticket. Where does it stand?",
                        ],
                    ),
                    t.name,
                    as_of,
                    [ev(pm, "action", "hop"), ev(st, "status")],
                    expected("status", st.facts["status"].split(": ", 1)[1].rstrip(".")),
                    ["multi_hop"],
                    "postmortem_action_status",
                ),
            )
            mins = re.search(r"\d+ minutes", pm.facts["detection"]).group(0)
            add(
                "postmortem_detection",
                case(
                    f"How long did it take to detect the incident tracked in {inc.key}?",
                    t.name,
                    as_of_after(w, pm.published_at),
                    [ev(pm, "detection")],
                    expected("text", mins),
                    ["identifier"],
                    "postmortem_detection",
                ),
            )
        if not inc.resolved:
            st = docs["status"]
            as_of = as_of_after(w, inc.last)
            add(
                "ticket_status",
                case(
                    f"What is the current status of {inc.key}?",
                    t.name,
                    as_of,
                    [ev(st, "status")],
                    expected("status", st.facts["status"].split(": ", 1)[1].rstrip(".")),
                    ["identifier"],
                    "ticket_status",
                ),
            )
            near = [rj(docs["ticket"], "neighbouring_fact")]
            near += [
                rj(w.docs[f"{inc.key.lower()}-c{n}"], "neighbouring_fact")
                for n in (2, 3)
                if f"{inc.key.lower()}-c{n}" in w.docs
            ][:1]
            _ev, ask, short = pools.SYMPTOMS[inc.symptom]
            utask = pick(
                rng,
                [
                    f"What was the root cause of {inc.key}?",
                    f"Why did {t.display}'s {short} in {my} happen?",
                    f"In {my}, {ask} at {t.display}. What caused it?",
                ],
            )
            add(
                "unanswerable_cause",
                case(
                    utask,
                    t.name,
                    as_of,
                    [],
                    None,
                    ["identifier"] if inc.key in utask else [],
                    "unanswerable_cause",
                    near,
                    absent={
                        "all_of": [
                            re.escape(inc.key),
                            r"(?i)root cause|because|caused by|due to|which is why|that is how|as a result",
                        ],
                        "note": f"no document says why {inc.key} happened",
                    },
                ),
            )
            add(
                "unanswerable_fix",
                case(
                    f"Which rollout fixed {inc.key}?",
                    t.name,
                    as_of,
                    [],
                    None,
                    ["identifier"],
                    "unanswerable_fix",
                    near,
                    absent={
                        "all_of": [re.escape(inc.key), r"RO-\d{4}"],
                        "note": f"no rollout is linked to {inc.key}",
                    },
                ),
            )
    return fam


def day_month(moment) -> str:
    return moment.strftime("%Y-%m")


# --------------------------------------------------------------------------------------
# reference families


def reference_cases(
    w: World, chains, runbooks, tenant_docs, schedules, migrations, injections: list[Doc]
) -> dict[str, list[dict]]:
    rng = w.rng
    fam: dict[str, list[dict]] = {}

    def add(name: str, c: dict) -> None:
        fam.setdefault(name, []).append(c)

    tenants = pools.TENANTS
    # global policy chains at a date
    for slug, docs in chains.items():
        rbs = [
            d
            for rb in runbooks.values()
            for d in rb
            if d.extra.get("quoted_policy", "").startswith(f"pol-{slug}-")
        ]
        for target in docs:
            lo = target.effective_from
            hi = target.effective_to or dt.date(2026, 11, 30)
            for _ in range(2 if target.version != "1" else 1):
                day = lo + dt.timedelta(days=rng.randrange(0, max(1, (hi - lo).days)))
                rejects = [
                    rj(d, "superseded", "value")
                    for d in docs
                    if d.effective_from < target.effective_from
                ]
                rejects += [
                    rj(d, "not_yet_effective", "value")
                    for d in docs
                    if d.effective_from > day and d.published_at <= day
                ]
                for rb in rbs:
                    if (
                        rb.published_at <= day
                        and (rb.effective_to is None or rb.effective_to > day)
                        and rb.extra["quoted_value"] != target.extra["value"]
                    ):
                        rejects.append(rj(rb, "lower_authority", "limit"))
                param = target.extra["param"]
                value = target.extra["value"]
                task = pick(
                    rng,
                    [
                        f"What {param} applies on {long_date(day)}?",
                        f"As of {long_date(day)}, what is the platform's {param}?",
                        f"Which {param} should operations work to on {day.isoformat()}?",
                    ],
                )
                add(
                    "policy_as_of",
                    case(
                        task,
                        pick(rng, tenants),
                        day.isoformat(),
                        [ev(target, "value")],
                        expected(value_kind(value), value),
                        ["conflict", "temporal"],
                        "policy_as_of",
                        rejects,
                    ),
                )
    # tenant schedules: tenant cutoffs for non-EUR currencies
    for tname, docs in schedules.items():
        t = w.tenants[tname]
        for target in docs:
            cur = pick(rng, sorted(target.extra["cutoffs"]))
            lo = target.effective_from
            hi = target.effective_to or dt.date(2026, 11, 30)
            day = lo + dt.timedelta(days=rng.randrange(0, max(1, (hi - lo).days)))
            rejects = [
                rj(d, "superseded", f"cut:{cur}")
                for d in docs
                if d.effective_from < target.effective_from
                and d.extra["cutoffs"][cur] != target.extra["cutoffs"][cur]
            ]
            rejects += [
                rj(d, "not_yet_effective", f"cut:{cur}")
                for d in docs
                if d.effective_from > day
                and d.published_at <= day
                and d.extra["cutoffs"][cur] != target.extra["cutoffs"][cur]
            ]
            if (
                cur in RUNBOOK_V2
                and day >= dt.date(2025, 10, 12)
                and RUNBOOK_V2[cur][1] != target.extra["cutoffs"][cur]
            ):
                rejects.append(
                    {
                        "doc_id": "runbook-v2",
                        "reason": "lower_authority",
                        "quote": RUNBOOK_V2[cur][0],
                    }
                )
            for other in tenants:
                if other == tname:
                    continue
                for od in schedules[other]:
                    if (
                        cur in od.extra["cutoffs"]
                        and od.effective_from <= day
                        and (od.effective_to is None or od.effective_to > day)
                        and od.extra["cutoffs"][cur] != target.extra["cutoffs"][cur]
                    ):
                        rejects.append(rj(od, "other_tenant", f"cut:{cur}"))
                        break
                if sum(r["reason"] == "other_tenant" for r in rejects) >= 2:
                    break
            value = target.extra["cutoffs"][cur]
            task = pick(
                rng,
                [
                    f"What is {t.display}'s {cur} cutoff on {long_date(day)}?",
                    f"By what time must {t.display}'s {cur} captures be in on {day.isoformat()}?",
                    f"Which {cur} cutoff applies to {t.display} on {long_date(day)}?",
                ],
            )
            add(
                "tenant_cutoff",
                case(
                    task,
                    tname,
                    day.isoformat(),
                    [ev(target, f"cut:{cur}")],
                    expected("time", value),
                    ["conflict", "scoped", "temporal"],
                    "tenant_cutoff",
                    rejects,
                ),
            )
    # EUR cutoff per tenant around the platform v3 cutover
    for tname, mine in migrations.items():
        t = w.tenants[tname]
        inj = [d for d in injections if d.tenant == tname and "EUR cutoff" in d.facts["injection"]]
        cut = t.cutover
        other_exc = [
            m["exception"] for o, m in migrations.items() if o != tname and "exception" in m
        ]
        if cut is not None:
            day = max(cut + dt.timedelta(days=1), dt.date(2026, 1, 5))
            day += dt.timedelta(days=(7 - day.weekday()) % 7 + 7 * rng.randrange(0, 6))
            rejects = [
                {"doc_id": "runbook-v2", "reason": "lower_authority", "quote": RUNBOOK_V2["EUR"][0]}
            ]
            if "exception" in mine:
                rejects.insert(
                    0,
                    rj(
                        mine["exception"],
                        "condition_met",
                        "exception",
                        resolved_by=mine["cutover"].doc_id,
                    ),
                )
            rejects += [rj(d, "untrusted_instruction", "injection") for d in inj]
            rejects.append(rj(pick(rng, other_exc), "other_tenant", "exception"))
            add(
                "eur_cutoff_after_cutover",
                case(
                    pick(
                        rng,
                        [
                            f"Which settlement cutoff applies to {t.display}'s Monday EUR batch on {long_date(day)}?",
                            f"What is the EUR cutoff for {t.display} on {long_date(day)}?",
                        ],
                    ),
                    tname,
                    day.isoformat(),
                    [
                        evq("policy-v3", POLICY_V3_QUOTE),
                        ev(mine["cutover"], "cutover", "qualifier"),
                    ],
                    expected("time", "15:00"),
                    ["conflict", "multi_hop"] + (["injection"] if inj else []),
                    "eur_cutoff_after_cutover",
                    rejects,
                ),
            )
            if cut < dt.date(2026, 1, 1):
                day = dt.date(2025, 12, 15)
                add(
                    "eur_cutoff_before_policy",
                    case(
                        f"What is the EUR cutoff for {t.display} on {long_date(day)}?",
                        tname,
                        day.isoformat(),
                        [
                            evq("runbook-v2", RUNBOOK_V2["EUR"][0]),
                            evq("policy-v2", POLICY_V2_QUOTE, "support"),
                        ],
                        expected("time", "16:00"),
                        ["conflict", "temporal"],
                        "eur_cutoff_before_policy",
                        [
                            {
                                "doc_id": "policy-v3",
                                "reason": "not_yet_effective",
                                "quote": POLICY_V3_QUOTE,
                            },
                            {
                                "doc_id": "runbook-v1",
                                "reason": "superseded",
                                "quote": "EUR cutoff 16:30 CET. Anything captured after the cutoff rolls to the next business day's batch.",
                            },
                        ],
                    ),
                )
        if "exception" in mine:
            exc = mine["exception"]
            start = exc.published_at.date() + dt.timedelta(days=1)
            end = (cut - dt.timedelta(days=1)) if cut else dt.date(2026, 11, 30)
            day = start + dt.timedelta(days=rng.randrange(0, max(1, (end - start).days)))
            day -= (
                dt.timedelta(days=day.weekday())
                if day - dt.timedelta(days=day.weekday()) >= start
                else dt.timedelta(0)
            )
            rejects = [
                {"doc_id": "policy-v3", "reason": "exception_applies", "quote": POLICY_V3_QUOTE}
            ]
            rejects += [rj(d, "untrusted_instruction", "injection") for d in inj]
            add(
                "eur_cutoff_exception",
                case(
                    pick(
                        rng,
                        [
                            f"Which settlement cutoff applies to {t.display}'s EUR batch on {long_date(day)}?",
                            f"What EUR cutoff does {t.display} work to on {long_date(day)}?",
                        ],
                    ),
                    tname,
                    day.isoformat(),
                    [ev(exc, "exception")],
                    expected("time", "16:00"),
                    ["conflict"] + (["injection"] if inj else []),
                    "eur_cutoff_exception",
                    rejects,
                ),
            )
            # temporal unanswerable: the cutover has not happened as of the snapshot
            add(
                "unanswerable_cutover",
                case(
                    f"On which date was {t.display}'s cutover to settlement platform v3 completed?",
                    tname,
                    day.isoformat(),
                    [],
                    None,
                    ["temporal"],
                    "unanswerable_cutover",
                    [
                        rj(exc, "neighbouring_fact", "exception"),
                        rj(mine["ticket"], "neighbouring_fact"),
                    ],
                    absent={
                        "all_of": [rf"(?i)cutover completed for {tname}\b"],
                        "note": f"{t.display}'s cutover is not recorded as of the snapshot",
                    },
                ),
            )
    # ACL-scoped tenant documents
    for tname in tenants:
        t = w.tenants[tname]
        mine = tenant_docs[tname]
        versions = [mine[k] for k in ("reserve1", "reserve2") if k in mine]
        for target in versions:
            lo = target.effective_from
            hi = target.effective_to or dt.date(2026, 11, 30)
            day = lo + dt.timedelta(days=rng.randrange(1, max(2, (hi - lo).days)))
            rejects = [rj(d, "superseded", "reserve") for d in versions if d.effective_from < lo]
            rejects += [
                rj(d, "not_yet_effective", "reserve")
                for d in versions
                if d.effective_from > day and d.published_at <= day
            ]
            if mine["proposal"].published_at <= day:
                rejects.append(rj(mine["proposal"], "acl", "proposal"))
            pct = f"{target.extra['reserve_pct']}%"
            add(
                "reserve_scoped",
                case(
                    pick(
                        rng,
                        [
                            f"What rolling reserve applies to {t.display} on {long_date(day)}?",
                            f"What share of daily card volume do we hold back for {t.display} as of {day.isoformat()}?",
                        ],
                    ),
                    tname,
                    day.isoformat(),
                    [ev(target, "reserve")],
                    expected("text", pct),
                    ["scoped"] + (["conflict"] if rejects else []),
                    "reserve_scoped",
                    rejects,
                    groups=["ops", "risk"],
                ),
            )
        day = dt.date(2026, 11, 1) - dt.timedelta(days=rng.randrange(0, 60))
        inj = [
            d for d in injections if d.tenant == tname and "rolling reserve" in d.facts["injection"]
        ]
        add(
            "unanswerable_reserve_acl",
            case(
                f"What rolling reserve percentage applies to {t.display}?",
                tname,
                day.isoformat(),
                [],
                None,
                ["scoped"] + (["injection"] if inj else []),
                "unanswerable_reserve_acl",
                [rj(mine["accounts"], "neighbouring_fact", "restricted")]
                + [rj(v, "acl", "reserve") for v in versions if v.published_at <= day]
                + [rj(d, "untrusted_instruction", "injection") for d in inj],
                absent={
                    "all_of": [r"(?i)rolling reserve[^\n]{0,40}\d+(\.\d+)?\s?%"],
                    "note": "reserve terms are only in documents the risk group can read",
                },
            ),
        )
        sweep = mine["sweep"]
        acct = sweep.entities[1]
        day = as_of_after(w, sweep.published_at, 3, 90)
        add(
            "sweep_scoped",
            case(
                pick(
                    rng,
                    [
                        f"What is the sweep threshold for {acct}?",
                        f"Above what balance does treasury sweep {acct}?",
                    ],
                ),
                tname,
                day,
                [ev(sweep, "sweep")],
                expected("amount", re.search(r"EUR [\d,]+", sweep.facts["sweep"]).group(0)),
                ["scoped", "identifier"],
                "sweep_scoped",
                [],
                groups=["ops", "treasury"],
            ),
        )
        add(
            "unanswerable_sweep_acl",
            case(
                f"What is the sweep threshold for {acct}?",
                tname,
                day,
                [],
                None,
                ["scoped", "identifier"],
                "unanswerable_sweep_acl",
                [
                    rj(sweep, "acl", "sweep"),
                    rj(mine["accounts"], "neighbouring_fact", f"acct:{acct}"),
                ],
                absent={
                    "all_of": [re.escape(acct), r"(?i)sweep threshold"],
                    "note": "the threshold is in a treasury-only runbook",
                },
            ),
        )
        esc = mine["escalation"]
        day = as_of_after(w, esc.published_at, 3, 90)
        others = [tenant_docs[o]["escalation"] for o in tenants if o != tname]
        add(
            "escalation_scoped",
            case(
                pick(
                    rng,
                    [
                        "Who do we escalate to out of hours for this tenant's incidents?",
                        "Out of hours, which engineer takes escalations for our incidents?",
                    ],
                ),
                tname,
                day,
                [ev(esc, "escalation")],
                expected("id", esc.extra["escalation"]),
                ["scoped"],
                "escalation_scoped",
                [rj(o, "other_tenant", "escalation") for o in rng.sample(others, 2)],
                groups=["ops", "oncall"],
            ),
        )
        add(
            "unanswerable_escalation_acl",
            case(
                f"Who takes out-of-hours escalations for {t.display} incidents?",
                tname,
                day,
                [],
                None,
                ["scoped"],
                "unanswerable_escalation_acl",
                [rj(esc, "acl", "escalation")],
                absent={
                    "all_of": [r"(?i)out of hours, escalate"],
                    "note": "escalation contacts are in an on-call-only page",
                },
            ),
        )
        # identifiers: account -> bank (open page)
        accts = tenant_docs[tname]["accounts"]
        for a, _cur, bank in rng.sample(t.accounts, min(2, len(t.accounts))):
            add(
                "account_to_bank",
                case(
                    pick(
                        rng,
                        [
                            f"Which bank holds account {a}?",
                            f"{a}: which bank is that account with?",
                        ],
                    ),
                    tname,
                    as_of_after(w, accts.published_at),
                    [ev(accts, f"acct:{a}")],
                    expected("text", bank),
                    ["identifier"],
                    "account_to_bank",
                ),
            )
        # CHF: only stark has a CHF cutoff
        if tname != "stark":
            sched = schedules[tname][-1]
            day = as_of_after(w, sched.published_at, 2, 60)
            add(
                "unanswerable_chf",
                case(
                    f"What is {t.display}'s CHF cutoff?",
                    tname,
                    day,
                    [],
                    None,
                    ["scoped"],
                    "unanswerable_chf",
                    [
                        rj(sched, "neighbouring_fact"),
                        {"doc_id": "runbook-v2", "reason": "neighbouring_fact"},
                        rj(schedules["stark"][-1], "other_tenant", "cut:CHF"),
                    ],
                    absent={
                        "all_of": [r"\bCHF\b"],
                        "note": f"{t.display} has no CHF cutoff anywhere",
                    },
                ),
            )
    return fam


# --------------------------------------------------------------------------------------
# long-document families (issue 24): a deep section, a clause reached through another
# clause, two sections of one document (a table and its continuation), a clause reached
# from another long document; unanswerable ones whose near-answer sits in a long document.

LONG = "long_document"


def _in_force(chain: list[Doc], day: dt.date) -> Doc:
    for d in reversed(chain):
        if d.effective_from <= day:
            return d
    raise ValueError(f"no version of {chain[0].doc_id} in force on {day}")


def _day_in(d: Doc, rng, lo: int = 7, end: dt.date = dt.date(2026, 11, 30)) -> dt.date:
    """A day on which ``d`` is published and in force (before its ``effective_to``)."""
    start = max(d.effective_from or d.published_at, d.published_at)
    start = start.date() if isinstance(start, dt.datetime) else start
    stop = d.effective_to or end + dt.timedelta(days=1)
    span = (stop - start).days
    return start + dt.timedelta(days=rng.randrange(min(lo, span - 1), span))


def _after(d: Doc, rng, lo: int = 5, hi: int = 90) -> dt.date:
    day = d.published_at.date() if isinstance(d.published_at, dt.datetime) else d.published_at
    return min(day + dt.timedelta(days=rng.randrange(lo, hi)), dt.date(2026, 11, 30))


def _version_rejects(chain: list[Doc], target: Doc, key: str, day: dt.date) -> list[dict]:
    """Other versions of ``target`` whose ``key`` fact differs: superseded, or published but not yet in force."""
    out = []
    for d in chain:
        if d is target or d.facts[key] == target.facts[key]:
            continue
        if d.effective_from < target.effective_from:
            out.append(rj(d, "superseded", key))
        elif d.published_at <= day:
            out.append(rj(d, "not_yet_effective", key))
    return out


def _tags(rejects: list[dict], *extra: str) -> list[str]:
    tags = [LONG, *extra]
    if any(r["reason"] in ("superseded", "not_yet_effective") for r in rejects):
        tags += ["conflict", "temporal"]
    return tags


def long_document_cases(w: World, shelf) -> dict[str, list[dict]]:
    """Cases over the long-document shelf (``opsgen.longdocs``), by family."""
    import random

    rng = random.Random(f"long-document-cases-{len(shelf.docs)}-{shelf.docs[0].doc_id}")
    fam: dict[str, list[dict]] = {}

    def add(name: str | None, c: dict) -> None:
        fam.setdefault(name or c["family"], []).append(c)

    def value(d: Doc, key: str) -> str:
        return shelf.values[(d.doc_id, key)]

    tenants = pools.TENANTS
    ops = shelf.ops_chain
    # ---- a clause reached through another clause ---------------------------------------------
    reopen_tasks = [
        "The payments operations handbook lets the settlement lead reopen a closed batch by hand, but only as often as another clause allows. How many closed batches of one tenant could be reopened in a business day on {date}?",
        "Our handbook's clause on manual interventions caps how often closed batches may be reopened by pointing at a later clause. What was that cap per tenant and business day on {date}?",
        "On {date}, how many closed batches per tenant and business day could be reopened by hand under the operations handbook then in force?",
    ]
    for v, target in enumerate(ops):
        day = _day_in(target, rng)
        rejects = _version_rejects(ops, target, "reopen", day)
        add("longdoc_clause_reference", case(
            reopen_tasks[v].format(date=long_date(day)), pick(rng, tenants), day.isoformat(),
            [evq(target.doc_id, target.facts["reopen_ref"], "hop"), ev(target, "reopen")],
            expected("text", value(target, "reopen")), _tags(rejects), "longdoc_clause_reference", rejects))
    disputes = shelf.disputes_chain
    for target in disputes:
        day = _day_in(target, rng)
        rejects = _version_rejects(disputes, target, "committee", day)
        add("longdoc_clause_reference", case(
            pick(rng, [
                "The disputes handbook says operations never concedes a large dispute alone and refers to a threshold in another clause. What was that threshold on {date}?",
                "Above what amount did a dispute have to go to the disputes committee on {date}? The goodwill clause of the handbook points at the clause that sets it.",
            ]).format(date=long_date(day)), pick(rng, tenants), day.isoformat(),
            [evq(target.doc_id, target.facts["committee_ref"], "hop"), ev(target, "committee")],
            expected("amount", value(target, "committee")), _tags(rejects), "longdoc_clause_reference", rejects))
    treasury = shelf.treasury_chain
    for target in treasury:
        day = _day_in(target, rng)
        rejects = _version_rejects(treasury, target, "buffer", day)
        add("longdoc_clause_reference", case(
            pick(rng, [
                "Treasury releases payout runs only while the operating account stays above a buffer defined elsewhere in its handbook. How large was that buffer on {date}?",
                "What intraday balance did the operating account have to stay above, on {date}, for treasury to keep releasing payout runs?",
            ]).format(date=long_date(day)), pick(rng, tenants), day.isoformat(),
            [evq(target.doc_id, target.facts["buffer_ref"], "hop"), ev(target, "buffer")],
            expected("amount", value(target, "buffer")), _tags(rejects, "scoped"), "longdoc_clause_reference", rejects,
            groups=["ops", "treasury"]))
    open_banks = [b for b, d in shelf.bank_contracts.items() if not shelf.meta[d.doc_id]["restricted"]]
    for bank in sorted(rng.sample(open_banks, 3)):
        d = shelf.bank_contracts[bank]
        day = _after(d, rng)
        others = [shelf.bank_contracts[o] for o in open_banks if o != bank
                  and value(shelf.bank_contracts[o], "cap") != value(d, "cap") and shelf.bank_contracts[o].published_at <= day]
        rejects = [rj(pick(rng, others), "semantic_decoy", "cap")] if others else []
        add("longdoc_clause_reference", case(
            pick(rng, [
                f"Our payment services agreement with {bank} gives service credits when the primary channel misses its availability level, subject to a cap set in another clause. What is that cap?",
                f"If the primary channel of {bank} keeps missing its availability level, how much can the service credits for one month come to at most, under our agreement with them?",
            ]), pick(rng, tenants), day.isoformat(),
            [evq(d.doc_id, d.facts["credit_ref"], "hop"), ev(d, "cap")],
            expected("text", value(d, "cap")), [LONG], "longdoc_clause_reference", rejects))
    for tname in sorted(rng.sample(tenants, 4)):
        d = shelf.tenant_terms[tname]
        disp = w.tenants[tname].display
        day = _after(d, rng)
        others = [shelf.tenant_terms[o] for o in tenants if o != tname and value(shelf.tenant_terms[o], "review") != value(d, "review")]
        add("longdoc_clause_reference", case(
            pick(rng, [
                f"{disp}'s operating terms say their manual-intervention figures are not sent separately but presented at a meeting defined in another clause. How often does that meeting take place?",
                f"How often do we go through the manual-intervention figures with {disp}, according to their operating terms?",
            ]), tname, day.isoformat(),
            [evq(d.doc_id, d.facts["review_ref"], "hop"), ev(d, "review")],
            expected("text", value(d, "review")), [LONG], "longdoc_clause_reference",
            [rj(o, "other_tenant", "review") for o in rng.sample(others, min(2, len(others)))]))
    mec = shelf.runbooks["month-end-close"]
    add("longdoc_clause_reference", case(
        "The month-end close runbook says to send the reconciliation pack to the payments controller by a deadline listed in another section. By what time on which day is it due?",
        pick(rng, tenants), _after(mec, rng).isoformat(),
        [evq(mec.doc_id, mec.facts["pack_ref"], "hop"), ev(mec, "pack")],
        expected("time", value(mec, "pack")), [LONG], "longdoc_clause_reference"))
    # ---- a clause as of a date, across versions that change clause by clause ------------------
    as_of_tasks = {
        "returns": ["On {date}, how long did operations have to clear a returned credit transfer's return reason with the tenant before the money stayed in the holding account?",
                    "Under the payments operations handbook in force on {date}, how many business days could a return reason stay uncleared before the funds were kept in the tenant's holding account?"],
        "hold": ["Under the handbook in force on {date}, after how many business days does a payout hold placed by operations lapse if risk has not confirmed it in writing?",
                 "How long did an operations payout hold last on {date} before lapsing, absent written confirmation from risk?"],
        "summary": ["Within how many hours of closing an incident did the written summary have to reach the affected tenant, per the operations handbook in force on {date}?",
                    "What was the deadline on {date} for sending an affected tenant the written incident summary after closing the incident?"],
        "adjust": ["Above what amount does a manual adjustment to a posted batch need the payments controller as second approver, as of {date}?"],
        "rerelease": ["How many payout files of one tenant could be released again by hand in a single business day under the handbook in force on {date}?",
                      "On {date}, what was the daily limit on payout files released a second time by hand, per tenant?"],
    }
    plan = [("returns", 0), ("returns", 1), ("hold", 1), ("hold", 2), ("summary", 0), ("summary", 2), ("adjust", 2),
            ("rerelease", 1), ("rerelease", 2)]
    for key, v in plan:
        target = ops[v]
        day = _day_in(target, rng)
        rejects = _version_rejects(ops, target, key, day)
        surface = value(target, key)
        add("longdoc_clause_as_of", case(
            pick(rng, as_of_tasks[key]).format(date=long_date(day)), pick(rng, tenants), day.isoformat(),
            [ev(target, key)], expected("amount" if surface.startswith("EUR") else "text", surface),
            _tags(rejects), "longdoc_clause_as_of", rejects))
    for target in disputes:
        day = _day_in(target, rng)
        rejects = _version_rejects(disputes, target, "card", day)
        add("longdoc_clause_as_of", case(
            pick(rng, ["How many calendar days did we have on {date} to get evidence for a card scheme dispute to the acquirer?",
                       "On {date}, what was the deadline for sending the acquirer our evidence in a card scheme dispute?"]).format(date=long_date(day)),
            pick(rng, tenants), day.isoformat(), [ev(target, "card")], expected("text", value(target, "card")),
            _tags(rejects), "longdoc_clause_as_of", rejects))
    # ---- the decisive fact deep inside one long document --------------------------------------
    for v in (1, 2):
        target = ops[v]
        day = _day_in(target, rng)
        rejects = _version_rejects(ops, target, "sample", day)
        add("longdoc_deep_section", case(
            f"How many settled batches per tenant does the internal audit sample cover each quarter, under the operations handbook in force on {long_date(day)}?",
            pick(rng, tenants), day.isoformat(), [ev(target, "sample")], expected("text", value(target, "sample")),
            _tags(rejects), "longdoc_deep_section", rejects))
    deep_tasks = {
        "bank-connectivity": ["How long do we give a bank to acknowledge a payment file before resending it once over the backup channel?",
                              "When a bank stays silent about a payment file, after how many minutes do we resubmit it through the backup channel?"],
        "month-end-close": ["Above what amount must a month-end difference have a written explanation before the payments controller signs the control report?"],
        "disaster-recovery": ["After a regional failover, how many health checks in a row must the primary region pass before we fail back to it?"],
        "card-clearing": ["How many times may one clearing file be replayed in a business day before the scheme's help desk decides?"],
        "payout-exceptions": ["After how many business days does a payout exception move to the weekly exceptions review?"],
        "incident-command": ["After how many hours in the role does an incident commander hand over, even late in an incident?"],
    }
    for slug, tasks in deep_tasks.items():
        d = shelf.runbooks[slug]
        surface = value(d, "deep")
        add("longdoc_deep_section", case(
            pick(rng, tasks), pick(rng, tenants), _after(d, rng).isoformat(), [ev(d, "deep")],
            expected("amount" if surface.startswith("EUR") else "time" if ":" in surface else "text", surface), [LONG],
            "longdoc_deep_section"))
    design_tasks = {
        "ledger-slicing": "How many ledger entries can one posting slice hold at most in settlement platform v3's ledger design?",
        "payout-pipeline": "How many payout-service workers may run in one region, according to the payout pipeline design?",
        "recon-matching": "After how many business days are unmatched statement lines flagged to the payments controller's team?",
        "notifications": "How many times is a failed webhook delivery retried before the tenant's operations contact gets an email?",
        "key-management": "How often are the signing keys for payment files rotated?",
    }
    for slug, task in design_tasks.items():
        d = shelf.designs[slug]
        add("longdoc_deep_section", case(
            task, pick(rng, tenants), _after(d, rng).isoformat(), [ev(d, "deep")],
            expected("text", value(d, "deep")), [LONG], "longdoc_deep_section"))
    for bank in sorted(rng.sample(open_banks, 3)):
        d = shelf.bank_contracts[bank]
        add("longdoc_deep_section", case(
            pick(rng, [f"How much notice do we have to give {bank} to end our payment services agreement without any breach on their side?",
                       f"If we wanted out of the {bank} payment services agreement for convenience, how much written notice would we owe them?"]),
            pick(rng, tenants), _after(d, rng).isoformat(), [ev(d, "convenience")],
            expected("text", value(d, "convenience")), [LONG], "longdoc_deep_section"))
    # actions near the end of the board's minutes; the same action, another month, another owner
    owners = shelf.meta["action_owners"]
    repeated = sorted(v for v, rows in owners.items() if len({o for _, o in rows}) >= 2)
    for verb in rng.sample(repeated, min(3, len(repeated))):
        rows = owners[verb]
        doc_id, owner = pick(rng, rows)
        d = w.docs[doc_id]
        month = month_year(dt.date.fromisoformat(d.extra["meeting"]))
        others = [(o_id, o) for o_id, o in rows if o_id != doc_id and o != owner]
        add("longdoc_deep_section", case(
            pick(rng, [f"Who took the action to {verb} at the {month} operations review board?",
                       f"The operations review board met in {month}. Who owns its action to {verb}?"]),
            pick(rng, tenants), _after(d, rng, 3, 30).isoformat(), [ev(d, f"action:{verb}")],
            expected("id", owner), [LONG], "longdoc_deep_section",
            [rj(w.docs[o_id], "neighbouring_fact", f"action:{verb}") for o_id, _ in others[:2]
             if w.docs[o_id].published_at <= d.published_at]))
    changes = [(d, c) for d in shelf.cab_minutes for c in shelf.meta.get(d.doc_id, {}).get("changes", [])]
    for d, (chg, system, _what, wday, _start) in rng.sample(changes, 3):
        add("longdoc_deep_section", case(
            pick(rng, [f"On which date is the maintenance window the change advisory board gave {chg}?",
                       f"When was {chg} ({system}) scheduled to go ahead, according to the change advisory board?"]),
            pick(rng, tenants), _after(d, rng, 1, 6).isoformat(), [ev(d, f"chg:{chg}")],
            expected("date", wday), [LONG, "identifier"], "longdoc_deep_section"))
    for tname in sorted(rng.sample(sorted(shelf.steering), 3)):
        d = shelf.steering[tname]
        others = [shelf.steering[o] for o in shelf.steering if o != tname]
        add("longdoc_deep_section", case(
            pick(rng, ["When is our next joint incident exercise with the platform's operations team?",
                       "For which date did our steering group set the next joint incident exercise?"]),
            tname, _after(d, rng, 2, 20).isoformat(), [ev(d, "exercise")],
            expected("date", value(d, "exercise")), [LONG, "scoped"], "longdoc_deep_section",
            [rj(o, "other_tenant", "exercise") for o in rng.sample(others, 2)]))
    # ---- two sections of one document: a table and its continuation ---------------------------
    for target, (tier, amount) in [(disputes[0], ("Tier 6", "EUR 40,000")), (disputes[1], ("Tier 6", "EUR 32,500")),
                                   (disputes[1], ("Tier 7", "EUR 80,000")), (disputes[0], ("Tier 5", "EUR 12,000"))]:
        day = _day_in(target, rng)
        key = f"tier:{tier}"
        rejects = _version_rejects(disputes, target, key, day)
        add("longdoc_two_sections", case(
            pick(rng, ["Who is the most junior person allowed to grant a goodwill credit of {amount} on {date}?",
                       "On {date}, which role at the lowest level could approve a goodwill credit of {amount} on its own?"]).format(amount=amount, date=long_date(day)),
            pick(rng, tenants), day.isoformat(),
            [ev(target, key), evq(target.doc_id, target.facts["tiers_note"], "support")],
            expected("text", value(target, key)), _tags(rejects), "longdoc_two_sections", rejects))
    for bank, pct, band in [(open_banks[0], "97.6%", "97.0% to below 98.0%"), (open_banks[-1], "98.4%", "98.0% to below 99.0%")]:
        d = shelf.bank_contracts[bank]
        key = f"credit:{band}"
        add("longdoc_two_sections", case(
            f"Availability of the primary channel at {bank} came to {pct} last month. What service credit does our agreement give us for that?",
            pick(rng, tenants), _after(d, rng).isoformat(),
            [ev(d, key), evq(d.doc_id, d.facts["credits_note"], "support")],
            expected("text", value(d, key)), [LONG], "longdoc_two_sections"))
    mr = shelf.designs["multi-region"]
    for service in ("sepa-connector", "recon-engine"):
        add("longdoc_two_sections", case(
            f"After a regional failover is declared, how long may {service} take before it is serving again?",
            pick(rng, tenants), _after(mr, rng).isoformat(),
            [ev(mr, f"rto:{service}"), evq(mr.doc_id, mr.facts["rto_note"], "support")],
            expected("text", value(mr, f"rto:{service}")), [LONG], "longdoc_two_sections"))
    services = sorted(pools.SYSTEMS)[6:]
    for d, service in zip(rng.sample(shelf.reviews, 3), rng.sample(services, 3), strict=True):
        quarter = d.extra["quarter"]
        q = f"Q{quarter[-1]} {quarter[:4]}"
        add("longdoc_two_sections", case(
            pick(rng, [f"What availability did {service} achieve in {q}?",
                       f"How much of {q} was {service} up and passing its health check?"]),
            pick(rng, tenants), _after(d, rng).isoformat(),
            [ev(d, f"avail:{service}"), evq(d.doc_id, d.facts["avail_note"], "support")],
            expected("text", value(d, f"avail:{service}")), [LONG], "longdoc_two_sections"))
    # ---- from one long document to another ----------------------------------------------------
    dr = shelf.runbooks["disaster-recovery"]
    for service in ("ledger-core", "batch-scheduler"):
        day = max(_after(dr, rng), _after(mr, rng))
        add("longdoc_cross_document", case(
            f"The disaster recovery runbook only counts a recovery as complete when each service meets the objectives in another document. How long may {service} take to serve again after the failover is declared?",
            pick(rng, tenants), day.isoformat(),
            [evq(dr.doc_id, dr.facts["rto_ref"], "hop"), ev(mr, f"rto:{service}")],
            expected("text", value(mr, f"rto:{service}")), [LONG, "multi_hop"], "longdoc_cross_document"))
    for d in shelf.orb_minutes:
        info = shelf.meta.get(d.doc_id, {})
        if "clause" not in info:
            continue
        day = _after(d, rng, 3, 12)
        key = {"14.4": "rerelease", "14.5": "adjust"}[info["clause"]]
        target = _in_force(ops, day)
        rejects = _version_rejects(ops, target, key, day)
        surface = value(target, key)
        month = month_year(dt.date.fromisoformat(d.extra["meeting"]))
        add("longdoc_cross_document", case(
            f"At its {month} meeting the operations review board confirmed one clause of the payments operations handbook. What figure does that clause set, as of {long_date(day)}?",
            pick(rng, tenants), day.isoformat(),
            [evq(d.doc_id, d.facts["handbook_ref"], "hop"), ev(target, key)],
            expected("amount" if surface.startswith("EUR") else "text", surface),
            _tags(rejects, "multi_hop"), "longdoc_cross_document", rejects))
    # ---- scoped: the caller's tenant decides which long document answers ----------------------
    scoped = [("onboarding", shelf.tenant_terms, ["How many business days do we have to finish the onboarding review of one of our new merchants?",
                                                   "Once a merchant's application is complete, how long can its onboarding review take for us?"]),
              ("exceptions", shelf.tenant_runbooks, ["By what time must our daily exceptions report reach our finance team?",
                                                     "What is the daily deadline for getting the exceptions report to our finance people?"]),
              ("disputes", shelf.tenant_terms, ["How many business hours does the platform have to answer a question from our disputes team?"])]
    for key, docs, tasks in scoped:
        for tname in sorted(rng.sample(tenants, 5 if key != "disputes" else 3)):
            d = docs[tname]
            others = [docs[o] for o in tenants if o != tname and value(docs[o], key) != value(d, key)]
            surface = value(d, key)
            add("longdoc_scoped", case(
                pick(rng, tasks), tname, _after(d, rng).isoformat(), [ev(d, key)],
                expected("time" if ":" in surface else "text", surface), [LONG, "scoped"], "longdoc_scoped",
                [rj(o, "other_tenant", key) for o in rng.sample(others, 2)]))
    # ---- unanswerable: the near-answer sits in a long document --------------------------------
    for target in treasury:
        day = _day_in(target, rng)
        tname = pick(rng, tenants)
        add(None, case(
            "How large is the intraday liquidity buffer that treasury keeps on the operating account?",
            tname, day.isoformat(), [], None, [LONG, "scoped"], "unanswerable_longdoc_acl",
            [rj(d, "acl", "buffer") for d in treasury if d.published_at <= day],
            absent={"all_of": [r"(?i)liquidity buffer[^\n]{0,80}EUR [\d,]+"],
                    "note": "the buffer is only in the treasury handbook, which the ops group cannot read"}))
    for bank, d in sorted(shelf.bank_contracts.items()):
        if not shelf.meta[d.doc_id]["restricted"]:
            continue
        add(None, case(
            f"How much notice would we have to give {bank} to end our payment services agreement for convenience?",
            pick(rng, tenants), _after(d, rng).isoformat(), [], None, [LONG, "scoped"], "unanswerable_longdoc_acl",
            [rj(d, "acl", "convenience")],
            absent={"all_of": [re.escape(bank), r"(?i)for convenience"],
                    "note": f"the {bank} agreement is restricted to the leadership group"}))
    current = disputes[-1]
    for tname in rng.sample(tenants, 2):
        day = _day_in(current, rng)
        add(None, case(
            "What is the largest goodwill credit in PLN that the settlement lead on shift may grant?",
            tname, day.isoformat(), [], None, [LONG], "unanswerable_longdoc_missing",
            [rj(current, "neighbouring_fact", "tiers_note")],
            absent={"all_of": [r"(?i)goodwill credit", r"\bPLN\b"],
                    "note": "goodwill credit authority is set in EUR only"}))
    for d in shelf.orb_minutes:
        topic = shelf.meta.get(d.doc_id, {}).get("deferred")
        if not topic:
            continue
        add(None, case(
            f"What did the operations review board decide about the {topic}?",
            pick(rng, tenants), "2026-11-30", [], None, [LONG], "unanswerable_longdoc_missing",
            [rj(d, "neighbouring_fact", "deferred")],
            absent={"all_of": [rf"(?i){re.escape(topic)}[^.]{{0,150}}\b(agreed|approved|decided|rejected|adopted|accepted)\b"],
                    "note": f"the board deferred the {topic} and never took it up again"}))
    for tname in sorted(rng.sample(tenants, 2)):
        d = shelf.tenant_terms[tname]
        disp = w.tenants[tname].display
        add(None, case(
            f"How many business hours do we have to answer a question from {disp}'s treasury team?",
            tname, _after(d, rng).isoformat(), [], None, [LONG], "unanswerable_longdoc_missing",
            [rj(d, "neighbouring_fact", "finance")],
            absent={"all_of": [rf"(?i)questions from {re.escape(disp)}'s treasury team"],
                    "note": f"{disp}'s operating terms name answer times for the disputes and finance teams only"}))
    return fam
