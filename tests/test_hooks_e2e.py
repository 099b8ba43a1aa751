"""End to end, per harness: install the hooks into a scratch home, then run what the harness would run.

Each test installs with `wheypoint hooks install`, reads the command lines back out of the settings file the
harness reads, and runs them through `sh -c` in the project's checkout with payloads shaped like the harness's
own (field names and types from its sources: see docs/hooks.md) for a real corpus session placed where the
harness keeps its sessions. Then it checks that the rescue revision holds the session's user turns byte for
byte (as `wheypoint turns` reads them from the same file), that the note was written, and that the
SessionStart answer carries the resume packet in the harness's own output format.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import BASE_PYTHON, make_repo, node_program, shared_path
from test_hooks_install import Scratch
from test_transcripts_cli import SESSION, SESSION_ID, with_cwd
from wheypoint.transcripts.model import USER_KINDS

SCHEMAS = Path(__file__).resolve().parent / "schemas"
CODEX_ROLLOUT = "localpush-rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
CODEX_SESSION = "019c8a53-a0dd-7130-bcd7-95445d84846a"
GEMINI_FILE = "agenthistory-gemini-session.json"
GEMINI_SESSION = "dcbe78d3-ea75-4786-929e-d6cff0fc00ed"
RUNTIMES = ("package", "pyz")


def io_schema(harness: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / f"{harness}-hook-io.schema.json").read_text())
    return schema


def check(harness: str, kind: str, event: str, document: dict[str, Any]) -> None:
    """`document` fits the harness's `kind` (input or output) schema for `event`."""
    schema = io_schema(harness)
    jsonschema.validate(document, {**schema, "$ref": f"#/$defs/{event}-{kind}"})


