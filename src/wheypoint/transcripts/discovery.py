"""Finding the session a command means: by path, by id, by a hook's payload, or by the checkout.

Sessions are matched to a checkout by the cwd recorded inside each transcript, never by decoding
the folder names agents store them under (those encodings lose information). When several sessions
fit and the caller did not ask for the latest, the answer is a refusal listing them all: picking one
silently would put another session's words in the user's mouth.

A transcript named by path is first sniffed (see `_sniff`), so that only the reader it belongs to is
imported: each reader costs its own start-up, and a command reads one transcript.
"""

from __future__ import annotations

import os
import sys

from wheypoint import jsontext
from wheypoint.model.errors import Refusal, bad_parameter
from wheypoint.model.records import Record
from wheypoint.model.regular import is_regular, kind_of, open_regular
from wheypoint.model.shapes import READABLE_HARNESSES as HARNESSES
from wheypoint.transcripts.lines import head_record
from wheypoint.transcripts.model import SessionInfo, inside, plain_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from types import ModuleType
    from typing import Any, BinaryIO, TypeVar

    _Folder = TypeVar("_Folder", bound="str | os.PathLike[str]")

_MODULES = {"claude-code": "claude", "codex": "codex", "opencode": "opencode", "gemini": "gemini"}

_SQLITE_MAGIC = b"SQLite format 3\x00"  # opencode.SQLITE_MAGIC, repeated so that sniffing imports no reader
_SNIFF_LINE = 1 << 20  # the first line is read up to this; longer, the sniff gives up (Gemini reads this much)
_CLAUDE_KEYS = ("sessionId", "uuid", "leafUuid", "messageId")
_CLAUDE_KEY_BYTES = tuple(f'"{key}"'.encode() for key in _CLAUDE_KEYS)
_CLAUDE_HEAD = 8 * 1024 * 1024  # claude._HEAD_BYTES: how far Claude Code's describe reads
_LOOKAHEAD = 64  # lines read after the first for a Claude Code record (its describe decides on 21 records)
_GEMINI_TYPES = frozenset(("user", "gemini", "info", "error", "warning"))


def reader(harness: str) -> ModuleType:
    """The reader module of a harness, imported on first use."""
    if harness not in _MODULES:
        raise bad_parameter("harness", f"takes {', '.join(HARNESSES)} (no reader for {harness!r})", "unknown-harness")
    name = f"wheypoint.transcripts.{_MODULES[harness]}"
    __import__(name)  # importlib.import_module would first import the `importlib` package, and `warnings` with it
    return sys.modules[name]


class Located(Record):
    """The session a command will read."""

    harness: str
    path: str
    session_id: str | None
    info: SessionInfo | None


def all_sessions(environ: Mapping[str, str], harness: str | None = None) -> Iterator[SessionInfo]:
    for name in [harness] if harness else list(HARNESSES):
        try:
            yield from reader(name).sessions(environ)
        except OSError:
            continue  # a harness home we cannot read holds no session we can use


def _candidates_json(found: list[SessionInfo]) -> list[dict[str, Any]]:
    return [info.as_json() for info in sorted(found, key=lambda i: i.last_activity or "", reverse=True)]


def _choose(found: list[SessionInfo], latest: bool, searched: str) -> SessionInfo:
    if not found:
        raise Refusal("session-not-found", f"no session found {searched}")
    if len(found) == 1 or latest:
        return max(found, key=lambda info: info.last_activity or "")
    raise Refusal(
        "session-required",
        f"{len(found)} sessions fit {searched}; name one (by session or transcript), or ask for the latest",
        details={"candidates": _candidates_json(found)},
    )


def _claude_like(record: dict[str, Any]) -> bool:
    """Wider than what Claude Code's `describe` takes for its own record: typed, with a session, message or uuid key."""
    return record.get("type").__class__ is str and any(key in record for key in _CLAUDE_KEYS)


def _claude_may_follow(handle: BinaryIO, budget: int) -> bool:
    """Whether a record Claude Code would take as its own is among the next lines, as far as its `describe` looks
    (21 records within `claude._HEAD_BYTES`); lines without one of its keys are passed over undecoded."""
    for _ in range(_LOOKAHEAD):
        line = handle.readline(budget + 1)
        if not line or (not line.endswith(b"\n") and len(line) > budget):
            return False
        budget -= len(line)
        if any(key in line for key in _CLAUDE_KEY_BYTES):
            try:
                record = jsontext.loads(line)
            except (ValueError, RecursionError):
                continue
            if record.__class__ is dict and _claude_like(record):
                return True
    return False


