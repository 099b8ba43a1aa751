"""What changed between two records of one work: entries added, settled or moved, and every changed field.

Pure: two records in, one change set out. Either may be the older one; entries only the first has are listed as
`removed` (which a forward diff never shows: nothing is deleted from a chain, entries are settled instead).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

SCALARS = ("status", "orientation", "next", "notes")
LISTS = ("working_context", "local_references")


def _entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": entry["id"], "kind": entry["kind"], "text": entry["text"], "state": entry["state"]}


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The change set from `before` to `after` (records of the same work)."""
    old = {e["id"]: e for e in before["entries"]}
    new = {e["id"]: e for e in after["entries"]}
    added = [_entry(e) for e in after["entries"] if e["id"] not in old]
    removed = [_entry(e) for e in before["entries"] if e["id"] not in new]
    settled, moved = [], []
    for entry in after["entries"]:
        was = old.get(entry["id"])
        if was is None or was["state"] == entry["state"]:
            continue
        change = {"id": entry["id"], "kind": entry["kind"], "text": entry["text"], "from": was["state"],
                  "to": entry["state"]}  # fmt: skip
        how = entry.get("settled") or {}
        for key in ("action", "rationale", "by"):
            if key in how:
                change[key] = how[key]
        if entry["state"] == "moved":
            change["to_work"] = how.get("to")
            moved.append(change)
        else:
            settled.append(change)
    changes: dict[str, Any] = {"entries": {"added": added, "settled": settled, "moved": moved, "removed": removed}}
    for key in SCALARS:
        if before[key] != after[key]:
            changes[key] = {"from": before[key], "to": after[key]}
    for key in LISTS:
        _list_change(changes, key, before[key], after[key])
    _list_change(changes, "artifact_links", [link["ref"] for link in before["artifact_links"]],
                 [link["ref"] for link in after["artifact_links"]])  # fmt: skip
    _list_change(changes, "edges", [f"{e['kind']} {e['ref']}" for e in before["edges"]],
                 [f"{e['kind']} {e['ref']}" for e in after["edges"]])  # fmt: skip
    turns_before = {item["turn"] for item in before["meat"]}
    kept = [item["turn"] for item in after["meat"] if item["turn"] not in turns_before]
    if kept:
        changes["meat_added"] = kept
    return changes


def _list_change(changes: dict[str, Any], key: str, before: list[str], after: list[str]) -> None:
    gained = [item for item in after if item not in before]
    lost = [item for item in before if item not in after]
    if gained or lost:
        changes[key] = {"added": gained, "removed": lost}
