"""SIGKILL checkpoints mid-write, many times, on each backend: the store and the note must survive every kill whole."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import BACKENDS, Place, Query, both_backends, place_env, store_tables
from wheypoint.model.canonical import digest
from wheypoint.store.postgres.url import APPLICATION
from wheypoint.store.sql import search_texts

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="needs SIGKILL"), pytest.mark.slow]

PROJECT = "testproj"
SLUG = "crash-work"
KILLS = 40
AIM_JITTER_S = 0.003  # an aimed kill lands up to this long after what it was aimed at was seen
SEED = 20240601
# The kinds whose `gates` flag the entries index keeps (a gating question or blocker).
GATING_KINDS = ("question", "blocker")


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest) -> str | None:
    return both_backends(request)


def _argv(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "wheypoint", *args]


def _start(args: list[str], place: Place) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _argv(args), env=place_env(place), cwd=place.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _run(args: list[str], place: Place) -> tuple[int, dict[str, Any]]:
    proc = _start(args, place)
    out, err = proc.communicate(timeout=60)
    assert out.strip(), f"no reply from {args[:2]} (exit {proc.returncode}): {err}"
    return proc.returncode, json.loads(out)


def _acknowledged(code: int, out: str) -> dict[str, Any] | None:
    """The reply of a process that finished and answered ok, else None."""
    if code != 0 or not out.strip():
        return None
    reply: dict[str, Any] = json.loads(out)
    return reply if reply.get("ok") else None


def _head(slug: str = SLUG) -> dict[str, Any]:
    """`wheypoint show` run in this process (the `place` fixture set its environment and folder): no start-up."""
    from wheypoint.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["show", slug, "--format", "json"])
    reply: dict[str, Any] = json.loads(out.getvalue())
    assert code == 0 and reply["ok"], reply
    return reply


def _heavy(base: str, tag: str, count: int = 40) -> list[str]:
    """A checkpoint with many decisions, to widen the write window."""
    args = ["checkpoint", SLUG, "--base", base]
    for n in range(count):
        args += ["--decision", f"Decision {n} of {tag}.", "--rationale", f"Rationale {n} of {tag}."]
    return args


def _light(base: str, tag: str, *, note: bool = False) -> list[str]:
    args = ["checkpoint", SLUG, "--base", base, "--decision", f"Step {tag} chains on the head.",
            "--rationale", f"Because {tag}."]  # fmt: skip
    return args if note else [*args, "--no-note"]


def _settle(place: Place) -> None:
    """Wait until no wheypoint session is left on the PostgreSQL database.

    The server, not the killed client, runs the transaction: a COMMIT the client sent just before it died can
    still land afterwards, and its work's lock is held until the server has ended the session. Until then the
    head read after a kill may not be the last one. (An SQLite writer dies with its process: nothing to wait for.)
    """
    if place.store is None:
        return
    deadline = time.monotonic() + 30
    with store_tables(place) as sql:
        while sql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                  "AND application_name = ?", APPLICATION) != [(0,)]:  # fmt: skip
            assert time.monotonic() < deadline, "a killed client's session never ended"
            time.sleep(0.002)


def _kill_aimed(place: Place, proc: subprocess.Popen[str], head: str, *, after_commit: bool, delay: float) -> bool:
    """PostgreSQL: SIGKILL `proc` `delay` seconds after the server shows its write under way (its transaction holds
    an id from its first row until COMMIT) or, `after_commit`, after the head it wrote is visible, which is before
    the client has read the reply; False when it ended first."""
    with store_tables(place) as sql:
        while proc.poll() is None:
            if after_commit:
                seen = sql("SELECT head_revision_id FROM works WHERE slug = ?", SLUG) != [(head,)]
            else:
                seen = sql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND application_name = ? AND backend_xid IS NOT NULL", APPLICATION) != [(0,)]  # fmt: skip
            if seen:
                time.sleep(delay)
                if proc.poll() is not None:
                    return False
                proc.send_signal(signal.SIGKILL)
                return True
            time.sleep(0.001)  # the write lasts tens of ms: no need to take the CPU the victim and its server need
    return False


def _verify_head(place: Place, sql: Query, slug: str = SLUG) -> tuple[str, int]:
    """The head pointer and the head's index rows describe the work's last revision, and no row is left of no work:
    what a write torn in two would break, even one a later checkpoint would mend. Returns (work id, head number)."""
    # What a foreign key would catch, on every table (the head's index tables have none): rows of no work.
    for table in ("revisions", "entries", "edges", "artifact_links", "search"):
        assert sql(f"SELECT count(*) FROM {table} WHERE work_id NOT IN (SELECT work_id FROM works)") == [(0,)], table
    works = sql("SELECT work_id, head_revision_id, head_number, status FROM works WHERE slug = ?", slug)
    assert len(works) == 1
    work_id, head_id, head_number, status = works[0]
    last = sql("SELECT revision_id, number, record_json FROM revisions WHERE work_id = ? ORDER BY number DESC LIMIT 1",
               work_id)  # fmt: skip
    head_record = json.loads(last[0][2])
    assert (head_id, head_number, status) == (last[0][0], last[0][1], head_record["status"])

    entries = sorted(sql("SELECT entry_id, kind, state, gates, owner FROM entries WHERE work_id = ?", work_id))
    expected = sorted(
        (e["id"], e["kind"], e["state"], int(bool(e["gates"]) and e["kind"] in GATING_KINDS), e.get("owner"))
        for e in head_record["entries"]
    )
    assert entries == expected
    edges = sorted(sql("SELECT ref, kind FROM edges WHERE work_id = ?", work_id))
    assert edges == sorted((e["ref"], e["kind"]) for e in head_record["edges"])
    links = sorted(sql("SELECT ref, digest FROM artifact_links WHERE work_id = ?", work_id))
    assert links == sorted((link["ref"], link["digest"]) for link in head_record["artifact_links"])
    # The head's full-text row, as each backend keeps it: SQLite the texts, PostgreSQL their tsvector.
    texts = search_texts(head_record)
    if place.store is None:
        search = sql("SELECT orientation, notes, entries, context FROM search WHERE work_id = ?", work_id)
        assert search == [texts]
    else:
        search = sql("SELECT document = to_tsvector('simple', ?) FROM search WHERE work_id = ?",
                     "\n".join(texts), work_id)  # fmt: skip
        assert search == [(True,)]
    return work_id, head_number


def _verify_store(place: Place, acknowledged: set[str], slug: str = SLUG) -> int:
    """Every invariant a kill must not break; returns the number of revisions."""
    with store_tables(place) as sql:
        if place.store is None:
            assert sql("PRAGMA integrity_check") == [("ok",)]
            assert sql("PRAGMA foreign_key_check") == []
        work_id, head_number = _verify_head(place, sql, slug)
        rows = sql(
            "SELECT revision_id, number, parent_revision_id, record_digest, record_json, revision_json "
            "FROM revisions WHERE work_id = ? ORDER BY number", work_id)  # fmt: skip
        stored = {row[0] for row in rows}
        assert acknowledged <= stored, f"acknowledged but lost: {sorted(acknowledged - stored)}"
        assert [row[1] for row in rows] == list(range(1, head_number + 1))
        parent = None
        for revision_id, number, parent_id, record_digest, record_json, revision_json in rows:
            assert parent_id == parent, f"revision {number} has parent {parent_id}, expected {parent}"
            record, receipt = json.loads(record_json), json.loads(revision_json)
            assert record["record_digest"] == record_digest
            assert digest({k: v for k, v in record.items() if k != "record_digest"}) == record_digest
            assert digest({k: v for k, v in receipt.items() if k != "revision_digest"}) == receipt["revision_digest"]
            assert (record["revision_id"], record["revision_number"], record["parent_revision_id"]) == (
                revision_id, number, parent_id)  # fmt: skip
            assert (receipt["revision_id"], receipt["revision_number"], receipt["parent_revision_id"]) == (
                revision_id, number, parent_id)  # fmt: skip
            assert receipt["record_digest"] == record_digest
            parent = revision_id
        return len(rows)


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_url: str | None) -> Place:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    for key in [k for k in os.environ if k.startswith("WHEYPOINT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("WHEYPOINT_HOME", str(home))
    monkeypatch.setenv("WHEYPOINT_PROJECT", PROJECT)
    if store_url:
        monkeypatch.setenv("WHEYPOINT_STORE", store_url)  # for `_head`, which runs in this process
    monkeypatch.chdir(cwd)
    return Place(home, cwd, store_url)


def test_sigkill_mid_checkpoint_loses_nothing_acknowledged(place: Place) -> None:
    rng = random.Random(SEED)
    acknowledged: set[str] = set()
    genesis = ["checkpoint", SLUG, "--orientation", "Surviving kills.", "--next", "hold",
               "--decision", "Start.", "--rationale", "A base to chain on.", "--no-note"]  # fmt: skip
    code, reply = _run(genesis, place)
    assert code == 0, reply
    acknowledged.add(reply["revision_id"])
    head = reply["revision_id"]

    # How long a heavy checkpoint takes here, start-up included: the kills land across that span. The
    # estimate is kept current (the record, and so a checkpoint, grows; the machine's load varies).
    durations: list[float] = []

    def timed(args: list[str]) -> dict[str, Any]:
        started = time.monotonic()
        code, reply = _run(args, place)
        durations.append(time.monotonic() - started)
        assert code == 0 and reply["ok"] and not reply["replayed"], reply
        acknowledged.add(reply["revision_id"])
        return reply

    for n in range(3):
        head = timed(_heavy(head, f"warm-up {n}"))["revision_id"]

    outcomes = {"finished": 0, "killed-before-commit": 0, "killed-after-commit": 0}
    aimed = {"mid-write": 0, "after-commit": 0}
    attempt = 0
    while outcomes["killed-before-commit"] + outcomes["killed-after-commit"] < KILLS:
        assert attempt < 3 * KILLS, f"too few kills landed: {outcomes}"
        typical = statistics.median(durations[-5:])
        proc = _start(_heavy(head, f"victim {attempt}"), place)
        # Any moment of its life; every other attempt its last stretch, where the write happens. PostgreSQL shows
        # that write, a few dozen ms of a life mostly start-up, so there those attempts are aimed instead of
        # guessed: in turn inside its transaction, and just after its COMMIT (committed, not yet acknowledged).
        delay = rng.uniform(0 if attempt % 2 else 0.6 * typical, typical)
        if place.store and not attempt % 2:
            aim = "after-commit" if attempt % 4 else "mid-write"
            landed = _kill_aimed(place, proc, head, after_commit=aim == "after-commit",
                                 delay=rng.uniform(0, AIM_JITTER_S))  # fmt: skip
            aimed[aim] += landed
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        answered = _acknowledged(proc.returncode, out)
        if answered is not None:
            acknowledged.add(answered["revision_id"])
            outcomes["finished"] += 1
        else:
            assert proc.returncode == -signal.SIGKILL, (proc.returncode, out)

        _settle(place)
        shown = _head()["record"]
        with store_tables(place) as sql:
            _verify_head(place, sql)
        if answered is None:
            outcomes["killed-after-commit" if shown["revision_id"] != head else "killed-before-commit"] += 1
        assert shown["revision_id"] == head or shown["parent_revision_id"] == head
        if answered is not None:
            assert shown["revision_id"] == answered["revision_id"]
        # An ordinary checkpoint chained on the head as read; every fifth one heavy and timed.
        if attempt % 5 == 4:
            reply = timed(_heavy(shown["revision_id"], f"steady {attempt}"))
        else:
            code, reply = _run(_light(shown["revision_id"], f"after kill {attempt}"), place)
            assert code == 0 and reply["ok"] and not reply["replayed"], reply
            acknowledged.add(reply["revision_id"])
        assert reply["parent_revision_id"] == shown["revision_id"]
        head = reply["revision_id"]
        attempt += 1

    revisions = _verify_store(place, acknowledged)
    code, log = _run(["log", SLUG, "--format", "json"], place)
    assert code == 0 and len(log["revisions"]) == revisions
    assert _head()["record"]["revision_id"] == head
    if place.store:
        # The aimed kills make sure both sides of COMMIT were hit at least once, whatever this machine's speed.
        assert aimed["mid-write"] and outcomes["killed-after-commit"], (aimed, outcomes)
    print(f"heavy checkpoint {min(durations):.3f}-{max(durations):.3f}s; {attempt} attempts: {outcomes}; "
          f"aimed kills: {aimed}; {revisions} revisions")  # fmt: skip


def _notes_text(tag: str) -> str:
    line = f"Notes of {tag}: a long report, so the note file takes a while to write. "
    return (line * (5900 // len(line) + 1))[:5900]


def _note_temps(folder: Path, slug: str = SLUG) -> set[str]:
    return {p.name for p in folder.glob(f".{slug}.md.*.tmp")}


def test_sigkill_while_writing_the_note_never_leaves_a_torn_note(place: Place) -> None:
    rng = random.Random(SEED + 1)
    folder = place.cwd / ".cheese" / "notes"
    note = folder / f"{SLUG}.md"
    args = ["checkpoint", SLUG, "--orientation", "Notes under fire.", "--next", "hold", "--notes", _notes_text("start")]
    for n in range(60):
        args += ["--decision", f"Decision {n}: " + "a wide decision that makes the note long. " * 40,
                 "--rationale", f"Rationale {n}: " + "and a wide rationale as well. " * 40]  # fmt: skip
    code, reply = _run(args, place)
    assert code == 0 and reply["note_path"] == str(note), reply
    head = reply["revision_id"]
    acknowledged = {head}

    outcomes = {"finished": 0, "killed-before-commit": 0, "killed-after-commit": 0}
    kills_with_temp_left = 0
    rounds = 16
    with store_tables(place) as sql:
        for round_number in range(rounds):
            old_text = note.read_text(encoding="utf-8")
            temps_before = _note_temps(folder)
            victim = ["checkpoint", SLUG, "--base", head, "--notes", _notes_text(f"victim {round_number}"),
                      "--decision", f"Victim {round_number} decides.", "--rationale", "To be killed."]  # fmt: skip
            proc = _start(victim, place)
            # Half the rounds kill as soon as the note's temporary file shows up; the others a moment (0-3 ms)
            # after the new head is committed, which is when the note is being written.
            watch_temp = round_number % 2 == 0
            delay = rng.uniform(0, 0.003)
            while proc.poll() is None:
                if watch_temp:
                    if _note_temps(folder) - temps_before:
                        break
                elif sql("SELECT head_revision_id FROM works") != [(head,)]:
                    time.sleep(delay)
                    break
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            out, _ = proc.communicate(timeout=60)
            answered = _acknowledged(proc.returncode, out)

            _settle(place)
            shown = _head()
            _verify_head(place, sql)
            moved = shown["record"]["revision_id"] != head
            if answered is not None:
                outcomes["finished"] += 1
                acknowledged.add(answered["revision_id"])
            else:
                outcomes["killed-after-commit" if moved else "killed-before-commit"] += 1
            # The note is the old one or the new one, whole: never absent (one existed) nor torn.
            assert note.is_file()
            text = note.read_text(encoding="utf-8")
            if text != old_text:
                assert moved and shown["note"]["state"] == "current", "torn or foreign note"
            elif moved:
                assert shown["note"]["state"] == "stale"
            if answered is not None:
                assert shown["note"]["state"] == "current"
            if _note_temps(folder) - temps_before:
                kills_with_temp_left += 1

            # A later ordinary checkpoint rewrites the note and leaves no temporary file of its own.
            code, reply = _run(["checkpoint", SLUG, "--base", shown["record"]["revision_id"], "--notes",
                                _notes_text(f"steady {round_number}"), "--decision", f"Steady {round_number}.",
                                "--rationale", "Chains on the head."], place)  # fmt: skip
            assert code == 0 and reply["ok"], reply
            acknowledged.add(reply["revision_id"])
            head = reply["revision_id"]
            assert _head()["note"]["state"] == "current"
            # It leaves none of its own, and sweeps the killed writer's: that process is gone (notes/files.py).
            assert _note_temps(folder) == set()

    _verify_store(place, acknowledged)
    # A killed writer's temporary file was never mistaken for the note, and the next write swept it.
    assert _note_temps(folder) == set()
    print(f"note kills: {outcomes}; kills that left a temporary file (swept by the next write): {kills_with_temp_left}")
