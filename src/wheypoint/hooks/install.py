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

from wheypoint.app.harness_files import (
    CONFIG_DIRS,
    EVENTS,
    HARNESSES,
    SCOPES,
    default_runner,
    handler,
    hook_command,
    quote,
    target_path,
)
from wheypoint.hooks import settings as store
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.app.context import Context

__all__ = ["CONFIG_DIRS", "EVENTS", "HARNESSES", "SCOPES", "hooks_command", "quote", "target_path"]

ACTIONS = ("install", "uninstall", "status")
NOTES = {
    "claude-code": "Claude Code reads hooks when a session starts: restart running sessions (/hooks lists them).",
    "codex": "Codex runs a new or changed hook only once you trust it, and skips an untrusted one silently (codex "
    "exec too, with no warning): run `codex` once, open /hooks and trust wheypoint's hooks (Codex writes "
    '[hooks.state."<file>:<event>:<group>:<index>"] trusted_hash = ... to $CODEX_HOME/config.toml); for automation '
    "that vets its hooks, `codex exec --dangerously-bypass-hook-trust` runs them without it.",
    "gemini": "Gemini CLI reads hooks when it starts: restart it (/hooks panel lists them).",
    "opencode": "OpenCode loads plugins when it starts: restart it.",
}
PROJECT_NOTES = {
    "codex": "Codex loads a project's hooks only when it trusts the project's .codex folder.",
    "gemini": "Gemini CLI runs project hooks only in a trusted folder, and warns once when they are new.",
}


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


# ---- what runs (where each file is, and the handler written: app/harness_files.py)


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
