"""`wheypoint serve` in a real browser: headless Chromium, driven by Playwright, against a real server and store.

The browser is Debian's `chromium-headless-shell` (Playwright's own download, `playwright install`, is not needed):
`$WHEYPOINT_TEST_BROWSER` names the binary (.ci/run sets it), else the first of BROWSERS that exists, else Playwright's
own under `$PLAYWRIGHT_BROWSERS_PATH` (the suite's own XDG cache hides the user's). Without Playwright or a browser
these tests skip, and fail under CI.
`WHEYPOINT_TEST_SCREENSHOTS=1` writes the README's screenshots, docs/screenshots/*.png, from the same run.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conftest import ROOT, make_repo, missing
from test_serve import AUTHOR, FAKE_TOKEN, Server, cli, gated_intent, revisions, start, stop

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Locator, Page, Response, ViewportSize

pytestmark = pytest.mark.browser

# Where Debian puts its browsers' binaries (the /usr/bin names are shell wrappers that do not exec).
BROWSERS = ("/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium")
VIEWPORT: ViewportSize = {"width": 1100, "height": 800}  # the screenshots' size, whatever the machine's screen
SCREENSHOTS = ROOT / "docs" / "screenshots"
ANSWER, REASON = "Cap at 30 s.", "The SLA allows it."
FAILED_LOAD = "Failed to load resource: the server responded with a status of "


def browser_binary(bundled: str) -> str:
    """The Chromium to drive: `$WHEYPOINT_TEST_BROWSER`, Debian's, or Playwright's own download (`bundled`)."""
    given = os.environ.get("WHEYPOINT_TEST_BROWSER")
    if given:
        if not os.access(given, os.X_OK):
            missing(f"WHEYPOINT_TEST_BROWSER={given} is not an executable file")
        return given
    for path in (*BROWSERS, bundled):
        if path and os.access(path, os.X_OK):
            return path
    return missing("no headless Chromium here: apt-get install chromium-headless-shell (Debian), or set "
                   "WHEYPOINT_TEST_BROWSER to a Chromium binary")  # fmt: skip


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One browser for the module (each test has its own context: its own cookies, its own page)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (pip install -e '.[dev]'): the browser tests cannot run")
    with sync_playwright() as playwright:
        binary = browser_binary(playwright.chromium.executable_path)
        # Its own HOME: the browser reads and writes nothing of the developer's.
        home = str(tmp_path_factory.mktemp("browser-home"))
        launched = playwright.chromium.launch(executable_path=binary, env={**os.environ, "HOME": home})
        yield launched
        launched.close()


@dataclass
class Tab:
    """A page in a fresh browser context, with every URL it requested and every script or console error."""

    page: Page
    server: Server
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def submit(self, button: Locator | None = None, key: str | None = None) -> Response:
        """Send a form (clicking `button`, or pressing `key` on the focused one) and wait for the page it returns."""
        with self.page.expect_response(lambda r: r.request.method == "POST") as info:
            if key:
                self.page.keyboard.press(key)
            else:
                assert button is not None
                button.click()
        self.page.wait_for_load_state()
        return info.value

    def focused(self) -> str:
        """The focused element, as `tag name=... id=...`."""
        return str(self.page.evaluate("(e => `${e.tagName.toLowerCase()} name=${e.name || ''} id=${e.id || ''}`)"
                                      "(document.activeElement)"))  # fmt: skip


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    """A real server over a real SQLite store in tmp_path, holding one gated work, `retry`; not logged in."""
    home, repo = tmp_path / "home", make_repo(tmp_path / "shop", {"retry.py": "10\n"})
    cli(home, repo, "checkpoint", "-", stdin=json.dumps(gated_intent("retry")))
    running = start(home, repo)
    yield running
    assert stop(running) == 0


@pytest.fixture
def tab(browser: Browser, served: Server) -> Iterator[Tab]:
    context = browser.new_context(viewport=VIEWPORT, locale="en-US", timezone_id="UTC", color_scheme="light")
    opened = Tab(context.new_page(), served)
    opened.page.on("request", lambda request: opened.requests.append(request.url))
    opened.page.on("pageerror", lambda error: opened.errors.append(f"script error: {error}"))

    def console(message: ConsoleMessage) -> None:
        # A page with a 4xx status is logged as a resource that failed to load: each test checks those statuses.
        if message.type in ("error", "warning") and not message.text.startswith(FAILED_LOAD):
            opened.errors.append(f"console {message.type}: {message.text}")

    opened.page.on("console", console)
    opened.page.set_default_timeout(10_000)
    yield opened
    context.close()
    # Every test: the page asked nothing of another host, and no script (/live.js, the only one) ran into an error.
    assert opened.requests and all(url.startswith(served.origin + "/") for url in opened.requests), opened.requests
    assert opened.errors == []


def note_of(repo: Path, slug: str = "retry") -> str:
    """The note file on disk, where the work's checkpoints render it."""
    return (repo / ".cheese" / "notes" / f"{slug}.md").read_text(encoding="utf-8")


