"""The team store's reads for the long-lived front doors (`serve`, `mcp`): the store's version from one count per
work lock bucket, the steps that add it and the open gates' index to an older store, a kept reader's schema
check made with its first read (one statement with the version), a dropped connection replaced as at open, the
lookups by key prepared on a connection (and nothing planned by its values), and a walk's level in one statement."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from test_store import outcome
from test_store_contract import raw, seed, write
from wheypoint.model.errors import Refusal
from wheypoint.store import open_store
from wheypoint.store.rows import Write


@pytest.fixture
def url(postgres_url: str) -> str:
    return postgres_url


def rows(url: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """A query through a connection of the test's own (not wheypoint's, not one of its kept ones)."""
    import psycopg

    with psycopg.connect(url, autocommit=True, application_name="wheypoint-tests") as conn:
        return [tuple(row) for row in conn.execute(sql, args or None).fetchall()]  # type: ignore[arg-type]


def counts_by_bucket(url: str) -> list[tuple[Any, ...]]:
    """The counts kept, and the counts of the revisions there are, by the bucket of each work's lock."""
    from wheypoint.store.postgres.backend import LOCK_BUCKETS

    kept = rows(url, "SELECT bucket, revisions FROM revision_counts WHERE revisions > 0 ORDER BY bucket")
    there = rows(url, "SELECT hashtext(work_id) & %s, count(*) FROM revisions GROUP BY 1 ORDER BY 1", LOCK_BUCKETS - 1)
    assert kept == there
    return kept


def test_the_version_counts_each_revision_written_once_in_its_work_lock_bucket(url: str) -> None:
    store = open_store(url, create=True)
    try:
        seed(store, works=5)
        write(store, "w0", 2, "rev-w0-1")
        write(store, "w0", 2, "rev-w0-1")  # a replay counts nothing
        store.commit_many([Write("w1", "rev-w1-1", "rev-w1-2", lambda head: outcome("w1", 2, "rev-w1-1")),
                           Write("w2", "rev-w2-1", "rev-w2-2", lambda head: outcome("w2", 2, "rev-w2-1"))])  # fmt: skip
        with pytest.raises(Refusal):  # the first is written, the second refused: neither is kept, nor counted
            store.commit_many([Write("w3", "rev-w3-1", "rev-w3-2", lambda head: outcome("w3", 2, "rev-w3-1")),
                               Write("w4", None, "rev-w4-2", lambda head: outcome("w4", 2, None))])  # fmt: skip
        written = store.commit_stream(
            Write(f"s{n}", None, f"rev-s{n}-1", lambda head, n=n: outcome(f"s{n}", 1, None)) for n in range(40)
        )
        assert written == (40, 0)
        assert store.version() == 5 + 1 + 2 + 40 == rows(url, "SELECT count(*) FROM revisions")[0][0]
        assert sum(n for _, n in counts_by_bucket(url)) == 48
    finally:
        store.close()


def test_a_store_from_before_the_counts_and_the_gates_index_is_brought_up_to_date_by_a_reader(url: str) -> None:
    from wheypoint.store.postgres.migrations import SCHEMA_VERSION

    store = open_store(url, create=True)
    try:
        seed(store, works=4)
        write(store, "w0", 2, "rev-w0-1")
    finally:
        store.close()
    # As a team store of the runtime before these steps (schema 7) left it.
    raw(url, "DROP INDEX entries_open_gates", "DROP TABLE revision_counts", "UPDATE wheypoint_schema SET version = 7")
    reader = open_store(url, create=False)
    try:
        assert reader.version() == 5  # every revision the older runtime wrote is counted
    finally:
        reader.close()
    assert rows(url, "SELECT version FROM wheypoint_schema") == [(SCHEMA_VERSION,)]
    assert rows(url, "SELECT count(*) FROM pg_indexes WHERE indexname = 'entries_open_gates'") == [(1,)]
    counts_by_bucket(url)
    writer = open_store(url, create=True)
    try:
        write(writer, "w1", 2, "rev-w1-1")
        assert writer.version() == 6
    finally:
        writer.close()


