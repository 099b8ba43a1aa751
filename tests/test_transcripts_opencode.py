"""The OpenCode reader on both layouts (SQLite database, legacy JSON storage) built here from readable dict literals."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import shared_path
from wheypoint.transcripts import opencode
from wheypoint.transcripts.model import (
    ALL_KINDS,
    ASSISTANT,
    COMPACTION_SUMMARY,
    META,
    PROMPT,
    SHELL_INPUT,
    SHELL_OUTPUT,
    SYSTEM,
    THINKING,
    TOOL_CALL,
    TOOL_RESULT,
    ReadStats,
    Turn,
)

# ---------------------------------------------------------------- fixtures as data

T0 = 1767607200000  # 2026-01-05T10:00:00.000Z in ms

# The upstream tables (session.sql.ts, project.sql.ts), with the columns this reader relies on and a few more.
SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    workspace_id TEXT, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL,
    version TEXT NOT NULL, share_url TEXT, cost REAL NOT NULL DEFAULT 0, revert TEXT, permission TEXT, agent TEXT,
    model TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_compacting INTEGER,
    time_archived INTEGER);
CREATE INDEX session_parent_idx ON session (parent_id);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id) ON DELETE CASCADE,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
"""

PROMPT_TEXT = "Fix the login bug\n  keep the public API stable  \n"  # verbatim, whitespace and all


def user(mid: str, at: int, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"id": mid, "info": {"role": "user", "time": {"created": T0 + at}, "agent": "build",
                                "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4"}},
            "parts": list(parts)}  # fmt: skip


def assistant(mid: str, at: int, *parts: dict[str, Any], summary: bool = False) -> dict[str, Any]:
    info: dict[str, Any] = {"role": "assistant", "time": {"created": T0 + at, "completed": T0 + at + 500},
                            "parentID": "msg_x", "modelID": "claude-sonnet-4", "providerID": "anthropic",
                            "mode": "build", "agent": "build", "path": {"cwd": "/work/proj", "root": "/work/proj"},
                            "cost": 0.01, "tokens": {"input": 10, "output": 5, "reasoning": 0,
                                                     "cache": {"read": 0, "write": 0}}}  # fmt: skip
    if summary:
        info["summary"] = True
    return {"id": mid, "info": info, "parts": list(parts)}


def text(pid: str, body: str, **flags: Any) -> dict[str, Any]:
    return {"id": pid, "type": "text", "text": body, **flags}


def tool(pid: str, name: str, status: str, params: dict[str, Any], **state: Any) -> dict[str, Any]:
    return {"id": pid, "type": "tool", "callID": f"call_{pid}", "tool": name,
            "state": {"status": status, "input": params, **state}}  # fmt: skip