def head(server: Server, slug: str = "retry") -> dict[str, Any]:
    """The work's head record, as `show --format json` prints it."""
    return dict(cli(server.home, server.repo, "show", slug, "--format", "json")["record"])


def test_without_the_token_every_page_is_403_and_the_token_becomes_an_httponly_cookie(tab: Tab) -> None:
    page, server = tab.page, tab.server
    work_id = cli(server.home, server.repo, "show", "retry")["work_id"]
    for path in ("/", f"/work/{work_id}", "/style.css"):
        refused = page.goto(server.origin + path)
        assert refused is not None and refused.status == 403, path
    assert "open the URL wheypoint serve printed" in page.inner_text("body")
    # A refused page's style sheet is refused too, and the browser says so: expected here, and only here.
    assert tab.errors and all("style.css" in e and "MIME type" in e for e in tab.errors), tab.errors
    tab.errors.clear()
    landed = page.goto(server.url)
    assert landed is not None and landed.status == 200
    assert page.url == server.origin + "/"  # the token left the address bar, so no bookmark or history keeps it
    [cookie] = page.context.cookies()
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""  # a script could not read it (and none runs)
    assert page.locator("p.question").get_by_text("Which cap?").is_visible()
    assert any(url == server.origin + "/style.css" for url in tab.requests)  # the page is drawn with its style


def test_a_person_answers_a_gate_and_sees_the_new_revision_and_the_note(tab: Tab) -> None:
    page, server = tab.page, tab.server
    page.goto(server.url)
    assert page.locator("h1").inner_text() == "Inbox: 1 open gate"
    assert page.locator("p.question").inner_text() == "Which cap?"
    assert page.get_by_text("Prior leaning: 30 s").is_visible() and page.get_by_text("Keep it short.").is_visible()
    page.get_by_label("Answer", exact=True).fill(ANSWER)
    page.get_by_label("Reason", exact=True).fill(REASON)
    done = tab.submit(page.get_by_role("button", name="Record the answer"))
    assert done.status == 200
    assert page.get_by_role("status").inner_text() == "Recorded as revision r2"
    chain = revisions(server)
    assert len(chain) == 2 and chain[-1]["author"] == AUTHOR
    # The inbox is empty now; the work's own page, reached by its link, shows the new revision and the answer.
    page.get_by_role("link", name="Inbox").click()
    assert page.locator("h1").inner_text() == "Inbox: 0 open gates"
    page.get_by_role("link", name="retry").click()
    assert page.url == f"{server.origin}/work/{head(server)['work_id']}"
    revisions_table = page.locator("table").last
    assert revisions_table.locator("tbody tr").count() == 2
    assert "r2" in revisions_table.locator("tbody tr").last.inner_text()
    entries = page.locator("table").first.inner_text()
    assert ANSWER in entries and REASON in entries and "resolved" in entries
    assert "r2 · ok" in page.locator("p.meta").first.inner_text()
    note = note_of(server.repo)  # rendered again on disk, from the new head
    assert ANSWER in note and f"revision_id: {chain[-1]['revision_id']}" in note


