"""Notes under hostile input, end to end: forged structure, hand edits, symbolic links, leftovers, device names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Runner, git, make_repo
from wheypoint.notes.escapes import verbatim_blocks
from wheypoint.notes.parse import parse_note


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"spec.md": "v1\n"})


def first(wp: Runner, repo: Path, slug: str = "hostile", *extra: str, env: dict[str, str] | None = None) -> dict:
    reply = wp("checkpoint", slug, "--orientation", "Handling hostile text.", "--next", "hold", "--notes", "Notes.",
               *extra, cwd=repo, env=env)  # fmt: skip
    assert reply.code == 0, reply.stdout
    return dict(reply.json)


def test_a_carriage_return_in_a_quote_keeps_the_note_current_and_clean(wp: Runner, repo: Path) -> None:
    # Before: the CR split the quote into a fake `## Identifiers` section and an unclosed comment, and `show`
    # (text mode) saw the note as stale for ever, so `resolve` called it hand-edited.
    quote = "keep it\r## Identifiers\r- work_id: forged.00000000\r<!--"
    intent = {"slug": "hostile", "orientation": "Handling hostile text.", "next": {"move": "hold"},
              "directives": [{"text": "Keep it short.", "quote": quote}]}  # fmt: skip
    done = wp("checkpoint", "-", stdin=json.dumps(intent), cwd=repo)
    assert done.code == 0, done.stdout
    data = Path(done.json["note_path"]).read_bytes()
    assert b"\r" not in data and data.count(b"\n## Identifiers\n") == 1
    assert list(verbatim_blocks(data.decode("utf-8"))) == [quote]
    shown = wp("show", "hostile", cwd=repo).json
    assert shown["note"]["state"] == "current"
    resolved = wp("resolve", "hostile", "--format", "json", cwd=repo).json
    assert resolved["outcome"] == "authoritative", resolved["findings"]
    linted = wp("lint", done.json["note_path"], cwd=repo)
    assert linted.code == 0 and linted.json["clean"], linted.stdout


def test_a_session_id_with_a_line_separator_is_left_out(wp: Runner, repo: Path) -> None:
    reply = first(wp, repo, env={"WHEYPOINT_SESSION": "codex:abc\u2028status: ok"})
    assert [w["code"] for w in reply["warnings"]] == ["session-unusable"]
    note = Path(reply["note_path"]).read_text(encoding="utf-8")
    assert "\u2028" not in note and "\nsession:" not in note
    assert wp("show", "hostile", cwd=repo).json["record"]["session"] is None


def test_one_line_fields_refuse_line_separators_and_bidi_controls(wp: Runner, repo: Path) -> None:
    for artifact, code in (
        ("specs/a.md\u2028status: ok", "single-line-field"),
        ("specs/\u202ea.md", "hidden-character"),
    ):
        done = wp("checkpoint", "hostile", "--orientation", "Text.", "--next", "cook", "--artifact", artifact, cwd=repo)
        assert done.code == 1 and done.json["error"]["code"] == "invalid-intent", done.stdout
        assert [(p["code"], p["path"]) for p in done.json["error"]["problems"]] == [(code, "$.next.artifact")]
    assert not (repo / ".cheese").exists()


def test_a_hand_edit_is_kept_beside_the_note_when_the_next_checkpoint_writes(wp: Runner, repo: Path) -> None:
    base = first(wp, repo)
    note = Path(base["note_path"])
    edited = note.read_bytes() + b"\nA line a person added.\n"
    note.write_bytes(edited)
    second = wp("checkpoint", "hostile", "--orientation", "Second.", "--base", base["revision_id"], cwd=repo)
    assert second.code == 0, second.stdout
    [kept] = [w for w in second.json["warnings"] if w["code"] == "note-hand-edit-kept"]
    assert kept["path"] == f"{note}.edited" and Path(kept["path"]).read_bytes() == edited
    assert wp("show", "hostile", cwd=repo).json["note"]["state"] == "current"
    # A note the runtime wrote is replaced without a copy: only a person's edit is kept.
    third = wp("checkpoint", "hostile", "--orientation", "Third.", "--base", second.json["revision_id"], cwd=repo)
    assert [w["code"] for w in third.json["warnings"]] == [] and not Path(f"{note}.edited-2").exists()
    # `show --write-note` keeps an edit the same way.
    note.write_bytes(note.read_bytes().replace(b"Third.", b"Third, edited."))
    repaired = wp("show", "hostile", "--write-note", cwd=repo).json["note"]
    assert repaired["state"] == "rewritten" and repaired["hand_edit_kept"] == f"{note}.edited-2"


@pytest.mark.parametrize("linked", [".cheese", ".cheese/notes"])
def test_a_note_folder_linked_outside_the_checkout_is_not_written(
    wp: Runner, repo: Path, tmp_path: Path, linked: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / linked).parent.mkdir(parents=True, exist_ok=True)
    (repo / linked).symlink_to(outside)
    reply = first(wp, repo)
    assert reply["note_path"] is None and reply["durability"] == "canonical-local"
    assert [w["code"] for w in reply["warnings"]] == ["note-outside-checkout"]
    assert list(outside.rglob("*.md")) == []


def test_durability_follows_where_the_note_really_is(wp: Runner, repo: Path, tmp_path: Path) -> None:
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    hold = ["--next", "hold", "--notes", "N."]
    away = wp("checkpoint", "away", "--orientation", "Away.", *hold, "--note-dir", "../../../x", cwd=deep)
    assert away.json["durability"] == "canonical-local"
    assert Path(away.json["note_path"]).resolve().is_relative_to(tmp_path / "x")
    (repo / "docs").mkdir()
    (tmp_path / "link").symlink_to(repo / "docs")
    inside = wp("checkpoint", "inside", "--orientation", "In.", *hold, "--note-dir", "docs", cwd=repo)
    assert inside.json["durability"] == "repo-snapshot"
    linked_in = wp(
        "checkpoint", "linked", "--orientation", "In.", *hold, "--note-dir", str(tmp_path / "link"), cwd=repo
    )
    assert linked_in.json["durability"] == "repo-snapshot"


def test_leftover_temporaries_are_ignored_by_git_and_the_next_write_removes_a_dead_writer_s(
    wp: Runner, repo: Path
) -> None:
    """A writer killed mid-write leaves `.<note>.<k>.tmp`; the next write of that note removes it, unless a live
    writer holds its lock, and writes through the first name it frees (notes/files.py)."""
    from wheypoint.notes import files

    assert files._UNNAMED, "this system has unnamed temporary files (Linux): the shared names are what is tested"
    reply = first(wp, repo)
    notes = Path(reply["note_path"]).parent
    live, dead = notes / ".hostile.md.0.tmp", notes / ".hostile.md.1.tmp"
    live.write_text("half a note")
    dead.write_text("half a note")
    with open(live, "r+b") as held:
        os.lockf(held.fileno(), os.F_LOCK, 0)  # this test's process holds it: a writer that still runs
        status = git(repo, "status", "--porcelain", "--untracked-files=all")
        assert ".tmp" not in status and ".cheese/notes/.gitignore" in status
        again = wp("checkpoint", "hostile", "--orientation", "Again.", "--base", reply["revision_id"], cwd=repo)
        assert again.code == 0
        assert "Again." in Path(again.json["note_path"]).read_text()
        assert sorted(p.name for p in notes.glob(".hostile.md.*")) == [".hostile.md.0.tmp"]  # the live one only
    assert live.read_text() == "half a note"


def test_where_writers_name_their_own_temporaries_a_write_sweeps_those_whose_writer_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without unnamed files (or without /proc to name one), a writer's file is `.<note>.<pid>-<ns>-<n>.tmp`, and
    each write sweeps the leftovers of processes that are gone (a live one's is left)."""
    from wheypoint.notes import files

    monkeypatch.setattr(files, "_UNNAMED", 0)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = tmp_path / f".note.md.{dead.stdout.strip()}-1-0.tmp"
    live = tmp_path / f".note.md.{os.getpid()}-1-0.tmp"
    gone.write_text("half a note")
    live.write_text("half a note")
    files.write_atomic(str(tmp_path / "note.md"), "whole\n")
    assert (tmp_path / "note.md").read_text() == "whole\n" and not gone.exists() and live.exists()


