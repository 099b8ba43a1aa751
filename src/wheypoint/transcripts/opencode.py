"""OpenCode session storage: finding, describing and reading sessions in its SQLite database and older JSON files.

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

A database holds many sessions, so `read_turns` needs the session id, except when the database holds
exactly one top-level session; `describe` of a database likewise answers only in that case. A
session's subagents are child sessions (`parent_id`); `sessions()` lists top-level sessions only, and
reading a child session marks every turn with `agent` = that child session's id.

Turns are parts, in message order and part order; `opencode_turns` says which turn each part yields.
"""

from __future__ import annotations

import errno
import os
import sqlite3

from wheypoint.model.regular import is_regular, open_regular
from wheypoint.transcripts.homes import opencode_data, opencode_databases
from wheypoint.transcripts.lines import MAX_LINE_BYTES, loads
from wheypoint.transcripts.model import ReadStats, SessionInfo
from wheypoint.transcripts.opencode_turns import SKIPPED_PARTS as SKIPPED_PARTS
from wheypoint.transcripts.opencode_turns import Message, TurnReader, first_prompt, iso_ms, message_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from wheypoint.transcripts.model import Turn

HARNESS = "opencode"

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT = 0.5  # seconds to wait on a locked database before counting it and giving up
MAX_SESSION_FILE = 1 << 20  # a legacy session file is metadata; anything bigger is not one


# ---------------------------------------------------------------- small helpers


def is_database(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts with the SQLite header (raises OSError when it cannot be opened)."""
    with open_regular(path) as handle:
        return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


# Bytes a file URI carries as they are (RFC 3986 unreserved, and the separator); the rest are %-escaped.
_URI_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")


def _file_uri(path: str) -> str:
    """The `file:` URI of an absolute path, escaped as `pathlib`'s `as_uri` escapes it."""
    safe = _URI_SAFE
    if os.sep != "/":  # Windows: file:///C:/folder/file, the drive's colon kept
        path = "/" + path.replace(os.sep, "/").lstrip("/")
        safe = safe | {ord(":")}
    return "file://" + "".join(chr(b) if b in safe else f"%{b:02X}" for b in os.fsencode(path))


def connect(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A read-only connection that waits at most BUSY_TIMEOUT on a lock (raises sqlite3.Error)."""
    if not is_regular(path):  # SQLite would open a FIFO and wait for a writer, or read a device without end
        raise sqlite3.OperationalError(f"{os.fspath(path)} is not a regular file")
    uri = _file_uri(os.path.realpath(path)) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
    try:
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def _load_json(path: str, stats: ReadStats | None, limit: int | None = None) -> tuple[bool, Any]:
    """(ok, value) for one JSON file of at most `limit` bytes (default MAX_LINE_BYTES); counted, never raised."""
    limit = MAX_LINE_BYTES if limit is None else limit
    try:
        with open_regular(path) as handle:
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
        return True, loads(raw)
    except UnicodeDecodeError:
        if stats is not None:
            stats.invalid_utf8 += 1
    except (ValueError, RecursionError):
        if stats is not None:
            stats.malformed += 1
    return False, None


def _json_names(folder: str) -> list[str]:
    """The `*.json` files of a folder in name order (ids sort by creation); none if it is missing."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(entry.name for entry in entries if entry.name.endswith(".json"))
    except OSError:
        return []
    return [os.path.join(folder, name) for name in names]


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


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


def _db_turns(path: str, stats: ReadStats, session_id: str | None) -> Iterator[Turn]:
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
            reader = TurnReader(stats, sid if parent else None)
            part_turns = reader.part
            current: Any = None
            message: Message | None = Message("", None, False, None)
            shell = False
            rows_read = position = 0
            # Text columns come as bytes and are decoded here: a row of invalid UTF-8 is then one bad row,
            # where sqlite3 would end the whole read with an error.
            conn.text_factory = bytes
            try:
                for raw_mid, created, mdata, raw_pid, data in conn.execute(_TURNS_QUERY, (MAX_LINE_BYTES, sid)):
                    if raw_mid != current:
                        current = raw_mid
                        rows_read += 1
                        mid = _column_text(raw_mid)
                        if mid is None:
                            stats.invalid_utf8 += 1
                            message = None  # its parts cannot be named: skipped below
                            continue
                        try:
                            message = message_of(mid, loads(mdata), created, stats)
                        except UnicodeError:
                            stats.invalid_utf8 += 1
                            message = Message(mid, None, False, created)
                        except (TypeError, ValueError, RecursionError):
                            message = message_of(mid, None, created, stats)
                        shell = reader.begin(message)
                    if raw_pid is None:
                        continue  # a message without parts
                    rows_read += 1
                    position += 1
                    pid = _column_text(raw_pid)
                    if message is None or pid is None:
                        stats.invalid_utf8 += 1
                        continue
                    if data is None:  # the column is NOT NULL: only the size check makes it NULL
                        stats.oversized += 1
                        continue
                    try:
                        part = loads(data)
                    except UnicodeError:
                        stats.invalid_utf8 += 1
                        continue
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


def _column_text(value: Any) -> str | None:
    """A text column read as bytes, decoded; None when it is not UTF-8 (or not text at all)."""
    if value.__class__ is str:
        return str(value)
    if value.__class__ is not bytes:
        return None
    try:
        return str(value.decode())
    except UnicodeDecodeError:
        return None


def _db_first_prompt(conn: sqlite3.Connection, sid: str) -> str | None:
    messages = conn.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,))
    for mid, data in messages:
        try:
            value = loads(data)
        except (TypeError, ValueError, RecursionError):
            continue
        if not isinstance(value, dict) or value.get("role") != "user":
            continue
        rows = conn.execute("SELECT CASE WHEN length(data) > ? THEN 'null' ELSE data END FROM part "
                            "WHERE message_id = ? ORDER BY id", (MAX_LINE_BYTES, mid)).fetchall()  # fmt: skip
        parts = []
        for (raw,) in rows:
            try:
                parts.append(loads(raw))
            except (TypeError, ValueError, RecursionError):
                continue
        found = first_prompt(parts)
        if found is not None:
            messages.close()
            return found
    return None


