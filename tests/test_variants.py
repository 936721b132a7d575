"""ragkit.search.variants: the declarative rewrite is a transparent template; variants named, deduplicated."""

from __future__ import annotations

import pytest

from ragkit.search import declarative_rewrite, query_variants


@pytest.mark.parametrize("question, statement", [
    ("Why did Acme's January reconciliation fail?", "Acme's January reconciliation failed because"),
    ("Which Wayne rollout did Gallardo approve in December 2025?",
     "The Wayne rollout that Gallardo approved in December 2025 is"),
    ("What is the current status of OPS-6705?", "The current status of OPS-6705 is"),
    ("Which bank holds account soylent-84473?", "The bank that holds account soylent-84473 is"),
    ("E-1773 showed up in January. Which function throws it?",
     "E-1773 showed up in January. The function that throws it is"),
    ("When was the cutover?", "The cutover"),
    ("Cutoff for EUR", "Cutoff for EUR"),
])
def test_declarative_rewrite(question, statement):
    assert declarative_rewrite(question) == statement


def test_query_variants_names_and_identifiers():
    v = query_variants("Which commit fixed OPS-3318?", tenant="acme")
    assert v["question"] == "Which commit fixed OPS-3318?"
    assert v["identifiers"] == "OPS-3318" and "OPS-3318" in v["keywords"]
    assert v["declarative"] == "The commit that fixed OPS-3318 is"
    assert "identifiers" not in query_variants("Why did the January reconciliation fail?")
