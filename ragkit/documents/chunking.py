"""Cut documents into chunks that keep the author's structure and a pointer back.

Three chunkers, from best to baseline (CURRICULUM section 2):

* :func:`structure_chunks` splits on the author's structure (read by
  :mod:`ragkit.documents.sections`): Markdown headings (any level), then blocks inside a
  section (paragraphs, list items, tables and fenced code kept whole), packed up to
  ``max_tokens``; Python files split on top-level ``def``/``class``. A block longer than
  the budget falls back to sentences.
* :func:`sentence_chunks` packs sentences with an overlap: the fallback when a
  text has no structure.
* :func:`fixed_chunks` cuts fixed word windows: the baseline to beat.

Every chunk keeps its pointer: ``doc.text[chunk.start:chunk.end] == chunk.text``.
Structure chunks also get a parent (their whole section, ``kind="section"``) for
parent expansion, the document title and section path as context, and an
optional *preamble* (derived text stored apart from the source span).

Example:
    >>> from ragkit.core.records import Document, Envelope
    >>> doc = Document(Envelope("runbook-v2", title="Settlement runbook"),
    ...                "# Settlement runbook\\n\\n## EUR cutoff\\n\\nEUR batches close at 16:00.\\n")
    >>> chunks = structure_chunks(doc)
    >>> [(c.chunk_id, c.kind) for c in chunks]  # the bare title heading holds no text of its own
    [('runbook-v2#eur-cutoff', 'section'), ('runbook-v2#eur-cutoff~0', 'chunk')]
    >>> chunks[-1].section_path
    ('Settlement runbook', 'EUR cutoff')
    >>> chunks[-1].text
    '## EUR cutoff\\n\\nEUR batches close at 16:00.'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from ragkit.core.errors import ValidationError
from ragkit.core.records import Chunk, Document
from ragkit.documents.sections import blocks, opens_fence, sections

__all__ = [
    "ChunkerSettings",
    "PreambleFn",
    "structure_chunks",
    "sentence_chunks",
    "fixed_chunks",
    "chunk_documents",
    "extractive_preamble",
    "approx_tokens",
]

#: ``generator(document, chunk) -> preamble`` for model-written preambles.
PreambleFn = Callable[[Document, Chunk], str]

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"\S+")


def approx_tokens(text: str) -> int:
    """A fast token estimate (~1.3 tokens per word) for sizing chunks.

    Use :func:`ragkit.models.tokens.count_tokens` where an exact count matters.
    """
    return int(len(_WORD.findall(text)) * 1.3 + 0.5)


@dataclass(frozen=True)
class ChunkerSettings:
    """The chunker's tunable parameters, declared once (recorded in an index manifest).

    Attributes:
        method: ``"structure"`` (default), ``"sentence"`` or ``"fixed"``.
        max_tokens: chunk budget (approximate tokens), 16..2048.
        overlap: sentences (``sentence``) or words (``fixed``) shared by neighbours.
        preamble: ``"extractive"`` (default, deterministic), ``"none"``, or ``"custom"``
            when a generator callable is passed to :func:`chunk_documents`.
    """

    method: str = "structure"
    max_tokens: int = 200
    overlap: int = 1
    preamble: str = "extractive"

    def __post_init__(self) -> None:
        if self.method not in ("structure", "sentence", "fixed"):
            raise ValidationError(
                f"chunking method {self.method!r} is unknown; use 'structure', 'sentence' or 'fixed'",
                field="method",
            )
        if not 16 <= self.max_tokens <= 2048:
            raise ValidationError(f"max_tokens={self.max_tokens} is outside 16..2048", field="max_tokens")
        if self.overlap < 0:
            raise ValidationError(f"overlap={self.overlap} must be >= 0", field="overlap")
        if self.preamble not in ("extractive", "none", "custom"):
            raise ValidationError(
                f"preamble={self.preamble!r}; use 'extractive', 'none' or 'custom'", field="preamble"
            )


def _sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    piece = text[start:end]
    cursor = 0
    for match in _SENTENCE_END.finditer(piece):
        spans.append((cursor, match.start() + len(match.group(0).rstrip())))
        cursor = match.end()
    spans.append((cursor, len(piece)))
    out = []
    for a, b in spans:
        seg = piece[a:b]
        lead = len(seg) - len(seg.lstrip())
        trail = len(seg.rstrip())
        if trail > lead:
            out.append((start + a + lead, start + a + trail))
    return out


def _pack(spans: Sequence[tuple[int, int]], text: str, max_tokens: int,
          overlap: int = 0) -> list[tuple[int, int]]:
    """Greedily pack consecutive spans into windows of at most ``max_tokens`` (one span may exceed)."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        j, used = i, 0
        while j < len(spans):
            cost = approx_tokens(text[spans[j][0]:spans[j][1]])
            if j > i and used + cost > max_tokens:
                break
            used += cost
            j += 1
        out.append((spans[i][0], spans[j - 1][1]))
        if j >= len(spans):
            break
        i = max(i + 1, j - overlap)
    return out


def _chunk(doc: Document, anchor: str, path: tuple[str, ...], n: int, a: int, b: int,
           parent: str | None) -> Chunk:
    return Chunk(
        chunk_id=f"{doc.doc_id}#{anchor}~{n}", doc_id=doc.doc_id, version=doc.envelope.version,
        start=a, end=b, text=doc.text[a:b], title=doc.title, section_path=path, anchor=anchor,
        parent_id=parent,
    )


