"""`wheypoint serve`: a real server process on port 0 over a scratch store, driven with the standard HTTP client."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

from conftest import BACKENDS, HARNESS_VARIABLES, both_backends, make_repo

AUTHOR = "Pat Person <pat@example.invalid>"
FAKE_TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"  # built here so no credential-looking literal sits in the file
HOSTILE = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", '"><svg onload=alert(1)>',
           "<a href=javascript:alert(1)>x</a>", "'; background:url(x)", "</textarea><script>x</script>",
           "<!-- c -->", "<iframe src=//evil.example>"]  # fmt: skip


STORES: dict[Path, str] = {}  # a test home whose store is a PostgreSQL database (the `answering` fixture's)


def _env(home: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}
    # HOME too: no harness state or git config of the developer's is read (the checkout's own config names its user).
    store = {"WHEYPOINT_STORE": STORES[home]} if home in STORES else {}
    return {**environ, "WHEYPOINT_HOME": str(home), "WHEYPOINT_AUTHOR": AUTHOR, "HOME": str(home / "user"), **store}


def cli(home: Path, cwd: Path, *args: str, stdin: str | None = None) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "wheypoint", *args], cwd=cwd, env=_env(home), input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def gated_intent(slug: str, question: str = "Which cap?", **texts: str) -> dict[str, Any]:
    """A first checkpoint with one gate, its dossier and a directive; `texts` overrides any of their texts."""
    t = {"orientation": "Retry policy.", "directive": "Keep it short.", "quote": "keep it short",
         "question": question, "owner": "payments lead", "when": "before release", "why": "The cap is unclear.",
         "fork": "How far to back off", "option": "30 s", "evidence": "retry.py:1 says 10", "breaks": "slow clients",
         "leaning": "30 s", "notes": "Notes.", **texts}  # fmt: skip
    return {"slug": slug, "orientation": t["orientation"], "next": {"move": "hold"}, "notes": t["notes"],
            "directives": [{"text": t["directive"], "quote": t["quote"]}],
            "questions": [{"text": t["question"], "gates": True, "owner": t["owner"], "when": t["when"],
                           "rationale": t["why"], "label": "cap"}],
            "decision_dossier": [{"fork": t["fork"], "gate": "cap", "prior_leaning": t["leaning"],
                                  "options": [{"option": t["option"], "evidence": [t["evidence"]],
                                               "breaks": t["breaks"]}, {"option": "60 s"}]}]}  # fmt: skip


@dataclass
class Page:
    status: int
    headers: dict[str, str]
    body: str

    def form(self) -> dict[str, str]:
        """The hidden fields of the page's first answer form."""
        found = dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', self.body)[:4])
        return {k: v.replace("&amp;", "&") for k, v in found.items()}


@dataclass
class Server:
    proc: subprocess.Popen[str]
    url: str
    host: str
    port: int
    home: Path
    repo: Path
    cookie: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None,
                cookie: str | None = None) -> Page:  # fmt: skip
        conn = http.client.HTTPConnection(self.host, self.port, timeout=20)
        sent = {"Host": f"{self.host}:{self.port}", **(headers or {})}
        if cookie is None:
            cookie = self.cookie
        if cookie:
            sent["Cookie"] = f"wheypoint_session={cookie}"
        conn.request(method, path, body=body, headers=sent)
        reply = conn.getresponse()
        page = Page(reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read().decode("utf-8"))
        conn.close()
        return page

    def login(self) -> str:
        parts = urlsplit(self.url)
        page = self.request("GET", f"/?{parts.query}", cookie="")
        assert page.status == 303, page
        cookie = page.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        return cookie.split(";")[0].split("=", 1)[1]

    def post(self, fields: dict[str, str], origin: str | None = "", cookie: str | None = None) -> Page:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if origin is not None:
            headers["Origin"] = origin or self.origin
        return self.request("POST", "/answer", urlencode(fields).encode(), headers, cookie)