def test_a_stale_answer_shows_the_newer_head_and_a_fresh_form_and_overwrites_nothing(tab: Tab) -> None:
    page, server = tab.page, tab.server
    page.goto(server.url)
    drawn_from = str(revisions(server)[-1]["revision_id"])
    assert page.locator("input[name=base]").get_attribute("value") == drawn_from
    # An agent writes on the work after the page was drawn, before the person sends the answer.
    cli(server.home, server.repo, "checkpoint", "retry", "--orientation", "Moved by an agent.", "--base", drawn_from)
    agents = head(server)
    note_before = note_of(server.repo)
    page.get_by_label("Answer", exact=True).fill(ANSWER)
    page.get_by_label("Reason", exact=True).fill(REASON)
    stale = tab.submit(page.get_by_role("button", name="Record the answer"))
    assert stale.status == 409
    notice = page.get_by_role("status").inner_text()
    assert "moved on" in notice and "nothing was written" in notice
    assert page.get_by_text("Moved by an agent.").first.is_visible()
    assert page.get_by_role("heading", name="What changed since the page you answered from").is_visible()
    assert head(server) == agents and len(revisions(server)) == 2 and note_of(server.repo) == note_before
    assert ANSWER not in note_before
    # The fresh form is built on the agent's head; the same answer sent from it is recorded on top.
    fresh_base = page.locator("input[name=base]").get_attribute("value")
    assert fresh_base == agents["revision_id"] != drawn_from
    assert page.get_by_label("Answer", exact=True).input_value() == ""
    page.get_by_label("Answer", exact=True).fill(ANSWER)
    page.get_by_label("Reason", exact=True).fill(REASON)
    assert tab.submit(page.get_by_role("button", name="Record the answer")).status == 200
    assert page.get_by_role("status").inner_text() == "Recorded as revision r3"
    chain = revisions(server)
    assert [r["revision_number"] for r in chain] == [1, 2, 3] and chain[1]["revision_id"] == agents["revision_id"]
    assert "Moved by an agent." in note_of(server.repo) and ANSWER in note_of(server.repo)


def test_a_refused_answer_says_why_in_words_echoes_no_credential_and_writes_nothing(tab: Tab) -> None:
    page, server = tab.page, tab.server
    page.goto(server.url)
    before, note_before = head(server), note_of(server.repo)
    page.get_by_label("Answer", exact=True).fill(f"use {FAKE_TOKEN} for the gateway")
    page.get_by_label("Reason", exact=True).fill(REASON)
    refused = tab.submit(page.get_by_role("button", name="Record the answer"))
    assert refused.status == 422
    notice = page.get_by_role("status").inner_text()
    assert notice.startswith("Nothing was written: ") and "credential" in notice.lower(), notice
    assert FAKE_TOKEN not in page.content() and FAKE_TOKEN[:12] not in page.content()
    assert all(box.input_value() == "" for box in page.locator("textarea").all())  # not even in a form field
    assert head(server) == before and len(revisions(server)) == 1 and note_of(server.repo) == note_before
    # The form is offered again: an answer without the credential is recorded.
    page.get_by_label("Answer", exact=True).fill(ANSWER)
    page.get_by_label("Reason", exact=True).fill(REASON)
    assert tab.submit(page.get_by_role("button", name="Record the answer")).status == 200
    assert len(revisions(server)) == 2


def tab_to(tab: Tab, wanted: str, presses: int = 20) -> int:
    """Press Tab until the element described `wanted` (see Tab.focused) has the focus; how many presses it took."""
    for count in range(1, presses + 1):
        tab.page.keyboard.press("Tab")
        if tab.focused().startswith(wanted):
            return count
    raise AssertionError(f"{wanted} never took the focus in {presses} presses of Tab; last: {tab.focused()}")


