"""What a first session hit (issue 8): references that mean what the user meant, and help on every command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Runner, git, make_repo

FIRST = ["--orientation", "Docs site, outlined.", "--next", "hold", "--notes", "Outline agreed."]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"docs/index.md": "# Docs\n", "retry.py": "a\n"})


def test_a_slug_that_is_also_a_folder_name_is_a_slug(wp: Runner, repo: Path) -> None:
    done = wp("checkpoint", "docs", *FIRST, cwd=repo)
    assert done.code == 0, done.stdout
    assert done.json["slug"] == "docs"


def test_only_dash_a_json_file_or_intent_names_an_intent_file(wp: Runner, repo: Path) -> None:
    (repo / "plan").write_text('{"slug": "plan", "orientation": "x.", "next": {"move": "hold"}, "notes": "n"}')
    done = wp("validate", "plan", *FIRST, cwd=repo)  # a file named plan exists; the target is still a slug
    assert done.code == 0 and done.json["slug"] == "plan"
    by_option = wp("validate", "--intent", "plan", cwd=repo)
    assert by_option.code == 0 and by_option.json["slug"] == "plan"


def test_an_idle_stdin_is_not_read_without_dash(home: Path, repo: Path) -> None:
    # stdin is a pipe nobody writes to: checkpoint with no target must answer at once, not wait for ever.
    reader, writer = __import__("os").pipe()
    try:
        done = subprocess.run([sys.executable, "-m", "wheypoint", "checkpoint"], cwd=repo, stdin=reader,
                              env={"WHEYPOINT_HOME": str(home), "PATH": "/usr/bin:/bin"}, capture_output=True,
                              text=True, timeout=30, check=False)  # fmt: skip
    finally:
        __import__("os").close(writer)
        __import__("os").close(reader)
    assert done.returncode == 2 and '"usage"' in done.stdout


def test_a_slug_flag_beside_a_positional_slug_is_refused_when_they_differ(wp: Runner, repo: Path) -> None:
    done = wp("checkpoint", "docs", "--slug", "other", *FIRST, cwd=repo)
    assert done.code == 1 and done.json["error"]["code"] == "flag-conflict"
    same = wp("validate", "docs", "--slug", "docs", *FIRST, cwd=repo)
    assert same.code == 0


def test_a_relative_note_path_resolves_as_a_path(wp: Runner, repo: Path) -> None:
    assert wp("checkpoint", "docs", *FIRST, cwd=repo).code == 0
    for ref in (".cheese/notes/docs.md", "./.cheese/notes/docs.md"):
        for args in (("resolve", ref), ("handoff", "dispatch", ref)):
            done = wp(*args, cwd=repo)
            assert done.code == 0, done.stdout
            assert done.json["outcome"] != "not-found" and done.json["work_id"].startswith("docs."), (args, done.json)


@pytest.mark.parametrize("args", [("handoff", "render", "--help"), ("snapshot", "--help"), ("list", "--gated", "-h")])
def test_help_anywhere_on_a_command_line_prints_that_commands_help(wp: Runner, args: tuple[str, ...]) -> None:
    done = wp(*args)
    assert done.code == 0 and done.stdout.startswith(f"usage: wheypoint {args[0]}")


def _first(wp: Runner, repo: Path) -> str:
    done = wp("checkpoint", "docs", *FIRST, cwd=repo)
    assert done.code == 0, done.stdout
    return str(done.json["revision_id"])


def test_show_takes_a_revision_by_number_label_or_id(wp: Runner, repo: Path) -> None:
    first = _first(wp, repo)
    second = wp("checkpoint", "docs", "--base", first, "--notes", "Changed.", cwd=repo)
    assert second.code == 0
    for ref in ("1", "r1", first):
        done = wp("show", "docs", "--revision", ref, cwd=repo)
        assert done.code == 0, (ref, done.stdout)
        assert done.json["record"]["revision_id"] == first and done.json["note"]["state"] == "not-head"
    assert wp("show", "docs", "--revision", "r7", cwd=repo).json["error"]["code"] == "revision-missing"


def test_a_made_up_base_is_unknown_not_stale(wp: Runner, repo: Path) -> None:
    _first(wp, repo)
    for command in ("validate", "checkpoint"):
        done = wp(command, "docs", "--base", "rev-0123456789abcdef", "--notes", "More.", cwd=repo)
        assert done.code == 1 and done.json["error"]["code"] == "unknown-base", (command, done.stdout)


def test_a_home_that_is_a_file_is_one_clear_refusal_for_every_command(wp: Runner, repo: Path, tmp_path: Path) -> None:
    _first(wp, repo)
    as_file = tmp_path / "home-is-a-file"
    as_file.write_text("not a folder")
    for args in (("checkpoint", "docs3", *FIRST), ("list",), ("resolve", "docs")):
        done = wp(*args, cwd=repo, env={"WHEYPOINT_HOME": str(as_file)})
        assert done.code == 1 and done.json["error"]["code"] == "storage-error", (args, done.stdout)


def test_a_note_that_cannot_be_written_is_note_unwritable_for_show_too(wp: Runner, repo: Path, tmp_path: Path) -> None:
    _first(wp, repo)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    done = wp("show", "docs", "--note-dir", str(blocker / "notes"), "--write-note", cwd=repo)
    assert done.code == 1 and done.json["error"]["code"] == "note-unwritable", done.stdout


def test_terminal_text_shows_no_python_reprs(wp: Runner, tmp_path: Path) -> None:
    import json

    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "cwd": str(tmp_path), "timestamp": "2026-11-30T10:00:00Z",
         "message": {"role": "user", "content": "do it"}},
        {"type": "progress", "uuid": "p1", "sessionId": "s1"},
        {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": "2026-11-30T10:01:00Z",
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Done. <!-- ckpt -->"}]}},
        "not json at all",
    ]  # fmt: skip
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    for command in ("turns", "harvest"):
        done = wp(command, "--transcript", str(transcript), "--format", "text")
        assert done.code == 0, done.stdout
        assert "{" not in done.stdout and "None" not in done.stdout and "'" not in done.stdout, done.stdout


def test_a_malformed_value_is_told_the_shape_expected(wp: Runner, repo: Path) -> None:
    _first(wp, repo)
    done = wp("validate", "docs", "--base", "r1", "--notes", "More.", cwd=repo)
    problem = done.json["error"]["problems"][0]
    assert problem["code"] == "bad-format" and problem["path"] == "$.base_revision_id"
    assert "rev- and 16 lowercase hex digits" in problem["message"] and "'r1'" in problem["message"]


def test_log_shows_what_moved_between_revisions(wp: Runner, repo: Path) -> None:
    first = _first(wp, repo)
    second = wp("checkpoint", "docs", "--base", first, "--next", "cook", "--artifact", "docs/index.md",
                "--context", "retry.py:1", "--question", "Ship?", "--gates", "--rationale", "Risky. options: yes | no;"
                " leaning: yes", cwd=repo)  # fmt: skip
    assert second.code == 0, second.stdout
    revisions = wp("log", "docs", "--format", "json", cwd=repo).json["revisions"]
    moved = revisions[1]["moved"]
    assert moved["next"] == {"from": "hold", "to": "cook"}
    assert moved["status"]["from"] == "ok" and moved["status"]["to"].startswith("gated: Ship?")
    assert moved["context"]["added"] and moved["context"]["added"][0].startswith("retry.py:1")
    text = wp("log", "docs", "--format", "text", cwd=repo).stdout
    assert "next: hold -> cook" in text and "status: ok -> gated: Ship?" in text


def test_the_note_glosses_its_next_move_and_ends_with_the_command_that_continues_it(wp: Runner, repo: Path) -> None:
    from wheypoint.model.contract import NEXT_MOVES
    from wheypoint.notes.render import MOVE_GLOSSES

    assert set(MOVE_GLOSSES) == set(NEXT_MOVES)
    first = _first(wp, repo)
    note = (repo / ".cheese" / "notes" / "docs.md").read_text()
    assert "- next: hold: restore orientation and wait" in note
    assert note.rstrip().endswith(f"- continue: `wheypoint checkpoint docs --base {first} ...`")
    assert wp("lint", ".cheese/notes/docs.md", cwd=repo).json["clean"] is True


def test_a_decided_fork_says_what_was_chosen_and_why(wp: Runner, repo: Path) -> None:
    first = wp("checkpoint", "jitter", "--orientation", "Backoff, designed.", "--next", "hold", "--question",
               "Full or equal jitter?", "--gates", "--rationale", "Both work. options: full | equal; leaning: full",
               cwd=repo).json  # fmt: skip
    gate = next(e for e in first["added"] if e.startswith("q-"))
    done = wp("checkpoint", "jitter", "--base", first["revision_id"], "--resolve", gate, "--rationale",
              "The payments lead chose full jitter.", cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    note = (repo / ".cheese" / "notes" / "jitter.md").read_text()
    dossier = note.split("## Decision dossier", 1)[1]
    assert "**Decided** in r2 (resolved): The payments lead chose full jitter." in dossier


def test_a_work_is_checked_against_the_checkout_it_was_written_in(wp: Runner, repo: Path, tmp_path: Path) -> None:
    done = wp("checkpoint", "retry-work", *FIRST, "--link", "retry.py", cwd=repo)
    assert done.code == 0, done.stdout
    elsewhere = make_repo(tmp_path / "other-project", {"README.md": "another project\n"})
    found = wp("resolve", "retry-work", cwd=elsewhere).json
    codes = {f["code"] for f in found["findings"]}
    assert found["outcome"] == "authoritative", found
    assert not codes & {"artifact-missing", "git-object-missing", "note-missing"}, found["findings"]
    assert found["note_path"] == str(repo / ".cheese" / "notes" / "retry-work.md")
    assert found["checkout"] == {"path": str(repo), "current": False}
    shown = wp("show", "retry-work", "--format", "json", cwd=elsewhere).json  # by slug from another project
    by_id = wp("show", done.json["work_id"], cwd=elsewhere).json
    assert shown["work_id"] == done.json["work_id"] and shown["found_elsewhere"]["work_id"] == done.json["work_id"]
    assert by_id["note"] == shown["note"] == {"path": found["note_path"], "state": "current"}
    assert "found_elsewhere" not in by_id  # a work id names one work wherever it is
    here = wp("resolve", "retry-work", cwd=repo).json
    assert here["checkout"] == {"path": str(repo), "current": True} and here["outcome"] == "authoritative"


def test_another_checkout_of_the_same_project_is_the_one_checked(wp: Runner, repo: Path, tmp_path: Path) -> None:
    git(repo, "remote", "add", "origin", "git@example.invalid:acme/shop.git")
    assert wp("checkpoint", "retry-work", *FIRST, "--link", "retry.py", cwd=repo).code == 0
    clone = tmp_path / "clone-elsewhere"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    git(clone, "remote", "set-url", "origin", "git@example.invalid:acme/shop.git")  # the same project
    (clone / "retry.py").write_text("changed in this clone\n")
    found = wp("resolve", "retry-work", cwd=clone).json
    assert found["checkout"] == {"path": str(clone), "current": True}
    assert found["note_path"] == str(clone / ".cheese" / "notes" / "retry-work.md")
    codes = {f["code"] for f in found["findings"]}
    assert {"stale-artifact-link", "note-missing"} <= codes, found["findings"]


def test_a_checkout_that_is_gone_is_said_not_guessed(wp: Runner, repo: Path, tmp_path: Path) -> None:
    assert wp("checkpoint", "retry-work", *FIRST, "--link", "retry.py", cwd=repo).code == 0
    repo.rename(tmp_path / "moved-away")
    elsewhere = make_repo(tmp_path / "other-project")
    found = wp("resolve", "retry-work", cwd=elsewhere).json
    codes = [f["code"] for f in found["findings"]]
    assert "checkout-missing" in codes and "artifact-missing" not in codes, found["findings"]
    assert found["checkout"] == {"path": str(repo), "current": False}


def test_an_orientation_left_behind_by_new_decisions_is_flagged(wp: Runner, repo: Path) -> None:
    first = wp("checkpoint", "site", "--orientation", "Designed, not built.", "--next", "hold", "--decision",
               "Static pages.", "--rationale", "Cheap.", cwd=repo).json  # fmt: skip
    assert first["warnings"] == []
    moved = wp("checkpoint", "site", "--base", first["revision_id"], "--decision", "Built the generator.",
               "--rationale", "Done today.", cwd=repo)  # fmt: skip
    assert [w["code"] for w in moved.json["warnings"]] == ["stale-orientation"], moved.stdout
    note = (repo / ".cheese" / "notes" / "site.md").read_text()
    decided = next(e for e in moved.json["added"] if e.startswith("d-"))
    assert (
        f"> **Stale orientation:** the orientation at the top was stated at r1; decisions changed at r2 ({decided})"
        in note
    )
    assert wp("lint", str(repo / ".cheese" / "notes" / "site.md"), cwd=repo).code == 0
    restated = wp("checkpoint", "site", "--base", moved.json["revision_id"], "--orientation", "Built; in review.",
                  cwd=repo)  # fmt: skip
    assert restated.json["warnings"] == [] and "Stale orientation" not in (repo / ".cheese/notes/site.md").read_text()
    assert wp("show", "site", cwd=repo).json["record"]["orientation_revision"] == 3
