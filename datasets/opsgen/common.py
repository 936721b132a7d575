"""Documents, dates and small text helpers shared by the generator modules."""

from __future__ import annotations

import datetime as dt
import random
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

START = dt.date(2025, 4, 1)
END = dt.date(2026, 11, 30)

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

ENVELOPE_KEYS = [
    "doc_id",
    "title",
    "version",
    "source_type",
    "authority",
    "tenant",
    "entities",
    "acl_groups",
    "published_at",
    "effective_from",
    "effective_to",
    "ingested_at",
    "supersedes",
    "superseded_by",
    "conditions",
    "links",
    "status",
    "extra",
]


def iso(moment: dt.date | dt.datetime | None) -> str | None:
    if moment is None:
        return None
    if isinstance(moment, dt.datetime):
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return moment.isoformat()


def day_of(moment: dt.date | dt.datetime) -> dt.date:
    return moment.date() if isinstance(moment, dt.datetime) else moment


def long_date(d: dt.date) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def short_date(d: dt.date) -> str:
    return f"{d.day} {MONTHS[d.month - 1][:3]}"


def month_year(d: dt.date) -> str:
    return f"{MONTHS[d.month - 1]} {d.year}"


def any_date(rng: random.Random, d: dt.date) -> str:
    """One of several date styles, as different authors write them."""
    style = rng.randrange(5)
    if style == 0:
        return d.isoformat()
    if style == 1:
        return long_date(d)
    if style == 2:
        return f"{d.strftime('%a')} {d.day} {MONTHS[d.month - 1][:3]}"
    if style == 3:
        return f"{d.day:02d}/{d.month:02d}/{d.year}"
    return f"{MONTHS[d.month - 1]} {d.day}"


