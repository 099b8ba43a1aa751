"""`wheypoint doctor` on real things: settings written by `hooks install`, a hook.log written by real hook calls,
a real SQLite store (then damaged and tampered with), real notes, and Codex's trust as Codex itself reports it.

Everything runs in a scratch home (HOME, XDG_CONFIG_HOME and the store under the test's folder) through the
command line as a subprocess; the MCP tool through the official SDK client, as tests/test_mcp.py does.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, RUNTIMES, make_repo, runtime_argv
from test_hooks_install import Scratch
from wheypoint.app import codex_trust, tomlread
from wheypoint.app.harness_files import without_comments

# What Codex 0.171.0 itself answered (`codex app-server`, `hooks/list`: `currentHash`) for the hooks.json that
# `hooks install --harness codex --command "<RECORDED_RUNNER>"` writes. test_codex_agrees_... checks it live.
RECORDED_RUNNER = "/root/.pyenv/versions/3.11.7/bin/python3 -m wheypoint"
RECORDED_HASHES = {
    "PreCompact": "sha256:d9e22578e90bbfad11494a56210134e779d995620f28fcf55d48d0791b08d870",
    "SessionStart": "sha256:13959fb1aa4c6f38fa24d66685bd2c13fa378491b82e6793bd34ed89bba38bad",
    "UserPromptSubmit": "sha256:84bc4c99abade67cd9851addc5c1774e928495830f52bd2428720b30484e2f59",
    "Stop": "sha256:05f4d02649facb76490e2dfaa9361082c24eb9e8a95a24d295a0663ec13c6efa",
}
SNAKE = {"PreCompact": "pre_compact", "SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
         "Stop": "stop"}  # fmt: skip


class Scene:
    """A scratch home and store, a git checkout in it, and doctor run there."""

    def __init__(self, root: Path) -> None:
        self.scratch = Scratch(root)
        self.repo = make_repo(root / "shop", {"cart.py": "total = 0\n"})
        self.store = root / "store" / "store.sqlite3"

    def run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Any:
        return self.scratch.run(*args, cwd=self.repo, stdin=stdin, env=env)

    def doctor(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        done = self.run("doctor", "--format", "json", *args, env=env)
        assert done.stdout.count("\n") == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
        reply: dict[str, Any] = json.loads(done.stdout)
        assert reply["ok"] is True and reply["command"] == "doctor", reply
        assert done.code == (0 if reply["healthy"] else 1), (done.code, reply["problems"])
        return done.code, reply

    def checkpoint(self, slug: str, *flags: str) -> dict[str, Any]:
        done = self.run("checkpoint", slug, "--format", "json", *flags)
        assert done.code == 0, done.stdout + done.stderr
        reply: dict[str, Any] = done.json
        return reply

    def start(self, slug: str, orientation: str) -> dict[str, Any]:
        """A work's first checkpoint (with its note)."""
        return self.checkpoint(slug, "--orientation", orientation, "--next", "hold", "--notes", "Started.")

    def hook(self, event: str, harness: str, payload: str) -> dict[str, Any]:
        """A hook call exactly as a harness makes it: the installed command through a shell, payload on stdin."""
        settings = self.scratch.hooks("status", "--harness", harness)
        (command,) = [e["command"] for e in settings["events"] if e["event"] == event]
        done = subprocess.run(["sh", "-c", command], input=payload, cwd=self.repo, capture_output=True, text=True,
                              env=self.scratch.env, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    return Scene(tmp_path)


def codes(reply: dict[str, Any], kind: str = "problems") -> list[str]:
    return [item["code"] for item in reply[kind]]


def claude_transcript(path: Path, cwd: Path, session_id: str, prompts: list[str]) -> Path:
    """A Claude Code session in its own JSONL format: each prompt answered once."""
    lines = []
    for number, text in enumerate(prompts):
        common = {"sessionId": session_id, "cwd": str(cwd), "timestamp": f"2026-12-01T10:0{number}:00Z"}
        lines.append({"type": "user", "uuid": f"u-{number}", **common, "message": {"role": "user", "content": text}})
        answer = {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}
        lines.append({"type": "assistant", "uuid": f"a-{number}", **common, "message": answer})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------- hooks and their log


def test_a_fresh_home_is_healthy_and_says_no_hooks_are_installed(scene: Scene) -> None:
    code, reply = scene.doctor()
    assert code == 0 and reply["healthy"] is True and reply["problems"] == []
    assert codes(reply, "warnings") == ["no-hooks-installed"]
    assert set(reply["harnesses"]) == {"claude-code", "codex", "gemini", "opencode"}
    claude = reply["harnesses"]["claude-code"]
    assert claude["user"]["path"] == str(scene.scratch.home / ".claude" / "settings.json")
    assert claude["project"]["path"] == str(scene.repo / ".claude" / "settings.json")
    assert all(not e["installed"] for e in claude["user"]["events"])
    assert reply["store"]["exists"] is False and reply["hook_log"]["exists"] is False


def test_hooks_installed_by_hooks_install_are_found_with_when_they_fired_and_what_they_did(scene: Scene) -> None:
    for harness in ("claude-code", "gemini", "opencode"):
        scene.scratch.hooks("install", "--harness", harness)
    scene.scratch.hooks("install", "--harness", "claude-code", "--scope", "project", cwd=scene.repo)
    scene.start("retry-backoff", "Backoff for the payment retries.")
    session = "0c5e7b1a-5f3e-4a43-9a57-3d1f0f6f4b11"
    transcript = claude_transcript(
        scene.scratch.home / ".claude" / "projects" / "shop" / f"{session}.jsonl",
        scene.repo,
        session,
        ["Use exponential backoff.", "never retry a POST twice"],
    )
    common = {"session_id": session, "transcript_path": str(transcript), "cwd": str(scene.repo)}
    rescue = scene.hook("PreCompact", "claude-code", json.dumps({**common, "hook_event_name": "PreCompact",
                                                                 "trigger": "manual"}))  # fmt: skip
    assert "kept 2 turn(s)" in rescue["systemMessage"], rescue
    start = scene.hook("SessionStart", "claude-code", json.dumps({**common, "hook_event_name": "SessionStart",
                                                                  "source": "compact"}))  # fmt: skip
    injected = start["hookSpecificOutput"]["additionalContext"]
    scene.hook("SessionStart", "gemini", "this is not JSON")  # refused: invalid-hook-payload

    code, reply = scene.doctor()
    assert code == 1 and codes(reply) == ["hook-failing"], reply["problems"]
    (failing,) = reply["problems"]
    assert failing["harness"] == "gemini" and failing["event"] == "SessionStart"
    assert "invalid-hook-payload" in failing["message"]
    claude = reply["harnesses"]["claude-code"]
    for scope in ("user", "project"):
        assert [e["event"] for e in claude[scope]["events"] if e["installed"] and e["current"]] == [
            "PreCompact", "SessionStart", "Stop", "UserPromptSubmit"]  # fmt: skip
        assert all(e["this_runtime"] and e["runner_found"] for e in claude[scope]["events"])
    fired = claude["last_fired"]
    assert fired["PreCompact"]["calls"] == 1 and fired["PreCompact"]["last"]["kept"] == 2
    assert fired["PreCompact"]["last"]["work_id"].startswith("session-claude-code-0c5e7b1a")
    assert fired["SessionStart"]["last"]["chars"] == len(injected)
    assert fired["SessionStart"]["failure_count"] == 0 and fired["SessionStart"]["last_success_at"]
    gemini = reply["harnesses"]["gemini"]["last_fired"]["SessionStart"]
    assert gemini["failure_count"] == 1 and gemini["failures_since_success"][0]["refused"] == "invalid-hook-payload"
    opencode = reply["harnesses"]["opencode"]["user"]
    assert [e["event"] for e in opencode["events"] if e["installed"] and e["current"]] == ["PreCompact", "SessionStart"]
    assert reply["hook_log"]["entries_read"] == 3
    assert reply["notes"]["current"] == 2  # the checkpoint's note and the rescue's

    # A success after the failure: the event is healthy again, and so is the whole.
    scene.hook(
        "SessionStart",
        "gemini",
        json.dumps(
            {"session_id": "g-1", "cwd": str(scene.repo), "hook_event_name": "SessionStart", "source": "startup"}
        ),
    )
    code, reply = scene.doctor()
    assert code == 0 and reply["problems"] == [], reply["problems"]
    assert reply["harnesses"]["gemini"]["last_fired"]["SessionStart"]["failure_count"] == 0


def test_gemini_settings_with_comments_are_read_as_gemini_reads_them(scene: Scene) -> None:
    path = Path(scene.scratch.hooks("install", "--harness", "gemini")["path"])
    path.write_text("// my settings\n" + path.read_text().replace('"hooks": {', '"hooks": { /* ours */', 1))
    code, reply = scene.doctor()
    assert code == 0, reply["problems"]
    events = reply["harnesses"]["gemini"]["user"]["events"]
    assert [e["event"] for e in events if e["installed"] and e["current"]] == [
        "PreCompress", "SessionStart", "AfterAgent", "BeforeAgent"]  # fmt: skip


def test_a_warning_a_hook_logged_about_its_transcript_is_a_warning_of_doctor(scene: Scene) -> None:
    scene.scratch.hooks("install", "--harness", "claude-code")
    odd = scene.scratch.root / "odd.jsonl"  # user-role records in no shape the reader knows, among unknown types
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": "s9",
            "cwd": str(scene.repo),
            "timestamp": "2026-12-01T10:00:00Z",
            "message": {"role": "user", "content": [{"type": "mystery_block", "data": "hello"}]},
        }
    ]
    lines += [{"type": "telemetry_v9", "uuid": f"x{n}", "sessionId": "s9"} for n in range(5)]
    odd.write_text("".join(json.dumps(line) + "\n" for line in lines))
    payload = {"session_id": "s9", "transcript_path": str(odd), "cwd": str(scene.repo), "trigger": "manual",
               "hook_event_name": "PreCompact"}  # fmt: skip
    scene.hook("PreCompact", "claude-code", json.dumps(payload))
    logged = json.loads((scene.scratch.root / "store" / "hooks" / "hook.log").read_text().splitlines()[-1])
    _, reply = scene.doctor()
    said = [w for w in reply["warnings"] if w.get("event") == "PreCompact"]
    assert [w["code"] for w in said] == ([logged["warning"]["code"]] if "warning" in logged else [])
    assert all(w["harness"] == "claude-code" and logged["warning"]["message"] in w["message"] for w in said)