def start(home: Path, repo: Path, *args: str, sigint_ignored: bool = False) -> Server:
    # sigint_ignored: started as a shell starts a background job, which inherits SIGINT ignored.
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None
    proc = subprocess.Popen([sys.executable, "-m", "wheypoint", "serve", "--port", "0", *args], cwd=repo,
                            env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ignore)  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.stderr.read() if proc.stderr else ""
    url = json.loads(line)["url"]
    parts = urlsplit(url)
    return Server(proc, url, parts.hostname or "", parts.port or 0, home, repo)


def stop(server: Server, how: int = signal.SIGTERM) -> int:
    server.proc.send_signal(how)
    try:
        return server.proc.wait(timeout=20)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"retry.py": "10\n"})


@pytest.fixture
def server(tmp_path: Path, repo: Path) -> Iterator[Server]:
    home = tmp_path / "home"
    cli(home, repo, "checkpoint", "-", stdin=json.dumps(gated_intent("retry")))
    running = start(home, repo)
    running.cookie = running.login()
    yield running
    assert stop(running) == 0


@pytest.fixture(params=BACKENDS)
def answering(request: pytest.FixtureRequest, tmp_path: Path, repo: Path) -> Iterator[Server]:
    """`server`, on the SQLite file and on a PostgreSQL database (skipped without a server, failed under CI)."""
    home = tmp_path / "home"
    url = both_backends(request)
    if url:
        STORES[home] = url
    try:
        cli(home, repo, "checkpoint", "-", stdin=json.dumps(gated_intent("retry")))
        running = start(home, repo)
        running.cookie = running.login()
        yield running
        assert stop(running) == 0
    finally:
        STORES.pop(home, None)


def revisions(server: Server, work: str = "retry") -> list[dict[str, Any]]:
    return list(cli(server.home, server.repo, "log", work)["revisions"])


def answer_fields(page: Page, answer: str = "Cap at 30 s.", reason: str = "The SLA allows it.") -> dict[str, str]:
    return {**page.form(), "answer": answer, "reason": reason}


# The run itself


def test_serve_prints_one_json_line_binds_loopback_and_ends_with_0_on_sigint_and_sigterm(tmp_path: Path,
                                                                                        repo: Path) -> None:
    for how in (signal.SIGINT, signal.SIGTERM):
        running = start(tmp_path / "home", repo)
        assert running.host == "127.0.0.1" and running.port > 0
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{40,}", running.url)
        assert stop(running, how) == 0
        assert running.proc.stdout is not None and running.proc.stdout.read() == ""  # one line, nothing after
    other = start(tmp_path / "home", repo)
    assert urlsplit(other.url).query != urlsplit(running.url).query  # a token per run
    assert stop(other) == 0
    # Started in the background by a shell (SIGINT ignored on the way in), an interrupt still stops it.
    background = start(tmp_path / "home", repo, sigint_ignored=True)
    assert stop(background, signal.SIGINT) == 0


def test_another_host_is_served_only_with_a_warning(tmp_path: Path, repo: Path) -> None:
    running = start(tmp_path / "home", repo, "--host", "127.0.0.2")
    assert running.host == "127.0.0.2"
    assert stop(running) == 0
    assert running.proc.stderr is not None and "warning" in running.proc.stderr.read()


