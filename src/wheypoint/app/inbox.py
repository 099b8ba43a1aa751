"""The person's inbox: every open gate across the store, oldest first, and the works by status and recency.

`wheypoint serve` draws its first page from this, a page at a time; it reads the store through its narrow
interface only (`open_gates`, `list_works`, `count_works`, `records`, `record`, `revisions`), so it answers the
same on SQLite and on a team's PostgreSQL store.
"""

from __future__ import annotations

from wheypoint.app.context import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
GATES_PER_PAGE = 20  # gates drawn on one page of the inbox (each with its dossier and form)
WORKS_PER_PAGE = 100  # rows of the works table on one page


def inbox(ctx: Context, filters: dict[str, list[str]] | None = None, gate_page: int = 1,
          page: int = 1) -> dict[str, Any]:  # fmt: skip
    """One page of the inbox: page `gate_page` of the open gates (oldest first, GATES_PER_PAGE a page), page `page`
    of the works (newest first, WORKS_PER_PAGE a page, grouped by status), and how many there are of each.
    `filters` selects works as `list --scope machine` does (values of one filter OR, different filters AND).
    Only the page's gated works are read in full; the order and the counts come from the store's indexes."""
    from wheypoint.app.listing import filters_query

    chosen = {name: list(values) for name, values in (filters or {}).items() if name in FILTERS and values}
    query = filters_query(chosen, tuple(chosen.get("project", ())), WORKS_PER_PAGE)
    store = ctx.open_store(create=False)
    try:
        gate_count, shown = store.open_gates(query, (gate_page - 1) * GATES_PER_PAGE, GATES_PER_PAGE)
        records = store.records([gate.work_id for gate in shown])
        rows = store.list_works(query._replace(offset=(page - 1) * WORKS_PER_PAGE))
        work_count = store.count_works(query)
    finally:
        store.close()
    gates: list[dict[str, Any]] = []
    for wanted in shown:
        record = records.get(wanted.work_id)
        found = [gate for gate in gates_of(record, {}) if gate["entry_id"] == wanted.entry_id] if record else []
        gates += [{**gate, "since": wanted.since} for gate in found]
    groups: dict[str, list[dict[str, Any]]] = {name: [] for name in STATUS_GROUPS}
    for row in rows:
        groups[status_group(row.status)].append({
            "work_id": row.work_id, "slug": row.slug, "project": row.project_key, "status": row.status,
            "next": row.next_move, "orientation": row.orientation, "revision_number": row.head_number,
            "updated_at": row.updated_at,
        })  # fmt: skip
    return {"gates": gates, "gate_count": gate_count, "gate_page": gate_page, "gates_per_page": GATES_PER_PAGE,
            "works": groups, "work_count": work_count, "page": page, "works_per_page": WORKS_PER_PAGE,
            "filters": chosen}  # fmt: skip


def work_page(ctx: Context, work_id: str) -> dict[str, Any]:
    """A work's head record, its open gates as the inbox shows them, and its revisions with their authors."""
    from wheypoint.app.show import log
    from wheypoint.model.errors import Refusal

    store = ctx.open_store(create=False)
    try:
        record, revisions = None, []
        if store.work(work_id) is not None:
            revisions = log(ctx, work_id)["revisions"]  # every revision, with its time: when each gate was asked
            record = store.record(work_id)  # inside `Context.one_store`, the last record of the history log read
    finally:
        store.close()
    if record is None:
        raise Refusal("record-missing", f"no work {work_id} in the store")
    added_at = {revision["revision_number"]: revision["captured_at"] for revision in revisions}
    return {"record": record, "gates": gates_of(record, added_at), "revisions": revisions}


def revisions_since(ctx: Context, work_id: str, base: str) -> list[dict[str, Any]]:
    """The revisions written after `base` (all of them when `base` is not in the chain): what moved meanwhile."""
    from wheypoint.app.show import log

    chain: list[dict[str, Any]] = log(ctx, work_id)["revisions"]
    ids = [revision["revision_id"] for revision in chain]
    return chain[ids.index(base) + 1 :] if base in ids else chain
