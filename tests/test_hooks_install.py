"""`wheypoint hooks install|uninstall|status`: real processes, a scratch home, real settings files and checkouts."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import wheypoint
from conftest import BASE_PYTHON, Reply, make_repo, node_program
from wheypoint.hooks.install import EVENTS, quote
from wheypoint.hooks.settings import detect_indent, is_ours

SCHEMAS = Path(__file__).resolve().parent / "schemas"
EXISTING = {
    "model": "opus",
    "env": {"TOKEN_FILE": "~/.secret"},
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-bash", "timeout": 5}]}],
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "load-my-context"}]}],
    },
}


class Scratch:
    """A scratch home (HOME, XDG_CONFIG_HOME) and store for one test, and a way to run wheypoint in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
        for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "USERPROFILE"):
            self.env.pop(name, None)
        self.env.update(HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / ".config"),
                        WHEYPOINT_HOME=str(root / "store"))  # fmt: skip

    def run(self, *args: str, cwd: Path | None = None, program: list[str] | None = None,
            stdin: str | None = None, env: dict[str, str] | None = None) -> Reply:  # fmt: skip
        done = subprocess.run([*(program or [sys.executable, "-m", "wheypoint"]), *args], cwd=cwd or self.root,
                              input=(stdin or "").encode(), capture_output=True, env={**self.env, **(env or {})},
                              timeout=60, check=False)  # fmt: skip
        return Reply(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))

    def hooks(self, *args: str, **kwargs: Any) -> dict[str, Any]:
        done = self.run("hooks", *args, "--format", "json", **kwargs)
        assert done.code == 0, done.stdout + done.stderr
        reply: dict[str, Any] = done.json
        return reply

    def log(self) -> str:
        """The hook log, for a failure message."""
        path = self.root / "store" / "hooks" / "hook.log"
        return path.read_text(encoding="utf-8") if path.exists() else "(no hook.log)"

    def shell(self, command: str, stdin: str = "{}") -> subprocess.CompletedProcess[str]:
        """Run a hook command as a harness does: through the shell, the payload on stdin."""
        return subprocess.run(["sh", "-c", command], input=stdin, capture_output=True, text=True, env=self.env,
                              cwd=self.root, timeout=60, check=False)  # fmt: skip


@pytest.fixture
def scratch(tmp_path: Path) -> Scratch:
    return Scratch(tmp_path)


def _schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _without_ours(data: dict[str, Any], harness: str) -> dict[str, Any]:
    """The settings with wheypoint's handlers (and what only they filled) taken out, by the test's own reading."""
    data = json.loads(json.dumps(data))
    hooks = data.get("hooks", {})
    for event in list(hooks):
        groups = []
        for group in hooks[event]:
            kept = [h for h in group["hooks"] if f"hook {event} --harness {harness}" not in h.get("command", "")]
            if kept:
                groups.append({**group, "hooks": kept})
        if groups:
            hooks[event] = groups
        else:
            del hooks[event]
    return data


def _ours(data: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for g in data["hooks"].get(event, []) for h in g["hooks"] if f"hook {event} --harness" in h["command"]]


# ---- install into an existing file, in both runtimes


