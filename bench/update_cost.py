"""Cost of adding, updating or deleting one document in a 10k- and a 100k-chunk index, vs a rebuild.

Synthetic corpus (no model): documents of ``--sections`` Markdown sections, each section one
chunk of random words from a Zipf-distributed 5,000-word vocabulary; embeddings are random
unit vectors (384-d) derived from a hash of the text, produced by a stand-in "embedder" that
costs ~nothing. The rebuild figure is therefore chunking + BM25 postings + faiss + save *without*
encoding: with a real encoder the rebuild would also re-encode every chunk (the bundled
encoder runs at a few hundred chunks/s here), while an update encodes only the changed
document's chunks (``encoded`` column). Each update is committed (``save``) as a new generation.

Usage: OMP_NUM_THREADS=1 python bench/update_cost.py [--sizes 10000 100000] [--out FILE.md]
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from _common import parser, publish, timed

from ragkit import Document, Envelope, Index

DIM = 384


class RandomUnitEmbedder:
    """Random unit vectors seeded by the text's hash: deterministic, free, not a model."""

    name, version, dim = "random-unit", "1", DIM

    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts, **kwargs):
        self.encoded += len(texts)
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


def corpus(n_docs: int, sections: int, seed: int = 0) -> list[Document]:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(5000)]
    probs = 1 / np.arange(1, 5001)
    probs /= probs.sum()
    docs = []
    for d in range(n_docs):
        parts = [f"# Document {d}\n"]
        for s in range(sections):
            words = rng.choice(vocab, size=40, p=probs)
            parts.append(f"## Section {s}\n\n{' '.join(words)} doc{d} sec{s}.\n")
        env = Envelope(f"doc-{d}", title=f"Document {d}", tenant=f"t{d % 7}")
        docs.append(Document(env, "\n".join(parts)))
    return docs


def run(n_chunks: int, sections: int, tmp: Path) -> list[dict]:
    docs = corpus(n_chunks // sections, sections)
    emb = RandomUnitEmbedder()
    path = tmp / f"idx-{n_chunks}"
    build_s, idx = timed(lambda: Index.build(docs, embedder=emb))
    save_s, _ = timed(lambda: idx.save(path))
    load_s, idx = timed(lambda: Index.load(path, embedder=emb))
    rows = len(idx.rows)
    results = [{"size": rows, "operation": "rebuild (build + save, no encoding)", "seconds": build_s + save_s,
                "encoded": rows},
               {"size": rows, "operation": "load", "seconds": load_s, "encoded": 0}]
    new = corpus(1, sections, seed=99)[0]
    new = Document(replace(new.envelope, doc_id="doc-new"), new.text)
    target = docs[len(docs) // 2]
    edited = Document(replace(target.envelope, version="2"), target.text + "\nOne more edited line.\n")
    ops = [("add one document", lambda: idx.add([new])),
           ("update one document", lambda: idx.add([edited])),
           ("delete one document", lambda: idx.delete([docs[1].doc_id]))]
    for label, op in ops:
        before = emb.encoded
        change_s, _ = timed(op)
        commit_s, _ = timed(lambda: idx.save(path))
        results.append({"size": rows, "operation": label, "seconds": change_s + commit_s,
                        "change_s": change_s, "commit_s": commit_s, "encoded": emb.encoded - before})
    final = list(idx.documents.values())
    before = emb.encoded
    sync_s, rep = timed(lambda: idx.sync([*final[:-1], Document(replace(final[-1].envelope, version="3"),
                                                                final[-1].text + "\nx\n")]))
    commit_s, _ = timed(lambda: idx.save(path))
    results.append({"size": rows, "operation": "sync(full corpus list), one changed",
                    "seconds": sync_s + commit_s, "change_s": sync_s, "commit_s": commit_s,
                    "encoded": emb.encoded - before})
    shutil.rmtree(path)
    return results


def main() -> None:
    ap = parser(__doc__, "update_cost.md", flag="--out")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--sections", type=int, default=10)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            rows += run(n, args.sections, Path(tmp))
            print(rows[-6:], flush=True)
    lines = ["# Update cost: one document vs a rebuild", "",
             f"`OMP_NUM_THREADS=1 python bench/update_cost.py --sizes {' '.join(map(str, args.sizes))}` "
             f"({time.strftime('%Y-%m-%d')}, 2 shared CPU cores, loaded machine). Synthetic text, "
             "random unit vectors: the rebuild column excludes encoding, which a real rebuild would add "
             "for every chunk.",
             "", "| chunks | operation | seconds | change s | commit s | chunks encoded | vs rebuild |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for n in sorted({r["size"] for r in rows}):
        group = [r for r in rows if r["size"] == n]
        rebuild = group[0]["seconds"]
        for r in group:
            change = f"{r['change_s']:.3f}" if "change_s" in r else ""
            commit = f"{r['commit_s']:.3f}" if "commit_s" in r else ""
            ratio = "1x" if r is group[0] else f"{rebuild / r['seconds']:.0f}x faster"
            lines.append(f"| {n:,} | {r['operation']} | {r['seconds']:.3f} | {change} | {commit} "
                         f"| {r['encoded']:,} | {ratio} |")
    publish(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
