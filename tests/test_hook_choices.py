"""What the hooks choose, shown by what each call writes (store, hooks/<project>.json, hooks/hook.log) and prints.

Which work SessionStart hands over, which work a rescue continues and what it keeps, when Stop rescues, what a
payload's cwd and --budget decide, and what the hooks remember between calls.

Every hook exits 0 whatever happens, so no test here stops at the exit code: each reads what the hook left behind.
The hooks run as the harness runs them (`python -m wheypoint hook <Event> --harness <h>`, the payload on stdin) in
a real git checkout, against a real SQLite store in a scratch WHEYPOINT_HOME, on Claude Code transcripts built
line by line in the harness's own JSONL form (the reader's tests, test_transcripts_claude.py, pin that form).
"""

from __future__ import annotations

import calendar
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import HARNESS_VARIABLES, make_repo
from wheypoint.hooks.rescue import session_slug
from wheypoint.model.contract import MAX_LIST, MAX_MEAT_TEXT

# The hooks' limits, written out rather than imported: a test that read them from hooks/ would move with a mutant.
STOP_GROWTH = 64 * 1024  # docs/hooks.md: a Stop rescues once the transcript grew by 64 KiB since the last rescue
DEFAULT_BUDGET = 10000  # docs/hooks.md: a packet takes at most 10,000 characters unless --budget says otherwise
MAX_PAYLOAD = 1024 * 1024  # the most of a payload a hook reads
LOG_LIMIT = 1024 * 1024  # past this hook.log is moved to hook.log.1
DELIVERED_KEPT = 50  # the sessions the pending packet remembers having gone to

SID = "5e55a0b1-aaaa-4bbb-8ccc-0123456789ab"  # the session a test rescues: its work is session-claude-code-5e55a0b1
OTHER = "0be7a9c2-dddd-4eee-8fff-ba9876543210"
OLD = "2026-01-01T00:00:0{}.000Z"  # long before any checkpoint a test writes


def stamp(seconds: float = 0) -> str:
    """A transcript timestamp (milliseconds, UTC) `seconds` from now."""
    moment = time.time() + seconds
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment * 1000) % 1000:03d}Z"


def user(uuid: str, text: str, at: str | None, session: str = SID) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "user", "uuid": uuid, "sessionId": session, "userType": "external",
                            "message": {"role": "user", "content": text}}  # fmt: skip
    if at is not None:
        line["timestamp"] = at
    return line


def assistant(uuid: str, text: str, at: str, session: str = SID) -> dict[str, Any]:
    """An assistant message of one text block: its turn id is `m<uuid>#0`."""
    content = [{"type": "text", "text": text}]
    return {"type": "assistant", "uuid": uuid, "sessionId": session, "timestamp": at,
            "message": {"id": f"m{uuid}", "role": "assistant", "content": content}}  # fmt: skip


def padding(size: int) -> bytes:
    """One JSONL line of exactly `size` bytes (newline included) that holds no turn: a summary line."""
    empty = json.dumps({"type": "summary", "summary": "", "leafUuid": "pad"}) + "\n"
    assert size >= len(empty)
    return (json.dumps({"type": "summary", "summary": "x" * (size - len(empty)), "leafUuid": "pad"}) + "\n").encode()


class Scene:
    """A checkout (`shop`), a scratch store home, transcripts, and the hooks run on them as a harness runs them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = make_repo(root / "shop")
        self.home = root / "home"
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}  # fmt: skip
        self.env.update(WHEYPOINT_HOME=str(self.home), HOME=str(root / "user"), XDG_CONFIG_HOME=str(root / "config"),
                        XDG_DATA_HOME=str(root / "data"))  # fmt: skip

    def transcript(self, lines: list[dict[str, Any]], session: str = SID) -> Path:
        path = self.root / "transcripts" / f"{session}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        for line in lines:
            line.setdefault("cwd", str(self.repo))
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return path

    def append(self, path: Path, *lines: dict[str, Any]) -> None:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps({"cwd": str(self.repo), **line}) + "\n" for line in lines))

    def payload(self, event: str, transcript: Path | None, session: str = SID, **fields: Any) -> dict[str, Any]:
        base = {"session_id": session, "transcript_path": str(transcript) if transcript else None,
                "cwd": str(self.repo), "hook_event_name": event, "permission_mode": "default"}  # fmt: skip
        return {**base, **fields}

    def raw(self, event: str, stdin: bytes, *args: str, cwd: Path | None = None,
            harness: str = "claude-code") -> dict[str, Any]:  # fmt: skip
        """The hook's one JSON document; the call must exit 0, print one line and write nothing to stderr."""
        done = subprocess.run([sys.executable, "-m", "wheypoint", "hook", event, "--harness", harness, *args],
                              input=stdin, cwd=cwd or self.repo, env=self.env, capture_output=True, timeout=60,
                              check=False)  # fmt: skip
        out = done.stdout.decode("utf-8")
        assert done.returncode == 0 and done.stderr == b"" and out.count("\n") == 1, out + done.stderr.decode()
        answer: dict[str, Any] = json.loads(out)
        return answer

    def fire(self, event: str, transcript: Path | None, *args: str, session: str = SID, cwd: Path | None = None,
             harness: str = "claude-code", **fields: Any) -> dict[str, Any]:  # fmt: skip
        stdin = json.dumps(self.payload(event, transcript, session, **fields)).encode()
        return self.raw(event, stdin, *args, cwd=cwd, harness=harness)

    def log(self) -> list[dict[str, Any]]:
        path = self.home / "hooks" / "hook.log"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []

    def last(self) -> dict[str, Any]:
        entries = self.log()
        assert entries, "the hook logs every call"
        return entries[-1]

    def state(self, project: str = "shop") -> dict[str, Any]:
        path = self.home / "hooks" / f"{project}.json"
        found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return found

    def cli(self, *args: str, code: int = 0) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-m", "wheypoint", *args, "--format", "json"], cwd=self.repo,
                              env=self.env, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode == code, done.stdout + done.stderr
        reply: dict[str, Any] = json.loads(done.stdout)
        return reply

    def checkpoint(self, slug: str, transcript: Path | None = None) -> dict[str, Any]:
        """A checkpoint an agent writes (in the transcript's session when one is named)."""
        named = ("--transcript", str(transcript)) if transcript else ()
        return self.cli("checkpoint", slug, "--orientation", f"{slug} goes on", "--next", "hold", "--notes", "n",
                        *named)  # fmt: skip

    def record(self, slug: str) -> dict[str, Any]:
        found: dict[str, Any] = self.cli("show", slug)["record"]
        return found

    def works(self) -> list[str]:
        return sorted(w["slug"] for w in self.cli("list", "--project", "shop")["works"])


OURS = f"session-claude-code-{SID[:8]}"


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    return Scene(tmp_path)


def kept(record: dict[str, Any]) -> dict[str, tuple[str, int, str]]:
    """The record's meat by turn id: (type, weight, text)."""
    return {m["turn"]: (m["type"], m["weight"], m["text"]) for m in record["meat"]}


def context_work(answer: dict[str, Any]) -> str:
    """The work id a context answer (Claude Code's format) hands over, read from the packet itself."""
    context = answer["hookSpecificOutput"]["additionalContext"]
    packet: dict[str, Any] = json.loads(context.splitlines()[1])
    return str(packet["work_id"])


# ---- which work SessionStart hands over


