"""Gemini CLI's hooks on its real 0.61 sessions: PreCompress on every turn, the packet through BeforeAgent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Runner, make_repo, shared_path

RECORDED = Path(__file__).parent / "data" / "recorded" / "gemini-0.61.0-e2e.jsonl"  # the e2e run's session
P1 = "Please add a small retry helper for the payments client."
P2 = "remember: never retry a POST without an idempotency key — the gateway double-charges otherwise."
P3 = 'Also: cap the backoff at 30 s ("full jitter" for now).\nSecond line with `code` and ünïcödé.'


class Scene:
    def __init__(self, wp: Runner, tmp_path: Path) -> None:
        self.wp = wp
        self.repo = make_repo(tmp_path / "repo")
        self.env = {"HOME": str(tmp_path / "user"), "GEMINI_CLI_HOME": str(tmp_path / "user")}
        self.chats = tmp_path / "user" / ".gemini" / "tmp" / "repo" / "chats"
        self.chats.mkdir(parents=True)
        self.records = [json.loads(line) for line in RECORDED.read_text(encoding="utf-8").splitlines()]
        self.session = self.records[0]["sessionId"]
        self.log = tmp_path / "home" / "hooks" / "hook.log"  # the `wp` fixture's store home, where the hooks log

    def last(self) -> dict[str, Any]:
        """The hook log's entry of the last call."""
        entry: dict[str, Any] = json.loads(self.log.read_text(encoding="utf-8").splitlines()[-1])
        return entry

    def transcript(self, records: list[Any], name: str = "") -> Path:
        path = self.chats / f"session-2026-12-01T20-25-{name or self.session[:8]}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        return path

    def until(self, predicate: Any) -> list[Any]:
        """The recorded records up to the first one `predicate` holds for, that one included."""
        for index, record in enumerate(self.records):
            if predicate(record):
                return self.records[: index + 1]
        raise AssertionError("no such record")

    def fire(self, event: str, transcript: Path, session: str | None = None, **extra: Any) -> dict[str, Any]:
        payload = {"session_id": session or self.session, "transcript_path": str(transcript), "cwd": str(self.repo),
                   "hook_event_name": event, "timestamp": "2026-12-01T20:30:00.000Z", **extra}  # fmt: skip
        done = self.wp("hook", event, "--harness", "gemini", cwd=self.repo, stdin=json.dumps(payload), env=self.env)
        assert done.code == 0 and done.stderr == "", done.stderr
        # Gemini decodes a hook's stdout 64 KiB at a time: a character split between two reads would be mangled.
        assert done.stdout.isascii(), done.stdout[:200]
        answer: dict[str, Any] = done.json
        return answer

    def works(self) -> list[dict[str, Any]]:
        return list(self.wp("list", cwd=self.repo, env=self.env).json["works"])

    def meat(self, slug: str) -> list[str]:
        return [m["text"] for m in self.wp("show", slug, cwd=self.repo, env=self.env).json["record"]["meat"]]


@pytest.fixture
def scene(wp: Runner, tmp_path: Path) -> Scene:
    return Scene(wp, tmp_path)


def _reply_to(text: str) -> Any:
    """The predicate for the reply that follows the user message holding `text` (it carries the token count)."""
    state = {"seen": False}

    def test(record: Any) -> bool:
        if record.get("type") == "user" and any(p.get("text") == text for p in record.get("content", [])):
            state["seen"] = True
        return state["seen"] and record.get("type") == "gemini"

    return test


def test_an_automatic_precompress_far_from_a_compression_keeps_nothing(scene: Scene) -> None:
    """Gemini fires PreCompress at the start of every turn, before its own threshold check: on a small session
    an automatic one writes nothing (before, each turn wrote a revision, the first one of the preamble alone)."""
    small = scene.transcript(scene.until(_reply_to(P2)))
    assert scene.fire("PreCompress", small, trigger="auto") == {}
    entry = scene.last()  # said in the log: why this one was let go, and how much of the context the reply read
    assert entry["skipped"] == "no compression near: the context is small and grew too little", entry
    assert isinstance(entry["share"], float) and 0 < entry["share"] < 0.2, entry
    assert scene.works() == []
    manual = scene.fire("PreCompress", small, trigger="manual")  # /compress: always a rescue
    assert "kept 2 turn(s)" in manual["systemMessage"]
    assert scene.meat(f"session-gemini-{scene.session[:8]}") == [P1, P2]


def test_an_automatic_precompress_near_a_compression_rescues(scene: Scene) -> None:
    """The last reply read 900,000 of the model's 1,048,576 tokens: this PreCompress is the compression's."""
    near = scene.transcript(scene.until(lambda r: (r.get("tokens") or {}).get("input", 0) > 500_000))
    answer = scene.fire("PreCompress", near, trigger="auto")
    assert "kept 3 turn(s)" in answer["systemMessage"]
    assert scene.meat(f"session-gemini-{scene.session[:8]}") == [P1, P2, P3]
    assert scene.fire("PreCompress", near, trigger="auto") == {}  # nothing new since


