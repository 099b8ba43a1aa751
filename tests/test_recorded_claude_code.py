"""The transcripts Claude Code 2.1.197 wrote in the end-to-end run (tests/e2e/test_claude_code.py), read back.

A change of Claude Code's format, or of the reader, shows up here as a failing test rather than as a session whose
prompts quietly read as something else: the exact prompts and the kind of every turn, then the hooks on the
recorded session (the rescue keeps the three typed prompts; the packet goes to a session once).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Runner, make_repo

RECORDED = Path(__file__).resolve().parent / "data" / "recorded"
SESSION = RECORDED / "claude-code-2.1.197-e2e.jsonl"  # P1-P3, /compact, P4
NEW_SESSION = RECORDED / "claude-code-2.1.197-e2e-new-session.jsonl"  # P5

P1 = "Please add a small retry helper for the payments client."
P2 = "remember: never retry a POST without an idempotency key — the gateway double-charges otherwise."
P3 = 'Also: cap the backoff at 30 s ("full jitter" for now).\nSecond line with `code` and ünïcödé.'
P4 = "After the compaction: what should I keep in mind?"
P5 = "New session: where were we?"

KINDS = [
    "prompt", "assistant", "prompt", "assistant", "prompt", "assistant",
    "system",  # the compact boundary
    "compaction_summary", "meta",  # the summary; the local-command caveat
    "slash_command", "command_output",  # /compact as typed, and what it printed (the PreCompact hook's line)
    "meta", "system",  # "Continue from where you left off." and "No response requested.", both Claude Code's
    "prompt", "assistant",
]  # fmt: skip


def turns(wp: Runner, path: Path) -> Any:
    reply = wp("turns", "--transcript", str(path), "--all")
    assert reply.code == 0, reply.stdout + reply.stderr
    return reply.json


def test_the_recorded_session_reads_as_typed_every_turn_of_its_kind(wp: Runner) -> None:
    reply = turns(wp, SESSION)
    found = reply["turns"]
    assert [t["kind"] for t in found] == KINDS
    assert [t["text"] for t in found if t["kind"] == "prompt"] == [P1, P2, P3, P4]
    assert found[9]["text"].startswith("<command-name>/compact</command-name>")
    assert found[7]["text"].startswith("This session is being continued from a previous conversation")
    assert reply["stats"]["malformed"] == 0 and reply["stats"]["invalid_utf8"] == 0


def test_the_recorded_new_session_holds_its_one_prompt(wp: Runner) -> None:
    found = turns(wp, NEW_SESSION)["turns"]
    assert [(t["kind"], t["text"]) for t in found] == [("prompt", P5), ("assistant", "MOCK-REPLY: noted.")]


def test_hooks_on_the_recorded_session_rescue_the_typed_prompts_and_hand_the_packet_over_once(
    wp: Runner, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    lines = SESSION.read_text(encoding="utf-8").splitlines()
    boundary = next(n for n, line in enumerate(lines) if '"compact_boundary"' in line)
    transcript = tmp_path / "session.jsonl"  # the session as it was when PreCompact fired: before the boundary
    transcript.write_text("\n".join(lines[:boundary]) + "\n", encoding="utf-8")
    session = json.loads(lines[0])["sessionId"]

    def hook(event: str, **extra: str) -> Any:
        payload = {"session_id": session, "transcript_path": str(transcript), "cwd": str(repo),
                   "hook_event_name": event, **extra}  # fmt: skip
        reply = wp("hook", event, "--harness", "claude-code", cwd=repo, stdin=json.dumps(payload))
        assert reply.code == 0, reply.stdout + reply.stderr
        return reply.json

    assert "kept 3 turn(s)" in hook("PreCompact", trigger="manual")["systemMessage"]
    shown = wp("show", f"session-claude-code-{session[:8]}", "--format", "json", cwd=repo)
    assert [m["text"] for m in shown.json["record"]["meat"]] == [P1, P2, P3]
    context = hook("SessionStart", source="compact")["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("wheypoint: the handoff of work") and context.count("wheypoint: the handoff") == 1
    assert "hookSpecificOutput" not in hook("UserPromptSubmit", prompt=P4)  # this session has had the packet


CLAUDE_CODE_LIMIT = 10000  # UTF-16 code units of a hook's context Claude Code 2.1.197 hands over whole


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def test_the_packet_of_an_emoji_rich_session_fits_claude_codes_limit_in_utf16_units(wp: Runner, tmp_path: Path) -> None:
    # Measured with the real CLI (bench/packet_limit_claude_code.py): Claude Code compares a context's JavaScript
    # length (an emoji counts 2) with 10,000 and puts a 2,000-unit preview in its place beyond. The recorded
    # session with its three prompts made of emoji must still get a packet that reaches the model whole.
    repo = make_repo(tmp_path / "repo")
    lines = SESSION.read_text(encoding="utf-8").splitlines()
    boundary = next(n for n, line in enumerate(lines) if '"compact_boundary"' in line)
    text = "\n".join(lines[:boundary]) + "\n"
    for n, prompt in enumerate((P1, P2, P3)):
        text = text.replace(json.dumps(prompt, ensure_ascii=False), json.dumps(f"{n} " + "\U0001f600" * 4000))
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(text, encoding="utf-8")
    session = json.loads(lines[0])["sessionId"]
    for event, extra in (("PreCompact", {"trigger": "manual"}), ("SessionStart", {"source": "compact"})):
        payload = {"session_id": session, "transcript_path": str(transcript), "cwd": str(repo),
                   "hook_event_name": event, **extra}  # fmt: skip
        reply = wp("hook", event, "--harness", "claude-code", cwd=repo, stdin=json.dumps(payload))
    context = reply.json["hookSpecificOutput"]["additionalContext"]
    assert "\U0001f600" * 1000 in context  # the turns are in it, as many as fit
    assert utf16_units(context) <= CLAUDE_CODE_LIMIT
