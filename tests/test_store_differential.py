"""Differential: the same commits and queries, generated at random, give the same answers on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_store import Outcome
from wheypoint.model.canonical import digest
from wheypoint.model.errors import Refusal
from wheypoint.store import open_store
from wheypoint.store.base import Store
from wheypoint.store.rows import WorkQuery

WORDS = ("backoff", "gateway", "retry", "jitter", "cache", "schema", "token", "queue")
SLUGS = ("retry-backoff", "retry-jitter", "cache-warm", "queue", "re-try", "schema-v2")
PROJECTS = ("alpha", "beta")
KINDS = ("decision", "directive", "question", "blocker")
STATES = ("active", "resolved", "superseded")
OWNERS = (None, "ann", "bob")
pytestmark = pytest.mark.slow

TABLES = ("imports", "search", "artifact_links", "edges", "entries", "revisions", "works")


@pytest.fixture(scope="module")
def pg_database(postgres_server: str) -> Iterator[str]:
    import psycopg

    from conftest import fresh_database

    yield fresh_database(postgres_server, "t_differential")
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute('DROP DATABASE IF EXISTS "t_differential" WITH (FORCE)')


@pytest.fixture
def stores(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    yield str(tmp_path_factory.mktemp("diff") / "store.sqlite3"), pg_database


def _emptied(pg: str, folder: Path) -> tuple[Store, Store]:
    """A new SQLite store and the PostgreSQL one with every table emptied (a new database per example is slow)."""
    store = open_store(pg, create=True)
    import psycopg

    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute(f"TRUNCATE {', '.join(TABLES)}")  # type: ignore[arg-type]
    return open_store(folder / "store.sqlite3", create=True), store


entry = st.fixed_dictionaries({
    "kind": st.sampled_from(KINDS), "state": st.sampled_from(STATES), "gates": st.booleans(),
    "owner": st.sampled_from(OWNERS), "text": st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
})  # fmt: skip
commit_op = st.tuples(
    st.just("commit"),
    st.integers(0, 4),
    st.booleans(),  # which work, whether the base is right
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),  # orientation
    st.lists(entry, max_size=4),
    st.lists(st.sampled_from([*SLUGS, "a.py", "wheypoint:alpha/queue"]), max_size=3),
    st.sampled_from(("ok", "gated: a human decides")),
)
scope = st.sampled_from((None, *PROJECTS))
prefixes = st.sampled_from(("r", "re", "retry", "retry-", "q", "c", "x"))
parts = st.sampled_from(("e", "tr", "try", "RY-", "-", "warm", "v2", "zz"))
list_op = st.tuples(
    st.just("list"),
    st.lists(st.sampled_from(WORDS), max_size=2),
    st.lists(st.sampled_from(KINDS), max_size=2),
    st.lists(st.sampled_from(STATES), max_size=1),
    st.lists(st.sampled_from(("ann", "bob")), max_size=1),
    st.sampled_from((None, True, False)),
    st.lists(st.sampled_from(SLUGS), max_size=1),
)
query_op = st.one_of(
    st.tuples(st.just("slug"), st.sampled_from(SLUGS), scope),
    st.tuples(st.just("prefix"), prefixes, scope),
    st.tuples(st.just("part"), parts, scope),
    list_op,
)


def _work(index: int) -> tuple[str, str, str]:
    slug = SLUGS[index % len(SLUGS)]
    project = PROJECTS[index % 2]
    return f"{slug}.{index:08x}", slug, project


def _commit(store: Store, op: tuple[Any, ...]) -> Any:
    _, index, right_base, orientation, entries, refs, status = op
    work_id, slug, project = _work(index)
    head = store.record(work_id)
    number = head["revision_number"] + 1 if head else 1
    parent = head["revision_id"] if head else None
    base = parent if right_base else ("rev-wrong" if head else None)
    record = {
        "work_id": work_id, "project_key": project, "slug": slug, "revision_id": f"rev-{work_id}-{number}",
        "revision_number": number, "parent_revision_id": parent, "status": status, "next": {"move": "hold"},
        "orientation": orientation, "notes": orientation, "created_at": "2026-01-01T00:00:00Z",
        "updated_at": f"2026-01-01T00:{number:02d}:{index:02d}Z",
        "entries": [{**e, "id": f"e{n}"} for n, e in enumerate(entries)],
        "edges": [{"ref": ref, "kind": "relates_to"} for ref in dict.fromkeys(refs)],
        "artifact_links": [{"ref": ref, "digest": None} for ref in dict.fromkeys(refs) if ref.endswith(".py")],
        "working_context": [],
    }  # fmt: skip
    record["record_digest"] = digest(record)  # the store serves a record only when its digest is true
    revision = {"revision_id": record["revision_id"], "revision_number": number, "parent_revision_id": parent,
                "captured_at": record["updated_at"]}  # fmt: skip
    try:
        done = store.commit(work_id, base, record["revision_id"], lambda h: Outcome(record, revision))
    except Refusal as refusal:
        return ("refused", refusal.code, refusal.details.get("head_revision_id"))
    return ("committed", done.revision["revision_id"], done.replayed)


def _query(store: Store, op: tuple[Any, ...]) -> Any:
    if op[0] == "slug":
        return sorted(store.works_with_slug(op[1], op[2]))
    if op[0] == "prefix":
        return store.works_with_slug_prefix(op[1], op[2], 4)
    if op[0] == "part":
        return store.works_with_slug_part(op[1], op[2], 4)
    _, grep, kinds, states, owners, gated, linked = op
    query = WorkQuery(grep=tuple(grep), entry_kinds=tuple(kinds), entry_states=tuple(states), owners=tuple(owners),
                      gated=gated, linked_to=tuple(linked), limit=100)  # fmt: skip
    rows = store.list_works(query)
    # Ranking is each backend's own (bm25 against ts_rank): with --grep the same works, in any order.
    return sorted(rows) if grep else rows


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(st.one_of(commit_op, query_op), min_size=1, max_size=25))
def test_both_backends_answer_every_commit_and_query_alike(
    stores: tuple[str, str], tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[Any, ...]]
) -> None:
    sqlite, pg = _emptied(stores[1], tmp_path_factory.mktemp("example"))
    try:
        for op in ops:
            run = _commit if op[0] == "commit" else _query
            assert run(sqlite, op) == run(pg, op), op
        for index in range(5):
            work_id = _work(index)[0]
            assert sqlite.revisions(work_id) == pg.revisions(work_id)
            assert sqlite.record(work_id) == pg.record(work_id)
            ref = sqlite.work(work_id)
            assert ref == pg.work(work_id)
            if ref is not None:
                assert sqlite.backlinks(ref) == pg.backlinks(ref)
    finally:
        sqlite.close()
        pg.close()