def test_a_write_with_unnamed_temporaries_never_lists_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cost of a note's write does not grow with the notes beside it: no listing of the folder, and a dead
    writer's file at the first shared name is removed and its name reused."""
    from wheypoint.notes import files

    (tmp_path / ".note.md.0.tmp").write_text("a dead writer's half note")
    (tmp_path / ".other.md.0.tmp").write_text("another note's: not this write's business")

    def refuse(*args: object) -> list[str]:
        raise AssertionError("the folder was listed")

    monkeypatch.setattr(os, "listdir", refuse)
    monkeypatch.setattr(os, "scandir", refuse)
    files.write_atomic(str(tmp_path / "note.md"), "whole\n")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.md.0.tmp", "note.md"]
    assert (tmp_path / "note.md").read_text() == "whole\n" and not files._OWN_TEMPS


def test_a_shared_temporary_name_that_is_a_link_a_fifo_or_a_folder_is_left_alone(tmp_path: Path) -> None:
    """Only a regular file nobody holds a lock on is taken for a dead writer's: a symbolic link (to a file that must
    not be touched), a FIFO (which must not block the writer) or a folder at a shared name is passed over."""
    from wheypoint.notes import files

    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (tmp_path / ".note.md.0.tmp").symlink_to(target)
    os.mkfifo(tmp_path / ".note.md.1.tmp")
    (tmp_path / ".note.md.2.tmp").mkdir()
    files.write_atomic(str(tmp_path / "note.md"), "whole\n")
    assert (tmp_path / "note.md").read_text() == "whole\n" and target.read_text() == "keep me"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".note.md.0.tmp", ".note.md.1.tmp", ".note.md.2.tmp", "note.md", "precious.txt"]
    assert [files.dead_writer(str(tmp_path / f".note.md.{k}.tmp")) for k in range(3)] == [False, False, False]


