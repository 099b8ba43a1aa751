"""How the credential scan searches a text: needles found on its UTF-8 bytes, windows around them, and invisibles."""

# credentials.py decides which rules run and judges their matches; this module answers where to look.  Every
# search here runs on the text's UTF-8 bytes: bytes.find, `in` and translate are several times faster there than
# on a str holding any non-ASCII character (Python stores such a str two or four bytes a character), and an ASCII
# needle occurs in the bytes exactly where it occurs in the text.  Byte offsets are turned back into character
# offsets, which is free for ASCII text, and done only for the needles a rule asks for.
#
# Which needles a text holds is answered here with the standard library (_present_pure), or by the optional
# accelerator credential_fast.py (wheypoint[fast], pyahocorasick) when it is installed and the text is long enough
# to repay loading it (ACCELERATE_FROM): both give the same needles and offsets (tests/test_credential_fast.py).

from __future__ import annotations

from wheypoint.model.records import Record
from wheypoint.patterns import compiled as regex
from wheypoint.patterns import kept as kept_table

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable
    from types import ModuleType


class CredentialHit(Record):
    """One credential found: the rule that fired and where the secret value sits in the text."""

    rule: str
    start: int
    end: int


# A gitleaks rule that does not start with a literal is searched only near each occurrence of its keywords, this
# far either side.
WINDOW = 400

# Past this many bytes, needles are looked for among the text's distinct tokens (see _present_pure) rather than in
# the text itself.
_TOKENS = 1 << 16

# Byte offsets map to character offsets through the count of UTF-8 continuation bytes before every block of this
# many bytes (a character is one leading byte and its continuation bytes).
_BLOCK = 1024
_ASCII = bytes(range(128))
_BYTES = bytes(range(256))
_CONTINUATION = bytes(0x80) + b"\x01" * 0x40 + bytes(0x40)  # 1 for the bytes 0x80-0xBF, else 0
_ALNUM = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SPACES = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0"  # the bytes c for which chr(c).isspace()

# The 32-hex-digit rule is tried at each word of that shape, found by a pass over the text per distinct word; past
# this many distinct words one search of the whole text is cheaper (a hash-heavy log holds thousands).
_FEW_SHAPES = 16

# Four rules run where the text holds their shape (see present()): three have no literal of their own, and the
# Twilio account id's only literal, `ac`, sits in every other sentence ("each", "compaction").
SHAPE_DISCORD = "\x00discord"  # a run of 24+ token characters, `.`, six more, `.` and 27 more
SHAPE_TELEGRAM = "\x00telegram"  # a run of 8+ digits ending at a `:`
SHAPE_HEX32 = "\x00hex32"  # a word of exactly 32 hex digits
SHAPE_SID34 = "\x00sid34"  # a word of exactly 34 hex digits starting `ac`

# The optional accelerator (wheypoint[fast]), looked for on the first long text's scan: its module, or None.
_ENGINE: list[ModuleType | None] = []
# Texts of fewer UTF-8 bytes take the standard-library path even with the accelerator installed: importing it and
# building its automaton cost about 10 ms, more than the pure search of a text this size (at about 20 MB/s), so
# the prompts and intents every command scans never pay for it. Tests and the benchmark set it to 0.
ACCELERATE_FROM = 1 << 20


def accelerator() -> ModuleType | None:
    """credential_fast when pyahocorasick imports, else None: decided once, on the first call (a command started
    without site-packages, or a zipapp on a bare `python3 -I`, never finds it)."""
    if not _ENGINE:
        engine: ModuleType | None = None
        try:
            import ahocorasick  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401
        except ImportError:
            pass
        else:
            from wheypoint.model import credential_fast

            engine = credential_fast
        _ENGINE.append(engine)
    return _ENGINE[0]


def _blanking(kept: bytes) -> bytes:
    """A bytes.translate table keeping the bytes in `kept` and turning every other byte into a space."""
    others = _BYTES.translate(None, kept)
    return bytes.maketrans(others, b" " * len(others))


