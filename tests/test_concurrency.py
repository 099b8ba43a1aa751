"""Real OS processes racing on one store of each backend: compare-and-set on the head, replay, no-write refusals."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import BACKENDS, Place, both_backends, place_env, store_tables

PROJECT = "testproj"
RACERS = 10

# Each racer imports wheypoint (and, for a PostgreSQL store, its driver), announces itself, waits for the gate file,
# then runs the package's `__main__` exactly as `python -m wheypoint ...` would. The gate makes the racers hit the
# store together instead of one interpreter start-up (~0.2 s) apart.
_GATED_MAIN = """
import os, runpy, sys, time
import wheypoint.cli.main, wheypoint.app.context, wheypoint.store.sqlite.backend, wheypoint.store.postgres.backend
if os.environ.get("WHEYPOINT_STORE"):
    import psycopg
gate = sys.argv.pop(1)
open(gate + ".ready." + str(os.getpid()), "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(gate) and time.monotonic() < deadline:
    time.sleep(0.001)
sys.argv[0] = "wheypoint"
runpy.run_module("wheypoint", run_name="__main__", alter_sys=True)
"""


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest) -> str | None:
    return both_backends(request)


def _run(args: list[str], place: Place) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "wheypoint", *args],
        env=place_env(place), cwd=place.cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.stdout.strip(), f"no reply (exit {done.returncode}); stderr: {done.stderr}"
    return done.returncode, json.loads(done.stdout)


def _race(commands: list[list[str]], place: Place) -> list[tuple[int, dict[str, Any]]]:
    """Start one process per command, release them all at once, and collect (exit code, reply) in order."""
    cwd = place.cwd
    gate = cwd / f"gate-{time.monotonic_ns()}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _GATED_MAIN, str(gate), *args],
            env=place_env(place),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    try:
        deadline = time.monotonic() + 60
        while len(list(cwd.glob(gate.name + ".ready.*"))) < len(procs):
            assert time.monotonic() < deadline, "the racers never got ready"
            assert all(p.poll() is None for p in procs), "a racer died before the gate opened"
            time.sleep(0.005)
        gate.touch()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert out.strip(), f"no reply (exit {proc.returncode}); stderr: {err}"
            results.append((proc.returncode, json.loads(out)))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _genesis(slug: str, decision: str = "Use Y.") -> list[str]:
    return ["checkpoint", slug, "--orientation", "Working on X.", "--next", "hold",
            "--decision", decision, "--rationale", "Because Z.", "--no-note"]  # fmt: skip


def _made(place: Place) -> bool:
    """Whether the store exists yet: the SQLite file, or the wheypoint tables in the PostgreSQL database."""
    if place.store is None:
        return (place.home / "store.sqlite3").exists()
    with store_tables(place) as sql:
        return sql("SELECT to_regclass('works') IS NOT NULL") == [(True,)]


# Works whose head is not their own last revision, by id and number.
_BAD_HEADS = (
    "SELECT w.slug FROM works w LEFT JOIN revisions r ON r.revision_id = w.head_revision_id "
    "AND r.work_id = w.work_id AND r.number = w.head_number WHERE r.revision_id IS NULL "
    "OR w.head_number <> (SELECT max(number) FROM revisions WHERE work_id = w.work_id)"
)


def _check_whole(place: Place) -> None:
    """The store is whole: every head is its work's last revision, and no revision belongs to no work (plus, for
    SQLite, the file's own integrity check)."""
    with store_tables(place) as sql:
        if place.store is None:
            assert sql("PRAGMA integrity_check") == [("ok",)]
        assert sql(_BAD_HEADS) == []
        assert sql("SELECT revision_id FROM revisions WHERE work_id NOT IN (SELECT work_id FROM works)") == []


def _rows_digest(place: Place) -> str:
    """A hash of every row of every table (the schema version's included): equal digests, unchanged store."""
    sha = hashlib.sha256()
    with store_tables(place) as sql:
        if place.store is None:
            sha.update(repr(sql("PRAGMA user_version")).encode())
            listed = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        else:  # the version is a row of wheypoint_schema, one of these tables
            listed = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
        tables = [row[0] for row in sql(listed)]
        assert "revisions" in tables and "works" in tables, tables
        for table in tables:
            rows = sorted(repr(row) for row in sql(f'SELECT * FROM "{table}"'))
            sha.update(f"{table}:{len(rows)}\n".encode())
            for row in rows:
                sha.update(row.encode() + b"\n")
    return sha.hexdigest()


@pytest.fixture
def place(tmp_path: Path, store_url: str | None) -> Place:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    return Place(home, cwd, store_url)


def test_racers_from_one_base_exactly_one_wins(place: Place) -> None:
    code, first = _run(_genesis("race-work"), place)
    assert code == 0 and first["ok"], first
    base = first["revision_id"]

    commands = [
        ["checkpoint", "race-work", "--base", base, "--decision", f"Contender {n} takes the lead.",
         "--rationale", f"Reason number {n}.", "--no-note"]
        for n in range(RACERS)
    ]  # fmt: skip
    results = _race(commands, place)

    winners = [(n, reply) for n, (code, reply) in enumerate(results) if code == 0]
    assert len(winners) == 1, results
    won_at, winner = winners[0]
    assert winner["ok"] and not winner["replayed"], winner
    assert winner["revision_number"] == 2 and winner["parent_revision_id"] == base
    for n, (code, reply) in enumerate(results):
        if n == won_at:
            continue
        assert code == 1 and reply["ok"] is False, reply
        assert reply["error"]["code"] == "stale-parent", reply
        assert reply["error"]["head_revision_id"] == winner["revision_id"], reply

    code, log = _run(["log", "race-work", "--format", "json"], place)
    assert code == 0
    assert [r["revision_id"] for r in log["revisions"]] == [base, winner["revision_id"]]
    assert [r["parent_revision_id"] for r in log["revisions"]] == [None, base]

    code, shown = _run(["show", "race-work", "--format", "json"], place)
    assert code == 0 and shown["record"]["revision_id"] == winner["revision_id"]
    texts = [e["text"] for e in shown["record"]["entries"]]
    assert texts == ["Use Y.", f"Contender {won_at} takes the lead."]
    _check_whole(place)
    with store_tables(place) as sql:
        assert sql("SELECT count(*) FROM revisions") == [(2,)]
        assert sql("SELECT head_revision_id, head_number FROM works") == [(winner["revision_id"], 2)]


@pytest.mark.parametrize("store_exists", [True, False], ids=["existing-store", "fresh-store"])
def test_distinct_works_at_once_all_land(place: Place, store_exists: bool) -> None:
    if store_exists:
        code, reply = _run(_genesis("already-here"), place)
        assert code == 0, reply
    assert _made(place) is store_exists  # when fresh, the racers' first writes make it (its schema) between them
    slugs = [f"work-{n}" for n in range(RACERS)]
    commands = [_genesis(slug, f"Decision for {slug}.") for slug in slugs]
    results = _race(commands, place)

    assert [code for code, _ in results] == [0] * RACERS, [reply for _, reply in results]
    assert all(reply["ok"] and not reply["replayed"] and reply["revision_number"] == 1 for _, reply in results)
    assert [reply["slug"] for _, reply in results] == slugs
    with store_tables(place) as sql:
        heads = dict(sql("SELECT slug, head_revision_id FROM works"))
        stored = {r[0] for r in sql("SELECT revision_id FROM revisions")}
    for slug, (_, reply) in zip(slugs, results, strict=True):
        assert heads[slug] == reply["revision_id"]
        assert reply["revision_id"] in stored
    assert len(heads) == RACERS + int(store_exists)
    assert len(stored) == RACERS + int(store_exists)
    _check_whole(place)


@pytest.mark.parametrize("store_exists", [True, False], ids=["existing-store", "fresh-store"])
def test_same_genesis_intent_at_once_writes_once(place: Place, store_exists: bool) -> None:
    if store_exists:
        code, reply = _run(_genesis("already-here"), place)
        assert code == 0, reply
    assert _made(place) is store_exists  # when fresh, the racers' first writes make it (its schema) between them
    commands = [_genesis("twin-work", "The one decision.")] * RACERS
    results = _race(commands, place)

    assert [code for code, _ in results] == [0] * RACERS, [reply for _, reply in results]
    replies = [reply for _, reply in results]
    assert Counter(reply["replayed"] for reply in replies) == Counter({False: 1, True: RACERS - 1}), replies
    assert len({reply["revision_id"] for reply in replies}) == 1
    assert len({reply["record_digest"] for reply in replies}) == 1
    assert {reply["revision_number"] for reply in replies} == {1}

    code, log = _run(["log", "twin-work", "--format", "json"], place)
    assert code == 0
    assert [r["revision_id"] for r in log["revisions"]] == [replies[0]["revision_id"]]
    _check_whole(place)


def test_refused_writers_leave_the_store_unchanged(place: Place) -> None:
    code, first = _run(_genesis("guarded-work"), place)
    assert code == 0, first
    after_first = _rows_digest(place)
    code, second = _run(
        ["checkpoint", "guarded-work", "--base", first["revision_id"], "--decision", "Second.", "--rationale", "R.",
         "--no-note"], place)  # fmt: skip
    assert code == 0, second
    before = _rows_digest(place)
    assert before != after_first  # the digest sees a write, so an unchanged one below means nothing was written

    code, reply = _run(["checkpoint", "guarded-work", "--decision", "No base given.", "--rationale", "R.",
                        "--no-note"], place)  # fmt: skip
    assert code == 1 and reply["ok"] is False, reply
    assert reply["error"]["code"] == "base-revision-required"
    assert reply["error"]["head_revision_id"] == second["revision_id"]
    assert _rows_digest(place) == before

    # Several at once, without a base or from a stale one: every one refused, nothing written.
    commands = [
        ["checkpoint", "guarded-work", "--decision", f"No base {n}.", "--rationale", "R.", "--no-note"]
        if n % 2 else
        ["checkpoint", "guarded-work", "--base", first["revision_id"], "--decision", f"Stale {n}.",
         "--rationale", "R.", "--no-note"]
        for n in range(RACERS)
    ]  # fmt: skip
    results = _race(commands, place)
    for n, (code, reply) in enumerate(results):
        assert code == 1, reply
        assert reply["error"]["code"] == ("base-revision-required" if n % 2 else "stale-parent"), reply
        assert reply["error"]["head_revision_id"] == second["revision_id"]
    assert _rows_digest(place) == before
    _check_whole(place)
