"""Gemini CLI session files on disk: finding and describing them under ~/.gemini/tmp, and reading one.

Layout. `$GEMINI_CLI_HOME` (else `$HOME`) `/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.json[l]`.
`<project>` is the SHA-256 hex of the project root in older builds (16 hex characters in some), a short slug in
newer ones; a slug folder holds a `.project_root` file naming the project root, and `~/.gemini/projects.json` maps
roots to slugs. The folder name is never decoded: the cwd comes from `.project_root`, from `projects.json`, or by
hashing the roots `projects.json` lists and comparing with the folder name or the session's `projectHash`.
Subagent sessions live in `chats/<parent sessionId>/<sessionId>.jsonl`; they are read after the main file.

Two forms: the older single-JSON files and the newer append-only JSONL files. What their records mean, and which
turns they yield, is `gemini_turns`. A single-JSON file cannot be streamed with the stdlib: it is loaded whole up
to MAX_JSON_BYTES, and a larger one is counted in stats.oversized and yields nothing.
"""

from __future__ import annotations

import json
import os
import re

from wheypoint.model.regular import open_regular
from wheypoint.transcripts.gemini_turns import jsonl_turns, message_turns, user_kind, user_text
from wheypoint.transcripts.homes import gemini_tmp
from wheypoint.transcripts.lines import BOM, LoneSurrogate, escaped_surrogate, head_record, loads, unicode_clean
from wheypoint.transcripts.model import PROMPT, ReadStats, SessionInfo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from wheypoint.transcripts.model import Turn

HARNESS = "gemini"

# The single-JSON form is loaded whole; this bound keeps the peak RSS of a read under 64 MB.
MAX_JSON_BYTES = 10 * 1024 * 1024
_HEAD_BYTES = 1 << 20  # how much of a file `describe` reads from either end
_SMALL_JSON = 2 * 1024 * 1024  # single-JSON files up to this size are parsed whole by `describe`
_MAX_SMALL_FILE = 1 << 20  # .project_root and projects.json are read only up to this size
_MESSAGE_TYPES = frozenset(("user", "gemini", "info", "error", "warning"))
# Patterns, compiled on first use by `re` (its cache) rather than by every command's start-up.
_SAFE_ID = r"[A-Za-z0-9._-]+"
_HEX = r"[0-9a-f]{16}|[0-9a-f]{64}"


# ---------------------------------------------------------------- reading


def _clean(value: Any) -> bool:
    """Whether no string in `value` holds a lone surrogate (which no reply could print)."""
    try:
        unicode_clean(value)
    except LoneSurrogate:
        return False
    return True


