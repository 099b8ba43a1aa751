"""Reading OpenAI Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`): finding, describing, reading.

Every line of a current rollout is `{timestamp, type, payload}` with type session_meta, response_item,
event_msg, turn_context or compacted. Older rollouts (about September 2025 and before) start with a
bare `{id, timestamp, instructions}` line, then bare response items and `{"record_type": "state"}`
filler; both shapes are read, line by line, so one file may even mix them. `describe` reads the first
line (the session_meta), the head up to the first prompt and the tail (the last timestamp); which turns
the records yield is `codex_turns`.
"""

from __future__ import annotations

import os
from itertools import islice

from wheypoint.model.regular import open_regular
from wheypoint.transcripts import model
from wheypoint.transcripts.codex_turns import message_texts, read
from wheypoint.transcripts.homes import codex_home
from wheypoint.transcripts.lines import head_record, loads, mtime_stamp, read_jsonl
from wheypoint.transcripts.model import ReadStats, SessionInfo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from wheypoint.transcripts.model import ReadPoint, Turn

HARNESS = "codex"

_FIRST_PROMPT_SCAN = 5000  # records read at most to find a session's first prompt
_CWD_SCAN = 200  # records read at most to find the cwd of a rollout whose first line lacks it
_TAIL_BYTES = 256 * 1024
_HEAD_BYTES = 4 * 1024 * 1024


def read_turns(
    path: str | os.PathLike[str], stats: ReadStats, session_id: str | None = None, kinds: frozenset[str] | None = None
) -> Iterator[Turn]:
    """Every turn of one rollout, in file order. `session_id` is unused: a rollout holds one session."""
    path = os.fspath(path)
    with open_regular(path):  # an unusable path raises here, before iteration starts
        pass
    return read(path, stats)


def read_from(
    path: str | os.PathLike[str], stats: ReadStats, start: ReadPoint | None, kinds: frozenset[str] | None = None
) -> Iterator[Turn]:
    """The rollout's turns after `start` (lines.read_jsonl), for a rescue reading what was appended."""
    path = os.fspath(path)
    with open_regular(path):  # an unusable path raises here, before iteration starts
        pass
    return read(path, stats, start=start, meta=_head(path) if start is not None else None)


def _head(path: str) -> dict[str, Any] | None:
    """The decoded first record of a rollout, or None when it is not one."""
    try:
        with open_regular(path) as handle:
            record, _ = head_record(handle, _HEAD_BYTES)  # a mark, blank or damaged lines before it passed over
    except (OSError, ValueError):
        return None
    if record is None:
        return None
    payload = record.get("payload")
    if record.get("type") == "session_meta" and isinstance(payload, dict) and isinstance(payload.get("id"), str):
        return payload
    if "type" not in record and isinstance(record.get("id"), str) and isinstance(record.get("timestamp"), str) \
            and ("instructions" in record or "git" in record):  # fmt: skip
        return record  # an older rollout's bare opening line
    return None


def _cwd_from_context(text: str) -> str | None:
    start = text.find("<cwd>")
    end = text.find("</cwd>", start + 5)
    if start < 0 or end < 0:
        return None
    return text[start + 5 : end].strip() or None


def _scan_cwd(path: str) -> str | None:
    """The cwd of a rollout whose first line lacks it: from a turn_context or an environment block."""
    stats = ReadStats()
    for _, record in islice(read_jsonl(path, stats), _CWD_SCAN):
        if not isinstance(record, dict):
            continue
        payload = record.get("payload") if "payload" in record else record
        if not isinstance(payload, dict):
            continue
        if record.get("type") == "turn_context" and isinstance(payload.get("cwd"), str):
            return str(payload["cwd"])
        if payload.get("type") == "message" and payload.get("role") == "user":
            for text in message_texts(payload.get("content")):
                if "<environment_context>" in text[:64]:
                    found = _cwd_from_context(text)
                    if found:
                        return found
    return None


def _last_stamp(path: str) -> str | None:
    """The timestamp of the last complete record, read from the file's tail; else its mtime."""
    try:
        with open_regular(path) as handle:
            size = handle.seek(0, os.SEEK_END)
            start = max(0, size - _TAIL_BYTES)
            handle.seek(start)
            tail = handle.read()
            mtime = os.fstat(handle.fileno()).st_mtime
    except OSError:
        return None
    lines = tail.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first piece is the end of a line that began before the tail
    for line in reversed(lines):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("timestamp"), str):
            return str(record["timestamp"])
    return mtime_stamp(mtime)


def describe(path: str | os.PathLike[str]) -> SessionInfo | None:
    """The session stored in this rollout, or None when the file is not a Codex rollout."""
    try:
        path = os.fspath(path)
        if not os.path.isfile(path):
            return None
        meta = _head(path)
        if meta is None:
            return None
        cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
        if cwd is None:
            cwd = _scan_cwd(path)
        first_prompt = None
        stats = ReadStats()
        turns = read(path, stats)
        try:
            for turn in turns:
                if turn.kind == model.PROMPT:
                    first_prompt = turn.text
                    break
                if stats.lines >= _FIRST_PROMPT_SCAN:
                    break
        finally:
            turns.close()
        return SessionInfo(HARNESS, str(meta["id"]), path, cwd, _last_stamp(path), first_prompt)
    except (OSError, ValueError, RecursionError):
        return None


def sessions(environ: Mapping[str, str]) -> Iterator[SessionInfo]:
    """Every rollout under `$CODEX_HOME` (default `~/.codex`): sessions/ (dated folders) and archived_sessions/."""
    home = codex_home(environ)
    if home is None:
        return
    for folder, nested in (("sessions", True), ("archived_sessions", False)):
        root = os.path.join(home, folder)
        if not os.path.isdir(root):
            continue
        # os.walk, like pathlib's `**`, does not follow symlinked folders; its first step is the folder itself.
        walk = os.walk(root) if nested else [next(os.walk(root), (root, [], []))]
        found = [os.path.join(top, name) for top, _, names in walk for name in names
                 if name.startswith("rollout-") and name.endswith(".jsonl")]  # fmt: skip
        for path in sorted(found, key=lambda path: path.split(os.sep)):  # folder by folder, as pathlib sorts
            info = describe(path)
            if info is not None:
                yield info
