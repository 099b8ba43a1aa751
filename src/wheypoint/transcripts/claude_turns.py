"""How Claude Code's JSONL records become turns: each record's kind, queued prompts, response blocks, sidechains.

Each line is one JSON record. Records of type `user` and `assistant` carry an Anthropic API message; `system`
records carry harness events; `queue-operation` and `attachment` records carry what the person typed while the
agent was busy; the rest (`progress`, `file-history-snapshot`, title `summary` lines, `pr-link`, `last-prompt`,
and whatever newer versions add) are skipped and counted by type in `ReadStats.unknown`.

How records become turns:

* user lines: `isCompactSummary` -> compaction_summary; `isMeta` -> meta; otherwise each text is classified by its
  leading host tag (see `claude_kinds`); untagged text is a prompt, except in a sidechain or a subagent file, where
  the "user" is the main agent briefing its subagent (meta); in a line carrying `planContent` ("Implement the
  following plan:", the plan the person accepted), where it is a plan; and next to tool_result blocks, where it
  is a queued_prompt: Claude Code 2.1.19-2.1.37 stores what the person types while the agent works that way,
  with no queue-operation record.
  `tool_result` blocks -> tool_result, one turn per stored string. Images carry no text and yield nothing.
* assistant lines: Claude Code writes each content block of one API response on its own line, all sharing
  `message.id`. Every block is one turn with id `<message.id>#<n>`, n counting the response's blocks in file
  order, so ids never change when later blocks of the response are appended. text -> assistant, thinking ->
  thinking, tool_use -> tool_call (the tool name, a space, and its input as compact JSON). A `<synthetic>` model
  line (an API error or "No response requested.") is written by the harness, not the model: system.
* system lines with a string `content` -> system (a `local_command` line holding a slash command or its output
  gets that kind); an `api_error` line without content uses its stored `error.message`; content-free lines
  (stop_hook_summary, turn_duration) are skipped and counted as `system:<subtype>`.
* queued prompts: a `queue-operation` enqueue holds the text; what happens next decides the turn. `dequeue`
  (the text becomes an ordinary user line next) and a later user line with the same text make it a duplicate;
  `remove` (absorbed mid-turn), `popAll` (handed back to the input box) and the end of the file yield it as a
  queued_prompt with the position and timestamp of its enqueue line, so it may come after turns with higher
  positions. An `attachment` of type queued_command (>= 2.1.101) is the queued prompt itself (meta when its
  origin is not human, system for commandMode task-notification). Queued text is classified like user text, so
  a queued `<task-notification>` is system and only untagged text is a queued_prompt.

Rewinds branch the parentUuid chain. Turns from every branch are yielded in file order: the person's words on an
abandoned branch are still their words, and `leafUuid` in title lines is never resolved (it often points into
another file). Ids are the records' own uuids (with `#<n>` when one record yields several turns); a uuid seen
twice is counted in `stats.duplicates` and skipped.

Inline `isSidechain` lines (1.0.x) get `agent` = the uuid of the first line of their sidechain chain (or their
`agentId` when they carry one). Finding the files to read is `claude`'s job.
"""

from __future__ import annotations

import os

