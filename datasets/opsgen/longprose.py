# ruff: noqa: E501  (prose is data, kept on one line per sentence)
"""Prose for the long-document shelf: clause texts, procedure steps, design notes, contract
boilerplate, meeting discussion and review commentary, written for this corpus.

Slots in braces are filled per document ({org}, {tenant}, {system}, {bank}, {role}, ...).
Nothing here states a case's decisive fact: the facts are planted by ``longdocs``. The pools
never use words that the bundled unanswerable cases look for (a reversal, a rolling reserve
percentage, a completed cutover, out-of-hours escalation, a sweep threshold, CHF or JPY).
"""

from __future__ import annotations

# --------------------------------------------------------------------------------------
# handbook clauses: topic -> (heading, sub-clause texts)

HANDBOOK_TOPICS: dict[str, tuple[str, list[str]]] = {
    "purpose": (
        "Purpose and status",
        [
            "This handbook states how {org} runs the daily movement of client money: what each team does, in which order, and who decides when something does not go to plan.",
            "It binds everyone who works on a tenant's batches, including contractors and staff on loan from engineering. Where a tenant contract is stricter, the contract prevails for that tenant.",
            "The handbook does not repeat the cutoffs, limits and retention periods set in the platform policies. Where it names a number, that number is specific to the procedure it describes.",
            "Each clause is numbered so that tickets, runbooks and audit findings can cite it. A citation names the version as well as the clause, because clauses change between versions.",
            "Nothing in this handbook permits a person to move money on their own. Every movement has a second pair of eyes, as clause 7 explains.",
            "The policy owner keeps the handbook. Proposed changes go to the operations review board, which records its decision in its minutes.",
            "A version of this handbook comes into force on its effective date and replaces the previous version from that date. Work already in progress finishes under the version that was in force when it started.",
        ],
    ),
    "definitions": (
        "Definitions",
        [
            "Business day means a day on which the tenant's settlement bank is open for payment instructions in the currency concerned.",
            "Batch means the set of captures, refunds and adjustments that the scheduler closes together for one tenant and one currency.",
            "Closed batch means a batch that has passed its cutoff and has been handed to the ledger for posting.",
            "Manual intervention means any change to a batch, a payout file or a ledger posting that is made by a person rather than by the scheduled pipeline.",
            "Payout hold means an instruction that stops one merchant's payouts until it is lifted.",
            "Holding account means the tenant's account at the platform in which funds wait when they cannot be paid out.",
            "Incident means an unplanned event that delays, duplicates or misdirects a movement of money, or that could have done so.",
            "Second approver means a person other than the requester, holding a role listed in clause 7, who checks and records an approval before money moves.",
        ],
    ),
    "roles": (
        "Roles and responsibilities",
        [
            "The settlement lead on shift owns every batch from its cutoff until the payout files have been acknowledged by the bank.",
            "The payments controller owns the ledger view of each batch and signs the daily control report before 10:00 CET on the next business day.",
            "The duty manager decides on anything that affects more than one tenant, and on any request to delay a payout run.",
            "Engineering on-call owns the services and their alerts, and does not change money movements except under the direction of the settlement lead.",
            "Support owns communication with the tenant's operations contacts, using the wording agreed with the settlement lead.",
            "Risk owns payout holds placed for fraud or credit reasons; operations may place a hold for operational reasons only.",
            "Treasury owns the platform's own accounts and liquidity, and is told before any manual payout above the limits in the platform policies.",
            "Where two roles are held by the same person on a shift, that person may not act as second approver for their own request.",
        ],
    ),
    "business_day": (
        "The business day",
        [
            "The business day starts when the scheduler opens the first batch of the day and ends when the last statement of the day has been sent.",
            "The settlement lead checks at the start of each shift that every tenant's batches for the day have opened, and records any that have not.",
            "Bank holidays are taken from the bank holiday calendar maintained by operations; a batch is not opened on a day its settlement bank is closed.",
            "Weekend captures fall into the first batch of the following business day unless the tenant's contract says otherwise.",
            "When a business day is extended for any reason, the reason and the new end time are written on the operations log before the extension starts.",
            "Shift handovers take place at 07:00, 15:00 and 23:00 CET and follow the handover checklist; an open question is handed over by name, never by silence.",
        ],
    ),
    "batches": (
        "Batch handling",
        [
            "A batch is closed by the scheduler at its cutoff. Nobody closes a batch early by hand unless the duty manager has agreed it and the tenant has been told.",
            "A closed batch is checked against the acquirer and bank files before it is posted. A difference of any size stops the batch until it is explained.",
            "Late files are not forced into a closed batch. They are processed in the next batch, and the tenant is told which captures moved.",
            "Where a batch fails to post, the settlement lead opens an incident and follows the runbook for the service that failed.",
            "Batch identifiers are quoted in full in every ticket, message and log entry about the batch; a partial identifier is a frequent source of mistakes.",
            "A batch that has been posted is never edited. Corrections are made by a separate adjustment with its own approval.",
            "If the same batch appears twice in the scheduler, the second run is stopped and the payout for that tenant is held until both runs have been compared.",
        ],
    ),
    "manual": (
        "Manual interventions",
        [
            "Every manual intervention is recorded on the tenant's ticket before it is made, with the reason, the expected effect and the name of the second approver.",
            "Manual interventions are made through the operations console. Direct changes in a database or a bank portal are not allowed.",
            "A manual intervention that goes wrong is undone by another recorded intervention, never by editing the first one.",
            "The settlement lead may pause a payout run for one tenant for up to one hour on their own authority; longer pauses need the duty manager.",
            "Where a manual intervention affects a merchant's money, support tells the tenant on the same business day.",
            "Manual interventions are reported in the weekly operations review by count and by tenant, so that repeated ones become engineering work.",
        ],
    ),
    "approvals": (
        "Approvals and the four-eyes rule",
        [
            "No single person may both request and approve a movement of money. The second approver checks the amount, the beneficiary and the reason before approving.",
            "Approvals are given in the operations console, which records the time and the approver. An approval given in chat is not an approval.",
            "A second approver may decline without giving a reason. The requester then escalates to the duty manager rather than asking a third person.",
            "Approval rights are reviewed every quarter by the head of operations; rights not used in that quarter are removed.",
            "An approval expires at the end of the business day on which it was given if the movement has not been made by then.",
            "Where the amount exceeds the limits in the platform policies, the approval of the policy owner is needed in addition to the second approver.",
        ],
    ),
    "holds": (
        "Payout holds",
        [
            "A payout hold stops every payout to one merchant. It does not stop captures, which continue to settle into the tenant's holding account.",
            "The person placing a hold records the merchant, the reason and the expected duration on the tenant's ticket.",
            "Holds placed by risk are lifted only by risk. Holds placed by operations may be lifted by the settlement lead once the reason has gone.",
            "The tenant is told of every hold on one of its merchants, unless risk has asked in writing that the tenant is not told.",
            "A merchant with more than one hold in a calendar month is reviewed by risk even if each hold was short.",
            "Funds held under a payout hold are paid out in the first payout run after the hold is lifted, with no manual step.",
        ],
    ),
    "returns": (
        "Returned payments",
        [
            "A credit transfer returned by the beneficiary's bank is matched to the original payout before anything else is done with it.",
            "Returned funds wait in the tenant's holding account while the reason code is checked with the tenant.",
            "Where a return reason points at wrong account details, the payout is not re-sent until the tenant has confirmed new details through the signed form.",
            "Returns are listed on the tenant's daily exceptions report with the original payout date and the reason code.",
            "A return that cannot be matched to a payout within two business days is raised as an incident.",
            "Returned amounts are never netted against the next payout without the tenant's agreement in writing.",
        ],
    ),
    "bank_comms": (
        "Communication with banks",
        [
            "Only the settlement lead, treasury and named engineers may contact a settlement bank about a payment file.",
            "Every contact with a bank is logged on the relevant ticket with the bank's case reference.",
            "Requests to a bank to recall a payment are made in writing through the bank's channel, never by telephone alone.",
            "When a bank reports a problem on its side, operations asks for its expected recovery time and records it, and asks again if the time passes.",
            "Bank status pages are checked before a bank is contacted, because most bank-side problems are already announced there.",
            "Bank contacts and channels are kept in the bank contact register, which treasury reviews every six months.",
        ],
    ),
    "incidents": (
        "Incident handling",
        [
            "Anyone who sees a possible incident raises it; nobody is criticised for raising something that turns out to be nothing.",
            "The settlement lead decides whether an event is an incident and assigns an incident commander for anything that touches more than one tenant.",
            "The first note on an incident ticket states what is known, what is not known and when the next update will be given.",
            "Tenants affected by an incident are told within the notice deadline in the platform's incident notice policy.",
            "An incident is closed when the money is where it should be and the tenant has confirmed it, not when the service has recovered.",
            "Incidents with a financial effect on a tenant or a merchant are reviewed in a postmortem within ten business days of closure.",
            "Workarounds used during an incident are written on the ticket, including the ones that did not help.",
        ],
    ),
    "records": (
        "Records and evidence",
        [
            "Every decision about a movement of money is recorded where the next person will look for it: on the ticket for the tenant concerned.",
            "Screenshots are not records on their own; they are attached to a written note that says what they show.",
            "Records are kept for the periods in the settlement file retention policy. Nobody deletes records by hand.",
            "Records about a tenant are never copied into another tenant's ticket, even when the same fix applies to both.",
            "Exports of ledger data for investigation are stored in the investigation area and deleted when the ticket closes.",
            "Where a record is corrected, the correction is added below the original with the date and the name of the person correcting it.",
        ],
    ),
    "training": (
        "Training and access",
        [
            "Nobody works a settlement shift alone until they have shadowed at least five shifts and worked five more under supervision.",
            "Access to the operations console is granted by role and removed on the day a person leaves the role.",
            "Every member of the team reads this handbook when it changes and confirms it in the training record.",
            "Table-top exercises of the incident procedure are held every quarter, and their findings are tracked like incident actions.",
            "New runbooks are walked through by the author with at least one person who has not seen them before publication.",
            "Contractors receive the same training as staff before they are given access to tenant data.",
        ],
    ),
    "tenant_comms": (
        "Communication with tenants",
        [
            "Support speaks to tenants; engineers join calls when support asks them to, and do not promise dates on their own.",
            "Messages to tenants state facts and the next update time. They do not speculate about causes while an incident is open.",
            "Where a tenant asks whether other tenants are affected, support neither confirms nor denies it; the answer comes from the duty manager.",
            "Written summaries sent to a tenant after an incident are checked by the settlement lead for accuracy before they are sent.",
            "Tenants are told of planned maintenance that affects their batches at least five business days in advance.",
            "A tenant's complaint is logged as such on the ticket, so that it is counted in the quarterly service review.",
        ],
    ),
    "audit": (
        "Audit and control",
        [
            "Internal audit tests the controls in this handbook every year and reports to the risk committee.",
            "The daily control report compares the ledger with the bank statements for every tenant and currency; breaks are explained on the report itself.",
            "A control that fails twice in a quarter is redesigned, not simply repeated.",
            "The audit trail of the operations console is read-only for everyone in operations, including its administrators.",
            "External auditors are given read access to the records they request through the head of operations, never directly.",
            "Findings from audits are tracked as actions with owners and dates, and reported at the operations review board until closed.",
        ],
    ),
    "exceptions": (
        "Exceptions to this handbook",
        [
            "An exception to a clause of this handbook is granted by the policy owner, in writing, for a named tenant or procedure and a stated period.",
            "Exceptions are listed in the exceptions register with their expiry date; an expired exception lapses without further notice.",
            "During an incident the incident commander may depart from a clause when following it would cause greater harm, and records why on the ticket.",
            "A departure during an incident is reviewed in the postmortem, which says whether the clause should change.",
            "Standing exceptions for a tenant are reviewed at each quarterly service review with that tenant.",
        ],
    ),
    "change": (
        "Changes to services",
        [
            "Changes to services that move money are deployed through the deployment pipeline, which records each rollout.",
            "Changes are not deployed during the last hour before a cutoff for any tenant affected by the change.",
            "The change advisory board reviews changes that affect more than one tenant and records its decision in its minutes.",
            "Emergency changes during an incident may skip the board, but are reviewed at its next meeting.",
            "A change that has been rolled back is not deployed again until the reason for the roll back is understood and written down.",
            "Feature flags that change how money moves are treated as changes, even though no code is deployed.",
        ],
    ),
    "data": (
        "Tenant data",
        [
            "Tenant data is used only for operating that tenant's service and for the controls in this handbook.",
            "Data from one tenant is never shown to another, including in examples, screenshots and training material.",
            "Merchant bank details are viewed only when needed for a ticket, and every view is logged.",
            "Investigation exports are masked unless the full data is needed, and the need is written on the ticket.",
            "Requests from tenants for copies of their data are handled by support with the data protection officer.",
        ],
    ),
}

