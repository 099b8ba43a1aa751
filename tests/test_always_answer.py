"""The front doors always answer: the MCP server survives any line, a named path that is no regular file is refused
at once on every surface, and a hook that runs out of time still prints its reply and exits 0 (issue 20, §1).

Every case runs a real `python -m wheypoint` process with a hard `timeout`, so a regression fails here, never hangs.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import make_repo

TOKEN = "ghp_" + "Zq9Xw8Vu7T" * 3 + "s6R5p4"  # built here so no credential-looking literal sits in the repository
LIMIT = 20  # seconds any one process may take before the test calls it a hang


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WHEYPOINT_", "CLAUDE", "CODEX", "GEMINI"))}
    for name in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[name] = str(root / name.lower())
    env["WHEYPOINT_HOME"] = str(root / "store-home")
    env.update(extra)
    return env


def _run(root: Path, cwd: Path, args: list[str], stdin: bytes = b"", **extra: str) -> tuple[int, str, str, float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "wheypoint", *args], input=stdin, capture_output=True, cwd=cwd,
                          env=_env(root, **extra), timeout=LIMIT, check=False)  # fmt: skip
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"), time.monotonic() - started


@pytest.fixture
def place(tmp_path: Path) -> dict[str, Path]:
    """A checkout, and the three kinds of path that are no regular file: an endless device, a FIFO, a folder."""
    repo = make_repo(tmp_path / "repo", {"a.py": "a\n"})
    fifo = tmp_path / "no-writer.fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    return {"root": tmp_path, "repo": repo, "/dev/zero": Path("/dev/zero"), "fifo": fifo, "folder": folder}


KINDS = ("/dev/zero", "fifo", "folder")


# ------------------------------------------------------------------------------------------------ MCP: any line


def _mcp(root: Path, cwd: Path, lines: list[bytes]) -> tuple[list[dict[str, Any]], str]:
    done = subprocess.run([sys.executable, "-m", "wheypoint", "mcp"], input=b"\n".join(lines) + b"\n",
                          capture_output=True, cwd=cwd, env=_env(root), timeout=LIMIT * 3, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-2000:]
    assert b"Traceback" not in done.stderr, done.stderr.decode("utf-8", "replace")[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr.decode("utf-8", "replace")


def _request(ident: int, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_mcp_answers_any_line_and_serves_the_next(place: dict[str, Path]) -> None:
    hostile = [
        b"[" * 5000,  # RecursionError out of json.loads: the server used to die here
        b'{"a":' * 100_000,
        b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"x":' + b"[" * 900 + b"]" * 900 + b"}}",
        _request(4, "tools/call", {"name": "validate", "arguments": {"intent": {"slug": "x", "notes": _deep(900)}}}),
        _request(5, "tools/call", {"name": "turns", "arguments": {"transcript": "t", "x": _deep(200)}}),
        b"\xff\xfe\x00binary\x80",
        b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":' + b"{" * 3000 + b"}",
        _request(8, "tools/list"),
    ]
    replies, _ = _mcp(place["root"], place["repo"], hostile)
    assert len(replies) == len(hostile), replies
    for reply in replies[:-1]:
        assert reply["error"]["code"] in (-32700, -32600, -32602), reply
    assert [reply["id"] for reply in replies] == [None, None, 3, 4, 5, None, None, 8]
    names = [tool["name"] for tool in replies[-1]["result"]["tools"]]
    assert "checkpoint" in names and "turns" in names


def test_deep_arguments_within_the_limit_reach_the_tool_and_are_judged_there(place: dict[str, Path]) -> None:
    # Nesting the server lets through is judged by the command (a coded refusal), never a RecursionError later on.
    intent = {"slug": "deep-work", "orientation": "x", "next": {"move": "hold"}, "notes": _deep(55)}
    call = _request(1, "tools/call", {"name": "validate", "arguments": {"intent": intent}})
    replies, _ = _mcp(place["root"], place["repo"], [call])
    result = replies[0]["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "invalid-intent"


def test_no_mcp_reply_echoes_a_credential(place: dict[str, Path]) -> None:
    lines = [
        _request(1, TOKEN),  # -32601 method not found: <method>
        _request(2, "tools/call", {"name": TOKEN}),  # -32602 unknown tool: <name>
        _request(3, "tools/call", {"name": "show", "arguments": {TOKEN: "x"}}),  # the tool's refusal
        _request(4, "tools/call", {"name": "show", "arguments": {"work": TOKEN}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/" + TOKEN}).encode(),  # logged on stderr
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {"cursor": TOKEN}}).encode(),
        b'{"jsonrpc":"2.0","id":7,"method":"' + TOKEN.encode() + b'"',  # a parse error
        _request(8, "ping"),
    ]
    replies, stderr = _mcp(place["root"], place["repo"], lines)
    text = json.dumps(replies)
    assert TOKEN not in text and TOKEN[:20] not in text, text
    assert TOKEN not in stderr
    assert "[redacted" in replies[0]["error"]["message"] and "[redacted" in replies[1]["error"]["message"]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 8, "result": {}}


@pytest.mark.parametrize("kind", KINDS)
def test_an_mcp_tool_given_no_regular_file_answers_and_the_server_goes_on(place: dict[str, Path], kind: str) -> None:
    path = str(place[kind])
    lines = [
        _request(1, "tools/call", {"name": "turns", "arguments": {"transcript": path}}),
        _request(2, "tools/call", {"name": "validate", "arguments": {"intent": {"slug": "w"}, "hook_payload": path}}),
        _request(3, "tools/list"),
    ]
    started = time.monotonic()
    replies, _ = _mcp(place["root"], place["repo"], lines)
    assert time.monotonic() - started < LIMIT
    codes = [reply["result"]["structuredContent"]["error"]["code"] for reply in replies[:2]]
    assert codes == ["transcript-unreadable", "hook-payload-unreadable"], replies
    assert replies[2]["result"]["tools"]


def test_whatever_a_line_raises_past_every_check_is_answered_and_the_loop_goes_on() -> None:
    """The class, not the example: any exception under a request (here a RecursionError and a MemoryError from the
    command a tool runs) is a -32603 reply with the request's id, and the next line is served."""
    import io

    from wheypoint.cli.commands import COMMANDS
    from wheypoint.mcp.server import serve

    raised = iter([RecursionError("maximum recursion depth exceeded"), MemoryError()])

    def runner(argv: list[str], stdin: bytes) -> tuple[int, str]:
        raise next(raised)

    call = {"name": "schema", "arguments": {"name": "checkpoint-intent"}}
    lines = [_request(1, "tools/call", call), _request(2, "tools/call", call), _request(3, "ping")]
    out = io.BytesIO()
    assert serve(COMMANDS, runner, (io.BytesIO(b"\n".join(lines) + b"\n"), out)) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["id"], r.get("error", {}).get("code")) for r in replies] == [(1, -32603), (2, -32603), (3, None)]


