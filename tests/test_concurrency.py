"""Real OS processes racing on one store: compare-and-set on the head, replay, and refusals that write nothing."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

PROJECT = "testproj"
RACERS = 10

# Each racer imports wheypoint, announces itself, waits for the gate file, then runs the package's
# `__main__` exactly as `python -m wheypoint ...` would. The gate makes the racers hit the store together
# instead of one interpreter start-up (~0.2 s) apart.
_GATED_MAIN = """
import os, runpy, sys, time
import wheypoint.cli.main, wheypoint.app.context, wheypoint.store.sqlite.backend
gate = sys.argv.pop(1)
open(gate + ".ready." + str(os.getpid()), "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(gate) and time.monotonic() < deadline:
    time.sleep(0.001)
sys.argv[0] = "wheypoint"
runpy.run_module("wheypoint", run_name="__main__", alter_sys=True)
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_HOME=str(home), WHEYPOINT_PROJECT=PROJECT)
    return env


def _run(args: list[str], home: Path, cwd: Path) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "wheypoint", *args],
        env=_env(home), cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout)


def _race(commands: list[list[str]], home: Path, cwd: Path) -> list[tuple[int, dict[str, Any]]]:
    """Start one process per command, release them all at once, and collect (exit code, reply) in order."""
    gate = cwd / f"gate-{time.monotonic_ns()}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _GATED_MAIN, str(gate), *args],
            env=_env(home),
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


def _store(home: Path) -> Path:
    return home / "store.sqlite3"


