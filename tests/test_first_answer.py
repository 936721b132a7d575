"""A fast first answer: what ``ragkit ask`` loads, and what it leaves alone (issue 25, item 4).

* a well-formed tool call is checked without jsonschema (:func:`ragkit.tools.arguments.surely_valid`;
  importing jsonschema costs about a second), and that check never passes a call jsonschema
  would refuse, so every error is still jsonschema's;
* a whole offline answer, in a fresh process, never imports jsonschema;
* one answer loads each model (the embedder's session and tokenizer, the cross-encoder's, the
  token counter) exactly once, also with the policy's SentenceFit sharing the cross-encoder (slow:
  the bundled models run).

``bench/first_answer.py`` measures the time; nothing here asserts a duration.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ragkit.tools.arguments import surely_valid
from ragkit.tools.schemas import ToolSettings, tool_specs

ROOT = Path(__file__).parent.parent
CORPUS = Path(__file__).parent / "fixtures" / "corpus"

WELL_FORMED = [
    ("search_knowledge", {"query": "EUR cutoff"}),
    ("search_knowledge", {"query": "EUR cutoff", "k": 4, "doc_type": "policy", "valid_at": "2026-01-19"}),
    ("search_knowledge", {"query": "x", "k": 1, "tenant": "acme", "published_after": "2026-01-01",
                          "published_before": "2026-02-01"}),
    ("retrieve_documents", {"ids": ["policy-v3", "policy-v3#cutoffs"]}),
    ("related_documents", {"doc_id": "acme-t1"}),
]

ODD_VALUES: list[Any] = ["", " ", "x", "é" * 1001, "a" * 1000, 0, 1, -3, 4, 9, 2**40, 4.0, 4.5, True, False,
                         None, [], [""], ["x"], ["x", ""], ["x", 3], [["x"]], {}, {"a": 1}, float("nan")]


def _specs() -> list[Any]:
    out = []
    for settings in (ToolSettings(), ToolSettings(max_k=3, default_k=2), ToolSettings(max_ids=1)):
        for kinds in ([], ["policy", "runbook"]):
            out += list(tool_specs(settings, kinds).values())
    return out


def _samples(spec: Any, rng: random.Random) -> list[Any]:
    """Argument objects around the tool's schema: well-formed, one field off, extra or missing keys."""
    props = list(spec.parameters["properties"])
    out: list[Any] = [{}, [], "x", None, {"unknown": "x"}]
    for name in props:
        out += [{name: v} for v in ODD_VALUES]
    for _ in range(400):
        args = {name: rng.choice(ODD_VALUES) for name in rng.sample(props, rng.randint(1, len(props)))}
        if rng.random() < 0.1:
            args["extra"] = "x"
        out.append(args)
    return out


def test_surely_valid_never_passes_what_jsonschema_refuses():
    rng = random.Random(25)
    passed = refused = 0
    for spec in _specs():
        validator = Draft202012Validator(spec.parameters)
        for args in _samples(spec, rng):
            if surely_valid(spec.parameters, args):
                assert validator.is_valid(args), (spec.name, args)
                passed += 1
            refused += not validator.is_valid(args)
    assert passed > 100 and refused > 100  # both sides were exercised


@pytest.mark.parametrize("name,args", WELL_FORMED)
def test_well_formed_calls_take_the_fast_path(name, args):
    spec = tool_specs(ToolSettings(), ["policy"])[name]
    assert surely_valid(spec.parameters, args)
    assert Draft202012Validator(spec.parameters).is_valid(args)


@pytest.mark.parametrize("schema,value", [
    ({"type": "integer"}, 4.0),                         # jsonschema accepts 4.0; not sure here
    ({"type": ["string", "null"]}, "x"),                # a type list is not checked here
    ({"type": "string", "format": "date"}, "x"),        # nor any keyword it does not know
    ({"type": "string", "pattern": "^a"}, "a"),
    ({"type": "object", "additionalProperties": {"type": "string"}}, {"a": "x"}),
    ({"type": "integer", "minimum": 1}, True),          # a bool is not an integer
    ({"enum": [1, 2]}, 1),
])
def test_unsure_cases_go_to_jsonschema(schema, value):
    assert not surely_valid(schema, value)