AMEND_NOTES = [
    "changed after the operations review board's decision",
    "tightened after an internal audit finding",
    "relaxed after a review of three quarters of incident data",
    "reworded for clarity; the rule is unchanged",
    "aligned with the tenant contracts signed this year",
    "changed to match the new payout pipeline",
]

# --------------------------------------------------------------------------------------
# runbooks: notes between the steps (the steps themselves are in longprose2: by theme and topic)

NOTES = [
    "changed after the operations review board's decision",
    "tightened after an internal audit finding",
    "relaxed after a review of three quarters of incident data",
    "reworded for clarity; the rule is unchanged",
    "aligned with the tenant contracts signed this year",
    "changed to match the new payout pipeline",
]

# --------------------------------------------------------------------------------------
# runbooks: generic steps and notes, with slots {system}, {bank}, {channel}

STEPS = [
    "Open the {system} dashboard and note the time of the first failed request.",
    "Check the operations log for anything already written about this business day.",
    "Find the batch identifier in the scheduler and copy it in full into the ticket.",
    "Compare the row counts reported by {system} with the counts in the source file.",
    "Check the deploy log for changes to {system} in the last 24 hours.",
    "Look for the same error in other tenants before treating the problem as tenant-specific.",
    "Confirm that the ledger replica is less than five seconds behind the primary.",
    "Check the {bank} status page for notices that mention the payment channel.",
    "Write down what you have found on the ticket before you change anything.",
    "Pause the next payout run for the tenant if there is any chance that money moved twice.",
    "Capture the exact error code from the {system} log; the code tells engineering which function to read.",
    "Ask the engineering on-call to confirm the finding before you act on it.",
    "Retry the failed step once from the operations console, never from a shell.",
    "If the retry fails with the same error, stop and escalate; a second retry hides the evidence.",
    "Record the retry and its result on the ticket, with the time in CET.",
    "Tell support what the tenant should be told, in one or two sentences.",
    "Check that the acknowledgement file from {bank} has arrived in the inbound folder.",
    "Open the acknowledgement file and check that every payment reference appears in it.",
    "Match the acknowledged references against the payout file; list any that are missing.",
    "Move the unmatched references to the exceptions queue with the reason 'not acknowledged'.",
    "Check that the signing key used for the file is the current one in the key register.",
    "Confirm with treasury that the operating account holds enough funds for the run.",
    "Check the queue depth on the {system} workers; a growing queue means the workers are stuck, not slow.",
    "Restart one worker at a time, waiting for it to report healthy before restarting the next.",
    "Compare today's totals with the same weekday last week; a large difference needs an explanation before the run.",
    "Export the list of affected merchants from the console and attach it to the ticket.",
    "Ask the tenant's operations contact to confirm the figures on their side.",
    "Close the incident only when the money is where it should be and the tenant has confirmed it.",
    "Reopen the scheduler view and confirm that the next batch has opened normally.",
    "Write a two-line summary for the shift handover: what happened, and what is still open.",
    "Check that the {channel} connection is established and that the last heartbeat is less than two minutes old.",
    "Test the {channel} credentials with the connectivity check in the console; do not log in by hand.",
    "If the {channel} is down, check whether the backup channel is enabled for {bank} before using it.",
    "Compare the file checksum with the value in the transfer log.",
    "Rename nothing in the outbound folder; the pipeline tracks files by name.",
    "Keep the bank's case reference on the ticket and quote it in every follow-up.",
    "Check whether the tenant has an open exception in the exceptions register that changes this step.",
    "Note the business date and the currency of every batch you touch.",
    "Confirm that the statement for the affected business date has not yet been sent; if it has, tell support.",
    "Check that the month-end freeze is not in force before posting any adjustment.",
]

