"""`doctor`'s MCP, skill and plugin registrations: what each harness would load of wheypoint, from its own files.

Where each harness reads them (from its installed package: Claude Code 2.1.197, Codex 0.171.0, Gemini CLI
0.61.0, OpenCode 1.18.33; see docs/hooks.md), for the user and for this checkout:

- claude-code: MCP servers in the global config, `<claude dir>/.config.json` when it exists, else
  `$CLAUDE_CONFIG_DIR/.claude.json` (else `~/.claude.json`): `mcpServers` (user) and
  `projects["<checkout>"].mcpServers` (local); the checkout's `.mcp.json` (project). Skills in
  `<claude dir>/skills/` and `<checkout>/.claude/skills/`; plugins in `<claude dir>/plugins/installed_plugins.json`
  (`{"plugins": {"<name>@<marketplace>": [{"installPath"}]}}`), each with its `hooks/hooks.json`, `.mcp.json`
  and `skills/`.
- codex: `[mcp_servers.<name>]` in `$CODEX_HOME/config.toml` and `<checkout>/.codex/config.toml`; skills in
  `$CODEX_HOME/skills/`, `~/.agents/skills/`, `<checkout>/.codex/skills/`, `<checkout>/.agents/skills/`.
- gemini: `mcpServers` in `<gemini dir>/settings.json` and `<checkout>/.gemini/settings.json`; extensions in
  `<gemini dir>/extensions/<name>/gemini-extension.json` (their `mcpServers`, `hooks/hooks.json` and `skills/`);
  skills in `<gemini dir>/skills/`,
  `<gemini home>/.agents/skills/`, `<checkout>/.gemini/skills/`, `<checkout>/.agents/skills/`.
- opencode: `mcp` (or the V2 `mcp.servers`) in `<config>/opencode/opencode.json(c)` or `config.json`, and the
  checkout's `opencode.json(c)` and `.opencode/opencode.json(c)`; skills in `~/.claude/skills/`, `~/.agents/skills/`,
  `<config>/opencode/skill(s)/`, and the checkout's `.claude/skills/`, `.agents/skills/`, `.opencode/skill(s)/`.

An entry is wheypoint's when it is named wheypoint or its command names wheypoint; a skill when its folder or
its SKILL.md's `name:` is wheypoint. A file the harness could not read either is a finding.
"""

from __future__ import annotations

import json
import os

from wheypoint.app.doctor_store import finding
from wheypoint.app.harness_files import MAX_SETTINGS_BYTES, config_home, home, user_folder, without_comments
from wheypoint.model.errors import Refusal
from wheypoint.model.regular import open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.app.context import Context

SKILL_DEPTH = 3  # folders below a skills root searched for SKILL.md


