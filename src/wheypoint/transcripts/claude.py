"""Claude Code session files on disk: finding, describing and reading them, with their subagent files.

The files are `<config>/projects/<encoded-cwd>/<sessionId>.jsonl`, one JSON record a line. `sessions` and
`describe` read only the head of a file (its cwd, session id and first prompt) and its tail (the last timestamp).
`read_turns` reads the session file, then its subagent files; what each record means and which turns it yields
is `claude_turns`.

Subagents: `agent-<id>.jsonl` files beside the session (~2.0, matched by their `sessionId`) and
`<sessionId>/subagents/agent-<id>.jsonl` (2.1.2+) are read after the main file, with `agent` from their
`agentId` field (else the file name) and `source` set to the agent file.
"""

from __future__ import annotations

import os

from wheypoint.model.regular import open_regular
from wheypoint.transcripts.claude_kinds import classify
from wheypoint.transcripts.claude_turns import TurnReader
from wheypoint.transcripts.homes import claude_roots
from wheypoint.transcripts.lines import BOM, HEAD_DAMAGE, loads, mtime_stamp
from wheypoint.transcripts.model import MARKED, PROMPT, USER_KINDS, ReadStats, SessionInfo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from wheypoint.transcripts.model import ReadPoint, Turn

HARNESS = "claude-code"

_HEAD_BYTES = 8 * 1024 * 1024  # what describe() reads at most to find the cwd, id and first prompt
_TAIL_BYTES = 256 * 1024  # what describe() reads from the end for the last timestamp
# Record types that mark a file as Claude Code's (with a sessionId, uuid, leafUuid or messageId field).
_SESSION_TYPES = frozenset({
    "user", "assistant", "system", "summary", "progress", "file-history-snapshot", "queue-operation",
    "attachment", "last-prompt", "pr-link", "ai-title", "custom-title", "mode", "agent-name",
})  # fmt: skip


def _record(line: bytes) -> dict[str, Any] | None:
    """The JSON object on one line, or None for a blank, malformed or non-object line."""
    if not line.strip():
        return None
    try:
        value = loads(line)
    except (ValueError, RecursionError):
        return None
    return value if value.__class__ is dict else None


def _head_records(path: str, budget: int = _HEAD_BYTES) -> Iterator[dict[str, Any]]:
    """The decodable records among the first `budget` bytes, read line by line so a caller that stops early reads
    little; a line longer than the rest of the budget ends the scan."""
    with open_regular(path) as handle:
        while budget > 0:
            line = handle.readline(budget + 1)
            if not line or (not line.endswith(b"\n") and len(line) > budget):
                return
            budget -= len(line)
            record = _record(line)
            if record is not None:
                yield record


def _looks_like_session(rec: dict[str, Any]) -> bool:
    rtype = rec.get("type")
    return rtype.__class__ is str and rtype in _SESSION_TYPES and any(
        key in rec for key in ("sessionId", "uuid", "leafUuid", "messageId"))  # fmt: skip


def _first_prompt(rec: dict[str, Any]) -> str | None:
    if rec.get("type") != "user" or rec.get("isSidechain") is True:
        return None
    if rec.get("isMeta") is True or rec.get("isCompactSummary") is True or rec.get("planContent") is not None:
        return None  # context, a summary, or the accepted plan: none is what the person typed
    message = rec.get("message")
    content = message.get("content") if message.__class__ is dict else None
    if content.__class__ is str:
        return content if classify(content) == PROMPT else None
    if content.__class__ is list:
        if any(b.__class__ is dict and b.get("type") == "tool_result" for b in content):
            return None
        for block in content:
            if block.__class__ is dict and block.get("type") == "text":
                text = block.get("text")
                if text.__class__ is str and classify(text) == PROMPT:
                    return text
    return None


def _last_activity(path: str) -> str | None:
    with open_regular(path) as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - _TAIL_BYTES))
        data = handle.read()
    lines = data.split(b"\n")
    if size > _TAIL_BYTES:
        lines = lines[1:]  # the first piece is cut
    for line in reversed(lines):
        record = _record(line)
        if record is not None and record.get("timestamp").__class__ is str:
            stamp: str = record["timestamp"]
            return stamp
    return mtime_stamp(os.stat(path).st_mtime)


def _stem(path: str) -> str:
    """The file name without its suffix, as `pathlib` spells it."""
    return os.path.splitext(os.path.basename(path))[0]


def describe(path: str | os.PathLike[str]) -> SessionInfo | None:
    """The Claude Code session stored in this file, or None when it is not one (never raises)."""
    try:
        path = os.fspath(path)
        if not os.path.isfile(path):
            return None
        with open_regular(path) as handle:
            sniff = handle.read(4096).removeprefix(BOM)
        # JSON lines: one of the first few (blank or damaged ones before it are passed over, as when reading)
        if not any(line.lstrip()[:1] == b"{" for line in sniff.split(b"\n", HEAD_DAMAGE + 1)[: HEAD_DAMAGE + 1]):
            return None
        session_id: str | None = None
        cwd: str | None = None
        prompt: str | None = None
        ours = False
        for count, rec in enumerate(_head_records(path)):
            if not ours:
                if _looks_like_session(rec):
                    ours = True
                elif count >= 20:
                    return None
            if session_id is None and rec.get("sessionId").__class__ is str:
                session_id = rec["sessionId"]
            if cwd is None and rec.get("cwd").__class__ is str:
                cwd = rec["cwd"]
            if prompt is None:
                prompt = _first_prompt(rec)
            if ours and session_id is not None and cwd is not None and prompt is not None:
                break
        if not ours:
            return None
        return SessionInfo(HARNESS, session_id or _stem(path), path, cwd, _last_activity(path), prompt)
    except (OSError, ValueError, TypeError, RecursionError):
        return None