def _sniff(path: str) -> str | None:
    """The one harness whose reader alone may recognise this file, told from its head; None when unsure.

    A SQLite database is OpenCode's. Otherwise the first record (lines.head_record: a byte-order mark, blank and
    a few damaged lines passed over) must be a whole JSON object within `_SNIFF_LINE` bytes, in a file not
    named `.json` (the single-document forms of Gemini CLI and OpenCode, which only a full parse tells apart),
    and carry the keys of exactly one harness's records. Each signature is wider than what its reader accepts
    from a first line, so the readers whose signature is absent would decline the file (see each reader's
    `describe`): Codex wants a `session_meta` record (or an older rollout's bare `{id, timestamp, instructions}`
    line), Gemini a metadata record (`projectHash`) or a message record (`id` and a message type), Claude Code a
    typed record with a session, message or uuid key. Claude Code alone also looks at the records
    after the first, so a Codex or Gemini head is followed by a look for a Claude Code record.
    """
    try:
        if not os.path.isfile(path):
            return None
        with open_regular(path) as handle:
            if handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC:
                return "opencode"
            if os.path.splitext(path)[1] == ".json":
                return None
            handle.seek(0)
            record, _ = head_record(handle, _SNIFF_LINE)
            if record is None:
                return None
            rtype = record.get("type")
            signatures = {
                "claude-code": _claude_like(record),
                "codex": rtype == "session_meta" or ("type" not in record and "id" in record),
                "gemini": "projectHash" in record or ("id" in record and type(rtype) is str and rtype in _GEMINI_TYPES),
            }
            found = [name for name, present in signatures.items() if present]
            followed = found and found[0] != "claude-code" and _claude_may_follow(handle, _CLAUDE_HEAD - handle.tell())
            if len(found) != 1 or followed:
                return None
            return found[0]
    except (OSError, ValueError, RecursionError):
        return None


def _kind(path: str) -> str:
    try:
        return kind_of(os.stat(path).st_mode)
    except OSError:
        return "not readable"


def _recognised(names: list[str], path: str) -> list[tuple[str, SessionInfo]]:
    matches = []
    for name in names:
        info = reader(name).describe(path)
        if info is not None:
            matches.append((name, info))
    return matches


def by_path(
    path: str | os.PathLike[str], harness: str | None, session: str | None = None, latest: bool = False
) -> Located:
    """A transcript named by path; its harness detected from its content when not given.

    An OpenCode database holds many sessions, so it describes itself only when it holds one; named
    together with a session id it is read as OpenCode's; named alone, its sessions are the candidates
    (`session-required` listing them all, or the latest with `latest`).
    """
    path = plain_path(os.fspath(path))
    if not os.path.exists(path):
        raise Refusal("transcript-missing", f"no transcript at {path}")
    if os.path.isdir(path):
        raise Refusal("transcript-unreadable", f"{path} is a folder; name the transcript file")
    if not is_regular(path):  # a device, a FIFO, a socket: never opened (one would block, another never end)
        raise Refusal("transcript-unreadable", f"{path} is {_kind(path)}, not a regular file")
    if harness and session:  # both named (a hook's payload): nothing to learn from the file's head, which a
        return Located(harness, path, session, None)  # harness named is taken on its word whatever it describes
    likely = None if harness else _sniff(path)
    if harness:
        matches = _recognised([harness], path)
    elif likely == "opencode":  # a SQLite database: no other harness writes one
        matches = _recognised([likely], path)
    elif likely is not None:
        matches = _recognised([likely], path) or _recognised([name for name in HARNESSES if name != likely], path)
    else:
        matches = _recognised(list(HARNESSES), path)
    if not matches and harness is None and session is not None and likely == "opencode":
        harness = "opencode"
    if not matches and session is None and (likely == "opencode" or harness == "opencode"):
        found = reader("opencode").database_sessions(path)
        if found:
            chosen = _choose(found, latest, f"in {path}")
            return Located("opencode", path, chosen.session_id, chosen)
    if not matches:
        if harness:  # the caller vouches for the format; the reader will count what it cannot use
            return Located(harness, path, session, None)
        raise Refusal("transcript-unrecognised", f"{path} is not a transcript of {', '.join(HARNESSES)}; "
                      "name its harness to read it anyway")  # fmt: skip
    if len(matches) > 1:
        raise Refusal(
            "harness-ambiguous", f"is needed: {path} reads as {', '.join(n for n, _ in matches)}", parameter="harness"
        )
    name, info = matches[0]
    return Located(name, path, info.session_id, info)


