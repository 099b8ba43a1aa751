"""OpenAI Chat Completions for the mock model: what OpenCode's `@ai-sdk/openai-compatible` provider speaks.

- `POST .../chat/completions`: with `"stream": true` server-sent events, each `data: {"choices": [{"delta":
  {"content": ...}}]}`, then a chunk with `finish_reason` and `usage`, then `data: [DONE]`; without it one
  `chat.completion` object.
- `GET .../models`: the one model asked for, should a client list them.

The reply is a text queued on the mock's `Script`, else a summary for OpenCode's compaction prompt, else the plain
acknowledgement. The input token count reported is `Script.usage_tokens`, unless `settings(model).overflow_once`
names a text: the first request whose last user message holds it is answered with `overflow_tokens` instead, once,
so a harness that compacts on overflow compacts exactly once and never loops (OpenCode bounds no chain of
compactions); the summary itself always reports few tokens.
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

from mockmodel import REPLY_TEXT, SUMMARY_TEXT, MockModel, Reply
from scenario import text_of

# OpenCode 1.18's compaction prompt ("Create a new anchored summary from the conversation history in the
# <conversation> tags above ...", or with a <prior-summary> for a later one): matched on OpenCode's own words, not
# on the shared cues, which a typed prompt may hold ("After the compaction: ...").
SUMMARY_WORDS = ("anchored summary", "<prior-summary>")


@dataclass
class ChatSettings:
    overflow_once: str | None = None  # a text: the first request whose last user text holds it reports overflow
    overflow_tokens: int = 1_000_000
    overflowed: bool = False


_SETTINGS: weakref.WeakKeyDictionary[MockModel, ChatSettings] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def settings(model: MockModel) -> ChatSettings:
    """This mock's Chat Completions settings (made on first use)."""
    with _LOCK:
        return _SETTINGS.setdefault(model, ChatSettings())


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def is_compaction(body: dict[str, Any]) -> bool:
    """A request for a compaction summary: its last user message is OpenCode's summary prompt."""
    last = last_user_text(body)
    return "<conversation>" in last and any(word in last for word in SUMMARY_WORDS)


def _queued(model: MockModel) -> str | None:
    """A text a test queued on the script (`Script.texts`), used once."""
    with model.script.lock:
        return model.script.texts.pop(0) if model.script.texts else None


def _input_tokens(model: MockModel, last: str) -> int:
    chat = settings(model)
    with _LOCK:
        if chat.overflow_once and not chat.overflowed and chat.overflow_once in last:
            chat.overflowed = True
            return chat.overflow_tokens
    return model.script.usage_tokens


def route(model: MockModel, logged: Any) -> Reply | None:
    if logged.path.endswith("/models") and logged.method == "GET":
        data = [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}]
        return Reply(body=json.dumps({"object": "list", "data": data}).encode())
    if not logged.path.endswith("/chat/completions") or logged.method != "POST":
        return None
    body = logged.body if isinstance(logged.body, dict) else {}
    last = last_user_text(body)
    summary = is_compaction(body)
    text = _queued(model) or (SUMMARY_TEXT if summary else REPLY_TEXT)
    prompt_tokens = 100 if summary else _input_tokens(model, last)
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 10, "total_tokens": prompt_tokens + 10}
    ident = f"chatcmpl-mock-{model.script.next_id()}"
    name = str(body.get("model") or "mock-model")
    created = int(time.time())
    if not body.get("stream"):
        answer = {"id": ident, "object": "chat.completion", "created": created, "model": name,
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                               "finish_reason": "stop"}], "usage": usage}  # fmt: skip
        return Reply(body=json.dumps(answer, ensure_ascii=False).encode())

    def chunks() -> Any:
        head = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": name}
        first = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                      "finish_reason": None}]}  # fmt: skip
        yield _data(first)
        for piece in _pieces(text):
            yield _data({**head, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
        yield _data({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage})
        yield b"data: [DONE]\n\n"

    return Reply(headers={"content-type": "text/event-stream"}, stream=chunks())


def _pieces(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _data(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()
