"""Gemini CLI sessions: the older single-JSON files and the newer append-only JSONL files under ~/.gemini/tmp.

Layout. `$GEMINI_CLI_HOME` (else `$HOME`) `/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.json[l]`.
`<project>` is the SHA-256 hex of the project root in older builds (16 hex characters in some), a short slug in
newer ones; a slug folder holds a `.project_root` file naming the project root, and `~/.gemini/projects.json` maps
roots to slugs. The folder name is never decoded: the cwd comes from `.project_root`, from `projects.json`, or by
hashing the roots `projects.json` lists and comparing with the folder name or the session's `projectHash`.
Subagent sessions live in `chats/<parent sessionId>/<sessionId>.jsonl`; they are read after the main file.

JSONL records: a metadata record {sessionId, projectHash, startTime, lastUpdated, kind, ...}; one record per
message, {id, timestamp, type, content, displayContent?, ...}; a message is rewritten in full, with the same id,
when it gains tokens or tool-call results (only ever the latest message); `{"$set": {...}}` updates the session's
metadata (lastUpdated, summary, directories) and may carry a whole replacement `messages` list (history sync after
compression or masking); `{"$rewindTo": id}` drops that message and all later ones from the visible history.

Choices. Rewound messages are still yielded: the person typed those words, and wheypoint keeps evidence, not the
agent's current view. A rewritten message is yielded once, with its final content, at the line where it first
appeared; since only the latest message is ever rewritten, one message of look-ahead is enough. Memory: that one
record plus the recent message ids (a bounded window, needed to de-duplicate `$set.messages`).
Messages of a `$set.messages` list whose ids were already seen are counted as duplicates; new ids there (the
compression summary and its acknowledgement) are yielded at that record's line. A single-JSON file cannot be
streamed with the stdlib: it is loaded whole up to MAX_JSON_BYTES, and a larger one is counted in stats.oversized
and yields nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from wheypoint.transcripts.lines import read_jsonl
from wheypoint.transcripts.model import (
    ASSISTANT,
    COMPACTION_SUMMARY,
    PROMPT,
    SHELL_INPUT,
    SLASH_COMMAND,
    SYSTEM,
    THINKING,
    TOOL_CALL,
    TOOL_RESULT,
    ReadStats,
    RecentIds,
    SessionInfo,
    Turn,
)

HARNESS = "gemini"

# The single-JSON form is loaded whole; this bound keeps the peak RSS of a read under 64 MB.
MAX_JSON_BYTES = 10 * 1024 * 1024
_HEAD_BYTES = 1 << 20  # how much of a file `describe` reads from either end
_SMALL_JSON = 2 * 1024 * 1024  # single-JSON files up to this size are parsed whole by `describe`
_MAX_SMALL_FILE = 1 << 20  # .project_root and projects.json are read only up to this size
_SYSTEM_TYPES = frozenset(("info", "error", "warning"))
_MESSAGE_TYPES = frozenset(("user", "gemini", "info", "error", "warning"))
_MARKS = frozenset("/!<")  # the first characters that can make a user message something other than a prompt
_PLAIN_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/!<")


def _encoder() -> Any:
    """Compact-ish JSON for tool arguments; the C encoder is built once (json.dumps builds one per call)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    plain = json.JSONEncoder(ensure_ascii=False)
    if make is None:
        return plain.encode
    strings = json.encoder.encode_basestring
    fast = make(None, plain.default, strings, None, ": ", ", ", False, False, True)

    def encode(value: Any) -> str:
        if type(value) is dict or type(value) is list:
            try:
                return "".join(fast(value, 0))
            except (TypeError, ValueError):
                pass
        return plain.encode(value)

    return encode


_encode = _encoder()
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]+")
_HEX = re.compile(r"[0-9a-f]{16}|[0-9a-f]{64}")


# ---------------------------------------------------------------- classification


def _text(content: Any) -> str | None:
    """The text of a message's content: a string, or the concatenated text parts of a part list."""
    if type(content) is str:
        return content
    if type(content) is list:
        if len(content) == 1:
            part = content[0]
            text = part.get("text") if type(part) is dict else None
            return text if type(text) is str else ""
        return "".join(part["text"] for part in content if type(part) is dict and type(part.get("text")) is str)
    if type(content) is dict and type(content.get("text")) is str:
        return str(content["text"])
    return None


