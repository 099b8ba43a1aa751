"""Readable terminal forms of command replies (JSON is the contract; this is for people)."""

from __future__ import annotations

from wheypoint.app.show import note_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _warnings(reply: dict[str, Any]) -> list[str]:
    return [f"  warning {w['code']} at {w['path']}: {w['message']}" for w in reply.get("warnings", [])]


def checkpoint(reply: dict[str, Any]) -> str:
    verb = "replayed" if reply.get("replayed") else "recorded"
    lines = [
        f"{reply['slug']} r{reply['revision_number']} {verb}: {reply['status']}",
        f"  work {reply['work_id']}  revision {reply['revision_id']}",
        f"  note {reply['note_path'] or '(none)'}  durability {reply['durability']}",
    ]
    # The ids a next write names (--resolve, --supersede, fork's --move): the reply's, so the reader need not `show`.
    lines += [f"  added {entry_id}" for entry_id in reply.get("added", [])]
    lines += [f"  {move['entry']} {move['action']}" for move in reply.get("transitioned", [])]
    return "\n".join(lines + _warnings(reply) + handoff_lines(reply))


def handoff_lines(reply: dict[str, Any]) -> list[str]:
    """Seed 0's closing lines of a written note: the link to it, then the two ways to resume it."""
    handoff = reply.get("handoff")
    if not handoff:
        return []
    return ["", handoff["dropped"], "", "Resume from the checkout:", f"  {handoff['resume_in_checkout']}",
            "Resume from anywhere:", f"  {handoff['resume_anywhere']}"]  # fmt: skip


def validate(reply: dict[str, Any]) -> str:
    lines = [f"valid: would record {reply['slug']} r{reply['revision_number']} with status {reply['status']}"]
    return "\n".join(lines + _warnings(reply))


def show(reply: dict[str, Any]) -> str:
    note = reply["note"]
    return note_text(reply["record"]) + f"\n<!-- note {note['path']}: {note['state']} -->"


def log(reply: dict[str, Any]) -> str:
    lines = [f"{reply['slug']} ({reply['work_id']}): {reply['status']}"]
    for rev in reply["revisions"]:
        flags = [f for f, on in (("notes", rev["notes_changed"]), ("compacted", rev["compacted"])) if on]
        author = rev.get("author") or "(author unknown)"
        lines.append(f"r{rev['revision_number']}  {rev['revision_id']}  {rev['captured_at']}  {author}  "
                     f"{' '.join(flags)}".rstrip())  # fmt: skip
        lines += [f"    + {a['id']} {a['kind']}: {' '.join(a['text'].split())[:90]}" for a in rev["added"]]
        for move in rev["transitioned"]:
            by = f" by {move['by']}" if "by" in move else ""
            lines.append(f"    ~ {move['entry']} {move['action']}{by}")
        lines += [f"    + link {ref}" for ref in rev["links_added"]]
        lines += [f"    - link {ref}" for ref in rev["links_removed"]]
        for key, change in rev.get("moved", {}).items():
            if key == "context":
                lines += [f"    + context {item}" for item in change["added"]]
                lines += [f"    - context {item}" for item in change["removed"]]
            elif change["from"] is not None:
                lines.append(f"    {key}: {change['from']} -> {change['to']}")
    return "\n".join(lines)


def refusal(error: dict[str, Any]) -> str:
    lines = [f"wheypoint: refused: {error['code']}: {error['message']}"]
    lines += [f"  {p['code']} at {p['path']}: {p['message']}" for p in error.get("problems", [])]
    return "\n".join(lines)


def turns(reply: dict[str, Any]) -> str:
    lines = [f"{reply['harness']} session {reply['session_id']}: {reply['count']} turns ({reply['transcript']})"]
    for turn in reply["turns"]:
        lines.append(f"--- {turn['id']}  {turn['kind']}  {turn['timestamp'] or ''}")
        lines.append(turn["text"])
    skipped = {k: v for k, v in reply["stats"].items() if v and k != "records"}
    if skipped:
        lines.append(f"(skipped: {_counts(skipped)})")
    return "\n".join(lines)


def _counts(counts: dict[str, Any]) -> str:
    """`malformed 2, skipped types (progress 3, system 1)`: counts as a person reads them, nested ones in brackets."""
    parts = []
    for key, value in counts.items():
        name = key.replace("_", " ")
        parts.append(f"{name} ({_counts(value)})" if isinstance(value, dict) else f"{name} {value}")
    return ", ".join(parts)


def harvest(reply: dict[str, Any]) -> str:
    lines = [f"{reply['count']} trailers, {reply['parsed']} parsed ({reply['transcript']})"]
    for t in reply["trailers"]:
        weight = f" w{t['weight']}" if t.get("weight") is not None else ""
        kind = t.get("type") or "(no type)"
        lines.append(f"- {t['turn_id']} [{t['status']}] {kind}{weight}: {' '.join(t['text'].split())}")
    return "\n".join(lines)


def snapshot(reply: dict[str, Any]) -> str:
    return str(reply["report"])


