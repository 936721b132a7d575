# ruff: noqa: E501  (prose is data, kept on one line per sentence)
"""More prose for the long-document shelf: disputes, treasury and tenant-terms clauses, runbook
section headings per topic, and design-specific paragraphs (see ``longprose`` for the rules)."""

from __future__ import annotations

DISPUTES_TOPICS: dict[str, tuple[str, list[str]]] = {
    "purpose": (
        "Purpose and status",
        [
            "This handbook sets out how {org} handles disputes raised by cardholders, merchants, tenants and banks, and how goodwill credits are granted.",
            "It applies to every tenant and every currency. A tenant contract may shorten a deadline in this handbook but may not lengthen it.",
            "Deadlines in this handbook are counted in calendar days unless a clause says business days.",
            "Where a scheme rule or a bank's rule sets a shorter deadline than this handbook, the shorter deadline applies.",
            "The policy owner keeps this handbook and publishes each version with its effective date; a new version replaces the previous one in full from that date.",
        ],
    ),
    "intake": (
        "Intake of disputes",
        [
            "Every dispute is logged as a ticket for the tenant concerned on the day it is received, with the scheme or bank reference, the amount and the deadline.",
            "Disputes arriving by email are copied into the ticket in full; the email itself is not the record.",
            "A dispute that concerns more than one tenant is split into one ticket per tenant, linked to each other.",
            "The intake team checks on the first day that the disputed transaction exists in the ledger and belongs to the tenant named.",
            "Where the disputed amount has already been refunded to the cardholder, the dispute is closed with a note and the tenant is told.",
            "The deadline is written in the ticket title, so that it is visible in every queue view.",
        ],
    ),
    "committee": (
        "The disputes committee",
        [
            "The disputes committee meets twice a week and decides disputes that operations may not decide alone.",
            "Its members are the head of operations, a risk analyst and the payments controller; two members make a quorum.",
            "The committee's decisions are recorded on the dispute ticket with the names of the members who took part.",
            "A member who dealt with the dispute at intake does not take part in the committee's decision on it.",
            "The committee may ask the tenant for further evidence before deciding, and the deadline is extended only if the scheme or bank allows it.",
        ],
    ),
    "evidence": (
        "Evidence",
        [
            "Evidence sent to an acquirer or bank is assembled from the ledger, the capture record and the tenant's own records; nothing is sent that the tenant has not seen.",
            "Evidence packs are reviewed by a second person before they are sent.",
            "Where the tenant does not provide its part of the evidence in time, the dispute is conceded and the tenant is told why.",
            "Copies of everything sent are attached to the ticket, with the time they were sent.",
            "Evidence containing cardholder data is sent only through the acquirer's secure channel.",
        ],
    ),
    "deadlines": (
        "Deadlines",
        [
            "The clock for each deadline starts on the day the notification is received by the platform, not the day it is read.",
            "A dispute whose deadline falls on a weekend or public holiday must be answered on the preceding business day.",
            "Deadlines are tracked in the disputes queue, which highlights every dispute due within three days.",
            "A missed deadline is reported to the head of operations on the same day and counted in the quarterly review.",
        ],
    ),
    "goodwill": (
        "Goodwill credits",
        [
            "A goodwill credit is a payment to a tenant or a merchant that the platform makes without being obliged to, to resolve a complaint.",
            "Every goodwill credit is recorded on the tenant's ticket with its reason and the role that granted it.",
            "The roles that may grant a goodwill credit of each size are listed in Schedule 1.",
            "Goodwill credits are paid in the next payout run and shown as a separate line on the tenant's statement.",
            "The total of goodwill credits granted to one tenant in a quarter is reported at that tenant's service review.",
        ],
    ),
    "records": (
        "Records",
        [
            "Dispute tickets are kept for the periods in the settlement file retention policy.",
            "The outcome of every dispute, won, lost or conceded, is recorded on the ticket with the date.",
            "Dispute statistics per tenant are produced monthly from the tickets, not from memory or spreadsheets.",
            "Corrections to a dispute ticket are added as notes below the original entry.",
        ],
    ),
    "tenant_comms": (
        "Communication with tenants",
        [
            "Tenants are told of each dispute on one of their merchants within one business day of its intake.",
            "Requests for evidence sent to a tenant state the deadline by which the evidence is needed and the consequence of missing it.",
            "The outcome of each dispute is sent to the tenant when it is known.",
            "Support uses the agreed wording for dispute messages; changes to the wording are agreed with the policy owner.",
        ],
    ),
}

