"""Every command line the README, docs/ and `--help` show is one wheypoint accepts, so no doc drifts from the code.

Each documented line names a command that exists and flags that command takes. A line with placeholders
(`<slug>`, `[--limit N]`) is a synopsis and is checked that far; a concrete line is also run, in the order
the documents give, in a scratch checkout with its own store and an empty home (no agent sessions): it must be
parsed (never exit 2) and answered with one JSON reply, refused only for a reason the scratch scene explains
(SCENE_REFUSALS).

The pieces are shared with tests/test_skill.py, which holds the skill's own Markdown to the same rules:

- `command_lines(paths)` extracts the lines from any Markdown files, each file in document order: code blocks
  (fenced or indented; `\\` continuations joined), inline code spans and table rows that open with a command.
  `python3 -m wheypoint ...` and `python3 .../wheypoint.pyz ...` are read as `wheypoint ...`.
- `vocabulary_problems(where, line)` checks a line against the command table.
- `run_lines(wp, cwd, lines, refusals, env)` runs the concrete ones in order. A literal `REV` in a line stands
  for the newest revision id a checkpoint reply has given, in this run, for the work the line names first (its
  slug or work id): `checkpoint retry-backoff --base REV ...` builds on the head an earlier example wrote. A
  `REV` before any checkpoint of that work is a failure. Lines of the commands in NOT_RUN are checked for
  vocabulary only.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from conftest import Runner, make_repo
from wheypoint.cli.commands import BY_NAME, COMMANDS
from wheypoint.cli.flags import ITEM_FLAGS, MODIFIERS, SCALARS

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SUBCOMMANDS = {
    "handoff": {"render", "parse", "dispatch"},
    "hooks": {"install", "uninstall", "status"},
    "hook": {"PreCompact", "PreCompress", "SessionStart", "Stop", "UserPromptSubmit"},
    "store": {"copy"},
}
# Commands whose lines are checked for vocabulary but never run here, and why.
NOT_RUN = {
    "demo": "the README's main job, run by its own test",
    "hook": "a harness runs it with a payload on stdin; its runtime is tested on its own",
    "hooks": "it edits a harness's settings in the user's home",
    "mcp": "a server that reads JSON-RPC from stdin until it closes",
    "serve": "a web server that runs until interrupted (tests/test_serve.py runs it)",
}
FLAG_FORM = ITEM_FLAGS | set(MODIFIERS) | SCALARS
LAUNCHER = re.compile(r"^python3? (?:-m wheypoint|\S*wheypoint\.pyz)(?= |$)")
INLINE = re.compile(r"`((?:python3? (?:-m wheypoint|\S*wheypoint\.pyz)|wheypoint) [^`]+)`")
TABLE_ROW = re.compile(r"^\| `((?:[^`\\]|\\.)+)`")  # a table row opening with a command: README's command table
FENCE = re.compile(r"^\s*(```|~~~)")
QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")


def _as_wheypoint(line: str) -> str | None:
    """The line as `wheypoint ...` when it runs the runtime (by name, as a module or as the archive), else None."""
    line = LAUNCHER.sub("wheypoint", line, count=1)
    return line if line.startswith("wheypoint ") else None


def command_lines(paths: Iterable[Path], root: Path = ROOT) -> list[tuple[str, str]]:
    """(where, command line) for every wheypoint command line in these Markdown files, in document order.

    `where` is `file:line`, the file relative to `root`.
    """
    found: list[tuple[str, str]] = []
    for path in paths:
        name = path.relative_to(root).as_posix()
        fenced = False
        pending = ""
        start = 0
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FENCE.match(raw):
                fenced = not fenced
                continue
            line = raw.strip().removeprefix("$ ")
            if pending:
                pending += " " + line.rstrip("\\").strip()
                if not line.endswith("\\"):
                    found.append((f"{name}:{start}", pending))
                    pending = ""
                continue
            if fenced or raw.startswith("    "):
                command = _as_wheypoint(line)
                if command is None:
                    continue
                if command.endswith("\\"):
                    pending, start = command.rstrip("\\").strip(), number
                else:
                    found.append((f"{name}:{number}", command))
                continue
            cell = TABLE_ROW.match(raw)
            if cell and cell.group(1).split()[0] in BY_NAME:
                found.append((f"{name}:{number}", "wheypoint " + cell.group(1).replace("\\|", "|")))
            for span in INLINE.findall(raw):
                command = _as_wheypoint(span.replace("\\|", "|"))
                words = (command or "").split()
                if len(words) > 1 and words[1] in BY_NAME:
                    found.append((f"{name}:{number}", command or ""))
    return found


def help_examples() -> list[tuple[str, str]]:
    """(where, line) for the example each command's --help shows."""
    return [(f"{command.name} --help", command.example) for command in COMMANDS]


def documented() -> list[tuple[str, str]]:
    """(where, command line) for every command line shown in the documents and in each command's --help."""
    return command_lines(DOCUMENTS) + help_examples()


def is_synopsis(line: str) -> bool:
    """A line with placeholders, alternatives or repetition outside its quoted values: a shape, not a command."""
    bare = QUOTED.sub("''", line)
    return any(mark in bare for mark in ("<", "[", "|")) or bare.endswith("...") or " ... " in bare


def without_global_options(words: list[str]) -> list[str]:
    """The words of `wheypoint [--store STORE] <command> ...` without the options that go before the command."""
    while len(words) > 1 and (words[1] == "--store" or words[1].startswith("--store=")):
        words = words[:1] + words[(3 if words[1] == "--store" else 2) :]
    return words