@pytest.mark.parametrize("runtime", ["package", "pyz"])
def test_install_merges_into_existing_settings_and_its_commands_run(
    scratch: Scratch, runtime: str, request: pytest.FixtureRequest
) -> None:
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(EXISTING, indent=4) + "\n"
    settings.write_text(original)
    program = [sys.executable, "-m", "wheypoint"]
    if runtime == "pyz":
        program = [BASE_PYTHON, "-I", str(request.getfixturevalue("pyz"))]

    reply = scratch.hooks("install", "--harness", "claude-code", program=program)

    assert reply["changed"] is True and reply["path"] == str(settings) and reply["scope"] == "user"
    assert reply["backup"] == str(settings) + ".wheypoint-backup"
    assert Path(reply["backup"]).read_text() == original  # the file as it was, byte for byte
    data = json.loads(settings.read_text())
    assert _without_ours(data, "claude-code") == EXISTING  # every other key and hook kept as it was
    assert data["hooks"]["SessionStart"][0] == EXISTING["hooks"]["SessionStart"][0]  # theirs stays first
    assert detect_indent(settings.read_text()) == 4  # the file's own indent
    jsonschema.validate({"hooks": data["hooks"]}, _schema("claude-code-hooks.schema.json"))
    assert [e["event"] for e in reply["events"]] == [event for event, _ in EVENTS["claude-code"]]
    for event, limit in EVENTS["claude-code"]:
        (handler,) = _ours(data, event)
        assert handler == {"type": "command", "command": handler["command"], "timeout": limit}
        words = shlex.split(handler["command"])
        assert words[-4:] == ["hook", event, "--harness", "claude-code"]
        assert os.path.isabs(words[0])  # the interpreter by absolute path
        # without `site` (-S): the runtime needs the standard library alone
        if runtime == "pyz":
            assert words[1:-4] == ["-S", str(request.getfixturevalue("pyz"))]  # the zipapp by absolute path
        else:  # the program by its file's path; under -P the checkout the hook runs in stays off the path
            program = str(Path(wheypoint.__file__).resolve().parent / "__main__.py")
            assert words[1:-4] == (["-S", "-P", program] if sys.version_info >= (3, 11) else ["-S", program])
    assert all(e["installed"] and e["current"] for e in reply["events"])

    # What the harness would run answers it: one JSON document, exit 0.
    command = _ours(data, "SessionStart")[0]["command"]
    done = scratch.shell(command, json.dumps({"session_id": "s-1", "cwd": str(scratch.root)}))
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), dict)


def test_a_hook_run_in_a_checkout_holding_a_wheypoint_folder_runs_wheypoint_not_the_checkout_s_code(
    scratch: Scratch,
) -> None:
    """A harness runs its hooks in the project's folder, anyone's checkout: one holding a `wheypoint/` package (or a
    `wheypoint.py`) must not have it run in place of this runtime by the installed command."""
    reply = scratch.hooks("install", "--harness", "claude-code")
    assert reply["changed"] is True
    hostile = make_repo(scratch.root / "hostile")
    marker = scratch.root / "ran-the-checkout-s-code"
    payload = f"open({str(marker)!r}, 'w').write('ran')\n"
    (hostile / "wheypoint").mkdir()
    for name in ("__init__.py", "__main__.py"):
        (hostile / "wheypoint" / name).write_text(payload, encoding="utf-8")
    (hostile / "wheypoint.py").write_text(payload, encoding="utf-8")
    data = json.loads((scratch.home / ".claude" / "settings.json").read_text())
    for event, _ in EVENTS["claude-code"]:
        command = _ours(data, event)[0]["command"]
        done = subprocess.run(["sh", "-c", command], input=json.dumps({"session_id": "s-1", "cwd": str(hostile)}),
                              capture_output=True, text=True, env=scratch.env, cwd=hostile, timeout=60,
                              check=False)  # fmt: skip
        assert done.returncode == 0 and isinstance(json.loads(done.stdout), dict), done.stdout + done.stderr
        assert not marker.exists(), f"{event}: the checkout's own wheypoint ran"