def test_a_hook_that_is_stale_incomplete_or_runs_a_missing_program_is_a_problem(scene: Scene) -> None:
    installed = scene.scratch.hooks("install", "--harness", "claude-code")
    path = Path(installed["path"])
    settings = json.loads(path.read_text())
    settings["hooks"]["PreCompact"][0]["hooks"][0]["timeout"] = 5  # not what hooks install writes
    del settings["hooks"]["Stop"]
    path.write_text(json.dumps(settings, indent=2))
    scene.scratch.hooks("install", "--harness", "gemini", "--command", "/nowhere/wheypoint")
    plugin = Path(scene.scratch.hooks("install", "--harness", "opencode")["path"])
    plugin.write_text(plugin.read_text() + "\n// a line added by hand\n")

    code, reply = scene.doctor()
    assert code == 1
    found = {(p["code"], p.get("harness"), p.get("event")) for p in reply["problems"]}
    assert ("hook-not-current", "claude-code", "PreCompact") in found
    assert ("hook-incomplete", "claude-code", None) in found
    assert {("hook-runner-missing", "gemini", event) for event in ("PreCompress", "SessionStart", "AfterAgent",
                                                                   "BeforeAgent")} <= found  # fmt: skip
    assert ("hook-not-current", "opencode", None) in found


