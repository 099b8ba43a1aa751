"""A transcript whose head is damaged (a byte-order mark, a blank, cut or garbled first line) is still recognised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Runner, shared_path
from test_transcripts_gemini import session_records

# What can sit before a transcript's first record, and how many lines of it the reader counts as bad: each is passed
# over when the harness is told from the content.
DAMAGE = {
    "byte-order mark": (b"\xef\xbb\xbf", 0),
    "blank line": (b"\n", 0),
    "cut first write": (b'{"type": "user", "message": {"role": "us\n', 1),
    "garbled line": (b"\x00\xff\xfe garbage \x80\n", 1),
    "two damaged lines and a blank one": (b'\n{"half\n\x00\n', 2),
}


def _sources(tmp_path: Path) -> dict[str, Path]:
    """One session of each JSONL harness: real Claude Code and Codex files from the corpus, a Gemini CLI one."""
    gemini = tmp_path / "session-2026-01-01T00-00-11111111.jsonl"
    gemini.write_text("".join(json.dumps(record) + "\n" for record in session_records()), encoding="utf-8")
    claude = sorted(shared_path("corpus", "claude-code").glob("entire-*.jsonl"))
    codex = sorted(shared_path("corpus", "codex").glob("*.jsonl"))
    assert claude and codex, "the corpus holds Claude Code and Codex sessions"
    return {"claude-code": claude[0], "codex": codex[0], "gemini": gemini}


def _turns(reply: dict[str, object]) -> object:
    return [(turn["kind"], turn["text"]) for turn in reply["turns"]]  # type: ignore[index, union-attr]


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_head_still_reads_as_its_harness(wp: Runner, tmp_path: Path, damage: str) -> None:
    for harness, source in _sources(tmp_path).items():
        original = wp("turns", "--transcript", str(source), "--all", cwd=tmp_path)
        assert original.code == 0, original.stdout
        damaged = tmp_path / f"damaged-{harness}{source.suffix}"
        head, bad_lines = DAMAGE[damage]
        damaged.write_bytes(head + source.read_bytes())
        reply = wp("turns", "--transcript", str(damaged), "--all", cwd=tmp_path)
        assert reply.code == 0, (harness, reply.stdout)
        got, want = reply.json, original.json
        assert (
            (got["harness"], got["session_id"]) == (want["harness"], want["session_id"]) == (harness, got["session_id"])
        )
        assert got["session_id"], harness
        assert _turns(got) == _turns(want), harness  # the user's words come through unchanged
        bad, was_bad = (sum(r["stats"][key] for key in ("malformed", "invalid_utf8")) for r in (got, want))
        assert bad == was_bad + bad_lines, (harness, got["stats"])  # counted, as any damaged line is


def test_five_damaged_lines_are_too_many(wp: Runner, tmp_path: Path) -> None:
    """Past a few damaged lines the file is not taken for a transcript unless its harness is named."""
    source = _sources(tmp_path)["codex"]
    damaged = tmp_path / "noise.jsonl"
    damaged.write_bytes(b"not json\n" * 5 + source.read_bytes())
    reply = wp("turns", "--transcript", str(damaged), cwd=tmp_path)
    assert reply.json["error"]["code"] == "transcript-unrecognised"
    named = wp("turns", "--transcript", str(damaged), "--harness", "codex", cwd=tmp_path)
    assert named.code == 0 and named.json["harness"] == "codex"