def _same_folder(folder: _Folder) -> _Folder:
    return folder


def locate(
    *,
    cwd: _Folder,
    environ: Mapping[str, str],
    transcript: str | None = None,
    session: str | None = None,
    harness: str | None = None,
    hook: Mapping[str, Any] | None = None,
    latest: bool = False,
    project_root: Callable[[_Folder], str | os.PathLike[str]] = _same_folder,
) -> Located:
    """The one session a command means, or a refusal that says why there is not exactly one.

    `project_root` maps a folder to the top of the project holding it (the caller knows checkouts);
    sessions recorded anywhere under that top are this project's. It is given `cwd`, or the hook's
    cwd in the same type as `cwd` (a `str`, or the caller's path class).
    """
    if harness is not None:
        reader(harness)  # refuse an unknown harness before anything else
    if hook is not None:
        transcript = transcript or hook.get("transcript_path")
        session = session or hook.get("session_id")
        if isinstance(hook.get("cwd"), str):
            cwd = hook["cwd"] if isinstance(cwd, str) else type(cwd)(hook["cwd"])  # type: ignore[call-arg]
    if transcript:
        located = by_path(os.path.expanduser(transcript), harness, session, latest)
        return located._replace(session_id=session or located.session_id)
    if session:
        found = [info for info in all_sessions(environ, harness) if info.session_id == session]
        chosen = _choose(found, latest, f"with id {session}")
        return Located(chosen.harness, plain_path(chosen.path), chosen.session_id, chosen)
    root = os.fspath(project_root(cwd))
    found = [info for info in all_sessions(environ, harness) if inside(info.cwd, root)]
    if harness in (None, "gemini"):  # older Gemini CLI builds record only a hash of the project root
        known = {info.path for info in found}
        found += [i for i in reader("gemini").sessions_for_cwd(environ, root) if i.path not in known]
    chosen = _choose(found, latest, f"for {root}")
    return Located(chosen.harness, plain_path(chosen.path), chosen.session_id, chosen)


def _printable(turn: Any) -> bool:
    """Whether every string of a turn is Unicode text (JSON can spell a lone surrogate; no reply can print one).

    Only a turn with non-ASCII text pays for an encoding (canonical.surrogate_at)."""
    for value in turn[:4] + turn[5:]:
        if value is not None and not value.isascii():
            from wheypoint.model.canonical import surrogate_at

            if surrogate_at(value) is not None:
                return False
    return True


def turns_of(located: Located, stats: Any, kinds: frozenset[str] | None = None) -> Iterator[Any]:
    """The turns of a located session; an unusable path is a refusal, bad content is counted in stats.

    `kinds` is a hint: a reader may pass over records that cannot hold those kinds (the caller filters
    anyway); a reader with no cheaper path ignores it. A turn holding a lone surrogate is dropped and
    counted as invalid UTF-8: checked here, once a turn, rather than on every line a reader decodes.
    """
    return _checked(located, stats, lambda: reader(located.harness).read_turns(located.path, stats,
                                                                             located.session_id, kinds))  # fmt: skip


def _checked(located: Located, stats: Any, read: Callable[[], Iterator[Any]]) -> Iterator[Any]:
    """A reader's turns, each one holding a lone surrogate dropped and counted; an unusable path is a refusal."""
    try:
        for turn in read():
            if _printable(turn):
                yield turn
            else:
                stats.invalid_utf8 += 1
    except OSError as exc:
        raise Refusal("transcript-unreadable", f"cannot read {located.path}: {exc.strerror or exc}") from None


def resumable(located: Located) -> bool:
    """Whether the session's reader can resume an append-only file where an earlier read stopped."""
    return hasattr(reader(located.harness), "read_from")


def turns_from(located: Located, stats: Any, start: Any, kinds: frozenset[str] | None = None) -> Iterator[Any]:
    """The turns of the session's main file after `start` (a `model.ReadPoint`; None: from its beginning), for a
    reader that is `resumable`: `stats.read_point` then says where this read stopped. Same refusals as turns_of."""
    return _checked(located, stats, lambda: reader(located.harness).read_from(located.path, stats, start, kinds))