def test_a_hook_an_earlier_release_installed_runs_this_runtime(scene: Scene) -> None:
    """`hooks install` once wrote the runner without `-S`: such a hook runs this runtime all the same, and doctor
    says so; a runner of another program is not this runtime."""
    path = Path(scene.scratch.hooks("install", "--harness", "claude-code")["path"])
    settings = json.loads(path.read_text())
    hooks = settings["hooks"]
    written = hooks["PreCompact"][0]["hooks"][0]["command"]
    assert " -S " in written
    hooks["PreCompact"][0]["hooks"][0]["command"] = written.replace(" -S ", " ", 1)
    stop = hooks["Stop"][0]["hooks"][0]
    stop["command"] = stop["command"].replace("__main__.py", "other.py").replace("wheypoint.pyz", "other.pyz")
    path.write_text(json.dumps(settings, indent=2))
    _, reply = scene.doctor()
    events = {e["event"]: e for e in reply["harnesses"]["claude-code"]["user"]["events"]}
    assert events["PreCompact"]["this_runtime"] is True and events["PreCompact"]["current"] is True
    assert events["Stop"]["this_runtime"] is False and events["SessionStart"]["this_runtime"] is True
    assert not [p for p in reply["problems"] if p.get("event") == "PreCompact"], reply["problems"]
    from wheypoint.app.harness_files import runs_this_runtime

    assert not runs_this_runtime("python3 -m wheypoint") and not runs_this_runtime("'unclosed")


def test_a_hook_that_runs_python_dash_m_from_the_project_s_folder_is_a_problem(scene: Scene) -> None:
    """An install from before `-P`: `"<python>" -m wheypoint` puts the folder the harness runs it in first on the
    module path, so doctor says to install again; what `hooks install` writes now is not flagged."""
    import sys

    installed = scene.scratch.hooks("install", "--harness", "claude-code")
    code, reply = scene.doctor()
    assert not [p for p in reply["problems"] if p["code"] == "hook-runner-unsafe"], reply["problems"]
    path = Path(installed["path"])
    old = f'"{sys.executable}" -m wheypoint hook PreCompact --harness claude-code'
    settings = json.loads(path.read_text())
    settings["hooks"]["PreCompact"][0]["hooks"][0]["command"] = old
    path.write_text(json.dumps(settings, indent=2))
    code, reply = scene.doctor()
    found = {(p["code"], p.get("harness"), p.get("event")) for p in reply["problems"]}
    assert code == 1 and ("hook-runner-unsafe", "claude-code", "PreCompact") in found
    assert ("hook-runner-unsafe", "claude-code", "Stop") not in found
    from wheypoint.app.harness_files import runs_from_its_folder

    assert runs_from_its_folder('"/usr/bin/python3" -m wheypoint') and runs_from_its_folder(
        "python3 -X dev -m wheypoint"
    )
    for safe in ("python3 -P -m wheypoint", "python3 -I -m wheypoint", "python3 -IP -m wheypoint",
                 "python3 /x/wheypoint.pyz", "/x/bin/wheypoint", "python3 -m other wheypoint"):  # fmt: skip
        assert not runs_from_its_folder(safe), safe


