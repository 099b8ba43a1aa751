"""The Store contract, one suite run on both backends: compare-and-set, replay, atomicity, lookups and refusals."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import BACKENDS
from test_store import Outcome, outcome
from wheypoint.model.errors import Refusal
from wheypoint.store import open_store
from wheypoint.store.base import Store
from wheypoint.store.rows import Committed, WorkQuery, Write


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store lives: a SQLite file not made yet, or a fresh empty PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite3")
    return str(request.getfixturevalue("postgres_url"))


def is_postgres(location: str) -> bool:
    return location.startswith("postgresql://")


def raw(location: str, *statements: str) -> None:
    """Run statements on the store with the driver alone, bypassing wheypoint (to break or hold it)."""
    if is_postgres(location):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql)  # type: ignore[arg-type]
        return
    conn = sqlite3.connect(location, isolation_level=None)
    try:
        for sql in statements:
            conn.execute(sql)
    finally:
        conn.close()


def write(store: Store, work_id: str, number: int, parent: str | None, slug: str | None = None,
          project: str = "proj") -> Committed:  # fmt: skip
    def build(head: dict[str, Any] | None) -> Outcome:
        made = outcome(work_id, number, parent, slug)
        made.record["project_key"] = project
        return made

    return store.commit(work_id, parent, f"rev-{work_id}-{number}", build)


@pytest.fixture
def store(location: str) -> Iterator[Store]:
    opened = open_store(location, create=True)
    yield opened
    opened.close()


def seed(store: Store, works: int = 3) -> None:
    for w in range(works):
        write(store, f"w{w}", 1, None)


# --- compare-and-set, replay, atomicity ----------------------------------------------------------------------------


def test_a_write_names_its_base_and_a_wrong_one_is_refused_naming_the_head(store: Store) -> None:
    write(store, "w0", 1, None)
    with pytest.raises(Refusal) as refused:
        store.commit("w0", None, "rev-w0-2", lambda head: outcome("w0", 2, None))
    assert refused.value.code == "base-revision-required" and refused.value.details["head_revision_id"] == "rev-w0-1"
    write(store, "w0", 2, "rev-w0-1")
    with pytest.raises(Refusal) as refused:
        store.commit("w0", "rev-w0-1", "rev-w0-3", lambda head: outcome("w0", 3, "rev-w0-1"))
    assert refused.value.code == "stale-parent" and refused.value.details["head_revision_id"] == "rev-w0-2"
    with pytest.raises(Refusal) as refused:
        store.commit("w0", "rev-elsewhere", "rev-w0-3", lambda head: outcome("w0", 3, "rev-elsewhere"))
    assert refused.value.code == "unknown-base"
    assert [r["revision_id"] for r in store.revisions("w0")] == ["rev-w0-1", "rev-w0-2"]


def test_a_known_head_is_built_on_only_while_it_is_still_the_head(store: Store) -> None:
    first = write(store, "w0", 1, None)
    seen: list[dict[str, Any] | None] = []

    def build(number: int, parent: str) -> Callable[[dict[str, Any] | None], Outcome]:
        def built(head: dict[str, Any] | None) -> Outcome:
            seen.append(head)
            return outcome("w0", number, parent)

        return built

    # The head the writer holds is the work's head: built on as it is, not read again.
    second = store.commit("w0", "rev-w0-1", "rev-w0-2", build(2, "rev-w0-1"), known_head=first.record)
    assert seen[-1] is first.record
    # Another writer moved the head past it: the stored head is read and built on, never the stale one.
    write(store, "w0", 3, "rev-w0-2")
    store.commit("w0", "rev-w0-3", "rev-w0-4", build(4, "rev-w0-3"), known_head=second.record)
    assert seen[-1] is not second.record and seen[-1] is not None and seen[-1]["revision_id"] == "rev-w0-3"
    # ...and its base, if it still names the stale one, is refused as always.
    with pytest.raises(Refusal) as refused:
        store.commit("w0", "rev-w0-2", "rev-w0-5", build(5, "rev-w0-2"), known_head=second.record)
    assert refused.value.code == "stale-parent"
    # A head of another work is no head of this one.
    other = write(store, "w1", 1, None)
    posing = {**other.record, "revision_id": "rev-w0-4"}
    store.commit("w0", "rev-w0-4", "rev-w0-6", build(6, "rev-w0-4"), known_head=posing)
    assert seen[-1] is not None and seen[-1]["work_id"] == "w0" and seen[-1]["revision_id"] == "rev-w0-4"
    assert [r["revision_id"] for r in store.revisions("w0")] == ["rev-w0-1", "rev-w0-2", "rev-w0-3", "rev-w0-4",
                                                                "rev-w0-6"]  # fmt: skip


def test_a_replay_is_answered_with_the_stored_revision_and_writes_nothing(store: Store) -> None:
    first = write(store, "w0", 1, None)
    calls: list[int] = []

    def build(head: dict[str, Any] | None) -> Outcome:
        calls.append(1)
        return outcome("w0", 1, None)

    again = store.commit("w0", None, "rev-w0-1", build)
    assert again.replayed is True and calls == [] and again.record == first.record and again.revision == first.revision
    assert len(store.revisions("w0")) == 1


def test_the_version_grows_with_every_revision_written_and_not_with_a_replay_or_a_refusal(location: str) -> None:
    # What `serve`'s pages poll (/changes): a store not made yet is 0; each revision, of any work, adds one.
    unmade = open_store(location, create=False)
    try:
        assert unmade.version() == 0
    finally:
        unmade.close()
    store = open_store(location, create=True)
    try:
        assert store.version() == 0
        seed(store, works=2)
        assert store.version() == 2
        write(store, "w0", 2, "rev-w0-1")
        assert store.version() == 3
        write(store, "w0", 2, "rev-w0-1")  # a replay writes nothing
        with pytest.raises(Refusal):
            write(store, "w1", 2, "rev-w1-0")  # a stale base writes nothing
        assert store.version() == 3
        other = open_store(location, create=False)  # another connection sees the same number
        try:
            assert other.version() == 3
        finally:
            other.close()
    finally:
        store.close()


def test_a_failed_write_leaves_nothing_and_the_connection_writes_again(store: Store) -> None:
    seed(store)
    with pytest.raises(Refusal) as refused:  # a second work with a slug its project already has
        write(store, "w9", 1, None, slug="retry-w0")
    assert refused.value.code == "storage-error"

    def refuse(head: dict[str, Any] | None) -> Outcome:
        raise Refusal("invalid-intent", "no")

    with pytest.raises(Refusal) as refused:
        store.commit("w0", "rev-w0-1", "rev-w0-2", refuse)
    assert refused.value.code == "invalid-intent"
    assert store.work("w9") is None and [r["revision_id"] for r in store.revisions("w0")] == ["rev-w0-1"]
    assert write(store, "w0", 2, "rev-w0-1").replayed is False
    assert store.work("w0").head_revision_id == "rev-w0-2"  # type: ignore[union-attr]


def test_commit_many_stores_every_write_or_none(store: Store) -> None:
    """A fork's two revisions: a refusal (or a failure) in the second leaves the first unwritten too."""
    write(store, "parent", 1, None)

    def refuse(head: dict[str, Any] | None) -> Any:
        raise Refusal("invalid-fork", "the second half is wrong")

    child = Write("child", None, "rev-child-1", lambda head: outcome("child", 1, None))
    with pytest.raises(Refusal, match="second half"):
        store.commit_many([child, Write("parent", "rev-parent-1", "rev-parent-2", refuse)])
    assert store.work("child") is None and store.work("parent").head_number == 1  # type: ignore[union-attr]
    stale = Write("parent", "rev-parent-0", "rev-parent-2", lambda head: outcome("parent", 2, "rev-parent-1"))
    with pytest.raises(Refusal) as refused:
        store.commit_many([child, stale])
    assert refused.value.code == "unknown-base" and store.work("child") is None
    done = store.commit_many([child, Write("parent", "rev-parent-1", "rev-parent-2",
                                           lambda head: outcome("parent", 2, "rev-parent-1"))])  # fmt: skip
    assert [c.replayed for c in done] == [False, False]
    assert store.work("child").head_number == 1 and store.work("parent").head_number == 2  # type: ignore[union-attr]
    assert write(store, "parent", 3, "rev-parent-2").record["revision_number"] == 3  # still writes after refusals