def user_kind(text: str) -> str:
    """The kind of a user message, from what its text shows (Gemini CLI's own tests on the typed line)."""
    head = text if text[:1] in _PLAIN_START else text[:256].lstrip()
    if head[:1] not in _MARKS:
        return PROMPT
    if head.startswith("<state_snapshot>"):
        return COMPACTION_SUMMARY  # the synthetic user turn that carries a compression summary
    if head.startswith("/") and not head.startswith(("//", "/*")):
        return SLASH_COMMAND
    if head.startswith("!"):
        return SHELL_INPUT
    return PROMPT


def _user_text(message: dict[str, Any]) -> str | None:
    """What the person typed: displayContent when the CLI stored one (content then holds expansions), else content."""
    display = message.get("displayContent")
    if display is not None:
        text = _text(display)
        if text:
            return text
    return _text(message.get("content"))


def _result_text(call: dict[str, Any]) -> str | None:
    """The output a tool call returned to the model (functionResponse output or error), else its display string."""
    result = call.get("result")
    parts = result if type(result) is list else [result] if type(result) is dict else []
    pieces: list[str] = []
    for part in parts:
        if type(part) is not dict:
            continue
        if type(part.get("text")) is str:
            pieces.append(part["text"])
            continue
        reply = part.get("functionResponse")
        if type(reply) is not dict:
            continue
        response = reply.get("response")
        if type(response) is dict:
            for key in ("output", "error"):
                if type(response.get(key)) is str:
                    pieces.append(response[key])
                    break
            else:
                pieces.append(json.dumps(response, ensure_ascii=False))
        elif type(response) is str:
            pieces.append(response)
    if pieces:
        return "".join(pieces)
    if type(result) is str:
        return result
    display = call.get("resultDisplay")
    return display if type(display) is str else None


def _message_turns(message: dict[str, Any], position: int, stats: ReadStats, agent: str | None,
                   source: str | None) -> list[Turn]:  # fmt: skip
    """The turns of one message record; the first keeps the message id, the next ones get `#2`, `#3`, ..."""
    mid: str = message["id"]
    kind = message.get("type")
    timestamp = message.get("timestamp")
    if type(timestamp) is not str:
        timestamp = None
    if kind == "user":
        text = _user_text(message)
        if text is None:
            stats.malformed += 1
            return []
        return [Turn(mid, user_kind(text), timestamp, text, position, agent, source)] if text else []
    if kind == "gemini":
        return _gemini_turns(message, mid, timestamp, position, agent, source)
    if kind in _SYSTEM_TYPES:
        text = _text(message.get("content"))
        if text is None:
            stats.malformed += 1
            return []
        return [Turn(mid, SYSTEM, timestamp, text, position, agent, source)] if text else []
    stats.unknown[f"message:{kind}"] += 1
    return []


def _gemini_turns(message: dict[str, Any], mid: str, timestamp: str | None, position: int, agent: str | None,
                  source: str | None) -> list[Turn]:  # fmt: skip
    """Thoughts (thinking), then the text (assistant), then each tool call and its result."""
    made: list[Turn] = []
    thoughts = message.get("thoughts")
    if thoughts and type(thoughts) is list:
        for thought in thoughts:
            if type(thought) is dict:
                pieces = [value for value in (thought.get("subject"), thought.get("description"))
                          if value and type(value) is str]  # fmt: skip
                if pieces:
                    when = thought.get("timestamp")
                    made.append(Turn(f"{mid}#{len(made) + 1}" if made else mid, THINKING,
                                     when if type(when) is str else timestamp, "\n\n".join(pieces), position,
                                     agent, source))  # fmt: skip
    content = message.get("content")
    text = content if type(content) is str else _text(content)
    if text:
        made.append(Turn(f"{mid}#{len(made) + 1}" if made else mid, ASSISTANT, timestamp, text, position, agent,
                         source))  # fmt: skip
    calls = message.get("toolCalls")
    if calls and type(calls) is list:
        for call in calls:
            if type(call) is dict:
                name = call.get("name")
                when = call.get("timestamp")
                if type(when) is not str:
                    when = timestamp
                body = f"{name if type(name) is str else '?'} {_encode(call.get('args'))}"
                made.append(Turn(f"{mid}#{len(made) + 1}" if made else mid, TOOL_CALL, when, body, position, agent,
                                 source))  # fmt: skip
                output = _result_text(call)
                if output is not None:
                    made.append(Turn(f"{mid}#{len(made) + 1}", TOOL_RESULT, when, output, position, agent, source))
    return made


# ---------------------------------------------------------------- reading


def _looks_legacy(path: Path) -> bool:
    """True for the single-JSON form: by suffix, else by a first line that is not a whole JSON object."""
    if path.suffix == ".json":
        return True
    if path.suffix == ".jsonl":
        return False
    with path.open("rb") as handle:
        first = handle.readline(_HEAD_BYTES)
    try:
        return type(json.loads(first)) is not dict
    except ValueError:
        return True


