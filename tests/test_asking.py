"""The asking part of a message (ragkit.text.asking) and what it changes in reading a task."""

from __future__ import annotations

import pytest

from ragkit.text import parse_task
from ragkit.text.asked import asked_forms, asked_id_shape
from ragkit.text.asking import (
    ask_of,
    asks_present_state,
    compared_names,
    is_yes_no,
    message_sentences,
    split_asks,
)


def test_sentences_split_at_stops_and_line_breaks() -> None:
    assert message_sentences("One thing. Two things?\nThree") == ["One thing.", "Two things?", "Three"]


@pytest.mark.parametrize(
    ("message", "ask"),
    [
        # the greeting, the plan and the thanks are context; the question is what is asked
        ("Hi all, Yara is planning a push next week. What is the GBP cutoff today? Thanks",
         "What is the GBP cutoff today?"),
        # a question that leans on the sentence before it ("that", few words) takes it along
        ("The runbook says we have 2 hours to notify. Is that still right?",
         "The runbook says we have 2 hours to notify. Is that still right?"),
        ("Their manager asks when we must send the notice. What's the deadline?",
         "Their manager asks when we must send the notice. What's the deadline?"),
        # no question mark, or nothing but questions: the whole message
        ("Find the commit that fixed OPS-3318.", "Find the commit that fixed OPS-3318."),
        ("Who approved it? When did it ship?", "Who approved it? When did it ship?"),
    ],
)
def test_ask_of(message: str, ask: str) -> None:
    assert ask_of(message) == ask


@pytest.mark.parametrize(
    ("question", "yes_no"),
    [
        ("Is the GBP cutoff still 14:30?", True),
        ("The batch closes at noon, right?", True),
        ("Did the patch ship on 29 January?", True),
        ("Can you tell me the date the fix was deployed?", False),  # a polite request
        ("Does that breach the threshold, and what is the threshold?", False),  # also asks what
        ("Which cutoff applies?", False),
    ],
)
def test_is_yes_no(question: str, yes_no: bool) -> None:
    assert is_yes_no(question) is yes_no


def test_a_yes_no_question_asks_for_the_form_of_the_value_it_proposes() -> None:
    assert asked_forms("Are we still capped at 3 retries for payouts?")[0] == "count"
    assert asked_forms("Is the reserve still 8%?")[0] == "percentage"
    # the identifier it is about is not a proposal
    assert asked_forms("Is OPS-1847 still blocked?")[:1] != ("id",)


def test_names_around_the_question_are_not_what_it_asks() -> None:
    frame = parse_task(
        "Yara from finance is planning a push on OPS-3318. What is the GBP cutoff now?",
        tenant="acme",
    )
    assert "Yara" not in frame.names  # who is asking is not an entity the answer must name
    assert frame.identifiers == ("OPS-3318",)  # identifiers are read from the whole message
    assert "planning" not in frame.predicate and "cutoff" in frame.predicate
    complaint = "What made Acme's batch fail in May? The complaint was that weekend sales were missing."
    event = parse_task(complaint, tenant="acme", as_of="2025-06-30")
    assert "weekend" in event.words and "weekend" not in event.predicate  # the description finds the event
    assert frame.qualifiers == ("GBP",)


def test_a_name_a_yes_no_question_proposes_is_not_what_the_evidence_must_name() -> None:
    from ragkit.text.asking import proposed_names

    assert proposed_names("Is Hakimi the assignee on OPS-1847?") == ("Hakimi",)
    assert proposed_names("Was Vasquez-Lind still the person to call?") == ("Vasquez-Lind",)
    assert proposed_names("Who is the assignee on OPS-1847?") == ()  # not a yes/no question
    assert proposed_names("Is Acme's cutoff still 11:15?") == ()  # Acme is what it is about
    frame = parse_task("Is Hakimi the assignee on OPS-1847?", tenant="acme")
    assert "Hakimi" not in frame.names and frame.identifiers == ("OPS-1847",)
    assert asked_forms("Is Hakimi the assignee on OPS-1847?")[0] == "person"


def test_a_currency_named_in_words_qualifies_like_its_code() -> None:
    frame = parse_task("By what time do Acme's US dollar payments have to be in?", tenant="acme")
    assert frame.qualifiers == ("USD",) and "usd" in frame.words
    assert parse_task("Zloty cutoff for Umbrella this week?", tenant="umbrella").qualifiers == ("PLN",)