def test_commit_stream_writes_all_or_none_and_counts_replays(store: Store) -> None:
    writes = [Write(f"s{n}", None, f"rev-s{n}-1", lambda head, n=n: outcome(f"s{n}", 1, None)) for n in range(5)]
    assert store.commit_stream(iter(writes)) == (5, 0)
    assert store.commit_stream(iter(writes)) == (0, 5)

    def broken() -> Iterator[Write]:
        yield Write("t0", None, "rev-t0-1", lambda head: outcome("t0", 1, None))
        raise Refusal("bundle-malformed", "cut short")

    with pytest.raises(Refusal, match="cut short"):
        store.commit_stream(broken())
    assert store.work("t0") is None


# --- lookups -------------------------------------------------------------------------------------------------------


def test_an_exact_slug_is_matched_in_every_project_or_in_one(store: Store) -> None:
    write(store, "a1", 1, None, slug="shared-name", project="alpha")
    write(store, "b1", 1, None, slug="shared-name", project="beta")
    assert {w.work_id for w in store.works_with_slug("shared-name", None)} == {"a1", "b1"}
    assert [w.work_id for w in store.works_with_slug("shared-name", "beta")] == ["b1"]
    assert store.works_with_slug("shared", None) == [] and store.works_with_slug("shared-name", "gamma") == []


