"""The SQLite store's schema history: its ordered list of migrations (see store/migrating.py).

The store's version is SQLite's own `PRAGMA user_version` in the database header: there is no
bookkeeping table. The backend runs the missing migrations, and sets `user_version` after each,
inside one write transaction.
"""

from __future__ import annotations

from wheypoint.store.migrating import registrar
from wheypoint.store.sqlite.driver import sqlite3
from wheypoint.store.sqlite.schema import SCHEMA_VERSION, Features, features, version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Migration = Callable[[sqlite3.Connection], None]

MIGRATIONS: list[tuple[str, Migration]] = []  # (name, function); position + 1 is the version it brings
migration = registrar(MIGRATIONS)


def pending(conn: sqlite3.Connection) -> list[str]:
    """The names of the migrations the store on `conn` has not had yet, in the order they would run; reads only.

    Empty when the store is up to date, and also when it is newer than this runtime (the backend refuses
    that store: `runtime-behind`).
    """
    return [name for name, _ in MIGRATIONS[version(conn) :]]


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run several statements inside the caller's transaction (executescript would commit it)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def fts5_available(conn: sqlite3.Connection, tokenize: str | None = None) -> bool:
    """Whether this SQLite has FTS5 (and the tokenizer named), by creating and dropping a probe table."""
    options = f", tokenize='{tokenize}'" if tokenize else ""
    try:
        conn.execute(f"CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x{options})")
        conn.execute("DROP TABLE temp.fts5_probe")
        return True
    except sqlite3.OperationalError:
        return False


