"""Small builders the tests share: a Markdown document with front matter, and the fixture corpus's
evidence cases (the EUR cutoff case and an unanswerable GBP twin)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_doc(folder: Path, name: str, doc_id: str, body: str, **fields: str) -> Path:
    """``folder/name``: a Markdown document with ``doc_id`` and ``fields`` as front matter."""
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    path = folder / name
    path.write_text(f"---\ndoc_id: {doc_id}\n{extra}---\n# {doc_id}\n\n{body}\n")
    return path


def eur_case() -> dict[str, Any]:
    """An answerable case over ``tests/fixtures/corpus``: the migrated tenants' EUR cutoff (15:00)."""
    return {"id": "eur", "task": "Which EUR cutoff applies to migrated tenants?",
            "caller": {"tenant": "acme", "groups": ["ops"]}, "as_of": "2026-01-19", "answerable": True,
            "evidence": [{"doc_id": "settlement-policy-v3", "anchor": "cutoffs", "role": "decisive",
                          "quote": "Tenants migrated to the new clearing platform use a 15:00 CET cutoff"}],
            "reject": [{"doc_id": "settlement-runbook-v2", "reason": "lower_authority"}],
            "expected": {"kind": "time", "value": "15:00"}, "tags": ["conflict"], "decoys": []}


def gbp_case(**changes: Any) -> dict[str, Any]:
    """The unanswerable twin of :func:`eur_case`: no GBP cutoff is in the corpus."""
    return {**eur_case(), "id": "gbp", "task": "Which GBP cutoff applies to migrated tenants?",
            "answerable": False, "evidence": [], "expected": None, "tags": [],
            "absent": {"all_of": ["GBP"], "note": "no GBP cutoff in the corpus"}, **changes}
