"""OpenAI Responses API for the mock model: what Codex speaks to a provider with `wire_api = "responses"`.

- `POST .../responses` (Codex posts to `<base_url>/responses`) answers with server-sent events, each named by
  its `type`: `response.created`, `response.output_item.added`, `response.output_text.delta` (the text in
  pieces), `response.output_item.done` (the whole assistant message), `response.completed` with `usage`.
  A request with `"stream": false` gets the finished response object instead.
- `POST .../responses/compact` (the remote compaction some providers offer) answers with one summary item.
- `GET .../models`: an empty list, should a client ask which models there are.

The reply text comes from the mock's `Script` (a summary when the last user text asks for one, as Codex's own
compaction prompt does). The input token count reported is `Script.usage_tokens`, except for a summary request
(always small), so a test raises `usage_tokens` for one turn to make Codex compact before the next, once.
"""

from __future__ import annotations

import json
import time
from typing import Any

from mockmodel import REPLY_TEXT, SUMMARY_TEXT, Logged, MockModel, Reply, is_summary_request, sse
from scenario import text_of

# Codex's compaction prompt (0.171): "You are performing a CONTEXT CHECKPOINT COMPACTION ..."; the shared cues
# hold "context checkpoint" already, these are kept should its wording move.
SUMMARY_WORDS = ("checkpoint compaction", "handoff summary")


def user_texts(body: Any) -> list[str]:
    """The texts of every role-user message of a request's `input`, in order."""
    items = body.get("input") if isinstance(body, dict) else None
    if isinstance(items, str):
        return [items]
    if not isinstance(items, list):
        return []
    return [text_of(i.get("content")) for i in items if isinstance(i, dict) and i.get("role") == "user"]


def tool_names(body: Any) -> list[str]:
    """The names of the tools a request offers the model. Codex 0.171 offers an MCP server's tools inside one
    `{"type": "namespace", "name": "mcp__<server>", "tools": [...]}`: those are named `mcp__<server>__<tool>`."""
    tools = body.get("tools") if isinstance(body, dict) else None
    return _names(tools if isinstance(tools, list) else [], "")


def _names(tools: list[Any], prefix: str) -> list[str]:
    names = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        name = str(tool.get("name") or (tool.get("function") or {}).get("name") or tool.get("type"))
        inner = tool.get("tools")
        if tool.get("type") == "namespace" and isinstance(inner, list):
            names += _names(inner, f"{prefix}{name}__")
        else:
            names.append(prefix + name)
    return names


def _usage(tokens: int) -> dict[str, Any]:
    return {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": tokens + 5}  # fmt: skip


def _message(ident: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}] if status == "completed" else []
    return {"type": "message", "id": ident, "status": status, "role": "assistant", "content": content}


def route(model: MockModel, logged: Logged) -> Reply | None:
    path = logged.path.rstrip("/")
    if path.endswith("/models") and logged.method == "GET":
        return Reply(body=json.dumps({"object": "list", "data": [], "models": []}).encode())
    if logged.method != "POST" or not (path.endswith("/responses") or path.endswith("/responses/compact")):
        return None
    body = logged.body if isinstance(logged.body, dict) else {}
    texts = user_texts(body)
    last = texts[-1] if texts else ""
    summary = path.endswith("/compact") or is_summary_request(last) or any(w in last.lower() for w in SUMMARY_WORDS)
    text = model.script.answer(last)
    if summary and text == REPLY_TEXT:
        text = SUMMARY_TEXT
    number = model.script.next_id()
    tokens = 100 if summary else model.script.usage_tokens
    if path.endswith("/compact"):
        summary_item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        return Reply(body=json.dumps({"output": [summary_item]}, ensure_ascii=False).encode())
    ident, item_id = f"resp_mock_{number}", f"msg_{number}"
    created = int(time.time())
    head = {"id": ident, "object": "response", "created_at": created, "model": str(body.get("model") or "mock")}
    done = {**head, "status": "completed", "output": [_message(item_id, text)], "usage": _usage(tokens)}
    if body.get("stream") is False:
        return Reply(body=json.dumps(done, ensure_ascii=False).encode())

    def events() -> Any:
        yield ("response.created", {"type": "response.created", "response": {**head, "status": "in_progress"}})
        added = {"type": "response.output_item.added", "output_index": 0,
                 "item": _message(item_id, "", "in_progress")}  # fmt: skip
        yield ("response.output_item.added", added)
        for piece in [text[i : i + 16] for i in range(0, len(text), 16)]:
            delta = {"type": "response.output_text.delta", "item_id": item_id, "output_index": 0,
                     "content_index": 0, "delta": piece}  # fmt: skip
            yield ("response.output_text.delta", delta)
        item_done = {"type": "response.output_item.done", "output_index": 0, "item": _message(item_id, text)}
        yield ("response.output_item.done", item_done)
        yield ("response.completed", {"type": "response.completed", "response": done})

    return Reply(headers={"content-type": "text/event-stream"}, stream=sse(events()))