FAST_ANSWER = r"""
import json, sys
import numpy as np
from ragkit import Agent, Funnel, FunnelSettings, Index, Scope, Toolbox, chunk_documents, load_corpus
from ragkit.index import IndexSettings

class NoModel:
    name, version, dim = "none", "0", 8
    def encode(self, texts, **kwargs):
        raise AssertionError("this test must not encode")

docs, _ = load_corpus(sys.argv[1])
chunks = chunk_documents(docs)
rows = sum(1 for c in chunks if c.kind == "chunk")
index = Index(docs, chunks, np.zeros((rows, 8), np.float32), IndexSettings(), embedder=NoModel())
funnel = Funnel(index, FunnelSettings(retrievers=("lexical",), rerank_mode="none"))
box = Toolbox(index, Scope("acme", ["ops"]), funnel=funnel)
result = Agent(box).run("Which cutoff applies to Acme's EUR batches on 19 January 2026?",
                        as_of="2026-01-19")
after_answer = "jsonschema" in sys.modules
bad = box.call("search_knowledge", {"query": "x", "k": 0})
print(json.dumps({"abstained": result.abstained, "value": result.value, "calls": len(result.steps),
                  "after_answer": after_answer, "bad": bad["error"]["code"], "field": bad["error"]["field"],
                  "after_bad_call": "jsonschema" in sys.modules}))
"""


def test_an_offline_answer_never_imports_jsonschema():
    out = subprocess.run([sys.executable, "-c", FAST_ANSWER, str(CORPUS)], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    record = json.loads(out.stdout.strip().splitlines()[-1])
    assert not record["abstained"] and record["value"] and record["calls"] >= 2, record
    assert record["after_answer"] is False, "a well-formed call imported jsonschema"
    # a malformed call still gets jsonschema's verdict, as a structured error
    assert (record["bad"], record["field"], record["after_bad_call"]) == ("bad_value", "k", True)


LOADS = r"""
import json, sys, tempfile
import ragkit
import ragkit.models.runtime as runtime
import ragkit.models.tokens as tokens
from ragkit.index.segments import Segment

counts = {}

def counted(label, inner):
    def wrapper(*args, **kwargs):
        key = f"{label}:{getattr(args[0], 'name', '')}" if args else label
        counts[key] = counts.get(key, 0) + 1
        return inner(*args, **kwargs)
    return wrapper

for fn in ("onnx_session", "load_tokenizer"):
    original = getattr(runtime, fn)
    for mod in [m for n, m in list(sys.modules.items()) if n.startswith("ragkit") and m is not None]:
        if getattr(mod, fn, None) is original:
            setattr(mod, fn, counted(fn, original))
tok = tokens._tokenizer
def token_counter():
    if tok.cache_info().currsize == 0:
        counts["token counter"] = counts.get("token counter", 0) + 1
    return tok()
tokens._tokenizer = token_counter
read = Segment.__dict__["read"].__func__
def segment_read(cls, *a, **k):
    counts["segment read"] = counts.get("segment read", 0) + 1
    return read(cls, *a, **k)
Segment.read = classmethod(segment_read)

from ragkit import Agent, Index, Scope, Toolbox, load_corpus
from ragkit.agent import OfflinePolicy
from ragkit.models import get_embedder

docs, _ = load_corpus(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    Index.build(docs, embedder=get_embedder()).save(tmp + "/idx")
    built = dict(counts)
    counts.clear()
    index = Index.load(tmp + "/idx")          # what `ragkit ask` does, then one answer
    box = Toolbox(index, Scope("acme", ["ops"]))
    answers = []
    for policy in (None, OfflinePolicy(fit=True)):   # the second shares the cross-encoder with the funnel
        result = Agent(box, policy).run("Which cutoff applies to Acme's EUR batches on 19 January 2026?",
                                       as_of="2026-01-19")
        answers.append(result.value)
print(json.dumps({"built": built, "answer": counts, "values": answers}))
"""


@pytest.mark.slow
def test_one_answer_loads_each_model_once():
    out = subprocess.run([sys.executable, "-c", LOADS, str(CORPUS)], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    record = json.loads(out.stdout.strip().splitlines()[-1])
    built, answer = record["built"], record["answer"]
    assert built == {"onnx_session:bge_small_en": 1, "load_tokenizer:bge_small_en": 1}, built
    # the embedder loaded for the build is reused; the index is read once; the cross-encoder,
    # its tokenizer and the token counter load once for two answers (funnel and SentenceFit alike)
    assert answer == {"segment read": 1, "onnx_session:reranker_en": 1, "load_tokenizer:reranker_en": 1,
                      "token counter": 1}, answer
    values = record["values"]
    assert values[0] is not None and values == [values[0]] * 2, record  # answered, alike both times


@pytest.mark.slow
def test_bench_first_answer_runs(tmp_path):
    """``bench/first_answer.py`` at a tiny size (one question, one run) on the fixture corpus."""
    from ragkit import Index, load_corpus

    docs, _ = load_corpus(CORPUS)
    index = tmp_path / "index"
    Index.build(docs).save(index)
    out = tmp_path / "fa.md"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "first_answer.py"), "--index", str(index),
                           "--questions", "1", "--runs", "1", "--result", str(out)], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    assert "| **all questions** |" in text and "| open index |" in text
    assert "identical across trees and runs: yes" in text
    loaded = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in text.splitlines()
              if line.startswith("| onnx_session(") or line.startswith("| Index.load")}
    assert loaded and set(loaded.values()) == {"1"}, loaded  # every model and the index loaded once