TREASURY_TOPICS: dict[str, tuple[str, list[str]]] = {
    "purpose": (
        "Purpose and access",
        [
            "This handbook describes how treasury manages the platform's own accounts, its liquidity during the business day and its exposure to currency movements.",
            "It is restricted to the treasury group. Figures in it must not be copied into tickets or documents that other groups can read.",
            "Where this handbook and a bank agreement differ, the bank agreement prevails for that bank.",
            "Each version replaces the previous one in full from its effective date.",
        ],
    ),
    "accounts": (
        "Accounts",
        [
            "The operating account receives the proceeds of each batch and funds every payout run.",
            "Each tenant's holding account is kept separate from the operating account and is never used to fund another tenant's payouts.",
            "New accounts are opened only with the approval of the head of treasury and the chief financial officer.",
            "The list of accounts, their banks and their signatories is reviewed every quarter.",
            "Account balances are taken from the bank's own reporting, not from the ledger, for every decision in this handbook.",
        ],
    ),
    "payout_funding": (
        "Funding payout runs",
        [
            "Treasury confirms funding for each payout run in the operations console before the run is released.",
            "If funding cannot be confirmed, the run waits and the settlement lead is told; nobody releases an unfunded run.",
            "Large runs expected at month-end are funded in advance, on the basis of the forecast agreed the previous day.",
            "Transfers between the platform's own accounts need two treasury signatories.",
        ],
    ),
    "forecasting": (
        "Forecasting",
        [
            "Treasury forecasts the next five business days of inflows and outflows every morning from the scheduler's expected batches.",
            "The forecast is compared with the actual figures each evening and large differences are explained in the treasury log.",
            "Tenants' promotion calendars are taken into account when they have been shared with the account managers.",
            "The forecast model is reviewed every six months by the head of treasury.",
        ],
    ),
    "fx": (
        "Currency exposure",
        [
            "Currency positions arise when a tenant's captures and payouts are in different currencies.",
            "Treasury closes currency positions daily, through the dealing banks named in the bank register.",
            "Deals above the dealer's own limit need the approval of the head of treasury before they are placed.",
            "Every deal is confirmed with the bank on the same day and matched against the bank's confirmation.",
        ],
    ),
    "banks": (
        "Bank relationships",
        [
            "Treasury owns the relationship with each settlement bank and keeps the bank contact register.",
            "Bank fees are checked against the agreements every month, and differences are raised with the bank.",
            "Treasury takes part in the annual review of each bank agreement with the legal team.",
            "A bank's credit rating is monitored; a downgrade is reported to the risk committee within one business day.",
        ],
    ),
    "controls": (
        "Controls",
        [
            "The daily cash report is prepared by one member of treasury and checked by another before 11:00 CET.",
            "Signatory lists at every bank are reviewed every quarter and after anyone leaves the team.",
            "Payments from the platform's own accounts are made only through the bank channels, never by telephone instruction.",
            "Treasury's access to bank portals is reviewed monthly by the head of treasury.",
        ],
    ),
}

TENANT_TERMS: dict[str, tuple[str, list[str]]] = {
    "scope": (
        "Scope",
        [
            "These operating terms describe how the platform runs {tenant}'s batches and payouts day to day, in addition to the payments operations handbook.",
            "They were agreed with {tenant}'s operations team and are reviewed with them at least once a year.",
            "Where these terms and the payments operations handbook differ, these terms apply to {tenant} only.",
            "Cutoffs for {tenant} are set by the settlement policy and {tenant}'s settlement schedule; these terms do not repeat them.",
        ],
    ),
    "contacts": (
        "Contacts",
        [
            "{tenant} names an operations contact and a deputy; changes reach the platform through the signed contact form.",
            "The platform's account manager for {tenant} is the first point of contact for anything that is not an incident.",
            "During an incident, support speaks to {tenant}'s operations contact, and engineering joins calls only when support asks.",
            "{tenant}'s finance team receives the daily exceptions report and the monthly fee breakdown.",
        ],
    ),
    "onboarding": (
        "Merchant onboarding",
        [
            "{tenant} sends new merchants in a weekly file; a merchant is live only once its onboarding review is complete.",
            "An application is complete when the merchant's bank details, legal entity and expected volumes have all been provided.",
            "Incomplete applications are returned to {tenant} with a list of what is missing.",
            "Merchants in higher-risk categories are reviewed by risk as well as operations before they go live.",
        ],
    ),
    "payouts": (
        "Payouts",
        [
            "Payouts to {tenant}'s merchants follow the platform's daily payout run; no separate run is scheduled for {tenant}.",
            "{tenant} may ask for a merchant to be put on manual release; the request comes through the ticket queue, not by email.",
            "Payout holds on {tenant}'s merchants are reported to {tenant} on the day they are placed.",
            "Returned payouts for {tenant}'s merchants wait in {tenant}'s holding account until {tenant} confirms new details.",
        ],
    ),
    "reporting": (
        "Reporting",
        [
            "The platform sends {tenant} a daily exceptions report, a monthly fee breakdown and a quarterly service report.",
            "Reports are sent to the addresses on the signed contact form; a change of address takes effect from the next business day.",
            "{tenant} may ask for a report in another format; formats other than the standard ones are produced by engineering and take up to two weeks to set up.",
            "Figures in the reports are taken from the ledger at the time the report is produced and are not revised afterwards.",
        ],
    ),
    "changes": (
        "Changes and maintenance",
        [
            "{tenant} is told of planned maintenance that affects its batches at least five business days in advance.",
            "Changes that {tenant} asks for are raised as requests and scheduled with {tenant}'s operations contact.",
            "Emergency changes during an incident may be made without notice; {tenant} is told of them in the incident summary.",
            "The platform does not deploy changes affecting {tenant} in the last hour before one of its cutoffs.",
        ],
    ),
    "review": (
        "Review of these terms",
        [
            "These terms are reviewed at least once a year, or sooner if {tenant} or the platform asks.",
            "Changes to these terms are agreed in writing by both operations teams and recorded in a new version.",
            "The current version is the one with the latest effective date; earlier versions are kept for reference.",
        ],
    ),
}

