"""`wheypoint resolve`: find the one handoff a reference means, then say whether it can be trusted.

Lookup order: the exact steps every command takes (app/lookup.py: a note's path, a `wheypoint:` ref, a work
id, a slug), then a unique slug prefix and a unique slug substring (each first in the project, then on the
whole machine). Several matches at a step answer `ambiguous` with every candidate; none answers `not-found`
with what was searched and close suggestions, never picked for the caller. Outcomes are answers, not refusals.
"""

from __future__ import annotations

import os

from wheypoint.app.context import Context, note_path_named, place_of
from wheypoint.app.links import backlinks
from wheypoint.app.lookup import check_reference, exact_matches, suggestions, work_named
from wheypoint.app.trust import gate_findings, git_findings_later, lineage_findings, link_findings, note_findings
from wheypoint.app.workspace import find_checkout
from wheypoint.model.errors import ADVISORY, GATING, Finding, Refusal, bad_parameter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from wheypoint.store.base import Store
    from wheypoint.store.rows import WorkRef

    Resolved = tuple[dict[str, Any], dict[str, Any] | None]  # (the reply, the record when one was found)

# An ambiguous reference lists every candidate (seed 2), a page at a time: `--page 2` shows the next ones.
PAGE_SIZE = 50


def _candidate(work: WorkRef) -> dict[str, Any]:
    return {"work_id": work.work_id, "slug": work.slug, "project": work.project_key, "status": work.status,
            "revision_number": work.head_number, "updated_at": work.updated_at}  # fmt: skip


def _lookup(store: Store, ref: str, project: str, limit: int) -> tuple[str, list[WorkRef]]:
    """(how it matched, the works at the first step that matched anything, at most `limit` by prefix or part)."""
    matched, exact = exact_matches(store, ref, project)
    if exact or ref.startswith("wheypoint:"):
        return matched, exact
    for name in ("prefix", "substring"):
        for scope in (project, None):
            if name == "prefix":
                found = store.works_with_slug_prefix(ref, scope, limit)
            else:
                found = store.works_with_slug_part(ref, scope, limit)
            if found:
                return name, found
    return "none", []


def _answer(outcome: str, **fields: Any) -> dict[str, Any]:
    return {"outcome": outcome, "dispatchable": outcome == "authoritative", **fields}


def resolve(ctx: Context, ref: str, workspace_root: str | None, page: int = 1) -> dict[str, Any]:
    """The `resolve` reply for a reference (for an ambiguous one, page `page` of its candidates)."""
    return resolve_with_record(ctx, ref, workspace_root, page)[0]


def resolve_with_record(ctx: Context, ref: str, workspace_root: str | None, page: int = 1,
                        checked: bool = True) -> Resolved:  # fmt: skip
    """The reply and the record it found, read once, for commands that go on to use the record. Not `checked`: the
    record alone, found as `resolve` finds it, without the findings on whether to trust it (its gates and lineage,
    the note on disk, links, git), which cost a note's render and may cost git processes: for commands that show
    the record and say nothing of trust (`handoff render` and `parse`, the packet a session starts with)."""
    if workspace_root:
        root = os.path.expanduser(workspace_root)
        if not os.path.isdir(root):
            raise bad_parameter("workspace_root", f"names a folder; there is none at {workspace_root}")
        ctx = Context(cwd=root, environ=ctx.environ, project=ctx.project)
    check_reference(ref)
    project = ctx.project_key()
    store = ctx.open_store(create=False)
    try:
        note = note_path_named(ctx, ref)
        if note is not None:
            return _resolve_path(ctx, store, note, checked)
        matched, works = _lookup(store, ref, project, page * PAGE_SIZE + 1)
        if not works:
            legacy = _legacy_match(ctx, store, ref)
            if legacy is not None:
                return _resolve_path(ctx, store, legacy, checked)
            searched = [f"work id {ref}", f"slug {ref} in project {project}, then on the machine",
                        f"slugs starting with {ref!r}", f"slugs containing {ref!r}"]  # fmt: skip
            answer = _answer("not-found", ref=ref, searched=searched, suggestions=suggestions(store, ref, project),
                             candidates=[], findings=[])  # fmt: skip
            from wheypoint.model.replies import scrub  # an answer that echoes what matched nothing, as a refusal does

            return scrub(answer), None
        if len(works) > 1:
            start = (page - 1) * PAGE_SIZE
            shown = [_candidate(w) for w in works[start : start + PAGE_SIZE]]
            more = len(works) > start + PAGE_SIZE
            return _answer("ambiguous", ref=ref, matched_by=matched, candidates=shown, page=page,
                           page_size=PAGE_SIZE, more=more, next_page=page + 1 if more else None,
                           findings=[]), None  # fmt: skip
        return _trusted(ctx, store, works[0], matched, ref) if checked else _unchecked(store, works[0], matched, ref)
    finally:
        store.close()


