"""How OpenCode's messages and parts become turns: the kind of each part, timestamps, `!` shell commands.

Kinds: a user text part is a `prompt` unless `synthetic` or `ignored` (then `meta`), and in a child
session it is always `meta` (the parent agent wrote it); assistant text is `assistant`, or
`compaction_summary` in an assistant message with `summary: true`; `reasoning` is `thinking`; a `tool`
part is a `tool_call` (`<tool> <input as JSON>`) plus a `tool_result` when its state holds `output`
(or `error`); after the synthetic marker user message of a `!` command, the next assistant message's
`bash` call is `shell_input` (the command as typed) and its output `shell_output`; a `compaction` part
is a `system` marker (`[compaction: auto]`, made here: the part holds no text). Other part types are
skipped and counted by type in `ReadStats.unknown`; empty texts are skipped.

Turns are parts, in message order (time created, then id) and part id order. The turn id is the part
id (`<part id>#result` for a tool's result), and `position` is the 1-based index of the part among all
the session's parts, skipped ones included, so both stay put as the session grows. Fetching the messages
and parts from the database or the JSON files is `opencode`'s job.
"""

from __future__ import annotations

import json
import time

from wheypoint.model.records import Record
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
    Turn,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

# Part types that carry nothing a reader quotes: skipped, and counted by type in stats.skipped.
SKIPPED_PARTS = frozenset(("file", "step-start", "step-finish", "snapshot", "patch", "agent", "subtask", "retry"))
# The text OpenCode stores as the user message of a `!` shell command; the command itself is the
# `bash` tool part of the assistant message that follows.
SHELL_MARKER = "The following tool was executed by the user"


class Message(Record):
    """What a message record tells about its parts."""

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


def message_of(mid: str, value: Any, fallback_created: Any, stats: ReadStats) -> Message:
    """The message record `value` (decoded JSON) read as a Message; what cannot be used is counted."""
    if not isinstance(value, dict):
        stats.malformed += 1
        return Message(mid, None, False, fallback_created)
    role = value.get("role")
    if role not in ("user", "assistant"):
        stats.unknown[f"role:{role}"] += 1
        role = None
    times = value.get("time")
    created = times.get("created") if isinstance(times, dict) else None
    summary = role == "assistant" and value.get("summary") is True
    return Message(mid, role, summary, created if created is not None else fallback_created)


def first_prompt(parts: Iterable[Any]) -> str | None:
    """The text of the first part the person typed (not synthetic, not ignored, not empty), if any."""
    for part in parts:
        if (isinstance(part, dict) and part.get("type") == "text" and not part.get("synthetic")
                and not part.get("ignored") and isinstance(part.get("text"), str) and part["text"]):  # fmt: skip
            return str(part["text"])
    return None


# ---------------------------------------------------------------- classification


class TurnReader:
    """Turns of one session, part by part; carries what one message tells about the next."""

    __slots__ = ("agent", "position", "shell_pending", "stats")

    def __init__(self, stats: ReadStats, agent: str | None) -> None:
        self.stats = stats
        self.agent = agent
        self.position = 0
        self.shell_pending = False  # the last user message was a `!` shell command's marker

    def begin(self, message: Message) -> bool:
        """Start a message; whether it is the assistant's run of a `!` shell command."""
        shell = self.shell_pending and message.role == "assistant"
        self.shell_pending = False  # the marker applies to the next message only
        return shell

    def message(self, message: Message, parts: Iterable[tuple[str, bool, Any]]) -> Iterator[Turn]:
        """Turns of one message from its (part id, decoded, part value) in order."""
        shell = self.begin(message)
        for pid, ok, part in parts:
            self.position += 1
            if ok:
                yield from self.part(message, pid, part, shell, self.position)

    def part(self, message: Message, pid: str, part: Any, shell: bool, position: int) -> tuple[Turn, ...]:
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

    def tool(self, message: Message, pid: str, part: dict[str, Any], shell: bool, position: int) -> tuple[Turn, ...]:
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