def test_codex_trust_per_hook_trusted_changed_untrusted_and_disabled(scene: Scene) -> None:
    installed = scene.scratch.hooks("install", "--harness", "codex", "--command", RECORDED_RUNNER)
    hooks_json = Path(installed["path"])
    settings = json.loads(hooks_json.read_text())
    settings["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] = 20  # changed since it was trusted
    hooks_json.write_text(json.dumps(settings, indent=2))
    key = {event: f"{hooks_json}:{snake}:0:0" for event, snake in SNAKE.items()}
    (hooks_json.parent / "config.toml").write_text(
        'model = "o3"\n\n'
        f'[hooks.state."{key["PreCompact"]}"]\ntrusted_hash = "{RECORDED_HASHES["PreCompact"]}"\n\n'
        f'[hooks.state."{key["SessionStart"]}"]\ntrusted_hash = "{RECORDED_HASHES["SessionStart"]}"\n\n'
        f'[hooks.state."{key["UserPromptSubmit"]}"]\ntrusted_hash = "{RECORDED_HASHES["UserPromptSubmit"]}"\n'
        "enabled = false\n"
    )  # Stop: never trusted

    code, reply = scene.doctor()
    events = {e["event"]: e for e in reply["harnesses"]["codex"]["user"]["events"]}
    assert {event: e["trust"]["status"] for event, e in events.items()} == {
        "PreCompact": "trusted",
        "SessionStart": "modified",
        "Stop": "untrusted",
        "UserPromptSubmit": "disabled",
    }
    assert events["PreCompact"]["trust"]["current_hash"] == RECORDED_HASHES["PreCompact"]
    assert events["Stop"]["trust"] == {
        "status": "untrusted",
        "key": key["Stop"],
        "current_hash": RECORDED_HASHES["Stop"],
        "trusted_hash": None,
    }
    trust = [(p["code"], p["events"], p["keys"]) for p in reply["problems"] if p["code"].startswith("codex-hook")]
    assert sorted(trust) == [("codex-hook-disabled", ["UserPromptSubmit"], [key["UserPromptSubmit"]]),
                             ("codex-hook-modified", ["SessionStart"], [key["SessionStart"]]),
                             ("codex-hook-untrusted", ["Stop"], [key["Stop"]])]  # fmt: skip
    assert code == 1


def test_codex_project_hooks_run_only_in_a_project_codex_trusts(scene: Scene) -> None:
    scene.scratch.hooks("install", "--harness", "codex", "--scope", "project", cwd=scene.repo)
    _, reply = scene.doctor()
    assert reply["harnesses"]["codex"]["project"]["project_trusted"] is False
    assert "codex-project-untrusted" in codes(reply)
    config = scene.scratch.home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[projects."{scene.repo.parent}"]\ntrust_level = "trusted"\n')  # a folder above counts
    _, reply = scene.doctor()
    assert reply["harnesses"]["codex"]["project"]["project_trusted"] is True
    assert "codex-project-untrusted" not in codes(reply)
    keys = [e["trust"]["key"] for e in reply["harnesses"]["codex"]["project"]["events"]]
    assert keys == [f"{scene.repo}/.codex/hooks.json:{SNAKE[e]}:0:0" for e in ("PreCompact", "SessionStart", "Stop",
                                                                                 "UserPromptSubmit")]  # fmt: skip


def test_the_hash_is_the_one_codex_recorded() -> None:
    for event, limit in (("PreCompact", 30), ("SessionStart", 10), ("Stop", 10), ("UserPromptSubmit", 10)):
        handler = {"type": "command", "command": f"{RECORDED_RUNNER} hook {event} --harness codex", "timeout": limit}
        assert codex_trust.hook_hash(event, {"hooks": [handler]}, handler) == RECORDED_HASHES[event]
    # A matcher counts for SessionStart, not for Stop; a missing timeout is Codex's 600 s.
    handler = {"type": "command", "command": "x"}
    assert codex_trust.hook_hash("SessionStart", {"matcher": "startup"}, handler) != codex_trust.hook_hash(
        "SessionStart", {}, handler
    )
    assert codex_trust.hook_hash("Stop", {"matcher": "x"}, handler) == codex_trust.hook_hash("Stop", {}, handler)
    assert codex_trust.hook_hash("Stop", {}, handler) == codex_trust.hook_hash("Stop", {}, {**handler, "timeout": 600})


@pytest.mark.e2e
def test_codex_agrees_with_doctor_on_every_hooks_key_hash_and_trust(scene: Scene) -> None:
    """Codex 0.171's own `hooks/list` (its app-server) for the same files: the same keys, hashes and verdicts."""
    sys.path.insert(0, str(Path(__file__).parent / "e2e"))
    import clis

    codex = clis.installed("codex")
    hooks_json = Path(scene.scratch.hooks("install", "--harness", "codex")["path"])
    scene.scratch.hooks("install", "--harness", "codex", "--scope", "project", cwd=scene.repo)
    settings = json.loads(hooks_json.read_text())
    settings["hooks"]["SessionStart"][0]["matcher"] = "startup|resume"  # a matcher that counts in the hash
    hooks_json.write_text(json.dumps(settings, indent=2))
    _, before = scene.doctor()
    events = {e["event"]: e for e in before["harnesses"]["codex"]["user"]["events"]}
    trusted, changed = events["PreCompact"]["trust"], events["Stop"]["trust"]
    config = hooks_json.parent / "config.toml"
    config.write_text(
        f'[hooks.state."{trusted["key"]}"]\ntrusted_hash = "{trusted["current_hash"]}"\n'
        f'[hooks.state."{changed["key"]}"]\ntrusted_hash = "sha256:{"0" * 64}"\n'
    )
    _, reply = scene.doctor()
    ours = {e["trust"]["key"]: e["trust"] for e in reply["harnesses"]["codex"]["user"]["events"]}
    theirs = {hook["key"]: hook for hook in _codex_hooks(codex, scene)}
    assert reply["harnesses"]["codex"]["project"]["project_trusted"] is False  # so Codex lists only the user's
    config.write_text(config.read_text() + f'[projects."{scene.repo}"]\ntrust_level = "trusted"\n')
    _, reply = scene.doctor()
    assert reply["harnesses"]["codex"]["project"]["project_trusted"] is True
    for scope in ("user", "project"):
        ours.update({e["trust"]["key"]: e["trust"] for e in reply["harnesses"]["codex"][scope]["events"]})
    theirs = {hook["key"]: hook for hook in _codex_hooks(codex, scene)}
    assert set(ours) == set(theirs)
    for key, trust in ours.items():
        assert trust["current_hash"] == theirs[key]["currentHash"], key
        assert trust["status"] == theirs[key]["trustStatus"], key
    assert {t["status"] for t in ours.values()} == {"trusted", "modified", "untrusted"}


def _codex_hooks(codex: Path, scene: Scene) -> list[dict[str, Any]]:
    """`hooks/list` over Codex's app-server protocol (JSON lines on stdio), for the scene's checkout."""
    messages = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "wheypoint-tests", "version": "0"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(scene.repo)]}},
    ]
    with subprocess.Popen([str(codex), "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, cwd=scene.repo, env=scene.scratch.env) as server:  # fmt: skip
        assert server.stdin is not None and server.stdout is not None
        try:
            for message in messages:
                server.stdin.write((json.dumps(message) + "\n").encode())
                server.stdin.flush()
            while True:
                line = server.stdout.readline()
                assert line, "codex app-server ended without answering hooks/list"
                answer = json.loads(line)
                if answer.get("id") == 2:
                    break
        finally:
            server.kill()
    (listed,) = answer["result"]["data"]
    hooks: list[dict[str, Any]] = listed["hooks"]
    return hooks


# ------------------------------------------------------------------------------------- malformed files


def test_malformed_settings_and_config_files_are_coded_findings_never_a_traceback(scene: Scene) -> None:
    home = scene.scratch.home
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"hooks": {')
    (home / ".claude.json").write_text("[1, 2")
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "o3"\n[hooks.state."k"\ntrusted_hash = 1\n')
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text('{"hooks": ["not", "events"]}')
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.jsonc").write_bytes(b'{"mcp": \xff}')
    (scene.repo / ".mcp.json").write_text("")

    code, reply = scene.doctor()
    assert code == 1
    found = sorted((p["code"], p["path"]) for p in reply["problems"])
    assert found == sorted(
        [
            ("settings-unreadable", str(home / ".claude" / "settings.json")),
            ("settings-unreadable", str(home / ".claude.json")),
            ("codex-config-unreadable", str(home / ".codex" / "config.toml")),
            ("settings-unexpected", str(home / ".gemini" / "settings.json")),
            ("settings-unreadable", str(home / ".config" / "opencode" / "opencode.jsonc")),
        ]
    )  # fmt: skip  (an empty .mcp.json is an empty object, as the harnesses read it)
    assert reply["harnesses"]["claude-code"]["user"]["readable"] is False


# ------------------------------------------------------------------------------------- registrations


def test_mcp_skill_and_plugin_registrations_are_found_where_each_harness_reads_them(scene: Scene) -> None:
    home, repo = scene.scratch.home, scene.repo
    server = {"type": "stdio", "command": "wheypoint", "args": ["mcp"]}
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "mcpServers": {"wheypoint": server, "other": {"command": "x"}},
                "projects": {
                    str(repo): {"mcpServers": {"wp": {"command": "python3", "args": ["/opt/wheypoint.pyz", "mcp"]}}}
                },
            }
        )
    )
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"wheypoint": server}}))
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        '[mcp_servers.wheypoint]\ncommand = "wheypoint"\nargs = ["mcp"]\nenabled = false\n'
    )
    (home / ".gemini" / "extensions" / "wheypoint").mkdir(parents=True)
    (home / ".gemini" / "extensions" / "wheypoint" / "gemini-extension.json").write_text(
        json.dumps(
            {
                "name": "wheypoint",
                "version": "1",
                "mcpServers": {"wheypoint": {"command": "wheypoint", "args": ["mcp"]}},
            }
        )
    )
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.jsonc").write_text(
        '{\n  // the MCP servers\n  "mcp": {"wheypoint": {"type": "local", "command": ["wheypoint", "mcp"],'
        ' "enabled": true,},},\n  /* a "string" in a comment */ "$schema": "https://opencode.ai/config.json"\n}\n'
    )
    skill = ROOT / "skill" / "wheypoint" / "SKILL.md"
    for folder in (home / ".claude" / "skills" / "wheypoint", home / ".agents" / "skills" / "handoff"):
        folder.mkdir(parents=True)
        shutil.copy(skill, folder / "SKILL.md")  # the second one by its front matter's name alone

    code, reply = scene.doctor()
    assert code == 0, reply["problems"]
    found = {harness: {kind: sorted((i["name"], i["scope"], i["path"]) for i in report["registrations"][kind])
                       for kind in ("mcp_servers", "skills", "plugins")}
             for harness, report in reply["harnesses"].items()}  # fmt: skip
    claude_skill = str(home / ".claude" / "skills" / "wheypoint" / "SKILL.md")
    agents_skill = str(home / ".agents" / "skills" / "handoff" / "SKILL.md")
    assert found["claude-code"]["mcp_servers"] == sorted(
        [
            ("wheypoint", "user", str(home / ".claude.json")),
            ("wp", "local", str(home / ".claude.json")),
            ("wheypoint", "project", str(repo / ".mcp.json")),
        ]
    )
    assert found["claude-code"]["skills"] == [("wheypoint", "user", claude_skill)]
    assert found["codex"]["mcp_servers"] == [("wheypoint", "user", str(home / ".codex" / "config.toml"))]
    assert reply["harnesses"]["codex"]["registrations"]["mcp_servers"][0]["enabled"] is False
    assert found["codex"]["skills"] == [("wheypoint", "user", agents_skill)]
    manifest = str(home / ".gemini" / "extensions" / "wheypoint" / "gemini-extension.json")
    assert found["gemini"]["mcp_servers"] == [("wheypoint", "plugin", manifest)]
    assert found["gemini"]["plugins"] == [("wheypoint", "user", manifest)]
    assert found["gemini"]["skills"] == [("wheypoint", "user", agents_skill)]
    assert found["opencode"]["mcp_servers"] == [
        ("wheypoint", "user", str(home / ".config" / "opencode" / "opencode.jsonc"))
    ]
    assert found["opencode"]["skills"] == sorted(
        [("wheypoint", "user", claude_skill), ("wheypoint", "user", agents_skill)]
    )


