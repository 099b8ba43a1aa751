"""What `serve` shows of a work beside its head: a diff of two revisions, its links both ways, its lineage.

Each is the command line's own logic, read again, never a second copy of it: the diff is `wheypoint diff`'s
(app/graph.diff_revisions), the links are the head's edges with the work each names (app/lookup.work_named, as
`list --linked-to` resolves them) and the edges index's backlinks (app/links.backlinks, as `show` lists them),
and the lineage is `wheypoint graph`'s walk (app/graph.graph) kept to the fork, split and join edges.
`store_version` is the number a page polls to learn that the store changed.
"""

from __future__ import annotations

from wheypoint.app.context import Context
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LINEAGE_DEPTH = 3  # how many edges away graph walks for the picture: parents, children and their other parents
READ_WHOLE = 10  # a work of at most this many revisions is read whole for its diff page (see diff_between)


def diff_between(ctx: Context, work_id: str, first: str | None, second: str | None) -> dict[str, Any]:
    """`wheypoint diff <work> [first] [second]`'s reply, with the work's revisions (number, id, when) for a form.

    Inside `Context.one_store` a short work's history is read first, in one statement: the diff's own reads (the
    receipts, then the two records) are answered from it, which on a team store saves two round trips for a few
    records more (on SQLite, about 10 µs a revision)."""
    from wheypoint.app.graph import diff_revisions

    store = ctx.open_store(create=False)
    try:
        work = store.work(work_id)
        if work is not None and work.head_number <= READ_WHOLE:
            store.history(work_id)
    finally:
        store.close()
    changed = diff_revisions(ctx, work_id, first, second)
    store = ctx.open_store(create=False)
    try:
        receipts = store.revisions(work_id)
    finally:
        store.close()
    chain = [{"revision_id": r["revision_id"], "revision_number": r["revision_number"], "captured_at": r["captured_at"]}
             for r in receipts]  # fmt: skip
    numbers = {r["revision_id"]: r["revision_number"] for r in chain}
    return {**changed, "revisions": chain, "from_number": numbers.get(changed["from"] or ""),
            "to_number": numbers.get(changed["to"])}  # fmt: skip


def links_both_ways(ctx: Context, work_id: str) -> dict[str, Any]:
    """The head's edges (each with the work it names, when it names one) and the works whose head points here."""
    from wheypoint.app.links import backlinks
    from wheypoint.app.lookup import work_named

    store = ctx.open_store(create=False)
    try:
        work, record = store.work(work_id), store.record(work_id)
        if work is None or record is None:
            raise Refusal("record-missing", f"no work {work_id} in the store")
        links = []
        for edge in record.get("edges", []):
            target = work_named(store, edge["ref"], record["project_key"])
            links.append({"kind": edge["kind"], "ref": edge["ref"], "rationale": edge.get("rationale"),
                          "covers": list(edge.get("covers") or []),
                          "work_id": target.work_id if target else None, "slug": target.slug if target else None,
                          "project": target.project_key if target else None})  # fmt: skip
        pointing = backlinks(store, work)
    finally:
        store.close()
    return {"links": links, "backlinks": pointing}


def lineage(ctx: Context, work_id: str) -> dict[str, Any]:
    """The works joined to this one by forks, splits and joins within LINEAGE_DEPTH edges, as `graph` finds them:
    its nodes (id, slug, kind, status, gated) and its edges (from parent to child, kind forked_to or joined_into)."""
    from wheypoint.app.graph import graph
    from wheypoint.model.join import LINEAGE

    drawn = graph(ctx, work_id, LINEAGE_DEPTH, "json")
    edges = [edge for edge in drawn["edges"] if edge["kind"] in LINEAGE]
    reached = {work_id}
    grown = True
    while grown:  # the part of the picture this work is in, through lineage edges only
        grown = False
        for edge in edges:
            ends = {edge["from"], edge["to"]}
            if ends & reached and not ends <= reached:
                reached |= ends
                grown = True
    return {"work_id": work_id, "nodes": [n for n in drawn["nodes"] if n["id"] in reached],
            "edges": [e for e in edges if e["from"] in reached and e["to"] in reached]}  # fmt: skip


def store_version(ctx: Context) -> int:
    """The store's version now (Store.version: it grows with every revision written)."""
    store = ctx.open_store(create=False)
    try:
        return store.version()
    finally:
        store.close()
