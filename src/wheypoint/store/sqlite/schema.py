"""What opening a store needs to know of its schema, without loading the migrations: the version, the features.

Every command opens the store, and almost always finds it up to date; only then would the migrations
(their SQL and functions) be needed, so the backend imports migrations.py only when the version differs.
"""

from __future__ import annotations

from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

# The version a store has after every migration of migrations.py (which checks it against its own list).
SCHEMA_VERSION = 8


GATE_AGES = 8  # the version whose entries index says which revision added each entry (m008_gate_ages)


def version(conn: sqlite3.Connection) -> int:
    """The schema version of the store open on `conn`: how many migrations it has had."""
    value: int = conn.execute("PRAGMA user_version").fetchone()[0]
    return value


class Features(Record):
    """What a store's schema offers the queries: the form migrations 3 and 4 gave its optional tables.

    `search` and `slug_index` are FTS5 tables where the SQLite that ran those migrations had FTS5 (and its
    trigram tokenizer), and plain tables otherwise: the file decides, not the SQLite reading it.
    """

    fts5_search: bool = False  # --grep matches through the FTS5 index and ranks by bm25, else LIKE over a scan
    trigram_slugs: bool = False  # a slug part of 3+ characters is found through the trigram index, else a scan


def features(conn: sqlite3.Connection) -> Features:
    """The Features of the store open on `conn`, from the SQL its optional tables were created with; reads only."""
    rows = conn.execute("SELECT name, lower(sql) FROM sqlite_master WHERE name IN ('search', 'slug_index')")
    sql = {name: text or "" for name, text in rows}
    slugs = sql.get("slug_index", "")
    return Features(fts5_search="fts5" in sql.get("search", ""), trigram_slugs="fts5" in slugs and "trigram" in slugs)
