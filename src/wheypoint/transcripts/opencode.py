"""OpenCode sessions: the SQLite database (`opencode.db`) and the older JSON file storage.

OpenCode keeps its data under `$XDG_DATA_HOME/opencode` (default `~/.local/share/opencode`). Newer
releases write one SQLite database there, `opencode.db` (`opencode-<channel>.db` for other release
channels; `OPENCODE_DB` overrides the path), with tables `session`, `message` and `part`, where
`message.data` and `part.data` hold the message and part as JSON. Older releases wrote one
pretty-printed JSON file per record under `storage/`: `session/<projectID>/<sessionID>.json`,
`message/<sessionID>/<messageID>.json` and `part/<messageID>/<partID>.json`. A one-time migration
copies the JSON storage into the database and leaves the files behind, so a session can be in both;
the database copy wins.

The database is opened read-only (`mode=ro`, never `immutable`, because OpenCode may be writing it)
with a short busy timeout; a locked, corrupt or foreign database is counted in `ReadStats.malformed`
and yields nothing more, it never raises. A session is streamed by one statement, so the read sees
one snapshot and holds one row at a time; OpenCode runs the database in WAL mode, where this reader
never blocks its writes.

Kinds: a user text part is a `prompt` unless `synthetic` or `ignored` (then `meta`), and in a child
session it is always `meta` (the parent agent wrote it); assistant text is `assistant`, or
`compaction_summary` in an assistant message with `summary: true`; `reasoning` is `thinking`; a `tool`
part is a `tool_call` (`<tool> <input as JSON>`) plus a `tool_result` when its state holds `output`
(or `error`); after the synthetic marker user message of a `!` command, the next assistant message's
`bash` call is `shell_input` (the command as typed) and its output `shell_output`; a `compaction` part
is a `system` marker (`[compaction: auto]`, made here: the part holds no text). Other part types are
skipped and counted by type in `ReadStats.unknown`; empty texts are skipped.

A database holds many sessions, so `read_turns` needs the session id, except when the database holds
exactly one top-level session; `describe` of a database likewise answers only in that case. A
session's subagents are child sessions (`parent_id`); `sessions()` lists top-level sessions only, and
reading a child session marks every turn with `agent` = that child session's id.

Turns are parts, in message order (time created, then id) and part id order. The turn id is the part
id (`<part id>#result` for a tool's result), and `position` is the 1-based index of the part among all
the session's parts, skipped ones included, so both stay put as the session grows.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from wheypoint.transcripts.lines import MAX_LINE_BYTES
from wheypoint.transcripts.model import (
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
    SessionInfo,
    Turn,
)

HARNESS = "opencode"

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT = 0.5  # seconds to wait on a locked database before counting it and giving up
MAX_SESSION_FILE = 1 << 20  # a legacy session file is metadata; anything bigger is not one
# Part types that carry nothing a reader quotes: skipped, and counted by type in stats.skipped.
SKIPPED_PARTS = frozenset(("file", "step-start", "step-finish", "snapshot", "patch", "agent", "subtask", "retry"))
# The text OpenCode stores as the user message of a `!` shell command; the command itself is the
# `bash` tool part of the assistant message that follows.
SHELL_MARKER = "The following tool was executed by the user"


class _Message(NamedTuple):
    id: str
    role: str | None  # None when the message record could not be read
    summary: bool  # an assistant message holding a compaction summary
    created: Any  # ms since the epoch, as stored


# ---------------------------------------------------------------- small helpers


_last_second: tuple[int, str] = (-1, "")  # the last second formatted: parts of one message share it


def iso_ms(value: Any) -> str | None:
    """Milliseconds since the epoch as ISO 8601 UTC with milliseconds (`2026-01-05T10:20:30.123Z`)."""
    global _last_second
    try:
        if value.__class__ is not int:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None
            value = int(value)  # NaN and infinities raise
        seconds, millis = divmod(value, 1000)
        cached = _last_second
        if cached[0] != seconds:
            cached = _last_second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    except (OverflowError, ValueError, OSError):
        return None
    return f"{cached[1]}.{millis:03d}Z"


def data_dir(environ: Mapping[str, str]) -> Path | None:
    """OpenCode's data folder: `$XDG_DATA_HOME/opencode`, else `$HOME/.local/share/opencode`."""
    xdg = environ.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "opencode"
    home = environ.get("HOME", "")
    return Path(home) / ".local" / "share" / "opencode" if home else None


