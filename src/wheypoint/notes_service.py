"""The note commands: `lint`, `handoff parse|render|dispatch`, `adopt`, and finding legacy notes on disk.

Legacy notes are the hand-written `.cheese/notes/<slug>.md` files of seed 0, found in the checkout and
in every git worktree of it. They are read, linted, listed and resolved, but never authoritative:
only `adopt` turns one into a store record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from wheypoint.errors import Refusal
from wheypoint.notefile import NOTES_SUBDIR
from wheypoint.noteparse import MAX_NOTE_BYTES, ParsedNote, parse_note
from wheypoint.service import Context
from wheypoint.workspace import Checkout


def read_note(path: Path) -> str:
    """A note's text (at most 1 MiB is read), refused with a code when it cannot be read."""
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_NOTE_BYTES + 1).decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise Refusal("note-missing", f"no note at {path}") from None
    except IsADirectoryError:
        raise Refusal("note-unreadable", f"{path} is a folder, not a note") from None
    except OSError as exc:
        raise Refusal("note-unreadable", f"cannot read {path}: {exc.strerror}") from None


def worktree_roots(checkout: Checkout) -> list[Path]:
    """The checkout's top folder and every other worktree of its repository."""
    roots = [checkout.toplevel]
    listing = checkout.git("worktree", "list", "--porcelain", ok=(0,)) or ""
    for line in listing.splitlines():
        if line.startswith("worktree "):
            root = Path(line[len("worktree ") :])
            if root not in roots and root.is_dir():
                roots.append(root)
    return roots


class LegacyNote(NamedTuple):
    path: Path
    parsed: ParsedNote
    text: str


def legacy_notes(ctx: Context) -> list[LegacyNote]:
    """Hand-written notes (no wheypoint pins) in the checkout and its worktrees, or in the current folder."""
    checkout = ctx.checkout
    roots = worktree_roots(checkout) if checkout else [ctx.cwd]
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


def _store_record(ctx: Context, work_id: str | None) -> dict[str, Any] | None:
    if not work_id:
        return None
    store = ctx.open_store(create=False)
    try:
        return store.record(work_id)
    finally:
        store.close()


def lint_path(ctx: Context, path: str) -> dict[str, Any]:
    """Lint any note; a generated one is checked against its record when the store has it."""
    from wheypoint.lint import lint_report

    text = read_note(Path(path))
    parsed = parse_note(text)
    record = _store_record(ctx, (parsed.wheypoint or {}).get("work_id"))
    return {"path": path, "record_found": record is not None, **lint_report(text, record)}


def _record_for(ctx: Context, ref: str, workspace_root: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(resolution, record) for a reference that resolves to a store record; refused otherwise."""
    from wheypoint.resolving import resolve_with_record

    resolution, record = resolve_with_record(ctx, ref, workspace_root)
    if record is None:
        code = "ambiguous" if resolution["outcome"] == "ambiguous" else "record-missing"
        raise Refusal(code, f"{ref!r} does not resolve to one store record ({resolution['outcome']})",
                      details={"resolution": resolution})  # fmt: skip
    return resolution, record


def handoff_parse(ctx: Context, ref: str, workspace_root: str | None) -> dict[str, Any]:
    """Any note's preamble as JSON: a path is read as it is on disk; a work or slug through its record."""
    path = Path(ref).expanduser()
    if ref.startswith(("/", "~", ".")) or path.is_file():
        return {"path": str(path), **parse_note(read_note(path)).as_json()}
    from wheypoint.projection import render

    _, record = _record_for(ctx, ref, workspace_root)
    return {"work_id": record["work_id"], **parse_note(render(record)).as_json()}


def handoff_render(ctx: Context, ref: str, workspace_root: str | None, budget: str | None) -> dict[str, Any]:
    """The preamble and orientation of a record, or with --budget a compact resume packet."""
    from wheypoint.projection import render

    _, record = _record_for(ctx, ref, workspace_root)
    if budget is None:
        preamble = render(record).split("\n\n", 1)[0]
        return {"work_id": record["work_id"], "preamble": preamble + "\n"}
    if not budget.isdigit() or int(budget) <= 0:
        raise Refusal("usage", "--budget takes a positive number of characters", exit_code=2)
    from wheypoint.handoff import render_packet

    store = ctx.open_store(create=False)
    try:
        times = {r["revision_number"]: r["captured_at"] for r in store.revisions(record["work_id"])}
    finally:
        store.close()
    return {"work_id": record["work_id"], "packet": render_packet(record, int(budget), times)}


def handoff_dispatch(ctx: Context, ref: str, workspace_root: str | None) -> dict[str, Any]:
    """What a resuming agent should do. Only an authoritative resolution is dispatched; else it is surfaced."""
    from wheypoint.handoff import dispatch, dispatch_record
    from wheypoint.resolving import resolve_with_record

    resolution, record = resolve_with_record(ctx, ref, workspace_root)
    if record is not None:
        action = dispatch_record(record)
    elif resolution.get("note_path"):  # a legacy note: read, never run without a person
        action = dispatch(parse_note(read_note(Path(resolution["note_path"]))))
    else:
        action = {"action": "none", "reason": f"{ref!r} is {resolution['outcome']}"}
    gating = [f for f in resolution.get("findings", []) if f["severity"] == "gating" and f["code"] != "gate-open"]
    if gating and action.get("action", "").startswith("run"):
        action = {"action": "check-findings", "would_run": action, "findings": gating,
                  "message": "resolve found gating problems: a person looks before anything runs"}  # fmt: skip
    return {
        "outcome": resolution["outcome"],
        "dispatchable": resolution["dispatchable"],
        "work_id": resolution.get("work_id"),
        "findings": resolution.get("findings", []),
        "dispatch": action,
    }


_OPTION = ("- ", "* ", "+ ")


def _dossier_options(parsed: ParsedNote) -> list[str]:
    """The options a hand-written Decision dossier lists (its top-level list items), in order."""
    section = parsed.find(r"decision dossier")
    if section is None:
        return []
    items = [line[2:].strip() for line in section.text.splitlines() if line.startswith(_OPTION)]
    return [item for item in items if item]


def adopt(ctx: Context, path_text: str, notes: Any) -> dict[str, Any]:
    """Turn a hand-written note into a store record's first revision, keeping its text and provenance."""
    import re

    from wheypoint.checkpointing import checkpoint
    from wheypoint.kernel import derive_slug
    from wheypoint.lint import intent_next, lint_note
    from wheypoint.shapes import SLUG_PATTERN

    path = Path(path_text).expanduser().resolve()
    text = read_note(path)
    parsed = parse_note(text)
    if parsed.format == "wheypoint":
        raise Refusal("not-legacy", f"{path} is a generated note; its record is already in the store")
    blocking = [f for f in lint_note(text) if f.severity == "gating" and f.code not in ("dossier-missing",)]
    if blocking:
        raise Refusal("note-not-adoptable", f"{path} has {len(blocking)} gating lint finding(s); fix the note first",
                      details={"findings": [f.as_json() for f in blocking]})  # fmt: skip
    orientation = parsed.orientation or ""
    slug = path.stem if re.match(SLUG_PATTERN, path.stem) else derive_slug(orientation)
    facts = [f"{key} {value}" for key, value in (("session", parsed.session), ("git", parsed.git),
             ("created", parsed.created), ("parents", ", ".join(parsed.parents or []) or None)) if value]  # fmt: skip
    checkout = ctx.checkout
    shown = str(path.relative_to(checkout.toplevel)) if checkout and checkout.contains(path) else str(path)
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
    return {**reply, "adopted_from": str(path)}