def _message_type(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    return type(kind) is str and kind in _MESSAGE_TYPES


def _suffix(path: str) -> str:
    return os.path.splitext(path)[1]


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _looks_legacy(path: str) -> bool:
    """True for the single-JSON form, told from the content: a `.json` file (JSONL content under that name is
    caught while parsing), or a first line that is not a whole JSON object. Under a `.jsonl` name only a lone
    `{` counts (the CLI pretty-prints the document), so a damaged first record still leaves a JSONL file one."""
    if _suffix(path) == ".json":
        return True
    with open_regular(path) as handle:
        first = handle.readline(_HEAD_BYTES)
    if _suffix(path) == ".jsonl":
        return first.removeprefix(BOM).strip() == b"{"
    try:
        return type(json.loads(first)) is not dict
    except (ValueError, RecursionError):
        return True


def _read_legacy(path: str, stats: ReadStats, agent: str | None, source: str | None,
                 found: list[str]) -> Iterator[Turn]:  # fmt: skip
    with open_regular(path) as raw:
        size = os.fstat(raw.fileno()).st_size
        if size > MAX_JSON_BYTES:
            stats.oversized += 1
            return
        try:  # decoded while read, so the bytes and the text are never both whole in memory
            with open(raw.fileno(), encoding="utf-8-sig", newline="", closefd=False) as handle:  # a BOM skipped
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
            yield from jsonl_turns(path, stats, agent, source, found)
            return
        if error.pos >= len(data.rstrip()):
            stats.truncated_tail = True  # cut off while being rewritten
        else:
            stats.malformed += 1
        return
    except (ValueError, RecursionError):  # a 5,000-digit number, or nesting deeper than the decoder follows
        stats.malformed += 1
        return
    check = escaped_surrogate(data)  # then each message is checked alone, so one bad message costs only itself
    del data
    messages = document.get("messages") if type(document) is dict else None
    if type(messages) is not list:
        stats.malformed += 1
        return
    if type(document.get("sessionId")) is str and _clean(document["sessionId"]):
        found.append(document["sessionId"])
    seen: set[str] = set()
    for index, message in enumerate(messages, 1):
        stats.lines += 1
        if type(message) is not dict or type(message.get("id")) is not str:
            stats.malformed += 1
            continue
        if check and not _clean(message):
            stats.invalid_utf8 += 1
            continue
        if message["id"] in seen:
            stats.duplicates += 1
            continue
        seen.add(message["id"])
        yield from message_turns(message, index, stats, agent, source)


def read_turns(
    path: str | os.PathLike[str], stats: ReadStats, session_id: str | None = None, kinds: frozenset[str] | None = None
) -> Iterator[Turn]:
    """Every turn of the session in `path`, then those of its subagents (agent = the subagent's session id).

    `session_id` is not needed: a file holds one session.
    """
    path = os.fspath(path)
    found: list[str] = []
    legacy = _looks_legacy(path)
    reader = _read_legacy if legacy else jsonl_turns
    yield from reader(path, stats, None, None, found)
    parent = os.path.dirname(path)
    if not found or not re.fullmatch(_SAFE_ID, found[0]) or os.path.basename(parent) == found[0]:
        return
    folder = os.path.join(parent, found[0])
    try:
        with os.scandir(folder) as entries:
            names = sorted(entry.name for entry in entries if _suffix(entry.name) == ".jsonl")
    except OSError:
        return
    for child in [os.path.join(folder, name) for name in names]:
        if not os.path.isfile(child):
            continue
        try:
            yield from jsonl_turns(child, stats, _stem(child), child, [])
        except OSError:
            continue


def context_share(path: str, tail: int = 256 * 1024) -> float | None:
    """How full the model's context was on the session's last reply: its recorded input tokens over the model's
    token limit (Gemini CLI's tokenLimit: 256,000 for Gemma 4, else 1,048,576). None when the last `tail`
    bytes of the file hold no reply with a token count (an older form, a new session, an unreadable file)."""
    try:
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - tail))
            lines = handle.read(tail).split(b"\n")
    except OSError:
        return None
    for line in reversed(lines[1:] if size > tail else lines):
        if b'"tokens"' not in line:
            continue
        try:
            record = loads(line)
        except ValueError:
            continue
        tokens = record.get("tokens") if type(record) is dict and record.get("type") == "gemini" else None
        count = tokens.get("input") if type(tokens) is dict else None
        if type(count) is int and count >= 0:
            model = record.get("model")
            gemma = type(model) is str and model.startswith("gemma-4")
            return count / (256_000 if gemma else 1_048_576)
    return None


# ---------------------------------------------------------------- discovery


def _read_small(path: str) -> bytes | None:
    try:
        with open_regular(path) as handle:
            data = handle.read(_MAX_SMALL_FILE + 1)
    except OSError:
        return None
    return data if len(data) <= _MAX_SMALL_FILE else None


def _registry(gemini_dir: str) -> dict[str, str]:
    """`projects.json`: project root -> folder slug."""
    data = _read_small(os.path.join(gemini_dir, "projects.json"))
    try:
        projects = json.loads(data)["projects"] if data else None
    except (ValueError, TypeError, KeyError):
        return {}
    if type(projects) is not dict:
        return {}
    return {root: slug for root, slug in projects.items() if type(slug) is str}


def project_hash(root: str) -> str:
    """The SHA-256 hex digest Gemini CLI stores as projectHash (older builds keep its first 16 characters)."""
    from wheypoint.model.canonical import new_sha256  # only here: most commands hash nothing

    hasher = new_sha256()
    hasher.update(root.encode("utf-8"))
    return str(hasher.hexdigest())


def _hash_matches(digest: str, stored: str | None) -> bool:
    return bool(stored) and len(stored or "") >= 16 and digest.startswith(stored or "-")


def _project_cwd(project: str, stored_hash: str | None, registry: dict[str, str] | None = None) -> str | None:
    """The project root of a tmp/<project> folder, without decoding its name."""
    marker = _read_small(os.path.join(project, ".project_root"))
    if marker is not None:
        try:
            root = marker.decode("utf-8").strip()
        except UnicodeDecodeError:
            root = ""
        if root:
            return root
    if registry is None:
        registry = _registry(os.path.dirname(os.path.dirname(project)))
    name = os.path.basename(project)
    for root, slug in registry.items():
        if slug == name:
            return root
    if re.fullmatch(_HEX, name) or stored_hash:
        for root in registry:
            digest = project_hash(root)
            if _hash_matches(digest, name) or _hash_matches(digest, stored_hash):
                return root
    return None