def test_sessionstart_hands_over_the_pending_work_even_when_another_is_newer(scene: Scene) -> None:
    transcript = scene.transcript([user("u1", "make the cart keep its items", OLD.format(0))])
    scene.fire("PreCompact", transcript, trigger="auto")
    ours = scene.record(OURS)["work_id"]
    assert scene.state()["pending"]["work_id"] == ours
    newer = scene.checkpoint("aaa-newer-work")["work_id"]  # newest, and first by id in the same second
    start = scene.fire("SessionStart", transcript, session=OTHER, source="compact")
    assert context_work(start) == ours and "systemMessage" not in start
    assert start["hookSpecificOutput"]["additionalContext"].rstrip().endswith(
        f"--base {scene.record(OURS)['revision_id']} ...")  # fmt: skip
    entry = scene.last()
    assert entry["work_id"] == ours != newer and entry["event"] == "SessionStart" and entry["source"] == "compact"
    assert entry["chars"] == len(start["hookSpecificOutput"]["additionalContext"])
    assert f"claude-code:{OTHER}" in scene.state()["pending"]["delivered_to"]
    # The next prompt of that session gets nothing more; a third session, which never had it, gets the pending one.
    assert scene.fire("UserPromptSubmit", transcript, session=OTHER, prompt="go on") == {}
    third = "third-session-0000"
    prompt = scene.fire("UserPromptSubmit", transcript, session=third, prompt="go on")
    assert context_work(prompt) == ours and scene.last()["work_id"] == ours
    assert f"claude-code:{third}" in scene.state()["pending"]["delivered_to"]
    assert scene.fire("UserPromptSubmit", transcript, session=third, prompt="and on") == {}
    assert "work_id" not in scene.last()


def test_sessionstart_with_nothing_pending_hands_over_the_projects_newest_work(scene: Scene) -> None:
    scene.checkpoint("zzz-older-work")
    newest = scene.checkpoint("aaa-newest-work")["work_id"]  # later, or first by id in the same second
    assert "pending" not in scene.state()
    start = scene.fire("SessionStart", None, source="startup")
    assert context_work(start) == newest and scene.last()["work_id"] == newest
    assert start["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_sessionstart_in_a_project_without_work_hands_over_nothing_and_makes_no_store(scene: Scene) -> None:
    assert scene.fire("SessionStart", None, source="startup") == {}
    entry = scene.last()
    assert entry["skipped"] == "no work in this project yet" and "work_id" not in entry
    assert not (scene.home / "store.sqlite3").exists()
    # A store holding another project's work only: still nothing for this one.
    elsewhere = make_repo(scene.root / "elsewhere")
    done = subprocess.run([sys.executable, "-m", "wheypoint", "checkpoint", "theirs", "--orientation", "o", "--next",
                           "hold", "--notes", "n"], cwd=elsewhere, env=scene.env, capture_output=True, timeout=60,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert scene.fire("SessionStart", None, source="startup") == {}
    assert scene.last()["skipped"] == "no work in this project yet"


def test_a_session_that_holds_the_packet_already_is_not_handed_it_again(scene: Scene) -> None:
    """A resumed session's history holds the packet it had; a cleared one holds nothing."""
    scene.checkpoint("aaa-work")
    first = scene.fire("SessionStart", None, session=OTHER, source="startup")
    assert json.loads(first["hookSpecificOutput"]["additionalContext"].splitlines()[1])["slug"] == "aaa-work"
    assert scene.fire("SessionStart", None, session=OTHER, source="resume") == {}
    entry = scene.last()
    assert entry["skipped"] == "this session has had this packet since its last compaction" and entry["chars"] == 0
    assert "hookSpecificOutput" in scene.fire("SessionStart", None, session=OTHER, source="clear")
    assert scene.last()["chars"] > 0


def test_a_compaction_makes_the_session_lose_its_packet_and_a_stop_does_not(scene: Scene) -> None:
    """A packet a session had before its PreCompact left its context with the compaction: handed again on resume.
    A Stop's rescue compacts nothing: the session still holds its packet."""
    transcript = scene.transcript([user("u1", "make the cart keep its items", OLD.format(0))])
    scene.fire("PreCompact", transcript, trigger="auto")
    assert "hookSpecificOutput" in scene.fire("SessionStart", None, source="startup")
    assert scene.fire("SessionStart", None, source="resume") == {}  # held since the last compaction
    time.sleep(0.05)
    scene.fire("PreCompact", transcript, trigger="auto")  # nothing new: the same packet, now compacted away
    assert scene.last().get("kept", 0) == 0
    again = scene.fire("SessionStart", None, source="resume")
    assert json.loads(again["hookSpecificOutput"]["additionalContext"].splitlines()[1])["slug"] == OURS
    time.sleep(0.05)
    with transcript.open("ab") as handle:  # a Stop that reads 64 KiB more and keeps nothing new
        handle.write(padding(STOP_GROWTH))
    assert scene.fire("Stop", transcript, stop_hook_active=False) == {}
    assert scene.last().get("kept", 0) == 0 and scene.state()["sessions"][f"claude-code:{SID}"]["size"] > STOP_GROWTH
    assert scene.fire("SessionStart", None, source="resume") == {}
    assert scene.last()["skipped"] == "this session has had this packet since its last compaction"


def test_a_compaction_whose_precompact_did_not_fire_does_not_cost_the_packet(scene: Scene) -> None:
    scene.checkpoint("aaa-work")
    assert "hookSpecificOutput" in scene.fire("SessionStart", None, session=OTHER, source="startup")
    answer = scene.fire("SessionStart", None, session=OTHER, source="compact")  # moments later, no PreCompact seen
    assert "hookSpecificOutput" in answer, answer


@pytest.mark.parametrize(("ago", "handed"), [(59.0, False), (60.5, True)])
def test_after_a_compaction_a_packet_had_since_its_precompact_stands_for_a_minute(
    scene: Scene, ago: float, handed: bool
) -> None:
    """Codex runs a resumed session's SessionStart, then the compact one: a copy sent after the compaction's
    PreCompact, less than a minute ago, stands for the one the compact SessionStart would send (REPEAT_WINDOW)."""
    transcript = scene.transcript([user("u1", "make the cart keep its items", OLD.format(0))])
    scene.fire("PreCompact", transcript, trigger="auto")
    assert "hookSpecificOutput" in scene.fire("SessionStart", None, source="resume")
    path = scene.home / "hooks" / "shop.json"
    state = json.loads(path.read_text(encoding="utf-8"))
    facts = state["sessions"][f"claude-code:{SID}"]
    facts["sent"]["at"] = time.time() - ago
    facts["compacted"] = facts["sent"]["at"] - 1  # the PreCompact came before the copy
    path.write_text(json.dumps(state), encoding="utf-8")
    answer = scene.fire("SessionStart", None, source="compact")
    assert ("hookSpecificOutput" in answer) is handed, answer


# ---- which work a rescue continues


def test_a_rescue_continues_the_work_its_own_session_wrote_last(scene: Scene) -> None:
    transcript = scene.transcript([user("u1", "make the cart keep its items", OLD.format(0))])
    scene.fire("PreCompact", transcript, trigger="auto")
    other = scene.transcript([user("o1", "an unrelated prompt of another session", OLD.format(1), OTHER)], OTHER)
    theirs = scene.checkpoint("aaa-their-work", other)  # newer, and first by id in the same second
    scene.append(transcript, user("u2", "and keep them across restarts", stamp()))
    answer = scene.fire("PreCompact", transcript, trigger="manual")
    assert answer["systemMessage"] == f"wheypoint kept 1 turn(s) verbatim in {OURS} r2"
    ours = scene.record(OURS)
    assert ours["revision_number"] == 2 and list(kept(ours)) == ["u1", "u2"]
    assert scene.record("aaa-their-work")["revision_id"] == theirs["revision_id"]
    assert scene.state()["pending"]["work_id"] == ours["work_id"] and scene.state()["pending"]["trigger"] == "manual"


RECENT_WORKS = 20  # the newest works of the project a rescue looks through for one its session wrote


def _newer_works_of_another_session(scene: Scene, count: int) -> None:
    """`count` works of another session, each written after every work there is (a second later at least)."""
    time.sleep(1.05)  # the store keeps whole seconds
    other = scene.transcript([user("o1", "an unrelated prompt of another session", OLD.format(1), OTHER)], OTHER)
    for index in range(count):
        scene.checkpoint(f"busy-{index:02d}", other)


def test_a_rescue_continues_its_own_work_however_many_works_came_after_it(scene: Scene) -> None:
    """The session's own rescue work is found by its name once it is no longer among the newest works (before, the
    rescue was refused `base-revision-required` there, and the prompts it was to keep were lost)."""
    transcript = scene.transcript([user("u1", "make the cart keep its items", OLD.format(0))])
    scene.fire("PreCompact", transcript, trigger="auto")
    _newer_works_of_another_session(scene, RECENT_WORKS + 1)
    scene.append(transcript, user("u2", "and keep them across restarts", stamp()))
    answer = scene.fire("PreCompact", transcript, trigger="manual")
    assert answer["systemMessage"] == f"wheypoint kept 1 turn(s) verbatim in {OURS} r2"
    assert list(kept(scene.record(OURS))) == ["u1", "u2"] and "refused" not in scene.last()


@pytest.mark.parametrize(("newer", "continued"), [(RECENT_WORKS - 1, True), (RECENT_WORKS, False)])
def test_a_rescue_continues_the_agents_work_while_it_is_among_the_newest_works(scene: Scene, newer: int,
                                                                                continued: bool) -> None:  # fmt: skip
    """The agent's own checkpoint in the session is continued while it is among the RECENT_WORKS newest works of
    the project; past them the rescue keeps the prompts in the session's own work instead, and loses none."""
    transcript = scene.transcript([user("u1", "make the cart keep its items", OLD.format(0))])
    scene.checkpoint("cart-work", transcript)
    _newer_works_of_another_session(scene, newer)
    scene.append(transcript, user("u2", "and keep them across restarts", stamp()))
    message = scene.fire("PreCompact", transcript, trigger="manual")["systemMessage"]
    if continued:
        assert message == "wheypoint kept 1 turn(s) verbatim in cart-work r2"
        assert OURS not in scene.works()
    else:
        assert message == f"wheypoint kept 2 turn(s) verbatim in {OURS} r1"
        assert scene.record("cart-work")["revision_number"] == 1
        assert list(kept(scene.record(OURS))) == ["u1", "u2"]


def test_a_rescue_continues_the_agents_own_checkpoint_from_its_time_on(scene: Scene) -> None:
    """The session's head is the agent's checkpoint: only turns from its second on are new, each kept once."""
    transcript = scene.transcript([user("u1", "the first words, before the checkpoint", OLD.format(0)),
                                   user("u2", "more words, before the checkpoint", OLD.format(5))])  # fmt: skip
    head = scene.checkpoint("aaa-agent-work", transcript)
    head_second = scene.record("aaa-agent-work")["updated_at"][:19]
    moment = calendar.timegm(time.strptime(head_second, "%Y-%m-%dT%H:%M:%S"))
    before = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment - 1))
    scene.append(transcript, user("u3", "typed the second before it", before + ".999Z"),
                 user("u4", "typed in the checkpoint's own second", head_second + ".000Z"),
                 user("u5", "typed with no time at all", None),
                 user("u6", "   ", stamp()))  # fmt: skip
    answer = scene.fire("PreCompact", transcript, trigger="auto")
    record = scene.record("aaa-agent-work")
    assert record["revision_number"] == 2 and record["parent_revision_id"] == head["revision_id"]
    assert {turn: text for turn, (_, _, text) in kept(record).items()} == {
        "u4": "typed in the checkpoint's own second", "u5": "typed with no time at all"}  # fmt: skip
    assert answer["systemMessage"] == "wheypoint kept 2 turn(s) verbatim in aaa-agent-work r2"
    assert scene.works() == ["aaa-agent-work"]
    pending = scene.state()["pending"]
    assert pending["work_id"] == record["work_id"] and pending["revision_id"] == record["revision_id"]
    # Nothing new since: no revision, but the agent's work is still the one pending and logged.
    again = scene.fire("PreCompact", transcript, trigger="auto")
    assert "systemMessage" not in again and scene.record("aaa-agent-work")["revision_number"] == 2
    entry = scene.last()
    assert (entry["work_id"], entry["revision"], entry["kept"]) == (record["work_id"], 2, 0)
    assert "error" not in entry and "refused" not in entry


