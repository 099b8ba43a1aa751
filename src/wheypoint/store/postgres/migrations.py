"""The PostgreSQL store's schema history: its ordered list of migrations (see store/migrating.py).

The version is kept in `wheypoint_schema`, a one-row table the first migration creates; the backend runs the
missing migrations and records the version inside one transaction that holds the schema's advisory lock, so
two first openers of an empty database migrate it once. The tables mean what the SQLite store's mean
(sqlite/migrations.py); the indexes are PostgreSQL's own:
- prefix lookups and every order a reply depends on: the text columns a query orders or ranges by are
  declared `COLLATE "C"`, which orders by code point (as SQLite does) whatever the database's collation,
  so both backends list in the same order, and a plain btree serves `LIKE 'prefix%'` as a range (what a
  `text_pattern_ops` index would do, with one index instead of two);
- substrings of slugs: a `pg_trgm` GIN index, which `LIKE '%part%'` uses by itself; where the extension
  cannot be created (a role without the right), the same query scans instead;
- `--grep`: a `tsvector` column with a GIN index, ranked by `ts_rank`. The `simple` configuration splits
  words and folds case without stemming, which is what SQLite's unicode61 tokenizer does (it also folds
  diacritics, which `simple` does not: `café` does not match `cafe` here);
- `serve`'s pages: a partial index of the head's open gates (what the inbox counts and pages through), and the
  store's version (the count of revisions, which every page reads) kept as one count per work lock bucket, so it
  is a sum over at most LOCK_BUCKETS rows instead of a count of every revision.
"""

from __future__ import annotations

from wheypoint.store.migrating import registrar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Migration = Callable[[Any], None]  # called with the backend's `run(sql)`

MIGRATIONS: list[tuple[str, Migration]] = []
migration = registrar(MIGRATIONS)
SCHEMA_LOCK = 0x77707363  # the advisory lock key migrations take ("wpsc")


@migration
def m001_works_and_revisions(run: Callable[[str], None]) -> None:
    run("CREATE TABLE wheypoint_schema (version INTEGER NOT NULL)")
    run("INSERT INTO wheypoint_schema (version) VALUES (0)")
    run("""
        CREATE TABLE works (
            work_id          TEXT COLLATE "C" PRIMARY KEY,
            project_key      TEXT COLLATE "C" NOT NULL,
            slug             TEXT COLLATE "C" NOT NULL,
            head_revision_id TEXT NOT NULL,
            head_number      INTEGER NOT NULL,
            status           TEXT NOT NULL,
            gated            INTEGER NOT NULL,
            next_move        TEXT,
            orientation      TEXT NOT NULL,
            created_at       TEXT COLLATE "C" NOT NULL,
            updated_at       TEXT COLLATE "C" NOT NULL,
            checkout         TEXT,
            note_dir         TEXT,
            UNIQUE (project_key, slug)
        )""")
    run("CREATE INDEX works_by_slug ON works (slug)")  # (project_key, slug) has the unique constraint's index
    run("CREATE INDEX works_by_status ON works (project_key, gated, status)")
    run("CREATE INDEX works_by_next ON works (project_key, next_move)")
    run("CREATE INDEX works_by_update ON works (updated_at)")
    run("""
        CREATE TABLE revisions (
            revision_id        TEXT PRIMARY KEY,
            work_id            TEXT NOT NULL REFERENCES works (work_id) DEFERRABLE INITIALLY DEFERRED,
            number             INTEGER NOT NULL,
            parent_revision_id TEXT,
            captured_at        TEXT NOT NULL,
            record_digest      TEXT NOT NULL,
            record_json        TEXT NOT NULL,
            revision_json      TEXT NOT NULL,
            UNIQUE (work_id, number)
        )""")


