"""`link`, `unlink` and backlinks: edges between works, written as checkpoints and read back from the index.

`link` and `unlink` are checkpoints with one edge added or removed, so they follow every rule a write does
(`--base`, replays, the note rendered again). A reference that names a work of the store by its slug or work
id is written in the store's own spelling, `wheypoint:<project>/<work id>`, so that the work it names finds it
among its backlinks whatever the writer typed.
"""

from __future__ import annotations

from wheypoint.app.context import Context, NoteOptions
from wheypoint.app.lookup import find_work, work_named
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.store.base import Store
    from wheypoint.store.rows import WorkRef


def canonical_ref(store: Store, ref: str, project_key: str) -> str:
    """`ref` as the store spells a work (`wheypoint:<project>/<work id>`) when it names one exactly, else as given."""
    from wheypoint.model.refs import ref_kind

    kind = ref_kind(ref)
    if kind not in ("relative", "wheypoint") or (kind == "relative" and "/" in ref):
        return ref
    work = work_named(store, ref, project_key)
    return f"wheypoint:{work.project_key}/{work.work_id}" if work else ref


def backlinks(store: Store, work: WorkRef) -> list[dict[str, Any]]:
    """The works whose head points at `work`, for show and resolve."""
    return [{"work_id": b.work_id, "slug": b.slug, "project": b.project_key, "kind": b.kind, "ref": b.ref}
            for b in store.backlinks(work)]  # fmt: skip


def edge_intent(ctx: Context, work: str, ref: str, *, kind: str | None, covers: list[str], rationale: str | None,
                base: str | None, remove: bool) -> dict[str, Any]:  # fmt: skip
    """The checkpoint intent that adds (or with `remove`, takes out) one edge of `work`."""
    store = ctx.open_store(create=False)
    try:
        found = find_work(ctx, store, work).work
        target = canonical_ref(store, ref, found.project_key)
    finally:
        store.close()
    intent: dict[str, Any] = {"work_id": found.work_id}
    if base is not None:
        intent["base_revision_id"] = base
    if remove:
        if covers or rationale is not None:
            raise Refusal("usage", "unlink takes a reference and at most --kind", usage=True)
        intent["remove_links"] = [{"ref": target, **({"kind": kind} if kind else {})}]
        return intent
    if not kind:
        raise Refusal("usage", "takes the edge's kind", usage=True, parameter="kind")
    edge: dict[str, Any] = {"ref": target, "kind": kind}
    if covers:
        edge["covers"] = covers
    if rationale is not None:
        edge["rationale"] = rationale
    intent["links"] = [edge]
    return intent


def write_edge(ctx: Context, intent: dict[str, Any], notes: NoteOptions) -> dict[str, Any]:
    from wheypoint.app.checkpoint import checkpoint

    return checkpoint(ctx, intent, notes)
