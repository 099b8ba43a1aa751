"""Characters that break a line or hide in one: the single definition intake refuses and notes escape.

Readers of a note split lines differently: CommonMark on `\\n` and `\\r`, `str.splitlines` (the ten-line reader
in docs/contract.md) on eight more. Other characters are invisible on screen yet change what a reader sees:
bidi controls reorder a line ("Trojan Source"), zero-width characters hide inside a word, tag characters carry
hidden ASCII. One-line fields refuse all of them at intake (`rules.check_text_shape`); verbatim text keeps
them, and the note shows them escaped (`notes/escapes.py`).

Zero-width joiners (U+200C, U+200D) between two non-ASCII characters are not hidden: emoji sequences and
Persian or Indic script need them, and inside ASCII text (a token, a path) they are still caught.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

# Line terminators other than \n that `str.splitlines` breaks lines on (CommonMark also breaks on \r).
LINE_TERMINATORS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# Invisible characters, as the body of a character class: the soft hyphen, the grapheme joiner, bidi marks and
# controls, zero-width and filler characters, the word joiner and invisible operators, the BOM, interlinear
# annotation, musical format controls, and the tag characters. The credential scan reads text with these taken out.
INVISIBLE = (
    "\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\u3164\ufeff\uffa0\ufff9-\ufffb\U0001d173-\U0001d17a\U000e0000-\U000e007f"
)
# As a character class: C0 controls but tab and newline, DEL and the C1 controls (NEL among them), U+2028 and
# U+2029, the invisible characters, and lone surrogates.
HIDDEN_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + INVISIBLE + "\ud800-\udfff"
_JOINERS = "\u200c\u200d"
_compiled: dict[str, re.Pattern[str]] = {}


def hidden_pattern(extra: str = "") -> re.Pattern[str]:
    """The class as a compiled pattern, `extra` characters added; each is compiled once, on first use."""
    pattern = _compiled.get(extra)
    if pattern is None:
        import re  # (here: plain ASCII text, what most commands print, needs no pattern and no `re`)

        pattern = _compiled[extra] = re.compile(f"[{HIDDEN_CLASS}{re.escape(extra)}]")
    return pattern


def plain(text: str) -> bool:
    """Whether `text` is ASCII with no hidden character, a tab or newline aside: the common case, told without
    compiling the class (a command that prints one note need not pay for it)."""
    return text.isascii() and (text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable())


def kept_joiner(text: str, at: int) -> bool:
    """Whether the character at `at` is a ZWJ or ZWNJ between two non-ASCII characters that are not hidden."""
    if text[at] not in _JOINERS or at == 0 or at + 1 >= len(text):
        return False
    before, after = text[at - 1], text[at + 1]
    pattern = hidden_pattern()
    return before > "\x7f" and after > "\x7f" and not pattern.match(before) and not pattern.match(after)


def first_hidden(text: str) -> int | None:
    """Where the first hidden character of `text` is (a newline counts), or None when it has none."""
    if text.isascii() and text.isprintable():  # the common case, without a regular expression
        return None
    for match in hidden_pattern("\n").finditer(text):
        if not kept_joiner(text, match.start()):
            return match.start()
    return None


def without_hidden(text: str) -> str:
    """`text` with its hidden characters taken out (kept joiners stay): what a reader sees of it."""
    if first_hidden(text) is None:
        return text
    return hidden_pattern().sub(lambda m: m[0] if kept_joiner(text, m.start()) else "", text)
