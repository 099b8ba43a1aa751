"""Across harnesses, end to end: a compaction in Claude Code, then a new Gemini CLI session in the same checkout.

What users of these tools ask for: the work one agent was on survives into another agent's session. Both CLIs run
for real against the one mock model (the Anthropic wire for Claude Code, the Gemini wire for Gemini CLI), each with
wheypoint's hooks installed by `hooks install`, sharing the checkout and the store. Claude Code's PreCompact rescues
the three typed prompts; Gemini's first prompt then carries that work's packet (BeforeAgent), whole, once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import clis
import mockmodel
import pytest
import test_claude_code as claude
import test_gemini as gemini
import wire_anthropic
import wire_gemini

pytestmark = pytest.mark.e2e


def _hook_log(home: Path) -> list[dict[str, Any]]:
    path = home / "hooks" / "hook.log"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_a_compaction_in_claude_code_reaches_a_new_gemini_session(tmp_path: Path) -> None:
    routes = [wire_anthropic.route, wire_gemini.route]
    with mockmodel.MockModel(routes, log_path=tmp_path / "requests.jsonl", lifetime=400) as model:
        g = gemini.Scratch(tmp_path, model)  # the scratch home, checkout and store both CLIs share
        env, repo = g.env, g.repo
        config = tmp_path / "claude-config"
        config.mkdir()
        env.update(CLAUDE_CONFIG_DIR=str(config), ANTHROPIC_API_KEY="sk-ant-e2e-mock", ANTHROPIC_BASE_URL=model.url,
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")  # fmt: skip
        for harness in ("claude-code", "gemini"):
            subprocess.run([sys.executable, "-m", "wheypoint", "hooks", "install", "--harness", harness], env=env,
                           cwd=repo, check=True, capture_output=True, timeout=60)  # fmt: skip
        g.settings()
        program = str(clis.installed("claude"))
        for number, prompt in enumerate((claude.P1, claude.P2, claude.P3, claude.COMPACT)):
            done = claude.run([program, "-p", *(["--continue"] if number else []), prompt], env, repo)
            assert done.returncode == 0, f"claude -p {prompt!r}: {done.stdout} {done.stderr}"
        log = _hook_log(g.store)
        rescue = [e for e in log if e.get("event") == "PreCompact" and e.get("harness") == "claude-code"]
        assert rescue and rescue[-1].get("kept") == 3, log
        work_id = rescue[-1]["work_id"]

        before = len(g.conversation())
        g.ask(gemini.P5)
        asked = g.conversation()[before:]
        why = g.evidence()

    assert asked, f"Gemini sent no request{why}"
    packets = [p for body in asked for p in gemini.packets(body)]
    assert len(packets) == 1 and packets[0].startswith(f"{gemini.HEAD} {work_id} "), f"{packets}{why}"
    delivered = [e for e in _hook_log(g.store) if e.get("harness") == "gemini" and e.get("event") == "BeforeAgent"]
    assert delivered and delivered[-1].get("work_id") == work_id and delivered[-1].get("chars") == len(packets[0])
    packet = json.loads(packets[0].split("\n")[1])
    assert [m["text"] for m in reversed(packet["meat"])] == [claude.P1, claude.P2, claude.P3]
    assert gemini.P5 in [text for body in asked for parts in gemini.user_parts(body) for text in parts], why
