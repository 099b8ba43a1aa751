"""OpenCode 1.18.33 end to end: the real CLI, headless, against the mock model, with wheypoint's plugin, MCP server
and skill installed as a user would (`hooks install`, an `mcp` entry in opencode.json, the config's skills folder).

Every prompt is one `opencode run` reading it from stdin (a prompt given as an argument is stored with quotes),
`--continue` inside the session. OpenCode has no headless `/compact`: the mock answers P3 with an input token
count past the model's context limit (set small in the config), once, so OpenCode compacts on overflow right after
P3's reply, then P4 goes on in the compacted session and P5 opens a new one. Asserted from the store, hook.log, the
database OpenCode wrote and the request bodies the mock logged: every hook fired and none failed; the rescue holds
the three typed prompts byte for byte and nothing else; `turns` finds each typed prompt once; the resume packet
reached the model whole, once in each request's context (a system prompt entry), never in a user's message, after
the compaction and in the new session; the skill and every tool `wheypoint mcp` lists were offered; the prompts
reached the model intact.

Set WHEYPOINT_E2E_RECORD=1 to keep the sessions' rows (paths rewritten to /home/dev/e2e/...) as
tests/data/recorded/opencode-<version>-e2e.json (tests/test_recorded_opencode.py reads it).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import clis
import mockmodel
import pytest
import wire_chat
from scenario import P1, P2, P3, P4, P5, PACKET_HEAD, strings

from conftest import make_repo

pytestmark = pytest.mark.e2e

EVENTS = ("PreCompact", "SessionStart")  # the hooks the plugin calls
ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "skill" / "wheypoint"
RECORDED = ROOT / "tests" / "data" / "recorded"
VERSION = clis.PINS["opencode"][1]
TIMEOUT = 120  # seconds for one CLI call (OpenCode starts its MCP servers and a file watcher on each)
MODEL = "mock-model"
CONTEXT_LIMIT = 16000  # tokens: OpenCode compacts once a reply's tokens reach this less the output limit
OUTPUT_LIMIT = 1000
RECORDED_TABLES = ("project", "session", "message", "part")


@dataclass
class Step:
    """One `opencode run`: what was typed, and the request bodies the mock got meanwhile."""

    prompt: str
    new_session: bool
    requests: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""


@dataclass
class Outcome:
    root: Path
    repo: Path
    env: dict[str, str]
    steps: list[Step]
    log_path: Path

    @property
    def home(self) -> Path:
        return Path(self.env["WHEYPOINT_HOME"])

    @property
    def database(self) -> Path:
        return Path(self.env["XDG_DATA_HOME"]) / "opencode" / "opencode.db"

    def hook_log(self) -> list[dict[str, Any]]:
        path = self.home / "hooks" / "hook.log"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []

    def sessions(self) -> list[str]:
        """The top-level sessions OpenCode wrote, oldest first."""
        with sqlite3.connect(f"{self.database.as_uri()}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created, id").fetchall()
        return [row[0] for row in rows]

    def requests(self) -> list[dict[str, Any]]:
        return [body for step in self.steps for body in step.requests]

    def why(self, what: str) -> str:
        """A failure message: what failed, the hook log, and where the request bodies are."""
        log = "\n".join(json.dumps(e, ensure_ascii=False) for e in self.hook_log())
        return f"{what}\n--- hook.log:\n{log}\n--- request bodies: {self.log_path}"


def run(argv: list[str], env: dict[str, str], cwd: Path, stdin: str = "",
        timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=timeout,
                          check=False)  # fmt: skip


def configure(tmp_path: Path, url: str) -> tuple[dict[str, str], Path]:
    """A scratch home and checkout with OpenCode pointed at the mock, and wheypoint installed in its config."""
    env = clis.scratch_env(tmp_path)
    repo = make_repo(tmp_path / "repo")
    # OpenCode takes its working folder from PWD when set: the developer's would make it work there instead.
    env.update(PWD=str(repo), OPENCODE_DISABLE_MODELS_FETCH="true", OPENCODE_DISABLE_AUTOUPDATE="true")
    config = Path(env["XDG_CONFIG_HOME"]) / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    model = {"name": "Mock", "limit": {"context": CONTEXT_LIMIT, "output": OUTPUT_LIMIT}}
    settings = {
        "$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
        "model": f"mock/{MODEL}", "small_model": f"mock/{MODEL}",
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                              "options": {"baseURL": url + "/v1", "apiKey": "mock-key"}, "models": {MODEL: model}}},
        "mcp": {"wheypoint": {"type": "local", "command": [sys.executable, "-m", "wheypoint", "mcp"]}},
    }  # fmt: skip
    (config / "opencode.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    # OpenCode installs @opencode-ai/plugin (for plugins' type imports) into each config folder with npm when that
    # folder has no node_modules or its lock file lacks it. wheypoint's plugin imports nothing of it: this stands in
    # for the installed package so the run needs no registry.
    (config / "node_modules").mkdir()
    dependency = {"@opencode-ai/plugin": VERSION}
    (config / "package.json").write_text(json.dumps({"dependencies": dependency}), encoding="utf-8")
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": dependency}}}
    (config / "package-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    shutil.copytree(SKILL, config / "skills" / "wheypoint")  # where OpenCode 1.18 finds a user's skills
    done = run([sys.executable, "-m", "wheypoint", "hooks", "install", "--harness", "opencode", "--format", "json"],
               env, repo, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["path"] == str(config / "plugins" / "wheypoint.ts")
    return env, repo


def session(tmp_path: Path) -> Outcome:
    """P1-P3 in one session (`--continue`), the overflow compaction after P3, P4 in it, then P5 in a new one."""
    opencode = str(clis.installed("opencode"))
    steps = [Step(P1, True), Step(P2, False), Step(P3, False), Step(P4, False), Step(P5, True)]
    log_path = tmp_path / "requests.jsonl"
    with mockmodel.MockModel([wire_chat.route], log_path=log_path, lifetime=600, max_requests=200) as model:
        wire_chat.settings(model).overflow_once = P3
        env, repo = configure(tmp_path, model.url)
        for step in steps:
            before = len(model.bodies("/chat/completions"))
            done = run([opencode, "run", *([] if step.new_session else ["--continue"])], env, repo, stdin=step.prompt)
            assert done.returncode == 0, f"opencode run {step.prompt!r}: {done.returncode} {done.stdout} {done.stderr}"
            step.stdout = done.stdout
            step.requests = model.bodies("/chat/completions")[before:]
    return Outcome(tmp_path, repo, env, steps, log_path)


def texts(body: dict[str, Any], role: str) -> list[str]:
    """The text of each of the request's messages of one role, in order."""
    return [wire_chat.text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == role]


