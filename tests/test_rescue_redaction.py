"""A user turn holding a credential is kept by the rescue with the credential redacted, never dropped or copied.

The real hook on a Claude Code session in a real checkout; then the store's bytes, the note and hook.log are
searched for the value. The same choice is offered to checkpoint's JSON and flag forms (`redact`, `--redact`).
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from conftest import Runner
from test_rescue_incremental import SLUG, Scene


def _token(seed: int) -> str:
    """A fake GitHub token of the documented shape, generated here (nothing realistic is stored)."""
    return "ghp_" + "".join(random.Random(seed).choices(string.ascii_letters + string.digits, k=36))


def _everywhere(root: Path) -> bytes:
    """Every byte under `root` (the store with its WAL, the notes, the hooks' state and log)."""
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.suffix != ".jsonl")


def test_the_rescue_keeps_a_turn_with_a_credential_redacted_and_says_where(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    token, other = _token(1), _token(2)
    before, after = "Deploy with this key ", " and never push to main on Fridays."
    scene.append(scene.record("user", "First: the retry helper."), scene.record("assistant", "On it."),
                 scene.record("user", before + token + after), scene.record("assistant", "Noted."),
                 scene.record("user", f"Also {other}, twice: {other}."))  # fmt: skip
    answer = scene.hook()
    assert "kept 3 turn(s)" in answer["systemMessage"] and "[redacted <rule>]" in answer["systemMessage"]
    assert "left in the transcript" not in answer["systemMessage"]
    kept = scene.kept()
    assert kept[0] == "First: the retry helper."
    assert kept[1] == before + "[redacted github-pat]" + after  # the person's other words, byte for byte
    assert kept[2] == "Also [redacted github-pat], twice: [redacted github-pat]."
    import sqlite3

    db = sqlite3.connect(scene.home / "store.sqlite3")
    try:
        [(text,)] = db.execute("SELECT r.record_json FROM revisions r JOIN works w ON w.head_revision_id = "
                               "r.revision_id WHERE w.slug = ?", (SLUG,)).fetchall()  # fmt: skip
    finally:
        db.close()
    meat = json.loads(text)["meat"]
    assert "redacted" not in meat[0]
    marker = "[redacted github-pat]"
    assert meat[1]["redacted"] == [{"rule": "github-pat", "start": len(before), "end": len(before) + len(marker)}]
    second = 5 + len(marker) + len(", twice: ")
    assert [(s["start"], s["end"]) for s in meat[2]["redacted"]] == [
        (5, 5 + len(marker)),
        (second, second + len(marker)),
    ]
    for item in meat[1:]:
        assert all(item["text"][s["start"] : s["end"]] == marker for s in item["redacted"])
    found = _everywhere(tmp_path)
    assert token.encode() not in found and other.encode() not in found
    note = (scene.repo / ".cheese" / "notes" / f"{SLUG}.md").read_text(encoding="utf-8")
    assert after in note and token not in note


def test_checkpoint_refuses_a_credential_in_meat_unless_asked_to_redact(wp: Runner, tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    token = _token(3)
    scene.append(scene.record("user", f"Use {token} for the staging deploy."))
    turn = "00000000-0000-4000-8000-000000000001"
    base = [
        "checkpoint",
        "deploy",
        "--orientation",
        "Deploying.",
        "--next",
        "hold",
        "--notes",
        "N.",
        "--transcript",
        str(scene.path),
    ]
    refused = wp(*base, "--meat", turn, "--type", "constraint", cwd=scene.repo)
    assert refused.code == 1 and [p["code"] for p in refused.json["error"]["problems"]] == ["secret-pattern"]
    assert token not in refused.stdout
    done = wp(*base, "--meat", turn, "--type", "constraint", "--redact", cwd=scene.repo)
    assert done.code == 0, done.stdout
    record = wp("show", "deploy", cwd=scene.repo).json["record"]
    [item] = record["meat"]
    assert item["text"] == "Use [redacted github-pat] for the staging deploy." and len(item["redacted"]) == 1
    intent = {"slug": "deploy-json", "orientation": "Deploying.", "next": {"move": "hold"}, "notes": "N.",
              "meat": [{"turn": turn, "type": "constraint", "redact": True}]}  # fmt: skip
    assert wp("checkpoint", "-", "--transcript", str(scene.path), stdin=json.dumps(intent), cwd=scene.repo).code == 0
    assert token.encode() not in _everywhere(tmp_path)
