"""The SQL behind `list`, built from a WorkQuery, in the SQL both backends speak; loaded by `list` and `export` only.

Every filter becomes an indexed condition: values of one filter are ORed, different filters ANDed,
and filters on entries are one EXISTS so that `--entry-kind question --entry-state active --owner
ann` means one entry that is all three. `--grep` is the one part each backend writes itself (its
full-text index and its ranking): the builder asks the backend's `grep` for it.
"""

from __future__ import annotations

from wheypoint.store.sqlparts import HEAD_COLUMNS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from wheypoint.store.rows import WorkQuery

LISTED_COLUMNS = HEAD_COLUMNS + ", w.next_move, w.orientation, w.created_at"


def _in(column: str, values: tuple[str, ...], args: list[Any]) -> str:
    args.extend(values)
    return f"{column} IN ({', '.join('?' * len(values))})"


def list_sql(
    query: WorkQuery, grep: Callable[[tuple[str, ...], list[Any]], tuple[str, str, str]]
) -> tuple[str, list[Any]]:
    """The SELECT for a list query, and its parameters (`?` placeholders).

    `grep(texts, args)` is the backend's: it appends its parameters to `args` and answers the join, the
    condition and the order that select and rank the works matching any of the texts.
    """
    where: list[str] = []
    args: list[Any] = []
    joins = ""
    order = "w.updated_at DESC, w.work_id"
    if query.grep:
        joins, condition, order = grep(query.grep, args)
        where.append(condition)
    if query.projects:
        where.append(_in("w.project_key", query.projects, args))
    if query.statuses:
        parts = []
        for status in query.statuses:
            # `ok` is a status line of its own; `gated` and `halt` name every status of their kind.
            if status == "gated":
                parts.append("w.gated = 1")
            elif status == "halt":
                parts.append("w.status LIKE 'halt: %'")
            else:
                parts.append("w.status = ?")
                args.append(status)
        where.append("(" + " OR ".join(parts) + ")")
    if query.gated is not None:
        where.append("w.gated = ?")
        args.append(int(query.gated))
    if query.nexts:
        where.append(_in("w.next_move", query.nexts, args))
    if query.entry_kinds or query.entry_states or query.owners:
        inner = ["e.work_id = w.work_id"]
        if query.entry_kinds:
            inner.append(_in("e.kind", query.entry_kinds, args))
        if query.entry_states:
            inner.append(_in("e.state", query.entry_states, args))
        if query.owners:
            inner.append(_in("e.owner", query.owners, args))
        where.append(f"EXISTS (SELECT 1 FROM entries e WHERE {' AND '.join(inner)})")
    if query.edge_kinds:
        where.append(
            f"EXISTS (SELECT 1 FROM edges g WHERE g.work_id = w.work_id AND {_in('g.kind', query.edge_kinds, args)})"
        )
    if query.linked_to:
        edge = _in("g.ref", query.linked_to, args)
        link = _in("l.ref", query.linked_to, args)
        where.append(f"(EXISTS (SELECT 1 FROM edges g WHERE g.work_id = w.work_id AND {edge}) OR "
                     f"EXISTS (SELECT 1 FROM artifact_links l WHERE l.work_id = w.work_id AND {link}))")  # fmt: skip
    if query.forked_from:  # the refs as the store spells them (the app layer looks the works up)
        refs = _in("g.ref", query.forked_from, args)
        where.append(
            f"EXISTS (SELECT 1 FROM edges g WHERE g.work_id = w.work_id AND g.kind = 'forked_from' AND {refs})"
        )
    if query.authors:
        where.append(f"EXISTS (SELECT 1 FROM revisions r WHERE r.work_id = w.work_id AND "
                     f"{_in('r.author', query.authors, args)})")  # fmt: skip
    if query.since:
        where.append("w.updated_at >= ?")
        args.append(query.since)
    sql = f"SELECT {LISTED_COLUMNS} FROM works w{joins}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY {order} LIMIT ?"
    args.append(query.limit)
    return sql, args
