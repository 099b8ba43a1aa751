"""Facts derived from a record rather than stored by an author: its status and whether its notes are stale."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


GATING_KINDS = ("question", "blocker")
STATUS_TEXT_LIMIT = 120


def derive_status(entries: list[dict[str, Any]]) -> str:
    """`gated: <decision>` while any active question or blocker gates, else `ok`."""
    gates = [e for e in entries if e["state"] == "active" and e["kind"] in GATING_KINDS and e["gates"]]
    if not gates:
        return "ok"
    from wheypoint.model.characters import without_hidden

    # One visible line: the status is printed on the note's first line, which readers split with splitlines.
    line = " ".join(word for word in map(without_hidden, gates[0]["text"].split()) if word)
    if len(line) > STATUS_TEXT_LIMIT:
        line = line[: STATUS_TEXT_LIMIT - 1].rstrip() + "…"
    more = f" (+{len(gates) - 1} more)" if len(gates) > 1 else ""
    return f"gated: {line}{more}"


def notes_stale(record: Mapping[str, Any]) -> bool:
    """Notes are stale when decisions changed in a later revision than the notes did."""
    return bool(record["notes"]) and record["decisions_revision"] > record["notes_revision"]


def orientation_stale(record: Mapping[str, Any]) -> bool:
    """The orientation is stale when decisions changed in a later revision than it was last stated in.

    Records written before `orientation_revision` existed do not know when it was stated: never stale.
    """
    stated = record.get("orientation_revision")
    return isinstance(stated, int) and record["decisions_revision"] > stated
