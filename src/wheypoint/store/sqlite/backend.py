"""The SQLite backend of the store: one database file per user, holding every project's works.

Crash safety. The database runs in WAL mode with synchronous=FULL, and a checkpoint is exactly one
write transaction (BEGIN IMMEDIATE ... COMMIT) that inserts the revision row and moves the head
pointer and the head indexes together. SQLite makes that transaction atomic and durable, so a
process killed at any instant leaves either the old head or the new one, complete; a reader never
sees a head without its record. Nothing is written outside the transaction: the Markdown note is a
derived view written after COMMIT and can always be re-rendered from here.

What each fsync of a checkpoint buys. COMMIT appends the transaction's pages to the `-wal` file and,
under synchronous=FULL, fsyncs it before `commit` returns (the first sync of the WAL in a process also
fsyncs its folder, so a new WAL's name is durable too). That fsync is the durability of an
acknowledged checkpoint: once an agent is told a revision exists, neither a crash nor a power cut can
take it back, and nothing after it is needed for that. By default SQLite does more when the last
connection closes: it checkpoints, copying the WAL's pages into the database file, fsyncs the WAL and
then the database file, and deletes the WAL: two more fsyncs and a second copy of every page on every
command, which buy nothing a committed WAL does not already guarantee (the next opener reads the WAL).
So where Python offers it (3.12+: `Connection.setconfig`), every connection sets
SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE and leaves the WAL in place. On 3.10 and 3.11 SQLite cannot be asked, so
a store opened `exit_closes` (by a process that ends with `os._exit` as soon as its command is answered: the
`wheypoint` program, never a long-lived front door) does not close a writer's connection at all: it is left
open, holding no transaction, until the exit drops it, which is exactly a process ending after its COMMIT,
the crash WAL mode is built to survive. The WAL then stays in place as on 3.12. Elsewhere on 3.10 and 3.11
the close-time checkpoint stays (correct, only slower).

The WAL must not grow without bound, and SQLite's auto-checkpoint (it still runs inside any commit that
takes the WAL past 1000 pages) does not bound it here: each command is a new process, the first to open
the file, and it rebuilds the WAL's shared-memory index from the WAL itself, which forgets how much of
the WAL was already copied back. So the WAL is never started over: it grew to 31 MB over 500 commits
in a measurement, every commit past 1000 pages copied all of it again, and every reader re-read all of
it at start. Hence a writer's close folds the WAL back (lets SQLite's close-time checkpoint run, which
also deletes the WAL) once it is over WAL_FOLD_BYTES, a few checkpoints' worth: writers pay the fold
once every few commits, and a reader re-reads at most that much WAL when it opens (~0.2 ms at most).
The fold happens only if no other connection has the file open; else a later writer's close does it. So a
fold first closes the connection to the same file this process left open for its exit (3.10 and 3.11).

Readers. A reader (`create=False`) opens the file read-only (`mode=ro`): whatever WAL it finds, it
writes nothing to the database or the WAL and never checkpoints, on any Python (SQLite may create an
empty `-wal` and the `-shm` index beside the file, which hold no data). The one exception is a store
written by an older runtime, which the first reader brings up to date (see migrations.py) before
reading it, through a read-write connection.

Concurrency. BEGIN IMMEDIATE takes the write lock before the head is read, so the base check and
the insert cannot interleave with another writer: of N writers racing from one base, exactly one
commits and the others then see a new head and are refused `stale-parent`. Writers wait for the lock
up to the busy timeout; the runtime never retries a refused write on the caller's behalf.

Errors. No driver error leaves this module: a lock held past the busy timeout is refused `store-busy`,
anything else the driver raises `storage-error`, naming the store's file.
"""

from __future__ import annotations

import os
from _thread import get_ident  # threading's own source of thread ids, without threading's import

from wheypoint.model.errors import Refusal
from wheypoint.store.sql import SqlStore
from wheypoint.store.sqlite.driver import sqlite3
from wheypoint.store.sqlite.schema import SCHEMA_VERSION, Features, features, version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

BUSY_TIMEOUT_MS = 15000
# Both exist from Python 3.12 on; without them the close-time checkpoint stays (see above).
_SETCONFIG = getattr(sqlite3.Connection, "setconfig", None)
_NO_CKPT_ON_CLOSE = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)
# Past this size the WAL is folded into the database file when a writer closes (see above).
WAL_FOLD_BYTES = 256 * 1024
_BUSY_CODES = (5, 6)  # SQLITE_BUSY and SQLITE_LOCKED: the low byte of an extended result code
_FULL_CODE = 13  # SQLITE_FULL: the disk (or a size limit of the file) is full
_IOERR_CODE = 10  # SQLITE_IOERR: what a full disk gives while a new store's file, journal or WAL index is made
# Less room than this where the store lives: a write that failed with an I/O error met a full disk. SQLite says
# SQLITE_FULL only when a page write fails; creating a store (its header, its WAL and `-shm` index) on a nearly
# full disk answers "disk I/O error", and the errno (ENOSPC) is not passed on to Python.
_FULL_MARGIN = 1024 * 1024
# The writer's connection left open for the process's exit to drop, by file and thread (see the top of this module):
# one per file at most for each thread, since a connection closed while another to its file is open does not
# checkpoint either, and a connection may only be closed by the thread that opened it.
_LEFT_FOR_EXIT: dict[tuple[str, int], sqlite3.Connection] = {}


