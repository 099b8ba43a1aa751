"""The command table: parser, help and handlers come from one declaration; refusals are data below the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Runner
from wheypoint.app.context import Context
from wheypoint.app.listing import list_works
from wheypoint.cli.commands import COMMANDS
from wheypoint.cli.main import INTENT_HANDLERS, TABLE_HANDLERS
from wheypoint.model.errors import Refusal


def test_every_declared_command_has_one_handler_and_no_handler_is_undeclared() -> None:
    declared = {c.name: c.grammar for c in COMMANDS}
    assert set(TABLE_HANDLERS) | set(INTENT_HANDLERS) == set(declared)
    assert not set(TABLE_HANDLERS) & set(INTENT_HANDLERS)
    assert all(declared[name] == "table" for name in TABLE_HANDLERS)
    assert all(declared[name] in ("intent", "hook") for name in INTENT_HANDLERS)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_each_command_prints_its_own_help_with_every_option(wp: Runner, command: object) -> None:
    done = wp(command.name, "--help")  # type: ignore[attr-defined]
    assert done.code == 0, done.stdout
    assert done.stdout.startswith(f"usage: wheypoint {command.name}")  # type: ignore[attr-defined]
    for option in command.options:  # type: ignore[attr-defined]
        assert option.flag in done.stdout
    assert "example:" in done.stdout


def test_top_level_help_lists_every_command(wp: Runner) -> None:
    done = wp("--help")
    assert done.code == 0
    for command in COMMANDS:
        assert f"  {command.name} " in done.stdout


def test_a_misspelled_command_or_flag_gets_a_suggestion(wp: Runner) -> None:
    done = wp("shwo", "x")
    assert done.code == 2 and "did you mean show?" in done.json["error"]["message"]
    done = wp("list", "--limt", "3")
    assert done.code == 2 and "did you mean --limit?" in done.json["error"]["message"]


def test_the_cli_spells_a_parameter_as_its_flag_and_exits_2(wp: Runner) -> None:
    done = wp("list", "--limit", "0")
    assert done.code == 2
    error = done.json["error"]
    assert error["code"] == "usage" and error["parameter"] == "limit"
    assert error["message"].startswith("--limit takes a whole number")


def test_the_cli_spells_a_positional_parameter_in_angle_brackets(wp: Runner) -> None:
    done = wp("handoff", "explode", "x")
    assert done.code == 2
    assert done.json["error"]["parameter"] == "action"
    assert done.json["error"]["message"].startswith("<action> takes render, parse or dispatch")


def test_below_the_cli_a_refusal_names_its_parameter_not_a_flag(tmp_path: Path) -> None:
    ctx = Context(cwd=tmp_path, environ={"WHEYPOINT_HOME": str(tmp_path / "home")})
    with pytest.raises(Refusal) as caught:
        list_works(ctx, {"limit": "5000"})
    refusal = caught.value
    assert refusal.usage and refusal.parameter == "limit" and refusal.code == "usage"
    assert "--" not in refusal.describe()
    assert refusal.as_json()["message"].startswith("limit takes a whole number")


def test_an_unknown_harness_names_the_harness_parameter(wp: Runner) -> None:
    done = wp("turns", "--harness", "emacs")
    assert done.code == 2
    assert done.json["error"]["code"] == "unknown-harness" and done.json["error"]["parameter"] == "harness"
    assert done.json["error"]["message"].startswith("--harness takes claude-code")


def test_the_program_ends_with_its_reply_flushed_and_its_exit_code(wp: Runner, tmp_path: Path) -> None:
    done = wp("show", "nosuch")
    assert done.code == 1 and done.json["error"]["code"] == "record-missing" and done.stdout.endswith("\n")
    assert done.stderr == ""


def test_a_reader_that_goes_away_gets_no_traceback(home: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "WHEYPOINT_HOME": str(home)}
    script = f"{sys.executable} -m wheypoint --help | head -c 5 >/dev/null; {sys.executable} -m wheypoint list | true"
    done = subprocess.run(["sh", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