def _read_jsonl(path: Path, stats: ReadStats, agent: str | None, source: str | None,
                found: list[str]) -> Iterator[Turn]:  # fmt: skip
    seen = RecentIds()  # the ids seen lately: bounded memory whatever the file's size
    pending: dict[str, Any] | None = None  # the latest message, held until a later message shows it is final
    pending_id = None
    pending_at = 0
    for number, record in read_jsonl(path, stats):
        if type(record) is not dict:
            stats.malformed += 1
            continue
        mid = record.get("id")
        if mid is not None and type(mid) is str:
            if mid == pending_id:
                pending = record  # the same message rewritten: keep the newest content, the first position
                stats.duplicates += 1
            elif mid in seen:
                stats.duplicates += 1
            else:
                if pending is not None:
                    yield from _message_turns(pending, pending_at, stats, agent, source)
                seen.add(mid)
                pending, pending_id, pending_at = record, mid, number
            continue
        update = record.get("$set")
        if update is None:
            if "$rewindTo" in record:
                continue  # the rewound messages stay: they are what was typed and said
            if type(record.get("sessionId")) is not str:
                kind = record.get("type")
                stats.unknown[kind if type(kind) is str else "record:" + ",".join(sorted(record)[:3])] += 1
                continue
            update = record  # a metadata record (first line, or rewritten when a session is resumed)
        elif type(update) is not dict:
            stats.malformed += 1
            continue
        if not found and type(update.get("sessionId")) is str:
            found.append(update["sessionId"])
        messages = update.get("messages")
        if messages is None:
            continue
        if type(messages) is not list:
            stats.malformed += 1
            continue
        if pending is not None:  # a whole replacement history: what it adds comes after the pending message
            yield from _message_turns(pending, pending_at, stats, agent, source)
            pending = pending_id = None
        for message in messages:
            if type(message) is not dict or type(message.get("id")) is not str:
                stats.malformed += 1
            elif message["id"] in seen:
                stats.duplicates += 1
            else:
                seen.add(message["id"])
                yield from _message_turns(message, number, stats, agent, source)
    if pending is not None:
        yield from _message_turns(pending, pending_at, stats, agent, source)


def _read_legacy(path: Path, stats: ReadStats, agent: str | None, source: str | None,
                 found: list[str]) -> Iterator[Turn]:  # fmt: skip
    with path.open("rb") as raw:
        size = os.fstat(raw.fileno()).st_size
        if size > MAX_JSON_BYTES:
            stats.oversized += 1
            return
        try:  # decoded while read, so the bytes and the text are never both whole in memory
            with open(raw.fileno(), encoding="utf-8", newline="", closefd=False) as handle:
                data = handle.read(MAX_JSON_BYTES + 1)
        except UnicodeDecodeError:
            stats.invalid_utf8 += 1
            return
    if not data.strip():
        return
    try:
        document = json.loads(data)
    except json.JSONDecodeError as error:
        if error.msg.startswith("Extra data"):  # JSONL content under a .json name
            del data
            yield from _read_jsonl(path, stats, agent, source, found)
            return
        if error.pos >= len(data.rstrip()):
            stats.truncated_tail = True  # cut off while being rewritten
        else:
            stats.malformed += 1
        return
    del data
    messages = document.get("messages") if type(document) is dict else None
    if type(messages) is not list:
        stats.malformed += 1
        return
    if type(document.get("sessionId")) is str:
        found.append(document["sessionId"])
    seen: set[str] = set()
    for index, message in enumerate(messages, 1):
        stats.lines += 1
        if type(message) is not dict or type(message.get("id")) is not str:
            stats.malformed += 1
            continue
        if message["id"] in seen:
            stats.duplicates += 1
            continue
        seen.add(message["id"])
        yield from _message_turns(message, index, stats, agent, source)


def read_turns(path: Path, stats: ReadStats, session_id: str | None = None) -> Iterator[Turn]:
    """Every turn of the session in `path`, then those of its subagents (agent = the subagent's session id).

    `session_id` is not needed: a file holds one session.
    """
    path = Path(path)
    found: list[str] = []
    legacy = _looks_legacy(path)
    reader = _read_legacy if legacy else _read_jsonl
    yield from reader(path, stats, None, None, found)
    if not found or not _SAFE_ID.fullmatch(found[0]) or path.parent.name == found[0]:
        return
    folder = path.parent / found[0]
    try:
        children = sorted(child for child in folder.iterdir() if child.suffix == ".jsonl" and child.is_file())
    except OSError:
        return
    for child in children:
        try:
            yield from _read_jsonl(child, stats, child.stem, str(child), [])
        except OSError:
            continue