@pytest.mark.parametrize("runtime", ["package", "pyz"])
def test_an_installed_hook_starts_without_site_and_still_finds_its_package(
    scratch: Scratch, runtime: str, request: pytest.FixtureRequest
) -> None:
    """`site` costs every hook's start about 2 ms and the runtime needs nothing it adds: the installed command
    skips it (a `sitecustomize` on the path is not run), yet finds its own package, wherever it is installed (this
    checkout's is an editable install, which only a `.pth` file that `site` reads puts on the path)."""
    program = [BASE_PYTHON, "-I", str(request.getfixturevalue("pyz"))] if runtime == "pyz" else None
    reply = scratch.hooks("install", "--harness", "claude-code", **({"program": program} if program else {}))
    assert reply["changed"] is True
    planted = scratch.root / "planted"
    planted.mkdir()
    marker = scratch.root / "site-ran"
    (planted / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    data = json.loads((scratch.home / ".claude" / "settings.json").read_text())
    command = _ours(data, "SessionStart")[0]["command"]
    env = {**scratch.env, "PYTHONPATH": str(planted)}
    payload = json.dumps({"session_id": "s-1", "cwd": str(scratch.root)})
    done = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, text=True, env=env,
                          cwd=scratch.root, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and isinstance(json.loads(done.stdout), dict), done.stdout + done.stderr
    assert not marker.exists(), "the hook imported site"
    # the same line with `site` would have run it: the file is planted where `site` looks
    with_site = command.replace(" -S ", " ", 1)
    subprocess.run(["sh", "-c", with_site], input="{}", capture_output=True, text=True, env=env, cwd=scratch.root,
                   timeout=60, check=False)  # fmt: skip
    assert marker.exists()


def test_installing_twice_gives_the_same_bytes_and_no_second_backup(scratch: Scratch) -> None:
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(EXISTING) + "\n")
    first = scratch.hooks("install", "--harness", "claude-code")
    written, backup = settings.read_bytes(), Path(first["backup"]).read_bytes()

    again = scratch.hooks("install", "--harness", "claude-code")

    assert again["changed"] is False and settings.read_bytes() == written
    assert Path(again["backup"]).read_bytes() == backup
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json", "settings.json.wheypoint-backup"]

    # Another runner replaces ours in place: same positions, no duplicate, the backup still the original.
    other = scratch.hooks("install", "--harness", "claude-code", "--command", "uvx wheypoint")
    data = json.loads(settings.read_text())
    assert other["changed"] is True and Path(other["backup"]).read_bytes() == backup
    assert list(data["hooks"]) == list(json.loads(written)["hooks"])
    for event, _ in EVENTS["claude-code"]:
        assert [h["command"] for h in _ours(data, event)] == [f"uvx wheypoint hook {event} --harness claude-code"]


def test_a_duplicate_of_ours_is_folded_into_one(scratch: Scratch) -> None:
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"type": "command", "command": "wheypoint hook Stop --harness claude-code"}
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [mine]}, {"hooks": [mine, {"command": "x"}]}]}}))
    scratch.hooks("install", "--harness", "claude-code")
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    assert len(stop) == 2 and stop[1]["hooks"] == [{"command": "x"}] and len(stop[0]["hooks"]) == 1


def test_uninstall_removes_only_ours(scratch: Scratch) -> None:
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(EXISTING, indent=2) + "\n")
    scratch.hooks("install", "--harness", "claude-code")

    reply = scratch.hooks("uninstall", "--harness", "claude-code")

    assert reply["changed"] is True
    assert json.loads(settings.read_text()) == EXISTING
    assert not any(e["installed"] for e in reply["events"])
    assert scratch.hooks("uninstall", "--harness", "claude-code")["changed"] is False


def test_a_file_wheypoint_created_is_removed_with_its_hooks(scratch: Scratch) -> None:
    settings = scratch.home / ".claude" / "settings.json"
    reply = scratch.hooks("install", "--harness", "claude-code")
    assert reply["changed"] is True and reply["backup"] is None and settings.is_file()
    assert settings.read_text().startswith('{\n  "hooks": {\n    "PreCompact"') and settings.read_text().endswith("}\n")

    gone = scratch.hooks("uninstall", "--harness", "claude-code")
    assert not settings.exists() and gone["changed"] is True and gone["backup"] is None


def test_status_before_and_after(scratch: Scratch) -> None:
    settings = scratch.home / ".claude" / "settings.json"
    before = scratch.hooks("status", "--harness", "claude-code")
    assert before["changed"] is False and before["backup"] is None and before["path"] == str(settings)
    assert before["events"][0] == {"event": "PreCompact", "installed": False, "current": False, "command": None}
    assert not settings.exists()  # status never writes

    scratch.hooks("install", "--harness", "claude-code", "--command", "uvx wheypoint")
    after = scratch.hooks("status", "--harness", "claude-code")
    assert all(e["installed"] and not e["current"] for e in after["events"])  # not what install writes now
    assert after["events"][2]["command"] == "uvx wheypoint hook Stop --harness claude-code"
    assert all(e["current"] for e in scratch.hooks("status", "--harness", "claude-code", "--command",
                                                   "uvx wheypoint")["events"])  # fmt: skip


