"""The OpenCode 1.18.33 sessions the end-to-end run recorded, read back: a change of OpenCode's format fails here.

tests/data/recorded/opencode-1.18.33-e2e.json holds the rows of the `project`, `session`, `message` and `part`
tables OpenCode wrote in tests/e2e/test_opencode.py (WHEYPOINT_E2E_RECORD=1 rewrites it) with those tables' own
CREATE statements; each test builds a real SQLite database from it where OpenCode keeps one and reads it with
`wheypoint turns`, as a hook does.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wheypoint.transcripts.opencode import database_sessions

RECORDING = Path(__file__).resolve().parent / "data" / "recorded" / "opencode-1.18.33-e2e.json"
P1 = "Please add a small retry helper for the payments client."
P2 = "remember: never retry a POST without an idempotency key — the gateway double-charges otherwise."
P3 = 'Also: cap the backoff at 30 s ("full jitter" for now).\nSecond line with `code` and ünïcödé.'
P4 = "After the compaction: what should I keep in mind?"
P5 = "New session: where were we?"
CONTINUE = "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed."


@pytest.fixture(scope="module")
def recording() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDING.read_text(encoding="utf-8"))
    return data


@pytest.fixture
def database(tmp_path: Path, recording: dict[str, Any]) -> Path:
    path = tmp_path / "share" / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")  # as OpenCode runs it
        for sql in recording["schema"].values():
            conn.execute(sql)
        for table, rows in recording["rows"].items():
            for row in rows:
                names = ", ".join(f'"{name}"' for name in row)
                conn.execute(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    conn.close()
    return path


def turns(database: Path, session: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WHEYPOINT_", "XDG_", "OPENCODE"))}
    env.update(HOME=str(database.parents[2]), XDG_DATA_HOME=str(database.parents[1]))
    done = subprocess.run([sys.executable, "-m", "wheypoint", "turns", "--transcript", str(database), "--session",
                           session, "--all", "--format", "json"], capture_output=True, text=True, env=env, timeout=60,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def sessions(recording: dict[str, Any]) -> list[str]:
    rows = sorted(recording["rows"]["session"], key=lambda s: (s["time_created"], s["id"]))
    return [row["id"] for row in rows if row["parent_id"] is None]


def test_the_compacted_session_reads_as_typed_prompts_and_opencodes_own_turns(
    database: Path, recording: dict[str, Any]
) -> None:
    first, _ = sessions(recording)
    reply = turns(database, first)
    found = [(t["kind"], t["text"]) for t in reply["turns"]]
    reply_text = "MOCK-REPLY: noted."
    assert found == [
        ("prompt", P1), ("assistant", reply_text), ("prompt", P2), ("assistant", reply_text),
        ("prompt", P3), ("assistant", reply_text),
        ("system", "[compaction: auto]"),  # the compaction marker OpenCode stores as a user message of its own
        ("compaction_summary", "<summary>MOCK-SUMMARY of the conversation.</summary>"),
        ("meta", CONTINUE),  # OpenCode's synthetic "go on" after an automatic compaction, never a typed prompt
        ("assistant", reply_text), ("prompt", P4), ("assistant", reply_text),
    ]  # fmt: skip
    stats = reply["stats"]
    assert stats["unknown_types"] == {} and stats["malformed"] == 0 and stats["invalid_utf8"] == 0
    assert stats["skipped_types"] == {"step-start": 6, "step-finish": 6}


def test_the_new_session_reads_as_its_one_prompt(database: Path, recording: dict[str, Any]) -> None:
    _, second = sessions(recording)
    reply = turns(database, second)
    assert [(t["kind"], t["text"]) for t in reply["turns"]] == [("prompt", P5), ("assistant", "MOCK-REPLY: noted.")]
    assert reply["session_id"] == second and reply["harness"] == "opencode"


def test_the_database_lists_both_sessions_with_their_first_prompts(database: Path, recording: dict[str, Any]) -> None:
    listed = database_sessions(database)
    assert [(s.session_id, s.first_prompt, s.cwd) for s in listed] == [
        (sid, prompt, "/home/dev/e2e/repo") for sid, prompt in zip(sessions(recording), (P1, P5), strict=True)
    ]
