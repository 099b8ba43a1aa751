"""Hand-written notes: seed 0's `.cheese/notes/<slug>.md` files that no store record backs.

They are read, linted, listed and resolved, but never authoritative: only `adopt` turns one into a
store record. The caller says which folders to look in (a checkout and its worktrees).
"""

from __future__ import annotations

import os

from wheypoint.model.errors import Refusal
from wheypoint.model.records import Record
from wheypoint.notes.files import NOTES_SUBDIR, read_note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from wheypoint.notes.parse import ParsedNote


class LegacyNote(Record):
    """A hand-written note found on disk: where, what it says, and its text."""

    path: str
    parsed: ParsedNote
    text: str


def legacy_notes(roots: list[str]) -> list[LegacyNote]:
    """Notes without wheypoint pins under each root's `.cheese/notes`, in name order per root."""
    found = []
    for root in roots:
        folder = os.path.join(root, NOTES_SUBDIR)
        try:
            names = sorted(name for name in os.listdir(folder) if name.endswith(".md"))
        except OSError:  # no notes folder here
            continue
        from wheypoint.notes.render import carries_own_digest

        for path in (os.path.join(folder, name) for name in names):
            if not os.path.isfile(path):
                continue
            try:
                text = read_note(path)
            except Refusal:
                continue
            if carries_own_digest(text):  # a generated note as rendered: not legacy, no need to parse it
                continue
            from wheypoint.notes.parse import parse_note  # only a note that may be hand-written needs the parser

            parsed = parse_note(text)
            if parsed.format != "wheypoint":
                found.append(LegacyNote(path, parsed, text))
    return found