NOTES = [
    "Most problems at this point come from a file that arrived late, not from a broken service.",
    "If you are unsure, stop and ask: a paused payout can be restarted, a sent one cannot be called back easily.",
    "This step is where the last two incidents of this kind were caught, so do not skip it under time pressure.",
    "The console shows times in CET; the bank's logs use UTC. Convert before comparing.",
    "Do not forward raw log lines to a tenant; they contain other tenants' identifiers.",
    "The alert for this condition fires after ten minutes; by then the tenant may already have noticed.",
    "Write down the time you started each step. Postmortems depend on those times.",
    "This check looks slow but takes under two minutes once you know where the figures are.",
    "Engineering prefers a precise description of the symptom to a guess at the cause.",
    "A clean result here does not prove the service is healthy; it only rules out the most common failure.",
    "The figures in this section are for a normal weekday. Mondays and month-ends are larger.",
    "If two people are working the problem, agree who writes on the ticket so that the record stays in one voice.",
    "Screenshots help, but the ticket must say in words what each one shows.",
    "This procedure was rehearsed in the last quarterly exercise; the findings are in the exercise report.",
    "Where this runbook and a policy disagree, the policy wins; raise the difference with the runbook owner.",
]

# --------------------------------------------------------------------------------------
# architecture documents

ARCH_PARAS = {
    "context": [
        "{system} was built when the platform served three tenants and one currency. It now serves ten tenants in eight currencies, and several of its assumptions no longer hold.",
        "This document describes the current design of {system}, the problems operations has reported with it, and the changes engineering proposes.",
        "The audience is the engineers who change {system} and the operations staff who run it; both should be able to find the parts that concern them.",
        "Earlier notes on {system} are short and describe intent rather than behaviour. This document describes behaviour, measured on production traffic.",
    ],
    "goals": [
        "Keep every tenant's batches independent, so that one tenant's problem cannot delay another's payouts.",
        "Make every step replayable on its own, so that a failure in the middle of a batch does not force a rerun of the whole batch.",
        "Give operations a view of progress per batch that matches what the tenant sees.",
        "Remove manual steps that exist only because the service cannot recover by itself.",
        "Keep the cost of a normal day flat as the number of merchants grows.",
    ],
    "nongoals": [
        "Changing the cutoffs or the order of the business day; those belong to the settlement policy.",
        "Replacing the ledger; {system} keeps writing through ledger-core's interface.",
        "Real-time payouts; the design keeps the daily batch model.",
        "Supporting currencies that no tenant uses today.",
    ],
    "design": [
        "Work arrives as messages on a queue per tenant and currency. Workers take one message at a time and write their progress to a state table before acknowledging it.",
        "Each unit of work carries an idempotency key derived from the batch identifier and the step. A repeated message with the same key is acknowledged without doing the work again.",
        "The scheduler remains the only component that opens and closes batches. {system} never decides on its own that a batch is complete.",
        "State is kept in the service's own database; ledger-core is told of every change through its posting interface and remains the record of balances.",
        "Retries use exponential back-off with jitter and stop after a fixed number of attempts, after which the unit of work moves to a dead-letter queue that operations can see.",
        "Every outbound file is written to a staging area first and moved to the outbound folder only when its checksum has been recorded.",
        "Configuration that differs per tenant lives in one table with a version column, so that a change can be traced to the rollout that made it.",
        "Reads for dashboards go to a replica; writes go to the primary only. Operations tooling never writes to the primary directly.",
    ],
    "failure": [
        "If a worker dies in the middle of a unit of work, the message becomes visible again after its lease expires and another worker repeats the unit; the idempotency key makes the repeat harmless.",
        "If ledger-core is unavailable, {system} stops taking new work rather than queueing postings it cannot confirm.",
        "If the bank channel is unavailable, files wait in staging; nothing is sent twice because the move to the outbound folder is the commit point.",
        "A poison message that fails on every attempt is moved aside after the last retry so that the rest of the queue keeps moving.",
        "Clock skew between hosts has caused ordering problems before. All ordering decisions use the sequence numbers in the state table, never wall-clock time.",
        "A partial outage of one availability zone reduces capacity but does not stop processing; the scheduler's timeouts are set with that in mind.",
    ],
    "observability": [
        "Each unit of work logs its batch identifier, tenant, currency and step. Logs without a batch identifier are treated as a bug.",
        "Dashboards show progress per batch as a fraction of expected units, so that a stuck batch stands out even when the service is healthy.",
        "Alerts are defined on the age of the oldest unprocessed unit per tenant, not on error rates, which were too noisy to act on.",
        "Traces carry the tenant as an attribute, which makes it possible to see one tenant's path through the services during an incident.",
    ],
    "security": [
        "Service accounts have the narrowest rights that work: {system} can post to the ledger but cannot read other services' databases.",
        "Secrets are fetched at start-up from the secret store and never written to disk or logs.",
        "Files leaving the platform are signed with keys held in the hardware security module; the service never sees the private keys.",
        "Access to production data for debugging goes through the break-glass procedure and is reviewed weekly.",
    ],
    "rollout": [
        "The change is rolled out one tenant at a time, starting with a tenant with low volume, behind a per-tenant flag.",
        "Each step of the rollout is recorded by the deployment system; the flag is removed only after every tenant has run on the new path for a full month-end.",
        "Rollback is a flag change and needs no deployment. Data written on the new path remains readable by the old one.",
        "The rollout pauses automatically if the number of manual interventions for a migrated tenant rises above its usual level.",
    ],
    "alternatives": [
        "We considered moving the work into the scheduler. It would remove a queue, but would make the scheduler responsible for retries it was not designed for.",
        "A managed workflow engine was evaluated. It handled retries well but could not give per-tenant isolation without one deployment per tenant.",
        "Keeping the current design and adding more manual runbook steps was rejected: it is what we do today, and it does not scale with tenants.",
        "A streaming design with exactly-once semantics was considered and judged too complex for the team to run at its current size.",
    ],
    "questions": [
        "Should retries of bank submissions move to a dedicated service shared by every outbound channel?",
        "Do we still need the nightly full rebuild of the state table once every step is idempotent?",
        "How long should dead-letter messages be kept before they are archived?",
        "Can tenants be given a read-only view of their own batch progress?",
        "Who owns the per-tenant configuration table once the migration is finished?",
    ],
}

