"""Every command line the README, docs/ and `--help` show is one wheypoint accepts, so no doc drifts from the code.

Each documented line names a command that exists and flags that command takes. A line with placeholders
(`<slug>`, `[--limit N]`) is a synopsis and is checked that far; a concrete line is also run, in the order
the documents give, in a scratch checkout with its own store: it must be parsed (never exit 2) and answered
with one JSON reply, refused only for a reason the scratch scene explains (SCENE_REFUSALS).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conftest import Runner, make_repo
from wheypoint.cli.commands import BY_NAME, COMMANDS
from wheypoint.cli.flags import ITEM_FLAGS, MODIFIERS, SCALARS

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SUBCOMMANDS = {"handoff": {"render", "parse", "dispatch"}}
FLAG_FORM = ITEM_FLAGS | set(MODIFIERS) | SCALARS
INLINE = re.compile(r"`(wheypoint [^`]+)`")
TABLE_ROW = re.compile(r"^\| `((?:[^`\\]|\\.)+)`")  # a table row opening with a command: README's command table
FENCE = re.compile(r"^\s*(```|~~~)")


def _code_lines(text: str) -> list[str]:
    """Command lines in code blocks (fenced or indented four spaces), continuation lines joined."""
    lines: list[str] = []
    fenced = False
    pending = ""
    for raw in text.splitlines():
        if FENCE.match(raw):
            fenced = not fenced
            continue
        in_code = fenced or raw.startswith("    ")
        line = raw.strip().removeprefix("$ ")
        if pending:
            pending += " " + line.rstrip("\\").strip()
            if not line.endswith("\\"):
                lines.append(pending)
                pending = ""
            continue
        if in_code and line.startswith(("wheypoint ", "python3 -m wheypoint ")):
            line = line.removeprefix("python3 -m ")
            if line.endswith("\\"):
                pending = line.rstrip("\\").strip()
            else:
                lines.append(line)
    return lines


def documented() -> list[tuple[str, str]]:
    """(where, command line) for every command line shown in the documents and in each command's --help."""
    found: list[tuple[str, str]] = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        found += [(name, line) for line in _code_lines(text)]
        for span in INLINE.findall(text):
            words = span.split()
            if len(words) > 1 and words[1] in BY_NAME:
                found.append((name, span))
        for row in text.splitlines():
            cell = TABLE_ROW.match(row)
            if cell and cell.group(1).split()[0] in BY_NAME:
                found.append((name, "wheypoint " + cell.group(1).replace("\\|", "|")))
    found += [(f"{command.name} --help", command.example) for command in COMMANDS]
    return found


QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")


def _is_synopsis(line: str) -> bool:
    """A line with placeholders, alternatives or repetition outside its quoted values: a shape, not a command."""
    bare = QUOTED.sub("''", line)
    return any(mark in bare for mark in ("<", "[", "|")) or bare.endswith("...") or " ... " in bare


def _check_vocabulary(where: str, line: str) -> list[str]:
    """What is wrong with a documented line's command and flags; empty when everything named exists."""
    words = line.replace("[", " [ ").replace("]", " ] ").replace("|", " | ").split()
    problems = []
    name = words[1]
    command = BY_NAME.get(name)
    if command is None:
        return [f"{where}: `{line}` names no command {name!r}"]
    if name in SUBCOMMANDS and not _is_synopsis(line) and words[2] not in SUBCOMMANDS[name]:
        problems.append(f"{where}: `{line}`: {words[2]!r} is not a {name} action")
    known = {option.flag for option in command.options} | {"--help"}
    if command.grammar == "intent":
        known |= FLAG_FORM
    for word in words[2:]:
        flag = word.split("=", 1)[0]
        if flag.startswith("--") and flag.rstrip(".,") not in known:
            problems.append(f"{where}: `{line}`: {command.name} takes no {flag}")
    return problems


def test_every_documented_command_line_names_a_command_and_flags_that_exist() -> None:
    lines = documented()
    assert len(lines) >= 20, "the extraction found too few command lines: is it still reading the documents?"
    problems = [problem for where, line in lines for problem in _check_vocabulary(where, line)]
    assert not problems, "\n".join(problems)


# The refusals the scratch scene itself explains; any other refusal of a documented example is a doc or a bug.
SCENE_REFUSALS = {
    "session-not-found": "the scene has no agent sessions: commands that read one say so",
    "base-revision-required": "the help's first checkpoint example names a work the README's example created",
}


@pytest.fixture
def scene(tmp_path: Path) -> Path:
    """A checkout with the files the examples name: an intent file and a hand-written note."""
    repo = make_repo(tmp_path / "shop", {"README.md": "shop\n", "specs/retry.md": "# Retry\n"})
    (repo / "intent.json").write_text(
        '{"slug": "retry-intent", "orientation": "From a file.", "next": {"move": "hold"}, "notes": "Written."}\n'
    )
    legacy = repo / ".cheese" / "notes" / "old-plan.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("status: ok\nnext: hold\nartifact: none\nAn old plan, written by hand.\n\n## Document\n\nPlan.\n")
    return repo


def test_every_concrete_documented_command_line_is_answered(wp: Runner, scene: Path) -> None:
    ran = 0
    failures = []
    for where, line in documented():
        words = shlex.split(line)
        if _is_synopsis(line) or words[1] == "demo":  # demo is the README's main job, run by its own test
            continue
        done = wp(*words[1:], cwd=scene)
        ran += 1
        reply = done.json if done.stdout.startswith("{") else None  # schema's reply is the schema itself
        if reply is None or done.code == 2 or "Traceback" in done.stderr:
            failures.append(f"{where}: `{line}` exit {done.code}: {done.stdout[:300]} {done.stderr[-300:]}")
        elif reply.get("ok") is False and reply["error"]["code"] not in SCENE_REFUSALS:
            failures.append(f"{where}: `{line}`: {reply['error']}")
    assert ran >= 15, f"only {ran} concrete command lines ran"
    assert not failures, "\n".join(failures)
