"""Value reading: kinds, normalisation through ragkit.text.normalise.normalise_value, exact offsets."""

from __future__ import annotations

import hashlib
import re

import pytest

from ragkit import ValidationError
from ragkit.text import (
    CURRENCIES,
    FORM_KIND,
    FORM_PATTERNS,
    FORMS,
    ID_VALUE_PATTERN,
    KIND_FORMS,
    MONTH_WORDS,
    NOT_PEOPLE,
    STATUS_WORDS,
    VALUE_KINDS,
    asked_forms,
    asked_kind,
    normalise_value,
    read_values,
    sentence_at,
    sentence_spans,
)


def test_times_with_hand_computed_offsets() -> None:
    text = "EUR cutoff 16:00 CET; GBP at 2 pm; USD 9.30 CET."
    got = [(v.value, v.surface, v.start, v.end) for v in read_values(text, "time")]
    # "EUR cutoff " is 11 chars; "16:00 CET; GBP at " brings us to 29; "2 pm; USD " to 39
    assert got == [("16:00", "16:00", 11, 16), ("14:00", "2 pm", 29, 33), ("09:30", "9.30", 39, 43)]
    for v in read_values(text, "time"):
        assert text[v.start : v.end] == v.surface


def test_noon_and_midnight_are_times_of_day() -> None:
    """A time named in words is a time: "due by noon?" proposes 12:00, so the question asks a time
    (its answer is the time the source states), and "this afternoon" names none."""
    got = [(v.value, v.surface) for v in read_values("by noon, or at midnight; this afternoon", "time")]
    assert got == [("12:00", "noon"), ("00:00", "midnight")]
    question = "Is the month-end pack due with the controller by noon on the first business day?"
    assert asked_forms(question) == ("time",)


def test_a_version_number_or_percentage_is_not_a_time() -> None:
    assert read_values("build 2.5.7, markup 1.2%, within 2.45 seconds", "time") == []


def test_amounts_dates_and_ids() -> None:
    text = "Threshold EUR 25,000 from 15 January 2026 (was USD 1,000.50 until 2025-12-31)."
    amounts = read_values(text, "amount")
    assert [(a.value, a.start, a.end) for a in amounts] == [("EUR 25000", 10, 20), ("USD 1000.5", 47, 59)]
    dates = read_values(text, "date")
    assert [(d.value, d.surface) for d in dates] == [
        ("2026-01-15", "15 January 2026"),
        ("2025-12-31", "2025-12-31"),
    ]
    ids = read_values(
        "Commit a41c9e2 shipped in RO-7702 for acme-9; see ops-2987-c3 and reconcile_settlement.", "id"
    )
    assert [v.surface for v in ids] == ["a41c9e2", "RO-7702", "acme-9", "ops-2987-c3", "reconcile_settlement"]


def test_values_normalise_like_the_case_normaliser() -> None:
    for kind, surface in [
        ("time", "3 pm"),
        ("amount", "EUR 48,210.50"),
        ("date", "Jan 15, 2026"),
        ("id", "E-4471"),
    ]:
        [v] = read_values(f"x {surface} y", kind)
        assert v.value == normalise_value(kind, surface)


def test_text_kind_reads_durations_percentages_counts() -> None:
    text = "The retention period stays at 5 years; reserve 12% of volume; retry ceiling is 5 attempts."
    got = [(v.form, v.value) for v in read_values(text, "text")]
    assert got == [("duration", "5 years"), ("percentage", "12%"), ("count", "5 attempts")]
    assert {v.kind for v in read_values(text, "text")} == {"text"}


def test_status_and_person() -> None:
    assert [v.value for v in read_values("| Status | in progress |", "status")] == ["in progress"]
    assert [v.surface for v in read_values("| Approved by | Esterhazy |", "person")] == ["Esterhazy"]
    assert [v.surface for v in read_values("Approved by Thorsby (implementation).", "person")] == ["Thorsby"]
    assert read_values("| Status | completed |", "person") == []


