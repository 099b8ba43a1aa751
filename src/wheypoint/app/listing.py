"""`wheypoint list`: the works a set of filters selects, from the store's indexes, never a scan of records."""

from __future__ import annotations

import os

from wheypoint.app.context import Context
from wheypoint.model.errors import bad_parameter
from wheypoint.store.rows import WorkQuery

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_LIMIT = 1000


def list_works(ctx: Context, options: dict[str, Any]) -> dict[str, Any]:
    """Filters from the command line (repeated values OR, different flags AND) to rows, best first."""
    scope = options.get("scope")
    if scope not in (None, "project", "machine"):
        raise bad_parameter("scope", "is project or machine")
    projects = tuple(options.get("project") or ())
    reply: dict[str, Any] = {}
    if scope is None and not projects and ctx.checkout is None:
        scope = "machine"
        reply["scope_fallback"] = "machine"  # outside a checkout there is no project to default to
    scope = scope or "project"
    if scope == "project" and not projects:
        projects = (ctx.project_key(),)
    if scope == "machine" and not options.get("project"):
        projects = ()
    limit = options.get("limit") or "50"
    if not (str(limit).isascii() and str(limit).isdigit() and len(str(limit)) <= 9 and 0 < int(limit) <= MAX_LIMIT):
        raise bad_parameter("limit", f"takes a whole number from 1 to {MAX_LIMIT}")
    query = filters_query(options, projects, int(limit))
    store = ctx.open_store(create=False)
    try:
        rows = store.list_works(query)
    finally:
        store.close()
    works = [
        {
            "work_id": row.work_id, "slug": row.slug, "project": row.project_key, "status": row.status,
            "next": row.next_move, "orientation": row.orientation, "revision_id": row.head_revision_id,
            "revision_number": row.head_number, "updated_at": row.updated_at, "source": "store",
        }
        for row in rows
    ]  # fmt: skip
    if scope == "project" and not _store_only(query):
        works += _legacy_rows(ctx, query)
    return {**reply, "scope": scope, "projects": list(projects), "count": len(works), "works": works}


def filters_query(options: dict[str, Any], projects: tuple[str, ...], limit: int) -> WorkQuery:
    """The list filters of a command's options as a store query (list, and export's selection)."""
    return WorkQuery(
        projects=projects,
        grep=tuple(options.get("grep") or ()),
        statuses=tuple(options.get("status") or ()),
        nexts=tuple(options.get("next") or ()),
        entry_kinds=tuple(options.get("entry_kind") or ()),
        entry_states=tuple(options.get("entry_state") or ()),
        owners=tuple(options.get("owner") or ()),
        gated=options.get("gated"),
        edge_kinds=tuple(options.get("edge_kind") or ()),
        linked_to=tuple(options.get("linked_to") or ()),
        forked_from=tuple(options.get("forked_from") or ()),
        authors=tuple(options.get("author") or ()),
        since=options.get("since"),
        limit=limit,
    )


def _store_only(query: WorkQuery) -> bool:
    """Filters only a store record can satisfy (legacy notes have no entries, edges or links)."""
    return bool(query.entry_kinds or query.entry_states or query.owners or query.edge_kinds or query.linked_to
                or query.forked_from or query.authors or query.since)  # fmt: skip


def _legacy_rows(ctx: Context, query: WorkQuery) -> list[dict[str, Any]]:
    """Hand-written notes in this checkout and its worktrees that fit the filters, marked as legacy."""
    from wheypoint.notes.legacy import legacy_notes

    rows = []
    for path, parsed, text in legacy_notes(ctx.note_roots()):
        status_ok = not query.statuses or any(
            s in (parsed.status_kind, parsed.status) for s in query.statuses
        )  # fmt: skip
        gated_ok = query.gated is None or query.gated == (parsed.status_kind == "gated")
        next_ok = not query.nexts or parsed.next in query.nexts
        grep_ok = not query.grep or any(g.lower() in text.lower() for g in query.grep)
        if status_ok and gated_ok and next_ok and grep_ok:
            slug = os.path.splitext(os.path.basename(path))[0]
            rows.append({
                "work_id": None, "slug": slug, "project": ctx.project_key(), "status": parsed.status or "",
                "next": parsed.next, "orientation": parsed.orientation or "", "revision_id": None,
                "revision_number": 0, "updated_at": parsed.created or "", "source": "legacy-note",
                "note_path": path,
            })  # fmt: skip
    return rows[: query.limit]
