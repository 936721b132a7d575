# ruff: noqa: E501  (long prose and task strings are data, kept on one line each)
"""Incidents: a ticket, its comment thread, the rollout that fixed it, sometimes a postmortem.

Each incident states each fact in exactly one document, so a case's minimum evidence
set is well defined: the cause lives in one comment, the rollout id in another, the
build and the approver in the rollout record, the limit in the policy it cites.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from . import pools, prose
from .common import Body, Doc, any_date, at, long_date, month_year, pick, short_date
from .world import Tenant, World

# Which global policy chain a service's changes are governed by.
SERVICE_POLICY = {
    "payout-service": "payout-retry",
    "ledger-core": "ledger-freeze",
    "batch-scheduler": "incident-notice",
    "fx-rates": "fx-markup",
    "file-ingest": "file-retention",
    "recon-engine": "duplicate-detection",
    "acquirer-bridge": "incident-notice",
    "sepa-connector": "manual-payout",
    "card-settler": "chargeback-window",
    "clearing-gateway": "file-retention",
    "reserve-keeper": "reserve-hold",
    "notify-hub": "incident-notice",
}

WORKAROUNDS = [
    "Paused automatic payouts for the affected accounts until we know more.",
    "Re-ran the batch by hand for the merchants that were hit.",
    "Moved the tenant to manual release for today.",
    "Asked the bank for a corrected file; they promised one within two hours.",
    "Put a hold on the next batch for this tenant so nothing compounds.",
    "Reverted the tenant's config to last Friday's snapshot as a stopgap.",
    "Split the batch in two and pushed the first half through manually.",
    "Turned the retry loop off for this tenant so it stops making things worse.",
]
RULED_OUT = [
    "Ruled out the FX cache: rates for that date look right.",
    "The acquirer file itself is fine, checksums match what they sent.",
    "Not a permissions problem, the service account can read the bucket.",
    "Ledger replica lag was under a second the whole morning, so not that either.",
    "Nothing in the deploy log for that window.",
    "The bank's status page shows no incident on their side.",
    "Scheduler logs show the job started on time.",
    "Other tenants on the same acquirer are unaffected.",
]
STILL_OPEN = [
    "Still digging. Waiting for the bank to send their side of the logs.",
    "No explanation yet. I have asked the acquirer for their processing log.",
    "We can reproduce the symptom on staging but not reliably. More tomorrow.",
    "Parking this until the vendor replies; workaround stays in place.",
    "Handing over to the next shift with notes in the channel; nothing conclusive.",
]
LOG_MSGS = [
    "unexpected state, aborting batch",
    "retry budget exhausted",
    "upstream returned 502",
    "validation failed for 1 or more lines",
    "lock wait timeout exceeded",
    "write rejected by downstream",
    "checksum mismatch",
    "no rows read from input",
]


@dataclass
class Incident:
    tenant: Tenant
    key: str
    opened: dt.datetime
    symptom: int
    cause: int
    code: str
    system: str
    func: str
    terms: tuple[str, str, str]
    account: str
    currency: str
    amount: str
    merchants: int
    resolved: bool
    has_pm: bool
    rollout: str | None = None
    build: str | None = None
    commit: str | None = None
    change: str | None = None
    approver: str | None = None
    completed: dt.datetime | None = None
    policy: Doc | None = None
    closed: dt.datetime | None = None
    twin_of: Incident | None = None
    docs: dict[str, str] = field(default_factory=dict)  # role -> doc_id
    last: dt.datetime | None = None


def _cap(s: str) -> str:
    return s[0].upper() + s[1:]


def _amount(rng, cur: str) -> str:
    whole = rng.randrange(1200, 900000)
    cents = rng.randrange(0, 100)
    return f"{cur} {whole:,}.{cents:02d}"


def plan_incidents(w: World, per_tenant: int) -> list[Incident]:
    rng = w.rng
    span = (dt.date(2026, 10, 20) - dt.date(2025, 4, 20)).days
    incidents: list[Incident] = []
    for tname in pools.TENANTS:
        t = w.tenants[tname]
        symptoms = rng.sample(range(len(pools.SYMPTOMS)), per_tenant)
        days = sorted(rng.sample(range(span), per_tenant))
        for s, d in zip(symptoms, days, strict=True):
            day = dt.date(2025, 4, 20) + dt.timedelta(days=d)
            cause = rng.randrange(len(pools.CAUSES))
            system = pools.CAUSES[cause][3]
            acct, cur, _ = rng.choice(t.accounts)
            terms = tuple(rng.sample(pools.EVENT_TERMS, 3))
            inc = Incident(
                tenant=t,
                key=w.ticket_key(),
                opened=at(day, rng.randrange(6, 12), rng.randrange(60)),
                symptom=s,
                cause=cause,
                code=w.error_code(),
                system=system,
                func=rng.choice(pools.FUNCTIONS[system]),
                terms=terms,
                account=acct,
                currency=cur,
                amount=_amount(rng, cur),
                merchants=rng.randrange(2, 400),
                resolved=rng.random() < 0.86,
                has_pm=rng.random() < 0.22,
            )
            incidents.append(inc)
    # near-duplicates across tenants: same symptom within a few days, different cause
    by_symptom: dict[int, list[Incident]] = {}
    for inc in incidents:
        by_symptom.setdefault(inc.symptom, []).append(inc)
    twins = 0
    for s in sorted(by_symptom):
        group = by_symptom[s]
        if len(group) < 2 or twins >= 22:
            continue
        a, b = rng.sample(group, 2)
        if a.twin_of or b.twin_of or a.tenant is b.tenant:
            continue
        b.opened = a.opened + dt.timedelta(days=rng.randrange(0, 3), hours=rng.randrange(1, 5))
        if b.cause == a.cause:
            b.cause = (a.cause + 1 + rng.randrange(len(pools.CAUSES) - 1)) % len(pools.CAUSES)
            b.system = pools.CAUSES[b.cause][3]
            b.func = rng.choice(pools.FUNCTIONS[b.system])
        b.twin_of, a.twin_of = a, b
        b.resolved = a.resolved = True
        b.has_pm = a.has_pm = False
        twins += 1
    # lexical decoys: a few error codes reused by an unrelated incident
    resolved = [i for i in incidents if i.resolved and not i.has_pm]
    for _ in range(14):
        a, b = rng.sample(resolved, 2)
        if a.code != b.code and abs((a.opened - b.opened).days) > 40:
            b.code = a.code
    # the story's error code also shows up in one unrelated incident elsewhere
    for inc in resolved:
        if inc.tenant.name == "hooli" and inc.opened.year == 2025:
            inc.code = "E-4471"
            break
    incidents.sort(key=lambda i: (i.opened, i.key))
    return incidents


# --------------------------------------------------------------------------------------
# documents


def _ticket(w: World, inc: Incident) -> Doc:
    rng = w.rng
    t = inc.tenant
    ev, _ask, short = pools.SYMPTOMS[inc.symptom]
    term = inc.terms[0]
    bdate = inc.opened.date() - dt.timedelta(days=rng.randrange(0, 2))
    reporter = pick(rng, t.contacts)
    authority = "support" if rng.random() < 0.6 else "operations"
    owner = w.person(authority)
    title = pick(
        rng,
        [
            f"{inc.key}: {t.display} {term} - {short}",
            f"{inc.key}: {_cap(short)} in {t.display} {term} ({short_date(bdate)})",
            f"{inc.key}: [{t.display}] {term} problem on {short_date(bdate)}",
            f"{inc.key}: {t.display} reports {short}",
        ],
    )
    d = Doc(
        inc.key.lower(),
        title,
        "ticket",
        authority,
        t.name,
        inc.opened,
        entities=[t.name, inc.account, inc.system, inc.currency],
        extra={
            "key": inc.key,
            "reporter": reporter,
            "assignee": owner,
            "priority": pick(rng, ["P1", "P2", "P2", "P3"]),
            "status": "resolved" if inc.resolved else "open",
        },
    )
    desc = pick(
        rng,
        [
            f"{reporter} from {t.display} finance wrote in on {any_date(rng, inc.opened.date())}: "
            f"{ev} in the {term} for business date {bdate.isoformat()}.",
            f"Monitoring raised this one. During the {term} on {any_date(rng, bdate)}, {ev}.",
            f"{t.display} says {ev}. This affects the {term} for {any_date(rng, bdate)}; they noticed "
            f"when their treasury report did not add up.",
            f"Opening on behalf of {t.display} operations. After the {term} on "
            f"{any_date(rng, bdate)}, {ev}. They have asked for a call today.",
            f"Per {reporter}'s email this morning, {ev}. Business date {bdate.isoformat()}, "
            f"{inc.currency} batch.",
        ],
    )
    b = Body()
    style = rng.randrange(3)
    batch_ref = f"{t.name.upper()[:4]}-{bdate.strftime('%Y%m%d')}-{inc.currency}"
    log = (
        f"{inc.opened.date().isoformat()}T{rng.randrange(4, 8):02d}:{rng.randrange(60):02d}:"
        f"{rng.randrange(60):02d}Z ERROR {inc.system} {inc.code} batch={batch_ref} "
        f'msg="{pick(rng, LOG_MSGS)}"'
    )
    if style == 0:
        b.h(1, title)
        b.kv(
            [
                ("Reporter", reporter),
                ("Owner", owner),
                ("Priority", d.extra["priority"]),
                ("Component", inc.system),
                ("Opened", inc.opened.strftime("%Y-%m-%d %H:%M UTC")),
            ]
        )
        b.h(2, "Description").p(desc)
        if rng.random() < 0.7:
            b.p(prose.context_para(rng, inc.opened.date()))
        b.h(2, "Impact").ul(
            [
                f"Account: {inc.account}",
                f"Amount in question: {inc.amount}",
                f"Merchants affected: {inc.merchants}",
            ]
        )
        b.h(2, "Logs").code(log, "text")
        if rng.random() < 0.5:
            b.h(2, "Steps taken by support").ol(
                rng.sample(prose.SUPPORT_STEPS, rng.randrange(2, 5))
            )
    elif style == 1:
        b.p(f"**{title}**")
        b.p(desc + " " + prose.context_para(rng, inc.opened.date()))
        b.p(
            f"Affected account {inc.account}; roughly {inc.merchants} merchants and "
            f"{inc.amount} in the batch. Priority {d.extra['priority']}, assigned to {owner}."
        )
        b.h(2, "What we know so far")
        b.ul(
            rng.sample(
                [
                    "client confirmed the figures twice",
                    f"first error in {inc.system} at the start of the morning run",
                    "no change freeze in place that day",
                    f"the {inc.currency} batch is the only one affected",
                    "nothing similar in the last 30 days for this tenant",
                ],
                3,
            )
        )
        b.code(log)
    else:
        b.h(1, title)
        b.p(desc)
        b.h(3, "Details")
        b.table(
            ["Account", "Currency", "Amount", "Merchants"],
            [[inc.account, inc.currency, inc.amount, str(inc.merchants)]],
        )
        b.p(f"Error seen in {inc.system}: `{inc.code}`. Owner: {owner}.")
        if rng.random() < 0.6:
            b.h(3, "Client communication").p(prose.context_para(rng, inc.opened.date()))
        if rng.random() < 0.5:
            b.h(3, "Checked so far").ul(rng.sample(prose.SUPPORT_STEPS, 3))
    d.body = b.text()
    return d


def _comment(
    w: World,
    inc: Incident,
    n: int,
    when: dt.datetime,
    author: str,
    authority: str,
    text: str,
    links: list[str] | None = None,
    heading: bool | None = None,
) -> Doc:
    rng = w.rng
    d = Doc(
        f"{inc.key.lower()}-c{n}",
        f"{inc.key} comment by {author}",
        "ticket_comment",
        authority,
        inc.tenant.name,
        when,
        entities=[inc.tenant.name],
        links=[inc.key.lower()] + (links or []),
        extra={"key": inc.key, "author": author, "comment": n},
    )
    if heading is None:
        heading = rng.random() < 0.3
    d.body = (f"## {author}, {when.strftime('%Y-%m-%d %H:%M')} UTC\n\n" if heading else "") + text
    return d


def build_incident(w: World, inc: Incident, policy_at) -> list[Doc]:
    rng = w.rng
    t = inc.tenant
    docs = [_ticket(w, inc)]
    inc.docs["ticket"] = docs[0].doc_id
    ev, _ask, short = pools.SYMPTOMS[inc.symptom]
    cev, _cask, fix, _sys = pools.CAUSES[inc.cause]
    term = inc.terms[1]
    now = inc.opened
    n = 0

    def step(hours_lo: int, hours_hi: int) -> dt.datetime:
        nonlocal now
        now = now + dt.timedelta(hours=rng.randrange(hours_lo, hours_hi), minutes=rng.randrange(60))
        return now

    n += 1
    ops = w.person("operations")
    triage = f"{pick(rng, pools.ACKS)} {pick(rng, WORKAROUNDS)} " + pick(
        rng,
        [
            f"As far as I can see only the {term} for {inc.currency} is affected.",
            f"The {term} itself finished, but the numbers are wrong.",
            f"Other tenants' {term} looks normal this morning.",
            f"I will keep an eye on tomorrow's {term} as well.",
        ],
    )
    if rng.random() < 0.6:
        triage += "\n\nChecked so far:\n\n" + "\n".join(
            f"- {x}" for x in rng.sample(prose.CHECKED, rng.randrange(2, 5))
        )
    if rng.random() < 0.5:
        triage += "\n\n```text\n" + prose.log_block(rng, t.name, inc.currency) + "\n```"
    docs.append(_comment(w, inc, n, step(1, 4), ops, "operations", triage))
    if rng.random() < 0.35:
        n += 1
        docs.append(
            _comment(
                w,
                inc,
                n,
                step(3, 20),
                w.person("support"),
                "support",
                pick(rng, pools.NUDGES)
                + " "
                + " ".join(rng.sample(prose.CHATTER, rng.randrange(1, 3))),
            )
        )
    eng = w.person("engineering")
    if not inc.resolved:
        for _ in range(rng.randrange(1, 3)):
            n += 1
            lines = rng.sample(RULED_OUT, 2)
            text = f"{lines[0]} {lines[1]}\n\n{pick(rng, STILL_OPEN)}"
            if rng.random() < 0.7:
                text += "\n\nWhat I looked at:\n\n" + "\n".join(
                    f"- {x}" for x in rng.sample(prose.CHECKED, rng.randrange(3, 6))
                )
            if rng.random() < 0.6:
                text += "\n\n```text\n" + prose.log_block(rng, t.name, inc.currency) + "\n```"
            docs.append(_comment(w, inc, n, step(6, 40), eng, "engineering", text))
        n += 1
        sup = w.person("support")
        status = pick(rng, ["waiting on bank", "investigating", "waiting on acquirer"])
        c = _comment(
            w,
            inc,
            n,
            step(20, 70),
            sup,
            "support",
            f"Update sent to {pick(rng, t.contacts)}.\n\nStatus: {status}.",
        )
        c.fact("status", f"Status: {status}.")
        inc.docs["status"] = c.doc_id
        docs.append(c)
        inc.last = now
        return docs
    # root cause comment
    n += 1
    rc = pick(
        rng,
        [
            f"Root cause: {cev}, which is why {ev}.",
            f"Found it. {_cap(cev)}, and that is how {ev}.",
            f"So {ev} because {cev}.",
            f"The short version: {cev}; as a result {ev}.",
        ],
    )
    code_line = pick(
        rng,
        [
            f"The {inc.code} errors come from `{inc.func}` in {inc.system}.",
            f"{inc.code} is raised by {inc.func} when it hits this state.",
            f"Every {inc.code} in the log was thrown inside `{inc.func}`.",
        ],
    )
    extra_detail = pick(
        rng,
        [
            "",
            f"\n\nTimeline from the logs: first failure {now.strftime('%H:%M')} UTC, then retries "
            "every five minutes until the on-call stopped them.",
            "\n\nQuery I used to confirm:\n\n```sql\nSELECT batch_id, count(*) FROM postings\n"
            f"WHERE tenant = '{t.name}' AND business_date = '{inc.opened.date().isoformat()}'\n"
            "GROUP BY batch_id HAVING count(*) > 1;\n```",
            f"\n\nThis only bites when the {inc.currency} batch is large, which is why we had not "
            "seen it in testing.",
        ],
    )
    explain = " ".join(rng.sample(prose.EXPLAIN, rng.randrange(2, 5)))
    c = _comment(
        w,
        inc,
        n,
        step(8, 50),
        eng,
        pick(rng, ["engineering", "implementation_team"]),
        f"{rc} {code_line}{extra_detail}\n\n{explain}",
    )
    c.fact("cause", rc)
    c.fact("code_func", code_line)
    c.entities += [inc.code, inc.func, inc.system]
    inc.docs["cause"] = c.doc_id
    docs.append(c)
    # fix comment and rollout
    if rng.random() < 0.9:
        inc.rollout = w.rollout_id()
        inc.commit = w.commit()
        inc.change = w.change_id()
        inc.build = w.build(inc.system)
        inc.approver = w.person("approvers")
        n += 1
        fix_line = pick(
            rng,
            [
                f"Fix merged as {inc.commit}; it goes out with {inc.rollout}.",
                f"Change is in ({inc.commit}) and ships in {inc.rollout}.",
                f"Patch {inc.commit} is approved, deploying via {inc.rollout} this afternoon.",
            ],
        )
        fix_text = f"Plan: {fix}. {fix_line}"
        if rng.random() < 0.7:
            fix_text += "\n\nTesting:\n\n" + "\n".join(
                f"- {x}" for x in rng.sample(prose.FIX_TESTS, rng.randrange(2, 4))
            )
        if rng.random() < 0.5:
            fix_text += "\n\n" + pick(rng, prose.ROLLBACK)
        c = _comment(
            w, inc, n, step(4, 30), eng, "engineering", fix_text, links=[inc.rollout.lower()]
        )
        c.fact("fix_link", fix_line)
        inc.docs["fix"] = c.doc_id
        docs.append(c)
        inc.completed = step(2, 20)
        inc.policy = policy_at(SERVICE_POLICY[inc.system], inc.completed.date())
        docs.append(_rollout(w, inc))
        inc.docs["rollout"] = docs[-1].doc_id
    if rng.random() < 0.12:
        n += 1
        docs.append(
            _comment(
                w, inc, n, step(2, 10), w.person("support"), "support", pick(rng, pools.NUDGES)
            )
        )
    # closing comment
    n += 1
    sup = w.person("support")
    contact = pick(rng, t.contacts)
    close_when = step(10, 60)
    closing = pick(
        rng,
        [
            f"Closing {inc.key}: balances on {inc.account} confirmed with {contact}.",
            f"{contact} confirmed {inc.account} is back in line, so {inc.key} can close.",
            f"Resolved {inc.key} after {contact} checked {inc.account} against their books.",
        ],
    )
    summary = pick(
        rng,
        [
            f"Summary for the record: the problem was found on {short_date(inc.opened.date())}, a workaround was in place the same day, and the fix is in production.",
            "For the record: the client has accepted the explanation and has no further questions.",
            "The client asked for the postmortem if there is one; support will forward it.",
            "Nothing further from the client. Thanks all for the quick turnaround.",
        ],
    )
    c = _comment(w, inc, n, close_when, sup, "support", f"{closing} {summary}\n\nStatus: resolved.")
    c.fact("closing", closing)
    c.fact("status", "Status: resolved.")
    c.entities.append(inc.account)
    inc.docs["closing"] = c.doc_id
    inc.closed = close_when
    docs.append(c)
    inc.last = now
    return docs


def _rollout(w: World, inc: Incident) -> Doc:
    rng = w.rng
    t = inc.tenant
    rid = inc.rollout
    assert rid and inc.completed and inc.policy
    started = inc.completed - dt.timedelta(minutes=rng.randrange(12, 90))
    pol = inc.policy
    section = pol.extra["param_section"]
    d = Doc(
        rid.lower(),
        f"{rid}: {inc.system} {inc.build}",
        "rollout",
        "deployment_system",
        t.name,
        inc.completed,
        entities=[t.name, inc.system, inc.func],
        links=[pol.doc_id],
        extra={
            "rollout_id": rid,
            "change": inc.change,
            "pipeline": pick(rng, ["deploy-bot", "shipit", "argo"]),
        },
    )
    approved = pick(
        rng,
        [
            f"{rid} was approved by {inc.approver}.",
            f"Approval for {rid}: {inc.approver} (release manager).",
            f"Release manager sign-off on {rid} came from {inc.approver}.",
        ],
    )
    policy_line = f'Governed by {pol.doc_id}, section "{section}".'
    b = Body()
    style = rng.randrange(3)
    if style == 0:
        b.h(1, d.title)
        build_row = f"| Build | {inc.build} |"
        done_row = f"| Completed | {inc.completed.strftime('%Y-%m-%d %H:%M')} UTC |"
        b.table(
            ["Field", "Value"],
            [
                ["Change", inc.change],
                ["Service", inc.system],
                ["Build", inc.build],
                ["Commit", inc.commit],
                ["Function", inc.func],
                ["Tenants", t.name],
                ["Started", started.strftime("%Y-%m-%d %H:%M") + " UTC"],
                ["Completed", inc.completed.strftime("%Y-%m-%d %H:%M") + " UTC"],
                ["Status", "completed"],
            ],
        )
        b.h(2, "Approvals").p(approved)
        b.h(2, "Policy reference").p(policy_line)
    elif style == 1:
        b.h(1, d.title)
        build_row = f"build {inc.build} of {inc.system}"
        done_row = (
            f"Deployment of {inc.change} finished at {inc.completed.strftime('%H:%M')} UTC "
            f"on {long_date(inc.completed.date())}."
        )
        b.code(
            "\n".join(
                [
                    f"change    {inc.change}",
                    f"service   {inc.system}",
                    f"artifact  build {inc.build} of {inc.system}",
                    f"commit    {inc.commit}",
                    f"target    tenant={t.name}",
                    f"canary    {rng.randrange(1, 10)}% ... ok",
                    "full      100% ... ok",
                ]
            ),
            "text",
        )
        b.h(2, "Result").p(done_row + f" Touches `{inc.func}`.")
        b.h(2, "Sign-off").p(approved + " " + policy_line)
    else:
        b.p(f"Rollout record {rid} for {t.display}.")
        build_row = f"- build: {inc.build}"
        done_row = f"- finished: {inc.completed.strftime('%Y-%m-%dT%H:%MZ')}"
        b.h(2, "Record")
        b.p(
            "\n".join(
                [
                    f"- change: {inc.change}",
                    f"- service: {inc.system}",
                    build_row,
                    f"- commit: {inc.commit}",
                    f"- function: {inc.func}",
                    f"- started: {started.strftime('%Y-%m-%dT%H:%MZ')}",
                    done_row,
                    "- result: completed",
                ]
            )
        )
        b.h(2, "Notes").p(f"{approved} {policy_line}")
    prose.rollout_tail(rng, b)
    d.fact("build", build_row)
    d.fact("completed", done_row)
    d.fact("approved", approved)
    d.fact("policy", policy_line)
    d.body = b.text()
    return d


def build_postmortem(w: World, inc: Incident, followups: list[Doc]) -> list[Doc]:
    """A postmortem for a resolved incident plus one follow-up ticket with a status comment."""
    rng = w.rng
    t = inc.tenant
    ev, _ask, short = pools.SYMPTOMS[inc.symptom]
    cev, _cask, fix, _ = pools.CAUSES[inc.cause]
    term = inc.terms[2]
    when = (inc.closed or inc.opened) + dt.timedelta(days=rng.randrange(3, 15))
    author = w.person("incident_review")
    mins = rng.randrange(7, 240)
    pid = f"pm-{t.name}-{inc.key.lower()}"
    title = pick(
        rng,
        [
            f"Postmortem: {t.display} {term} incident, {month_year(inc.opened.date())}",
            f"{t.display} {term}: {short} ({long_date(inc.opened.date())})",
            f"Incident review - {t.display} {short}",
        ],
    )
    d = Doc(
        pid,
        title,
        "postmortem",
        "incident_review",
        t.name,
        when.date(),
        entities=[t.name, inc.system, inc.key],
        links=[inc.key.lower()],
        extra={"author": author, "status": "final", "incident": inc.key},
    )
    # follow-up action item ticket
    fkey = w.ticket_key()
    action = pick(
        rng,
        [
            "Add an alert when the batch total deviates from the 7-day median",
            "Write a replay tool for a single merchant",
            "Add a contract test with the bank's sample files",
            "Document the manual release procedure for this tenant",
            "Move the job's schedule into the shared calendar service",
            "Add a dashboard panel for per-tenant posting counts",
        ],
    )
    owner = w.person("engineering")
    fstatus = pick(rng, ["done", "in progress", "blocked", "won't do"])
    ft = Doc(
        fkey.lower(),
        f"{fkey}: {action}",
        "ticket",
        "engineering",
        t.name,
        when + dt.timedelta(hours=2),
        entities=[t.name, inc.system],
        links=[pid, f"{fkey.lower()}-c1"],
        extra={"key": fkey, "status": fstatus, "assignee": owner, "origin": pid},
    )
    ft.body = (
        Body()
        .h(1, ft.title)
        .p(
            f"Action item from {pid}. Owner: {owner}. {pick(rng, ['Small change, one sprint.', 'Needs a design review first.', 'Blocked on nothing at the moment.', 'Shared with the platform team.'])}"
        )
        .text()
    )
    fc_when = when + dt.timedelta(days=rng.randrange(5, 40))
    fc = Doc(
        f"{fkey.lower()}-c1",
        f"{fkey} comment by {owner}",
        "ticket_comment",
        "engineering",
        t.name,
        fc_when,
        entities=[t.name],
        links=[fkey.lower()],
        extra={"key": fkey, "author": owner, "comment": 1},
    )
    status_line = f"Status: {fstatus}."
    fc.body = (
        pick(
            rng,
            [
                "Merged and verified in production.",
                "Half done, the alert rule is still in review.",
                "Waiting for the vendor's sample files.",
                "We decided the existing alert covers it.",
            ],
        )
        + f"\n\n{status_line}\n"
    )
    fc.fact("status", status_line)
    followups += [ft, fc]
    b = Body()
    b.h(1, title)
    b.h(2, "Summary").p(
        f"On {long_date(inc.opened.date())} the {term} for {t.display} went wrong: "
        f"{ev}. Tracked in {inc.key}."
    )
    det_who = pick(rng, ["the tenant", "an on-call alert", "the morning checks", "a support agent"])
    det = f"Detection took {mins} minutes; it was first noticed by {det_who}."
    d.fact("detection", det)
    b.h(2, "Background").p(
        f"{inc.system} {pools.SYSTEMS[inc.system]}. " + " ".join(rng.sample(prose.EXPLAIN, 2))
    )
    b.h(2, "Detection").p(det)
    tl = [
        [(inc.opened - dt.timedelta(minutes=mins)).strftime("%H:%M"), "first failure in the logs"],
        [inc.opened.strftime("%H:%M"), f"{inc.key} opened"],
        [
            (inc.opened + dt.timedelta(hours=rng.randrange(1, 5))).strftime("%H:%M"),
            "workaround in place",
        ],
    ]
    if inc.completed:
        tl.append([inc.completed.strftime("%d %b %H:%M"), f"fix deployed ({inc.rollout})"])
    extra_rows = rng.sample(
        [
            "incident channel opened",
            "tenant informed",
            "bank contacted",
            "second engineer joined",
            "status update sent",
            "payouts paused",
            "affected merchants listed",
            "finance informed",
        ],
        rng.randrange(2, 6),
    )
    base = inc.opened
    for i, ev_ in enumerate(extra_rows):
        tl.insert(2 + i, [(base + dt.timedelta(minutes=15 * (i + 1))).strftime("%H:%M"), ev_])
    b.h(2, "Timeline").table(["Time (UTC)", "Event"], tl)
    b.h(2, "Root cause").p(f"{_cap(cev)}. The fix was to {fix}.")
    b.h(2, "Impact").p(
        f"{inc.merchants} merchants; {inc.amount} delayed or misstated until "
        "corrected. No funds were lost."
    )
    b.h(2, "Contributing factors").ul(rng.sample(prose.CONTRIBUTING, rng.randrange(2, 5)))
    b.h(2, "Lessons").p(" ".join(rng.sample(prose.LESSONS, rng.randrange(2, 4))))
    if rng.random() < 0.5:
        b.h(2, "What went well").ul(
            rng.sample(
                [
                    "the workaround was quick",
                    "the tenant was told within the hour",
                    "the runbook covered the first checks",
                    "logs had the batch ids",
                ],
                2,
            )
        )
    b.h(2, "Action items")
    row = f"| {fkey} | {action} | {owner} |"
    b.table(["Ticket", "Action", "Owner"], [[fkey, action, owner]])
    d.fact("action", row)
    if rng.random() < 0.6:
        b.h(2, "Appendix: log excerpt").code(prose.log_block(rng, t.name, inc.currency, 8), "text")
    d.extra["action_ticket"] = fkey
    d.links.append(fkey.lower())
    d.body = b.text()
    inc.docs["pm"] = pid
    inc.docs["followup"] = fkey.lower()
    inc.docs["followup_status"] = fc.doc_id
    return [d]


REVIEW_OPENERS = [
    "This review covers {disp}'s quarter as the platform saw it: volumes, incidents and what we changed.",
    "Quarterly review for {disp}, written for their account team and our operations leads.",
    "A look back at {disp}'s quarter. The incident list links to the tickets; details live there.",
]
REVIEW_NOTES = [
    "Volumes grew steadily; Monday batches remain the largest of the week by a wide margin.",
    "Most of the quarter was quiet. The incidents below account for almost all of the operations time spent on this tenant.",
    "The tenant's finance team asked for earlier statements; that request is tracked separately.",
    "Payout timeliness stayed within the contract on all but a handful of days.",
    "Two promotions drove short spikes in refunds, which the reserve absorbed without intervention.",
    "We met the tenant's operations team twice; both meetings were constructive.",
    "Their move towards more bank transfers and fewer card payments continued.",
]


def quarterly_reviews(w: World, incidents: list[Incident]) -> list[Doc]:
    """One review per tenant and quarter, listing that tenant's incidents (keys, dates, symptoms)."""
    rng = w.rng
    out = []
    quarters = [(2025, 2), (2025, 3), (2025, 4), (2026, 1), (2026, 2), (2026, 3)]
    for tname in pools.TENANTS:
        t = w.tenants[tname]
        for year, q in quarters:
            first = dt.date(year, 3 * q - 2, 1)
            nxt = dt.date(year + (q == 4), 1 if q == 4 else 3 * q + 1, 1)
            mine = [i for i in incidents if i.tenant is t and first <= i.opened.date() < nxt]
            pub = nxt + dt.timedelta(days=rng.randrange(5, 25))
            d = Doc(
                f"wiki-{tname}-review-{year}-q{q}",
                f"{t.display} service review, Q{q} {year}",
                "wiki",
                "operations",
                tname,
                pub,
                entities=[tname],
                links=[i.key.lower() for i in mine],
                extra={"author": w.person("operations")},
            )
            b = Body().h(1, d.title)
            b.p(pick(rng, REVIEW_OPENERS).format(disp=t.display))
            b.h(2, "Volumes")
            rows = []
            for m in range(3):
                month = dt.date(year, 3 * q - 2 + m, 1)
                rows.append(
                    [
                        month.strftime("%B"),
                        f"{rng.randrange(80, 900) * 1000:,}",
                        f"{rng.randrange(1, 40) * 100:,}",
                        f"{rng.randrange(9950, 10000) / 100:.2f}%",
                    ]
                )
            b.table(["Month", "Card captures", "Bank transfers", "On-time payouts"], rows)
            b.p(" ".join(rng.sample(REVIEW_NOTES, rng.randrange(2, 5))))
            b.h(2, "Incidents")
            if mine:
                b.table(
                    ["Ticket", "Opened", "What the tenant saw", "Severity"],
                    [
                        [
                            i.key,
                            i.opened.date().isoformat(),
                            pools.SYMPTOMS[i.symptom][2],
                            pick(rng, ["minor", "moderate", "major"]),
                        ]
                        for i in mine
                    ],
                )
                b.p(
                    pick(
                        rng,
                        [
                            "Each ticket holds the investigation and the fix; this page does not repeat them.",
                            "Follow the ticket links for the details of each incident.",
                            "Where a postmortem exists it is linked from the ticket.",
                        ],
                    )
                )
            else:
                b.p("No incidents this quarter.")
            b.h(2, "Changes we made")
            b.ul(
                rng.sample(
                    [
                        "moved the tenant's statements to the new renderer",
                        "added the tenant to the early-warning dashboard",
                        "reviewed the tenant's alert thresholds",
                        "tidied up the tenant's merchant mapping",
                        "rotated the tenant's SFTP credentials on schedule",
                        "added a second on-call contact on the tenant side",
                    ],
                    3,
                )
            )
            b.h(2, "Next quarter")
            b.p(" ".join(rng.sample(prose.LESSONS + prose.CONTRIBUTING, 3)))
            d.body = b.text()
            out.append(d)
    return out