def test_unknown_kind_is_a_clear_error() -> None:
    with pytest.raises(ValidationError, match="unknown"):
        read_values("x", "colour")


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which settlement cutoff applies to Acme's Monday EUR batch on 19 January 2026?", "time"),
        ("By what time must Umbrella's PLN captures be in on 2026-02-24?", "time"),
        ("As of 5 October 2025, what is the platform's second-approver threshold?", "amount"),
        ("How much was posted twice?", "amount"),
        ("On which date was Acme's cutover completed?", "date"),
        ("When was the change for OPS-1847 completed in production?", "date"),
        ("Which commit fixed OPS-3318?", "id"),
        ("Who approved RO-7702?", "id"),
        ("What is the current status of OPS-6087?", "status"),
        ("Why did Acme's January reconciliation fail?", "text"),
        ("What rolling reserve applies to Acme on 14 June 2026?", "text"),
        ("Which retention period should operations work to?", "text"),
    ],
)
def test_asked_kind(question: str, kind: str) -> None:
    assert asked_kind(question) == kind


def test_asked_forms_are_finer() -> None:
    assert asked_forms("Who approved RO-7702?") == ("person",)
    assert asked_forms("What rolling reserve applies to Acme?") == ("percentage",)
    assert asked_forms("Why did it fail?") == ()


def test_sentences_and_lines() -> None:
    text = "## Result\n\nCutover completed for acme. Acme now settles on v3.\n| USD | 11:15 |"
    spans = [text[a:b] for a, b in sentence_spans(text)]
    assert spans == ["## Result", "Cutover completed for acme.", "Acme now settles on v3.", "| USD | 11:15 |"]
    pos = text.index("11:15")
    a, b = sentence_at(text, pos)
    assert text[a:b] == "| USD | 11:15 |"


def test_iso_datetimes_read_as_dates_and_times() -> None:
    text = "- finished: 2025-05-02T10:49Z"
    [d] = read_values(text, "date")
    [t] = read_values(text, "time")
    assert (d.value, d.start, d.end) == ("2025-05-02", 12, 22)
    assert (t.value, t.start, t.end) == ("10:49", 23, 28)


def test_forms_read_exactly_what_is_asked() -> None:
    text = "RO-1753 was approved by Gallardo."
    assert [v.surface for v in read_values(text, "id")] == ["RO-1753", "Gallardo"]
    assert [v.surface for v in read_values(text, forms=("id",))] == ["RO-1753"]
    with pytest.raises(ValidationError, match="form"):
        read_values(text, forms=("colour",))


@pytest.mark.parametrize(
    ("question", "forms"),
    [
        ("Bertolini signed off one Cyberdyne deployment in July 2025. Which one?", ("id",)),
        ("Which Stark rollout did Gallardo approve in October 2025?", ("id",)),
        ("Where in the code does E-3603 come from?", ("id",)),
        ("Out of hours, which engineer takes escalations for our incidents?", ("person",)),
        ("What made Globex's clearing go wrong? It was freed ahead of the agreed period.", ()),
        ("What was the underlying explanation?", ()),
    ],
)
def test_asked_forms_rules(question: str, forms: tuple[str, ...]) -> None:
    assert asked_forms(question) == forms


@pytest.mark.parametrize(
    ("question", "forms"),
    [
        ("Which release manager signed off RO-7781?", ("person",)),
        ("Which fx-rates build carried the fix for OPS-2360?", ("id",)),
        ("What had gone wrong on our side?", ()),
    ],
)
def test_asked_forms_person_before_identifier(question: str, forms: tuple[str, ...]) -> None:
    assert asked_forms(question) == forms


def test_value_pattern_tables() -> None:
    assert FORMS == ("time", "amount", "date", "id", "person", "status", "duration", "percentage", "count")
    assert (FORM_KIND["person"], FORM_KIND["duration"], FORM_KIND["id"]) == ("id", "text", "id")
    assert KIND_FORMS["id"] == ("id", "person") and set(KIND_FORMS) == set(VALUE_KINDS)
    assert FORM_PATTERNS["id"] is ID_VALUE_PATTERN
    assert "EUR" in CURRENCIES.split("|") and "FAQ" not in CURRENCIES.split("|")
    # size and digest of values._NOT_PEOPLE before the move (commit af8ea8f): months, weekdays, labels
    assert len(NOT_PEOPLE) == 69
    assert hashlib.sha256(" ".join(sorted(NOT_PEOPLE)).encode()).hexdigest()[:16] == "a303fa7aff3ff8ff"
    assert {"March", "Friday", "Owner"} <= NOT_PEOPLE
    assert MONTH_WORDS.split("|")[0] == "september" and "sept" in MONTH_WORDS.split("|")
    assert re.fullmatch(str(STATUS_WORDS), "waiting on finance")


