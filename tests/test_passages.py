"""How the offline policy reads passages against the task: names as the evidence spells them,
and a conditional exception that sets itself against the value a yes/no question proposes."""

from __future__ import annotations

from ragkit.agent.offline.passages import contrasts, respelled


def test_a_misspelt_name_is_read_as_the_evidence_spells_it() -> None:
    """"Kestral" where every text says "Kestrel"; a name the evidence states is kept as asked."""
    assert respelled(["Kestral"], ["Payment services agreement with Kestrel Bank"]) == ("Kestrel",)
    assert respelled(["Soylent"], ["Solent Bank holds it", "Soylent's cutoff"]) == ("Soylent",)
    assert respelled(["Stark"], ["start of the run"]) == ("Stark",)  # too short to respell


def test_an_exception_naming_the_proposed_value_is_about_the_question() -> None:
    """"Has Tyrell moved to the 15:00 EUR close yet?": "the 15:00 rule does not reach them" speaks
    of the EUR close without saying EUR; a passage naming neither value does not."""
    text = "Tyrell stays on 16:00 until cutover. It is not done yet, so the 15:00 rule does not reach them."
    assert contrasts("Has Tyrell moved to the 15:00 EUR close yet?", text)
    asked = "Has Tyrell moved to the 15:00 EUR close yet?"
    assert not contrasts(asked, "Tyrell stays on 16:00 until cutover.")
    assert not contrasts("What is Tyrell's EUR close?", text)


def test_two_swapped_letters_of_a_short_name_are_a_misspelling() -> None:
    """"Strak" where the texts say "Stark": a five-letter name is read with two neighbouring
    letters swapped back, but not with one letter changed ("Stark" is no misspelt "start")."""
    assert respelled(["Strak"], ["Stark's double payouts in August"]) == ("Stark",)
    assert respelled(["Stark"], ["start of the run"]) == ("Stark",)
    assert respelled(["Wayen"], ["Wayne escalations", "Wayne's cutoff"]) == ("Wayne",)


def test_a_lower_case_word_is_respelled_in_lower_case_and_put_back_into_the_task() -> None:
    """A misspelt word of the ask ("comander") is read as the evidence's one near word, kept in
    lower case, and the task is read with it."""
    from ragkit.agent.offline.passages import reworded

    texts = ["An incident commander hands over"]
    assert respelled(["comander", "incident"], texts) == ("commander", "incident")
    read = reworded("Incident comander: how long?", ["comander"], ["commander"])
    assert read == "Incident commander: how long?"
