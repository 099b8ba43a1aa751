"""The SQLite store on its own: its rows, its one probe, its migrations, its fsyncs and its refusals."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from wheypoint.model.canonical import digest
from wheypoint.model.errors import Refusal
from wheypoint.store import open_store
from wheypoint.store.rows import Committed, ListedWork, WorkQuery, WorkRef
from wheypoint.store.sqlite import backend, migrations
from wheypoint.store.sqlite.backend import SqliteStore

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"
NO_CKPT_ON_CLOSE = hasattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE") and hasattr(sqlite3.Connection, "setconfig")


class Outcome:
    """What the kernel's build hands the store: a record, its receipt, warnings (synthetic, but complete)."""

    def __init__(self, record: dict[str, Any], revision: dict[str, Any]) -> None:
        self._record, self.revision, self.warnings = record, revision, []

    @property
    def record(self) -> dict[str, Any]:
        """The record with its digest made true of it as it stands (a test may edit it first): the store serves a
        record only when its digest holds."""
        self._record["record_digest"] = digest({k: v for k, v in self._record.items() if k != "record_digest"})
        return self._record


def outcome(work_id: str, number: int, parent: str | None, slug: str | None = None) -> Outcome:
    rev = f"rev-{work_id}-{number}"
    stamp = f"2026-01-01T00:{number % 60:02d}:00Z"
    entries = [{"id": f"e{n}", "kind": "decision", "state": "active", "gates": False, "owner": None,
                "text": f"Decision {n}: cap the retry backoff at thirty seconds.", "rationale": "The gateway."}
               for n in range(min(number, 8))]  # fmt: skip
    record = {
        "work_id": work_id, "project_key": "proj", "slug": slug or f"retry-{work_id}", "revision_id": rev,
        "revision_number": number, "parent_revision_id": parent, "status": "ok", "next": {"move": "hold"},
        "orientation": "Working on the retry backoff of the gateway client.", "notes": "Notes. " * 50,
        "created_at": "2026-01-01T00:00:00Z", "updated_at": stamp, "entries": entries,
        "edges": [{"ref": "other-work", "kind": "relates_to"}], "artifact_links": [{"ref": "a.py", "digest": None}],
        "working_context": ["retry.py:2"],
    }  # fmt: skip
    revision = {"revision_id": rev, "revision_number": number, "parent_revision_id": parent, "captured_at": stamp}
    return Outcome(record, revision)


def write(store: SqliteStore, work_id: str, number: int, parent: str | None, slug: str | None = None) -> Committed:
    return store.commit(work_id, parent, f"rev-{work_id}-{number}", lambda head: outcome(work_id, number, parent, slug))


def seeded(path: Path, works: int = 3, revisions: int = 1) -> Path:
    store = SqliteStore.open(path, create=True)
    for w in range(works):
        for n in range(1, revisions + 1):
            write(store, f"w{w}", n, f"rev-w{w}-{n - 1}" if n > 1 else None)
    store.close()
    return path


def head(path: Path, work_id: str) -> str | None:
    """The head as a fresh connection of this process sees it (no wheypoint code)."""
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT head_revision_id FROM works WHERE work_id = ?", (work_id,)).fetchone()
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return row[0] if row else None
    finally:
        conn.close()


