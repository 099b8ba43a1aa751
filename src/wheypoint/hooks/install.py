"""`wheypoint hooks install|uninstall|status`: wheypoint's hooks in a harness's own settings, or OpenCode's plugin.

Where each harness reads hooks, and the facts each choice rests on (with the harness source that says so),
are in docs/hooks.md. For the user (`--scope user`, the default) or for one checkout (`--scope project`):

- claude-code: `$CLAUDE_CONFIG_DIR` (else `~/.claude`) `/settings.json`, or `<checkout>/.claude/settings.json`;
  PreCompact (30 s), SessionStart, Stop, UserPromptSubmit (10 s each).
- codex: `$CODEX_HOME` (else `~/.codex`) `/hooks.json`, or `<checkout>/.codex/hooks.json`; the same four events.
- gemini: `$GEMINI_CLI_HOME` (else `~`) `/.gemini/settings.json`, or `<checkout>/.gemini/settings.json`;
  PreCompress (30000 ms), SessionStart, AfterAgent, BeforeAgent (10000 ms each: Gemini counts milliseconds).
- opencode: `$XDG_CONFIG_HOME` (else `~/.config`) `/opencode/plugins/wheypoint.ts`, or
  `<checkout>/.opencode/plugins/wheypoint.ts`: a plugin that calls PreCompact and SessionStart (opencode.py).

Each hook runs `<runner> hook <Event> --harness <harness>`, the runner being this runtime by absolute path
(`"<python>" "<wheypoint.pyz>"` from the zipapp, else `"<python>" -m wheypoint`) or `--command`.
"""

from __future__ import annotations

import os
import sys

from wheypoint.hooks import settings as store
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.app.context import Context

HARNESSES = ("claude-code", "codex", "gemini", "opencode")
SCOPES = ("user", "project")
ACTIONS = ("install", "uninstall", "status")
# Each harness's events as it names them, with the time it gives the hook: seconds, but milliseconds for Gemini.
EVENTS: dict[str, tuple[tuple[str, int], ...]] = {
    "claude-code": (("PreCompact", 30), ("SessionStart", 10), ("Stop", 10), ("UserPromptSubmit", 10)),
    "codex": (("PreCompact", 30), ("SessionStart", 10), ("Stop", 10), ("UserPromptSubmit", 10)),
    "gemini": (("PreCompress", 30000), ("SessionStart", 10000), ("AfterAgent", 10000), ("BeforeAgent", 10000)),
}
NOTES = {
    "claude-code": "Claude Code reads hooks when a session starts: restart running sessions (/hooks lists them).",
    "codex": "Codex runs a new or changed hook only once you trust it, and skips an untrusted one silently: "
    "open /hooks in Codex and trust wheypoint's hooks.",
    "gemini": "Gemini CLI reads hooks when it starts: restart it (/hooks panel lists them).",
    "opencode": "OpenCode loads plugins when it starts: restart it.",
}
PROJECT_NOTES = {
    "codex": "Codex loads a project's hooks only when it trusts the project's .codex folder.",
    "gemini": "Gemini CLI runs project hooks only in a trusted folder, and warns once when they are new.",
}
CONFIG_DIRS = {
    "claude-code": (".claude", "settings.json"), "codex": (".codex", "hooks.json"),
    "gemini": (".gemini", "settings.json"),
}  # fmt: skip


def hooks_command(
    ctx: Context, action: str, *, harness: str | None, scope: str | None = None, command: str | None = None
) -> dict[str, Any]:
    """Install, remove or report wheypoint's hooks for one harness: the reply (see docs/hooks.md)."""
    if action not in ACTIONS:
        raise Refusal("usage", f"takes install, uninstall or status, not {action!r}", usage=True, parameter="action")
    if harness is None:
        raise Refusal("usage", f"is required: it takes {', '.join(HARNESSES)}", usage=True, parameter="harness")
    if harness not in HARNESSES:
        raise Refusal("unknown-harness", f"takes {', '.join(HARNESSES)}, not {harness!r}", usage=True,
                      parameter="harness")  # fmt: skip
    scope = scope or "user"
    if scope not in SCOPES:
        raise Refusal("usage", f"takes user or project, not {scope!r}", usage=True, parameter="scope")
    runner = runner_from(ctx, command) if command is not None else default_runner()
    path = target_path(ctx, harness, scope)
    if harness == "opencode":
        from wheypoint.hooks import opencode

        commands = {event: hook_command(runner, event, harness) for event, _ in opencode.EVENTS}
        outcome = opencode.apply(path, action, commands)
    else:
        outcome = _apply_settings(path, action, harness, runner)
    notes = [NOTES[harness]] + ([PROJECT_NOTES[harness]] if scope == "project" and harness in PROJECT_NOTES else [])
    return {"harness": harness, "scope": scope, "path": path, **outcome, "notes": notes}