def test_a_rescue_with_nothing_new_still_names_the_agents_work_for_the_next_session(scene: Scene) -> None:
    transcript = scene.transcript([user("u1", "before the checkpoint", OLD.format(0))])
    work = scene.checkpoint("aaa-agent-work", transcript)["work_id"]
    other = scene.transcript([user("o1", "another session's prompt", OLD.format(1), OTHER)], OTHER)
    scene.checkpoint("aab-newer-work", other)
    scene.fire("PreCompact", transcript, trigger="auto")
    entry = scene.last()
    assert (entry["work_id"], entry["revision"], entry["kept"]) == (work, 1, 0)
    assert scene.record("aaa-agent-work")["revision_number"] == 1
    pending = scene.state()["pending"]
    assert (pending["work_id"], pending["slug"]) == (work, "aaa-agent-work")
    assert context_work(scene.fire("SessionStart", None, session=OTHER, source="compact")) == work


# ---- what a rescue keeps


def test_a_rescue_keeps_typed_prompts_and_well_formed_trailers_each_once(scene: Scene) -> None:
    lines = [user("u1", "keep the cart between visits", OLD.format(0)),
             assistant("a1", "noted <!-- ckpt constraint w=3: never drop a cart -->", OLD.format(1)),
             assistant("a2", "also <!-- ckpt learning w=1: carts live in redis -->", OLD.format(2)),
             assistant("a3", "and <!-- ckpt pivot: carts move to postgres -->", OLD.format(3)),
             assistant("a4", "bad <!-- ckpt rejected w=7: a weight out of range -->", OLD.format(4)),
             assistant("a5", "odd <!-- ckpt banana: a type that does not exist -->", OLD.format(5)),
             assistant("a6", "plain words, no trailer", OLD.format(6))]  # fmt: skip
    transcript = scene.transcript(lines)
    answer = scene.fire("PreCompact", transcript, trigger="auto")
    assert answer == {"systemMessage": f"wheypoint kept 4 turn(s) verbatim in {OURS} r1"}
    record = scene.record(OURS)
    assert kept(record) == {
        "u1": ("thread", 1, "keep the cart between visits"),
        "ma1#0": ("constraint", 3, "noted <!-- ckpt constraint w=3: never drop a cart -->"),
        "ma2#0": ("learning", 1, "also <!-- ckpt learning w=1: carts live in redis -->"),
        "ma3#0": ("pivot", 2, "and <!-- ckpt pivot: carts move to postgres -->"),
    }
    assert record["session"] == {"harness": "claude-code", "id": SID} and record["next"] == {"move": "hold"}
    assert f"claude-code:{SID}" in record["orientation"] and f"claude-code:{SID}" in record["notes"]
    assert (scene.repo / ".cheese" / "notes" / f"{OURS}.md").exists()
    entry = scene.last()
    assert (entry["kept"], entry["revision"], entry["skipped"]) == (4, 1, [])
    # Again with nothing new: the marked turns (which carry no time filter) are not kept twice.
    again = scene.fire("PreCompact", transcript, trigger="auto")
    assert again == {} and scene.record(OURS)["revision_number"] == 1
    entry = scene.last()
    assert (entry["kept"], entry["revision"], entry["work_id"]) == (0, 1, record["work_id"])
    assert "error" not in entry and "refused" not in entry
    # A new prompt and a new marked turn: only those two in the next revision.
    scene.append(transcript, user("u2", "and show the cart's total", stamp()),
                 assistant("a7", "ok <!-- ckpt thread w=2: the total is shown -->", stamp()))  # fmt: skip
    third = scene.fire("PreCompact", transcript, trigger="auto")
    assert third["systemMessage"] == f"wheypoint kept 2 turn(s) verbatim in {OURS} r2"
    added = {m["turn"] for m in scene.record(OURS)["meat"] if m["added_in"] == 2}
    assert added == {"u2", "ma7#0"}