@pytest.mark.parametrize(("tokens", "rescued"), [(51_200, True), (51_199, False)])
def test_a_precompress_rescues_from_a_fifth_of_the_models_context_on(scene: Scene, tokens: int, rescued: bool) -> None:
    """Near a compression means the last reply read a fifth of the model's context or more: 51,200 of Gemma 4's
    256,000 tokens is exactly that share (GEMINI_NEAR_COMPRESS), one token fewer is not."""
    small = scene.until(_reply_to(P2))
    last = {**small[-1], "model": "gemma-4-27b-it", "tokens": {**(small[-1].get("tokens") or {}), "input": tokens}}
    answer = scene.fire("PreCompress", scene.transcript([*small[:-1], last]), trigger="auto")
    assert ("kept 2 turn(s)" in answer.get("systemMessage", "")) is rescued, answer
    assert bool(scene.works()) is rescued


def test_an_automatic_precompress_after_the_transcript_grew_rescues(scene: Scene) -> None:
    small = scene.until(_reply_to(P1))
    long_reply = {**small[-1], "id": "long-reply", "content": "x" * (70 * 1024)}
    grown = scene.transcript([*small, long_reply])
    assert "kept 1 turn(s)" in scene.fire("PreCompress", grown, trigger="auto")["systemMessage"]


def test_a_session_holding_only_the_preamble_makes_no_work(scene: Scene) -> None:
    """A new session's file starts with the CLI's `<session_context>` preamble: it is no prompt to keep."""
    preamble = scene.transcript(scene.records[:2])
    answer = scene.fire("PreCompress", preamble, trigger="manual")
    assert "kept" not in answer.get("systemMessage", ""), answer
    assert scene.works() == []


def test_the_packet_rides_beforeagent_once_per_session(scene: Scene) -> None:
    """SessionStart's context is glued onto the prompt, which a resume then drops: BeforeAgent carries the
    packet, as a part of its own after the prompt, once per session, and again after a compaction."""
    near = scene.transcript(scene.until(lambda r: (r.get("tokens") or {}).get("input", 0) > 500_000))
    scene.fire("PreCompress", near, trigger="auto")
    other = "0b0b0b0b-1111-2222-3333-444444444444"
    fresh = scene.transcript([{**scene.records[0], "sessionId": other}, scene.records[1]], name=other[:8])
    assert scene.fire("SessionStart", fresh, session=other, source="startup") == {}
    answer = scene.fire("BeforeAgent", fresh, session=other, prompt="New session: where were we?")
    output = answer["hookSpecificOutput"]
    assert output["hookEventName"] == "BeforeAgent"
    packet = output["additionalContext"]
    assert packet.startswith("wheypoint: the handoff of work session-gemini-")
    assert sorted(m["text"] for m in json.loads(packet.splitlines()[1])["meat"]) == sorted([P1, P2, P3])
    assert "ünïcödé" in packet  # printed as JSON escapes, read back whole
    assert scene.fire("BeforeAgent", fresh, session=other, prompt="and then?") == {}
    # A session that never compacted and finds no pending packet gets the newest work's, once.
    third = "0c0c0c0c-1111-2222-3333-444444444444"
    assert scene.fire("BeforeAgent", fresh, session=third, prompt="hi")["hookSpecificOutput"]["additionalContext"]
    assert scene.fire("BeforeAgent", fresh, session=third, prompt="hi again") == {}
    # The first session compacted: its next prompt gets the packet of what it rescued.
    after = scene.fire("BeforeAgent", near, prompt="After the compaction: what should I keep in mind?")
    assert after["hookSpecificOutput"]["additionalContext"].startswith("wheypoint: the handoff of work ")


def test_beforeagent_carries_the_pending_work_over_a_newer_one_and_nothing_once_the_session_had_it(
    scene: Scene, home: Path
) -> None:
    """The work a rescue left pending goes first, even when another work is newer; a session that had its packet
    and has nothing pending gets nothing (and no error); each packet given is logged with its work and size."""
    near = scene.transcript(scene.until(lambda r: (r.get("tokens") or {}).get("input", 0) > 500_000))
    scene.fire("PreCompress", near, trigger="auto")
    rescued = f"session-gemini-{scene.session[:8]}"
    scene.wp("checkpoint", "newer-work", "--orientation", "Newer.", "--next", "hold", "--notes", "N.",
             cwd=scene.repo, env=scene.env)  # fmt: skip
    other = "0c0c0c0c-1111-2222-3333-444444444444"
    fresh = scene.transcript([{**scene.records[0], "sessionId": other}, scene.records[1]], name=other[:8])
    packet = scene.fire("BeforeAgent", fresh, session=other, prompt="where were we?")["hookSpecificOutput"]
    assert json.loads(packet["additionalContext"].splitlines()[1])["slug"] == rescued
    log = home / "hooks" / "hook.log"
    entry = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    assert entry["work_id"].startswith(rescued) and entry["chars"] == len(packet["additionalContext"])
    assert scene.fire("BeforeAgent", fresh, session=other, prompt="and now?") == {}
    entry = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    assert "error" not in entry and "work_id" not in entry, entry


def test_a_rescue_keeps_prompts_without_the_context_glued_onto_them(scene: Scene) -> None:
    """0.61 with the earlier SessionStart answer: each resumed prompt began with the packet. The rescue keeps the
    prompt alone, so no packet ever nests inside the next one."""
    lines = shared_path("corpus", "recorded", "gemini-0.61.0-mock.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    scene.session = records[0]["sessionId"]
    path = scene.transcript(records[:14])  # P1, then P2 behind a packet, each with its reply
    answer = scene.fire("PreCompress", path, trigger="manual")
    assert "kept 2 turn(s)" in answer["systemMessage"]
    assert scene.meat(f"session-gemini-{scene.session[:8]}") == [P1, P2]
