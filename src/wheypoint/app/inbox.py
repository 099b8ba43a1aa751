"""The person's inbox: every open gate across the store, oldest first, and the works by status and recency.

`wheypoint serve` draws its first page from this; it reads the store through its narrow interface only
(`list_works`, `record`, `revisions`), so it answers the same on SQLite and on a team's PostgreSQL store.
"""

from __future__ import annotations

from wheypoint.app.context import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_GATED_WORKS = 1000  # list_works' own cap: the inbox reads at most this many gated works
DIRECTIVE_KINDS = ("directive", "operator_directive")
STATUS_GROUPS = ("gated", "halt", "ok")


def gates_of(record: dict[str, Any], added_at: dict[int, str]) -> list[dict[str, Any]]:
    """The record's open gates, each with its dossier forks and the directives in force on the work."""
    entries = record.get("entries", [])
    directives = [{"id": e["id"], "kind": e["kind"], "text": e["text"], "quote": e.get("quote")}
                  for e in entries if e["kind"] in DIRECTIVE_KINDS and e["state"] == "active"]  # fmt: skip
    gates = []
    for entry in entries:
        if not entry.get("gates") or entry["state"] != "active":
            continue
        forks = [fork for fork in record.get("decision_dossier", []) if fork.get("gate") == entry["id"]]
        gates.append({
            "work_id": record["work_id"], "slug": record["slug"], "project": record["project_key"],
            "revision_id": record["revision_id"], "revision_number": record["revision_number"],
            "entry_id": entry["id"], "kind": entry["kind"], "text": entry["text"],
            "owner": entry.get("owner"), "when": entry.get("when"), "rationale": entry.get("rationale"),
            "since": added_at.get(entry["added_in"], record.get("updated_at", "")),
            "dossier": forks, "directives": directives,
        })  # fmt: skip
    return gates


def status_group(status: str) -> str:
    """gated, halt or ok: the first word of a status line (`gated: Which cap?`)."""
    head = status.split(":", 1)[0].strip()
    return head if head in STATUS_GROUPS else "ok"


FILTERS = ("project", "status", "next", "owner", "grep")  # list's own filters, by its option names


def inbox(ctx: Context, filters: dict[str, list[str]] | None = None, limit: int = 200) -> dict[str, Any]:
    """Every open gate of the store (oldest first), then up to `limit` works grouped by status, newest first;
    `filters` selects works as `list --scope machine` does (values of one filter OR, different filters AND)."""
    from wheypoint.app.listing import filters_query

    chosen = {name: list(values) for name, values in (filters or {}).items() if name in FILTERS and values}
    query = filters_query(chosen, tuple(chosen.get("project", ())), limit)
    store = ctx.open_store(create=False)
    try:
        gates: list[dict[str, Any]] = []
        gated = store.list_works(query._replace(gated=True, limit=MAX_GATED_WORKS + 1))
        more = len(gated) > MAX_GATED_WORKS  # said on the page, never dropped in silence
        for row in gated[:MAX_GATED_WORKS]:
            record = store.record(row.work_id)
            if record is None:
                continue
            added_at = {r["revision_number"]: r["captured_at"] for r in store.revisions(row.work_id)}
            gates += gates_of(record, added_at)
        rows = store.list_works(query)
    finally:
        store.close()
    gates.sort(key=lambda gate: (gate["since"], gate["work_id"], gate["entry_id"]))
    groups: dict[str, list[dict[str, Any]]] = {name: [] for name in STATUS_GROUPS}
    for row in rows:
        groups[status_group(row.status)].append({
            "work_id": row.work_id, "slug": row.slug, "project": row.project_key, "status": row.status,
            "next": row.next_move, "orientation": row.orientation, "revision_number": row.head_number,
            "updated_at": row.updated_at,
        })  # fmt: skip
    return {"gates": gates, "works": groups, "filters": chosen,
            "gated_works_left_out": more}  # fmt: skip  # the gates of the most recently changed works are shown


def work_page(ctx: Context, work_id: str) -> dict[str, Any]:
    """A work's head record, its open gates as the inbox shows them, and its revisions with their authors."""
    from wheypoint.app.show import log
    from wheypoint.model.errors import Refusal

    store = ctx.open_store(create=False)
    try:
        record = store.record(work_id)
        added_at = {r["revision_number"]: r["captured_at"] for r in store.revisions(work_id)} if record else {}
    finally:
        store.close()
    if record is None:
        raise Refusal("record-missing", f"no work {work_id} in the store")
    return {"record": record, "gates": gates_of(record, added_at), "revisions": log(ctx, work_id)["revisions"]}


def revisions_since(ctx: Context, work_id: str, base: str) -> list[dict[str, Any]]:
    """The revisions written after `base` (all of them when `base` is not in the chain): what moved meanwhile."""
    from wheypoint.app.show import log

    chain: list[dict[str, Any]] = log(ctx, work_id)["revisions"]
    ids = [revision["revision_id"] for revision in chain]
    return chain[ids.index(base) + 1 :] if base in ids else chain