def _integrity(home: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(_store(home)) as conn:
        return conn.execute("PRAGMA integrity_check").fetchall()


def _rows_digest(home: Path) -> str:
    """A hash of every row of every table (and the schema version): equal digests, unchanged store."""
    sha = hashlib.sha256()
    conn = sqlite3.connect(_store(home))
    try:
        sha.update(repr(conn.execute("PRAGMA user_version").fetchone()).encode())
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in tables:
            rows = sorted(repr(row) for row in conn.execute(f'SELECT * FROM "{table}"'))
            sha.update(f"{table}:{len(rows)}\n".encode())
            for row in rows:
                sha.update(row.encode() + b"\n")
    finally:
        conn.close()
    return sha.hexdigest()


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    return home, cwd


def test_racers_from_one_base_exactly_one_wins(place: tuple[Path, Path]) -> None:
    home, cwd = place
    code, first = _run(_genesis("race-work"), home, cwd)
    assert code == 0 and first["ok"], first
    base = first["revision_id"]

    commands = [
        ["checkpoint", "race-work", "--base", base, "--decision", f"Contender {n} takes the lead.",
         "--rationale", f"Reason number {n}.", "--no-note"]
        for n in range(RACERS)
    ]  # fmt: skip
    results = _race(commands, home, cwd)

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

    code, log = _run(["log", "race-work", "--format", "json"], home, cwd)
    assert code == 0
    assert [r["revision_id"] for r in log["revisions"]] == [base, winner["revision_id"]]
    assert [r["parent_revision_id"] for r in log["revisions"]] == [None, base]

    code, shown = _run(["show", "race-work", "--format", "json"], home, cwd)
    assert code == 0 and shown["record"]["revision_id"] == winner["revision_id"]
    texts = [e["text"] for e in shown["record"]["entries"]]
    assert texts == ["Use Y.", f"Contender {won_at} takes the lead."]
    assert _integrity(home) == [("ok",)]
    with sqlite3.connect(_store(home)) as conn:
        assert conn.execute("SELECT count(*) FROM revisions").fetchone() == (2,)
        assert conn.execute("SELECT head_revision_id, head_number FROM works").fetchall() == [
            (winner["revision_id"], 2)
        ]


@pytest.mark.parametrize("store_exists", [True, False], ids=["existing-store", "fresh-store"])
def test_distinct_works_at_once_all_land(place: tuple[Path, Path], store_exists: bool) -> None:
    home, cwd = place
    if store_exists:
        code, reply = _run(_genesis("already-here"), home, cwd)
        assert code == 0, reply
    slugs = [f"work-{n}" for n in range(RACERS)]
    commands = [_genesis(slug, f"Decision for {slug}.") for slug in slugs]
    results = _race(commands, home, cwd)

    assert [code for code, _ in results] == [0] * RACERS, [reply for _, reply in results]
    assert all(reply["ok"] and not reply["replayed"] and reply["revision_number"] == 1 for _, reply in results)
    assert [reply["slug"] for _, reply in results] == slugs
    with sqlite3.connect(_store(home)) as conn:
        heads = dict(conn.execute("SELECT slug, head_revision_id FROM works").fetchall())
        stored = {r[0] for r in conn.execute("SELECT revision_id FROM revisions")}
    for slug, (_, reply) in zip(slugs, results, strict=True):
        assert heads[slug] == reply["revision_id"]
        assert reply["revision_id"] in stored
    assert len(heads) == RACERS + int(store_exists)
    assert len(stored) == RACERS + int(store_exists)
    assert _integrity(home) == [("ok",)]


@pytest.mark.parametrize("store_exists", [True, False], ids=["existing-store", "fresh-store"])
def test_same_genesis_intent_at_once_writes_once(place: tuple[Path, Path], store_exists: bool) -> None:
    home, cwd = place
    if store_exists:
        code, reply = _run(_genesis("already-here"), home, cwd)
        assert code == 0, reply
    commands = [_genesis("twin-work", "The one decision.")] * RACERS
    results = _race(commands, home, cwd)

    assert [code for code, _ in results] == [0] * RACERS, [reply for _, reply in results]
    replies = [reply for _, reply in results]
    assert Counter(reply["replayed"] for reply in replies) == Counter({False: 1, True: RACERS - 1}), replies
    assert len({reply["revision_id"] for reply in replies}) == 1
    assert len({reply["record_digest"] for reply in replies}) == 1
    assert {reply["revision_number"] for reply in replies} == {1}

    code, log = _run(["log", "twin-work", "--format", "json"], home, cwd)
    assert code == 0
    assert [r["revision_id"] for r in log["revisions"]] == [replies[0]["revision_id"]]
    assert _integrity(home) == [("ok",)]


def test_refused_writers_leave_the_store_unchanged(place: tuple[Path, Path]) -> None:
    home, cwd = place
    code, first = _run(_genesis("guarded-work"), home, cwd)
    assert code == 0, first
    code, second = _run(
        ["checkpoint", "guarded-work", "--base", first["revision_id"], "--decision", "Second.", "--rationale", "R.",
         "--no-note"], home, cwd)  # fmt: skip
    assert code == 0, second
    before = _rows_digest(home)

    code, reply = _run(["checkpoint", "guarded-work", "--decision", "No base given.", "--rationale", "R.",
                        "--no-note"], home, cwd)  # fmt: skip
    assert code == 1 and reply["ok"] is False, reply
    assert reply["error"]["code"] == "base-revision-required"
    assert reply["error"]["head_revision_id"] == second["revision_id"]
    assert _rows_digest(home) == before

    # Several at once, without a base or from a stale one: every one refused, nothing written.
    commands = [
        ["checkpoint", "guarded-work", "--decision", f"No base {n}.", "--rationale", "R.", "--no-note"]
        if n % 2 else
        ["checkpoint", "guarded-work", "--base", first["revision_id"], "--decision", f"Stale {n}.",
         "--rationale", "R.", "--no-note"]
        for n in range(RACERS)
    ]  # fmt: skip
    results = _race(commands, home, cwd)
    for n, (code, reply) in enumerate(results):
        assert code == 1, reply
        assert reply["error"]["code"] == ("base-revision-required" if n % 2 else "stale-parent"), reply
        assert reply["error"]["head_revision_id"] == second["revision_id"]
    assert _rows_digest(home) == before
    assert _integrity(home) == [("ok",)]