def test_command_path_with_spaces_is_quoted_and_runs(scratch: Scratch) -> None:
    tool = scratch.root / "my tools" / "wheypoint it's"
    tool.parent.mkdir()
    record = scratch.root / "argv.json"
    tool.write_text(f"#!/bin/sh\n{shlex.quote(sys.executable)} -c 'import json, sys; "
                    f"json.dump(sys.argv[1:], open(sys.argv[1], \"w\"))' {shlex.quote(str(record))} \"$@\"\n"
                    "echo '{}'\n")  # fmt: skip
    tool.chmod(0o755)

    reply = scratch.hooks("install", "--harness", "claude-code", "--command", str(tool))

    command = reply["events"][0]["command"]
    assert command == f"{shlex.quote(str(tool))} hook PreCompact --harness claude-code"
    done = scratch.shell(command)
    assert done.returncode == 0, done.stderr
    assert json.loads(record.read_text())[1:] == ["hook", "PreCompact", "--harness", "claude-code"]


def test_a_command_that_does_not_name_wheypoint_is_refused(scratch: Scratch) -> None:
    done = scratch.run("hooks", "install", "--harness", "claude-code", "--command", "python3 -m other")
    assert done.code == 2 and done.json["error"]["parameter"] == "command"
    assert not (scratch.home / ".claude").exists()


def test_quoting_for_posix_and_windows_shells() -> None:
    assert quote("/usr/bin/python3", windows=False) == "/usr/bin/python3"
    assert shlex.split(quote("/opt/my py/it's", windows=False)) == ["/opt/my py/it's"]
    assert quote(r"C:\Program Files\Python\python.exe", windows=True) == r'"C:\Program Files\Python\python.exe"'
    assert quote(r"C:\Python\python.exe", windows=True) == r"C:\Python\python.exe"


def test_ownership_needs_the_exact_tail_and_the_name() -> None:
    assert is_ours({"type": "command", "command": "/x/wheypoint hook Stop --harness codex"}, "Stop", "codex")
    assert not is_ours({"type": "command", "command": "/x/wheypoint hook Stop --harness codex"}, "Stop", "gemini")
    assert not is_ours({"type": "command", "command": "other hook Stop --harness codex"}, "Stop", "codex")
    assert not is_ours({"type": "prompt", "command": "wheypoint hook Stop --harness codex"}, "Stop", "codex")
    assert not is_ours("wheypoint hook Stop --harness codex", "Stop", "codex")


# ---- refusals


def test_invalid_json_is_refused_and_the_file_left_byte_for_byte(scratch: Scratch) -> None:
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{"model": "opus",, }\n')
    for action in ("install", "uninstall"):
        done = scratch.run("hooks", action, "--harness", "claude-code")
        assert done.code == 1, done.stdout
        assert done.json["error"]["code"] == "settings-unreadable" and str(settings) in done.json["error"]["message"]
    assert settings.read_bytes() == b'{"model": "opus",, }\n'
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]  # no backup, no temporary file


def test_hooks_of_another_shape_are_refused(scratch: Scratch) -> None:
    settings = scratch.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"PreCompress": {"command": "x"}}}')
    done = scratch.run("hooks", "install", "--harness", "gemini")
    assert done.code == 1 and done.json["error"]["code"] == "settings-unexpected"
    assert done.json["error"]["at"] == "hooks.PreCompress"
    assert settings.read_text() == '{"hooks": {"PreCompress": {"command": "x"}}}'


def test_unknown_harness_missing_harness_and_bad_scope_are_usage(scratch: Scratch) -> None:
    done = scratch.run("hooks", "install", "--harness", "emacs")
    assert done.code == 2
    assert done.json["error"]["code"] == "unknown-harness" and done.json["error"]["parameter"] == "harness"
    assert done.json["error"]["message"].startswith("--harness takes claude-code")
    assert scratch.run("hooks", "install").code == 2
    assert scratch.run("hooks", "status", "--harness", "codex", "--scope", "team").json["error"]["parameter"] == "scope"
    assert scratch.run("hooks", "reinstall", "--harness", "codex").code == 2
    assert not any(scratch.home.iterdir())


# ---- scopes and the other harnesses


