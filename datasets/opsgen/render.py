"""Long documents as blocks, written out as Markdown, HTML or PDF.

A :class:`Blocks` document is a list of headings, paragraphs, lists and tables. It renders
to the three formats teams keep documents in:

* Markdown with YAML front matter (what the rest of the corpus is);
* HTML, the envelope in ``<meta name="ragkit:<field>">`` tags or one
  ``<script type="application/ragkit+json">`` (``ragkit.documents.formats.html_envelope``);
* PDF from a small hand-rolled writer: Helvetica text, one content stream per page, the
  envelope in the document information (``/ragkit_envelope`` as one JSON string, or one
  ``/ragkit_<field>`` entry per field). Paragraphs are wrapped at :data:`PDF_WIDTH`
  characters; a line holding one space separates them, so pypdf's text has blank lines
  between paragraphs. Headings are set in Helvetica-Bold but come back as plain lines:
  a PDF keeps no Markdown structure, which is part of what it teaches.

Everything is ASCII (Helvetica's WinAnsi encoding reads it back exactly) and deterministic:
the same blocks give the same bytes.
"""

from __future__ import annotations

import html
import json
import textwrap
from dataclasses import dataclass, field
from typing import Any

PDF_WIDTH = 92  # characters per line at 10 pt Helvetica on a Letter page with 1-inch margins
PDF_LINES = 54  # lines per page


@dataclass
class Block:
    kind: str  # h, p, ul, ol, table
    text: str = ""
    level: int = 0
    items: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