def _apply_settings(path: str, action: str, harness: str, runner: str) -> dict[str, Any]:
    settings = store.read_settings(path)
    wanted = {event: handler(harness, event, limit, hook_command(runner, event, harness))
              for event, limit in EVENTS[harness]}  # fmt: skip
    changed = removed = False
    backup = store.backup_path(path) if os.path.exists(store.backup_path(path)) else None
    if action != "status":
        for event, entry in wanted.items():
            if action == "install":
                store.put_ours(settings, event, harness, entry)
            else:
                removed = store.drop_ours(settings, event, harness) or removed
        text = store.render(settings)
        if removed and not settings.data and backup is None:
            store.remove(path)  # it held only our hooks, and there was no file before them (no backup was due)
            changed = True
        elif text != settings.text and (settings.text is not None or settings.data):
            backup = store.save(settings, text)
            changed = True
    events = []
    for event, entry in wanted.items():
        found = store.find_ours(settings, event, harness)
        command = found.get("command") if found else None
        events.append({"event": event, "installed": found is not None, "current": found == entry, "command": command})
    return {"changed": changed, "backup": backup, "events": events}


def handler(harness: str, event: str, limit: int, command: str) -> dict[str, Any]:
    """The hook handler wheypoint writes: a command with its time limit (Gemini's also named, for /hooks)."""
    named = {"name": f"wheypoint-{event.lower()}"} if harness == "gemini" else {}
    return {**named, "type": "command", "command": command, "timeout": limit}


def hook_command(runner: str, event: str, harness: str) -> str:
    return f"{runner} hook {event} --harness {harness}"


# ---- where


def target_path(ctx: Context, harness: str, scope: str) -> str:
    """The settings file (or OpenCode plugin file) a harness reads for this scope."""
    environ = ctx.environ
    root: str | None = None
    if scope == "project":
        checkout = ctx.checkout
        if checkout is None:
            raise Refusal("project-needs-checkout",
                          f"--scope project writes into a git checkout's own folder, and {ctx.cwd} is in none; "
                          "run it inside the checkout", details={"cwd": ctx.cwd})  # fmt: skip
        root = checkout.toplevel
    if harness == "opencode":
        from wheypoint.hooks.opencode import plugin_path

        return plugin_path(environ.get("XDG_CONFIG_HOME") or os.path.join(_home(ctx), ".config"), root)
    folder, name = CONFIG_DIRS[harness]
    if root is not None:
        return os.path.join(root, folder, name)
    if harness == "claude-code" and environ.get("CLAUDE_CONFIG_DIR"):
        return os.path.join(environ["CLAUDE_CONFIG_DIR"], name)
    if harness == "codex" and environ.get("CODEX_HOME"):
        return os.path.join(environ["CODEX_HOME"], name)
    if harness == "gemini" and environ.get("GEMINI_CLI_HOME"):
        return os.path.join(environ["GEMINI_CLI_HOME"], folder, name)
    return os.path.join(_home(ctx), folder, name)


def _home(ctx: Context) -> str:
    home = ctx.environ.get("HOME") or ctx.environ.get("USERPROFILE") or os.path.expanduser("~")
    return os.path.abspath(home)


# ---- what runs


def default_runner() -> str:
    """This runtime by absolute path: `"<python>" "<wheypoint.pyz>"` in the zipapp, else `"<python>" -m wheypoint`."""
    import wheypoint

    python = quote(sys.executable or "python3")
    if wheypoint.RUNNING_ARCHIVE:
        return f"{python} {quote(wheypoint.RUNNING_ARCHIVE)}"
    return f"{python} -m wheypoint"


def runner_from(ctx: Context, given: str) -> str:
    """`--command`: an executable's path (quoted here), or shell text used as written; it must name wheypoint."""
    text = given.strip()
    if not text:
        raise Refusal("usage", "takes the command that runs wheypoint", usage=True, parameter="command")
    path = os.path.join(ctx.cwd, os.path.expanduser(text))
    if os.path.isfile(path):
        text = quote(os.path.abspath(path))
    if "wheypoint" not in text.lower():
        raise Refusal("usage", "takes a command naming wheypoint (its path, module or zipapp), so that its hooks "
                      "are found again", usage=True, parameter="command")  # fmt: skip
    return text


def quote(arg: str, windows: bool | None = None) -> str:
    """One word for the shell a harness runs hooks in: POSIX quoting, or double quotes on Windows."""
    if windows if windows is not None else os.name == "nt":
        return f'"{arg}"' if not arg or any(c in arg for c in " \t&()[]{}^=;!'+,`~%") else arg
    import shlex

    return shlex.quote(arg)


def describe(reply: dict[str, Any]) -> str:
    """A readable form of a reply, for a terminal."""
    lines = [f"{reply['harness']} ({reply['scope']}): {reply['path']}" + ("  [changed]" if reply["changed"] else "")]
    for event in reply["events"]:
        state = "current" if event["current"] else "installed, not current" if event["installed"] else "not installed"
        lines.append(f"  {event['event']}: {state}" + (f"  {event['command']}" if event["command"] else ""))
    if reply["backup"]:
        lines.append(f"  backup: {reply['backup']}")
    lines += [f"  note: {note}" for note in reply["notes"]]
    return "\n".join(lines)