def test_the_keyboard_alone_answers_gates(tab: Tab) -> None:
    page, server = tab.page, tab.server
    other = make_repo(server.repo.parent / "billing", {"b.py": "1\n"})
    cli(server.home, other, "checkpoint", "-", stdin=json.dumps(gated_intent("invoices", "Which currency?")))
    page.goto(server.url)
    assert page.locator("h1").inner_text() == "Inbox: 2 open gates"
    for submit_key, answer in (("Enter", ANSWER), ("Space", "Euros.")):
        assert tab_to(tab, "textarea name=answer") <= 12  # the nav, the filters, the work's link, then the box
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline == "solid"  # where the focus is can be seen
        page.keyboard.type(answer)
        page.keyboard.press("Tab")
        assert tab.focused().startswith("textarea name=reason")
        page.keyboard.type(REASON)
        page.keyboard.press("Tab")
        assert tab.focused().startswith("button")
        assert tab.submit(key=submit_key).status == 200
        assert page.get_by_role("status").inner_text() == "Recorded as revision r2"
        tab.page.keyboard.press("Tab")  # back to the inbox by its link, the first stop on every page
        assert tab.focused().startswith("a")
        with page.expect_navigation():
            page.keyboard.press("Enter")
    assert page.locator("h1").inner_text() == "Inbox: 0 open gates"
    # Each gate got one of the two answers (the two works were written in the same second: either came first).
    records = {"retry": head(server), "invoices": cli(server.home, other, "show", "invoices")["record"]}
    decided = {slug: [e["text"] for e in r["entries"] if e["kind"] == "decision"] for slug, r in records.items()}
    assert sorted(decided["retry"] + decided["invoices"]) == sorted([ANSWER, "Euros."]), decided
    assert decided["retry"][0] in note_of(server.repo) and decided["invoices"][0] in note_of(other, "invoices")


LIVE_WAIT = 10_000  # ms: /live.js asks every 4 s (web/live.py), so a change shows within one or two polls
CHANGED = "The store changed since this page was drawn."


def drawn(tab: Tab, path: str) -> int:
    """How many times the page at this server's `path` was requested (each load or reload is one)."""
    return tab.requests.count(tab.server.origin + path)


def test_a_work_page_shows_an_agents_new_revision_by_itself(tab: Tab) -> None:
    from playwright.sync_api import expect

    page, server = tab.page, tab.server
    work_id, drawn_from = head(server)["work_id"], str(revisions(server)[-1]["revision_id"])
    page.goto(server.url)
    page.goto(f"{server.origin}/work/{work_id}")
    meta = page.locator("p.meta").first
    assert "r1 · gated" in meta.inner_text() and drawn(tab, f"/work/{work_id}") == 1
    # An agent checkpoints on the work; nobody touches the page.
    cli(server.home, server.repo, "checkpoint", "retry", "--orientation", "Moved by an agent.", "--base", drawn_from)
    expect(meta).to_contain_text("r2 · gated", timeout=LIVE_WAIT)
    assert page.get_by_text("Moved by an agent.").first.is_visible()
    assert page.locator("table").last.locator("tbody tr").count() == 2
    assert drawn(tab, f"/work/{work_id}") == 2  # loaded again, once, at its own address
    assert any(url.startswith(f"{server.origin}/changes?since=") for url in tab.requests)
    assert page.get_by_text(CHANGED).count() == 0


def test_typed_text_is_kept_and_the_page_offers_a_reload_instead(tab: Tab) -> None:
    from playwright.sync_api import expect

    page, server = tab.page, tab.server
    work_id, drawn_from = head(server)["work_id"], str(revisions(server)[-1]["revision_id"])
    page.goto(server.url)
    page.goto(f"{server.origin}/work/{work_id}")
    answer = page.get_by_label("Answer", exact=True)
    answer.click()
    page.keyboard.type(ANSWER)
    page.locator("h1").click()  # the box loses the focus: what it holds, not the focus, keeps the page
    assert tab.focused().startswith("body")
    cli(server.home, server.repo, "checkpoint", "retry", "--orientation", "Moved by an agent.", "--base", drawn_from)
    notice = page.get_by_role("status")
    expect(notice).to_have_text(f"{CHANGED} Reload", timeout=LIVE_WAIT)
    assert answer.input_value() == ANSWER and drawn(tab, f"/work/{work_id}") == 1
    assert "r1 · gated" in page.locator("p.meta").first.inner_text()
    # The next polls flag nothing twice and still do not reload.
    page.wait_for_timeout(4_500)
    assert notice.count() == 1 and answer.input_value() == ANSWER and drawn(tab, f"/work/{work_id}") == 1
    # The person chooses to reload: the page is drawn again from the new head (and its form from the new base).
    with page.expect_navigation():
        notice.get_by_role("button", name="Reload").click()
    assert page.url == f"{server.origin}/work/{work_id}"
    assert "r2 · gated" in page.locator("p.meta").first.inner_text() and page.get_by_text(CHANGED).count() == 0
    assert page.locator("input[name=base]").get_attribute("value") == head(server)["revision_id"] != drawn_from
    assert page.get_by_label("Answer", exact=True).input_value() == ""


