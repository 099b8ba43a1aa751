"""How Codex rollout records become turns: prompts and their echoes, injected context, tools, forks' replays.

In rollouts before 0.171 (the corpus's, 0.135 and older), what the person typed is the `event_msg`
`user_message`; Codex also writes the same words as a `response_item` message of role user just before (or
after) it. That echo is dropped and counted as a duplicate, so a prompt appears once. A role-user message that
no event confirms is injected context (environment, AGENTS.md, skills, aborted-turn notes) and reads as `meta`,
except `!` shell commands, which Codex stores as `<user_shell_command>` blocks. From 0.171 there is no
`user_message`: each content part of a role-user message says who wrote it
(`content_item_metadata[].provenance.type`, "user" for typed words, "harness", "skills", "agents_md"... for
context, a hook's included), and an `item_completed` event with a `UserMessage` item mirrors the prompt;
whichever of the two comes second is the duplicate. The `agent_message` and `agent_reasoning` events (and the
`item_completed` agent, reasoning and compaction items) mirror other records and are counted as duplicates
rather than yielded twice.

A forked or subagent rollout starts with a copy of its parent's history, re-stamped in one burst at
the fork instant and opened by the parent's own session_meta. That copy is skipped and counted as
duplicates: see `_REPLAY_GAP` for where it ends.

Turn ids are the 1-based line number (the file is append-only), with `#n` when one line holds several
texts (content parts of a message, summary parts of a reasoning item), and `+k` on the k-th further record
of a line that holds several (the newline between them was lost). Finding and describing rollouts is `codex`'s
job.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from wheypoint.transcripts import model
from wheypoint.transcripts.lines import DUPLICATE, MAX_LINE_BYTES, read_jsonl
from wheypoint.transcripts.model import ReadPoint, ReadStats, Turn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator, Iterator
    from typing import Any

# A forked or subagent rollout (session_meta with forked_from_id, parent_thread_id or a subagent source)
# may open with a copy of its parent's history: the copy starts with the parent's session_meta on the
# very next record and is written in one burst at the fork instant. It ends at the first record stamped
# more than this many seconds after the record before it (the fork's own first turn comes later). No
# session_meta right after ours: no copy, nothing skipped.
_REPLAY_GAP = 0.25

# Role-user texts Codex injects as context (matched like Codex does: leading blanks ignored, any case).
_CONTEXT_MARKERS = (
    "<environment_context>", "<user_instructions>", "# agents.md instructions for ", "<turn_aborted>",
    "<skill>", "<plugins>", "<subagents>", "<subagent_notification>", "<collaboration_mode>",
)  # fmt: skip
_SHELL_INPUT_MARKER = "<user_shell_command>"
_SHELL_OUTPUT_MARKER = "<user_shell_command_output>"

_SKIPPED_EVENTS = frozenset({
    "token_count", "task_started", "task_complete", "turn_started", "turn_complete", "context_compacted",
    "entered_review_mode", "exited_review_mode", "undo_started", "undo_completed", "thread_rolled_back",
    "thread_name_updated", "session_configured", "exec_command_begin", "exec_command_end",
    "patch_apply_begin", "patch_apply_end", "mcp_tool_call_begin", "mcp_tool_call_end", "web_search_begin",
    "web_search_end", "view_image_tool_call", "plan_update", "turn_diff", "background_event",
    "item_started", "item_completed", "agent_reasoning_section_break",
    # 0.171 (named in its binary's event enum): settings, hook runs, MCP start-up, queue and goal changes
    "thread_settings_applied", "hook_started", "hook_completed", "mcp_startup_update", "mcp_startup_complete",
    "thread_goal_updated", "thread_queue_changed", "environment_connected", "environment_disconnected",
    "patch_apply_updated", "exec_command_output_delta", "terminal_interaction", "deprecation_notice",
    "model_reroute", "shutdown_complete",
})  # fmt: skip
_MIRROR_EVENTS = frozenset({"agent_message", "agent_reasoning", "agent_reasoning_raw_content"})
# `item_completed` items that repeat a record of their own: the assistant's message, its reasoning, the compaction.
_MIRROR_ITEMS = frozenset({"AgentMessage", "Reasoning", "ContextCompaction"})
_SYSTEM_EVENTS = frozenset({"error", "warning", "stream_error"})
# Response item types that older rollouts write bare, without the {timestamp, type, payload} wrapper.
_LEGACY_ITEMS = frozenset({
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
    "local_shell_call", "web_search_call", "ghost_snapshot",
})  # fmt: skip
_WRAPPED = frozenset({"response_item", "event_msg", "compacted", "turn_context", "session_meta"})
# Wrapped records of 0.171 that carry state, never a turn (its binary's rollout item names).
_STATE_RECORDS = frozenset({
    "world_state", "token_usage_record", "dynamic_tools_updated", "security_risk_score", "id_allocation",
    "realtime_item", "inter_agent_communication_metadata",
})  # fmt: skip
# Lines that never hold a turn, known by their opening bytes (Codex writes timestamp, type, payload in
# that order); group 1 is set for the event mirrors of response items, which count as duplicates.
_BOOKKEEPING = (  # compiled by `_read` (once, through the `re` cache), not by every command's start-up
    rb'"type":"(?:turn_context"|world_state"|token_usage_record"|event_msg","payload":\{"type":"'
    rb'(?:token_count"|thread_settings_applied"|(agent_message|agent_reasoning)"))'
)
_PEEK_BYTES = 160
_SKIPPED_ITEMS = frozenset({"ghost_snapshot", "compaction", "other"})
_TOOL_NAMES = {"web_search_call": "web_search", "local_shell_call": "local_shell"}


def _context_kind(text: str) -> str | None:
    """The kind of an injected role-user text, or None when it carries no Codex marker."""
    head = text[:64].lstrip().lower()
    if not head.startswith(("<", "#")):
        return None
    if head.startswith(_SHELL_OUTPUT_MARKER):
        return model.SHELL_OUTPUT
    if head.startswith(_SHELL_INPUT_MARKER):
        return model.SHELL_INPUT
    if head.startswith(_CONTEXT_MARKERS):
        return model.META
    return None


def _same_text(event_text: str, item_text: str) -> bool:
    """Whether a response item's text is the echo of a user_message event.

    Besides equality, two redaction placeholders `[REDACTED_<label> len=N sha=H]` with the same length
    and hash match: redacted corpora (the project's shared test rollouts) label the two copies apart.
    """
    if event_text == item_text:
        return True
    if event_text.startswith("[REDACTED_") and item_text.startswith("[REDACTED_") and event_text.endswith("]"):
        return event_text.partition(" ")[2] == item_text.partition(" ")[2]
    return False


def message_texts(content: Any) -> list[str]:
    """The text parts of a message's content (input_text, output_text, refusal), in order."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts = []
    for part in content:
        if isinstance(part, dict):
            text = part.get("text")
            if not isinstance(text, str):
                text = part.get("refusal")
            if isinstance(text, str):
                texts.append(text)
    return texts


def _origins(payload: dict[str, Any]) -> list[str | None] | None:
    """Who wrote each content part of a message (0.171's `provenance.type`), or None when it does not say."""
    carrier = payload.get("internal_chat_message_metadata_passthrough")
    metadata = carrier.get("content_item_metadata") if type(carrier) is dict else payload.get("content_item_metadata")
    if type(metadata) is not list or not metadata:
        return None
    origins: list[str | None] = []
    for entry in metadata:
        provenance = entry.get("provenance") if type(entry) is dict else None
        origin = provenance.get("type") if type(provenance) is dict else provenance
        origins.append(origin if type(origin) is str else None)
    return origins if any(origin is not None for origin in origins) else None


def typed_parts(payload: dict[str, Any]) -> list[bool] | None:
    """For each text of a role-user message (as `message_texts` lists them), whether the person typed it.

    None when the message carries no provenance (Codex before 0.171), or when its parts cannot be matched to
    their provenance entries (lists of different lengths whose entries disagree).
    """
    origins = _origins(payload)
    if origins is None:
        return None
    content = payload.get("content")
    parts = content if type(content) is list else [content] if type(content) is str else []
    if len(origins) != len(parts):
        if len(set(origins)) != 1:
            return None
        origins = origins[:1] * len(parts)
    typed = []
    for part, origin in zip(parts, origins, strict=False):
        if type(part) is dict:
            text = part.get("text")
            if type(text) is not str:
                text = part.get("refusal")
        else:
            text = part
        if type(text) is str:
            typed.append(origin == "user")
    return typed


def _reasoning_texts(payload: dict[str, Any]) -> list[str]:
    texts = []
    for key in ("summary", "content"):
        parts = payload.get(key)
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append(part["text"])
    return texts


def _as_text(value: Any) -> str:
    """A field that should be a string: itself, or its compact JSON (as Codex writes it) for a structure."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _tool_call_text(kind: str, payload: dict[str, Any]) -> str:
    name = payload.get("name")
    if not isinstance(name, str):
        name = _TOOL_NAMES.get(kind, kind)
    for key in ("arguments", "input", "action"):
        if key in payload:
            return f"{name}\n{_as_text(payload[key])}"
    return name


def _tool_output_text(output: Any) -> str:
    if isinstance(output, list):  # content items: text parts joined, images left out
        return "".join(part["text"] for part in output if isinstance(part, dict) and isinstance(part.get("text"), str))
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return str(output["content"])
    return _as_text(output)


def _seconds(stamp: Any) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _fork_agent(meta: dict[str, Any]) -> tuple[bool, str | None]:
    """(whether the rollout opens with a copy of a parent's history, its subagent id if it is one)."""
    source = meta.get("source")
    subagent = isinstance(source, dict) or meta.get("thread_source") == "subagent"
    forked = subagent or bool(meta.get("forked_from_id")) or bool(meta.get("parent_thread_id"))
    agent = meta.get("id") if subagent and isinstance(meta.get("id"), str) else None
    return forked, agent


def _turns(texts: list[str], kind: str, key: str, number: int, stamp: str | None, agent: str | None) -> Iterator[Turn]:
    if len(texts) == 1:
        yield Turn(key, kind, stamp, texts[0], number, agent)
        return
    for index, text in enumerate(texts):
        if text:
            yield Turn(f"{key}#{index}", kind, stamp, text, number, agent)


def _key(number: int, extra: int) -> str:
    """A record's id: its line, and which record of that line it is when the line holds several."""
    return f"{number}+{extra}" if extra else str(number)


def read(path: str, stats: ReadStats, max_line: int = MAX_LINE_BYTES, start: ReadPoint | None = None,
         meta: dict[str, Any] | None = None) -> Generator[Turn, None, None]:  # fmt: skip
    """Every turn of one rollout, with the dispatch inline (it is the hot loop of `turns`).

    Bookkeeping lines (token_count, turn_context, and the agent_message / agent_reasoning mirrors) are
    passed to `read_jsonl` as a skip test on their opening bytes, so they are counted without being
    decoded: they are most of a rollout's bytes and never hold a turn. While a fork's copied history
    may still be running, nothing is skipped, since the copy is recognised from the decoded records.

    `start` resumes a read past the rollout's opening (lines.read_jsonl), `meta` being its session_meta payload:
    a fork's copied history is written at once when the rollout opens, so a resumed read is past it.
    """
    agent: str | None = None
    replay = False  # a fork's copied history may still be running
    copying = False  # the copy has begun (its first record, the parent's session_meta, was seen)
    replay_last = 0.0
    first = start is None
    if meta is not None:
        agent = _fork_agent(meta)[1]
    # A role-user response item that may be the echo of the next user_message event: (line, stamp, texts).
    pending: tuple[str, int, str | None, list[str]] | None = None
    last_prompt: list[str] | None = None  # the texts of the last prompt, which an echo or mirror may still follow
    task_open = False  # between task_started and task_complete / turn_aborted
    task_prompted = False  # that task already has its prompt
    peek = re.compile(_BOOKKEEPING).search
    new = tuple.__new__  # a Turn without the NamedTuple constructor's keyword handling

    def bookkeeping(line: bytes) -> str | None:
        if replay:
            return None
        hit = peek(line, 0, _PEEK_BYTES)
        if hit is None:
            return None
        return DUPLICATE if hit.group(1) is not None else "bookkeeping"

    last_line = extra = 0
    for number, record in read_jsonl(path, stats, max_line, bookkeeping, start):
        if number != last_line:
            last_line, extra = number, 0
        else:  # another record on the same line
            extra += 1
        if type(record) is not dict:
            stats.malformed += 1
            continue
        rtype = record.get("type")
        if rtype is not None and type(rtype) is not str:  # a list or object: no record type at all
            stats.malformed += 1
            continue
        stamp = record.get("timestamp")
        if stamp is not None and type(stamp) is not str:
            stamp = None
        if first:
            first = False
            if rtype == "session_meta" and isinstance(record.get("payload"), dict):
                replay, agent = _fork_agent(record["payload"])
                replay_last = _seconds(stamp) or 0.0
                continue
            if rtype is None and "id" in record and "record_type" not in record:
                continue  # the bare opening line of an older rollout
        if replay:
            moment = _seconds(stamp)
            if rtype == "session_meta" or (copying and moment is not None and moment - replay_last <= _REPLAY_GAP):
                copying = True
                replay_last = max(replay_last, moment or 0.0)
                stats.duplicates += 1
                continue
            replay = False  # the copy ended, or there was none (no parent meta right after ours)

        # Classify the record into (kind, texts); records without a turn `continue`.
        payload = record.get("payload")
        if rtype in _WRAPPED:
            if type(payload) is not dict:
                stats.malformed += 1
                continue
            wrapped = True
        elif rtype in _LEGACY_ITEMS:
            payload, rtype, wrapped = record, "response_item", False
        elif record.get("record_type") == "state":
            continue
        elif rtype in _STATE_RECORDS:
            stats.skipped[str(rtype)] += 1
            continue
        else:
            stats.unknown[str(rtype)] += 1
            continue

        texts: list[str]
        if rtype == "response_item":
            itype = payload.get("type")
            if itype == "message":
                role = payload.get("role")
                texts = message_texts(payload.get("content"))
                if role == "assistant":
                    last_prompt = None
                    extras = record.get("metadata")  # 0.171: beside the payload
                    if type(extras) is dict and extras.get("compaction_output") is True:
                        stats.duplicates += 1  # the summary a compaction asked for: the compacted record holds it
                        continue
                    kind = model.ASSISTANT
                elif role == "user":
                    if not texts:
                        continue
                    typed = typed_parts(payload) if wrapped else None
                    context = _context_kind(texts[0])
                    if typed is not None and any(typed):  # 0.171: the person's words, as its provenance says
                        if last_prompt is not None and any(_same_text(p, t) for p in last_prompt for t in texts):
                            stats.duplicates += 1  # its item_completed mirror came first
                            last_prompt = None
                            continue
                        if pending is not None:
                            yield from _turns(pending[3], model.META, pending[0], pending[1], pending[2], agent)
                            pending = None
                        prompt = model.QUEUED_PROMPT if task_open and task_prompted else model.PROMPT
                        key = _key(number, extra)
                        for index, (text, mine) in enumerate(zip(texts, typed, strict=False)):
                            shell = context if index == 0 and context != model.META else None
                            part_kind = (shell or prompt) if mine else model.META
                            part_key = key if len(texts) == 1 else f"{key}#{index}"
                            if text or len(texts) == 1:
                                yield Turn(part_key, part_kind, stamp, text, number, agent)
                        task_prompted = True
                        last_prompt = [text for text, mine in zip(texts, typed, strict=False) if mine]
                        continue
                    if typed is not None:
                        kind = context or model.META  # context the harness, a skill or AGENTS.md put there
                    elif context is not None:
                        kind = context
                    elif not wrapped:
                        kind = model.PROMPT  # older rollouts have no user_message event
                    elif last_prompt is not None and any(_same_text(p, t) for p in last_prompt for t in texts):
                        stats.duplicates += 1  # the echo written after its event
                        last_prompt = None
                        continue
                    else:
                        if pending is not None:
                            yield from _turns(pending[3], model.META, pending[0], pending[1], pending[2], agent)
                        pending = (_key(number, extra), number, stamp, texts)
                        continue
                elif role == "developer" or role == "system":
                    kind = model.META
                else:
                    stats.unknown[f"message:{role}"] += 1
                    continue
            else:
                last_prompt = None
                if itype == "reasoning":
                    kind, texts = model.THINKING, _reasoning_texts(payload)
                elif type(itype) is str and itype.endswith("_call_output"):
                    kind, texts = model.TOOL_RESULT, [_tool_output_text(payload.get("output"))]
                elif type(itype) is str and itype.endswith("_call"):
                    kind, texts = model.TOOL_CALL, [_tool_call_text(itype, payload)]
                else:
                    counter = stats.skipped if type(itype) is str and itype in _SKIPPED_ITEMS else stats.unknown
                    counter[f"response_item:{itype}"] += 1
                    continue
        elif rtype == "event_msg":
            etype = payload.get("type")
            if etype is not None and type(etype) is not str:
                stats.malformed += 1
                continue
            user_item = None
            if etype == "item_completed":
                item = payload.get("item")
                if type(item) is not dict:
                    item = {}
                item_type = item.get("type")
                if item_type == "UserMessage":
                    user_item = message_texts(item.get("content"))
                    if last_prompt is not None and any(_same_text(p, t) for p in last_prompt for t in user_item):
                        stats.duplicates += 1  # the mirror of the role-user message just read
                        last_prompt = None
                        continue
                    if not user_item:
                        stats.skipped["event_msg:item_completed"] += 1
                        continue
                elif item_type in _MIRROR_ITEMS:
                    stats.duplicates += 1
                    continue
            if etype == "user_message" or user_item is not None:
                if user_item is None:
                    message = payload.get("message")
                    if type(message) is not str:
                        stats.malformed += 1
                        continue
                    texts = [message]
                else:  # a UserMessage item no role-user message came before: it is the prompt, as the event was
                    texts = user_item
                last_prompt = texts
                if pending is not None and any(_same_text(p, t) for p in texts for t in pending[3]):
                    stats.duplicates += 1
                    pending = None
                    last_prompt = None
                if payload.get("kind") in ("user_instructions", "environment_context"):
                    kind = model.META
                else:
                    kind = _context_kind(texts[0]) or (model.QUEUED_PROMPT if task_open and task_prompted
                                                       else model.PROMPT)  # fmt: skip
                    task_prompted = True
            elif etype in _MIRROR_EVENTS:
                stats.duplicates += 1
                continue
            elif etype == "task_started" or etype == "turn_started":
                task_open, task_prompted = True, False
                continue
            elif etype == "task_complete" or etype == "turn_complete":
                task_open = False
                continue
            elif etype == "turn_aborted":
                task_open = False
                kind, texts = model.INTERRUPTION, [_as_text(payload.get("reason"))]
            elif etype in _SYSTEM_EVENTS:
                kind, texts = model.SYSTEM, [_as_text(payload.get("message"))]
            else:
                counter = stats.skipped if etype in _SKIPPED_EVENTS else stats.unknown
                counter[f"event_msg:{etype}"] += 1
                continue
        elif rtype == "compacted":
            kind, texts = model.COMPACTION_SUMMARY, [_as_text(payload.get("message"))]
        else:
            continue  # turn_context and later session_meta lines carry settings, not turns

        if pending is not None:  # no event claimed the held role-user item: it was injected context
            yield from _turns(pending[3], model.META, pending[0], pending[1], pending[2], agent)
            pending = None
        if len(texts) == 1:
            yield new(Turn, (_key(number, extra), kind, stamp, texts[0], number, agent, None))
        else:
            yield from _turns(texts, kind, _key(number, extra), number, stamp, agent)
    if pending is not None:
        yield from _turns(pending[3], model.META, pending[0], pending[1], pending[2], agent)
