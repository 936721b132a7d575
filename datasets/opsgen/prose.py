# ruff: noqa: E501  (long prose and task strings are data, kept on one line each)
"""Longer prose for the generator: paragraphs, lists and tables composed from pools.

Nothing here states a case's decisive fact; these are the surroundings that make a
document read like an operations document and give retrieval something to wade through.
"""

from __future__ import annotations

import re

from . import pools
from .common import Body, pick

CAUSE_WORDS = re.compile(
    r"(?i)root cause|because|caused by|due to|which is why|that is how|as a result"
)

CONTEXT = [
    "It is month-end for them, so every hour of doubt costs their finance team overtime.",
    "Volumes were normal for a {weekday}; nothing unusual was scheduled.",
    "The client was polite but firm on the call and wants a written explanation.",
    "Their auditors are on site this week, which makes the timing awkward.",
    "This is the first report of its kind from this tenant in the last quarter.",
    "The account manager has been copied and will join the next call.",
    "They run their own ledger export at 07:00, which is how they spotted it.",
    "They have asked whether other tenants are affected; we have not answered yet.",
    "Their treasury lead asked for a single point of contact until this is closed.",
    "The batch in question was larger than usual after a promotion weekend.",
]
SUPPORT_STEPS = [
    "Confirmed the client's figures against the statement we sent.",
    "Checked the status page and the incident channel for anything related.",
    "Asked the client for a screenshot of their bank portal.",
    "Pulled the batch summary from the operations console.",
    "Verified the merchant list against the tenant's onboarding sheet.",
    "Looked for duplicate tickets from the same tenant this week.",
    "Told the client we would update them within two hours.",
    "Recorded the affected business date and currency on the ticket.",
]
CHECKED = [
    "scheduler history for the business date",
    "ingest logs for the acquirer file",
    "the ledger replica's lag graph",
    "recent config merges for the tenant",
    "the deploy log for the previous 48 hours",
    "the bank connector's error rate",
    "queue depth on the posting workers",
    "the tenant's feature flags",
    "disk and memory on the batch hosts",
    "the alert history for the service",
]
EXPLAIN = [
    "The code path is old and only runs for tenants with more than one currency.",
    "Tests covered the happy path but not a retry in the middle of a batch.",
    "The alert that should have caught this was muted during last month's migration.",
    "Nothing in the logs looked alarming at the time; the warning level was wrong.",
    "Staging does not have a tenant with this volume, so we never saw it there.",
    "The behaviour changed quietly in a library upgrade two releases ago.",
    "A config value that is usually set per tenant fell back to the platform default.",
    "The on-call runbook pointed at the right service but the wrong dashboard.",
]
FIX_TESTS = [
    "Replayed the failing batch on staging with the patch: totals match.",
    "Added a regression test with the exact input from production.",
    "Ran the tenant's last seven days through the new code in dry-run mode.",
    "Checked the change against two other tenants with similar volumes.",
    "Peer-reviewed by the owning team and by ledger-core.",
]
ROLLBACK = [
    "Rollback is the previous build; no data migration involved.",
    "If anything looks off after deploy, flip the flag back and page me.",
    "Rollback plan: redeploy the last good build, then rerun the batch by hand.",
]
LOG_LINES = [
    "INFO  batch opened tenant={t} currency={c}",
    "INFO  fetched file rows={n}",
    "WARN  slow query on postings ({ms} ms)",
    "INFO  posting slice {k}/8 done",
    "WARN  retrying request attempt=2",
    "INFO  handing off to payout-service",
    "WARN  lag on replica {ms} ms",
    "INFO  statement render queued",
]
CONTRIBUTING = [
    "The alert threshold was set for average days, not for the Monday peak.",
    "Two teams each assumed the other owned the failing job.",
    "The runbook described the old topology.",
    "A manual step in the release checklist was skipped under time pressure.",
    "Monitoring checked that the job finished, not that its output was right.",
    "The tenant's configuration had drifted from the template over two years.",
    "Nobody was on call for the service over the weekend.",
]
LESSONS = [
    "Checks that compare our totals with the bank's belong before the payout, not after.",
    "A quiet warning is worse than a loud failure when money is involved.",
    "Tenants notice before we do more often than we like; the alerting has to be tenant-aware.",
    "Runbooks need an owner who reads them after every incident.",
    "The fix was small; finding it took the time. Better logs are the real action item.",
]
FAQ = [
    (
        "Can I rerun a batch that has already closed?",
        "Only with a ticket and the settlement on-call lead's approval.",
    ),
    (
        "Who tells the tenant?",
        "Support, once engineering has written the first finding on the ticket.",
    ),
    (
        "Do I need to stop payouts?",
        "If there is any chance money moved twice, yes, for that tenant.",
    ),
    (
        "What if the bank is the problem?",
        "Open a case with the bank and keep the tenant's ticket as the record.",
    ),
    (
        "Where do the error codes come from?",
        "Each service raises its own E-codes; the code names the function.",
    ),
    (
        "How long do we keep the files?",
        "As long as the retention policy says; never delete by hand.",
    ),
]


