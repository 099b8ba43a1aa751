"""`wheypoint list`: the works a set of filters selects, from the store's indexes, never a scan of records."""

from __future__ import annotations

from typing import Any

from wheypoint.errors import Refusal
from wheypoint.service import Context
from wheypoint.store import WorkQuery

MAX_LIMIT = 1000


def list_works(ctx: Context, options: dict[str, Any]) -> dict[str, Any]:
    """Filters from the command line (repeated values OR, different flags AND) to rows, best first."""
    scope = options.get("scope")
    if scope not in (None, "project", "machine"):
        raise Refusal("usage", "--scope is project or machine", exit_code=2)
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
    if not str(limit).isdigit() or not 0 < int(limit) <= MAX_LIMIT:
        raise Refusal("usage", f"--limit takes a whole number from 1 to {MAX_LIMIT}", exit_code=2)
    gated = options.get("gated")
    query = WorkQuery(
        projects=projects,
        grep=tuple(options.get("grep") or ()),
        statuses=tuple(options.get("status") or ()),
        nexts=tuple(options.get("next") or ()),
        entry_kinds=tuple(options.get("entry_kind") or ()),
        entry_states=tuple(options.get("entry_state") or ()),
        owners=tuple(options.get("owner") or ()),
        gated=gated,
        edge_kinds=tuple(options.get("edge_kind") or ()),
        linked_to=tuple(options.get("linked_to") or ()),
        forked_from=tuple(options.get("forked_from") or ()),
        since=options.get("since"),
        limit=int(limit),
    )
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
    return {**reply, "scope": scope, "projects": list(projects), "count": len(works), "works": works}
