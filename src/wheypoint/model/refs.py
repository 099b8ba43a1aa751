"""References inside handoff text: path:line pins and the kind of each artifact reference.

A bare `path:line` (or `path:line-line`) names a place in a file that will move as the code changes;
pinning it as `path:line@<short sha>` says which commit the line number belongs to. Finding the
references is pure text work and lives here; deciding whether a file is tracked is the shell's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# A relative path with an extension, a line, optionally a range; not already pinned (`@sha`), not a
# URL (`://` before it) and not part of a longer word.
LINE_REF = re.compile(r"(?<![\w/.@:-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]+):(\d+)(?:-(\d+))?(?![\w@:/-])")

# The pinned form, `path:line@<sha>`, that pin_text writes.
PINNED_REF = re.compile(r"(?<![\w/.@:-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]+):\d+(?:-\d+)?@([0-9a-f]{7,40})\b")


def line_refs(text: str) -> list[str]:
    """Every bare path:line reference in a text, in order, without repeats."""
    seen: dict[str, None] = {}
    for match in LINE_REF.finditer(text):
        seen.setdefault(match.group(0), None)
    return list(seen)


def line_ref_path(ref: str) -> str:
    """The file part of a path:line reference."""
    match = LINE_REF.fullmatch(ref)
    return match.group(1) if match else ref


def pin_text(text: str, pins: Mapping[str, str]) -> str:
    """Replace each bare path:line that has a pin with its pinned form; leave the rest as written."""
    if not pins:
        return text
    return LINE_REF.sub(lambda m: pins.get(m.group(0), m.group(0)), text)


def pinned_refs(text: str) -> list[tuple[str, str]]:
    """(path, commit) of every pinned path:line@sha in a text."""
    return [(m.group(1), m.group(2)) for m in PINNED_REF.finditer(text)]


def ref_kind(ref: str) -> str:
    """What a reference points at: a URL, an xdg: or wheypoint: reference, an absolute or relative path."""
    if re.match(r"^[a-z][a-z0-9+.-]*://", ref):
        return "url"
    if ref.startswith("xdg:"):
        return "xdg"
    if ref.startswith("wheypoint:"):
        return "wheypoint"
    if ref.startswith("/") or ref.startswith("~"):
        return "absolute"
    return "relative"