@pytest.mark.parametrize("lost", ["removed", "emptied", "zeroed"])
def test_a_rescue_that_lost_its_state_reads_the_transcript_again_and_keeps_nothing_twice(
    scene: Scene, lost: str
) -> None:
    """hooks/<project>.json is advisory (written without fsync): without it, or with what a power cut leaves of an
    unsynced file (nothing, or zeros), the next rescue reads the whole transcript, and the turns the session's work
    already holds (its marked turns carry no time to filter them by) are not kept again."""
    marked = assistant("a1", "ok <!-- ckpt constraint: never drop a cart -->", OLD.format(1))
    transcript = scene.transcript([user("u1", "keep the cart between visits", OLD.format(0)), marked])
    scene.fire("PreCompact", transcript, trigger="auto")
    state = scene.home / "hooks" / "shop.json"
    if lost == "removed":
        state.unlink()
    else:
        state.write_bytes(b"" if lost == "emptied" else b"\0" * state.stat().st_size)
    scene.append(transcript, user("u2", "and show its total", stamp()))
    answer = scene.fire("PreCompact", transcript, trigger="auto")
    assert answer == {"systemMessage": f"wheypoint kept 1 turn(s) verbatim in {OURS} r2"}
    record = scene.record(OURS)
    assert [m["turn"] for m in record["meat"]] == ["u1", "ma1#0", "u2"]


def test_marked_turns_from_before_the_first_prompt_are_kept_with_it(scene: Scene) -> None:
    """A rescue with no typed prompt makes no work; once the person types, the next one reads the whole session
    again (there is no work to resume from) and keeps the agent's earlier marked turn with the prompt."""
    setup = assistant("a1", "setup <!-- ckpt learning: the cart is in redis -->", OLD.format(0))
    transcript = scene.transcript([setup])
    assert scene.fire("PreCompact", transcript, trigger="auto") == {}
    assert scene.last()["kept"] == 0 and scene.last()["work_id"] is None and "pending" not in scene.state()
    scene.append(transcript, user("u1", "now keep the cart between visits", stamp()))
    answer = scene.fire("PreCompact", transcript, trigger="auto")
    assert answer == {"systemMessage": f"wheypoint kept 2 turn(s) verbatim in {OURS} r1"}
    assert set(kept(scene.record(OURS))) == {"ma1#0", "u1"}


def test_a_turn_too_long_is_left_in_the_transcript_and_one_holding_a_credential_is_kept_redacted(
    scene: Scene,
) -> None:
    token = "ghp_" + "R8vQ2mZt7LpXc4Nw" * 2 + "K9sD"
    lines = [user("u1", "x" * MAX_MEAT_TEXT, OLD.format(0)), user("u2", "y" * (MAX_MEAT_TEXT + 1), OLD.format(1)),
             user("u3", f"use the token {token} to push", OLD.format(2)),
             user("u4", "a plain prompt", OLD.format(3))]  # fmt: skip
    answer = scene.fire("PreCompact", scene.transcript(lines), trigger="auto")
    message = answer["systemMessage"]
    assert message == (f"wheypoint kept 3 turn(s) verbatim in {OURS} r1, 1 with each credential in it replaced by "
                       f"[redacted <rule>]; left in the transcript: u2: {MAX_MEAT_TEXT + 1} characters, over the "
                       f"{MAX_MEAT_TEXT} a record keeps")  # fmt: skip
    record = scene.record(OURS)
    assert set(kept(record)) == {"u1", "u3", "u4"} and token not in json.dumps(record)
    assert next(m for m in record["meat"] if m["turn"] == "u3")["text"] == "use the token [redacted github-pat] to push"
    entry = scene.last()
    assert entry["kept"] == 3 and [s.split(":")[0] for s in entry["skipped"]] == ["u2"] and entry["redacted"] == ["u3"]


def test_a_turn_the_rescue_cannot_keep_is_named_even_when_nothing_else_is_new(scene: Scene) -> None:
    transcript = scene.transcript([user("u1", "a plain prompt", OLD.format(0))])
    scene.fire("PreCompact", transcript, trigger="auto")
    scene.append(transcript, user("u2", "z" * (MAX_MEAT_TEXT + 1), stamp()))
    answer = scene.fire("PreCompact", transcript, trigger="auto")
    assert answer["systemMessage"] == (f"wheypoint; left in the transcript: u2: {MAX_MEAT_TEXT + 1} characters, "
                                       f"over the {MAX_MEAT_TEXT} a record keeps")  # fmt: skip
    assert scene.record(OURS)["revision_number"] == 1


@pytest.mark.parametrize("typed", [False, True])
def test_a_transcript_mostly_of_unknown_records_is_said_to_be_in_a_format_the_reader_may_not_know(
    scene: Scene, typed: bool
) -> None:
    lines = [{"type": "turn-v9", "uuid": f"n{n}", "sessionId": SID, "body": "?"} for n in range(4)]
    transcript = scene.transcript(([user("u1", "a prompt", OLD.format(0))] if typed else []) + lines)
    message = scene.fire("PreCompact", transcript, trigger="auto")["systemMessage"]
    lead = f"wheypoint kept 1 turn(s) verbatim in {OURS} r1" if typed else "wheypoint"
    assert message.startswith(f"{lead}; transcript-format-unknown: 4 of its "), message
    assert scene.last()["warning"]["code"] == "transcript-format-unknown"
    assert scene.works() == ([OURS] if typed else [])


def test_more_turns_than_a_part_holds_go_on_in_the_session_s_next_part(scene: Scene) -> None:
    """A revision takes at most a list's worth of turns, and a part at most PART_TURNS: the turns past them are kept
    in the session's next part, whose head is the pending work."""
    from wheypoint.hooks.rescue import PART_TURNS

    assert PART_TURNS <= MAX_LIST  # (so a part's turns fit one revision: a first rescue writes one a part)
    lines = [user(f"u{n:03d}", f"prompt number {n}", OLD.format(0)) for n in range(PART_TURNS + 1)]
    answer = scene.fire("PreCompact", scene.transcript(lines), trigger="auto")
    assert answer["systemMessage"] == f"wheypoint kept {PART_TURNS + 1} turn(s) verbatim in {OURS}-part-2 r1"
    first, second = scene.record(OURS), scene.record(f"{OURS}-part-2")
    assert len(first["meat"]) == PART_TURNS and first["revision_number"] == 1
    assert [m["text"] for m in second["meat"]] == [f"prompt number {PART_TURNS}"]
    assert scene.state()["pending"]["revision_id"] == second["revision_id"]


