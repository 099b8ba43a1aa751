"""The Anthropic Messages API as the mock model speaks it to Claude Code: replies, streams, token counts.

- `POST /v1/messages`: one assistant text message, as one JSON document or, with `"stream": true`, as the
  server-sent events the API sends (message_start, content_block_start, content_block_delta, content_block_stop,
  message_delta, message_stop). Each reply gets a fresh message id: Claude Code refuses to compact a conversation
  whose assistant messages share one ("Not enough messages to compact"). The text is a queued one of the
  script's, else its summary when Claude Code asks for one (`is_compaction`: the compaction prompt's own words,
  not the broad cues of mockmodel, which a user's prompt about a compaction would meet), else its plain reply.
- `POST /v1/messages/count_tokens`: `{"input_tokens": N}`, N the script's `usage_tokens`.
- Anything else under `/v1/` or `/api/` that Claude Code may call on start-up (models, account, settings,
  feature flags): a minimal empty answer, so that nothing waits on a request the mock does not know.
"""

from __future__ import annotations

import json
from typing import Any

from mockmodel import REPLY_TEXT, SUMMARY_TEXT, Logged, MockModel, Reply, sse

MODEL = "claude-mock-1"
COMPACTION_CUE = "your task is to create a detailed summary of the conversation"  # Claude Code's compact prompt


def route(model: MockModel, logged: Logged) -> Reply | None:
    path = logged.path.rstrip("/")
    if logged.method == "POST" and path.endswith("/v1/messages/count_tokens"):
        return _json({"input_tokens": model.script.usage_tokens})
    if logged.method == "POST" and path.endswith("/v1/messages"):
        return _message(model, logged.body if isinstance(logged.body, dict) else {})
    if path.endswith("/v1/models"):
        entry = {"type": "model", "id": MODEL, "display_name": MODEL, "created_at": "2026-01-01T00:00:00Z"}
        return _json({"data": [entry], "has_more": False, "first_id": MODEL, "last_id": MODEL})
    if "/api/" in path or path.startswith("/v1/"):  # start-up calls (account, flags, settings): answered empty
        return _json({})
    return None


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the request's last user message (its text blocks joined), what the script answers."""
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def is_compaction(body: dict[str, Any]) -> bool:
    """Whether Claude Code asks for its compaction summary (its prompt is the last user text)."""
    return COMPACTION_CUE in last_user_text(body).lower()


def _message(model: MockModel, body: dict[str, Any]) -> Reply:
    queued = model.script.answer("")  # a text the test queued, else the plain reply
    text = SUMMARY_TEXT if queued == REPLY_TEXT and is_compaction(body) else queued
    message_id = f"msg_mock{model.script.next_id():06d}"
    name = str(body.get("model") or MODEL)
    usage = {"input_tokens": model.script.usage_tokens, "output_tokens": max(1, len(text) // 4),
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}  # fmt: skip
    if not body.get("stream"):
        return _json({"id": message_id, "type": "message", "role": "assistant", "model": name,
                      "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                      "usage": usage})  # fmt: skip
    start = {"id": message_id, "type": "message", "role": "assistant", "model": name, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}  # fmt: skip
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": usage["output_tokens"]}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return Reply(headers={"content-type": "text/event-stream", "request-id": f"req_{message_id}"}, stream=sse(events))


def _json(data: Any) -> Reply:
    return Reply(body=json.dumps(data, ensure_ascii=False).encode("utf-8"))