def contents(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def wal(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


# A checkpoint process: open, commit, then close, or exit at once without closing (as if killed right after).
_WRITER = """
import os, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from test_store import write
from wheypoint.store.sqlite.backend import SqliteStore
store = SqliteStore.open(sys.argv[3], create=True)
committed = write(store, sys.argv[4], int(sys.argv[5]), sys.argv[6] or None)
print(committed.revision["revision_id"], flush=True)
if sys.argv[7] == "exit":
    os._exit(0)
store.close()
"""


def checkpoint_process(path: Path, work_id: str, number: int, parent: str | None, ending: str = "close") -> str:
    args = [str(SRC), str(TESTS), str(path), work_id, str(number), parent or "", ending]
    done = subprocess.run([sys.executable, "-c", _WRITER, *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


# --- rows and start-up -----------------------------------------------------------------------------------------


def test_the_rows_are_named_tuples_with_their_fields_and_defaults() -> None:
    ref = WorkRef("w1", "proj", "slug", "rev-1", 1, "ok", "2026-01-01T00:00:00Z")
    assert isinstance(ref, tuple) and ref.slug == "slug" and ref._fields[0] == "work_id"
    assert WorkQuery().limit == 50 and WorkQuery(grep=("x",)).grep == ("x",) and WorkQuery().gated is None
    assert Committed({}, {}, replayed=True, warnings=[]).replayed is True
    assert len(ListedWork._fields) == 10


_IMPORTS = """
import json, sqlite3, sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
from wheypoint.store import open_store
from wheypoint.store.rows import WorkQuery
store = open_store(sys.argv[2], create=True)
store.close()
store = open_store(sys.argv[2], create=False)
assert store.record("w0") and store.works_with_slug_part("etry", None, 5)
assert store.list_works(WorkQuery(grep=("backoff",)))
store.close()
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_the_store_loads_no_typing_pathlib_or_contextlib(tmp_path: Path) -> None:
    path = seeded(tmp_path / "store.sqlite3")
    done = subprocess.run([sys.executable, "-S", "-c", _IMPORTS, str(SRC), str(path)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    loaded = set(json.loads(done.stdout))
    heavy = {m for m in loaded if m.split(".")[0] in {"typing", "pathlib", "contextlib", "dataclasses", "inspect"}}
    assert not heavy, f"opening and reading the store loads {sorted(heavy)}"
    assert "wheypoint.store.base" not in loaded  # the Protocol is for the type checker


# --- features: probed once -------------------------------------------------------------------------------------


def _statements(store: SqliteStore) -> list[str]:
    seen: list[str] = []
    conn = store._conn
    assert conn is not None
    conn.set_trace_callback(seen.append)
    return seen


def test_features_are_probed_once_on_first_need_and_never_by_show(tmp_path: Path) -> None:
    memory = sqlite3.connect(":memory:")
    expected = (migrations.fts5_available(memory), migrations.fts5_available(memory, "trigram"))
    store = SqliteStore.open(seeded(tmp_path / "store.sqlite3"), create=False)
    seen = _statements(store)
    assert store.work("w0") and store.record("w0") and store.revisions("w0") and store.works_with_slug("retry-w0", None)
    assert not [sql for sql in seen if "sqlite_master" in sql], seen  # what show and log ask: no probe
    for _ in range(3):
        assert [w.work_id for w in store.list_works(WorkQuery(grep=("backoff",), limit=10))] == ["w0", "w1", "w2"]
        assert {w.work_id for w in store.works_with_slug_part("etry-w", None, 10)} == {"w0", "w1", "w2"}
    assert len([sql for sql in seen if "sqlite_master" in sql]) == 1, seen
    assert (store.features.fts5_search, store.features.trigram_slugs) == expected
    store.close()


def test_a_store_made_without_fts5_is_searched_by_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(migrations, "fts5_available", lambda conn, tokenize=None: False)
    path = seeded(tmp_path / "store.sqlite3")
    monkeypatch.undo()
    store = SqliteStore.open(path, create=False)
    assert not store.features.fts5_search and not store.features.trigram_slugs
    assert [w.work_id for w in store.list_works(WorkQuery(grep=("backoff",)))] == ["w0", "w1", "w2"]
    assert [w.work_id for w in store.works_with_slug_part("try-w1", "proj", 5)] == ["w1"]
    store.close()


# --- migrations --------------------------------------------------------------------------------------------------


def test_a_migration_name_registered_twice_is_refused() -> None:
    before = list(migrations.MIGRATIONS)

    def m002_head_indexes(conn: sqlite3.Connection) -> None:
        raise AssertionError("never runs")

    with pytest.raises(ValueError, match="m002_head_indexes"):
        migrations.migration(m002_head_indexes)
    assert before == migrations.MIGRATIONS
    assert len({name for name, _ in before}) == len(before)
    assert "schema_migrations" not in (migrations.__doc__ or "")


def test_pending_names_the_missing_migrations_and_writes_nothing(tmp_path: Path) -> None:
    names = [name for name, _ in migrations.MIGRATIONS]
    assert migrations.pending(sqlite3.connect(":memory:")) == names
    path = seeded(tmp_path / "store.sqlite3")
    conn = sqlite3.connect(path)
    try:
        assert migrations.version(conn) == len(names) and migrations.pending(conn) == []
        conn.execute("PRAGMA user_version = 2")
        conn.commit()
        changes = conn.total_changes
        assert migrations.pending(conn) == names[2:]
        assert conn.total_changes == changes and migrations.version(conn) == 2 and not conn.in_transaction
    finally:
        conn.close()


def test_a_store_newer_than_the_runtime_is_refused(tmp_path: Path) -> None:
    path = seeded(tmp_path / "store.sqlite3")
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {len(migrations.MIGRATIONS) + 1}")
    conn.close()
    for create in (False, True):
        with pytest.raises(Refusal) as refused:
            SqliteStore.open(path, create=create)
        assert refused.value.code == "runtime-behind"


# --- durability and the WAL --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ending", ["close", "exit"], ids=["closed", "exited-without-closing"])
def test_a_checkpoint_is_seen_after_its_process_is_gone(tmp_path: Path, ending: str) -> None:
    path = seeded(tmp_path / "store.sqlite3")
    revision = checkpoint_process(path, "w0", 2, "rev-w0-1", ending)
    assert revision == "rev-w0-2" and head(path, "w0") == "rev-w0-2"
    store = SqliteStore.open(path, create=False)
    assert [r["revision_id"] for r in store.revisions("w0")] == ["rev-w0-1", "rev-w0-2"]
    store.close()


def test_closing_a_writer_leaves_the_wal_in_place_where_sqlite3_allows(tmp_path: Path) -> None:
    path = seeded(tmp_path / "store.sqlite3", works=1)
    plain = sqlite3.connect(path)
    plain.execute("SELECT count(*) FROM works").fetchone()
    plain.close()  # a plain connection, last to close: SQLite folds the WAL in and removes it
    assert not wal(path).exists()
    database = path.read_bytes()
    checkpoint_process(path, "w0", 2, "rev-w0-1")  # adds less than WAL_FOLD_BYTES of WAL
    assert head(path, "w0") == "rev-w0-2"  # durable either way: the commit is there for a fresh reader
    if NO_CKPT_ON_CLOSE:  # Python >= 3.12: the close-time checkpoint and its fsync are skipped
        assert wal(path).exists() and wal(path).stat().st_size > 0
        assert path.read_bytes() == database  # nothing was copied back into the database file
    else:  # older sqlite3 modules cannot ask: SQLite folds the WAL into the database at the last close
        assert not wal(path).exists() or wal(path).stat().st_size == 0
        assert path.read_bytes() != database


def test_the_program_leaves_the_wal_in_place_on_every_python(tmp_path: Path) -> None:
    # `wheypoint` ends with os._exit once it has answered: on 3.12+ SQLite is asked not to checkpoint at close, on
    # 3.10 and 3.11 the writer's connection is left for the exit to drop. Either way the commit stays in the WAL.
    path = seeded(tmp_path / "store.sqlite3", works=1)
    assert head(path, "w0") == "rev-w0-1" and not wal(path).exists()  # a plain last close folded the WAL in
    database = path.read_bytes()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    environ.update(WHEYPOINT_HOME=str(tmp_path / "home"), WHEYPOINT_STORE=str(path), PYTHONPATH=str(SRC))
    argv = ["checkpoint", "left-open", "--orientation", "A new one.", "--next", "hold", "--notes", "Kept.", "--no-note"]
    done = subprocess.run([sys.executable, "-m", "wheypoint", *argv], cwd=tmp_path, env=environ, capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout)["revision_number"] == 1, done.stdout + done.stderr
    assert wal(path).exists() and wal(path).stat().st_size > 0
    assert path.read_bytes() == database  # nothing was copied back into the database file
    store = open_store(path, create=False)
    try:
        assert [w.slug for w in store.works_with_slug_part("left-open", None, 5)] == ["left-open"]
    finally:
        store.close()


def test_a_connection_left_for_the_exit_is_one_per_file_and_a_fold_closes_it(tmp_path: Path) -> None:
    path = seeded(tmp_path / "store.sqlite3", works=1)
    left = backend._LEFT_FOR_EXIT
    try:
        reader = SqliteStore.open(path, create=False, exit_closes=True)
        reader.close()  # a reader never checkpoints: it is closed
        assert str(path) not in left
        first = SqliteStore.open(path, create=True, exit_closes=True)
        write(first, "w0", 2, "rev-w0-1")
        kept = first._conn
        first.close()
        if NO_CKPT_ON_CLOSE:  # nothing to spare: SQLite was asked not to checkpoint
            assert not left
            return
        assert left == {(str(path), threading.get_ident()): kept} and kept is not None
        second = SqliteStore.open(path, create=True, exit_closes=True)
        write(second, "w0", 3, "rev-w0-2")
        second.close()
        key = (str(path), threading.get_ident())
        assert list(left) == [key] and left[key] is not kept  # the earlier one was closed, with no checkpoint
        with pytest.raises(sqlite3.ProgrammingError):
            kept.execute("SELECT 1")
        assert wal(path).stat().st_size > 0
        # Another thread's writer (a server's request) keeps its own, and never closes this thread's connection,
        # which SQLite would refuse from there; that thread closes its own (here before it ends, so that the fold
        # below can be the file's last close).
        errors: list[BaseException] = []
        mine = left[key]

        def other_thread() -> None:
            try:
                store = SqliteStore.open(path, create=True, exit_closes=True)
                write(store, "w0", 4, "rev-w0-3")
                store.close()
                assert left[key] is mine  # this thread's connection untouched, whether or not its own was left
                backend._close_left_for_exit(str(path))  # (by its own thread, as SQLite asks)
            except BaseException as exc:  # reported below, in the test's own thread
                errors.append(exc)

        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        assert not errors and left[key] is mine and list(left) == [key], errors
        mine.execute("SELECT 1")  # still open
        number = 5
        while key in left:  # commits until the WAL is due to be folded at a close
            store = SqliteStore.open(path, create=True, exit_closes=True)
            write(store, "w0", number, f"rev-w0-{number - 1}")
            store.close()
            number += 1
            assert number < 100, "the WAL was never folded"
        assert not wal(path).exists() or wal(path).stat().st_size == 0  # folded: the file's last connection closed
        assert head(path, "w0") == f"rev-w0-{number - 1}"
    finally:
        for conn in left.values():
            conn.close()
        left.clear()


def test_only_a_process_that_ends_with_its_command_leaves_connections_for_the_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wheypoint.app.context import Context

    asked: list[dict[str, Any]] = []
    monkeypatch.setattr("wheypoint.store.open_store", lambda location, **options: asked.append(options))
    environ = {"WHEYPOINT_HOME": str(tmp_path)}
    Context(tmp_path, environ)._open(True)
    monkeypatch.setattr(Context, "ends_with_command", True)
    Context(tmp_path, environ)._open(True)
    serving = Context(tmp_path, environ)
    serving.keep_connections = True  # `serve` and `mcp`: long-lived, so never
    serving._open(True)
    assert [options["exit_closes"] for options in asked] == [False, True, False]


def test_the_wal_stays_bounded_across_commits(tmp_path: Path) -> None:
    path = seeded(tmp_path / "store.sqlite3", works=1)
    sizes = []
    for number in range(2, 40):
        store = SqliteStore.open(path, create=True)
        write(store, "w0", number, f"rev-w0-{number - 1}")
        store.close()
        sizes.append(wal(path).stat().st_size if wal(path).exists() else 0)
    assert max(sizes) < 2 * backend.WAL_FOLD_BYTES, sizes  # unfolded, 38 commits here leave ~3 MB of WAL
    if NO_CKPT_ON_CLOSE:
        assert any(size > 0 for size in sizes) and any(b < a for a, b in itertools.pairwise(sizes)), sizes
    assert head(path, "w0") == "rev-w0-39"


def test_a_reader_writes_nothing_and_never_checkpoints(tmp_path: Path) -> None:
    path = seeded(tmp_path / "store.sqlite3")
    checkpoint_process(path, "w1", 2, "rev-w1-1", "exit")  # leaves a WAL holding a commit on every Python
    database, log = path.read_bytes(), contents(wal(path))
    assert log, "the killed writer's commit should still be in the WAL"
    store = open_store(path, create=False)
    assert store.record("w1")["revision_id"] == "rev-w1-2"  # type: ignore[index]
    assert len(store.revisions("w1")) == 2 and store.works_with_slug_part("etry", None, 5)
    assert store.list_works(WorkQuery(grep=("backoff",))) and store.work_of_revision("rev-w1-2")
    store.close()
    assert path.read_bytes() == database and contents(wal(path)) == log


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_the_store_and_its_wal_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = seeded(tmp_path / "home" / "store.sqlite3")
    finally:
        os.umask(old)
    for file in (path, wal(path), path.with_name(path.name + "-shm")):
        if file.exists():
            assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


# --- paths -------------------------------------------------------------------------------------------------------


def test_paths_are_strings_or_path_likes_with_any_characters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    odd = tmp_path / "we?ird #dir %20 x" / "store.sqlite3"
    seeded(odd)  # a Path
    store = open_store(str(odd), create=False)  # read-only, through a file: URI
    assert store.work("w0") is not None
    store.close()
    store = open_store(f"sqlite://{odd}", create=False)
    assert store.work_by_slug("proj", "retry-w2") is not None
    store.close()
    monkeypatch.chdir(tmp_path)
    seeded(Path("relative.sqlite3"), works=1)
    store = open_store("relative.sqlite3", create=False)
    assert store.work("w0") is not None
    store.close()
    assert open_store(tmp_path / "absent.sqlite3", create=False).work("w0") is None
    assert not (tmp_path / "absent.sqlite3").exists()


# --- refusals ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("create", [False, True], ids=["reader", "writer"])
def test_a_file_that_is_not_a_store_is_refused_at_open(tmp_path: Path, create: bool) -> None:
    path = tmp_path / "store.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(Refusal) as refused:
        SqliteStore.open(path, create=create)
    assert refused.value.code == "storage-error" and str(path) in refused.value.message


def test_the_schema_version_the_backend_opens_with_is_the_number_of_migrations() -> None:
    from wheypoint.store.sqlite.schema import SCHEMA_VERSION

    assert len(migrations.MIGRATIONS) == SCHEMA_VERSION


# --- what the contract suite leaves to each backend (test_store_contract.py runs the rest on both) -------------------


def test_a_writer_really_runs_with_synchronous_full(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "store.sqlite3", create=True)
    try:
        assert store._conn is not None and store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        store.close()


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_a_store_under_folders_not_made_yet_makes_them_private(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "store.sqlite3"
    write(SqliteStore.open(path, create=True), "w0", 1, None)
    for folder in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_the_switch_to_wal_waits_out_another_first_opener(tmp_path: Path) -> None:
    """SQLite does not call the busy handler for the switch: without the retry a second first opener fails at once."""
    import threading

    path = tmp_path / "store.sqlite3"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE t (x)")
    other.execute("BEGIN")
    other.execute("SELECT * FROM t").fetchall()  # a read lock, as another opener's first query holds one
    release = threading.Timer(0.3, lambda: (other.execute("COMMIT"), other.close()))
    release.start()
    try:
        store = SqliteStore.open(path, create=True)
        assert store._conn is not None and store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        store.close()
    finally:
        release.join()


def test_a_grep_count_in_a_project_asks_the_full_text_index_once_not_once_a_work(tmp_path: Path) -> None:
    """`count_works` and the gates select grep matches as the set of rowids the full-text index answers: joined to
    the index, SQLite planned a count with a project filter from the project's works and asked the index about each
    one (0.1-0.5 s at 10,000 works). The counts are the ranked list's; the plan scans the index once."""
    from wheypoint.store.listsql import count_sql, gate_count_sql

    store = SqliteStore.open(tmp_path / "s.sqlite3", create=True)
    try:
        for n in range(60):
            made = outcome(f"g{n:02d}", 1, None)
            if n % 3:
                made.record["orientation"] = "Working on the tombstone sweep."
            store.commit(f"g{n:02d}", None, f"rev-g{n:02d}-1", lambda head, made=made: made)
        store._require().execute("ANALYZE")
        for grep in (("tombstone",), ("backoff",), ("tombstone", "backoff"), ("nowhere",)):
            query = WorkQuery(grep=grep, projects=("proj",), statuses=("ok",), limit=1000)
            listed = store.list_works(query)
            expected = 40 if grep == ("tombstone",) else 0 if grep == ("nowhere",) else 60  # (entries say backoff)
            assert store.count_works(query) == len(listed) == expected, grep
            for sql, args in (count_sql(query, store._list_grep), gate_count_sql(query, store._list_grep)):
                plan = " | ".join(str(row[3]) for row in store._require().execute("EXPLAIN QUERY PLAN " + sql, args))
                assert "VIRTUAL TABLE INDEX 0:=" not in plan and "LIST SUBQUERY" in plan, plan
    finally:
        store.close()
