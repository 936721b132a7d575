from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from conftest import make_pdf

from ragkit import LoadError, load_corpus
from ragkit.documents import load_file, sections
from ragkit.documents.formats import read_pdf_document
from ragkit.documents.markup import pdf_headings


def test_loads_every_kind(corpus_dir):
    docs, report = load_corpus(corpus_dir)
    assert report.ok, str(report)
    assert report.files_seen == report.files_read == 7
    ids = {d.doc_id for d in docs}
    assert ids == {"settlement-runbook-v2", "settlement-policy-v3", "ops-1423-c3", "acme/rollout",
                   "acme/notes", "ops-1423", "ops-1500", "global/jobs"}
    by_id = {d.doc_id: d for d in docs}
    comment = by_id["ops-1423-c3"].envelope
    assert comment.tenant == "acme" and comment.acl_groups == ("ops", "acme-implementation")
    assert comment.published_at == dt.datetime(2026, 1, 3, 10, 12, tzinfo=dt.timezone.utc)
    assert comment.conditions == ("until cutover",)
    assert comment.source_path.endswith("ops-1423-c3.md")
    # front matter is not part of the text
    assert by_id["ops-1423-c3"].text.startswith("Acme stays on 16:00")
    # html: title from <title>, headings kept as Markdown, scripts dropped
    notes = by_id["acme/notes"]
    assert notes.title == "Acme architecture note"
    assert "# Acme architecture" in notes.text and "## Components" in notes.text
    assert "- gateway" in notes.text and "var x" not in notes.text
    # jsonl: title from the first heading when missing
    assert by_id["ops-1500"].title == "Payout run delayed"
    assert by_id["ops-1423"].envelope.source_type == "ticket"
    assert by_id["global/jobs"].envelope.source_type == "code"


def test_pdf_is_read(tmp_path):
    make_pdf(tmp_path / "memo.pdf", "EUR cutoff moved to 15:00")
    (doc,) = load_file(tmp_path / "memo.pdf")
    assert "EUR cutoff moved to 15:00" in doc.text
    assert doc.doc_id == "memo"


def test_a_pdfs_numbered_headings_are_its_sections():
    # text extraction leaves "9. Observability" a plain line; read as a heading, a clause is
    # situated by the section it sits under and cited by its anchor, not by the whole PDF
    pdf = Path(__file__).resolve().parents[1] / "datasets/opscorpus/docs/global/architecture/" \
        "arch-design-recon-matching.pdf"
    text, _, _ = read_pdf_document(pdf)
    found = {s.anchor: text[s.start:s.end] for s in sections(text)}
    assert {"top", "1-context", "9-observability"} <= set(found) and len(found) > 20
    assert "## 9. Observability" in text
    held = [a for a, body in found.items() if "Statement lines that stay unmatched" in body]
    assert held and held != ["top"]
    # a numbered clause (a sentence) and a line inside a paragraph are no headings
    clause = "4.3 Prices are reviewed every 24 months."
    assert pdf_headings(clause) == clause
    assert pdf_headings("Fees\n4. Fees\nare due.") == "Fees\n4. Fees\nare due."
    assert pdf_headings("\n4.2 Monthly fees\n") == "\n### 4.2 Monthly fees\n"


EXPECTED_PROBLEMS = {
    # file name -> (line, text the reason must contain)
    "bad-date.md": (4, "published_at"),
    "bad-yaml.md": (3, "not valid YAML"),
    "corrupt.pdf": (None, "not a readable PDF"),
    "image.png": (None, "unsupported file type '.png'"),
    "latin1.txt": (1, "not valid UTF-8"),
    "reversed.md": (5, "effective_to"),
    "unclosed.md": (1, "no closing '---'"),
    "unknown-field.md": (4, "owner"),
}


def test_broken_files_are_reported_and_the_rest_loads(broken_dir):
    docs, report = load_corpus(broken_dir)
    assert {d.doc_id for d in docs} == {"settlement-policy-v3", "ok-line"}
    by_file = {Path(s.path).name: s for s in report.skipped if not s.path.endswith(".jsonl")}
    assert set(by_file) == set(EXPECTED_PROBLEMS)
    for name, (line, text) in EXPECTED_PROBLEMS.items():
        assert by_file[name].line == line, name
        assert text in by_file[name].reason, (name, by_file[name].reason)
    jsonl = sorted((s.line, s.reason) for s in report.skipped if s.path.endswith(".jsonl"))
    assert [line for line, _ in jsonl] == [2, 3]
    assert "not valid JSON" in jsonl[0][1] and "'text'" in jsonl[1][1]
    assert report.documents == 2 and not report.ok
    assert "skipped 10" in str(report)


def test_strict_mode_raises_on_first_problem(broken_dir):
    with pytest.raises(LoadError) as info:
        load_corpus(broken_dir, strict=True)
    assert "bad-date.md:4" in str(info.value)


def test_duplicate_doc_id_is_reported(tmp_path):
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_text("---\ndoc_id: same\n---\ntext\n")
    docs, report = load_corpus(tmp_path)
    assert len(docs) == 1
    assert "duplicate doc_id 'same'" in report.skipped[0].reason
    assert report.skipped[0].path.endswith("b.md")


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(LoadError, match="no such file or folder"):
        load_corpus(tmp_path / "nope")