# ------------------------------------------------------------------------- files: only regular ones, never blocking


def _payload(transcript: str, cwd: Path) -> bytes:
    return json.dumps({"session_id": "s1", "transcript_path": transcript, "cwd": str(cwd), "trigger": "manual",
                       "hook_event_name": "PreCompact", "source": "startup"}).encode()  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("event", ["PreCompact", "SessionStart", "Stop"])
def test_a_hook_given_no_regular_transcript_answers_at_once(place: dict[str, Path], kind: str, event: str) -> None:
    code, out, err, seconds = _run(place["root"], place["repo"], ["hook", event, "--harness", "claude-code"],
                                   _payload(str(place[kind]), place["repo"]))  # fmt: skip
    assert code == 0 and seconds < LIMIT, err
    reply = json.loads(out)
    assert isinstance(reply, dict)
    if event == "PreCompact":  # the rescue is what reads the transcript: its reply says why it was skipped
        assert "transcript-unreadable" in reply["systemMessage"], reply


FILE_FLAGS = [
    (["turns", "--transcript", "{path}"], "transcript-unreadable"),
    (["snapshot", "--stream", "s", "--transcript", "{path}"], "transcript-unreadable"),
    (["checkpoint", "w", "--orientation", "o", "--next", "hold", "--notes-file", "{path}"], "notes-unreadable"),
    (["snapshot", "--stream", "s", "--summary-file", "{path}"], "summary-unreadable"),
    (["validate", "--intent", "{path}"], "intent-unreadable"),
    (["validate", "w", "--orientation", "o", "--next", "hold", "--hook-payload", "{path}"], "hook-payload-unreadable"),
    (["checkpoint", "w", "--orientation", "o", "--next", "hold", "--compacted", "{path}"],
     "compaction-proof-unreadable"),
]  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("args", "wanted"), FILE_FLAGS, ids=[" ".join(a[:1] + a[-2:-1]) for a, _ in FILE_FLAGS])
def test_a_file_flag_naming_no_regular_file_is_refused_at_once(place: dict[str, Path], kind: str, args: list[str],
                                                               wanted: str) -> None:  # fmt: skip
    argv = [arg.format(path=place[kind]) for arg in args]
    code, out, err, seconds = _run(place["root"], place["repo"], argv)
    assert code == 1 and seconds < LIMIT, (out, err)
    error = json.loads(out)["error"]
    assert error["code"] == wanted, error
    assert "not a regular file" in error["message"] or "folder" in error["message"], error


