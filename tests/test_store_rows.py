"""The SQLite store's side rows, read back with plain SQL: backlinks, authors, where a head was written, imports."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_readonly import _lock, _settled, _unlock
from test_store import Outcome, outcome
from wheypoint.model.errors import Refusal
from wheypoint.store.rows import Backlink, Committed, ImportedFrom, WorkQuery, Write, WrittenFrom
from wheypoint.store.sqlite.backend import SqliteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore.open(tmp_path / "store.sqlite3", create=True)
    yield opened
    opened.close()


def commit(store: SqliteStore, work_id: str, number: int = 1, *, project: str = "proj", slug: str | None = None,
           stamp: str | None = None, edits: dict[str, Any] | None = None, **write: Any) -> Committed:  # fmt: skip
    """Commit revision `number` of `work_id` (its parent the one before), with `edits` made to its record."""

    def build(head: dict[str, Any] | None) -> Outcome:
        made = outcome(work_id, number, f"rev-{work_id}-{number - 1}" if number > 1 else None, slug)
        made.record.update(project_key=project, **(edits or {}))
        if stamp:
            made.record["updated_at"] = stamp
        return made

    parent = f"rev-{work_id}-{number - 1}" if number > 1 else None
    return store.commit_many([Write(work_id, parent, f"rev-{work_id}-{number}", build, **write)])[0]


def rows(store: SqliteStore, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """SQL on the store's file through a connection of its own, not wheypoint's reads."""
    conn = sqlite3.connect(store.path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def test_backlinks_are_every_spelling_of_the_work_and_a_bare_slug_only_from_its_project(store: SqliteStore) -> None:
    commit(store, "tgt.0001", slug="tgt", edits={"edges": [{"ref": "tgt", "kind": "relates_to"}]})  # itself: no
    spellings = {"a": "tgt.0001", "b": "wheypoint:proj/tgt.0001", "c": "wheypoint:proj/tgt", "d": "tgt"}
    for n, (name, ref) in enumerate(spellings.items()):
        commit(store, name, stamp=f"2026-02-0{n + 1}T00:00:00Z", edits={"edges": [{"ref": ref, "kind": "informs"}]})
    commit(store, "e", project="other", edits={"edges": [{"ref": "tgt", "kind": "informs"}]})  # another project's
    commit(store, "f", edits={"edges": [{"ref": "wheypoint:other/tgt", "kind": "informs"}]})  # another project's
    target = store.work("tgt.0001")
    assert target is not None
    assert store.backlinks(target) == [  # newest head first
        Backlink(name, "proj", f"retry-{name}", "informs", ref) for name, ref in reversed(spellings.items())
    ]


def test_backlinks_of_one_work_come_newest_first_then_by_id_and_kind(store: SqliteStore) -> None:
    commit(store, "tgt.0001", slug="tgt")
    two = [{"ref": "tgt.0001", "kind": "relates_to"}, {"ref": "tgt.0001", "kind": "informs"}]
    commit(store, "b", stamp="2026-03-01T00:00:00Z", edits={"edges": two})
    commit(store, "a", stamp="2026-03-01T00:00:00Z", edits={"edges": two[:1]})
    commit(store, "c", stamp="2026-04-01T00:00:00Z", edits={"edges": two[1:]})
    target = store.work("tgt.0001")
    assert target is not None
    assert [(b.work_id, b.kind) for b in store.backlinks(target)] == [
        ("c", "informs"), ("a", "relates_to"), ("b", "informs"), ("b", "relates_to")]  # fmt: skip


def authors(store: SqliteStore, work_id: str) -> dict[str, str | None]:
    """Who wrote each revision of the work, by revision id, as its history reads it."""
    return {r.receipt["revision_id"]: r.author for r in store.history(work_id)}


def test_each_revision_keeps_its_author_the_writes_own_before_where_it_came_from(store: SqliteStore) -> None:
    commit(store, "w", 1, written_from=WrittenFrom("/co", None, "ann@example.com"))
    commit(store, "w", 2, written_from=WrittenFrom("/co", None, "ann@example.com"), author="bob@example.com")
    commit(store, "w", 3)
    assert authors(store, "w") == {"rev-w-1": "ann@example.com", "rev-w-2": "bob@example.com", "rev-w-3": None}
    assert authors(store, "nobody") == {}


def test_where_a_head_was_written_is_replaced_only_by_a_write_that_says(store: SqliteStore) -> None:
    commit(store, "w", 1, written_from=WrittenFrom("/a", "/a/.cheese/notes"))
    assert (store.work("w").checkout, store.work("w").note_dir) == ("/a", "/a/.cheese/notes")  # type: ignore[union-attr]
    commit(store, "w", 2)  # an import, say: leaves them
    assert (store.work("w").checkout, store.work("w").note_dir) == ("/a", "/a/.cheese/notes")  # type: ignore[union-attr]
    commit(store, "w", 3, written_from=WrittenFrom(None, None))  # outside a checkout, no note: says so
    assert (store.work("w").checkout, store.work("w").note_dir) == (None, None)  # type: ignore[union-attr]
    assert store.work("w").head_revision_id == "rev-w-3"  # type: ignore[union-attr]


def test_an_imported_revision_records_its_bundle_and_a_written_one_does_not(store: SqliteStore) -> None:
    origin = ImportedFrom("sha256:" + "b" * 64, "/tmp/bundle.json", "2026-05-01T00:00:00Z")
    commit(store, "w", 1, imported_from=origin)
    commit(store, "w", 2)
    assert rows(store, "SELECT revision_id, work_id, bundle_digest, source, imported_at FROM imports") == [
        ("rev-w-1", "w", *origin)
    ]


def test_the_head_rows_describe_the_head_only(store: SqliteStore) -> None:
    entries = [
        {"id": "q1", "kind": "question", "state": "active", "gates": True, "text": "Go?", "owner": "ann"},
        {"id": "d1", "kind": "decision", "state": "active", "gates": True, "text": "Cap."},  # a decision never gates
        {"id": "q2", "kind": "question", "state": "resolved", "gates": False, "text": "Old?"},
    ]
    commit(store, "w", 1, edits={"entries": entries, "status": "gated: Go?", "next": {"items": []},
                                 "edges": [{"ref": "x", "kind": "informs"}, {"ref": "y", "kind": "relates_to"}],
                                 "artifact_links": [{"ref": "a.md", "digest": "sha256:1"}]})  # fmt: skip
    assert rows(store, "SELECT status, gated, next_move, head_number FROM works") == [("gated: Go?", 1, "list", 1)]
    assert rows(store, "SELECT entry_id, kind, state, gates, owner FROM entries ORDER BY entry_id") == [
        ("d1", "decision", "active", 0, None), ("q1", "question", "active", 1, "ann"),
        ("q2", "question", "resolved", 0, None)]  # fmt: skip
    assert rows(store, "SELECT ref, kind FROM edges ORDER BY ref") == [("x", "informs"), ("y", "relates_to")]
    assert rows(store, "SELECT ref, digest FROM artifact_links") == [("a.md", "sha256:1")]
    commit(store, "w", 2, edits={"entries": entries[2:], "edges": [], "artifact_links": [], "next": {"move": "cook"}})
    assert rows(store, "SELECT status, gated, next_move, head_number FROM works") == [("ok", 0, "cook", 2)]
    assert rows(store, "SELECT entry_id FROM entries") == [("q2",)]
    assert rows(store, "SELECT count(*) FROM edges") == [(0,)]
    assert rows(store, "SELECT count(*) FROM artifact_links") == [(0,)]


def test_a_revision_is_read_only_through_its_own_work(store: SqliteStore) -> None:
    commit(store, "w", 1)
    commit(store, "w", 2)
    commit(store, "v", 1)
    assert store.record("w", "rev-w-1")["revision_number"] == 1  # type: ignore[index]
    assert store.record("w")["revision_id"] == "rev-w-2"  # type: ignore[index]
    assert store.record("v", "rev-w-1") is None and store.record("nobody") is None
    assert [r["revision_id"] for r in store.revisions("w")] == ["rev-w-1", "rev-w-2"]
    assert store.work_of_revision("rev-w-1").work_id == "w"  # type: ignore[union-attr]
    assert store.work_of_revision("rev-nobody") is None


def test_a_slug_is_indexed_once_and_found_after_later_revisions(store: SqliteStore) -> None:
    for number in (1, 2, 3):
        commit(store, "w", number, slug="retry-jitter")
    assert rows(store, "SELECT count(*) FROM slug_index") == [(1,)]
    assert rows(store, "SELECT count(*) FROM search") == [(1,)]  # the head's row, replaced at each revision
    assert [w.work_id for w in store.works_with_slug_part("jitt", None, 5)] == ["w"]


def test_a_slug_part_of_three_characters_or_more_uses_the_trigram_index(store: SqliteStore) -> None:
    commit(store, "w", 1, slug="retry-jitter")
    if not store.features.trigram_slugs:
        pytest.skip("this SQLite has no trigram tokenizer: every part is a scan")
    seen: list[str] = []
    assert store._conn is not None
    store._conn.set_trace_callback(seen.append)
    for part, indexed in (("jit", True), ("ji", False)):
        seen.clear()
        assert [w.work_id for w in store.works_with_slug_part(part, "proj", 5)] == ["w"]
        assert any("slug_index MATCH" in sql for sql in seen) is indexed, (part, seen)


def test_commit_stream_counts_written_and_replayed(store: SqliteStore) -> None:
    commit(store, "w", 1)

    def writes() -> Iterator[Write]:
        for work_id in ("w", "v", "u"):
            yield Write(work_id, None, f"rev-{work_id}-1", lambda head, w=work_id: outcome(w, 1, None))

    assert store.commit_stream(writes()) == (2, 1)
    assert store.commit_stream(iter(())) == (0, 0)


# --- the backend's own helpers -------------------------------------------------------------------------------------


class _Coded(sqlite3.OperationalError):
    """A driver error with the extended result code Python 3.11+ attaches."""

    def __init__(self, code: int) -> None:
        super().__init__("coded")
        self.sqlite_errorcode = code


@pytest.mark.parametrize(
    ("error", "code"),
    [(_Coded(5), "store-busy"), (_Coded(6), "store-busy"), (_Coded(5 | 2 << 8), "store-busy"),
     (_Coded(6 | 1 << 8), "store-busy"), (_Coded(13), "storage-full"), (_Coded(13 | 3 << 8), "storage-full"),
     (_Coded(1), "storage-error"), (_Coded(12), "storage-error"), (_Coded(14), "storage-error"),
     (_Coded(7), "storage-error"),
     (sqlite3.OperationalError("database is locked"), "store-busy"),  # Python 3.10: no code, only the message
     (sqlite3.OperationalError("database or disk is full"), "storage-full"),
     (sqlite3.OperationalError("disk I/O error"), "storage-error")],
)  # fmt: skip
def test_each_driver_error_is_refused_by_its_primary_code(error: Exception, code: str) -> None:
    from wheypoint.store.sqlite import backend

    refusal = backend._refusal(error, "/s.sqlite3", "write to")  # type: ignore[arg-type]
    assert refusal.code == code and "/s.sqlite3" in refusal.message


def test_a_bulk_writer_may_skip_the_fsync_and_a_checkpointing_one_never_does(tmp_path: Path) -> None:
    for durable, level in ((False, 0), (True, 2)):  # OFF, FULL
        store = SqliteStore.open(tmp_path / f"{durable}.sqlite3", create=True, durable=durable)
        try:
            assert store._conn is not None and store._conn.execute("PRAGMA synchronous").fetchone()[0] == level
        finally:
            store.close()


def test_a_store_under_a_file_is_refused_for_reading_and_writing(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("a file, not a folder")
    for create in (False, True):
        with pytest.raises(Refusal) as refused:
            SqliteStore.open(tmp_path / "plain" / "deeper" / "store.sqlite3", create=create)
        assert refused.value.code == "storage-error" and str(tmp_path / "plain") in refused.value.message


def test_a_new_store_is_private_and_in_wal_mode_at_the_current_schema(tmp_path: Path) -> None:
    from wheypoint.store.sqlite.schema import SCHEMA_VERSION

    store = SqliteStore.open(tmp_path / "new.sqlite3", create=True)
    store.close()
    conn = sqlite3.connect(tmp_path / "new.sqlite3")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()
    assert (tmp_path / "new.sqlite3").stat().st_mode & 0o777 == 0o600


@pytest.fixture
def locked() -> Iterator[list[Path]]:
    """Paths made unwritable by test_readonly's helper (chattr +i for root), unlocked afterwards."""
    paths: list[Path] = []
    yield paths
    for path in reversed(paths):
        _unlock(path)