def _uri(path: str, mode: str) -> str:
    """A `file:` URI for `path`, with the three characters SQLite's URIs give a meaning escaped."""
    absolute = os.path.abspath(path).replace(os.sep, "/")
    if not absolute.startswith("/"):
        absolute = "/" + absolute  # a Windows drive: file:///C:/...
    escaped = absolute.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file://{escaped}?mode={mode}"


def _connect(path: str, *, read_only: bool, durable: bool = True, immutable: bool = False) -> sqlite3.Connection:
    if read_only:
        uri = _uri(path, "ro") + ("&immutable=1" if immutable else "")
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    else:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'OFF'}")
        _checkpoint_on_close(conn, False)  # a read-only connection never checkpoints
    return conn


def _checkpoint_on_close(conn: sqlite3.Connection, checkpoint: bool) -> None:
    """Whether SQLite checkpoints when `conn`, the file's last connection, closes; settable on 3.12+ only."""
    if _SETCONFIG is not None and _NO_CKPT_ON_CLOSE is not None:
        _SETCONFIG(conn, _NO_CKPT_ON_CLOSE, not checkpoint)


def _close_left_for_exit(path: str) -> None:
    """Close the connection to `path` this thread left open for the process's exit, if any (never on 3.12+)."""
    earlier = _LEFT_FOR_EXIT.pop((path, get_ident()), None)
    if earlier is not None:
        earlier.close()


def _folder_unwritable(path: str) -> bool:
    """Whether a reader must open the store `immutable`: its folder cannot be written and it has no WAL index.

    A WAL store is read through its `-shm` index, which SQLite creates beside the file when it is
    missing; in a folder this process cannot write, even a read-only open then fails. With no `-wal`
    either, every committed revision is in the main file, so reading it as immutable (no locks, no
    index) reads exactly what is committed. A writer under another account that can write there
    would have made the `-shm` file first, so this path is not taken while one is at work; only one
    that starts during this read races it, the single case in which a read takes no lock.
    """
    folder = os.path.dirname(os.path.abspath(path))
    return not os.access(folder, os.W_OK) and not os.path.exists(path + "-shm")


def _wal_bytes(path: str) -> int:
    try:
        return os.path.getsize(path + "-wal")
    except OSError:
        return 0


def _busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if isinstance(code, int):
        return code & 0xFF in _BUSY_CODES
    return "locked" in str(exc)  # 3.10: "database is locked", "database table is locked"


def _refusal(exc: sqlite3.Error, path: str, doing: str) -> Refusal:
    """The refusal for a driver error met while `doing` something to the store at `path`.

    Every write is one transaction, rolled back whole on any of these: a full disk leaves the store as it was.
    """
    if _busy(exc):
        return Refusal("store-busy", f"cannot {doing} the store at {path}: it stayed locked for {BUSY_TIMEOUT_MS} ms "
                       f"({exc})")  # fmt: skip
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    primary = code & 0xFF if isinstance(code, int) else None
    full = primary == _FULL_CODE or (primary is None and "is full" in str(exc))  # 3.10 has only the message
    if full or ((primary == _IOERR_CODE or "disk I/O error" in str(exc)) and _disk_full(path)):
        return Refusal("storage-full", f"cannot {doing} the store at {path}: {exc}; nothing was written: free some "
                       "space and write again")  # fmt: skip
    return Refusal("storage-error", f"cannot {doing} the store at {path}: {exc}")


def _disk_full(path: str) -> bool:
    """Whether the file system that holds (or would hold) the store at `path` has almost no room left."""
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    try:
        found = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs (Windows): the I/O error stays what it says
        return False
    return found.f_bavail * found.f_frsize < _FULL_MARGIN


def _refuse_a_file_for_a_folder(path: str) -> None:
    """A store whose folder (or a folder above it) is a file is misconfigured: one refusal for every command.

    Without this a reader would see no store at all and answer as if it were empty.
    """
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent
    if not os.path.isdir(folder):
        raise Refusal("storage-error", f"cannot use the store at {path}: {folder} is a file, not a folder")


