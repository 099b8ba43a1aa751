"""`store copy`: every work of one store (or those list's filters select) into another, through a bundle.

Moving between stores (a user's SQLite file into the team's PostgreSQL, or back) is an export and an import:
the bundle is written to a private temporary file, and the import verifies every digest and chain and
writes all or nothing, answering a revision already there as present. So a copy can be run again at any time:
it writes only what the target lacks, and a diverging history is refused (`import-conflict`), never merged.
Nothing is redacted: both stores are the same people's. Notes are not written: a copy moves records.
"""

from __future__ import annotations

import os

from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.app.context import Context


def copy_store(ctx: Context, source: str, target: str, filters: dict[str, Any]) -> dict[str, Any]:
    """Copy the selected works of `source` into `target` (both a path or a URL); the counts and the bundle digest."""
    import tempfile

    from wheypoint.app.bundle import import_bundle, write_bundle
    from wheypoint.app.context import Context, NoteOptions
    from wheypoint.app.listing import filters_query
    from wheypoint.store import shown

    if not source or not target:
        raise Refusal("usage", "takes --from STORE and --to STORE (a file path, sqlite:///path or postgresql://...)",
                      usage=True)  # fmt: skip
    if _same(source, target):
        raise Refusal("usage", f"--from and --to name the same store ({shown(source)})", usage=True)
    query = filters_query(filters, tuple(filters.get("project") or ()), 1 << 62)  # no --project: every project
    reading = Context(ctx.cwd, {**ctx.environ, "WHEYPOINT_STORE": source})
    store = reading.open_store(create=False)
    handle, bundle = tempfile.mkstemp(prefix="wheypoint-copy-", suffix=".bundle.json")  # 0600: it holds the records
    os.close(handle)
    try:
        try:
            work_ids = [work.work_id for work in store.list_works(query)]
            revisions, digest = write_bundle(store, work_ids, bundle, {}, operator=True, local=True)
        finally:
            store.close()
        writing = Context(ctx.cwd, {**ctx.environ, "WHEYPOINT_STORE": target})
        imported = import_bundle(writing, bundle, None, NoteOptions(no_note=True))
    finally:
        try:
            os.unlink(bundle)
        except OSError:
            pass
    return {"from": shown(source), "to": shown(target), "works": len(work_ids), "revisions": revisions,
            "written": imported["written"], "already_present": imported["already_present"],
            "bundle_digest": digest}  # fmt: skip


def _same(source: str, target: str) -> bool:
    """Whether two locations name one store (the same URL, or paths to the same file)."""
    if "://" in source or "://" in target:
        return source == target
    return os.path.abspath(os.path.expanduser(source)) == os.path.abspath(os.path.expanduser(target))
