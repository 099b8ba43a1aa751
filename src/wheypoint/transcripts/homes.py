"""Where each harness keeps its sessions on this machine, worked out from the environment alone.

Kept apart from the readers so that a caller who only needs to know where to look (the live-session lookup
runs on every checkpoint) does not pay for importing a reader.
"""

from __future__ import annotations

import os

from wheypoint.transcripts.model import plain_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def claude_roots(environ: Mapping[str, str]) -> list[str]:
    """Claude Code's config folders: CLAUDE_CONFIG_DIR (a comma-separated list), else ~/.claude and ~/.config/claude."""
    home = environ.get("HOME")

    def expand(entry: str) -> str:
        if home and (entry == "~" or entry.startswith("~/")):
            return os.path.join(home, entry[2:])
        return entry

    configured = environ.get("CLAUDE_CONFIG_DIR", "")
    entries = [e.strip() for e in configured.split(",") if e.strip()]
    if entries:
        return [plain_path(expand(e)) for e in entries]
    if not home:
        return []
    return [plain_path(os.path.join(home, ".claude")), plain_path(os.path.join(home, ".config", "claude"))]


def claude_folder_name(cwd: str) -> str:
    """The folder under `projects/` Claude Code files a session started in `cwd` under.

    Every character outside [A-Za-z0-9] becomes `-`. The mapping loses information, so it is only ever used
    to look in one place; which checkout a session belongs to is read from the `cwd` inside the transcript.
    """
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def codex_home(environ: Mapping[str, str]) -> str | None:
    """`$CODEX_HOME`, else `~/.codex`."""
    home = environ.get("CODEX_HOME") or (os.path.join(environ["HOME"], ".codex") if environ.get("HOME") else None)
    return plain_path(home) if home else None


def gemini_tmp(environ: Mapping[str, str]) -> str | None:
    """Gemini CLI's per-project folder: `$GEMINI_CLI_HOME/.gemini/tmp` (else under $HOME).

    GEMINI_CLI_HOME naming the `.gemini` folder itself is accepted too, when the first spelling does not exist.
    """
    home = environ.get("GEMINI_CLI_HOME") or environ.get("HOME")
    if not home:
        return None
    tmp = plain_path(os.path.join(home, ".gemini", "tmp"))
    if not os.path.isdir(tmp) and environ.get("GEMINI_CLI_HOME"):
        tmp = plain_path(os.path.join(environ["GEMINI_CLI_HOME"], "tmp"))
    return tmp


def opencode_data(environ: Mapping[str, str]) -> str | None:
    """OpenCode's data folder: `$XDG_DATA_HOME/opencode`, else `$HOME/.local/share/opencode`."""
    xdg = environ.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        return plain_path(os.path.join(xdg, "opencode"))
    home = environ.get("HOME", "")
    return plain_path(os.path.join(home, ".local", "share", "opencode")) if home else None


def opencode_databases(environ: Mapping[str, str]) -> list[str]:
    """Every OpenCode database on this machine: `OPENCODE_DB`, `opencode.db`, `opencode-<channel>.db`."""
    base = opencode_data(environ)
    found: list[str] = []
    override = environ.get("OPENCODE_DB", "")
    if override and override != ":memory:":
        path = override if os.path.isabs(override) else (os.path.join(base, override) if base else None)
        if path is not None and os.path.isfile(path):
            found.append(plain_path(path))
    if base is not None:
        try:
            names = sorted(entry.name for entry in os.scandir(base) if entry.is_file())
        except OSError:
            names = []
        for name in names:
            if name == "opencode.db" or (name.startswith("opencode-") and name.endswith(".db")):
                path = os.path.join(base, name)
                if path not in found:
                    found.append(path)
    return found
