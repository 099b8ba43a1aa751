"""Where each harness keeps wheypoint's hooks and which entries are wheypoint's: one definition for hooks/ and doctor.

`hooks install|uninstall|status` (hooks/install.py, settings.py, opencode.py) writes these files and `doctor`
(app/doctor.py) reads them, so both take from here: the harnesses and their events, the file each reads for a
scope, the test that a handler is wheypoint's own, the handler `hooks install` writes, and the strict reader of
a JSON settings file. Why each place is the right one is in docs/hooks.md.
"""

from __future__ import annotations

import json
import os
import sys

from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.app.context import Context

HARNESSES = ("claude-code", "codex", "gemini", "opencode")
SCOPES = ("user", "project")
# Each harness's events as it names them, with the time it gives the hook: seconds, but milliseconds for Gemini.
EVENTS: dict[str, tuple[tuple[str, int], ...]] = {
    "claude-code": (("PreCompact", 30), ("SessionStart", 10), ("Stop", 10), ("UserPromptSubmit", 10)),
    "codex": (("PreCompact", 30), ("SessionStart", 10), ("Stop", 10), ("UserPromptSubmit", 10)),
    "gemini": (("PreCompress", 30000), ("SessionStart", 10000), ("AfterAgent", 10000), ("BeforeAgent", 10000)),
}
CONFIG_DIRS = {
    "claude-code": (".claude", "settings.json"), "codex": (".codex", "hooks.json"),
    "gemini": (".gemini", "settings.json"),
}  # fmt: skip
MAX_SETTINGS_BYTES = 4 * 1024 * 1024  # a settings file past this is not one a harness wrote

# OpenCode runs a plugin file, wholly wheypoint's, recognised by its first line (hooks/opencode.py writes it).
PLUGIN_NAME = "wheypoint.ts"
PLUGIN_TEMPLATE = "opencode_plugin.ts"  # a data file of the wheypoint.hooks package
PLUGIN_MARKER = "// wheypoint OpenCode plugin."
# The events the plugin bridges, with the time it lets each command run (milliseconds, enforced by the plugin).
PLUGIN_EVENTS = (("PreCompact", 30000), ("SessionStart", 10000))
COMMANDS_AT = "const COMMANDS = "


# ---- where


def home(ctx: Context) -> str:
    """The home folder the harnesses read: `$HOME` (else `$USERPROFILE`, else the OS's idea of it)."""
    found = ctx.environ.get("HOME") or ctx.environ.get("USERPROFILE") or os.path.expanduser("~")
    return os.path.abspath(found)


def config_home(ctx: Context) -> str:
    """`$XDG_CONFIG_HOME`, else `~/.config` (OpenCode's config folder is `opencode/` in it)."""
    return ctx.environ.get("XDG_CONFIG_HOME") or os.path.join(home(ctx), ".config")


def user_folder(ctx: Context, harness: str) -> str:
    """A harness's own folder in the user's home: `$CLAUDE_CONFIG_DIR` or ~/.claude, `$CODEX_HOME` or ~/.codex,
    `$GEMINI_CLI_HOME/.gemini` or ~/.gemini, `$XDG_CONFIG_HOME/opencode` or ~/.config/opencode."""
    environ = ctx.environ
    if harness == "opencode":
        return os.path.join(config_home(ctx), "opencode")
    folder = CONFIG_DIRS[harness][0]
    if harness == "claude-code" and environ.get("CLAUDE_CONFIG_DIR"):
        return environ["CLAUDE_CONFIG_DIR"]
    if harness == "codex" and environ.get("CODEX_HOME"):
        return environ["CODEX_HOME"]
    if harness == "gemini" and environ.get("GEMINI_CLI_HOME"):
        return os.path.join(environ["GEMINI_CLI_HOME"], folder)
    return os.path.join(home(ctx), folder)


def project_root(ctx: Context) -> str:
    """The checkout's top folder, refused when the command runs outside every checkout."""
    checkout = ctx.checkout
    if checkout is None:
        raise Refusal("project-needs-checkout",
                      f"--scope project writes into a git checkout's own folder, and {ctx.cwd} is in none; "
                      "run it inside the checkout", details={"cwd": ctx.cwd})  # fmt: skip
    return checkout.toplevel