def test_a_rule_question_is_searched_by_its_question_not_by_the_story_around_it() -> None:
    from ragkit.text.asking import questions_of

    message = (
        "Umbrella's AP team is annoyed because a supplier payment in PLN missed the batch yesterday; "
        "they say they submitted at 12:05. What is their PLN cutoff right now?"
    )
    assert questions_of(message) == "What is their PLN cutoff right now?"
    frame = parse_task(message, tenant="umbrella")
    assert not frame.event and "missed" not in frame.words and "umbrella" in frame.words
    assert frame.qualifiers == ("PLN",)  # "AP" says who is asking, not what the answer is about
    # an event is still found by everything the message says about it
    event = parse_task("Acme's batch failed in May. The complaint was weekend sales. Why?", tenant="acme")
    assert "weekend" in event.words


def test_y_plurals_stem_like_their_singular() -> None:
    from ragkit.text.words import stem

    assert stem("retries") == stem("retry") == stem("retried")
    assert stem("policies") == stem("policy")


def test_a_question_in_the_present_asks_what_holds_not_what_happened() -> None:
    from ragkit.text.asking import asks_present_state

    assert asks_present_state("Are we still capped at 3 retries for payouts?")
    assert asks_present_state("Can I approve a EUR 30,000 refund on my own?")  # permission holds now
    assert asks_present_state("When does Tyrell's euro batch close these days?")
    assert asks_present_state("Is Hakimi the assignee on OPS-1847?")  # a yes/no question checks a claim
    assert not asks_present_state("Who fixed the rounding bug in June?")
    # the caller's tenant named as "we" no longer makes a present question an event of that tenant
    frame = parse_task("Are we still capped at 3 retries for payouts?", tenant="stark", as_of="2026-09-15")
    assert not frame.event and frame.valid_at == "2026-09-15"
    # a question in the past tense stays an event, whatever it proposes
    assert parse_task("Did the OPS-7879 patch ship on 29 January?", tenant="wayne").event


def test_a_tag_question_names_nothing_the_evidence_must_say() -> None:
    from ragkit.text.asking import without_tag

    message = "Umbrella's Polish zloty batch closes at noon CET, right?"
    assert without_tag(message) == "Umbrella's Polish zloty batch closes at noon CET?"
    assert is_yes_no(message)
    frame = parse_task(message, tenant="umbrella")
    assert frame.task == message  # the frame keeps the message as asked
    assert "right" not in frame.words and "right" not in frame.predicate
    assert "Polish" not in frame.names  # "Polish zloty" names a currency, not a party
    assert frame.qualifiers == ("PLN",)  # a time zone narrows nothing: CET is no code of a thing


def test_a_proposed_name_is_no_word_the_answer_must_state() -> None:
    frame = parse_task("Is Hakimi the assignee on OPS-1847?", tenant="acme")
    assert "hakimi" not in frame.predicate and "assignee" in frame.predicate


def test_an_identifier_a_yes_no_question_puts_forward_is_checked_not_required() -> None:
    from ragkit.text.asked import asked_id_shape, proposed_identifiers

    question = "Was the Soylent early-rollover fix shipped as RO-8103?"
    assert proposed_identifiers(question) == ("RO-8103",)
    frame = parse_task(question, tenant="soylent")
    assert frame.identifiers == () and "ro-8103" not in frame.words
    assert asked_forms(question)[0] == "id" and asked_id_shape(question) == "key"
    # an identifier the question is about is not put forward
    assert proposed_identifiers("Did the OPS-7879 patch ship on 29 January?") == ()
    shipped = parse_task("Did the OPS-7879 patch ship on 29 January?", tenant="wayne")
    assert shipped.identifiers == ("OPS-7879",)


def test_who_relays_a_request_is_not_what_it_is_about() -> None:
    from ragkit.text.subjects import requesters

    message = ("Kemi Petrakis from Acme wants a single point of contact for the rounding drift ticket "
               "she raised on 26 June. Who's the owner on our side?")
    assert requesters(message) == ("Kemi", "Petrakis")
    frame = parse_task(message, tenant="acme", as_of="2025-07-01")
    assert "Petrakis" not in frame.names and "Kemi" not in frame.names
    # a named subject stays: "Thorsby owns ..." is what the reverse lookup is about
    assert requesters("Thorsby owns an Acme ticket about drift. What's its key?") == ()
    # one word before a verb may be an organisation, and the caller's tenant is never a requester
    assert requesters("Globex wants to know its cutoff.") == ()
    wayne = parse_task("Jonas at Wayne is writing a note. Why did Wayne's batch fail?", tenant="wayne")
    assert wayne.tenant_named and "Jonas" not in wayne.names


