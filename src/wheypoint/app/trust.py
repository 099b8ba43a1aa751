"""Whether a found handoff can still be trusted: coded findings about its note, links, pins and git anchor.

A finding is gating (a person must look before anyone resumes from it) or advisory. A record with an
active gate is never dispatchable either, since the next move waits on a human decision.
"""

from __future__ import annotations

import os

from wheypoint.app.workspace import file_digest
from wheypoint.model.derived import GATING_KINDS
from wheypoint.model.errors import ADVISORY, GATING, Finding
from wheypoint.model.refs import line_ref_path, pinned_refs, ref_kind
from wheypoint.notes.files import note_bytes, shows
from wheypoint.notes.render import carries_own_digest, render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from wheypoint.app.workspace import Checkout


def gate_findings(record: dict[str, Any], revisions: list[dict[str, Any]]) -> list[Finding]:
    """Each active gate with its owner and age (revisions since it was raised, and since when)."""
    opened = {r["revision_number"]: r["captured_at"] for r in revisions}
    found = []
    for entry in record["entries"]:
        if entry["state"] == "active" and entry["gates"] and entry["kind"] in GATING_KINDS:
            age = record["revision_number"] - entry["added_in"]
            owner = f"owner {entry['owner']}" if entry.get("owner") else "no owner named"
            since = opened.get(entry["added_in"], "?")
            found.append(Finding("gate-open", GATING, f"{entry['id']} {entry['text']!r}: {owner}; open since "
                                 f"r{entry['added_in']} ({since}), {age} revision(s) ago"))  # fmt: skip
    return found


# How far `lineage_findings` follows successors that were themselves forked or joined away.
MAX_LINEAGE_STEPS = 8


def lineage_findings(record: dict[str, Any], head_of: Callable[[str], dict[str, Any] | None]) -> list[Finding]:
    """Where a fork or a join took this work's entries, and where to resume when nothing is left here.

    Each `forked_to` edge is a `forked-to` finding and each `joined_into` edge a `joined-into` one. When every
    active entry was moved away, `superseded-by-fork` names the works to resume from: the successors that still
    hold work, found by following (through `head_of`, a work's head by its ref) any successor that was itself
    moved on, so a child since joined into another work is not offered, the work it was joined into is.
    """
    found = [Finding("forked-to" if edge["kind"] == "forked_to" else "joined-into", ADVISORY,
                     f"entries were moved to {edge['ref']} by a fork" if edge["kind"] == "forked_to"
                     else f"this work was joined into {edge['ref']}")
             for edge in record["edges"] if edge["kind"] in _ONWARD]  # fmt: skip
    if found and _moved_on(record):
        places = _resume_places(record, head_of)
        found.append(Finding("superseded-by-fork", GATING, "every active entry was moved away by a fork or a join: "
                             f"resume from {' or '.join(places)}"))  # fmt: skip
    return found


_ONWARD = ("forked_to", "joined_into")


def _moved_on(record: dict[str, Any]) -> bool:
    """Whether a fork or a join took every active entry of the work away (something moved, nothing active)."""
    entries = record["entries"]
    return any(e["state"] == "moved" for e in entries) and not any(e["state"] == "active" for e in entries)


def _resume_places(record: dict[str, Any], head_of: Callable[[str], dict[str, Any] | None]) -> list[str]:
    """The successors to resume from: each onward ref, or where it went on to when it moved on in turn."""
    places: list[str] = []
    seen = {record["work_id"]}
    frontier = [edge["ref"] for edge in record["edges"] if edge["kind"] in _ONWARD]
    for _ in range(MAX_LINEAGE_STEPS):
        following: list[str] = []
        for ref in frontier:
            head = head_of(ref)
            if head is None or head["work_id"] in seen:
                places += [ref] if head is None else []
                continue
            seen.add(head["work_id"])
            onward = [edge["ref"] for edge in head["edges"] if edge["kind"] in _ONWARD]
            if onward and _moved_on(head):
                following += onward
            else:
                places.append(f"{head['slug']} ({ref})")
        frontier = following
        if not frontier:
            break
    places += frontier  # past the last step: named as they are
    return list(dict.fromkeys(places))


