"""The package's shape, checked: layers, private names, module size, short public imports.

The layer order itself is import-linter's ``layers`` contract in ``pyproject.toml``
(``lint-imports`` runs in ``./run test``, and :func:`test_layer_contract_is_kept` runs it
here too). The other rules have no tool of their own, so they are read from the source
with :mod:`ast`:

* no module imports another module's private (``_``-prefixed) name, in the package or bench;
* imports of ``ragkit`` sit at module level (a function-local import hides which way a
  dependency runs; function-local imports are for optional heavy libraries only);
* no module is longer than :data:`MAX_LINES`;
* notebooks, exercise cells and the README import from ``ragkit`` or one level below;
* everything a module lists in ``__all__`` has a docstring;
* every ``ragkit.x.y`` named in docstrings, READMEs, notebooks and bench scripts exists.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ragkit"

#: "One concept per module, usually 50-300 lines" (STYLE.md); none may pass this.
MAX_LINES = 400


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        yield dotted, path


def _ragkit_imports(tree: ast.AST) -> Iterator[tuple[ast.ImportFrom | ast.Import, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("ragkit"):
            yield node, node.module or ""
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "ragkit":
                    yield node, alias.name


def _private_uses(tree: ast.AST) -> list[str]:
    """``from ragkit.x import _name``, ``Name._attr`` on any name imported from ragkit, and
    ``getattr(obj, "_attr")`` (reaching into another module's object by a string)."""
    found: list[str] = []
    module_names: set[str] = set()
    for node, module in _ragkit_imports(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"line {node.lineno}: from {module} import {alias.name}")
                else:
                    module_names.add(alias.asname or alias.name)
        else:
            for alias in node.names:
                if alias.asname:
                    module_names.add(alias.asname)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in module_names and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str) and node.args[1].value.startswith("_")
                and not node.args[1].value.startswith("__")):
            found.append(f"line {node.lineno}: getattr(..., {node.args[1].value!r})")
    return found


def test_layer_contract_is_kept() -> None:
    """import-linter's layers contract (pyproject.toml): imports run from the top layer down."""
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("lint-imports is not installed: run `./run setup` (it is in the dev extra)")
    done = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


@pytest.mark.parametrize("folder", ["ragkit", "bench"])
def test_no_module_imports_a_private_name(folder: str) -> None:
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for use in _private_uses(ast.parse(path.read_text())):
            bad.append(f"{path.relative_to(ROOT)} {use}")
    why = "private names used across modules (make them public, or move the code):\n"
    assert not bad, why + "\n".join(bad)


def test_ragkit_imports_are_at_module_level() -> None:
    bad = []
    for _, path in _modules():
        tree = ast.parse(path.read_text())
        for node, module in _ragkit_imports(tree):
            if node.col_offset > 0:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module} inside a function")
    assert not bad, "\n".join(bad)


def test_no_module_is_a_large_room() -> None:
    long = {str(path.relative_to(ROOT)): n for _, path in _modules()
            if (n := len(path.read_text().splitlines())) > MAX_LINES}  # fmt: skip
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"


def _notebook_code(path: Path) -> Iterator[str]:
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code":
            source = cell["source"]
            yield "".join(source) if isinstance(source, list) else source


def _user_facing_code() -> Iterator[tuple[str, str]]:
    for path in sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("exercises/**/*.ipynb")]):
        for code in _notebook_code(path):
            yield str(path.relative_to(ROOT)), code
    readme = (ROOT / "README.md").read_text()
    for block in re.findall(r"```python\n(.*?)```", readme, flags=re.S):
        yield "README.md", block


def test_user_facing_code_imports_the_short_public_api() -> None:
    """Notebooks, exercises and the README import from ``ragkit`` or ``ragkit.<layer>`` only."""
    deep = []
    for where, code in _user_facing_code():
        for match in re.finditer(r"^\s*(?:from|import)\s+(ragkit(?:\.\w+)*)", code, flags=re.M):
            if match.group(1).count(".") > 1:
                deep.append(f"{where}: {match.group(0).strip()}")
    assert not deep, "deep imports in user-facing code:\n" + "\n".join(sorted(set(deep)))


