"""Which work a reference means: the one rule every command that takes a work follows.

A reference is, in this order: a note's path (the work its `wheypoint:` pins name); `wheypoint:<project>/<work
id or slug>`, the store's own spelling; a work id, wherever it is; a slug, in this project first, else the one
work on the machine with that slug. A slug found outside this project is used and the reply says so
(`found_elsewhere`); a slug several other projects hold is refused `ambiguous`, naming each of them, and one
no project holds is refused `record-missing` with the slugs that look like it. `resolve` takes the same exact
steps first and only then its looser ones (a slug's prefix or part), since it finds rather than acts.
"""

from __future__ import annotations

import os

from wheypoint.app.context import note_path_named
from wheypoint.model.errors import Refusal
from wheypoint.model.records import Record
from wheypoint.model.shapes import is_work_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.app.context import Context
    from wheypoint.store.base import Store
    from wheypoint.store.rows import WorkRef

STORE_REF = "wheypoint:"


class Found(Record):
    """A work a reference names, how it matched, and whether it was found outside the asking project."""

    work: WorkRef
    matched_by: str  # note-path, ref, work-id or slug
    asked_in: str  # the project the command ran for

    @property
    def elsewhere(self) -> bool:
        return self.matched_by == "slug" and self.work.project_key != self.asked_in

    def said(self) -> dict[str, Any]:
        """What a reply adds so the caller knows the work came from another project ({} when it did not)."""
        if not self.elsewhere:
            return {}
        return {"found_elsewhere": {
            "project": self.work.project_key, "work_id": self.work.work_id,
            "message": f"no work {self.work.slug!r} in project {self.asked_in}: this is the one work with that slug "
                       f"on this machine, in project {self.work.project_key}",
        }}  # fmt: skip


def exact_matches(store: Store, ref: str, project: str) -> tuple[str, list[WorkRef]]:
    """(how it matched, the works) for the exact steps: a store ref, a work id, a slug here, then anywhere."""
    if ref.startswith(STORE_REF):
        scope, _, name = ref.removeprefix(STORE_REF).rpartition("/")
        if name and "/" not in name:
            work = store.work(name) if is_work_id(name) else store.work_by_slug(scope or project, name)
            if work is not None and (not scope or work.project_key == scope):
                return "ref", [work]
        return "none", []
    if is_work_id(ref):
        work = store.work(ref)
        if work is not None:
            return "work-id", [work]
    here = store.works_with_slug(ref, project)
    if here:
        return "slug", here
    return ("slug", found) if (found := store.works_with_slug(ref, None)) else ("none", [])


def work_named(store: Store, ref: str, project: str) -> WorkRef | None:
    """The one work a reference names by the exact steps, else None (for references stored in edges and links)."""
    _, works = exact_matches(store, ref, project)
    return works[0] if len(works) == 1 else None


# The longest reference a person or an agent can mean: a note's path (Linux's PATH_MAX), far past any work id or slug.
MAX_REFERENCE = 4096


def check_reference(ref: str) -> None:
    """Refuse (`usage`) a reference longer than any can be, before anything is looked up: a reply echoes the
    reference it looked for in several places (a 300 KB one made a 3 MB answer)."""
    if len(ref) > MAX_REFERENCE:
        raise Refusal("usage", f"a reference is at most {MAX_REFERENCE:,} characters (a note's path, a work id, a slug "
                      f"or a part of one); this one has {len(ref):,}", usage=True)  # fmt: skip


def find_work(ctx: Context, store: Store, ref: str) -> Found:
    """The one work `ref` means from where `ctx` runs; refused `ambiguous` or `record-missing` otherwise."""
    check_reference(ref)
    project = ctx.project_key()
    note = note_path_named(ctx, ref)
    if note is not None:
        return Found(work=_work_of_note(store, note, ref), matched_by="note-path", asked_in=project)
    matched, works = exact_matches(store, ref, project)
    if len(works) == 1:
        return Found(work=works[0], matched_by=matched, asked_in=project)
    if works:
        projects = sorted({w.project_key for w in works})
        raise Refusal("ambiguous", f"no work {ref!r} in project {project}; projects {', '.join(projects)} each "
                      "hold one: name it by work id, or run the command with --project", details={
                          "ref": ref, "project": project, "projects": projects,
                          "candidates": [{"work_id": w.work_id, "project": w.project_key} for w in works]})  # fmt: skip
    hint = suggestions(store, ref, project) if not ref.startswith(STORE_REF) else []
    also = f"; did you mean {', '.join(hint)}?" if hint else ""
    raise Refusal("record-missing", f"no work {ref!r} in project {project} nor elsewhere on this machine{also}",
                  details={"ref": ref, "project": project, "suggestions": hint})  # fmt: skip


def suggestions(store: Store, ref: str, project: str) -> list[str]:
    """Slugs that look like the reference: its first letters' neighbours, ranked by similarity."""
    import difflib  # only a miss needs it

    pool = {w.slug for w in store.works_with_slug_prefix(ref[:2], project, 200)}
    pool |= {w.slug for w in store.works_with_slug_prefix(ref[:1], None, 200)}
    return difflib.get_close_matches(ref, sorted(pool), n=5, cutoff=0.5)


def _work_of_note(store: Store, path: str, ref: str) -> WorkRef:
    """The work a note's pins name; a missing note, or one no record backs, is refused."""
    from wheypoint.notes.files import read_note
    from wheypoint.notes.parse import parse_note

    if not os.path.isfile(path):
        raise Refusal("record-missing", f"no note at {path}", details={"ref": ref, "note_path": path})
    pins = parse_note(read_note(path)).wheypoint or {}
    work = store.work(pins["work_id"]) if is_work_id(str(pins.get("work_id") or "")) else None
    if work is None:
        raise Refusal("record-missing", f"{path} is not backed by a store record: read it, and `wheypoint adopt` it "
                      "to make it one", details={"ref": ref, "note_path": path})  # fmt: skip
    return work
