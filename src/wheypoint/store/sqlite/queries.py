"""The SQL behind `list`, built from a WorkQuery; part of the SQLite store, loaded by `list` only.

Every filter becomes an indexed condition: values of one filter are ORed, different filters ANDed,
and filters on entries are one EXISTS so that `--entry-kind question --entry-state active --owner
ann` means one entry that is all three. `--grep` runs through the FTS5 index and ranks by bm25 (a
LIKE scan of the search table where this SQLite had no FTS5 when the store was made).
"""

from __future__ import annotations

from wheypoint.store.sqlite import HEAD_COLUMNS, like_escaped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.store.rows import WorkQuery

LISTED_COLUMNS = HEAD_COLUMNS + ", w.next_move, w.orientation, w.created_at"


def _in(column: str, values: tuple[str, ...], args: list[Any]) -> str:
    args.extend(values)
    return f"{column} IN ({', '.join('?' * len(values))})"


def fts_phrase_query(texts: tuple[str, ...]) -> str:
    """An FTS5 query that ORs the texts, each as a quoted phrase (so no user text is FTS syntax)."""
    return " OR ".join('"' + text.replace('"', '""') + '"' for text in texts)


def list_sql(query: WorkQuery, fts: bool) -> tuple[str, list[Any]]:
    """The SELECT for a list query, and its parameters; `fts` when `search` is an FTS5 table here."""
    where: list[str] = []
    args: list[Any] = []
    joins = ""
    order = "w.updated_at DESC, w.work_id"
    if query.grep:
        if fts:
            joins = " JOIN search s ON s.rowid = w.rowid"
            where.append("search MATCH ?")
            args.append(fts_phrase_query(query.grep))
            order = "bm25(search), w.updated_at DESC"
        else:
            likes = []
            for text in query.grep:
                pattern = "%" + like_escaped(text) + "%"
                likes.append(
                    "EXISTS (SELECT 1 FROM search s WHERE s.work_id = w.work_id AND (s.orientation LIKE ? ESCAPE '\\' "
                    "OR s.notes LIKE ? ESCAPE '\\' OR s.entries LIKE ? ESCAPE '\\' OR s.context LIKE ? ESCAPE '\\'))"
                )
                args.extend([pattern] * 4)
            where.append("(" + " OR ".join(likes) + ")")
    if query.projects:
        where.append(_in("w.project_key", query.projects, args))
    if query.statuses:
        parts = []
        for status in query.statuses:
            if status in ("ok", "gated"):
                parts.append("w.gated = ?")
                args.append(int(status == "gated"))
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
    if query.forked_from:
        refs = []
        for parent in query.forked_from:
            refs.append("(g.ref = ? OR g.ref LIKE ? ESCAPE '\\')")
            args.extend([parent, "%/" + like_escaped(parent)])
        where.append("EXISTS (SELECT 1 FROM edges g WHERE g.work_id = w.work_id AND g.kind = 'forked_from' AND "
                     f"({' OR '.join(refs)}))")  # fmt: skip
    if query.since:
        where.append("w.updated_at >= ?")
        args.append(query.since)
    sql = f"SELECT {LISTED_COLUMNS} FROM works w{joins}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY {order} LIMIT ?"
    args.append(query.limit)
    return sql, args
