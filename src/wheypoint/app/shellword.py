"""One word for a POSIX shell, quoted as `shlex.quote` quotes it, without loading `re`."""

from __future__ import annotations

# `shlex.quote` leaves a word bare when it holds only ASCII word characters and `@%+=:,./-` (its pattern
# `[^\w@%+=:,./-]` under re.ASCII), writes `''` for the empty word, and otherwise single-quotes the whole word,
# spelling each `'` inside as `'"'"'`. A test holds this to `shlex.quote` on arbitrary text.
_BARE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def posix_quote(word: str) -> str:
    """`word` as one word of a POSIX shell's command line."""
    if not word:
        return "''"
    if _BARE.issuperset(word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"
