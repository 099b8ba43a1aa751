"""Gemini CLI 0.61, end to end: the real CLI, headless against the mock model, with wheypoint's hooks, MCP and skill.

One session of four headless runs (`gemini -p`, then `-r latest`), a compression forced inside the third (the
model answers the prompt with a function call and reports a huge promptTokenCount, so the CLI compresses before it
sends the call's result), then a new session, resumed once. Gemini needs `GOOGLE_GEMINI_BASE_URL`,
`GEMINI_API_KEY`, `security.auth.selectedType: "gemini-api-key"`, `GEMINI_CLI_TRUST_WORKSPACE=true` and `-m`;
`GEMINI_CLI_NO_RELAUNCH=true` spares each run the CLI's relaunch of itself (a second Node.js start, for a larger
heap). The chat files are copied after every run: at start-up Gemini's session retention deletes every chat file it
cannot resume with the other files of its short id, and a resume in a later minute leaves one (the preamble alone
under the session's short id), so a new session deletes the resumed one's whole chat.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import clis
import mockmodel
import wire_gemini
from scenario import P1, P2, P3, P4, P5
from scenario import PACKET_HEAD as HEAD

from conftest import make_repo

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
P6 = "Resumed: is everything I said still here?"  # Gemini only: the resume that once lost a prompt
MODEL = "gemini-2.5-flash"
HUGE = 900_000  # promptTokenCount over half of Gemini's 1,048,576-token limit: the next turn compresses
RUN_TIMEOUT = 90
EVENTS = ("PreCompress", "SessionStart", "AfterAgent", "BeforeAgent")
USER_KINDS = ("prompt", "queued_prompt", "shell_input", "slash_command")  # what `turns` reads as typed
RECORDING = "gemini-0.61.0-e2e.jsonl"
FAKE_ROOT = "/home/dev/e2e/gemini"


class Scratch:
    """A scratch home, checkout and store, the mock model, and the CLI run in them."""

    def __init__(self, root: Path, model: mockmodel.MockModel) -> None:
        self.root = root
        self.model = model
        self.env = clis.scratch_env(root)
        self.repo = make_repo(root / "repo")
        self.home = Path(self.env["HOME"])
        self.store = Path(self.env["WHEYPOINT_HOME"])
        self.kept = root / "kept"
        self.kept.mkdir()
        self.gemini = str(clis.installed("gemini"))
        self.runs: list[subprocess.CompletedProcess[str]] = []
        self.env.update(GOOGLE_GEMINI_BASE_URL=model.url, GEMINI_API_KEY="mock-key", GEMINI_CLI_TRUST_WORKSPACE="true",
                        GEMINI_CLI_NO_RELAUNCH="true")  # fmt: skip

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([self.gemini, *args], env=self.env, cwd=self.repo, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, check=False)  # fmt: skip
        assert done.returncode == 0, f"gemini {args[:3]} failed ({done.returncode}): {done.stdout}{done.stderr}"
        return done

    def wheypoint(self, *args: str) -> Any:
        done = subprocess.run([sys.executable, "-m", "wheypoint", *args, "--format", "json"], env=self.env,
                              cwd=self.repo, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, f"wheypoint {args}: {done.stdout}{done.stderr}"
        return json.loads(done.stdout)

    def settings(self, **changes: Any) -> None:
        path = self.home / ".gemini" / "settings.json"
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        data.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
        data.update(changes)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    def ask(self, prompt: str, resume: bool = False) -> None:
        """One headless turn; then every chat file is copied, by session id, before Gemini may delete it."""
        args = ["-m", MODEL, *(["-r", "latest"] if resume else []), "-p", prompt]
        self.runs.append(self.cli(*args, timeout=RUN_TIMEOUT))
        for path in (self.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"):
            first = json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])
            copy = self.kept / f"{first['sessionId']}.jsonl"
            if not copy.exists() or path.stat().st_size >= copy.stat().st_size:
                shutil.copyfile(path, copy)

    def hook_log(self) -> list[dict[str, Any]]:
        path = self.store / "hooks" / "hook.log"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []

    def sessions(self) -> list[Path]:
        """The kept chat files, in the order their sessions started."""
        return sorted(self.kept.glob("*.jsonl"), key=lambda p: json.loads(p.read_text().split("\n", 1)[0])["startTime"])

    def turns(self, path: Path) -> list[dict[str, Any]]:
        reply = self.wheypoint("turns", "--transcript", str(path), "--all")
        return list(reply["turns"])

    def conversation(self) -> list[Any]:
        """The bodies of the requests that carried the conversation (not the compression's own two)."""
        return [body for body in self.model.bodies(":") if isinstance(body, dict) and "contents" in body
                and "<state_snapshot>" not in wire_gemini.last_user_text(body)
                and body.get("generationConfig", {}).get("responseMimeType") != "application/json"]  # fmt: skip

    def evidence(self) -> str:
        bodies = "\n".join(json.dumps(user_parts(b), ensure_ascii=False)[-1500:] for b in self.conversation())
        log = "\n".join(json.dumps(entry, ensure_ascii=False) for entry in self.hook_log())
        return f"\nhook.log:\n{log}\nuser parts of the requests (tails; all in {self.model.log_path}):\n{bodies}"


def mcp_tools(env: dict[str, str], repo: Path) -> list[str]:
    """The tools `wheypoint mcp` lists, asked over its own stdio protocol."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]  # fmt: skip
    given = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run([sys.executable, "-m", "wheypoint", "mcp"], input=given, env=env, cwd=repo,
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    listed = next(r for r in replies if r.get("id") == 2)
    return [tool["name"] for tool in listed["result"]["tools"]]


def user_parts(body: Any) -> list[list[str]]:
    """The text parts of each user content of a request, one list per content."""
    return [[p["text"] for p in c.get("parts") or [] if isinstance(p.get("text"), str)]
            for c in body.get("contents", []) if c.get("role") == "user"]  # fmt: skip


def own_parts(body: Any) -> list[str]:
    """The text parts of a request's last user content, without the CLI's `<session_context>` preamble."""
    found = user_parts(body)
    return [text for text in found[-1] if not text.startswith("<session_context>")] if found else []


def history(body: Any) -> list[str]:
    return [text for parts in user_parts(body) for text in parts]


def packets(body: Any) -> list[str]:
    """The packets a request carries, as the hook printed them (Gemini escapes `<` and `>` in hook context)."""
    found = []
    for parts in user_parts(body):
        for text in parts:
            if text.startswith("<hook_context>") and text.endswith("</hook_context>"):
                found.append(text[14:-15].replace("&lt;", "<").replace("&gt;", ">"))
    return found


def skill_and_tools(body: Any, tools: list[str]) -> list[str]:
    """What a request lacks of the skill (its name and description) and of wheypoint's MCP tools."""
    skill = (ROOT / "skill" / "wheypoint" / "SKILL.md").read_text(encoding="utf-8")
    description = next(line for line in skill.splitlines() if line.startswith("description: "))[13:]
    system = json.dumps(body.get("systemInstruction"), ensure_ascii=False)
    offered = {d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", [])}
    lacking = [f"mcp_wheypoint_{name}" for name in tools if f"mcp_wheypoint_{name}" not in offered]
    if "<name>wheypoint</name>" not in system or json.dumps(description, ensure_ascii=False)[1:-1] not in system:
        lacking.append("the skill")
    return lacking


def record(path: Path, root: Path) -> None:
    """Keep the transcript as test data, with the scratch paths made the corpus's (`WHEYPOINT_E2E_RECORD=DIR`)."""
    folder = os.environ.get("WHEYPOINT_E2E_RECORD")
    if folder:
        text = path.read_text(encoding="utf-8").replace(str(root), FAKE_ROOT)
        Path(folder, RECORDING).write_text(text, encoding="utf-8")


def test_gemini_end_to_end(tmp_path: Path) -> None:
    with mockmodel.MockModel([wire_gemini.route], log_path=tmp_path / "requests.jsonl", lifetime=600) as model:
        s = Scratch(tmp_path, model)
        subprocess.run([sys.executable, "-m", "wheypoint", "hooks", "install", "--harness", "gemini"], env=s.env,
                       cwd=s.repo, check=True, capture_output=True, timeout=60)  # fmt: skip
        s.settings()
        s.cli("mcp", "add", "--scope", "user", "--trust", "wheypoint", sys.executable, "-m", "wheypoint", "mcp")
        s.cli("skills", "install", str(ROOT / "skill" / "wheypoint"), "--scope", "user", "--consent")
        s.ask(P1)
        s.ask(P2, resume=True)
        wire_gemini.plan(model, {"call": "list_directory", "args": {"dir_path": "."}, "tokens": HUGE})
        s.ask(P3, resume=True)
        s.ask(P4, resume=True)
        s.ask(P5)
        s.ask(P6, resume=True)
        why = s.evidence()

        # Every hook fired, none failed.
        log = s.hook_log()
        assert {entry["event"] for entry in log} >= set(EVENTS), why
        assert not [e for e in log if "error" in e or "refused" in e], why

        # The compression happened in the third run, and the rescue took it: one revision, P1-P3 verbatim.
        first, second = s.sessions()
        kinds = [t["kind"] for t in s.turns(first)]
        assert kinds.count("compaction_summary") == 1, why
        works = s.wheypoint("list")["works"]
        assert len(works) == 1, f"a work for each session (one holds no prompt): {works}{why}"
        slug = works[0]["slug"]
        revisions = s.wheypoint("log", slug)["revisions"]
        assert len(revisions) == 1, f"PreCompress rescued on a turn with no compression: {revisions}{why}"
        meat = s.wheypoint("show", slug)["record"]["meat"]
        assert [m["text"] for m in meat] == [P1, P2, P3], why
        assert {m["kind"] for m in meat} == {"prompt"}, why

        # `turns` reads each typed prompt once, exactly, and nothing else as a prompt.
        for path, typed in ((first, [P1, P2, P3, P4]), (second, [P5, P6])):
            read = [(t["kind"], t["text"]) for t in s.turns(path) if t["kind"] in USER_KINDS]
            assert read == [("prompt", text) for text in typed], f"{path}: {read}{why}"

        # The packet: whole, on its own part after the prompt, once per session (P4 after the compaction, P5).
        delivered = [e for e in log if e["event"] == "BeforeAgent" and e.get("chars")]
        assert len(delivered) == 2, why
        bodies = s.conversation()
        by_prompt = {own_parts(b)[0]: b for b in reversed(bodies) if own_parts(b)}  # each prompt's first request
        for prompt, entry in ((P4, delivered[0]), (P5, delivered[1])):
            parts = own_parts(by_prompt[prompt])
            assert parts[0] == prompt and len(parts) == 2, f"the prompt is not a part of its own: {parts}{why}"
            (packet,) = packets({"contents": [{"role": "user", "parts": [{"text": parts[1]}]}]})
            assert packet.startswith(HEAD) and len(packet) == entry["chars"], why
            assert packet.count(HEAD) == 1 and "hook_context" not in packet, why
            shown = json.loads(packet.split("\n")[1])
            assert sorted(m["text"] for m in shown["meat"]) == sorted([P1, P2, P3]), why
            assert packet.endswith(f"--base {shown['revision_id']} ...\n"), why
        for body in bodies:
            assert len(packets(body)) <= 1, f"a packet repeated: {why}"
            for parts in user_parts(body):
                assert not any(HEAD in text and not text.startswith("<hook_context>") for text in parts), why
        assert not any(packets(by_prompt[prompt]) for prompt in (P1, P2, P3)), why

        # The prompts stay in the model's history on every resume, the one that carried the packet included.
        assert P1 in history(by_prompt[P2]), why
        assert P1 in history(by_prompt[P3]) and P2 in history(by_prompt[P3]), why
        assert P5 in history(by_prompt[P6]) and len(packets(by_prompt[P6])) == 1, why

        # The skill and every tool `wheypoint mcp` lists are offered to the model.
        tools = mcp_tools(s.env, s.repo)
        assert len(tools) >= 9
        for body in (by_prompt[P1], by_prompt[P5]):
            assert not skill_and_tools(body, tools), f"{skill_and_tools(body, tools)}{why}"
        record(first, tmp_path)


def test_gemini_extension(tmp_path: Path) -> None:
    """The extension tools/build_plugins.py builds passes `gemini extensions validate`, installs, and works."""
    out = tmp_path / "plugins"
    subprocess.run([sys.executable, str(ROOT / "tools" / "build_plugins.py"), "--out", str(out)], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    with mockmodel.MockModel([wire_gemini.route], log_path=tmp_path / "requests.jsonl", lifetime=300) as model:
        s = Scratch(tmp_path, model)
        checked = s.cli("extensions", "validate", str(out / "gemini" / "wheypoint"))
        assert "successfully validated" in checked.stdout + checked.stderr
        s.cli("extensions", "install", str(out / "gemini" / "wheypoint"), "--consent")
        # An extension's MCP server cannot declare itself trusted (Gemini drops its `trust`): headless, its tools
        # are offered once the person allows the server, as here.
        s.settings(mcp={"allowed": ["wheypoint"]})
        s.ask(P1)
        why = s.evidence()
        log = s.hook_log()
        assert {entry["event"] for entry in log} >= set(EVENTS), why
        assert not [e for e in log if "error" in e or "refused" in e], why
        (body,) = [b for b in s.conversation() if own_parts(b)[:1] == [P1]]
        assert not skill_and_tools(body, mcp_tools(s.env, s.repo)), f"{skill_and_tools(body, [])}{why}"