class NeedleIndex:
    """How each rule's needle is looked for in a text: among its runs, through its head word, or after an anchor.

    Looking for each of some 330 needles is a pass over the text per needle, so most needles are found through the
    text's distinct alphanumeric runs instead: a needle counts when its head (its first longest alphanumeric run,
    three characters or more) begins one of the runs (`akia` in `AKIA2...`, `adafruit` in `adafruitKey`) and the
    needle itself occurs in the text. Common words, which also sit inside identifiers (`dbPassword`), and needles
    whose longest run is under three characters are looked for directly; a needle holding a space (`private key`)
    is looked for where its last word (` key`, the anchor) occurs.
    """

    def __init__(self, needles: Callable[[], Iterable[str]], common: frozenset[str], version: str,
                 sources: tuple[str, ...]) -> None:  # fmt: skip
        """`needles` gives the rules' needles, asked only when the index is built; the rules and `common` come from
        the package's modules `sources` at `version` (what `patterns.kept` keeps their table under)."""
        # Built from the rule table alone, so kept beside the start-up image once built (patterns.kept): about a
        # millisecond of every write otherwise. It is kept under the table's version and sources and this module's
        # (how it is built), so a changed table or build never meets an index the old one kept, and a scan loads
        # it without the table.
        (self.needles, self.words, self.direct, self.spaced, self.heads, self.head_of, self.exact_heads, self.fused,
         self.to_space, self.to_token) = kept_table(f"needle-index-of-{version}", "2",
                                                    lambda: _index_state(frozenset(needles()), common), _sound_index,
                                                    (*sources, "model/credential_text.py"))  # fmt: skip
        self.accelerated: object = None  # what the accelerator builds from the index, on its first scan


_IndexState = tuple[
    frozenset[str],  # needles
    list[tuple[str, bytes]],  # words: letters and digits only, tested among the distinct runs
    list[tuple[str, bytes]],  # direct: tested in the text (or its distinct tokens)
    dict[bytes, list[tuple[str, bytes, int, tuple[bytes, ...]]]],  # spaced: anchor -> (needle, its bytes, where the
    # anchor starts in it, its runs)
    dict[bytes, list[tuple[str, bytes]]],  # heads
    dict[str, tuple[str, int]],  # head_of: needle -> its head and where the head starts in it
    frozenset[bytes],  # exact_heads
    dict[bytes, tuple[bytes, ...]],  # fused: a head's first three characters -> the heads so beginning
    bytes,  # to_space
    bytes,  # to_token
]


def _index_state(needles: frozenset[str], common: frozenset[str]) -> _IndexState:
    """What a NeedleIndex holds, built from its needles (see the class)."""
    runs_of = regex(r"[a-z0-9]+").findall
    words: list[tuple[str, bytes]] = []
    direct: list[tuple[str, bytes]] = []
    spaced: dict[bytes, list[tuple[str, bytes, int, tuple[bytes, ...]]]] = {}
    heads: dict[bytes, list[tuple[str, bytes]]] = {}
    head_of: dict[str, tuple[str, int]] = {}
    spelled: list[bytes] = []
    for needle in sorted(needles):
        if needle.startswith("\x00"):  # a shape (SHAPE_*), found otherwise
            continue
        raw = needle.encode()
        spelled.append(raw)
        runs = runs_of(needle)
        space = -1
        if len(needle.split(None, 1)) != 1 or needle.strip() != needle:  # it holds a space somewhere
            space = max((at for at, c in enumerate(needle) if c.isspace()), default=-1)
        if space >= 0:
            spaced.setdefault(raw[space:], []).append((needle, raw, space, tuple(r.encode() for r in runs)))
            continue
        head = max(runs, key=len, default="")  # the longest run: `sk_live` is looked for as `live`, rarer than `sk`
        if len(head) < 3 or needle in common:
            (words if needle.isascii() and needle.isalnum() else direct).append((needle, raw))
        else:
            heads.setdefault(head.encode(), []).append((needle, raw))
            head_of[needle] = (head, needle.index(head))
    fused: dict[bytes, tuple[bytes, ...]] = {}
    for head_bytes in heads:
        fused[head_bytes[:3]] = (*fused.get(head_bytes[:3], ()), head_bytes)
    # Every byte but ASCII letters and digits to a space: bytes.translate and split cut a text into its
    # alphanumeric runs many times faster than re.findall does (a non-ASCII character is bytes >= 0x80)
    to_space = _blanking(_ALNUM)
    # ...and every byte no spaceless needle holds: the text's tokens, in which each such needle occurs as it
    # occurs in the text
    to_token = _blanking(_ALNUM + b"".join(spelled).translate(None, _SPACES))
    return (needles, words, direct, spaced, heads, head_of, frozenset(heads), fused, to_space, to_token)