def test_exactly_as_many_turns_as_a_revision_and_a_part_hold_take_one_revision_and_its_note(scene: Scene) -> None:
    from wheypoint.hooks.rescue import PART_TURNS

    most = min(MAX_LIST, PART_TURNS)
    lines = [user(f"u{n:03d}", f"prompt number {n}", OLD.format(0)) for n in range(most)]
    answer = scene.fire("PreCompact", scene.transcript(lines), trigger="auto")
    assert answer["systemMessage"] == f"wheypoint kept {most} turn(s) verbatim in {OURS} r1"
    note = scene.repo / ".cheese" / "notes" / f"{OURS}.md"
    assert note.exists() and f"prompt number {most - 1}" in note.read_text(encoding="utf-8")


def test_a_session_id_with_a_type_prefix_names_its_work_by_what_follows(scene: Scene) -> None:
    session = "ses_Q7x9K2m4P8r1"
    transcript = scene.transcript([user("u1", "a prompt", OLD.format(0), session)], session)
    scene.fire("PreCompact", transcript, session=session, trigger="auto")
    assert scene.works() == ["session-claude-code-q7x9k2m4"]


def test_another_works_damaged_head_does_not_cost_the_rescue(scene: Scene) -> None:
    """The project's newest work has a head changed in the store (record-corrupt): the rescue looks past it for
    its own session's work, continues that one, and leaves the damaged one as it is."""
    import sqlite3

    transcript = scene.transcript([user("u1", "make the cart keep its items", OLD.format(0))])
    scene.fire("PreCompact", transcript, trigger="auto")
    scene.checkpoint("other-work")  # newer than the session's own work
    with sqlite3.connect(scene.home / "store.sqlite3") as conn:
        (head,) = conn.execute("SELECT head_revision_id FROM works WHERE slug = 'other-work'").fetchone()
        conn.execute("UPDATE revisions SET record_json = replace(record_json, 'other-work goes on', "
                     "'other-work went on') WHERE revision_id = ?", (head,))  # fmt: skip
    conn.close()
    assert scene.cli("show", "other-work", code=1)["error"]["code"] == "record-corrupt"
    scene.append(transcript, user("u2", "and keep them for a week", OLD.format(1)))
    message = scene.fire("PreCompact", transcript, trigger="auto")["systemMessage"]
    assert message.startswith(f"wheypoint kept 1 turn(s) verbatim in {OURS} r2"), message
    assert "error" not in scene.last() and "refused" not in scene.last()
    assert [m["text"] for m in scene.record(OURS)["meat"]] == ["make the cart keep its items",
                                                                "and keep them for a week"]  # fmt: skip


@pytest.mark.parametrize(("metas", "warned"), [(1, False), (2, True)])
def test_a_session_of_injected_context_and_no_prompt_is_said_to_be_in_a_format_the_reader_may_not_know(
    scene: Scene, metas: int, warned: bool
) -> None:
    """Two user-role records read as injected context (`isMeta`) and no prompt: the reader may be behind the
    harness's format, and says so; one such record is a new session's preamble, and nothing is said."""
    lines = [{**user(f"m{n}", "<local-command-caveat>context</local-command-caveat>", OLD.format(n)), "isMeta": True}
             for n in range(metas)]  # fmt: skip
    transcript = scene.transcript(lines)
    scene.fire("PreCompact", transcript, trigger="auto")
    assert not (scene.home / "store.sqlite3").exists()  # nothing to keep: the rescue only read, and made no store
    warning = scene.last().get("warning")
    if warned:
        assert warning is not None and warning["code"] == "transcript-format-unknown"
        assert warning["message"].startswith(f"{metas} user-role record(s) read as injected context and no prompt")
    else:
        assert warning is None, warning


# ---- the Stop growth gate


def test_a_stop_before_the_transcript_is_on_disk_skips_quietly(scene: Scene) -> None:
    """The real Claude Code CLI can fire a turn's Stop before it wrote the transcript: nothing to rescue, no refusal."""
    assert scene.fire("Stop", scene.root / "transcripts" / "not-yet.jsonl", stop_hook_active=False) == {}
    entry = scene.last()
    assert entry["skipped"] == "no transcript on disk yet" and "refused" not in entry and "error" not in entry
    # A PreCompact still says it: its rescue is lost
    assert "transcript-missing" in scene.fire("PreCompact", scene.root / "transcripts" / "not-yet.jsonl",
                                              trigger="auto")["systemMessage"]  # fmt: skip


def test_a_stop_given_a_folder_for_its_transcript_says_so(scene: Scene) -> None:
    """Only a transcript not on disk yet is skipped quietly: one that cannot be read is a refusal, logged as one."""
    folder = scene.root / "transcripts" / "a-folder.jsonl"
    folder.mkdir(parents=True)
    assert scene.fire("Stop", folder, stop_hook_active=False) == {}  # Stop's messages stay out of the session
    entry = scene.last()
    assert entry["refused"] == "transcript-unreadable" and "skipped" not in entry, entry
    assert "transcript-unreadable" in entry["message"]


def test_a_precompact_whose_session_has_no_id_is_refused_and_writes_nothing(scene: Scene) -> None:
    """A payload with no session id, and a file no reader recognises (so no id comes from it either): there is
    no work to name the rescue by, so the refusal says so (printed and logged) and the store stays unmade."""
    transcript = scene.root / "transcripts" / "export.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps({"role": "user", "text": "Keep the retry cap at 30 seconds."}) + "\n")
    answer = scene.fire("PreCompact", transcript, session="", trigger="auto")
    assert "session-not-found" in answer["systemMessage"] and "no session id" in answer["systemMessage"], answer
    entry = scene.last()
    assert entry["refused"] == "session-not-found" and entry["event"] == "PreCompact", entry
    assert not (scene.home / "store.sqlite3").exists()


@pytest.mark.parametrize("size", [STOP_GROWTH - 1, STOP_GROWTH])
def test_stop_rescues_a_transcript_only_once_it_has_grown_by_stop_growth(scene: Scene, size: int) -> None:
    transcript = scene.transcript([user("u1", "a prompt typed before the stop", OLD.format(0))])
    with transcript.open("ab") as handle:
        handle.write(padding(size - transcript.stat().st_size))
    assert transcript.stat().st_size == size
    assert scene.fire("Stop", transcript, stop_hook_active=False) == {}  # Stop is quiet: its news goes to the log
    entry = scene.last()
    if size < STOP_GROWTH:
        assert entry["skipped"] == "transcript grew too little since the last rescue"
        assert not (scene.home / "store.sqlite3").exists()
        return
    assert entry["skipped"] == [] and entry["kept"] == 1 and entry["message"].startswith("wheypoint kept 1 turn(s)")
    assert list(kept(scene.record(OURS))) == ["u1"]
    assert scene.state()["sessions"][f"claude-code:{SID}"]["size"] == size
    assert scene.state()["pending"]["trigger"] == "stop"
    # Grown by one byte short of STOP_GROWTH since: skipped; a line more: rescued again.
    line = json.dumps({"cwd": str(scene.repo), **user("u2", "a prompt typed after", stamp())}) + "\n"
    with transcript.open("ab") as handle:
        handle.write(line.encode() + padding(STOP_GROWTH - 1 - len(line.encode())))
    assert scene.fire("Stop", transcript) == {}
    assert scene.last()["skipped"] == "transcript grew too little since the last rescue"
    assert scene.fire("Stop", transcript, stop_hook_active=True) == {}
    assert set(scene.last()) == {"at", "event", "harness", "ms"}  # a Stop hook already made the agent go on
    scene.append(transcript, user("u3", "one more", stamp()))
    assert scene.fire("Stop", transcript) == {}
    assert scene.last()["kept"] == 2 and list(kept(scene.record(OURS))) == ["u1", "u2", "u3"]