def weekday(d) -> str:
    return d.strftime("%A")


def context_para(rng, day) -> str:
    return " ".join(
        s.format(weekday=weekday(day)) for s in rng.sample(CONTEXT, rng.randrange(1, 4))
    )


def log_block(rng, tname: str, cur: str, n: int | None = None) -> str:
    lines = []
    h, m = rng.randrange(4, 9), rng.randrange(60)
    for _ in range(n or rng.randrange(3, 8)):
        m += rng.randrange(1, 9)
        h += m // 60
        m %= 60
        lines.append(
            f"{h:02d}:{m:02d}:{rng.randrange(60):02d} "
            + pick(rng, LOG_LINES).format(
                t=tname,
                c=cur,
                n=rng.randrange(100, 90000),
                ms=rng.randrange(200, 9000),
                k=rng.randrange(1, 9),
            )
        )
    return "\n".join(lines)


def runbook_scenarios(rng, b: Body, system: str, k: int) -> None:
    for s in rng.sample(range(len(pools.SYMPTOMS)), k):
        ev, _ask, short = pools.SYMPTOMS[s]
        b.h(3, f"Scenario: {short}")
        b.p(
            f"You will usually hear about this one as: {ev}. "
            + pick(
                rng,
                [
                    f"Start with {system} and work outwards.",
                    "Do not start fixing before you know how many merchants are involved.",
                    "It looks alarming but is usually contained to one tenant.",
                    "Check whether it is one tenant or all of them before paging anyone.",
                ],
            )
        )
        b.ol(
            rng.sample(
                [
                    "Note the tenant, the business date and the currency.",
                    f"Open the {system} dashboard for the window in question.",
                    "Stop the next payout for the tenant if money may have moved twice.",
                    "Find the first error code in the logs and write it on the ticket.",
                    "Compare the batch total with the 7-day median.",
                    "Check the deploy log for the last 48 hours.",
                    "Ask the bank or acquirer for their view if the file looks wrong.",
                    "Hand over to engineering with what you found.",
                ],
                rng.randrange(3, 7),
            )
        )
        b.p(
            pick(
                rng,
                [
                    "If that does not explain it within 30 minutes, escalate.",
                    "Write down what you tried even if it did not help.",
                    "Most of the time the second step already tells you enough.",
                ],
            )
        )


def arch_extras(rng, b: Body, system: str) -> None:
    b.h(2, "Data model")
    cols = rng.sample(
        [
            "batch_id",
            "tenant",
            "currency",
            "business_date",
            "amount_minor",
            "merchant_id",
            "status",
            "idempotency_key",
            "created_at",
            "attempt",
        ],
        6,
    )
    b.table(
        ["Column", "Type", "Notes"],
        [
            [
                c,
                pick(rng, ["text", "bigint", "date", "timestamptz"]),
                pick(rng, ["indexed", "not null", "nullable", "part of key", ""]),
            ]
            for c in cols
        ],
    )
    b.h(2, "Sequence")
    b.ol(
        rng.sample(
            [
                "batch-scheduler opens the business day and emits a start event.",
                f"{system} picks up the event and reads its input.",
                "Work is split per tenant and per currency.",
                "Each slice is written in a single transaction.",
                "A completion marker is written when every slice succeeded.",
                "notify-hub is told the outcome and renders statements.",
                "Metrics for duration and row counts are exported.",
                "Failures are retried with backoff, up to the configured ceiling.",
            ],
            rng.randrange(5, 8),
        )
    )
    b.h(2, "Service levels")
    b.table(
        ["Measure", "Target"],
        [
            ["availability", pick(rng, ["99.9%", "99.95%", "99.5%"])],
            ["p95 batch duration", f"{rng.randrange(4, 40)} minutes"],
            ["alert to acknowledge", f"{rng.randrange(5, 16)} minutes"],
        ],
    )
    b.h(2, "Deployment")
    b.p(
        pick(
            rng,
            [
                f"{system} deploys through the standard pipeline with a canary tenant first. Tenant "
                "rollouts are recorded by the deployment system, one record per rollout.",
                f"Releases of {system} go out on weekdays before 15:00 CET, never during a batch close.",
                f"{system} ships twice a week. Emergency fixes go through the same pipeline with a "
                "second approver.",
            ],
        )
    )
    b.p(" ".join(rng.sample(EXPLAIN, 2)))


