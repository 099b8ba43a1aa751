"""The note commands: `lint` and `handoff parse|render|dispatch`, over a note path or a resolved record."""

from __future__ import annotations

from wheypoint.app.context import Context, note_path_named
from wheypoint.model.errors import Refusal, bad_parameter
from wheypoint.notes.files import read_note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.store.base import Store


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
    from wheypoint.notes.lint import lint_report
    from wheypoint.notes.parse import parse_note

    text = read_note(path)
    parsed = parse_note(text)
    record = _store_record(ctx, (parsed.wheypoint or {}).get("work_id"))
    return {"path": path, "record_found": record is not None, **lint_report(text, record)}


def _record_for(ctx: Context, ref: str, workspace_root: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(resolution, record) for a reference that resolves to a store record; refused otherwise."""
    from wheypoint.app.resolve import resolve_with_record

    resolution, record = resolve_with_record(ctx, ref, workspace_root, checked=False)
    if record is None:
        code = "ambiguous" if resolution["outcome"] == "ambiguous" else "record-missing"
        raise Refusal(code, f"{ref!r} does not resolve to one store record ({resolution['outcome']})",
                      details={"resolution": resolution})  # fmt: skip
    return resolution, record


def handoff_parse(ctx: Context, ref: str, workspace_root: str | None) -> dict[str, Any]:
    """Any note's preamble as JSON: a path is read as it is on disk; a work or slug through its record."""
    from wheypoint.notes.parse import parse_note  # (here: a packet, every session's start, needs no parser)

    path = note_path_named(ctx, ref)
    if path is not None:
        return {"path": path, **parse_note(read_note(path)).as_json()}
    from wheypoint.notes.render import render

    _, record = _record_for(ctx, ref, workspace_root)
    return {"work_id": record["work_id"], **parse_note(render(record)).as_json()}


# The packet `handoff render` builds when no budget is named: room for a typical record's gates, decisions and
# directives with their quotes whole, and small enough to paste into any agent's context.
DEFAULT_PACKET_BUDGET = 6000


def handoff_render(ctx: Context, ref: str, workspace_root: str | None, budget: str | None) -> dict[str, Any]:
    """A record's preamble and its resume packet, at most `budget` characters (DEFAULT_PACKET_BUDGET when none)."""
    from wheypoint.notes.render import render

    record, limit, packet = handoff_packet(ctx, ref, workspace_root, budget)
    preamble = render(record).split("\n\n", 1)[0] + "\n"  # (it carries the whole note's digest)
    return {"work_id": record["work_id"], "preamble": preamble, "budget": limit, "packet": packet}


def handoff_packet(ctx: Context, ref: str, workspace_root: str | None,
                   budget: str | None) -> tuple[dict[str, Any], int, dict[str, Any]]:  # fmt: skip
    """(the record, the budget, its resume packet): `handoff render` without the preamble, which costs the whole
    note's render; what a hook hands the model."""
    from wheypoint.notes.packet import packet_size, render_packet

    if budget is not None and not (budget.isascii() and budget.isdigit() and len(budget) <= 9 and int(budget) > 0):
        raise bad_parameter("budget", "takes a positive number of characters")
    limit = int(budget) if budget is not None else DEFAULT_PACKET_BUDGET
    _, record = _record_for(ctx, ref, workspace_root)
    store = ctx.open_store(create=False)
    try:
        times = {r["revision_number"]: r["captured_at"] for r in store.revisions(record["work_id"])}
        packet = render_packet(record, limit, times)
        # Room left over, as a part just begun leaves: the part before it is read, for its newest turns.
        earlier = None if packet["omitted"] or packet_size(packet) >= limit else _earlier_part(store, record)
    finally:
        store.close()
    return record, limit, packet if earlier is None else render_packet(record, limit, times, earlier)


def _earlier_part(store: Store, record: dict[str, Any]) -> dict[str, Any] | None:
    """The record of the work that kept the same session's turns before this one, which a `relates_to` link of
    this record names (a long session's rescue links each part to the one before it), or None."""
    from wheypoint.app.lookup import work_named

    session = record.get("session")
    for edge in record["edges"] if session else ():
        if edge["kind"] != "relates_to":
            continue
        work = work_named(store, edge["ref"], record["project_key"])
        try:
            found = store.record(work.work_id) if work is not None and work.work_id != record["work_id"] else None
        except Refusal:  # a damaged record gives no turns (doctor lists it)
            continue
        if found is not None and found.get("session") == session and found.get("meat"):
            return found
    return None


def handoff_dispatch(ctx: Context, ref: str, workspace_root: str | None) -> dict[str, Any]:
    """What a resuming agent should do. Only an authoritative resolution is dispatched; else it is surfaced."""
    from wheypoint.app.resolve import resolve_with_record
    from wheypoint.notes.handoff import dispatch, dispatch_record
    from wheypoint.notes.parse import parse_note

    resolution, record = resolve_with_record(ctx, ref, workspace_root)
    if record is not None:
        action = dispatch_record(record)
    elif resolution.get("note_path"):  # a legacy note: read, never run without a person
        action = dispatch(parse_note(read_note(resolution["note_path"])))
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
