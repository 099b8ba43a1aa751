"""A record as a bounded resume packet: what a session starting (SessionStart) or `handoff render` hands a model.

`render_packet(record, budget)` keeps, in priority order, the status and next move, gates, directives
(quotes verbatim), open entries, blockers, decisions and notes, the user's kept turns, and last the turns of the
session's earlier part when one is given (`earlier`), dropping whole items that do not fit and counting them under
`omitted`. Its size is `packet_size`: the length in UTF-16 code units (characters, an emoji
counting two, as Claude Code counts them) of `json.dumps(packet, ensure_ascii=False)`, the form the CLI prints.

Apart from dispatch (handoff.py), whose note parser and lint compile their patterns as they load: a hook hands
a packet on every session's start and needs neither.
"""

from __future__ import annotations

from wheypoint import jsontext
from wheypoint.model.derived import GATING_KINDS, notes_stale
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

PACKET_CATEGORIES = ("gates", "directives", "open", "blockers", "decisions", "notes", "meat", "earlier")


def packet_size(packet: Any) -> int:
    """The length of the packet as the CLI prints it (`json.dumps(packet, ensure_ascii=False)`) in UTF-16 code units,
    as JavaScript counts a string: Claude Code hands a hook's context to the model whole only up to 10,000 of them,
    and a character beyond the BMP (an emoji) is two. Equal to the character count for any other text."""
    return len(jsontext.dumps(packet, ensure_ascii=False).encode("utf-16-le")) // 2


def render_packet(
    record: Mapping[str, Any], budget: int, captured_at: Mapping[int, str] | None = None,
    earlier: Mapping[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """A resume packet of at most `budget` characters (see `packet_size`); refused when the core does not fit.

    `captured_at` maps revision numbers to capture times, so entry ages can carry a timestamp; without it
    only entries added in the first or the latest revision get one. `earlier` is the record of the work that holds
    the same session's turns before this one's (a long session's earlier part): its turns, newest first and each
    naming that work, fill what room this work's own items leave (`earlier`, after `meat`).
    """
    times = {1: record.get("created_at"), record["revision_number"]: record.get("updated_at"), **(captured_at or {})}
    core: dict[str, Any] = {
        "work_id": record["work_id"],
        "slug": record["slug"],
        "revision_id": record["revision_id"],
        "revision_number": record["revision_number"],
        "as_of": record.get("updated_at"),
        "status": record["status"],
        "next": record["next"],
        "orientation": record["orientation"],
    }
    if notes_stale(record):
        core["notes_stale"] = True
    items = _packet_items(record, times, earlier)
    kept: dict[str, list[Any]] = {name: [] for name in PACKET_CATEGORIES}

    def omitted() -> dict[str, int]:
        return {name: len(items[name]) - len(kept[name]) for name in PACKET_CATEGORIES
                if len(items[name]) > len(kept[name])}  # fmt: skip

    def build() -> dict[str, Any]:
        packet = dict(core)
        packet.update({name: kept[name] for name in PACKET_CATEGORIES if kept[name]})
        packet["omitted"] = omitted()
        return packet

    # The packet's size as `packet_size(build())` would measure it, from each part's size taken once: a JSON object
    # or array is its members' sizes, with 2 for its brackets, 2 for each `, ` between members and 2 for each
    # `: ` after a key. Measuring the whole packet again for every item tried cost a full part's SessionStart
    # about 10 ms (a dump of up to `budget` characters per kept turn).
    core_size = sum(packet_size(key) + 2 + packet_size(value) for key, value in core.items())
    sizes = {name: [packet_size(item) for item in items[name]] for name in PACKET_CATEGORIES}
    held = {name: 0 for name in PACKET_CATEGORIES}  # the sizes of the items kept, by category

    def size() -> int:
        members = len(core) + 1  # and `omitted`
        total = core_size + packet_size("omitted") + 2 + packet_size(omitted())
        for name in PACKET_CATEGORIES:
            if kept[name]:
                members += 1
                total += packet_size(name) + 2 + 2 + held[name] + 2 * (len(kept[name]) - 1)
        return 2 + total + 2 * (members - 1)

    minimum = size()
    if minimum > budget:
        raise Refusal("budget-too-small", f"a packet needs at least {minimum} characters for the status, next move, "
                      f"orientation and the count of what it leaves out; the budget is {budget}",
                      details={"minimum": minimum, "budget": budget})  # fmt: skip
    for name in PACKET_CATEGORIES:
        for item, item_size in zip(items[name], sizes[name], strict=True):
            kept[name].append(item)
            held[name] += item_size
            if size() > budget:
                kept[name].pop()
                held[name] -= item_size
    return build()


def _packet_items(record: Mapping[str, Any], times: Mapping[int, Any],
                  earlier: Mapping[str, Any] | None = None) -> dict[str, list[Any]]:  # fmt: skip
    number = record["revision_number"]
    active = [e for e in record["entries"] if e["state"] == "active"]
    own = {m["turn"] for m in record.get("meat", [])}
    leanings = {fork["gate"]: fork for fork in record.get("decision_dossier", []) if fork.get("gate")}

    def entry(e: Mapping[str, Any], *extra: str) -> dict[str, Any]:
        item: dict[str, Any] = {"id": e["id"], "text": e["text"]}
        item.update({key: e[key] for key in ("owner", "when", *extra) if key in e})
        age: dict[str, Any] = {"since": f"r{e['added_in']}", "revisions": number - e["added_in"]}
        if times.get(e["added_in"]):
            age["at"] = times[e["added_in"]]
        item["age"] = age
        return item

    gates = []
    for e in active:
        if e["kind"] in GATING_KINDS and e["gates"]:
            item = entry(e, "rationale")
            fork = leanings.get(e["id"])
            if fork:
                item["options"] = [option["option"] for option in fork["options"]]
                if "prior_leaning" in fork:
                    item["leaning"] = fork["prior_leaning"]
            gates.append(item)
    directives = [
        {"id": e["id"], "text": e["text"], "quote": e.get("quote", ""),
         **({"operator": True} if e["kind"] == "operator_directive" else {}),
         **({"confidence": e["confidence"]} if "confidence" in e else {})}
        for e in active if e["kind"] in ("directive", "operator_directive")
    ]  # fmt: skip
    notes = [part.strip("\n") for part in record.get("notes", "").split("\n\n") if part.strip()]
    return {
        "gates": gates,
        "directives": directives,
        "open": [entry(e) for e in active if e["kind"] == "question" and not e["gates"]],
        "blockers": [entry(e) for e in active if e["kind"] == "blocker" and not e["gates"]],
        "decisions": [
            {
                "id": e["id"],
                "text": e["text"],
                **({"why": e["rationale"]} if "rationale" in e else {}),
                **({"confidence": e["confidence"]} if "confidence" in e else {}),
            }
            for e in active
            if e["kind"] == "decision"
        ],
        "notes": notes,
        # The user's own words kept verbatim, newest first: after a compaction the latest turns matter most.
        "meat": [_turn(m) for m in reversed(record.get("meat", []))],
        # ...then the same session's turns before them, from its earlier part, each naming the work it is in.
        "earlier": [{**_turn(m), "work": earlier["slug"]} for m in reversed(earlier["meat"]) if m["turn"] not in own]
        if earlier
        else [],
    }


def _turn(m: Mapping[str, Any]) -> dict[str, Any]:
    """A kept turn as a packet carries it."""
    return {"turn": m["turn"], "type": m["type"], "text": m["text"],
            **({"at": m["timestamp"]} if m.get("timestamp") else {})}  # fmt: skip