def note_findings(record: dict[str, Any], note: str) -> list[Finding]:
    """The note on disk against the record: missing, hand-edited, or behind the store."""
    try:
        data = note_bytes(note)  # bytes: universal newlines would read a carriage return as a line break
        if data is None:
            return [Finding("note-missing", ADVISORY, f"no note at {note}; `show --write-note` renders it")]
        if shows(data, render(record)):
            return []
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [Finding("note-unreadable", ADVISORY, f"{note}: {exc}")]
    if not carries_own_digest(text):
        return [Finding("note-hand-edited", GATING, f"{note} was edited by hand; the store holds the handoff")]
    from wheypoint.notes.parse import parse_note

    pins = parse_note(text).wheypoint or {}
    behind = pins.get("revision_id", "?")
    return [Finding("note-stale", ADVISORY, f"{note} shows {behind}; the head is {record['revision_id']}")]


def link_findings(record: dict[str, Any], checkout: Checkout | None) -> list[Finding]:
    """Artifact links whose file changed or vanished since the checkpoint pinned its digest."""
    found = []
    root = checkout.toplevel if checkout else None
    for link in record["artifact_links"]:
        if link["digest"] is None or root is None or ref_kind(link["ref"]) != "relative":
            continue
        path = os.path.join(root, line_ref_path(link["ref"]))
        now = file_digest(path)
        if now is None:
            found.append(Finding("artifact-missing", GATING, f"{link['ref']} is gone from {root}"))
        elif now != link["digest"]:
            found.append(Finding("stale-artifact-link", GATING, f"{link['ref']} changed since r{link['added_in']}"))
    covered = {c for link in record["artifact_links"] for c in link["covers"]}
    if record["artifact_links"]:
        open_entries = [e["id"] for e in record["entries"] if e["state"] == "active" and e["id"] not in covered]
        if open_entries:
            listed = ", ".join(open_entries[:8])
            found.append(
                Finding("uncovered-entries", ADVISORY, f"{len(open_entries)} active entries no link covers: {listed}")
            )
    return found


def git_findings_later(record: dict[str, Any], checkout: Checkout | None) -> Callable[[], list[Finding]]:
    """The recorded commit and the path:line pins against the repository as it is now: the questions to git asked
    now, at once, and the findings made when the function returned is called (the caller does its other checks
    while git works, and calls it whatever happens, so that git's processes are waited for).

    A commit that is HEAD itself needs no question to git: it is present, an ancestor, and nothing came
    since. Any other commit costs one `git cat-file` for presence and one `git rev-list` for history; each pinned
    commit one `git diff` (asked beside the presence check: a commit found missing has its answers left unread).
    """
    if checkout is None:
        return lambda: [Finding("no-checkout", ADVISORY, "not in a git checkout: commits and pins were not checked")]
    texts = list(record["working_context"]) + [link.get("pinned", link["ref"]) for link in record["artifact_links"]]
    texts += [item for fork in record["decision_dossier"] for option in fork["options"]
              for item in option.get("evidence", [])]  # fmt: skip
    pins = [pin for text in texts for pin in pinned_refs(text)]
    anchor = record["git"]["commit"] if record["git"] else None
    head = checkout.commit or ""
    shas = sorted({sha for _, sha in pins} | ({anchor} if anchor else set()))
    missing_later = checkout.missing_objects_later([sha for sha in shas if not head.startswith(sha)])
    history_later = checkout.history_since_later(anchor) if anchor and anchor != head else None
    changed_later = {sha: checkout.changed_since_later(sha, sorted({path for path, pinned in pins if pinned == sha}))
                     for sha in sorted({sha for _, sha in pins})}  # fmt: skip

    def findings() -> list[Finding]:
        missing = missing_later()
        found = [Finding("git-object-missing", GATING, f"commit {sha[:12]} is not in the repository (rewritten "
                         "away?)") for sha in sorted(missing)]  # fmt: skip
        history = history_later() if history_later is not None else None
        if anchor and anchor not in missing and anchor != head:
            if history is None or history[1] > 0:
                found.append(Finding("stale-commit", ADVISORY, f"the checkpoint's commit {anchor[:7]} is not an "
                                     "ancestor of HEAD (another branch, or history was rewritten)"))  # fmt: skip
            elif history[0] > 0:
                found.append(
                    Finding("stale-commit", ADVISORY, f"{history[0]} commit(s) since the checkpoint's {anchor[:7]}")
                )
        for sha, changed_since in changed_later.items():
            changed = changed_since()  # (read even for a missing commit: its process is waited for)
            if sha in missing:
                continue
            for path in sorted(changed):
                found.append(Finding("pin-drifted", ADVISORY, f"{path} changed since {sha}: its line numbers may be "
                                     "off"))  # fmt: skip
        return found

    return findings