def test_a_message_that_asks_two_things_is_split_into_its_asks() -> None:
    # a shared lead-in goes with every ask; "it" then points at what the lead-in names
    assert split_asks("OPS-5559: what caused it, and which rollout fixed it?") == [
        "OPS-5559: what caused it?", "OPS-5559: which rollout fixed it?"]
    # no lead-in: "its" points at the earlier ask's name, "it" at what the earlier ask asks about
    assert split_asks("Who maintains reserve-keeper, and what's its p95 batch duration?")[1] == (
        "what's reserve-keeper p95 batch duration?")
    owner = split_asks("What follow-up action came out of the OPS-1847 postmortem, and who owns it?")[1]
    assert owner.startswith("who owns follow-up action") and "OPS-1847" in owner
    assert split_asks("What's Tyrell's EUR cutoff, and has their cutover happened?")[1] == (
        "has Tyrell's cutover happened?")
    # a preposition before the second question word; the sentences around the asks stay with each
    lunch = split_asks("Quick one before lunch. Who approved it, and on which date? Thanks")
    assert lunch == ["Quick one before lunch. Who approved it? Thanks",
                     "Quick one before lunch. on which date? Thanks"]
    # a further question sentence that opens with "And"
    assert len(split_asks("Who owns OPS-12? And when is it due?")) == 2
    # one ask: "and" that joins two nouns, two question sentences that restate one ask
    for one in ("Which commit fixed OPS-3318 and its follow-up?",
                "Is Acme still on 11:15? What's the current cutoff?",
                "What did Kim and Lee decide?"):
        assert split_asks(one) == [one]


def test_the_simple_present_asks_what_holds_as_a_rule() -> None:
    from ragkit.text.asking import asks_present_state

    # "do/does" and an obligation ("have to", "needs to") ask what holds as a rule or habit
    assert asks_present_state("What time does the GBP run start on a Monday?")
    assert asks_present_state("How many hours do we have to acknowledge a P1 page?")
    assert asks_present_state("By when does a refund request need to be approved?")
    # the past asks what happened; a report before the question is no ask
    assert not asks_present_state("What time did the GBP run start on Monday?")
    assert not asks_present_state("The GBP run does start late. Who changed it last week?")
    task = "How many hours do we have to acknowledge a P1 page?"
    frame = parse_task(task, tenant="acme", as_of="2026-05-01")
    assert not frame.event and frame.valid_at == "2026-05-01"
    # a past-tense cue still makes it an event
    assert parse_task("Which rollout did the team ship for the GBP run?", tenant="acme").event


def test_a_name_a_claim_is_likened_to_is_not_required() -> None:
    """"... like with Harbor Clearing?" compares with another party: both words of its name are
    checked, not required; "Can we ...?" asking about permission is a yes/no question."""
    q = "Can we get out of the Kestrel Bank agreement on 90 days' notice, like with Harbor Clearing?"
    assert is_yes_no(q) and compared_names(q) == ("Harbor", "Clearing")
    assert asked_forms(q)[0] == "duration"
    frame = parse_task(q, tenant="soylent")
    assert "Kestrel" in frame.names and "Harbor" not in frame.names and "Clearing" not in frame.names
    assert not is_yes_no("Can you tell me the Kestrel notice period?")


def test_one_question_word_asking_two_things_is_two_asks() -> None:
    """"What are X's A and its B?" asks two things; the second's "its" is X's."""
    asks = split_asks("What are ledger-core's alert-to-acknowledge target and its p95 batch duration target?")
    assert asks == ["What is ledger-core's alert-to-acknowledge target?",
                    "What is ledger-core's p95 batch duration target?"]


def test_a_target_or_objective_asks_for_a_figure() -> None:
    """"What's the alert-to-acknowledge target?" asks for a quantity (the profile's limit rule), not
    free text; "what is the target of RO-1" names no quantity."""
    assert "duration" in asked_forms("For ledger-core, what's the alert-to-acknowledge target?")
    assert asked_forms("What was the target of RO-1?") == ()


