"""Build BEIR-format evaluation sets from material on this machine (no downloads).

* ``pydoc``: Python standard-library docstrings. The query is a docstring's first
  line (its summary); the one relevant document is the rest of that docstring.
  Summary-to-description matching with little shared wording, like claims to
  abstracts.
* ``ops-<tag>``: the course corpus (``datasets/opscorpus``) at document level; each
  evidence case's task is a query and its minimum evidence documents are relevant.
  One set per case tag (identifier, vocabulary_mismatch, multi_hop, conflict, ...).

Usage: python bench/build_beir_sets.py [--out .ragkit-cache/beir-sets]
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import warnings
from pathlib import Path

from _common import DOCS, SETS_DIR, course_cases, parser

from ragkit import load_corpus

STDLIB = ["os", "os.path", "shutil", "pathlib", "json", "csv", "re", "string", "textwrap", "datetime",
          "calendar", "collections", "itertools", "functools", "operator", "math", "statistics",
          "random", "decimal", "fractions", "heapq", "bisect", "array", "copy", "pprint", "enum",
          "typing", "dataclasses", "abc", "contextlib", "logging", "argparse", "subprocess", "socket",
          "ssl", "select", "threading", "multiprocessing", "queue", "asyncio", "concurrent.futures",
          "urllib.parse", "urllib.request", "http.client", "http.server", "email", "email.message",
          "smtplib", "base64", "binascii", "hashlib", "hmac", "secrets", "zlib", "gzip", "bz2",
          "lzma", "zipfile", "tarfile", "tempfile", "glob", "fnmatch", "stat", "filecmp", "io",
          "codecs", "unicodedata", "locale", "gettext", "time", "sched", "sqlite3", "pickle",
          "shelve", "dbm", "xml.etree.ElementTree", "html", "html.parser", "inspect", "ast", "dis",
          "traceback", "warnings", "weakref", "gc", "types", "importlib", "pkgutil", "unittest",
          "doctest", "difflib", "configparser", "tomllib", "platform", "sysconfig", "uuid",
          "ipaddress", "mimetypes", "struct", "signal", "selectors", "wave", "colorsys", "graphlib"]


def _docstrings():
    seen = set()
    warnings.simplefilter("ignore")
    for name in STDLIB:
        try:
            module = importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module missing on this platform is skipped
            continue
        for attr, obj in vars(module).items():
            if attr.startswith("_"):
                continue
            members = [(attr, obj)]
            if inspect.isclass(obj):
                members += [(f"{attr}.{m}", o) for m, o in vars(obj).items()
                            if not m.startswith("_") and callable(o)]
            for qual, member in members:
                doc = inspect.getdoc(member)
                owner = getattr(member, "__module__", "") or ""
                if not doc or id(member) in seen or owner != module.__name__:
                    continue
                seen.add(id(member))
                yield f"{name}.{qual}", doc


def build_pydoc(out: Path, limit: int = 3000) -> int:
    corpus, queries, qrels = [], [], []
    summaries = set()
    for _key, doc in _docstrings():
        parts = doc.strip().split("\n\n", 1)
        if len(parts) < 2:
            continue
        summary, body = parts[0].replace("\n", " ").strip(), parts[1].strip()
        if len(summary.split()) < 5 or len(body.split()) < 25 or summary in summaries:
            continue
        if re.match(r"^[\w.]+\(.*\)", summary):  # a signature line, not a summary
            continue
        summaries.add(summary)
        did = f"d{len(corpus)}"
        corpus.append({"_id": did, "title": "", "text": body})
        queries.append({"_id": f"q{len(queries)}", "text": summary})
        qrels.append((queries[-1]["_id"], did))
        if len(corpus) >= limit:
            break
    _write(out / "pydoc", corpus, queries, qrels)
    return len(queries)


def build_ops(out: Path) -> dict[str, int]:
    docs, _ = load_corpus(DOCS)
    cases = course_cases()
    corpus = [{"_id": d.doc_id, "title": d.title, "text": d.text} for d in docs]
    counts = {}
    tags = sorted({t for c in cases if c.answerable for t in c.tags})
    for tag in ["all", *tags]:
        chosen = [c for c in cases if c.answerable and (tag == "all" or tag in c.tags)]
        queries = [{"_id": c.id, "text": c.task} for c in chosen]
        qrels = [(c.id, e.doc_id) for c in chosen for e in c.evidence]
        _write(out / f"ops-{tag}", corpus, queries, qrels)
        counts[tag] = len(queries)
    return counts


def _write(folder: Path, corpus, queries, qrels) -> None:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w") as fh:
        fh.writelines(json.dumps(d) + "\n" for d in corpus)
    with open(folder / "queries.jsonl", "w") as fh:
        fh.writelines(json.dumps(q) + "\n" for q in queries)
    with open(folder / "qrels" / "test.tsv", "w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        fh.writelines(f"{q}\t{d}\t1\n" for q, d in dict.fromkeys(qrels))


if __name__ == "__main__":
    ap = parser(__doc__)
    ap.add_argument("--out", type=Path, default=SETS_DIR)
    ap.add_argument("--only", choices=["pydoc", "ops"], default=None)
    args = ap.parse_args()
    if args.only in (None, "pydoc"):
        print("pydoc:", build_pydoc(args.out), "queries")
    if args.only in (None, "ops"):
        print("ops:", build_ops(args.out))