# --------------------------------------------------------------------------------------
# contracts

CONTRACT_CLAUSES: dict[str, tuple[str, list[str]]] = {
    "definitions": (
        "Definitions and interpretation",
        [
            "In this Agreement, capitalised terms have the meanings given in this clause, and the headings do not affect its interpretation.",
            "Business Day means a day other than a Saturday, a Sunday or a public holiday on which banks are open for general business in the place of the Bank's processing centre.",
            "Payment File means a file of payment instructions submitted by the Customer through a Channel in the format set out in Schedule 1.",
            "Channel means a means of submitting Payment Files and receiving acknowledgements agreed under clause 4.",
            "Monthly Fees means the fees invoiced by the Bank for a calendar month under Schedule 3, excluding pass-through charges.",
            "References to a clause or a Schedule are to a clause of, or a Schedule to, this Agreement unless stated otherwise.",
        ],
    ),
    "services": (
        "The Services",
        [
            "The Bank shall provide the Services described in Schedule 1 with reasonable skill and care and in accordance with good industry practice.",
            "The Bank shall process each Payment File received before the applicable cutoff on the same Business Day, and any Payment File received after it on the next Business Day.",
            "The Customer shall submit Payment Files only through a Channel and shall not submit the same Payment File more than once unless the Bank has asked it to do so.",
            "The Bank may change the technical specifications of a Channel on not less than ninety days' written notice, provided that the change does not reduce the Services.",
            "Each party shall appoint a relationship manager who is the first point of contact for matters under this Agreement.",
        ],
    ),
    "channels": (
        "Channels",
        [
            "The Bank shall make available a primary Channel and a backup Channel for the submission of Payment Files.",
            "The Customer may use the backup Channel only when the primary Channel is unavailable or when the Bank has asked it to do so.",
            "The Bank shall acknowledge each Payment File received through a Channel by returning an acknowledgement file that lists every payment reference accepted and rejected.",
            "Credentials and keys for each Channel shall be exchanged through the procedure in Schedule 4 and rotated at least once a year.",
        ],
    ),
    "service_levels": (
        "Service levels",
        [
            "The Bank shall measure availability of each Channel in each calendar month and report it to the Customer within ten Business Days of the end of the month.",
            "Planned maintenance notified at least ten Business Days in advance and carried out outside the processing window does not count as unavailability.",
            "The Bank shall notify the Customer of any unplanned unavailability within thirty minutes of becoming aware of it, and shall give updates at least every hour until it ends.",
        ],
    ),
    "fees": (
        "Fees and invoicing",
        [
            "The Customer shall pay the fees set out in Schedule 3. The fees are exclusive of value added tax, which the Customer shall pay in addition where applicable.",
            "The Bank shall invoice the fees monthly in arrears, and the Customer shall pay each undisputed invoice within thirty days of receipt.",
            "The Customer may dispute an invoice in good faith by notice setting out the reasons; the parties shall try to resolve the dispute within twenty Business Days.",
            "The Bank may review the fees once in each contract year on sixty days' written notice; an increase shall not exceed the change in the consumer price index over the previous twelve months.",
        ],
    ),
    "data": (
        "Data protection and confidentiality",
        [
            "Each party shall keep the other's Confidential Information confidential and use it only to perform or receive the Services.",
            "The Bank shall process personal data contained in Payment Files only on the Customer's documented instructions and as required by law.",
            "The Bank shall notify the Customer without undue delay, and in any event within forty-eight hours, after becoming aware of a personal data breach affecting the Customer's data.",
            "The obligations in this clause survive termination of this Agreement for five years.",
        ],
    ),
    "audit": (
        "Audit",
        [
            "The Customer, or an auditor appointed by it, may audit the Bank's compliance with this Agreement once in any twelve-month period on thirty days' written notice.",
            "The Bank shall provide the Customer with a copy of its most recent independent assurance report on request.",
            "Each party shall bear its own costs of an audit, unless the audit reveals a material breach by the Bank, in which case the Bank shall bear the reasonable costs of the audit.",
        ],
    ),
    "liability": (
        "Liability",
        [
            "Neither party excludes or limits its liability for death or personal injury caused by its negligence, for fraud, or for any liability that cannot be excluded by law.",
            "Neither party shall be liable for loss of profit, loss of business or any indirect or consequential loss.",
            "The Bank shall be liable for the amount of any payment that it executes incorrectly, together with interest at the rate the Customer would have earned on it.",
        ],
    ),
    "force_majeure": (
        "Force majeure",
        [
            "Neither party shall be liable for a failure or delay caused by an event beyond its reasonable control, provided it notifies the other party promptly and uses reasonable efforts to mitigate the effect.",
            "A failure of a subcontractor of the Bank is not an event beyond the Bank's reasonable control unless the subcontractor itself is affected by such an event.",
            "If an event beyond a party's control continues for more than thirty days, the other party may terminate this Agreement by written notice.",
        ],
    ),
    "subcontracting": (
        "Subcontracting and assignment",
        [
            "The Bank may subcontract the Services only with the Customer's prior written consent, which shall not be unreasonably withheld.",
            "The Bank remains responsible for the acts and omissions of its subcontractors as if they were its own.",
            "Neither party may assign this Agreement without the other party's written consent, except to a member of its group on written notice.",
        ],
    ),
    "notices": (
        "Notices",
        [
            "Notices under this Agreement shall be in writing and delivered by hand, by courier or by email to the addresses in Schedule 5.",
            "A notice sent by email is received when sent, unless the sender receives an automated message that it has not been delivered.",
            "Operational messages about Payment Files are not notices and are exchanged through the Channels.",
        ],
    ),
    "law": (
        "Governing law and disputes",
        [
            "This Agreement and any dispute arising from it are governed by the law stated in Schedule 5.",
            "The parties shall first try to resolve any dispute through their relationship managers, then through their senior managers, before starting proceedings.",
            "Nothing in this clause prevents a party from seeking urgent interim relief from a court.",
        ],
    ),
    "general": (
        "General",
        [
            "This Agreement is the entire agreement between the parties about its subject matter and replaces any earlier agreement about it.",
            "A variation of this Agreement is valid only if it is in writing and signed by both parties.",
            "If any provision of this Agreement is held invalid, the rest of the Agreement remains in force.",
            "This Agreement may be signed in counterparts, each of which is an original.",
        ],
    ),
}