def _legacy_head(path: str, size: int) -> tuple[dict[str, Any], list[Any]] | None:
    """The metadata and the leading messages of a single-JSON file, without parsing all of it."""
    with open_regular(path) as handle:
        data = handle.read(size if size <= _SMALL_JSON else _HEAD_BYTES)
    if size <= _SMALL_JSON:
        try:  # not `loads`: a bad message must not hide the session; what describe keeps is checked there
            document = json.loads(data.decode("utf-8-sig"))
        except (ValueError, RecursionError):
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
            meta[key] = loads(match.group(1))
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


def _jsonl_head(path: str, size: int) -> tuple[dict[str, Any], list[Any], str | None] | None:
    """The metadata record, the leading messages and the last activity of a JSONL file, read from its two ends.

    None when the first line is neither a Gemini metadata record nor a Gemini message record.
    """
    meta: dict[str, Any] = {}
    messages: list[Any] = []
    read = 0
    with open_regular(path) as handle:
        _, start = head_record(handle, _HEAD_BYTES)  # a mark, blank or damaged lines before it passed over
        if start < 0:
            return None
        handle.seek(start)
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
                record = loads(line)
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
                if type(record.get("id")) is not str or not _message_type(record):
                    return None
                meta["$midsession"] = True
            if type(record.get("id")) is str and record.get("type") == "user":
                messages.append(record)
                text = user_text(record)
                if text and user_kind(text) == PROMPT:
                    break
        last: str | None = None
        handle.seek(max(0, size - _HEAD_BYTES))
        tail = handle.read(_HEAD_BYTES).split(b"\n")
    for line in reversed(tail[1:] if size > _HEAD_BYTES else tail):
        if b"lastUpdated" not in line and b'"timestamp"' not in line:
            continue
        try:
            record = loads(line)
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


def _describe(path: str, registry: dict[str, str] | None = None) -> tuple[SessionInfo, str | None] | None:
    try:
        if not os.path.isfile(path):
            return None
        size = os.stat(path).st_size
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
    if type(session_id) is not str or not _clean(session_id):
        if not meta.get("$midsession"):
            return None
        session_id = _stem(path)  # a JSONL file that starts mid-session: no metadata record
    stored_hash = meta.get("projectHash") if type(meta.get("projectHash")) is str else None
    if last is None:
        for key in ("lastUpdated", "startTime"):
            if type(meta.get(key)) is str and _clean(meta[key]):
                last = meta[key]
                break
    first: str | None = None
    for message in messages:
        if type(message) is dict and message.get("type") == "user":
            text = user_text(message)
            if text and user_kind(text) == PROMPT and _clean(text):
                first = text
                break
    chats = os.path.dirname(path)
    if os.path.basename(chats) != "chats":  # a subagent file: chats/<parent session id>/<id>.jsonl
        chats = os.path.dirname(chats)
    cwd = _project_cwd(os.path.dirname(chats), stored_hash, registry) if os.path.basename(chats) == "chats" else None
    return SessionInfo(HARNESS, session_id, path, cwd, last, first), stored_hash


def describe(path: str | os.PathLike[str]) -> SessionInfo | None:
    """The session stored in `path`, or None when it is not a Gemini CLI session file (never raises)."""
    try:
        found = _describe(os.fspath(path))
    except Exception:  # describe must never raise on bad input
        return None
    return found[0] if found else None


def _listing(folder: str) -> list[str]:
    """The sorted names in a folder (raises OSError when it cannot be listed)."""
    with os.scandir(folder) as entries:
        return sorted(entry.name for entry in entries)


def _scan(environ: Mapping[str, str]) -> Iterator[tuple[SessionInfo, str | None, str]]:
    tmp = gemini_tmp(environ)
    if tmp is None:
        return
    try:
        projects = [path for path in (os.path.join(tmp, name) for name in _listing(tmp)) if os.path.isdir(path)]
    except OSError:
        return
    registry = _registry(os.path.dirname(tmp))
    for project in projects:
        chats = os.path.join(project, "chats")
        try:
            names = _listing(chats)
        except OSError:
            continue
        present = set(names)
        for name in names:
            if not name.startswith("session-") or not name.endswith((".json", ".jsonl")):
                continue
            if name.endswith(".json") and name + "l" in present:
                continue  # resumed: the CLI migrated this file into the .jsonl beside it
            try:
                found = _describe(os.path.join(chats, name), registry)
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
    digest = ""  # hashed when a session without a recorded root needs it
    for info, stored_hash, project in _scan(environ):
        if info.cwd is not None:
            if os.path.abspath(info.cwd) == root:
                yield info
            continue
        digest = digest or project_hash(root)
        if _hash_matches(digest, stored_hash) or _hash_matches(digest, os.path.basename(project)):
            yield info._replace(cwd=root)