class Harness:
    """One harness in a scratch home: its installed commands, its session file, its payloads."""

    def __init__(self, scratch: Scratch, repo: Path, name: str, program: list[str]) -> None:
        self.scratch, self.repo, self.name = scratch, repo, name
        installed = scratch.hooks("install", "--harness", name, program=program)
        self.settings = json.loads(Path(installed["path"]).read_text())
        self.session_id = ""
        self.transcript: Path | None = None

    def command(self, event: str) -> str:
        (command,) = [h["command"] for group in self.settings["hooks"][event] for h in group["hooks"]
                      if f" hook {event} --harness {self.name}" in h["command"]]  # fmt: skip
        return str(command)

    def fire(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Run the installed command as the harness does: through a shell, in the checkout, payload on stdin."""
        check(self.name, "input", event, payload)
        shell = ["sh", "-c", self.command(event)]
        done = subprocess.run(shell, input=json.dumps(payload), cwd=self.repo, capture_output=True, text=True,
                              env=self.scratch.env, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0 and done.stdout.count("\n") == 1, done.stdout + done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        check(self.name, "output", event, answer)
        return answer

    def user_turns(self) -> list[str]:
        """The session's user prompts as the transcript reader copies them, byte for byte."""
        reply = self.scratch.run("turns", "--transcript", str(self.transcript), "--format", "json").json
        assert reply["ok"], reply
        return [t["text"] for t in reply["turns"] if t["kind"] == "prompt"]


@pytest.fixture(params=RUNTIMES)
def program(request: pytest.FixtureRequest) -> list[str]:
    """What `hooks install` is run by, and so what the installed hooks run: the package or the pyz."""
    if request.param == "pyz":
        return [BASE_PYTHON, "-I", str(request.getfixturevalue("pyz"))]
    return [sys.executable, "-m", "wheypoint"]


@pytest.fixture
def scene(tmp_path: Path) -> tuple[Scratch, Path]:
    scratch = Scratch(tmp_path)
    return scratch, make_repo(tmp_path / "shop", {"cart.py": "total = 0\n"}, remote="git@github.com:Acme/Shop.git")


def rescued(harness: Harness, answer: dict[str, Any]) -> dict[str, Any]:
    """The rescue revision the PreCompact answer announced, checked against the session's own turns."""
    slug = f"session-{harness.name}-{harness.session_id[:8]}"
    assert f"in {slug} r1" in answer["systemMessage"], answer
    shown = harness.scratch.run("show", slug, "--format", "json", cwd=harness.repo)
    assert shown.code == 0, shown.stdout
    record: dict[str, Any] = shown.json["record"]
    turns = harness.user_turns()
    kept = [m["text"] for m in record["meat"]]
    assert kept and set(kept) <= set(turns)  # every kept turn is one of the user's, byte for byte
    assert len(kept) <= len(turns)
    assert record["session"] == {"harness": harness.name, "id": harness.session_id}
    assert shown.json["note"]["state"] == "current"
    note = (harness.repo / ".cheese" / "notes" / f"{slug}.md").read_text(encoding="utf-8")
    assert all(text.splitlines()[0] in note for text in kept if text.strip())
    return record


def packet_of(context: str, record: dict[str, Any]) -> dict[str, Any]:
    """The resume packet inside an injected context, which must name the rescue's head to build on."""
    assert len(context) <= 10000
    head, line, *rest = context.splitlines()
    assert head.startswith(f"wheypoint: the handoff of work {record['work_id']}")
    assert rest[-1] == f"Continue its chain: wheypoint checkpoint {record['slug']} --base {record['revision_id']} ..."
    packet: dict[str, Any] = json.loads(line)
    assert [m["text"] for m in packet["meat"]] == [m["text"] for m in reversed(record["meat"])]
    return packet


def _claude(scene: tuple[Scratch, Path], program: list[str]) -> tuple[Harness, dict[str, Any]]:
    """Claude Code in the scene: its hooks installed, the corpus session where Claude Code keeps it, the fields
    every one of its hook payloads carries."""
    scratch, repo = scene
    harness = Harness(scratch, repo, "claude-code", program)
    harness.session_id = SESSION_ID
    # Where Claude Code keeps a session: ~/.claude/projects/<the cwd, slashes as dashes>/<session id>.jsonl
    folder = scratch.home / ".claude" / "projects" / str(repo).replace("/", "-")
    harness.transcript = with_cwd(shared_path("corpus", "claude-code", SESSION), folder / f"{SESSION_ID}.jsonl", repo)
    return harness, {"session_id": SESSION_ID, "transcript_path": str(harness.transcript), "cwd": str(repo),
                     "permission_mode": "default"}  # fmt: skip


def _resumed(harness: Harness, start: dict[str, Any], prompt: dict[str, Any], record: dict[str, Any]) -> None:
    """SessionStart hands back the rescue's packet; the next prompt gets nothing more (it was delivered)."""
    answer = harness.fire("SessionStart", start)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    packet_of(answer["hookSpecificOutput"]["additionalContext"], record)
    assert harness.fire(prompt["hook_event_name"], prompt) == {}


def test_claude_code(scene: tuple[Scratch, Path], program: list[str]) -> None:
    harness, common = _claude(scene, program)

    answer = harness.fire("PreCompact", {**common, "hook_event_name": "PreCompact", "trigger": "auto",
                                         "custom_instructions": ""})  # fmt: skip
    assert set(answer) == {"systemMessage"}  # a hookSpecificOutput here is a schema error in Claude Code
    record = rescued(harness, answer)
    assert len(record["meat"]) == len(harness.user_turns()) == 3

    _resumed(
        harness,
        {**common, "hook_event_name": "SessionStart", "source": "compact", "model": "claude-opus-4-5"},
        {**common, "hook_event_name": "UserPromptSubmit", "prompt": "go on"},
        record,
    )


def test_codex_finds_its_rollout_by_session_id_when_transcript_path_is_null(
    scene: tuple[Scratch, Path], program: list[str]
) -> None:
    scratch, repo = scene
    harness = Harness(scratch, repo, "codex", program)
    harness.session_id = CODEX_SESSION
    # Where Codex keeps a rollout: $CODEX_HOME (default ~/.codex)/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl
    day = scratch.home / ".codex" / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    harness.transcript = Path(shutil.copy(shared_path("corpus", "codex", CODEX_ROLLOUT),
                                          day / CODEX_ROLLOUT.removeprefix("localpush-")))  # fmt: skip
    common = {"session_id": CODEX_SESSION, "transcript_path": None, "cwd": str(repo), "model": "gpt-5.2-codex"}

    answer = harness.fire("PreCompact", {**common, "hook_event_name": "PreCompact", "trigger": "auto",
                                         "turn_id": "turn-7"})  # fmt: skip
    record = rescued(harness, answer)
    skipped = answer["systemMessage"].partition("left in the transcript: ")[2]
    assert len(record["meat"]) + (skipped.count(";") + 1 if skipped else 0) == len(harness.user_turns())

    start = harness.fire("SessionStart", {**common, "hook_event_name": "SessionStart", "source": "resume"})
    packet_of(start["hookSpecificOutput"]["additionalContext"], record)


def test_gemini_cli(scene: tuple[Scratch, Path], program: list[str]) -> None:
    scratch, repo = scene
    harness = Harness(scratch, repo, "gemini", program)
    harness.session_id = GEMINI_SESSION
    # Where Gemini CLI keeps a session: ~/.gemini/tmp/<project>/chats/session-<time>-<id8>.json
    chats = scratch.home / ".gemini" / "tmp" / "shop" / "chats"
    chats.mkdir(parents=True)
    harness.transcript = Path(shutil.copy(shared_path("corpus", "gemini", GEMINI_FILE),
                                          chats / f"session-2026-01-01T00-00-{GEMINI_SESSION[:8]}.json"))  # fmt: skip
    common = {"session_id": GEMINI_SESSION, "transcript_path": str(harness.transcript), "cwd": str(repo),
              "timestamp": "2026-12-01T03:00:00.000Z"}  # fmt: skip

    # Gemini fires PreCompress at the start of every turn: an automatic one on a small session keeps nothing.
    assert harness.fire("PreCompress", {**common, "hook_event_name": "PreCompress", "trigger": "auto"}) == {}
    answer = harness.fire("PreCompress", {**common, "hook_event_name": "PreCompress", "trigger": "manual"})
    record = rescued(harness, answer)
    assert len(record["meat"]) == len(harness.user_turns())

    # Gemini glues SessionStart's context onto the prompt (and drops it on resume): BeforeAgent carries it, once.
    assert harness.fire("SessionStart", {**common, "hook_event_name": "SessionStart", "source": "resume"}) == {}
    prompt = {**common, "hook_event_name": "BeforeAgent", "prompt": "go on"}
    answer = harness.fire("BeforeAgent", prompt)
    assert answer["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    packet_of(answer["hookSpecificOutput"]["additionalContext"], record)
    assert harness.fire("BeforeAgent", prompt) == {}


def test_a_harness_that_never_sent_sessionstart_gets_the_packet_with_the_next_prompt(
    scene: tuple[Scratch, Path], program: list[str]
) -> None:
    harness, common = _claude(scene, program)
    record = rescued(harness, harness.fire("PreCompact", {**common, "hook_event_name": "PreCompact",
                                                          "trigger": "auto", "custom_instructions": ""}))  # fmt: skip
    prompt = {**common, "hook_event_name": "UserPromptSubmit", "prompt": "where were we?"}
    first = harness.fire("UserPromptSubmit", prompt)
    assert first["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    packet_of(first["hookSpecificOutput"]["additionalContext"], record)
    assert harness.fire("UserPromptSubmit", prompt) == {}  # delivered once


NODE_COMPACT = """
const mod = await import(process.argv[2])
const hooks = await mod.WheypointPlugin({ directory: process.argv[3], worktree: process.argv[3] })
const output = { context: ["theirs"] }
await hooks["experimental.session.compacting"]({ sessionID: process.argv[4] }, output)
console.log(JSON.stringify(output.context))
"""


def test_opencode_plugin_rescues_from_opencodes_database_and_adds_the_packet_to_the_compaction(
    scene: tuple[Scratch, Path], program: list[str]
) -> None:
    from test_transcripts_opencode import MAIN, build_db

    node = node_program()
    scratch, repo = scene
    data = scratch.home / ".local" / "share"
    scratch.env["XDG_DATA_HOME"] = str(data)
    (data / "opencode").mkdir(parents=True)
    build_db(data / "opencode" / "opencode.db", MAIN)  # where OpenCode keeps its sessions
    installed = scratch.hooks("install", "--harness", "opencode", program=program)
    module = scratch.root / "plugin.mjs"  # the plugin is plain JavaScript, which node 20 loads as a module
    shutil.copyfile(installed["path"], module)
    runner = scratch.root / "compact.mjs"
    runner.write_text(NODE_COMPACT)

    done = subprocess.run([node, str(runner), module.as_uri(), str(repo), str(MAIN["id"])], capture_output=True,
                          text=True, env=scratch.env, timeout=60, check=False)  # fmt: skip

    assert done.returncode == 0, done.stderr
    theirs, packet_text = json.loads(done.stdout)
    assert theirs == "theirs"
    slug = "session-opencode-main"  # OpenCode's `ses_` prefix left out
    shown = scratch.run("show", slug, "--format", "json", cwd=repo).json
    record = shown["record"]
    turns = scratch.run("turns", "--session", str(MAIN["id"]), "--harness", "opencode", "--format", "json").json
    said = [t["text"] for t in turns["turns"] if t["kind"] in USER_KINDS and t["text"].strip()]
    assert len(said) == 4 and [m["text"] for m in record["meat"]] == said  # byte for byte, whitespace and all
    assert record["session"] == {"harness": "opencode", "id": MAIN["id"]}
    packet_of(packet_text, record)
