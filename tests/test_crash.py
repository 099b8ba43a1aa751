"""SIGKILL checkpoint processes mid-write, many times: the store and the note must survive every kill whole."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from wheypoint.model.canonical import digest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs SIGKILL")

PROJECT = "testproj"
SLUG = "crash-work"
KILLS = 40
SEED = 20240601
# The kinds whose `gates` flag the entries index keeps (a gating question or blocker).
GATING_KINDS = ("question", "blocker")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_HOME=str(home), WHEYPOINT_PROJECT=PROJECT)
    return env


def _argv(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "wheypoint", *args]


def _start(args: list[str], home: Path, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _argv(args), env=_env(home), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _run(args: list[str], home: Path, cwd: Path) -> tuple[int, dict[str, Any]]:
    proc = _start(args, home, cwd)
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


def _verify_store(home: Path, acknowledged: set[str], slug: str = SLUG) -> int:
    """Every invariant a kill must not break; returns the number of revisions."""
    conn = sqlite3.connect(home / "store.sqlite3")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        works = conn.execute("SELECT work_id, head_revision_id, head_number, status FROM works WHERE slug = ?",
                             (slug,)).fetchall()  # fmt: skip
        assert len(works) == 1
        work_id, head_id, head_number, status = works[0]
        rows = conn.execute(
            "SELECT revision_id, number, parent_revision_id, record_digest, record_json, revision_json "
            "FROM revisions WHERE work_id = ? ORDER BY number", (work_id,)).fetchall()  # fmt: skip
        stored = {row[0] for row in rows}
        assert acknowledged <= stored, f"acknowledged but lost: {sorted(acknowledged - stored)}"
        assert [row[1] for row in rows] == list(range(1, len(rows) + 1))
        parent = None
        head_record: dict[str, Any] = {}
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
            parent, head_record = revision_id, record
        assert (head_id, head_number, status) == (parent, len(rows), head_record["status"])

        entries = sorted(conn.execute("SELECT entry_id, kind, state, gates, owner FROM entries WHERE work_id = ?",
                                      (work_id,)).fetchall())  # fmt: skip
        expected = sorted(
            (e["id"], e["kind"], e["state"], int(bool(e["gates"]) and e["kind"] in GATING_KINDS), e.get("owner"))
            for e in head_record["entries"]
        )
        assert entries == expected
        edges = sorted(conn.execute("SELECT ref, kind FROM edges WHERE work_id = ?", (work_id,)).fetchall())
        assert edges == sorted((e["ref"], e["kind"]) for e in head_record["edges"])
        links = sorted(conn.execute("SELECT ref, digest FROM artifact_links WHERE work_id = ?", (work_id,)).fetchall())
        assert links == sorted((link["ref"], link["digest"]) for link in head_record["artifact_links"])
        search = conn.execute("SELECT orientation, notes FROM search WHERE work_id = ?", (work_id,)).fetchall()
        assert search == [(head_record["orientation"], head_record["notes"])]
        return len(rows)
    finally:
        conn.close()


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    for key in [k for k in os.environ if k.startswith("WHEYPOINT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("WHEYPOINT_HOME", str(home))
    monkeypatch.setenv("WHEYPOINT_PROJECT", PROJECT)
    monkeypatch.chdir(cwd)
    return home, cwd


def test_sigkill_mid_checkpoint_loses_nothing_acknowledged(place: tuple[Path, Path]) -> None:
    home, cwd = place
    rng = random.Random(SEED)
    acknowledged: set[str] = set()
    genesis = ["checkpoint", SLUG, "--orientation", "Surviving kills.", "--next", "hold",
               "--decision", "Start.", "--rationale", "A base to chain on.", "--no-note"]  # fmt: skip
    code, reply = _run(genesis, home, cwd)
    assert code == 0, reply
    acknowledged.add(reply["revision_id"])
    head = reply["revision_id"]

    # How long a heavy checkpoint takes here, start-up included: the kills land across that span. The
    # estimate is kept current (the record, and so a checkpoint, grows; the machine's load varies).
    durations: list[float] = []

    def timed(args: list[str]) -> dict[str, Any]:
        started = time.monotonic()
        code, reply = _run(args, home, cwd)
        durations.append(time.monotonic() - started)
        assert code == 0 and reply["ok"] and not reply["replayed"], reply
        acknowledged.add(reply["revision_id"])
        return reply

    for n in range(3):
        head = timed(_heavy(head, f"warm-up {n}"))["revision_id"]

    outcomes = {"finished": 0, "killed-before-commit": 0, "killed-after-commit": 0}
    attempt = 0
    while outcomes["killed-before-commit"] + outcomes["killed-after-commit"] < KILLS:
        assert attempt < 3 * KILLS, f"too few kills landed: {outcomes}"
        typical = statistics.median(durations[-5:])
        proc = _start(_heavy(head, f"victim {attempt}"), home, cwd)
        # Any moment of its life; every other attempt its last stretch, where the write happens.
        delay = rng.uniform(0 if attempt % 2 else 0.6 * typical, typical)
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

        shown = _head()["record"]
        if answered is None:
            outcomes["killed-after-commit" if shown["revision_id"] != head else "killed-before-commit"] += 1
        assert shown["revision_id"] == head or shown["parent_revision_id"] == head
        if answered is not None:
            assert shown["revision_id"] == answered["revision_id"]
        # An ordinary checkpoint chained on the head as read; every fifth one heavy and timed.
        if attempt % 5 == 4:
            reply = timed(_heavy(shown["revision_id"], f"steady {attempt}"))
        else:
            code, reply = _run(_light(shown["revision_id"], f"after kill {attempt}"), home, cwd)
            assert code == 0 and reply["ok"] and not reply["replayed"], reply
            acknowledged.add(reply["revision_id"])
        assert reply["parent_revision_id"] == shown["revision_id"]
        head = reply["revision_id"]
        attempt += 1

    revisions = _verify_store(home, acknowledged)
    code, log = _run(["log", SLUG, "--format", "json"], home, cwd)
    assert code == 0 and len(log["revisions"]) == revisions
    assert _head()["record"]["revision_id"] == head
    print(f"heavy checkpoint {min(durations):.3f}-{max(durations):.3f}s; {attempt} attempts: {outcomes}; "
          f"{revisions} revisions")  # fmt: skip


def _notes_text(tag: str) -> str:
    line = f"Notes of {tag}: a long report, so the note file takes a while to write. "
    return (line * (5900 // len(line) + 1))[:5900]


def _note_temps(folder: Path, slug: str = SLUG) -> set[str]:
    return {p.name for p in folder.glob(f".{slug}.md.*.tmp")}


def test_sigkill_while_writing_the_note_never_leaves_a_torn_note(place: tuple[Path, Path]) -> None:
    home, cwd = place
    rng = random.Random(SEED + 1)
    folder = cwd / ".cheese" / "notes"
    note = folder / f"{SLUG}.md"
    args = ["checkpoint", SLUG, "--orientation", "Notes under fire.", "--next", "hold", "--notes", _notes_text("start")]
    for n in range(60):
        args += ["--decision", f"Decision {n}: " + "a wide decision that makes the note long. " * 40,
                 "--rationale", f"Rationale {n}: " + "and a wide rationale as well. " * 40]  # fmt: skip
    code, reply = _run(args, home, cwd)
    assert code == 0 and reply["note_path"] == str(note), reply
    head = reply["revision_id"]
    acknowledged = {head}

    outcomes = {"finished": 0, "killed-before-commit": 0, "killed-after-commit": 0}
    kills_with_temp_left = 0
    rounds = 16
    conn = sqlite3.connect(home / "store.sqlite3")
    try:
        for round_number in range(rounds):
            old_text = note.read_text(encoding="utf-8")
            temps_before = _note_temps(folder)
            victim = ["checkpoint", SLUG, "--base", head, "--notes", _notes_text(f"victim {round_number}"),
                      "--decision", f"Victim {round_number} decides.", "--rationale", "To be killed."]  # fmt: skip
            proc = _start(victim, home, cwd)
            # Half the rounds kill as soon as the note's temporary file shows up; the others a moment (0-3 ms)
            # after the new head is committed, which is when the note is being written.
            watch_temp = round_number % 2 == 0
            delay = rng.uniform(0, 0.003)
            while proc.poll() is None:
                if watch_temp:
                    if _note_temps(folder) - temps_before:
                        break
                else:
                    rows = conn.execute("SELECT head_revision_id FROM works").fetchall()
                    if rows[0][0] != head:
                        time.sleep(delay)
                        break
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            out, _ = proc.communicate(timeout=60)
            answered = _acknowledged(proc.returncode, out)

            shown = _head()
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
            temps_before_next = _note_temps(folder)
            code, reply = _run(["checkpoint", SLUG, "--base", shown["record"]["revision_id"], "--notes",
                                _notes_text(f"steady {round_number}"), "--decision", f"Steady {round_number}.",
                                "--rationale", "Chains on the head."], home, cwd)  # fmt: skip
            assert code == 0 and reply["ok"], reply
            acknowledged.add(reply["revision_id"])
            head = reply["revision_id"]
            assert _head()["note"]["state"] == "current"
            assert _note_temps(folder) == temps_before_next
    finally:
        conn.close()

    _verify_store(home, acknowledged)
    leftovers = _note_temps(folder)
    # A killed writer's temporary file is never cleaned up by later checkpoints (reported, not a failure),
    # but it is never mistaken for the note.
    assert len(leftovers) == kills_with_temp_left
    print(f"note kills: {outcomes}; temp files left by killed writers: {len(leftovers)}")
