"""The README's two set-up commands work on a fresh machine, and CI runs exactly the README's test command."""

from __future__ import annotations

import re
import shlex

from conftest import ROOT

VENV = "python3 -m venv .venv && . .venv/bin/activate && "


def setup_commands() -> list[str]:
    """The indented command lines of the README's `## Set up on a fresh machine` section, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return [line[4:] for line in section.splitlines() if line.startswith("    ") and line.strip()]


def test_the_readme_keeps_two_set_up_commands_each_in_a_fresh_virtual_environment() -> None:
    # Debian's python3 refuses `pip install` outside a virtual environment (externally-managed-environment).
    commands = setup_commands()
    assert len(commands) == 2, commands
    main_job, tests = commands
    assert main_job.startswith(VENV) and main_job.endswith("python3 -m wheypoint demo"), main_job
    assert tests.startswith(VENV) and "python3 -m pip install -e '.[dev]' && python3 -m pytest" in tests, tests


def test_ci_installs_the_project_into_a_venv_and_runs_the_readmes_test_command() -> None:
    script = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    pytest_command = setup_commands()[1].rsplit(" && ", 1)[1]
    steps = [line for line in script if line and not line.startswith("#")]
    assert [line for line in steps if line.startswith("python3 -m pytest")] == [pytest_command]
    venv, activate, install = (
        steps.index("python3 -m venv .venv"),
        steps.index(". .venv/bin/activate"),
        steps.index("python3 -m pip install -e '.[dev]'"),
    )
    assert venv < activate < install < steps.index(pytest_command)


def test_every_plugin_the_test_command_needs_is_a_dev_dependency_and_skips_say_why() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # read as text: tomllib is Python 3.11+
    dev = text.split("\ndev = [", 1)[1].split("\n]", 1)[0]
    words = shlex.split(setup_commands()[1].rsplit(" && ", 1)[1])
    if "-n" in words:
        assert '"pytest-xdist' in dev
    addopts = re.search(r"^addopts = (['\"])(.*)\1$", text, re.MULTILINE)
    assert addopts is not None and "-rs" in shlex.split(addopts[2])
    if "-m" in shlex.split(addopts[2]):  # the quick default leaves tests out: CI's command must put every one back
        last = max((i for i, word in enumerate(words) if word == "-m"), default=len(words))
        assert words[last + 1 : last + 2] == [""], words
