"""The SQL behind `list` (and `serve`'s inbox), built from a WorkQuery, in the SQL both backends speak.

Every filter becomes an indexed condition: values of one filter are ORed, different filters ANDed,
and filters on entries are one subquery so that `--entry-kind question --entry-state active --owner
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

    Grep = Callable[[tuple[str, ...], list[Any], bool], tuple[str, str, str]]

LISTED_COLUMNS = HEAD_COLUMNS + ", w.next_move, w.orientation, w.created_at"


def _in(column: str, values: tuple[str, ...], args: list[Any]) -> str:
    args.extend(values)
    return f"{column} IN ({', '.join('?' * len(values))})"


def _parts(query: WorkQuery, grep: Grep, *, ranked: bool) -> tuple[str, list[str], str, list[Any]]:
    """A list query's joins to `works w`, its conditions, its order, and their parameters (`?` placeholders).

    `grep(texts, args, ranked)` is the backend's: it appends its parameters to `args` and answers the join, the
    condition and the order that select the works matching any of the texts, and rank them when `ranked` (a list;
    a count or the gates only select them, which a backend may do another way: SQLite's plan of a count joined to
    its full-text table went through every work of the project, 0.1-0.5 s at 10,000 works).
    """
    where: list[str] = []
    args: list[Any] = []
    joins = ""
    order = "w.updated_at DESC, w.work_id"
    if query.grep:
        joins, condition, order = grep(query.grep, args, ranked)
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
        # Not a correlated EXISTS: SQLite planned that through the owner index once per work (0.2 s at 10,000
        # works); the set of works with such an entry is read once, from whichever index fits.
        inner: list[str] = []
        if query.entry_kinds:
            inner.append(_in("e.kind", query.entry_kinds, args))
        if query.entry_states:
            inner.append(_in("e.state", query.entry_states, args))
        if query.owners:
            inner.append(_in("e.owner", query.owners, args))
        where.append(f"w.work_id IN (SELECT e.work_id FROM entries e WHERE {' AND '.join(inner)})")
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
    return joins, where, order, args


def _where(where: list[str]) -> str:
    return " WHERE " + " AND ".join(where) if where else ""


def list_sql(query: WorkQuery, grep: Grep, counted: bool = False) -> tuple[str, list[Any]]:
    """The SELECT for a list query, and its parameters (`?` placeholders); `counted`: each row also says how many
    works the query selects in all (a window count, for a backend that has them)."""
    joins, where, order, args = _parts(query, grep, ranked=True)
    count = ", count(*) OVER ()" if counted else ""
    sql = f"SELECT {LISTED_COLUMNS}{count} FROM works w{joins}{_where(where)} ORDER BY {order} LIMIT ?"
    args.append(query.limit)
    if query.offset:
        sql += " OFFSET ?"
        args.append(query.offset)
    return sql, args


def ranked_list_sql(query: WorkQuery, grep: Grep, rank: str, counted: bool = False) -> tuple[str, list[Any]]:
    """`list_sql` for a `--grep` query whose rank is `rank` (an expression over the grep's join, best first when
    higher), for a backend whose rank reads a wide column (PostgreSQL's `ts_rank` reads each match's whole
    document): the same rows in the same order, with the same count.

    Every match is ranked before the first page can be cut, so what matters is what each match carries through
    the sort and the window count. Here the matches are ranked in a subquery that keeps only each work's id, its
    rank and its time (`OFFSET 0` stops the planner from merging it into the outer query, which would carry the
    documents and every listed column up to the sort instead), the page is cut from those narrow rows, and only
    the page's works are read for their columns."""
    joins, where, _, args = _parts(query, grep, ranked=True)
    count = ", count(*) OVER () AS total" if counted else ""
    matches = f"SELECT w.work_id, w.updated_at, {rank} AS rank FROM works w{joins}{_where(where)} OFFSET 0"
    page = (f"SELECT m.work_id, m.updated_at, m.rank{count} FROM ({matches}) m "
            "ORDER BY m.rank DESC, m.updated_at DESC, m.work_id LIMIT ?")  # fmt: skip
    args.append(query.limit)
    if query.offset:
        page += " OFFSET ?"
        args.append(query.offset)
    total = ", p.total" if counted else ""
    sql = (f"SELECT {LISTED_COLUMNS}{total} FROM ({page}) p JOIN works w ON w.work_id = p.work_id "
           "ORDER BY p.rank DESC, p.updated_at DESC, p.work_id")  # fmt: skip
    return sql, args


def count_sql(query: WorkQuery, grep: Grep) -> tuple[str, list[Any]]:
    """How many works the list query selects, its limit and offset aside."""
    joins, where, _, args = _parts(query, grep, ranked=False)
    return f"SELECT count(*) FROM works w{joins}{_where(where)}", args


def _gates(query: WorkQuery, grep: Grep) -> tuple[str, list[Any]]:
    """FROM and WHERE of the open gates of the gated works a query selects: an active gating entry of the
    head's entries index."""
    joins, where, _, args = _parts(query._replace(gated=True), grep, ranked=False)
    sql = f"FROM entries e JOIN works w ON w.work_id = e.work_id{joins}" + _where(
        ["e.gates = 1", "e.state = 'active'", *where]
    )
    return sql, args


def since(added_in: str) -> str:
    """When a gate was asked: the capture time of the revision numbered `added_in` (NULL: a row indexed before that
    column), else the head's time. A subquery rather than a join: PostgreSQL plans the page's query in a third of
    the time (with a `--grep`, the plan cost more than running it), and both backends read the same rows."""
    return (f"COALESCE((SELECT r.captured_at FROM revisions r WHERE r.work_id = e.work_id AND r.number = {added_in}), "
            "w.updated_at)")  # fmt: skip


def gates_sql(query: WorkQuery, grep: Grep, added_in: str, offset: int, limit: int,
              counted: bool = False, head: bool = False) -> tuple[str, list[Any]]:  # fmt: skip
    """`limit` open gates from the `offset`th, oldest first (then by work and entry id), of the works selected;
    `counted`: each row also says how many there are in all (a window count, for a backend that has them); `head`:
    and its work's head revision id (`head`), for a backend that reads the heads' records in the same statement."""
    sql, args = _gates(query, grep)
    extra = (", count(*) OVER () AS total" if counted else "") + (", w.head_revision_id AS head" if head else "")
    return (f"SELECT e.work_id, e.entry_id, {since(added_in)} AS since{extra} {sql} "
            "ORDER BY since, e.work_id, e.entry_id LIMIT ? OFFSET ?", [*args, limit, offset])  # fmt: skip


def gate_count_sql(query: WorkQuery, grep: Grep) -> tuple[str, list[Any]]:
    """How many open gates the works a query selects have."""
    sql, args = _gates(query, grep)
    return f"SELECT count(*) {sql}", args
