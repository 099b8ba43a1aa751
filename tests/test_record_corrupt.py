"""A record whose bytes changed inside the store is refused (`record-corrupt`) wherever it is read for use."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import BACKENDS, Runner, both_backends, make_repo


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest) -> str | None:
    return both_backends(request)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"retry.py": "a\nb\n"})


def _two_revisions(wp: Runner, repo: Path) -> tuple[dict, dict]:
    first = wp("checkpoint", "retry-backoff", "--orientation", "Backoff.", "--next", "hold", "--decision",
               "Use full jitter.", "--rationale", "It spreads retries best.", cwd=repo)  # fmt: skip
    assert first.code == 0, first.stdout
    second = wp("checkpoint", "retry-backoff", "--base", first.json["revision_id"], "--decision", "Cap at 30 s.",
                "--rationale", "The gateway gives up at 30 s.", cwd=repo)  # fmt: skip
    assert second.code == 0, second.stdout
    return first.json, second.json


@contextlib.contextmanager
def _tables(home: Path, store_url: str | None) -> Iterator[Any]:
    """SQL on the store's own tables, each statement committed (store_tables reads; this one also writes)."""
    if store_url is None:
        conn: Any = sqlite3.connect(home / "store.sqlite3", isolation_level=None)
    else:
        import psycopg

        conn = psycopg.connect(store_url, autocommit=True, application_name="wheypoint-tests")

    def run(query: str, *args: Any) -> list[Any]:
        cursor = conn.execute(query if store_url is None else query.replace("?", "%s"), args)
        return list(cursor.fetchall()) if cursor.description else []

    try:
        yield run
    finally:
        conn.close()


def _refused(reply: object, work_id: str, revision_id: str) -> None:
    error = reply.json["error"]  # type: ignore[attr-defined]
    assert reply.code == 1 and error["code"] == "record-corrupt", reply.stdout  # type: ignore[attr-defined]
    assert work_id in error["message"] and revision_id in error["message"]
    assert error["work_id"] == work_id and error["revision_id"] == revision_id


@pytest.mark.parametrize("damage", ["text", "swapped", "not-json"])
def test_a_changed_head_is_refused_by_every_reader_and_never_built_on(
    wp: Runner, repo: Path, home: Path, store_url: str | None, tmp_path: Path, damage: str
) -> None:
    first, second = _two_revisions(wp, repo)
    work_id, head = second["work_id"], second["revision_id"]
    with _tables(home, store_url) as sql:
        if damage == "text":  # same length, still JSON, integrity check still ok: only the digest can tell
            sql("UPDATE revisions SET record_json = replace(record_json, 'Cap at 30 s.', 'Cap at 90 s.') "
                "WHERE revision_id = ?", head)  # fmt: skip
        elif damage == "swapped":  # a whole, valid record, but another revision's
            [(older,)] = sql("SELECT record_json FROM revisions WHERE revision_id = ?", first["revision_id"])
            sql("UPDATE revisions SET record_json = ? WHERE revision_id = ?", older, head)
        else:
            sql("UPDATE revisions SET record_json = ? WHERE revision_id = ?", '{"work_id": ', head)
        before = sql("SELECT count(*) FROM revisions")

    _refused(wp("show", "retry-backoff", cwd=repo), work_id, head)
    _refused(wp("show", "retry-backoff", "--revision", head, cwd=repo), work_id, head)
    _refused(wp("resolve", "retry-backoff", "--format", "json", cwd=repo), work_id, head)
    _refused(wp("handoff", "render", "retry-backoff", cwd=repo), work_id, head)
    _refused(wp("export", "retry-backoff", "--out", str(tmp_path / "b.json"), cwd=repo), work_id, head)
    assert not (tmp_path / "b.json").exists()
    _refused(wp("checkpoint", "retry-backoff", "--base", head, "--notes", "More.", cwd=repo), work_id, head)
    with _tables(home, store_url) as sql:
        assert sql("SELECT count(*) FROM revisions") == before  # nothing was built on it

    # The revision before it is intact and still served.
    older = wp("show", "retry-backoff", "--revision", first["revision_id"], cwd=repo)
    assert older.code == 0 and older.json["record"]["revision_id"] == first["revision_id"], older.stdout

    doctor = wp("doctor", "--format", "json", cwd=repo)
    problems = [p for p in doctor.json["problems"] if p["code"] == "record-digest-mismatch"]
    assert doctor.code == 1 and [p["work_id"] for p in problems] == [work_id], doctor.stdout


def test_an_intact_store_serves_every_revision(wp: Runner, repo: Path) -> None:
    first, second = _two_revisions(wp, repo)
    for revision in (first["revision_id"], second["revision_id"]):
        shown = wp("show", "retry-backoff", "--revision", revision, cwd=repo)
        assert shown.code == 0 and shown.json["record"]["record_digest"], shown.stdout
    log = wp("log", "retry-backoff", cwd=repo).json
    assert [r["revision_id"] for r in log["revisions"]] == [first["revision_id"], second["revision_id"]]
    assert json.loads(json.dumps(log))  # a reply, whole