def test_a_value_inside_a_relative_clause_is_not_the_proposed_answer() -> None:
    """"Is the controller still the lowest role that can approve a credit of EUR 40,000?" proposes
    a role; the amount only says which credit. A value the claim itself states is proposed."""
    assert asked_forms("Is the payments controller still the lowest role that can approve a goodwill "
                       "credit of EUR 40,000?") == ()
    assert asked_forms("Is the goodwill credit limit still EUR 40,000?")[0] == "amount"


def test_what_someone_is_supposed_to_do_asks_for_a_standing_rule() -> None:
    """"Within what time are we supposed to acknowledge an alert?" asks a duration the rules set
    now (not an event, not a time of day); "what time did the alert fire?" asks a time."""
    q = "For the service that submits SEPA files, within what time are we supposed to acknowledge an alert?"
    assert asked_forms(q)[0] == "duration" and asks_present_state(q)
    assert not parse_task(q, tenant="umbrella").event
    assert asked_forms("At what time did the alert fire?")[0] == "time"


def test_a_yes_no_question_about_a_month_or_a_set_date_asks_for_a_date() -> None:
    """"Is the drill booked for June?" checks a date, as "Has a day been fixed for the drill?"
    asks one: neither is answered by a free-text sentence. The modal "may" is no month."""
    assert asked_forms("Is the next incident drill with Hooli booked for June?") == ("date",)
    assert asked_forms("Has a day been fixed yet for the next rehearsal with Hooli's team?")[0] == "date"
    assert asked_forms("May we pause the run?") == ()


def test_a_target_is_a_standing_rule_not_an_event() -> None:
    """"What's the alert-to-acknowledge target?" asks what a design sets (the profile's rule cues
    name targets and caps as they name limits), so no tenant's own records are required."""
    assert not parse_task("For ledger-core, what's the alert-to-acknowledge target?", tenant="tyrell").event
    assert not parse_task("What is the monthly cap on service credits with Vireo?", tenant="tyrell").event


def test_a_month_that_places_the_event_is_not_a_proposed_date() -> None:
    """"Was the FX problem in late August 2026 down to a stale rate cache?" asks a cause; its
    month says which problem, not a date to check."""
    assert asked_forms("Was the Globex FX problem in late August 2026 down to a stale rate cache?") == ()


def test_a_figure_the_question_states_is_not_what_it_asks() -> None:
    """"In which month were 99.69% on time?" states a percentage to look up by; it asks a month
    (free text), not a percentage. A "%" that stands alone still asks for one."""
    assert asked_forms("In which month of Q1 2026 were 99.69% of Initech's payouts on time?") == ()
    assert asked_forms("What % of payouts were on time?") == ("percentage",)


def test_a_participle_after_an_article_is_no_event() -> None:
    """"Is there a fixed limit on how long I can stay incident commander?" asks a standing rule:
    "fixed" after "a" describes the limit; "Was the fix deployed?" still asks what happened."""
    q = "Is there a fixed limit on how long I can stay incident commander?"
    assert not parse_task(q, tenant="wayne").event
    assert parse_task("Was the fix deployed on 3 May?", tenant="wayne").event


def test_abbreviated_units_ask_for_a_duration() -> None:
    """"after how many hrs?" asks a duration, as "how many hours" does (the profile's ask rules)."""
    assert asked_forms("incident commander hand-off - after how many hrs?")[0] == "duration"


def test_a_question_about_what_a_source_says_asks_what_the_sentence_before_it_asks() -> None:
    # "What does the quarterly review say?" names a source, not what is asked of it: the sentence
    # before it says that (how many late days), so the ask reads both and asks for a count
    message = ("Tyrell's finance lead wants the Q3 numbers, in particular how many late days they had. "
               "What does the platform's quarterly review say?")
    assert ask_of(message) == message
    assert asked_forms(ask_of(message)) == ("count",)
    # a question that names what it asks stands alone
    assert ask_of("I am in a hurry. What does the refund policy require for amounts above the limit?") == (
        "What does the refund policy require for amounts above the limit?")


def test_after_what_does_comes_the_subject_not_the_thing_asked() -> None:
    # "the reserve hold policy" is who sets it; "the default holding time" is what is asked
    assert asked_forms("What does the reserve hold policy set as the default holding time?") == ("duration",)
    # a noun between the question word and "does" is the thing asked
    assert asked_forms("What reserve does the policy set for Acme?") == ("percentage",)


