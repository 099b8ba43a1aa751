"""`wheypoint mcp`: the official MCP client drives the real server process; raw JSON-RPC lines test the protocol."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, RUNTIMES, make_repo, missing, reap, runtime_argv
from wheypoint import __version__
from wheypoint.model.contract import CONTRACTS

try:  # the SDK is a development dependency (pip install -e '.[dev]')
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError
except ImportError:  # pragma: no cover
    ClientSession = None

TOOLS = ["checkpoint", "validate", "show", "log", "resolve", "list", "turns", "handoff_render", "schema", "doctor"]
INTENT: dict[str, Any] = {
    "slug": "retry-backoff",
    "orientation": "Retry backoff for the payment client is designed, not yet built.",
    "next": {"move": "hold"},
    "decisions": [{"text": "Cap the backoff at 30 seconds.", "rationale": "The gateway gives up at 45 seconds."}],
    "notes": "Recorded over MCP.",
    "working_context": ["src/retry.py:2"],
}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}  # fmt: skip


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"src/retry.py": "def backoff() -> int:\n    return 30\n"})


@pytest.fixture
def env(tmp_path: Path, home: Path) -> dict[str, str]:
    """An isolated store, and a home of its own so no real harness session is ever found."""
    (tmp_path / "user").mkdir()
    return {"WHEYPOINT_HOME": str(home), "HOME": str(tmp_path / "user")}


def full_env(env: dict[str, str]) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}, **env}


def cli(program: list[str], *args: str, cwd: Path, env: dict[str, str], stdin: bytes = b"") -> tuple[int, Any]:
    """The command line's own answer to the same call: (exit code, its JSON)."""
    done = subprocess.run([*program, *args], cwd=cwd, env=full_env(env), input=stdin, capture_output=True,
                          timeout=60, check=False)  # fmt: skip
    return done.returncode, json.loads(done.stdout)


def sdk() -> None:
    if ClientSession is None:
        missing("the mcp SDK is not installed (pip install -e '.[dev]')")


@asynccontextmanager
async def connect(program: list[str], cwd: Path, env: dict[str, str], errlog: Path) -> AsyncIterator[Any]:
    """A ClientSession of the official SDK on `wheypoint mcp` started as a subprocess, after its handshake."""
    sdk()
    params = StdioServerParameters(command=program[0], args=[*program[1:], "mcp"], env=env, cwd=str(cwd))
    with errlog.open("w") as log:
        async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
            session.init = await session.initialize()
            yield session


def structured(result: Any) -> Any:
    """A tool result's JSON, checked to be the same in its text block and its structured content."""
    assert len(result.content) == 1 and result.content[0].type == "text"
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


# ------------------------------------------------------------------------------------------------ the SDK client