@pytest.mark.parametrize("event", ["PreCompact", "Stop"])
def test_a_payload_field_of_another_type_is_refused_even_when_nothing_is_new(scene: Scene, event: str) -> None:
    """The answer from the read mark alone is for a payload the locating would take: one whose cwd (or session
    id, or path) is not text is refused invalid-hook-payload as before, though the transcript did not change."""
    transcript = scene.transcript([user("u1", "a prompt typed before the compaction", OLD.format(0))])
    assert "kept 1 turn(s)" in scene.fire("PreCompact", transcript, trigger="auto")["systemMessage"]
    payload = {**scene.payload(event, transcript, trigger="auto", stop_hook_active=False), "cwd": 5}
    scene.raw(event, json.dumps(payload).encode())
    assert scene.last()["refused"] == "invalid-hook-payload", scene.last()


def test_a_stop_whose_payload_names_no_session_is_located_and_still_waits_for_stop_growth(scene: Scene) -> None:
    """Without a session id the payload's path alone is not enough to know the session: the Stop locates it and
    measures the growth the same way, so a small transcript is still left for later, with no store made."""
    transcript = scene.transcript([user("u1", "a prompt typed before the stop", OLD.format(0))])
    assert scene.fire("Stop", transcript, session="", stop_hook_active=False) == {}
    assert scene.last()["skipped"] == "transcript grew too little since the last rescue", scene.last()
    assert not (scene.home / "store.sqlite3").exists()


def test_a_precompact_with_nothing_new_keeps_the_transcripts_size_for_the_next_stop(scene: Scene) -> None:
    """The PreCompact that finds nothing new from the read mark alone still notes the transcript's size, which a
    Stop's growth is measured from: a Stop right after it finds no growth and rescues nothing."""
    transcript = scene.transcript([user("u1", "a prompt typed before the compaction", OLD.format(0))])
    with transcript.open("ab") as handle:
        handle.write(padding(2 * STOP_GROWTH))
    size = transcript.stat().st_size
    assert "kept 1 turn(s)" in scene.fire("PreCompact", transcript, trigger="auto")["systemMessage"]
    facts = scene.state()["sessions"][f"claude-code:{SID}"]
    facts["size"] = 0  # as if the last size noted had been lost: the nothing-new call below notes it again
    (scene.home / "hooks" / "shop.json").write_text(json.dumps({**scene.state(), "sessions": {
        **scene.state()["sessions"], f"claude-code:{SID}": facts}}), encoding="utf-8")  # fmt: skip
    assert scene.fire("PreCompact", transcript, trigger="auto") == {}
    assert scene.state()["sessions"][f"claude-code:{SID}"]["size"] == size
    assert scene.fire("Stop", transcript, stop_hook_active=False) == {}
    assert scene.last()["skipped"] == "transcript grew too little since the last rescue", scene.last()


# ---- what run_hook reads from the payload and the command line


def test_the_payloads_cwd_names_the_project_and_a_cwd_that_is_no_folder_is_ignored(scene: Scene) -> None:
    elsewhere = scene.root / "elsewhere"
    elsewhere.mkdir()
    transcript = scene.transcript([user("u1", "a prompt", OLD.format(0))])
    scene.fire("PreCompact", transcript, cwd=elsewhere, trigger="auto")  # the hook runs outside, the payload says shop
    assert scene.record(OURS)["project_key"] == "shop" and scene.state()["pending"]["slug"] == OURS
    assert not (scene.home / "hooks" / "elsewhere.json").exists()
    assert (scene.repo / ".cheese" / "notes" / f"{OURS}.md").exists()
    # A cwd that is not a folder: the hook's own folder (here the checkout) counts.
    gone = str(scene.root / "gone" / "nowhere")
    payload = {**scene.payload("SessionStart", None, OTHER, source="startup"), "cwd": gone}
    start = scene.raw("SessionStart", json.dumps(payload).encode(), cwd=scene.repo)
    assert context_work(start) == scene.record(OURS)["work_id"]
    assert not (scene.home / "hooks" / "nowhere.json").exists()
    assert f"claude-code:{OTHER}" in scene.state()["pending"]["delivered_to"]


def test_budget_bounds_the_packet_and_a_bad_one_is_named(scene: Scene) -> None:
    lines = [user(f"u{n}", f"prompt {n}: " + "words " * 150, OLD.format(0)) for n in range(20)]
    scene.fire("PreCompact", scene.transcript(lines), trigger="auto")
    full = scene.fire("SessionStart", None, session=OTHER, source="startup")
    text = full["hookSpecificOutput"]["additionalContext"]
    assert 2000 < len(text) <= DEFAULT_BUDGET and "systemMessage" not in full
    small = scene.fire("SessionStart", None, "--budget", "2000", session=OTHER, source="startup")
    assert "systemMessage" not in small, small
    assert len(small["hookSpecificOutput"]["additionalContext"]) <= 2000
    entry = scene.last()
    assert entry["chars"] <= 2000 and "error" not in entry and "refused" not in entry
    for bad in ("0", "many"):
        refused = scene.fire("SessionStart", None, "--budget", bad, session=OTHER, source="startup")
        assert refused == {"systemMessage": "wheypoint SessionStart: usage: --budget takes a positive number of "
                           "characters"}  # fmt: skip
        assert scene.last()["refused"] == "usage"
    tight = scene.fire("SessionStart", None, "--budget", "150", session=OTHER, source="startup")
    assert tight["systemMessage"].startswith("wheypoint SessionStart: budget-too-small")
    assert "hookSpecificOutput" not in tight and scene.last()["refused"] == "budget-too-small"
    # On a quiet event the same refusal goes to the log only.
    third = "third-session-0000"
    assert scene.fire("UserPromptSubmit", None, "--budget", "0", session=third, prompt="hi") == {}
    entry = scene.last()
    assert entry["refused"] == "usage" and entry["message"].startswith("wheypoint UserPromptSubmit: usage:")


def test_opencode_gets_its_own_shape_and_other_harnesses_get_context_only_at_context_events(scene: Scene) -> None:
    scene.checkpoint("aaa-work")
    answer = scene.fire("SessionStart", None, harness="opencode", source="startup")
    assert set(answer) == {"context", "message"} and answer["message"] == ""
    assert json.loads(answer["context"].splitlines()[1])["slug"] == "aaa-work"
    refused = scene.fire("SessionStart", None, "--budget", "0", harness="opencode")
    assert refused == {"context": "", "message": "wheypoint SessionStart: usage: --budget takes a positive number "
                       "of characters"}  # fmt: skip


def test_refusals_are_printed_and_logged_with_the_event_and_harness_named(scene: Scene) -> None:
    assert scene.raw("Nonesuch", b"{}")["systemMessage"].startswith("wheypoint hook: unknown-event: no hook event")
    entry = scene.last()
    assert entry["refused"] == "unknown-event" and entry["event"] == "Nonesuch" and entry["harness"] == "claude-code"
    answer = scene.raw("SessionStart", b"{}", harness="vim")
    assert answer["systemMessage"].startswith("wheypoint SessionStart: unknown-harness")
    assert scene.last()["refused"] == "unknown-harness" and scene.last()["harness"] == "vim"
    for stdin, why in ((b"not json", "is not JSON"), (b"[1]", "is a JSON object"),
                       (b'{"cwd": "\\ud800"}', "lone surrogate")):  # fmt: skip
        answer = scene.raw("SessionStart", stdin)
        assert answer["systemMessage"].startswith("wheypoint SessionStart: invalid-hook-payload") and why in str(answer)
        assert scene.last()["refused"] == "invalid-hook-payload"