MAIN = {
    "id": "ses_main", "projectID": "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750", "directory": "/work/proj",
    "title": "Fix the login bug", "version": "1.1.20", "created": T0, "updated": T0 + 90_000,
    "messages": [
        user("msg_001", 0,
             text("prt_001a", PROMPT_TEXT, time={"start": T0 + 1}),
             {"id": "prt_001b", "type": "file", "mime": "text/plain", "filename": "login.py",
              "url": "file:///work/proj/login.py"},
             text("prt_001c", 'Called the Read tool with the following input: {"filePath":"login.py"}',
                  synthetic=True)),
        assistant("msg_002", 1000,
                  {"id": "prt_002a", "type": "step-start", "snapshot": "abc"},
                  {"id": "prt_002b", "type": "reasoning", "text": "The bug is in the token check.",
                   "time": {"start": T0 + 1100, "end": T0 + 1200}},
                  tool("prt_002c", "read", "completed", {"filePath": "/work/proj/login.py"},
                       output="<file>\n00001| def login():\n</file>", title="login.py", metadata={},
                       time={"start": T0 + 1300, "end": T0 + 1400}),
                  tool("prt_002d", "bash", "error", {"command": "pytest -x"}, error="Error: pytest not found",
                       time={"start": T0 + 1500, "end": T0 + 1600}),
                  tool("prt_002e", "edit", "running", {"filePath": "login.py"}, time={"start": T0 + 1700}),
                  text("prt_002f", "I fixed the token check.", time={"start": T0 + 1800, "end": T0 + 1900}),
                  {"id": "prt_002g", "type": "step-finish", "reason": "stop", "cost": 0.01,
                   "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}}),
        user("msg_003", 10_000,
             text("prt_003a", "this was dropped", ignored=True),
             text("prt_003b", "now run the tests")),
        user("msg_004", 20_000, text("prt_004a", "The following tool was executed by the user", synthetic=True)),
        assistant("msg_005", 20_001,
                  tool("prt_005a", "bash", "completed", {"command": "ls -la\n"}, output="total 0\n", title="ls",
                       metadata={}, time={"start": T0 + 20_002, "end": T0 + 20_003})),
        user("msg_006", 30_000, {"id": "prt_006a", "type": "compaction", "auto": True}),
        assistant("msg_007", 30_001, text("prt_007a", "## Summary\nWe fixed the token check."), summary=True),
        user("msg_008", 30_002, text("prt_008a", "Continue if you have next steps", synthetic=True)),
        assistant("msg_009", 40_000,
                  tool("prt_009a", "task", "completed", {"description": "explore", "prompt": "Explore the repo",
                                                         "subagent_type": "general"},
                       output="found it", title="explore", metadata={"sessionId": "ses_child"},
                       time={"start": T0 + 40_001, "end": T0 + 80_000}),
                  {"id": "prt_009b", "type": "snapshot", "snapshot": "def"},
                  {"id": "prt_009c", "type": "patch", "hash": "def", "files": ["login.py"]},
                  {"id": "prt_009d", "type": "retry", "attempt": 1, "error": {}, "time": {"created": T0}},
                  {"id": "prt_009e", "type": "hologram", "payload": 1}),
        user("msg_010", 85_000,
             {"id": "prt_010a", "type": "agent", "name": "general"},
             {"id": "prt_010b", "type": "subtask", "prompt": "review", "description": "review", "agent": "general"},
             text("prt_010c", "@general review login.py")),
    ],
}  # fmt: skip

CHILD = {
    "id": "ses_child", "parentID": "ses_main", "projectID": MAIN["projectID"], "directory": "/work/proj",
    "title": "explore (@general subagent)", "version": "1.1.20", "created": T0 + 40_002, "updated": T0 + 79_000,
    "messages": [
        user("msg_c01", 40_003, text("prt_c01a", "Explore the repo")),
        assistant("msg_c02", 40_004, text("prt_c02a", "found it")),
    ],
}  # fmt: skip

OTHER = {
    "id": "ses_other", "projectID": "global", "directory": "/home/u/elsewhere", "title": "other",
    "version": "1.1.20", "created": T0 + 100_000, "updated": T0 + 200_000,
    "messages": [
        user("msg_o01", 100_000, text("prt_o01a", "hello other", synthetic=True), text("prt_o01b", "hello, other")),
        assistant("msg_o02", 100_500, text("prt_o02a", "hi")),
    ],
}  # fmt: skip

# What MAIN must read as: (id, kind) in order; everything else is skipped or counted.
MAIN_EXPECTED = [
    ("prt_001a", PROMPT), ("prt_001c", META),
    ("prt_002b", THINKING), ("prt_002c", TOOL_CALL), ("prt_002c#result", TOOL_RESULT),
    ("prt_002d", TOOL_CALL), ("prt_002d#result", TOOL_RESULT), ("prt_002e", TOOL_CALL), ("prt_002f", ASSISTANT),
    ("prt_003a", META), ("prt_003b", PROMPT),
    ("prt_004a", META), ("prt_005a", SHELL_INPUT), ("prt_005a#result", SHELL_OUTPUT),
    ("prt_006a", SYSTEM), ("prt_007a", COMPACTION_SUMMARY), ("prt_008a", META),
    ("prt_009a", TOOL_CALL), ("prt_009a#result", TOOL_RESULT),
    ("prt_010c", PROMPT),
]  # fmt: skip
MAIN_SKIPPED = {"file": 1, "step-start": 1, "step-finish": 1, "snapshot": 1, "patch": 1, "retry": 1, "hologram": 1,
                "agent": 1, "subtask": 1}  # fmt: skip
MAIN_PARTS = sum(len(m["parts"]) for m in MAIN["messages"])  # type: ignore[attr-defined]


def _without_ids(part: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in part.items() if k != "id"})


def build_db(path: Path, *sessions: dict[str, Any]) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO project VALUES (?, '/work/proj', 'git', NULL, ?, ?)", (MAIN["projectID"], T0, T0))
    conn.execute("INSERT INTO project VALUES ('global', '/', NULL, NULL, ?, ?)", (T0, T0))
    for session in sessions:
        add_session(conn, session)
    conn.commit()
    conn.close()
    return path


def add_session(conn: sqlite3.Connection, session: dict[str, Any]) -> None:
    conn.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, "
                 "time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (session["id"], session["projectID"], session.get("parentID"), "calm-otter", session["directory"],
                  session["title"], session["version"], session["created"], session["updated"]))  # fmt: skip
    # insert the messages in reverse so the reader must order them itself
    for message in reversed(session["messages"]):
        add_message(conn, session["id"], message)


