"""Normalised values: the one way answers and quoted values are compared.

A time, an amount, a date, an identifier or a status can be written many ways
("3 pm", "15:00"; "EUR 25,000", "EUR 25000"). :func:`normalise_value` turns each
kind into one canonical string, so the case loader, the value reader, resolution
and citation checks compare like with like.
"""

from __future__ import annotations

import datetime as dt
import re

from ragkit.core.errors import ValidationError

__all__ = ["MONTHS", "MONTH_NUMBER", "VALUE_KINDS", "normalise_value"]

#: Kinds of expected value; see :func:`normalise_value`.
VALUE_KINDS = ("time", "amount", "id", "status", "date", "text")

#: Month names, January first (shared by the case loader, task parsing and value reading).
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
MONTH_NUMBER = {m: i for i, m in enumerate(MONTHS, 1)}


def normalise_value(kind: str, text: str) -> str:
    """Normalise an answer (or the surface text of a quote) so answers compare exactly.

    * ``time``: ``"15:00"``, ``"3 pm"``, ``"9.30"`` -> ``"HH:MM"``
    * ``amount``: ``"EUR 25,000"`` -> ``"EUR 25000"``; ``"EUR 48,210.50"`` -> ``"EUR 48210.5"``; a
      price of a rate and a fixed part, ``"0.18% + EUR 0.070"`` -> ``"0.18% + EUR 0.07"``
    * ``date``: ``"15 January 2026"``, ``"Jan 15, 2026"``, ``"2026-01-15T06:51Z"``
      -> ``"2026-01-15"``
    * ``id``: stripped of surrounding spaces, backticks, quotes and trailing punctuation
    * ``status`` and ``text``: lower case, single spaces, no trailing punctuation

    Raises:
        ValidationError: unknown kind, or no value of that kind in ``text``.

    Example:
        >>> normalise_value("time", "EUR cutoff 3 pm CET"), normalise_value("amount", "EUR 25,000")
        ('15:00', 'EUR 25000')
        >>> normalise_value("date", "cutover on 15 January 2026")
        '2026-01-15'
    """
    if kind not in VALUE_KINDS:
        raise ValidationError(
            f"value kind {kind!r} is unknown; use one of {list(VALUE_KINDS)}", field="kind"
        )
    raw = text.strip()
    if kind == "time":
        m = re.search(r"\b(\d{1,2})[:.](\d{2})\b", raw)
        named = re.search(r"\b(noon|midday|midnight)\b", raw, re.IGNORECASE)  # a time named in words
        if m:
            h, mi = int(m.group(1)), int(m.group(2))
        elif named:
            h, mi = (0 if named.group(1).lower() == "midnight" else 12), 0
        else:
            m = re.search(r"\b(\d{1,2})\s*([ap])\.?m\b", raw, re.IGNORECASE)
            if not m:
                raise ValidationError(f"no time of day in {text!r}", field="value")
            h, mi = int(m.group(1)) % 12 + (12 if m.group(2).lower() == "p" else 0), 0
        if not (0 <= h < 24 and 0 <= mi < 60):
            raise ValidationError(f"{text!r} is not a valid time of day", field="value")
        return f"{h:02d}:{mi:02d}"
    if kind == "amount":
        m = re.search(r"\b([A-Z]{3})\s?(\d[\d,]*(?:\.\d+)?)", raw)
        if not m:
            raise ValidationError(f"no amount (a currency code, a number: 'XYZ 25,000') in {text!r}",
                                  field="value")
        number = m.group(2).replace(",", "")
        if "." in number:
            number = number.rstrip("0").rstrip(".")
        rate = re.match(r"\s*(\d+(?:\.\d+)?)\s?%\s?\+\s?$", raw[: m.start()])  # "0.18% + EUR 0.07"
        return f"{rate.group(1)}% + {m.group(1)} {number}" if rate else f"{m.group(1)} {number}"
    if kind == "date":
        m = re.search(r"\b(\d{4})-(\d{2})-(\d{2})", raw)
        if m:
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
        m = re.search(r"\b(\d{1,2})\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})\b", raw)
        if m and m.group(2).lower()[:3] in {k[:3] for k in MONTH_NUMBER}:
            month = next(v for k, v in MONTH_NUMBER.items() if k.startswith(m.group(2).lower()[:3]))
            return dt.date(int(m.group(3)), month, int(m.group(1))).isoformat()
        m = re.search(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})\b", raw)
        if m and m.group(1).lower()[:3] in {k[:3] for k in MONTH_NUMBER}:
            month = next(v for k, v in MONTH_NUMBER.items() if k.startswith(m.group(1).lower()[:3]))
            return dt.date(int(m.group(3)), month, int(m.group(2))).isoformat()
        raise ValidationError(
            f"no date like 2026-01-15 or '15 January 2026' in {text!r}", field="value"
        )
    if kind == "id":
        return raw.strip("`'\" ").rstrip(".,;:").strip("`'\" ")
    return re.sub(r"\s+", " ", raw.lower()).strip().rstrip(".,;:!").strip()