# --------------------------------------------------------------------------------------
# meeting minutes

MINUTES_TOPICS = [
    ("Weekly incident trends", "{person} presented the incident figures since the last meeting. Most incidents were short and tenant-specific; the board asked whether any of them shared a cause and was told that two did."),
    ("Bank channel health", "{person} reported on the bank channels. One bank had announced maintenance twice at short notice; the board asked treasury to raise it with the bank's relationship manager."),
    ("Manual interventions", "The count of manual interventions fell compared with the previous period. {person} noted that most of the remaining ones came from late acquirer files rather than from service faults."),
    ("Runbook ownership", "{person} said that three runbooks had no named owner after recent team changes. The board agreed that each runbook must have an owner before the next meeting."),
    ("Month-end preparation", "{person} walked through the month-end calendar. The freeze window and the staffing plan were agreed without change."),
    ("Audit findings", "{person} gave an update on open audit findings. Two were closed since the last meeting; one was overdue because the engineering change it depends on had slipped."),
    ("Tenant feedback", "{person} summarised feedback from the last round of tenant service reviews. Tenants asked for earlier notice of maintenance and for clearer incident summaries."),
    ("Capacity", "{person} reported that Monday batches now take a third longer than a year ago. Engineering will present options at a later meeting."),
    ("Training", "{person} reported on training. Two new team members have completed shadowing; the quarterly table-top exercise is scheduled."),
    ("Alert noise", "{person} presented the list of alerts that fired most often without leading to any action. The board asked engineering to remove or retune the top five."),
    ("On-call rota", "{person} raised the load on the weekend rota. The board agreed to add a second person for month-end weekends."),
    ("Exceptions register", "{person} reviewed the exceptions register. Two exceptions had expired and were removed; no new exceptions were requested."),
    ("Key rotation", "{person} confirmed that the annual rotation of bank channel credentials is on schedule for all banks."),
    ("Statement rendering", "{person} reported that statement rendering had fallen behind on two evenings; the cause was a slow template and has been fixed."),
]