def test_a_person_placed_in_an_organisations_office_is_who_asks() -> None:
    from ragkit.text.subjects import requesters

    message = "Hamid Gallardo in Stark's CTO office wants to know why. Above what balance is it swept?"
    assert requesters(message) == ("Hamid", "Gallardo")
    assert requesters("Acme in March had late payouts. How many?") == ()


def test_telegraphic_asks_for_a_date_or_a_status() -> None:
    # no question word: the noun before the question mark says what is asked
    assert asked_forms("wayne file ingestion v3.6.1 rollout date?") == ("date",)
    # "... finished?" asks where a thing stands; a possessive name is whose it is, not a proposed person
    assert asked_forms("Is the follow-up from Soylent's November review finished?") == ("status",)
    assert asked_forms("Is Hakimi the assignee?")[0] == "person"


def test_what_state_a_thing_is_in_asks_a_status() -> None:
    assert asked_forms("What state is the action item from the OPS-4025 postmortem in now?") == ("status",)


def test_a_reported_question_is_what_the_message_asks() -> None:
    from ragkit.text.asking import questions_of
    message = ("Globex's settlement failed at 07:10. Their account manager is asking when we're obliged to "
               "send the formal notice. What's the deadline?")
    assert questions_of(message).startswith("when we're obliged to send the formal notice.")
    frame = parse_task(message, tenant="globex")
    # an obligation is a standing rule, whatever happened before it: searched by the rule's words
    assert not frame.event
    assert {"obliged", "notice", "deadline"} <= set(frame.predicate)


def test_what_a_thing_charges_is_an_amount() -> None:
    question = "What does the bank that holds our krone account charge us per instruction?"
    assert asked_forms(question) == ("amount",)
    assert asked_forms("What is the dispute fee for Initech?") == ("amount",)
    assert asked_forms("Who is in charge of the incident?")[0] == "person"


def test_a_window_an_hour_and_a_change_number_ask_their_forms() -> None:
    """"When is the deployment window?" asks when (a date or a time), not how long; "which closing
    hour" asks a time of day; "what's its change number?" an identifier, even beside "approved"."""
    assert asked_forms("When is the deployment window for CHG-6859?") == ("date", "time")
    assert asked_forms("For the euro batch, which closing hour applies now?") == ("time",)
    assert asked_forms("The board approved an index rebuild in April. What's its change number?") == ("id",)
    assert asked_forms("How many hours may a commander serve?") == ("duration",)
    # "when does it start applying" asks a date, whatever it is that starts (a reserve rate)
    assert asked_forms("When does Umbrella's new 4% reserve rate start applying?") == ("date",)


def test_a_price_asks_an_amount_and_which_policy_asks_the_policys_id() -> None:
    """"What's the price per transfer?" asks an amount like "what's the fee"; "which policy governs
    it?" asks which record (its id, a slug such as pol-fees-v2), not what the policy says."""
    assert asked_forms("What's the price per received bank transfer under the agreement?") == ("amount",)
    assert asked_forms("Which policy governs the release that shipped the fix for OPS-1958?") == ("id",)
    assert asked_id_shape("which policy governs the release that shipped the fix for ops-1958?") == "slug"


def test_which_of_someones_things_and_which_thing_does_ask_an_instance_of_that_thing():
    """"Which of Wayne's accounts carries the EUR 230,000 threshold?" asks an account (an
    identifier), as "which account ...?" does; "Which bank holds the account with the EUR 230,000
    threshold?" asks a bank (free text), not the threshold's amount it looks the account up by."""
    assert asked_forms("Which of Wayne's accounts carries the EUR 230,000 sweep threshold?") == ("id",)
    assert asked_forms("Which bank holds the account with the EUR 230,000 sweep threshold?") == ()
    assert asked_forms("Which single manual payout limit should operations work to?")[0] == "amount"
    assert asked_forms("Which tenant's EUR cutoff moved?") == ("time",)


def test_a_yes_no_why_question_proposes_a_cause_not_its_date():
    """"Was the refused file Soylent had on 5 January 2026 down to a stale mapping table?" asks
    whether that was the cause (free text); the date places the event, it is not a proposed answer.
    A yes/no question that proposes a date still asks a date."""
    assert asked_forms("Was the file Soylent had refused on 5 January 2026 down to a stale table?") == ()
    assert asked_forms("Did the fix ship on 29 January?")[0] == "date"
