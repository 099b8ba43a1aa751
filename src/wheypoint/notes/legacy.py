"""Hand-written notes: seed 0's `.cheese/notes/<slug>.md` files that no store record backs.

They are read, linted, listed and resolved, but never authoritative: only `adopt` turns one into a
store record. The caller says which folders to look in (a checkout and its worktrees).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from wheypoint.model.errors import Refusal
from wheypoint.notes.files import NOTES_SUBDIR, read_note
from wheypoint.notes.parse import ParsedNote, parse_note


class LegacyNote(NamedTuple):
    path: Path
    parsed: ParsedNote
    text: str


def legacy_notes(roots: list[Path]) -> list[LegacyNote]:
    """Notes without wheypoint pins under each root's `.cheese/notes`, in name order per root."""
    found = []
    for root in roots:
        folder = root / NOTES_SUBDIR
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            try:
                text = read_note(path)
            except Refusal:
                continue
            parsed = parse_note(text)
            if parsed.format != "wheypoint":
                found.append(LegacyNote(path, parsed, text))
    return found