def database_paths(environ: Mapping[str, str]) -> list[Path]:
    """Every OpenCode database on this machine: `OPENCODE_DB`, `opencode.db`, `opencode-<channel>.db`."""
    base = data_dir(environ)
    found: list[Path] = []
    override = environ.get("OPENCODE_DB", "")
    if override and override != ":memory:":
        path = Path(override) if os.path.isabs(override) else (base / override if base else None)
        if path is not None and path.is_file():
            found.append(path)
    if base is not None:
        try:
            names = sorted(entry.name for entry in os.scandir(base) if entry.is_file())
        except OSError:
            names = []
        for name in names:
            if name == "opencode.db" or (name.startswith("opencode-") and name.endswith(".db")):
                path = base / name
                if path not in found:
                    found.append(path)
    return found


def is_database(path: Path) -> bool:
    """Whether the file starts with the SQLite header (raises OSError when it cannot be opened)."""
    with path.open("rb") as handle:
        return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def connect(path: Path) -> sqlite3.Connection:
    """A read-only connection that waits at most BUSY_TIMEOUT on a lock (raises sqlite3.Error)."""
    uri = path.resolve().as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
    try:
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def _load_json(path: Path, stats: ReadStats | None, limit: int | None = None) -> tuple[bool, Any]:
    """(ok, value) for one JSON file of at most `limit` bytes (default MAX_LINE_BYTES); counted, never raised."""
    limit = MAX_LINE_BYTES if limit is None else limit
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError:
        if stats is not None:
            stats.malformed += 1
        return False, None
    if stats is not None:
        stats.lines += 1
    if len(raw) > limit:
        if stats is not None:
            stats.oversized += 1
        return False, None
    try:
        return True, json.loads(raw)
    except UnicodeDecodeError:
        if stats is not None:
            stats.invalid_utf8 += 1
    except (ValueError, RecursionError):
        if stats is not None:
            stats.malformed += 1
    return False, None


def _json_names(folder: Path) -> list[Path]:
    """The `*.json` files of a folder in name order (ids sort by creation); none if it is missing."""
    try:
        return sorted((folder / entry.name for entry in os.scandir(folder) if entry.name.endswith(".json")),
                      key=lambda p: p.name)  # fmt: skip
    except OSError:
        return []


def _message_of(mid: str, value: Any, fallback_created: Any, stats: ReadStats) -> _Message:
    if not isinstance(value, dict):
        stats.malformed += 1
        return _Message(mid, None, False, fallback_created)
    role = value.get("role")
    if role not in ("user", "assistant"):
        stats.unknown[f"role:{role}"] += 1
        role = None
    times = value.get("time")
    created = times.get("created") if isinstance(times, dict) else None
    summary = role == "assistant" and value.get("summary") is True
    return _Message(mid, role, summary, created if created is not None else fallback_created)


def _first_prompt(parts: Iterable[Any]) -> str | None:
    for part in parts:
        if (isinstance(part, dict) and part.get("type") == "text" and not part.get("synthetic")
                and not part.get("ignored") and isinstance(part.get("text"), str) and part["text"]):  # fmt: skip
            return str(part["text"])
    return None


# ---------------------------------------------------------------- classification