def test_project_scope_writes_into_the_checkout(scratch: Scratch) -> None:
    repo = make_repo(scratch.root / "shop repo")
    inside = repo / "src" / "deep"
    inside.mkdir(parents=True)
    expected = {
        "claude-code": repo / ".claude" / "settings.json", "codex": repo / ".codex" / "hooks.json",
        "gemini": repo / ".gemini" / "settings.json", "opencode": repo / ".opencode" / "plugins" / "wheypoint.ts",
    }  # fmt: skip
    for harness, path in expected.items():
        reply = scratch.hooks("install", "--harness", harness, "--scope", "project", cwd=inside)
        assert reply["path"] == str(path) and path.is_file() and reply["scope"] == "project"
    assert not any(scratch.home.iterdir())  # nothing in the user's home
    notes = scratch.hooks("status", "--harness", "codex", "--scope", "project", cwd=inside)["notes"]
    assert any("trust" in note for note in notes)

    outside = scratch.root / "loose"
    outside.mkdir()
    done = scratch.run("hooks", "install", "--harness", "claude-code", "--scope", "project", cwd=outside)
    assert done.code == 1 and done.json["error"]["code"] == "project-needs-checkout"


def test_codex_hooks_json_in_codex_home(scratch: Scratch) -> None:
    codex_home = scratch.root / "codex home"
    codex_home.mkdir()
    (codex_home / "hooks.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}})
    )
    reply = scratch.hooks("install", "--harness", "codex", env={"CODEX_HOME": str(codex_home)})
    data = json.loads((codex_home / "hooks.json").read_text())
    assert reply["path"] == str(codex_home / "hooks.json")
    jsonschema.validate(data, _schema("codex-hooks.schema.json"))
    assert data["hooks"]["Stop"][0] == {"hooks": [{"type": "command", "command": "notify"}]}
    assert _ours(data, "PreCompact")[0]["timeout"] == 30 and _ours(data, "Stop")[0]["timeout"] == 10
    [trust] = [note for note in reply["notes"] if "/hooks" in note]  # codex exec skips untrusted hooks silently
    assert "trusted_hash" in trust and "$CODEX_HOME/config.toml" in trust
    assert "--dangerously-bypass-hook-trust" in trust and "silently" in trust


def test_gemini_settings_take_its_own_event_names_and_milliseconds(scratch: Scratch) -> None:
    reply = scratch.hooks("install", "--harness", "gemini")
    data = json.loads((scratch.home / ".gemini" / "settings.json").read_text())
    jsonschema.validate(data, _schema("gemini-hooks.schema.json"))
    assert list(data["hooks"]) == ["PreCompress", "SessionStart", "AfterAgent", "BeforeAgent"]
    (pre,) = _ours(data, "PreCompress")
    assert pre["timeout"] == 30000 and pre["name"] == "wheypoint-precompress"
    assert pre["command"].endswith(" hook PreCompress --harness gemini")
    assert [e["event"] for e in reply["events"]] == ["PreCompress", "SessionStart", "AfterAgent", "BeforeAgent"]
    elsewhere = scratch.root / "gemini home"
    moved = scratch.hooks("status", "--harness", "gemini", env={"GEMINI_CLI_HOME": str(elsewhere)})
    assert moved["path"] == str(elsewhere / ".gemini" / "settings.json")


def test_a_symlinked_settings_file_keeps_its_link_and_its_permissions(scratch: Scratch) -> None:
    dotfiles = scratch.root / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "opus"}\n')
    dotfiles.chmod(0o600)
    link = scratch.home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)

    scratch.hooks("install", "--harness", "claude-code")

    assert link.is_symlink() and json.loads(dotfiles.read_text())["model"] == "opus"
    assert "hooks" in json.loads(dotfiles.read_text())
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o600


# ---- OpenCode: a plugin file


def test_opencode_plugin_is_written_checked_and_removed(scratch: Scratch) -> None:
    plugin = scratch.home / ".config" / "opencode" / "plugins" / "wheypoint.ts"
    reply = scratch.hooks("install", "--harness", "opencode")
    assert reply["path"] == str(plugin) and reply["changed"] is True and reply["backup"] is None
    text = plugin.read_text()
    assert text.startswith("// wheypoint OpenCode plugin.")
    assert text.count("export ") == 1 and "export const WheypointPlugin = async" in text  # one plugin function
    assert '"experimental.session.compacting": async (input, output)' in text and "output.context.push(" in text
    assert '"experimental.chat.system.transform": async (input, output)' in text and "output.system.push(" in text
    assert "__WHEYPOINT_" not in text
    assert [(e["event"], e["current"]) for e in reply["events"]] == [("PreCompact", True), ("SessionStart", True)]
    assert reply["events"][0]["command"].endswith(" hook PreCompact --harness opencode")

    assert scratch.hooks("install", "--harness", "opencode")["changed"] is False
    assert plugin.read_text() == text
    assert all(e["current"] for e in scratch.hooks("status", "--harness", "opencode")["events"])

    gone = scratch.hooks("uninstall", "--harness", "opencode")
    assert gone["changed"] is True and not plugin.exists()
    assert not any(e["installed"] for e in gone["events"])