@migration
def m001_works_and_revisions(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE works (
            work_id          TEXT PRIMARY KEY,
            project_key      TEXT NOT NULL,
            slug             TEXT NOT NULL,
            head_revision_id TEXT NOT NULL,
            head_number      INTEGER NOT NULL,
            status           TEXT NOT NULL,
            gated            INTEGER NOT NULL,
            next_move        TEXT,
            orientation      TEXT NOT NULL,
            created_at       TEXT NOT NULL,
            updated_at       TEXT NOT NULL,
            UNIQUE (project_key, slug)
        );
        CREATE INDEX works_by_slug ON works (slug);
        CREATE INDEX works_by_status ON works (project_key, gated, status);
        CREATE INDEX works_by_next ON works (project_key, next_move);
        CREATE INDEX works_by_update ON works (updated_at);

        CREATE TABLE revisions (
            revision_id        TEXT PRIMARY KEY,
            work_id            TEXT NOT NULL REFERENCES works (work_id),
            number             INTEGER NOT NULL,
            parent_revision_id TEXT,
            captured_at        TEXT NOT NULL,
            record_digest      TEXT NOT NULL,
            record_json        TEXT NOT NULL,
            revision_json      TEXT NOT NULL,
            UNIQUE (work_id, number)
        );
        """,
    )


@migration
def m002_head_indexes(conn: sqlite3.Connection) -> None:
    """What list and resolve filter on, describing each work's head only."""
    run_script(
        conn,
        """
        CREATE TABLE entries (
            work_id  TEXT NOT NULL,
            entry_id TEXT NOT NULL,
            kind     TEXT NOT NULL,
            state    TEXT NOT NULL,
            gates    INTEGER NOT NULL,
            owner    TEXT,
            PRIMARY KEY (work_id, entry_id)
        );
        CREATE INDEX entries_by_kind ON entries (kind, state);
        CREATE INDEX entries_by_owner ON entries (owner);

        CREATE TABLE edges (
            work_id TEXT NOT NULL,
            ref     TEXT NOT NULL,
            kind    TEXT NOT NULL,
            PRIMARY KEY (work_id, ref, kind)
        );
        CREATE INDEX edges_by_ref ON edges (ref);
        CREATE INDEX edges_by_kind ON edges (kind);

        CREATE TABLE artifact_links (
            work_id TEXT NOT NULL,
            ref     TEXT NOT NULL,
            digest  TEXT,
            PRIMARY KEY (work_id, ref)
        );
        CREATE INDEX artifact_links_by_ref ON artifact_links (ref);
        """,
    )


@migration
def m003_full_text(conn: sqlite3.Connection) -> None:
    """Full text over the head's orientation, notes, entry texts and context (FTS5 when compiled in).

    Each search row takes the rowid of its works row, which is how the store finds it again.
    """
    if fts5_available(conn):
        conn.execute(
            "CREATE VIRTUAL TABLE search USING fts5("
            "work_id UNINDEXED, orientation, notes, entries, context, tokenize='unicode61 remove_diacritics 2')"
        )
    else:
        conn.execute(
            "CREATE TABLE search (work_id TEXT NOT NULL, orientation TEXT, notes TEXT, entries TEXT, context TEXT)"
        )


@migration
def m004_slug_substrings(conn: sqlite3.Connection) -> None:
    """An index for finding works by any part of their slug (resolve's substring step).

    A trigram FTS5 table answers `slug contains x` (x of 3+ characters) from an index instead of a scan
    of every work; its rows share the rowid of their works row. Without trigram support the table is
    plain, and lookups fall back to a scan.
    """
    if fts5_available(conn, "trigram"):
        conn.execute("CREATE VIRTUAL TABLE slug_index USING fts5(slug, tokenize='trigram')")
    else:
        conn.execute("CREATE TABLE slug_index (slug TEXT NOT NULL)")
    conn.execute("INSERT INTO slug_index (rowid, slug) SELECT rowid, slug FROM works")


@migration
def m005_written_from(conn: sqlite3.Connection) -> None:
    """Where each work's head was written from: the checkout's top folder and the note folder.

    A work is read from other folders too (another checkout, another project); its findings are about
    the checkout it was written in, and its note is in the folder it was written to. These are facts about the
    machine, not the handoff, so they live beside the record, outside what its digest covers.
    """
    conn.execute("ALTER TABLE works ADD COLUMN checkout TEXT")
    conn.execute("ALTER TABLE works ADD COLUMN note_dir TEXT")


@migration
def m006_imports(conn: sqlite3.Connection) -> None:
    """Where an imported revision came from: the bundle's digest, the file it was read from, and when.

    Provenance of the copy, not of the handoff: the record is byte for byte the exported one, so this lives
    beside it. One row per revision an import wrote (a revision already present is not imported again).
    """
    conn.execute(
        "CREATE TABLE imports (revision_id TEXT PRIMARY KEY REFERENCES revisions (revision_id), "
        "work_id TEXT NOT NULL, bundle_digest TEXT NOT NULL, source TEXT NOT NULL, imported_at TEXT NOT NULL)"
    )


@migration
def m007_authors(conn: sqlite3.Connection) -> None:
    """Who wrote each revision: git's user.email where it was written, else the OS user (None before this).

    A fact about the machine, like where a head was written from: beside the record, outside its digest.
    """
    conn.execute("ALTER TABLE revisions ADD COLUMN author TEXT")
    conn.execute("CREATE INDEX revisions_by_author ON revisions (author)")


@migration
def m008_gate_ages(conn: sqlite3.Connection) -> None:
    """The revision each head entry was added in, so `serve`'s inbox pages open gates oldest first from the index.

    A fact of the head record (each entry's `added_in`), like the rest of the entries index. Filled here for the
    gating entries of every head, which is what the inbox reads; every later write fills it for all entries.
    """
    from wheypoint import jsontext

    conn.execute("ALTER TABLE entries ADD COLUMN added_in INTEGER")
    heads = conn.execute(
        "SELECT w.work_id, r.record_json FROM works w JOIN revisions r ON r.revision_id = w.head_revision_id "
        "WHERE EXISTS (SELECT 1 FROM entries e WHERE e.work_id = w.work_id AND e.gates = 1)"
    ).fetchall()
    for work_id, text in heads:
        try:
            entries = jsontext.loads(text).get("entries", [])
        except (ValueError, AttributeError):
            continue  # a damaged record: doctor lists it, and the inbox falls back to the head's time
        for entry in entries:
            if isinstance(entry, dict) and entry.get("gates") and type(entry.get("added_in")) is int:
                conn.execute("UPDATE entries SET added_in = ? WHERE work_id = ? AND entry_id = ?",
                             (entry["added_in"], work_id, entry.get("id")))  # fmt: skip


if len(MIGRATIONS) != SCHEMA_VERSION:  # the constant the backend opens stores with must follow this list
    raise RuntimeError(f"{len(MIGRATIONS)} migrations, but schema.SCHEMA_VERSION is {SCHEMA_VERSION}")

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Features", "features", "migration", "pending", "version"]