def add_message(conn: sqlite3.Connection, sid: str, message: dict[str, Any]) -> None:
    created = message["info"]["time"]["created"]
    conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                 (message["id"], sid, created, created, json.dumps(message["info"])))  # fmt: skip
    for part in reversed(message["parts"]):
        conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                     (part["id"], message["id"], sid, created, created, _without_ids(part)))  # fmt: skip


def build_legacy(storage: Path, *sessions: dict[str, Any]) -> dict[str, Path]:
    """storage/session/<projectID>/<id>.json, message/<sessionID>/<id>.json, part/<messageID>/<id>.json."""
    files = {}
    for session in sessions:
        info = {"id": session["id"], "slug": "calm-otter", "version": session["version"],
                "projectID": session["projectID"], "directory": session["directory"], "title": session["title"],
                "time": {"created": session["created"], "updated": session["updated"]}}  # fmt: skip
        if session.get("parentID"):
            info["parentID"] = session["parentID"]
        target = storage / "session" / session["projectID"] / f"{session['id']}.json"
        write_json(target, info)
        files[session["id"]] = target
        for message in session["messages"]:
            write_json(storage / "message" / session["id"] / f"{message['id']}.json",
                       {"id": message["id"], "sessionID": session["id"], **message["info"]})  # fmt: skip
            for part in message["parts"]:
                write_json(storage / "part" / message["id"] / f"{part['id']}.json",
                           {**part, "sessionID": session["id"], "messageID": message["id"]})  # fmt: skip
    return files


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")  # pretty-printed, like OpenCode


def read(path: Path, session_id: str | None = None) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    return list(opencode.read_turns(path, stats, session_id)), stats


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_db(tmp_path / "opencode.db", MAIN, CHILD, OTHER)


@pytest.fixture
def legacy(tmp_path: Path) -> dict[str, Path]:
    return build_legacy(tmp_path / "storage", MAIN, CHILD, OTHER)


# ---------------------------------------------------------------- classification, on both layouts


def check_main(turns: list[Turn], stats: ReadStats) -> None:
    assert [(t.id, t.kind) for t in turns] == MAIN_EXPECTED
    assert all(t.kind in ALL_KINDS and t.agent is None for t in turns)
    assert stats.skipped == Counter({k: v for k, v in MAIN_SKIPPED.items() if k != "hologram"})
    assert stats.unknown == Counter({"hologram": 1})  # a part type newer than the reader
    assert (stats.malformed, stats.invalid_utf8, stats.oversized) == (0, 0, 0)
    by_id = {t.id: t for t in turns}
    assert by_id["prt_001a"].text == PROMPT_TEXT  # verbatim
    assert by_id["prt_001a"].timestamp == "2026-01-05T10:00:00.001Z"  # the part's own start time
    assert by_id["prt_003b"].timestamp == "2026-01-05T10:00:10.000Z"  # else the message's creation
    assert by_id["prt_002c"].text == 'read {"filePath": "/work/proj/login.py"}'
    assert by_id["prt_002c#result"].text == "<file>\n00001| def login():\n</file>"
    assert by_id["prt_002c#result"].timestamp == "2026-01-05T10:00:01.400Z"
    assert by_id["prt_002d#result"].text == "Error: pytest not found"  # an error state is the tool's result too
    assert by_id["prt_005a"].text == "ls -la\n"  # the `!` command exactly as typed
    assert by_id["prt_005a#result"].text == "total 0\n"
    assert by_id["prt_006a"].text == "[compaction: auto]"
    assert by_id["prt_007a"].text == "## Summary\nWe fixed the token check."
    # positions: the part's index among all the session's parts (skipped ones included); a result shares its call's
    assert by_id["prt_001a"].position == 1 and by_id["prt_001c"].position == 3
    assert by_id["prt_002c"].position == by_id["prt_002c#result"].position == 6
    assert by_id["prt_010c"].position == MAIN_PARTS
    assert len({t.id for t in turns}) == len(turns)


