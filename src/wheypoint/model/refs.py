"""References inside handoff text: path:line pins and the kind of each artifact reference.

A bare `path:line` (or `path:line-line`) names a place in a file that will move as the code changes;
pinning it as `path:line@<short sha>` says which commit the line number belongs to. Finding the
references is pure text work and lives here; deciding whether a file is tracked is the shell's.
"""

from __future__ import annotations

from wheypoint.patterns import compiled as regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# A relative path with an extension, a line, optionally a range; not already pinned (`@sha`), not a
# URL (`://` before it) and not part of a longer word.
# (Kept as text, compiled on first use through `patterns.compiled`, which keeps the program for later commands;
# most texts are ruled out before that by a missing `:` or `@`.)
LINE_REF = r"(?<![\w/.@:-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]+):(\d+)(?:-(\d+))?(?![\w@:/-])"

# The pinned form, `path:line@<sha>`, that pin_text writes.
PINNED_REF = r"(?<![\w/.@:-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]+):\d+(?:-\d+)?@([0-9a-f]{7,40})\b"


_SCHEME = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")


def line_refs(text: str) -> list[str]:
    """Every bare path:line reference in a text, in order, without repeats."""
    seen: dict[str, None] = {}
    for match in regex(LINE_REF).finditer(text) if ":" in text else ():
        seen.setdefault(match.group(0), None)
    return list(seen)


def line_ref_path(ref: str) -> str:
    """The file part of a path:line reference."""
    match = regex(LINE_REF).fullmatch(ref) if ":" in ref else None
    return match.group(1) if match else ref


def pin_text(text: str, pins: Mapping[str, str]) -> str:
    """Replace each bare path:line that has a pin with its pinned form; leave the rest as written."""
    if not pins or ":" not in text:
        return text
    return regex(LINE_REF).sub(lambda m: pins.get(m.group(0), m.group(0)), text)


def pinned_refs(text: str) -> list[tuple[str, str]]:
    """(path, commit) of every pinned path:line@sha in a text."""
    return [(m.group(1), m.group(2)) for m in regex(PINNED_REF).finditer(text)] if "@" in text else []


def ref_kind(ref: str) -> str:
    """What a reference points at: a URL, an xdg: or wheypoint: reference, an absolute or relative path."""
    scheme, sep, _ = ref.partition("://")
    if sep and scheme[:1].isascii() and scheme[:1].islower() and all(c in _SCHEME for c in scheme):
        return "url"
    if ref.startswith("xdg:"):
        return "xdg"
    if ref.startswith("wheypoint:"):
        return "wheypoint"
    if ref.startswith("/") or ref.startswith("~"):
        return "absolute"
    return "relative"