# ---------------------------------------------------------------- discovery


def _gemini_dir(environ: Mapping[str, str]) -> Path | None:
    home = environ.get("GEMINI_CLI_HOME") or environ.get("HOME")
    return Path(home) / ".gemini" if home else None


def _read_small(path: Path) -> bytes | None:
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_SMALL_FILE + 1)
    except OSError:
        return None
    return data if len(data) <= _MAX_SMALL_FILE else None


def _registry(gemini_dir: Path) -> dict[str, str]:
    """`projects.json`: project root -> folder slug."""
    data = _read_small(gemini_dir / "projects.json")
    try:
        projects = json.loads(data)["projects"] if data else None
    except (ValueError, TypeError, KeyError):
        return {}
    if type(projects) is not dict:
        return {}
    return {root: slug for root, slug in projects.items() if type(slug) is str}


def project_hash(root: str) -> str:
    """The SHA-256 hex digest Gemini CLI stores as projectHash (older builds keep its first 16 characters)."""
    return hashlib.sha256(root.encode("utf-8")).hexdigest()


def _hash_matches(digest: str, stored: str | None) -> bool:
    return bool(stored) and len(stored or "") >= 16 and digest.startswith(stored or "-")


def _project_cwd(project: Path, stored_hash: str | None, registry: dict[str, str] | None = None) -> str | None:
    """The project root of a tmp/<project> folder, without decoding its name."""
    marker = _read_small(project / ".project_root")
    if marker is not None:
        try:
            root = marker.decode("utf-8").strip()
        except UnicodeDecodeError:
            root = ""
        if root:
            return root
    if registry is None:
        registry = _registry(project.parent.parent)
    for root, slug in registry.items():
        if slug == project.name:
            return root
    if _HEX.fullmatch(project.name) or stored_hash:
        for root in registry:
            digest = project_hash(root)
            if _hash_matches(digest, project.name) or _hash_matches(digest, stored_hash):
                return root
    return None


def _legacy_head(path: Path, size: int) -> tuple[dict[str, Any], list[Any]] | None:
    """The metadata and the leading messages of a single-JSON file, without parsing all of it."""
    with path.open("rb") as handle:
        data = handle.read(size if size <= _SMALL_JSON else _HEAD_BYTES)
    if size <= _SMALL_JSON:
        try:
            document = json.loads(data)
        except ValueError:
            return None
        if type(document) is not dict:
            return None
        listed = document.get("messages")
        return document, listed if type(listed) is list else []
    text = data.decode("utf-8", "ignore")
    cut = text.find('"messages"')
    top = text if cut < 0 else text[:cut]
    meta: dict[str, Any] = {}
    for key in ("sessionId", "projectHash", "startTime", "lastUpdated", "kind"):
        match = re.search(r'"' + key + r'"\s*:\s*("(?:[^"\\]|\\.)*")', top)
        if match:
            meta[key] = json.loads(match.group(1))
    messages: list[Any] = []
    if cut >= 0:
        decoder = json.JSONDecoder()
        at = text.find("[", cut) + 1
        while 0 < at < len(text) and len(messages) < 64:
            while at < len(text) and text[at] in " \t\r\n,":
                at += 1
            if text[at : at + 1] != "{":
                break
            try:
                message, at = decoder.raw_decode(text, at)
            except ValueError:
                break
            messages.append(message)
    return meta, messages


def _jsonl_head(path: Path, size: int) -> tuple[dict[str, Any], list[Any], str | None] | None:
    """The metadata record, the leading messages and the last activity of a JSONL file, read from its two ends.

    None when the first line is neither a Gemini metadata record nor a Gemini message record.
    """
    meta: dict[str, Any] = {}
    messages: list[Any] = []
    read = 0
    with path.open("rb") as handle:
        for index in range(64):
            line = handle.readline(_HEAD_BYTES)
            read += len(line)
            if not line or read > 8 * _HEAD_BYTES:
                break
            if not line.endswith(b"\n") and len(line) >= _HEAD_BYTES:
                if index == 0:
                    return None
                break
            if index > 0 and b'"user"' not in line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                if index == 0:
                    return None
                continue
            if type(record) is not dict:
                if index == 0:
                    return None
                continue
            if index == 0:
                if type(record.get("sessionId")) is str and type(record.get("projectHash")) is str:
                    meta.update(record)
                    continue
                if type(record.get("id")) is not str or record.get("type") not in _MESSAGE_TYPES:
                    return None
                meta["$midsession"] = True
            if type(record.get("id")) is str and record.get("type") == "user":
                messages.append(record)
                text = _user_text(record)
                if text and user_kind(text) == PROMPT:
                    break
        last: str | None = None
        handle.seek(max(0, size - _HEAD_BYTES))
        tail = handle.read(_HEAD_BYTES).split(b"\n")
    for line in reversed(tail[1:] if size > _HEAD_BYTES else tail):
        if b"lastUpdated" not in line and b'"timestamp"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if type(record) is not dict:
            continue
        update = record.get("$set")
        if type(update) is dict and type(update.get("lastUpdated")) is str:
            last = update["lastUpdated"]
            break
        if type(record.get("id")) is str and type(record.get("timestamp")) is str:
            last = record["timestamp"]
            break
    return meta, messages, last


