"""How the credential scan searches a text: needles found on its UTF-8 bytes, windows around them, and invisibles."""

# credentials.py decides which rules run and judges their matches; this module answers where to look.  Every
# search here runs on the text's UTF-8 bytes: bytes.find, `in` and translate are several times faster there than
# on a str holding any non-ASCII character (Python stores such a str two or four bytes a character), and an ASCII
# needle occurs in the bytes exactly where it occurs in the text.  Byte offsets are turned back into character
# offsets, which is free for ASCII text.

from __future__ import annotations

from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Protocol

    class NeedleIndex(Protocol):
        """What `present` reads of the scanner's compiled rule table (credentials._Compiled)."""

        direct: dict[str, bytes]
        direct_words: list[str]
        heads: dict[str, list[str]]
        exact_heads: frozenset[str]
        fused: dict[str, tuple[str, ...]]
        to_space: bytes


class CredentialHit(Record):
    """One credential found: the rule that fired and where the secret value sits in the text."""

    rule: str
    start: int
    end: int


# A gitleaks rule that does not start with a literal is searched only near each occurrence of its keywords, this
# far either side.
WINDOW = 400

# Byte offsets map to character offsets through the character count at every block of this many bytes.
_BLOCK = 4096
_ASCII = bytes(range(128))
# Up to this many bytes, a needle suggested by a head is confirmed by a search of the text (see present).
_CONFIRM = 1 << 16

# The 32-hex-digit rule is tried at each word of that shape, found by a pass over the text per distinct word; past
# this many distinct words one search of the whole text is cheaper (a hash-heavy log holds thousands).
_FEW_SHAPES = 16

# Three rules have no literal of their own; they run where the text holds their shape (see present()).
SHAPE_DISCORD = "\x00discord"  # a run of 24+ token characters, `.`, six more, `.` and 27 more
SHAPE_TELEGRAM = "\x00telegram"  # a run of 8+ digits ending at a `:`
SHAPE_HEX32 = "\x00hex32"  # a word of exactly 32 hex digits


