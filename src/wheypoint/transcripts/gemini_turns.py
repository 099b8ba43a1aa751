"""How Gemini CLI's messages and JSONL records become turns: each message's kinds, rewrites, `$set` histories.

JSONL records: a metadata record {sessionId, projectHash, startTime, lastUpdated, kind, ...}; one record per
message, {id, timestamp, type, content, displayContent?, ...}; a message is rewritten in full, with the same id,
when it gains tokens or tool-call results (only ever the latest message); `{"$set": {...}}` updates the session's
metadata (lastUpdated, summary, directories) and may carry a whole replacement `messages` list (history sync after
compression or masking); `{"$rewindTo": id}` drops that message and all later ones from the visible history.

User messages. `displayContent`, when the CLI stored one, is what the person typed and `content` what the model
was sent: a slash command's expansion (`/init`), @-file contents. The typed text is the turn (id = message id);
a different `content` follows as `meta` (`<id>#2`), so `--all` shows what the model read. A user message the CLI
wrote itself to make the model go on ("System: Please continue." after an invalid stream; "Please continue."
after the next-speaker check, which carries the original prompt's displayContent) is `meta`, never a prompt.

Hook context. Gemini CLI hands a hook's additionalContext to the model inside the user message: SessionStart's
as `<hook_context>...</hook_context>\n\n` before the prompt's text (headless), or as a message of its own
(interactive); BeforeAgent's as a text part of its own after the prompt. The typed text is read without those
wrappers; a message that holds nothing else is `meta`, and so is the `<session_context>` preamble the CLI
writes as the first user message of every session.

History rewrites. A compression stores a `$set.messages` list: the preamble, the summary (a user message,
followed by the CLI's fixed acknowledgement; `compaction_summary`), then the kept end of the history, whose
messages may come back under new ids: a new message there whose type and text were already read is counted as
a duplicate, so each prompt is read once.

Choices. Rewound messages are still yielded: the person typed those words, and wheypoint keeps evidence, not the
agent's current view. A rewritten message is yielded once, with its final content, at the line where it first
appeared; since only the latest message is ever rewritten, one message of look-ahead is enough. Memory: that one
record plus the recent message ids (a bounded window, needed to de-duplicate `$set.messages`).
Messages of a `$set.messages` list whose ids were already seen are counted as duplicates; new ids there (the
compression summary and its acknowledgement) are yielded at that record's line. Finding the files, and loading
the single-JSON form, is `gemini`'s job.
"""

from __future__ import annotations

import json

