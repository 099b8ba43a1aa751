"""Every command that writes a note, through a checkout whose note folder (or note) is a link out: none follows it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Runner, make_repo

LINKS = [".cheese", ".cheese/notes", "note"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"retry.py": "a\nb\nc\n"})


def _work(wp: Runner, repo: Path, slug: str, *extra: str) -> dict:
    done = wp("checkpoint", slug, "--orientation", f"{slug} goes on.", "--next", "hold", "--decision", f"{slug} A.",
              "--rationale", "Because.", "--question", f"{slug} B?", *extra, cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    return dict(done.json)


def _link_out(repo: Path, outside: Path, linked: str, slugs: list[str]) -> None:
    """Make `linked` (a folder of the default note path, or each work's note itself) a link to `outside`."""
    notes = repo / ".cheese" / "notes"
    outside.mkdir(exist_ok=True)
    if linked == "note":
        for slug in slugs:
            target = outside / f"{slug}.md"
            target.write_text("a file the attacker wants overwritten\n", encoding="utf-8")
            (notes / f"{slug}.md").unlink(missing_ok=True)
            (notes / f"{slug}.md").symlink_to(target)
        return
    shutil.rmtree(repo / ".cheese")
    (repo / linked).parent.mkdir(parents=True, exist_ok=True)
    (repo / linked).symlink_to(outside, target_is_directory=True)


def _untouched(outside: Path, linked: str) -> None:
    found = sorted(outside.rglob("*"))
    if linked == "note":
        assert all(p.read_text(encoding="utf-8") == "a file the attacker wants overwritten\n" for p in found), found
    else:
        assert found == [], found


def _codes(reply: dict) -> list[str]:
    return [w["code"] for w in reply.get("warnings", [])]


@pytest.mark.parametrize("linked", LINKS)
def test_no_command_writes_a_note_through_a_link_out_of_the_checkout(
    wp: Runner, repo: Path, tmp_path: Path, linked: str
) -> None:
    alpha = _work(wp, repo, "alpha")
    _work(wp, repo, "gamma")
    outside = tmp_path / "elsewhere"
    slugs = ["alpha", "gamma", "alpha-child", "alpha-left", "alpha-right", "joined", "copied"]
    _link_out(repo, outside, linked, slugs)

    second = wp("checkpoint", "alpha", "--orientation", "Again.", "--base", alpha["revision_id"], cwd=repo)
    assert second.code == 0 and second.json["note_path"] is None, second.stdout
    assert _codes(second.json) == ["note-outside-checkout"]

    alpha_record = wp("show", "alpha", cwd=repo).json["record"]
    question = next(e["id"] for e in alpha_record["entries"] if e["kind"] == "question")
    forked = wp("fork", "alpha", "alpha-child", "--orientation", "The question moves.", "--move", question, cwd=repo)
    assert forked.code == 0, forked.stdout
    assert forked.json["child"]["note_path"] is None and forked.json["parent"]["note_path"] is None
    assert set(_codes(forked.json)) == {"note-outside-checkout"}

    gamma_record = wp("show", "gamma", cwd=repo).json["record"]
    kinds = {e["kind"]: e["id"] for e in gamma_record["entries"]}
    split = wp("split", "gamma", "alpha-left", "alpha-right", "--first-orientation", "L.", "--second-orientation",
               "R.", "--to-first", kinds["decision"], "--to-second", kinds["question"], cwd=repo)  # fmt: skip
    assert split.code == 0, split.stdout
    assert "note-outside-checkout" in _codes(split.json)

    linked_reply = wp("link", "alpha", "alpha-child", "--kind", "blocked_by", "--base",
                      wp("show", "alpha", cwd=repo).json["record"]["revision_id"], cwd=repo)  # fmt: skip
    assert linked_reply.code == 0, linked_reply.stdout
    assert _codes(linked_reply.json) == ["note-outside-checkout"]

    joined = wp("join", "alpha", "alpha-child", "joined", "--orientation", "Both.", cwd=repo)
    assert joined.code == 0, joined.stdout
    assert "note-outside-checkout" in _codes(joined.json)

    bundle = tmp_path / "g.bundle.json"
    assert wp("export", "gamma", "--out", str(bundle), cwd=repo).code == 0
    imported = wp("import", str(bundle), "--as", "copied", cwd=repo)
    assert imported.code == 0, imported.stdout
    assert imported.json["note_paths"] == [None] and _codes(imported.json) == ["note-outside-checkout"]

    shown = wp("show", "gamma", "--write-note", cwd=repo)
    assert shown.code == 1 and shown.json["error"]["code"] == "note-outside-checkout", shown.stdout

    doctor = wp("doctor", "--fix", cwd=repo)
    assert not any(f.get("action") == "rendered-note" for f in doctor.json["fixed"]), doctor.stdout
    _untouched(outside, linked)


def test_a_note_dir_named_outside_is_followed_but_one_inside_may_not_lead_out(
    wp: Runner, repo: Path, tmp_path: Path
) -> None:
    away = tmp_path / "away"
    done = _work(wp, repo, "alpha", "--note-dir", str(away))
    assert done["note_path"] == str(away / "alpha.md") and (away / "alpha.md").is_file()
    (repo / "docs").symlink_to(tmp_path / "away", target_is_directory=True)
    again = wp(
        "checkpoint", "beta", "--orientation", "B.", "--next", "hold", "--notes", "N.", "--note-dir", "docs", cwd=repo
    )
    assert again.code == 0 and again.json["note_path"] is None and _codes(again.json) == ["note-outside-checkout"]
    assert not (away / "beta.md").exists()


def test_a_fifo_or_folder_where_the_note_goes_is_refused_without_blocking(wp: Runner, repo: Path) -> None:
    alpha = _work(wp, repo, "alpha")
    note = Path(alpha["note_path"])
    note.unlink()
    os.mkfifo(note)
    again = wp("checkpoint", "alpha", "--orientation", "Again.", "--base", alpha["revision_id"], cwd=repo)
    assert again.code == 0 and _codes(again.json) == ["note-unwritable"], again.stdout
    assert wp("show", "alpha", "--write-note", cwd=repo).json["error"]["code"] == "note-unwritable"
    assert note.is_fifo()


def test_over_mcp_no_note_dir_is_offered_and_show_never_writes_through_a_link(
    repo: Path, tmp_path: Path, home: Path
) -> None:
    env = {**os.environ, "HOME": str(home), "WHEYPOINT_HOME": str(tmp_path / "wh")}
    env.pop("CI", None)
    base = [sys.executable, "-m", "wheypoint"]
    subprocess.run([*base, "checkpoint", "alpha", "--orientation", "O.", "--next", "hold", "--notes", "N."],
                   cwd=repo, env=env, capture_output=True, check=True, timeout=60)  # fmt: skip
    outside = tmp_path / "commands"
    _link_out(repo, outside, ".cheese/notes", ["alpha"])
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "show", "arguments": {"work": "alpha", "note_dir": str(outside)}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "show", "arguments": {"work": "alpha", "write_note": True}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "checkpoint", "arguments": {"intent": {"slug": "beta", "orientation": "B.",
                                                                     "next": {"move": "hold"}, "notes": "N."}}}},
    ]  # fmt: skip
    data = b"".join(json.dumps(m).encode() + b"\n" for m in messages)
    done = subprocess.run([*base, "mcp"], input=data, cwd=repo, env=env, capture_output=True, timeout=60, check=False)
    replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    for tool in replies[2]["result"]["tools"]:
        assert "note_dir" not in tool["inputSchema"]["properties"], tool["name"]
    assert "note_dir" in json.dumps(replies[3]["result"]) and replies[3]["result"]["isError"] is True
    shown = replies[4]["result"]
    assert shown["isError"] is True and shown["structuredContent"]["error"]["code"] == "note-outside-checkout"
    written = replies[5]["result"]["structuredContent"]
    assert written["note_path"] is None and _codes(written) == ["note-outside-checkout"]
    assert list(outside.rglob("*")) == []