def test_an_opencode_plugin_file_not_ours_is_never_replaced(scratch: Scratch) -> None:
    plugin = scratch.home / ".config" / "opencode" / "plugins" / "wheypoint.ts"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Mine = async () => ({})\n")
    for action in ("install", "uninstall"):
        done = scratch.run("hooks", action, "--harness", "opencode")
        assert done.code == 1 and done.json["error"]["code"] == "plugin-not-ours"
    assert plugin.read_text() == "export const Mine = async () => ({})\n"


NODE_RUN = """
const mod = await import(process.argv[2])
const hooks = await mod.WheypointPlugin({ directory: process.argv[3], worktree: process.argv[3] })
const system = async (sessionID, entries = ["base"]) => {
  const output = { system: [...entries] }
  await hooks["experimental.chat.system.transform"]({ sessionID, model: {} }, output)
  return output.system
}
const seen = {}
await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_new" } } } })
const child = { id: "ses_child", parentID: "ses_new" }
await hooks.event({ event: { type: "session.created", properties: { info: child } } })
// A session's first requests, two at once (the title's and the agent's), then the next turn.
seen.first = await Promise.all([system("ses_new"), system("ses_new")])
seen.next = await system("ses_new")
seen.already = await system("ses_new", ["base", "packet for ses_new from SessionStart"])
seen.child = await system("ses_child")
seen.resumed = await system("ses_old")
seen.noSession = await system(undefined)
// A compaction: its packet goes into the summary prompt, the compaction's own request gets no second copy,
// and every request after carries the fresh packet instead of the first one.
const output = { context: ["theirs"] }
await hooks["experimental.session.compacting"]({ sessionID: "ses_new" }, output)
seen.context = output.context
seen.summaryRequest = await system("ses_new")
seen.afterCompaction = await system("ses_new")
seen.afterAgain = await system("ses_new")
console.log(JSON.stringify({ exports: Object.keys(mod), hooks: Object.keys(hooks), seen }))
"""


