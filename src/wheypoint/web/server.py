"""The local HTTP server of `wheypoint serve`: routes, the request guard, and the run until interrupted."""

from __future__ import annotations

import json
import re
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from wheypoint.app.context import Context
from wheypoint.model.errors import Refusal
from wheypoint.web import pages
from wheypoint.web.guard import LIVE_SCRIPT, Guard, cookie_header, security_headers, session_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

MAX_BODY = 64 * 1024  # an answer and a reason fit many times over; a bigger body is refused unread
WORK_PATH = re.compile(r"^/work/([a-z0-9](?:[a-z0-9-]{0,47})\.[0-9a-f]{8})$")
DIFF_PATH = re.compile(r"^/work/([a-z0-9](?:[a-z0-9-]{0,47})\.[0-9a-f]{8})/diff$")
REVISION = re.compile(r"^(?:[rR]?[0-9]{1,9}|rev-[0-9a-f]{16})$")  # what `diff` takes: rN, N or a revision id
VERSION = re.compile(r"^[0-9]{1,18}$")
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
    # speculative connection that never sends a request would otherwise stall every other one) and its own
    # Context, whose reads share one store (opened at the first, closed when the request is answered); an answer
    # writes through a store of its own, so the store's compare-and-set on the head orders two answers sent at once.
    timeout = 15
    guard: Guard
    context: Callable[[], Context]
    ctx: Context  # this request's
    timing = False  # whether each response says how long the server took (Server-Timing)
    started = 0.0

    def log_message(self, format: str, *args: Any) -> None:
        return  # a request line carries the token: nothing is logged

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's own refusals (a malformed request line, a header too long) as this server's page."""
        self.started = time.perf_counter()
        self._send(code, pages.message_page(f"{code}", message or "bad request"), close=True)

    def _send(self, status: int, html: str | None, headers: tuple[tuple[str, str], ...] = (),
              content_type: str = "text/html; charset=utf-8", close: bool = False,
              live: bool = False) -> None:  # fmt: skip
        """One response; `live`: a page that runs /live.js, so its CSP lets that one script address run."""
        self._done_reading()
        data = (html or "").encode("utf-8")
        took = (time.perf_counter() - self.started) * 1000 if self.timing else 0.0
        self.send_response(status)
        script = self.guard.origin + LIVE_SCRIPT if live else None
        for name, value in (*security_headers(script), *headers):
            self.send_header(name, value)
        if html is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if self.timing:  # WHEYPOINT_SERVE_TIMING=1: the standard header a browser's tools and bench/ read
            self.send_header("Server-Timing", f"app;dur={took:.2f}")
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD" and data:
            self.wfile.write(data)

    def _run(self, route: Callable[[], None]) -> None:
        self.started = time.perf_counter()  # the request line and headers are read: the request is received
        self.ctx = self.context()
        try:
            with self.ctx.one_store():  # every read of the page through one store, closed once the page is drawn
                self._respond(route)
        except Refusal:
            pass  # the page's read store would not close: the page is sent already, and nothing was written

    def _done_reading(self) -> None:
        """The page is drawn: its store goes back before it is sent, so the client's next request finds the kept
        connection free instead of making another."""
        ctx: Context | None = getattr(self, "ctx", None)  # none yet for a request line the base class refused
        try:
            if ctx is not None:
                ctx.done_reading()
        except Refusal:
            pass  # a read store that would not close: the page is drawn, and nothing was written

    def _respond(self, route: Callable[[], None]) -> None:
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
        path = parts.path
        if path == "/":
            from wheypoint.app.inbox import inbox

            live = self._live("/" + (f"?{parts.query}" if parts.query else ""))
            gate_page, page = _pages(parts.query)
            try:
                data = inbox(self.ctx, _filters(parts.query), gate_page, page)
            except Refusal as refusal:
                raise Reply(400, "Bad filter", refusal.message) from None
            self._send(200, pages.inbox_page(data, csrf, live=live), live=True)
        elif path == "/style.css":
            self._send(200, pages.STYLE, content_type="text/css; charset=utf-8")
        elif path == LIVE_SCRIPT:
            from wheypoint.web.live import LIVE_JS

            self._send(200, LIVE_JS, content_type="text/javascript; charset=utf-8")
        elif path == "/changes":
            self._changes(parts.query)
        elif path == "/health":
            from wheypoint.app.doctor import doctor
            from wheypoint.web.pages_health import health_html

            live = self._live("/health")
            self._send(200, health_html(doctor(self.ctx), live), live=True)
        elif WORK_PATH.match(path):
            self._send(200, self._work(WORK_PATH.match(path).group(1), csrf), live=True)  # type: ignore[union-attr]
        elif DIFF_PATH.match(path):
            self._diff(DIFF_PATH.match(path).group(1), parts.query)  # type: ignore[union-attr]
        else:
            raise Reply(404, "Not found", "no such page")

    def _live(self, address: str) -> tuple[int, str]:
        """What a live page carries: the store version read before the page is drawn (a write in between makes
        the page reload once more, never miss a change) and the GET address it reloads."""
        from wheypoint.app.workview import store_version

        return store_version(self.ctx), address

    def _changes(self, query: str) -> None:
        """`/changes?since=V`: the store's version now and whether it differs from V, as JSON (what live.js polls)."""
        from wheypoint.app.workview import store_version

        asked = _query(query, ("since",))
        since = asked.get("since")
        if since is not None and not VERSION.match(since):
            raise Reply(400, "Bad request", "since takes a store version: a whole number")
        version = store_version(self.ctx)
        reply: dict[str, Any] = {"version": version}
        if since is not None:
            reply["changed"] = version != int(since)
        self._send(200, json.dumps(reply), content_type="application/json")

    def _work(self, work_id: str, csrf: str, **shown: Any) -> str:
        from wheypoint.app.inbox import work_page
        from wheypoint.app.workview import lineage, links_both_ways
        from wheypoint.web.pages_work import work_html

        live = self._live(f"/work/{work_id}")
        try:
            data = work_page(self.ctx, work_id)
            data.update(links_both_ways(self.ctx, work_id))
            data["lineage"] = lineage(self.ctx, work_id)
        except Refusal as refusal:
            raise Reply(404, "Not found", refusal.message) from None
        return work_html(data, csrf, live=live, **shown)

    def _diff(self, work_id: str, query: str) -> None:
        """`/work/<id>/diff?from=R1&to=R2`: `wheypoint diff <id> R1 R2` as a page; either may be left out, as there."""
        from wheypoint.app.workview import diff_between
        from wheypoint.web.pages_work import diff_html

        asked = _query(query, ("from", "to"))
        for name, value in asked.items():
            if not REVISION.match(value):
                raise Reply(400, "Bad revision", f"{name} takes a revision: rN, its number N, or its id rev-<16 hex>")
        live = self._live(f"/work/{work_id}/diff" + (f"?{query}" if query else ""))
        try:
            data = diff_between(self.ctx, work_id, asked.get("from"), asked.get("to"))
        except Refusal as refusal:
            status = 404 if refusal.code in ("record-missing", "revision-missing") else 400
            raise Reply(status, "Not found" if status == 404 else "Bad revision", refusal.message) from None
        self._send(200, diff_html(data, live), live=True)

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
            # Through a Context of its own (its reads too), so every read of the page drawn after it, which share
            # the request's store, comes after the write.
            writing = self.context()
            done = answer_gate(writing, work_id, form["entry"], form["base"], form["answer"], form["reason"])
        except Refusal as refusal:
            error = scrub(refusal.as_json(lambda parameter: parameter))
            if refusal.code == "stale-parent":
                moved = revisions_since(self.ctx, work_id, form["base"])
                notice = (
                    "The work moved on since this page was drawn; nothing was written. Here is its head now: "
                    "answer again if the gate is still open."
                )
                self._send(409, self._work(work_id, csrf, notice=notice, refused=True, moved=moved), live=True)
                return
            words = [error["message"], *(f"{p['path']}: {p['message']}" for p in error.get("problems", []))]
            notice = "Nothing was written: " + "; ".join(words)
            self._send(422, self._work(work_id, csrf, notice=notice, refused=True), live=True)
            return
        notice = f"Recorded as revision r{done['revision_number']}" + (" (a replay)" if done["replayed"] else "")
        self._send(200, self._work(work_id, csrf, notice=notice), live=True)