def _legacy_match(ctx: Context, store: Store, ref: str) -> str | None:
    """A hand-written note in this checkout or its worktrees named by this slug exactly, or by a unique prefix."""
    from wheypoint.app.listing import legacy_notes_here  # (only a reference the store does not know needs them)

    paths = [note.path for note in legacy_notes_here(ctx, store)]
    stems = [(path, os.path.splitext(os.path.basename(path))[0]) for path in paths]
    exact = [path for path, stem in stems if stem == ref]
    prefixed = [path for path, stem in stems if stem.startswith(ref)]
    chosen = exact or prefixed
    return chosen[0] if len(chosen) == 1 else None


def _resolve_path(ctx: Context, store: Store, path: str, checked: bool = True) -> Resolved:
    if not os.path.isfile(path):
        return _answer("not-found", ref=path, searched=[path], suggestions=[], candidates=[], findings=[]), None
    from wheypoint.notes.files import read_note
    from wheypoint.notes.parse import parse_note

    pins = parse_note(read_note(path)).wheypoint or {}
    work = store.work(pins["work_id"]) if pins.get("work_id") else None
    if work is None:
        finding = Finding("legacy-note", GATING, f"{path} is not backed by a store record: read it, and "
                          "`wheypoint adopt` it to make it a record")  # fmt: skip
        return _answer("gated", ref=path, matched_by="path", work_id=None, note_path=path,
                       candidates=[], findings=[finding.as_json()]), None  # fmt: skip
    if not checked:
        return _unchecked(store, work, "path", path)
    folder = os.path.dirname(os.path.abspath(path))
    checkout = find_checkout(folder)
    return _trusted(Context(cwd=checkout.toplevel if checkout else folder, environ=ctx.environ), store, work,
                    "path", path, note=path)  # fmt: skip


def _head_of(store: Store, work: WorkRef) -> Callable[[str], dict[str, Any] | None]:
    """A successor's head record by the ref an edge holds (None when it names no work of the store)."""

    def head(ref: str) -> dict[str, Any] | None:
        found = work_named(store, ref, work.project_key)
        return store.record(found.work_id) if found else None

    return head


def _head_record(store: Store, work: WorkRef) -> dict[str, Any]:
    record = store.record(work.work_id)
    if record is None:
        raise Refusal("store-inconsistent", f"{work.work_id} has a head but no record")
    return record


def _unchecked(store: Store, work: WorkRef, matched: str, ref: str) -> Resolved:
    """One found work's record, and a reply that says no trust was checked (`resolve_with_record`, not `checked`)."""
    record = _head_record(store, work)
    return _answer("unchecked", ref=ref, matched_by=matched, work_id=work.work_id, candidates=[], findings=[]), record


def _trusted(ctx: Context, store: Store, work: WorkRef, matched: str, ref: str, note: str | None = None) -> Resolved:
    """The answer for one found work: its findings against the checkout it belongs to (see `place_of`)."""
    record = _head_record(store, work)
    place = place_of(ctx, work)
    note = note or place.note_path
    unchecked = place.checkout is None and place.checkout_path is not None
    # git is asked first and answered last (its processes waited for whatever happens): it works while the store,
    # the note and the links are checked
    git_later = None if unchecked else git_findings_later(record, place.checkout)
    try:
        findings = gate_findings(record, store.revisions(work.work_id))
        findings += lineage_findings(record, _head_of(store, work)) + note_findings(record, note)
        if git_later is not None:
            findings += link_findings(record, place.checkout)
    finally:
        git_found = git_later() if git_later is not None else []
    if git_later is None:
        findings.append(Finding("checkout-missing", ADVISORY, f"written in {place.checkout_path}, which is not a "
                                "checkout now: links, commits and pins were not checked"))  # fmt: skip
    findings += git_found
    outcome = "gated" if any(f.severity == GATING for f in findings) else "authoritative"
    reply = _answer(
        outcome, ref=ref, matched_by=matched, work_id=record["work_id"], slug=record["slug"],
        project=record["project_key"], status=record["status"], next=record["next"],
        revision_id=record["revision_id"], revision_number=record["revision_number"],
        record_digest=record["record_digest"], note_path=note,
        checkout={"path": place.checkout_path, "current": place.current}, candidates=[],
        findings=[f.as_json() for f in findings], backlinks=backlinks(store, work),
    )  # fmt: skip
    return reply, record