def test_a_port_in_use_is_refused_in_words(tmp_path: Path, repo: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = subprocess.run([sys.executable, "-m", "wheypoint", "serve", "--port", port], cwd=repo,
                              env=_env(tmp_path / "home"), capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 1 and json.loads(done.stdout)["error"]["code"] == "serve-unbound", done.stdout


def test_the_token_leads_only_to_a_page_of_this_server(server: Server) -> None:
    query = urlsplit(server.url).query
    for path, back in (("/", "/"), ("//evil.example/x", "/"), ("/work/retry.0badc0de", "/work/retry.0badc0de"),
                       ("/..%2f..", "/")):  # fmt: skip
        page = server.request("GET", f"{path}?{query}", cookie="")
        assert page.status == 303 and page.headers["location"] == back, path


def test_a_bad_port_is_a_usage_refusal(tmp_path: Path, repo: Path) -> None:
    for port in ("x", "70000", "-1"):
        done = subprocess.run([sys.executable, "-m", "wheypoint", "serve", "--port", port], cwd=repo,
                              env=_env(tmp_path / "home"), capture_output=True, text=True, timeout=30, check=False)
        assert done.returncode == 2 and json.loads(done.stdout)["error"]["parameter"] == "port", done.stdout


# Safety


def test_without_the_token_or_its_cookie_every_request_is_403(server: Server) -> None:
    fields = answer_fields(server.request("GET", "/"))
    for method, path in (("GET", "/"), ("GET", "/style.css"), ("GET", "/work/retry.00000000"), ("GET", "/nope")):
        assert server.request(method, path, cookie="").status == 403
        assert server.request(method, path, cookie="forged").status == 403
    assert server.request("GET", "/?token=wrong", cookie="").status == 403
    assert server.request("GET", "/?token=", cookie="").status == 403
    assert server.post(fields, cookie="").status == 403
    assert len(revisions(server)) == 1
    assert server.request("GET", "/").status == 200  # the cookie the token was traded for


def test_a_host_other_than_the_bound_address_is_refused(server: Server) -> None:
    for host in ("evil.example", f"evil.example:{server.port}", f"localhost:{server.port}", "127.0.0.1",
                 f"127.0.0.1:{server.port + 1}"):  # fmt: skip
        page = server.request("GET", "/", headers={"Host": host})
        assert page.status == 403, host
    token = urlsplit(server.url).query
    assert server.request("GET", f"/?{token}", headers={"Host": "rebound.example"}, cookie="").status == 403


def test_a_post_needs_its_sessions_csrf_token_and_this_servers_origin(server: Server) -> None:
    fields = answer_fields(server.request("GET", "/"))
    other = server.login()  # a second session: its own CSRF token
    other_csrf = server.request("GET", "/", cookie=other).form()["csrf"]
    assert other_csrf != fields["csrf"]
    refused = [
        server.post({**fields, "csrf": ""}), server.post({k: v for k, v in fields.items() if k != "csrf"}),
        server.post({**fields, "csrf": other_csrf}), server.post(fields, origin=None),
        server.post(fields, origin="http://evil.example"), server.post(fields, origin="null"),
        server.post(fields, origin=f"http://localhost:{server.port}"),
    ]  # fmt: skip
    assert [page.status for page in refused] == [403] * len(refused)
    assert len(revisions(server)) == 1
    assert server.post(fields, cookie=other).status == 403  # this session's token under the other's cookie


def test_every_response_carries_the_security_headers(server: Server) -> None:
    pages = [server.request("GET", "/"), server.request("GET", "/style.css"), server.request("GET", "/", cookie=""),
             server.request("GET", "/missing"), server.request("DELETE", "/"),
             server.request("GET", "/", headers={"Host": "evil.example"}),
             server.request("POST", "/answer", b"x", {"Content-Length": "999999999"}),
             server.request("GET", urlsplit(server.url).path + "?" + urlsplit(server.url).query, cookie="")]
    for index, page in enumerate(pages):
        csp = page.headers.get("content-security-policy", "")
        # The inbox runs one script, this server's /live.js, named in full; every other response runs none.
        script = f"script-src {server.origin}/live.js;" if index == 0 else "script-src 'none';"
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and script in csp, (index, csp)
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "script-src 'self'" not in csp
        assert page.headers.get("x-content-type-options") == "nosniff"
        # Not no-referrer: under it a browser sends a form's POST with `Origin: null`, which the guard refuses.
        assert page.headers.get("referrer-policy") == "same-origin"
    assert pages[1].headers["content-type"].startswith("text/css")


def test_bad_requests_get_a_4xx_page_never_a_traceback(server: Server) -> None:
    fields = answer_fields(server.request("GET", "/"))
    form = {"Content-Type": "application/x-www-form-urlencoded", "Origin": server.origin}
    cases = {
        "huge body": (server.request("POST", "/answer", b"a=b", {**form, "Content-Length": str(10**9)}), 413),
        "bad utf-8": (server.request("POST", "/answer", urlencode(fields).encode() + b"&answer=%ff%fe", form), 400),
        "raw bytes": (server.request("POST", "/answer", b"answer=\xff\xfe&" + urlencode(fields).encode(), form), 400),
        "field twice": (server.request("POST", "/answer", (urlencode(fields) + "&answer=again").encode(), form), 400),
        "not a form": (server.request("POST", "/answer", b"{}", {**form, "Content-Type": "application/json"}), 415),
        "unknown path": (server.request("GET", "/etc/passwd"), 404),
        "traversal": (server.request("GET", "/../../../../etc/passwd"), 404),
        "encoded traversal": (server.request("GET", "/work/..%2f..%2fetc%2fpasswd"), 404),
        "source file": (server.request("GET", "/src/wheypoint/web/server.py"), 404),
        "unknown work": (server.request("GET", "/work/nothing.0badc0de"), 404),
        "post elsewhere": (server.request("POST", "/", urlencode(fields).encode(), form), 404),
        "put": (server.request("PUT", "/", b"x"), 405),
        "delete": (server.request("DELETE", "/answer"), 405),
        "missing fields": (server.post({"csrf": fields["csrf"]}), 400),
    }
    for name, (page, status) in cases.items():
        assert page.status == status, (name, page.status, page.body[:300])
        assert "Traceback" not in page.body and "root:" not in page.body and "import " not in page.body, name
    assert len(revisions(server)) == 1
    # A request line the standard library's parser refuses itself still gets this server's page and headers.
    for line, status in ((b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n", "431"),
                         (b"GET / HTTP/2.0\r\n\r\n", None), (b"GARBAGE <script>\r\n\r\n", None)):
        with socket.create_connection((server.host, server.port), timeout=20) as raw:
            raw.sendall(line)
            answer = b""
            while chunk := raw.recv(65536):
                answer += chunk
        text = answer.decode("latin-1")
        assert "Traceback" not in text and "<script" not in text, text[:300]
        if status:  # (an HTTP/0.9 line gets a page without headers: that protocol has none)
            assert text.startswith(f"HTTP/1.0 {status}") and "Content-Security-Policy" in text, text[:300]


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, as a browser's tokenizer would see them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


OWN_TAGS = {"html", "head", "meta", "title", "link", "body", "nav", "a", "h1", "h2", "h3", "h4", "p", "section",
            "span", "ol", "ul", "li", "div", "strong", "form", "input", "label", "textarea", "button", "table",
            "thead", "tbody", "tr", "th", "td", "pre", "select", "option", "code", "figure"}  # fmt: skip
LIVE_TAG = '<script src="/live.js" defer></script>'  # the one script a page carries: this server's own file


def test_every_text_from_the_store_is_escaped(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    from test_note_forging import COMMONMARK  # the notes' own hostile markup cases

    hostile = [*HOSTILE, *(c for c in COMMONMARK if "<" in c)]
    keys = ("directive", "quote", "question", "owner", "when", "why", "fork", "option", "evidence", "breaks",
            "leaning", "notes")  # fmt: skip
    for index, keys_text in enumerate(hostile):
        texts = {key: f"{key} {keys_text}" for key in keys}
        texts["orientation"] = "Hostile " + keys_text.replace("\n", " ")
        texts["owner"], texts["when"] = texts["owner"][:200].replace("\n", " "), texts["when"].replace("\n", " ")
        cli(home, repo, "checkpoint", "-", stdin=json.dumps(gated_intent(f"hostile-{index}", **texts)))
    running = start(home, repo)
    try:
        running.cookie = running.login()
        inbox = running.request("GET", "/")
        works = re.findall(r'href="/work/([^"]+)"', inbox.body)
        assert len(set(works)) == len(hostile)
        bodies = [inbox.body, *(running.request("GET", f"/work/{w}").body for w in sorted(set(works)))]
    finally:
        assert stop(running) == 0
    for body in bodies:
        assert body.count(LIVE_TAG) == 1
        body = body.replace(LIVE_TAG, "")
        assert "<script" not in body.lower() and "<img" not in body.lower() and "<svg" not in body.lower()
        assert "<iframe" not in body.lower()
        parser = Tags()
        parser.feed(body)
        for tag, attrs in parser.tags:
            assert tag in OWN_TAGS, tag
            assert not [name for name, _ in attrs if name.startswith("on")], (tag, attrs)
            assert not [v for name, v in attrs if name == "href" and v and not v.startswith("/")], (tag, attrs)
    assert "hostile &lt;script&gt;" in bodies[0].lower() or "&lt;script&gt;" in bodies[0]


# The inbox and the answers


def test_the_inbox_shows_every_open_gate_of_every_project_oldest_first(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    other = make_repo(tmp_path / "billing", {"b.py": "1\n"})
    cli(home, repo, "checkpoint", "-", stdin=json.dumps(gated_intent("retry", "Which cap?")))
    time.sleep(1.1)  # the store keeps whole seconds: the second gate is then the younger one
    cli(home, other, "checkpoint", "-", stdin=json.dumps(gated_intent("invoices", "Which currency?")))
    cli(home, repo, "checkpoint", "calm", "--orientation", "Nothing waits.", "--next", "hold", "--notes", "N.")
    running = start(home, repo)
    try:
        running.cookie = running.login()
        body = running.request("GET", "/").body
    finally:
        assert stop(running) == 0
    assert "2 open gates" in body
    assert body.index("Which cap?") < body.index("Which currency?")  # the older gate first
    for shown in ("payments lead", "before release", "How far to back off", "slow clients", "retry.py:1 says 10",
                  "Prior leaning: 30 s", "Keep it short.", "keep it short", "shop", "billing"):  # fmt: skip
        assert shown in body, shown
    assert body.index("<h2>gated (2)</h2>") < body.index("<h2>ok (1)</h2>") and "calm" in body


def test_the_inbox_filters_like_list(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    other = make_repo(tmp_path / "billing", {"b.py": "1\n"})
    cli(home, repo, "checkpoint", "-", stdin=json.dumps(gated_intent("retry", "Which cap?")))
    cli(home, other, "checkpoint", "-", stdin=json.dumps(gated_intent("invoices", "Which currency?", owner="finance")))
    cli(home, repo, "checkpoint", "calm", "--orientation", "Nothing waits.", "--next", "hold", "--notes", "N.")
    running = start(home, repo)
    try:
        running.cookie = running.login()
        shown = {query: running.request("GET", f"/?{query}") for query in (
            "project=billing", "owner=finance", "grep=currency", "status=ok", "project=nothing", "grep=%ff",
            "owner=" + "x" * 400)}  # fmt: skip
    finally:
        assert stop(running) == 0
    for query in ("project=billing", "owner=finance", "grep=currency"):
        body = shown[query].body
        assert "1 open gate<" in body and "Which currency?" in body and "Which cap?" not in body, query
        assert f'value="{query.split("=")[1]}"' in body  # the form shows the filter in force
    assert "0 open gates" in shown["status=ok"].body and "calm" in shown["status=ok"].body
    assert "0 open gates" in shown["project=nothing"].body
    assert shown["grep=%ff"].status == 400 and shown["owner=" + "x" * 400].status == 400


def test_an_answer_records_one_checkpoint_as_the_cli_would(answering: Server) -> None:
    page = answering.request("GET", "/")
    assert page.form()["base"] == revisions(answering)[-1]["revision_id"]
    done = answering.post(answer_fields(page))
    assert done.status == 200 and "Recorded as revision r2" in done.body, done.body[:500]
    chain = revisions(answering)
    assert len(chain) == 2 and chain[-1]["author"] == AUTHOR
    record = cli(answering.home, answering.repo, "show", "retry")["record"]
    [decision] = [e for e in record["entries"] if e["kind"] == "decision"]
    assert (decision["text"], decision["rationale"]) == ("Cap at 30 s.", "The SLA allows it.")
    [gate] = [e for e in record["entries"] if e["kind"] == "question"]
    assert gate["state"] == "resolved" and gate["settled"]["rationale"] == "The SLA allows it."
    assert record["status"] == "ok"
    note = (answering.repo / ".cheese" / "notes" / "retry.md").read_text(encoding="utf-8")
    assert "Cap at 30 s." in note and f"revision_id: {record['revision_id']}" in note
    assert "0 open gates" in answering.request("GET", "/").body
    # The same form sent twice (a double click, a reload) is the store's replay: the same revision, nothing new.
    again = answering.post(answer_fields(page))
    assert again.status == 200 and "r2 (a replay)" in again.body and len(revisions(answering)) == 2
    # Another answer from that old page names a base that is no longer the head: refused, nothing written.
    other = answering.post(answer_fields(page, answer="Cap at 60 s."))
    assert other.status == 409 and len(revisions(answering)) == 2


def test_a_stale_answer_shows_the_newer_head_and_can_be_answered_again(answering: Server) -> None:
    page = answering.request("GET", "/")
    head = revisions(answering)[-1]["revision_id"]
    cli(answering.home, answering.repo, "checkpoint", "retry", "--orientation", "Moved by an agent.", "--base", head)
    stale = answering.post(answer_fields(page))
    assert stale.status == 409 and "moved on" in stale.body and "Moved by an agent." in stale.body
    assert "What changed since the page you answered from" in stale.body and "r2" in stale.body
    assert len(revisions(answering)) == 2
    fresh = stale.form()
    assert fresh["base"] == revisions(answering)[-1]["revision_id"] != head
    done = answering.post({**fresh, "answer": "Cap at 30 s.", "reason": "The SLA allows it."})
    assert done.status == 200 and len(revisions(answering)) == 3


def test_a_refused_answer_is_shown_in_words_and_nothing_is_written(answering: Server) -> None:
    page = answering.request("GET", "/")
    secret = answering.post(answer_fields(page, answer=f"use {FAKE_TOKEN}"))
    assert secret.status == 422 and "Nothing was written" in secret.body
    assert FAKE_TOKEN not in secret.body
    empty = answering.post(answer_fields(page, reason=""))
    assert empty.status == 422 and "Nothing was written" in empty.body and "rationale" in empty.body
    assert len(revisions(answering)) == 1
    assert answering.post(answer_fields(page)).status == 200  # the same page answers once the answer is fine


def test_a_works_page_is_drawn_from_the_record(server: Server) -> None:
    note = server.repo / ".cheese" / "notes" / "retry.md"
    note.write_text(note.read_text(encoding="utf-8").replace("Retry policy.", "Edited by hand."), encoding="utf-8")
    work_id = cli(server.home, server.repo, "show", "retry")["work_id"]
    body = server.request("GET", f"/work/{work_id}").body
    assert "Retry policy." in body and "Edited by hand." not in body
    for shown in ("Which cap?", "Keep it short.", "r1", AUTHOR.replace("<", "&lt;").replace(">", "&gt;"),
                  'action="/answer"'):  # fmt: skip
        assert shown in body, shown


def test_an_idle_connection_does_not_stall_the_server(server: Server) -> None:
    with socket.create_connection((server.host, server.port), timeout=20):  # a browser's preconnect: no request
        started = time.monotonic()
        assert server.request("GET", "/").status == 200
        assert time.monotonic() - started < 5


def test_the_next_sessions_resume_packet_carries_the_answer(server: Server) -> None:
    assert server.post(answer_fields(server.request("GET", "/"))).status == 200
    payload = {"session_id": "next-session", "transcript_path": None, "cwd": str(server.repo),
               "hook_event_name": "SessionStart", "source": "startup"}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "wheypoint", "hook", "SessionStart", "--harness", "claude-code"],
                          input=json.dumps(payload), cwd=server.repo, env=_env(server.home), capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Cap at 30 s." in context and "The SLA allows it." in context
