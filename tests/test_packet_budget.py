"""The packet a hook hands the model stays within its budget as the harness counts it, and says when it is partial."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_rescue_incremental import Scene

HEAD = "wheypoint: the handoff of work"


@pytest.mark.parametrize("text", ["Prompt number {n}: keep the retry budget small.", "Emoji prompt {n}: " + "🦀" * 60])
def test_a_packet_that_leaves_turns_out_says_so_on_its_first_line_and_fits_in_utf16(tmp_path: Path, text: str) -> None:
    scene = Scene(tmp_path)
    scene.append(*(scene.record("user", text.format(n=n)) for n in range(150)))
    assert "kept 150 turn(s)" in scene.hook()["systemMessage"]
    context = scene.hook("SessionStart")["hookSpecificOutput"]["additionalContext"]
    first, body = context.split("\n", 2)[:2]
    packet = json.loads(body)
    left = packet["omitted"]["meat"]
    assert left > 0 and len(packet["meat"]) + left == 150
    assert first.startswith(HEAD) and f"[partial: {left} item(s) left out for size;" in first
    assert f"`wheypoint handoff render {packet['slug']}`]" in first
    # Claude Code counts a hook's context in UTF-16 code units (an emoji is two) and cuts it past 10,000.
    assert len(context.encode("utf-16-le")) // 2 <= 10000
    assert len(context.encode("utf-16-le")) // 2 > 9000  # the room is used, not wasted


def test_a_whole_packet_has_no_partial_mark(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.append(scene.record("user", "Just one prompt."))
    scene.hook()
    context = scene.hook("SessionStart")["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(HEAD) and "[partial" not in context.splitlines()[0]
    assert json.loads(context.splitlines()[1])["omitted"] == {}