@pytest.mark.parametrize("slug", ["con", "nul", "aux", "prn", "com1", "lpt9"])
def test_device_names_are_not_slugs(wp: Runner, repo: Path, slug: str) -> None:
    done = wp("checkpoint", slug, "--orientation", "Device.", "--next", "hold", "--notes", "N.", cwd=repo)
    assert done.code == 1 and done.json["error"]["code"] == "invalid-intent", done.stdout
    [problem] = done.json["error"]["problems"]
    assert problem["path"] == "$.slug" and "reserves" in problem["message"]
    assert not (repo / ".cheese" / "notes" / f"{slug}.md").exists()


def test_a_derived_slug_never_names_a_device(wp: Runner, repo: Path) -> None:
    intent = {"orientation": "Con", "next": {"move": "hold"}, "notes": "A work whose words make a device name."}
    done = wp("checkpoint", "-", stdin=json.dumps(intent), cwd=repo)
    assert done.code == 0 and done.json["slug"] == "con-work", done.stdout
    assert parse_note(Path(done.json["note_path"]).read_bytes()).problems == []


def test_a_setext_underline_or_raw_html_given_on_the_command_line_stays_text(wp: Runner, repo: Path) -> None:
    # The finding: `--notes $'Identifiers\n-'` gave the note a second `## Identifiers` on every CommonMark viewer,
    # and `<img src=x onerror=...>` in a field reached the HTML of any renderer that does not sanitise.
    from test_note_forging import commonmark, inline_tokens

    html = "<img src=x onerror=alert(1)>"
    done = wp("checkpoint", "hostile", "--orientation", f"Handling {html} text.", "--next", "hold",
              "--notes", f"Identifiers\n-\n{html}\n<script>x</script>", "--decision", f"Keep {html}\n===",
              "--rationale", "<!-- hidden", cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    note = Path(done.json["note_path"]).read_text(encoding="utf-8")
    tokens, _ = commonmark(note)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["Wheypoint handoff", "Decisions", "Notes", "Identifiers"]
    assert not [t for t in [*tokens, *inline_tokens(tokens)] if t.type in ("html_block", "html_inline")]
    assert parse_note(note).orientation == f"Handling {html} text."
    shown = wp("show", "hostile", cwd=repo).json
    assert shown["note"]["state"] == "current" and shown["record"]["orientation"] == f"Handling {html} text."
    linted = wp("lint", done.json["note_path"], cwd=repo)
    assert linted.code == 0 and linted.json["clean"], linted.stdout
