"""`wheypoint mcp` under the official MCP inspector's CLI mode (`mcp-inspector --cli`), over stdio, with real calls.

Each call is one run of the pinned inspector as a user would type it, `mcp-inspector --cli <server command...>
--method <method> [--tool-name N --tool-arg k=v ...]`, from a real git checkout, with a scratch home and store: the
inspector starts the server, does the MCP handshake, makes the one request, prints the result as JSON and closes
the server. Asserted: `tools/list` gives every tool the server's own table defines, each definition whole (input
schema included); a first `checkpoint` is written and `show` reads it back; a bad intent given to `validate` comes
back as the tool's error result with the command's refusal code; `schema` gives the contract; `doctor` answers;
an unknown tool is a protocol error, as MCP asks; methods the server does not advertise are refused with -32601,
never a crash; the single-file runtime (`wheypoint.pyz` on a bare interpreter) passes `tools/list` too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import clis
import pytest

from conftest import BASE_PYTHON, make_repo, node_program
from wheypoint.cli.commands import COMMANDS
from wheypoint.mcp.server import Server
from wheypoint.mcp.tools import build_tools
from wheypoint.model.contract import CONTRACTS

pytestmark = pytest.mark.e2e

PACKAGE, VERSION = clis.PINS["mcp-inspector"]
CALL_TIMEOUT = 45  # seconds for one inspector run (two node processes and the server; the machine may be busy)
SERVER = [sys.executable, "-m", "wheypoint", "mcp"]
INTENT: dict[str, Any] = {
    "slug": "retry-backoff",
    "orientation": "Retry backoff for the payments client is designed, not yet built.",
    "next": {"move": "hold"},
    "decisions": [{"text": "Cap the backoff at 30 seconds.", "rationale": "The gateway gives up at 45 seconds."}],
    "working_context": ["src/retry.py:2"],
}


@dataclass
class Run:
    """One inspector run: its exit code, what it printed, and how long it took."""

    argv: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def json(self) -> Any:
        assert self.code == 0, self.explain()
        return json.loads(self.stdout)

    def explain(self) -> str:
        return f"{' '.join(self.argv)}\nexit {self.code}\nstdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"


@dataclass
class Place:
    """Where the server runs: a real checkout, and the hermetic environment (scratch HOME, XDG, WHEYPOINT_HOME)."""

    repo: Path
    env: dict[str, str]
    inspector: Path

    def inspect(self, method: str, *args: str, server: list[str] = SERVER) -> Run:
        # The store's variable is named with -e as well: an inspector may hand the server only a short default
        # environment (HOME, PATH, ...), as some harnesses do (docs/mcp.md says to pass it on).
        store = f"WHEYPOINT_HOME={self.env['WHEYPOINT_HOME']}"
        argv = [str(self.inspector), "--cli", "-e", store, *server, "--method", method, *args]
        started = time.monotonic()
        try:
            done = subprocess.run(argv, cwd=self.repo, env=self.env, capture_output=True, text=True,
                                  timeout=CALL_TIMEOUT, check=False)  # fmt: skip
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"{' '.join(argv)} did not finish in {CALL_TIMEOUT} s: {exc.stderr!r}")
        return Run(argv, done.returncode, done.stdout, done.stderr, time.monotonic() - started)

    def call(self, tool: str, **arguments: Any) -> Run:
        """tools/call: each argument as `--tool-arg key=value` (an object or a boolean as the inspector reads it)."""
        pairs = [f"{key}={value if isinstance(value, str) else json.dumps(value)}" for key, value in arguments.items()]
        return self.inspect("tools/call", "--tool-name", tool, *(["--tool-arg", *pairs] if pairs else []))


@pytest.fixture(scope="module")
def inspector() -> Path:
    node_program()
    return clis.installed("mcp-inspector")


@pytest.fixture
def place(tmp_path: Path, inspector: Path) -> Place:
    repo = make_repo(tmp_path / "shop", {"src/retry.py": "def backoff() -> int:\n    return 30\n"})
    return Place(repo, clis.scratch_env(tmp_path), inspector)


def expected_tools() -> list[dict[str, Any]]:
    """The server's own tools/list, built in process from the same command table."""
    return [tool.definition for tool in build_tools(COMMANDS).values()]


def result(run: Run) -> dict[str, Any]:
    """A tools/call result as the inspector printed it; its text and its structured content say the same."""
    try:
        answer: dict[str, Any] = json.loads(run.stdout)
    except ValueError:
        pytest.fail(f"the inspector printed no result\n{run.explain()}")
    assert set(answer) >= {"content", "structuredContent", "isError"}, run.explain()
    # The pinned inspector exits 0 on an error result too; inspector 2.x exits 5 (its TOOL_ERROR) on one.
    assert run.code in ((0, 5) if answer["isError"] is True else (0,)), run.explain()
    assert [item["type"] for item in answer["content"]] == ["text"]
    assert json.loads(answer["content"][0]["text"]) == answer["structuredContent"]
    return answer


