"""The suite is hermetic: no variable the runtime reads to find a store, home, session or harness reaches a test."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, SCRUBBED_NAMES, TEST_KNOBS, scrubbed

# The machine's own variables: who the user is, where programs and the home folder are. Tests that depend on one
# set it for the process they start (HOME to a scratch folder, PATH to a fake bin); the suite keeps the rest.
MACHINE = frozenset(("HOME", "USERPROFILE", "USER", "LOGNAME", "USERNAME", "PATH"))
# What the runtime reads the environment through: `os.environ`, or a mapping handed down as `environ` / `env`.
RECEIVERS = frozenset(("environ", "env"))
PYZ_SOURCES = [ROOT / "tools" / "pyz_main.py", ROOT / "tools" / "pyz_payload.py"]  # what the archive adds
SOURCES = [*sorted((ROOT / "src" / "wheypoint").rglob("*.py")), *PYZ_SOURCES]


def _receiver(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _named(node: ast.AST) -> ast.expr | None:
    """The key of an environment lookup (`environ.get(K)`, `env[K]`, `os.getenv(K)`), if `node` is one."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        lookup = node.func.attr in ("get", "pop", "setdefault") and _receiver(node.func.value) in RECEIVERS
        return node.args[0] if lookup or node.func.attr == "getenv" else None
    if isinstance(node, ast.Subscript) and _receiver(node.value) in RECEIVERS:
        return node.slice
    return None


def runtime_variables() -> set[str]:
    """Every environment variable the runtime (src/ and the pyz's start-up) names: looked up with a literal, or
    listed in a module constant `*_ENV` / `*_VARIABLES` that a lookup loops over."""
    found: set[str] = set()
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key = _named(node)
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.add(key.value)
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id.endswith(("_ENV", "_VARIABLES"))):  # fmt: skip
                strings = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)]
                found |= {s for s in strings if isinstance(s, str) and s.isupper()}
    return found


def test_the_scan_finds_every_home_and_harness_variable_the_runtime_is_known_to_read() -> None:
    known = {"WHEYPOINT_HOME", "WHEYPOINT_STORE", "WHEYPOINT_PROJECT", "WHEYPOINT_AUTHOR", "WHEYPOINT_SESSION",
             "WHEYPOINT_HOOK_DEADLINE", "WHEYPOINT_PYZ_CACHE", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
             "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "CLAUDE_CODE_SESSION_ID",
             "CODEX_THREAD_ID", "CLAUDECODE", "GEMINI_CLI", "GIT_CONFIG_GLOBAL", "HOME"}  # fmt: skip
    assert known - runtime_variables() == set()


def test_every_variable_the_runtime_reads_is_cleared_before_the_tests() -> None:
    read = runtime_variables() - MACHINE
    left = scrubbed({name: "/nonexistent" for name in read})
    assert left == {}, f"the runtime reads {sorted(left)}, which tests/conftest.py's hermetic_environment keeps"
    assert not [name for name in read if name.startswith(TEST_KNOBS)], "a test knob's name is one the runtime reads"


def test_the_suites_own_knobs_and_the_machines_variables_are_kept() -> None:
    kept = {"WHEYPOINT_TEST_POSTGRES": "postgresql://x", "WHEYPOINT_E2E_CACHE": "/c", "CI": "true", "PATH": "/bin",
            "HOME": "/h", "GIT_SSL_CAINFO": "/ca.pem"}  # fmt: skip
    assert scrubbed(kept) == kept


def test_no_developer_variable_reaches_a_test(hermetic_environment: Path) -> None:
    for name in sorted((runtime_variables() - MACHINE) | SCRUBBED_NAMES):
        expected = str(hermetic_environment) if name == "XDG_CACHE_HOME" else None
        assert os.environ.get(name) == expected, name


def test_a_suite_started_with_every_such_variable_set_sees_none_of_them(tmp_path: Path) -> None:
    polluted = {name: f"/nonexistent/{name.lower()}" for name in (runtime_variables() - MACHINE) | SCRUBBED_NAMES}
    env = {**os.environ, **polluted}
    inner = f"{Path(__file__).name}::test_no_developer_variable_reaches_a_test"
    done = subprocess.run([sys.executable, "-m", "pytest", inner, "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                           "--basetemp", str(tmp_path / "inner")], cwd=ROOT / "tests", env=env,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