def test_the_slugs_a_project_holds_are_told_among_many_names_in_batches(store: Store) -> None:
    """`slugs_held`: which names are slugs of the project's works, exactly (no pattern, no other project), for more
    names than one IN list binds (sql.IN_BATCH), repeated names counted once."""
    from wheypoint.store.sql import IN_BATCH

    for n in range(3):
        write(store, f"a{n}", 1, None, slug=f"held-{n}", project="alpha")
    write(store, "b0", 1, None, slug="held-in-beta", project="beta")
    names = [f"held-{n}" for n in range(2 * IN_BATCH + 7)] + ["held-1", "held-in-beta", "held-%", "HELD-0", ""]
    assert store.slugs_held("alpha", names) == {"held-0", "held-1", "held-2"}
    assert store.slugs_held("beta", names) == {"held-in-beta"}
    assert store.slugs_held("gamma", names) == set() and store.slugs_held("alpha", []) == set()
    assert store.slugs_held("alpha", [f"held-{n}" for n in range(IN_BATCH, 2 * IN_BATCH)] + ["held-2"]) == {"held-2"}
    # A project with more than three works for each name asked: the names are looked up, with the same answer.
    many = [f"held-{n}" for n in range(2, IN_BATCH + 2)]
    for n in range(3, 3 * len(many) + 2):
        write(store, f"c{n}", 1, None, slug=f"crowd-{n}", project="alpha")
    assert store.slugs_held("alpha", many) == {"held-2"} and store.slugs_held("alpha", many[:3]) == {"held-2"}


def test_a_prefix_stays_inside_the_project_asked_and_is_literal(store: Store) -> None:
    write(store, "a1", 1, None, slug="retry-backoff", project="alpha")
    write(store, "b1", 1, None, slug="retry-jitter", project="beta")
    write(store, "b2", 1, None, slug="retry_x", project="beta")
    assert [w.work_id for w in store.works_with_slug_prefix("retry", "alpha", 10)] == ["a1"]
    assert [w.work_id for w in store.works_with_slug_prefix("retry", None, 10)] == ["a1", "b1", "b2"]
    assert [w.work_id for w in store.works_with_slug_prefix("retry_", None, 10)] == ["b2"]  # `_` is no wildcard
    assert [w.work_id for w in store.works_with_slug_prefix("retry", None, 2)] == ["a1", "b1"]