from wheypoint import jsontext
from wheypoint.transcripts.claude_kinds import classify, not_for_the_user, not_for_the_user_or_marked, progress_line
from wheypoint.transcripts.lines import read_jsonl
from wheypoint.transcripts.model import (
    ASSISTANT,
    COMPACTION_SUMMARY,
    META,
    PLAN,
    PROMPT,
    QUEUED_PROMPT,
    SYSTEM,
    THINKING,
    TOOL_CALL,
    TOOL_RESULT,
    ReadPoint,
    ReadStats,
    RecentCounts,
    RecentIds,
    Turn,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

# Known record types that never hold a turn: titles (`summary` lines are NOT compaction), links, snapshots.
_NO_TURN_TYPES = frozenset({
    "summary", "pr-link", "last-prompt", "file-history-snapshot", "custom-title", "ai-title", "mode", "agent-name",
})  # fmt: skip
# Attachments the harness records about itself (2.1.197): a hook's result or the context it added (what the model
# was given, not what the person typed), the skills, agents and MCP instructions listed to the model.
_NO_TURN_ATTACHMENTS = frozenset({
    "hook_success", "hook_additional_context", "hook_non_blocking_error", "hook_blocking_error", "skill_listing",
    "agent_listing_delta", "mcp_instructions_delta",
})  # fmt: skip
_PENDING_LIMIT = 256  # queued prompts held while their fate is unknown; beyond this the oldest is yielded


_COMPACT = jsontext.encoder(ensure_ascii=False, separators=(",", ":"))


def _tool_call_text(block: dict[str, Any]) -> str:
    name = block.get("name")
    try:
        payload = _COMPACT(block.get("input"))
    except (ValueError, RecursionError):  # a pathologically deep input
        payload = "null"
    return f"{name if isinstance(name, str) else ''} {payload}"


class _Pending:
    """One enqueued prompt whose fate (delivered as a user line, absorbed, popped back) is not yet known."""

    __slots__ = ("key", "kind", "number", "text", "timestamp")

    def __init__(self, number: int, timestamp: str | None, text: str, kind: str, key: str) -> None:
        self.key = key  # the line, and which record of it when it holds several
        self.number = number
        self.timestamp = timestamp
        self.text = text
        self.kind = kind


def _queued_item(number: int, key: str, timestamp: str | None, content: str) -> _Pending:
    """Text typed while the agent worked: a queued prompt, or the specific kind it really is (a /command...)."""
    kind = classify(content)
    return _Pending(number, timestamp, content, QUEUED_PROMPT if kind == PROMPT else kind, key)


class TurnReader:
    """State shared by the main file and its subagent files: ids seen, response block counters, sidechains."""

    def __init__(self, stats: ReadStats) -> None:
        self.stats = stats
        self.seen = RecentIds()  # bounded: see RecentIds
        self.blocks = RecentCounts()
        self.session_id: str | None = None

    def _record_id(self, rec: dict[str, Any], prefix: str, key: str) -> str | None:
        """A record's uuid (or its line when it has none); None for a uuid already seen, counted as a duplicate."""
        uuid = rec.get("uuid")
        if uuid.__class__ is not str:
            return f"{prefix}L{key}"
        if uuid in self.seen:
            self.stats.duplicates += 1
            return None
        self.seen.add(uuid)
        return str(uuid)

    def read(
        self, path: str | os.PathLike[str], agent: str | None = None, source: str | None = None,
        user_only: bool = False, start: ReadPoint | None = None, marked: bool = False,
    ) -> Iterator[Turn]:  # fmt: skip
        stats = self.stats
        unknown, skipped = stats.unknown, stats.skipped
        roots: dict[str, str] = {}  # sidechain line uuid -> its chain's first uuid
        pending: list[_Pending] = []
        owed_removes = 0
        prefix = f"{agent}:" if agent is not None else ""
        if os.path.isdir(path):
            raise IsADirectoryError(21, "Is a directory", os.fspath(path))
        progress = 0  # the commonest skipped type, counted locally and added to stats at the end
        last_line = extra = 0
        skip = (not_for_the_user_or_marked if marked else not_for_the_user) if user_only else progress_line
        for number, rec in read_jsonl(path, stats, skip=skip, start=start):
            if number != last_line:
                last_line, extra = number, 0
            else:  # another record on the same line (its newline was lost): ids must still differ
                extra += 1
            key = f"{number}+{extra}" if extra else str(number)
            if rec.__class__ is not dict:
                stats.malformed += 1
                continue
            rtype = rec.get("type")
            if rtype == "progress":
                progress += 1
                continue
            if rtype == "assistant" or rtype == "user":
                uuid = self._record_id(rec, prefix, key)
                if uuid is None:
                    continue
                message = rec.get("message")
                if message.__class__ is not dict:
                    stats.malformed += 1
                    continue
                if self.session_id is None and agent is None:
                    sid = rec.get("sessionId")
                    if sid.__class__ is str:
                        self.session_id = sid
                who = agent
                if who is None and rec.get("isSidechain") is True:
                    who = rec.get("agentId")
                    if who.__class__ is not str:
                        parent = rec.get("parentUuid")
                        root = roots.get(parent) if parent.__class__ is str else None
                        who = root if root is not None else uuid
                        roots[uuid] = who
                timestamp = rec.get("timestamp")
                if timestamp.__class__ is not str:
                    timestamp = None
                if rtype == "assistant":
                    yield from self._assistant(rec, message, uuid, number, timestamp, who, source)
                    continue
                found = self._user(rec, message, who)
                if found is None:
                    stats.malformed += 1
                    continue
                if pending:
                    for _, text in found:
                        for index, item in enumerate(pending):
                            if item.text == text:
                                del pending[index]
                                stats.duplicates += 1
                                break
                if len(found) == 1:
                    kind, text = found[0]
                    yield Turn(uuid, kind, timestamp, text, number, who, source)
                else:
                    for n, (kind, text) in enumerate(found):
                        yield Turn(f"{uuid}#{n}", kind, timestamp, text, number, who, source)
                continue
            timestamp = rec.get("timestamp")
            if timestamp.__class__ is not str:
                timestamp = None
            if rtype == "system":
                system = self._system(rec)
                if system is None:
                    skipped[f"system:{rec.get('subtype')}"] += 1
                    continue
                uuid = self._record_id(rec, prefix, key)
                if uuid is None:
                    continue
                yield Turn(uuid, system[0], timestamp, system[1], number, agent, source)
            elif rtype == "queue-operation":
                operation = rec.get("operation")
                content = rec.get("content")
                if content.__class__ is not str:
                    content = None
                if operation == "enqueue" and content is not None:
                    pending.append(_queued_item(number, key, timestamp, content))
                    if len(pending) > _PENDING_LIMIT:
                        yield self._queued(pending.pop(0), prefix, agent, source)
                elif operation == "dequeue":
                    if pending:
                        pending.pop(0)  # it becomes the next user line
                        stats.duplicates += 1
                    else:
                        skipped["queue-operation:dequeue"] += 1
                elif operation == "remove":
                    if content is None and owed_removes:
                        owed_removes -= 1
                        stats.duplicates += 1
                    elif content is not None:
                        index = next((i for i, item in enumerate(pending) if item.text == content), -1)
                        if index >= 0:
                            yield self._queued(pending.pop(index), prefix, agent, source)
                        else:
                            yield self._queued(_queued_item(number, key, timestamp, content), prefix, agent, source)
                    elif pending:
                        yield self._queued(pending.pop(0), prefix, agent, source)
                    else:
                        skipped["queue-operation:remove"] += 1
                elif operation == "popAll":
                    if pending:
                        for item in pending:
                            yield self._queued(item, prefix, agent, source)
                        pending.clear()
                    elif content is not None:
                        yield self._queued(_queued_item(number, key, timestamp, content), prefix, agent, source)
                    else:
                        skipped["queue-operation:popAll"] += 1
                else:
                    unknown[f"queue-operation:{operation}"] += 1
            elif rtype == "attachment":
                attachment = rec.get("attachment")
                if attachment.__class__ is not dict or attachment.get("type") != "queued_command":
                    kind_name = attachment.get("type") if attachment.__class__ is dict else None
                    counter = skipped if kind_name in _NO_TURN_ATTACHMENTS else unknown
                    counter[f"attachment:{kind_name}"] += 1
                    continue
                uuid = self._record_id(rec, prefix, key)
                if uuid is None:
                    continue
                found = self._queued_command(attachment)
                if found is None:
                    stats.malformed += 1
                    continue
                for _, text in found:
                    index = next((i for i, item in enumerate(pending) if item.text == text), -1)
                    if index >= 0:
                        del pending[index]
                        owed_removes += 1
                        stats.duplicates += 1
                for n, (kind, text) in enumerate(found):
                    turn_id = uuid if len(found) == 1 else f"{uuid}#{n}"
                    yield Turn(turn_id, kind, timestamp, text, number, agent, source)
            elif rtype.__class__ is not str:
                if rtype is None:
                    unknown["(no type)"] += 1
                else:  # a list or object where the type belongs: a bad line, not a new type
                    stats.malformed += 1
            elif rtype in _NO_TURN_TYPES:
                skipped[rtype] += 1
            else:
                unknown[rtype] += 1  # types newer than this reader
        if progress:
            skipped["progress"] += progress
        for item in pending:  # still queued when the file ended (a live session)
            yield self._queued(item, prefix, agent, source)

    @staticmethod
    def _queued(item: _Pending, prefix: str, agent: str | None, source: str | None) -> Turn:
        return Turn(f"{prefix}queue:{item.key}", item.kind, item.timestamp, item.text, item.number, agent, source)

    def _assistant(self, rec: dict[str, Any], message: dict[str, Any], uuid: str, number: int,
                   timestamp: str | None, who: str | None, source: str | None) -> list[Turn]:  # fmt: skip
        content = message.get("content")
        mid = message.get("id")
        if mid.__class__ is not str:
            mid = uuid
        synthetic = message.get("model") == "<synthetic>" or rec.get("isApiErrorMessage") is True
        blocks = self.blocks
        n = blocks.get(mid, 0)
        if content.__class__ is str:
            blocks[mid] = n + 1
            return [Turn(f"{mid}#{n}", SYSTEM if synthetic else ASSISTANT, timestamp, content, number, who, source)]
        if content.__class__ is not list:
            self.stats.malformed += 1
            return []
        found = []
        for block in content:
            if block.__class__ is not dict:
                self.stats.malformed += 1
                continue
            btype = block.get("type")
            if btype == "text":
                text = block.get("text")
                kind = SYSTEM if synthetic else ASSISTANT
            elif btype == "tool_use":
                text = _tool_call_text(block)
                kind = TOOL_CALL
            elif btype == "thinking":
                text = block.get("thinking")
                kind = THINKING
            else:
                self.stats.unknown[f"assistant block:{btype}"] += 1
                continue
            if text.__class__ is not str:
                self.stats.malformed += 1
                continue
            found.append(Turn(f"{mid}#{n}", kind, timestamp, text, number, who, source))
            n += 1
        blocks[mid] = n
        return found

    def _user(self, rec: dict[str, Any], message: dict[str, Any], who: str | None) -> list[tuple[str, str]] | None:
        """(kind, text) for each turn of a user line, or None when its content has the wrong shape."""
        content = message.get("content")
        if rec.get("isCompactSummary") is True:
            fixed: str | None = COMPACTION_SUMMARY
        elif rec.get("isMeta") is True:
            fixed = META
        else:
            fixed = None
        untagged = META if who is not None else PLAN if rec.get("planContent") is not None else PROMPT
        if content.__class__ is str:
            if fixed is not None:
                return [(fixed, content)]
            kind = classify(content)
            return [(untagged if kind == PROMPT else kind, content)]
        if content.__class__ is not list:
            return None
        found: list[tuple[str, str]] = []
        tool_results = any(b.__class__ is dict and b.get("type") == "tool_result" for b in content)
        for block in content:
            if block.__class__ is not dict:
                self.stats.malformed += 1
                continue
            btype = block.get("type")
            if btype == "tool_result":
                inner = block.get("content")
                if inner is None:
                    found.append((TOOL_RESULT, ""))
                elif inner.__class__ is str:
                    found.append((TOOL_RESULT, inner))
                elif inner.__class__ is list:
                    for part in inner:
                        if part.__class__ is dict and part.get("type") == "text" and part.get("text").__class__ is str:
                            found.append((TOOL_RESULT, part["text"]))
                else:
                    self.stats.malformed += 1
            elif btype == "text":
                text = block.get("text")
                if text.__class__ is not str:
                    self.stats.malformed += 1
                    continue
                if fixed is not None:
                    found.append((fixed, text))
                    continue
                kind = classify(text)
                if kind == PROMPT:
                    # Typed while the agent worked (stored beside the tool results it interrupted), unless
                    # the line is a subagent's brief or an accepted plan.
                    kind = QUEUED_PROMPT if tool_results and untagged == PROMPT else untagged
                found.append((kind, text))
            elif btype not in ("image", "document"):
                self.stats.unknown[f"user block:{btype}"] += 1
        return found

    @staticmethod
    def _system(rec: dict[str, Any]) -> tuple[str, str] | None:
        content = rec.get("content")
        subtype = rec.get("subtype")
        if content.__class__ is str:
            if subtype == "local_command":
                kind = classify(content)
                return (SYSTEM if kind == PROMPT else kind), content
            return SYSTEM, content
        if subtype == "api_error":
            error = rec.get("error")
            if error.__class__ is dict and error.get("message").__class__ is str:
                return SYSTEM, error["message"]
        return None

    def _queued_command(self, attachment: dict[str, Any]) -> list[tuple[str, str]] | None:
        prompt = attachment.get("prompt")
        if prompt.__class__ is str:
            texts = [prompt]
        elif prompt.__class__ is list:
            texts = [b["text"] for b in prompt
                     if b.__class__ is dict and b.get("type") == "text" and b.get("text").__class__ is str]  # fmt: skip
        else:
            return None
        origin = attachment.get("origin")
        human = origin.__class__ is not dict or origin.get("kind") in (None, "human")
        found: list[tuple[str, str]] = []
        for text in texts:
            if attachment.get("commandMode") == "task-notification":
                kind = SYSTEM
            elif attachment.get("isMeta") is True or not human:
                kind = META
            else:
                kind = classify(text)
                if kind == PROMPT:
                    kind = QUEUED_PROMPT
            found.append((kind, text))
        return found