def vocabulary_problems(where: str, line: str) -> list[str]:
    """What is wrong with a documented line's command and flags; empty when everything named exists."""
    words = without_global_options(line.replace("[", " [ ").replace("]", " ] ").replace("|", " | ").split())
    problems = []
    name = words[1]
    command = BY_NAME.get(name)
    if command is None:
        return [f"{where}: `{line}` names no command {name!r}"]
    if name in SUBCOMMANDS and not is_synopsis(line) and (len(words) < 3 or words[2] not in SUBCOMMANDS[name]):
        problems.append(f"{where}: `{line}`: {words[2:3]} is not a {name} action")
    known = {option.flag for option in command.options} | {"--help"}
    if command.grammar == "intent":
        known |= FLAG_FORM
    for word in words[2:]:
        flag = word.split("=", 1)[0]
        if flag.startswith("--") and flag.rstrip(".,") not in known:
            problems.append(f"{where}: `{line}`: {command.name} takes no {flag}")
    return problems


def home_env(home: Path) -> dict[str, str]:
    """An environment whose home is `home`, so no session of the machine's own harnesses is found."""
    return {"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"), "CLAUDE_CONFIG_DIR": "",
            "CODEX_HOME": "", "GEMINI_CLI_HOME": "", "OPENCODE_DB": ""}  # fmt: skip


def _wants_text(words: list[str]) -> bool:
    """Whether a command line asks for the readable text form rather than JSON."""
    return "--text" in words or ("--format" in words and words[words.index("--format") + 1 :][:1] == ["text"])


def run_lines(
    wp: Runner, cwd: Path, lines: Iterable[tuple[str, str]], refusals: Mapping[str, str], env: dict[str, str]
) -> tuple[int, list[str]]:
    """Run each concrete line in order (see the module's docstring): (how many ran, what failed)."""
    revisions: dict[str, str] = {}  # slug or work id -> the newest revision id a checkpoint reply gave
    ran = 0
    failures = []
    for where, line in lines:
        words = shlex.split(line)
        if is_synopsis(line) or without_global_options(words)[1] in NOT_RUN:
            continue
        if "REV" in words:
            if words[2] not in revisions:
                failures.append(f"{where}: `{line}` uses REV before any checkpoint of {words[2]!r}")
                continue
            words = [revisions[words[2]] if word == "REV" else word for word in words]
        done = wp(*words[1:], cwd=cwd, env=env)
        ran += 1
        if _wants_text(words):
            if done.code not in (0, 1) or not done.stdout.strip() or "Traceback" in done.stderr:
                failures.append(f"{where}: `{line}` exit {done.code}: {done.stdout[:300]} {done.stderr[-300:]}")
            continue
        reply = done.json if done.stdout.startswith("{") else None  # schema's reply is the schema itself
        if reply is None or done.code == 2 or "Traceback" in done.stderr:
            failures.append(f"{where}: `{line}` exit {done.code}: {done.stdout[:300]} {done.stderr[-300:]}")
        elif reply.get("ok") is False and reply["error"]["code"] not in refusals:
            failures.append(f"{where}: `{line}`: {reply['error']}")
        elif reply.get("ok") and reply.get("command") == "checkpoint":
            revisions[reply["slug"]] = revisions[reply["work_id"]] = reply["revision_id"]
    return ran, failures


def test_every_documented_command_line_names_a_command_and_flags_that_exist() -> None:
    lines = documented()
    assert len(lines) >= 20, "the extraction found too few command lines: is it still reading the documents?"
    problems = [problem for where, line in lines for problem in vocabulary_problems(where, line)]
    assert not problems, "\n".join(problems)


def test_the_extraction_reads_code_blocks_inline_code_and_table_rows_in_document_order(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "| `show <work>` | a command table row |\n\nRun `wheypoint log retry` first.\n\n"
        '```\nwheypoint checkpoint retry \\\n  --notes "two lines"\n$ python3 scripts/wheypoint.pyz list\n```\n\n'
        "    python3 -m wheypoint resolve retry\n\nNot a command: `wheypoint`, `git log`.\n",
        encoding="utf-8",
    )
    assert command_lines([page], tmp_path) == [
        ("page.md:1", "wheypoint show <work>"),
        ("page.md:3", "wheypoint log retry"),
        ("page.md:6", 'wheypoint checkpoint retry --notes "two lines"'),
        ("page.md:8", "wheypoint list"),
        ("page.md:11", "wheypoint resolve retry"),
    ]


def test_the_vocabulary_check_fails_on_a_command_flag_or_action_that_does_not_exist() -> None:
    assert vocabulary_problems("x", "wheypoint frobnicate retry")
    assert vocabulary_problems("x", "wheypoint show retry --budget 4")
    assert vocabulary_problems("x", "wheypoint handoff print retry")
    assert vocabulary_problems("x", "wheypoint hooks add --harness codex")
    assert not vocabulary_problems("x", "wheypoint checkpoint retry --decision a --rationale b")
    assert not vocabulary_problems("x", "wheypoint hook SessionStart --harness codex")


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


def test_every_concrete_documented_command_line_is_answered(wp: Runner, scene: Path, tmp_path: Path) -> None:
    ran, failures = run_lines(wp, scene, documented(), SCENE_REFUSALS, home_env(tmp_path / "user"))
    assert ran >= 15, f"only {ran} concrete command lines ran"
    assert not failures, "\n".join(failures)


def test_a_line_refused_for_a_reason_the_scene_does_not_explain_fails(wp: Runner, scene: Path, tmp_path: Path) -> None:
    lines = [("a.md:1", "wheypoint show no-such-work"), ("a.md:2", "wheypoint log retry --base REV")]
    ran, failures = run_lines(wp, scene, lines, SCENE_REFUSALS, home_env(tmp_path / "user"))
    assert ran == 1 and len(failures) == 2
    assert "record-missing" in failures[0] and "REV before any checkpoint" in failures[1]