def _names(folder: str, suffix: str) -> list[str]:
    """The sorted names in a folder that end with `suffix` (raises OSError when it cannot be listed)."""
    with os.scandir(folder) as entries:
        return sorted(entry.name for entry in entries if entry.name.endswith(suffix))


def sessions(environ: Mapping[str, str]) -> Iterator[SessionInfo]:
    """Every main Claude Code session under the config roots (CLAUDE_CONFIG_DIR, else ~/.claude, ~/.config/claude)."""
    done: set[str] = set()
    for root in claude_roots(environ):
        projects = os.path.join(root, "projects")
        try:
            folders = [os.path.join(projects, name) for name in _names(projects, "")]
        except OSError:
            continue
        for folder in folders:
            if not os.path.isdir(folder):
                continue
            try:
                names = _names(folder, ".jsonl")
            except OSError:
                continue
            for name in names:
                if name.startswith("agent-"):
                    continue
                path = os.path.join(folder, name)
                try:
                    key = os.path.realpath(path)
                except (OSError, ValueError):
                    key = path
                if key in done:
                    continue
                done.add(key)
                info = describe(path)
                if info is not None:
                    yield info


def _agent_head(path: str) -> tuple[str | None, str | None, str]:
    """(sessionId, agentId, first timestamp or "") from the start of an agent file."""
    session_id = agent_id = None
    stamp = ""
    try:
        for rec in _head_records(path, 1 << 20):
            if session_id is None and rec.get("sessionId").__class__ is str:
                session_id = rec["sessionId"]
            if agent_id is None and rec.get("agentId").__class__ is str:
                agent_id = rec["agentId"]
            if not stamp and rec.get("timestamp").__class__ is str:
                stamp = rec["timestamp"]
            if session_id is not None and agent_id is not None and stamp:
                break
    except OSError:
        pass
    return session_id, agent_id, stamp


def read_from(
    path: str | os.PathLike[str], stats: ReadStats, start: ReadPoint | None, kinds: frozenset[str] | None = None
) -> Iterator[Turn]:
    """The main file's turns after `start` (see lines.read_jsonl), its subagent files left out: what a rescue,
    which keeps the main thread only, reads again as the file grows."""
    user_only = kinds is not None and kinds <= frozenset((*USER_KINDS, MARKED))
    marked = user_only and MARKED in (kinds or ())
    return TurnReader(stats).read(os.fspath(path), user_only=user_only, start=start, marked=marked)


def _agent_files(folder: str) -> list[str]:
    """The `agent-*.jsonl` files of a folder (an empty name is the current folder), none when it is unreadable."""
    try:
        names = _names(folder or os.curdir, ".jsonl")
    except OSError:
        return []
    return [os.path.join(folder, name) for name in names if name.startswith("agent-")]


def _subagent_files(path: str, session_id: str) -> list[tuple[str, str, str]]:
    """(first timestamp, agent id, path) of the subagent files of the session stored at `path`."""
    found: list[tuple[str, str, str]] = []
    folder = os.path.dirname(path)
    candidates = [(p, True) for p in _agent_files(folder)]  # ~2.0: beside the session
    candidates += [(p, False) for p in _agent_files(os.path.join(folder, _stem(path), "subagents"))]
    for candidate, must_match in candidates:
        if candidate == path or not os.path.isfile(candidate):
            continue
        sid, agent_id, stamp = _agent_head(candidate)
        if must_match and sid != session_id:
            continue
        found.append((stamp, agent_id or _stem(candidate)[len("agent-") :], candidate))
    found.sort()
    return found


def read_turns(
    path: str | os.PathLike[str], stats: ReadStats, session_id: str | None = None, kinds: frozenset[str] | None = None
) -> Iterator[Turn]:
    """Every turn of the session in `path`, then those of its subagent files. `session_id` is unused: one file
    holds one session. With `kinds` limited to the user's, the agent's lines are passed over undecoded (the
    stream then holds no agent turns). Raises OSError only for an unusable path."""
    path = os.fspath(path)
    reader = TurnReader(stats)
    user_only = kinds is not None and kinds <= frozenset(USER_KINDS)
    if os.path.basename(path).startswith("agent-"):
        yield from reader.read(path, _agent_head(path)[1] or _stem(path)[len("agent-") :], user_only=user_only)
        return
    yield from reader.read(path, user_only=user_only)
    main_id = reader.session_id or _stem(path)
    for _, agent_id, agent_path in _subagent_files(path, main_id):
        try:
            yield from reader.read(agent_path, agent_id, agent_path, user_only)
        except OSError:
            stats.unknown["unreadable subagent file"] += 1
