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

CommonMark is the other reader to hold: text a field puts on a line of Markdown must not open a block or carry
raw HTML. `markdown_line` makes a line of text that nothing reads back inert (a backslash before a block opener,
after any quote or list markers, before a `<` that could open a tag or an autolink, before a backtick run with no
partner on its line); `shield_angles` does it reversibly for preamble values, which readers take back.
"""

from __future__ import annotations

from wheypoint.model.characters import hidden_pattern, kept_joiner, plain
from wheypoint.model.shapes import CONFIDENCE_TAGS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator

MARK = "\u27ea"  # ⟪, the opening of an escape; written escaped itself wherever it occurs in text
_CLOSE = "\u27eb"  # ⟫
_escape_pattern: re.Pattern[str] | None = None
_angle_patterns: tuple[re.Pattern[str], re.Pattern[str]] | None = None
# The characters a backslash escapes in CommonMark: a backslash before any other is a plain backslash.
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _shown(text: str, pattern: re.Pattern[str]) -> str:
    if pattern.search(text) is None:
        return text
    return pattern.sub(lambda m: m[0] if kept_joiner(text, m.start()) else f"{MARK}U+{ord(m[0]):04X}{_CLOSE}", text)


def escape(text: str) -> str:
    """Verbatim text with every hidden character and `⟪` written as `⟪U+XXXX⟫`; `\\n` and tab are kept."""
    return text if plain(text) else _shown(text, hidden_pattern(MARK))


def escape_one_line(text: str) -> str:
    """Text the note prints on one line: hidden characters (a newline among them) written as `⟪U+XXXX⟫`.

    Nothing reads these back, so `⟪` itself is left alone: only verbatim text must round-trip.
    """
    shown = text if plain(text) else _shown(text, hidden_pattern())
    return shown.replace("\n", f"{MARK}U+000A{_CLOSE}")


def unescape(text: str) -> str:
    """The inverse of `escape`: every `⟪U+XXXX⟫` back to its character."""
    global _escape_pattern
    if MARK not in text:
        return text
    if _escape_pattern is None:
        import re  # (here, as every pattern of this module: a note with no escape and no `<` needs none)

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


def _angles() -> tuple[re.Pattern[str], re.Pattern[str]]:
    global _angle_patterns
    if _angle_patterns is None:  # compiled on first use: most notes hold no `<`
        import re

        _angle_patterns = (re.compile(r"(\\*)<(?=[A-Za-z/!?])"), re.compile(r"\\(\\*)\1<(?=[A-Za-z/!?])"))
    return _angle_patterns


def shield_angles(text: str) -> str:
    """One-line text with every `<` that could open a tag, comment or autolink written `\\<`: reversibly.

    CommonMark reads `\\<` as a plain `<`, so a viewer shows the same text. A run of backslashes just before such a
    `<` is doubled first (a viewer shows each pair as one backslash), which makes `unshield_angles` exact.
    """
    return text if "<" not in text else _angles()[0].sub(r"\1\1\\<", text)


def unshield_angles(text: str) -> str:
    """The inverse of `shield_angles`: an odd run of 2k+1 backslashes before such a `<` back to k."""
    return text if "\\<" not in text else _angles()[1].sub(r"\1<", text)


def markdown_line(line: str) -> str:
    """A line of text as CommonMark reads it as text: no block opened, no HTML, no code span left open.

    Outside code spans a `<` before anything but white space gets a backslash (no tag, comment, declaration or
    autolink can start), and so does each backtick of a run no later run on the line closes (no code span can
    reach into the next line and take a `<` out of the text). Then, after any `>` and list markers, a heading or
    fence opener, a setext underline (`=` or `-` alone, any length), a thematic break or a `[` that could start a
    link reference definition gets a backslash. Each escape is one a viewer shows as the character itself.
    """
    if "`" in line or "<" in line:
        line = _inline(line)
    at = _block_opener(line)
    return line if at is None else f"{line[:at]}\\{line[at:]}"


def opens_block(line: str) -> bool:
    """Whether a line under a paragraph line would start a block instead: a quote, a list item, or an opener."""
    body = line.lstrip(" \t")
    if body[:1] == ">" or body.startswith("```"):
        return True
    return (body[:1] != "[" and _block_opener(body) == 0) or bool(body and _list_marker_end(body, 0))


def _inline(line: str) -> str:
    out: list[str] = []
    index, size = 0, len(line)
    while index < size:
        char = line[index]
        if char == "\\" and line[index + 1 : index + 2] in _PUNCTUATION:
            out.append(line[index : index + 2])
            index += 2
            continue
        if char == "`":
            end = index
            while end < size and line[end] == "`":
                end += 1
            close = _closing_run(line, end, end - index)
            if close < 0:
                out.append("\\`" * (end - index))
                index = end
            else:
                out.append(line[index : close + end - index])
                index = close + end - index
            continue
        out.append("\\<" if char == "<" and line[index + 1 : index + 2].strip() else char)
        index += 1
    return "".join(out)


def _closing_run(line: str, start: int, length: int) -> int:
    """Where the first run of exactly `length` backticks at or after `start` begins, or -1."""
    while True:
        found = line.find("`" * length, start)
        if found < 0:
            return -1
        end = found + length
        if end >= len(line) or line[end] != "`":
            return found
        while end < len(line) and line[end] == "`":
            end += 1
        start = end


def _block_opener(line: str) -> int | None:
    """Where a block opener starts in `line`, after any block quote and list markers, or None.

    A list marker opens a new item, where no paragraph stands above to take a setext underline: after one, only
    a thematic break counts. A quote marker goes on an open quote, whose paragraph may. (A fence of backticks is
    never left here: `_inline` has escaped every run that no later run on the line closes, and a later run in
    its info string makes a line no fence.)
    """
    first = line[:1]
    if first.isalpha() or ("0" <= first <= "9" and _list_marker_end(line, 0) is None):
        return None  # the common line, told at once: no opener or marker starts with a letter or bare digits
    return _opener_after_markers(line)


def _opener_after_markers(line: str) -> int | None:
    """`_block_opener` walked character by character, for a line whose first character may open something."""
    index, size, fresh = 0, len(line), False
    while True:
        while index < size and line[index] in " \t":
            index += 1
        if index == size:
            return None
        rule = _is_break if fresh else is_rule
        if line[index] == ">":
            index, fresh = index + 1, False
            continue
        marker = _list_marker_end(line, index)
        if marker is None:
            break
        if rule(line[index:]):
            return index
        index, fresh = marker, True
    rest = line[index:]
    if rest[0] == "#" or rest.startswith("~~~") or rule(rest):
        return index
    if rest[0] == "[" and not (rest[:3] in ("[ ]", "[x]", "[X]") and rest[3:4] in ("", " ", "\t")):
        return index
    return None


def _list_marker_end(line: str, index: int) -> int | None:
    """The end of a list marker (`-`, `+`, `*`, or 1-9 digits and `.` or `)`) at `index`, followed by white space."""
    end = index
    if line[index] in "-+*":
        end = index + 1
    else:
        while end < len(line) and end - index < 9 and "0" <= line[end] <= "9":
            end += 1
        if end == index or line[end : end + 1] not in (".", ")"):
            return None
        end += 1
    return end if line[end : end + 1] in ("", " ", "\t") else None


def is_rule(text: str) -> bool:
    """Whether a line is a setext underline (`=` or `-` alone, any length) or a thematic break, white space after
    it allowed."""
    body = text.strip()
    return (bool(body) and body[0] in "=-" and body == body[0] * len(body)) or _is_break(body)


def _is_break(text: str) -> bool:
    """Whether a line is a thematic break: three or more `*`, `-` or `_`, spaces and tabs between and after."""
    marks = text.replace(" ", "").replace("\t", "").rstrip()
    return len(marks) >= 3 and marks[0] in "*-_" and marks == marks[0] * len(marks)


def disarm_lookalike(text: str) -> str:
    """An untagged entry's rendered text that opens with a tag's code span (`` `<certain>` ... ``) gets a longer
    fence for it (``` ``<certain>`` ```): CommonMark shows the same span, and `entry_tags` no longer reads a tag."""
    for tag in CONFIDENCE_TAGS:
        span = f"`<{tag}>`"
        if text.startswith(span) and not text.startswith(span + "`"):
            return f"`{span}`{text[len(span):]}"
    return text