def _query(query: str, names: tuple[str, ...]) -> dict[str, str]:
    """A query string of these names only, each at most once, UTF-8 text; an empty value is as if left out."""
    try:
        given = parse_qs(query, errors="strict", max_num_fields=2 * len(names) + 2)
    except (UnicodeDecodeError, ValueError):
        raise Reply(400, "Bad request", "the query is not UTF-8 text, or too long") from None
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise Reply(400, "Bad request", f"this page takes {', '.join(names)} only, not {', '.join(unknown)[:100]}")
    if any(len(values) != 1 for values in given.values()):
        raise Reply(400, "Bad request", "each of " + ", ".join(names) + " comes once")
    return {name: values[0] for name, values in given.items()}


PAGE = re.compile(r"^[1-9][0-9]{0,5}$")


def _pages(query: str) -> tuple[int, int]:
    """The inbox's `gate_page` and `page` (1 when left out): each once, a whole number from 1 to 999999."""
    try:
        given = parse_qs(query, keep_blank_values=True, errors="strict", max_num_fields=64)
    except (UnicodeDecodeError, ValueError):
        raise Reply(400, "Bad page", "the query is not UTF-8 text, or too long") from None
    numbers = []
    for name in ("gate_page", "page"):
        values = given.get(name, ["1"])
        if len(values) != 1 or not PAGE.match(values[0]):
            raise Reply(400, "Bad page", f"{name} takes one page number: a whole number from 1 to 999999")
        numbers.append(int(values[0]))
    return numbers[0], numbers[1]


