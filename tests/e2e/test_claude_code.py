"""Claude Code 2.1.197 end to end: the real CLI, headless, against the mock model, with wheypoint's hooks, MCP server
and skill installed as a user would (`hooks install`, `claude mcp add`, the skills folder) or as the plugin.

One session of three prompts, `/compact` (a prompt under `claude -p`), one more prompt, then a new session; every
run is `claude -p` (with `--continue` inside the session). Asserted from the store, hook.log, the transcripts the
CLI wrote and the request bodies the mock logged: every hook fired and none failed; the rescue holds the three
typed prompts byte for byte and nothing else; `turns` finds each typed prompt once; the resume packet reached the
model whole, once per session, never in a user message, after the compaction and in the new session; the skill
and every tool `wheypoint mcp` lists were offered; the prompts reached the model intact.

Set WHEYPOINT_E2E_RECORD=1 to copy the transcripts, paths rewritten to /home/dev/e2e/..., to tests/data/recorded/
(tests/test_recorded_claude_code.py reads them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import clis
import mockmodel
import pytest
import wire_anthropic
from scenario import P1, P2, P3, P4, P5, PACKET_HEAD, strings

from conftest import make_repo

pytestmark = pytest.mark.e2e

COMPACT = "/compact"
EVENTS = ("PreCompact", "SessionStart", "Stop", "UserPromptSubmit")
ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "skill" / "wheypoint"
RECORDED = ROOT / "tests" / "data" / "recorded"
VERSION = clis.PINS["claude"][1]
TIMEOUT = 90  # seconds for one CLI call


@dataclass
class Step:
    """One `claude -p` call: what was typed, and the requests the mock got meanwhile."""

    prompt: str
    new_session: bool
    requests: list[Any] = field(default_factory=list)  # the JSON bodies sent to /v1/messages
    stdout: str = ""


@dataclass
class Outcome:
    root: Path
    repo: Path
    env: dict[str, str]
    steps: list[Step]
    log_path: Path

    @property
    def home(self) -> Path:
        return Path(self.env["WHEYPOINT_HOME"])

    def hook_log(self) -> list[dict[str, Any]]:
        path = self.home / "hooks" / "hook.log"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []

    def transcripts(self) -> list[Path]:
        """The session files Claude Code wrote, in the order of their first record."""
        files = list((Path(self.env["CLAUDE_CONFIG_DIR"]) / "projects").glob("*/*.jsonl"))
        first = {p: json.loads(p.read_text(encoding="utf-8").splitlines()[0]).get("timestamp", "") for p in files}
        return sorted(files, key=first.__getitem__)

    def why(self, what: str) -> str:
        """A failure message: what failed, the hook log, and where the request bodies are."""
        log = "\n".join(json.dumps(e, ensure_ascii=False) for e in self.hook_log())
        return f"{what}\n--- hook.log:\n{log}\n--- request bodies: {self.log_path}"


def run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def scratch(tmp_path: Path) -> tuple[dict[str, str], Path]:
    env = clis.scratch_env(tmp_path)
    config = tmp_path / "claude-config"
    config.mkdir()
    env.update(CLAUDE_CONFIG_DIR=str(config), ANTHROPIC_API_KEY="sk-ant-e2e-mock",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")  # fmt: skip
    return env, make_repo(tmp_path / "repo")


def session(tmp_path: Path, env: dict[str, str], repo: Path) -> Outcome:
    """P1-P3, /compact, P4 in one session (`--continue`), then P5 in a new one."""
    claude = str(clis.installed("claude"))
    steps = [Step(P1, True), Step(P2, False), Step(P3, False), Step(COMPACT, False), Step(P4, False), Step(P5, True)]
    log_path = tmp_path / "requests.jsonl"
    with mockmodel.MockModel([wire_anthropic.route], log_path=log_path, lifetime=300) as model:
        env["ANTHROPIC_BASE_URL"] = model.url
        for step in steps:
            before = len(model.bodies("/v1/messages"))
            done = run([claude, "-p", *([] if step.new_session else ["--continue"]), step.prompt], env, repo)
            assert done.returncode == 0, f"claude -p {step.prompt!r}: {done.returncode} {done.stdout} {done.stderr}"
            step.stdout = done.stdout
            step.requests = model.bodies("/v1/messages")[before:]
    outcome = Outcome(tmp_path, repo, env, steps, log_path)
    # Hooks may finish just after the CLI exits: the last Stop of the new session is the last line to come.
    mockmodel.wait_for(lambda: sum(e.get("event") == "Stop" for e in outcome.hook_log()) >= 5, timeout=10)
    return outcome


def user_texts(body: dict[str, Any]) -> list[str]:
    """Every text block of the request's user messages, in order."""
    texts: list[str] = []
    for message in body.get("messages") or []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        texts += [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return texts


def mcp_tools(argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    """The tools the MCP server lists, asked over stdio as a client would."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
              "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]  # fmt: skip
    done = subprocess.run(argv, input="".join(json.dumps(x) + "\n" for x in lines), cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    listed = next(r for r in replies if r.get("id") == 2)
    return [tool["name"] for tool in listed["result"]["tools"]]


def hook_contexts(transcript: Path) -> list[tuple[str, str]]:
    """(hook name, additionalContext) for each SessionStart hook whose answer Claude Code recorded."""
    found = []
    for line in transcript.read_text(encoding="utf-8").splitlines():
        attachment = json.loads(line).get("attachment") or {}
        if attachment.get("type") == "hook_success" and attachment.get("hookEvent") == "SessionStart":
            out = json.loads(attachment.get("stdout") or "{}")
            context = (out.get("hookSpecificOutput") or {}).get("additionalContext")
            if context:
                found.append((attachment["hookName"], context))
    return found


def turns(outcome: Outcome, transcript: Path) -> list[dict[str, Any]]:
    done = run([sys.executable, "-m", "wheypoint", "turns", "--transcript", str(transcript), "--all"], outcome.env,
               outcome.repo, timeout=30)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)["turns"]
    return found


def check(outcome: Outcome, tools: list[str], prefix: str, skill_name: str) -> None:
    """Every assertion of the scenario; `tools` as `wheypoint mcp` lists them, `prefix` how Claude Code names them."""
    log = outcome.hook_log()
    why = outcome.why
    # Every installed hook fired, none failed or was refused.
    assert {e.get("event") for e in log} >= set(EVENTS), why("not every hook fired")
    assert not [e for e in log if "error" in e or "refused" in e], why("a hook failed or was refused")
    # A packet at the compaction and in the new session (a resumed session may be answered again: what reaches
    # the model is checked below).
    starts = [e.get("source") for e in log if e.get("event") == "SessionStart" and e.get("chars")]
    assert starts[:1] == ["compact"] and starts[-1:] == ["startup"], why(f"SessionStart packets went to {starts}")
    assert set(starts) <= {"compact", "resume", "startup"}, why(f"SessionStart packets went to {starts}")

    # The rescue: the three typed prompts, byte for byte, and nothing else.
    rescues = [e for e in log if e.get("event") == "PreCompact"]
    assert len(rescues) == 1 and rescues[0]["kept"] == 3, why("one rescue keeping three turns")
    shown = run([sys.executable, "-m", "wheypoint", "show", rescues[0]["work_id"], "--format", "json"], outcome.env,
                outcome.repo, timeout=30)  # fmt: skip
    meat = json.loads(shown.stdout)["record"]["meat"]
    assert [m["text"] for m in meat] == [P1, P2, P3], why(f"the rescue holds {meat}")

    # `turns` on the transcripts the CLI wrote: each typed prompt once, exactly, and nothing else as a prompt.
    first, second = outcome.transcripts()
    for transcript, typed in ((first, [P1, P2, P3, P4]), (second, [P5])):
        found = turns(outcome, transcript)
        assert [t["text"] for t in found if t["kind"] == "prompt"] == typed, why(f"{transcript}: {found}")
    commands = [t["text"] for t in turns(outcome, first) if t["kind"] == "slash_command"]
    assert len(commands) == 1 and commands[0].startswith("<command-name>/compact</command-name>"), why(f"{commands}")

    # The packet: what the hook printed, whole, once per session, never in a user message.
    compact, new = hook_contexts(first), hook_contexts(second)
    assert [name for name, _ in compact] == ["SessionStart:compact"], why(f"packets recorded: {compact}")
    assert [name for name, _ in new] == ["SessionStart:startup"], why(f"packets recorded: {new}")
    steps = {step.prompt: step for step in outcome.steps}
    for packet, step in ((compact[0][1], steps[P4]), (new[0][1], steps[P5])):
        assert packet.startswith(PACKET_HEAD) and packet.count(PACKET_HEAD) == 1, why(f"a nested packet: {packet}")
        assert len(step.requests) == 1, why(f"{step.prompt!r} made {len(step.requests)} requests")
        body = step.requests[0]
        whole = [s for s in strings(body) if packet in s]
        assert len(whole) == 1 and sum(s.count(PACKET_HEAD) for s in strings(body)) == 1, why(
            f"the packet did not reach the model whole and once for {step.prompt!r}"
        )
        assert not [t for t in user_texts(body) if PACKET_HEAD in t], why("the packet is inside a user message")
        assert user_texts(body)[-1] == step.prompt, why(f"the prompt {step.prompt!r} is not the last user text")
    for step in outcome.steps[:4]:  # before the compaction there is no work, so no packet
        assert not [s for body in step.requests for s in strings(body) if PACKET_HEAD in s], why("an early packet")
    prompts = [e for e in log if e.get("event") == "UserPromptSubmit"]
    assert len(prompts) == 5 and not [e for e in prompts if "chars" in e], why("UserPromptSubmit injected a packet")

    # The skill and every MCP tool were offered to the model, on every turn.
    description = re.search(r"^description: (.+)$", (SKILL / "SKILL.md").read_text(encoding="utf-8"), re.M)
    assert description is not None
    listing = f"- {skill_name}: {description.group(1)}"
    for step in (steps[P1], steps[P4], steps[P5]):
        body = step.requests[-1]
        offered = {tool["name"] for tool in body.get("tools") or []}
        assert {prefix + name for name in tools} <= offered, why(f"tools offered: {sorted(offered)}")
        assert any(listing in s for s in strings(body)), why(f"the skill is not offered with {step.prompt!r}")

    # The prompts reached the model intact: the session's history on each turn, and the new prompts after.
    for n, prompt in enumerate((P1, P2, P3)):
        history = user_texts(steps[prompt].requests[-1])
        assert [p for p in (P1, P2, P3) if p in history] == [P1, P2, P3][: n + 1], why(f"history: {history}")
    assert json.dumps(P2, ensure_ascii=False)[1:-1] in compact[0][1], why("the rule is not in the packet")

    if os.environ.get("WHEYPOINT_E2E_RECORD"):
        record(outcome, first, second)


def record(outcome: Outcome, first: Path, second: Path) -> None:
    """The transcripts as test data, their machine paths rewritten to /home/dev/e2e/... (as ../shared does)."""
    places = {str(outcome.repo): "/home/dev/e2e/claude/repo", str(outcome.root): "/home/dev/e2e/claude",
              sys.executable: "/home/dev/e2e/venv/bin/python3", str(ROOT): "/home/dev/e2e/wheypoint"}  # fmt: skip
    encoded = {re.sub(r"[^A-Za-z0-9]", "-", k): re.sub(r"[^A-Za-z0-9]", "-", v) for k, v in places.items()}
    RECORDED.mkdir(parents=True, exist_ok=True)
    for source, name in ((first, "e2e"), (second, "e2e-new-session")):
        text = source.read_text(encoding="utf-8")
        for old, new in sorted({**places, **encoded}.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(old, new)
        (RECORDED / f"claude-code-{VERSION}-{name}.jsonl").write_text(text, encoding="utf-8")


def user_setup(env: dict[str, str], repo: Path) -> None:
    """What a user does: hooks install, `claude mcp add` (user scope), the skill in the config's skills folder."""
    done = run([sys.executable, "-m", "wheypoint", "hooks", "install", "--harness", "claude-code"], env, repo, 60)
    assert done.returncode == 0 and json.loads(done.stdout)["ok"], done.stdout + done.stderr
    done = run([str(clis.installed("claude")), "mcp", "add", "--scope", "user", "--transport", "stdio", "wheypoint",
                "--", sys.executable, "-m", "wheypoint", "mcp"], env, repo)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.copytree(SKILL, Path(env["CLAUDE_CONFIG_DIR"]) / "skills" / "wheypoint")


def test_claude_code_hooks_mcp_and_skill_installed_by_hand(tmp_path: Path) -> None:
    env, repo = scratch(tmp_path)
    user_setup(env, repo)
    tools = mcp_tools([sys.executable, "-m", "wheypoint", "mcp"], env, repo)
    outcome = session(tmp_path, env, repo)
    check(outcome, tools, "mcp__wheypoint__", "wheypoint")


def plugin_setup(env: dict[str, str], repo: Path, out: Path) -> Callable[[], list[str]]:
    """tools/build_plugins.py, `claude plugin validate` (marketplace and plugin), marketplace add, plugin install."""
    claude = str(clis.installed("claude"))
    done = run([sys.executable, str(ROOT / "tools" / "build_plugins.py"), "--out", str(out)], env, repo, 120)
    assert done.returncode == 0, done.stdout + done.stderr
    plugin = out / "claude-code" / "wheypoint"
    for target in (out, plugin):
        done = run([claude, "plugin", "validate", str(target)], env, repo)
        assert done.returncode == 0 and "Validation passed" in done.stdout, done.stdout + done.stderr
    for argv in (["plugin", "marketplace", "add", str(out)], ["plugin", "install", "wheypoint@wheypoint"]):
        done = run([claude, *argv], env, repo)
        assert done.returncode == 0 and "Successfully" in done.stdout, done.stdout + done.stderr
    pyz = plugin / "skills" / "wheypoint" / "scripts" / "wheypoint.pyz"
    return lambda: mcp_tools(["python3", str(pyz), "mcp"], env, repo)


def test_claude_code_plugin_validated_installed_and_working(tmp_path: Path) -> None:
    env, repo = scratch(tmp_path)
    tools = plugin_setup(env, repo, tmp_path / "plugins")()
    outcome = session(tmp_path, env, repo)
    # The plugin's hooks run the pyz the build made, never this checkout's package.
    commands = {json.loads(line).get("attachment", {}).get("command") for line in
                outcome.transcripts()[0].read_text(encoding="utf-8").splitlines()} - {None}  # fmt: skip
    assert commands and all("/wheypoint.pyz" in c and "-m wheypoint" not in c for c in commands), commands
    check(outcome, tools, "mcp__plugin_wheypoint_wheypoint__", "wheypoint:wheypoint")
