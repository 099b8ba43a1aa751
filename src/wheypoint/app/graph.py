"""`diff` and `graph`: a work's change between two revisions, and the works around it drawn as a picture.

`graph` walks the edges index outwards from a work (its own edges, and the works that point at it), to
`--depth` steps, and renders what it found as Mermaid (which GitHub and most Markdown viewers draw), Graphviz
DOT or JSON. Gated works are marked; a reference that is not a work of the store is drawn as a plain node.
A fork or a join is drawn once, parent to child, though both records carry an edge for it.
"""

from __future__ import annotations

from wheypoint.app.context import Context
from wheypoint.app.lookup import find_work
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.store.base import Backlink, Store

FORMATS = ("mermaid", "dot", "json")
MAX_DEPTH = 5
MAX_NODES = 200
# Both ends of a fork and of a join carry an edge (forked_to and forked_from, joined_into and joined_from): each
# is drawn once, from the parent's side.
_DRAWN_FROM_THE_OTHER_END = ("forked_from", "joined_from")


def diff_revisions(ctx: Context, ref: str, first: str | None, second: str | None) -> dict[str, Any]:
    """The change from revision `first` to `second` (default: from the head's parent to the head)."""
    from wheypoint.app.show import revision_named
    from wheypoint.model.diff import diff

    store = ctx.open_store(create=False)
    try:
        found = find_work(ctx, store, ref)
        work = found.work
        receipts = store.revisions(work.work_id)
        numbers = {r["revision_id"]: r["revision_number"] for r in receipts}
        to_id = revision_named(receipts, second) if second else receipts[-1]["revision_id"]
        from_id = revision_named(receipts, first) if first else None
        for named in (to_id, from_id):
            if named is not None and named not in numbers:
                raise Refusal("revision-missing", f"{named} is not a revision of {work.work_id}")
        if first is None and numbers[to_id] > 1:  # the default: the revision before `to`
            from_id = receipts[numbers[to_id] - 2]["revision_id"]
        after = store.record(work.work_id, to_id)
        before = store.record(work.work_id, from_id) if from_id else None
    finally:
        store.close()
    if after is None:
        raise Refusal("revision-missing", f"{to_id} is not a revision of {work.work_id}")
    empty = {**after, "entries": [], "status": "", "orientation": "", "next": {}, "notes": "", "working_context": [],
             "local_references": [], "artifact_links": [], "edges": [], "meat": []}  # fmt: skip
    return {"work_id": work.work_id, "slug": work.slug, **found.said(), "from": from_id, "to": to_id,
            "changes": diff(before or empty, after)}  # fmt: skip


def graph(ctx: Context, ref: str, depth: int, fmt: str) -> dict[str, Any]:
    if fmt not in FORMATS:
        raise Refusal("usage", f"takes {', '.join(FORMATS)}", usage=True, parameter="format")
    if not 0 <= depth <= MAX_DEPTH:
        raise Refusal("usage", f"takes a depth from 0 to {MAX_DEPTH}", usage=True, parameter="depth")
    store = ctx.open_store(create=False)
    try:
        found = find_work(ctx, store, ref)
        start = found.work
        nodes, edges = _walk(store, start.work_id, depth)
    finally:
        store.close()
    reply: dict[str, Any] = {"work_id": start.work_id, **found.said(), "depth": depth, "nodes": nodes, "edges": edges}
    if fmt == "mermaid":
        reply["mermaid"] = mermaid(nodes, edges)
    elif fmt == "dot":
        reply["dot"] = dot(nodes, edges)
    return reply


