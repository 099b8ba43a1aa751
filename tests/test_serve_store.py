"""`serve` draws each page through one store: one open per request, and on a team store no new connection and a
pinned number of statements, however many app functions the page is drawn from.

The store is built by the real CLI (subprocesses, as in test_serve.py); the server is `serve`'s own, bound in this
process (web/server.bound) and driven over HTTP, so the opens, connections and statements of each request can be
counted where they happen: `wheypoint.store.open_store`, `psycopg.connect`, and the statements psycopg runs.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import BACKENDS, both_backends, make_repo
from test_serve import STORES, _env, cli, gated_intent
from wheypoint.app.context import Context
from wheypoint.web.server import bound

# The statements a page runs on a team store once its connection is kept: the store's version with the schema's
# (one statement), then the page's own reads, each asked once however many functions draw from it. The inbox: a
# page of gates with their count and their works' head records, a page of works, and their count (which a
# ranked `grep` list reads with its rows). A work: the work, its history (the head is its last record) and its
# backlinks, then the works the lineage's walk (`graph`) reaches one edge further out, here the one linking to
# it, all in one statement (their rows, head records and backlinks: Store.heads_and_backlinks; it was three a
# work before). A diff: the work and its history (a short one, read whole: its receipts and the two records).
STATEMENTS = {"inbox": 4, "inbox ?grep=": 3, "inbox ?owner=": 4, "work": 4 + 1, "diff": 3, "changes": 1}


class Serving:
    """`serve` answering in a thread of this process, logged in, its reads counted per request."""

    def __init__(self, ctx: Context, counted: Counter[str], work_id: str) -> None:
        self.team = "WHEYPOINT_STORE" in ctx.environ  # a PostgreSQL database, else the SQLite file
        self.work_id = work_id
        self.server, guard = bound(ctx, "127.0.0.1", 0)
        self.host, self.port = "127.0.0.1", int(self.server.server_address[1])
        self.counted = counted
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        status, headers, _ = self.get(f"/?token={guard.token}", cookie="")
        assert status == 303, status
        self.cookie = headers["set-cookie"].split(";")[0]

    def get(self, path: str, cookie: str | None = None) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        conn.request("GET", path, headers={"Host": f"{self.host}:{self.port}", "Cookie": self.cookie
                                           if cookie is None else cookie})  # fmt: skip
        reply = conn.getresponse()
        body = reply.read().decode("utf-8")
        conn.close()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, body

    def counts(self, path: str) -> Counter[str]:
        """What one request for `path` opened, connected and ran; the page must be drawn (200)."""
        self.counted.clear()
        status, _, body = self.get(path)
        assert status == 200 and "Traceback" not in body, (path, status, body[:500])
        return Counter(self.counted)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def counting(monkeypatch: pytest.MonkeyPatch, *, team: bool) -> Counter[str]:
    """What this process opens, and on a team store connects and runs, counted where it happens."""
    import wheypoint.store

    counted: Counter[str] = Counter()
    opened = wheypoint.store.open_store

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        counted["opens"] += 1
        return opened(*args, **kwargs)

    monkeypatch.setattr(wheypoint.store, "open_store", counting_open)
    if team:
        import psycopg

        connect, execute = psycopg.connect, psycopg.Cursor.execute

        def counting_connect(*args: Any, **kwargs: Any) -> Any:
            counted["connections"] += 1
            return connect(*args, **kwargs)

        def counting_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
            counted["statements"] += 1
            return execute(self, *args, **kwargs)

        monkeypatch.setattr(psycopg, "connect", counting_connect)
        monkeypatch.setattr(psycopg.Cursor, "execute", counting_execute)
    return counted


@pytest.fixture(params=BACKENDS)
def serving(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Serving]:
    """Two works on one backend (a gated one with two revisions and ann's gate, and one that links to it), served."""
    home, repo = tmp_path / "home", make_repo(tmp_path / "shop", {"retry.py": "10\n"})
    url = both_backends(request)
    if url:
        STORES[home] = url
    try:
        first = cli(home, repo, "checkpoint", "-", stdin=json.dumps(gated_intent(
            "retry", owner="ann", orientation="Retry policy, tombstone sweep.")))  # fmt: skip
        cli(home, repo, "checkpoint", "retry", "--base", first["revision_id"], "--orientation", "Backoff, tombstone.",
            "--decision", "Cap at 20 s.", "--rationale", "Ops asked.")  # fmt: skip
        other = cli(home, repo, "checkpoint", "other", "--orientation", "Other.", "--next", "hold", "--notes", "N.")
        cli(home, repo, "link", "other", "retry", "--kind", "relates_to", "--base", other["revision_id"])
        counted = counting(monkeypatch, team=bool(url))
        running = Serving(Context(cwd=str(repo), environ=_env(home)), counted, first["work_id"])
        try:
            yield running
        finally:
            running.stop()
    finally:
        STORES.pop(home, None)


def pages(work_id: str) -> dict[str, str]:
    return {"inbox": "/", "inbox ?grep=": "/?grep=tombstone", "inbox ?owner=": "/?owner=ann",
            "work": f"/work/{work_id}", "diff": f"/work/{work_id}/diff", "changes": "/changes?since=1"}  # fmt: skip


def test_every_page_opens_the_store_once_and_a_team_store_connects_once_for_them_all(serving: Serving) -> None:
    team = serving.team
    first = serving.counts("/")
    assert first["opens"] == 1 and first["connections"] == (1 if team else 0)
    for name, path in pages(serving.work_id).items():
        for _ in range(2):  # the second time as the first: nothing of one request is left for the next
            done = serving.counts(path)
            assert done["opens"] == 1, (name, done)
            if team:
                assert done["connections"] == 0, (name, done)  # the kept connection serves every request
                assert done["statements"] == STATEMENTS[name], (name, done)
    health = serving.counts("/health")  # doctor reads the whole store, through the page's one store too
    assert health["opens"] == 1 and health["connections"] == 0, health


def test_the_pages_drawn_through_one_store_say_what_the_store_holds(serving: Serving) -> None:
    work_id = serving.work_id
    _, _, work = serving.get(f"/work/{work_id}")
    assert "Backoff, tombstone." in work and "r2" in work and "Which cap?" in work  # head, revisions, its gate
    assert "relates_to this work" in work  # the backlink of the work that links to it
    _, _, diff = serving.get(f"/work/{work_id}/diff")
    assert "From r1 to r2" in diff and "Cap at 20 s." in diff
    _, _, grep = serving.get("/?grep=tombstone")
    assert "1 open gate" in grep and "Which cap?" in grep
    _, _, owned = serving.get("/?owner=ann")
    assert "1 open gate" in owned and "Works 1" not in owned  # both works fit on the first page
    _, _, changes = serving.get("/changes?since=4")
    assert json.loads(changes) == {"version": 4, "changed": False}  # two revisions, a third work, the link's


def lineage_works(home: Path, repo: Path) -> dict[str, str]:
    """alpha, forked to beta, which joined gamma into retry-all, and other, which links to alpha, written by the CLI
    in this order: each work's id by its slug."""
    made = {}
    for slug in ("alpha", "gamma"):
        done = cli(home, repo, "checkpoint", slug, "--orientation", f"{slug} work.", "--next", "hold", "--decision",
                   f"Cap {slug}.", "--rationale", "Because.", "--question", f"Open in {slug}?")  # fmt: skip
        made[slug] = done
        if slug == "alpha":
            forked = cli(home, repo, "fork", "alpha", "beta", "--orientation", "All of alpha moves on.",
                         "--move", done["added"][1], "--move", done["added"][0])  # fmt: skip
    joined = cli(home, repo, "join", "beta", "gamma", "retry-all", "--orientation", "Both in one.")
    other = cli(home, repo, "checkpoint", "other", "--orientation", "Other.", "--next", "hold", "--notes", "N.")
    cli(home, repo, "link", "other", "wheypoint:shop/alpha", "--kind", "relates_to", "--base", other["revision_id"])
    return {"alpha": made["alpha"]["work_id"], "beta": forked["child"]["work_id"], "gamma": made["gamma"]["work_id"],
            "retry-all": joined["joined"]["work_id"], "other": other["work_id"]}  # fmt: skip


def shown_around(page: str, ids: dict[str, str]) -> str:
    """What a work's page shows of the works around it (its links, backlinks and lineage), each work id written as
    its slug: the same works on two stores are told apart by nothing else the page shows there."""
    around = page[page.index("<h2>Links</h2>") : page.index("<h2>Revisions</h2>")]
    for slug, work_id in sorted(ids.items(), key=lambda item: -len(item[1])):
        around = around.replace(work_id, f"<{slug}>")
    return around


def test_a_works_links_backlinks_and_lineage_are_shown_alike_on_both_backends_a_statement_a_level_on_postgresql(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """The lineage's walk reads each level beyond the work in one go on PostgreSQL (Store.heads_and_backlinks),
    and each work on its own on SQLite: every work's page shows the same links, backlinks and lineage on both, from
    the same works (written on SQLite, then copied, so that their times, which order backlinks, are the same)."""
    url = str(request.getfixturevalue("postgres_url"))
    home, repo = tmp_path / "home", make_repo(tmp_path / "shop", {"retry.py": "10\n"})
    ids = lineage_works(home, repo)
    cli(home, repo, "store", "copy", "--from", str(home / "store.sqlite3"), "--to", url)
    counted = counting(monkeypatch, team=True)
    shown: dict[str, dict[str, str]] = {}
    statements: dict[str, int] = {}
    for backend in BACKENDS:
        if backend == "postgresql":
            STORES[home] = url
        try:
            running = Serving(Context(cwd=str(repo), environ=_env(home)), counted, ids["alpha"])
            try:
                for slug, work_id in ids.items():
                    running.counts(f"/work/{work_id}")  # the first draw: the kept connection prepares its lookups
                    statements[slug] = running.counts(f"/work/{work_id}")["statements"]
                    shown.setdefault(backend, {})[slug] = shown_around(running.get(f"/work/{work_id}")[2], ids)
            finally:
                running.stop()
        finally:
            STORES.pop(home, None)
    assert shown["postgresql"] == shown["sqlite"]
    alpha = shown["sqlite"]["alpha"]
    assert "<svg" in alpha and all(f"<{slug}>" in alpha for slug in ("beta", "gamma", "retry-all", "other")), alpha
    assert "relates_to this work" in alpha and "forked_to" in alpha, alpha
    # alpha's page: the version, alpha, its history and its backlinks (beta's and other's), then one statement for
    # each level the walk reaches beyond it: beta and other; retry-all; gamma (the last level, whose backlinks
    # are not followed: its head records alone); and the work each edge names, looked up by its id where the
    # page first meets it (beta, retry-all, gamma). Each level took three statements a work before: 15 in all.
    assert statements["alpha"] == 4 + 3 + 3, statements
    assert max(statements.values()) == 10, statements  # 12 to 16 before


def test_a_filter_holding_a_nul_is_refused_as_a_bad_filter_on_both_backends(serving: Serving) -> None:
    """The address can carry a NUL the command line cannot: in a text search SQLite's full-text query ended at it,
    and PostgreSQL refuses one in any text, so the page said the store could not be read (naming the store). It is
    a bad filter: refused before the works are read, the store's location never shown."""
    for query in ("grep=a%00b", "project=shop&grep=%00", "owner=ann%00", "status=ok%00", "project=sh%00op"):
        status, _, body = serving.get(f"/?{query}")
        assert status == 400 and "Bad filter" in body and "holds a NUL character" in body, (query, status, body)
        assert "cannot read the store" not in body and "store.sqlite3" not in body and "postgresql:" not in body
    status, _, body = serving.get("/?project=shop&grep=tombstone")
    assert status == 200 and "retry" in body