def _describe(path: Path, registry: dict[str, str] | None = None) -> tuple[SessionInfo, str | None] | None:
    try:
        if not path.is_file():
            return None
        size = path.stat().st_size
        if size == 0:
            return None
        last: str | None = None
        if _looks_legacy(path):
            head = _legacy_head(path, size)
            if head is None:
                return None
            meta, messages = head
        else:
            jhead = _jsonl_head(path, size)
            if jhead is None:
                return None
            meta, messages, last = jhead
            if type(meta.get("messages")) is list and not messages:
                messages = meta["messages"]
    except (OSError, ValueError):
        return None
    session_id = meta.get("sessionId")
    if type(session_id) is not str:
        if not meta.get("$midsession"):
            return None
        session_id = path.stem  # a JSONL file that starts mid-session: no metadata record
    stored_hash = meta.get("projectHash") if type(meta.get("projectHash")) is str else None
    if last is None:
        for key in ("lastUpdated", "startTime"):
            if type(meta.get(key)) is str:
                last = meta[key]
                break
    first: str | None = None
    for message in messages:
        if type(message) is dict and message.get("type") == "user":
            text = _user_text(message)
            if text and user_kind(text) == PROMPT:
                first = text
                break
    chats = path.parent
    if chats.name != "chats":  # a subagent file: chats/<parent session id>/<id>.jsonl
        chats = chats.parent
    cwd = _project_cwd(chats.parent, stored_hash, registry) if chats.name == "chats" else None
    return SessionInfo(HARNESS, session_id, str(path), cwd, last, first), stored_hash


def describe(path: Path) -> SessionInfo | None:
    """The session stored in `path`, or None when it is not a Gemini CLI session file (never raises)."""
    try:
        found = _describe(Path(path))
    except Exception:  # describe must never raise on bad input
        return None
    return found[0] if found else None


def _scan(environ: Mapping[str, str]) -> Iterator[tuple[SessionInfo, str | None, Path]]:
    gemini_dir = _gemini_dir(environ)
    if gemini_dir is None:
        return
    tmp = gemini_dir / "tmp"
    if not tmp.is_dir() and environ.get("GEMINI_CLI_HOME"):
        tmp = Path(environ["GEMINI_CLI_HOME"]) / "tmp"  # GEMINI_CLI_HOME pointing at the .gemini folder itself
    try:
        projects = sorted(entry for entry in tmp.iterdir() if entry.is_dir())
    except OSError:
        return
    registry = _registry(tmp.parent)
    for project in projects:
        chats = project / "chats"
        try:
            names = sorted(entry.name for entry in chats.iterdir())
        except OSError:
            continue
        present = set(names)
        for name in names:
            if not name.startswith("session-") or not name.endswith((".json", ".jsonl")):
                continue
            if name.endswith(".json") and name + "l" in present:
                continue  # resumed: the CLI migrated this file into the .jsonl beside it
            try:
                found = _describe(chats / name, registry)
            except Exception:
                found = None
            if found is not None:
                yield found[0], found[1], project


def sessions(environ: Mapping[str, str]) -> Iterator[SessionInfo]:
    """Every main-thread Gemini CLI session under $GEMINI_CLI_HOME/.gemini (else $HOME/.gemini)."""
    for info, _hash, _project in _scan(environ):
        yield info


def sessions_for_cwd(environ: Mapping[str, str], cwd: str) -> Iterator[SessionInfo]:
    """The sessions of the project rooted at `cwd`: by recorded root, or by hashing `cwd` (never by decoding)."""
    root = os.path.abspath(cwd)
    digest = project_hash(root)
    for info, stored_hash, project in _scan(environ):
        if info.cwd is not None:
            if os.path.abspath(info.cwd) == root:
                yield info
        elif _hash_matches(digest, stored_hash) or _hash_matches(digest, project.name):
            yield info._replace(cwd=root)
