"""A session gets the resume packet once per context: the hooks on a real Codex 0.171 rollout, in real processes.

Codex runs a resumed session's SessionStart (source resume) and, when its turn opens with a compaction, the compact
one after the PreCompact, and hands both answers to the model in one request (seen end to end in
tests/e2e/test_codex.py): the second must add nothing. A resumed session's history already holds the packet it had;
after a compaction, or a clear, it needs the packet again.
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

from conftest import HARNESS_VARIABLES, make_repo, shared_path

RECORDED = "codex-0.171.0-mock.jsonl"
SESSION = "01a232ca-c916-7fe0-83b4-afe61d0b8b91"  # the recorded rollout's session id
HEAD = "wheypoint: the handoff of work"


class Hooks:
    def __init__(self, root: Path) -> None:
        self.repo = make_repo(root / "repo")
        codex_home = root / "codex"
        folder = codex_home / "sessions" / "2026" / "12" / "01"
        folder.mkdir(parents=True)
        name = f"rollout-2026-12-01T18-08-00-{SESSION}.jsonl"
        shutil.copy(shared_path("corpus", "recorded", RECORDED), folder / name)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}  # fmt: skip
        self.env.update(HOME=str(root / "home"), WHEYPOINT_HOME=str(root / "store"), CODEX_HOME=str(codex_home))

    def call(self, event: str, session: str = SESSION, **extra: Any) -> dict[str, Any]:
        payload = {"session_id": session, "transcript_path": None, "cwd": str(self.repo), "hook_event_name": event,
                   "model": "mock-model", **extra}  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "wheypoint", "hook", event, "--harness", "codex"],
                              input=json.dumps(payload), capture_output=True, text=True, env=self.env, cwd=self.repo,
                              timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    def packet(self, event: str, session: str = SESSION, **extra: Any) -> str | None:
        output = self.call(event, session, **extra).get("hookSpecificOutput")
        return None if output is None else str(output["additionalContext"])


@pytest.fixture
def hooks(tmp_path: Path) -> Hooks:
    return Hooks(tmp_path)


def test_resume_then_compact_in_one_turn_gives_one_packet(hooks: Hooks) -> None:
    rescued = hooks.call("PreCompact", turn_id="t", trigger="auto")  # the rollout found by session id
    assert "kept 4 turn(s)" in rescued["systemMessage"]
    first = hooks.packet("SessionStart", source="resume")
    assert first is not None and first.startswith(HEAD)
    assert hooks.packet("SessionStart", source="compact") is None  # the resume's copy reaches the model with it
    assert hooks.packet("UserPromptSubmit", turn_id="t", prompt="go on") is None
    assert hooks.packet("SessionStart", source="resume") is None  # the resumed history holds it
    assert hooks.packet("SessionStart", "another-session", source="startup") == first


def test_a_later_compaction_or_clear_gets_the_packet_again(hooks: Hooks) -> None:
    hooks.call("PreCompact", turn_id="t", trigger="auto")
    first = hooks.packet("SessionStart", source="startup")
    hooks.call("PreCompact", turn_id="t2", trigger="auto")  # nothing new to rescue, but the context is gone
    assert hooks.packet("SessionStart", source="compact") == first
    assert hooks.packet("SessionStart", source="clear") == first


def test_a_compaction_whose_precompact_did_not_fire_still_gets_the_packet(hooks: Hooks) -> None:
    hooks.call("PreCompact", turn_id="t", trigger="manual")  # the recorded session's work
    first = hooks.packet("SessionStart", "fresh", source="startup")
    assert first is not None
    assert hooks.packet("SessionStart", "fresh", source="compact") == first  # no PreCompact of this session: deliver


CODEX_LIMIT = 10_000  # UTF-8 bytes of a hook's context Codex 0.171 hands over whole (bench/packet_limit_codex.py)


def test_a_packet_of_non_ascii_prompts_fits_codexs_limit_in_utf8_bytes(tmp_path: Path) -> None:
    # Codex replaces a context over 10,000 UTF-8 bytes with a 'Warning: truncated output' excerpt: a packet within
    # 10,000 characters (or UTF-16 units) but made of 'ü' would take twice that and never reach the model whole.
    hooks = Hooks(tmp_path)
    rollout = next((tmp_path / "codex" / "sessions").rglob("rollout-*.jsonl"))
    lines = rollout.read_text(encoding="utf-8").splitlines()[:1]  # its session_meta
    for number in range(30):
        text = f"Regel {number}: " + "ü" * 400
        metadata = {"content_item_kinds": ["user.text"], "content_item_metadata": [{"provenance": {"type": "user"}}]}
        lines.append(json.dumps({"timestamp": f"2026-12-01T18:09:{number:02d}.000Z", "type": "response_item",
                                 "payload": {"type": "message", "role": "user",
                                             "content": [{"type": "input_text", "text": text}],
                                             "internal_chat_message_metadata_passthrough": metadata}},
                                ensure_ascii=False))  # fmt: skip
    rollout.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert "kept 30 turn(s)" in hooks.call("PreCompact", turn_id="t", trigger="auto")["systemMessage"]
    context = hooks.packet("SessionStart", "fresh", source="startup")
    assert context is not None and context.startswith(HEAD) and "[partial: " in context.split("\n", 1)[0]
    assert CODEX_LIMIT * 0.8 < len(context.encode("utf-8")) <= CODEX_LIMIT, len(context.encode("utf-8"))
    assert "Regel 29: " + "ü" * 400 in context  # the newest turns, whole
