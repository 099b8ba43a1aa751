"""Facts derived from a record rather than stored by an author: its status and whether its notes are stale."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


GATING_KINDS = ("question", "blocker")
STATUS_TEXT_LIMIT = 120


def derive_status(entries: list[dict[str, Any]]) -> str:
    """`gated: <decision>` while any active question or blocker gates; else `halt: <reason>` while an active blocker
    that does not gate stopped the work (seed 0: surface the reason, then run the next move); else `ok`."""
    gates = [e for e in entries if e["state"] == "active" and e["kind"] in GATING_KINDS and e["gates"]]
    if gates:
        return f"gated: {_status_text(gates)}"
    halts = [e for e in entries if e["state"] == "active" and e["kind"] == "blocker"]
    return f"halt: {_status_text(halts)}" if halts else "ok"


def _status_text(entries: list[dict[str, Any]]) -> str:
    """The first entry's text as one visible line of at most STATUS_TEXT_LIMIT, with `(+N more)` for the rest."""
    from wheypoint.model.characters import without_hidden

    # One visible line: the status is printed on the note's first line, which readers split with splitlines.
    line = " ".join(word for word in map(without_hidden, entries[0]["text"].split()) if word)
    if len(line) > STATUS_TEXT_LIMIT:
        line = line[: STATUS_TEXT_LIMIT - 1].rstrip() + "…"
    more = f" (+{len(entries) - 1} more)" if len(entries) > 1 else ""
    return f"{line}{more}"


def notes_stale(record: Mapping[str, Any]) -> bool:
    """Notes are stale when decisions changed in a later revision than the notes did."""
    return bool(record["notes"]) and record["decisions_revision"] > record["notes_revision"]


def orientation_stale(record: Mapping[str, Any]) -> bool:
    """The orientation is stale when decisions changed in a later revision than it was last stated in.

    Records written before `orientation_revision` existed do not know when it was stated: never stale.
    """
    stated = record.get("orientation_revision")
    return isinstance(stated, int) and record["decisions_revision"] > stated