RUNBOOK_HEADINGS = {
    "bank-connectivity": [
        "Scope of this runbook", "Channels in use", "Daily connectivity check", "Morning file submissions", "Reading acknowledgement files",
        "Missing acknowledgements", "Rejected payments in an acknowledgement", "Scheme clearing files", "Credential expiry warnings",
        "Key rotation days", "SFTP connection failures", "API channel errors", "Host-to-host channel errors", "Bank maintenance windows",
        "Bank status notices", "Duplicate submissions", "Partial files", "File naming problems", "Backup channel", "Switching back to the primary channel",
        "Contacting the bank", "Recording the bank's case reference", "Telling tenants", "End-of-day checks", "Handover notes", "Related documents",
    ],
    "month-end-close": [
        "Scope of this runbook", "The month-end calendar", "Roles at month-end", "Three days before month-end", "The day before month-end",
        "Freeze preparation", "Reconciliation pack", "Last business day: morning", "Last business day: afternoon", "Last business day: evening",
        "Trial balance export", "Quarter-end differences", "Ledger checks", "Bank statement checks", "Holding account checks", "Fee accruals",
        "Goodwill credits at month-end", "Adjustments during the freeze", "First business day: morning", "First business day: afternoon",
        "Second business day", "Third business day", "Control report sign-off", "Tenant statements", "Audit requests", "Problems seen in past month-ends",
        "Staffing and handovers", "Sign-off calendar", "Related documents",
    ],
    "disaster-recovery": [
        "Scope of this runbook", "What counts as a disaster", "Who decides", "Regional health checks", "Declaring a regional failover",
        "First fifteen minutes", "Freezing payouts", "Failing over the ledger", "Failing over file-ingest", "Failing over the scheduler",
        "Failing over bank channels", "Checking data after failover", "Resuming batches", "Telling tenants and banks", "Running in the secondary region",
        "Failing back", "When recovery is complete", "Records to keep", "Exercises", "Contacts", "Related documents",
    ],
    "card-clearing": [
        "Scope of this runbook", "How clearing works here", "Daily clearing calendar", "Preparing the clearing file", "Checks before upload",
        "Uploading to the scheme", "Scheme acknowledgements", "Rejected records", "Late clearing files", "Replaying a clearing file",
        "Replay limits", "Fee reconciliation", "Chargeback feed", "Interchange differences", "Scheme bulletins", "Currency conversion checks",
        "Clearing on bank holidays", "Scheme maintenance", "Escalating to the scheme help desk", "Telling tenants", "Month-end clearing",
        "Handover notes", "Related documents",
    ],
    "payout-exceptions": [
        "Scope of this runbook", "What an exception is", "The exceptions queue", "Daily triage", "Missing bank details", "Returned payouts",
        "Closed merchant accounts", "Amounts above limits", "Duplicate payout suspicions", "Currency mismatches", "Sanctions screening hits",
        "Holds placed by risk", "Holds placed by operations", "Ageing exceptions", "The weekly exceptions review", "Releasing an exception",
        "Writing off small amounts", "Telling tenants", "Telling merchants", "Reports", "Handover notes", "Related documents",
    ],
    "incident-command": [
        "Scope of this runbook", "Roles in an incident", "Opening an incident", "The first update", "Choosing an incident commander",
        "The scribe", "The incident channel", "Severity levels", "Bringing in engineering", "Bringing in treasury", "Bringing in risk",
        "Talking to tenants", "Talking to banks", "Decisions during an incident", "Workarounds", "Handing over", "Long incidents",
        "Overnight incidents", "Closing an incident", "After the incident", "The postmortem", "Tracking actions", "Exercises", "Related documents",
    ],
}

TENANT_RUNBOOK_HEADINGS = [
    "Scope", "The tenant in brief", "Start of the day", "Batches to watch", "Acquirer files", "Bank files", "Payout run",
    "Merchant questions", "Manual release list", "Payout holds", "Returned payouts", "Statements", "Fee breakdown",
    "Disputes", "Incidents", "Exceptions report", "Month-end", "Bank holidays", "Planned maintenance", "Contacts", "End of the day",
    "Handover", "Known quirks", "Related documents",
]

