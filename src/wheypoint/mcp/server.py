"""`wheypoint mcp`: an MCP server over stdio, newline-delimited JSON-RPC 2.0, serving the commands as tools.

One message a line on standard input, read as bytes and decoded as UTF-8; one reply a line on standard
output; logs on standard error only. Requests are answered one at a time, in order. Methods: `initialize`,
`ping`, `tools/list`, `tools/call`, and the notifications `notifications/initialized` and
`notifications/cancelled` (ignored: a call runs to its end). Anything else is -32601, `server/discover`
included, which tells a client that probes for the stateless protocol to fall back to `initialize`.

Errors: a line that is not JSON (or not UTF-8, or nested too deeply for any parser) is -32700 with id null; a
message that is not a request object (an array, no `method`, a bad `jsonrpc` or `id`, a key given twice, nesting
deeper than MAX_DEPTH) is -32600; wrong `params` are -32602, as is an unknown tool. A notification (no `id`) is
never answered. A message that is a response (`result` or `error`, no `method`) is ignored: this server sends no
requests. End of input ends the server, exit 0. Any line is answered and the next one read: whatever a line
raises, even past every check (a RecursionError, a MemoryError), becomes a -32603 reply, never the end.

Every reply, an error or a tool's result, passes `model.replies.scrub`, the one scrub the command line's replies
pass: an error that quotes what the client sent (a method, a tool name, a parse error's text) never gives back a
credential in it, nor does a tool's answer (its text is written again from the scrubbed answer when the scrub
changed anything). The `id` alone goes back as it came, as JSON-RPC requires: the client chose it, not the model.
Only the results of OWN_TEXT's methods, wholly the server's own text, are sent as they are. What a reply quotes
of the input is cut to its first EXCERPT characters.

The protocol's two descriptors are moved aside before anything runs, so that nothing else can write on
the protocol's standard output or read its standard input: file descriptor 1 then points at standard
error, and 0 at the null device. What a command prints is captured by the runner `cli` hands over.

Start-up matters (an agent's harness starts this process and waits for its first answer), so this module
imports nothing beyond what the command line has loaded already; the tool table is built on first need.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, BinaryIO

    from wheypoint.mcp.tools import CommandLike, Runner, Tool

# The protocol versions this server speaks, newest first: a client asking for another gets the newest.
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18")
MAX_LINE = 16 * 1024 * 1024  # a message longer than this is refused and skipped (an intent is at most 1 MiB)
# The deepest nesting of arrays and objects a message may have (an intent nests 6 levels, a request 3 above it):
# deeper data would reach the recursive walks of the command behind a tool (the intent's checks, canonical JSON)
# near Python's recursion limit.
MAX_DEPTH = 64
EXCERPT = 60  # characters of the client's own text (a method, a tool name) an error quotes
# Methods whose result is the server's own text alone, whatever the request held (initialize names a protocol
# version of PROTOCOL_VERSIONS, never the one asked for): the scrub would find nothing in them, and loading the
# credential scan for the first answer would cost every start some 11 ms.
OWN_TEXT = frozenset({"initialize", "ping", "tools/list"})
_OWN = "\x00own"  # marks such a reply on its way out of _reply; never sent

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

INSTRUCTIONS = (
    "wheypoint keeps handoff checkpoints: the user's directives, decisions and open questions of a work, "
    "revisioned in a local store and rendered as a Markdown note. Call `checkpoint` with an intent to record "
    "one (its schema is in the tool's input schema); `show`, `log`, `resolve` and `handoff_render` read one back. "
    "A refusal is a tool error whose JSON names a code and every problem."
)


class ProtocolError(Exception):
    """A request answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def log(message: str) -> None:
    """A line on standard error: the only place this server writes anything but replies (scrubbed as they are)."""
    from wheypoint.model.replies import scrub_text

    try:
        sys.stderr.write(f"wheypoint mcp: {scrub_text(message)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class Server:
    """The state of one connection: the command table, the runner, and the tools once built."""

    def __init__(self, commands: Sequence[CommandLike], runner: Runner) -> None:
        self.commands = commands
        self.runner = runner
        self._tools: dict[str, Tool] | None = None

    @property
    def tools(self) -> dict[str, Tool]:
        if self._tools is None:
            from wheypoint.mcp.tools import build_tools

            self._tools = build_tools(self.commands)
        return self._tools

    def handle_line(self, line: bytes) -> dict[str, Any] | None:
        """The reply to one line of input, or None when none is due (a notification, a response, a blank).

        Never raises: whatever the line makes happen is answered (see the module's docstring), and the reply is
        scrubbed."""
        try:
            reply = self._reply(line)
        except Exception as exc:  # past every check (RecursionError, MemoryError): answered, and serving goes on
            reply = _error(None, INTERNAL_ERROR, f"internal error: {type(exc).__name__}")
        if reply is None:
            return None
        if reply.pop(_OWN, False):  # a result wholly of the server's own text: nothing to scrub
            return reply
        # All but the id, which goes back as it came: the client matches replies to requests by it (JSON-RPC), and
        # it is the client's own choice, never the model's.
        scrubbed: dict[str, Any] = _scrubbed({key: value for key, value in reply.items() if key != "id"})
        return {"jsonrpc": "2.0", "id": reply.get("id"), **scrubbed}

    def _reply(self, line: bytes) -> dict[str, Any] | None:
        duplicates: list[str] = []

        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            obj = dict(items)
            if len(obj) != len(items):
                seen: set[str] = set()
                for key, _ in items:
                    if key in seen:
                        duplicates.append(key)
                    seen.add(key)
            return obj

        try:
            message = json.loads(line.decode("utf-8"), object_pairs_hook=pairs, parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError) as exc:
            return _error(None, PARSE_ERROR, f"parse error: {str(exc)[:200]}")
        except RecursionError:
            return _error(None, PARSE_ERROR, "parse error: the line nests too deeply to parse")
        if _deeper_than(message, MAX_DEPTH):
            ident = message.get("id") if isinstance(message, dict) else None
            good = isinstance(ident, (str, int)) and not isinstance(ident, bool) and not _deeper_than(ident, 0)
            return _error(ident if good else None, INVALID_REQUEST, f"invalid request: nests deeper than {MAX_DEPTH}")
        if not isinstance(message, dict):
            what = "a batch (an array); send one message a line" if isinstance(message, list) else "not an object"
            return _error(None, INVALID_REQUEST, f"invalid request: {what}")
        has_id = "id" in message
        ident = message.get("id")
        good_id = isinstance(ident, (str, int)) and not isinstance(ident, bool) and "id" not in duplicates
        reply_id = ident if good_id else None
        method = message.get("method")
        if not isinstance(method, str):
            if "method" not in message and ("result" in message or "error" in message):
                log(f"ignored a response to id {ident!r}: this server sends no requests")
                return None
            return _error(reply_id, INVALID_REQUEST, "invalid request: no method (a string)")
        if message.get("jsonrpc") != "2.0":
            return _error(reply_id, INVALID_REQUEST, 'invalid request: jsonrpc must be "2.0"') if has_id else None
        if duplicates:
            keys = ", ".join(sorted(set(duplicates)))
            return _error(reply_id, INVALID_REQUEST, f"invalid request: a key given twice: {keys}") if has_id else None
        if not has_id:
            self.notify(method, message.get("params"))
            return None
        if not good_id:
            return _error(None, INVALID_REQUEST, "invalid request: id must be a string or an integer")
        params = message.get("params", {})
        if params is None:
            params = {}
        try:
            if not isinstance(params, dict):
                raise ProtocolError(INVALID_PARAMS, "params must be an object")
            reply = {"jsonrpc": "2.0", "id": ident, "result": self.request(method, params)}
            if method in OWN_TEXT:
                reply[_OWN] = True
            return reply
        except ProtocolError as exc:
            return _error(ident, exc.code, exc.message)
        except Exception as exc:  # a bug here: answer it, keep serving
            import traceback

            log(f"{method} failed:\n{traceback.format_exc()}")
            return _error(ident, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")

    def notify(self, method: str, params: Any) -> None:
        """A notification: nothing to answer. `initialized` and `cancelled` need nothing done either."""
        if method not in ("notifications/initialized", "notifications/cancelled"):
            log(f"ignored the notification {_quoted(method)}")

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            return self.initialize(params)
        if method == "ping":
            return {}
        if method == "tools/list":
            if params.get("cursor") is not None:
                raise ProtocolError(INVALID_PARAMS, "unknown cursor: tools/list has one page")
            return {"tools": [tool.definition for tool in self.tools.values()]}
        if method == "tools/call":
            return self.call(params)
        raise ProtocolError(METHOD_NOT_FOUND, f"method not found: {_quoted(method)}")

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise ProtocolError(INVALID_PARAMS, "initialize needs protocolVersion (a string)")
        from wheypoint import __version__

        return {
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "wheypoint", "title": "wheypoint", "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    def call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise ProtocolError(INVALID_PARAMS, "tools/call needs name (a string)")
        tool = self.tools.get(name)
        if tool is None:
            raise ProtocolError(INVALID_PARAMS, f"unknown tool: {_quoted(name)}; tools: {', '.join(self.tools)}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, "tools/call arguments must be an object")
        from wheypoint.mcp.tools import call

        result = call(tool, arguments, self.runner)
        answer = result.get("structuredContent")
        scrubbed = _scrubbed(answer)
        if scrubbed != answer:  # the text the client reads is the scrubbed answer too, never the raw one
            from wheypoint.model.replies import document_text

            result = {
                **result,
                "structuredContent": scrubbed,
                "content": [{"type": "text", "text": document_text(scrubbed)}],
            }
        return result


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests arrays and objects more than `limit` levels deep (walked without recursion)."""
    level: list[Any] = [value]
    depth = 0
    while level:
        level = [item for node in level if isinstance(node, (dict, list))
                 for item in (node.values() if isinstance(node, dict) else node)]  # fmt: skip
        if level:
            depth += 1
            if depth > limit:
                return True
    return False


def _quoted(text: str) -> str:
    """The client's own text as an error quotes it: its start only (scrubbed whole first, see replies.excerpt)."""
    from wheypoint.model.replies import excerpt

    return excerpt(text, EXCERPT) + ("..." if len(text) > EXCERPT else "")


def _strings(value: Any) -> list[str]:
    """Every string and key in `value` (walked without recursion)."""
    found: list[str] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            found += [key for key in node if isinstance(key, str)]
            stack += node.values()
        elif isinstance(node, (list, tuple)):
            stack += node
    return found


def _scrubbed(reply: Any) -> Any:
    """model.replies.scrub, the command line's own: every string and key of a reply, credentials redacted.

    The scan is run once over all the reply's strings, a line each, first: when it finds nothing to redact and
    no lone surrogate (nearly always), the reply is already what scrub would give back, in a few milliseconds
    where string by string it takes tens (a tools/list holds some 3,000 strings)."""
    from wheypoint.model.canonical import surrogate_at
    from wheypoint.model.credentials import scan_text
    from wheypoint.model.replies import scrub

    joined = "\n".join(_strings(reply))
    if surrogate_at(joined) is None and all(set(joined[hit.start : hit.end]) <= {"*"} for hit in scan_text(joined)):
        return reply
    return scrub(reply)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def encode(message: dict[str, Any]) -> bytes:
    """One line of output: the message as compact JSON (UTF-8) and a newline."""
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in some text: escape it rather than send invalid UTF-8
        text = json.dumps(message, separators=(",", ":")).encode("ascii")
    return text + b"\n"


def protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """This process's standard input and output, taken for the protocol alone (see the module's docstring)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    reader, writer = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    try:
        os.dup2(2, 1)
    except OSError:  # no standard error: stray output goes nowhere rather than into the protocol
        os.dup2(null, 1)
    os.close(null)
    return open(reader, "rb"), open(writer, "wb")  # both live as long as the process


def _skip_line(reader: BinaryIO) -> bool:
    """Read up to the end of an over-long line; False when input ended first."""
    while True:
        chunk = reader.readline(MAX_LINE)
        if not chunk:
            return False
        if chunk.endswith(b"\n"):
            return True


def serve(commands: Sequence[CommandLike], runner: Runner, streams: tuple[BinaryIO, BinaryIO] | None = None) -> int:
    """Answer messages until standard input ends (exit 0); 1 when the client stopped reading our replies."""
    reader, writer = streams if streams is not None else protocol_streams()
    server = Server(commands, runner)
    while True:
        line = reader.readline(MAX_LINE + 1)
        if not line:
            return 0
        ended = False
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            reply: dict[str, Any] | None = _error(None, INVALID_REQUEST, f"invalid request: over {MAX_LINE} bytes")
            ended = not _skip_line(reader)
        else:
            line = line.strip()
            if not line:
                continue
            reply = server.handle_line(line)
        if reply is not None:
            try:
                data = encode(reply)
            except (ValueError, RecursionError, MemoryError) as exc:  # a reply no JSON can carry: said, not died on
                data = encode(
                    _error(None, INTERNAL_ERROR, f"internal error: the reply cannot be sent: {type(exc).__name__}")
                )
            try:
                writer.write(data)
                writer.flush()
            except (OSError, ValueError):
                log("the client stopped reading our replies: exiting")
                return 1
        if ended:
            return 0
