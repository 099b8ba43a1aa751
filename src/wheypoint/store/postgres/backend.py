"""The PostgreSQL backend of the store: one database a team shares, behind the same interface as the SQLite file.

Crash safety. A checkpoint is exactly one transaction (BEGIN ... COMMIT) that inserts the revision row and
moves the head pointer, the head indexes and the revision count together; PostgreSQL makes it atomic and
durable (its WAL is flushed before COMMIT returns, under the server's default `synchronous_commit = on`). A client
killed, or a
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
from wheypoint.store.sql import SqlStore, intact_record, search_texts
from wheypoint.store.sqlparts import BACKLINK_COLUMNS, BACKLINKS_FROM, BACKLINKS_ORDER, WORK_COLUMNS, backlinks_where

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    from wheypoint.store.rows import Backlink, ListedWork, OpenGate, WorkQuery, WorkRef, Write

    T = TypeVar("T")

# How well a work's search document matches the grep's query `g.q` (higher is better): `_list_grep`'s order.
_RANK = "ts_rank(s.document, g.q)"
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
# The driver prepares a statement after this many runs on a connection unless told (`prepare=`): never, here. A
# statement is prepared only when it says so (SqlStore._lookup's, and the store's version), or when the driver
# runs it for each of many rows (executemany's INSERTs, which have one plan anyway); see `_connect`.
NEVER_BY_COUNT = 2**31 - 1
# The backlinks of the works row `w` (sqlparts.backlinks_where, the rule SqlStore.backlinks binds its arguments
# to, here given the row's own id, project and slug), as one JSON array of [work_id, project_key, slug, kind, ref]
# in backlinks' order, or NULL for none. The row's columns are COLLATE "C" and edges.ref is not: each value compared
# with ref is given ref's collation, or the comparison takes "C" and the edges_by_ref index (the database's default
# collation) cannot serve it.
_IN_REFS = 'COLLATE "default"'
_AS_REF = (f"w.work_id {_IN_REFS}", f"('wheypoint:' || w.project_key || '/' || w.work_id) {_IN_REFS}",
           f"('wheypoint:' || w.project_key || '/' || w.slug) {_IN_REFS}", f"w.slug {_IN_REFS}")  # fmt: skip
_BACKLINKS_OF_W = (
    f"(SELECT json_agg(json_build_array({BACKLINK_COLUMNS}) ORDER BY {BACKLINKS_ORDER}) FROM {BACKLINKS_FROM} "
    f"WHERE {backlinks_where('w.work_id', _AS_REF, 'w.project_key')})"
)


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
        self._unchecked = False  # a taken kept reader's schema is checked at its first read (_first_check)
        self._cursor: Any = None  # one cursor of the connection runs every statement (a new one each costs 30 µs)
        # What a statement read beyond its own answer, for the next read that asks it (once; a write drops both):
        self._ahead: dict[str, tuple[Any, str, Any]] = {}  # head records `open_gates` read, for `records`
        self._counted: tuple[WorkQuery, int] | None = None  # a `--grep` list's count of matches, for `count_works`

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
        checked as a fresh reader's is, a writer's at once, a reader's at its first read (`_first_check`, which a
        first read of the store's version makes part of its own statement); a writer's empty or older schema is
        brought up to date by its first transaction (`_transaction`), as for a fresh writer."""
        _driver(url)
        store = cls(None, url)
        store._kept = kept
        if not (kept and store._take_idle(create)):
            store._connect(create)
        return store

    def _take_idle(self, create: bool) -> bool:
        """Whether an idle connection of a kept store was taken (a writer's checked already, a reader's not yet)."""
        psycopg = _driver()
        idle = _KEPT.setdefault(self.url, [])
        while idle:
            try:
                conn = idle.pop()
            except IndexError:  # another thread took the last one
                break
            if not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                self._conn = conn
                if not create:
                    self._unchecked = True
                    return True
                try:
                    self._check_version()  # the schema may have moved on since: what a fresh reader does
                except psycopg.Error:
                    self._discard()  # a connection the server dropped meanwhile: try the next, else connect afresh
                    continue
                return True
        return False

    def _connect(self, create: bool) -> None:
        """A new connection, its schema checked (a reader) or brought up to date (a writer)."""
        psycopg = _driver(self.url)
        from psycopg.conninfo import conninfo_to_dict

        from wheypoint.store.postgres.url import session_options

        try:
            given = conninfo_to_dict(self.url)
            # No statement is prepared by count (NEVER_BY_COUNT), so each is planned with its values unless it says
            # otherwise. The driver's default prepares one after its fifth run on a connection, and the server then
            # settles on a generic plan, which for `slug LIKE $1` (a prefix) or `ILIKE $1` (a substring) cannot use
            # an index: a kept connection (`mcp`, `serve`) scanned every work after a few lookups (3.7 ms at 10,000
            # works, against 0.2 ms). A lookup by key (SqlStore._lookup) is prepared at its first run instead: its
            # plan is the same whatever the key, and parsing and planning it again cost more than running it (on a
            # kept connection a work by id took 0.18 ms unprepared and 0.10 ms prepared, its backlinks 0.31 and 0.11).
            self._conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=int(given.get("connect_timeout") or CONNECT_TIMEOUT_S),
                options=session_options(str(given.get("options") or "")), application_name=given.get("application_name")
                or APPLICATION, prepare_threshold=NEVER_BY_COUNT,
            )  # fmt: skip
            if create:
                self._migrate()
            else:
                self._check_version()
        except psycopg.Error as exc:
            self._discard()
            raise self._refusal(exc, "open") from None
        except BaseException:
            self._discard()
            raise

    def _first_check(self) -> None:
        """A taken reader's check, before its first read: as a fresh reader's at open, and a connection the server
        dropped while it was idle is replaced by a new one, as `open` would have replaced it."""
        psycopg = _driver()
        self._unchecked = False
        try:
            self._check_version()
            return
        except psycopg.Error:
            self._discard()
        self._connect(create=False)

    def _discard(self) -> None:
        conn, self._conn, self._cursor = self._conn, None, None
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
        if self._unchecked:
            self._first_check()
        return self._conn is not None and bool(self._ready)

    def _cursor_now(self) -> Any:
        """The cursor of the connection the store holds now (a kept reader may have been given a new one)."""
        cursor = self._cursor
        if cursor is None or cursor.connection is not self._conn:
            cursor = self._cursor = self._conn.cursor()
        return cursor

    def _run(
        self, sql: str, args: tuple[Any, ...], *, many: bool = False, prepare: bool = False
    ) -> list[tuple[Any, ...]]:  # fmt: skip
        psycopg = _driver()
        try:
            cursor = self._cursor_now()
            if many:
                cursor.executemany(_driver_sql(sql), args)
                return []
            cursor.execute(_driver_sql(sql), args, prepare=prepare)
            return cursor.fetchall() if cursor.description is not None else []
        except psycopg.Error as exc:
            raise self._refusal(exc, "write to" if self._conn.info.transaction_status else "read") from None

    def _transaction(self, work_ids: Sequence[str], body: Callable[[], T]) -> T:
        psycopg = _driver()
        self._ahead, self._counted = {}, None  # read before this write: the write may change them
        if self._unchecked:
            self._first_check()
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

    def _lookup(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """SqlStore's, prepared on the connection at its first run (see `_connect`)."""
        return self._run(sql, args, prepare=True) if self._exists() else []

    def _in_keys(self, column: str, keys: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
        """`= ANY(?)` with the keys as one array: one statement however many keys, so one prepared statement."""
        return f"{column} = ANY(?)", (list(keys),)

    def heads_and_backlinks(self, work_ids: Sequence[str]) -> dict[str, tuple[WorkRef, dict[str, Any], list[Backlink]]]:
        """SqlStore's answer in one statement: each work's row and head record, and its backlinks aggregated beside
        them (_BACKLINKS_OF_W), where SqlStore reads the records, then each work's row and backlinks."""
        from wheypoint.store.rows import Backlink, WorkRef

        wanted = list(dict.fromkeys(work_ids))
        if not wanted:
            return {}
        rows = self._lookup(
            f"SELECT {WORK_COLUMNS}, r.record_json, r.revision_id, r.record_digest, {_BACKLINKS_OF_W} FROM works w "
            "JOIN revisions r ON r.revision_id = w.head_revision_id WHERE w.work_id = ANY(?)",
            (wanted,),
        )  # fmt: skip
        found = {}
        for row in rows:
            work = WorkRef(*row[:9])
            record = intact_record(work.work_id, str(row[10]), row[11], row[9])
            found[work.work_id] = (work, record, [Backlink(*map(str, back)) for back in row[12] or ()])
        return {work_id: found[work_id] for work_id in wanted if work_id in found}

    def _lock(self, work_id: str) -> None:
        self._run("SELECT pg_advisory_xact_lock(?, hashtext(?) & ?)", (WORK_LOCK, work_id, LOCK_BUCKETS - 1))

    def _insert_revision(
        self, record: dict[str, Any], revision: dict[str, Any], write: Write, head: dict[str, Any] | None = None
    ) -> None:
        super()._insert_revision(record, revision, write, head)
        # One more in the count of the bucket whose lock this transaction holds (migrations.m008_revision_counts).
        self._run(
            "INSERT INTO revision_counts (bucket, revisions) VALUES (hashtext(?) & ?, 1) "
            "ON CONFLICT (bucket) DO UPDATE SET revisions = revision_counts.revisions + 1",
            (write.work_id, LOCK_BUCKETS - 1),
        )

    def version(self) -> int:
        """The count of revisions (as SqlStore's), summed from the buckets' counts rather than counted row by row. As a
        taken reader's first read (each page of `serve` starts with it) it checks the schema in the same statement."""
        if self._unchecked:
            counted = self._version_checked()
            if counted is not None:
                return counted
        rows = self._lookup("SELECT COALESCE(sum(revisions), 0) FROM revision_counts", ())
        return int(rows[0][0]) if rows else 0

    def _version_checked(self) -> int | None:
        """The store's version and the schema's in one round trip; None when that is not the answer (another schema,
        none, or a connection that failed), which `_first_check` then gives as a fresh reader would get it."""
        from wheypoint.store.postgres.migrations import SCHEMA_VERSION

        try:
            row = (
                self._cursor_now()
                .execute("SELECT (SELECT version FROM wheypoint_schema), (SELECT COALESCE(sum(revisions), 0) FROM "
                         "revision_counts)", prepare=True)
                .fetchone()
            )  # fmt: skip
        except _driver().Error:
            return None
        if row is None or row[0] != SCHEMA_VERSION:
            return None
        self._unchecked, self._ready = False, True
        return int(row[1])

    def _starts_with(self, column: str) -> str:
        return f"{column} LIKE ?"  # a range on the slug's "C" btree; backslash is PostgreSQL's LIKE escape already

    def _list_grep(self, grep: tuple[str, ...], args: list[Any], ranked: bool) -> tuple[str, str, str]:
        # The query is built once, in the FROM clause, so that its parameters come before every WHERE one.
        query = " || ".join("phraseto_tsquery('simple', ?)" for _ in grep)
        args.extend(grep)
        join = f" JOIN search s ON s.work_id = w.work_id CROSS JOIN (SELECT {query} AS q) g"
        return join, "s.document @@ g.q", f"{_RANK} DESC, w.updated_at DESC, w.work_id"

    def open_gates(self, query: WorkQuery, offset: int, limit: int) -> tuple[int, list[OpenGate]]:
        """SqlStore's answer in one statement: the page of gates, each row with the count of them all beside it (a
        window over the rows the page is sorted from anyway) instead of a second statement that finds them again,
        and with its work's head record, which the next `records` of those works is answered from (the inbox draws
        each gate from its record). A page past the last has no row to carry the count, and counts alone."""
        from wheypoint.store.listsql import gate_count_sql, gates_sql
        from wheypoint.store.rows import OpenGate

        if not self._exists():
            return 0, []
        # (the head's id comes from the page's own row of `works`: joining `works` again cost the plan a fifth)
        page, args = gates_sql(query, self._list_grep, self._gate_added_in(), offset, limit, counted=True, head=True)
        rows = self._rows(
            "SELECT g.work_id, g.entry_id, g.since, g.total, r.record_json, r.revision_id, r.record_digest "
            f"FROM ({page}) g LEFT JOIN revisions r ON r.revision_id = g.head ORDER BY g.since, g.work_id, g.entry_id",
            tuple(args),
        )
        self._ahead = {str(row[0]): (row[4], str(row[5]), row[6]) for row in rows if row[4] is not None}
        if rows:
            return int(rows[0][3]), [OpenGate(*row[:3]) for row in rows]
        if not offset:
            return 0, []
        sql, args = gate_count_sql(query, self._list_grep)
        counted = self._one(sql, tuple(args))
        return int(counted[0]) if counted else 0, []

    def list_works(self, query: WorkQuery) -> list[ListedWork]:
        """SqlStore's; a `--grep` list (ranked, so every match is read to sort them anyway) also counts its matches in
        the same statement, for the next `count_works` of the same query (the inbox asks it next)."""
        if not query.grep or not self._exists():
            return super().list_works(query)
        from wheypoint.store.listsql import ranked_list_sql
        from wheypoint.store.rows import ListedWork

        sql, args = ranked_list_sql(query, self._list_grep, _RANK, counted=True)
        rows = self._rows(sql, tuple(args))
        if rows or not query.offset:
            self._counted = (query._replace(limit=0, offset=0), int(rows[0][-1]) if rows else 0)
        return [ListedWork(*row[:-1]) for row in rows]

    def count_works(self, query: WorkQuery) -> int:
        """SqlStore's, or the count the last `list_works` of the same query read with its rows (once)."""
        counted, self._counted = self._counted, None
        if counted is not None and counted[0] == query._replace(limit=0, offset=0):
            return counted[1]
        return super().count_works(query)

    def records(self, work_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """SqlStore's, answering first from the head records the last `open_gates` read (once: then they are gone)."""
        ahead, self._ahead = self._ahead, {}
        if not ahead:
            return super().records(work_ids)
        found = {work_id: intact_record(work_id, ahead[work_id][1], ahead[work_id][2], ahead[work_id][0])
                 for work_id in dict.fromkeys(work_ids) if work_id in ahead}  # fmt: skip
        rest = [work_id for work_id in work_ids if work_id not in found]
        return {**found, **super().records(rest)} if rest else found

    def _write_search(self, work_id: str, record: dict[str, Any], first: bool = False) -> None:
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
        conn, self._conn, self._cursor = self._conn, None, None
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