DESIGN_SPECIFIC = {
    "multi-region": [
        "The platform runs in two regions. The primary region serves all traffic; the secondary region holds replicas of every database and idle capacity for every service.",
        "Database replication is asynchronous, which is why a recovery point objective above zero is unavoidable for the ledger.",
        "Bank channels are configured in both regions, but each bank accepts files from one region at a time; switching requires a call to the bank's help desk.",
        "Failover is a decision taken by people, not by automation; the health checks inform the decision but do not make it.",
        "File storage is replicated object storage; a file written in the primary region is readable in the secondary region within minutes.",
    ],
    "ledger-slicing": [
        "Settlement platform v3 posts each batch to the ledger in slices rather than in one transaction. A slow slice no longer blocks the whole batch.",
        "A slice is a contiguous range of postings within one batch; its boundaries are chosen so that no merchant's postings are split between slices.",
        "Each slice is committed on its own and recorded in the slice table with its batch identifier and sequence number.",
        "A failed slice can be replayed alone; slices already committed are not touched.",
        "The price of slicing is a longer total posting time for very large batches, which the settlement policy accounts for.",
    ],
    "payout-pipeline": [
        "payout-service splits each tenant's net position into merchant payouts, applies holds and sends the payout files to the banks.",
        "Work is partitioned by tenant and currency; a worker never holds payouts of two tenants at once.",
        "Payout files are built per bank and signed before they are staged for sending.",
        "Holds are read from the risk service at the moment each payout is built, never cached for the whole run.",
        "The pipeline emits a status event for every payout, which notify-hub turns into the tenant's payout status feed.",
    ],
    "recon-matching": [
        "recon-engine matches bank statement lines against ledger postings, first by reference, then by amount and date, then by fuzzy rules.",
        "Matching runs when each statement arrives and again at the end of the business day.",
        "Matches are proposals until they are confirmed; confirmed matches are immutable.",
        "Fuzzy matches are never confirmed automatically; they go to a queue for the payments controller's team.",
        "Statement lines from one tenant's account are never matched against another tenant's postings.",
    ],
    "notifications": [
        "notify-hub sends statements, payout status updates and incident notices to tenants by email, SFTP and webhook.",
        "Each tenant chooses its channels per message type; the choice is stored in the tenant configuration table.",
        "Webhook deliveries are signed, and tenants verify the signature with a key published in their portal.",
        "Statements are rendered from templates; a template change is deployed like code and recorded by the deployment system.",
        "Delivery failures are visible to support in the console, per tenant and per message.",
    ],
    "key-management": [
        "Signing keys for payment files are held in the hardware security module; services ask the module to sign and never see the private key.",
        "Each bank has its own signing key, so that a compromised key affects only one bank relationship.",
        "Key rotations are scheduled in the key register and announced to the bank in advance through its channel.",
        "Channel credentials, such as SFTP keys and API client certificates, are stored in the secret store and fetched at start-up.",
        "Key ceremonies are attended by two people from security and one from treasury, and are recorded.",
    ],
    "fx-cache": [
        "fx-rates fetches conversion rates from two providers every fifteen minutes during the business day and caches them.",
        "When the two providers differ by more than a small tolerance, the older rate is kept and an alert is raised.",
        "Batches use the rate in force at their cutoff; the rate used is stored with the batch.",
        "The markup applied to conversions is read from the FX markup policy and never hard-coded.",
    ],
    "statement-rendering": [
        "Statements are rendered by notify-hub from the ledger after each tenant's last batch of the day has posted.",
        "Rendering is queued per tenant, so that one tenant's large statement does not delay the others.",
        "Each statement carries the identifiers of the batches it covers, which makes it possible to trace any line back to its batch.",
        "Re-rendering a statement produces a new version; the old version remains available to the tenant.",
    ],
}

# --------------------------------------------------------------------------------------
# sentence templates filled per use: worked examples, discussion, commentary. Slots:
# {tenant} {system} {bank} {cur} {amount} {n} {n2} {month} {weekday} {person} {person2}
# {minutes} {hours} {pct}

HANDBOOK_EXAMPLES = [
    "Example. On a {weekday} in {month}, one tenant's {cur} batch closed with a difference of {amount} against the acquirer file. The batch stayed closed until the difference was explained, which took {hours} hours; the cause was a refund file that had arrived late.",
    "Example. A merchant asked support to release a held payout of {amount} because its own bank had confirmed the account details. The hold had been placed by risk, so support passed the request to risk rather than to the settlement lead.",
    "Example. During a {system} incident in {month}, the settlement lead paused one tenant's payout run for {minutes} minutes while engineering checked the postings. The pause, its reason and the restart were recorded on the ticket as the clause requires.",
    "Example. Two members of the same shift asked each other to approve their manual adjustments. Both approvals were refused at the next control check, because neither approver had checked the beneficiary against the ticket.",
    "Example. A tenant's finance team called the duty manager directly to ask for a payout to be brought forward. The duty manager declined and asked them to raise a ticket, which was then handled in the normal queue the same morning.",
    "Example. {bank} announced maintenance on its payment channel at two days' notice. Operations told the affected tenants the same day and moved {n} payout files to the backup channel, with treasury's agreement.",
    "Example. An engineer fixed a stuck {system} worker by restarting it during the last hour before a cutoff. The restart itself was harmless, but it was a change inside the protected hour, so it was reviewed at the next change advisory board.",
    "Example. A return arrived for a payout of {amount} with a reason code pointing at a closed account. The funds waited in the tenant's holding account for {n} business days until the tenant sent new details on the signed form.",
    "Example. In {month}, {n} closed batches of one tenant needed manual attention on the same day after an acquirer resent its files. The settlement lead stopped after the limit in this handbook and asked the duty manager for an exception, which was recorded in the exceptions register.",
    "Example. An investigation export of {n2} ledger rows was left in a shared folder after its ticket closed. It was found at the monthly access review and deleted; the person who created it was reminded of the rule.",
    "Example. A screenshot of a bank portal was attached to a ticket with no description. The reviewer could not tell which account it showed, so the evidence had to be gathered again.",
    "Example. A new team member shadowed {n} shifts and asked to work alone on a quiet {weekday}. The request was refused until the supervised shifts had been completed.",
    "Example. A tenant asked whether another tenant had the same problem with {system} in {month}. Support did not answer the question and passed it to the duty manager, who replied in general terms.",
    "Example. An audit sample in {month} found {n} batches whose control report had been signed after 10:00 CET. The finding was closed once the sign-off deadline was added to the shift checklist.",
    "Example. The change advisory board deferred a {system} upgrade because it would have run across a month-end. It went ahead {n} days later, outside the freeze.",
    "Example. Treasury was told of a manual payout of {amount} only after it had been sent. No harm followed, but the omission was reported in the weekly operations review.",
]