def test_db_main_session(db: Path) -> None:
    turns, stats = read(db, "ses_main")
    check_main(turns, stats)
    assert stats.lines == len(MAIN["messages"]) + MAIN_PARTS  # type: ignore[arg-type]


def test_legacy_main_session(legacy: dict[str, Path]) -> None:
    turns, stats = read(legacy["ses_main"])
    check_main(turns, stats)
    assert stats.lines == 1 + len(MAIN["messages"]) + MAIN_PARTS  # type: ignore[arg-type]  # +1: the session file


def test_db_and_legacy_agree(db: Path, legacy: dict[str, Path]) -> None:
    for sid in ("ses_main", "ses_child", "ses_other"):
        assert read(db, sid)[0] == read(legacy[sid])[0]


def test_child_session_is_a_subagent(db: Path, legacy: dict[str, Path]) -> None:
    for turns, _ in (read(db, "ses_child"), read(legacy["ses_child"])):
        # the child's "user" text is the parent agent's task prompt, not something the person typed
        assert [(t.id, t.kind, t.agent) for t in turns] == [("prt_c01a", META, "ses_child"),
                                                            ("prt_c02a", ASSISTANT, "ses_child")]  # fmt: skip


def test_synthetic_prompt_is_meta_and_typed_text_is_prompt(db: Path) -> None:
    turns, _ = read(db, "ses_other")
    assert [(t.id, t.kind, t.text) for t in turns] == [("prt_o01a", META, "hello other"),
                                                       ("prt_o01b", PROMPT, "hello, other"),
                                                       ("prt_o02a", ASSISTANT, "hi")]  # fmt: skip


def test_a_bash_call_by_the_model_is_not_shell_input(tmp_path: Path) -> None:
    session = {**OTHER, "messages": [
        user("msg_1", 0, text("prt_1", "list files")),
        assistant("msg_2", 1, tool("prt_2", "bash", "completed", {"command": "ls"}, output="a\n")),
        user("msg_3", 2, text("prt_3", "The following tool was executed by the user", synthetic=True)),
        assistant("msg_4", 3, tool("prt_4", "read", "completed", {"filePath": "a"}, output="x")),
    ]}  # fmt: skip
    turns, _ = read(build_db(tmp_path / "o.db", session), "ses_other")
    assert [t.kind for t in turns] == [PROMPT, TOOL_CALL, TOOL_RESULT, META, TOOL_CALL, TOOL_RESULT]


def test_messages_ordered_by_time_then_id(tmp_path: Path) -> None:
    session = {**OTHER, "messages": [
        user("msg_b", 5, text("prt_b", "second (same time, later id)")),
        user("msg_a", 5, text("prt_a", "first (same time, earlier id)")),
        user("msg_0", 9, text("prt_0", "third (later time, earliest id)")),
    ]}  # fmt: skip
    turns, _ = read(build_db(tmp_path / "o.db", session), "ses_other")
    assert [t.id for t in turns] == ["prt_a", "prt_b", "prt_0"]
    legacy = build_legacy(tmp_path / "storage", session)
    assert [t.id for t in read(legacy["ses_other"])[0]] == ["prt_a", "prt_b", "prt_0"]


# ---------------------------------------------------------------- choosing the session in a database