def test_hooks_mcp_and_skills_brought_by_an_installed_plugin_or_extension_count(scene: Scene, tmp_path: Path) -> None:
    built = tmp_path / "plugins"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "build_plugins.py"), "--out", str(built)],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    home = scene.scratch.home
    claude_copy = home / ".claude" / "plugins" / "cache" / "wheypoint" / "wheypoint" / "1"
    shutil.copytree(built / "claude-code" / "wheypoint", claude_copy)  # where Claude Code keeps an installed one
    (home / ".claude" / "plugins" / "installed_plugins.json").write_text(
        json.dumps(
            {"version": 2, "plugins": {"wheypoint@wheypoint": [{"scope": "user", "installPath": str(claude_copy)}]}}
        )
    )
    shutil.copytree(built / "gemini" / "wheypoint", home / ".gemini" / "extensions" / "wheypoint")

    code, reply = scene.doctor()
    assert code == 0 and "no-hooks-installed" not in codes(reply, "warnings"), reply
    claude = reply["harnesses"]["claude-code"]["registrations"]
    (plugin,) = claude["plugins"]
    assert plugin["name"] == "wheypoint@wheypoint" and plugin["hooks"] == [
        {"path": str(claude_copy / "hooks" / "hooks.json"),
         "events": ["PreCompact", "SessionStart", "Stop", "UserPromptSubmit"]}]  # fmt: skip
    assert [(s["name"], s["scope"]) for s in claude["mcp_servers"]] == [("wheypoint", "plugin")]
    assert [s["path"] for s in claude["skills"]] == [str(claude_copy / "skills" / "wheypoint" / "SKILL.md")]
    gemini = reply["harnesses"]["gemini"]["registrations"]
    (extension,) = gemini["plugins"]
    assert extension["hooks"][0]["events"] == ["PreCompress", "SessionStart", "AfterAgent", "BeforeAgent"]
    assert [(s["name"], s["scope"]) for s in gemini["mcp_servers"]] == [("wheypoint", "plugin")]
    assert [s["scope"] for s in gemini["skills"]] == ["plugin"]