def test_a_diff_from_before_the_first_revision_reloads_by_itself_too(tab: Tab) -> None:
    """Its `from` choice has no option drawn as selected (there is no revision before r1), so the browser selects
    the first: that is what the page drew, not a person's choice, and the page still reloads."""
    from playwright.sync_api import expect

    page, server = tab.page, tab.server
    work_id, drawn_from = head(server)["work_id"], str(revisions(server)[-1]["revision_id"])
    page.goto(server.url)
    page.goto(f"{server.origin}/work/{work_id}/diff")
    meta = page.locator("p.meta").first
    assert meta.inner_text() == "From nothing (before its first revision) to r1"
    cli(server.home, server.repo, "checkpoint", "retry", "--orientation", "Moved by an agent.", "--base", drawn_from)
    expect(meta).to_have_text("From r1 to r2", timeout=LIVE_WAIT)  # left out, `from` is the new head's parent
    assert page.get_by_text(CHANGED).count() == 0 and drawn(tab, f"/work/{work_id}/diff") == 2
    # A choice the person did change still keeps the page: it says the store changed instead.
    page.get_by_label("From").select_option("r2")
    page.locator("h1").click()
    cli(server.home, server.repo, "checkpoint", "retry", "--notes", "More.", "--base", head(server)["revision_id"])
    expect(page.get_by_role("status")).to_have_text(f"{CHANGED} Reload", timeout=LIVE_WAIT)
    assert page.get_by_label("From").input_value() == "r2" and drawn(tab, f"/work/{work_id}/diff") == 2


def test_the_diff_form_shows_the_changed_entries_and_a_bad_revision_is_refused_in_words(tab: Tab) -> None:
    page, server = tab.page, tab.server
    work_id = head(server)["work_id"]
    for orientation, decision, why in (("Backoff built.", "Cap at 20 s.", "Ops asked."),
                                       ("Jitter added.", "Full jitter.", "Clients retry in step.")):  # fmt: skip
        cli(server.home, server.repo, "checkpoint", "retry", "--base", head(server)["revision_id"],
            "--orientation", orientation, "--decision", decision, "--rationale", why)  # fmt: skip
    page.goto(server.url)
    page.goto(f"{server.origin}/work/{work_id}")
    assert page.get_by_label("From").input_value() == "r2" and page.get_by_label("To").input_value() == "r3"
    # The keyboard alone: to the first choice, one revision up (r1), past the second, the button, Enter.
    assert tab_to(tab, "select name=from", 40)
    page.keyboard.press("ArrowUp")
    assert page.get_by_label("From").input_value() == "r1"
    page.keyboard.press("Tab")
    assert tab.focused().startswith("select name=to")
    page.keyboard.press("Tab")
    assert tab.focused().startswith("button")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == f"{server.origin}/work/{work_id}/diff?from=r1&to=r3"
    assert page.locator("h1").inner_text() == "retry: what changed"
    assert page.locator("p.meta").first.inner_text() == "From r1 to r3"
    added = page.locator("tr.added")
    assert sorted(row.locator("td").nth(3).inner_text() for row in added.all()) == ["Cap at 20 s.", "Full jitter."]
    fields = page.locator("table").nth(1)
    assert "Retry policy." in fields.inner_text() and "Jitter added." in fields.inner_text()
    # With clicks, on the diff page's own form: backwards, r3 to r1, the two decisions are removed.
    page.get_by_label("From").select_option("r3")
    page.get_by_label("To").select_option("r1")
    with page.expect_navigation():
        page.get_by_role("button", name="Show the change").click()
    assert page.locator("p.meta").first.inner_text() == "From r3 to r1"
    assert page.locator("tr.removed").count() == 2 and page.locator("tr.added").count() == 0
    page.get_by_role("link", name="retry").click()  # the heading leads back to the work
    assert page.url == f"{server.origin}/work/{work_id}"
    # A revision the work does not have, or no revision at all: a 4xx page that says so, no traceback.
    for query, status, title, words in (("from=r9", 404, "Not found", "r9 is not a revision of"),
                                        ("to=x", 400, "Bad revision", "to takes a revision")):  # fmt: skip
        refused = page.goto(f"{server.origin}/work/{work_id}/diff?{query}")
        assert refused is not None and refused.status == status, query
        assert page.locator("h1").inner_text() == title
        body = page.locator("body").inner_text()
        assert words in body and "Traceback" not in body, body


