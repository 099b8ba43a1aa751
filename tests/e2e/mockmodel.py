"""A model server of our own on 127.0.0.1 that the real harness CLIs talk to in the end-to-end suite.

It answers each wire format well enough for a short headless session and logs every request body, so a test can
assert what reached the model (the resume packet, the skill, the MCP tools). The wire formats live in their own
modules (`wire_anthropic`, `wire_openai`, `wire_gemini`); this one is the server they plug into:

- `MockModel()` starts on a free loopback port in a thread; `url` is its base address, `requests` what it was sent
  (`Logged`: method, path, query, headers, the body as text and as JSON when it is JSON), and `log_path`, when
  given, receives the same as JSON lines.
- Every reply is decided by `Script`: a plain acknowledgement, or a compaction summary when the request asks for
  one (`is_summary_request`), with a fresh message id each time (Claude Code refuses to compact a conversation
  whose assistant messages share one).
- Bounded: it stops itself after `lifetime` seconds or `max_requests` requests, whichever comes first, and a test
  that forgets to stop it cannot keep a port or a thread past the run.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

REPLY_TEXT = "MOCK-REPLY: noted."
SUMMARY_TEXT = "<summary>MOCK-SUMMARY of the conversation.</summary>"
# Words the harnesses' compaction prompts use (Claude Code, Codex, Gemini CLI, OpenCode): a request whose last user
# text holds one of them is asked for a summary.  Lower case; matched on the lower-cased text.  Not "compaction"
# alone: a person's prompt may say it ("After the compaction: ...").
SUMMARY_CUES = (
    "summary of the conversation", "create a detailed summary", "summarize the conversation", "state_snapshot",
    "checkpoint compaction", "handoff summary", "summarize our conversation", "provide a detailed prompt",
    "context checkpoint", "<analysis>",
)  # fmt: skip


@dataclass
class Logged:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    text: str
    body: Any = None  # the body decoded as JSON, when it was JSON

    def as_json(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.path, "query": self.query, "headers": self.headers,
                "text": self.text}  # fmt: skip


@dataclass
class Reply:
    """What a wire module answers: a status, headers, and either one body or a stream of chunks (SSE)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})
    body: bytes = b""
    stream: Iterable[bytes] | None = None


class Script:
    """What the mock model says: a short acknowledgement, or a summary when it is asked for one.

    `texts` lets a test queue particular answers (one is used per request, then the defaults); `usage_tokens`
    is the input token count a wire module reports, which a test raises to make a harness compact.
    """

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.texts: list[str] = []
        self.usage_tokens = 100
        self.lock = threading.Lock()

    def next_id(self) -> int:
        with self.lock:
            return next(self._ids)

    def answer(self, last_user_text: str) -> str:
        with self.lock:
            if self.texts:
                return self.texts.pop(0)
        return SUMMARY_TEXT if is_summary_request(last_user_text) else REPLY_TEXT


def is_summary_request(text: str) -> bool:
    lowered = text.lower()
    return any(cue in lowered for cue in SUMMARY_CUES)


Route = Callable[["MockModel", Logged], Reply | None]  # None: not this module's path


def sse(events: Iterable[tuple[str | None, Any]]) -> Iterator[bytes]:
    """Server-sent events: each (event name or None, data as JSON or a ready string)."""
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        head = f"event: {name}\n" if name else ""
        yield (head + f"data: {payload}\n\n").encode("utf-8")


class MockModel:
    """The server: routes each request to the first wire module that takes its path (see the module docstring)."""

    def __init__(self, routes: Iterable[Route] | None = None, *, log_path: Path | None = None,
                 lifetime: float = 900.0, max_requests: int = 2000) -> None:  # fmt: skip
        if routes is None:
            routes = default_routes()
        self.routes = list(routes)
        self.script = Script()
        self.requests: list[Logged] = []
        self.log_path = log_path
        self.max_requests = max_requests
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._deadline = threading.Timer(lifetime, self.stop)
        self._deadline.daemon = True
        self._stopped = False

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> MockModel:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread.start()
        self._deadline.start()

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._deadline.cancel()
        threading.Thread(target=self._server.shutdown, daemon=True).start()  # shutdown() waits for serve_forever
        self._thread.join(timeout=5)
        self._server.server_close()

    def record(self, logged: Logged) -> bool:
        """Keep a request; False once the bound is reached (the server then stops itself)."""
        with self._lock:
            self.requests.append(logged)
            count = len(self.requests)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(logged.as_json(), ensure_ascii=False) + "\n")
        if count >= self.max_requests:
            threading.Thread(target=self.stop, daemon=True).start()
            return False
        return True

    def bodies(self, path_part: str = "") -> list[Any]:
        """The JSON bodies of the requests whose path holds `path_part`, in order."""
        with self._lock:
            return [r.body for r in self.requests if path_part in r.path and r.body is not None]

    def all_text(self) -> str:
        with self._lock:
            return "\n".join(r.text for r in self.requests)


def default_routes() -> list[Route]:
    import wire_anthropic
    import wire_gemini
    import wire_openai

    return [wire_anthropic.route, wire_openai.route, wire_gemini.route]


def _handler_for(model: MockModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the log is `requests`
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            text = raw.decode("utf-8", "replace")
            try:
                body = json.loads(text) if text.strip() else None
            except ValueError:
                body = None
            logged = Logged(self.command, parts.path, parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()}, text, body)  # fmt: skip
            if not model.record(logged):
                self._send(Reply(503, body=b'{"error": "the mock model reached its request bound"}'))
                return
            for route in model.routes:
                try:
                    reply = route(model, logged)
                except Exception as exc:  # a wire module's bug: answered, never a hung client
                    reply = Reply(500, body=json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
                if reply is not None:
                    self._send(reply)
                    return
            self._send(Reply(404, body=json.dumps({"error": f"no mock route for {parts.path}"}).encode()))

        def _send(self, reply: Reply) -> None:
            try:
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.stream is None:
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                else:
                    self.send_header("transfer-encoding", "chunked")
                    self.send_header("cache-control", "no-cache")
                    self.end_headers()
                    for chunk in reply.stream:
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

        do_POST = _serve
        do_GET = _serve
        do_PUT = _serve
        do_DELETE = _serve

    return Handler


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll `predicate` until it holds or `timeout` seconds pass (hooks may finish just after a CLI exits)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()
