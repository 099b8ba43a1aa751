"""Codex CLI 0.171, end to end: the real `codex exec` against the mock model, wheypoint's hooks, MCP server and skill.

One scenario runs once for the module (`scenario`): hooks installed with `wheypoint hooks install --harness codex`,
the MCP server in `[mcp_servers.wheypoint]` of `$CODEX_HOME/config.toml`, the skill in `$CODEX_HOME/skills`; P1
with `codex exec`, P2 and P3 with `codex exec resume --last`, the third reply reporting 3,000 input tokens so that
`model_auto_compact_token_limit=1000` makes Codex compact before P4; then a new session with P5. Each test asserts
one part of it from the store, hook.log, the payloads the hooks were sent and the request bodies the mock logged.
Codex runs untrusted hooks in `exec` only with `--dangerously-bypass-hook-trust` (the TUI's /hooks writes the
trust): `test_untrusted_hooks_stay_silent` proves the three sides (silent without trust or flag, run with the
flag, run with no flag once config.toml holds the `trusted_hash` wheypoint's app/codex_trust.py computes).
`test_plugin` installs the Codex plugin that `tools/build_plugins.py` builds through `codex plugin marketplace
add` + `codex plugin add`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import clis
import mockmodel
import wire_openai
from scenario import P1, P2, P3, P4, P5, TYPED
from scenario import PACKET_HEAD as HEAD

from conftest import make_repo

pytestmark = pytest.mark.e2e

EVENTS = ("PreCompact", "SessionStart", "Stop", "UserPromptSubmit")
ROOT = Path(__file__).resolve().parents[2]
EXEC_TIMEOUT = 90


@dataclass
class Codex:
    """A scratch home with Codex pointed at the mock model, and a way to run `codex exec` in a checkout."""

    root: Path
    model: mockmodel.MockModel
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.env = clis.scratch_env(self.root)
        self.home = Path(self.env["HOME"]) / ".codex"
        self.home.mkdir(parents=True, exist_ok=True)
        (self.root / "tmp").mkdir(exist_ok=True)  # Codex saves a hook output it cut under $TMPDIR/hook_outputs
        self.env.update(CODEX_HOME=str(self.home), MOCK_API_KEY="sk-mock", TMPDIR=str(self.root / "tmp"))
        self.repo = make_repo(self.root / "repo", {"payments/client.py": "def pay():\n    pass\n"})
        self.store = Path(self.env["WHEYPOINT_HOME"])
        self.binary = str(clis.installed("codex"))
        self.runs: list[subprocess.CompletedProcess[str]] = []
        self.config(f'''model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.mock]
name = "mock"
base_url = "{self.model.url}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
''')  # fmt: skip

    def config(self, text: str) -> None:
        with (self.home / "config.toml").open("a", encoding="utf-8") as handle:
            handle.write(text)

    def wheypoint(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "wheypoint", *args], cwd=self.repo, env=self.env, input=stdin,
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip

    def exec(self, prompt: str, *, resume: bool = False, bypass: bool = True, extra: tuple[str, ...] = ()) -> str:
        argv = [self.binary, "exec", *(["resume", "--last"] if resume else [])]
        argv += [*(["--dangerously-bypass-hook-trust"] if bypass else []), *extra, prompt]
        done = subprocess.run(argv, cwd=self.repo, env=self.env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=EXEC_TIMEOUT, check=False)  # fmt: skip
        self.runs.append(done)
        assert done.returncode == 0, f"codex exec failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    def hook_log(self) -> list[dict[str, Any]]:
        path = self.store / "hooks" / "hook.log"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def rollouts(self) -> list[Path]:
        return sorted((self.home / "sessions").rglob("rollout-*.jsonl"), key=lambda p: p.stat().st_mtime_ns)

    def evidence(self) -> str:
        """What a failure message shows: the hook log, the last runs' stderr, where the request log is."""
        runs = "\n".join(run.stderr[-1500:] for run in self.runs[-2:])
        log = "\n".join(json.dumps(entry, ensure_ascii=False) for entry in self.hook_log())
        return f"\nhook.log:\n{log}\nlast stderr:\n{runs}\nrequests: {self.model.log_path}"


