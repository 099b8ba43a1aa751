"""The inbox a page at a time: every gate and every work reachable by its links, the counts said, bad pages refused."""

from __future__ import annotations

import html
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import BACKENDS, fresh_database, make_repo
from test_serve import STORES, Server, _env, answering, cli, gated_intent, repo  # noqa: F401 (fixtures)
from wheypoint.app import inbox
from wheypoint.app.context import Context
from wheypoint.web import server
from wheypoint.web.pages import inbox_page

GATED, CALM = 7, 5  # with 3 gates and 4 works a page (patched below): three pages of gates, three of works


class Inbox:
    """The inbox drawn in process as the server draws it, its address parsed by the server's own functions."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.now = time.time()  # one clock for every page, so that two reads of one page draw the same ages

    def get(self, address: str) -> str:
        query = urlsplit(address).query
        gate_page, page = server._pages(query)
        return inbox_page(inbox.inbox(self.ctx, server._filters(query), gate_page, page), "csrf", self.now)


class Built:
    """A store built once for the module on one backend: its home, checkout and (PostgreSQL) database."""

    def __init__(self, home: Path, checkout: Path, url: str | None) -> None:
        self.home, self.checkout, self.url = home, checkout, url


@pytest.fixture(scope="module", params=BACKENDS)
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """GATED gated works (the last with two gates) and CALM others, written once per backend by the CLI: the
    first three gates a second apart (the store keeps whole seconds), so they are the oldest, in order."""
    root = tmp_path_factory.mktemp(f"paged-{request.param}")
    home, checkout = root / "home", make_repo(root / "shop", {"retry.py": "10\n"})
    url = None
    if request.param == "postgresql":
        url = fresh_database(request.getfixturevalue("postgres_server"), f"paged_{os.getpid()}")
        STORES[home] = url
    try:
        for index in range(GATED):
            intent = gated_intent(f"gated-{index}", f"Question {index}?")
            if index == GATED - 1:
                intent["questions"].append({"text": "Question extra?", "gates": True, "rationale": "Also.",
                                            "owner": "ann"})  # fmt: skip
            cli(home, checkout, "checkpoint", "-", stdin=json.dumps(intent))
            if index < 3:
                time.sleep(1.05)
        for index in range(CALM):
            cli(home, checkout, "checkpoint", f"calm-{index}", "--orientation", f"Calm {index}.", "--next", "hold",
                "--notes", "N.")  # fmt: skip
        yield Built(home, checkout, url)
    finally:
        STORES.pop(home, None)
        if url:
            drop_database(request.getfixturevalue("postgres_server"), url)


@pytest.fixture
def paged(built: Built, request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Inbox]:  # fmt: skip
    """The built store, copied for this test (one test alters its schema), read in process; small pages."""
    home = tmp_path / "home"
    if built.url is None:
        home.mkdir()
        source = sqlite3.connect(built.home / "store.sqlite3")
        target = sqlite3.connect(home / "store.sqlite3")
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
    else:
        STORES[home] = copied_database(request.getfixturevalue("postgres_server"), built.url, tmp_path.name)
    try:
        monkeypatch.setattr(inbox, "GATES_PER_PAGE", 3)
        monkeypatch.setattr(inbox, "WORKS_PER_PAGE", 4)
        yield Inbox(Context(cwd=str(built.checkout), environ=_env(home)))
    finally:
        copy = STORES.pop(home, None)
        if copy:
            drop_database(request.getfixturevalue("postgres_server"), copy)


def drop_database(server: str, url: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{url.rpartition("/")[2].partition("?")[0]}" WITH (FORCE)')


def copied_database(server: str, url: str, label: str) -> str:
    """A new database on the server made from the one at `url` (its template), and the new one's URL."""
    import hashlib

    import psycopg

    name = "c_" + hashlib.sha256(f"{label}-{os.getpid()}".encode()).hexdigest()[:16]
    template = url.rpartition("/")[2].partition("?")[0]
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    head, _, tail = server.rpartition("/")
    return f"{head}/{name}" + ("?" + tail.partition("?")[2] if "?" in tail else "")


def links(body: str, rel: str) -> list[str]:
    return [html.unescape(href) for href in re.findall(rf'<a href="([^"]+)" rel="{rel}">', body)]


def follow(paged: Inbox, what: str) -> list[str]:
    """Every inbox page from the first, following its "N more <what> — next page" link, until there is none."""
    bodies, address = [], "/"
    while address:
        bodies.append(paged.get(address))
        onward = re.findall(rf'<a href="([^"]+)" rel="next">[0-9,]+ more {what} — next page</a>', bodies[-1])
        address = html.unescape(onward[0]) if onward else ""
        assert len(bodies) < 10
    return bodies


