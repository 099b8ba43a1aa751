"""A work's lineage as inline SVG drawn on the server: boxes by generation, arrows parent to child, texts escaped.

No script, no style attribute (the page's CSP allows neither), no external reference: the arrow head is a marker
of the same SVG, and the colours are presentation attributes and classes of the one style sheet. Each work's box
is a link to its page; a reference that is not a work of the store is a box without a link.
"""

from __future__ import annotations

from html import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 210, 46, 70, 18, 10
KIND_WORDS = {"forked_to": "fork", "joined_into": "join"}


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def _short(text: str, size: int) -> str:
    """At most `size` characters, cut before escaping (an entity is never cut in two)."""
    text = " ".join(str(text).split())
    return text if len(text) <= size else text[: size - 1] + "…"


def generations(nodes: list[dict[str, Any]], edges: list[dict[str, str]]) -> dict[str, int]:
    """Each node's column: the longest chain of parents above it (a root is 0), then each parent moved up to the
    column just before its nearest child, so an edge skips no column (one that did was drawn through the boxes
    between). Bounded, so a cycle cannot hang it."""
    rank = {node["id"]: 0 for node in nodes}
    inside = [edge for edge in edges if edge["from"] in rank and edge["to"] in rank]
    for _ in range(len(nodes)):
        moved = False
        for edge in inside:
            if rank[edge["to"]] < rank[edge["from"]] + 1:
                rank[edge["to"]] = min(rank[edge["from"]] + 1, len(nodes))
                moved = True
        if not moved:
            break
    for _ in range(len(nodes)):
        moved = False
        for node in rank:
            children = [rank[edge["to"]] for edge in inside if edge["from"] == node]
            if children and rank[node] < min(children) - 1:
                rank[node] = min(children) - 1
                moved = True
        if not moved:
            break
    return rank


def lineage_svg(data: dict[str, Any]) -> str:
    """The picture of `workview.lineage`'s nodes and edges; the work the page is about is marked `current`."""
    nodes, edges = data["nodes"], data["edges"]
    rank = generations(nodes, edges)
    columns: dict[int, list[dict[str, Any]]] = {}
    for node in sorted(nodes, key=lambda n: (n["slug"], n["id"])):
        columns.setdefault(rank[node["id"]], []).append(node)
    place: dict[str, tuple[int, int]] = {}
    for column, members in columns.items():
        for row, node in enumerate(members):
            place[node["id"]] = (PAD + column * (BOX_W + GAP_X), PAD + row * (BOX_H + GAP_Y))
    width = PAD * 2 + (max(columns, default=0) + 1) * (BOX_W + GAP_X) - GAP_X
    height = PAD * 2 + max((len(m) for m in columns.values()), default=1) * (BOX_H + GAP_Y) - GAP_Y
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="lineage" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" aria-labelledby="lineage-title">'
             f'<title id="lineage-title">Lineage: {len(nodes)} works, {len(edges)} edges</title>'
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>']  # fmt: skip
    for edge in edges:
        (x1, y1), (x2, y2) = place[edge["from"]], place[edge["to"]]
        x1, y1, y2 = x1 + BOX_W, y1 + BOX_H // 2, y2 + BOX_H // 2
        middle = (x1 + x2) // 2
        word = KIND_WORDS.get(edge["kind"], edge["kind"])
        parts.append(f'<g class="edge-group"><path class="edge" d="M {x1} {y1} C {middle} {y1}, {middle} {y2}, '
                     f'{x2} {y2}" fill="none" stroke="#555" stroke-width="1.5" marker-end="url(#arrow)">'
                     f'<title>{_e(edge["kind"])}</title></path><text class="edge-label" x="{middle}" '
                     f'y="{(y1 + y2) // 2 - 4}" text-anchor="middle">{_e(word)}</text></g>')  # fmt: skip
    for node in nodes:
        x, y = place[node["id"]]
        classes = " ".join(filter(None, ("node", "gated" if node.get("gated") else "",
                                          "current" if node["id"] == data.get("work_id") else "")))  # fmt: skip
        status = node.get("status") or ("a reference" if node.get("kind") == "ref" else "")
        box = (f'<g class="{classes}"><title>{_e(node["slug"])}: {_e(status)}</title>'
               f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="#fff" stroke="#444"/>'
               f'<text x="{x + 8}" y="{y + 18}" class="slug">{_e(_short(node["slug"], 28))}</text>'
               f'<text x="{x + 8}" y="{y + 36}" class="status">{_e(_short(status, 32))}</text></g>')  # fmt: skip
        parts.append(f'<a href="/work/{_e(node["id"])}">{box}</a>' if node.get("kind") == "work" else box)
    parts.append("</svg>")
    return "".join(parts)