RUNBOOK_EXAMPLES = [
    "Last time this happened, on a {weekday} in {month}, the first alert fired {minutes} minutes after the problem started; the tenant noticed before we did.",
    "In {month} this section took {minutes} minutes from start to finish. Most of the time went into finding the right batch identifier.",
    "A common mistake here is to retry before checking the {bank} status page. In {month} that cost {hours} hours, because the bank was already working on the fault.",
    "When {system} was slow in {month}, the queue depth reached {n2} units before anyone looked at it. Watch the queue, not only the error rate.",
    "On a month-end {weekday} the same check showed {n} files waiting; all of them went out once the channel recovered, without any manual step.",
    "The {cur} batches are the usual suspects for this problem, because their acquirer sends corrections late in the day.",
    "If the figures differ by less than {amount} and the difference is explained by timing, write the explanation on the ticket and carry on.",
    "{person} wrote the first version of this section after an incident in {month}; ask them if something here does not match what you see.",
    "Expect this step to take {minutes} minutes on a normal day and up to {hours} hours at month-end.",
    "In the last exercise, {n} of the people taking part skipped this step. It is short, and it matters.",
    "The error usually clears on its own within {minutes} minutes; if it has not, it will not, and you should escalate.",
    "When the check fails on a {weekday} morning, it is most often because the overnight files from {bank} were late.",
]

DISCUSSION_TEMPLATES = [
    "{person} asked whether the figures included the {month} promotion weekend; {person2} confirmed that they did and that the trend holds without it.",
    "{person} pointed out that {n} of the incidents in the period involved {system}, and asked whether that was a coincidence. Engineering will look into it.",
    "{person2} noted that the {cur} batches had run late on {n} days and asked for the reasons to be listed at the next meeting.",
    "The board discussed whether {bank}'s maintenance notices met the notice period in its agreement. {person} will check the agreement.",
    "{person} reported that the runbook for {system} had been walked through with two new team members, who found {n} steps that no longer matched the console.",
    "{person2} raised the time spent on late acquirer files, about {hours} hours a week, and asked whether the acquirers could be held to their delivery times.",
    "Members agreed that the dashboard for {system} should show the age of the oldest unprocessed unit per tenant, as the design proposes.",
    "{person} summarised the last month-end: the trial balance was exported on time and {n} adjustments were needed during the freeze, all approved.",
    "{person2} said that support had received {n} questions from tenants about the new statement layout, most of them about the fee lines.",
    "The board asked whether the weekend rota could absorb another tenant; {person} thought it could until the end of the quarter.",
    "{person} presented the number of manual interventions per tenant; one tenant accounted for {pct} of them, mostly releases from the manual release list.",
    "There was a short discussion of the audit finding on approval rights. {person2} confirmed that unused rights had been removed on schedule.",
    "{person} reported that the table-top exercise in {month} went well and that the findings had been added to the incident command runbook.",
    "{person2} asked for the {system} alert thresholds to be reviewed before the next month-end; the engineering lead agreed.",
    "Members noted that the bank contact register had not been updated since {month}. {person} will update it.",
    "{person} explained that the queue for {system} had backed up on a {weekday} because a worker image had been deployed with the wrong configuration.",
]

TENANT_COMMENTARY = [
    "{tenant}: volumes grew by {pct} compared with the previous quarter, mostly in {cur}. No incident affected payouts.",
    "{tenant}: the quarter was quiet apart from {n} late acquirer files, which moved captures into the next day's batch.",
    "{tenant}: one incident involving {system} delayed a payout run by {minutes} minutes; the tenant was told within the notice deadline.",
    "{tenant}: the tenant asked for statements in a second format, which engineering set up during the quarter.",
    "{tenant}: dispute volumes rose after a promotion; all evidence packs were sent within the handbook's deadlines.",
    "{tenant}: {n} merchants were put on manual release at the tenant's request and {n2} were taken off it again.",
    "{tenant}: the service review took place as planned; the tenant raised the timing of maintenance notices.",
    "{tenant}: bank transfers grew faster than card captures for the second quarter in a row.",
    "{tenant}: the tenant changed its operations contact; the signed form arrived and was processed the same day.",
    "{tenant}: no incidents, no complaints and no open actions at the end of the quarter.",
]

DESIGN_MEASUREMENTS = [
    "On a normal weekday {system} processes about {n2} units of work; on a Monday the figure is about half as much again.",
    "The median time for one unit of work is {minutes} milliseconds; the 95th percentile is about four times that, driven by calls to ledger-core.",
    "Over the last quarter {n} incidents touched {system}; in most of them the service recovered by itself and the manual step was the restart of the batch.",
    "Operations spends about {hours} hours a week on manual steps around {system}, most of them at month-end.",
    "The state table grows by about {n2} rows a day and is pruned after ninety days.",
    "A full rebuild of the service's state from the ledger takes about {hours} hours and has been needed {n} times in the last year.",
]

