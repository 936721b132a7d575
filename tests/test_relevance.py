"""ragkit.text.relevance: question terms, a sentence's context, and the cue patterns resolution reads."""

from __future__ import annotations

from ragkit.text.relevance import (
    CAUSAL_QUESTION,
    CAUSE,
    CODE,
    COMPLETED,
    DEONTIC,
    DEONTIC_QUESTION,
    DETECTION,
    MONTH_NAMES,
    NOT_CODES,
    ROOT_CAUSE,
    condition_event,
    context,
    is_heading_or_table_head,
    mentions,
    named_month,
    question_terms,
)

TABLE = "# EUR cutoffs\n\nIntro line.\n\n| Currency | Cutoff |\n|---|---|\n| EUR | 16:00 |\n| GBP | 14:30 |"


def _line(text: str, start: str) -> tuple[int, int]:
    a = text.index(start)
    b = text.find("\n", a)
    return a, (b if b >= 0 else len(text))


def test_question_terms_are_content_stems() -> None:
    # who/the/of/for/on are stop words, March a month, Friday a weekday, 3.9.4 has no letter to start
    # a word; "rollout" and "approved" map to their SAME_MEANING classes
    terms = question_terms("Who approved the March rollout of 3.9.4 for Acme on Friday?")
    assert terms == {"appro", "rolli", "acme"}
    # three- and four-letter month abbreviations go too; "is" is shorter than three letters
    assert question_terms("Is the jan cutoff in sept different?") == {"cutof", "diffe"}
    # the question's generic predicate words ("applies", "value") are stop words here
    assert question_terms("Which value applies?") == set()


def test_context_is_the_heading_and_for_a_table_row_the_header_row() -> None:
    assert context(TABLE, TABLE.index("| GBP")) == "# EUR cutoffs\n| Currency | Cutoff |\n"
    assert context(TABLE, TABLE.index("Intro")) == "# EUR cutoffs"
    assert context("no heading", 0) == ""


def test_headings_and_table_heads_are_not_claims() -> None:
    assert is_heading_or_table_head(TABLE, *_line(TABLE, "# EUR"))
    assert is_heading_or_table_head(TABLE, *_line(TABLE, "| Currency"))  # the row above the separator
    assert is_heading_or_table_head(TABLE, *_line(TABLE, "|---"))
    assert not is_heading_or_table_head(TABLE, *_line(TABLE, "| EUR"))
    assert not is_heading_or_table_head(TABLE, *_line(TABLE, "Intro"))


def test_mentions_whole_words_any_case() -> None:
    assert mentions("Cutover completed for Acme.", "acme")
    assert not mentions("acme-9 failed", "acme")  # a hyphen joins words
    assert not mentions("acmecorp", "acme")
    assert mentions("see OPS-12.", "ops-12")


def test_named_month_needs_in_a_full_month_name_and_a_year() -> None:
    assert named_month("initech-32644 had an issue in September 2025. What is the ticket key?") == (2025, 9)
    assert named_month("What happened in sept 2025?") is None
    assert named_month("September 2025 was busy") is None
    assert MONTH_NAMES[0] == "january" and len(MONTH_NAMES) == 12


def test_condition_event() -> None:
    assert condition_event("until cutover") == "cutov"
    assert condition_event("until the cutover") == "cutov"
    assert condition_event("for non-migrated tenants") == "migra"
    assert condition_event("while not yet migrated") == "migra"
    assert condition_event("always") is None


def test_cue_patterns() -> None:
    assert CAUSAL_QUESTION.search("Why did it fail?") and CAUSAL_QUESTION.search("what went wrong")
    assert not CAUSAL_QUESTION.search("Which cutoff applies?")
    assert CAUSE.search("It failed because the batch ran twice.")
    assert DETECTION.search("which is how they spotted it")
    assert DETECTION.search("that is how the team noticed")
    assert not DETECTION.search("which is why it failed")
    assert ROOT_CAUSE.search("The root cause was a retry.") and not ROOT_CAUSE.search("It failed.")
    assert COMPLETED.search("Cutover completed for acme") and COMPLETED.search("it went live")
    assert not COMPLETED.search("Cutover planned")
    assert DEONTIC_QUESTION.search("What does the policy require?")
    assert DEONTIC.search("Payouts must be approved") and not DEONTIC.search("Payouts are approved")


def test_codes_are_three_capitals_that_are_not_clock_words() -> None:
    found = [c for c in CODE.findall("EUR at 16:00 CET, GBP-1 and CHF; API") if c not in NOT_CODES]
    assert found == ["EUR", "CHF"]  # CET and API are not codes; GBP-1 is part of an identifier