def test_the_installed_inspector_is_the_pinned_one(inspector: Path) -> None:
    package = inspector.parent.parent / PACKAGE / "package.json"  # node_modules/.bin/mcp-inspector
    meta = json.loads(package.read_text(encoding="utf-8"))
    assert (meta["name"], meta["version"]) == (PACKAGE, VERSION), f"{package}: the e2e cache holds another version"
    assert "mcp-inspector" in meta["bin"]


def test_tools_list_gives_every_tool_the_server_defines(place: Place) -> None:
    run = place.inspect("tools/list")
    listed = run.json["tools"]
    expected = expected_tools()
    assert [tool["name"] for tool in listed] == [tool["name"] for tool in expected]
    assert len(listed) == 10 and "doctor" in [tool["name"] for tool in listed]
    for got, want in zip(listed, expected, strict=True):  # whole: input schema, description, annotations
        assert got == want, got["name"]
        assert got["inputSchema"]["type"] == "object"


def test_tool_calls_answer_as_the_commands_do(place: Place) -> None:
    bad = {"slug": "retry-backoff", "orientation": "x", "next": {"move": "nap"}}
    with ThreadPoolExecutor(max_workers=3) as pool:  # calls that need no store state run beside the write
        validate = pool.submit(place.call, "validate", intent=bad)
        schema = pool.submit(place.call, "schema", name="checkpoint-intent")
        unknown = pool.submit(place.call, "no_such_tool")
        written = result(place.call("checkpoint", intent=INTENT))
        assert written["isError"] is False
        reply = written["structuredContent"]
        assert reply["ok"] is True and reply["command"] == "checkpoint" and reply["revision_number"] == 1
        work = reply["work_id"]
        assert work.startswith("retry-backoff.") and Path(reply["note_path"]).is_file()
        assert Path(reply["note_path"]).resolve().is_relative_to(place.repo.resolve())
        assert (Path(place.env["WHEYPOINT_HOME"]) / "store.sqlite3").is_file()  # the scratch store, nothing else

        shown = result(place.call("show", work=work))
        assert shown["isError"] is False
        record = shown["structuredContent"]["record"]
        assert record["work_id"] == work and record["revision_id"] == reply["revision_id"]
        assert record["orientation"] == INTENT["orientation"]
        assert [entry["text"] for entry in record["entries"]] == [INTENT["decisions"][0]["text"]]

        doctor = result(place.call("doctor"))  # after the write: the store it checks has a record
        assert doctor["isError"] is False and doctor["structuredContent"]["command"] == "doctor"
        assert isinstance(doctor["structuredContent"]["healthy"], bool)

        refused = result(validate.result())
        assert refused["isError"] is True
        error = refused["structuredContent"]["error"]
        assert error["code"] == "invalid-intent"
        assert [(p["code"], p["path"]) for p in error["problems"]] == [("bad-value", "$.next.move")]

        contract = result(schema.result())
        assert contract["isError"] is False and contract["structuredContent"] == CONTRACTS["checkpoint-intent"]

        # Not a tool result: the pinned inspector sends the call and reports the server's protocol error (-32602);
        # inspector 2.x finds no such tool in tools/list and does not send it.
        missing_tool = unknown.result()
        assert missing_tool.code != 0 and "no_such_tool" in missing_tool.stderr, missing_tool.explain()
        asked = "-32602" in missing_tool.stderr
        assert not asked or "-32602: unknown tool: no_such_tool" in missing_tool.stderr, missing_tool.explain()


def test_methods_the_server_does_not_advertise_are_refused_not_crashed(place: Place) -> None:
    asked = Server(COMMANDS, lambda argv, stdin: (0, "{}")).initialize({"protocolVersion": "2025-11-25"})
    capabilities = asked["capabilities"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = {kind: pool.submit(place.inspect, f"{kind}/list") for kind in ("resources", "prompts")}
    for kind, future in runs.items():
        run = future.result()
        assert "Connection closed" not in run.stderr and "Traceback" not in run.stderr, run.explain()
        if kind in capabilities:
            assert isinstance(run.json[kind], list)
        elif run.code == 0:  # a client that reads the capabilities first does not ask (inspector 2.x)
            assert run.json[kind] == []
        else:  # the pinned inspector asks anyway: the server answers, method not found, as docs/mcp.md says
            assert run.code == 1 and f"-32601: method not found: {kind}/list" in run.stderr, run.explain()


def test_the_pyz_passes_tools_list(place: Place, pyz: Path) -> None:
    run = place.inspect("tools/list", server=[BASE_PYTHON, "-I", str(pyz), "mcp"])
    assert run.json["tools"] == expected_tools()
