"""House rules checked by the suite: ruff is clean, the type checker passes, every module states its job."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import missing

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "src" / "wheypoint").rglob("*.py"))


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        missing(f"{name} is not installed (pip install -e '.[dev]')")
    return path


def test_ruff_is_clean() -> None:
    done = subprocess.run([_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_passes() -> None:
    _tool("mypy")
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_every_module_opens_with_a_one_line_docstring(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc, f"{path.name} has no module docstring"
    assert doc.splitlines()[0].strip().endswith("."), f"{path.name}: the first line should be one sentence"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_module_is_much_over_500_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 550


# The layers, as data: each package of wheypoint and the packages it may import besides itself. Imports point
# down only. `wheypoint/__init__.py` (the version) may be imported by all; `__main__.py` is part of the CLI.
LAYERS: dict[str, tuple[str, ...]] = {
    "model": (),
    "store": ("model",),
    "notes": ("model",),
    "transcripts": ("model",),
    "app": ("model", "store", "notes", "transcripts"),
    "hooks": ("model", "store", "notes", "transcripts", "app"),
    "mcp": ("model",),  # the command table and a runner are handed to it by cli: it knows no command itself
    "cli": ("model", "app", "hooks", "mcp"),
}
# Database drivers belong to the store's backends; OpenCode's reader opens OpenCode's own database (a transcript).
DRIVERS = {
    "sqlite3": ("wheypoint.store.sqlite.", "wheypoint.transcripts.opencode"),
    "psycopg": ("wheypoint.store.postgres.",),
}
# What the model may not import: it is pure (no files, processes, clock, randomness or network).
IMPURE = {"os", "io", "subprocess", "time", "datetime", "random", "secrets", "pathlib", "sqlite3", "tempfile", "socket",
          "uuid", "shutil", "glob", "urllib", "http", "signal", "threading", "multiprocessing", "builtins"}  # fmt: skip
PACKAGE = ROOT / "src" / "wheypoint"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in SOURCES}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if module == "wheypoint.__main__":
        return "cli"
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def _imports(module: str) -> list[tuple[int, str]]:
    """(line, module imported) for every import in a module, inside functions too, relative ones resolved."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.append((node.lineno, base))
            # `from wheypoint.app import show` imports the module wheypoint.app.show.
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names if f"{base}.{a.name}" in MODULES]
    return found


def test_the_import_walk_sees_imports_inside_functions_and_relative_ones(tmp_path: Path) -> None:
    # The walk itself must not be easy to slip past: a nested and a relative import are both seen.
    probe = PACKAGE / "model" / "errors.py"
    names = {name for _, name in _imports("wheypoint.model.errors")}
    assert probe.exists() and "collections.abc" in names
    found = {name for _, name in _imports("wheypoint.cli.main")}
    assert "wheypoint.app.show" in found and "wheypoint.cli.textout" in found  # both imported inside functions


def test_every_module_belongs_to_a_layer() -> None:
    stray = [m for m in MODULES if _layer(m) is None and m not in ("wheypoint", "wheypoint.__main__")]
    assert not stray, f"modules outside every layer of LAYERS: {stray}"


def test_imports_point_down_the_layers_only() -> None:
    wrong = []
    for module in MODULES:
        layer = _layer(module)
        for line, name in _imports(module):
            if not name.startswith("wheypoint.") or layer is None:
                continue
            target = _layer(name)
            if target is not None and target != layer and target not in LAYERS[layer]:
                wrong.append(f"{MODULES[module].relative_to(ROOT)}:{line} ({layer}) imports {name} ({target})")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_no_import_cycle() -> None:
    graph = {m: sorted({n for _, n in _imports(m) if n in MODULES and n != m}) for m in MODULES}
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*trail[trail.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_database_drivers_stay_in_the_store_backends() -> None:
    wrong = []
    for module in MODULES:
        for line, name in _imports(module):
            allowed = DRIVERS.get(name.split(".")[0])
            if allowed is not None and not any(module.startswith(prefix) for prefix in allowed):
                wrong.append(f"{MODULES[module].relative_to(ROOT)}:{line} imports {name}")
    assert not wrong, "a database driver outside the store's backends:\n" + "\n".join(wrong)


def test_no_sql_outside_the_store() -> None:
    """Nothing outside store/ knows a dialect (OpenCode's reader queries OpenCode's own database, a transcript)."""
    words = ("SELECT ", "INSERT INTO", "PRAGMA ", "pg_advisory", "tsvector")
    wrong = [f"{path.relative_to(ROOT)}: {word!r}" for module, path in MODULES.items()
             if not module.startswith(("wheypoint.store.", "wheypoint.transcripts.opencode"))
             for word in words if word in path.read_text(encoding="utf-8")]  # fmt: skip
    assert not wrong, "SQL outside the store:\n" + "\n".join(wrong)


def test_the_model_is_pure() -> None:
    wrong = []
    for module, path in MODULES.items():
        if _layer(module) != "model":
            continue
        for line, name in _imports(module):
            if name.split(".")[0] in IMPURE:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("open", "input"):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} calls {node.func.id}()")
    assert not wrong, "the model does I/O:\n" + "\n".join(wrong)


def test_every_data_file_of_the_package_is_installed() -> None:
    """A file the runtime reads through importlib.resources must be in pyproject's package-data, or pip drops it."""
    import fnmatch
    import json
    import re

    # (tomllib is 3.11+; the table's one line is read as JSON, which a TOML array of strings also is)
    table = (ROOT / "pyproject.toml").read_text().partition("[tool.setuptools.package-data]")[2]
    globs = json.loads(re.search(r"^wheypoint = (\[.*\])$", table, re.M).group(1))  # type: ignore[union-attr]
    package = ROOT / "src" / "wheypoint"
    data = [p.relative_to(package).as_posix() for p in package.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]  # fmt: skip
    assert data, "the package has a data file (hooks/opencode_plugin.ts) that this test should see"
    assert [name for name in data if not any(fnmatch.fnmatch(name, glob) for glob in globs)] == []