# In the page: each lineage edge (its `d`) that runs through a work's box, and each edge label drawn over one.
THROUGH_A_BOX = """() => {
  const boxes = [...document.querySelectorAll("svg.lineage rect")].map(r => r.getBBox());
  const inside = (p, b) => p.x > b.x + 1 && p.x < b.x + b.width - 1 && p.y > b.y + 1 && p.y < b.y + b.height - 1;
  const over = (t, b) => t.x < b.x + b.width && t.x + t.width > b.x && t.y < b.y + b.height && t.y + t.height > b.y;
  const found = [];
  for (const edge of document.querySelectorAll("svg.lineage path.edge")) {
    const length = edge.getTotalLength();
    for (let i = 0; i <= 100; i++) {
      const point = edge.getPointAtLength(length * i / 100);
      if (boxes.some(b => inside(point, b))) { found.push(edge.getAttribute("d")); break; }
    }
  }
  for (const label of document.querySelectorAll("svg.lineage text.edge-label")) {
    if (boxes.some(b => over(label.getBBox(), b))) { found.push("label " + label.textContent); }
  }
  return found;
}"""


def test_a_joined_works_lineage_is_drawn_and_its_boxes_lead_to_the_other_works(tab: Tab, tmp_path: Path) -> None:
    page, server = tab.page, tab.server
    # retry's open question is forked off to retry-jitter; retry-jitter and retry-budget join into retry-release.
    question = next(e["id"] for e in head(server)["entries"] if e["kind"] == "question")
    forked = cli(server.home, server.repo, "fork", "retry", "retry-jitter", "--orientation", "Jitter is split off.",
                 "--move", question)["child"]  # fmt: skip
    budget = cli(server.home, server.repo, "checkpoint", "retry-budget", "--orientation", "A retry budget per client.",
                 "--next", "hold", "--decision", "Ten retries a minute.", "--rationale", "The limit.")  # fmt: skip
    joined = cli(server.home, server.repo, "join", "retry-jitter", "retry-budget", "retry-release",
                 "--orientation", "Jitter and the budget ship together.")["joined"]  # fmt: skip
    ids = {"retry": head(server)["work_id"], "retry-jitter": forked["work_id"], "retry-budget": budget["work_id"],
           "retry-release": joined["work_id"]}  # fmt: skip
    page.goto(server.url)
    page.goto(f"{server.origin}/work/{ids['retry-release']}")
    svg = page.locator("svg.lineage")
    svg.scroll_into_view_if_needed()
    assert svg.is_visible() and svg.bounding_box() is not None
    assert page.get_by_role("img", name="Lineage: 4 works, 3 edges").is_visible()
    boxes = svg.locator("a")
    assert sorted(box.get_attribute("href") or "" for box in boxes.all()) == sorted(f"/work/{i}" for i in ids.values())
    assert svg.locator("g.node.current text.slug").text_content() == "retry-release"
    words = sorted(label.text_content() or "" for label in svg.locator("text.edge-label").all())
    assert words == ["fork", "join", "join"]
    assert page.evaluate(THROUGH_A_BOX) == []  # retry-budget's join is drawn past retry-jitter's box, not through it
    page.evaluate("document.querySelector('svg.lineage').scrollIntoView({block: 'center'})")
    screenshot(page, tmp_path, "lineage")
    # A click on a box opens that work's page, where the same picture marks it as the current one.
    with page.expect_navigation():
        boxes.filter(has=page.locator("text.slug", has_text="retry-budget")).click()
    assert page.url == f"{server.origin}/work/{ids['retry-budget']}"
    assert page.locator("h1").inner_text() == "retry-budget"
    assert page.locator("svg.lineage g.node.current text.slug").text_content() == "retry-budget"
    # And the keyboard: Tab reaches a box, Enter follows it.
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('svg') !== null && "
                         "document.activeElement.textContent.startsWith('retry: ')"):  # fmt: skip
            break
    else:
        raise AssertionError(f"no lineage box for retry took the focus; last: {tab.focused()}")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == f"{server.origin}/work/{ids['retry']}" and page.locator("h1").inner_text() == "retry"