MORE_HANDBOOK_TOPICS: dict[str, tuple[str, list[str]]] = {
    "holding": (
        "Holding accounts",
        [
            "Each tenant has one holding account per currency, opened when the tenant goes live.",
            "Funds enter a holding account only for a reason this handbook names: a payout hold, a return, an unmatched receipt or a tenant instruction.",
            "The balance of every holding account is listed on the daily control report with the age of the oldest item in it.",
            "Funds are paid out of a holding account only on a recorded instruction, checked by a second approver.",
            "Items older than thirty days in a holding account are reviewed with the tenant at its next service review.",
            "Interest is not paid on holding account balances unless the tenant's contract says so.",
        ],
    ),
    "bank_holidays": (
        "Bank holidays",
        [
            "Operations keeps the bank holiday calendar for every settlement bank and currency, and publishes it for the coming year each November.",
            "A payout due on a bank holiday is sent on the next business day; tenants are reminded of this a week before each holiday.",
            "Regional holidays that close a tenant's own bank but not the platform's settlement bank are recorded in the tenant's operating terms.",
            "The scheduler reads the calendar; nobody changes it by hand during a business day.",
            "Where two banks in a payment chain have different holidays, the later of the two dates applies.",
        ],
    ),
    "statements": (
        "Statements",
        [
            "Every tenant receives a statement for each business day on which it had activity, and a nil statement on request.",
            "Statements are produced from the ledger after the last batch of the day has posted and are never edited afterwards.",
            "A correction to a statement is issued as a new version with the reason for the change on its first page.",
            "Tenants may ask for statements in more than one format; each format carries the same figures.",
            "Support answers questions about statements using the statement itself and the ledger, not memory.",
        ],
    ),
    "fees": (
        "Fees on the statement",
        [
            "Platform fees, scheme fees and bank charges are shown as separate lines so that a tenant can check each against its contract.",
            "Fee changes take effect from the first day of a month and are announced at least thirty days in advance.",
            "A fee charged in error is refunded in the next payout run and shown on the statement as a correction.",
            "Disputes about fees are handled by the account manager with the payments controller, not by the shift.",
        ],
    ),
    "screening": (
        "Screening",
        [
            "Every payout is screened against the sanctions lists before it is sent; a possible match stops that payout only.",
            "Possible matches are reviewed by the compliance team, who record their decision on the payout record.",
            "Operations does not release a stopped payout and does not tell the merchant why it was stopped.",
            "The screening lists are updated at least daily; an update that fails raises an alert to compliance and to engineering.",
            "Screening results are kept with the payout record for the retention period of the settlement files.",
        ],
    ),
    "continuity": (
        "Business continuity",
        [
            "If the primary office cannot be used, the shift continues from home using the same console and the same procedures.",
            "A regional failover of the platform is decided by the duty manager with the engineering lead, following the disaster recovery runbook.",
            "During a failover no manual intervention is made unless the incident commander asks for it.",
            "The continuity plan is exercised twice a year; one of the exercises includes a bank.",
            "Contact details for the continuity plan are kept in two places, one of them outside the platform.",
        ],
    ),
}

MORE_CONTRACT_CLAUSES: dict[str, tuple[str, list[str]]] = {
    "continuity": (
        "Business continuity",
        [
            "The Bank shall maintain a business continuity plan for the Services and test it at least once a year.",
            "The Bank shall give the Customer a summary of the results of each test within thirty days of the test.",
            "If the Bank invokes its business continuity plan, it shall tell the Customer without delay and keep the Customer informed until normal service resumes.",
        ],
    ),
    "insurance": (
        "Insurance",
        [
            "The Bank shall maintain professional indemnity and cyber insurance with reputable insurers at levels appropriate to the Services.",
            "The Bank shall provide evidence of its insurance on request, not more than once a year.",
        ],
    ),
    "compliance": (
        "Compliance with laws",
        [
            "Each party shall comply with the laws and regulations that apply to it in connection with this Agreement, including those on anti-money laundering and sanctions.",
            "The Bank may refuse to execute a payment instruction if executing it would breach a law or a sanctions regime, and shall tell the Customer unless the law forbids it.",
            "Each party shall maintain policies against bribery and corruption and shall tell the other party of any breach that affects this Agreement.",
        ],
    ),
    "records": (
        "Records and reporting",
        [
            "The Bank shall keep records of every Payment File and acknowledgement for at least six years.",
            "The Bank shall give the Customer a monthly report of volumes, rejections and availability for each Channel.",
            "The parties shall meet at least once a quarter to review the Services, and the Bank shall prepare the figures for the meeting.",
        ],
    ),
    "change_control": (
        "Change control",
        [
            "Either party may propose a change to the Services by written notice describing the change and the reasons for it.",
            "The Bank shall respond to a proposed change within twenty Business Days with its effect on the Services, the fees and the timetable.",
            "No change is binding until it has been agreed in writing under the variation clause.",
        ],
    ),
    "exit": (
        "Exit assistance",
        [
            "On notice of termination, the Bank shall provide reasonable assistance to move the Services to a new provider, at the fees in Schedule 3.",
            "Exit assistance includes the continued processing of Payment Files during an agreed transition period of up to ninety days.",
            "The Bank shall provide the Customer with a copy of its data in an agreed format before the end of the transition period.",
        ],
    ),
}