def is_agent_request(body: dict[str, Any]) -> bool:
    """The session's agent (tools offered); not the title's or the compaction's own request."""
    return bool(body.get("tools"))


def mcp_tools(env: dict[str, str], cwd: Path) -> list[str]:
    """The tools `wheypoint mcp` lists, asked over stdio as a client would."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
              "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]  # fmt: skip
    done = run([sys.executable, "-m", "wheypoint", "mcp"], env, cwd, "".join(json.dumps(x) + "\n" for x in lines), 30)
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    listed = next(r for r in replies if r.get("id") == 2)
    return [tool["name"] for tool in listed["result"]["tools"]]


def turns(outcome: Outcome, session_id: str) -> list[dict[str, Any]]:
    argv = [sys.executable, "-m", "wheypoint", "turns", "--transcript", str(outcome.database), "--session",
            session_id, "--all", "--format", "json"]  # fmt: skip
    done = run(argv, outcome.env, outcome.repo, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)["turns"]
    return found


def packets_in(body: dict[str, Any]) -> list[str]:
    return [s for s in strings(body) if PACKET_HEAD in s]


def assert_whole(packet: str, sizes: set[int], rescue: dict[str, Any], why: Any) -> None:
    """A packet as the hook printed it: its head, the packet's JSON, the closing line, the size it logged."""
    head, data, tail = packet.rstrip("\n").split("\n")
    assert head.startswith(PACKET_HEAD) and packet.count(PACKET_HEAD) == 1, why(f"a nested packet: {packet}")
    record = json.loads(data)
    assert (record["slug"], record["revision_id"]) == (rescue["slug"], rescue["revision_id"]), why(packet)
    assert tail == f"Continue its chain: wheypoint checkpoint {rescue['slug']} --base {rescue['revision_id']} ..."
    assert len(packet) in sizes, why(f"a packet of {len(packet)} characters; the hooks printed {sorted(sizes)}")


