"""The Gemini API as the mock model answers it: generateContent, streamGenerateContent (SSE) and countTokens.

Gemini CLI (through @google/genai) posts to `<GOOGLE_GEMINI_BASE_URL>/v1beta/models/<model>:<method>`; the
streamed method asks for `?alt=sse` and reads `data: <GenerateContentResponse>` events. Each answer is one
candidate with one text part and a `usageMetadata` whose `promptTokenCount` is the script's `usage_tokens`, so
a test raises it to make the CLI compress on its next turn (Gemini compares that count with half the model's
token limit). A request that asks for JSON (`generationConfig.responseMimeType`), such as the CLI's
next-speaker check, gets a small JSON object that lets the person speak next.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mockmodel import SUMMARY_TEXT, Logged, MockModel, Reply, sse

_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^:/]+):(?P<method>[A-Za-z]+)$")
JSON_ANSWER = {"next_speaker": "user", "reasoning": "The mock model has answered; the person speaks next."}


def last_user_text(body: Any) -> str:
    """The text parts of the last user content of a generateContent body."""
    contents = body.get("contents") if isinstance(body, dict) else None
    if not isinstance(contents, list):
        return ""
    for content in reversed(contents):
        if isinstance(content, dict) and content.get("role", "user") == "user":
            parts = content.get("parts") or []
            texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if texts:
                return "\n".join(texts)
    return ""


def user_texts(body: Any) -> list[str]:
    """Every text part of every user content the request carries, in order (the model's view of the history)."""
    found: list[str] = []
    contents = body.get("contents") if isinstance(body, dict) else None
    for content in contents if isinstance(contents, list) else []:
        if isinstance(content, dict) and content.get("role", "user") == "user":
            for part in content.get("parts") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    found.append(part["text"])
    return found


def _wants_json(body: Any) -> bool:
    config = body.get("generationConfig") if isinstance(body, dict) else None
    return isinstance(config, dict) and config.get("responseMimeType") == "application/json"


def plan(model: MockModel, *turns: dict[str, Any]) -> None:
    """Queue what the next conversation requests get (one each, then the defaults): `{"call": name, "args": {...}}`
    for a function call, `{"text": ...}` for a text; `"tokens"` sets that reply's promptTokenCount."""
    model.gemini_plan = list(turns)  # type: ignore[attr-defined]


def _response(model: MockModel, text: str, name: str, turn: dict[str, Any] | None = None) -> dict[str, Any]:
    tokens = int((turn or {}).get("tokens", model.script.usage_tokens))
    part: dict[str, Any] = {"text": text}
    if turn and turn.get("call"):
        part = {"functionCall": {"name": turn["call"], "args": turn.get("args", {})}}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": tokens, "candidatesTokenCount": 5, "totalTokenCount": tokens + 5},
        "modelVersion": name,
        "responseId": f"mock-{model.script.next_id()}",
    }


def route(model: MockModel, logged: Logged) -> Reply | None:
    """The reply to a Gemini API request, or None when the path is not one."""
    match = _PATH.match(logged.path)
    if match is None:
        return None
    method, name = match.group("method"), match.group("model")
    if method == "countTokens":  # an estimate of the text, as the CLI's own fallback makes
        return Reply(body=json.dumps({"totalTokens": max(1, len(logged.text) // 4)}).encode())
    if method not in ("generateContent", "streamGenerateContent"):
        return Reply(404, body=json.dumps({"error": {"code": 404, "message": f"no mock {method}"}}).encode())
    body = logged.body
    turn: dict[str, Any] | None = None
    asked = last_user_text(body)
    if _wants_json(body):
        text = json.dumps(JSON_ANSWER)
    elif "<state_snapshot>" in asked:  # Gemini CLI's compression asks for one (then asks to check it)
        text = SUMMARY_TEXT + "\n<state_snapshot>MOCK-SUMMARY</state_snapshot>"
    else:
        queued = getattr(model, "gemini_plan", [])
        turn = queued.pop(0) if queued else None
        text = str((turn or {}).get("text") or model.script.answer(""))
    answer = _response(model, text, name, turn)
    if method == "generateContent":
        return Reply(body=json.dumps(answer, ensure_ascii=False).encode("utf-8"))
    return Reply(headers={"content-type": "text/event-stream"}, stream=sse([(None, answer)]))
