"""The PostgreSQL backend of the store: one database a team shares, behind the same interface as the SQLite file.

Crash safety. A checkpoint is exactly one transaction (BEGIN ... COMMIT) that inserts the revision row and
moves the head pointer and the head indexes together; PostgreSQL makes it atomic and durable (its WAL is
flushed before COMMIT returns, under the server's default `synchronous_commit = on`). A client killed, or a
server that goes away, at any instant leaves either the old head or the new one, complete: an
acknowledged revision is committed, and an unacknowledged one is either committed whole or not at all.

Concurrency. Each write transaction first takes a transaction-level advisory lock keyed on each work it
writes (`pg_advisory_xact_lock`, on one of LOCK_BUCKETS keys by a hash of the work id), in a fixed order, before
it reads a head. This is the equivalent of
SQLite's BEGIN IMMEDIATE for one work: a row lock (`SELECT ... FOR UPDATE` on the works row) would lock
nothing at a work's first checkpoint, when the row does not exist yet, and two first writers would end
in a unique-constraint error instead of one commit and one coded refusal. Under READ COMMITTED every
statement after the lock sees what the previous holder committed, so the base check is against the
real head. A lock held past `lock_timeout` is refused `store-busy`; the runtime never retries.

Errors. No driver error leaves this module: lock timeouts, deadlocks and serialization failures are
`store-busy`, anything else `storage-error`, naming the store by its URL with the password redacted
(url.py). The driver is imported only when a PostgreSQL URL is opened; without it the refusal says what
to install.
"""

from __future__ import annotations

from wheypoint.model.errors import Refusal
from wheypoint.store.postgres.url import APPLICATION, CONNECT_TIMEOUT_S, LOCK_TIMEOUT_MS, redacted, scrubbed
from wheypoint.store.sql import SqlStore, search_texts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

WORK_LOCK = 0x77707772  # first key of every work's advisory lock ("wpwr"); the second is its bucket
# A work's lock is one of LOCK_BUCKETS, by a hash of its id: a lock per work would make a bulk import (one
# transaction, every work locked until COMMIT) overflow the server's shared lock table (max_locks_per_transaction
# x max_connections, 6,400 by default) at a few thousand works; buckets bound it, and two works that share one
# only wait for each other, never refuse.
LOCK_BUCKETS = 1024
_BUSY_STATES = ("55P03", "40P01", "40001")  # lock_not_available, deadlock_detected, serialization_failure
_PLACEHOLDERS: dict[str, str] = {}  # `?` statements as the driver wants them, converted once per process
# Idle connections of kept stores, by URL (see `open(kept=True)`). A list's pop and append are atomic, so the
# threads of one server share it without a lock; each connection is used by one store at a time.
_KEPT: dict[str, list[Any]] = {}
KEPT_IDLE = 8  # at most this many idle connections kept per URL; a store closing beyond it closes its own


def _driver(url: str = "") -> Any:
    try:
        import psycopg
    except ImportError:
        raise Refusal("store-driver-missing", f"the store at {redacted(url) if url else 'postgresql://'} needs the "
                      "psycopg driver, which this Python does not have: pip install 'wheypoint[postgres]' (the "
                      "pyz runs on a python3 that has it)", details={"parameter": "store"}) from None  # fmt: skip
    return psycopg


def _driver_sql(sql: str) -> str:
    """`?` placeholders as `%s`, and a literal `%` doubled (the statements here hold no `?` inside a literal)."""
    converted = _PLACEHOLDERS.get(sql)
    if converted is None:
        converted = _PLACEHOLDERS[sql] = sql.replace("%", "%%").replace("?", "%s")
    return converted


