"""`wheypoint serve`'s work pages, health page and live updates: a real server over stores built by the real CLI.

Like tests/test_serve.py: each store is made by `wheypoint` subprocesses in a scratch home (HOME, the store and
the harness settings all under the test's folder), the server is a real `serve --port 0` process, and every
request goes through the standard library's HTTP client. The live script is run by Node.js against the same
server, with a small stand-in for the browser's DOM.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import make_repo, node_program
from test_serve import Server, Tags, _env, cli, gated_intent, start, stop

HOSTILE = "<script>alert(1)</script>"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"retry.py": "10\n"})


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def serving(home: Path, repo: Path) -> Server:
    running = start(home, repo)
    running.cookie = running.login()
    return running


@pytest.fixture
def two_revisions(home: Path, repo: Path) -> dict[str, Any]:
    """retry: r1 a decision and a gate; r2 a new orientation, a second decision, the first one superseded."""
    first = cli(home, repo, "checkpoint", "retry", "--orientation", "Retry policy.", "--next", "hold", "--decision",
                "Cap at 30 s.", "--rationale", "Gateway.", "--question", "Full or equal jitter?", "--gates",
                "--rationale", "unclear")  # fmt: skip
    second = cli(home, repo, "checkpoint", "retry", "--base", first["revision_id"], "--orientation", "Backoff built.",
                 "--decision", "Cap at 20 s.", "--rationale", "Ops asked.", "--label", "cap20", "--supersede",
                 first["added"][0], "--by", "cap20", "--rationale", "Moved to 20 s.")  # fmt: skip
    return {"work_id": first["work_id"], "first": first, "second": second}


def page_of(server: Server, path: str) -> tuple[int, str]:
    page = server.request("GET", path)
    assert "Traceback" not in page.body, page.body[:500]
    return page.status, page.body


def live_meta(body: str) -> tuple[int, str]:
    """The store version and the address a live page says it was drawn from."""
    version = re.search(r'<meta name="wheypoint-version" content="(\d+)">', body)
    address = re.search(r'<meta name="wheypoint-page" content="([^"]*)">', body)
    assert version and address, body[:500]
    return int(version.group(1)), address.group(1).replace("&amp;", "&")


# A work's diff


def test_the_diff_page_shows_what_changed_between_two_revisions(home: Path, repo: Path,
                                                                two_revisions: dict[str, Any]) -> None:  # fmt: skip
    work = two_revisions["work_id"]
    said = cli(home, repo, "diff", work, "r1", "r2")["changes"]  # what the command line reports
    server = serving(home, repo)
    try:
        forward = page_of(server, f"/work/{work}/diff?from=r1&to=r2")
        backward = page_of(server, f"/work/{work}/diff?from=r2&to=r1")
        default = page_of(server, f"/work/{work}/diff")
        by_id = page_of(server, f"/work/{work}/diff?from={two_revisions['first']['revision_id']}&to=2")
        same = page_of(server, f"/work/{work}/diff?from=r2&to=r2")
        work_page = page_of(server, f"/work/{work}")
    finally:
        assert stop(server) == 0
    status, body = forward
    assert status == 200
    [added] = said["entries"]["added"]
    [settled] = said["entries"]["settled"]
    assert f'<tr class="added"><td>added</td><td>decision</td><td>{added["id"]}</td><td>Cap at 20 s.</td>' in body
    assert f"<td>settled</td><td>decision</td><td>{settled['id']}</td><td>Cap at 30 s.</td>" in body
    assert "active → superseded" in body and "Moved to 20 s." in body
    assert "<pre>Retry policy.</pre></td><td class=\"added\"><pre>Backoff built.</pre>" in body
    assert "From r1 to r2" in body
    assert '<option value="r1" selected>' in body and '<option value="r2" selected>' in body  # the form shows them
    # Backwards, the decision r2 added is one r1 does not have (diff's `removed`).
    assert backward[0] == 200 and '<tr class="removed"><td>removed</td><td>decision</td>' in backward[1]
    assert "<pre>Backoff built.</pre></td><td class=\"added\"><pre>Retry policy.</pre>" in backward[1]
    # Left out, `from` is the head's parent, as for `wheypoint diff <work>`; a revision id and a bare number work.
    assert default[0] == 200 and "From r1 to r2" in default[1] and "Cap at 20 s." in default[1]
    assert by_id[0] == 200 and "From r1 to r2" in by_id[1]
    assert same[0] == 200 and "Nothing changed between these two revisions." in same[1]
    # The work's page carries the form that asks for it.
    assert f'<form method="get" action="/work/{work}/diff" class="diff">' in work_page[1]


def test_bad_revisions_are_refused_in_words_never_a_traceback(home: Path, repo: Path,
                                                             two_revisions: dict[str, Any]) -> None:  # fmt: skip
    work = two_revisions["work_id"]
    other = cli(home, repo, "checkpoint", "other", "--orientation", "Other.", "--next", "hold", "--notes", "N.")
    server = serving(home, repo)
    try:
        cases = {
            f"/work/{work}/diff?from=r9": (404, "r9 is not a revision of"),
            f"/work/{work}/diff?to=r3": (404, "is not a revision of"),
            f"/work/{work}/diff?from={other['revision_id']}": (404, "is not a revision of"),  # another work's
            f"/work/{work}/diff?from=x": (400, "from takes a revision"),
            f"/work/{work}/diff?to=%3Cscript%3E": (400, "to takes a revision"),
            f"/work/{work}/diff?from=r1&from=r2": (400, "comes once"),
            f"/work/{work}/diff?from=%ff": (400, "not UTF-8"),
            f"/work/{work}/diff?from=r1&what=x": (400, "not what"),
            f"/work/{work}/diff?from=r{'9' * 12}": (400, "from takes a revision"),
            "/work/nothing.0badc0de/diff?from=r1": (404, "nothing.0badc0de"),
            f"/work/{work}/diff/../../etc/passwd": (404, "no such page"),
        }
        for path, (status, words) in cases.items():
            got, body = page_of(server, path)
            assert (got, words in body) == (status, True), (path, got, body[-400:])
            assert "<script>" not in body
    finally:
        assert stop(server) == 0


# Links and backlinks


def test_links_and_backlinks_lead_to_each_other_both_ways(home: Path, repo: Path) -> None:
    retry = cli(home, repo, "checkpoint", "retry", "--orientation", "Retry.", "--next", "hold", "--notes", "N.")
    payments = cli(home, repo, "checkpoint", "payments", "--orientation", "Payments.", "--next", "hold",
                   "--notes", "N.")  # fmt: skip
    cli(home, repo, "link", "retry", "payments", "--kind", "blocked_by", "--rationale", "needs v2",
        "--base", retry["revision_id"])  # fmt: skip
    linked = cli(home, repo, "list", "--linked-to", "payments")  # what the command line finds
    assert [w["slug"] for w in linked["works"]] == ["retry"]
    server = serving(home, repo)
    try:
        _, retry_page = page_of(server, f"/work/{retry['work_id']}")
        _, payments_page = page_of(server, f"/work/{payments['work_id']}")
    finally:
        assert stop(server) == 0
    links = re.search(r'<h2>Links</h2><ul class="links">(.*?)</ul>', retry_page)
    assert links, retry_page
    assert f'<li>blocked_by <a href="/work/{payments["work_id"]}">payments</a>' in links.group(1)
    assert "needs v2" in links.group(1)
    assert "No work links to this one." in retry_page
    back = re.search(r'<h2>Backlinks</h2><ul class="backlinks">(.*?)</ul>', payments_page)
    assert back, payments_page
    shown = f'<li><a href="/work/{retry["work_id"]}">retry</a> <span class="meta">(shop)</span> blocked_by this work'
    assert shown in back.group(1)
    assert "This work links to nothing." in payments_page


# Lineage


SVG_TAGS = {"svg", "title", "defs", "marker", "path", "g", "text", "a", "rect"}


def svg_of(body: str) -> str:
    found = re.findall(r"<svg .*?</svg>", body, flags=re.S)
    assert len(found) == 1, body[:2000]
    return str(found[0])


def test_a_fork_and_a_join_are_drawn_in_the_svg_with_every_text_escaped(home: Path, repo: Path) -> None:
    # alpha's gate (a hostile question) is forked to beta; beta and gamma are joined into both-of-them.
    alpha = cli(home, repo, "checkpoint", "-", stdin=json.dumps(gated_intent("alpha", HOSTILE)))
    question = next(e for e in alpha["added"] if e.startswith("q-"))
    forked = cli(home, repo, "fork", "alpha", "beta", "--orientation", "Beta.", "--move", question)
    gamma = cli(home, repo, "checkpoint", "gamma", "--orientation", "Gamma.", "--next", "hold", "--decision", "G.",
                "--rationale", "g")  # fmt: skip
    joined = cli(home, repo, "join", "beta", "gamma", "both-of-them", "--orientation", "Both.")["joined"]
    lone = cli(home, repo, "checkpoint", "lone", "--orientation", "Alone.", "--next", "hold", "--notes", "N.")
    ids = {"alpha": alpha["work_id"], "beta": forked["child"]["work_id"], "gamma": gamma["work_id"],
           "both-of-them": joined["work_id"]}  # fmt: skip
    assert joined["status"] == f"gated: {HOSTILE}"  # the hostile text reaches the joined work's status
    server = serving(home, repo)
    try:
        bodies = {slug: page_of(server, f"/work/{work_id}")[1] for slug, work_id in ids.items()}
        lone_page = page_of(server, f"/work/{lone['work_id']}")[1]
    finally:
        assert stop(server) == 0
    svg = svg_of(bodies["both-of-them"])
    assert svg.count('<g class="node') == 4 and svg.count('<path class="edge"') == 3
    assert svg.count("<title>forked_to</title>") == 1 and svg.count("<title>joined_into</title>") == 2
    for slug, work_id in ids.items():  # every node links to its work's page
        assert f'<a href="/work/{work_id}"><g class="node' in svg, slug
    assert f'<a href="/work/{ids["both-of-them"]}"><g class="node gated current">' in svg
    assert "gated: &lt;script&gt;alert(1)&lt;/script&gt;" in svg and HOSTILE not in svg
    parser = Tags()
    parser.feed(svg)
    for tag, attrs in parser.tags:
        assert tag in SVG_TAGS, tag
        assert not [name for name, _ in attrs if name.startswith("on") or name in ("style", "xlink:href")], attrs
        assert all(v.startswith("/work/") for name, v in attrs if name == "href" and v), attrs
    # From the parent the same picture is found: its fork and, through beta, the join.
    parent = svg_of(bodies["alpha"])
    assert parent.count('<g class="node') == 4 and parent.count('<path class="edge"') == 3
    assert f'<a href="/work/{ids["alpha"]}"><g class="node current">' in parent
    # A work with no fork, split or join has no picture.
    assert "<svg" not in lone_page and "No fork, split or join" in lone_page


# Health


def test_health_lists_each_harness_with_its_hooks_trust_last_call_and_the_notes_to_look_at(home: Path,
                                                                                          repo: Path) -> None:
    environ = _env(home)
    user = Path(environ["HOME"])
    for harness in ("claude-code", "codex"):
        installed = cli(home, repo, "hooks", "install", "--harness", harness)
        assert Path(installed["path"]).is_relative_to(user)  # the scratch home, never the real one
    cli(home, repo, "checkpoint", "retry", "--orientation", "Retry.", "--next", "hold", "--notes", "N.")
    cli(home, repo, "checkpoint", "calm", "--orientation", "Calm.", "--next", "hold", "--notes", "N.")
    payload = {"session_id": "s1", "transcript_path": None, "cwd": str(repo), "hook_event_name": "SessionStart",
               "source": "startup"}  # fmt: skip
    fired = subprocess.run([sys.executable, "-m", "wheypoint", "hook", "SessionStart", "--harness", "claude-code"],
                           input=json.dumps(payload), cwd=repo, env=environ, capture_output=True, text=True,
                           timeout=60, check=False)  # fmt: skip
    assert fired.returncode == 0, fired.stderr
    note = repo / ".cheese" / "notes" / "retry.md"
    note.write_text(note.read_text(encoding="utf-8").replace("Retry.", "Edited by hand."), encoding="utf-8")
    doctor = cli_doctor(home, repo)
    server = serving(home, repo)
    try:
        status, body = page_of(server, "/health")
        _, inbox = page_of(server, "/")
    finally:
        assert stop(server) == 0
    assert status == 200 and '<a href="/health">Health</a>' in inbox
    assert f"Health: {len(doctor['problems'])} problem" in body
    rows = re.findall(r'<tr class="hook"><td>([a-z-]+)</td><td>(user|project)</td><td><code>([^<]*)</code></td>'
                      r"<td[^>]*>(.*?)</tr>", body)  # fmt: skip
    assert {harness for harness, *_ in rows} == {"claude-code", "codex", "gemini", "opencode"}
    claude = [r for r in rows if r[:2] == ("claude-code", "user")]
    assert {r[3].split("<")[0] for r in claude} == {"PreCompact", "SessionStart", "Stop", "UserPromptSubmit"}
    assert all("current</td><td>yes (no trust step)" in r[3] for r in claude)
    assert all(r[2] == str(user / ".claude" / "settings.json") for r in claude)
    codex = [r for r in rows if r[:2] == ("codex", "user")]
    assert len(codex) == 4 and all('<span class="bad">untrusted</span>' in r[3] for r in codex)
    gemini = [r for r in rows if r[:2] == ("gemini", "user")]
    assert len(gemini) == 1 and "no wheypoint hooks" in gemini[0][3]
    last = doctor["harnesses"]["claude-code"]["last_fired"]["SessionStart"]["last"]["at"]
    assert f"<li>SessionStart: last fired {last}, 1 call(s)" in body
    assert "codex: no hook call in the log." in body
    assert "<code>codex-hook-untrusted</code>" in body
    assert "1 current, 0 stale, 1 edited by hand" in body
    assert f"<code>note-hand-edited</code> {note}" in body


def cli_doctor(home: Path, repo: Path) -> dict[str, Any]:
    """doctor's own reply (it exits 1 when it finds a problem, as here)."""
    done = subprocess.run([sys.executable, "-m", "wheypoint", "doctor", "--format", "json"], cwd=repo, env=_env(home),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return dict(json.loads(done.stdout))


# Updates without a reload


def test_changes_reports_a_checkpoint_made_from_the_cli(home: Path, repo: Path,
                                                       two_revisions: dict[str, Any]) -> None:  # fmt: skip
    work = two_revisions["work_id"]
    server = serving(home, repo)
    try:
        version, address = live_meta(page_of(server, f"/work/{work}")[1])
        assert address == f"/work/{work}"
        still = server.request("GET", f"/changes?since={version}")
        cli(home, repo, "checkpoint", "retry", "--base", two_revisions["second"]["revision_id"], "--notes", "More.")
        moved = server.request("GET", f"/changes?since={version}")
        now = server.request("GET", "/changes")
        bad = [server.request("GET", f"/changes?since={v}").status for v in ("x", "-1", "1e3", "9" * 30)]
        other = server.request("GET", "/changes?since=1&what=2").status
        drawn_again = live_meta(page_of(server, f"/work/{work}")[1])[0]
    finally:
        assert stop(server) == 0
    assert version == 2  # two revisions in the store
    assert still.status == 200 and still.headers["content-type"] == "application/json"
    assert json.loads(still.body) == {"version": 2, "changed": False}
    assert json.loads(moved.body) == {"version": 3, "changed": True}
    assert json.loads(now.body) == {"version": 3}
    assert bad == [400] * 4 and other == 400
    assert drawn_again == 3


def test_every_new_route_is_refused_without_the_session(home: Path, repo: Path,
                                                       two_revisions: dict[str, Any]) -> None:  # fmt: skip
    work = two_revisions["work_id"]
    server = serving(home, repo)
    paths = [f"/work/{work}/diff?from=r1&to=r2", f"/work/{work}/diff", "/health", "/changes?since=0", "/changes",
             "/live.js"]  # fmt: skip
    try:
        for path in paths:
            for cookie in ("", "forged"):
                page = server.request("GET", path, cookie=cookie)
                assert page.status == 403, (path, cookie)
                assert "script-src 'none'" in page.headers["content-security-policy"]
                assert "version" not in page.body and "function" not in page.body
            assert server.request("GET", path, headers={"Host": "evil.example"}).status == 403
            assert server.request("GET", path).status == 200, path  # with the session: served
    finally:
        assert stop(server) == 0


def test_a_live_page_may_run_its_own_script_and_nothing_else(home: Path, repo: Path,
                                                            two_revisions: dict[str, Any]) -> None:  # fmt: skip
    work = two_revisions["work_id"]
    server = serving(home, repo)
    try:
        live = {path: server.request("GET", path) for path in ("/", f"/work/{work}", f"/work/{work}/diff", "/health")}
        script = server.request("GET", "/live.js")
        others = [server.request("GET", p) for p in ("/style.css", "/changes", "/nope", f"/work/{work}/diff?from=x")]
    finally:
        assert stop(server) == 0
    for path, page in live.items():
        csp = page.headers["content-security-policy"]
        assert page.status == 200 and f"script-src {server.origin}/live.js;" in csp, path
        assert "'unsafe-inline'" not in csp and "script-src 'self'" not in csp
        assert page.body.count("<script") == 1 and '<script src="/live.js" defer></script>' in page.body, path
    assert script.status == 200 and script.headers["content-type"].startswith("text/javascript")
    for page in (script, *others):
        assert "script-src 'none'" in page.headers["content-security-policy"]


# The script itself, run by Node.js against the real server, with a stand-in for the page's DOM.

NODE_HARNESS = r"""
const [origin, cookie, version, address, edited] = process.argv.slice(2);
const events = [];
function element(tag, attrs) {
  return {tagName: tag, attrs: attrs || {}, children: [], type: (attrs || {}).type || "", value: "",
          defaultValue: "", className: "",
          getAttribute(name) { return this.attrs[name]; }, setAttribute(name, v) { this.attrs[name] = v; },
          appendChild(c) { this.children.push(c); return c; }, addEventListener(n, f) { this.click = f; },
          insertBefore(c) { this.children.push(c); events.push(["notice", text(c)]); return c; }};
}
function text(node) { return node.text !== undefined ? node.text : node.children.map(text).join(""); }
const metas = {'meta[name="wheypoint-version"]': element("META", {content: version}),
               'meta[name="wheypoint-page"]': element("META", {content: address})};
const answer = element("TEXTAREA");
if (edited === "typed") { answer.value = "half an answer"; }
const body = element("BODY");
const nav = element("NAV");
nav.parentNode = body;
global.document = {
  activeElement: body, body: body,
  querySelector(sel) { return sel === "nav" ? nav : (metas[sel] || null); },
  querySelectorAll(sel) { return sel === "select" ? [] : [answer]; },
  createElement(tag) { return element(tag.toUpperCase()); },
  createTextNode(t) { return {text: t}; },
};
let polls = 0;
global.window = {
  fetch: true,
  location: {assign(to) { events.push(["assign", to]); finish(); }},
  setTimeout(f) { if (polls++ < 2) { setTimeout(f, 0); } else { finish(); } },
};
const realFetch = globalThis.fetch;  // Node's own: the request really reaches the server, with the session
global.fetch = (path, options) => {
  events.push(["fetch", path, options.credentials]);
  return realFetch(origin + path, {headers: {Cookie: "wheypoint_session=" + cookie}});
};
let done = false;
function finish() { if (!done) { done = true; console.log(JSON.stringify(events)); } }
"""


def run_live_js(server: Server, version: int, address: str, edited: str, tmp_path: Path) -> list[list[str]]:
    from wheypoint.web.live import LIVE_JS

    program = tmp_path / "live_harness.js"
    program.write_text(NODE_HARNESS + LIVE_JS, encoding="utf-8")
    done = subprocess.run([node_program(), str(program), server.origin, server.cookie, str(version), address, edited],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_live_script_reloads_a_changed_page_and_only_flags_one_being_typed_in(home: Path, repo: Path,
                                                                                 two_revisions: dict[str, Any],
                                                                                 tmp_path: Path) -> None:  # fmt: skip
    work = two_revisions["work_id"]
    server = serving(home, repo)
    try:
        version, address = live_meta(page_of(server, f"/work/{work}")[1])
        calm = run_live_js(server, version, address, "clean", tmp_path)
        cli(home, repo, "checkpoint", "retry", "--base", two_revisions["second"]["revision_id"], "--notes", "More.")
        reloaded = run_live_js(server, version, address, "clean", tmp_path)
        typed = run_live_js(server, version, address, "typed", tmp_path)
        hostile = run_live_js(server, version, "//evil.example/x", "clean", tmp_path)
    finally:
        assert stop(server) == 0
    assert [e[0] for e in calm] == ["fetch", "fetch"]  # nothing changed: it only asks
    assert calm[0][1:] == [f"/changes?since={version}", "same-origin"]
    assert reloaded == [["fetch", f"/changes?since={version}", "same-origin"], ["assign", f"/work/{work}"]]
    assert ["notice", "The store changed since this page was drawn. Reload"] in typed
    assert not [e for e in typed if e[0] == "assign"]  # what was typed is never thrown away
    assert hostile[-1] == ["assign", "/"]  # an address that is not this server's path is never followed