def _db_sessions(path: str, only_one: bool = False, since_ms: int = 0) -> list[SessionInfo]:
    """Top-level sessions of one database ([] when it cannot be read); with only_one, [] unless exactly one.

    With `since_ms`, only those updated at or after it (milliseconds since the epoch, as OpenCode stores time).
    """
    try:
        if not is_database(path):
            return []
        conn = connect(path)
    except (OSError, sqlite3.Error):
        return []
    try:
        rows = conn.execute("SELECT id, directory, time_updated FROM session WHERE parent_id IS NULL "
                            "AND time_updated >= ? ORDER BY time_updated, id" + (" LIMIT 2" if only_one else ""),
                            (since_ms,)).fetchall()  # fmt: skip
        if only_one and len(rows) != 1:
            return []
        found = []
        for sid, directory, updated in rows:
            found.append(SessionInfo(HARNESS, sid, path, directory if isinstance(directory, str) else None,
                                     iso_ms(updated), _db_first_prompt(conn, sid)))  # fmt: skip
        return found
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def database_sessions(path: str | os.PathLike[str]) -> list[SessionInfo]:
    """Every top-level session of one database ([] when it is not an OpenCode database or cannot be read)."""
    return _db_sessions(os.fspath(path))


def updated_sessions(path: str, since_ms: int) -> list[SessionInfo]:
    """The top-level sessions of one database updated at or after `since_ms` (the live-session lookup)."""
    return _db_sessions(path, since_ms=since_ms)


# ---------------------------------------------------------------- the legacy JSON layout


def _storage_of(session_file: str) -> str:
    """`storage/` from `storage/session/<projectID>/<sessionID>.json`."""
    return os.path.dirname(os.path.dirname(os.path.dirname(session_file)))


def _legacy_messages(storage: str, sid: str, stats: ReadStats) -> list[Message]:
    """The session's message records (metadata only, small), in upstream order: time created, then id."""
    messages = []
    for file in _json_names(os.path.join(storage, "message", sid)):
        ok, value = _load_json(file, stats)
        mid = value["id"] if ok and isinstance(value, dict) and isinstance(value.get("id"), str) else _stem(file)
        if ok:
            messages.append(message_of(mid, value, None, stats))
        else:
            messages.append(Message(mid, None, False, None))
    messages.sort(key=lambda m: (m.created if isinstance(m.created, (int, float)) else 0, m.id))
    return messages