def listing(reply: dict[str, Any]) -> str:
    fallback = "  (scope-fallback: machine)" if reply.get("scope_fallback") else ""
    lines = [f"{reply['count']} works, scope {reply['scope']}{fallback}"]
    for w in reply["works"]:
        lines.append(f"{cut(w['slug'], 32):32}  {cut(w['status'], 40):40}  {(w['next'] or '-'):10}  "
                     f"r{w['revision_number']:<3} {w['updated_at']}  {w['project']}")  # fmt: skip
        if len(w["status"]) > 40:  # the whole status, under its row, when the column had to cut it
            lines.append(f"    {w['status']}")
        lines.append(f"    {cut(' '.join(w['orientation'].split()), 100)}")
    return "\n".join(lines)


def cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, its end marked with an ellipsis when it was cut."""
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def resolution(reply: dict[str, Any]) -> str:
    head = f"{reply['outcome']}{' (dispatchable)' if reply['dispatchable'] else ''}: {reply['ref']}"
    lines = [head]
    if reply.get("work_id"):
        lines.append(f"  {reply['work_id']} r{reply.get('revision_number', '?')} {reply.get('status', '')}")
    lines += [f"  candidate {c['slug']} ({c['work_id']}, {c['project']})" for c in reply.get("candidates", [])]
    lines += [f"  did you mean {s}?" for s in reply.get("suggestions", [])]
    lines += [f"  [{f['severity']}] {f['code']}: {f['detail']}" for f in reply.get("findings", [])]
    return "\n".join(lines)


def lint(reply: dict[str, Any]) -> str:
    lines = [f"{reply['path']}: {reply['format']}, {'clean' if reply['clean'] else 'NOT clean'}"]
    lines += [f"  [{f['severity']}] {f['code']}: {f['detail']}" for f in reply["findings"]]
    return "\n".join(lines)


def diff(reply: dict[str, Any]) -> str:
    """What changed, a line per change, entries first."""
    changes = reply["changes"]
    lines = [f"{reply['slug']}: {reply['from'] or 'nothing'} -> {reply['to']}"]
    entries = changes["entries"]
    lines += [f"  + {e['id']} {e['kind']}: {e['text']}" for e in entries["added"]]
    lines += [f"  ~ {e['id']} {e['kind']}: {e['from']} -> {e['to']}" for e in entries["settled"]]
    lines += [f"  > {e['id']} {e['kind']}: moved to {e['to_work']}" for e in entries["moved"]]
    lines += [f"  - {e['id']} {e['kind']}: {e['text']}" for e in entries["removed"]]
    for key in ("status", "orientation", "next", "notes"):
        if key in changes:
            lines.append(f"  {key}: {changes[key]['from']!r} -> {changes[key]['to']!r}")
    for key in ("working_context", "local_references", "artifact_links", "edges"):
        if key in changes:
            lines += [f"  + {key}: {item}" for item in changes[key]["added"]]
            lines += [f"  - {key}: {item}" for item in changes[key]["removed"]]
    if "meat_added" in changes:
        lines.append(f"  + meat: {len(changes['meat_added'])} turn(s)")
    return "\n".join(lines) if len(lines) > 1 else lines[0] + "\n  (no change)"


def doctor(reply: dict[str, Any]) -> str:
    """The verdict first, then each problem and warning, then per harness what is installed and when it fired."""
    verdict = "healthy" if reply["healthy"] else f"{len(reply['problems'])} problem(s)"
    lines = [f"wheypoint doctor: {verdict}"]
    lines += [f"  fixed: {f['action']} {f['path']}" for f in reply["fixed"]]
    lines += [f"  PROBLEM {p['code']}: {p['message']}" for p in reply["problems"]]
    lines += [f"  warning {w['code']}: {w['message']}" for w in reply["warnings"]]
    for harness, report in reply["harnesses"].items():
        lines.append(f"{harness}:")
        for scope in ("user", "project"):
            place = report.get(scope)
            if not place:
                continue
            events = [e for e in place["events"] if e["installed"]]
            states = ", ".join(f"{e['event']}" + ("" if e.get("current", True) else " (not current)")
                               + (f" [{e['trust']['status']}]" if "trust" in e else "") for e in events)  # fmt: skip
            lines.append(f"  {scope}: {place['path']}: {states or 'no wheypoint hooks'}")
        for event, facts in report["last_fired"].items():
            last = facts["last"]
            did = ", ".join(f"{k} {last[k]}" for k in ("kept", "chars", "skipped", "refused", "error") if k in last)
            lines.append(f"  {event}: {facts['calls']} call(s), last {last.get('at')}" + (f": {did}" if did else ""))
        found = report["registrations"]
        for kind in ("mcp_servers", "skills", "plugins"):
            lines += [f"  {kind[:-1].replace('_', ' ')} {item['name']} ({item['scope']}): {item['path']}"
                      for item in found[kind]]  # fmt: skip
    store = reply["store"]
    if store.get("readable"):
        lines.append(f"store: {store.get('location')}: schema {store.get('schema_version')}, "
                     f"{store.get('size_bytes')} bytes, {store.get('works', 0)} work(s), "
                     f"{store.get('revisions', 0)} revision(s) verified")  # fmt: skip
    else:
        lines.append(f"store: {store.get('location')}: unreadable")
    notes = reply["notes"]
    if notes.get("checkout"):
        lines.append(f"notes of {notes['checkout']}: {notes['current']} current, {notes['stale']} stale, "
                     f"{notes['hand_edited']} hand-edited, {notes['missing']} missing, "
                     f"{len(notes['temporaries'])} temporar(ies)")  # fmt: skip
    return "\n".join(lines)