def test_a_sentence_about_a_sibling_contrasts_with_the_question() -> None:
    from ragkit.text.contrast import contrasting

    disputes = "Questions from Hooli's disputes team are answered within 6 business hours."
    assert contrasting("How fast do we answer a question from Hooli's treasury team?", disputes, disputes)
    assert contrasting("How fast do we answer Hooli's disputes team?", disputes, disputes) is None
    # a verb after a modal, a possessive owner and a phrase-opening word are no modifiers
    rule = "Nobody may exceed a retention period of 6 years."
    assert contrasting("What is the platform's retention period?", rule, rule) is None
    onboarding = "Onboarding reviews for new Globex merchants are completed within 5 business days."
    q = "Once a merchant's application is complete, how long can its onboarding review take?"
    assert contrasting(q, onboarding, onboarding) is None
    notice = "Notice deadline: 90 minutes."
    assert contrasting("What is the daily deadline for a report?", notice, notice) == "daily deadline"


def test_currency_names_are_read_as_codes() -> None:
    from ragkit.text.relevance import named_codes, with_codes

    assert with_codes("Canadian dollars and US dollars") == "CAD and USD"
    assert named_codes("Has Tyrell's euro batch moved to the 15:00 close?") == ["EUR"]
    assert named_codes("Is the CET close the same?") == []  # a time zone is not a code the question is about
    # the country decides a krona's or krone's code, whichever of the two spellings is used
    assert with_codes("the Norwegian krona cut-off, the Danish krona fee, a krona") == (
        "the NOK cut-off, the DKK fee, a SEK")


_ACCOUNTS = (
    "## Accounts\n\n| Account | Currency | Bank |\n|---|---|---|\n"
    "| acme-30361 | EUR | Pellucid Bank |\n| acme-25788 | USD | Solent Bank |\n"
)


def _cell(question: str, row_start: str) -> str | None:
    from ragkit.text.relevance import table_cell

    a = _ACCOUNTS.index(row_start)
    b = _ACCOUNTS.index("\n", a)
    span = table_cell(_ACCOUNTS, a, b, question)
    return None if span is None else _ACCOUNTS[span[0] : span[1]]


def test_a_table_row_answers_by_the_column_the_question_asks_for() -> None:
    assert _cell("Which bank is acme-25788 held with?", "| acme-25788") == "Solent Bank"
    # a reverse lookup: the question names the bank and the currency (as "dollar"), not the account
    assert _cell("We keep a dollar account at Solent Bank. What's its id?", "| acme-25788") == "acme-25788"
    # two columns the question does not name and no header it shares: no single cell answers
    assert _cell("What do we know about acme-30361?", "| acme-30361") is None
    # not a table row
    assert _cell("Which bank?", "## Accounts") is None


def test_a_proper_name_is_no_sibling_of_the_thing_asked_about() -> None:
    from ragkit.text.contrast import contrasting

    row = "| acme-25788 | USD | Solent Bank |"
    question = "She wants us to chase the receiving bank. Which bank is that account with?"
    assert contrasting(question, row, row) is None  # "Solent Bank" names a bank, not a kind of bank
    other = "Questions from Hooli's disputes team are answered within 6 business hours."
    assert contrasting("How fast do we answer Hooli's treasury team?", other, other) == "treasury team"


def test_a_return_reason_is_no_question_why() -> None:
    assert not CAUSAL_QUESTION.search("how long did operations have to clear a return reason?")
    assert CAUSAL_QUESTION.search("What was the reason for the late batch?")
    assert CAUSAL_QUESTION.search("Why did the batch close late?")


def test_a_pdf_table_row_without_outer_bars_is_read_by_its_columns() -> None:
    """A PDF's text keeps a table as "a | b | c" lines: the row is a table row all the same, its
    header the first such line, and the asked column its cell."""
    from ragkit.text.relevance import context, is_table_row, table_cell

    text = "Schedule 1\nTier | Amount | Role\nTier 5 | 10,001 to 25,000 | head of payments\n" \
           "Tier 6 | 25,001 to 50,000 | head of operations\n"
    row = text.index("Tier 6")
    end = text.index("\n", row)
    assert is_table_row(text[row:end]) and not is_table_row("A sentence | with one bar.")
    assert context(text, text.index("head of operations"), cell=True).endswith("Role")
    a, b = table_cell(text, row, end, "Which role may grant it?")
    assert text[a:b] == "head of operations"
