"""`wheypoint show` and `wheypoint log`: a work's head record (or an earlier one) and its revision chain."""

from __future__ import annotations

import os

from wheypoint.app.context import Context, NoteOptions, find_work, note_path_for
from wheypoint.model.errors import Refusal
from wheypoint.notes.files import note_state, write_atomic
from wheypoint.notes.render import render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def show(ctx: Context, ref: str, revision_id: str | None, notes: NoteOptions, repair_note: bool) -> dict[str, Any]:
    store = ctx.open_store(create=False)
    try:
        work = find_work(store, ref, ctx.project_key())
        if revision_id is not None:
            revision_id = _revision_named(store.revisions(work.work_id), revision_id)
        record = store.record(work.work_id, revision_id)
        if record is None:
            raise Refusal("revision-missing", f"{revision_id} is not a revision of {work.work_id}")
    finally:
        store.close()
    path = note_path_for(ctx, record["slug"], notes)
    if revision_id is not None:
        state = "not-head"
    else:
        state = note_state(path, render(record)) if os.path.exists(path) else "missing"
    if repair_note and state in ("stale", "missing"):
        try:
            write_atomic(path, render(record))
        except OSError as exc:  # the same refusal checkpoint gives as a warning: the store is untouched
            raise Refusal("note-unwritable", f"the note was not written to {path}: {exc.strerror or exc}",
                          details={"note_path": path}) from None  # fmt: skip
        state = "rewritten"
    return {"work_id": work.work_id, "record": record, "note": {"path": path, "state": state}}


def log(ctx: Context, ref: str) -> dict[str, Any]:
    store = ctx.open_store(create=False)
    try:
        work = find_work(store, ref, ctx.project_key())
        revisions = store.revisions(work.work_id)
        records = [store.record(work.work_id, revision["revision_id"]) or {} for revision in revisions]
    finally:
        store.close()
    texts = {e["id"]: e for e in (records[-1] if records else {}).get("entries", [])}
    chain = []
    for revision, record, before in zip(revisions, records, [{}, *records], strict=False):
        chain.append({
            "revision_number": revision["revision_number"],
            "revision_id": revision["revision_id"],
            "parent_revision_id": revision["parent_revision_id"],
            "captured_at": revision["captured_at"],
            "record_digest": revision["record_digest"],
            "added": [{"id": i, "kind": texts[i]["kind"], "text": texts[i]["text"]} for i in revision["added"]],
            "transitioned": revision["transitioned"],
            "links_added": revision["links_added"],
            "links_removed": revision["links_removed"],
            "notes_changed": revision["notes_changed"],
            "compacted": revision["compacted"],
            "moved": _moved(before, record),
        })  # fmt: skip
    return {"work_id": work.work_id, "slug": work.slug, "status": work.status, "revisions": chain}


def note_text(record: dict[str, Any]) -> str:
    """The note a record renders to: what `show` prints for a person."""
    return render(record)


def _revision_named(revisions: list[dict[str, Any]], ref: str) -> str:
    """The revision id a reference means: the id itself, its number (`2`) or the label `log` prints (`r2`)."""
    number = ref[1:] if ref[:1] in ("r", "R") else ref
    if number.isdigit():
        for revision in revisions:
            if revision["revision_number"] == int(number):
                return str(revision["revision_id"])
    return ref


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
