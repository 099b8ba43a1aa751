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
# backlinks, then for the work linking to it, which the lineage's walk (`graph`) reaches, its record, work and
# backlinks. A diff: the work and its history (a short one, read whole: its receipts and the two records compared).
STATEMENTS = {"inbox": 4, "inbox ?grep=": 3, "inbox ?owner=": 4, "work": 4 + 3, "diff": 3, "changes": 1}


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


@pytest.fixture(params=BACKENDS)
def serving(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Serving]:
    """Two works on one backend (a gated one with two revisions and ann's gate, and one that links to it), served."""
    import wheypoint.store

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
        counted: Counter[str] = Counter()
        opened = wheypoint.store.open_store

        def counting_open(*args: Any, **kwargs: Any) -> Any:
            counted["opens"] += 1
            return opened(*args, **kwargs)

        monkeypatch.setattr(wheypoint.store, "open_store", counting_open)
        if url:
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
