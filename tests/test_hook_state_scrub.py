"""What the hooks keep between calls (state, hook.log) never holds a credential a payload carried verbatim."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from conftest import Runner, make_repo


def _token(seed: int) -> str:
    """A fake GitHub token of the documented shape (generated here; nothing realistic is stored)."""
    return "ghp_" + "".join(random.Random(seed).choices(string.ascii_letters + string.digits, k=36))


def test_a_credential_as_session_id_or_source_never_reaches_the_state_or_the_log(
    wp: Runner, tmp_path: Path, home: Path
) -> None:
    repo = make_repo(tmp_path / "shop")
    session, source = _token(1), _token(2)
    payload = {"session_id": session, "cwd": str(repo), "hook_event_name": "SessionStart", "source": source,
               "transcript_path": str(tmp_path / "none.jsonl")}  # fmt: skip
    assert wp("checkpoint", "w", "--orientation", "O.", "--next", "hold", "--notes", "N.", cwd=repo).code == 0
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        done = wp("hook", event, "--harness", "claude-code", cwd=repo, stdin=json.dumps({**payload, "prompt": "p"}))
        assert done.code == 0, done.stdout
    kept = [p for p in tmp_path.rglob("*") if p.is_file() and (p.parent.name == "hooks" or p.name == "hook.log")]
    assert any(p.name == "hook.log" for p in kept) and any(p.suffix == ".json" for p in kept), kept
    for path in kept:
        text = path.read_text(encoding="utf-8")
        assert session not in text and source not in text, path
    assert any("[redacted" in p.read_text(encoding="utf-8") for p in kept)


def test_ids_the_harnesses_send_are_kept_without_a_scan() -> None:
    from wheypoint.hooks.state import payload_text

    for plain in ("claude-code:5a8b7e8e-4b0c-4c8e-9d35-2a6f1c0e7f11", "opencode:ses_dccb332c4ffex2vwRgdnRsnsle",
                  "compact", "startup", "codex:", 7, None):  # fmt: skip
        assert payload_text(plain) == plain
    assert payload_text(f"codex:{_token(3)}") == "codex:[redacted github-pat]"


_PLAIN_PARTS = st.sampled_from(["claude-code:", "opencode:", "a:", "-:", "x" * 17 + ":", "Ab:", "", "ses_", "-", ":",
                                "0123abcd-0000-4000-8000-00000000cafe", "0123ABCD-0000-4000-8000-00000000cafe",
                                "0123abcd-0000-4000-8000-00000000caf", "ses_" + "aB3" * 8 + "xY", "ses_" + "é" * 26,
                                "compact", "startup", "a_b", "x" * 16, "x" * 17, "1", " ", "é", "\n"])  # fmt: skip


@given(st.lists(_PLAIN_PARTS, max_size=4).map("".join) | st.text(max_size=40))
def test_the_plain_test_is_the_pattern(value: str) -> None:
    """hooks/state.py tells a harness's ids and words by string tests: exactly what its pattern fullmatches."""
    import re

    from wheypoint.hooks import state

    assert state._plain(value) == (re.fullmatch(state.PLAIN_PATTERN, value) is not None), value