def platform_overview(w: World) -> Doc:
    """A long global architecture note: every service in turn."""
    rng = w.rng
    d = Doc(
        "arch-platform-overview",
        "Settlement platform overview",
        "architecture",
        "engineering",
        "global",
        dt.date(2025, 11, 3),
        entities=sorted(pools.SYSTEMS),
        extra={"author": w.person("engineering")},
    )
    b = Body().h(1, d.title)
    b.p(
        "This is the map. Each service has its own architecture note; this page explains how they "
        "fit together for one business day, from the first capture to the last statement, and "
        "what changes with settlement platform v3."
    )
    b.h(2, "A business day")
    b.ol(
        [
            "batch-scheduler opens the day per tenant and currency.",
            "file-ingest and acquirer-bridge pull acquirer and bank files through the morning.",
            "card-settler computes scheme settlement and fees; fx-rates supplies conversion rates.",
            "At each cutoff the batch closes and ledger-core posts it.",
            "payout-service splits the net position into merchant payouts; reserve-keeper holds "
            "the rolling reserve back.",
            "sepa-connector and clearing-gateway send the money and the files.",
            "recon-engine matches the bank statements against the ledger once they arrive.",
            "notify-hub renders statements for each tenant.",
        ]
    )
    for system, what in pools.SYSTEMS.items():
        b.h(2, system)
        b.p(f"{system} {what}. " + " ".join(rng.sample(prose.EXPLAIN, 2)))
        b.ul(
            [
                f"`{f}`: "
                + pick(rng, ["per batch", "per merchant", "per file", "on retry", "nightly"])
                for f in pools.FUNCTIONS[system]
            ]
        )
        b.h(3, f"{system}: what goes wrong")
        b.p(
            "Typical failures: "
            + "; ".join(pools.CAUSES[c][0] for c in rng.sample(range(len(pools.CAUSES)), 2))
            + ". "
            + " ".join(rng.sample(prose.CONTRIBUTING, 2))
        )
    b.h(2, "What settlement platform v3 changes")
    b.p(
        "Version 3 posts each batch to the ledger in slices rather than in one transaction. A slow "
        "slice no longer blocks the whole batch, and a failed slice can be replayed alone. The "
        "price is a longer posting time for very large batches, which is why the settlement "
        "policy gives migrated tenants an earlier EUR close. Tenants move one at a time; the "
        "deployment system records each cutover."
    )
    b.h(2, "Glossary").p("See the glossary page for the words people use for each step.")
    d.body = b.text()
    return d
