"""The credential scan's optional accelerator (wheypoint[fast]): one Aho-Corasick pass finds every needle at once."""

# credential_text.present() calls present() here instead of its own search when pyahocorasick imports and the text
# is long (credential_text.ACCELERATE_FROM).  The answer must be the standard-library path's to the needle and the
# offset: the same reading of NeedleIndex (a head-gated needle counts only when its head begins an alphanumeric
# run somewhere in the text), every occurrence of each needle found, overlapping ones included, and character
# offsets.  tests/test_credential_fast.py holds the two paths to that over every generated and corpus text.
#
# The automaton runs over the text's UTF-8 bytes with the ASCII letters lower-cased (Haystack.data), as the
# standard-library path does: str.lower() would also fold non-ASCII letters, some into ASCII ones (the Kelvin
# sign into `k`), and find needles the other path does not.

from __future__ import annotations

import ahocorasick  # type: ignore[import-untyped,import-not-found,unused-ignore]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789")  # after lower-casing, the letters and digits of a run


# The index and the text are credential_text's NeedleIndex and Haystack, typed Any here: that module imports this
# one, and the layers' rules (tests/test_quality.py) allow no import cycle, not even of type-only imports.


def _automaton(index: Any) -> Any:
    """Every needle of the index but the shapes, each stored with how far its start lies before its last character."""
    automaton = ahocorasick.Automaton()
    for needle in sorted(index.needles):
        if not needle.startswith("\x00"):
            automaton.add_word(needle, (needle, len(needle) - 1))
    automaton.make_automaton()
    return automaton


def present(index: Any, haystack: Any) -> set[str]:
    """The needles credential_text._present_pure finds, their byte offsets left in haystack.found."""
    if index.accelerated is None:
        index.accelerated = _automaton(index)
    automaton: Any = index.accelerated
    data = haystack.data
    spots: dict[str, list[int]] = {}
    # Read as Latin-1, the bytes are a string of as many characters (a copy, not a decoding): the automaton's
    # offsets are byte offsets, and only the needles a rule asks for are mapped to character offsets (Haystack).
    for end, (needle, back) in automaton.iter(data.decode("latin-1")):
        found = spots.get(needle)
        if found is None:
            spots[needle] = [end - back]
        else:
            found.append(end - back)
    begins: dict[str, bool] = {}  # head -> whether it begins a run somewhere in the text
    out: set[str] = set()
    for needle, found in spots.items():
        head = index.head_of.get(needle)
        if head is not None:
            word, at = head
            known = begins.get(word)
            if known is None:
                every = spots.get(word)  # when the head is a needle itself, every occurrence of it is known
                starts = every if every is not None else [start + at for start in found]
                known = begins[word] = _begins_run(data, word, starts, every is not None)
            if not known:
                continue
        out.add(needle)
        haystack.found[needle] = found
    return out


def _begins_run(data: bytes, head: str, starts: list[int], every: bool) -> bool:
    """True when head begins an alphanumeric run of the (lower-cased) bytes: at one of the given starts of it or,
    unless those are all of them (every), anywhere else."""
    for at in starts:
        if at == 0 or data[at - 1] not in _ALNUM:
            return True
    if every:
        return False
    raw = head.encode()
    at = data.find(raw)
    while at >= 0:
        if at == 0 or data[at - 1] not in _ALNUM:
            return True
        at = data.find(raw, at + 1)
    return False
