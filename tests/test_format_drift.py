"""A transcript in a shape the reader no longer knows is said to be so (`transcript-format-unknown`), never read as
a session with nothing typed in it: in `turns`, and in the rescue's answer and hook.log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import HARNESS_VARIABLES, Runner, make_repo, shared_path

CODEX_SESSION = "01a232ca-c916-7fe0-83b4-afe61d0b8b91"


def _unmarked_codex(target: Path) -> Path:
    """Codex 0.171's recorded rollout with what tells a typed prompt stripped (its provenance and the UserMessage
    mirrors): what the reader met before it knew 0.171, and what a next format change could look like."""
    out = []
    for line in shared_path("corpus", "recorded", "codex-0.171.0-mock.jsonl").read_text(encoding="utf-8").splitlines():
        record: dict[str, Any] = json.loads(line)
        payload = record.get("payload") or {}
        if payload.get("type") == "item_completed" and (payload.get("item") or {}).get("type") == "UserMessage":
            continue
        payload.get("internal_chat_message_metadata_passthrough", {}).pop("content_item_metadata", None)
        out.append(json.dumps(record, ensure_ascii=False))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return target


def test_turns_says_when_user_records_hold_no_prompt(wp: Runner, tmp_path: Path) -> None:
    rollout = _unmarked_codex(tmp_path / f"rollout-2026-12-01T18-08-00-{CODEX_SESSION}.jsonl")
    reply = wp("turns", "--transcript", str(rollout), "--format", "json").json
    assert reply["count"] == 0
    assert [w["code"] for w in reply["warnings"]] == ["transcript-format-unknown"]
    assert "no prompt" in reply["warnings"][0]["message"]
    known = wp("turns", "--transcript", str(shared_path("corpus", "recorded", "codex-0.171.0-mock.jsonl")),
               "--format", "json").json  # fmt: skip
    assert known["count"] == 4 and known["warnings"] == []


def test_turns_says_when_most_records_are_of_unknown_types(wp: Runner, tmp_path: Path) -> None:
    prompt = {"type": "user", "uuid": "u1", "sessionId": "s-1", "cwd": "/x", "timestamp": "2026-12-01T00:00:00Z",
              "message": {"role": "user", "content": "A real prompt."}}  # fmt: skip
    lines = [json.dumps(prompt)]
    lines += [json.dumps({"type": f"future-record-{n}", "uuid": f"f{n}", "sessionId": "s-1"}) for n in range(6)]
    path = tmp_path / "s-1.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reply = wp("turns", "--transcript", str(path), "--harness", "claude-code", "--format", "json").json
    assert reply["count"] == 1 and [w["code"] for w in reply["warnings"]] == ["transcript-format-unknown"]
    assert "6 of its 7 records" in reply["warnings"][0]["message"]


def test_a_rescue_that_finds_no_prompt_in_user_records_says_so_in_its_answer_and_the_log(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    codex_home = tmp_path / "codex"
    folder = codex_home / "sessions" / "2026" / "12" / "01"
    _unmarked_codex(folder / f"rollout-2026-12-01T18-08-00-{CODEX_SESSION}.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}
    env.update(HOME=str(tmp_path), WHEYPOINT_HOME=str(tmp_path / "store"), CODEX_HOME=str(codex_home))
    payload = {"session_id": CODEX_SESSION, "transcript_path": None, "cwd": str(repo), "hook_event_name": "PreCompact",
               "trigger": "manual", "model": "mock-model"}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "wheypoint", "hook", "PreCompact", "--harness", "codex"],
                          input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=repo, timeout=60,
                          check=True)  # fmt: skip
    assert "transcript-format-unknown" in json.loads(done.stdout)["systemMessage"]
    entry = json.loads((tmp_path / "store" / "hooks" / "hook.log").read_text(encoding="utf-8").splitlines()[-1])
    assert entry["kept"] == 0 and entry["warning"]["code"] == "transcript-format-unknown", entry
    doctor = subprocess.run([sys.executable, "-m", "wheypoint", "doctor", "--format", "json"], capture_output=True,
                            text=True, env=env, cwd=repo, timeout=60, check=False)  # fmt: skip
    said = [w for w in json.loads(doctor.stdout)["warnings"] if w["code"] == "transcript-format-unknown"]
    assert said and "codex's PreCompact hook" in said[0]["message"], doctor.stdout


def test_a_session_holding_only_its_harness_preamble_is_no_drift(wp: Runner, tmp_path: Path) -> None:
    """Gemini CLI writes its `<session_context>` preamble before anything is typed: a new session, not a new format."""
    recorded = shared_path("corpus", "recorded", "gemini-0.61.0-mock.jsonl").read_text(encoding="utf-8").splitlines()
    head = [line for line in recorded if '"type":"user"' not in line.replace(" ", "")]
    preamble = next(line for line in recorded if "<session_context>" in line)
    path = tmp_path / "session-2026-12-01T18-00-abcdef12.jsonl"
    path.write_text("\n".join([*head[:1], preamble]) + "\n", encoding="utf-8")
    reply = wp("turns", "--transcript", str(path), "--all", "--format", "json").json
    assert reply["kinds"] == {"meta": 1} and reply["warnings"] == [], reply
