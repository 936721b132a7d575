"""Markup as text: an HTML page's and a PDF's text as the Markdown the rest of ragkit reads.

Sections, situated sentences and table cells are read from Markdown: ``#`` headings, ``-`` list
items, and tables of ``| a | b |`` rows under a ``|---|---|`` rule (a row is situated by its
column's header). :func:`html_to_text` writes an HTML page that way (scripts, styles and
navigation dropped); :func:`pdf_tables` restores the tables of a PDF's extracted text, which
keeps a row's cells apart with " | " but drops the outer bars and the header rule, and
:func:`pdf_headings` its numbered headings ("9. Observability" alone on its line), which text
extraction leaves as plain lines: without them a 30-page handbook is one section, and no clause
is situated by the heading it sits under.

Example:
    >>> html_to_text("<h2>Cutoffs</h2><p>EUR closes at <b>15:00</b>.</p>")
    ('## Cutoffs\\n\\nEUR closes at 15:00.\\n', '')
    >>> print(html_to_text("<table><tr><th>Currency</th><th>Cutoff</th></tr>"
    ...                    "<tr><td>EUR</td><td>15:00</td></tr></table>")[0], end="")
    | Currency | Cutoff |
    |---|---|
    | EUR | 15:00 |
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["html_to_text", "pdf_tables", "pdf_headings"]

# "9. Observability", "4.2 Fees", "Appendix K. Operational notes", "Schedule 2. Fees": a number (or
# an appendix, annex, schedule or part) and a short title that starts upper-case and has no
# sentence punctuation ("4.3 Prices are reviewed every 24 months." is a clause, not a heading)
_NUMBERED_HEADING = re.compile(
    r"^(?:(?P<number>\d{1,2}(?:\.\d{1,2}){0,2})\.?|(?:Appendix|Annex|Schedule|Part) [A-Z0-9]{1,2}\.?)"
    r"\s+[A-Z][^.:;,!?|]*$"
)


def pdf_headings(text: str) -> str:
    """A PDF's numbered headings as Markdown headings: a line of at most nine words that numbers a
    short title and stands alone (a blank line before and after it) becomes ``## 9. Observability``
    (``###`` for "4.2 ...", ``####`` for "4.2.1 ..."); every other line is kept as it is.

    Example:
        >>> print(pdf_headings("Terms\\n\\n4. Fees\\n\\n4.1 Fees are due monthly.\\n\\nAppendix A. Notes\\n"))
        Terms
        <BLANKLINE>
        ## 4. Fees
        <BLANKLINE>
        4.1 Fees are due monthly.
        <BLANKLINE>
        ## Appendix A. Notes
        <BLANKLINE>
    """
    lines = text.split("\n")
    out = []
    for n, line in enumerate(lines):
        stripped = line.strip()
        alone = (n == 0 or not lines[n - 1].strip()) and (n + 1 == len(lines) or not lines[n + 1].strip())
        m = _NUMBERED_HEADING.match(stripped) if alone and len(stripped.split()) <= 9 else None
        if m is None:
            out.append(line)
            continue
        depth = m.group("number").count(".") + 2 if m.group("number") else 2
        out.append("#" * depth + " " + stripped)
    return "\n".join(out)


def pdf_tables(text: str) -> str:
    """A PDF's tables as Markdown tables: text extraction keeps a row's cells apart with " | " but
    drops the outer bars and the header rule; a run of such lines (blank lines inside it dropped)
    becomes "| a | b |" rows under a rule, its first line the header.

    Example:
        >>> print(pdf_tables("Fees\\n\\nItem | Fee\\n\\nPer file | EUR 2.00\\nMonthly | EUR 700\\n\\nEnd."))
        Fees
        <BLANKLINE>
        | Item | Fee |
        |---|---|
        | Per file | EUR 2.00 |
        | Monthly | EUR 700 |
        <BLANKLINE>
        End.
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        block, j = [], i
        while j < len(lines) and " | " in lines[j] and not lines[j].lstrip().startswith("|"):
            block.append(lines[j].strip())
            j += 1
            if j + 1 < len(lines) and not lines[j].strip() and " | " in lines[j + 1]:
                j += 1  # a blank line between two rows (a page's layout) is no table break
        if len(block) < 2:
            out.append(lines[i])
            i += 1
            continue
        out += ["| " + block[0] + " |", "|" + "---|" * (block[0].count(" | ") + 1)]
        out += ["| " + row + " |" for row in block[1:]]
        i = j
    return "\n".join(out)


class _HTMLText(HTMLParser):
    _BLOCK = {"p", "div", "section", "article", "br", "ul", "ol", "pre", "blockquote"}
    _SKIP = {"script", "style", "head", "nav", "footer"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False
        # a table is written as a Markdown table: one line per row, a rule under a row of <th>
        self._rows: list[tuple[list[str], bool]] | None = None
        self._row: list[str] | None = None
        self._head = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in self._SKIP:
            self._skip += 1
        elif tag == "table" and self._rows is None:
            self._rows = []
        elif tag == "tr" and self._rows is not None:
            self._row, self._head = [], False
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
            self._head = self._head or tag == "th"
        elif self._cell is not None:
            self._cell.append(" ")  # a block inside a cell stays on the row's line
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()).replace("|", "\\|"))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._rows is not None:
            if self._row:
                self._rows.append((self._row, self._head))
            self._row = None
        elif tag == "table" and self._rows is not None:
            self.parts.append("\n\n" + _markdown_table(self._rows) + "\n\n")
            self._rows = self._row = self._cell = None
        elif self._cell is None and (re.fullmatch(r"h[1-6]", tag) or tag in self._BLOCK):
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif self._skip:
            return
        elif self._cell is not None:
            self._cell.append(data)
        elif self._rows is None:  # (text between a table's cells is layout)
            self.parts.append(re.sub(r"\s+", " ", data))


def _markdown_table(rows: list[tuple[list[str], bool]]) -> str:
    """Rows of cells as Markdown table lines; a rule follows the first row when it is a header."""
    lines = ["| " + " | ".join(cells) + " |" for cells, _ in rows]
    if rows and rows[0][1]:
        lines.insert(1, "|" + "---|" * len(rows[0][0]))
    return "\n".join(lines)


def html_to_text(html: str) -> tuple[str, str]:
    """``(text, title)`` of an HTML page: headings as ``#``, list items as ``-``, scripts dropped."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n[ \t]+", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
    return text, parser.title.strip()
