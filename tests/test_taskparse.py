"""ragkit.text.taskparse: reading a task into identifiers, names, dates, tenant and the ask."""

from __future__ import annotations

import pytest

from ragkit.core.errors import ValidationError
from ragkit.text.taskparse import (
    TaskFrame,
    content_words,
    feedback_terms,
    find_identifiers,
    jaccard,
    keyword_query,
    misspells,
    normalise_query,
    parse_task,
)


def test_a_rule_question_with_a_full_date_is_read_at_that_date() -> None:
    f = parse_task("Which settlement cutoff applies to Acme's Monday EUR batch on 19 January 2026?",
                   tenant="acme", as_of="2026-01-20")
    assert f.identifiers == () and f.names == ()  # Acme is the caller's tenant, Monday a weekday
    assert f.tenant_named
    assert f.date == "2026-01-19" and f.period is None  # a full date names no month period
    assert not f.event and f.valid_at == "2026-01-19"  # "applies ... cutoff": a rule, at the task's date
    assert f.as_of == "2026-01-20T00:00:00+00:00"
    assert f.qualifiers == ("EUR",)
    assert f.words == ("settlement", "cutoff", "applies", "acme", "monday", "eur", "batch", "january")
    assert f.predicate == ("settlement", "cutoff", "applies", "eur", "batch")


def test_an_event_question_in_a_month_without_a_year_takes_the_latest_such_month() -> None:
    f = parse_task("Why did our reconciliation fail in July?", tenant="acme", as_of="2026-02-02")
    assert f.tenant_named  # "our"
    assert f.period == ("2025-07-01", "2025-08-01")  # July after February 2026: July 2025
    assert f.event and f.valid_at is None  # validity filtering would hide what happened
    assert f.predicate == ("reconciliation", "fail")


def test_a_month_in_the_as_of_month_is_this_year() -> None:
    f = parse_task("What failed in February?", tenant="acme", as_of="2026-02-02")
    assert f.period == ("2026-02-01", "2026-03-01")
    assert parse_task("What failed in December 2025?", tenant="acme").period == ("2025-12-01", "2026-01-01")
    assert parse_task("What failed in July?", tenant="acme").period is None  # no year, no as_of


def test_identifiers_are_not_content_words() -> None:
    f = parse_task("Which commit fixed OPS-3318 in reconcile_settlement?", tenant="globex")
    assert f.identifiers == ("OPS-3318", "reconcile_settlement")
    assert f.id_kinds == {"OPS-3318": "key", "reconcile_settlement": "function"}
    assert f.words == ("commit", "fixed")
    assert not f.tenant_named and f.as_of is None
    assert f.entities == ("ops-3318", "reconcile_settlement")
    assert keyword_query(f) == "OPS-3318 reconcile_settlement commit fixed"


def test_another_tenant_is_a_name_and_dates_in_other_forms() -> None:
    f = parse_task("What did Initech report on Jan 5, 2026?", tenant="acme", as_of="2026-02-01")
    assert f.names == ("Initech",) and not f.tenant_named
    assert f.date == "2026-01-05"
    iso = parse_task("Is the 2026-01-15 payout limit for Globex still in effect?", tenant="acme")
    assert iso.date == "2026-01-15" and iso.names == ("Globex",)
    assert not iso.event and iso.valid_at == "2026-01-15"  # "limit", "in effect": a rule


def test_a_sentence_opener_is_not_a_name_but_a_possessive_is() -> None:
    assert parse_task("Deploys for Globex stopped.", tenant="acme").names == ("Globex",)
    assert parse_task("Deploys stopped. Globex asked why.", tenant="acme").names == ()  # opens a sentence
    assert parse_task("Globex's batch failed.", tenant="acme").names == ("Globex",)
    assert parse_task("Globex batch failed.", tenant="acme").names == ()


def test_find_identifiers_kinds_in_order_without_repeats() -> None:
    text = "E-4471 in reconcile_settlement, commit a41c9e2 (RO-7702, 3.9.4), acme-9, runbook-v2, E-4471"
    assert find_identifiers(text) == [
        ("E-4471", "key"),
        ("reconcile_settlement", "function"),
        ("a41c9e2", "commit"),
        ("RO-7702", "key"),
        ("3.9.4", "version"),
        ("acme-9", "account"),
        ("runbook-v2", "docref"),
    ]