def at(d: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(d.year, d.month, d.day, hour, minute)


def business_day(d: dt.date) -> dt.date:
    while d.weekday() >= 5:
        d += dt.timedelta(days=1)
    return d


def words(text: str) -> int:
    return len(re.findall(r"\S+", text))


def content_stems(text: str) -> set[str]:
    """Crude stems for overlap checks: lower-cased word prefixes (5 chars) of words >= 4 long."""
    stop = {
        "what",
        "which",
        "when",
        "where",
        "that",
        "this",
        "with",
        "from",
        "were",
        "after",
        "before",
        "during",
        "their",
        "there",
        "have",
        "been",
        "into",
        "about",
        "does",
        "than",
        "then",
        "also",
        "they",
        "them",
        "only",
        "each",
        "every",
        "over",
        "under",
    }
    out = set()
    for w in re.findall(r"[A-Za-z][A-Za-z'_-]*", text.lower()):
        w = w.replace("'s", "")
        if len(w) < 4 or w in stop:
            continue
        out.add(w[:5])
    return out


@dataclass
class Doc:
    """One corpus document: envelope fields, Markdown body and the facts it states."""

    doc_id: str
    title: str
    source_type: str
    authority: str
    tenant: str
    published_at: dt.date | dt.datetime
    version: str = "1"
    entities: list[str] = field(default_factory=list)
    acl_groups: list[str] = field(default_factory=list)
    effective_from: dt.date | dt.datetime | None = None
    effective_to: dt.date | dt.datetime | None = None
    ingested_at: dt.datetime | None = None
    supersedes: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    facts: dict[str, str] = field(default_factory=dict)
    raw: str | None = None  # hand-written file content, copied verbatim
    # long documents: format ("md", "html" or "pdf"), the envelope style inside the file
    # ("meta"/"script" for HTML, "json"/"fields" for PDF) and the format-neutral content
    fmt: str = "md"
    style: str = ""
    blocks: Any = None
    _loaded: str | None = None

    def rel_path(self) -> str:
        return f"{self.tenant}/{self.source_type}/{self.doc_id}.{self.fmt}"

    def render_bytes(self) -> bytes:
        """The file's bytes in its format (Markdown, HTML or PDF)."""
        if self.fmt == "md":
            return self.render().encode("utf-8")
        envelope = self.front_matter()
        if self.fmt == "html":
            return self.blocks.html(self.title, envelope, self.style).encode("utf-8")
        if self.fmt == "pdf":
            from .render import pdf_info

            return self.blocks.pdf(pdf_info(self.title, envelope, self.style))
        raise ValueError(f"unknown format {self.fmt!r}")

    def loaded_text(self) -> str:
        """The text ragkit's loader reads from the rendered file (anchors and quotes live in it)."""
        if self.fmt == "md":
            return self.body
        if self._loaded is None:
            import tempfile
            from pathlib import Path

            from ragkit.documents.loaders import load_file

            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / f"{self.doc_id.replace('/', '_')}.{self.fmt}"
                path.write_bytes(self.render_bytes())
                (loaded,) = load_file(path)
            self._loaded = loaded.text
        return self._loaded

    def front_matter(self) -> dict[str, Any]:
        eff_from = self.effective_from if self.effective_from is not None else self.published_at
        ingested = self.ingested_at
        if ingested is None:
            base = self.published_at
            if not isinstance(base, dt.datetime):
                base = at(base, 6, 0)
            ingested = base + dt.timedelta(hours=7, minutes=13)
        data: dict[str, Any] = {
            "doc_id": self.doc_id,
            "title": self.title,
            "version": str(self.version),
            "source_type": self.source_type,
            "authority": self.authority,
            "tenant": self.tenant,
            "entities": list(self.entities),
            "acl_groups": list(self.acl_groups),
            "published_at": iso(self.published_at),
            "effective_from": iso(eff_from),
            "effective_to": iso(self.effective_to),
            "ingested_at": iso(ingested),
            "supersedes": list(self.supersedes),
            "superseded_by": list(self.superseded_by),
            "conditions": list(self.conditions),
            "links": list(self.links),
            # the record's own status is an envelope field; the rest of extra stays custom metadata
            **({"status": self.extra["status"]} if "status" in self.extra else {}),
            "extra": {k: v for k, v in self.extra.items() if k != "status"},
        }
        return data

    def render(self) -> str:
        if self.raw is not None:
            return self.raw
        fm = yaml.safe_dump(
            self.front_matter(),
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=1000,
        )
        body = self.body.rstrip("\n") + "\n"
        return f"---\n{fm}---\n{body}"

    def fact(self, key: str, sentence: str) -> str:
        """Register ``sentence`` as a quotable fact of this document and return it."""
        self.facts[key] = sentence
        return sentence


class Body:
    """A tiny Markdown writer that keeps blank lines tidy."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def h(self, level: int, text: str) -> Body:
        self.parts.append("#" * level + " " + text)
        return self

    def p(self, text: str) -> Body:
        self.parts.append(text.strip())
        return self

    def ul(self, items: list[str]) -> Body:
        self.parts.append("\n".join(f"- {i}" for i in items))
        return self

    def ol(self, items: list[str]) -> Body:
        self.parts.append("\n".join(f"{n}. {i}" for n, i in enumerate(items, 1)))
        return self

    def table(self, header: list[str], rows: list[list[str]]) -> Body:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        self.parts.append("\n".join(lines))
        return self

    def kv(self, rows: list[tuple[str, str]]) -> Body:
        return self.table(["Field", "Value"], [[k, v] for k, v in rows])

    def code(self, text: str, lang: str = "") -> Body:
        self.parts.append(f"```{lang}\n{text.rstrip()}\n```")
        return self

    def text(self) -> str:
        return "\n\n".join(self.parts) + "\n"


def pick(rng: random.Random, items: list[Any]) -> Any:
    return items[rng.randrange(len(items))]


def sample(rng: random.Random, items: list[Any], k: int) -> list[Any]:
    return rng.sample(items, k)
