"""Reading a result's fields whatever its shape, and folding text for quote matching."""

from __future__ import annotations

from types import SimpleNamespace

from ragkit.evaluation import field, fold


def test_field_reads_mappings_and_objects_alike():
    assert field({"value": "15:00"}, "value") == "15:00"
    assert field(SimpleNamespace(value="15:00"), "value") == "15:00"
    assert field({"value": None}, "value", "x") is None          # a present None is a value
    assert field({}, "value", "x") == "x" and field(SimpleNamespace(), "value", "x") == "x"
    assert field(None, "value") is None


def test_fold_collapses_whitespace_and_case():
    assert fold("  EUR\tcutoff\n is  15:00 ") == "eur cutoff is 15:00"
    assert fold(1530) == "1530" and fold("") == ""
