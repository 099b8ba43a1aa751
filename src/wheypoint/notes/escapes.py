"""Characters a note must never carry raw: which they are, how a note shows them, and how to read them back.

A note is read by people, by CommonMark viewers, by `notes/parse.py`, and by the ten-line reader published in
docs/contract.md, which splits lines with `str.splitlines`. Each of these splits lines differently, and some
characters are invisible on screen while they change what a reader sees (bidi overrides reorder a line, a
zero-width space hides inside a word, tag characters carry hidden ASCII). So the invariant is: the only line
terminator in a note is `\\n`, and no hidden character reaches it raw. Every character of the class in
`model/characters.py` is written as `⟪U+XXXX⟫` (the code point in upper-case hex), and so is `⟪` itself, which
makes the escape reversible: `unescape(escape(text)) == text` for every string, so the user's verbatim words
are recovered byte for byte.

Zero-width joiners between two non-ASCII characters are kept (see `model/characters.py`).
"""

from __future__ import annotations

import re

from wheypoint.model.characters import hidden_pattern, kept_joiner

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

MARK = "\u27ea"  # ⟪, the opening of an escape; written escaped itself wherever it occurs in text
_CLOSE = "\u27eb"  # ⟫
_escape_pattern: re.Pattern[str] | None = None


def _shown(text: str, pattern: re.Pattern[str]) -> str:
    if pattern.search(text) is None:
        return text
    return pattern.sub(lambda m: m[0] if kept_joiner(text, m.start()) else f"{MARK}U+{ord(m[0]):04X}{_CLOSE}", text)


def escape(text: str) -> str:
    """Verbatim text with every hidden character and `⟪` written as `⟪U+XXXX⟫`; `\\n` and tab are kept."""
    return _shown(text, hidden_pattern(MARK))


def escape_one_line(text: str) -> str:
    """Text the note prints on one line: hidden characters (a newline among them) written as `⟪U+XXXX⟫`.

    Nothing reads these back, so `⟪` itself is left alone: only verbatim text must round-trip.
    """
    return _shown(text, hidden_pattern()).replace("\n", f"{MARK}U+000A{_CLOSE}")


def unescape(text: str) -> str:
    """The inverse of `escape`: every `⟪U+XXXX⟫` back to its character."""
    global _escape_pattern
    if MARK not in text:
        return text
    if _escape_pattern is None:
        _escape_pattern = re.compile(f"{MARK}U\\+([0-9A-F]{{4,6}}){_CLOSE}")
    return _escape_pattern.sub(lambda m: chr(int(m[1], 16)) if int(m[1], 16) <= 0x10FFFF else m[0], text)


def verbatim_blocks(note: str) -> Iterator[str]:
    """The verbatim texts of a note (quotes and meat), in order, unescaped: what the record holds, byte for byte.

    Each is a fenced block whose info string is `text`, in a list item (indented two spaces) or in a blockquote
    under one (`  > `); its lines carry that prefix, an empty line of a meat block none.
    """
    lines = note.split("\n")
    index = 0
    while index < len(lines):
        opener = _verbatim_opener(lines[index])
        index += 1
        if opener is None:
            continue
        prefix, fence = opener
        body: list[str] = []
        while index < len(lines) and lines[index] != prefix + fence:
            line = lines[index]
            body.append(line[len(prefix) :] if line.startswith(prefix) else "")
            index += 1
        index += 1
        yield unescape("\n".join(body))


def _verbatim_opener(line: str) -> tuple[str, str] | None:
    """(prefix, fence) when `line` opens a verbatim block: `  ```text` or `  > ```text`."""
    for prefix in ("  > ", "  "):
        if line.startswith(prefix + "```") and line.endswith("text"):
            fence = line[len(prefix) : -len("text")]
            if fence == "`" * len(fence):
                return prefix, fence
    return None