def policy_extras(rng, b: Body) -> None:
    b.h(2, "Definitions")
    b.ul(
        rng.sample(
            [
                "**Tenant**: a client of the platform with its own batches.",
                "**Batch**: all captures of one tenant, currency and business date.",
                "**Business day**: a day on which the tenant's banks settle.",
                "**Policy owner**: the person accountable for this document.",
                "**Operations**: the shift team that runs the daily batches.",
            ],
            3,
        )
    )
    b.h(2, "Responsibilities")
    b.table(
        ["Who", "Does what"],
        [
            ["Policy owner", "keeps this document current"],
            ["Operations", "applies it during the shift"],
            ["Engineering", "builds the controls that enforce it"],
        ],
    )
    b.h(2, "Monitoring").p(
        pick(
            rng,
            [
                "Compliance with this policy is reviewed monthly from the operations log.",
                "Breaches are raised as tickets and reviewed in the weekly operations meeting.",
                "Automated checks report breaches to the policy owner the next morning.",
            ],
        )
    )


VERIFY = [
    "smoke batch settled for the canary tenant",
    "error rate flat for 30 minutes after deploy",
    "no new E-codes in the logs",
    "posting counts match the previous day within 2%",
    "statement rendering unaffected",
    "dashboards green across all regions",
    "on-call informed in the deploy channel",
]
ROLLOUT_NOTES = [
    "Deployed outside the batch-close window as required.",
    "Canary first, then the remaining replicas in two waves.",
    "The change is behind a per-tenant flag, enabled for this tenant only.",
    "No schema change; safe to roll back by redeploying the previous build.",
    "Config-only change on top of the code fix, applied in the same pipeline run.",
    "The pipeline paused for manual approval before the second wave.",
]
HANDOVER = [
    "At the end of the shift, write the state of every open batch in the handover note.",
    "If you paused a tenant's payouts, say so in the handover in bold; it is the thing most often missed.",
    "Link tickets rather than copying their content into the handover note.",
    "Leave the incident channel open until the next shift has acknowledged the handover.",
]
BACKGROUND = [
    "Most nights this service does nothing interesting. When it breaks, it breaks for many tenants at once, so speed matters more than elegance.",
    "This page grew out of three incidents in the first half of 2025. It keeps what worked and drops what did not.",
    "The service is owned by engineering, but operations is usually first to notice a problem, which is why this runbook exists.",
    "Read this once calmly before your first shift; during an incident you will only have time for the checklists.",
    "Tenants see the effects of this service directly in their bank accounts, so every action here has a customer-visible side.",
]
CHATTER = [
    "Adding the client's latest email for context: they want a call tomorrow at 10:00 CET.",
    "I have updated the customer-facing status note; nothing new to add technically.",
    "Reminder that their finance close is on the 3rd, so we have a couple of days at most.",
    "The account manager asks whether a credit note is appropriate; leaving that to the review.",
    "Linked the shift log entry from last night for completeness.",
]


def rollout_tail(rng, b: Body) -> None:
    b.h(2, "Verification").ul(rng.sample(VERIFY, rng.randrange(2, 5)))
    if rng.random() < 0.7:
        b.h(2, "Notes").p(" ".join(rng.sample(ROLLOUT_NOTES, rng.randrange(1, 3))))


def runbook_head(rng, b: Body) -> None:
    b.h(2, "Background").p(" ".join(rng.sample(BACKGROUND, rng.randrange(2, 4))))


def runbook_tail(rng, b: Body, system: str) -> None:
    b.h(2, "Dashboards")
    b.table(
        ["Dashboard", "What to look at"],
        [
            [f"{system} overview", "error rate and batch duration"],
            ["ledger postings", "postings per minute, by tenant"],
            ["bank connectors", "rejections and timeouts"],
        ][: rng.randrange(2, 4)],
    )
    b.h(2, "Handover").p(" ".join(rng.sample(HANDOVER, rng.randrange(2, 4))))
