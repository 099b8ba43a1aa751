"""The normalised turn every transcript reader yields, the turn kinds, and the reading statistics.

A turn's `text` is copied from the transcript exactly as the agent stored it (after JSON decoding):
no trimming, no unwrapping of host tags, so a quote can be checked byte for byte against it. Its `id`
is stable: unique within its transcript, and the same on every re-read and after the file grows,
because it comes from the agent's own ids (uuid, message id, part id) or from the line position in an
append-only file.
"""

from __future__ import annotations

import os
from collections import Counter

from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# The kinds of turn. The first four are the user's own intent and what `turns` shows by default.
PROMPT = "prompt"  # typed by the person
QUEUED_PROMPT = "queued_prompt"  # typed while the agent was working
SHELL_INPUT = "shell_input"  # a `!` shell command the person ran
SLASH_COMMAND = "slash_command"  # /command with its arguments
SHELL_OUTPUT = "shell_output"
COMMAND_OUTPUT = "command_output"  # output of a local slash command
META = "meta"  # injected context: skill expansions, caveats, environment and instruction blocks
COMPACTION_SUMMARY = "compaction_summary"
PLAN = "plan"  # the agent's plan, accepted by the person and handed back to the agent to implement
INTERRUPTION = "interruption"
ASSISTANT = "assistant"
THINKING = "thinking"
TOOL_CALL = "tool_call"
TOOL_RESULT = "tool_result"
SYSTEM = "system"

USER_KINDS = (PROMPT, QUEUED_PROMPT, SHELL_INPUT, SLASH_COMMAND)
# Not a kind: in a reader's `kinds` hint, "and the agent's turns that may hold a trailer" (a `ckpt` in the text).
MARKED = "marked"
ALL_KINDS = (
    PROMPT, QUEUED_PROMPT, SHELL_INPUT, SLASH_COMMAND, SHELL_OUTPUT, COMMAND_OUTPUT, META,
    COMPACTION_SUMMARY, PLAN, INTERRUPTION, ASSISTANT, THINKING, TOOL_CALL, TOOL_RESULT, SYSTEM,
)  # fmt: skip


FORMAT_UNKNOWN = "transcript-format-unknown"


def format_warning(stats: ReadStats, kinds: Mapping[str, int]) -> dict[str, str] | None:
    """The warning that a transcript may be in a format this reader no longer knows, from what a read found (the
    turns' kinds counted, and its stats), else None. Said rather than answering zero prompts as if there were none:

    - the harness's user-role records were read (as injected context, meta), yet not one turn of the user's: two
      or more, since a session nobody typed in yet may hold its harness's preamble (Gemini CLI writes one first);
    - or most records are of types this reader does not know.
    """
    typed = sum(kinds.get(kind, 0) for kind in USER_KINDS)
    unknown = sum(stats.unknown.values())
    if not typed and kinds.get(META, 0) >= 2:
        why = f"{kinds[META]} user-role record(s) read as injected context and no prompt"
    elif stats.lines >= 4 and unknown * 2 > stats.lines:
        why = f"{unknown} of its {stats.lines} records are of types this reader does not know"
    else:
        return None
    return {"code": FORMAT_UNKNOWN, "message": f"{why}: the harness may write a newer format than this reader knows"}


class Turn(Record):
    """One normalised turn of a session."""

    id: str  # stable and unique within the transcript
    kind: str  # one of ALL_KINDS
    timestamp: str | None  # ISO 8601 as the agent wrote it, when it wrote one
    text: str  # verbatim
    position: int  # 1-based line in a JSONL file, message index in a JSON file, row order in a database
    agent: str | None = None  # the subagent or sidechain that produced it; None for the main thread
    source: str | None = None  # the file it came from when a session spans several files

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"id": self.id, "kind": self.kind, "timestamp": self.timestamp, "text": self.text,
                                  "position": self.position}  # fmt: skip
        if self.agent is not None:
            out["agent"] = self.agent
        if self.source is not None:
            out["source"] = self.source
        return out


class SessionInfo(Record):
    """What discovery needs to list a session without reading all of it."""

    harness: str
    session_id: str
    path: str
    cwd: str | None
    last_activity: str | None
    first_prompt: str | None

    def as_json(self) -> dict[str, object]:
        return dict(self._asdict())


