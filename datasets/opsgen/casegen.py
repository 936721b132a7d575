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
