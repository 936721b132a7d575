"""No corpus knowledge in the code of the policy, parsing and resolution modules: it lives in the profile.

Every module under ``ragkit/agent/``, ``ragkit/evidence/`` and ``ragkit/text/`` (except the
profile's own modules, ``ragkit/text/profile*.py``) is read with :mod:`tokenize`; its *code*
(identifiers and string literals, not docstrings or comments) must not hold a word of the bundled
corpus's domain. The domain words are read from data, not typed here: the tenants named in the
front matter of ``datasets/opscorpus/docs``, and the words of the bundled profile's fields that
hold corpus vocabulary (source types, authorities, currencies, statuses, frame words, the cues of
a hop, a relation, a rule, the contradiction words).
"""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
from pathlib import Path

import pytest

from ragkit.core.records import Envelope
from ragkit.text import bundled_profile
from ragkit.text.normalise import VALUE_KINDS
from ragkit.text.value_patterns import FORM_KIND
from ragkit.text.words import QUESTION_STOPWORDS, TASK_STOPWORDS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "evidence", "text")
DOCS = ROOT / "datasets" / "opscorpus" / "docs"

#: The profile fields whose words are the corpus's own vocabulary (the cue fields are general
#: English phrasing: "see", "section", "because"; the statuses and frame words are mostly plain
#: words that code also uses: "open", "done", "name", "number"). Authorities count whole.
VOCABULARY_FIELDS = ("source_types", "currencies", "contradiction_terms")

#: Words of those fields that code may use, each with why (kept short).
ALLOWED = {
    "try": "the Python keyword (TRY is also a currency code of the profile)",
    "exception": "Python's Exception, and the kit's own decision reason exception_applies",
    "policy": "the agent's policy (OfflinePolicy, llm_policy): the kit's own concept",
    "completed": "plain English, and the name of relevance's completion-cue view COMPLETED",
}

#: Corpus words still written in code, per module: to move into the profile (ragkit issue 21).
#: Empty: every one has moved. The test fails when a listed one is gone (shrink this list) or a
#: new one appears.
KNOWN: dict[str, set[str]] = {}


def _tenants() -> set[str]:
    found: set[str] = set()
    for path in DOCS.rglob("*.md"):
        head = path.read_text(encoding="utf-8").split("\n---", 1)[0]
        found.update(m.strip().lower() for m in re.findall(r"(?m)^tenant:\s*([\w-]+)", head))
    return found - {"global", "*"}


def _field_words(value: object) -> set[str]:
    text = " ".join(value) if isinstance(value, (tuple, list, dict)) else str(value)
    return set(re.findall(r"[a-z]{3,}", text.lower().replace("\\b", " ").replace("\\w", " ")))


def domain_words() -> set[str]:
    """The bundled corpus's domain words (see the module docstring), minus general stop words."""
    profile = bundled_profile()
    words = _tenants()
    for name in VOCABULARY_FIELDS:
        words |= _field_words(getattr(profile, name))
    words |= {a for a in profile.authority_ranks if "_" in a}  # policy_owner, not "support" alone
    # the kit's own vocabulary: the value forms and kinds it reads, the envelope's field names
    code_vocabulary = set(FORM_KIND) | set(VALUE_KINDS) | \
        {part for f in dataclasses.fields(Envelope) for part in f.name.split("_")}
    return words - TASK_STOPWORDS - QUESTION_STOPWORDS - code_vocabulary - set(ALLOWED)


def _docstring_starts(source: str) -> set[tuple[int, int]]:
    starts = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                starts.add((body[0].lineno, body[0].col_offset))
    return starts


def _code_words(token: tokenize.TokenInfo) -> set[str]:
    if token.type == tokenize.NAME:
        parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", token.string)
        return {p.lower() for p in parts} | {token.string.lower()}
    return {w.lower() for w in re.findall(r"[A-Za-z]+(?:_[A-Za-z]+)*", token.string)} | \
        {w.lower() for w in re.findall(r"[A-Za-z]+", token.string)}


def code_hits(path: Path, words: set[str]) -> list[str]:
    """``line: word`` for each domain word in the code of ``path`` (identifiers, string literals)."""
    source = path.read_text(encoding="utf-8")
    skip = _docstring_starts(source)
    hits = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in (tokenize.NAME, tokenize.STRING) or tok.start in skip:
            continue
        for word in sorted(_code_words(tok) & words):
            hits.append(f"{path.relative_to(ROOT)}:{tok.start[0]}: {word!r} in {tok.string[:60]!r}")
    return hits


def _modules() -> list[Path]:
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / "ragkit" / package).rglob("*.py")):
            if package == "text" and path.name.startswith("profile"):
                continue
            out.append(path)
    return out


def test_the_domain_words_come_from_the_data() -> None:
    words = domain_words()
    assert {"acme", "globex", "ticket", "runbook", "eur", "policy_owner", "cutover"} <= words
    assert not words & {"the", "which", "date"} - words  # stop words never count


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_domain_word_in_the_code(path: Path) -> None:
    known = KNOWN.get(str(path.relative_to(ROOT)), set())
    hits = code_hits(path, domain_words() - known)
    assert not hits, "corpus words in code (move them into the profile):\n" + "\n".join(hits)
    still = {w for w in known if code_hits(path, {w})}
    assert still == known, f"{sorted(known - still)} no longer in {path.name}: remove them from KNOWN"