def check(outcome: Outcome, tools: list[str]) -> None:
    """Every assertion of the scenario; `tools` as `wheypoint mcp` lists them."""
    log = outcome.hook_log()
    why = outcome.why
    # Every installed hook fired, none failed or was refused.
    assert {e.get("event") for e in log} >= set(EVENTS), why("not every hook fired")
    assert not [e for e in log if "error" in e or "refused" in e], why("a hook failed or was refused")

    # The rescue: the three typed prompts, byte for byte, and nothing else.
    rescues = [e for e in log if e.get("event") == "PreCompact"]
    assert len(rescues) == 1 and rescues[0]["kept"] == 3, why("one rescue keeping three turns")
    shown = run([sys.executable, "-m", "wheypoint", "show", rescues[0]["work_id"], "--format", "json"], outcome.env,
                outcome.repo, timeout=30)  # fmt: skip
    record = json.loads(shown.stdout)["record"]
    assert [m["text"] for m in record["meat"]] == [P1, P2, P3], why(f"the rescue holds {record['meat']}")
    rescue = {"slug": record["slug"], "revision_id": record["revision_id"]}

    # `turns` on the database OpenCode wrote: each typed prompt once, exactly as typed, nothing else as a prompt.
    first, second = outcome.sessions()
    for sid, typed in ((first, [P1, P2, P3, P4]), (second, [P5])):
        found = turns(outcome, sid)
        assert [t["text"] for t in found if t["kind"] == "prompt"] == typed, why(f"{sid}: {found}")
    kinds = [t["kind"] for t in turns(outcome, first)]
    assert kinds.count("compaction_summary") == 1, why(f"one compaction, read as such: {kinds}")

    # The packet: whole, once in each request's context (a system entry), never in a user's message.
    sizes = {e["chars"] for e in log if e.get("event") in EVENTS and "chars" in e}
    steps = {step.prompt: step for step in outcome.steps}
    for step in outcome.steps:
        for body in step.requests:
            found = packets_in(body)
            assert len(found) <= 1, why(f"{len(found)} packets in one request of {step.prompt!r}")
            if not wire_chat.is_compaction(body):
                assert not [t for t in texts(body, "user") if PACKET_HEAD in t], why("a packet in a user's message")
    compactions = [b for b in steps[P3].requests if wire_chat.is_compaction(b)]
    assert len(compactions) == 1, why(f"P3 made {len(steps[P3].requests)} requests, {len(compactions)} compactions")
    at = steps[P3].requests.index(compactions[0])
    before = [b for s in outcome.steps[:2] for b in s.requests] + steps[P3].requests[:at]
    assert not [b for b in before if packets_in(b)], why("a packet before any work existed")
    # The compaction's own request has it once, in OpenCode's summary prompt (output.context), not in a system entry.
    (summarised,) = packets_in(compactions[0])
    prompt = texts(compactions[0], "user")[-1]
    assert summarised == prompt and not packets_in({"s": texts(compactions[0], "system")}), why("not in the prompt")
    assert prompt.index("</conversation>") < prompt.index(PACKET_HEAD), why("the packet is in the conversation")
    assert_whole(summarised[summarised.index(PACKET_HEAD) :], sizes, rescue, why)
    after = steps[P3].requests[at + 1 :] + steps[P4].requests + steps[P5].requests
    agents = [b for b in after if is_agent_request(b)]
    assert len(agents) == 3, why(f"{len(agents)} agent requests after the compaction")
    for body in agents:
        entries = [t for t in texts(body, "system") if t.startswith(PACKET_HEAD)]
        assert len(entries) == 1, why(f"the packet is not a system entry of its own: {texts(body, 'system')}")
        assert_whole(entries[0], sizes, rescue, why)
    starts = [e.get("source") for e in log if e.get("event") == "SessionStart" and "work_id" in e]
    assert starts == ["resume", "startup"], why(f"SessionStart packets went to {starts}")
    assert json.dumps(P2, ensure_ascii=False)[1:-1] in summarised, why("the rule is not in the packet")

    # The skill and every MCP tool were offered to the model.
    description = re.search(r"^description: (.+)$", (SKILL / "SKILL.md").read_text(encoding="utf-8"), re.M)
    assert description is not None
    for step in (steps[P1], steps[P4], steps[P5]):
        body = [b for b in step.requests if is_agent_request(b)][-1]
        offered = {tool["function"]["name"] for tool in body["tools"]}
        assert {f"wheypoint_{name}" for name in tools} <= offered, why(f"tools offered: {sorted(offered)}")
        system = html.unescape("\n".join(texts(body, "system")))
        assert "<name>wheypoint</name>" in system and description.group(1) in system, why("the skill is not offered")

    # The prompts reached the model intact: the history on each turn, then the compaction's conversation, then on.
    for n, prompt in enumerate((P1, P2, P3)):
        body = next(b for b in steps[prompt].requests if is_agent_request(b))
        assert texts(body, "user") == [P1, P2, P3][: n + 1], why(f"history: {texts(body, 'user')}")
    conversation = texts(compactions[0], "user")[-1]
    assert all(f"[User]: {p}" in conversation for p in (P1, P2, P3)), why(f"the compaction read {conversation}")
    assert texts(next(b for b in steps[P4].requests if is_agent_request(b)), "user")[-1] == P4
    assert texts(agents[-1], "user") == [P5], why(f"the new session sent {texts(agents[-1], 'user')}")


def record(outcome: Outcome) -> None:
    """The sessions' rows (and the tables' own schema) as test data, the scratch paths rewritten."""
    rewrite = [(str(outcome.repo), "/home/dev/e2e/repo"), (str(outcome.root), "/home/dev/e2e")]
    with sqlite3.connect(f"{outcome.database.as_uri()}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        schema = {name: sql for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
                  if name in RECORDED_TABLES}  # fmt: skip
        rows = {table: [dict(row) for row in conn.execute(f"SELECT * FROM {table} ORDER BY rowid")]
                for table in RECORDED_TABLES}  # fmt: skip
    text = json.dumps({"opencode": VERSION, "schema": schema, "rows": rows}, ensure_ascii=False, indent=1)
    for old, new in rewrite:
        text = text.replace(json.dumps(old)[1:-1], new)
    RECORDED.mkdir(parents=True, exist_ok=True)
    (RECORDED / f"opencode-{VERSION}-e2e.json").write_text(text + "\n", encoding="utf-8")


def test_opencode_end_to_end(tmp_path: Path) -> None:
    outcome = session(tmp_path)
    check(outcome, mcp_tools(outcome.env, outcome.repo))
    if os.environ.get("WHEYPOINT_E2E_RECORD"):
        record(outcome)