class ReadPoint(Record):
    """Where a read of an append-only JSONL file stopped (lines.read_jsonl): the offset just past its last complete
    line, and the number of lines before that offset."""

    offset: int
    line: int


class ReadStats:
    """What a reader skipped and why; reported beside the turns, never silently dropped."""

    def __init__(self) -> None:
        self.lines = 0  # records read (lines, messages or rows)
        self.malformed = 0  # not JSON, or JSON of the wrong shape
        self.invalid_utf8 = 0
        self.oversized = 0  # lines over the size limit, skipped without being decoded
        self.truncated_tail = False  # the last line ended mid-record (a live file being written)
        self.duplicates = 0  # records already seen (replayed history, event/response pairs)
        self.unknown: Counter[str] = Counter()  # record types this reader does not know, by type
        self.skipped: Counter[str] = Counter()  # known records that hold no turn (progress, token counts), by type
        self.read_point: ReadPoint | None = None  # where a JSONL read that reached the end stopped (lines.read_jsonl)

    def as_json(self) -> dict[str, object]:
        return {
            "records": self.lines, "malformed": self.malformed, "invalid_utf8": self.invalid_utf8,
            "oversized": self.oversized, "truncated_tail": self.truncated_tail, "duplicates": self.duplicates,
            "unknown_types": _printable_keys(self.unknown), "skipped_types": _printable_keys(self.skipped),
        }  # fmt: skip


def _printable_keys(counts: Counter[str]) -> dict[str, int]:
    """Counts by name, sorted; a name (a record type read from the file) holding a lone surrogate is escaped."""
    return {name.encode("utf-8", "backslashreplace").decode("utf-8"): n for name, n in sorted(counts.items())}


class RecentIds:
    """The ids seen lately, for de-duplication in bounded memory: the oldest are forgotten past `limit`.

    A whole-file set would grow with the transcript (about 130 bytes an id) and break the promise
    that reading holds bounded memory whatever the file's size. Agents repeat a record close to where
    it first appeared (a rewritten message, a replayed response), so a window of recent ids finds the
    repeats that happen; one farther back than `limit` records would be yielded again.
    """

    __slots__ = ("_ids", "limit")

    def __init__(self, limit: int = 100_000) -> None:
        self._ids: dict[str, None] = {}
        self.limit = limit

    def __contains__(self, item: str) -> bool:
        return item in self._ids

    def add(self, item: str) -> None:
        ids = self._ids
        ids[item] = None
        if len(ids) > self.limit:
            del ids[next(iter(ids))]


class RecentCounts:
    """A bounded counter per key (blocks per message id), forgetting the oldest keys past `limit`."""

    __slots__ = ("_counts", "limit")

    def __init__(self, limit: int = 100_000) -> None:
        self._counts: dict[str, int] = {}
        self.limit = limit

    def get(self, key: str, default: int = 0) -> int:
        return self._counts.get(key, default)

    def __setitem__(self, key: str, value: int) -> None:
        counts = self._counts
        counts[key] = value
        if len(counts) > self.limit:
            del counts[next(iter(counts))]


def plain_path(path: str) -> str:
    """A path spelled as `pathlib` spells it: no `.` parts, no doubled or trailing separators (`..` stays).

    Paths are `str` here (importing pathlib costs every command milliseconds); folders named in the
    environment go through this once, so the paths built under them print as they always have.
    """
    if os.sep != "/":
        return os.path.normpath(path)
    root = "//" if path[:2] == "//" and path[2:3] != "/" else "/" if path[:1] == "/" else ""
    parts = [part for part in path.split("/") if part and part != "."]
    return root + "/".join(parts) if root or parts else "."


def inside(path: str | None, root: str | os.PathLike[str]) -> bool:
    """Whether `path` is `root` or under it, compared part by part after normalising both."""
    if not path:
        return False
    inner = os.path.normcase(os.path.normpath(path))
    outer = os.path.normcase(os.path.normpath(root))
    if outer == os.curdir:
        return not os.path.isabs(inner)
    return inner == outer or inner.startswith(outer if outer.endswith(os.sep) else outer + os.sep)