class Haystack:
    """A text to search: its UTF-8 bytes with ASCII letters lower-cased, and the offsets of every needle looked for.

    Needles are lower case and ASCII (or the invisible characters see_through looks for), so lower-casing the bytes
    is enough, and far cheaper than str.lower(); it also keeps every offset where it is.
    """

    __slots__ = ("_block_bytes", "_block_chars", "cache", "data", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass").lower()
        self.cache: dict[str, list[int]] = {}  # needle -> its offsets
        self._block_bytes: list[int] = []
        self._block_chars: list[int] = []

    def positions(self, needle: str) -> list[int]:
        """Every offset of needle in the text, found once per scan (rules share needles)."""
        found = self.cache.get(needle)
        if found is None:
            data, raw = self.data, needle.encode("utf-8", "surrogatepass")
            found = []
            at = data.find(raw)
            while at >= 0:
                found.append(at)
                at = data.find(raw, at + 1)
            found = self.chars(found)
            self.cache[needle] = found
        return found

    def chars(self, offsets: list[int]) -> list[int]:
        """Byte offsets (each at a character's start) as character offsets."""
        if len(self.data) == len(self.text):
            return offsets
        return [self._char(at) for at in offsets]

    def _char(self, offset: int) -> int:
        """The character offset of a byte offset that starts a character."""
        import bisect

        data = self.data
        if not self._block_bytes:
            start = chars = 0
            self._block_bytes.append(0)
            self._block_chars.append(0)
            while start < len(data):
                end = min(start + _BLOCK, len(data))
                while end < len(data) and 0x80 <= data[end] < 0xC0:  # not inside a character
                    end -= 1
                chars += len(data[start:end].decode("utf-8", "surrogatepass"))
                start = end
                self._block_bytes.append(start)
                self._block_chars.append(chars)
        index = bisect.bisect_right(self._block_bytes, offset) - 1
        start = self._block_bytes[index]
        return self._block_chars[index] + len(data[start:offset].decode("utf-8", "surrogatepass"))

    def occurrences(self, needles: tuple[str, ...]) -> list[int]:
        """Every offset at which one of the needles occurs, in order."""
        return sorted({at for needle in needles for at in self.positions(needle)})

    def windows(self, needles: tuple[str, ...]) -> list[tuple[int, int]]:
        """Merged spans of the text around every occurrence of the rule's keywords."""
        text = self.text
        spans = sorted(
            (max(0, at - WINDOW), at + len(needle) + WINDOW) for needle in needles for at in self.positions(needle)
        )
        merged: list[tuple[int, int]] = []
        for lo, hi in spans:
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        # A window ends at a line end (or the text's end), so that '$' and value terminators behave as in the text.
        out: list[tuple[int, int]] = []
        for lo, hi in merged:
            if out and hi <= out[-1][1]:  # within the line the previous window reached: no need to look for its end
                continue
            if hi < len(text):
                nl = text.find("\n", hi)
                hi = len(text) if nl < 0 else nl
            lo = text.rfind("\n", 0, lo) + 1 if lo else 0
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        return out


def present(compiled: NeedleIndex, haystack: Haystack, shapes: dict[str, list[int] | None]) -> set[str]:
    """The needles that may occur in the text (a superset: every rule still finds its needle before it runs).

    Looking for each of some 260 needles is a pass over the text per needle, so most needles are found through
    the text's distinct alphanumeric runs instead: a needle may occur when its head (longest alphanumeric run) is
    one of them, or begins one (`akia` in `AKIA2...`, `adafruit` in `adafruitKey`). Common words, which also
    sit inside identifiers (`dbPassword`), needles whose longest run is under three characters and needles with
    spaces are looked for directly.
    Where the rules of each shape (SHAPE_*) are to be tried is put in shapes (None: search the whole text).
    """
    data = haystack.data
    found = {needle for needle, raw in compiled.direct.items() if raw in data}
    parts = set(data.translate(compiled.to_space).decode("ascii").split())
    # A needle of letters and digits occurs in the text exactly when it occurs in one of its distinct runs: those,
    # joined, are much shorter than the text (a substring test costs about a nanosecond a character).
    words = " ".join(parts)
    found.update(needle for needle in compiled.direct_words if needle in words)
    heads = set(parts & compiled.exact_heads)
    fused = compiled.fused
    for part in parts:  # runs that begin with a head (plain loops: a generator per run costs more than the test)
        bucket = fused.get(part[:3])
        if bucket:
            for head in bucket:
                if part.startswith(head):
                    heads.add(head)
    hex32 = [p for p in parts if len(p) == 32 and all(c in "0123456789abcdef" for c in p)]
    if hex32:  # a few such words are cheaper found one by one than by the rule's search of the whole text
        shapes[SHAPE_HEX32] = haystack.occurrences(tuple(hex32)) if len(hex32) <= _FEW_SHAPES else None
    _token_shapes(haystack, shapes)
    found.update(shapes)
    if len(data) > _CONFIRM:
        for head in heads:
            found.update(compiled.heads[head])
        return found
    # In a short text, keep only the needles that really occur: a common head (`message` of `message-bird`, `live`
    # of `sk_live`) would otherwise run rules that cannot match, since every match holds one of its rule's needles.
    for head in heads:
        for needle in compiled.heads[head]:
            if needle.encode() in data:
                found.add(needle)
    return found


# The text's bytes by class, for the shape searches (built on first use, with the Discord search): digits become
# `0`, ASCII letters, `_` and `-` become `a`, `.` and `:` stay, and every other byte (non-ASCII ones included) is a
# space.  One translate, then plain byte searches find the shapes.
_SHAPE_TOOLS: list[tuple[bytes, re.Pattern[bytes]]] = []


def _shape_tools() -> tuple[bytes, re.Pattern[bytes]]:
    if not _SHAPE_TOOLS:
        import re

        def kind(c: str) -> int:
            return 0x30 if c.isdigit() else 0x61 if c.isalpha() or c in "_-" else ord(c) if c in ".:" else 0x20

        table = bytes(kind(chr(c)) for c in range(128)) + b" " * 128
        _SHAPE_TOOLS.append((table, re.compile(rb"\.[a0]{6}\.[a0]{27}")))
    return _SHAPE_TOOLS[0]


def _token_shapes(haystack: Haystack, shapes: dict[str, list[int] | None]) -> None:
    """Where a Telegram or a Discord bot token may start: found on the text's byte classes, not word by word.

    A Telegram token is 8 to 10 digits, `:` and 35 characters: it is tried at the start of each run of 8+ digits
    ending at a `:`.  A Discord token is three parts joined by dots, the middle one six characters long: it is
    tried at the start of the run before each `.xxxxxx.` that 27 token characters follow.  A run too long for
    the rule is tried at its start all the same; the rule's own check turns down a value that does not start a word.
    """
    table, discord_middle = _shape_tools()
    classes = haystack.data.translate(table)
    starts: list[int] = []
    at = classes.find(b"00000000:")
    while at >= 0:
        run = classes[max(0, at - 2) : at]
        starts.append(at - (len(run) - len(run.rstrip(b"0"))))
        at = classes.find(b"00000000:", at + 9)
    if starts:
        shapes[SHAPE_TELEGRAM] = haystack.chars(starts)
    starts = []
    for dots in discord_middle.finditer(classes):
        run = classes[max(0, dots.start() - 28) : dots.start()]
        length = len(run) - len(run.rstrip(b"a0"))  # of the token characters just before the dot
        if length >= 24:
            starts.append(dots.start() - length)
    if starts:
        shapes[SHAPE_DISCORD] = haystack.chars(starts)


_INVISIBLE: list[re.Pattern[str]] = []


def _invisible() -> re.Pattern[str]:
    """The invisible characters the note escapes (characters.INVISIBLE), as a pattern compiled on first use."""
    if not _INVISIBLE:
        import re

        from wheypoint.model.characters import INVISIBLE

        _INVISIBLE.append(re.compile(f"[{INVISIBLE}]"))
    return _INVISIBLE[0]


def see_through(text: str, scan: Callable[[str], list[CredentialHit]]) -> list[CredentialHit]:
    """scan's hits on text read without its invisible characters, their offsets mapped back to text."""
    if text.isascii():  # no invisible character is ASCII
        return scan(text)
    invisible = _invisible()
    # The text's non-ASCII characters alone (UTF-8 never puts an ASCII byte inside a longer character): a search
    # of that short string is far cheaper than one of a long text
    rare = text.encode("utf-8", "surrogatepass").translate(None, _ASCII).decode("utf-8", "surrogatepass")
    marks = set(invisible.findall(rare))
    if not marks:
        return scan(text)
    import bisect

    haystack = Haystack(text)
    spots = sorted(at for mark in marks for at in haystack.positions(mark))
    # The view is the text without them.  Where each invisible character sits in the view, and how many were taken
    # out up to and including it: a view offset maps back by adding the count of the last one at or before it.
    view = "".join(text[lo + 1 : hi] for lo, hi in zip([-1, *spots], [*spots, len(text)], strict=True))
    at = [spot - index for index, spot in enumerate(spots)]

    def back(offset: int) -> int:
        return offset + bisect.bisect_right(at, offset)

    return [type(hit)(rule=hit.rule, start=back(hit.start), end=back(hit.end - 1) + 1) for hit in scan(view)]