RUNBOOK_STEPS = {
    "bank-connectivity": [
        "List today's outbound files for {bank} in the transfer log and note which have no acknowledgement yet.",
        "Check the certificate expiry dates shown on the channel page; anything under fourteen days needs a ticket.",
        "Run the channel test from the console and keep its output on the ticket.",
        "Compare the number of payments in the acknowledgement with the number in the file.",
        "If the bank rejected individual payments, copy their reason codes into the exceptions queue.",
        "Check whether the file name matches the bank's naming rule for the day; a wrong date in the name is the usual cause of silent rejections.",
        "Confirm with the bank's help desk that they see the file on their side before you send anything again.",
        "Switch the tenant's next file to the backup channel only after treasury has agreed.",
        "When the primary channel is back, send one small file through it before switching everything back.",
        "Record the start and end of any channel outage in the bank's entry of the contact register.",
    ],
    "month-end-close": [
        "Check that the month-end calendar for this month has been published and that every tenant's last batch time is on it.",
        "Confirm the staffing plan for the last business day and the first two business days of the new month.",
        "Run the holding account report and list every item older than thirty days.",
        "Post the fee accrual journal from the prepared file; do not type amounts by hand.",
        "Compare the ledger balance of each operating account with the bank's closing balance.",
        "Export the trial balance from the ledger console and store it in the month-end folder with the date in its name.",
        "Prepare the reconciliation pack: bank balances, ledger balances, holding accounts and open differences.",
        "Check that no adjustment was posted during the freeze without a recorded approval.",
        "Send the control report for sign-off once every difference on it has an explanation.",
        "Release the tenant statements for the month only after the control report is signed.",
        "Answer audit requests from the month-end folder; do not re-run reports for auditors.",
    ],
    "disaster-recovery": [
        "Open the disaster recovery bridge and name the incident commander in the first message.",
        "Stop the next payout run for every tenant until the ledger has been checked in the secondary region.",
        "Ask the database team to promote the ledger replica in the secondary region and to confirm the last applied transaction.",
        "Point the scheduler at the secondary region and confirm that it sees every open batch.",
        "Ask each bank's help desk to accept files from the secondary region, starting with the banks that have payouts due first.",
        "Compare batch counts and ledger totals between the last known good state and the secondary region.",
        "Resume batches one tenant at a time, starting with the tenant whose cutoff is nearest.",
        "Keep a timeline on the incident ticket: every decision, with its time and who took it.",
        "Agree with the banks when to switch back before failing back to the primary region.",
        "Write the recovery times achieved for each service on the ticket before closing it.",
    ],
    "card-clearing": [
        "Check that the clearing file for each scheme has been built and signed before the upload window opens.",
        "Compare the record count and the total amount of the clearing file with the card-settler summary.",
        "Upload the file through the clearing gateway and keep the upload receipt on the ticket.",
        "Read the scheme acknowledgement and list any rejected records with their reason codes.",
        "Correct rejected records only through the console's correction screen, which keeps the history.",
        "Check the scheme bulletin page for notices affecting today's window.",
        "Compare the interchange fees in the scheme report with the fees card-settler expected.",
        "Replay a clearing file only after the scheme has confirmed that the first upload was not processed.",
        "Record every replay on the ticket with its time, its reason and the scheme's reference.",
        "Check the chargeback feed after each clearing window and make sure it has been loaded.",
    ],
    "payout-exceptions": [
        "Sort the exceptions queue by age and work from the oldest item.",
        "For missing bank details, ask the tenant for the signed form; never take details from an email.",
        "For returned payouts, match the return to the original payout and move the funds to the holding account.",
        "For amounts above the limits, ask the payments controller to review before anything is released.",
        "For possible duplicates, compare the two payouts' references, amounts and merchants before releasing either.",
        "Leave screening hits to compliance; do not release them and do not tell the merchant why they are held.",
        "Release an exception only from the console, with the reason and the second approver recorded.",
        "Write off small unrecoverable amounts only under the write-off rule, with the payments controller's approval.",
        "Tell the tenant about every exception that affects one of its merchants on the day it is found.",
        "Update the exceptions report before the end of the shift so that the next shift starts from the same list.",
    ],
    "incident-command": [
        "Open the incident ticket and the incident channel, and post the first update within fifteen minutes.",
        "Name the incident commander and the scribe in the channel topic.",
        "Set the severity from the table in this runbook and change it as soon as the facts change.",
        "Ask engineering for one named contact per affected service.",
        "Ask treasury to join if any payout may be delayed, duplicated or misdirected.",
        "Agree the wording of tenant messages with support before they are sent.",
        "Write every decision in the channel with the word DECISION at the start, so that the scribe can find it later.",
        "Set the time of the next update in every update, and keep to it even if nothing has changed.",
        "Hand over with a written summary: what is known, what is not known, what has been tried.",
        "Close the incident only when the money is where it should be and every affected tenant has confirmed it.",
    ],
}

# Steps by theme: a runbook section draws its steps from the theme its heading belongs to.
THEME_KEYWORDS = [
    ("scope", ["scope", "related", "in brief", "what an exception", "how clearing", "what counts", "roles", "who decides"]),
    ("incident", ["incident", "disaster", "failover", "severity", "commander", "scribe", "recovery", "decision", "workaround",
                  "postmortem", "health", "first fifteen", "bringing", "long incidents", "overnight", "opening", "first update",
                  "closing", "after the", "talking", "data after", "failing", "secondary", "resuming", "records to keep", "exercise"]),
    ("files", ["file", "acknowledg", "upload", "clearing", "naming", "partial", "duplicate", "acquirer", "replay", "rejected",
               "chargeback", "interchange", "scheme", "submission"]),
    ("bank", ["bank", "channel", "sftp", "api", "host", "credential", "key", "connect", "maintenance", "status notice", "contacting"]),
    ("ledger", ["ledger", "trial balance", "balance", "accrual", "adjust", "holding", "reconcil", "control report", "freeze",
                "fee", "sign-off", "audit", "quarter", "month", "business day", "last business", "first business", "second", "third",
                "problems seen", "calendar", "preparation", "day before", "three days"]),
    ("payout", ["payout", "exception", "hold", "return", "release", "write", "screening", "sanction", "amounts", "currency",
                "closed merchant", "missing bank", "ageing", "weekly", "triage", "queue", "manual release", "batches"]),
    ("tenant", ["tenant", "merchant", "statement", "telling", "contact", "questions", "quirk", "dispute", "reports"]),
    ("shift", ["handover", "start of", "end of", "day", "staffing", "morning", "afternoon", "evening", "end-of-day", "daily"]),
]