def test_every_gate_is_reached_across_pages_oldest_first_and_the_count_is_said(paged: Inbox) -> None:
    bodies = follow(paged, "gates")
    assert len(bodies) == 3 and all("8 open gates" in body for body in bodies)
    questions = [re.findall(r"<li>Question (\w+)\?", body) or re.findall(r"Question (\w+)\?</", body)
                 for body in bodies]  # fmt: skip
    gates = [re.findall(r'name="entry" value="([^"]+)"', body) for body in bodies]
    assert [len(page) for page in gates] == [3, 3, 2]
    assert len({g for page in gates for g in page}) == 8  # each gate once, none left out
    assert "Question 0?" in bodies[0] and "Question 1?" in bodies[0] and "Question 2?" in bodies[0]
    assert "Question extra?" in "".join(bodies[1:]) and questions  # oldest first: the first three were first
    assert "Gates 1–3 of 8 (page 1 of 3)" in bodies[0] and "5 more gates — next page" in bodies[0]
    assert "Gates 4–6 of 8 (page 2 of 3)" in bodies[1] and "2 more gates — next page" in bodies[1]
    assert "Gates 7–8 of 8 (page 3 of 3)" in bodies[2] and "more gates" not in bodies[2]
    assert links(bodies[2], "prev")[0] == "/?gate_page=2"


def test_every_work_is_reached_across_pages_newest_first(paged: Inbox) -> None:
    bodies = follow(paged, "works")
    assert len(bodies) == 3 and "Works 1–4 of 12 (page 1 of 3)" in bodies[0] and "8 more works" in bodies[0]
    rows = [re.findall(r'<tr><td><a href="/work/([^"]+)">', body) for body in bodies]
    assert [len(r) for r in rows] == [4, 4, 4]
    assert len({w for r in rows for w in r}) == GATED + CALM
    # newest first, as list orders them (by the time of each head, then by id): each page the next four of them
    from wheypoint.store.rows import WorkQuery

    store = paged.ctx.open_store(create=False)
    try:
        listed = [w.work_id for w in store.list_works(WorkQuery(limit=100))]
    finally:
        store.close()
    # (each page shows its works grouped by status, so the order holds from page to page, not within one)
    assert [set(r) for r in rows] == [set(listed[at : at + 4]) for at in range(0, len(listed), 4)]
    assert listed.index(next(w for w in listed if w.startswith("gated-0"))) >= 8  # the oldest is on the last page


def test_paging_keeps_the_filters_and_a_page_past_the_end_says_where_the_rest_is(paged: Inbox) -> None:
    body = paged.get("/?project=shop&gate_page=2")
    assert "8 open gates" in body and 'value="shop"' in body
    assert links(body, "next")[0] == "/?project=shop&gate_page=3"
    owner = paged.get("/?owner=ann")
    # The filters select works, as list does: the one work with an entry of that owner, and both its gates.
    assert "2 open gates" in owner and "Question extra?" in owner and "Question 6?" in owner
    assert "more gates" not in owner
    beyond = paged.get("/?gate_page=9")
    assert "No gates on page 9: the 8 gates are on pages 1–3." in beyond
    assert '<a href="/?gate_page=3">Page 3</a>' in beyond
    assert "No works on page 9: the 12 works are on pages 1–3." in paged.get("/?page=9")


def test_a_bad_page_is_refused_400_in_words(answering: Server) -> None:  # noqa: F811
    for query in ("page=0", "page=-1", "page=x", "page=1.5", "page=", "gate_page=0", "gate_page=1e3",
                  "page=1&page=2", "gate_page=9999999", "page=%ff"):  # fmt: skip
        page = answering.request("GET", f"/?{query}")
        assert page.status == 400, (query, page.status)
        assert "Bad page" in page.body and ("page number" in page.body or "UTF-8" in page.body), query
        assert "Traceback" not in page.body
    assert answering.request("GET", "/?page=1&gate_page=1").status == 200


def _raw(paged: Inbox, *statements: str) -> list[tuple[object, ...]]:
    """Run SQL on the inbox's store through a connection of its own (not wheypoint's); the last one's rows."""
    url = STORES.get(Path(paged.ctx.environ["WHEYPOINT_HOME"]))
    if url:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            for sql in statements[:-1]:
                conn.execute(sql)
            return [tuple(row) for row in conn.execute(statements[-1]).fetchall()]
    import sqlite3

    conn = sqlite3.connect(Path(paged.ctx.environ["WHEYPOINT_HOME"]) / "store.sqlite3", isolation_level=None)
    try:
        for sql in statements[:-1]:
            conn.execute(sql)
        return conn.execute(statements[-1]).fetchall()
    finally:
        conn.close()


def test_a_store_from_before_gate_ages_is_migrated_and_pages_its_gates_the_same(paged: Inbox) -> None:
    """The gate-age column is filled from every head's record by the migration that adds it (no write needed)."""
    before = follow(paged, "gates")
    asked = "SELECT work_id, entry_id, added_in FROM entries WHERE gates = 1 ORDER BY work_id, entry_id"
    filled = _raw(paged, asked)
    assert len(filled) == GATED + 1 and all(row[2] == 1 for row in filled)
    if STORES.get(Path(paged.ctx.environ["WHEYPOINT_HOME"])):
        # As a team store of the runtime before: without the later steps' table either (the open gates' index goes
        # with the column it holds).
        back = ["DROP TABLE revision_counts", "UPDATE wheypoint_schema SET version = 6"]
    else:
        back = ["PRAGMA user_version = 7"]
    _raw(paged, "ALTER TABLE entries DROP COLUMN added_in", *back, "SELECT 1")
    assert paged.get("/").count("Question") >= 3  # opening migrates it: the first read brings the column back
    assert _raw(paged, asked) == filled
    assert follow(paged, "gates") == before
