"""`wheypoint adopt`: a hand-written legacy note becomes a store record's first revision, its text kept."""

from __future__ import annotations

import os
import re

from wheypoint.app.checkpoint import checkpoint
from wheypoint.app.context import Context, NoteOptions, note_path_for
from wheypoint.model.errors import Refusal
from wheypoint.model.kernel import derive_slug
from wheypoint.model.shapes import SLUG_PATTERN
from wheypoint.notes.files import read_note
from wheypoint.notes.lint import intent_next, lint_note
from wheypoint.notes.parse import parse_note
from wheypoint.notes.seed0 import seed0_fields

ADOPTED_SUBDIR = "adopted"  # beside the notes, where `adopt` keeps a note it writes over

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

def adopt(ctx: Context, path_text: str, notes: NoteOptions) -> dict[str, Any]:
    """Turn a hand-written note into a store record's first revision: each seed-0 part to its field.

    The note's file is the user's: when the generated note is to be written over it, the original is kept first
    at `<notes folder>/adopted/<name>.md` (outside the folder legacy notes are listed from), and the record's
    artifact link names that copy, whose digest then holds; otherwise the link names the note where it is.
    """
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
    fields = seed0_fields(parsed.body)
    facts = [f"{key} {value}" for key, value in (("session", parsed.session), ("git", parsed.git),
             ("created", parsed.created), ("parents", ", ".join(parsed.parents or []) or None)) if value]  # fmt: skip
    checkout = ctx.checkout
    kept = _keep_original(ctx, path, text, slug, notes)
    linked = kept or path
    inside = checkout is not None and checkout.contains(linked)
    shown = os.path.relpath(linked, os.path.realpath(checkout.toplevel)) if checkout and inside else linked
    intent: dict[str, Any] = {
        "slug": slug,
        "orientation": orientation,
        "next": intent_next(parsed) or {},
        "working_context": [f"adopted from {shown}" + (f" ({'; '.join(facts)})" if facts else "")],
        "artifact_links": [{"ref": shown}],
    }
    if fields.notes:
        intent["notes"] = fields.notes
    if fields.decisions:
        intent["decisions"] = fields.decisions
    if fields.questions:
        intent["questions"] = fields.questions
    if parsed.status_kind == "halt":
        intent["blockers"] = [{"text": parsed.status_reason or "halted", "rationale": "From the adopted note."}]
    forks = fields.forks
    if parsed.status_kind == "gated":
        reason = parsed.status_reason or "decision pending"
        if not forks and len(fields.loose_options) >= 2:
            forks = [{"fork": reason, "options": [{"option": o} for o in fields.loose_options[:16]]}]
        if not forks:
            why = f"{path} is gated but its Decision dossier lists fewer than two options"
            raise Refusal("adopt-needs-dossier", why + "; list them as '- ' items under '## Decision dossier', or "
                          "as '- Options:' under a '### <fork>' there")  # fmt: skip
        gate = {"text": reason, "gates": True, "label": "adopted-gate",
                "rationale": "The gate of the adopted note; its dossier explains it."}  # fmt: skip
        intent["questions"] = [gate, *intent.get("questions", [])]
        forks = [{**forks[0], "gate": "adopted-gate"}, *forks[1:]]
    if forks:
        intent["decision_dossier"] = forks
    reply = checkpoint(ctx, intent, notes)
    return {**reply, "adopted_from": path, **({"original_kept": kept} if kept else {})}


def _keep_original(ctx: Context, path: str, text: str, slug: str, notes: NoteOptions) -> str | None:
    """Where the original note was kept, when the generated note is to be written over it (else None)."""
    if notes.no_note:
        return None
    target = note_path_for(ctx, slug, notes)
    if os.path.realpath(target) != path:
        return None
    from wheypoint.app.noteplace import put_note

    checkout = ctx.checkout
    base = checkout.toplevel if checkout else ctx.cwd
    kept = os.path.join(os.path.dirname(target), ADOPTED_SUBDIR, os.path.basename(target))
    try:
        if not (os.path.isfile(kept) and read_note(kept) == text):
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            put_note(kept, text, base)
    except OSError as exc:
        raise Refusal("note-unwritable", f"the original note could not be kept at {kept}: {exc.strerror or exc}; "
                      "nothing was adopted", details={"note_path": kept}) from None  # fmt: skip
    return os.path.realpath(kept)