def test_db_needs_a_session_id_unless_it_holds_one(tmp_path: Path, db: Path) -> None:
    with pytest.raises(FileNotFoundError, match="several"):
        read(db)
    with pytest.raises(FileNotFoundError, match="ses_nope"):
        read(db, "ses_nope")
    single = build_db(tmp_path / "single.db", MAIN, CHILD)  # one top-level session and its subagent
    check_main(*read(single))
    empty = build_db(tmp_path / "empty.db")
    with pytest.raises(FileNotFoundError, match="no OpenCode sessions"):
        read(empty)


# ---------------------------------------------------------------- bad input


def test_db_malformed_data_columns(tmp_path: Path) -> None:
    path = build_db(tmp_path / "o.db", OTHER)
    conn = sqlite3.connect(path)
    conn.execute('UPDATE part SET data = \'{"type": "text", "text": \' WHERE id = \'prt_o01a\'')  # cut short
    conn.execute("UPDATE part SET data = '[1, 2]' WHERE id = 'prt_o02a'")  # JSON of the wrong shape
    lost = {
        "id": "msg_o03",
        "info": {"role": "user", "time": {"created": T0 + 999_999}},
        "parts": [text("prt_o03a", "lost role"), {"id": "prt_o03b", "type": "reasoning", "text": "a thought"}],
    }
    add_message(conn, "ses_other", lost)
    conn.execute("UPDATE message SET data = 'not json' WHERE id = 'msg_o03'")
    add_message(conn, "ses_other", {"id": "msg_o04", "info": {"role": "system", "time": {"created": T0 + 10**7}},
                                    "parts": [{"id": "prt_o04a"}, text("prt_o04b", "?"),
                                              {"id": "prt_o04c", "type": "tool", "tool": "x"},
                                              {"id": "prt_o04d", "type": "text", "text": 7}]})  # fmt: skip
    conn.commit()
    conn.close()
    turns, stats = read(path, "ses_other")
    assert [(t.id, t.kind) for t in turns] == [("prt_o01b", PROMPT), ("prt_o03b", THINKING)]
    # bad part JSON x2, bad message JSON, its text part, no type, role-less text, tool without state, text not a str
    assert stats.malformed == 8
    assert stats.unknown == Counter({"role:system": 1})
    assert [t.position for t in turns] == [2, 5]


def test_db_oversized_part_is_skipped_unread(tmp_path: Path) -> None:
    big = "x" * (opencode.MAX_LINE_BYTES + 10)
    session = {**OTHER, "messages": [user("msg_1", 0, text("prt_1", big), text("prt_2", "after"))]}
    turns, stats = read(build_db(tmp_path / "o.db", session), "ses_other")
    assert [t.id for t in turns] == ["prt_2"] and stats.oversized == 1


def test_legacy_corrupt_part_files(tmp_path: Path, legacy: dict[str, Path]) -> None:
    storage = tmp_path / "storage"
    (storage / "part" / "msg_o01" / "prt_o01a.json").write_bytes(b'{\n  "type": "text",\n  "text": "hel')
    (storage / "part" / "msg_o02" / "prt_o02a.json").write_bytes(b'{"type": "text", "text": "\xff\xfe"}')
    (storage / "part" / "msg_o02" / "prt_o02b.json").write_bytes(b'{"type": "text", "text": "' +
                                                                 b"y" * opencode.MAX_LINE_BYTES + b'"}')  # fmt: skip
    (storage / "part" / "msg_o02" / "prt_o02c.json").mkdir()  # not even a file
    (storage / "message" / "ses_other" / "msg_o03.json").write_bytes(b"")  # an empty message file
    turns, stats = read(legacy["ses_other"])
    assert [t.id for t in turns] == ["prt_o01b"]
    assert (stats.malformed, stats.invalid_utf8, stats.oversized) == (3, 1, 1)  # cut, dir, empty; utf-8; big


def test_legacy_session_file_without_parts_or_messages(tmp_path: Path) -> None:
    files = build_legacy(tmp_path / "storage", {**OTHER, "messages": []})
    assert read(files["ses_other"])[0] == []
    # a session file that is not JSON: its name still says which session to read
    broken = files["ses_other"]
    broken.write_text("{oops", encoding="utf-8")
    turns, stats = read(broken)
    assert turns == [] and stats.malformed == 1