def test_the_guard_opens_regular_files_only_and_never_blocks(place: dict[str, Path]) -> None:
    from wheypoint.model.regular import NotRegularFile, open_regular

    regular = place["root"] / "plain.txt"
    regular.write_bytes(b"abc")
    with open_regular(regular) as handle:
        assert handle.read() == b"abc"
        assert os.get_blocking(handle.fileno())  # the non-blocking open is undone before the file is handed over
    for kind, error in (("/dev/zero", NotRegularFile), ("fifo", NotRegularFile), ("folder", IsADirectoryError)):
        with pytest.raises(error):
            open_regular(place[kind])
    with pytest.raises(FileNotFoundError):
        open_regular(place["root"] / "absent")


# ------------------------------------------------------------------------------------------------- hook deadline


def test_every_deadline_is_well_inside_the_limit_wheypoint_installs() -> None:
    from wheypoint.app.harness_files import EVENTS, PLUGIN_EVENTS
    from wheypoint.hooks.events import DEADLINES
    from wheypoint.hooks.events import EVENTS as NAMES

    for harness, events in EVENTS.items():
        for event, limit in events:
            seconds = limit / 1000 if harness == "gemini" else limit
            assert DEADLINES[NAMES[event]] <= seconds * 0.7, (harness, event)
    for event, milliseconds in PLUGIN_EVENTS:
        assert DEADLINES[NAMES[event]] <= milliseconds / 1000 * 0.7, ("opencode", event)


def _hook_with_open_stdin(place: dict[str, Path], deadline: str) -> tuple[int, str, float]:
    """A hook whose payload never ends: its stdin is a pipe whose writer stays open."""
    reader, writer = os.pipe()
    started = time.monotonic()
    try:
        argv = [sys.executable, "-m", "wheypoint", "hook", "PreCompact", "--harness", "claude-code"]
        process = subprocess.Popen(
            argv,
            stdin=reader,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=place["repo"],
            env=_env(place["root"], WHEYPOINT_HOOK_DEADLINE=deadline),
        )
        os.close(reader)
        try:
            out, _ = process.communicate(timeout=LIMIT)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    finally:
        os.close(writer)
    return process.returncode, out.decode("utf-8"), time.monotonic() - started


def test_a_hook_past_its_deadline_answers_says_what_it_skipped_and_exits_0(place: dict[str, Path]) -> None:
    code, out, seconds = _hook_with_open_stdin(place, "1")
    assert code == 0
    assert seconds < 1 + 5, seconds
    message = json.loads(out)["systemMessage"]
    assert "deadline" in message and "skipped: the rescue checkpoint" in message, message
    log = (place["root"] / "store-home" / "hooks" / "hook.log").read_text(encoding="utf-8").splitlines()
    entry = json.loads(log[-1])
    assert entry["deadline"] == 1.0 and entry["event"] == "PreCompact" and "rescue" in entry["skipped"]