def _filters(query: str) -> dict[str, list[str]]:
    """The inbox's filters from a query string: list's names, a few short values each, UTF-8 text only."""
    from wheypoint.app.inbox import FILTERS

    try:
        given = parse_qs(query, errors="strict", max_num_fields=4 * len(FILTERS) + 2)
    except (UnicodeDecodeError, ValueError):
        raise Reply(400, "Bad filter", "the filters are not UTF-8 text, or too many") from None
    chosen = {name: [v.strip() for v in values if v.strip()] for name, values in given.items() if name in FILTERS}
    if any(len(value) > 300 for values in chosen.values() for value in values):
        raise Reply(400, "Bad filter", "a filter value is at most 300 characters")
    return chosen


def bound(ctx: Context, host: str, port: int) -> tuple[ThreadingHTTPServer, Guard]:
    """The server of one run, bound and not yet answering, and its guard; per request its handler makes a fresh
    Context of `ctx`'s folder and environment, whose team store connections are kept for the next request."""

    class Bound(Handler):
        """The handler of this run: its guard, and a fresh Context (the same folder and environment) per request."""

        timing = ctx.environ.get("WHEYPOINT_SERVE_TIMING") == "1"

        @staticmethod
        def context() -> Context:
            fresh = Context(ctx.cwd, ctx.environ, ctx.project)
            fresh.keep_connections = True  # a team store's connections serve one request after another
            return fresh

    try:
        server = ThreadingHTTPServer((host, port), Bound)
    except OSError as exc:
        raise Refusal("serve-unbound", f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    Bound.guard = Guard(host, int(server.server_address[1]))
    return server, Bound.guard


def serve(ctx: Context, host: str, port: int, open_browser: bool = False, out: TextIO | None = None) -> int:
    """Bind, print the one JSON line with the URL, answer requests until SIGINT or SIGTERM; exit 0."""
    out = out or sys.stdout
    server, guard = bound(ctx, host, port)
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
