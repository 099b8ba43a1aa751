"""The SQLite backend of the store: one database file per user, holding every project's works.

Crash safety. The database runs in WAL mode with synchronous=FULL, and a checkpoint is exactly one
write transaction (BEGIN IMMEDIATE ... COMMIT) that inserts the revision row and moves the head
pointer and the head indexes together. SQLite makes that transaction atomic and durable, so a
process killed at any instant leaves either the old head or the new one, complete; a reader never
sees a head without its record. Nothing is written outside the transaction: the Markdown note is a
derived view written after COMMIT and can always be re-rendered from here.

Concurrency. BEGIN IMMEDIATE takes the write lock before the head is read, so the base check and
the insert cannot interleave with another writer: of N writers racing from one base, exactly one
commits and the others then see a new head and are refused `stale-parent`. Writers wait for the lock
up to the busy timeout; the runtime never retries a refused write on the caller's behalf.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from wheypoint.model.derived import GATING_KINDS
from wheypoint.model.errors import Refusal
from wheypoint.store.base import Build, Committed, ListedWork, WorkQuery, WorkRef
from wheypoint.store.sqlite.migrations import MIGRATIONS
from wheypoint.store.sqlite.queries import WORK_COLUMNS, like_escaped, list_sql

BUSY_TIMEOUT_MS = 15000


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class SqliteStore:
    """A wheypoint store in one SQLite file."""

    def __init__(self, conn: sqlite3.Connection | None, path: Path) -> None:
        self._conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path, *, create: bool, durable: bool = True) -> SqliteStore:
        """Open the store; a reader on a store that does not exist yet sees an empty one.

        `durable=False` (synchronous=OFF) is for bulk loads into a scratch store, such as building the
        benchmarks' stores: a power cut may then lose recent commits, though a crash of the process
        still cannot tear one. Nothing that acknowledges a checkpoint to an agent uses it.
        """
        if not path.exists() and not create:
            return cls(None, path)
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'OFF'}")
            store = cls(conn, path)
            store._migrate(create)
            return store
        except sqlite3.DatabaseError as exc:
            raise Refusal("storage-error", f"cannot open the store at {path}: {exc}") from None
        except OSError as exc:
            raise Refusal("storage-error", f"cannot create the store at {path}: {exc.strerror}") from None

    def _migrate(self, create: bool) -> None:
        conn = self._require()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise Refusal(
                "runtime-behind",
                f"the store at {self.path} has schema {version}; this runtime knows "
                f"{len(MIGRATIONS)}: upgrade wheypoint",
            )
        if version == len(MIGRATIONS):
            return
        if not create:
            # A store written by an older runtime: bring it up to date (migrations are transactional and
            # only add), so the reads below can rely on every index. A read-only file is read as it is.
            with contextlib.suppress(sqlite3.OperationalError):
                self._apply_migrations(conn)
            return
        self._enable_wal(conn)
        self._apply_migrations(conn)
        if os.name == "posix":
            os.chmod(self.path, 0o600)

    def _apply_migrations(self, conn: sqlite3.Connection) -> None:
        """Run the migrations the store has not had, in one transaction, re-reading its version under the lock."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for number, (_, apply) in enumerate(MIGRATIONS[version:], start=version + 1):
                apply(conn)
                conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        """Switch a new store to WAL, waiting out other first openers.

        The switch upgrades a read lock to a write lock, and SQLite does not call the busy handler for
        that upgrade: several processes opening a fresh store at once would be told "locked" at once.
        So the switch is retried here, for as long as the busy timeout allows.
        """
        import time

        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            try:
                conn.execute("PRAGMA journal_mode = WAL")
            except sqlite3.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.005)

    def _require(self) -> sqlite3.Connection:
        assert self._conn is not None
        return self._conn

    def _one(self, sql: str, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        if self._conn is None:
            return None
        try:
            row: tuple[Any, ...] | None = self._conn.execute(sql, args).fetchone()
        except sqlite3.DatabaseError as exc:
            raise Refusal("storage-error", f"the store at {self.path} cannot be read: {exc}") from None
        return row

    def _work(self, where: str, args: tuple[Any, ...]) -> WorkRef | None:
        row = self._one(f"SELECT {WORK_COLUMNS} FROM works w WHERE {where}", args)
        return WorkRef(*row) if row else None

    def work(self, work_id: str) -> WorkRef | None:
        return self._work("work_id = ?", (work_id,))

    def work_by_slug(self, project_key: str, slug: str) -> WorkRef | None:
        return self._work("project_key = ? AND slug = ?", (project_key, slug))

    def work_of_revision(self, revision_id: str) -> WorkRef | None:
        return self._work("work_id = (SELECT work_id FROM revisions WHERE revision_id = ?)", (revision_id,))

    def _virtual(self, table: str) -> bool:
        """Whether a table is an FTS5 index here (it is a plain table where FTS5 or trigram was missing)."""
        row = self._one("SELECT sql FROM sqlite_master WHERE name = ?", (table,))
        return bool(row and "fts5" in str(row[0]).lower())

    def _works(self, sql: str, args: tuple[Any, ...]) -> list[WorkRef]:
        if self._conn is None:
            return []
        try:
            return [WorkRef(*row) for row in self._conn.execute(sql, args).fetchall()]
        except sqlite3.DatabaseError as exc:
            raise Refusal("storage-error", f"the store at {self.path} cannot be read: {exc}") from None

    def works_with_slug(self, slug: str, project_key: str | None) -> list[WorkRef]:
        if project_key is not None:
            found = self.work_by_slug(project_key, slug)
            return [found] if found else []
        return self._works(f"SELECT {WORK_COLUMNS} FROM works w WHERE slug = ? ORDER BY updated_at DESC", (slug,))

    def works_with_slug_prefix(self, prefix: str, project_key: str | None, limit: int) -> list[WorkRef]:
        # A range on the slug index: every slug that starts with prefix sorts in [prefix, prefix + U+10FFFF).
        scope, args = ("project_key = ? AND ", (project_key,)) if project_key is not None else ("", ())
        return self._works(
            f"SELECT {WORK_COLUMNS} FROM works w WHERE {scope}slug >= ? AND slug < ? ORDER BY slug LIMIT ?",
            (*args, prefix, prefix + "\U0010ffff", limit),
        )

    def works_with_slug_part(self, part: str, project_key: str | None, limit: int) -> list[WorkRef]:
        scope, args = (" AND w.project_key = ?", (project_key,)) if project_key is not None else ("", ())
        if len(part) >= 3 and self._virtual("slug_index"):
            phrase = '"' + part.replace('"', '""') + '"'
            return self._works(
                # CROSS JOIN fixes the loop order: start from the index's matches. Left to itself, SQLite walks
                # every work of the project in slug order and tests each one (seconds at 100,000 works).
                f"SELECT {WORK_COLUMNS} FROM slug_index i CROSS JOIN works w ON w.rowid = i.rowid "
                f"WHERE slug_index MATCH ?{scope} ORDER BY w.slug LIMIT ?",
                (phrase, *args, limit),
            )
        pattern = "%" + like_escaped(part) + "%"
        return self._works(
            f"SELECT {WORK_COLUMNS} FROM works w WHERE w.slug LIKE ? ESCAPE '\\'{scope} ORDER BY w.slug LIMIT ?",
            (pattern, *args, limit),
        )

    def list_works(self, query: WorkQuery) -> list[ListedWork]:
        if self._conn is None:
            return []
        sql, args = list_sql(query, fts=self._virtual("search"))
        try:
            return [ListedWork(*row) for row in self._conn.execute(sql, args).fetchall()]
        except sqlite3.DatabaseError as exc:
            raise Refusal("storage-error", f"the store at {self.path} cannot be read: {exc}") from None

    def record(self, work_id: str, revision_id: str | None = None) -> dict[str, Any] | None:
        if revision_id is None:
            row = self._one(
                "SELECT r.record_json FROM works w JOIN revisions r ON r.revision_id = w.head_revision_id "
                "WHERE w.work_id = ?",
                (work_id,),
            )
        else:
            row = self._one(
                "SELECT record_json FROM revisions WHERE revision_id = ? AND work_id = ?", (revision_id, work_id)
            )
        return json.loads(row[0]) if row else None

    def revisions(self, work_id: str) -> list[dict[str, Any]]:
        if self._conn is None:
            return []
        rows = self._conn.execute(
            "SELECT revision_json FROM revisions WHERE work_id = ? ORDER BY number", (work_id,)
        ).fetchall()
        return [json.loads(row[0]) for row in rows]

    def commit(self, work_id: str, base_revision_id: str | None, candidate_revision_id: str, build: Build) -> Committed:
        conn = self._require()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise Refusal("store-busy", f"the store stayed locked for {BUSY_TIMEOUT_MS} ms: {exc}") from None
        try:
            result = self._commit_locked(conn, work_id, base_revision_id, candidate_revision_id, build)
            conn.execute("COMMIT")
            return result
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _commit_locked(
        self, conn: sqlite3.Connection, work_id: str, base: str | None, candidate: str, build: Build
    ) -> Committed:
        replay = conn.execute(
            "SELECT record_json, revision_json FROM revisions WHERE revision_id = ? AND work_id = ?",
            (candidate, work_id),
        ).fetchone()
        if replay:
            return Committed(json.loads(replay[0]), json.loads(replay[1]), replayed=True, warnings=[])
        head = self.record(work_id)
        if head is None and base is not None:
            raise Refusal("unknown-base", f"revision {base} is not a revision of {work_id}, which has none yet")
        if head is not None:
            current = head["revision_id"]
            if base is None:
                raise Refusal(
                    "base-revision-required",
                    f"{work_id} exists; name its head as the base (--base {current})",
                    details={"work_id": work_id, "head_revision_id": current},
                )
            if base != current:
                raise Refusal(
                    "stale-parent",
                    f"the base {base} is not the head of {work_id}; the head is {current}: re-read, "
                    "re-apply the change and write again",
                    details={"work_id": work_id, "head_revision_id": current},
                )
        outcome = build(head)
        record, revision = outcome.record, outcome.revision
        conn.execute(
            "INSERT INTO revisions (revision_id, work_id, number, parent_revision_id, captured_at, record_digest, "
            "record_json, revision_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                revision["revision_id"],
                work_id,
                revision["revision_number"],
                revision["parent_revision_id"],
                revision["captured_at"],
                record["record_digest"],
                _dumps(record),
                _dumps(revision),
            ),
        )
        self._write_head(conn, record)
        return Committed(record, revision, replayed=False, warnings=outcome.warnings)

    def _write_head(self, conn: sqlite3.Connection, record: dict[str, Any]) -> None:
        work_id = record["work_id"]
        gated = int(record["status"] != "ok")
        move = record["next"].get("move") or "list"
        conn.execute(
            "INSERT INTO works (work_id, project_key, slug, head_revision_id, head_number, status, gated, next_move, "
            "orientation, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (work_id) DO UPDATE SET head_revision_id = excluded.head_revision_id, "
            "head_number = excluded.head_number, status = excluded.status, gated = excluded.gated, "
            "next_move = excluded.next_move, orientation = excluded.orientation, updated_at = excluded.updated_at",
            (
                work_id,
                record["project_key"],
                record["slug"],
                record["revision_id"],
                record["revision_number"],
                record["status"],
                gated,
                move,
                record["orientation"],
                record["created_at"],
                record["updated_at"],
            ),
        )
        for table in ("entries", "edges", "artifact_links"):
            conn.execute(f"DELETE FROM {table} WHERE work_id = ?", (work_id,))
        # A search row shares its works row's rowid: FTS5 cannot index work_id, so deleting by it would
        # scan the whole table on every checkpoint; by rowid it is a keyed delete.
        (rowid,) = conn.execute("SELECT rowid FROM works WHERE work_id = ?", (work_id,)).fetchone()
        conn.execute("DELETE FROM search WHERE rowid = ?", (rowid,))
        if record["revision_number"] == 1:  # a slug never changes: index it once, at the work's first revision
            conn.execute("INSERT INTO slug_index (rowid, slug) VALUES (?, ?)", (rowid, record["slug"]))
        conn.executemany(
            "INSERT INTO entries (work_id, entry_id, kind, state, gates, owner) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (work_id, e["id"], e["kind"], e["state"], int(e["gates"] and e["kind"] in GATING_KINDS), e.get("owner"))
                for e in record["entries"]
            ],
        )
        conn.executemany(
            "INSERT INTO edges (work_id, ref, kind) VALUES (?, ?, ?)",
            [(work_id, edge["ref"], edge["kind"]) for edge in record["edges"]],
        )
        conn.executemany(
            "INSERT INTO artifact_links (work_id, ref, digest) VALUES (?, ?, ?)",
            [(work_id, link["ref"], link["digest"]) for link in record["artifact_links"]],
        )
        entry_text = "\n".join(
            " ".join(filter(None, (e["text"], e.get("quote"), e.get("rationale")))) for e in record["entries"]
        )
        conn.execute(
            "INSERT INTO search (rowid, work_id, orientation, notes, entries, context) VALUES (?, ?, ?, ?, ?, ?)",
            (rowid, work_id, record["orientation"], record["notes"], entry_text, "\n".join(record["working_context"])),
        )

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