_STATE_TYPES = (frozenset, list, list, dict, dict, dict, frozenset, dict, bytes, bytes)


def _sound_index(value: object) -> bool:
    """Whether a kept value has a NeedleIndex's shape (its containers; what they hold was built by this module)."""
    return (isinstance(value, tuple) and len(value) == len(_STATE_TYPES)
            and all(type(item) is kind for item, kind in zip(value, _STATE_TYPES, strict=True))
            and len(value[8]) == len(value[9]) == 256)  # fmt: skip


class Haystack:
    """A text to search: its UTF-8 bytes with ASCII letters lower-cased, and the offsets of every needle looked for.

    Needles are lower case and ASCII (or the invisible characters see_through looks for), so lower-casing the bytes
    is enough, and far cheaper than str.lower(); it also keeps every offset where it is.
    """

    __slots__ = ("_before", "_continuation", "cache", "data", "found", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass").lower()
        self.cache: dict[str, list[int]] = {}  # needle -> its offsets
        self.found: dict[str, list[int]] = {}  # needle -> its byte offsets, found along with the needles present
        self._continuation = b""
        self._before: list[int] = []

    def positions(self, needle: str) -> list[int]:
        """Every offset of needle in the text, found once per scan (rules share needles)."""
        found = self.cache.get(needle)
        if found is None:
            spots = self.found.get(needle)
            if spots is None:
                spots = self.byte_positions(needle.encode("utf-8", "surrogatepass"))
            found = self.cache[needle] = self.chars(spots)
        return found

    def byte_positions(self, raw: bytes) -> list[int]:
        """Every byte offset of raw in the text's bytes, overlapping ones included."""
        data, found = self.data, []
        at = data.find(raw)
        while at >= 0:
            found.append(at)
            at = data.find(raw, at + 1)
        return found

    def chars(self, offsets: list[int]) -> list[int]:
        """Byte offsets (each at a character's start) as character offsets."""
        if len(self.data) == len(self.text):
            return offsets
        if not self._before:  # how many continuation bytes come before each block
            marks = self._continuation = self.data.translate(_CONTINUATION)
            count = 0
            for start in range(0, len(marks), _BLOCK):
                self._before.append(count)
                count += marks.count(1, start, start + _BLOCK)
            self._before.append(count)
        marks, before = self._continuation, self._before
        return [at - before[at // _BLOCK] - marks.count(1, at - at % _BLOCK, at) for at in offsets]

    def occurrences(self, needles: tuple[str, ...]) -> list[int]:
        """Every offset at which one of the needles occurs, in order."""
        if len(needles) == 1:
            return self.positions(needles[0])
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


def present(index: NeedleIndex, haystack: Haystack, shapes: dict[str, list[int] | None]) -> set[str]:
    """The needles that occur in the text (by NeedleIndex's reading), and the shapes (SHAPE_*) it holds.

    Where the rules of each shape are to be tried is put in shapes (None: search the whole text). The accelerator,
    when there, finds the needles in one pass and leaves their offsets in haystack.found; the answer is the same.
    """
    engine = accelerator() if len(haystack.data) >= ACCELERATE_FROM else None
    found = _present_pure(index, haystack) if engine is None else engine.present(index, haystack)
    for shape, words in zip((SHAPE_HEX32, SHAPE_SID34), _hex_words(haystack.data), strict=True):
        if words:  # a few such words are cheaper found one by one than by the rule's search of the whole text
            shapes[shape] = haystack.occurrences(tuple(words)) if len(words) <= _FEW_SHAPES else None
    _token_shapes(haystack, shapes)
    found.update(shapes)
    return found


def _present_pure(index: NeedleIndex, haystack: Haystack) -> set[str]:
    """present's needles, with the standard library: a set of the text's distinct runs, and substring tests."""
    data = haystack.data
    # A long text's distinct tokens, joined, are a fraction of it (words repeat), and a needle without a space
    # occurs in them exactly when it occurs in the text: testing there costs that much less.
    tokens = b" ".join(set(data.translate(index.to_token).split())) if len(data) > _TOKENS else data
    parts = set(tokens.translate(index.to_space).split())
    # A needle of letters and digits occurs in the text exactly when it occurs in one of its distinct runs: those,
    # joined, are shorter still (a substring test costs about a nanosecond a character).
    words = b" ".join(parts)
    found = {needle for needle, raw in index.words if raw in words}
    found.update(needle for needle, raw in index.direct if raw in tokens)
    heads = parts & index.exact_heads
    fused = index.fused
    for part in parts:  # runs that begin with a head (plain loops: a generator per run costs more than the test)
        bucket = fused.get(part[:3])
        if bucket:
            for head in bucket:
                if part.startswith(head):
                    heads.add(head)
    for head in heads:
        for needle, raw in index.heads[head]:
            if raw in tokens:
                found.add(needle)
    for anchor, group in index.spaced.items():
        # where the anchor occurs, each needle ending with it is tested; the needle's offsets are kept for the rules
        spots = haystack.byte_positions(anchor)
        if not spots:
            continue
        for needle, raw, back, runs in group:
            if all(run in words for run in runs):
                starts = [at - back for at in spots if at >= back and data.startswith(raw, at - back)]
                if starts:
                    haystack.found[needle] = starts
                    found.add(needle)
    return found


# Every byte to its class for the 32-hex-digit words: `h` a hex digit, `g` another ASCII letter or digit, else space.
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_ALNUM_CLASSES = bytes.maketrans(_ALNUM, bytes(0x68 if c in _HEX_DIGITS else 0x67 for c in _ALNUM))
_HEX_CLASSES = _blanking(_ALNUM).translate(_ALNUM_CLASSES)


def _hex_words(data: bytes) -> tuple[set[str], set[str]]:
    """The distinct alphanumeric runs of the (lower-cased) text's bytes that are exactly 32 hex digits, and those
    that are exactly 34 starting `ac`."""
    classes = b" " + data.translate(_HEX_CLASSES) + b" "
    found: tuple[set[str], set[str]] = (set(), set())
    for length, kept in zip((32, 34), found, strict=True):
        shape = b" " + b"h" * length + b" "
        at = classes.find(shape)
        while at >= 0:  # at is where the word starts in data (classes has one byte more in front)
            if length == 32 or data.startswith(b"ac", at):
                kept.add(data[at : at + length].decode("ascii"))
            at = classes.find(shape, at + length + 1)
    return found


# The text's bytes by class, for the shape searches (built on first use, with the Discord search): digits become
# `0`, ASCII letters, `_` and `-` become `a`, `.` and `:` stay, and every other byte (non-ASCII ones included) is a
# space.  One translate, then plain byte searches find the shapes.
_SHAPE_TOOLS: list[tuple[bytes, re.Pattern[bytes]]] = []


def _shape_tools() -> tuple[bytes, re.Pattern[bytes]]:
    if not _SHAPE_TOOLS:

        def kind(c: str) -> int:
            return 0x30 if c.isdigit() else 0x61 if c.isalpha() or c in "_-" else ord(c) if c in ".:" else 0x20

        table = bytes(kind(chr(c)) for c in range(128)) + b" " * 128
        _SHAPE_TOOLS.append((table, regex(rb"\.[a0]{6}\.[a0]{27}")))
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
        from wheypoint.model.characters import INVISIBLE

        _INVISIBLE.append(regex(f"[{INVISIBLE}]"))
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