from wheypoint.transcripts.lines import read_jsonl
from wheypoint.transcripts.model import (
    ASSISTANT,
    COMPACTION_SUMMARY,
    META,
    PROMPT,
    SHELL_INPUT,
    SLASH_COMMAND,
    SYSTEM,
    THINKING,
    TOOL_CALL,
    TOOL_RESULT,
    ReadStats,
    RecentIds,
    Turn,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Iterator
    from typing import Any

_SYSTEM_TYPES = frozenset(("info", "error", "warning"))
# The text Gemini CLI sends as a user message of its own to make the model continue; the second only counts
# with a displayContent beside it (the CLI passes the original prompt's), since a person may type it too.
_INJECTED = "System: Please continue."
_CONTINUE = "Please continue."
_ACK = "Got it. Thanks for the additional context!"  # the CLI's model turn after a compression summary
_HOOK_OPEN, _HOOK_CLOSE = "<hook_context>", "</hook_context>"
_PREAMBLE = "<session_context>"
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
    if head.startswith((_PREAMBLE, _HOOK_OPEN)):
        return META  # the CLI's own preamble, or hook context it could not be told apart from (never a prompt)
    if head.startswith("/") and not head.startswith(("//", "/*")):
        return SLASH_COMMAND
    if head.startswith("!"):
        return SHELL_INPUT
    return PROMPT


def _unhooked(text: str) -> str:
    """A text without the `<hook_context>...</hook_context>` wrappers Gemini CLI puts before a prompt."""
    while text.startswith(_HOOK_OPEN):
        end = text.find(_HOOK_CLOSE)
        if end < 0:
            return text
        text = text[end + len(_HOOK_CLOSE) :].removeprefix("\n\n")
    return text


def _is_hook_part(part: Any) -> bool:
    text = part.get("text") if type(part) is dict else None
    return type(text) is str and text.startswith(_HOOK_OPEN) and text.endswith(_HOOK_CLOSE)


def _typed(content: Any) -> str | None:
    """The text of a user message's content without the hook context Gemini CLI added to it (see the module)."""
    if type(content) is list and len(content) > 1 and any(_is_hook_part(part) for part in content):
        content = [part for part in content if not _is_hook_part(part)]
    text = _text(content)
    return _unhooked(text) if text else text


def user_text(message: dict[str, Any]) -> str | None:
    """What the person typed: displayContent when the CLI stored one (content then holds expansions), else content;
    without hook context either way."""
    display = message.get("displayContent")
    if display is not None:
        text = _typed(display)
        if text:
            return text
    return _typed(message.get("content"))


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


def message_turns(message: dict[str, Any], position: int, stats: ReadStats, agent: str | None,
                   source: str | None, summary: bool = False) -> list[Turn]:  # fmt: skip
    """The turns of one message record; the first keeps the message id, the next ones get `#2`, `#3`, ...

    `summary`: the message is a user message the CLI wrote to carry a compression summary.
    """
    mid: str = message["id"]
    kind = message.get("type")
    timestamp = message.get("timestamp")
    if type(timestamp) is not str:
        timestamp = None
    if kind == "user":
        sent = _text(message.get("content"))
        display = message.get("displayContent")
        if sent == _INJECTED or (sent == _CONTINUE and display is not None and _text(display)):
            return [Turn(mid, META, timestamp, sent, position, agent, source)]
        text = user_text(message)
        if text is None:
            stats.malformed += 1
            return []
        if summary and text:
            return [Turn(mid, COMPACTION_SUMMARY, timestamp, text, position, agent, source)]
        if not text and sent:  # hook context alone: what the model read, nothing the person typed
            return [Turn(mid, META, timestamp, sent, position, agent, source)]
        made = [Turn(mid, user_kind(text), timestamp, text, position, agent, source)] if text else []
        if sent and sent != text:  # what the typed text expanded to
            made.append(Turn(f"{mid}#2", META, timestamp, sent, position, agent, source))
        return made
    if kind == "gemini":
        return _gemini_turns(message, mid, timestamp, position, agent, source)
    if type(kind) is str and kind in _SYSTEM_TYPES:
        text = _text(message.get("content"))
        if text is None:
            stats.malformed += 1
            return []
        return [Turn(mid, SYSTEM, timestamp, text, position, agent, source)] if text else []
    if kind is None or type(kind) is str:
        stats.unknown[f"message:{kind}"] += 1  # a message type newer than this reader (or none)
    else:
        stats.malformed += 1  # a list or object where the type belongs
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


# ---------------------------------------------------------------- the JSONL record stream


def _said(message: dict[str, Any]) -> str | None:
    """A message's type and text, what tells a copy under a new id from the original (None: nothing to tell by)."""
    kind = message.get("type")
    text = user_text(message) if kind == "user" else _text(message.get("content"))
    return f"{kind}\0{hash(text)}" if text and type(kind) is str else None


def _is_ack(message: Any) -> bool:
    return type(message) is dict and message.get("type") == "gemini" and _text(message.get("content")) == _ACK


def jsonl_turns(path: str | os.PathLike[str], stats: ReadStats, agent: str | None, source: str | None,
                found: list[str]) -> Iterator[Turn]:  # fmt: skip
    """The turns of one JSONL file in order; the first session id a record names goes into an empty `found`."""
    seen = RecentIds()  # the ids seen lately: bounded memory whatever the file's size
    said = RecentIds()  # the (type, text) of the messages read lately: a rewritten history's copies are dropped
    pending: dict[str, Any] | None = None  # the latest message, held until a later message shows it is final
    pending_id = None
    pending_at = 0

    def emit(message: dict[str, Any], at: int, summary: bool = False) -> list[Turn]:
        mark = _said(message)
        if mark is not None:
            said.add(mark)
        return message_turns(message, at, stats, agent, source, summary)

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
                if pending is not None:  # a summary the CLI recorded alone is followed by its acknowledgement
                    yield from emit(pending, pending_at, pending.get("type") == "user" and _is_ack(record))
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
            yield from emit(pending, pending_at)
            pending = pending_id = None
        for index, message in enumerate(messages):
            if type(message) is not dict or type(message.get("id")) is not str:
                stats.malformed += 1
            elif message["id"] in seen:
                stats.duplicates += 1
            else:
                seen.add(message["id"])
                mark = _said(message)
                if mark is not None and mark in said:
                    stats.duplicates += 1  # the kept end of a compressed history, back under a new id
                    continue
                summary = message.get("type") == "user" and index + 1 < len(messages) and _is_ack(messages[index + 1])
                yield from emit(message, number, summary)
    if pending is not None:
        yield from emit(pending, pending_at)