def test_jsonc_comments_and_trailing_commas_go_and_strings_stay() -> None:
    text = '{"a": "// not a comment", /* x */ "b": [1, 2,], // end\n "c": "/* kept */",}'
    assert json.loads(without_comments(text)) == {"a": "// not a comment", "b": [1, 2], "c": "/* kept */"}


# ------------------------------------------------------------------------------------- the store


def test_every_record_is_verified_and_a_tampered_digest_or_record_is_found(scene: Scene) -> None:
    first = scene.checkpoint(
        "retry-backoff",
        "--orientation",
        "Backoff.",
        "--next",
        "hold",
        "--decision",
        "Use full jitter.",
        "--rationale",
        "It spreads retries best.",
    )
    scene.checkpoint(
        "retry-backoff",
        "--base",
        first["revision_id"],
        "--decision",
        "Cap at 30 s.",
        "--rationale",
        "The gateway gives up at 30 s.",
    )
    scene.start("cart-totals", "Cart totals.")
    code, reply = scene.doctor()
    store = reply["store"]
    assert code == 0 and store["integrity"] == ["ok"] and store["schema_version"] >= 7
    assert (store["works"], store["revisions"], store["works_failing_verification"]) == (2, 3, 0)
    assert store["size_bytes"] >= scene.store.stat().st_size > 0

    with sqlite3.connect(scene.store) as conn:
        conn.execute("UPDATE revisions SET record_json = replace(record_json, 'full jitter', 'no jitter') "
                     "WHERE revision_id = ?", (first["revision_id"],))  # fmt: skip
    code, reply = scene.doctor()
    (problem,) = reply["problems"]
    assert code == 1 and problem["code"] == "record-digest-mismatch" and problem["work_id"] == first["work_id"]
    assert "record_digest is not the digest of its record" in problem["message"]

    with sqlite3.connect(scene.store) as conn:
        conn.execute("UPDATE revisions SET record_json = replace(record_json, 'no jitter', 'full jitter')")
        conn.execute("UPDATE revisions SET record_digest = ? WHERE work_id = (SELECT work_id FROM works WHERE "
                     "slug = 'cart-totals')", ("sha256:" + "0" * 64,))  # fmt: skip
    code, reply = scene.doctor()
    (problem,) = reply["problems"]
    assert code == 1 and problem["code"] == "record-digest-mismatch" and "stored record_digest" in problem["message"]
    assert problem["message"].startswith("work cart-totals")
    assert reply["store"]["works_failing_verification"] == 1


