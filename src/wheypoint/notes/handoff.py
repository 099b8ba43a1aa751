"""What a resuming agent does with a handoff: dispatch a parsed note, or render a record as a bounded resume packet.

`dispatch(parsed)` follows seeds 0 and 2: a missing `next:` is malformed and never guessed; a gate is
surfaced and nothing runs; a halt is surfaced, then the runnable next move follows; `ok` runs the move.
Actions: `malformed`, `surface-gate`, `surface-halt` (with `then`), `run`, `run-many` (the read-only list
form, with its order), `run-tasks` (one run per parallel task), `wait` (hold) and `none` (done).

`render_packet(record, budget)` keeps, in priority order, the status and next move, gates, directives
(quotes verbatim), open entries, blockers, decisions and notes, the user's kept turns, and last the turns of the
session's earlier part when one is given (`earlier`), dropping whole items that do not fit and counting them under
`omitted`. Its size is `packet_size`: the length in UTF-16 code units (characters, an emoji
counting two, as Claude Code counts them) of `json.dumps(packet, ensure_ascii=False)`, the form the CLI prints.
"""

from __future__ import annotations

from wheypoint import jsontext
from wheypoint.model.contract import NEXT_MOVES, READ_ONLY_MOVES
from wheypoint.model.derived import GATING_KINDS, notes_stale
from wheypoint.model.errors import GATING, Refusal
from wheypoint.notes.lint import next_findings
from wheypoint.notes.parse import NoteProblem, ParsedNote, parse_note
from wheypoint.notes.render import render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MALFORMED_NEXT = "malformed handoff: next: required"
DIRECTIONS = ("research", "decide", "build")
PACKET_CATEGORIES = ("gates", "directives", "open", "blockers", "decisions", "notes", "meat", "earlier")
_TASK_FIELDS = ("intent", "repo", "worktree", "branch", "branch_from")


def malformed(message: str) -> dict[str, Any]:
    return {"action": "malformed", "message": message}


def dispatch(parsed: ParsedNote | Mapping[str, Any], *, slug: str | None = None) -> dict[str, Any]:
    """What to do with a note: `parsed` is a ParsedNote or its JSON form; `slug` names a hand-written note."""
    note = parsed if isinstance(parsed, ParsedNote) else _from_json(parsed)
    if note.next is None and note.next_items is None:
        return malformed(MALFORMED_NEXT)
    if note.status is None:
        return malformed("malformed handoff: status: required (ok | gated: <decision> | halt: <reason>)")
    if note.status_kind is None:
        return malformed(f"malformed handoff: status {note.status!r} is not ok | gated: <decision> | halt: <reason>")
    if note.status_kind == "gated":
        return _surface_gate(note)
    pins = note.wheypoint or {}
    plan = _plan(note, slug or (str(pins["slug"]) if pins.get("slug") else None))
    if note.status_kind == "halt":
        return {"action": "surface-halt", "reason": note.status_reason, "then": plan}
    return plan


def dispatch_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """Dispatch straight from a record, through the note it renders to (the record is the authority)."""
    return dispatch(parse_note(render(record)))


def _from_json(data: Mapping[str, Any]) -> ParsedNote:
    """A ParsedNote from its JSON form; absent keys read as absent fields."""
    problems = [NoteProblem(str(p.get("code")), str(p.get("message"))) for p in data.get("problems") or []]
    values: dict[str, Any] = {
        field: data.get(field) for field in ParsedNote._fields if field not in ("outline", "labels", "body")
    }
    values.update(format=data.get("format") or "legacy", mode=data.get("mode") or "single",
                  sections=list(data.get("sections") or []), problems=problems)  # fmt: skip
    return ParsedNote(**values)


def _surface_gate(note: ParsedNote) -> dict[str, Any]:
    dossier = note.find(r"^decision dossier$")
    open_parts = [s.text for s in note.outline if s.level >= 2 and s.title.lower() in ("gates", "open entries")]
    if not open_parts:
        legacy = note.find(r"open questions|blockers")
        open_parts = [legacy.text] if legacy else []
    return {
        "action": "surface-gate",
        "gate": note.status_reason,
        "dossier": dossier.text if dossier else None,
        "open": "\n\n".join(open_parts) or None,
        "directions": list(DIRECTIONS),
    }


def _plan(note: ParsedNote, slug: str | None) -> dict[str, Any]:
    """The runnable part of a note whose status lets it run."""
    gating = [f.detail for f in next_findings(note) if f.severity == GATING]
    if note.next_items is not None:
        if gating:
            return malformed("malformed handoff: " + "; ".join(gating))
        runs = [_run(f"/{item['skill']}", item["arg"] or None, "list") for item in note.next_items]
        return {"action": "run-many", "order": note.order, "runs": runs}
    move = str(note.next)
    if move not in NEXT_MOVES:
        return malformed(f"malformed handoff: next: {move!r} is not one of {' | '.join(NEXT_MOVES)}")
    if move == "hold":
        return {"action": "wait", "orientation": note.orientation}
    if move == "done":
        return {"action": "none", "orientation": note.orientation}
    if move == "tasks":
        if gating:
            return malformed("malformed handoff: " + "; ".join(gating))
        return {"action": "run-tasks", "parallel": note.parallel, "runs": _task_runs(note)}
    if move in READ_ONLY_MOVES:
        return _run(f"/{move}", note.orientation, "orientation" if note.orientation else None)
    if move == "affinage":
        run = _run("/affinage", note.artifact, "artifact" if note.artifact else None)
        if any(f.code == "affinage-needs-pr" for f in next_findings(note)):
            run["warning"] = "no PR reference in artifact:; /affinage would fall back to branch detection"
        return run
    for source, value in (("artifact", note.artifact), ("slug", slug), ("orientation", note.orientation)):
        if value:
            return _run(f"/{move}", value, source)
    return _run(f"/{move}", None, None)


def _run(skill: str, argument: str | None, source: str | None) -> dict[str, Any]:
    return {"action": "run", "skill": skill, "argument": argument, "argument_from": source}


def _task_runs(note: ParsedNote) -> list[dict[str, Any]]:
    parallel = note.parallel or {}
    runs: list[dict[str, Any]] = []
    for task in note.tasks or []:
        command = task["command"].strip()
        skill, _, argument = command.partition(" ")
        run: dict[str, Any] = {"action": "run", "task": task["slug"], "skill": skill, "argument": argument.strip()
                               or None, "command": command}  # fmt: skip
        run.update({key: task[key] for key in _TASK_FIELDS if task.get(key)})
        root = parallel.get("worktree_root")
        if parallel.get("worktree_strategy") == "create" and root and "worktree" not in run:
            run["worktree"] = f"{root.rstrip('/')}/{task['slug']}"
        runs.append(run)
    return runs


# The resume packet -----------------------------------------------------------------------------------


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
            {"id": e["id"], "text": e["text"], **({"why": e["rationale"]} if "rationale" in e else {}),
             **({"confidence": e["confidence"]} if "confidence" in e else {})}
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
