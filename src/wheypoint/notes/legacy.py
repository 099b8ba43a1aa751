"""Hand-written notes: seed 0's `.cheese/notes/<slug>.md` files that no store record backs.

They are read, linted, listed and resolved, but never authoritative: only `adopt` turns one into a
store record. The caller says which folders to look in (a checkout and its worktrees), and which names the store
backs: a note named after a slug of one of the project's works is that work's note (edited or not, drifted or not,
which `resolve` and `doctor` judge), never a hand-written one, and is not read. Any other note is read, and passed
over when it is a generated one (it carries its own digest, or wheypoint pins from another store).
"""

from __future__ import annotations

import os

from wheypoint.model.errors import Refusal
from wheypoint.model.records import Record
from wheypoint.notes.files import NOTES_SUBDIR, read_note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection

    from wheypoint.notes.parse import ParsedNote


class LegacyNote(Record):
    """A hand-written note found on disk: where, what it says, and its text."""

    path: str
    parsed: ParsedNote
    text: str


def note_names(roots: list[str]) -> list[tuple[str, list[str]]]:
    """Each root's notes folder with the `.md` names in it, in name order (a root without one is left out)."""
    found = []
    for root in roots:
        folder = os.path.join(root, NOTES_SUBDIR)
        try:
            names = sorted(name for name in os.listdir(folder) if name.endswith(".md"))
        except OSError:  # no notes folder here
            continue
        found.append((folder, names))
    return found


def legacy_notes(folders: list[tuple[str, list[str]]], backed: Collection[str] = ()) -> list[LegacyNote]:
    """The notes without wheypoint pins among `folders` (`note_names`), passing over unread every note whose name is
    a slug in `backed`: the store holds a work of that slug, so the file is that work's note, edited or not."""
    found = []
    for folder, names in folders:
        for name in names:
            if name[:-3] in backed:
                continue
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                continue
            from wheypoint.notes.render import carries_own_digest  # (only for a note the store does not back)

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