class PostgresStore(SqlStore):
    """A wheypoint store in a PostgreSQL database (the reads and the commit algorithm are sql.SqlStore's)."""

    like_any_case = "ILIKE"  # SQLite's LIKE ignores ASCII case; PostgreSQL's does not (pg_trgm serves both)

    def __init__(self, conn: Any, url: str) -> None:
        self._conn = conn
        self.url = url
        self.shown = redacted(url)
        self._ready: bool | None = None  # whether the schema exists: probed on first read
        self._kept = False  # a kept reader's connection goes back to _KEPT when it is closed

    def _refusal(self, exc: Exception, doing: str) -> Refusal:
        state = getattr(exc, "sqlstate", None)
        text = scrubbed(str(exc).strip() or type(exc).__name__, self.url)
        if state in _BUSY_STATES:
            return Refusal("store-busy", f"cannot {doing} the store at {self.shown}: it stayed locked for "
                           f"{LOCK_TIMEOUT_MS} ms or the server broke a lock cycle ({text})")  # fmt: skip
        if state == "53100":  # disk_full: the same code as SQLite's, so both backends answer a full disk alike
            return Refusal("storage-full", f"cannot {doing} the store at {self.shown}: {text}; nothing was written")
        return Refusal("storage-error", f"cannot {doing} the store at {self.shown}: {text}")

    @classmethod
    def open(cls, url: str, *, create: bool, kept: bool = False) -> PostgresStore:
        """Connect; a writer (`create=True`) brings an empty or older schema up to date first. `kept`: take an idle
        connection a kept store left, and leave this one for the next when closed.

        A kept connection is idle (no transaction open) when it is handed on, and every write takes its locks at
        transaction level, so nothing of one caller's outlives its close. A taken connection has its schema version
        checked as a fresh reader's is; a writer's empty or older schema is brought up to date by its first
        transaction (`_transaction`), as for a fresh writer."""
        psycopg = _driver(url)
        from psycopg.conninfo import conninfo_to_dict

        from wheypoint.store.postgres.url import session_options

        store = cls(None, url)
        store._kept = kept
        if store._kept:
            idle = _KEPT.setdefault(url, [])
            while idle:
                try:
                    conn = idle.pop()
                except IndexError:  # another thread took the last one
                    break
                if not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                    store._conn = conn
                    try:
                        store._check_version()  # the schema may have moved on since: what a fresh reader does
                    except psycopg.Error:
                        store._discard()  # a connection the server dropped meanwhile: connect afresh below
                        continue
                    return store
        try:
            given = conninfo_to_dict(url)
            # prepare_threshold=None: no statement is ever prepared, so each is planned with its values. The driver
            # prepares one after its fifth run on a connection, and the server then settles on a generic plan, which
            # for `slug LIKE $1` (a prefix) or `ILIKE $1` (a substring) cannot use an index: a kept connection
            # (`mcp`, `serve`) scanned every work after a few lookups (3.7 ms at 10,000 works, against 0.2 ms).
            store._conn = psycopg.connect(
                url, autocommit=True, connect_timeout=int(given.get("connect_timeout") or CONNECT_TIMEOUT_S),
                options=session_options(str(given.get("options") or "")), application_name=given.get("application_name")
                or APPLICATION, prepare_threshold=None,
            )  # fmt: skip
            if create:
                store._migrate()
            else:
                store._check_version()
        except psycopg.Error as exc:
            store._discard()
            raise store._refusal(exc, "open") from None
        except BaseException:
            store._discard()
            raise
        return store

    def _discard(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def _version(self) -> int | None:
        """The schema version, or None when the database has no wheypoint schema yet."""
        rows = self._conn.execute("SELECT to_regclass('wheypoint_schema') IS NOT NULL").fetchall()
        if not rows[0][0]:
            return None
        return int(self._conn.execute("SELECT version FROM wheypoint_schema").fetchone()[0])

    def _stored_version(self) -> int | None:
        """`_version` in one round trip, outside a transaction only: the version row is read, and a database with
        no schema answers that the table is missing (an error inside a transaction would abort it)."""
        psycopg = _driver()
        try:
            row = self._conn.execute("SELECT version FROM wheypoint_schema").fetchone()
        except psycopg.errors.UndefinedTable:
            return None
        return int(row[0])

    def _check_version(self) -> None:
        """Before the first read of a connection (fresh or kept, and idle): refuse a newer schema, bring an older
        one up to date, and note whether there is one at all (a reader of an empty database sees an empty store)."""
        from wheypoint.store.postgres.migrations import SCHEMA_VERSION

        found = self._stored_version()
        self._ready = found is not None
        if found is not None and found > SCHEMA_VERSION:
            raise Refusal("runtime-behind", f"the store at {self.shown} has schema {found}; this runtime knows "
                          f"{SCHEMA_VERSION}: upgrade wheypoint")  # fmt: skip
        if found is not None and found < SCHEMA_VERSION:
            self._migrate()  # a store written by an older runtime: brought up to date before it is read

    def _migrate(self) -> None:
        """Run the migrations the schema has not had, in one transaction holding the schema's advisory lock."""
        from wheypoint.store.postgres.migrations import MIGRATIONS, SCHEMA_LOCK, SCHEMA_VERSION

        conn = self._conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            done = self._version() or 0
            if done > SCHEMA_VERSION:
                raise Refusal("runtime-behind", f"the store at {self.shown} has schema {done}; this runtime knows "
                              f"{SCHEMA_VERSION}: upgrade wheypoint")  # fmt: skip
            for number, (_, apply) in enumerate(MIGRATIONS[done:], start=done + 1):
                apply(lambda sql: conn.execute(sql))
                conn.execute("UPDATE wheypoint_schema SET version = %s", (number,))
        self._ready = True

    # ---------------------------------------------------------------- what sql.SqlStore asks of a backend

    def _exists(self) -> bool:
        return self._conn is not None and bool(self._ready)

    def _run(self, sql: str, args: tuple[Any, ...], *, many: bool = False) -> list[tuple[Any, ...]]:
        psycopg = _driver()
        try:
            if many:
                self._conn.cursor().executemany(_driver_sql(sql), args)
                return []
            cursor = self._conn.execute(_driver_sql(sql), args)
            return cursor.fetchall() if cursor.description is not None else []
        except psycopg.Error as exc:
            raise self._refusal(exc, "write to" if self._conn.info.transaction_status else "read") from None

    def _transaction(self, work_ids: Sequence[str], body: Callable[[], T]) -> T:
        psycopg = _driver()
        if not self._ready:
            try:
                self._migrate()
            except psycopg.Error as exc:
                raise self._refusal(exc, "write to") from None
        try:
            with self._conn.transaction():
                for work_id in sorted(set(work_ids)):  # one order for every writer: no lock cycle between them
                    self._lock(work_id)
                return body()
        except psycopg.Error as exc:
            raise self._refusal(exc, "write to") from None

    def _lock(self, work_id: str) -> None:
        self._run("SELECT pg_advisory_xact_lock(?, hashtext(?) & ?)", (WORK_LOCK, work_id, LOCK_BUCKETS - 1))

    def _starts_with(self, column: str) -> str:
        return f"{column} LIKE ?"  # a range on the slug's "C" btree; backslash is PostgreSQL's LIKE escape already

    def _list_grep(self, grep: tuple[str, ...], args: list[Any]) -> tuple[str, str, str]:
        # The query is built once, in the FROM clause, so that its parameters come before every WHERE one.
        query = " || ".join("phraseto_tsquery('simple', ?)" for _ in grep)
        args.extend(grep)
        join = f" JOIN search s ON s.work_id = w.work_id CROSS JOIN (SELECT {query} AS q) g"
        return join, "s.document @@ g.q", "ts_rank(s.document, g.q) DESC, w.updated_at DESC, w.work_id"

    def _write_search(self, work_id: str, record: dict[str, Any]) -> None:
        self._run(
            "INSERT INTO search (work_id, document) VALUES (?, to_tsvector('simple', ?)) "
            "ON CONFLICT (work_id) DO UPDATE SET document = excluded.document",
            (work_id, "\n".join(search_texts(record))),
        )

    def health(self) -> dict[str, Any]:
        """The server's database: its schema version and size. Pages are the server's to check (`data_checksums`
        says whether it does); what wheypoint can check is every record's digest and chain (app/doctor_store.py)."""
        facts: dict[str, Any] = {"backend": "postgresql", "location": self.shown, "exists": self._exists()}
        if not self._exists():
            return facts
        version = self._one("SELECT version FROM wheypoint_schema", ())
        size = self._one("SELECT pg_database_size(current_database())", ())
        checksums = self._one("SELECT current_setting('data_checksums')", ())
        return {**facts, "schema_version": int(version[0]) if version else None,
                "size_bytes": int(size[0]) if size else None,
                "integrity": None, "data_checksums": str(checksums[0]) if checksums else None}  # fmt: skip

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and self._kept and not conn.closed:
            idle = _KEPT.setdefault(self.url, [])
            if conn.info.transaction_status == _driver().pq.TransactionStatus.IDLE and len(idle) < KEPT_IDLE:
                idle.append(conn)
                return
        if conn is not None:
            try:
                conn.close()
            except _driver().Error as exc:
                raise self._refusal(exc, "close") from None