def test_a_store_whose_folder_cannot_be_written_is_read_as_committed_and_refused_to_writers(
    tmp_path: Path, locked: list[Path]
) -> None:
    folder = tmp_path / "locked"
    store = SqliteStore.open(folder / "store.sqlite3", create=True)
    commit(store, "w", 1)
    commit(store, "w", 2)
    store.close()
    _settled(folder / "store.sqlite3")  # no -wal, no -shm: a read-only open would have to make the index
    _lock(folder, locked)
    reader = SqliteStore.open(folder / "store.sqlite3", create=False)
    try:
        assert reader.record("w")["revision_id"] == "rev-w-2"  # type: ignore[index]
    finally:
        reader.close()
    with pytest.raises(Refusal) as refused:
        SqliteStore.open(folder / "store.sqlite3", create=True)
    assert refused.value.code == "storage-error" and "its folder cannot be written" in refused.value.message


def test_no_wal_file_is_no_wal_bytes(tmp_path: Path) -> None:
    from wheypoint.store.sqlite import backend

    assert backend._wal_bytes(str(tmp_path / "absent.sqlite3")) == 0
    (tmp_path / "s.sqlite3-wal").write_bytes(b"x" * 10)
    assert backend._wal_bytes(str(tmp_path / "s.sqlite3")) == 10


