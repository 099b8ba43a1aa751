"""`wheypoint adopt`: a hand-written legacy note becomes a store record's first revision, its text kept."""

from __future__ import annotations

import os
import re

from wheypoint.app.checkpoint import checkpoint
from wheypoint.app.context import Context, NoteOptions
from wheypoint.model.errors import Refusal
from wheypoint.model.kernel import derive_slug
from wheypoint.model.shapes import SLUG_PATTERN
from wheypoint.notes.files import read_note
from wheypoint.notes.lint import intent_next, lint_note
from wheypoint.notes.parse import ParsedNote, parse_note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_OPTION = ("- ", "* ", "+ ")


def _dossier_options(parsed: ParsedNote) -> list[str]:
    """The options a hand-written Decision dossier lists (its top-level list items), in order."""
    section = parsed.find(r"decision dossier")
    if section is None:
        return []
    items = [line[2:].strip() for line in section.text.splitlines() if line.startswith(_OPTION)]
    return [item for item in items if item]


def adopt(ctx: Context, path_text: str, notes: NoteOptions) -> dict[str, Any]:
    """Turn a hand-written note into a store record's first revision, keeping its text and provenance."""
    path = os.path.realpath(os.path.expanduser(path_text))
    stem = os.path.splitext(os.path.basename(path))[0]
    text = read_note(path)
    parsed = parse_note(text)
    if parsed.format == "wheypoint":
        raise Refusal("not-legacy", f"{path} is a generated note; its record is already in the store")
    blocking = [f for f in lint_note(text) if f.severity == "gating" and f.code not in ("dossier-missing",)]
    if blocking:
        raise Refusal("note-not-adoptable", f"{path} has {len(blocking)} gating lint finding(s); fix the note first",
                      details={"findings": [f.as_json() for f in blocking]})  # fmt: skip
    orientation = parsed.orientation or ""
    slug = stem if re.match(SLUG_PATTERN, stem) else derive_slug(orientation)
    facts = [f"{key} {value}" for key, value in (("session", parsed.session), ("git", parsed.git),
             ("created", parsed.created), ("parents", ", ".join(parsed.parents or []) or None)) if value]  # fmt: skip
    checkout = ctx.checkout
    inside = checkout is not None and checkout.contains(path)
    shown = os.path.relpath(path, os.path.realpath(checkout.toplevel)) if checkout and inside else path
    intent: dict[str, Any] = {
        "slug": slug,
        "orientation": orientation,
        "next": intent_next(parsed) or {},
        "notes": parsed.body.strip("\n"),
        "working_context": [f"adopted from {shown}" + (f" ({'; '.join(facts)})" if facts else "")],
        "artifact_links": [{"ref": shown}],
    }
    if parsed.status_kind == "halt":
        intent["blockers"] = [{"text": parsed.status_reason or "halted", "rationale": "From the adopted note."}]
    if parsed.status_kind == "gated":
        options = _dossier_options(parsed)
        if len(options) < 2:
            why = f"{path} is gated but its Decision dossier lists fewer than two options"
            raise Refusal("adopt-needs-dossier", why + "; list them as '- ' items under '## Decision dossier'")
        reason = parsed.status_reason or "decision pending"
        kept = "The gate of the adopted note; its dossier is kept in the notes."
        intent["questions"] = [{"text": reason, "gates": True, "label": "adopted-gate", "rationale": kept}]
        intent["decision_dossier"] = [{"fork": reason, "gate": "adopted-gate",
                                       "options": [{"option": o} for o in options[:16]]}]  # fmt: skip
    reply = checkpoint(ctx, intent, notes)
    return {**reply, "adopted_from": path}