@pytest.fixture
def kept(url: str) -> Iterator[str]:
    """A store of three works whose reader's connection is kept (as `serve` keeps them) for the next reader."""
    store = open_store(url, create=True)
    try:
        seed(store, works=3)
    finally:
        store.close()
    reader = open_store(url, create=False, kept=True)
    try:
        assert reader.version() == 3
    finally:
        reader.close()
    yield url


def read_first(url: str, what: str) -> int:
    """A kept reader's first read: the store's version (as each page of `serve` starts), or a list of works."""
    from wheypoint.store.rows import WorkQuery

    store = open_store(url, create=False, kept=True)
    try:
        return store.version() if what == "version" else len(store.list_works(WorkQuery(limit=10)))
    finally:
        store.close()


@pytest.mark.parametrize("what", ["version", "list"])
def test_a_kept_reader_refuses_a_schema_newer_than_the_runtime_at_its_first_read(kept: str, what: str) -> None:
    from wheypoint.store.postgres.migrations import SCHEMA_VERSION

    raw(kept, f"UPDATE wheypoint_schema SET version = {SCHEMA_VERSION + 1}")  # a newer runtime migrated it meanwhile
    with pytest.raises(Refusal) as refused:
        read_first(kept, what)
    assert refused.value.code == "runtime-behind"
    raw(kept, f"UPDATE wheypoint_schema SET version = {SCHEMA_VERSION}")
    assert read_first(kept, what) == 3


@pytest.mark.parametrize("what", ["version", "list"])
def test_a_kept_reader_whose_connection_the_server_dropped_reads_on_a_new_one(kept: str, what: str) -> None:
    sessions = "SELECT pid FROM pg_stat_activity WHERE application_name = 'wheypoint' AND datname = current_database()"
    before = rows(kept, sessions)
    assert len(before) == 1  # the kept connection, idle
    rows(kept, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'wheypoint' "
               "AND datname = current_database()")  # fmt: skip
    deadline = time.monotonic() + 10
    while rows(kept, sessions) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert read_first(kept, what) == 3
    after = rows(kept, sessions)
    assert len(after) == 1 and after != before  # a new session, kept in turn


def linked(store: Any, work_id: str, project: str, slug: str, edges: list[dict[str, str]], minute: int) -> None:
    """A first revision of `work_id` whose head has these edges, updated at that minute (backlinks are newest first)."""

    def build(head: dict[str, Any] | None) -> Any:
        made = outcome(work_id, 1, None, slug)
        made.record.update(project_key=project, edges=edges, updated_at=f"2026-01-01T00:{minute:02d}:00Z")
        return made

    store.commit(work_id, None, f"rev-{work_id}-1", build)


def test_the_heads_and_backlinks_of_several_works_in_one_statement_are_what_each_read_on_its_own_answers(
    url: str,
) -> None:  # fmt: skip
    """Every spelling that names a work (its id, the store's ref by id or by slug, a bare slug from its project,
    but not from another), several kinds from one work, newest first: as work, records and backlinks read them."""
    from wheypoint.store.sql import SqlStore

    store = open_store(url, create=True)
    try:
        linked(store, "target.0000aaaa", "proj", "target", [], 1)
        linked(store, "side.0000bbbb", "proj", "side", [{"ref": "target.0000aaaa", "kind": "relates_to"}], 2)
        for n, ref in enumerate(["target.0000aaaa", "wheypoint:proj/target.0000aaaa", "wheypoint:proj/target",
                                 "target", "side.0000bbbb"]):  # fmt: skip
            linked(store, f"p{n}.0000000{n}", "proj", f"p{n}", [{"ref": ref, "kind": "relates_to"}], 10 - n)
        linked(store, "far.0000cccc", "other", "far", [{"ref": "target", "kind": "relates_to"}], 20)  # not its slug
        linked(
            store,
            "two.0000dddd",
            "proj",
            "two",
            [{"ref": "target", "kind": "supersedes"}, {"ref": "wheypoint:proj/target", "kind": "relates_to"}],
            5,
        )
        asked = ["side.0000bbbb", "target.0000aaaa", "missing.00000000", "target.0000aaaa", "far.0000cccc"]
        together = store.heads_and_backlinks(asked)
        assert list(together) == ["side.0000bbbb", "target.0000aaaa", "far.0000cccc"]  # as asked, each once
        assert together == SqlStore.heads_and_backlinks(store, asked)  # type: ignore[arg-type]  # read one by one
        work, record, backlinks = together["target.0000aaaa"]
        assert work == store.work("target.0000aaaa") and record == store.record("target.0000aaaa")
        assert backlinks == store.backlinks(work)
        assert [(b.work_id, b.kind) for b in backlinks] == [
            ("p0.00000000", "relates_to"), ("p1.00000001", "relates_to"), ("p2.00000002", "relates_to"),
            ("p3.00000003", "relates_to"), ("two.0000dddd", "relates_to"), ("two.0000dddd", "supersedes"),
            ("side.0000bbbb", "relates_to"),
        ]  # fmt: skip
        assert store.heads_and_backlinks([]) == {} and store.heads_and_backlinks(["missing.00000000"]) == {}
    finally:
        store.close()