# --- migrations at open ------------------------------------------------------------------------------------------


def _as_version_4(path: Path) -> None:
    """Take migrations 5-8 back out of a store (their columns, table and index), as a runtime of that age left it."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for sql in ("ALTER TABLE entries DROP COLUMN added_in",
                    "DROP INDEX revisions_by_author", "ALTER TABLE revisions DROP COLUMN author", "DROP TABLE imports",
                    "ALTER TABLE works DROP COLUMN checkout", "ALTER TABLE works DROP COLUMN note_dir",
                    "PRAGMA user_version = 4"):  # fmt: skip
            conn.execute(sql)
    finally:
        conn.close()


@pytest.mark.parametrize("create", [False, True], ids=["reader", "writer"])
def test_an_older_store_is_brought_up_to_date_by_its_first_opener(tmp_path: Path, create: bool) -> None:
    from wheypoint.store.sqlite.schema import SCHEMA_VERSION

    path = tmp_path / "store.sqlite3"
    store = SqliteStore.open(path, create=True)
    commit(store, "w", 1, written_from=WrittenFrom("/a", None, "ann@example.com"))
    store.close()
    _as_version_4(path)
    store = SqliteStore.open(path, create=create)
    try:
        assert store.work("w").checkout is None and authors(store, "w") == {"rev-w-1": None}  # type: ignore[union-attr]
    finally:
        store.close()
    assert rows(store, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert rows(store, "SELECT count(*) FROM imports") == [(0,)]


def test_a_migration_that_fails_is_refused_and_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    store = SqliteStore.open(path, create=True)
    commit(store, "w", 1)
    store.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA user_version = 6")  # migration 7 will add a column that is already there
    conn.close()
    with pytest.raises(Refusal) as refused:
        SqliteStore.open(path, create=True)
    assert refused.value.code == "storage-error" and "author" in refused.value.message
    assert rows(store, "PRAGMA user_version") == [(6,)]
    reader = SqliteStore.open(path, create=False)  # a reader that cannot migrate reads the store as it is
    try:
        assert reader.record("w")["revision_id"] == "rev-w-1"  # type: ignore[index]
    finally:
        reader.close()


def test_a_driver_error_says_whether_it_met_a_read_or_a_write(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    store = SqliteStore.open(path, create=True)
    commit(store, "w", 1)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TABLE search")  # reads of works still work; a commit's search row cannot be written
    conn.execute("DROP TABLE entries")
    conn.close()
    try:
        with pytest.raises(Refusal) as refused:
            store.list_works(WorkQuery(owners=("ann",)))
        assert refused.value.message.startswith(f"cannot read the store at {path}: ")
        with pytest.raises(Refusal) as refused:
            commit(store, "w", 2)
        assert refused.value.message.startswith(f"cannot write to the store at {path}: ")
        assert store.record("w")["revision_id"] == "rev-w-1"  # type: ignore[index]
    finally:
        store.close()


def test_a_write_lock_held_elsewhere_is_refused_as_a_write_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wheypoint.store.sqlite import backend

    monkeypatch.setattr(backend, "BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "store.sqlite3"
    store = SqliteStore.open(path, create=True)
    commit(store, "w", 1)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    built: list[str] = []
    try:
        with pytest.raises(Refusal) as refused:
            store.commit("w", "rev-w-1", "rev-w-2", lambda head: built.append("built") or outcome("w", 2, "rev-w-1"))
        assert refused.value.code == "store-busy"
        assert refused.value.message.startswith(f"cannot write to the store at {path}: it stayed locked for 50 ms")
        assert built == []  # refused at BEGIN IMMEDIATE: the head was never read, the build never ran
    finally:
        holder.rollback()
        holder.close()
        store.close()


class _FailingClose:
    def close(self) -> None:
        raise sqlite3.OperationalError("unable to close due to unfinalized statements")


def test_a_close_the_driver_refuses_is_a_storage_error(tmp_path: Path) -> None:
    store = SqliteStore(_FailingClose(), str(tmp_path / "s.sqlite3"))  # type: ignore[arg-type]
    with pytest.raises(Refusal) as refused:
        store.close()
    assert refused.value.code == "storage-error" and refused.value.message.startswith("cannot close the store at")
    store.close()  # closed once is closed: a second close does nothing


def test_the_fts5_probe_says_no_for_a_tokenizer_this_sqlite_lacks_and_leaves_nothing() -> None:
    from wheypoint.store.sqlite import migrations

    conn = sqlite3.connect(":memory:")
    assert migrations.fts5_available(conn, "no_such_tokenizer") is False
    assert conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone() == (0,)
    if migrations.fts5_available(conn):  # and a probe that succeeds drops its table too
        assert conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone() == (0,)


def test_a_revision_is_stored_as_compact_json_with_sorted_keys_and_its_own_characters(store: SqliteStore) -> None:
    committed = commit(store, "w", 1, edits={"orientation": "Zürich's retry — 再试", "b": 1, "a": 2})
    [(stored, receipt)] = rows(store, "SELECT record_json, revision_json FROM revisions")
    assert stored == json.dumps(committed.record, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    assert "Zürich's retry — 再试" in stored and stored.index('"a":2') < stored.index('"b":1')
    assert receipt == json.dumps(committed.revision, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class _BrokenConnection:
    """A connection whose every statement fails, as on a file gone bad under an open store."""

    in_transaction = False

    def execute(self, *args: Any) -> Any:
        raise sqlite3.DatabaseError("database disk image is malformed")

    def close(self) -> None:
        pass


def test_a_feature_probe_the_driver_refuses_is_a_storage_error(tmp_path: Path) -> None:
    store = SqliteStore(_BrokenConnection(), str(tmp_path / "s.sqlite3"))  # type: ignore[arg-type]
    with pytest.raises(Refusal) as refused:
        store.features  # noqa: B018 (the property's read is the probe)
    assert refused.value.code == "storage-error" and refused.value.message.startswith("cannot read the store at")


def test_a_folder_made_meanwhile_by_another_first_opener_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def raced(path: Any, mode: int = 0o777) -> None:
        real_mkdir(path, mode)  # the other opener wins the race for this folder
        raise FileExistsError(17, "File exists", str(path))

    monkeypatch.setattr(os, "mkdir", raced)
    store = SqliteStore.open(tmp_path / "a" / "b" / "store.sqlite3", create=True)
    monkeypatch.undo()
    commit(store, "w", 1)
    store.close()


@pytest.mark.parametrize("create", [False, True], ids=["reader", "writer"])
def test_a_store_held_exclusively_elsewhere_is_store_busy_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, create: bool
) -> None:
    from wheypoint.store.sqlite import backend

    path = tmp_path / "store.sqlite3"
    store = SqliteStore.open(path, create=True)
    commit(store, "w", 1)
    store.close()
    monkeypatch.setattr(backend, "BUSY_TIMEOUT_MS", 50)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(Refusal) as refused:
            SqliteStore.open(path, create=create)
        assert refused.value.code == "store-busy"  # not a read-only store opened around the lock
    finally:
        holder.rollback()
        holder.close()


def test_the_switch_to_wal_gives_up_when_the_busy_timeout_runs_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wheypoint.store.sqlite import backend

    monkeypatch.setattr(backend, "BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "store.sqlite3"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE t (x)")
    other.execute("BEGIN")
    other.execute("SELECT * FROM t").fetchall()  # a read lock another first opener never lets go of
    try:
        with pytest.raises(Refusal) as refused:
            SqliteStore.open(path, create=True)
        assert refused.value.code == "store-busy"
    finally:
        other.execute("COMMIT")
        other.close()
