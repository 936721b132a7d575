from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragkit import ChunkerSettings, Document, Envelope, ValidationError, chunk_documents, load_corpus
from ragkit.documents import approx_tokens, fixed_chunks, sections, sentence_chunks, structure_chunks

RUNBOOK = """# Runbook

Intro line.

## EUR cutoff

EUR batches close at 16:00.

```
# not a heading
run_job()
```

## EUR cutoff

Second section with a repeated heading.
"""


def doc(text: str, doc_id: str = "d", **env) -> Document:
    return Document(Envelope(doc_id, title="T", **env), text)


def test_sections_anchors_paths_and_fences():
    secs = sections(RUNBOOK)
    assert [s.anchor for s in secs] == ["runbook", "eur-cutoff", "eur-cutoff-2"]
    assert secs[1].path == ("Runbook", "EUR cutoff")
    assert "# not a heading" in RUNBOOK[secs[1].start:secs[1].end]  # fence did not split
    assert sections("pre\n# H\nx")[0].anchor == "top"


def test_structure_chunks_have_parents_and_exact_spans():
    d = doc(RUNBOOK)
    chunks = structure_chunks(d)
    for c in chunks:
        assert d.text[c.start:c.end] == c.text
    kids = [c for c in chunks if c.kind == "chunk"]
    parents = {c.chunk_id: c for c in chunks if c.kind == "section"}
    assert [c.chunk_id for c in kids] == ["d#runbook~0", "d#eur-cutoff~0", "d#eur-cutoff-2~0"]
    for c in kids:
        p = parents[c.parent_id]
        assert p.start <= c.start and c.end <= p.end


def test_long_section_packs_blocks_and_keeps_tables_whole():
    rows = "\n".join(f"| E-{i} | meaning {i} | action {i} |" for i in range(40))
    paras = "\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(6))
    text = f"# Codes\n\n{paras}\n\n| code | meaning | action |\n|---|---|---|\n{rows}\n"
    d = doc(text)
    kids = [c for c in structure_chunks(d, max_tokens=100) if c.kind == "chunk"]
    assert len(kids) > 3
    tables = [c for c in kids if "| E-0 |" in c.text]
    assert len(tables) == 1 and "| E-39 |" in tables[0].text  # never split a table
    for c in kids:
        if "|" not in c.text:
            assert approx_tokens(c.text) <= 100


def test_oversized_paragraph_falls_back_to_sentences():
    text = "# A\n\n" + " ".join(f"Sentence number {i} says something useful." for i in range(60))
    kids = [c for c in structure_chunks(doc(text), max_tokens=50) if c.kind == "chunk"]
    assert len(kids) >= 5
    assert all(c.text.rstrip().endswith(".") for c in kids[1:])


def test_python_sections_follow_defs(corpus_dir):
    docs, _ = load_corpus(corpus_dir)
    jobs = next(d for d in docs if d.doc_id == "global/jobs")
    anchors = [c.anchor for c in structure_chunks(jobs) if c.kind == "chunk"]
    assert anchors == ["top", "def-reconcile-settlement", "class-cutoff"]


def test_sentence_chunks_overlap():
    text = " ".join(f"This is sentence {i}." for i in range(30))
    chunks = sentence_chunks(doc(text), max_tokens=20, overlap=1)
    assert len(chunks) > 3
    for a, b in zip(chunks, chunks[1:], strict=False):
        last_sentence = a.text.split(". ")[-1]
        assert b.text.startswith(last_sentence.rstrip("."))


def test_fixed_chunks_window_and_overlap_check():
    text = " ".join(f"w{i}" for i in range(100))
    chunks = fixed_chunks(doc(text), max_tokens=26, overlap=5)  # 20-word windows, stride 15
    assert chunks[0].text.split()[0] == "w0" and len(chunks[0].text.split()) == 20
    assert chunks[1].text.split()[0] == "w15"
    assert chunks[-1].text.split()[-1] == "w99"
    with pytest.raises(ValidationError, match="overlap"):
        fixed_chunks(doc(text), max_tokens=26, overlap=20)


def test_preambles_are_derived_and_apart(corpus_dir):
    docs, _ = load_corpus(corpus_dir)
    chunks = chunk_documents(docs)
    policy = next(c for c in chunks if c.chunk_id == "settlement-policy-v3#cutoffs~0")
    assert policy.preamble == ("From policy 'Settlement policy v3' (global, effective 2026-01-01), "
                               "section Settlement policy v3 > Cutoffs.")
    assert policy.preamble not in policy.text
    custom = chunk_documents(docs[:1], preamble_fn=lambda d, c: f"About {d.doc_id}.")
    assert all(c.preamble == f"About {docs[0].doc_id}." for c in custom if c.kind == "chunk")
    none = chunk_documents(docs, ChunkerSettings(preamble="none"))
    assert all(c.preamble is None for c in none)


def test_settings_validate():
    with pytest.raises(ValidationError, match="method"):
        ChunkerSettings(method="semantic")
    with pytest.raises(ValidationError, match="max_tokens"):
        ChunkerSettings(max_tokens=4)
    with pytest.raises(ValidationError, match="preamble_fn"):
        chunk_documents([], ChunkerSettings(preamble="custom"))


@pytest.mark.parametrize("method", ["structure", "sentence", "fixed"])
def test_every_loader_keeps_span_fidelity(corpus_dir, method):
    docs, _ = load_corpus(corpus_dir)
    for c in chunk_documents(docs, ChunkerSettings(method=method, max_tokens=32)):
        d = next(x for x in docs if x.doc_id == c.doc_id)
        assert d.text[c.start:c.end] == c.text


_line = st.one_of(
    st.text(alphabet="abc xyz.,!?E-1234\t", min_size=0, max_size=40),
    st.sampled_from(["# Head", "## Sub head", "- item", "1. step", "| a | b |", "```", "", "   "]),
)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_line, max_size=40), max_tokens=st.integers(16, 80),
       method=st.sampled_from(["structure", "sentence", "fixed"]))
def test_property_spans_exact_and_no_text_lost(lines, max_tokens, method):
    text = "\n".join(lines)
    d = doc(text)
    chunks = [c for c in chunk_documents([d], ChunkerSettings(method=method, max_tokens=max_tokens))
              if c.kind == "chunk"]
    covered = [False] * len(text)
    for c in chunks:
        assert text[c.start:c.end] == c.text
        for i in range(c.start, c.end):
            covered[i] = True
    # every non-space character belongs to some chunk (headings alone may stand without a chunk)
    lost = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    if method == "structure":
        heading_only = {i for s in sections(text) if not text[s.body_start:s.end].strip()
                        for i in range(s.start, s.end)}
        lost = [i for i in lost if i not in heading_only]
    assert not lost, (text, lost[:5])


def test_blocks_keep_tables_fences_and_items_whole():
    from ragkit.documents import blocks, opens_fence

    text = ("Intro line\ncontinues.\n\n- item one\n  wrapped\n- item two\n\n| a | b |\n| 1 | 2 |\n\n"
            "```\ncode\n\nmore\n```\n")
    got = [text[a:b] for a, b in blocks(text, 0, len(text))]
    assert got == ["Intro line\ncontinues.", "- item one\n  wrapped", "- item two", "| a | b |\n| 1 | 2 |",
                   "```\ncode\n\nmore\n```"]
    assert opens_fence("  ~~~python") and opens_fence("```") and not opens_fence("text ```")