MINUTES_DISCUSSION = [
    "Discussion focused on whether the problem was one of process or of tooling; the view of the board was that it was mostly tooling.",
    "Several members pointed out that the figures would look different if measured per tenant rather than in total.",
    "The board noted that the same point had been raised two meetings ago and asked for a date rather than another update.",
    "It was agreed that the item would stay on the agenda until the related actions are closed.",
    "No objections were raised.",
    "The board thanked the team for the quality of the analysis.",
    "Members asked for the underlying data to be shared before the next meeting so that they can read it in advance.",
    "The chair asked that the conclusion be written into the relevant runbook, not only into these minutes.",
    "It was noted that the tenants most affected are also the ones with the largest Monday batches.",
    "The discussion ran over time; the remaining questions will be taken offline and reported at the next meeting.",
]

ACTION_VERBS = [
    "update the bank contact register",
    "retune the five noisiest alerts",
    "circulate the Monday batch duration figures",
    "name an owner for each unowned runbook",
    "draft the month-end staffing plan",
    "close the overdue audit finding",
    "prepare the table-top exercise",
    "review the exceptions register entries for expired items",
    "write up the statement rendering fix in the runbook",
    "collect tenant feedback on incident summaries",
    "check the bank maintenance notices against the contract",
    "measure manual interventions per tenant",
    "review weekend rota load",
    "confirm the credential rotation dates with each bank",
]