@pytest.mark.parametrize("part", ["j", "ji", "jit", "y-j"])
def test_a_slug_part_of_any_length_is_found_by_index_or_scan(store: Store, part: str) -> None:
    write(store, "a1", 1, None, slug="retry-backoff", project="alpha")
    write(store, "b1", 1, None, slug="retry-jitter", project="beta")
    write(store, "b2", 1, None, slug="jumbo%x", project="beta")
    found = [w.work_id for w in store.works_with_slug_part(part, None, 10)]
    assert found == (["b2", "b1"] if part == "j" else ["b1"])
    assert store.works_with_slug_part(part, "alpha", 10) == []
    assert [w.work_id for w in store.works_with_slug_part("%", None, 10)] == ["b2"]  # `%` is no wildcard


def test_list_filters_and_grep_rank(store: Store) -> None:
    seed(store)
    assert [w.work_id for w in store.list_works(WorkQuery(grep=("backoff",), limit=10))] == [
        "w0",
        "w1",
        "w2",
    ]  # equal rank and time: by id
    assert store.list_works(WorkQuery(grep=("nothing-like-this",))) == []
    assert store.list_works(WorkQuery(projects=("proj",), owners=("ann",))) == []
    write(store, "w1", 2, "rev-w1-1")  # the newest head comes first
    decided = WorkQuery(projects=("proj",), entry_kinds=("decision",), entry_states=("active",))
    assert [w.work_id for w in store.list_works(decided)] == ["w1", "w0", "w2"]
    assert [w.work_id for w in store.list_works(WorkQuery(linked_to=("a.py",), limit=2))] == ["w1", "w0"]
    assert store.list_works(WorkQuery(projects=("other",))) == []


def test_a_head_s_query_rows_are_rewritten_only_where_its_record_changed_them(store: Store) -> None:
    """A revision that changes no entry, edge, link or searched text (a rescue's: it adds turns) leaves those rows as
    they are, for they describe the head before it, which held the same; one that changes them rewrites exactly
    those. Either way every query answers from the new head."""
    from wheypoint.store.sql import SqlStore

    write(store, "w0", 1, None)
    first = outcome("w0", 1, None).record

    def revision(number: int, **changes: Any) -> Outcome:
        made = outcome("w0", number, f"rev-w0-{number - 1}")
        made.record.update({key: first[key] for key in ("entries", "edges", "artifact_links")}, **changes)
        return made

    assert isinstance(store, SqlStore)
    ran: list[str] = []
    run = store._run

    def counted(sql: str, args: tuple[Any, ...], **options: Any) -> list[tuple[Any, ...]]:
        ran.append(sql.split(" (")[0].split(" WHERE")[0])
        return run(sql, args, **options)

    searched: list[str] = []
    search = store._write_search

    def indexed(work_id: str, record: dict[str, Any], first: bool = False) -> None:
        searched.append(work_id)
        search(work_id, record, first)

    store._run, store._write_search = counted, indexed  # type: ignore[method-assign]
    store.commit("w0", "rev-w0-1", "rev-w0-2", lambda head: revision(2, meat=[{"turn": "t1", "text": "More."}]))
    derived = ("DELETE", "INSERT INTO entries", "INSERT INTO edges", "INSERT INTO artifact_links")
    assert not [sql for sql in ran if sql.startswith(derived)] and searched == [], ran
    for query in (WorkQuery(grep=("backoff",)), WorkQuery(entry_kinds=("decision",)), WorkQuery(linked_to=("a.py",)),
                  WorkQuery(linked_to=("other-work",))):  # fmt: skip
        assert [w.work_id for w in store.list_works(query)] == ["w0"], query
    ran.clear()
    later = revision(
        3,
        orientation="Now the cache.",
        edges=[],
        entries=[*first["entries"], {**first["entries"][0], "id": "e9", "kind": "question"}],
    )
    store.commit("w0", "rev-w0-2", "rev-w0-3", lambda head: later)
    assert {"DELETE FROM entries", "DELETE FROM edges", "INSERT INTO entries"} <= set(ran) and searched == ["w0"], ran
    assert "DELETE FROM artifact_links" not in ran and "INSERT INTO artifact_links" not in ran, ran
    store._run, store._write_search = run, search  # type: ignore[method-assign]
    assert [w.work_id for w in store.list_works(WorkQuery(grep=("cache",)))] == ["w0"]
    assert store.list_works(WorkQuery(grep=("gateway client",))) == []
    assert store.list_works(WorkQuery(linked_to=("other-work",))) == []
    assert [w.work_id for w in store.list_works(WorkQuery(entry_kinds=("question",)))] == ["w0"]
    assert [w.work_id for w in store.list_works(WorkQuery(linked_to=("a.py",)))] == ["w0"]