def test_find_identifiers_skips_months_plain_backticks_and_short_keys() -> None:
    assert find_identifiers("due june-30") == []  # a month with a number is a date, not an account
    assert find_identifiers("run `make` or `make_all`") == [("make_all", "function")]
    assert find_identifiers("see `cfg.yaml`") == [("cfg.yaml", "code")]
    assert find_identifiers("OPS-1 is too short") == []


def test_content_words() -> None:
    words = content_words("Why did Acme's January reconciliation fail?")
    assert words == ["acme", "january", "reconciliation", "fail"]
    assert content_words("What is the EUR cutoff, the EUR one?", drop=["eur"]) == ["cutoff"]
    assert content_words("a I x 42") == []  # stopwords, single letters and numbers go


def test_feedback_terms_share_no_stem_with_the_query() -> None:
    texts = ["the settlement batch ran twice", "settlement batch twice again", "batches of settlements"]
    # "batch" and "settlement" are in 3 texts, "twice" in 2; "batch"/"batches" and
    # "settlement"/"settlements" share a stem, so each stem is offered once
    assert feedback_terms(texts, "acme failure") == ["batch", "settlement", "twice"]
    assert feedback_terms(texts, "settlement failure") == ["batch", "twice"]
    assert feedback_terms(texts, "acme", n=1) == ["batch"]
    # min_docs shrinks to 1 for a single text; "one", "only" and "here" are stopwords
    assert feedback_terms(["one text only here"], "acme") == ["text"]


def test_queries_equal_up_to_order_and_case() -> None:
    assert normalise_query("Acme, settlement FAILURE acme") == "acme failure settlement"
    assert jaccard("acme settlement", "Settlement ACME") == 1.0
    assert jaccard("acme settlement", "acme batch") == pytest.approx(1 / 3)
    assert jaccard("", "?") == 1.0


def test_a_bad_task_or_as_of_is_a_clear_error() -> None:
    with pytest.raises(ValidationError):
        parse_task("   ")
    with pytest.raises(ValidationError):
        parse_task("What failed?", as_of="yesterday")


def test_task_frame_defaults() -> None:
    f = TaskFrame(task="x", tenant="*")
    assert f.identifiers == () and f.entities == () and f.id_kinds == {}


def test_only_the_profiles_codes_qualify_a_question() -> None:
    # a currency narrows the question (a passage that states a value must name it) ...
    assert parse_task("What is Umbrella's PLN cutoff?", tenant="umbrella").qualifiers == ("PLN",)
    assert parse_task("When does the Polish zloty batch close?", tenant="umbrella").qualifiers == ("PLN",)
    # ... another acronym is a content word: "SLA" names what is asked, "SFTP" a system
    sla = parse_task("What's the tenant notification SLA in the incident notice policy?", tenant="globex")
    assert sla.qualifiers == () and "sla" in sla.words
    assert parse_task("Why did the SFTP certificate expire?", tenant="soylent").qualifiers == ()


def test_a_currency_named_in_words_is_its_code_not_a_word_to_share() -> None:
    # "Swiss franc payouts" asks about CHF: "franc" and "swiss" are no further words a passage must share
    frame = parse_task("By what time do Swiss franc payouts go out?", tenant="acme", as_of="2026-05-01")
    assert frame.qualifiers == ("CHF",)
    assert "franc" not in frame.predicate and "swiss" not in frame.words
    assert "chf" in frame.words and "payouts" in frame.predicate


def test_a_word_of_a_named_codes_name_is_that_code_not_another_name() -> None:
    # "their Danish payment runs ... their DKK payments": "Danish" names DKK, which the passage
    # must name anyway; a row that says "| DKK | 11:30 |" is not set aside for not saying "Danish"
    message = ("Soylent's treasury people are reshuffling their Danish payment runs and want to be sure "
               "of the deadline. By what time do their DKK payments have to be in to settle the same day?")
    frame = parse_task(message, tenant="soylent", as_of="2026-08-10")
    assert frame.names == () and frame.qualifiers == ("DKK",)
    # without the code, the word is a name like any other (a Danish bank is no DKK payment)
    assert parse_task("Is the Danish bank holding our EUR account?", tenant="soylent").names == ("Danish",)


def test_a_near_miss_of_the_callers_tenant_names_the_tenant() -> None:
    # "Initch" is a typo of the caller's tenant, not another name every passage must carry
    frame = parse_task("Which commit fixed the Initch payout bug?", tenant="initech", as_of="2026-05-01")
    assert frame.tenant_named and frame.names == () and "initch" not in frame.words
    # another tenant's name, or a short word, is no typo
    assert parse_task("Which commit fixed the Globex payout bug?", tenant="initech").names == ("Globex",)
    assert not misspells("Acne", "acme") and not misspells("Initech", "initech")