def target_path(ctx: Context, harness: str, scope: str) -> str:
    """The settings file (or OpenCode plugin file) a harness reads for this scope."""
    root = project_root(ctx) if scope == "project" else None
    if harness == "opencode":
        return plugin_path(config_home(ctx), root)
    folder, name = CONFIG_DIRS[harness]
    if root is not None:
        return os.path.join(root, folder, name)
    return os.path.join(user_folder(ctx, harness), name)


def plugin_path(config_folder: str, scope_root: str | None) -> str:
    """`<checkout>/.opencode/plugins/wheypoint.ts` for a project, else `<config home>/opencode/plugins/...`."""
    if scope_root is not None:
        return os.path.join(scope_root, ".opencode", "plugins", PLUGIN_NAME)
    return os.path.join(config_folder, "opencode", "plugins", PLUGIN_NAME)


# ---- what runs


def default_runner() -> str:
    """This runtime by absolute path: `"<python>" -S "<wheypoint.pyz>"` in the zipapp, else `"<python>" -S -P
    "<the package's __main__.py>"` (Python 3.11+; 3.10, which has no `-P`, the same without it).

    A harness runs its hooks in the project's folder, which may be a checkout of anyone's. `python -m wheypoint`
    puts that folder first on the module path, so a checkout holding a `wheypoint/` folder would run its own code
    in the hook. Run by its file's path, the program puts no folder there under `-P`, and on 3.10 the package's
    own folder (it holds no module of another package's name). The file's path also spares every hook `runpy` and
    what it imports (`contextlib`, `importlib.util`), about a millisecond of each.

    `-S`: the runtime needs nothing but the standard library, so a hook does not import `site` (which reads the
    `.pth` files of every installed package: about 2 ms of each hook's start); `__main__.py` then puts the
    package's own folder on the module path, after the standard library.
    """
    import wheypoint

    python = quote(sys.executable or "python3")
    if wheypoint.RUNNING_ARCHIVE:
        return f"{python} -S {quote(wheypoint.RUNNING_ARCHIVE)}"
    program = quote(os.path.join(os.path.dirname(os.path.abspath(wheypoint.__file__)), "__main__.py"))
    return f"{python} -S -P {program}" if sys.version_info >= (3, 11) else f"{python} -S {program}"


def quote(arg: str, windows: bool | None = None) -> str:
    """One word for the shell a harness runs hooks in: POSIX quoting, or double quotes on Windows."""
    if windows if windows is not None else os.name == "nt":
        return f'"{arg}"' if not arg or any(c in arg for c in " \t&()[]{}^=;!'+,`~%") else arg
    from wheypoint.app.shellword import posix_quote

    return posix_quote(arg)


def hook_command(runner: str, event: str, harness: str) -> str:
    return f"{runner} hook {event} --harness {harness}"


def handler(harness: str, event: str, limit: int, command: str) -> dict[str, Any]:
    """The hook handler wheypoint writes: a command with its time limit (Gemini's also named, for /hooks)."""
    named = {"name": f"wheypoint-{event.lower()}"} if harness == "gemini" else {}
    return {**named, "type": "command", "command": command, "timeout": limit}


def runs_from_its_folder(runner: str) -> bool:
    """Whether a runner imports wheypoint as `python -m` does with the folder it runs in first on the module path
    (no `-P` or `-I`, alone or among other short options, before `-m`): in a checkout holding a `wheypoint/`
    folder, that folder's code would run (see `default_runner`)."""
    words = runner.split()
    at = words.index("-m") if "-m" in words else -1
    if at < 0 or words[at + 1 : at + 2] != ["wheypoint"]:
        return False
    return not any(word[:1] == "-" and word[1:2] != "-" and ("P" in word or "I" in word) for word in words[1:at])


def runs_this_runtime(runner: str) -> bool:
    """Whether a runner starts this runtime: this interpreter and this program (the archive, or the package's
    `__main__.py`), whatever interpreter switches stand between them: an install of an earlier release wrote other
    switches (`-P` without `-S`), and its hooks run this runtime all the same."""
    import shlex

    posix = os.name != "nt"
    try:
        words, mine = shlex.split(runner, posix=posix), shlex.split(default_runner(), posix=posix)
    except ValueError:
        return False
    return _without_switches(words) == _without_switches(mine)