def test_a_work_s_first_head_deletes_no_rows_and_its_rows_answer_every_query(store: Store) -> None:
    """A first revision's works row is new, so no query table can hold a row of it: its write runs no DELETE (nor
    the search row's), and its rows answer every query as a later head's do. A work's second head still replaces
    the first's rows."""
    from wheypoint.store.sql import SqlStore

    seed(store, 1)  # another work's rows sit beside it
    assert isinstance(store, SqlStore)
    ran: list[str] = []
    run = store._run

    def counted(sql: str, args: tuple[Any, ...], **options: Any) -> list[tuple[Any, ...]]:
        ran.append(sql)
        return run(sql, args, **options)

    store._run = counted  # type: ignore[method-assign]
    write(store, "w7", 1, None)
    assert not [sql for sql in ran if "DELETE" in sql.upper()], ran
    store._run = run  # type: ignore[method-assign]
    for query in (WorkQuery(grep=("backoff",)), WorkQuery(entry_kinds=("decision",)), WorkQuery(linked_to=("a.py",))):
        assert "w7" in [w.work_id for w in store.list_works(query)], query
    second = outcome("w7", 2, "rev-w7-1")
    second.record.update(orientation="Now the cache.", edges=[], entries=[], artifact_links=[])
    store.commit("w7", "rev-w7-1", "rev-w7-2", lambda head: second)
    assert "w7" not in [w.work_id for w in store.list_works(WorkQuery(grep=("backoff",)))]
    assert "w7" in [w.work_id for w in store.list_works(WorkQuery(grep=("cache",)))]
    assert "w7" not in [w.work_id for w in store.list_works(WorkQuery(entry_kinds=("decision",)))]
    assert "w7" not in [w.work_id for w in store.list_works(WorkQuery(linked_to=("a.py",)))]


def test_records_reads_the_heads_of_many_works_at_once_as_record_does(store: Store) -> None:
    """One read for many heads (the inbox's page of gates): the same records `record` gives, a work not in the
    store left out, a name given twice read once, and more ids than one IN list holds."""
    from wheypoint.store.sql import IN_BATCH

    seed(store, 3)
    write(store, "w1", 2, "rev-w1-1")
    assert store.records([]) == {}
    got = store.records(["w2", "w1", "nowhere", "w1"])
    assert got == {"w2": store.record("w2"), "w1": store.record("w1")} and got["w1"]["revision_number"] == 2
    for index in range(IN_BATCH + 1):
        write(store, f"many-{index:04d}", 1, None)
    many = [f"many-{index:04d}" for index in range(IN_BATCH + 1)]
    assert sorted(store.records(many)) == many  # (in no promised order)


def test_records_refuses_a_head_changed_in_the_store(location: str, store: Store) -> None:
    """As `record` does: a head whose bytes changed in its row is refused `record-corrupt`, never served."""
    seed(store, 2)
    raw(location, "UPDATE revisions SET record_json = replace(record_json, 'w1', 'w7') WHERE revision_id = 'rev-w1-1'")
    with pytest.raises(Refusal) as refused:
        store.records(["w0", "w1"])
    assert refused.value.code == "record-corrupt"
    assert store.records(["w0"]) == {"w0": store.record("w0")}