class Blocks:
    """A long document's content, format-neutral."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def h(self, level: int, text: str) -> Blocks:
        self.blocks.append(Block("h", text=text, level=level))
        return self

    def p(self, text: str) -> Blocks:
        text = " ".join(text.split())
        if text:
            self.blocks.append(Block("p", text=text))
        return self

    def ul(self, items: list[str]) -> Blocks:
        self.blocks.append(Block("ul", items=list(items)))
        return self

    def ol(self, items: list[str]) -> Blocks:
        self.blocks.append(Block("ol", items=list(items)))
        return self

    def table(self, header: list[str], rows: list[list[str]]) -> Blocks:
        self.blocks.append(Block("table", header=list(header), rows=[list(r) for r in rows]))
        return self

    def check_ascii(self, where: str) -> None:
        for b in self.blocks:
            for s in [b.text, *b.items, *b.header, *(c for r in b.rows for c in r)]:
                if not s.isascii():
                    bad = next(ch for ch in s if not ch.isascii())
                    raise SystemExit(f"{where}: non-ASCII character {bad!r} in {s[:60]!r}")

    # Markdown ---------------------------------------------------------------------
    def markdown(self) -> str:
        parts = []
        for b in self.blocks:
            if b.kind == "h":
                parts.append("#" * b.level + " " + b.text)
            elif b.kind == "p":
                parts.append(b.text)
            elif b.kind == "ul":
                parts.append("\n".join(f"- {i}" for i in b.items))
            elif b.kind == "ol":
                parts.append("\n".join(f"{n}. {i}" for n, i in enumerate(b.items, 1)))
            elif b.kind == "table":
                lines = ["| " + " | ".join(b.header) + " |", "|" + "|".join("---" for _ in b.header) + "|"]
                lines += ["| " + " | ".join(r) + " |" for r in b.rows]
                parts.append("\n".join(lines))
        return "\n\n".join(parts) + "\n"

    # HTML -------------------------------------------------------------------------
    def html(self, title: str, envelope: dict[str, Any], style: str) -> str:
        """An HTML page; ``style`` is ``meta`` (one tag per field) or ``script`` (one JSON object)."""
        e = html.escape
        head = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
                f"<title>{e(title)}</title>"]
        if style == "meta":
            for k, v in envelope.items():
                if v is None or v == [] or v == {}:
                    continue
                if isinstance(v, dict):
                    content = json.dumps(v, sort_keys=True)
                elif isinstance(v, list):
                    content = json.dumps(v)
                else:
                    content = str(v)
                head.append(f'<meta name="ragkit:{k}" content="{e(content)}">')
        else:
            data = {k: v for k, v in envelope.items() if v is not None}
            head.append('<script type="application/ragkit+json">')
            head.append(json.dumps(data, indent=2, sort_keys=False).replace("</", "<\\/"))
            head.append("</script>")
        head.append('<style>body{font-family:sans-serif;max-width:48em;margin:2em auto}'
                    "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px}</style>")
        head.append("</head>")
        body = ["<body>", "<article>"]
        for b in self.blocks:
            if b.kind == "h":
                body.append(f"<h{b.level}>{e(b.text)}</h{b.level}>")
            elif b.kind == "p":
                body.append(f"<p>{e(b.text)}</p>")
            elif b.kind in ("ul", "ol"):
                body.append(f"<{b.kind}>")
                body += [f"  <li>{e(i)}</li>" for i in b.items]
                body.append(f"</{b.kind}>")
            elif b.kind == "table":
                body.append("<table>")
                body.append("  <tr>" + "".join(f"<th>{e(c)}</th>" for c in b.header) + "</tr>")
                body += ["  <tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in b.rows]
                body.append("</table>")
        body += ["</article>", "</body>", "</html>"]
        return "\n".join(head + body) + "\n"

    # PDF --------------------------------------------------------------------------
    def pdf_lines(self) -> list[tuple[str, str]]:
        """``(font, line)`` pairs: ``F2`` for headings, ``F1`` for text, ``" "`` lines between blocks."""
        out: list[tuple[str, str]] = []

        def wrap(text: str, indent: str = "") -> list[str]:
            return textwrap.wrap(text, PDF_WIDTH, subsequent_indent=indent, break_long_words=False,
                                 break_on_hyphens=False) or [""]

        for b in self.blocks:
            if out:
                out.append(("F1", " "))
            if b.kind == "h":
                out += [("F2", line) for line in wrap(b.text)]
            elif b.kind == "p":
                out += [("F1", line) for line in wrap(b.text)]
            elif b.kind in ("ul", "ol"):
                for n, item in enumerate(b.items, 1):
                    mark = "- " if b.kind == "ul" else f"{n}. "
                    out += [("F1", line) for line in wrap(mark + item, "   ")]
            elif b.kind == "table":
                out.append(("F1", " | ".join(b.header)))
                out += [("F1", " | ".join(r)) for r in b.rows]
        return out

    def pdf(self, info: dict[str, str]) -> bytes:
        lines = self.pdf_lines()
        pages = [lines[i : i + PDF_LINES] for i in range(0, len(lines), PDF_LINES)]
        return write_pdf(pages, info)


def _pdf_string(value: str) -> bytes:
    if value.isascii():
        return b"(" + value.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode() + b")"
    return b"<FEFF" + value.encode("utf-16-be").hex().upper().encode("ascii") + b">"


def write_pdf(pages: list[list[tuple[str, str]]], info: dict[str, str]) -> bytes:
    """A PDF of ``pages`` (each a list of ``(font, line)``) with ``info`` as document information."""
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    }
    kids = []
    n = 5
    for page in pages:
        ops = [b"BT", b"/F1 10 Tf", b"13 TL", b"72 740 Td"]
        font = "F1"
        for f, line in page:
            if f != font:
                ops.append(b"/F2 10.5 Tf" if f == "F2" else b"/F1 10 Tf")
                font = f
            ops.append(_pdf_string(line) + b" Tj T*")
        ops.append(b"ET")
        stream = b"\n".join(ops)
        objects[n] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {n + 1} 0 R "
                      "/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> >>").encode()
        objects[n + 1] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
        kids.append(n)
        n += 2
    objects[2] = (f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>"
                  ).encode()
    objects[n] = b"<< " + b" ".join(b"/" + k.encode("ascii") + b" " + _pdf_string(v)
                                    for k, v in info.items()) + b" >>"
    info_id = n
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for i in sorted(objects):
        offsets[i] = len(out)
        out += f"{i} 0 obj\n".encode() + objects[i] + b"\nendobj\n"
    xref = len(out)
    size = info_id + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offsets[i]:010d} 00000 n \n".encode() for i in range(1, size))
    out += (f"trailer\n<< /Size {size} /Root 1 0 R /Info {info_id} 0 R >>\nstartxref\n{xref}\n%%EOF\n"
            ).encode()
    return bytes(out)


def pdf_info(title: str, envelope: dict[str, Any], style: str) -> dict[str, str]:
    """Document information: ``/Title`` plus the envelope (``json``: one entry; ``fields``: one each)."""
    info = {"Title": title, "Producer": "opsgen (ragkit course corpus generator)"}
    data = {k: v for k, v in envelope.items() if v is not None and v != [] and v != {}}
    if style == "json":
        info["ragkit_envelope"] = json.dumps(data, sort_keys=False)
    else:
        for k, v in data.items():
            info[f"ragkit_{k}"] = json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else str(v)
    return info