def mcp_tools(env: dict[str, str]) -> list[str]:
    """The tools `wheypoint mcp` lists, asked of the server itself (initialize, then tools/list)."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
              "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]  # fmt: skip
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run([sys.executable, "-m", "wheypoint", "mcp"], input=stdin, env=env, capture_output=True,
                          text=True, timeout=30, check=False)  # fmt: skip
    for line in done.stdout.splitlines():
        reply = json.loads(line)
        if reply.get("id") == 2:
            return [tool["name"] for tool in reply["result"]["tools"]]
    raise AssertionError(f"wheypoint mcp answered no tools/list: {done.stdout}{done.stderr}")


def skill_description() -> str:
    head = (ROOT / "skill" / "wheypoint" / "SKILL.md").read_text(encoding="utf-8").split("\n---", 1)[0]
    return next(line.split(":", 1)[1].strip() for line in head.splitlines() if line.startswith("description:"))


def user_texts(body: Any) -> list[str]:
    return wire_openai.user_texts(body)


def role_texts(body: Any, role: str) -> list[str]:
    items = body.get("input") or []
    return [wire_openai.text_of(i.get("content")) for i in items if isinstance(i, dict) and i.get("role") == role]


def turns(codex: Codex, rollout: Path) -> dict[str, Any]:
    done = codex.wheypoint("turns", "--transcript", str(rollout), "--all", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


@dataclass
class Run:
    codex: Codex
    requests: list[mockmodel.Logged]
    first: Path  # the rollout of the session that compacted
    second: Path  # the rollout of the new session
    payloads: list[dict[str, Any]]
    packet: str  # the text the SessionStart hook answers for the pending work


def _payload_logger(codex: Codex) -> None:
    """A hook of the user's own beside wheypoint's, on every event: it appends the payload Codex sends to a file."""
    target = codex.root / "payloads.jsonl"
    command = f'sh -c \'cat >> "$0"; echo >> "$0"\' {target}'
    hooks = {event: [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}] for event in EVENTS}
    (codex.home / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=2) + "\n", encoding="utf-8")


def _rewrite(text: str, codex: Codex) -> str:
    """A rollout as kept in tests/data/recorded: the scratch paths rewritten to /home/dev/e2e/codex/..."""
    pairs = ((str(codex.repo), "/home/dev/e2e/codex/repo"), (str(codex.home), "/home/dev/e2e/codex/home/.codex"),
             (str(codex.root), "/home/dev/e2e/codex"), (sys.executable, "/usr/bin/python3"),
             (str(ROOT), "/home/dev/wheypoint"), (codex.model.url, "http://127.0.0.1:8000"))  # fmt: skip
    for real, kept in pairs:
        text = text.replace(real, kept)
    return text


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("codex")
    with mockmodel.MockModel([wire_openai.route], log_path=root / "requests.jsonl", lifetime=300) as model:
        codex = Codex(root, model)
        _payload_logger(codex)
        installed = codex.wheypoint("hooks", "install", "--harness", "codex", "--format", "json")
        assert installed.returncode == 0, installed.stdout + installed.stderr
        codex.config(f'''
[mcp_servers.wheypoint]
command = "{sys.executable}"
args = ["-m", "wheypoint", "mcp"]
env = {{ WHEYPOINT_HOME = "{codex.store}" }}
startup_timeout_sec = 30
''')  # fmt: skip
        shutil.copytree(ROOT / "skill" / "wheypoint", codex.home / "skills" / "wheypoint")
        auto = ("-c", "model_auto_compact_token_limit=1000")
        codex.exec(P1, extra=auto)
        first = codex.rollouts()[-1]
        codex.exec(P2, resume=True, extra=auto)
        model.script.usage_tokens = 3000  # the next reply says the context is full: Codex compacts before P4
        codex.exec(P3, resume=True, extra=auto)
        model.script.usage_tokens = 100
        codex.exec(P4, resume=True, extra=auto)
        codex.exec(P5, extra=auto)
        second = next(p for p in codex.rollouts() if p != first)
        probe = {"session_id": "e2e-probe", "cwd": str(codex.repo), "hook_event_name": "SessionStart",
                 "source": "startup", "transcript_path": None, "model": "mock-model"}  # fmt: skip
        answer = codex.wheypoint("hook", "SessionStart", "--harness", "codex", stdin=json.dumps(probe))
        packet = json.loads(answer.stdout)["hookSpecificOutput"]["additionalContext"]
        text = (root / "payloads.jsonl").read_text(encoding="utf-8")
        payloads = [json.loads(line) for line in text.splitlines() if line.strip()]
        keep = os.environ.get("WHEYPOINT_E2E_RECORD")  # a folder: keep the rollouts, as tests/data/recorded holds them
        if keep:
            for name, path in (("codex-0.171.0-e2e.jsonl", first), ("codex-0.171.0-e2e-new-session.jsonl", second)):
                Path(keep, name).write_text(_rewrite(path.read_text(encoding="utf-8"), codex), encoding="utf-8")
        yield Run(codex, list(model.requests), first, second, payloads, packet)


def _responses(run: Run) -> list[Any]:
    return [r.body for r in run.requests if r.path.endswith("/responses") and isinstance(r.body, dict)]


def _turn_request(run: Run, prompt: str) -> Any:
    """The (first) request whose last user text is this prompt: the one that answers it."""
    found = [body for body in _responses(run) if user_texts(body)[-1:] == [prompt]]
    assert found, f"no request answers {prompt!r}" + run.codex.evidence()
    return found[0]


def test_every_hook_fires_without_error(scenario: Run) -> None:
    log = scenario.codex.hook_log()
    fired = {entry.get("event") for entry in log}
    assert set(EVENTS) <= fired, scenario.codex.evidence()
    assert not [e for e in log if "error" in e or "refused" in e], scenario.codex.evidence()
    sources = [e.get("source") for e in log if e.get("event") == "SessionStart" and e.get("work_id")]
    assert "compact" in sources and "startup" in sources, scenario.codex.evidence()


def test_hook_payloads(scenario: Run) -> None:
    by_event: dict[str, list[dict[str, Any]]] = {}
    for payload in scenario.payloads:
        by_event.setdefault(payload.get("hook_event_name", "?"), []).append(payload)
    assert set(EVENTS) <= set(by_event), sorted(by_event)
    (compact,) = by_event["PreCompact"]
    assert compact["trigger"] == "auto" and compact["cwd"] == str(scenario.codex.repo)
    starts = [p.get("source") for p in by_event["SessionStart"]]
    assert starts.count("compact") == 1 and starts.count("startup") == 2, starts
    for payload in scenario.payloads:  # a path when it is given: it is the rollout by session id, wheypoint's lookup
        path = payload.get("transcript_path")
        assert path is None or Path(path).name.endswith(f"{payload['session_id']}.jsonl"), payload
    nulled = json.dumps({**compact, "transcript_path": None})  # as Codex may send it: found under $CODEX_HOME/sessions
    found = scenario.codex.wheypoint("turns", "--hook-payload", "-", "--format", "json", stdin=nulled)
    assert json.loads(found.stdout)["transcript"] == str(scenario.first), found.stdout + found.stderr


def test_rescue_holds_the_typed_prompts_byte_for_byte(scenario: Run) -> None:
    rescued = [e for e in scenario.codex.hook_log() if e.get("event") == "PreCompact"]
    assert len(rescued) == 1 and rescued[0].get("kept") == 3, scenario.codex.evidence()
    shown = scenario.codex.wheypoint("show", rescued[0]["work_id"], "--format", "json")
    record = json.loads(shown.stdout)["record"]
    assert [meat["text"] for meat in record["meat"]] == list(TYPED), record["meat"]
    assert {meat["kind"] for meat in record["meat"]} == {"prompt"}
    assert record["session"]["harness"] == "codex"


def test_turns_reads_each_prompt_once(scenario: Run) -> None:
    for rollout, expected in ((scenario.first, [P1, P2, P3, P4]), (scenario.second, [P5])):
        reply = turns(scenario.codex, rollout)
        typed = [t["text"] for t in reply["turns"] if t["kind"] in ("prompt", "queued_prompt", "shell_input")]
        assert typed == expected, reply["turns"]
        assert not reply["stats"]["unknown_types"], reply["stats"]
        assert not any(HEAD in t["text"] for t in reply["turns"] if t["kind"] != "meta"), "a packet read as a turn"
    kinds = {t["kind"] for t in turns(scenario.codex, scenario.first)["turns"]}
    assert "compaction_summary" in kinds


def test_packet_reaches_the_model_whole_and_once(scenario: Run) -> None:
    packet = scenario.packet
    assert packet.startswith(HEAD) and packet.count(HEAD) == 1  # never nested in an earlier packet
    chars = {e["chars"] for e in scenario.codex.hook_log() if e.get("event") == "SessionStart" and e.get("chars")}
    assert chars == {len(packet)}
    for prompt in (P4, P5):  # after the compaction, and in the new session
        body = _turn_request(scenario, prompt)
        copies = [text for text in role_texts(body, "developer") if HEAD in text]
        assert copies == [packet], f"{prompt!r}: {len(copies)} copies" + scenario.codex.evidence()
        assert not any(HEAD in text for text in user_texts(body)), "the packet inside a user message"
    for body in _responses(scenario):  # never before there was work, never twice in one request
        assert json.dumps(body, ensure_ascii=False).count(HEAD) <= 1
    after = _turn_request(scenario, P4)
    assert user_texts(after)[-1] == P4  # the prompt itself stays the person's words, untouched


def test_prompts_reach_the_model_intact(scenario: Run) -> None:
    after = user_texts(_turn_request(scenario, P4))
    for prompt in TYPED:  # the compaction keeps the person's own messages; none dropped, none changed
        assert prompt in after, after
    assert user_texts(_turn_request(scenario, P5))[-1] == P5


def test_skill_and_mcp_tools_are_offered(scenario: Run) -> None:
    expected = mcp_tools(scenario.codex.env)
    assert "checkpoint" in expected
    description = skill_description()
    for prompt in (P1, P4, P5):
        body = _turn_request(scenario, prompt)
        offered = wire_openai.tool_names(body)
        missing = [name for name in expected if f"mcp__wheypoint__{name}" not in offered]
        assert not missing, f"{prompt!r}: MCP tools not offered: {missing}; offered: {offered}"
        listed = "\n".join(role_texts(body, "developer"))
        assert f"- wheypoint: {description[:200]}" in listed, "the skill is not listed to the model"


def _trust(codex: Codex) -> None:
    """What trusting wheypoint's hooks in the TUI's /hooks writes: `[hooks.state."<key>"] trusted_hash` per hook."""
    from wheypoint.app.codex_trust import hook_hash, hook_key

    hooks_file = codex.home / "hooks.json"
    lines = []
    for event, groups in json.loads(hooks_file.read_text(encoding="utf-8"))["hooks"].items():
        for number, group in enumerate(groups):
            for index, handler in enumerate(group["hooks"]):
                key = hook_key(str(hooks_file), event, number, index)
                lines.append(f'\n[hooks.state."{key}"]\ntrusted_hash = "{hook_hash(event, group, handler)}"\n')
    codex.config("".join(lines))


def test_untrusted_hooks_stay_silent(tmp_path: Path) -> None:
    with mockmodel.MockModel([wire_openai.route], log_path=tmp_path / "requests.jsonl", lifetime=120) as model:
        codex = Codex(tmp_path, model)
        reply = json.loads(codex.wheypoint("hooks", "install", "--harness", "codex", "--format", "json").stdout)
        assert any("--dangerously-bypass-hook-trust" in note and "/hooks" in note for note in reply["notes"])
        codex.exec(P1, bypass=False)
        assert codex.hook_log() == [], "an untrusted hook ran" + codex.evidence()
        codex.exec(P2, resume=True)  # --dangerously-bypass-hook-trust
        fired = [entry.get("event") for entry in codex.hook_log()]
        assert {"SessionStart", "UserPromptSubmit", "Stop"} <= set(fired), codex.evidence()
        _trust(codex)
        codex.exec(P3, resume=True, bypass=False)  # trusted, as the TUI leaves it: no flag needed
        again = [entry.get("event") for entry in codex.hook_log()][len(fired) :]
        assert {"SessionStart", "UserPromptSubmit", "Stop"} <= set(again), codex.evidence()


def test_plugin(tmp_path: Path) -> None:
    out = tmp_path / "plugins"
    built = subprocess.run([sys.executable, str(ROOT / "tools" / "build_plugins.py"), "--out", str(out)],
                           capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    with mockmodel.MockModel([wire_openai.route], log_path=tmp_path / "requests.jsonl", lifetime=120) as model:
        codex = Codex(tmp_path / "run", model)

        def cli(*args: str) -> str:
            done = subprocess.run([codex.binary, *args], env=codex.env, cwd=codex.repo, capture_output=True,
                                  text=True, timeout=60, check=False)  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            return done.stdout

        cli("plugin", "marketplace", "add", str(out))  # Codex checks the marketplace and the plugin manifest here
        added = json.loads(cli("plugin", "add", "wheypoint@wheypoint", "--json"))
        assert added["pluginId"] == "wheypoint@wheypoint" and Path(added["installedPath"]).is_dir()
        codex.exec(P1)
        log = codex.hook_log()
        assert {"SessionStart", "UserPromptSubmit", "Stop"} <= {e.get("event") for e in log}, codex.evidence()
        assert not [e for e in log if "error" in e or "refused" in e], codex.evidence()
        body = next(r.body for r in model.requests if r.path.endswith("/responses"))
        listed = "\n".join(role_texts(body, "developer"))  # a plugin's skill is named <plugin>:<skill>
        assert f"- wheypoint:wheypoint: {skill_description()[:200]}" in listed, "the plugin's skill is not listed"