def _without_switches(words: list[str]) -> list[str]:
    """An interpreter's words without its switches that take no value (`-S`, `-P`, `-I`, `-SP`, ...)."""
    return [word for word in words if not (word[:1] == "-" and word[1:].isalpha() and not set(word[1:]) & set("mcXW"))]


def runner_of(command: str) -> str:
    """The runner part of one of our hook commands: all but its last four words (`hook <Event> --harness H`)."""
    return command.rstrip().rsplit(None, 4)[0] if len(command.split()) > 4 else ""


# ---- a JSON settings file, read strictly


class Settings:
    """One settings file as read: its parsed object, its text (None when there was no file) and its indent."""

    def __init__(self, path: str, data: dict[str, Any], text: str | None) -> None:
        self.path = path
        self.data = data
        self.text = text
        self.indent = detect_indent(text or "")


def read_settings(path: str) -> Settings:
    """The settings at `path` (an empty object when there is no file); refused, and left as it is, when it is not
    one JSON object as strict JSON reads it: a key given twice (one value would be lost), `NaN` or `Infinity`
    (not JSON: written back they break every other reader), a link to nothing (writing through it would make its
    missing target's folders), or not a regular file."""
    from wheypoint.model.intake import strict_loads
    from wheypoint.notes.files import read_regular

    def refused(code: str, why: str) -> Refusal:
        return Refusal(code, f"{path} {why}; it was left as it is", details={"path": path})

    try:
        raw = read_regular(path, MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        dangling = _dangling_link(path)
        if dangling is not None:
            what = "is" if dangling == os.path.abspath(path) else f"lies in {dangling}, which is"
            raise refused("settings-unexpected", f"{what} a symbolic link to {os.readlink(dangling)}, which does not "
                          "exist (writing through it would make its folders)") from None  # fmt: skip
        return Settings(path, {}, None)
    except OSError as exc:
        raise refused("settings-unreadable", f"cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_SETTINGS_BYTES:
        raise refused("settings-unreadable", f"is over {MAX_SETTINGS_BYTES} bytes")
    try:
        text = raw.decode("utf-8-sig")
        data = strict_loads(text) if text.strip() else {}
    except (UnicodeDecodeError, ValueError, RecursionError, Refusal) as exc:
        why = exc.message if isinstance(exc, Refusal) else exc
        raise refused(
            "settings-unreadable", f"is not valid JSON ({why}); fix or move it, then run this again"
        ) from None
    if not isinstance(data, dict):
        raise refused("settings-unexpected", f"holds a JSON {type(data).__name__}, not an object")
    return Settings(path, data, text)


def _dangling_link(path: str) -> str | None:
    """The first of `path` and its folders that is a symbolic link to nothing, if any."""
    here = os.path.abspath(path)
    while True:
        if os.path.islink(here) and not os.path.exists(here):
            return here
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def detect_indent(text: str) -> int | str:
    """The indent unit of a JSON text (a tab, or a number of spaces), from its first indented line; else 2."""
    for line in text.splitlines()[1:]:
        body = line.lstrip(" \t")
        if body and len(body) < len(line):
            lead = line[: len(line) - len(body)]
            return "\t" if lead.startswith("\t") else max(1, min(len(lead), 8))
    return 2


def read_as_harness(harness: str, path: str) -> Settings:
    """A settings file as the harness itself reads it: Gemini CLI strips comments first (so `doctor` does too,
    while `hooks install` refuses such a file rather than rewrite it without them)."""
    try:
        return read_settings(path)
    except Refusal as refusal:
        if harness != "gemini" or refusal.code != "settings-unreadable":
            raise
        from wheypoint.model.regular import open_regular

        try:
            with open_regular(path) as handle:
                text = handle.read(MAX_SETTINGS_BYTES).decode("utf-8-sig")
            data = json.loads(without_comments(text))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            raise refusal from None
        if not isinstance(data, dict):
            raise refusal from None
        return Settings(path, data, text)


def without_comments(text: str) -> str:
    """JSONC as JSON: `//` and `/* */` comments and trailing commas removed, strings left as they are."""
    out: list[str] = []
    at, length = 0, len(text)
    while at < length:
        char = text[at]
        if char == '"':
            end = at + 1
            while end < length and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[at : end + 1])
            at = end + 1
        elif text.startswith("//", at):
            newline = text.find("\n", at)
            at = length if newline < 0 else newline
        elif text.startswith("/*", at):
            close = text.find("*/", at + 2)
            at = length if close < 0 else close + 2
        elif char in "]}":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
            out.append(char)
            at += 1
        else:
            out.append(char)
            at += 1
    return "".join(out)


# ---- our handlers inside `{"hooks": {"<Event>": [{"matcher"?, "hooks": [handler, ...]}, ...]}}`


def is_ours(handler: Any, event: str, harness: str) -> bool:
    """Whether a hook handler is wheypoint's own for this event and harness: a command whose last four words are
    `hook <Event> --harness <harness>` and which names wheypoint (its path, module or zipapp)."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    return command.split()[-4:] == ["hook", event, "--harness", harness] and "wheypoint" in command.lower()


def event_groups(settings: Settings, event: str, create: bool) -> list[Any] | None:
    """The list of matcher groups of one event; refused when a container on the way is of another type."""
    hooks = settings.data.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = settings.data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise _unexpected(settings, "hooks", "an object of events")
    groups = hooks.get(event)
    if groups is None:
        if not create:
            return None
        groups = hooks[event] = []
    if not isinstance(groups, list):
        raise _unexpected(settings, f"hooks.{event}", "a list of matcher groups")
    return groups


def _unexpected(settings: Settings, where: str, expected: str) -> Refusal:
    return Refusal("settings-unexpected",
                   f"{settings.path}: `{where}` is not {expected} as every harness writes it; left as it is",
                   details={"path": settings.path, "at": where})  # fmt: skip


def find_ours(settings: Settings, event: str, harness: str) -> dict[str, Any] | None:
    """Our first handler for an event, or None."""
    found = locate_ours(settings, event, harness)
    return dict(found[2]) if found else None


def locate_ours(settings: Settings, event: str, harness: str) -> tuple[int, int, dict[str, Any]] | None:
    """Our first handler for an event with its place: (matcher group index, index in the group, handler)."""
    for number, group in enumerate(event_groups(settings, event, create=False) or []):
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            for index, item in enumerate(group["hooks"]):
                if is_ours(item, event, harness):
                    return number, index, item
    return None


# ---- OpenCode's plugin file


def render_plugin(commands: dict[str, str]) -> str:
    """The plugin's text: the template with the commands and their time limits written in as JSON."""
    from importlib.resources import files as resources

    template = resources("wheypoint.hooks").joinpath(PLUGIN_TEMPLATE).read_text(encoding="utf-8")
    timeouts = {event: limit for event, limit in PLUGIN_EVENTS}
    return template.replace("__WHEYPOINT_COMMANDS__", json.dumps(commands, ensure_ascii=False)).replace(
        "__WHEYPOINT_TIMEOUTS__", json.dumps(timeouts)
    )


def read_plugin(path: str) -> tuple[str | None, dict[str, str] | None]:
    """(the file's text or None when absent, the commands written in it or None when the file is not ours)."""
    try:
        from wheypoint.model.regular import open_regular

        with open_regular(path) as handle:
            text = handle.read(MAX_SETTINGS_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        raise Refusal("settings-unreadable", f"cannot read {path}: {exc}; it was left as it is",
                      details={"path": path}) from None  # fmt: skip
    if not text.startswith(PLUGIN_MARKER):
        return text, None
    start = text.find(COMMANDS_AT)
    try:
        commands, _ = json.JSONDecoder().raw_decode(text, start + len(COMMANDS_AT)) if start >= 0 else ({}, 0)
    except ValueError:
        commands = {}
    return text, {k: v for k, v in commands.items() if isinstance(v, str)} if isinstance(commands, dict) else {}