def registrations(ctx: Context, harness: str, problems: list[dict[str, Any]]) -> dict[str, Any]:
    """wheypoint's MCP servers, skills and plugins as `harness` would see them, and every file looked in."""
    seen = _Seen(problems, harness)
    root = ctx.checkout.toplevel if ctx.checkout else None
    mine = user_folder(ctx, harness)
    if harness == "claude-code":
        claude_json = os.path.join(mine, ".config.json")
        if not os.path.exists(claude_json):
            claude_json = os.path.join(ctx.environ.get("CLAUDE_CONFIG_DIR") or home(ctx), ".claude.json")
        data = seen.json(claude_json)
        seen.servers(data.get("mcpServers"), claude_json, "user")
        projects = data.get("projects")
        if root and isinstance(projects, dict) and isinstance(projects.get(root), dict):
            seen.servers(projects[root].get("mcpServers"), claude_json, "local")
        seen.skills(os.path.join(mine, "skills"), "user")
        plugins = os.path.join(mine, "plugins", "installed_plugins.json")
        listed = seen.json(plugins).get("plugins")
        for name, installs in listed.items() if isinstance(listed, dict) else ():
            if "wheypoint" in name.lower():
                copies = installs if isinstance(installs, list) else []  # {"installPath", ...} per copy
                folders = [c.get("installPath") for c in copies if isinstance(c, dict)]
                found = [seen.plugin_hooks(folder, harness) for folder in folders if isinstance(folder, str)]
                seen.add("plugin", name, plugins, "user", hooks=[h for h in found if h])
                for folder in [f for f in folders if isinstance(f, str)]:  # what the plugin brings with it
                    mcp_json = os.path.join(folder, ".mcp.json")
                    seen.servers(seen.json(mcp_json).get("mcpServers"), mcp_json, "plugin")
                    seen.skills(os.path.join(folder, "skills"), "plugin")
        if root:
            mcp_json = os.path.join(root, ".mcp.json")
            seen.servers(seen.json(mcp_json).get("mcpServers"), mcp_json, "project")
            seen.skills(os.path.join(root, ".claude", "skills"), "project")
    elif harness == "codex":
        for path, scope in [(os.path.join(mine, "config.toml"), "user")] + (
            [(os.path.join(root, ".codex", "config.toml"), "project")] if root else []
        ):
            seen.servers(seen.toml(path).get("mcp_servers"), path, scope)
        seen.skills(os.path.join(mine, "skills"), "user")
        seen.skills(os.path.join(home(ctx), ".agents", "skills"), "user")
        if root:
            seen.skills(os.path.join(root, ".codex", "skills"), "project")
            seen.skills(os.path.join(root, ".agents", "skills"), "project")
    elif harness == "gemini":
        path = os.path.join(mine, "settings.json")
        seen.servers(seen.json(path, jsonc=True).get("mcpServers"), path, "user")
        extensions = os.path.join(mine, "extensions")
        for name in _folders(extensions):
            manifest = os.path.join(extensions, name, "gemini-extension.json")
            data = seen.json(manifest)
            if "wheypoint" in f"{name} {data.get('name', '')}".lower():
                own = seen.plugin_hooks(os.path.join(extensions, name), harness)
                seen.add("extension", str(data.get("name") or name), manifest, "user", hooks=[own] if own else [])
            seen.servers(data.get("mcpServers"), manifest, "plugin")
            seen.skills(os.path.join(extensions, name, "skills"), "plugin")
        seen.skills(os.path.join(mine, "skills"), "user")
        seen.skills(os.path.join(os.path.dirname(mine), ".agents", "skills"), "user")
        if root:
            path = os.path.join(root, ".gemini", "settings.json")
            seen.servers(seen.json(path, jsonc=True).get("mcpServers"), path, "project")
            seen.skills(os.path.join(root, ".gemini", "skills"), "project")
            seen.skills(os.path.join(root, ".agents", "skills"), "project")
    else:
        folder = os.path.join(config_home(ctx), "opencode")
        places = [(os.path.join(folder, name), "user") for name in ("opencode.json", "opencode.jsonc", "config.json")]
        if root:
            places += [(os.path.join(root, name), "project") for name in ("opencode.json", "opencode.jsonc")]
            places += [(os.path.join(root, ".opencode", n), "project") for n in ("opencode.json", "opencode.jsonc")]
        for path, scope in places:
            mcp = seen.json(path, jsonc=True).get("mcp")
            servers = mcp.get("servers") if isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict) else mcp
            seen.servers(servers, path, scope)
        for base, scope in [(home(ctx), "user"), (folder, "user")] + ([(root, "project")] if root else []):
            subfolders = ["skill", "skills"] if base == folder else [".claude/skills", ".agents/skills"]
            if base == root:
                subfolders += [".opencode/skill", ".opencode/skills"]
            for sub in subfolders:
                seen.skills(os.path.join(base, sub), scope)
    return {"mcp_servers": seen.found["mcp"], "skills": seen.found["skill"],
            "plugins": seen.found["plugin"] + seen.found["extension"], "looked_in": seen.looked}  # fmt: skip