def test_a_command_line_the_hook_cannot_parse_is_named_and_logged_without_an_event(scene: Scene) -> None:
    argv = [sys.executable, "-m", "wheypoint", "hook", "Stop", "--harness", "gemini", "--bogus"]
    done = subprocess.run(argv, input=b"{}", cwd=scene.repo, env=scene.env, capture_output=True, timeout=60,
                          check=False)  # fmt: skip
    assert done.returncode == 0 and done.stderr == b""
    assert json.loads(done.stdout) == {"systemMessage": "wheypoint hook: usage: hook: unknown flag --bogus"}
    entry = scene.last()
    assert (entry["refused"], entry["event"], entry["harness"]) == ("usage", None, None)
    assert scene.raw("SessionStart", b"{}", harness="")["systemMessage"].startswith(
        "wheypoint SessionStart: unknown-harness")  # fmt: skip
    assert (scene.last()["event"], scene.last()["harness"]) == ("SessionStart", "")


@pytest.mark.parametrize("size", [MAX_PAYLOAD, MAX_PAYLOAD + 1])
def test_a_payload_up_to_max_payload_bytes_is_read(scene: Scene, size: int) -> None:
    body = json.dumps({"session_id": OTHER, "cwd": str(scene.repo), "hook_event_name": "SessionStart"})
    stdin = body[:-1].encode() + b" " * (size - len(body)) + b"}"
    assert len(stdin) == size
    answer = scene.raw("SessionStart", stdin)
    entry = scene.last()
    if size <= MAX_PAYLOAD:
        assert answer == {} and entry["skipped"] == "no work in this project yet"
    else:
        assert answer["systemMessage"] == (f"wheypoint SessionStart: invalid-hook-payload: the hook's payload is "
                                           f"over {MAX_PAYLOAD} bytes")  # fmt: skip
        assert entry["refused"] == "invalid-hook-payload"


# ---- what the hooks remember (hooks/state.py)


def test_each_hook_call_notes_its_session_as_live_and_a_payload_without_one_notes_none(scene: Scene) -> None:
    before = int(time.time())
    scene.fire("UserPromptSubmit", None, prompt="hi")
    seen = scene.state()["sessions"][f"claude-code:{SID}"]["seen"]
    assert isinstance(seen, int) and before <= seen <= time.time()
    scene.raw("UserPromptSubmit", json.dumps({"cwd": str(scene.repo), "prompt": "hi"}).encode())
    assert list(scene.state()["sessions"]) == [f"claude-code:{SID}"]
    assert set(scene.last()) == {"at", "event", "harness", "ms"}  # nothing went wrong, nothing to say


def test_the_pending_packet_remembers_the_last_sessions_it_went_to(scene: Scene) -> None:
    transcript = scene.transcript([user("u1", "a prompt", OLD.format(0))])
    scene.fire("PreCompact", transcript, trigger="auto")
    state = scene.state()
    state["pending"]["delivered_to"] = [f"claude-code:s{n}" for n in range(DELIVERED_KEPT)]
    (scene.home / "hooks" / "shop.json").write_text(json.dumps(state), encoding="utf-8")
    scene.fire("SessionStart", None, session="s-new", source="startup")
    delivered = scene.state()["pending"]["delivered_to"]
    assert len(delivered) == DELIVERED_KEPT and delivered[-1] == "claude-code:s-new" and delivered[0].endswith("s1")
    scene.fire("SessionStart", None, session="s5", source="startup")  # had it already: moved to the end, not twice
    delivered = scene.state()["pending"]["delivered_to"]
    assert delivered.count("claude-code:s5") == 1 and delivered[-1] == "claude-code:s5"


@pytest.mark.parametrize("size", [LOG_LIMIT, LOG_LIMIT + 1])
def test_the_hook_log_is_moved_aside_once_past_its_limit(scene: Scene, size: int) -> None:
    log = scene.home / "hooks" / "hook.log"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"#" * (size - 1) + b"\n")
    scene.fire("SessionStart", None, source="startup")
    lines = log.read_text(encoding="utf-8").splitlines()
    if size <= LOG_LIMIT:
        assert len(lines) == 2 and not log.with_name("hook.log.1").exists()
    else:
        assert len(lines) == 1 and json.loads(lines[0])["event"] == "SessionStart"
        assert log.with_name("hook.log.1").stat().st_size == size


@pytest.mark.parametrize(("ago", "noted_again"), [(30, False), (60, True), (-300, True)])
def test_a_session_heard_within_the_minute_is_not_noted_again(scene: Scene, ago: int, noted_again: bool) -> None:
    """Live is judged over half an hour: a hook notes its session at most once a minute (and again when the clock
    went back), so a hook firing on every prompt does not rewrite the state each time."""
    path = scene.home / "hooks" / "shop.json"
    path.parent.mkdir(parents=True)
    then = int(time.time()) - ago
    path.write_text(json.dumps({"sessions": {f"claude-code:{SID}": {"seen": then}}}), encoding="utf-8")
    scene.fire("UserPromptSubmit", None, prompt="hi")
    seen = scene.state()["sessions"][f"claude-code:{SID}"]["seen"]
    assert (seen != then) is noted_again and (not noted_again or seen >= then + ago)


# ---- the packet, the work's name, and the harnesses' own shapes


def test_the_packet_takes_all_the_room_its_first_and_last_lines_leave(scene: Scene) -> None:
    transcript = scene.transcript([user("u1", "garder le panier, même après un redémarrage ✓", OLD.format(0))])
    scene.fire("PreCompact", transcript, trigger="auto")
    context = scene.fire("SessionStart", None, session=OTHER)["hookSpecificOutput"]["additionalContext"]
    assert "garder le panier, même après un redémarrage ✓" in context  # verbatim, not \\u-escaped
    # A budget a little over what the first and last lines keep for themselves: the packet renderer refuses it,
    # naming the room it was left.
    for budget in range(len(context.splitlines()[0]) + 100, len(context), 100):
        small = scene.fire("SessionStart", None, "--budget", str(budget), session=OTHER)["systemMessage"]
        if "the budget is " in small:
            break
    assert small.startswith("wheypoint SessionStart: budget-too-small: a packet needs at least"), small
    room = int(small.rsplit(" ", 1)[1])
    assert 0 < room <= 100
    # That much less leaves none: refused before rendering; one more leaves exactly one character.
    none_left = scene.fire("SessionStart", None, "--budget", str(budget - room), session=OTHER)
    assert none_left["systemMessage"] == (f"wheypoint SessionStart: budget-too-small: a packet needs more than "
                                          f"{budget - room} characters")  # fmt: skip
    one_left = scene.fire("SessionStart", None, "--budget", str(budget - room + 1), session=OTHER)
    assert one_left["systemMessage"].endswith("the budget is 1")


@pytest.mark.parametrize(("session", "slug"), [
    ("ses_Q7x9K2m4P8r1", "q7x9k2m4"), ("abcd_XY12zz99", "xy12zz99"), ("abcde_XY12zz99", "abcdexy1"),
    ("a1_b2c3d4e5", "a1b2c3d4"), ("_b2c3d4e5f6", "b2c3d4e5"), ("ses_", "ses"), ("abcdefghij", "abcdefgh"),
    ("ÄÖ-ab12.cd34-ef", "ab12cd34"), ("!!!", "unknown"), ("", "unknown"),
])  # fmt: skip
def test_a_session_without_work_names_its_work_by_its_ids_first_letters_and_digits(session: str, slug: str) -> None:
    """A short letters-only type prefix (OpenCode's `ses_`) says nothing about the session and is left out."""
    assert session_slug("codex", session) == f"session-codex-{slug}"


