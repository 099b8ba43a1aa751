"""House rules checked by the suite: ruff is clean, the type checker passes, every module states its job."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "src" / "wheypoint").rglob("*.py"))


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed (pip install -e '.[dev]')"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
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


def test_sql_stays_inside_the_store() -> None:
    # opencode.py reads OpenCode's own database (a transcript), never wheypoint's store.
    allowed = {"sqlite_store.py", "migrations.py", "opencode.py"}
    for path in SOURCES:
        if path.name in allowed:
            continue
        text = path.read_text(encoding="utf-8")
        assert "import sqlite3" not in text, f"{path.name} imports sqlite3; SQL belongs to the store"


PURE_MODULES = ("kernel.py", "canonical.py", "projection.py", "rules.py", "schemacheck.py", "contract.py", "refs.py")
IMPURE_IMPORTS = {"os", "subprocess", "time", "datetime", "random", "pathlib", "sqlite3", "tempfile", "socket", "uuid"}


@pytest.mark.parametrize("name", PURE_MODULES)
def test_the_kernel_and_its_helpers_do_no_io(name: str) -> None:
    tree = ast.parse((ROOT / "src" / "wheypoint" / name).read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not imported & IMPURE_IMPORTS, f"{name} imports {imported & IMPURE_IMPORTS}"
    assert "open(" not in (ROOT / "src" / "wheypoint" / name).read_text(encoding="utf-8")