class _Reader:
    """Turns of one session, part by part; carries what one message tells about the next."""

    __slots__ = ("agent", "position", "shell_pending", "stats")

    def __init__(self, stats: ReadStats, agent: str | None) -> None:
        self.stats = stats
        self.agent = agent
        self.position = 0
        self.shell_pending = False  # the last user message was a `!` shell command's marker

    def begin(self, message: _Message) -> bool:
        """Start a message; whether it is the assistant's run of a `!` shell command."""
        shell = self.shell_pending and message.role == "assistant"
        self.shell_pending = False  # the marker applies to the next message only
        return shell

    def message(self, message: _Message, parts: Iterable[tuple[str, bool, Any]]) -> Iterator[Turn]:
        """Turns of one message from its (part id, decoded, part value) in order."""
        shell = self.begin(message)
        for pid, ok, part in parts:
            self.position += 1
            if ok:
                yield from self.part(message, pid, part, shell, self.position)

    def part(self, message: _Message, pid: str, part: Any, shell: bool, position: int) -> tuple[Turn, ...]:
        """The turns of one decoded part at `position` in the session."""
        if part.__class__ is not dict:
            self.stats.malformed += 1
            return ()
        kind = part.get("type")
        if kind == "text" or kind == "reasoning":
            text = part.get("text")
            if text.__class__ is not str:
                self.stats.malformed += 1
                return ()
            if kind == "reasoning":
                turn_kind = THINKING
            elif message.role == "user":
                if part.get("synthetic") or part.get("ignored"):
                    turn_kind = META
                    if text == SHELL_MARKER:
                        self.shell_pending = True
                else:
                    turn_kind = META if self.agent is not None else PROMPT  # a subagent's task is not typed
            elif message.role == "assistant":
                turn_kind = COMPACTION_SUMMARY if message.summary else ASSISTANT
            else:
                self.stats.malformed += 1  # text of a message whose role is unknown: not classifiable
                return ()
            if not text:
                return ()
            times = part.get("time")
            at = (times.get("start") or message.created) if times.__class__ is dict else message.created
            return (Turn(pid, turn_kind, iso_ms(at), text, position, self.agent),)
        if kind == "tool":
            return self.tool(message, pid, part, shell, position)
        if kind == "compaction":
            mode = "auto" if part.get("auto") else "manual"
            text = f"[compaction: {mode}{', overflow' if part.get('overflow') else ''}]"
            return (Turn(pid, SYSTEM, iso_ms(message.created), text, position, self.agent),)
        if isinstance(kind, str):
            (self.stats.skipped if kind in SKIPPED_PARTS else self.stats.unknown)[kind] += 1
        else:
            self.stats.malformed += 1
        return ()

    def tool(self, message: _Message, pid: str, part: dict[str, Any], shell: bool, position: int) -> tuple[Turn, ...]:
        name = part.get("tool")
        state = part.get("state")
        if name.__class__ is not str or state.__class__ is not dict:
            self.stats.malformed += 1
            return ()
        times = state.get("time")
        times = times if isinstance(times, dict) else {}
        params = state.get("input")
        command = params.get("command") if isinstance(params, dict) else None
        started = iso_ms(times.get("start", message.created))
        if shell and name == "bash" and isinstance(command, str):
            call = Turn(pid, SHELL_INPUT, started, command, position, self.agent)
            result_kind = SHELL_OUTPUT
        else:
            call = Turn(pid, TOOL_CALL, started, f"{name} {json.dumps(params, ensure_ascii=False)}", position,
                        self.agent)  # fmt: skip
            result_kind = TOOL_RESULT
        output = state.get("output")
        if output is None and state.get("status") == "error":
            output = state.get("error")
        if output is None:
            return (call,)  # pending or running: no result yet
        if output.__class__ is not str:
            self.stats.malformed += 1
            return (call,)
        ended = iso_ms(times.get("end", times.get("start", message.created)))
        return call, Turn(f"{pid}#result", result_kind, ended, output, position, self.agent)


# ---------------------------------------------------------------- the database layout


# Every message of a session with its parts, in message order (time created, then id) and part id order,
# streamed by one statement (one consistent snapshot, memory bounded by one row); the indexes on
# message(session_id, time_created, id) and part(message_id, id) serve it. A part over the size limit comes
# back as NULL; a message without parts comes once with a NULL part id.
_TURNS_QUERY = (
    "SELECT m.id, m.time_created, m.data, p.id, CASE WHEN length(p.data) > ? THEN NULL ELSE p.data END "
    "FROM message AS m LEFT JOIN part AS p ON p.message_id = m.id WHERE m.session_id = ? "
    "ORDER BY m.time_created, m.id, p.id"
)