def test_opencodes_precompact_answers_with_the_packet_of_the_work_it_kept(scene: Scene) -> None:
    """OpenCode's plugin calls PreCompact while compacting and adds `context` to the summary."""
    from test_transcripts_opencode import MAIN, build_db

    (scene.root / "data" / "opencode").mkdir(parents=True)
    build_db(scene.root / "data" / "opencode" / "opencode.db", MAIN)  # where OpenCode keeps its sessions
    stdin = json.dumps({"session_id": MAIN["id"], "cwd": str(scene.repo), "trigger": "auto"}).encode()
    answer = scene.raw("PreCompact", stdin, harness="opencode")
    record = scene.record("session-opencode-main")
    assert answer["message"] == f"wheypoint kept {len(record['meat'])} turn(s) verbatim in session-opencode-main r1"
    assert json.loads(answer["context"].splitlines()[1])["revision_id"] == record["revision_id"]
    # Claude Code's PreCompact gets no packet: its context would go nowhere (and a tight budget cannot fail it).
    transcript = scene.transcript([user("u1", "a prompt", OLD.format(0))])
    assert "systemMessage" in scene.fire("PreCompact", transcript, "--budget", "150", trigger="auto")
    assert "refused" not in scene.last() and scene.last()["kept"] == 1


def test_the_hook_log_makes_its_folder_for_its_owner_only(scene: Scene) -> None:
    """hook.log names works and what went wrong: the folder the log makes (here, with no session to note and no
    state to save first) is readable by its owner only."""
    scene.raw("SessionStart", json.dumps({"cwd": str(scene.repo)}).encode())
    assert (scene.home / "hooks").stat().st_mode & 0o777 == 0o700 and scene.last()["event"] == "SessionStart"


@pytest.mark.parametrize(("since", "again"), [(None, True), (0.0, False), (0.5, False), (59.9, False), (60.0, True),
                                              (-0.001, True)])  # fmt: skip
def test_a_session_is_noted_again_once_a_whole_minute_has_passed(since: float | None, again: bool) -> None:
    """hooks/state.py's `seen` at its edges, which a hook's own clock cannot hit on purpose."""
    from wheypoint.hooks import state as memory

    key = f"claude-code:{SID}"
    facts = {} if since is None else {"seen": 1_796_000_000}
    now = 1_796_000_000 + (since or 0.0)
    state: dict[str, Any] = {"sessions": {key: dict(facts)}}
    assert memory.seen(state, key, now) is again
    assert state["sessions"][key]["seen"] == (int(now) if again else 1_796_000_000)


# ---- what `hooks install` keeps and says (settings.py, install.py)


def test_install_keeps_a_persons_own_text_as_written(scene: Scene) -> None:
    settings = scene.root / "user" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{\n  "model": "opus",\n  "statusLine": "café ✓ 日本"\n}\n', encoding="utf-8")
    scene.cli("hooks", "install", "--harness", "claude-code")
    text = settings.read_text(encoding="utf-8")
    assert '"statusLine": "café ✓ 日本"' in text and '"hooks": {' in text  # not \\u-escaped


def test_install_notes_say_what_the_harness_needs_for_the_scope(scene: Scene) -> None:
    user_scope = scene.cli("hooks", "status", "--harness", "codex")["notes"]
    assert len(user_scope) == 1 and "trust" in user_scope[0]
    project = scene.cli("hooks", "status", "--harness", "codex", "--scope", "project")["notes"]
    assert project[0] == user_scope[0] and len(project) == 2 and ".codex folder" in project[1]
    assert len(scene.cli("hooks", "status", "--harness", "gemini", "--scope", "project")["notes"]) == 2
    assert len(scene.cli("hooks", "status", "--harness", "claude-code", "--scope", "project")["notes"]) == 1


BAD_INSTALLS = [
    (("--scope", "team"), "scope", "scope"),
    (("--command", "  "), "command", "takes the command"),
    (("--command", "run-my-hooks"), "command", "wheypoint"),
]


@pytest.mark.parametrize(("args", "parameter", "says"), BAD_INSTALLS)
def test_install_refuses_a_bad_scope_or_command_as_usage_and_writes_nothing(
    scene: Scene, args: tuple[str, ...], parameter: str, says: str
) -> None:
    refused = scene.cli("hooks", "install", "--harness", "codex", *args, code=2)
    assert refused["error"]["code"] == "usage" and refused["error"]["parameter"] == parameter
    assert says in refused["error"]["message"], refused["error"]["message"]
    assert not (scene.root / "user").exists()


def test_install_and_uninstall_step_over_groups_of_another_shape_and_leave_them_as_they_are(scene: Scene) -> None:
    """A group with no handler list (or that is no object) is not ours to read: it is kept, not tripped over."""
    settings = scene.root / "user" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    odd = [{"matcher": "startup"}, "a note someone left", {"matcher": "x", "hooks": "not a list"}]
    settings.write_text(json.dumps({"hooks": {"SessionStart": odd}}, indent=2) + "\n", encoding="utf-8")
    installed = scene.cli("hooks", "install", "--harness", "claude-code")
    assert all(event["current"] for event in installed["events"])
    groups = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["SessionStart"]
    assert groups[:3] == odd and len(groups) == 4
    scene.cli("hooks", "uninstall", "--harness", "claude-code")
    assert json.loads(settings.read_text(encoding="utf-8")) == {"hooks": {"SessionStart": odd}}


def test_install_over_a_duplicate_of_its_handler_keeps_every_other_group(scene: Scene) -> None:
    """Our handler in two groups: the first is replaced in place, the group that held only the duplicate goes, and
    a person's own group stays as it was."""
    settings = scene.root / "user" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    scene.cli("hooks", "install", "--harness", "claude-code")
    ours = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["SessionStart"][0]
    theirs = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo their own"}]}
    document = json.loads(settings.read_text(encoding="utf-8"))
    document["hooks"]["SessionStart"] = [ours, json.loads(json.dumps(ours)), theirs]
    settings.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    scene.cli("hooks", "install", "--harness", "claude-code")
    assert json.loads(settings.read_text(encoding="utf-8"))["hooks"]["SessionStart"] == [ours, theirs]


def test_install_that_cannot_write_the_settings_is_refused_and_leaves_them_as_they_were(scene: Scene) -> None:
    """A write that fails (here a file-size limit of 0 bytes, which refuses every write even to root) answers
    `settings-unwritable` naming the file, and the settings keep their text."""
    import resource

    settings = scene.root / "user" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"model": "opus"}\n', encoding="utf-8")

    def no_file_writes() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # Python ignores SIGXFSZ: a write fails with EFBIG

    done = subprocess.run([sys.executable, "-m", "wheypoint", "hooks", "install", "--harness", "claude-code",
                           "--format", "json"], cwd=scene.repo, env=scene.env, capture_output=True, text=True,
                          timeout=60, check=False, preexec_fn=no_file_writes)  # fmt: skip
    reply = json.loads(done.stdout)
    assert done.returncode != 0 and reply["error"]["code"] == "settings-unwritable", done.stdout + done.stderr
    assert str(settings) in reply["error"]["message"] and "Traceback" not in done.stderr
    assert settings.read_text(encoding="utf-8") == '{"model": "opus"}\n'