def test_a_table_label_is_not_a_person_but_a_surname_is() -> None:
    assert [v.surface for v in read_values("| Owner | Esterhazy |", "id")] == ["Esterhazy"]


def test_a_count_is_a_number_of_a_plural_noun() -> None:
    text = "At most 3 closed batches may be reopened; clause 14.3 applies to 2 payout files in Q2 2026."
    got = [(v.form, v.surface) for v in read_values(text, "text")]
    # a clause number (14.3) and a year (2026) count nothing
    assert got == [("count", "3 closed batches"), ("count", "2 payout files")]
    got = [v.surface for v in read_values("retried 8 times; 3 is the number; version 2 was", "text")]
    assert got == ["8 times"]


def test_durations_in_business_hours_and_not_clause_numbers() -> None:
    got = [v.surface for v in read_values("answered within 6 business hours; 7.4 Business hours", "text")]
    assert got == ["6 business hours"]


def test_how_many_names_the_unit_that_answers() -> None:
    from ragkit.text.asked import asked_unit

    assert asked_unit("How many closed batches of one tenant may be reopened?") == "batches"
    assert asked_unit("How many business days do we have?") == "business days"
    assert asked_unit("How many calendar days did we have?") == "calendar days"
    assert asked_unit("Thanks. How many payout files could be released again?") == "files"
    assert asked_unit("What is the cap on reopened batches?") is None


def test_a_proposed_measure_is_checked_not_searched_for() -> None:
    from ragkit.text.asked import without_measures

    question = "Is reserve-keeper expected to finish a batch within 30 minutes at p95?"
    assert "minutes" not in without_measures(question) and "p95" in without_measures(question)
    assert len(without_measures(question)) == len(question)  # offsets still point into the question
    assert "retries" in without_measures("Are we still capped at 3 retries?")  # a count keeps its noun
    assert "EUR" not in without_measures("Can I approve a EUR 30,000 refund?")


def test_the_question_phrase_says_what_is_asked_before_a_noun_elsewhere() -> None:
    # "which rollout" asks for an identifier although the ask also says "cutoff"
    assert asked_forms("Which rollout carried the fix for Soylent's early cutoff rollover?") == ("id",)
    # "how long" asks for a duration although "amount" is a noun of the amount rule
    assert asked_forms("How long is each day's amount held?") == ("duration",)
    # "who" asks for a person, and "on which date" for a date, whatever nouns follow
    assert asked_forms("Who approved the change to the EUR cutoff?") == ("person",)
    assert asked_forms("On which date is the maintenance window the board gave CHG-8375?") == ("date",)
    # "when" asks a date or a time of day alike: the nouns decide
    assert asked_forms("When does Tyrell's euro batch close these days?")[0] == "time"
    # "who's right" asks which claim holds, not for a person
    assert asked_forms("Who's right? What cutoff applies to Tyrell?")[0] == "time"
    # a statement before the question does not ask
    assert asked_forms("The clause caps how often batches reopen. What is that cap?")[0] == "amount"
    # "which one" after a noun that names an identifier's kind asks for that identifier
    assert asked_forms("Somebody traced it to a specific function; which one was it?") == ("id",)
    assert asked_forms("A build was rolled back last week; which one?") == ("id",)


def test_a_hyphenated_name_is_one_word_to_the_ask_rules() -> None:
    # the percentage rule's "reserve" is not said by the service reserve-keeper
    assert asked_forms("What's reserve-keeper's p95 batch duration?") == ("duration",)
    assert asked_forms("What rolling reserve applies to Acme?")[0] == "percentage"


def test_a_yes_no_question_about_a_day_without_a_year_asks_for_a_date() -> None:
    # "29 January" is no value the reader can normalise (no year), but the question proposes a date
    assert asked_forms("Did the OPS-7879 patch ship on 29 January?") == ("date",)
    assert asked_forms("Was it deployed on January 29?") == ("date",)
    # a value it can read comes first; a wh-question is not a yes/no question
    assert asked_forms("Is Acme on 11:15 since 3 March?")[0] == "time"
    assert asked_forms("Who deployed it on 29 January?") == ("person",)


def test_how_much_of_a_whole_asks_for_a_share() -> None:
    uptime = "How much of Q2 2026 was notify-hub up and passing its health check?"
    assert asked_forms(uptime)[0] == "percentage"
    assert asked_forms("How much is the refund threshold?") == ("amount",)