def structure_chunks(doc: Document, *, max_tokens: int = 200) -> list[Chunk]:
    """Chunk on the author's structure; each section becomes a parent with child chunks.

    Returns sections (``kind="section"``) each followed by its chunks (``kind="chunk"``,
    ``parent_id`` = the section's id). A section whose text fits the budget yields one
    chunk; a longer one packs whole blocks (tables and code fences are never split); a
    single block over the budget is split on sentences.
    """
    is_python = doc.envelope.source_type == "code" or doc.envelope.source_path.endswith(".py")
    out: list[Chunk] = []
    for sec in sections(doc.text, python=is_python):
        a, b = _trim(doc.text, sec.start, sec.end)
        if not doc.text[sec.body_start:sec.end].strip():
            continue  # a heading with nothing under it (its subsections carry the text)
        section_id = f"{doc.doc_id}#{sec.anchor}"
        out.append(Chunk(chunk_id=section_id, doc_id=doc.doc_id, version=doc.envelope.version,
                         start=a, end=b, text=doc.text[a:b], title=doc.title, section_path=sec.path,
                         anchor=sec.anchor, parent_id=None, kind="section"))
        if approx_tokens(doc.text[a:b]) <= max_tokens or is_python:
            spans = [(a, b)]
        else:
            units: list[tuple[int, int]] = []
            for blk in blocks(doc.text, a, b):
                block_text = doc.text[blk[0]:blk[1]]
                fenced = opens_fence(block_text) or block_text.lstrip().startswith("|")
                if approx_tokens(block_text) > max_tokens and not fenced:
                    units.extend(_pack(_sentence_spans(doc.text, *blk), doc.text, max_tokens))
                else:
                    units.append(blk)
            spans = _pack(units, doc.text, max_tokens)
        for n, (ca, cb) in enumerate(spans):
            out.append(_chunk(doc, sec.anchor, sec.path, n, ca, cb, section_id))
    return out


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def sentence_chunks(doc: Document, *, max_tokens: int = 200, overlap: int = 1) -> list[Chunk]:
    """Pack sentences into chunks of about ``max_tokens``, neighbours sharing ``overlap`` sentences.

    The fallback when a text has no usable structure. No parents; anchor is ``"s"``.
    """
    a, b = _trim(doc.text, 0, len(doc.text))
    spans = _pack(_sentence_spans(doc.text, a, b), doc.text, max_tokens, overlap)
    return [_chunk(doc, "s", (), n, x, y, None) for n, (x, y) in enumerate(spans)]


def fixed_chunks(doc: Document, *, max_tokens: int = 200, overlap: int = 0) -> list[Chunk]:
    """Fixed windows of ``round(max_tokens / 1.3)`` words, ``overlap`` words shared: the baseline."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(doc.text)]
    size = max(1, round(max_tokens / 1.3))
    if overlap >= size:
        raise ValidationError(f"overlap={overlap} words must be smaller than the window of {size} words",
                              field="overlap")
    out: list[Chunk] = []
    for n, i in enumerate(range(0, len(words), size - overlap)):
        window = words[i:i + size]
        out.append(_chunk(doc, "w", (), n, window[0][0], window[-1][1], None))
        if i + size >= len(words):
            break
    return out


def extractive_preamble(doc: Document, chunk: Chunk) -> str:
    """A deterministic situating sentence built from the envelope and the section path.

    Example: ``"From policy 'Settlement policy v3' (global, effective 2026-01-01), section
    Cutoffs > EUR."`` It is derived text: stored in ``Chunk.preamble``, never in the span.
    """
    env = doc.envelope
    bits = [env.tenant]
    if env.effective_from:
        bits.append(f"effective {env.effective_from.date().isoformat()}")
    elif env.published_at:
        bits.append(f"published {env.published_at.date().isoformat()}")
    where = " > ".join(chunk.section_path) or "opening"
    return f"From {env.source_type} '{env.title}' ({', '.join(bits)}), section {where}."


def chunk_documents(
    docs: Iterable[Document],
    settings: ChunkerSettings | None = None,
    *,
    preamble_fn: PreambleFn | None = None,
) -> list[Chunk]:
    """Chunk many documents with one :class:`ChunkerSettings`; attach preambles to chunks.

    Args:
        docs: documents to chunk.
        settings: method, budget, overlap and preamble mode (defaults: structure, 200, 1,
            extractive).
        preamble_fn: a model-written preamble generator; requires ``preamble="custom"``
            (or is taken as implying it).
    """
    settings = settings or ChunkerSettings()
    if preamble_fn is not None and settings.preamble == "extractive":
        settings = ChunkerSettings(settings.method, settings.max_tokens, settings.overlap, "custom")
    if settings.preamble == "custom" and preamble_fn is None:
        raise ValidationError("preamble='custom' needs a preamble_fn(document, chunk) -> str",
                              field="preamble")
    out: list[Chunk] = []
    for doc in docs:
        if settings.method == "structure":
            chunks = structure_chunks(doc, max_tokens=settings.max_tokens)
        elif settings.method == "sentence":
            chunks = sentence_chunks(doc, max_tokens=settings.max_tokens, overlap=settings.overlap)
        else:
            chunks = fixed_chunks(doc, max_tokens=settings.max_tokens, overlap=settings.overlap)
        for chunk in chunks:
            if chunk.kind == "chunk" and settings.preamble != "none":
                make = preamble_fn if settings.preamble == "custom" else extractive_preamble
                assert make is not None
                chunk = _with_preamble(chunk, make(doc, chunk))
            out.append(chunk)
    return out


def _with_preamble(chunk: Chunk, preamble: str) -> Chunk:
    return replace(chunk, preamble=preamble.strip() or None)
