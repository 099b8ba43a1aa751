"""Choosing the store: `WHEYPOINT_STORE` names a path or a URL, and one place picks the backend by its scheme."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import Runner

FIRST = ["checkpoint", "retry-backoff", "--orientation", "Backoff, designed.", "--next", "hold", "--notes", "n."]


def _works(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM works").fetchone()[0])


def test_a_sqlite_url_and_a_plain_path_name_the_same_kind_of_store(wp: Runner, tmp_path: Path) -> None:
    url_store, path_store = tmp_path / "a" / "url.sqlite3", tmp_path / "b" / "plain.sqlite3"
    assert wp(*FIRST, "--no-note", env={"WHEYPOINT_STORE": f"sqlite://{url_store}"}).code == 0
    assert wp(*FIRST, "--no-note", env={"WHEYPOINT_STORE": str(path_store)}).code == 0
    assert _works(url_store) == 1 and _works(path_store) == 1
    shown = wp("show", "retry-backoff", env={"WHEYPOINT_STORE": f"sqlite:{url_store}"})
    assert shown.code == 0 and shown.json["record"]["slug"] == "retry-backoff"


def test_an_unknown_scheme_is_refused_and_nothing_is_created(wp: Runner, tmp_path: Path) -> None:
    done = wp(*FIRST, env={"WHEYPOINT_STORE": "mysql://db.example/wp"})
    assert done.code == 1 and done.json["error"]["code"] == "store-url-invalid"
    assert not list(tmp_path.rglob("*.sqlite3"))


def test_the_team_store_on_a_server_that_is_not_there_is_a_storage_error(wp: Runner) -> None:
    import socket

    with socket.socket() as probe:  # a port on which nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = wp("list", env={"WHEYPOINT_STORE": f"postgresql://wp:s3cret-pw@127.0.0.1:{port}/wp"})
    assert done.code == 1, done.stdout
    assert done.json["error"]["code"] in ("storage-error", "store-driver-missing")  # the bare pyz has no driver
    assert "s3cret-pw" not in done.stdout + done.stderr and "wp:***@127.0.0.1" in done.stdout  # never echoed