def test_a_damaged_or_foreign_store_file_is_reported_not_crashed_on(scene: Scene, tmp_path: Path) -> None:
    scene.start("retry-backoff", "Backoff.")
    damaged = tmp_path / "damaged.sqlite3"
    with sqlite3.connect(scene.store) as source, sqlite3.connect(damaged) as copy:
        source.backup(copy)  # one file, no WAL
    with sqlite3.connect(damaged) as conn:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'works'").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    with damaged.open("r+b") as handle:  # the cells at the end of the works table's page, overwritten
        handle.seek((root - 1) * size + size // 2)
        handle.write(b"\xa5" * (size // 2))
    code, reply = scene.doctor(env={"WHEYPOINT_STORE": str(damaged)})
    assert code == 1 and "store-integrity" in codes(reply), reply["problems"]
    assert reply["store"]["integrity"] != ["ok"]

    foreign = tmp_path / "not-a-store.sqlite3"
    foreign.write_bytes(b"this is not an SQLite database at all\n" * 200)
    code, reply = scene.doctor(env={"WHEYPOINT_STORE": str(foreign)})
    assert code == 1 and codes(reply) == ["store-unreadable"] and reply["store"]["readable"] is False


def test_a_postgresql_store_is_checked_by_its_records(scene: Scene, postgres_url: str) -> None:
    team = {"WHEYPOINT_STORE": postgres_url}
    flags = ("--orientation", "Backoff.", "--next", "hold", "--notes", "Started.")
    done = scene.run("checkpoint", "retry-backoff", *flags, env=team)
    assert done.code == 0, done.stdout + done.stderr
    code, reply = scene.doctor(env=team)
    store = reply["store"]
    assert code == 0 and store["backend"] == "postgresql" and store["integrity"] is None
    assert (store["works"], store["revisions"], store["works_failing_verification"]) == (1, 1, 0)
    assert store["schema_version"] >= 1 and store["size_bytes"] > 0 and store["data_checksums"] in ("on", "off")
    assert postgres_url.rpartition("@")[2] in store["location"]
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE revisions SET record_digest = %s", ("sha256:" + "3" * 64,))
    code, reply = scene.doctor(env=team)
    assert code == 1 and codes(reply) == ["record-digest-mismatch"]


# ------------------------------------------------------------------------------------- notes


def test_stale_hand_edited_notes_and_stray_temporaries_and_what_fix_repairs(scene: Scene) -> None:
    first = scene.start("retry-backoff", "Backoff.")
    scene.checkpoint(
        "retry-backoff",
        "--base",
        first["revision_id"],
        "--decision",
        "Cap at 30 s.",
        "--rationale",
        "The gateway gives up at 30 s.",
        "--no-note",
    )  # the note on disk is now r1's: generated, and stale
    edited = scene.start("cart-totals", "Cart totals.")
    notes = scene.repo / ".cheese" / "notes"
    Path(edited["note_path"]).write_text(Path(edited["note_path"]).read_text() + "\nMy own line.\n")
    ended = subprocess.Popen(["true"])  # a writer that has ended: its pid now names no process
    ended.wait()
    stray = notes / f".retry-backoff.md.{ended.pid}-123-0.tmp"
    stray.write_text("half a note")
    live = notes / f".cart-totals.md.{os.getpid()}-456-0.tmp"  # this test's own: a live writer's, left alone
    live.write_text("being written")
    # The same at the shared names writers with unnamed files use: no lock held is a dead writer's, a lock a live one.
    shared_stray, shared_live = notes / ".retry-backoff.md.3.tmp", notes / ".cart-totals.md.0.tmp"
    shared_stray.write_text("half a note")
    shared_live.write_text("being written")
    held = open(shared_live, "r+b")  # noqa: SIM115 - held to the end of the test
    os.lockf(held.fileno(), os.F_LOCK, 0)

    code, reply = scene.doctor()
    assert code == 1
    found = sorted((p["code"], Path(p["path"]).name) for p in reply["problems"])
    assert found == sorted([("note-hand-edited", "cart-totals.md"), ("note-stale", "retry-backoff.md"),
                            ("note-temporary", stray.name), ("note-temporary", shared_stray.name)])  # fmt: skip
    assert {(Path(t["path"]).name, t["removable"]) for t in reply["notes"]["temporaries"]} == {
        (stray.name, True),
        (live.name, False),
        (shared_stray.name, True),
        (shared_live.name, False),
    }
    assert (reply["notes"]["stale"], reply["notes"]["hand_edited"], reply["notes"]["current"]) == (1, 1, 0)

    code, reply = scene.doctor("--fix")
    assert sorted((f["action"], Path(f["path"]).name) for f in reply["fixed"]) == sorted([
        ("removed-temporary", stray.name),
        ("removed-temporary", shared_stray.name),
        ("rendered-note", "retry-backoff.md"),
    ])
    assert codes(reply) == ["note-hand-edited"] and code == 1  # a person's edit is never overwritten
    assert not stray.exists() and live.exists() and "My own line." in Path(edited["note_path"]).read_text()
    assert not shared_stray.exists() and shared_live.exists()
    held.close()
    shown = scene.run("show", "retry-backoff", "--format", "json").json
    assert shown["note"]["state"] == "current" and shown["record"]["revision_number"] == 2


# ------------------------------------------------------------------------------------- front doors


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_command_line_and_the_pyz_answer_alike(runtime: str, request: pytest.FixtureRequest,
                                                   scene: Scene) -> None:  # fmt: skip
    program = runtime_argv(runtime, request)
    scene.start("retry-backoff", "Backoff.")
    done = scene.scratch.run("doctor", "--help", program=program)
    assert done.code == 0 and "wheypoint doctor --format text" in done.stdout and "--fix" in done.stdout
    done = scene.scratch.run("doctor", "--format", "text", cwd=scene.repo, program=program)
    assert done.code == 0 and done.stdout.startswith("wheypoint doctor: healthy"), done.stdout + done.stderr
    assert "store: " in done.stdout and "1 work(s), 1 revision(s) verified" in done.stdout
    with sqlite3.connect(scene.store) as conn:
        conn.execute("UPDATE revisions SET record_digest = ?", ("sha256:" + "1" * 64,))
    done = scene.scratch.run("doctor", cwd=scene.repo, program=program)
    assert done.code == 1 and json.loads(done.stdout)["problems"][0]["code"] == "record-digest-mismatch"
    done = scene.scratch.run("doctor", "--format", "text", cwd=scene.repo, program=program)
    assert done.code == 1 and "PROBLEM record-digest-mismatch" in done.stdout


@pytest.mark.anyio
async def test_the_mcp_tool_reads_and_cannot_fix(scene: Scene, tmp_path: Path) -> None:
    from test_mcp import connect, structured

    scene.start("retry-backoff", "Backoff.")
    with sqlite3.connect(scene.store) as conn:
        conn.execute("UPDATE revisions SET record_digest = ?", ("sha256:" + "2" * 64,))
    program = [sys.executable, "-m", "wheypoint"]
    async with connect(program, scene.repo, scene.scratch.env, tmp_path / "stderr.txt") as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(listed["doctor"].input_schema["properties"]) == {"project"}
        assert listed["doctor"].annotations.read_only_hint is True
        result = await session.call_tool("doctor", {})
        assert result.is_error is False  # an answer, though not a healthy one
        reply = structured(result)
        assert reply["command"] == "doctor" and reply["healthy"] is False
        assert codes(reply) == ["record-digest-mismatch"]
        refused = await session.call_tool("doctor", {"fix": True})
        assert refused.is_error is True and structured(refused)["error"]["parameter"] == "fix"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# ------------------------------------------------------------------------------------- the TOML reader


TOML_SAMPLES = [
    'model = "o3" # a comment\nn = 1_000\nf = -1.5e3\nh = 0xFF\nok = true\nwhen = 07:32:00\n'
    'list = ["a", \'b\',\n  "c\\u00e9", ]\ninline = { a = 1, b.c = "x" }\n',
    '[mcp_servers.wheypoint]\ncommand = "wheypoint"\nargs = ["mcp"]\nenv_vars = []\n\n'
    '[hooks.state."/h/.codex/hooks.json:pre_compact:0:0"]\ntrusted_hash = "sha256:abc"\nenabled = false\n'
    '[hooks.state]\n"other" = { trusted_hash = "sha256:def" }\n',
    'text = """\nfirst \\\n   joined "q" ""\nsecond"""\nraw = \'\'\'C:\\path\\n\'\'\'\n[[profiles]]\nname = "a"\n'
    '[[profiles]]\nname = "b"\n[profiles.sub]\nx = 1\n"quoted key" = \'lit\'\n',
]


@pytest.mark.parametrize("text", TOML_SAMPLES)
def test_the_fallback_toml_reader_reads_as_tomllib_does(text: str) -> None:
    tomllib = pytest.importorskip("tomllib")
    as_text = {"when": "07:32:00"}  # a date or time is kept as its text
    expected = {k: as_text.get(k, v) for k, v in tomllib.loads(text).items()}
    assert tomlread.Reader(text).document() == expected


@pytest.mark.parametrize("text", ['a = ', 'a = "open', '[a\nb = 1', 'a = 1\na = 2', 'a = 1 b', 'a = [1, 2',
                                  "a = {b = 1", 'a = "\\q"', "[a]\nb = 1\n[a.b]\n"])  # fmt: skip
def test_the_fallback_toml_reader_refuses_what_it_cannot_read_with_the_line(text: str) -> None:
    with pytest.raises(tomlread.TomlError, match=r"line \d+"):
        tomlread.Reader(text).document()
