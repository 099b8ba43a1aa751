"""The SQLite store's full-text pieces: the head's search and slug-index rows, and how they are queried.

Migrations 3 and 4 made `search` and `slug_index` FTS5 tables where the SQLite that ran them had FTS5
(and its trigram tokenizer), and plain tables otherwise; `Features` says which, and each function here
takes the indexed path or the scan accordingly. Both tables key their rows by the rowid of the works row.
"""

from __future__ import annotations

from wheypoint.store.sql import search_texts
from wheypoint.store.sqlparts import WORK_COLUMNS, like_escaped

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from wheypoint.store.sqlite.schema import Features


def fts_phrase_query(texts: tuple[str, ...]) -> str:
    """An FTS5 query that ORs the texts, each as a quoted phrase (so no user text is FTS syntax)."""
    return " OR ".join('"' + text.replace('"', '""') + '"' for text in texts)


def write_search(conn: sqlite3.Connection, record: dict[str, Any], first: bool = False) -> None:
    """Replace the head's search row (and, at a work's first revision, index its slug). `first`: the work's first
    head, written in this transaction with its new works row, so no search row of it exists yet."""
    # A search row shares its works row's rowid: FTS5 cannot index work_id, so deleting by it would
    # scan the whole table on every checkpoint; by rowid it is a keyed delete.
    (rowid,) = conn.execute("SELECT rowid FROM works WHERE work_id = ?", (record["work_id"],)).fetchone()
    if not first:
        conn.execute("DELETE FROM search WHERE rowid = ?", (rowid,))
    if record["revision_number"] == 1:  # a slug never changes: index it once, at the work's first revision
        conn.execute("INSERT INTO slug_index (rowid, slug) VALUES (?, ?)", (rowid, record["slug"]))
    conn.execute(
        "INSERT INTO search (rowid, work_id, orientation, notes, entries, context) VALUES (?, ?, ?, ?, ?, ?)",
        (rowid, record["work_id"], *search_texts(record)),
    )


def grep(features: Features, texts: tuple[str, ...], args: list[Any], ranked: bool) -> tuple[str, str, str]:
    """`--grep`: through the FTS5 index ranked by bm25, else a LIKE scan of the search table, newest first.

    Unranked (a count, the gates), the matches are the set of rowids the index answers, found once: joined to the
    index instead, SQLite planned a count with a project filter from the project's works and asked the index about
    each one in turn (93 ms at 10,000 works for a rare word, 0.5 s for a common one; 1-2 ms as a set)."""
    if features.fts5_search:
        args.append(fts_phrase_query(texts))
        if not ranked:
            return "", "w.rowid IN (SELECT rowid FROM search WHERE search MATCH ?)", "w.updated_at DESC, w.work_id"
        return " JOIN search s ON s.rowid = w.rowid", "search MATCH ?", "bm25(search), w.updated_at DESC, w.work_id"
    likes = []
    for text in texts:
        pattern = "%" + like_escaped(text) + "%"
        likes.append(
            "EXISTS (SELECT 1 FROM search s WHERE s.work_id = w.work_id AND (s.orientation LIKE ? ESCAPE '\\' "
            "OR s.notes LIKE ? ESCAPE '\\' OR s.entries LIKE ? ESCAPE '\\' OR s.context LIKE ? ESCAPE '\\'))"
        )
        args.extend([pattern] * 4)
    return "", "(" + " OR ".join(likes) + ")", "w.updated_at DESC, w.work_id"


def slug_part_query(features: Features, part: str, scope: str) -> tuple[str, tuple[Any, ...]] | None:
    """Slugs containing `part` through the trigram index (3+ characters), else None: the caller's LIKE scan."""
    if len(part) < 3 or not features.trigram_slugs:
        return None
    phrase = '"' + part.replace('"', '""') + '"'
    # CROSS JOIN fixes the loop order: start from the index's matches. Left to itself, SQLite walks
    # every work of the project in slug order and tests each one (seconds at 100,000 works).
    return (
        f"SELECT {WORK_COLUMNS} FROM slug_index i CROSS JOIN works w ON w.rowid = i.rowid "
        f"WHERE slug_index MATCH ?{scope} ORDER BY w.slug LIMIT ?",
        (phrase,),
    )