def _db_turns(path: Path, stats: ReadStats, session_id: str | None) -> Iterator[Turn]:
    try:
        conn = connect(path)
    except sqlite3.Error:
        stats.malformed += 1
        return
    try:
        try:
            if session_id is None:
                rows = conn.execute("SELECT id, parent_id FROM session WHERE parent_id IS NULL LIMIT 2").fetchall()
                if len(rows) != 1:
                    raise FileNotFoundError(errno.ENOENT, f"{path} holds {'no' if not rows else 'several'} "
                                            "OpenCode sessions; name one")  # fmt: skip
            else:
                rows = conn.execute("SELECT id, parent_id FROM session WHERE id = ?", (session_id,)).fetchall()
                if not rows:
                    raise FileNotFoundError(errno.ENOENT, f"no OpenCode session {session_id} in {path}")
            sid, parent = rows[0]
            reader = _Reader(stats, sid if parent else None)
            part_turns = reader.part
            loads = json.loads
            current: str | None = None
            message = _Message("", None, False, None)
            shell = False
            rows_read = position = 0
            try:
                for mid, created, mdata, pid, data in conn.execute(_TURNS_QUERY, (MAX_LINE_BYTES, sid)):
                    if mid != current:
                        current = mid
                        rows_read += 1
                        try:
                            value = loads(mdata)
                        except (TypeError, ValueError, RecursionError):
                            value = None
                        message = _message_of(mid, value, created, stats)
                        shell = reader.begin(message)
                    if pid is None:
                        continue  # a message without parts
                    rows_read += 1
                    position += 1
                    if data is None:  # the column is NOT NULL: only the size check makes it NULL
                        stats.oversized += 1
                        continue
                    try:
                        part = loads(data)
                    except (TypeError, ValueError, RecursionError):
                        stats.malformed += 1
                        continue
                    yield from part_turns(message, pid, part, shell, position)
            finally:
                stats.lines += rows_read
        except sqlite3.Error:
            stats.malformed += 1  # locked, corrupt, or not OpenCode's schema; the turns so far stand
            return
    finally:
        conn.close()


def _db_first_prompt(conn: sqlite3.Connection, sid: str) -> str | None:
    messages = conn.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,))
    for mid, data in messages:
        try:
            value = json.loads(data)
        except (TypeError, ValueError, RecursionError):
            continue
        if not isinstance(value, dict) or value.get("role") != "user":
            continue
        rows = conn.execute("SELECT CASE WHEN length(data) > ? THEN 'null' ELSE data END FROM part "
                            "WHERE message_id = ? ORDER BY id", (MAX_LINE_BYTES, mid)).fetchall()  # fmt: skip
        parts = []
        for (raw,) in rows:
            try:
                parts.append(json.loads(raw))
            except (TypeError, ValueError, RecursionError):
                continue
        found = _first_prompt(parts)
        if found is not None:
            messages.close()
            return found
    return None


def _db_sessions(path: Path, only_one: bool = False) -> list[SessionInfo]:
    """Top-level sessions of one database ([] when it cannot be read); with only_one, [] unless exactly one."""
    try:
        if not is_database(path):
            return []
        conn = connect(path)
    except (OSError, sqlite3.Error):
        return []
    try:
        rows = conn.execute("SELECT id, directory, time_updated FROM session WHERE parent_id IS NULL "
                            "ORDER BY time_updated, id" + (" LIMIT 2" if only_one else "")).fetchall()  # fmt: skip
        if only_one and len(rows) != 1:
            return []
        found = []
        for sid, directory, updated in rows:
            found.append(SessionInfo(HARNESS, sid, str(path), directory if isinstance(directory, str) else None,
                                     iso_ms(updated), _db_first_prompt(conn, sid)))  # fmt: skip
        return found
    except sqlite3.Error:
        return []
    finally:
        conn.close()


# ---------------------------------------------------------------- the legacy JSON layout


def _storage_of(session_file: Path) -> Path:
    """`storage/` from `storage/session/<projectID>/<sessionID>.json`."""
    return session_file.parent.parent.parent


def _legacy_messages(storage: Path, sid: str, stats: ReadStats) -> list[_Message]:
    """The session's message records (metadata only, small), in upstream order: time created, then id."""
    messages = []
    for file in _json_names(storage / "message" / sid):
        ok, value = _load_json(file, stats)
        mid = value["id"] if ok and isinstance(value, dict) and isinstance(value.get("id"), str) else file.stem
        if ok:
            messages.append(_message_of(mid, value, None, stats))
        else:
            messages.append(_Message(mid, None, False, None))
    messages.sort(key=lambda m: (m.created if isinstance(m.created, (int, float)) else 0, m.id))
    return messages