def test_public_names_have_docstrings() -> None:
    missing = []
    for dotted, path in _modules():
        tree = ast.parse(path.read_text())
        exported: set[str] = set()
        for node in tree.body:
            names = [getattr(t, "id", None) for t in getattr(node, "targets", [])]
            if isinstance(node, ast.Assign) and "__all__" in names:
                exported = set(ast.literal_eval(node.value))
        for node in tree.body:
            if (isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                    and node.name in exported and not ast.get_docstring(node)):
                missing.append(f"{dotted}.{node.name}")
    assert not missing, f"public names without a docstring: {missing}"


def test_the_checks_above_can_fail(tmp_path: Path) -> None:
    """The AST rules find what they are meant to find (a guard against a check that never fires)."""
    tree = ast.parse("from ragkit.index import storage as st\nfrom ragkit.models.bundled import _map\n"
                     "from ragkit.core import Envelope\n"
                     "def f(x):\n    from ragkit.core import ids\n    getattr(x, '_cache')\n"
                     "    return st._serialise, Envelope._FIELDS, x._own\n")
    uses = _private_uses(tree)
    assert len(uses) == 4, uses
    assert any("_map" in u for u in uses) and any("st._serialise" in u for u in uses)
    assert any("Envelope._FIELDS" in u for u in uses) and any("'_cache'" in u for u in uses)
    assert [m for n, m in _ragkit_imports(tree) if n.col_offset > 0] == ["ragkit.core"]


_DOTTED = re.compile(r"(?<![\w/.-])ragkit(?:\.[A-Za-z_]\w*)+")


def _resolves(ref: str) -> bool:
    """Whether ``ragkit.a.b.C.attr`` names a module, then attributes (an instance attribute a class's
    code assigns counts)."""
    parts = ref.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if hasattr(obj, name):
                obj = getattr(obj, name)
            elif inspect.isclass(obj) and f"self.{name} " in inspect.getsource(obj):
                return True
            else:
                return False
        return True
    return False


def test_names_in_docs_and_docstrings_resolve() -> None:
    """Every ``ragkit.x.y`` a docstring, README, notebook or bench script names exists (a moved or
    renamed module leaves no dangling reference)."""
    paths = [*PACKAGE.rglob("*.py"), ROOT / "README.md", *ROOT.glob("*/README.md"),
             *ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("exercises/**/*.ipynb"), *ROOT.glob("bench/*.py")]
    dangling = set()
    for path in paths:
        for match in _DOTTED.finditer(path.read_text()):
            ref = match.group(0)
            if not ref.endswith((".py", ".ipynb", ".md", ".json", ".jsonl")) and not _resolves(ref):
                dangling.add(f"{path.relative_to(ROOT)}: {ref}")
    assert not dangling, "names that no longer exist:\n" + "\n".join(sorted(dangling))


def _readme_tree() -> set[str]:
    """Module paths (``core/ids``, ``agent/offline/judging``) listed in the README's layout tree."""
    block = re.search(r"```text\nragkit/\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert block, "README.md has no ```text tree starting with 'ragkit/'"
    listed: set[str] = set()
    folders: list[tuple[int, str]] = []
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        folders = [(i, f) for i, f in folders if i < indent]
        first = line.split()[0]
        if first.endswith("/"):
            folders.append((indent, first.rstrip("/")))
        elif first.endswith(".py"):
            if first != "__init__.py":
                listed.add(first.removesuffix(".py"))
        else:
            prefix = "/".join(f for _, f in folders)
            listed.update(f"{prefix}/{name}" for name in line.split())
    return listed


def test_readme_tree_lists_every_module() -> None:
    actual = {str(path.relative_to(PACKAGE).with_suffix("")) for path in PACKAGE.rglob("*.py")
              if path.name != "__init__.py" and path.name != "__main__.py"}
    listed = _readme_tree()
    assert listed == actual, (f"README layout tree is out of date: missing {sorted(actual - listed)}, "
                              f"no longer exists {sorted(listed - actual)}")
