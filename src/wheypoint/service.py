"""Where a command runs and the read commands: the context, finding a work, show and log.

This and `checkpointing.py` are the shell around the pure kernel; the CLI only parses arguments and
prints what these functions return. Reads import nothing of the write path, to keep start-up short.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from wheypoint.errors import Refusal
from wheypoint.notefile import NOTES_SUBDIR, note_state, write_atomic
from wheypoint.projection import render
from wheypoint.shapes import WORK_ID_PATTERN
from wheypoint.sqlite_store import SqliteStore
from wheypoint.store import Store, WorkRef
from wheypoint.workspace import Checkout, find_checkout, normalise_key, store_path


class Context:
    """Where a command runs: the folder, the environment, and the options every command shares."""

    def __init__(self, cwd: Path | None = None, environ: dict[str, str] | None = None, project: str | None = None):
        self.cwd = cwd or Path.cwd()
        self.environ = dict(os.environ) if environ is None else environ
        self.project = project
        self._checkout: Checkout | bool | None = False  # found on first use

    @property
    def checkout(self) -> Checkout | None:
        if self._checkout is False:
            self._checkout = find_checkout(self.cwd)
        return self._checkout if isinstance(self._checkout, Checkout) else None

    def project_key(self) -> str:
        explicit = self.project or self.environ.get("WHEYPOINT_PROJECT")
        if explicit:
            return normalise_key(explicit)
        checkout = self.checkout
        return checkout.project_key() if checkout else normalise_key(self.cwd.name)

    def open_store(self, *, create: bool) -> SqliteStore:
        return SqliteStore.open(store_path(self.environ), create=create)

    def now(self) -> str:
        from datetime import datetime, timezone

        return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def session(self) -> dict[str, str] | None:
        value = self.environ.get("WHEYPOINT_SESSION", "")
        harness, _, session_id = value.partition(":")
        return {"harness": harness, "id": session_id} if harness and session_id else None


def find_work(store: Store, ref: str, project_key: str) -> WorkRef:
    """A work named by its id, or by its slug in this project; refused when there is none."""
    work = store.work(ref) if re.match(WORK_ID_PATTERN, ref) else store.work_by_slug(project_key, ref)
    if work is None:
        raise Refusal("record-missing", f"no work {ref!r} in project {project_key}",
                      details={"ref": ref, "project": project_key})  # fmt: skip
    return work


class NoteOptions(NamedTuple):
    """Where the note goes: a folder other than the checkout's .cheese/notes, or nowhere."""

    note_dir: str | None = None
    no_note: bool = False


def note_path_for(ctx: Context, slug: str, options: NoteOptions) -> Path:
    if options.note_dir:
        folder = Path(options.note_dir)
        folder = folder if folder.is_absolute() else ctx.cwd / folder
    else:
        checkout = ctx.checkout
        folder = (checkout.toplevel if checkout else ctx.cwd) / NOTES_SUBDIR
    return folder / f"{slug}.md"


def show(ctx: Context, ref: str, revision_id: str | None, notes: NoteOptions, repair_note: bool) -> dict[str, Any]:
    store = ctx.open_store(create=False)
    try:
        work = find_work(store, ref, ctx.project_key())
        record = store.record(work.work_id, revision_id)
        if record is None:
            raise Refusal("revision-missing", f"{revision_id} is not a revision of {work.work_id}")
    finally:
        store.close()
    path = note_path_for(ctx, record["slug"], notes)
    state = (
        "not-head" if revision_id is not None else "missing" if not path.exists() else note_state(path, render(record))
    )
    if repair_note and state in ("stale", "missing"):
        write_atomic(path, render(record))
        state = "rewritten"
    return {"work_id": work.work_id, "record": record, "note": {"path": str(path), "state": state}}


def log(ctx: Context, ref: str) -> dict[str, Any]:
    store = ctx.open_store(create=False)
    try:
        work = find_work(store, ref, ctx.project_key())
        revisions = store.revisions(work.work_id)
        head = store.record(work.work_id)
    finally:
        store.close()
    texts = {e["id"]: e for e in (head or {}).get("entries", [])}
    chain = []
    for revision in revisions:
        chain.append({
            "revision_number": revision["revision_number"],
            "revision_id": revision["revision_id"],
            "parent_revision_id": revision["parent_revision_id"],
            "captured_at": revision["captured_at"],
            "record_digest": revision["record_digest"],
            "added": [{"id": i, "kind": texts[i]["kind"], "text": texts[i]["text"]} for i in revision["added"]],
            "transitioned": revision["transitioned"],
            "links_added": revision["links_added"],
            "links_removed": revision["links_removed"],
            "notes_changed": revision["notes_changed"],
            "compacted": revision["compacted"],
        })  # fmt: skip
    return {"work_id": work.work_id, "slug": work.slug, "status": work.status, "revisions": chain}