def _legacy_parts(storage: Path, mid: str, stats: ReadStats | None) -> Iterator[tuple[str, bool, Any]]:
    for file in _json_names(storage / "part" / mid):
        ok, value = _load_json(file, stats)
        pid = value["id"] if ok and isinstance(value, dict) and isinstance(value.get("id"), str) else file.stem
        yield pid, ok, value


def _legacy_turns(path: Path, stats: ReadStats, session_id: str | None) -> Iterator[Turn]:
    ok, session = _load_json(path, stats, MAX_SESSION_FILE)
    if ok and isinstance(session, dict) and isinstance(session.get("id"), str):
        sid, parent = session["id"], session.get("parentID")
    else:
        if ok:
            stats.malformed += 1
        sid, parent = session_id or path.stem, None
        if not sid.startswith("ses_") and session_id is None:
            return  # neither the file nor the caller names a session
    storage = _storage_of(path)
    reader = _Reader(stats, sid if parent else None)
    for message in _legacy_messages(storage, sid, stats):
        yield from reader.message(message, _legacy_parts(storage, message.id, stats))


def _legacy_info(path: Path, session: Any) -> SessionInfo | None:
    if not (isinstance(session, dict) and isinstance(session.get("id"), str) and isinstance(session.get("time"), dict)
            and ("projectID" in session or "directory" in session)):  # fmt: skip
        return None
    sid = session["id"]
    storage = _storage_of(path)
    first = None
    # Message ids ascend with creation time, so name order finds the first prompt without reading every message.
    for file in _json_names(storage / "message" / sid):
        ok, value = _load_json(file, None)
        if ok and isinstance(value, dict) and value.get("role") == "user":
            mid = value["id"] if isinstance(value.get("id"), str) else file.stem
            first = _first_prompt(part for _, ok, part in _legacy_parts(storage, mid, None) if ok)
            if first is not None:
                break
    directory = session.get("directory")
    return SessionInfo(HARNESS, sid, str(path), directory if isinstance(directory, str) else None,
                       iso_ms(session["time"].get("updated", session["time"].get("created"))), first)  # fmt: skip


def _legacy_sessions(storage: Path, seen: set[str]) -> Iterator[SessionInfo]:
    root = storage / "session"
    try:
        projects = sorted(entry.name for entry in os.scandir(root) if entry.is_dir())
    except OSError:
        return
    for project in projects:
        for file in _json_names(root / project):
            ok, session = _load_json(file, None, MAX_SESSION_FILE)
            if not ok or not isinstance(session, dict) or session.get("parentID"):
                continue
            if session.get("id") in seen:
                continue  # migrated into the database, which is read instead
            info = _legacy_info(file, session)
            if info is not None:
                seen.add(info.session_id)
                yield info


# ---------------------------------------------------------------- the interface


def sessions(environ: Mapping[str, str]) -> Iterator[SessionInfo]:
    """Every top-level OpenCode session: the databases' first, then legacy files not migrated into them."""
    seen: set[str] = set()
    for db in database_paths(environ):
        for info in _db_sessions(db):
            if info.session_id not in seen:
                seen.add(info.session_id)
                yield info
    base = data_dir(environ)
    if base is not None:
        yield from _legacy_sessions(base / "storage", seen)


def describe(path: Path) -> SessionInfo | None:
    """A legacy session file's session; a database's only when it holds exactly one top-level session."""
    try:
        if not path.is_file():
            return None
        if is_database(path):
            found = _db_sessions(path, only_one=True)
            return found[0] if found else None
        if path.suffix != ".json" or path.stat().st_size > MAX_SESSION_FILE:
            return None
        ok, session = _load_json(path, None, MAX_SESSION_FILE)
        return _legacy_info(path, session) if ok else None
    except (OSError, ValueError):
        return None


def read_turns(path: Path, stats: ReadStats, session_id: str | None = None) -> Iterator[Turn]:
    """Every turn of one session of a database (by id) or of a legacy session file, in order."""
    if is_database(path):  # raises FileNotFoundError, IsADirectoryError, PermissionError
        yield from _db_turns(path, stats, session_id)
    elif path.stat().st_size:
        yield from _legacy_turns(path, stats, session_id)
