"""OpenCode's side of `hooks`: the plugin file (opencode_plugin.ts filled in with the commands) written or removed.

OpenCode runs plugins, not command hooks: every `*.ts`/`*.js` file in a `plugin/` or `plugins/` folder of its
config folders is loaded at start (anomalyco/opencode packages/opencode/src/config/plugin.ts). The file is
wholly wheypoint's, recognised by its first line; a file of that name without it is refused, never replaced.
"""

from __future__ import annotations

import json
import os

from wheypoint.hooks import settings as files
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PLUGIN_NAME = "wheypoint.ts"
TEMPLATE = "opencode_plugin.ts"
MARKER = "// wheypoint OpenCode plugin."
# The events the plugin bridges, with the time it lets each command run (milliseconds, enforced by the plugin).
EVENTS = (("PreCompact", 30000), ("SessionStart", 10000))
COMMANDS_AT = "const COMMANDS = "


def render(commands: dict[str, str]) -> str:
    """The plugin's text: the template with the commands and their time limits written in as JSON."""
    from importlib.resources import files as resources

    template = resources("wheypoint.hooks").joinpath(TEMPLATE).read_text(encoding="utf-8")
    timeouts = {event: limit for event, limit in EVENTS}
    return template.replace("__WHEYPOINT_COMMANDS__", json.dumps(commands, ensure_ascii=False)).replace(
        "__WHEYPOINT_TIMEOUTS__", json.dumps(timeouts)
    )


def read_plugin(path: str) -> tuple[str | None, dict[str, str] | None]:
    """(the file's text or None when absent, the commands written in it or None when the file is not ours)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(files.MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        raise Refusal("settings-unreadable", f"cannot read {path}: {exc}; it was left as it is",
                      details={"path": path}) from None  # fmt: skip
    if not text.startswith(MARKER):
        return text, None
    start = text.find(COMMANDS_AT)
    try:
        commands, _ = json.JSONDecoder().raw_decode(text, start + len(COMMANDS_AT)) if start >= 0 else ({}, 0)
    except ValueError:
        commands = {}
    return text, {k: v for k, v in commands.items() if isinstance(v, str)} if isinstance(commands, dict) else {}


def apply(path: str, action: str, commands: dict[str, str]) -> dict[str, Any]:
    """Install, remove or report the plugin file: the `changed`, `backup` and `events` of the reply."""
    text, found = read_plugin(path)
    wanted = render(commands)
    if action != "status" and text is not None and found is None:
        raise Refusal("plugin-not-ours", f"{path} exists and was not written by wheypoint; it was left as it is",
                      details={"path": path})  # fmt: skip
    changed = False
    if action == "install" and text != wanted:
        try:
            files.write_atomic(path, wanted.encode("utf-8"), like=path if text is not None else None)
        except OSError as exc:
            raise Refusal("settings-unwritable", f"cannot write {path}: {exc.strerror or exc}",
                          details={"path": path}) from None  # fmt: skip
        text, found, changed = wanted, dict(commands), True
    elif action == "uninstall" and found is not None:
        files.remove(path)
        text, found, changed = None, None, True
    events = []
    for event, _ in EVENTS:
        command = (found or {}).get(event)
        current = command is not None and command == commands[event] and text == wanted
        events.append({"event": event, "installed": command is not None, "current": current, "command": command})
    return {"changed": changed, "backup": None, "events": events}


def plugin_path(config_home: str, scope_root: str | None) -> str:
    """`<checkout>/.opencode/plugins/wheypoint.ts` for a project, else `<config home>/opencode/plugins/...`."""
    if scope_root is not None:
        return os.path.join(scope_root, ".opencode", "plugins", PLUGIN_NAME)
    return os.path.join(config_home, "opencode", "plugins", PLUGIN_NAME)
