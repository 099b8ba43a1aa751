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

# Three rules have no literal of their own; they run when the text holds a word of their shape (see present()).
SHAPE_DISCORD = "\x00discord"  # an alphanumeric run of 23+ characters starting m, n or o
SHAPE_TELEGRAM = "\x00telegram"  # a run of 8 to 10 digits
SHAPE_HEX32 = "\x00hex32"  # a run of exactly 32 hex digits


class Haystack:
    """A lower-cased text to search, with its UTF-8 bytes and the offsets of every needle looked for so far."""

    __slots__ = ("_block_bytes", "_block_chars", "cache", "data", "lowered")

    def __init__(self, lowered: str) -> None:
        self.lowered = lowered
        self.data = lowered.encode("utf-8", "surrogatepass")
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
            if found and len(data) != len(self.lowered):
                found = [self._char(at) for at in found]
            self.cache[needle] = found
        return found

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
        lowered = self.lowered
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
            if hi < len(lowered):
                nl = lowered.find("\n", hi)
                hi = len(lowered) if nl < 0 else nl
            lo = lowered.rfind("\n", 0, lo) + 1 if lo else 0
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        return out


def present(compiled: NeedleIndex, haystack: Haystack, shapes: dict[str, list[str]]) -> set[str]:
    """The needles that may occur in the text (a superset: every rule still finds its needle before it runs).

    Looking for each of some 260 needles is a pass over the text per needle, so most needles are found through
    the text's distinct alphanumeric runs instead: a needle may occur when its head (longest alphanumeric run) is
    one of them, or begins one (`akia` in `AKIA2...`, `adafruit` in `adafruitKey`). Common words, which also
    sit inside identifiers (`dbPassword`), needles whose longest run is under three characters and needles with
    spaces are looked for directly.
    The runs of each shape (SHAPE_*) are put in shapes, where the rules of that shape are tried.
    """
    lowered, data = haystack.lowered, haystack.data
    if len(data) == len(lowered):  # ASCII: the same bytes, and a str needle needs no encoded copy
        found = {needle for needle in compiled.direct if needle in lowered}
    else:
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
    for part in [p for p in parts if len(p) >= 8]:
        if len(part) >= 23 and part[0] in "mno":
            shapes.setdefault(SHAPE_DISCORD, []).append(part)
        elif len(part) <= 10 and part.isdigit():
            shapes.setdefault(SHAPE_TELEGRAM, []).append(part)
        if len(part) == 32 and all(c in "0123456789abcdef" for c in part):
            shapes.setdefault(SHAPE_HEX32, []).append(part)
    found.update(shapes)
    if len(data) > _CONFIRM:
        for head in heads:
            found.update(compiled.heads[head])
        return found
    # In a short text, keep only the needles that really occur: a common head (`message` of `message-bird`, `live`
    # of `sk_live`) would otherwise run rules that cannot match, since every match holds one of its rule's needles.
    for head in heads:
        for needle in compiled.heads[head]:
            if needle in lowered:
                found.add(needle)
    return found


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