def _walk(store: Store, start: str, depth: int) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Works and references within `depth` edges of `start`, and the edges between them (breadth first)."""
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[tuple[str, str, str], dict[str, str]] = {}
    frontier = [start]
    for level in range(depth + 1):
        following: list[str] = []
        read = _level_read(store, frontier, level, level < depth)
        for work_id in frontier:
            if work_id in nodes and nodes[work_id]["level"] < level:
                continue
            if work_id not in read:
                continue
            record, backlinks = read[work_id]
            nodes[work_id] = {"id": work_id, "slug": record["slug"], "kind": "work", "status": record["status"],
                              "gated": record["status"].startswith("gated"), "level": level}  # fmt: skip
            if level == depth or len(nodes) >= MAX_NODES:
                continue
            for edge in record["edges"]:
                target = _work_of(store, edge["ref"], record["project_key"])
                if edge["kind"] in _DRAWN_FROM_THE_OTHER_END:  # drawn once, from the parent's forked_to/joined_into
                    if target:
                        following.append(target)
                    continue
                other = target or edge["ref"]
                edges[(work_id, other, edge["kind"])] = {"from": work_id, "to": other, "kind": edge["kind"]}
                if target:
                    following.append(target)
                elif other not in nodes:
                    nodes[other] = {"id": other, "slug": other, "kind": "ref", "status": "", "gated": False,
                                    "level": level + 1}  # fmt: skip
            for back in backlinks:
                if back.kind not in _DRAWN_FROM_THE_OTHER_END:
                    edges[(back.work_id, work_id, back.kind)] = {"from": back.work_id, "to": work_id, "kind": back.kind}
                following.append(back.work_id)
        frontier = [w for w in dict.fromkeys(following) if w not in nodes]
    kept = {key: edge for key, edge in edges.items() if edge["from"] in nodes and edge["to"] in nodes}
    return [{k: v for k, v in n.items() if k != "level"} for n in nodes.values()], list(kept.values())


def _level_read(
    store: Store, frontier: list[str], level: int, onwards: bool
) -> dict[str, tuple[dict[str, Any], list[Backlink]]]:
    """The head record of each work of one level of the walk, and its backlinks when the walk goes on from it
    (`onwards`), by work id (a work not in the store is left out). The start is read as the other readers of a
    work read it, so that inside `Context.one_store` a page's earlier reads answer it; a level further out is
    read in one go (`heads_and_backlinks`, or only `records` for the last level, whose backlinks are not followed),
    where reading each work on its own took three statements a work."""
    if level == 0:
        read = {}
        for work_id in frontier:
            record, work = store.record(work_id), store.work(work_id)
            if record is not None and work is not None:
                read[work_id] = (record, store.backlinks(work) if onwards else [])
        return read
    if not frontier:
        return {}
    if not onwards:
        return {work_id: (record, []) for work_id, record in store.records(frontier).items()}
    return {
        work_id: (record, backlinks) for work_id, (_, record, backlinks) in store.heads_and_backlinks(frontier).items()
    }


def _work_of(store: Store, ref: str, project: str) -> str | None:
    """The work id an edge's reference names, when it names a work of the store."""
    from wheypoint.app.lookup import work_named

    found = work_named(store, ref, project)
    return found.work_id if found else None


def _label(text: str) -> str:
    """Text inside a Mermaid quoted label: its own quote and angle brackets as entity codes."""
    return text.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def mermaid(nodes: list[dict[str, Any]], edges: list[dict[str, str]]) -> str:
    """A Mermaid flowchart: one node per work or reference, gated works in their own class."""
    names = {node["id"]: f"n{index}" for index, node in enumerate(nodes)}
    lines = ["flowchart LR"]
    for node in nodes:
        text = node["slug"] if node["kind"] == "ref" else f"{node['slug']}<br/>{_label(node['status'][:60])}"
        shape = ('(["', '"])') if node["kind"] == "ref" else ('["', '"]')
        lines.append(f"  {names[node['id']]}{shape[0]}{_label(text) if node['kind'] == 'ref' else text}{shape[1]}"
                     + (":::gated" if node["gated"] else ""))  # fmt: skip
    for edge in edges:
        lines.append(f"  {names[edge['from']]} -->|{edge['kind']}| {names[edge['to']]}")
    lines.append("  classDef gated fill:#fde2e1,stroke:#c0392b,color:#000")
    return "\n".join(lines) + "\n"


def dot(nodes: list[dict[str, Any]], edges: list[dict[str, str]]) -> str:
    """The same picture in Graphviz DOT."""

    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = ["digraph wheypoint {", "  rankdir=LR;"]
    for node in nodes:
        label = node["slug"] if node["kind"] == "ref" else f"{node['slug']}\n{node['status'][:60]}"
        style = ', style=filled, fillcolor="#fde2e1"' if node["gated"] else ""
        shape = ", shape=note" if node["kind"] == "ref" else ", shape=box"
        lines.append(f"  {quoted(node['id'])} [label={quoted(label)}{shape}{style}];")
    for edge in edges:
        lines.append(f"  {quoted(edge['from'])} -> {quoted(edge['to'])} [label={quoted(edge['kind'])}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