def _legacy_parts(storage: str, mid: str, stats: ReadStats | None) -> Iterator[tuple[str, bool, Any]]:
    for file in _json_names(os.path.join(storage, "part", mid)):
        ok, value = _load_json(file, stats)
        pid = value["id"] if ok and isinstance(value, dict) and isinstance(value.get("id"), str) else _stem(file)
        yield pid, ok, value


def _legacy_turns(path: str, stats: ReadStats, session_id: str | None) -> Iterator[Turn]:
    ok, session = _load_json(path, stats, MAX_SESSION_FILE)
    if ok and isinstance(session, dict) and isinstance(session.get("id"), str):
        sid, parent = session["id"], session.get("parentID")
    else:
        if ok:
            stats.malformed += 1
        sid, parent = session_id or _stem(path), None
        if not sid.startswith("ses_") and session_id is None:
            return  # neither the file nor the caller names a session
    storage = _storage_of(path)
    reader = TurnReader(stats, sid if parent else None)
    for message in _legacy_messages(storage, sid, stats):
        yield from reader.message(message, _legacy_parts(storage, message.id, stats))


def _legacy_info(path: str, session: Any) -> SessionInfo | None:
    if not (isinstance(session, dict) and isinstance(session.get("id"), str) and isinstance(session.get("time"), dict)
            and ("projectID" in session or "directory" in session)):  # fmt: skip
        return None
    sid = session["id"]
    storage = _storage_of(path)
    first = None
    # Message ids ascend with creation time, so name order finds the first prompt without reading every message.
    for file in _json_names(os.path.join(storage, "message", sid)):
        ok, value = _load_json(file, None)
        if ok and isinstance(value, dict) and value.get("role") == "user":
            mid = value["id"] if isinstance(value.get("id"), str) else _stem(file)
            first = first_prompt(part for _, ok, part in _legacy_parts(storage, mid, None) if ok)
            if first is not None:
                break
    directory = session.get("directory")
    return SessionInfo(HARNESS, sid, path, directory if isinstance(directory, str) else None,
                       iso_ms(session["time"].get("updated", session["time"].get("created"))), first)  # fmt: skip


def _legacy_sessions(storage: str, seen: set[str]) -> Iterator[SessionInfo]:
    root = os.path.join(storage, "session")
    try:
        with os.scandir(root) as entries:
            projects = sorted(entry.name for entry in entries if entry.is_dir())
    except OSError:
        return
    for project in projects:
        for file in _json_names(os.path.join(root, project)):
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
    for db in opencode_databases(environ):
        for info in _db_sessions(db):
            if info.session_id not in seen:
                seen.add(info.session_id)
                yield info
    base = opencode_data(environ)
    if base is not None:
        yield from _legacy_sessions(os.path.join(base, "storage"), seen)


def describe(path: str | os.PathLike[str]) -> SessionInfo | None:
    """A legacy session file's session; a database's only when it holds exactly one top-level session."""
    try:
        path = os.fspath(path)
        if not os.path.isfile(path):
            return None
        if is_database(path):
            found = _db_sessions(path, only_one=True)
            return found[0] if found else None
        if os.path.splitext(path)[1] != ".json" or os.stat(path).st_size > MAX_SESSION_FILE:
            return None
        ok, session = _load_json(path, None, MAX_SESSION_FILE)
        return _legacy_info(path, session) if ok else None
    except (OSError, ValueError):
        return None


def read_turns(
    path: str | os.PathLike[str], stats: ReadStats, session_id: str | None = None, kinds: frozenset[str] | None = None
) -> Iterator[Turn]:
    """Every turn of one session of a database (by id) or of a legacy session file, in order."""
    path = os.fspath(path)
    if is_database(path):  # raises FileNotFoundError, IsADirectoryError, PermissionError
        yield from _db_turns(path, stats, session_id)
    elif os.stat(path).st_size:
        yield from _legacy_turns(path, stats, session_id)
