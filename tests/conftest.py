"""Shared fixtures: paths to the small test corpora."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent


@pytest.fixture
def corpus_dir() -> Path:
    return FIXTURES / "corpus"


@pytest.fixture
def broken_dir() -> Path:
    return FIXTURES / "broken"


def _pdf_string(value: str) -> bytes:
    if value.isascii():
        escaped = value.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        return f"({escaped})".encode("ascii")
    return b"<FEFF" + value.encode("utf-16-be").hex().upper().encode("ascii") + b">"


def make_pdf(path: Path, text: str, info: dict[str, str] | None = None) -> Path:
    """Write a minimal one-page PDF whose page shows ``text`` (no PDF library needed).

    ``info`` becomes the document-information dictionary (keys without the leading ``/``,
    e.g. ``{"Title": "Memo", "ragkit_tenant": "acme"}``).
    """
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if info:
        objects.append(b"<< " + b" ".join(b"/" + k.encode("ascii") + b" " + _pdf_string(v)
                                          for k, v in info.items()) + b" >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    trailer_info = f" /Info {len(objects)} 0 R" if info else ""
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{trailer_info} >>\nstartxref\n{xref}\n"
            "%%EOF\n").encode()
    path.write_bytes(bytes(out))
    return path


@pytest.fixture(scope="session")
def embedder():
    from ragkit.models import get_embedder

    return get_embedder()


class CountingEmbedder:
    """Wraps an embedder and counts the texts it encodes (to prove nothing is re-encoded)."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.version, self.dim = inner.name, inner.version, inner.dim
        self.encoded = 0

    def encode(self, texts, **kwargs):
        self.encoded += len(texts)
        return self.inner.encode(texts, **kwargs)


@pytest.fixture(scope="session")
def fixture_index(embedder):
    from ragkit import Index, load_corpus

    docs, _ = load_corpus(FIXTURES / "corpus")
    return Index.build(docs, embedder=embedder)


def pytest_configure(config):
    config.addinivalue_line("markers", "milvus: runs against a live Milvus (the `milvus_uri` fixture)")


#: Seconds a local Milvus may take to answer, and attempts to start one (a loaded 2-core machine,
#: load average 8, needs tens of seconds); override with RAGKIT_MILVUS_START_TIMEOUT / _ATTEMPTS.
MILVUS_START_TIMEOUT = float(os.environ.get("RAGKIT_MILVUS_START_TIMEOUT", "180"))
MILVUS_START_ATTEMPTS = int(os.environ.get("RAGKIT_MILVUS_START_ATTEMPTS", "3"))


def start_with_retries(start, ready, *, attempts: int, what: str, fix: str, pause: float = 2.0):
    """``start()`` then ``ready(handle)``, retried ``attempts`` times; on failure the test errors at
    setup with every attempt's reason and ``fix`` (what to change), never an obscure traceback."""
    problems = []
    for attempt in range(1, attempts + 1):
        handle = None
        try:
            handle = start()
            ready(handle)
            return handle
        except Exception as exc:  # noqa: BLE001 - every start failure is reported below
            problems.append(f"attempt {attempt}: {type(exc).__name__}: {exc}")
            stop = getattr(handle, "stop", None)
            if stop is not None:
                stop()
            time.sleep(min(pause * attempt, 10.0))
    pytest.fail(f"{what} did not start in {attempts} attempts ({'; '.join(problems)}). {fix}", pytrace=False)


@pytest.fixture(scope="session")
def milvus_uri(tmp_path_factory):
    """A Milvus to test against: RAGKIT_MILVUS_URI (with RAGKIT_MILVUS_TOKEN) when set, else
    embedded Milvus (milvus-lite's server) started on a free loopback port and stopped by its pid.

    The start waits until the server answers a gRPC call (not only until its port listens), up to
    RAGKIT_MILVUS_START_TIMEOUT seconds (default 180), and is retried RAGKIT_MILVUS_START_ATTEMPTS
    times (default 3): enough for a load average of 8 on two cores. A start that still fails errors
    the tests that need it with the reason and what to change."""
    uri = os.environ.get("RAGKIT_MILVUS_URI")
    if uri:
        yield uri
        return
    from ragkit.backends.milvus import start_local

    root = tmp_path_factory.mktemp("milvus")
    counter = iter(range(100))
    server = start_with_retries(
        lambda: start_local(root / f"run{next(counter)}", timeout=MILVUS_START_TIMEOUT),
        lambda s: s.wait_ready(MILVUS_START_TIMEOUT), attempts=MILVUS_START_ATTEMPTS,
        what="embedded Milvus (milvus-lite's server on loopback)",
        fix="On a loaded machine raise RAGKIT_MILVUS_START_TIMEOUT (seconds, default 180) or "
            "RAGKIT_MILVUS_START_ATTEMPTS (default 3); or start Milvus yourself and export "
            "RAGKIT_MILVUS_URI=http://HOST:19530 (and RAGKIT_MILVUS_TOKEN); or deselect with "
            f"-m 'not milvus'. The server's logs are under {root}.")
    try:
        yield server.uri
    finally:
        server.stop()
        assert not server.alive()
