"""OpenCode's side of `hooks`: the plugin file (opencode_plugin.ts filled in with the commands) written or removed.

OpenCode runs plugins, not command hooks: every `*.ts`/`*.js` file in a `plugin/` or `plugins/` folder of its
config folders is loaded at start (anomalyco/opencode packages/opencode/src/config/plugin.ts). The file is
wholly wheypoint's, recognised by its first line; a file of that name without it is refused, never replaced.
"""

from __future__ import annotations

from wheypoint.app.harness_files import PLUGIN_EVENTS, read_plugin, render_plugin
from wheypoint.hooks import settings as files
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EVENTS = PLUGIN_EVENTS  # the events the plugin bridges, with their time limits (app/harness_files.py)


def apply(path: str, action: str, commands: dict[str, str]) -> dict[str, Any]:
    """Install, remove or report the plugin file: the `changed`, `backup` and `events` of the reply."""
    text, found = read_plugin(path)
    wanted = render_plugin(commands)
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