def test_the_opencode_plugin_runs_its_command_and_adds_the_context(scratch: Scratch) -> None:
    node = node_program()
    seen = scratch.root / "payloads.jsonl"
    tool = scratch.root / "bin dir" / "wheypoint"
    tool.parent.mkdir()
    script = ("import json, sys; payload = json.load(sys.stdin); "
              f"open({str(seen)!r}, 'a').write(json.dumps({{'argv': sys.argv[1:], 'payload': payload}}) + '\\n'); "
              "print(json.dumps({'context': '' if payload['session_id'] == 'ses_old' else "
              "'packet for ' + payload['session_id'] + ' from ' + sys.argv[2], 'message': ''}))")  # fmt: skip
    tool.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -c {shlex.quote(script)} "$@"\n')
    tool.chmod(0o755)
    scratch.hooks("install", "--harness", "opencode", "--command", str(tool))
    module = scratch.root / "plugin.mjs"  # node 20 reads no TypeScript: the file is plain JavaScript on purpose
    shutil.copyfile(scratch.home / ".config" / "opencode" / "plugins" / "wheypoint.ts", module)
    runner = scratch.root / "run.mjs"
    runner.write_text(NODE_RUN)

    done = subprocess.run([node, str(runner), module.as_uri(), str(scratch.root)], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["exports"] == ["WheypointPlugin"]
    assert result["hooks"] == ["experimental.chat.system.transform", "experimental.session.compacting", "event"]
    start, fresh = "packet for ses_new from SessionStart", "packet for ses_new from PreCompact"
    assert result["seen"] == {
        "first": [["base", start], ["base", start]],  # one hook call for both, one copy in each request
        "next": ["base", start],  # each request of the session has it once: OpenCode rebuilds the system prompt
        "already": ["base", start],  # never a second copy
        "child": ["base"],  # a subagent's session: its parent has the packet
        "resumed": ["base"],  # the hook had nothing for that session
        "noSession": ["base"],
        "context": ["theirs", fresh],
        "summaryRequest": ["base"],  # the compaction's own request: the packet is in its prompt already
        "afterCompaction": ["base", fresh],
        "afterAgain": ["base", fresh],
    }
    calls = [json.loads(line) for line in seen.read_text().splitlines()]
    events = ("SessionStart", "SessionStart", "PreCompact")
    assert [call["argv"] for call in calls] == [["hook", event, "--harness", "opencode"] for event in events]
    assert calls[0]["payload"] == {"session_id": "ses_new", "cwd": str(scratch.root), "hook_event_name": "SessionStart",
                                   "source": "startup", "transcript_path": None}  # fmt: skip
    assert calls[1]["payload"]["session_id"] == "ses_old" and calls[1]["payload"]["source"] == "resume"
    assert calls[2]["payload"] == {"session_id": "ses_new", "cwd": str(scratch.root), "hook_event_name": "PreCompact",
                                   "trigger": "auto", "transcript_path": None}  # fmt: skip


NODE_PROCESS = """
const [module, directory, sessionID, compact] = process.argv.slice(2)
const mod = await import(module)
const hooks = await mod.WheypointPlugin({ directory, worktree: directory })
const output = { context: [] }
if (compact === "compact") await hooks["experimental.session.compacting"]({ sessionID }, output)
const requests = []
for (let n = 0; n < 2; n++) {
  const request = { system: ["base"] }
  await hooks["experimental.chat.system.transform"]({ sessionID, model: {} }, request)
  requests.push(request.system)
}
console.log(JSON.stringify({ context: output.context, requests }))
"""


def test_every_opencode_process_of_a_session_gets_the_packet_from_the_real_hook(scratch: Scratch) -> None:
    """OpenCode keeps no system prompt in a session's history: each process that continues a session (a TUI, each
    `opencode run --continue`) needs the packet again, and gets it once per request, never twice."""
    from test_transcripts_opencode import MAIN, build_db

    node = node_program()
    repo = make_repo(scratch.root / "repo")
    data = scratch.home / ".local" / "share"
    scratch.env["XDG_DATA_HOME"] = str(data)
    (data / "opencode").mkdir(parents=True)
    build_db(data / "opencode" / "opencode.db", MAIN)  # where OpenCode keeps its sessions
    installed = scratch.hooks("install", "--harness", "opencode")
    module = scratch.root / "plugin.mjs"
    shutil.copyfile(installed["path"], module)
    runner = scratch.root / "process.mjs"
    runner.write_text(NODE_PROCESS)

    def process(session: str, compact: str = "") -> dict[str, Any]:
        done = subprocess.run([node, str(runner), module.as_uri(), str(repo), session, compact], capture_output=True,
                              text=True, env=scratch.env, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    compacted = process(str(MAIN["id"]), "compact")  # the compaction's process
    (packet,) = compacted["context"]
    assert packet.startswith("wheypoint: the handoff of work ")
    assert compacted["requests"] == [["base"], ["base", packet]]  # the summary request, then the one after it
    for session in (str(MAIN["id"]), str(MAIN["id"]), "ses_new"):  # `--continue` twice, then a new session
        requests = process(session)["requests"]
        assert [len(r) for r in requests] == [2, 2] and requests[0] == requests[1], (session, scratch.log())
        assert requests[0][1].startswith("wheypoint: the handoff of work ") and requests[0][1].count("wheypoint:") == 1
    log = [json.loads(line) for line in (scratch.root / "store" / "hooks" / "hook.log").read_text().splitlines()]
    events = [(e["event"], e.get("source")) for e in log]
    assert events == [("PreCompact", None), *[("SessionStart", "resume")] * 3]
    assert not [e for e in log if "error" in e or "refused" in e or not e.get("chars")]


@pytest.mark.parametrize(
    "text",
    [
        b'{"model": "opus", "model": "sonnet"}\n',  # one value would be lost on the way back
        b'{"hooks": {}, "limits": {"x": NaN}}\n',  # not JSON: written back it breaks every strict reader
        b'{"limits": [Infinity, -Infinity]}\n',
    ],
)
def test_settings_that_strict_json_refuses_are_left_byte_for_byte(scratch: Scratch, text: bytes) -> None:
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(text)
    for action in ("install", "uninstall"):
        done = scratch.run("hooks", action, "--harness", "claude-code")
        assert done.code == 1 and done.json["error"]["code"] == "settings-unreadable", done.stdout
    assert settings.read_bytes() == text
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]


@pytest.mark.parametrize("dangling", ["file", "folder"])
def test_a_settings_link_to_nothing_is_refused_and_nothing_is_made(scratch: Scratch, dangling: str) -> None:
    target = scratch.root / "gone" / "deeper"
    if dangling == "file":
        (scratch.home / ".claude").mkdir()
        (scratch.home / ".claude" / "settings.json").symlink_to(target / "settings.json")
    else:
        (scratch.home / ".claude").symlink_to(target, target_is_directory=True)
    done = scratch.run("hooks", "install", "--harness", "claude-code")
    assert done.code == 1 and done.json["error"]["code"] == "settings-unexpected", done.stdout
    assert "does not exist" in done.json["error"]["message"]
    assert not (scratch.root / "gone").exists()


def test_a_fifo_as_settings_is_refused_without_blocking(scratch: Scratch) -> None:
    (scratch.home / ".claude").mkdir()
    os.mkfifo(scratch.home / ".claude" / "settings.json")
    done = scratch.run("hooks", "install", "--harness", "claude-code")  # the runner's timeout fails a hang
    assert done.code == 1 and done.json["error"]["code"] == "settings-unreadable", done.stdout


def test_uninstall_from_a_file_that_was_empty_before_leaves_it_empty_again(scratch: Scratch) -> None:
    """The person's file held `{}` before the install (so a backup was made and the file stays): the uninstall
    writes it back without our hooks, though nothing else is left in it."""
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{}\n")
    scratch.hooks("install", "--harness", "claude-code")
    assert "hooks" in json.loads(settings.read_text())
    gone = scratch.hooks("uninstall", "--harness", "claude-code")
    assert gone["changed"] is True and json.loads(settings.read_text()) == {}


def test_uninstall_where_nothing_was_installed_leaves_the_persons_empty_file_alone(scratch: Scratch) -> None:
    """A settings file that is the person's `{}`, with no hooks of ours ever put in it: nothing to remove, so the
    file stays as it was, byte for byte, and the reply says nothing changed."""
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{}\n")
    gone = scratch.hooks("uninstall", "--harness", "claude-code")
    assert gone["changed"] is False, gone
    assert settings.read_text() == "{}\n"


def test_hooks_without_a_harness_is_told_that_it_is_required(scratch: Scratch) -> None:
    for action in ("install", "uninstall", "status"):
        done = scratch.run("hooks", action, "--format", "json")
        error = done.json["error"]
        assert done.code == 2 and error["code"] == "usage" and "is required" in error["message"], done.stdout
        assert "claude-code" in error["message"] and error.get("parameter") == "harness", error


# The OS refusing to unlink the file (as root, no folder mode stops it): os.unlink fails in a real CLI process.
_UNLINK_REFUSED = """
import errno, os, sys
def refuse(path, *args, **kwargs):
    raise PermissionError(errno.EPERM, "Operation not permitted", path)
os.unlink = os.remove = refuse
from wheypoint.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_uninstall_that_cannot_remove_the_file_it_made_is_refused_and_leaves_it(scratch: Scratch) -> None:
    """The file held only wheypoint's hooks (no file before them): removing it fails, so the reply is a coded
    refusal naming the file, and the file is still there, hooks and all."""
    settings = scratch.home / ".claude" / "settings.json"
    scratch.hooks("install", "--harness", "claude-code")
    before = settings.read_bytes()
    done = scratch.run("uninstall", "--harness", "claude-code", "--format", "json",
                       program=[sys.executable, "-c", _UNLINK_REFUSED, "hooks"])  # fmt: skip
    error = done.json["error"]
    assert done.code == 1 and error["code"] == "settings-unwritable", done.stdout + done.stderr
    assert "cannot remove" in error["message"] and str(settings) in error["message"], error
    assert settings.read_bytes() == before