def _rollback(conn: sqlite3.Connection) -> None:
    """End the open transaction, if SQLite has not ended it already; the error being raised matters more."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.DatabaseError:
            pass


class SqliteStore(SqlStore):
    """A wheypoint store in one SQLite file (the reads and the commit algorithm are sql.SqlStore's)."""

    def __init__(self, conn: sqlite3.Connection | None, path: str, *, writer: bool = False) -> None:
        self._conn = conn
        self.path = path
        self._features: Features | None = None  # probed on first need, then kept
        self._writer = writer  # opened to write (`create=True`): its close may fold the WAL back in
        self._exit_closes = False  # the process ends with os._exit after its command (see the top of this module)

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, create: bool, durable: bool = True, exit_closes: bool = False
    ) -> SqliteStore:
        """Open the store; a reader on a store that does not exist yet sees an empty one.

        A reader (`create=False`) connects read-only. `durable=False` (synchronous=OFF) is for bulk
        loads into a scratch store, such as building the benchmarks' stores: a power cut may then lose
        recent commits, though a crash of the process still cannot tear one. Nothing that acknowledges
        a checkpoint to an agent uses it. `exit_closes`: the process ends with `os._exit` once its command
        is answered, so on Python 3.10 and 3.11 a writer's close may leave its connection for the exit to drop.
        """
        path = os.fspath(path)
        if not create and not os.path.exists(path):
            _refuse_a_file_for_a_folder(path)  # a writer's makedirs refuses that case by itself
            return cls(None, path)
        store = cls(None, path, writer=create)
        store._exit_closes = exit_closes
        try:
            if create and os.path.dirname(path) and not os.path.isdir(os.path.dirname(path)):
                from wheypoint.store.folders import make_private_folders  # only a store's first write needs it

                make_private_folders(os.path.dirname(path))
            store._conn = _connect(path, read_only=not create, durable=durable)
            try:
                found = version(store._conn)
            except sqlite3.OperationalError:
                if create or not _folder_unwritable(path):
                    raise
                store._discard()  # a WAL store whose folder we cannot write: see _folder_unwritable
                store._conn = _connect(path, read_only=True, immutable=True)
                found = version(store._conn)
            if found != SCHEMA_VERSION:
                store._migrate(found, create, durable)
            return store
        except sqlite3.DatabaseError as exc:
            store._discard()
            if create and not os.access(os.path.dirname(os.path.abspath(path)), os.W_OK):
                raise Refusal("storage-error", f"cannot write to the store at {path}: its folder cannot be written "
                              f"(SQLite keeps its write-ahead log beside the file)") from None  # fmt: skip
            raise _refusal(exc, path, "open") from None
        except OSError as exc:
            store._discard()
            raise Refusal("storage-error", f"cannot create the store at {path}: {exc.strerror}") from None
        except BaseException:
            store._discard()
            raise

    def _discard(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.DatabaseError:
                pass

    def _migrate(self, found: int, create: bool, durable: bool) -> None:
        if found > SCHEMA_VERSION:
            raise Refusal(
                "runtime-behind",
                f"the store at {self.path} has schema {found}; this runtime knows {SCHEMA_VERSION}: upgrade wheypoint",
            )
        conn = self._require()
        if create:
            if os.name == "posix":  # before the WAL and its index exist: SQLite creates them with the file's mode
                os.chmod(self.path, 0o600)
            self._enable_wal(conn)
            self._apply_migrations(conn)
        else:
            # A store written by an older runtime: bring it up to date (migrations are transactional and
            # only add), so the reads below can rely on every index. A read-only file is read as it is.
            conn.close()
            self._conn = conn = _connect(self.path, read_only=False, durable=durable)
            try:
                self._apply_migrations(conn)
            except sqlite3.OperationalError:
                pass

    def _apply_migrations(self, conn: sqlite3.Connection) -> None:
        """Run the migrations the store has not had, in one transaction, re-reading its version under the lock."""
        from wheypoint.store.sqlite.migrations import MIGRATIONS  # only a store behind this runtime needs them

        conn.execute("BEGIN IMMEDIATE")
        try:
            done = version(conn)
            for number, (_, apply) in enumerate(MIGRATIONS[done:], start=done + 1):
                apply(conn)
                conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        """Switch a new store to WAL, waiting out other first openers.

        The switch upgrades a read lock to a write lock, and SQLite does not call the busy handler for
        that upgrade: several processes opening a fresh store at once would be told "locked" at once.
        So the switch is retried here, for as long as the busy timeout allows. Only "locked" is retried: a disk
        that is full or refuses the write answers the same at once and for good (it took the whole 15 s).
        """
        import time

        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            try:
                conn.execute("PRAGMA journal_mode = WAL")
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.005)

    @property
    def features(self) -> Features:
        """What this store's schema offers the queries: probed once per open store, when a query first needs it.

        Not at open: `show` and most lookups never need it, and the probe would cost each of them a query.
        """
        if self._features is None:
            if self._conn is None:
                return Features()
            try:
                self._features = features(self._conn)
            except sqlite3.DatabaseError as exc:
                raise _refusal(exc, self.path, "read") from None
        return self._features

    def _require(self) -> sqlite3.Connection:
        assert self._conn is not None
        return self._conn

    def _exists(self) -> bool:
        return self._conn is not None

    def _run(self, sql: str, args: tuple[Any, ...], *, many: bool = False) -> list[tuple[Any, ...]]:
        conn = self._require()
        # Asked before the statement runs: SQLite ends the transaction itself on some errors (a full disk).
        doing = "write to" if conn.in_transaction else "read"
        try:
            if many:
                conn.executemany(sql, args)
                return []
            rows: list[tuple[Any, ...]] = conn.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise _refusal(exc, self.path, doing) from None
        return rows

    def _transaction(self, work_ids: Sequence[str], body: Callable[[], T]) -> T:
        """`body` inside one IMMEDIATE transaction, which holds the file's one write lock (so every work's)."""
        conn = self._require()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise _refusal(exc, self.path, "write to") from None
        try:
            result = body()
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            _rollback(conn)
            raise _refusal(exc, self.path, "write to") from None
        except BaseException:
            _rollback(conn)
            raise
        return result

    def _starts_with(self, column: str) -> str:
        # A range on the slug index: every slug that starts with prefix sorts in [prefix, prefix + U+10FFFF).
        # (SQLite's LIKE ignores ASCII case and uses an index only under conditions a store cannot promise.)
        return f"{column} >= ? AND {column} < ?"

    def _prefix_args(self, prefix: str) -> tuple[Any, ...]:
        return (prefix, prefix + "\U0010ffff")

    def _slug_part_query(self, part: str, scope: str) -> tuple[str, tuple[Any, ...]] | None:
        from wheypoint.store.sqlite.indexes import slug_part_query

        return slug_part_query(self.features, part, scope)

    def _list_grep(self, grep: tuple[str, ...], args: list[Any], ranked: bool) -> tuple[str, str, str]:
        from wheypoint.store.sqlite.indexes import grep as sqlite_grep

        return sqlite_grep(self.features, grep, args, ranked)

    def _gate_added_in(self) -> str:
        # A file this runtime could not bring up to date (it is read-only) is read as it is: without the column.
        from wheypoint.store.sqlite.schema import GATE_AGES

        return "e.added_in" if version(self._require()) >= GATE_AGES else "NULL"

    def _write_search(self, work_id: str, record: dict[str, Any], first: bool = False) -> None:
        from wheypoint.store.sqlite.indexes import write_search

        write_search(self._require(), record, first)

    def health(self) -> dict[str, Any]:
        """The file, its schema version, its size with the WAL, and SQLite's `PRAGMA integrity_check` (at most 100
        problems; `["ok"]` when it finds none)."""
        facts: dict[str, Any] = {"backend": "sqlite", "location": self.path, "exists": self._conn is not None}
        if self._conn is None:
            return facts
        size = sum(os.path.getsize(self.path + tail) for tail in ("", "-wal") if os.path.exists(self.path + tail))
        try:
            found = version(self._conn)
            problems = [str(row[0]) for row in self._conn.execute("PRAGMA integrity_check(100)").fetchall()]
        except sqlite3.DatabaseError as exc:
            return {**facts, "size_bytes": size, "integrity": [f"{type(exc).__name__}: {exc}"]}
        return {**facts, "schema_version": found, "size_bytes": size, "integrity": problems}

    def close(self) -> None:
        """Close the connection without checkpointing the WAL, unless it is due to be folded (see the top of this
        module): on Python 3.12+ by asking SQLite, on 3.10 and 3.11 by leaving an `exit_closes` writer's connection
        for the process's exit."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            if self._writer and _wal_bytes(self.path) > WAL_FOLD_BYTES:
                _close_left_for_exit(self.path)  # else this connection would not be the file's last
                _checkpoint_on_close(conn, True)  # SQLite's close folds the WAL into the file and removes it
            elif self._writer and self._exit_closes and _SETCONFIG is None and not conn.in_transaction:
                key = (self.path, get_ident())
                earlier = _LEFT_FOR_EXIT.pop(key, None)
                _LEFT_FOR_EXIT[key] = conn
                if earlier is not None:
                    earlier.close()  # this one is open, so that close is not the file's last: no checkpoint
                return
            conn.close()
        except sqlite3.DatabaseError as exc:
            raise _refusal(exc, self.path, "close") from None