def _transcript(path: Path, cwd: Path, turns: int) -> None:
    lines = [{"type": "user", "uuid": f"u{n}", "sessionId": "s1", "cwd": str(cwd), "timestamp": "2026-11-30T10:00:00Z",
              "message": {"role": "user", "content": f"keep it short, turn {n} " + "word " * 40}}
             for n in range(turns)]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_a_rescue_cut_by_its_deadline_leaves_the_store_whole_and_the_next_hook_works(place: dict[str, Path]) -> None:
    transcript = place["root"] / "long.jsonl"
    # 30,000 prompts: a whole rescue of them takes 20 s on a slow machine and still seconds on one five times as
    # fast, so the 1.5 s deadline stops it midway on any (3,000 did not: a fast CI machine kept them all in time)
    _transcript(transcript, place["repo"], 30000)
    payload = _payload(str(transcript), place["repo"])
    argv = ["hook", "PreCompact", "--harness", "claude-code"]
    code, out, err, seconds = _run(place["root"], place["repo"], argv, payload, WHEYPOINT_HOOK_DEADLINE="1.5")
    assert code == 0 and seconds < 1.5 + 5, (seconds, err)
    assert "deadline" in json.loads(out)["systemMessage"]

    def stores() -> list[Path]:  # looked for each time: a cut before the first commit leaves no store yet
        home = place["root"] / "store-home"
        return list(home.rglob("*.sqlite*")) + list(home.rglob("*.db"))

    for store in [s for s in stores() if s.suffix in (".sqlite", ".db", ".sqlite3")]:
        with sqlite3.connect(store) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    kept = _session_revisions(stores())
    # The next hook, on the store the cut left, goes on where the cut stopped. Its own deadline is under LIMIT:
    # with the default (20 s, the harness's timeout less a margin) the rest of this rescue takes longer than LIMIT.
    # It reads the whole transcript again first (the cut one noted no read mark): 8 s leave room for that on a
    # loaded machine, where 4 s once ran out before its first revision.
    code, out, err, _ = _run(place["root"], place["repo"], argv, payload, WHEYPOINT_HOOK_DEADLINE="8")
    assert code == 0 and isinstance(json.loads(out), dict), err
    revisions = _session_revisions(stores())
    assert len(revisions) > len(kept), (len(kept), len(revisions), out)
    assert revisions[: len(kept)] == kept  # what the cut rescue wrote stays as it was
    for slug in {slug for slug, _ in revisions}:  # each work of the session (its parts) numbered without a gap
        numbers = [number for name, number in revisions if name == slug]
        assert numbers == list(range(1, len(numbers) + 1)), (slug, numbers)


def _session_revisions(stores: list[Path]) -> list[tuple[str, int]]:
    """(slug, revision number) of every revision of the session's rescue works (its parts), in the order written."""
    found: list[tuple[str, int]] = []
    for store in [s for s in stores if s.suffix in (".sqlite", ".db", ".sqlite3")]:
        with sqlite3.connect(store) as conn:
            found += conn.execute("SELECT w.slug, r.number FROM revisions r JOIN works w ON w.work_id = r.work_id "
                                  "WHERE w.slug = ? OR w.slug LIKE ? ORDER BY r.rowid",
                                  ("session-claude-code-s1", "session-claude-code-s1-part-%")).fetchall()  # fmt: skip
    return found


def test_a_fifo_where_a_git_file_a_harness_setting_or_the_hook_state_lives_is_never_waited_on(
    place: dict[str, Path],
) -> None:
    """Files no flag names but every command reads: git's own (config, packed-refs), the harnesses' settings
    and Codex's config.toml that doctor reads, the hooks' state. A FIFO in any of them must not hang a command."""
    root, repo = place["root"], place["repo"]
    for name in ("packed-refs", "config"):
        (repo / ".git" / name).unlink(missing_ok=True)
        os.mkfifo(repo / ".git" / name)
    home = root / "home"
    for rel in (".claude/settings.json", ".codex/config.toml", ".gemini/settings.json"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(home / rel)
    (root / "store-home" / "hooks").mkdir(parents=True)
    code, out, err, _ = _run(root, repo, ["checkpoint", "w", "--orientation", "O.", "--next", "hold", "--notes", "N."])
    assert code == 0, out + err
    project = json.loads(out)["project"]
    os.mkfifo(root / "store-home" / "hooks" / f"{project}.json")
    payload = json.dumps({"session_id": "5a8b7e8e-4b0c-4c8e-9d35-2a6f1c0e7f11", "cwd": str(repo),
                          "hook_event_name": "SessionStart", "source": "startup"}).encode()  # fmt: skip
    for args, stdin in ((["show", "w"], b""), (["list"], b""), (["doctor", "--format", "json"], b""),
                        (["hooks", "status", "--harness", "claude-code"], b""),
                        (["hook", "SessionStart", "--harness", "claude-code"], payload)):  # fmt: skip
        code, out, err, _ = _run(root, repo, args, stdin=stdin)  # the runner's timeout fails a wait
        assert "Traceback" not in err and json.loads(out), (args, out, err)