def test_plain_english_names_for_an_identifier_a_share_a_count_and_a_date() -> None:
    # an identifier asked by its generic name, or as a code path
    assert asked_forms("The vendor mentioned a dispute for Hooli. What is its key?") == ("id",)
    assert asked_forms("Give me the merchant's account id?") == ("id",)
    assert asked_forms("Which code path writes the statement file?") == ("id",)
    # a part of a whole is a share
    assert asked_forms("What portion of each payout is held back?")[0] == "percentage"
    assert asked_forms("What proportion of refunds needs a second look?")[0] == "percentage"
    # "the most <things>" counts them, even after a clause that opens with "when"
    assert asked_forms("When a webhook fails, what's the most redeliveries we attempt?")[0] == "count"
    # "the date" asks for a date even in a request with no question word
    assert asked_forms("Could you look up the date the new limit was published?") == ("date",)


def test_the_most_of_a_plural_noun_counts_that_noun() -> None:
    from ragkit.text.asked import asked_unit

    assert asked_unit("What's the most redeliveries allowed before we give up?") == "redeliveries"
    assert asked_unit("How many retries are permitted per payout?") == "retries"
    # "the most junior person" ranks people; it counts nothing
    assert asked_unit("Who is the most junior person allowed to approve it?") is None


def test_how_much_notice_asks_for_a_duration() -> None:
    assert asked_forms("How much notice do we have to give to end the agreement?") == ("duration",)
    assert asked_forms("How much advance warning do tenants get?") == ("duration",)
    assert asked_forms("How much is the refund threshold?") == ("amount",)


def test_an_amount_does_not_join_a_code_to_a_number_on_the_next_line() -> None:
    """"currency=EUR" ending one log line and "07:31:19" opening the next are no "EUR 07"."""
    text = "batch opened currency=EUR\n07:31:19 INFO threshold EUR 25,000"
    assert [v.surface for v in read_values(text, forms=("amount",))] == ["EUR 25,000"]


def test_an_abbreviated_unit_counts_what_its_full_word_counts():
    from ragkit.text.asked import asked_unit

    assert asked_unit("Hand over after how many hrs?") == "hours"
    assert asked_unit("How many mins to acknowledge?") == "minutes"


def test_the_asking_clause_leaves_out_a_thing_described_before_it():
    from ragkit.text.subjects import asking_clause

    q = "For the service that builds the SEPA files, within what time is an alert acknowledged?"
    assert asking_clause(q) == "within what time is an alert acknowledged"
    assert asking_clause("Incident commander hand-off - after how many hours?") == ""  # a topic, kept
    assert asking_clause("What is the cap, according to the contract?") == ""
    # an instruction that walks a chain is no lead-in naming a thing: its words say where to look
    assert asking_clause("Follow OPS-2061 to the rollout that fixed it and the policy that rollout "
                         "cites: what limit does the clause set?") == ""


def test_a_question_proposes_numbers_written_as_words() -> None:
    """Operators ask "within half an hour?", "more than two late days?": a yes/no question's figures in
    words propose a duration or a count as its digits do. Documents are read as written (contract
    boilerplate, "thirty days' notice", is rarely what is asked, and would crowd out the figures)."""
    from ragkit.text.asked import asked_forms
    from ragkit.text.value_patterns import written_numbers

    assert asked_forms("Was OPS-3370 at Stark picked up within half an hour?") == ("duration",)
    assert asked_forms("Did Tyrell have more than two late payout days in Q3 2026?") == ("count",)
    assert asked_forms("Was the duplicate noticed within an hour?") == ("duration",)
    assert written_numbers("after four attempts, twelve hours") == "after 4 attempts, 12 hours"
    assert read_values("Either party may terminate on thirty days' notice.", forms=("duration",)) == []


def test_a_price_of_a_rate_plus_a_fixed_amount_is_one_amount():
    """"| Card capture | 0.18% + EUR 0.07 |" states one price: read as one amount, not a percentage
    and a separate amount, and normalised with both parts (a bare amount is unchanged)."""
    found = read_values("| Card capture | 0.18% + EUR 0.070 |", forms=("percentage", "amount"))
    assert [(v.form, v.surface, v.value) for v in found] == \
        [("amount", "0.18% + EUR 0.070", "0.18% + EUR 0.07")]
    assert normalise_value("amount", "EUR 25,000") == "EUR 25000"
    assert [v.form for v in read_values("a 12% reserve, plus EUR 5", forms=("percentage", "amount"))] == \
        ["percentage", "amount"]