def test_a_lookup_by_key_is_prepared_on_its_connection_and_a_pattern_or_a_list_never_is(url: str) -> None:
    """A lookup's plan is the same whatever the key; a slug pattern's or a list's is not (a generic plan for
    `slug LIKE $1` scans every work), so none of those is prepared however often it runs."""
    from wheypoint.store.rows import WorkQuery

    store = open_store(url, create=True)
    try:
        seed(store, works=3)
        for _ in range(8):  # more than the driver's default threshold for preparing a statement (5)
            work = store.work("w0")
            assert work is not None
            store.history("w0"), store.backlinks(work), store.records(["w0", "w1"]), store.version()
            store.works_with_slug_prefix("retry-w", None, 5), store.works_with_slug_part("w1", None, 5)
            store.list_works(WorkQuery(limit=10)), store.list_works(WorkQuery(grep=("gateway",), limit=10))
        prepared = [str(row[0]) for row in store._conn.execute("SELECT statement FROM pg_prepared_statements")]  # type: ignore[attr-defined]
    finally:
        store.close()
    reads = [sql for sql in prepared if not sql.startswith("INSERT INTO ")]  # the driver prepares executemany's
    assert len(reads) == 5, prepared  # the work, its history, its backlinks, the records, the version
    assert not [sql for sql in reads if "LIKE" in sql or "LIMIT" in sql or "tsquery" in sql], prepared


def test_a_grep_list_ranked_from_narrow_rows_answers_as_the_plain_statement_does(url: str) -> None:
    """A `--grep` list on PostgreSQL ranks its matches in a subquery that carries only ids, ranks and times, then
    reads the page's works (a common word's list spilled every match's document and listed columns through the
    sort and the count, 3.3x SQLite's time): every page, ties included, and the count are the plain statement's."""
    from wheypoint.store.listsql import count_sql, list_sql
    from wheypoint.store.rows import ListedWork, WorkQuery

    store = open_store(url, create=True)
    try:
        for n in range(130):  # ranks of four sizes, many ties broken by time and id, and works without the word
            made = outcome(f"g{n:03d}", 1, None)
            made.record.update(orientation=("Retry backoff. " * (n % 4 + 1) if n % 5 else "No match here."),
                               updated_at=f"2026-01-{n % 7 + 1:02d}T00:00:00Z")  # fmt: skip
            store.commit(f"g{n:03d}", None, f"rev-g{n:03d}-1", lambda head, made=made: made)
        for grep in (("backoff",), ("retry backoff", "no match")):
            query = WorkQuery(grep=grep, limit=50)
            sql, args = count_sql(query, store._list_grep)  # type: ignore[attr-defined]
            total = store._one(sql, tuple(args))[0]  # type: ignore[attr-defined,index]
            assert total > 100, total
            for offset in (0, 50, 100, 150):
                page = query._replace(offset=offset)
                sql, args = list_sql(page, store._list_grep)  # type: ignore[attr-defined]
                plain = [ListedWork(*row) for row in store._rows(sql, tuple(args))]  # type: ignore[attr-defined]
                assert store.list_works(page) == plain and len(plain) == max(0, min(50, total - offset)), offset
                if offset < total:
                    assert store.count_works(page) == total
    finally:
        store.close()