class _Seen:
    """What one harness's files hold of wheypoint, and where it looked."""

    def __init__(self, problems: list[dict[str, Any]], harness: str) -> None:
        self.problems = problems
        self.harness = harness
        self.found: dict[str, list[dict[str, Any]]] = {"mcp": [], "skill": [], "plugin": [], "extension": []}
        self.looked: list[str] = []

    def add(self, kind: str, name: str, path: str, scope: str, **facts: Any) -> None:
        self.found[kind].append({"name": name, "path": path, "scope": scope, **facts})

    def json(self, path: str, jsonc: bool = False) -> dict[str, Any]:
        self.looked.append(path)
        try:
            with open_regular(path) as handle:  # a FIFO or device in its place is refused, never waited on
                raw = handle.read(MAX_SETTINGS_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        except OSError as exc:
            self._unreadable(path, exc.strerror or str(exc))
            return {}
        try:
            text = raw.decode("utf-8-sig")
            data = json.loads(without_comments(text) if jsonc else text) if text.strip() else {}
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            self._unreadable(path, f"not valid JSON ({exc})")
            return {}
        if not isinstance(data, dict):
            self._unreadable(path, f"a JSON {type(data).__name__}, not an object")
            return {}
        return data

    def toml(self, path: str) -> dict[str, Any]:
        from wheypoint.app.tomlread import TomlError, read_file

        self.looked.append(path)
        try:
            return read_file(path) or {}
        except TomlError as exc:
            self._unreadable(path, f"not TOML this reader takes ({exc})", "codex-config-unreadable")
            return {}

    def _unreadable(self, path: str, why: str, code: str = "settings-unreadable") -> None:
        self.problems.append(finding(code, f"{path} cannot be read: {why}", path=path, harness=self.harness))

    def servers(self, servers: Any, path: str, scope: str) -> None:
        if not isinstance(servers, dict):
            return
        for name, server in servers.items():
            server = server if isinstance(server, dict) else {}
            command = server.get("command")
            args: list[Any] = server["args"] if isinstance(server.get("args"), list) else []
            words = [command] if isinstance(command, str) else command if isinstance(command, list) else []
            words = [str(word) for word in [*words, *args]]
            if name == "wheypoint" or "wheypoint" in " ".join(words).lower():
                from wheypoint.model.replies import scrub_text

                disabled = server.get("enabled") is False or server.get("disabled") is True
                shown = [scrub_text(word) for word in words]  # a server's arguments may carry a token
                self.add("mcp", str(name), path, scope, command=shown, enabled=not disabled)

    def plugin_hooks(self, folder: str, harness: str) -> dict[str, Any] | None:
        """Our hooks in a plugin's (or extension's) `hooks/hooks.json`: its path and the events it has."""
        from wheypoint.app.harness_files import EVENTS, Settings, find_ours

        path = os.path.join(folder, "hooks", "hooks.json")
        data = self.json(path)
        if not data:
            return None
        settings = Settings(path, data, None)
        try:
            events = [event for event, _ in EVENTS[harness] if find_ours(settings, event, harness)]
        except Refusal as refusal:
            self._unreadable(path, refusal.message, refusal.code)
            return None
        return {"path": path, "events": events}

    def skills(self, root: str, scope: str) -> None:
        self.looked.append(root)
        for path in _skill_files(root):
            name = os.path.basename(os.path.dirname(path))
            if name == "wheypoint" or _skill_name(path) == "wheypoint":
                self.add("skill", _skill_name(path) or name, path, scope)


def _folders(path: str) -> list[str]:
    try:
        return sorted(name for name in os.listdir(path) if os.path.isdir(os.path.join(path, name)))
    except OSError:
        return []


def _skill_files(root: str, depth: int = 0) -> list[str]:
    found = []
    for name in _folders(root):
        folder = os.path.join(root, name)
        if os.path.isfile(os.path.join(folder, "SKILL.md")):
            found.append(os.path.join(folder, "SKILL.md"))
        elif depth < SKILL_DEPTH:
            found += _skill_files(folder, depth + 1)
    return found


def _skill_name(path: str) -> str | None:
    """The `name:` of a SKILL.md's front matter, if it has one."""
    try:
        with open_regular(path) as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return None
    if not head.startswith("---"):
        return None
    for line in head.splitlines()[1:]:
        if line.strip() == "---":
            break
        key, _, value = line.partition(":")
        if key.strip() == "name":
            return value.strip().strip("'\"") or None
    return None