# --------------------------------------------------------------------------------------
# quarterly reviews

REVIEW_PARAS = {
    "summary": [
        "The quarter was steady for most tenants. Volumes grew, payout timeliness stayed within the contracts, and the incidents that did happen were contained to one tenant at a time.",
        "This review is written for the leadership group and the operations review board. It summarises the figures; the details are in the linked tickets and minutes.",
        "Two themes ran through the quarter: the growth of Monday batches and the time spent on late acquirer files.",
        "The platform met its availability objectives for every service except one, which is discussed in its own section below.",
    ],
    "volumes": [
        "Card captures grew faster than bank transfers, continuing the trend of the last four quarters.",
        "Monday remained the largest day of the week by a wide margin; the largest single batch of the quarter was a Monday EUR batch after a promotion weekend.",
        "Volumes per tenant are in the appendix; the growth was concentrated in three tenants.",
        "Month-end days were between one and a half and twice the size of an ordinary weekday.",
    ],
    "incidents": [
        "Most incidents were detected by our own alerts before tenants reported them, an improvement on the previous quarter.",
        "The median time from detection to the first update to a tenant fell, mainly because support now has agreed wording for the first message.",
        "Postmortems were completed for every incident with a financial effect, all within the ten business days the handbook requires.",
        "The share of incidents caused by changes rather than by external files rose slightly, which the change advisory board is looking at.",
    ],
    "people": [
        "Two people joined the operations team and one left. Shadowing for the new joiners is complete.",
        "The weekend rota remained the most difficult to staff; a second person now covers month-end weekends.",
        "Overtime fell compared with the previous quarter, mostly because month-end went more smoothly.",
    ],
    "cost": [
        "Operating cost per thousand transactions fell slightly as volumes grew faster than the team.",
        "Bank charges rose in line with volumes; one bank's new tariff took effect during the quarter.",
        "Cloud costs were flat; the savings from retiring the old reporting cluster offset growth elsewhere.",
    ],
    "outlook": [
        "Next quarter's priorities are the capacity work for Monday batches, the remaining tenant migrations and the alert clean-up.",
        "Risks for the next quarter are concentrated at month-end and around the bank holiday calendar.",
        "The board will be asked to approve the staffing plan for the year-end period at its next meeting.",
    ],
}