@pytest.mark.anyio
@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_the_sdk_client_initializes_lists_and_calls_every_tool(
    runtime: str, request: pytest.FixtureRequest, repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    program = runtime_argv(runtime, request)
    async with connect(program, repo, env, tmp_path / "stderr.txt") as session:
        assert session.init.server_info.name == "wheypoint" and session.init.server_info.version == __version__
        assert session.init.protocol_version == "2025-11-25"
        assert session.init.capabilities.tools.list_changed is False
        listed = await session.list_tools()
        assert [tool.name for tool in listed.tools] == TOOLS
        for tool in listed.tools:
            assert tool.input_schema["type"] == "object" and tool.description
            assert "format" not in tool.input_schema["properties"]

        first = structured(await session.call_tool("checkpoint", {"intent": INTENT}))
        assert first["ok"] is True and first["command"] == "checkpoint" and first["revision_number"] == 1
        assert first["durability"] == "repo-snapshot" and Path(first["note_path"]).is_file()
        assert first["note_path"] == str(repo / ".cheese" / "notes" / "retry-backoff.md")
        base = first["revision_id"]
        update = {"slug": "retry-backoff", "base_revision_id": base,
                  "decisions": [{"text": "Full jitter.", "rationale": "It spreads retries best."}]}  # fmt: skip

        calls: list[tuple[str, dict[str, Any], list[str], bytes]] = [
            ("validate", {"intent": update}, ["validate", "-"], json.dumps(update).encode()),
            ("show", {"work": "retry-backoff"}, ["show", "retry-backoff"], b""),
            ("log", {"work": "retry-backoff"}, ["log", "retry-backoff"], b""),
            ("resolve", {"ref": "retry-backoff"}, ["resolve", "retry-backoff"], b""),
            ("list", {"grep": ["backoff"], "limit": 5}, ["list", "--grep", "backoff", "--limit", "5"], b""),
            ("handoff_render", {"ref": "retry-backoff", "budget": "4000"},
             ["handoff", "render", "retry-backoff", "--budget", "4000"], b""),
            ("schema", {"name": "checkpoint-intent"}, ["schema", "checkpoint-intent"], b""),
        ]  # fmt: skip
        for name, arguments, argv, stdin in calls:
            result = await session.call_tool(name, arguments)
            assert result.is_error is False, result.content
            # The same JSON as the command line gives for the same call, whatever the front door (validate's
            # would-be record digest covers the capture time, which moves between the two calls).
            ours, theirs = structured(result), cli(program, *argv, cwd=repo, env=env, stdin=stdin)[1]
            if name == "validate":
                assert ours.pop("record_digest").startswith("sha256:") and theirs.pop("record_digest")
            assert ours == theirs, name
        assert (await session.call_tool("validate", {"intent": update})).structured_content["valid"] is True
        assert (await session.call_tool("schema", {"name": "checkpoint-intent"})).structured_content == CONTRACTS[
            "checkpoint-intent"
        ]

        # No session of any harness exists in this scratch home: a refusal, with its code, as a tool error.
        turns = await session.call_tool("turns", {"limit": "3"})
        assert turns.is_error is True
        assert structured(turns)["error"]["code"] == "session-not-found"

        second = structured(await session.call_tool("checkpoint", {"intent": update, "no_note": True}))
        assert second["revision_number"] == 2 and second["parent_revision_id"] == base
        assert second["durability"] == "canonical-local"
        log = structured(await session.call_tool("log", {"work": "retry-backoff"}))
        assert [r["revision_number"] for r in log["revisions"]] == [1, 2]
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


@pytest.mark.anyio
async def test_a_refusal_is_a_tool_error_carrying_the_cli_json(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    program = [sys.executable, "-m", "wheypoint"]
    async with connect(program, repo, env, tmp_path / "stderr.txt") as session:
        assert not (await session.call_tool("checkpoint", {"intent": INTENT})).is_error
        # The work exists now: a write that does not name its head is refused, and nothing is written.
        again = dict(INTENT, notes="A second write with no base.")
        result = await session.call_tool("checkpoint", {"intent": again})
        assert result.is_error is True
        reply = structured(result)
        assert reply["ok"] is False and reply["error"]["code"] == "base-revision-required"
        code, expected = cli(program, "checkpoint", "-", cwd=repo, env=env, stdin=json.dumps(again).encode())
        assert code == 1 and reply == expected
        # A bad intent: every problem listed, as the command line lists them.
        bad = {"slug": "retry-backoff", "status": "ok", "decisions": [{"text": "No rationale."}]}
        reply = structured(await session.call_tool("validate", {"intent": bad}))
        assert reply["error"]["code"] == "invalid-intent"
        assert reply == cli(program, "validate", "-", cwd=repo, env=env, stdin=json.dumps(bad).encode())[1]
        assert {p["code"] for p in reply["error"]["problems"]} >= {"status-authored", "missing-field"}


@pytest.mark.anyio
async def test_arguments_that_do_not_fit_are_refused_by_name_never_dropped(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    program = [sys.executable, "-m", "wheypoint"]
    async with connect(program, repo, env, tmp_path / "stderr.txt") as session:
        cases: list[tuple[str, dict[str, Any], str | None, str]] = [
            ("show", {"work": "retry-backoff", "colour": "red"}, "colour", "is not an argument of show"),
            ("log", {"work": "x", "verbose": True, "depth": 2}, None, "unknown arguments depth, verbose"),
            ("checkpoint", {"intent": INTENT, "format": "text"}, "format", "is not an argument of checkpoint"),
            ("checkpoint", {}, "intent", "intent is required"),
            ("list", {"grep": "backoff"}, "grep", "grep takes an array of strings"),
            ("list", {"gated": "yes"}, "gated", "gated takes true or false"),
            ("turns", {"hook_payload": "-"}, "hook_payload", "cannot be - (standard input)"),
            ("show", {"work": "--help"}, "work", "cannot start with -"),
        ]
        for name, arguments, parameter, message in cases:
            result = await session.call_tool(name, arguments)
            assert result.is_error is True, (name, arguments)
            error = structured(result)["error"]
            assert error["code"] == "usage" and error.get("parameter") == parameter, error
            assert message in error["message"], error
        # A value is never read as a flag: `--help` is what list searches for, not a request for help.
        reply = structured(await session.call_tool("list", {"grep": ["--help"], "gated": False}))
        assert reply["ok"] is True and reply["count"] == 0
        # An unknown tool is a protocol error (-32602), not a tool result.
        with pytest.raises(MCPError) as raised:
            await session.call_tool("delete_everything", {})
        assert raised.value.error.code == -32602 and "unknown tool" in raised.value.error.message


@pytest.mark.anyio
async def test_a_client_that_probes_server_discover_falls_back_to_initialize(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    sdk()
    from mcp import Client

    params = StdioServerParameters(command=sys.executable, args=["-m", "wheypoint", "mcp"], env=env, cwd=str(repo))
    async with Client(params) as client:  # mode "auto": server/discover first, initialize when it is -32601
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("schema", {"name": "wheypoint-record"})
        assert result.structured_content == CONTRACTS["wheypoint-record"]


def test_the_intent_schema_is_the_contract_and_every_input_schema_is_valid_json_schema() -> None:
    try:
        import jsonschema
    except ImportError:
        missing("jsonschema is not installed (pip install -e '.[dev]')")  # skips here, fails under CI
    from wheypoint.cli.commands import COMMANDS
    from wheypoint.mcp.tools import build_tools

    tools = build_tools(COMMANDS)
    assert list(tools) == TOOLS
    contract = CONTRACTS["checkpoint-intent"]
    for name, tool in tools.items():
        schema = tool.definition["inputSchema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        if name in ("checkpoint", "validate"):
            assert schema["required"] == ["intent"] and schema["$defs"] == contract["$defs"]
            assert schema["properties"]["intent"] == {k: v for k, v in contract.items() if not k.startswith("$")}
            # The lifted $defs resolve: the intent above validates, a status is refused, as the runtime refuses.
            validator = jsonschema.Draft202012Validator(schema)
            assert not list(validator.iter_errors({"intent": INTENT}))
            assert list(validator.iter_errors({"intent": {**INTENT, "next": {"move": "nap"}}}))
        assert not {"format", "json", "text"} & set(schema["properties"])
    switches = tools["list"].definition["inputSchema"]["properties"]
    assert switches["gated"]["type"] == "boolean" and switches["grep"]["type"] == "array"
    assert switches["scope"]["enum"] == ["project", "machine"] and "enum" not in switches["since"]


# ------------------------------------------------------------------------------------------------ raw protocol


def exchange(program: list[str], messages: list[Any], cwd: Path, env: dict[str, str]) -> tuple[int, list[Any], str]:
    """Send lines (bytes as they are, anything else as JSON) and end the input; (exit code, replies, stderr)."""
    data = b"".join((m if isinstance(m, bytes) else json.dumps(m).encode()) + b"\n" for m in messages)
    done = subprocess.run([*program, "mcp"], input=data, cwd=cwd, env=full_env(env), capture_output=True,
                          timeout=60, check=False)  # fmt: skip
    lines = done.stdout.split(b"\n")
    assert lines[-1] == b"", done.stdout  # every reply is a whole line
    return done.returncode, [json.loads(line) for line in lines[:-1]], done.stderr.decode()


def rpc(ident: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, **({"params": params} if params is not None else {})}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_raw_protocol_errors_and_notifications(
    runtime: str, request: pytest.FixtureRequest, repo: Path, env: dict[str, str]
) -> None:
    program = runtime_argv(runtime, request)
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},  # a notification: no reply
        b'{"jsonrpc": "2.0", "id": 2, "method": ',  # malformed
        b"\xff\xfe not utf-8",
        rpc(3, "resources/list"),
        rpc(4, "server/discover", {"supportedVersions": ["2026-07-28"]}),
        {"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}},  # unknown notification: still no reply
        {"jsonrpc": "2.0", "id": 5},  # no method
        [rpc(6, "ping")],  # a batch
        {"jsonrpc": "1.0", "id": 7, "method": "ping"},
        {"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"},
        rpc(8, "tools/call", {"arguments": {}}),
        rpc(9, "tools/call", {"name": "nope"}),
        rpc(10, "tools/call", {"name": "show", "arguments": ["retry-backoff"]}),
        rpc(11, "tools/list", {"cursor": "page-2"}),
        rpc(12, "initialize", {}),
        b'{"jsonrpc": "2.0", "id": 13, "method": "ping", "method": "tools/list"}',
        {"jsonrpc": "2.0", "id": 99, "result": {}},  # a response: this server sent no request, so it is ignored
        b"",  # blank lines are skipped
        rpc(14, "ping"),
    ]
    code, replies, stderr = exchange(program, messages, repo, env)
    assert code == 0, stderr
    assert all(r["jsonrpc"] == "2.0" and set(r) in ({"jsonrpc", "id", "result"}, {"jsonrpc", "id", "error"})
               for r in replies)  # fmt: skip
    errors = [(r["id"], r["error"]["code"]) for r in replies if "error" in r]
    assert errors == [
        (None, -32700), (None, -32700), (3, -32601), (4, -32601), (5, -32600), (None, -32600), (7, -32600),
        (None, -32600), (8, -32602), (9, -32602), (10, -32602), (11, -32602), (12, -32602), (13, -32600),
    ]  # fmt: skip
    answered = [r["id"] for r in replies if "result" in r]
    assert answered == [1, 14] and replies[-1]["result"] == {}
    assert "Traceback" not in stderr


VERSIONS = [("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("2024-11-05", "2025-11-25"),
            ("1999-01-01", "2025-11-25")]  # fmt: skip


@pytest.mark.parametrize(("asked", "answered"), VERSIONS)
def test_initialize_answers_the_clients_version_when_supported_else_the_newest(
    asked: str, answered: str, tmp_path: Path, env: dict[str, str]
) -> None:
    message = dict(INITIALIZE, params=dict(INITIALIZE["params"], protocolVersion=asked))
    code, replies, _ = exchange([sys.executable, "-m", "wheypoint"], [message], tmp_path, env)
    assert code == 0 and len(replies) == 1
    result = replies[0]["result"]
    assert result["protocolVersion"] == answered
    assert result["serverInfo"]["name"] == "wheypoint" and result["serverInfo"]["version"] == __version__
    assert result["capabilities"] == {"tools": {"listChanged": False}}


def test_stdout_carries_nothing_but_replies_and_each_comes_before_the_next_request(
    repo: Path, env: dict[str, str]
) -> None:
    """Line by line over a live pipe: a reply arrives while the input is still open; closing it ends the server."""
    process = subprocess.Popen([sys.executable, "-m", "wheypoint", "mcp"], cwd=repo, env=full_env(env),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert process.stdin is not None and process.stdout is not None

    def ask(message: dict[str, Any]) -> Any:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline())

    try:
        assert ask(INITIALIZE)["result"]["serverInfo"]["name"] == "wheypoint"
        written = ask(rpc(2, "tools/call", {"name": "checkpoint", "arguments": {"intent": INTENT}}))
        assert written["result"]["isError"] is False
        assert written["result"]["structuredContent"]["revision_number"] == 1
        refused = ask(rpc(3, "tools/call", {"name": "show", "arguments": {"work": "no-such-work"}}))
        assert refused["result"]["isError"] is True
        assert refused["result"]["structuredContent"]["error"]["code"] == "record-missing"
        assert ask(rpc(4, "ping")) == {"jsonrpc": "2.0", "id": 4, "result": {}}
        process.stdin.close()
        assert process.wait(timeout=30) == 0
        assert process.stdout.read() == b""  # nothing after the last reply
    finally:
        reap(process)


def test_stray_output_of_a_command_goes_to_stderr_never_into_the_protocol(tmp_path: Path) -> None:
    """Whatever writes to file descriptor 1 or sys.stdout while a call runs lands on stderr."""
    probe = """
import os, sys
from wheypoint.cli.commands import COMMANDS
from wheypoint.mcp.server import serve

def runner(argv, stdin=b""):
    os.write(1, b"stray bytes on fd 1\\n")
    print("a stray print")
    return 0, '{"ok": true, "command": "schema"}\\n'

sys.exit(serve(COMMANDS, runner))
"""
    lines = [INITIALIZE, rpc(2, "tools/call", {"name": "schema", "arguments": {"name": "x"}})]
    done = subprocess.run([sys.executable, "-c", probe], input=b"".join(json.dumps(m).encode() + b"\n" for m in lines),
                          cwd=tmp_path, capture_output=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[1]["result"]["structuredContent"] == {"ok": True, "command": "schema"}
    assert b"stray bytes on fd 1" in done.stderr and b"a stray print" in done.stderr


# What the command line itself loads before it runs any command.
STARTED = ("boot", "cli", "cli.main", "cli.commands", "cli.grammar", "cli.hookline", "jsontext", "model",
           "model.errors", "model.records", "model.replies")


def test_mcp_starts_without_loading_the_tools_the_application_or_heavy_modules(tmp_path: Path) -> None:
    """Up to its first answer the server has loaded the command line and itself, nothing more (`python -S`)."""
    probe = "import sys; from wheypoint.cli.main import main; code = main(['mcp']); " \
            "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'); sys.exit(code)"  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "WHEYPOINT_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run([sys.executable, "-S", "-c", probe], input=json.dumps(INITIALIZE).encode() + b"\n",
                          cwd=tmp_path, env=env, capture_output=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["serverInfo"]["name"] == "wheypoint"
    modules = set(done.stderr.decode().rpartition("MODULES ")[2].split())
    ours = {m for m in modules if m.startswith("wheypoint")}
    assert ours == {"wheypoint", "wheypoint.mcp", "wheypoint.mcp.server", *(f"wheypoint.{m}" for m in STARTED)}
    heavy = {"typing", "pathlib", "dataclasses", "inspect", "subprocess", "threading", "asyncio", "tempfile",
             "contextlib", "argparse", "traceback", "sqlite3"}  # fmt: skip
    assert not heavy & modules


def test_docs_mcp_lists_every_tool_with_every_argument() -> None:
    """docs/mcp.md's table of tools cannot drift from the tools the command table generates."""
    from wheypoint.cli.commands import COMMANDS
    from wheypoint.mcp.tools import build_tools

    rows = {line.split("|")[1].strip(): line for line in (ROOT / "docs" / "mcp.md").read_text().splitlines()
            if line.startswith("| ") and line.count("|") == 4}  # fmt: skip
    for name, tool in build_tools(COMMANDS).items():
        assert name in rows, f"docs/mcp.md has no row for the tool {name}"
        cells = rows[name].split("|")[3]
        documented = [arg.strip("*` ") for arg in cells.split(",")]
        assert documented == list(tool.params), name
        assert [arg for arg in documented if f"**`{arg}`**" in cells] == list(tool.required), name


def test_an_over_long_line_is_refused_and_skipped_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The line limit, with a small limit: the long line is answered -32600 and the next one is served."""
    import io

    from wheypoint.cli.commands import COMMANDS
    from wheypoint.mcp import server

    monkeypatch.setattr(server, "MAX_LINE", 64)
    ping = json.dumps(rpc(2, "ping")).encode() + b"\n"
    out = io.BytesIO()
    assert server.serve(COMMANDS, lambda argv, stdin=b"": (0, "{}"), (io.BytesIO(b"x" * 200 + b"\n" + ping), out)) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["id"], r.get("error", {}).get("code")) for r in replies] == [(None, -32600), (2, None)]
    # Input that ends inside an over-long line: the refusal, then the end.
    out = io.BytesIO()
    assert server.serve(COMMANDS, lambda argv, stdin=b"": (0, "{}"), (io.BytesIO(b"y" * 200), out)) == 0
    assert [json.loads(line)["error"]["code"] for line in out.getvalue().splitlines()] == [-32600]