THEME_STEPS = {
    "scope": [
        "Read the whole runbook once before your first shift, then use the section numbers to find your way during a shift.",
        "Check the owner and the date at the top; if the runbook is more than a year old, ask the owner whether it is still right.",
        "Know which policies and handbook clauses this runbook relies on; they are listed in the last section.",
        "Ask the settlement lead if a situation is not covered here, and write the answer down so that it can be added.",
    ],
    "incident": [
        "Open an incident ticket before doing anything else, and post its link in the incident channel.",
        "Write the first update within fifteen minutes: what is known, what is not known, and the time of the next update.",
        "Name one person to speak to tenants, so that every tenant hears the same thing.",
        "Keep a timeline on the ticket as you go: each decision, its time and who made it.",
        "Ask engineering for one named contact per affected service and write their names on the ticket.",
        "Stop the next payout run for the affected tenants if money may have moved twice or to the wrong place.",
        "Agree a workaround with the incident commander before trying it, and write down the result whether it helped or not.",
        "Hand over with a written summary if the incident lasts beyond your shift.",
        "Do not close the incident until the money is where it should be and the tenant has confirmed it.",
        "Book the postmortem before closing the ticket and link it from the ticket.",
    ],
    "files": [
        "List the files expected today in the transfer log and compare them with what has arrived.",
        "Compare the record count and the total amount in the file with the figures in its trailer.",
        "Compare the file checksum with the value recorded in the transfer log.",
        "Check that the file name follows the counterparty's naming rule for the day.",
        "Open the acknowledgement and check that every reference in the file appears in it, accepted or rejected.",
        "Copy rejected records and their reason codes into the exceptions queue.",
        "Do not rename, move or edit files in the outbound folder; the pipeline tracks them by name.",
        "If a file is late, note the time it was due and the time you noticed, and tell the settlement lead.",
        "Never force a late file into a closed batch; it goes into the next batch.",
    ],
    "bank": [
        "Check the bank's status page before contacting the bank; most problems on its side are announced there.",
        "Run the connectivity test from the console and keep its output on the ticket.",
        "Check the age of the last heartbeat on the {channel}; more than two minutes means the connection is down.",
        "Check the expiry dates of the channel credentials; anything expiring within fourteen days needs a ticket.",
        "Log every contact with the bank on the ticket with the bank's case reference.",
        "Use the backup channel only with treasury's agreement and only while the primary channel is down.",
        "Ask the bank for its expected recovery time and record it; ask again when the time passes.",
        "Check the bank holiday calendar for {bank} before chasing a missing file.",
    ],
    "ledger": [
        "Compare the ledger balance of each operating account with the bank's balance for the same time.",
        "Run the holding account report and list every item older than thirty days.",
        "Post journals only from the prepared files; never type amounts by hand.",
        "Check that every adjustment posted since the last check has a recorded approval.",
        "Check whether the month-end freeze is in force before posting any adjustment.",
        "Explain every difference on the control report itself, not in a separate message.",
        "Store exports in the month-end folder with the business date in the file name.",
        "Ask the payments controller to review any difference you cannot explain within the hour.",
        "Confirm that the ledger replica is less than five seconds behind the primary before reading figures from it.",
    ],
    "payout": [
        "Sort the queue by age and start with the oldest item.",
        "Check whether a hold exists on the merchant before releasing anything; holds placed by risk are lifted only by risk.",
        "Match each returned payout to its original payout before doing anything else with the funds.",
        "Confirm with treasury that the operating account holds enough funds before releasing a run.",
        "Release items only from the console, with the reason and the second approver recorded.",
        "Pause the next payout run for the tenant if there is any chance that money moved twice.",
        "Take bank details only from the signed form, never from an email or a call.",
        "Leave screening hits to compliance; do not release them and do not tell the merchant why they are held.",
        "Tell the tenant on the same business day about anything that affects one of its merchants.",
    ],
    "tenant": [
        "Check the tenant's operating terms for anything that changes this step for them.",
        "Agree the wording of any message to the tenant with the settlement lead before support sends it.",
        "Answer from the statement and the ledger, not from memory.",
        "Log the tenant's question on its ticket, even when you answer it straight away.",
        "Never mention another tenant, even when the same problem affects both.",
        "Send reports only to the addresses on the tenant's signed contact form.",
        "Write the promised time of the next update on the ticket and keep to it.",
        "Pass questions about fees to the account manager; the shift does not answer them.",
    ],
    "shift": [
        "Read the handover notes and the operations log before starting anything else.",
        "Check that every batch due to open today has opened, and write down any that have not.",
        "Check the scheduler for batches still running from the previous day.",
        "Write a two-line summary for the handover: what happened, and what is still open.",
        "Hand over every open question by name; nothing is handed over by silence.",
        "Check the calendar for bank holidays and planned maintenance in the next three business days.",
        "Confirm who holds the settlement lead role for the next shift.",
    ],
}