def test_health_is_reached_from_the_nav_and_shows_each_harness(tab: Tab) -> None:
    page, server = tab.page, tab.server
    page.goto(server.url)
    page.get_by_role("navigation").get_by_role("link", name="Health").click()
    assert page.url == f"{server.origin}/health"
    assert page.locator("h1").inner_text().startswith("Health: ")
    assert page.get_by_role("heading", name="Harnesses").is_visible()
    harnesses = page.locator("tr.hook")
    assert harnesses.count() >= 4
    shown = {row.locator("td").first.inner_text() for row in harnesses.all()}
    assert shown == {"claude-code", "codex", "gemini", "opencode"}, shown
    assert all("no wheypoint hooks" in row.inner_text() for row in harnesses.all())  # none installed in this home
    assert "1 work(s), 1 revision(s) verified" in page.locator("body").inner_text()
    page.get_by_role("navigation").get_by_role("link", name="Inbox").click()
    assert page.locator("h1").inner_text() == "Inbox: 1 open gate"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def screenshot(page: Page, folder: Path, name: str) -> None:
    """The viewport as folder/<name>.png, copied to docs/screenshots/ (tracked files) only with
    WHEYPOINT_TEST_SCREENSHOTS=1."""
    path = folder / f"{name}.png"
    page.screenshot(path=path)
    assert png_size(path) == (VIEWPORT["width"], VIEWPORT["height"]), name
    if os.environ.get("WHEYPOINT_TEST_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(exist_ok=True)
        shutil.copyfile(path, SCREENSHOTS / f"{name}.png")


def test_screenshots_of_the_inbox_a_work_page_and_a_diff(tab: Tab, tmp_path: Path) -> None:
    """Drawn on every run; written to docs/screenshots/ only with WHEYPOINT_TEST_SCREENSHOTS=1."""
    page, server = tab.page, tab.server
    other = make_repo(tmp_path / "billing", {"shop.py": "PRICES_IN = 'EUR'\n"})
    invoices = gated_intent("invoices", "Which currency do invoices use?", orientation="Invoices for the EU shop.",
                            owner="finance", when="before the first invoice", why="Customers pay in two currencies.",
                            fork="Invoice currency", option="EUR only", evidence="shop.py:1 says EUR",
                            breaks="US customers", leaning="EUR only", directive="Round only at the end.",
                            quote="round at the very end")  # fmt: skip
    invoices["decision_dossier"][0]["options"][1] = {"option": "EUR and USD"}
    cli(server.home, other, "checkpoint", "-", stdin=json.dumps(invoices))
    cli(server.home, server.repo, "checkpoint", "calm", "--orientation", "The README is up to date.",
        "--next", "hold", "--notes", "Nothing waits.")  # fmt: skip
    page.goto(server.url)
    assert page.locator("h1").inner_text() == "Inbox: 2 open gates"
    screenshot(page, tmp_path, "inbox")
    # The work page of an answered gate: its decision, the resolved gate and both revisions.
    retry = page.locator("section.gate").filter(has=page.get_by_role("link", name="retry", exact=True))
    retry.get_by_label("Answer", exact=True).fill(ANSWER)
    retry.get_by_label("Reason", exact=True).fill(REASON)
    assert tab.submit(retry.get_by_role("button", name="Record the answer")).status == 200
    page.goto(f"{server.origin}/work/{head(server)['work_id']}")
    assert "r2 · ok" in page.locator("p.meta").first.inner_text()
    screenshot(page, tmp_path, "work")
    # What the answer changed, from the work page's own form (r1 to r2, as drawn).
    with page.expect_navigation():
        page.get_by_role("button", name="Show the change").click()
    assert page.locator("p.meta").first.inner_text() == "From r1 to r2"
    screenshot(page, tmp_path, "diff")
