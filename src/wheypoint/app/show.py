"""`wheypoint show` and `wheypoint log`: a work's head record (or an earlier one) and its revision chain."""

from __future__ import annotations

from wheypoint.app.context import Context, NoteOptions, note_path_for, place_of
from wheypoint.app.lookup import find_work
from wheypoint.model.errors import Refusal
from wheypoint.notes.files import note_state
from wheypoint.notes.render import render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def show(ctx: Context, ref: str, revision_id: str | None, notes: NoteOptions, repair_note: bool) -> dict[str, Any]:
    store = ctx.open_store(create=False)
    try:
        found = find_work(ctx, store, ref)
        work = found.work
        if revision_id is not None and _revision_number(revision_id) is not None:
            revision_id = revision_named(store.revisions(work.work_id), revision_id)
        record = store.record(work.work_id, revision_id)
        if record is None:
            raise Refusal("revision-missing", f"{revision_id} is not a revision of {work.work_id}")
        from wheypoint.app.links import backlinks  # show alone answers them; log, from this module too, does not

        pointing = backlinks(store, work)
    finally:
        store.close()
    here = ctx.checkout
    base = here.toplevel if here else ctx.cwd
    if notes.note_dir:
        path = note_path_for(ctx, record["slug"], notes)
    else:
        place = place_of(ctx, work)
        path, base = place.note_path, place.checkout_path or base
    expected = None if revision_id is not None else render(record)
    state = "not-head" if expected is None else note_state(path, expected)
    kept = None
    if repair_note and expected is not None and state in ("stale", "missing"):
        from wheypoint.app.noteplace import put_note

        try:
            kept = put_note(path, expected, base)
        except OSError as exc:  # the same refusal checkpoint gives as a warning: the store is untouched
            raise Refusal("note-unwritable", f"the note was not written to {path}: {exc.strerror or exc}",
                          details={"note_path": path}) from None  # fmt: skip
        state = "rewritten"
    note = {"path": path, "state": state, **({"hand_edit_kept": kept} if kept else {})}
    return {"work_id": work.work_id, **found.said(), "record": record, "note": note, "backlinks": pointing}


def log(ctx: Context, ref: str) -> dict[str, Any]:
    store = ctx.open_store(create=False)
    try:
        found = find_work(ctx, store, ref)
        work = found.work
        history = store.history(work.work_id)  # one read, however many revisions
    finally:
        store.close()
    revisions, records = [r.receipt for r in history], [r.record for r in history]
    authors = {r.receipt["revision_id"]: r.author for r in history}
    texts = {e["id"]: e for e in (records[-1] if records else {}).get("entries", [])}
    chain = []
    for revision, record, before in zip(revisions, records, [{}, *records], strict=False):
        chain.append({
            "revision_number": revision["revision_number"],
            "revision_id": revision["revision_id"],
            "parent_revision_id": revision["parent_revision_id"],
            "captured_at": revision["captured_at"],
            "author": authors.get(revision["revision_id"]),
            "record_digest": revision["record_digest"],
            "added": [{"id": i, "kind": texts[i]["kind"], "text": texts[i]["text"]} for i in revision["added"]],
            "transitioned": revision["transitioned"],
            "links_added": revision["links_added"],
            "links_removed": revision["links_removed"],
            "notes_changed": revision["notes_changed"],
            "compacted": revision["compacted"],
            "moved": _moved(before, record),
        })  # fmt: skip
    return {"work_id": work.work_id, "slug": work.slug, **found.said(), "status": work.status, "revisions": chain}


def note_text(record: dict[str, Any]) -> str:
    """The note a record renders to: what `show` prints for a person."""
    return render(record)


def _revision_number(ref: str) -> int | None:
    """The number a revision reference gives (`2`, or the label `log` prints, `r2`); None for an id."""
    number = ref[1:] if ref[:1] in ("r", "R") else ref
    # ASCII and bounded: int() refuses other digits ('²') and takes seconds over thousands of them.
    return int(number) if number.isascii() and number.isdigit() and len(number) <= 9 else None


def revision_named(revisions: list[dict[str, Any]], ref: str) -> str:
    """The id of the revision a number or label names (the reference itself when none has that number)."""
    number = _revision_number(ref)
    return next((str(r["revision_id"]) for r in revisions if r["revision_number"] == number), ref)


def _next_line(record: dict[str, Any]) -> str | None:
    """A record's next move as one line: the move, or its items in order."""
    nxt = record.get("next") or {}
    if nxt.get("move"):
        return str(nxt["move"])
    items = [f"{item.get('skill')} {item.get('arg')}" for item in nxt.get("items", [])]
    return "; ".join(items) or None


def _moved(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What a revision changed that its receipt does not list: the next move, the status, the working context."""
    moved: dict[str, Any] = {}
    for key, read in (("next", _next_line), ("status", lambda r: r.get("status")),
                      ("orientation", lambda r: r.get("orientation"))):  # fmt: skip
        old, new = (read(before) if before else None), read(after)
        if old != new:
            moved[key] = {"from": old, "to": new}
    old_context, new_context = before.get("working_context", []), after.get("working_context", [])
    added = [item for item in new_context if item not in old_context]
    removed = [item for item in old_context if item not in new_context]
    if added or removed:
        moved["context"] = {"added": added, "removed": removed}
    return moved
