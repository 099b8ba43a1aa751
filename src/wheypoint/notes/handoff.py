"""What a resuming agent does with a handoff: dispatch a parsed note (the bounded resume packet is packet.py).

`dispatch(parsed)` follows seeds 0 and 2: a missing `next:` is malformed and never guessed; a gate is
surfaced and nothing runs; a halt is surfaced, then the runnable next move follows; `ok` runs the move.
Actions: `malformed`, `surface-gate`, `surface-halt` (with `then`), `run`, `run-many` (the read-only list
form, with its order), `run-tasks` (one run per parallel task), `wait` (hold) and `none` (done).
"""

from __future__ import annotations

from wheypoint.model.contract import NEXT_MOVES, READ_ONLY_MOVES
from wheypoint.model.errors import GATING
from wheypoint.notes.lint import next_findings
from wheypoint.notes.parse import NoteProblem, ParsedNote, parse_note
from wheypoint.notes.render import render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MALFORMED_NEXT = "malformed handoff: next: required"
DIRECTIONS = ("research", "decide", "build")
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