def test_a_short_tenant_name_with_a_letter_dropped_is_the_tenant() -> None:
    # "Wane" is Wayne with one letter dropped: the tenant, kept in ``typos`` so that the reader
    # can read the task with the tenant's own name; a changed letter in a short name is a word
    frame = parse_task("What's the rolling reserve in the Wane terms today?", tenant="wayne")
    assert frame.typos == ("Wane",) and frame.tenant_named and frame.names == ()
    assert misspells("Wane", "wayne") and not misspells("Way", "wayne") and not misspells("Acne", "acme")
    assert parse_task("What's the rolling reserve in the Wayne terms today?", tenant="wayne").typos == ()


def test_a_statement_with_a_tag_is_a_yes_no_question_about_what_holds() -> None:
    # ", right?" turns a statement into a check of a claim: what holds, not what happened
    frame = parse_task("Stark's CHF batch closes at 13:00, right?", tenant="stark", as_of="2026-05-01")
    assert not frame.event and frame.valid_at == "2026-05-01"


def test_a_hypothetical_or_a_measured_obligation_asks_what_a_rule_says() -> None:
    # "would we owe" asks what the agreement says; "did we have to" measures what a rule required
    # at a date; neither is an event to look up in our own incident records
    hypothetical = "If we wanted out of the agreement for convenience, how much written notice would we owe?"
    assert not parse_task(hypothetical, tenant="tyrell", as_of="2025-08-31").event
    dated = "How many calendar days did we have on 2 September 2025 to get evidence to the acquirer?"
    frame = parse_task(dated, tenant="wayne", as_of="2025-09-02")
    assert not frame.event and frame.valid_at == "2025-09-02"
    by_others = "On 26 June, how long did operations have to clear a return reason with the tenant?"
    assert not parse_task(by_others, tenant="acme", as_of="2025-06-26").event
    # what happened stays an event
    assert parse_task("How many days did the fix take?", tenant="acme", as_of="2026-01-01").event
    assert parse_task("Who would have approved OPS-12?", tenant="acme", as_of="2026-01-01").event
    # a present "fail back" is no failure that happened
    failback = "After a regional failover, how many health checks must the primary pass before we fail back?"
    assert not parse_task(failback, tenant="umbrella", as_of="2026-01-01").event


def test_a_name_a_yes_no_claim_compares_with_is_not_required() -> None:
    """"... closes with the rest of the Nordics, right?" checks the claim; the policy row that
    states NOK's cutoff need not name the Nordics."""
    frame = parse_task("Soylent NOK closes with the rest of the Nordics at 12:00 CET, right?",
                       tenant="soylent")
    assert "Nordics" not in frame.names and frame.qualifiers == ("NOK",)
    assert "Nordics" in parse_task("Which cutoff do the Nordics share?", tenant="soylent").names


def test_a_quarter_or_a_range_of_months_is_the_period_asked_about():
    """"late days in Q3 2026", "from July to September": the event happened in those months, so
    records published long before or after them are about another event."""
    frame = parse_task("Did Tyrell have more than two late payout days in Q3 2026?", as_of="2026-10-05")
    assert frame.period == ("2026-07-01", "2026-10-01")
    frame = parse_task("How many late days did Tyrell have from July to September?", as_of="2026-10-05")
    assert frame.period == ("2026-07-01", "2026-10-01")
    frame = parse_task("What went wrong in the third quarter of 2025?", as_of="2026-10-05")
    assert frame.period == ("2025-07-01", "2025-10-01")


def test_the_question_sentence_sets_the_tense_not_the_story_it_leans_on():
    """"... a krone file rolled into tomorrow's batch. Before I reply: what DKK cutoff are they on
    today?" asks which rule holds (searched at its date), though the story before it happened;
    "The batch failed on Monday. What caused it?" asks about an event."""
    rule = parse_task("Uma from Globex is asking why a krone file that reached us at 10:15 rolled into "
                      "tomorrow's batch. Before I reply: what DKK cutoff are they on today?",
                      as_of="2026-03-01", tenant="globex")
    assert not rule.event and rule.valid_at == "2026-03-01"
    assert parse_task("The Globex batch failed on Monday. What caused it?", as_of="2026-03-01",
                      tenant="globex").event