@migration
def m002_head_indexes(run: Callable[[str], None]) -> None:
    """What list and resolve filter on, describing each work's head only."""
    run("""
        CREATE TABLE entries (
            work_id  TEXT NOT NULL,
            entry_id TEXT NOT NULL,
            kind     TEXT NOT NULL,
            state    TEXT NOT NULL,
            gates    INTEGER NOT NULL,
            owner    TEXT,
            PRIMARY KEY (work_id, entry_id)
        )""")
    run("CREATE INDEX entries_by_kind ON entries (kind, state)")
    run("CREATE INDEX entries_by_owner ON entries (owner)")
    run("CREATE TABLE edges (work_id TEXT NOT NULL, ref TEXT NOT NULL, kind TEXT COLLATE \"C\" NOT NULL, "
        "PRIMARY KEY (work_id, ref, kind))")  # fmt: skip
    run("CREATE INDEX edges_by_ref ON edges (ref)")
    run("CREATE INDEX edges_by_kind ON edges (kind)")
    run("CREATE TABLE artifact_links (work_id TEXT NOT NULL, ref TEXT NOT NULL, digest TEXT, "
        "PRIMARY KEY (work_id, ref))")  # fmt: skip
    run("CREATE INDEX artifact_links_by_ref ON artifact_links (ref)")


@migration
def m003_full_text(run: Callable[[str], None]) -> None:
    """Full text over the head's orientation, notes, entry texts and context."""
    run("CREATE TABLE search (work_id TEXT PRIMARY KEY, document TSVECTOR NOT NULL)")
    run("CREATE INDEX search_by_words ON search USING gin (document)")


@migration
def m004_slug_substrings(run: Callable[[str], None]) -> None:
    """A trigram index for finding works by any part of their slug, where pg_trgm can be had."""
    run("SAVEPOINT trigram")
    try:
        run("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        run("CREATE INDEX works_by_slug_part ON works USING gin (slug gin_trgm_ops)")
    except Exception:  # no right to create the extension: LIKE scans instead, with the same answers
        run("ROLLBACK TO SAVEPOINT trigram")
    run("RELEASE SAVEPOINT trigram")


@migration
def m005_imports(run: Callable[[str], None]) -> None:
    """Where an imported revision came from (see sqlite m006_imports)."""
    run("CREATE TABLE imports (revision_id TEXT PRIMARY KEY REFERENCES revisions (revision_id), "
        "work_id TEXT NOT NULL, bundle_digest TEXT NOT NULL, source TEXT NOT NULL, "
        "imported_at TEXT NOT NULL)")  # fmt: skip


@migration
def m006_authors(run: Callable[[str], None]) -> None:
    """Who wrote each revision (see sqlite m007_authors)."""
    run("ALTER TABLE revisions ADD COLUMN author TEXT")
    run("CREATE INDEX revisions_by_author ON revisions (author)")


@migration
def m007_gate_ages(run: Callable[[str], None]) -> None:
    """The revision each head entry was added in (see sqlite m008_gate_ages), filled for every head's gates."""
    run("ALTER TABLE entries ADD COLUMN added_in INTEGER")
    run("""
        UPDATE entries e SET added_in = (j.value ->> 'added_in')::integer
        FROM works w JOIN revisions r ON r.revision_id = w.head_revision_id
        CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(r.record_json::jsonb -> 'entries') = 'array'
                                                THEN r.record_json::jsonb -> 'entries' ELSE '[]'::jsonb END) AS j(value)
        WHERE w.work_id = e.work_id AND e.gates = 1 AND j.value ->> 'id' = e.entry_id
          AND jsonb_typeof(j.value -> 'added_in') = 'number' AND j.value ->> 'added_in' ~ '^[0-9]{1,9}$'""")


@migration
def m008_revision_counts(run: Callable[[str], None]) -> None:
    """How many revisions the store holds, as one count per work lock bucket (backend.LOCK_BUCKETS).

    The writer of a revision adds one to its work's bucket inside its transaction, holding that bucket's advisory
    lock already, so no writer waits on another for a count and the sum of the counts, in any snapshot, is the
    number of revisions committed. Filled here from the revisions there are; the bucket is the lock's key
    (`hashtext(work_id) & 1023`, for the 1024 buckets the lock has)."""
    run("CREATE TABLE revision_counts (bucket INTEGER PRIMARY KEY, revisions BIGINT NOT NULL)")
    run("INSERT INTO revision_counts (bucket, revisions) "
        "SELECT hashtext(work_id) & 1023, count(*) FROM revisions GROUP BY 1")  # fmt: skip


@migration
def m009_open_gates(run: Callable[[str], None]) -> None:
    """The head's open gates by work, with what the inbox orders them by, so it reads them without the entries."""
    run("CREATE INDEX entries_open_gates ON entries (work_id, entry_id, added_in) WHERE gates = 1 AND state = 'active'")


SCHEMA_VERSION = len(MIGRATIONS)
