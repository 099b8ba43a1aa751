"""Reading a value from git's config files without running git: the files git reads, in the order it reads them.

A checkpoint wants two values (the remote's URL, for the project key, and `user.email`, for the author) and a
git process costs milliseconds of every command, so the files are read here. What this reader does not
follow, git is asked instead: a file with an `[include]` or `[includeIf]` section, or configuration passed in
the environment (`GIT_CONFIG_COUNT`, `GIT_CONFIG_PARAMETERS`), answers None from `lookup` with `ask_git` set.
"""

from __future__ import annotations

import os

from wheypoint.model.regular import open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def _unquoted(raw: str) -> str:
    """A value as git reads it: a comment outside quotes ends it, quotes are removed, \\" \\\\ \\t \\n unescaped."""
    out, quoted, index = [], False, 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw):
            out.append({"n": "\n", "t": "\t"}.get(raw[index + 1], raw[index + 1]))
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()


def value(text: str, section: str, subsection: str | None, key: str) -> str | None:
    """The last value of `section[ "subsection"].key` in one config file's text (git: the last one wins)."""
    found = None
    here = False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("["):
            header = stripped[1 : stripped.find("]")] if "]" in stripped else ""
            name, _, sub = header.partition(" ")
            sub = sub.strip()
            here = name.lower() == section and (
                (subsection is None and not sub) or (subsection is not None and sub == f'"{subsection}"')
            )
            continue
        if here and stripped and stripped[0] not in "#;":
            name, equals, raw = stripped.partition("=")
            if name.strip().lower() == key:
                found = _unquoted(raw) if equals else "true"
    return found


def files(environ: Mapping[str, str], common_dir: str | None) -> list[str]:
    """git's config files, lowest precedence first: system, global (XDG, then ~/.gitconfig), the repository's."""
    home = environ.get("HOME", "")
    found = [] if environ.get("GIT_CONFIG_NOSYSTEM") else [environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"]
    if environ.get("GIT_CONFIG_GLOBAL"):
        found.append(environ["GIT_CONFIG_GLOBAL"])
    else:
        xdg = environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        found += [os.path.join(xdg, "git", "config")] if xdg else []
        found += [os.path.join(home, ".gitconfig")] if home else []
    if common_dir:
        found.append(os.path.join(common_dir, "config"))
    return found


def lookup(environ: Mapping[str, str], paths: list[str], section: str, subsection: str | None,
           key: str) -> tuple[str | None, bool]:  # fmt: skip
    """(the value the files give, whether git must be asked instead because they include others)."""
    if environ.get("GIT_CONFIG_COUNT") or environ.get("GIT_CONFIG_PARAMETERS"):
        return None, True
    found = None
    for path in paths:
        try:
            with open_regular(path) as handle:  # a FIFO or device in its place is never waited on
                text = handle.read(1 << 20).decode("utf-8", errors="replace")
        except OSError:
            continue
        lowered = text.lower()
        if "[include" in lowered:
            return None, True
        found = value(text, section, subsection, key) or found
    return found, False