def test_hidden_files_are_ignored(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.md").write_text("hidden")
    (tmp_path / "a.md").write_text("# A\n\nvisible\n")
    docs, report = load_corpus(tmp_path)
    assert [d.doc_id for d in docs] == ["a"] and report.files_seen == 1


def _bad_corpus(root: Path) -> Path:
    root.mkdir()
    (root / "good.md").write_text("---\ndoc_id: good\n---\n# Good\n\nThe EUR cutoff is 15:00.\n")
    (root / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    (root / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (root / "empty.md").write_text("")
    (root / "huge.md").write_bytes(b"# Huge\n\n" + b"word " * 10_000_000)  # 50 MB
    (root / "front.md").write_text("---\ndoc_id: [unclosed\n---\nbody\n")
    (root / "date.md").write_text("---\ndoc_id: date-doc\npublished_at: 2026-02-30\n---\nbody\n")
    (root / "zz-dup.md").write_text("---\ndoc_id: good\n---\nsame id again\n")
    (root / "sub").mkdir()
    (root / "sub" / "also-good.md").write_text("# Also good\n\ntext\n")
    (root / "sub" / "loop").symlink_to(root, target_is_directory=True)  # sub/loop -> root: a loop
    (root / "self.md").symlink_to(root / "self.md")  # a file symlink pointing at itself
    (root / "vanishing.md").write_text("# Gone soon\n")
    (root / "locked.md").write_text("# Locked\n")
    return root


def test_broken_file_corpus_indexes_everything_else_and_names_each_problem(tmp_path, monkeypatch):
    import ragkit.documents.loaders as loaders

    root = _bad_corpus(tmp_path / "bad")
    real_walk = loaders.walk

    def walk_then_delete(folder, problems, seen=None):  # a file deleted after listing, before reading
        files = list(real_walk(folder, problems, seen))
        if folder == root:
            (root / "vanishing.md").unlink()
        yield from files

    real_read = Path.read_bytes

    def read_bytes(self):  # tests run as root, where chmod 000 does not stop reads: simulate it
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real_read(self)

    monkeypatch.setattr(loaders, "walk", walk_then_delete)
    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    docs, report = load_corpus(root)
    assert sorted(d.doc_id for d in docs) == ["good", "sub/also-good"]
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    expected = {
        "latin1.md": "not valid UTF-8", "binary.md": "binary content", "empty.md": "empty file",
        "huge.md": "over the 10 MB limit", "front.md": "not valid YAML", "date.md": "published_at",
        "zz-dup.md": "duplicate doc_id 'good'", "loop": "symlink loop", "self.md": "symlink loop",
        "vanishing.md": "deleted or moved while loading", "locked.md": "Permission denied",
    }
    assert set(reasons) == set(expected), reasons
    for name, text in expected.items():
        assert text in reasons[name], (name, reasons[name])
    assert "2026-02-30" in reasons["date.md"]
    assert report.documents == 2 and f"skipped {len(expected)}" in str(report)


def test_format_readers_by_hand(tmp_path):
    from pathlib import Path

    from ragkit.core import LoadError
    from ragkit.documents import first_heading, html_to_text, split_front_matter

    source = "---\ntitle: Runbook\neffective_from: 2026-01-01\n---\n# EUR\n"
    meta, lines, body = split_front_matter(source, Path("a.md"))
    assert meta == {"title": "Runbook", "effective_from": "2026-01-01"}  # dates stay strings
    assert lines == {"title": 2, "effective_from": 3} and body == "# EUR\n"
    assert split_front_matter("# no front matter\n", Path("a.md")) == ({}, {}, "# no front matter\n")
    with pytest.raises(LoadError, match="no closing"):
        split_front_matter("---\ntitle: x\n", Path("a.md"))
    text, title = html_to_text("<title>T</title><script>x()</script><h2>Cut</h2><ul><li>one</li></ul>")
    assert (text, title) == ("## Cut\n\n- one\n", "T")
    assert first_heading("intro\n## EUR cutoff ##\n") == "EUR cutoff" and first_heading("none") is None


def test_an_html_table_becomes_a_markdown_table():
    """An HTML table reads as the Markdown tables of the other formats: one line per row, a rule
    under a header of <th> cells, so that a row is situated by its column headers ("Window")."""
    from ragkit.documents import html_to_text
    from ragkit.text.relevance import context, is_heading_or_table_head, is_table_row

    html = ("<h2>Changes</h2><p>Each window is binding.</p><table>"
            "<tr><th>Change</th><th>Window</th></tr>"
            "<tr><td>CHG-6859</td><td><p>2026-04-16</p> 05:30-06:45</td></tr>"
            "<tr><td>CHG-3645</td><td>none | later</td></tr></table><p>After.</p>")
    text, _ = html_to_text(html)
    assert text == ("## Changes\n\nEach window is binding.\n\n| Change | Window |\n|---|---|\n"
                    "| CHG-6859 | 2026-04-16 05:30-06:45 |\n| CHG-3645 | none \\| later |\n\nAfter.\n")
    row = text.index("| CHG-6859")
    assert is_table_row(text[row:text.index("\n", row)])
    head = text.index("| Change")
    assert is_heading_or_table_head(text, head, text.index("\n", head))
    assert context(text, text.index("2026-04-16"), cell=True).endswith("Window")