def test_history_reads_every_revision_with_its_record_and_author_at_once_as_record_does(
    location: str, store: Store
) -> None:
    """A work's revisions oldest first, each the receipt `revisions` gives and the record `record` gives at it;
    a revision whose record bytes changed in its row is refused `record-corrupt`, and another work reads on."""
    seed(store, 2)
    write(store, "w1", 2, "rev-w1-1")
    write(store, "w1", 3, "rev-w1-2")
    history = store.history("w1")
    assert [r.receipt for r in history] == store.revisions("w1")
    assert [r.record for r in history] == [store.record("w1", f"rev-w1-{n}") for n in (1, 2, 3)]
    assert [r.record["revision_number"] for r in history] == [1, 2, 3] and history[-1].record == store.record("w1")
    assert {r.author for r in history} == {None}
    assert store.history("nowhere") == []
    raw(location, "UPDATE revisions SET record_json = replace(record_json, 'w1', 'w7') WHERE revision_id = 'rev-w1-2'")
    with pytest.raises(Refusal) as refused:
        store.history("w1")
    assert refused.value.code == "record-corrupt"
    assert [r.record for r in store.history("w0")] == [store.record("w0")]


def test_a_store_not_made_yet_reads_as_empty(location: str) -> None:
    store = open_store(location, create=False)
    try:
        assert store.work("w0") is None and store.record("w0") is None and store.revisions("w0") == []
        assert store.history("w0") == []
        assert store.works_with_slug("x", None) == [] and store.works_with_slug_prefix("x", None, 5) == []
        assert store.works_with_slug_part("xyz", None, 5) == [] and store.list_works(WorkQuery(grep=("x",))) == []
    finally:
        store.close()
    if not is_postgres(location):
        assert not Path(location).exists()


# --- refusals ------------------------------------------------------------------------------------------------------

_READS: dict[str, Callable[[Store], Any]] = {
    "work": lambda s: s.work("w0"),
    "work_by_slug": lambda s: s.work_by_slug("proj", "retry-w0"),
    "work_of_revision": lambda s: s.work_of_revision("rev-w0-1"),
    "record": lambda s: s.record("w0"),
    "record at a revision": lambda s: s.record("w0", "rev-w0-1"),
    "records": lambda s: s.records(["w0", "w1"]),
    "revisions": lambda s: s.revisions("w0"),
    "history": lambda s: s.history("w0"),
    "works_with_slug": lambda s: s.works_with_slug("retry-w0", None),
    "works_with_slug_prefix": lambda s: s.works_with_slug_prefix("retry", None, 5),
    "works_with_slug_part": lambda s: s.works_with_slug_part("etry", None, 5),
    "works_with_slug_part, short": lambda s: s.works_with_slug_part("et", "proj", 5),
    "list_works": lambda s: s.list_works(WorkQuery(grep=("backoff",))),
    "list_works, filters": lambda s: s.list_works(WorkQuery(projects=("proj",), owners=("ann",))),
}


def test_every_driver_error_is_a_storage_error_naming_the_store(location: str) -> None:
    seeding = open_store(location, create=True)
    seed(seeding)
    seeding.close()
    raw(
        location,
        *(f"DROP TABLE {t}{' CASCADE' if is_postgres(location) else ''}" for t in ("works", "revisions", "search")),
    )
    for create in (False, True):
        store = open_store(location, create=create)
        calls = dict(_READS, commit=lambda s: write(s, "w9", 1, None)) if create else _READS
        for name, call in calls.items():
            with pytest.raises(Refusal) as refused:
                call(store)
            assert refused.value.code == "storage-error", name
            shown = location.split("@")[-1] if is_postgres(location) else location
            assert shown in refused.value.message and ("works" in refused.value.message
                                                       or "revisions" in refused.value.message), name  # fmt: skip
        store.close()