def test_legacy_session_file_unreadable_but_messages_present(tmp_path: Path, legacy: dict[str, Path]) -> None:
    legacy["ses_other"].write_text("{oops", encoding="utf-8")
    turns, stats = read(legacy["ses_other"])
    assert [t.id for t in turns] == ["prt_o01a", "prt_o01b", "prt_o02a"] and stats.malformed == 1


def test_session_starting_mid_conversation(tmp_path: Path) -> None:
    """The first stored message is the assistant's (earlier ones reverted or deleted): read what is there."""
    session = {**MAIN, "messages": MAIN["messages"][4:]}  # type: ignore[index]
    turns, _ = read(build_db(tmp_path / "o.db", session), "ses_main")
    assert turns[0].id == "prt_005a" and turns[0].kind == TOOL_CALL  # no shell marker before it
    assert turns[0].position == 1


def test_corrupt_database(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    path.write_bytes(opencode.SQLITE_MAGIC + b"\x00garbage" * 100)
    turns, stats = read(path, "ses_main")
    assert turns == [] and stats.malformed == 1
    assert opencode.describe(path) is None


def test_foreign_database(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    turns, stats = read(path, "ses_main")
    assert turns == [] and stats.malformed == 1
    assert opencode.describe(path) is None


def test_locked_database_does_not_hang(tmp_path: Path, db: Path) -> None:
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")  # rollback-journal mode: an exclusive lock keeps readers out
    try:
        started = time.monotonic()
        turns, stats = read(db, "ses_main")
        assert turns == [] and stats.malformed == 1
        assert opencode.describe(db) is None
        home = tmp_path / "home"
        (home / ".local" / "share" / "opencode").mkdir(parents=True)
        shutil.copy(db, home / ".local" / "share" / "opencode" / "opencode.db")
        assert list(opencode.sessions({"HOME": str(tmp_path / "nowhere"), "OPENCODE_DB": str(db)})) == []
        assert time.monotonic() - started < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert read(db, "ses_main")[0]  # readable again once released


def test_reading_never_writes_the_database(tmp_path: Path, db: Path) -> None:
    before = db.read_bytes()
    db.chmod(0o444)
    try:
        check_main(*read(db, "ses_main"))
        assert len(list(opencode.sessions({"HOME": str(tmp_path), "OPENCODE_DB": str(db)}))) == 2
    finally:
        db.chmod(0o644)
    assert db.read_bytes() == before
    assert sorted(p.name for p in db.parent.iterdir() if p.name.startswith("opencode")) == ["opencode.db"]


def test_live_wal_database_is_readable_while_written(tmp_path: Path, db: Path) -> None:
    writer = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("BEGIN IMMEDIATE")  # OpenCode in the middle of a write
    add_message(writer, "ses_other", user("msg_o09", 500_000, text("prt_o09a", "not committed yet")))
    try:
        turns, stats = read(db, "ses_other")
        assert [t.id for t in turns] == ["prt_o01a", "prt_o01b", "prt_o02a"] and stats.malformed == 0
    finally:
        writer.execute("COMMIT")
        writer.close()
    assert read(db, "ses_other")[0][-1].text == "not committed yet"


def test_unusable_paths_raise(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read(tmp_path / "missing.db", "ses_x")
    with pytest.raises(IsADirectoryError):
        read(tmp_path, "ses_x")
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    turns, stats = read(empty)
    assert turns == [] and stats.as_json() == ReadStats().as_json()
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 10)
    turns, stats = read(garbage)
    assert turns == [] and stats.invalid_utf8 + stats.malformed == 1


# ---------------------------------------------------------------- stable ids


def test_ids_stable_across_rereads_and_growth(tmp_path: Path, db: Path, legacy: dict[str, Path]) -> None:
    first, _ = read(db, "ses_main")
    assert read(db, "ses_main")[0] == first
    conn = sqlite3.connect(db)
    add_message(conn, "ses_main", user("msg_011", 95_000, text("prt_011a", "one more thing")))
    conn.execute(
        "UPDATE part SET data = ? WHERE id = 'prt_002e'",  # the running tool finished meanwhile
        (_without_ids(tool("prt_002e", "edit", "completed", {"filePath": "login.py"}, output="ok")),),
    )
    conn.commit()
    conn.close()
    grown, _ = read(db, "ses_main")
    new = {"prt_002e#result", "prt_011a"}
    assert [(t.id, t.position) for t in grown if t.id not in new] == [(t.id, t.position) for t in first]
    assert grown[-1].id == "prt_011a" and grown[-1].position == MAIN_PARTS + 1
    before, _ = read(legacy["ses_main"])
    build_legacy(tmp_path / "storage", {**MAIN, "messages": [user("msg_011", 95_000, text("prt_011a", "more"))]})
    after, _ = read(legacy["ses_main"])
    assert after[: len(before)] == before and after[-1].id == "prt_011a"


# ---------------------------------------------------------------- discovery


def test_sessions_both_layouts_and_env_vars(tmp_path: Path) -> None:
    home = tmp_path / "home"
    data = home / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    build_db(data / "opencode.db", MAIN, CHILD)
    later = {**MAIN, "id": "ses_beta", "updated": T0 + 500_000}
    build_db(data / "opencode-beta.db", later)
    build_legacy(data / "storage", MAIN, OTHER, CHILD)  # MAIN was migrated: the db copy wins
    (data / "opencode.db-wal").write_bytes(b"")  # not a database of its own
    found = {info.session_id: info for info in opencode.sessions({"HOME": str(home)})}
    assert sorted(found) == ["ses_beta", "ses_main", "ses_other"]  # no child sessions
    main = found["ses_main"]
    assert main.harness == "opencode" and main.path == str(data / "opencode.db")
    assert main.cwd == "/work/proj" and main.last_activity == "2026-01-05T10:01:30.000Z"
    assert main.first_prompt == PROMPT_TEXT
    assert found["ses_beta"].path == str(data / "opencode-beta.db")
    other = found["ses_other"]
    assert other.path == str(data / "storage" / "session" / "global" / "ses_other.json")
    assert other.first_prompt == "hello, other" and other.cwd == "/home/u/elsewhere"  # synthetic text skipped

    xdg = tmp_path / "xdg"
    (xdg / "opencode").mkdir(parents=True)
    build_db(xdg / "opencode" / "opencode.db", OTHER)
    found_xdg = list(opencode.sessions({"HOME": str(home), "XDG_DATA_HOME": str(xdg)}))
    assert [i.session_id for i in found_xdg] == ["ses_other"] and found_xdg[0].path.startswith(str(xdg))

    custom = build_db(tmp_path / "custom.db", CHILD, {**OTHER, "id": "ses_custom"})
    found_custom = list(opencode.sessions({"HOME": str(tmp_path / "nobody"), "OPENCODE_DB": str(custom)}))
    assert [i.session_id for i in found_custom] == ["ses_custom"]
    assert list(opencode.sessions({})) == [] and list(opencode.sessions({"HOME": str(tmp_path / "none")})) == []


def test_sessions_skips_unreadable_databases(tmp_path: Path) -> None:
    data = tmp_path / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    (data / "opencode.db").write_bytes(b"not sqlite")
    (data / "opencode-dev.db").write_bytes(opencode.SQLITE_MAGIC + b"\x01" * 200)
    write_json(data / "storage" / "session" / "global" / "ses_bad.json", [1])
    (data / "storage" / "session" / "global" / "ses_cut.json").write_text("{", encoding="utf-8")
    assert list(opencode.sessions({"HOME": str(tmp_path)})) == []


def test_describe(tmp_path: Path, legacy: dict[str, Path]) -> None:
    info = opencode.describe(legacy["ses_main"])
    assert info is not None and (info.session_id, info.cwd, info.first_prompt) == ("ses_main", "/work/proj",
                                                                                   PROMPT_TEXT)  # fmt: skip
    assert info.last_activity == "2026-01-05T10:01:30.000Z"
    assert opencode.describe(build_db(tmp_path / "several.db", MAIN, OTHER)) is None
    single = opencode.describe(build_db(tmp_path / "single.db", MAIN, CHILD))
    assert single is not None and single.session_id == "ses_main" and single.path == str(tmp_path / "single.db")
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00\xff" * 50)
    message = tmp_path / "storage" / "message" / "ses_main" / "msg_001.json"
    for path in (tmp_path, empty, garbage, tmp_path / "missing.json", message):
        assert opencode.describe(path) is None


def test_a_database_in_an_oddly_named_folder_is_opened_read_only(tmp_path: Path) -> None:
    from wheypoint.transcripts.opencode import _file_uri

    folder = tmp_path / "a dir?#%;&=ü"
    folder.mkdir()
    path = build_db(folder / "opencode.db", MAIN)
    assert _file_uri(str(path)) == path.as_uri()  # escaped exactly as pathlib escapes it
    check_main(*read(path))
    assert opencode.describe(str(path)) is not None and opencode.describe(path) == opencode.describe(str(path))


def test_describe_refuses_other_harnesses() -> None:
    for harness in ("gemini", "claude-code", "codex"):
        paths = sorted(shared_path("corpus", harness).iterdir())
        assert paths, f"the {harness} corpus folder is empty: the loop would prove nothing"
        for path in paths:
            assert opencode.describe(path) is None, path


# ---------------------------------------------------------------- size


def test_twenty_thousand_parts(tmp_path: Path) -> None:
    path = big_db(tmp_path / "big.db", 20_000)
    stats = ReadStats()
    started = time.perf_counter()
    count = Counter(t.kind for t in opencode.read_turns(path, stats, "ses_big"))
    elapsed = time.perf_counter() - started
    # each round of 4 parts (prompt, thinking, tool, answer) gives 5 turns: the tool call and its result
    assert sum(count.values()) == 25_000 and count[TOOL_RESULT] == 5_000 and stats.malformed == 0
    assert stats.lines == 10_000 + 20_000  # messages and parts
    assert elapsed < 10  # about 0.1 s in practice; a generous bound for slow CI machines


def big_db(path: Path, parts: int) -> Path:
    """A session of `parts` parts: user prompt, then an assistant reasoning + tool call with output + text."""
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO project VALUES ('global', '/', NULL, NULL, 0, 0)")
    conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
                 "VALUES ('ses_big', 'global', 's', '/w', 't', '1', 0, 0)")  # fmt: skip
    output = "line of tool output\n" * 40
    n = 0
    i = 0
    while n < parts:
        i += 1
        turn = [
            user(f"msg_{i:06d}u", 2 * i, text(f"prt_{i:06d}a", f"prompt number {i} " * 5)),
            assistant(f"msg_{i:06d}v", 2 * i + 1,
                      {"id": f"prt_{i:06d}b", "type": "reasoning", "text": "thinking " * 30, "time": {"start": i}},
                      tool(f"prt_{i:06d}c", "read", "completed", {"filePath": f"/w/f{i}.py"}, output=output,
                           title="f", metadata={}, time={"start": i, "end": i + 1}),
                      text(f"prt_{i:06d}d", "answer " * 40)),
        ]  # fmt: skip
        for message in turn:
            if n < parts:
                message["parts"] = message["parts"][: parts - n]
                add_message(conn, "ses_big", message)
                n += len(message["parts"])
    conn.commit()
    conn.close()
    return path


def test_turn_kinds_are_known() -> None:
    assert {kind for _, kind in MAIN_EXPECTED} <= set(ALL_KINDS)
    assert set(MAIN_SKIPPED) - {"hologram"} == opencode.SKIPPED_PARTS  # every skipped type has a fixture part


def test_deeply_nested_part_and_odd_times(tmp_path: Path) -> None:
    session = {**OTHER, "messages": [user("msg_1", 0, text("prt_1", "a", time={"start": float("nan")}),
                                          text("prt_2", "b", time={"start": True}), text("prt_3", "c"))]}  # fmt: skip
    path = build_db(tmp_path / "o.db", session)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE part SET data = ? WHERE id = 'prt_3'", ("[" * 200_000 + "]" * 200_000,))
    conn.commit()
    conn.close()
    turns, stats = read(path, "ses_other")
    assert [(t.id, t.timestamp) for t in turns] == [("prt_1", None), ("prt_2", None)] and stats.malformed == 1
    assert opencode.iso_ms(T0 + 5) == "2026-01-05T10:00:00.005Z"
    assert opencode.iso_ms(1500.7) == "1970-01-01T00:00:01.500Z"
    for odd in (None, "1767607200000", float("inf"), 10**30, False):
        assert opencode.iso_ms(odd) is None
