"""The local HTTP server of `wheypoint serve`: routes, the request guard, and the run until interrupted."""

from __future__ import annotations

import json
import re
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from wheypoint.app.context import Context
from wheypoint.model.errors import Refusal
from wheypoint.web import pages
from wheypoint.web.guard import SECURITY_HEADERS, Guard, cookie_header, session_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

MAX_BODY = 64 * 1024  # an answer and a reason fit many times over; a bigger body is refused unread
WORK_PATH = re.compile(r"^/work/([a-z0-9](?:[a-z0-9-]{0,47})\.[0-9a-f]{8})$")
FIELDS = ("csrf", "work_id", "entry", "base", "answer", "reason")


class Reply(Exception):
    """A response decided before the page: its status and its page's title and text."""

    def __init__(self, status: int, title: str, text: str) -> None:
        from wheypoint.model.replies import scrub_text  # the scrub every reply passes (an error page only)

        text = scrub_text(text)  # a refusal's words can quote what the request sent
        super().__init__(text)
        self.status, self.title, self.text = status, title, text


class Handler(BaseHTTPRequestHandler):
    """One request: guarded first (Host, then the token or session), then routed; never a traceback."""

    server_version = "wheypoint"
    sys_version = ""
    # A client that sends nothing for this long is dropped. Each request has its own thread (a browser's
    # speculative connection that never sends a request would otherwise stall every other one) and opens its
    # own store, so the store's compare-and-set on the head orders two answers sent at once.
    timeout = 15
    guard: Guard
    context: Callable[[], Context]

    def log_message(self, format: str, *args: Any) -> None:
        return  # a request line carries the token: nothing is logged

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's own refusals (a malformed request line, a header too long) as this server's page."""
        self._send(code, pages.message_page(f"{code}", message or "bad request"), close=True)

    def _send(self, status: int, html: str | None, headers: tuple[tuple[str, str], ...] = (),
              content_type: str = "text/html; charset=utf-8", close: bool = False) -> None:  # fmt: skip
        data = (html or "").encode("utf-8")
        self.send_response(status)
        for name, value in (*SECURITY_HEADERS, *headers):
            self.send_header(name, value)
        if html is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD" and data:
            self.wfile.write(data)

    def _run(self, route: Callable[[], None]) -> None:
        try:
            if not self.guard.host_ok(self.headers.get("Host")):
                raise Reply(403, "Refused", "this server answers only at the address it printed")
            route()
        except Reply as reply:
            self._send(reply.status, pages.message_page(reply.title, reply.text), close=reply.status >= 400)
        except Exception:  # a bug: a page that says so, never a traceback
            self._send(500, pages.message_page("Error", "the server met an error; nothing was written"), close=True)

    def _session(self) -> str:
        session = session_of(self.headers.get("Cookie"))
        if session is None or not self.guard.session_ok(session):
            raise Reply(403, "Refused", "open the URL wheypoint serve printed (with its token) first")
        return session

    def do_GET(self) -> None:
        self._run(self._get)

    def do_HEAD(self) -> None:
        self._run(self._get)

    def do_POST(self) -> None:
        self._run(self._post)

    def _not_allowed(self) -> None:
        self._run(lambda: self._refuse(Reply(405, "Not allowed", "this server takes GET and POST only")))

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def _refuse(self, reply: Reply) -> None:
        raise reply

    def _get(self) -> None:
        parts = urlsplit(self.path)
        token = parse_qs(parts.query).get("token", [None])[0] if parts.query else None
        if token is not None:
            if not self.guard.token_ok(token):
                raise Reply(403, "Refused", "that token is not this run's")
            session = self.guard.open_session()  # the token is traded for a cookie once, then leaves the URL
            back = parts.path if WORK_PATH.match(parts.path) else "/"  # a page of its own, never `//elsewhere`
            self._send(303, None, (("Location", back), ("Set-Cookie", cookie_header(session))))
            return
        session = self._session()
        csrf = self.guard.csrf_for(session)
        if parts.path == "/":
            from wheypoint.app.inbox import inbox

            try:
                data = inbox(self.context(), _filters(parts.query))
            except Refusal as refusal:
                raise Reply(400, "Bad filter", refusal.message) from None
            self._send(200, pages.inbox_page(data, csrf))
        elif parts.path == "/style.css":
            self._send(200, pages.STYLE, content_type="text/css; charset=utf-8")
        elif WORK_PATH.match(parts.path):
            self._send(200, self._work(WORK_PATH.match(parts.path).group(1), csrf))  # type: ignore[union-attr]
        else:
            raise Reply(404, "Not found", "no such page")

    def _work(self, work_id: str, csrf: str, **shown: Any) -> str:
        from wheypoint.app.inbox import work_page

        try:
            data = work_page(self.context(), work_id)
        except Refusal as refusal:
            raise Reply(404, "Not found", refusal.message) from None
        return pages.work_html(data, csrf, **shown)

    def _form(self) -> dict[str, str]:
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            raise Reply(411, "Length required", "a form says how long it is")
        if not length_text.isdigit():
            raise Reply(400, "Bad request", "the length of the form is not a number")
        length = int(length_text)
        if length > MAX_BODY:
            raise Reply(413, "Too large", f"a form is at most {MAX_BODY} bytes")
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise Reply(415, "Unsupported", "the server reads HTML forms only")
        body = self.rfile.read(length)
        try:
            text = body.decode("ascii")
            fields = parse_qs(text, keep_blank_values=True, strict_parsing=bool(text), errors="strict",
                              max_num_fields=len(FIELDS) + 2)  # fmt: skip
        except (UnicodeDecodeError, ValueError):
            raise Reply(400, "Bad request", "the form is not UTF-8 text in the form encoding") from None
        if any(len(values) != 1 for values in fields.values()):
            raise Reply(400, "Bad request", "each field of the form comes once")
        return {name: values[0] for name, values in fields.items()}

    def _post(self) -> None:
        if urlsplit(self.path).path != "/answer":
            raise Reply(404, "Not found", "no such form")
        session = self._session()
        form = self._form()
        if not self.guard.post_ok(session, form.get("csrf"), self.headers.get("Origin")):
            raise Reply(403, "Refused", "this form did not come from this server's own page")
        missing = [name for name in FIELDS if name not in form]
        if missing or not WORK_PATH.match(f"/work/{form['work_id']}"):
            raise Reply(400, "Bad request", "the form lacks " + ", ".join(missing or ["a work id"]))
        self._answer(session, form)

    def _answer(self, session: str, form: dict[str, str]) -> None:
        from wheypoint.app.answer import answer_gate
        from wheypoint.app.inbox import revisions_since
        from wheypoint.model.replies import scrub

        csrf, work_id = self.guard.csrf_for(session), form["work_id"]
        try:
            done = answer_gate(self.context(), work_id, form["entry"], form["base"], form["answer"], form["reason"])
        except Refusal as refusal:
            error = scrub(refusal.as_json(lambda parameter: parameter))
            if refusal.code == "stale-parent":
                moved = revisions_since(self.context(), work_id, form["base"])
                notice = "The work moved on since this page was drawn; nothing was written. Here is its head now: " \
                         "answer again if the gate is still open."
                self._send(409, self._work(work_id, csrf, notice=notice, refused=True, moved=moved))
                return
            words = [error["message"], *(f"{p['path']}: {p['message']}" for p in error.get("problems", []))]
            notice = "Nothing was written: " + "; ".join(words)
            self._send(422, self._work(work_id, csrf, notice=notice, refused=True))
            return
        notice = f"Recorded as revision r{done['revision_number']}" + (" (a replay)" if done["replayed"] else "")
        self._send(200, self._work(work_id, csrf, notice=notice))


def _filters(query: str) -> dict[str, list[str]]:
    """The inbox's filters from a query string: list's names, a few short values each, UTF-8 text only."""
    from wheypoint.app.inbox import FILTERS

    try:
        given = parse_qs(query, errors="strict", max_num_fields=4 * len(FILTERS))
    except (UnicodeDecodeError, ValueError):
        raise Reply(400, "Bad filter", "the filters are not UTF-8 text, or too many") from None
    chosen = {name: [v.strip() for v in values if v.strip()] for name, values in given.items() if name in FILTERS}
    if any(len(value) > 300 for values in chosen.values() for value in values):
        raise Reply(400, "Bad filter", "a filter value is at most 300 characters")
    return chosen


def serve(ctx: Context, host: str, port: int, open_browser: bool = False, out: TextIO | None = None) -> int:
    """Bind, print the one JSON line with the URL, answer requests until SIGINT or SIGTERM; exit 0."""
    out = out or sys.stdout

    class Bound(Handler):
        """The handler of this run: its guard, and a fresh Context (the same folder and environment) per request."""

        @staticmethod
        def context() -> Context:
            return Context(ctx.cwd, ctx.environ, ctx.project)

    try:
        server = ThreadingHTTPServer((host, port), Bound)
    except OSError as exc:
        raise Refusal("serve-unbound", f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    guard = Bound.guard = Guard(host, int(server.server_address[1]))
    url = f"{guard.origin}/?token={guard.token}"

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # Both, before the URL is printed (a caller may stop it at once), and SIGINT too: a process started in the
    # background by a shell inherits SIGINT ignored, and Python then installs no handler of its own for it.
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        print(json.dumps({"ok": True, "command": "serve", "url": url}), file=out, flush=True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.server_close()
    return 0