def test_a_lock_held_past_the_timeout_is_store_busy_and_the_write_then_lands(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wheypoint.store.sqlite import backend

    monkeypatch.setattr(backend, "BUSY_TIMEOUT_MS", 50)
    if is_postgres(location):
        location += "?options=-c%20lock_timeout%3D100"  # the URL's own settings win over the default 15 s
    store = open_store(location, create=True)
    seed(store)
    holder = hold_write_lock(location, "w0")
    try:
        with pytest.raises(Refusal) as refused:
            write(store, "w0", 2, "rev-w0-1")
        assert refused.value.code == "store-busy"
    finally:
        holder()
    assert write(store, "w0", 2, "rev-w0-1").revision["revision_id"] == "rev-w0-2"
    store.close()


def hold_write_lock(location: str, work_id: str) -> Callable[[], None]:
    """Take the lock a writer of `work_id` needs, from another connection; answers the function that frees it."""
    if is_postgres(location):
        import psycopg

        from wheypoint.store.postgres.backend import LOCK_BUCKETS, WORK_LOCK

        conn = psycopg.connect(location.partition("?")[0])
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s) & %s)", (WORK_LOCK, work_id, LOCK_BUCKETS - 1))
    else:
        conn = sqlite3.connect(location, isolation_level=None)  # type: ignore[assignment]
        conn.execute("BEGIN IMMEDIATE")

    def free() -> None:
        conn.rollback()
        conn.close()

    return free


def test_the_newest_heads_holding_a_value_are_read_in_order_and_the_others_left_unparsed(
    store: Store, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def put(work_id: str, number: int, session: str | None, project: str = "proj") -> None:
        def build(head: dict[str, Any] | None) -> Outcome:
            made = outcome(work_id, number, None)
            made.record["project_key"] = project
            if session is not None:
                made.record["session"] = {"harness": "claude-code", "id": session}
            return made

        store.commit(work_id, None, f"rev-{work_id}-{number}", build)

    put("a", 1, "sid-1")
    put("b", 2, None)
    put("c", 3, "sid-2")
    put("d", 4, "sid-1")
    put("e", 5, "sid-1", project="other")  # another project's
    put("f", 6, "sid-1")
    put("g", 7, 'odd"id')
    assert [r["work_id"] for r in store.newest_heads_holding("proj", "sid-1", 20)] == ["f", "d", "a"]
    assert [r["work_id"] for r in store.newest_heads_holding("proj", "sid-1", 3)] == ["f", "d"]  # g, f, d: the 3
    assert list(store.newest_heads_holding("proj", "sid-9", 20)) == []
    # a value a writer may have spelled otherwise: every head is parsed, and the caller's check decides
    assert [r["work_id"] for r in store.newest_heads_holding("proj", 'odd"id', 20)] == ["g", "f", "d", "c", "b", "a"]
    from wheypoint.model import integrity

    parsed: list[str] = []
    real = integrity.intact
    monkeypatch.setattr(integrity, "intact", lambda work_id, *rest: parsed.append(work_id) or real(work_id, *rest))
    assert next(store.newest_heads_holding("proj", "sid-1", 20)) == store.record("f")
    assert parsed == ["f", "f"]  # the newest that may hold it, then `record`'s own read: "d" and "a" never parsed
    parsed.clear()  # a work the caller's filter refuses is passed over with its head unread, and still counts
    asked: list[str] = []
    holding = store.newest_heads_holding("proj", "sid-1", 3, lambda work_id: asked.append(work_id) or work_id != "f")
    assert [r["work_id"] for r in holding] == ["d"] and asked == ["g", "f", "d"] and parsed == ["d"]
    monkeypatch.undo()
    # a damaged head is left out, never refused: another work's damage must not cost the caller
    raw(location, "UPDATE revisions SET record_json = replace(record_json, 'retry', 'RETRY') WHERE work_id = 'd'")
    assert [r["work_id"] for r in store.newest_heads_holding("proj", "sid-1", 20)] == ["f", "a"]
