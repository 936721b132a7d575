"""Evidence envelopes in HTML and PDF files (issue 24 item 1).

An HTML page carries its envelope in ``<meta name="ragkit:<field>">`` tags or one
``<script type="application/ragkit+json">``; a PDF in ``/ragkit_<field>`` or
``/ragkit_envelope`` document-information entries. Both are validated exactly like
Markdown front matter: the same envelope gives the same record, and the same mistake gives
the same reason, naming the file, the field and (for HTML) the line.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from conftest import make_pdf

from ragkit import LoadError, Scope, load_corpus
from ragkit.documents import html_envelope, load_file, read_pdf_document

UTC = dt.timezone.utc

ENVELOPE = {
    "doc_id": "hb-acme-settlement",
    "title": "Acme settlement handbook",
    "version": "3",
    "source_type": "policy",
    "authority": "policy_owner",
    "tenant": "acme",
    "entities": ["acme", "ledger-core"],
    "acl_groups": ["ops", "risk"],
    "published_at": "2026-02-02",
    "effective_from": "2026-02-09",
    "effective_to": None,
    "supersedes": ["hb-acme-settlement-v2"],
    "conditions": [],
    "links": ["pol-refund-approval-v3"],
    "extra": {"kind": "handbook", "owner": "Quaresma"},
}
BODY_TEXT = "Clause 14.3: refunds above EUR 40,000 need a second approver."


def _markdown(path: Path, env: dict) -> Path:
    import yaml

    path.write_text("---\n" + yaml.safe_dump(env, sort_keys=False) + "---\n# Handbook\n\n"
                    + BODY_TEXT + "\n")
    return path


def _meta_value(value) -> str:
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, list):
        return ", ".join(value)
    return "" if value is None else str(value)


def _html_meta(path: Path, env: dict) -> Path:
    metas = "\n".join(
        f'<meta name="ragkit:{k}" content="{_meta_value(v).replace(chr(34), "&quot;")}">'
        for k, v in env.items()
    )
    path.write_text(f"<html><head><title>Page title</title>\n{metas}\n</head>\n"
                    f"<body><h1>Handbook</h1><p>{BODY_TEXT}</p></body></html>\n")
    return path


def _html_script(path: Path, env: dict) -> Path:
    path.write_text(
        "<html><head><title>Page title</title>\n"
        f'<script type="application/ragkit+json">\n{json.dumps(env, indent=1)}\n</script>\n'
        f"</head><body><h1>Handbook</h1><p>{BODY_TEXT}</p></body></html>\n"
    )
    return path


def _pdf_fields(path: Path, env: dict) -> Path:
    info = {f"ragkit_{k}": _meta_value(v) for k, v in env.items() if v is not None}
    return make_pdf(path, BODY_TEXT, {"Title": "PDF title", **info})


def _pdf_json(path: Path, env: dict) -> Path:
    return make_pdf(path, BODY_TEXT, {"Title": "PDF title", "ragkit_envelope": json.dumps(env)})


WRITERS = {
    "markdown": ("a.md", _markdown),
    "html-meta": ("a.html", _html_meta),
    "html-script": ("a.html", _html_script),
    "pdf-fields": ("a.pdf", _pdf_fields),
    "pdf-json": ("a.pdf", _pdf_json),
}


@pytest.mark.parametrize("kind", list(WRITERS))
def test_the_same_envelope_from_every_kind_of_file(tmp_path: Path, kind: str) -> None:
    name, write = WRITERS[kind]
    (doc,) = load_file(write(tmp_path / name, ENVELOPE))
    (md,) = load_file(_markdown(tmp_path / "ref.md", ENVELOPE))
    got = doc.envelope.to_mapping()
    want = md.envelope.to_mapping()
    got.pop("source_path"), want.pop("source_path")
    assert got == want, kind
    e = doc.envelope
    assert e.tenant == "acme" and e.acl_groups == ("ops", "risk")
    assert e.published_at == dt.datetime(2026, 2, 2, tzinfo=UTC) and e.effective_to is None
    assert e.extra == {"kind": "handbook", "owner": "Quaresma"}
    assert BODY_TEXT in doc.text
    # the envelope holds in search scope: a caller without the groups cannot read it
    assert Scope("acme", ("risk",)).allows(e) and not Scope("acme", ("support",)).allows(e)
    assert not Scope("globex", ("ops",)).allows(e)


def test_without_an_envelope_html_and_pdf_load_as_before(tmp_path: Path) -> None:
    (tmp_path / "notes.html").write_text("<html><head><title>Notes</title></head>"
                                         "<body><p>plain</p></body></html>")
    make_pdf(tmp_path / "memo.pdf", "EUR cutoff moved to 15:00")
    docs, report = load_corpus(tmp_path)
    assert report.ok
    by_id = {d.doc_id: d.envelope for d in docs}
    assert by_id["notes"].title == "Notes" and by_id["notes"].tenant == "global"
    assert by_id["memo"].title == "memo" and by_id["memo"].acl_groups == ()
    # a PDF's /Title is its default title; the envelope's title wins over it
    make_pdf(tmp_path / "titled.pdf", "text", {"Title": "Quarterly review"})
    assert load_file(tmp_path / "titled.pdf")[0].title == "Quarterly review"
    make_pdf(tmp_path / "both.pdf", "text", {"Title": "PDF", "ragkit_title": "Envelope"})
    assert load_file(tmp_path / "both.pdf")[0].title == "Envelope"


def test_list_fields_take_commas_json_arrays_or_repeated_tags(tmp_path: Path) -> None:
    page = (
        '<html><head>\n<meta name="ragkit:doc_id" content="x">\n'
        '<meta name="ragkit:acl_groups" content="ops">\n'
        '<meta name="ragkit:acl_groups" content="risk, treasury">\n'
        '<meta name="ragkit:entities" content=\'["a, with comma", "b"]\'>\n'
        '<meta name="RAGKIT:Tenant" content="acme">\n'
        "</head><body><p>t</p></body></html>"
    )
    fields, lines = html_envelope(page, Path("p.html"))
    assert fields == {"doc_id": "x", "acl_groups": ["ops", "risk", "treasury"],
                      "entities": ["a, with comma", "b"], "tenant": "acme"}
    assert lines == {"doc_id": 2, "acl_groups": 3, "entities": 5, "tenant": 6}
    make_pdf(tmp_path / "a.pdf", "t", {"ragkit_links": '["l1", "l2"]', "ragkit_conditions": "until cutover"})
    _, meta, _ = read_pdf_document(tmp_path / "a.pdf")
    assert meta == {"links": ["l1", "l2"], "conditions": ["until cutover"]}


BAD = {
    # name -> (envelope change, field, text the reason must contain)
    "bad-date": ({"published_at": "2026-02-30"}, "published_at", "not an ISO date"),
    "unknown-field": ({"owner": "Quaresma"}, "owner", "unknown envelope field"),
    "reversed": ({"effective_from": "2026-03-01", "effective_to": "2026-01-01"}, "effective_to",
                 "is before effective_from"),
    "bad-doc-id": ({"doc_id": "has spaces"}, "doc_id", "not a valid id"),
}


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("kind", list(WRITERS))
def test_a_bad_field_gives_the_same_reason_in_every_kind_of_file(tmp_path: Path, kind: str,
                                                                 bad: str) -> None:
    change, field, text = BAD[bad]
    env = {**ENVELOPE, **change}
    name, write = WRITERS[kind]
    path = write(tmp_path / name, env)
    with pytest.raises(LoadError) as info:
        load_file(path)
    err = info.value
    assert err.field == field and text in str(err) and str(path) in str(err), (kind, str(err))
    with pytest.raises(LoadError) as ref:
        load_file(_markdown(tmp_path / "ref.md", env))
    reason = str(err).split(": ", 1)[1] if ": " in str(err) else str(err)
    assert ref.value.field == field
    assert str(ref.value).endswith(reason.split(": ", 1)[-1]), (str(err), str(ref.value))
    if kind == "html-meta":  # the line of the offending tag
        wanted = next(i for i, ln in enumerate(path.read_text().splitlines(), 1)
                      if f'ragkit:{field}"' in ln)
        assert err.line == wanted, (err.line, wanted)
    if kind.startswith("pdf"):
        assert err.line is None
    # in a folder: the file is skipped with its reason, the rest loads
    (tmp_path / "good.md").write_text("---\ndoc_id: good\n---\nok\n")
    docs, report = load_corpus(tmp_path)
    assert "good" in {d.doc_id for d in docs}
    skipped = [s for s in report.skipped if Path(s.path).name == name]
    assert len(skipped) == 1 and skipped[0].field == field


HTML_ERRORS = [
    ('<script type="application/ragkit+json">{"doc_id": "x",}</script>', 1, None, "not valid JSON"),
    ('<script type="application/ragkit+json">["x"]</script>', 1, None, "must be a JSON object"),
    ('<script type="application/ragkit+json">{"doc_id": "x"}</script>\n'
     '<script type="application/ragkit+json">{"tenant": "acme"}</script>', 2, None, "more than one"),
    ('<script type="application/ragkit+json">{"doc_id": "x", "tenant": "acme"}</script>\n'
     '<meta name="ragkit:tenant" content="globex">', 2, "tenant", "set twice"),
    ('<meta name="ragkit:tenant" content="acme">\n<meta name="ragkit:tenant" content="globex">', 2,
     "tenant", "set twice"),
    ('<meta name="ragkit:tenant">', 1, "tenant", "no content"),
    ('<meta name="ragkit:" content="acme">', 1, None, "names no envelope field"),
    ('<meta name="ragkit:extra" content="{owner: x}">', 1, "extra", "must be a JSON object"),
    ('<meta name="ragkit:extra" content="[1]">', 1, "extra", "must be a JSON object"),
    ('<meta name="ragkit:links" content="[a, b]">', 1, "links", "valid JSON array"),
]


@pytest.mark.parametrize("head,line,field,text", HTML_ERRORS)
def test_malformed_html_envelopes_name_file_line_and_field(tmp_path: Path, head, line, field,
                                                          text) -> None:
    path = tmp_path / "page.html"
    path.write_text(head + "\n<h1>T</h1><p>body</p>\n")
    with pytest.raises(LoadError) as info:
        load_file(path)
    err = info.value
    assert text in str(err) and err.line == line and err.field == field, str(err)
    assert str(err).startswith(f"{path}:{line}:")


def test_malformed_pdf_envelopes_name_file_and_field(tmp_path: Path) -> None:
    cases = [
        ({"ragkit_envelope": "{not json"}, None, "not valid JSON"),
        ({"ragkit_envelope": '"just a string"'}, None, "must be a JSON object"),
        ({"ragkit_envelope": '{"tenant": "acme"}', "ragkit_tenant": "globex"}, "tenant", "set twice"),
        ({"ragkit_extra": "nope"}, "extra", "must be a JSON object"),
        ({"ragkit_published_at": "yesterday"}, "published_at", "not an ISO date"),
    ]
    for info, field, text in cases:
        path = make_pdf(tmp_path / "x.pdf", "some text", info)
        with pytest.raises(LoadError) as exc:
            load_file(path)
        assert text in str(exc.value) and exc.value.field == field, (info, str(exc.value))
        assert str(path) in str(exc.value)


def test_non_ascii_pdf_entries_round_trip(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "u.pdf", "text", {"ragkit_title": "Zürich clearing handbook",
                                                 "ragkit_tenant": "acme"})
    (doc,) = load_file(path)
    assert doc.title == "Zürich clearing handbook" and doc.envelope.tenant == "acme"
