"""One lookup rule for every command that takes a work: this project, then one work machine-wide, else refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Runner, make_repo


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, Path]:
    return {
        "shop": make_repo(tmp_path / "shop", {"a.py": "x\n"}, remote="git@github.com:Acme/Shop.git"),
        "mail": make_repo(tmp_path / "mail", {"b.py": "y\n"}, remote="git@github.com:Acme/Mail.git"),
        "docs": make_repo(tmp_path / "docs", {"c.md": "z\n"}, remote="git@github.com:Acme/Docs.git"),
    }


def _work(wp: Runner, repo: Path, slug: str) -> dict[str, Any]:
    done = wp("checkpoint", slug, "--orientation", f"The {slug} work.", "--next", "hold", "--decision",
              f"Decide {slug}.", "--rationale", "Because.", cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    return dict(done.json)


def test_every_reading_command_finds_a_slug_of_another_project_and_says_so(wp: Runner, repos: dict[str, Path],
                                                                            tmp_path: Path) -> None:  # fmt: skip
    made = _work(wp, repos["shop"], "retry-backoff")
    _work(wp, repos["shop"], "retry-backoff-two")
    here = repos["mail"]  # a checkout of another project: the slug is not one of its works
    for argv in (("show", "retry-backoff", "--format", "json"), ("log", "retry-backoff", "--format", "json"),
                 ("diff", "retry-backoff", "--format", "json"), ("graph", "retry-backoff", "--format", "json"),
                 ("export", "retry-backoff", "--out", str(tmp_path / "b.json"))):  # fmt: skip
        done = wp(*argv, cwd=here)
        assert done.code == 0, (argv, done.stdout)
        assert done.json["work_id" if argv[0] != "export" else "found_elsewhere"] is not None, done.stdout
        said = done.json["found_elsewhere"]
        assert said["project"] == "acme-shop" and said["work_id"] == made["work_id"], (argv, said)
        assert "acme-mail" in said["message"] and "acme-shop" in said["message"]
    # In its own project the same slug is found without a word about elsewhere.
    own = wp("show", "retry-backoff", "--format", "json", cwd=repos["shop"])
    assert own.code == 0 and "found_elsewhere" not in own.json, own.stdout


def test_a_slug_several_other_projects_hold_is_refused_naming_them(wp: Runner, repos: dict[str, Path]) -> None:
    shop = _work(wp, repos["shop"], "release-plan")
    docs = _work(wp, repos["docs"], "release-plan")
    for command in ("show", "log", "diff", "export"):
        done = wp(command, "release-plan", cwd=repos["mail"])
        assert done.code != 0 and done.json["error"]["code"] == "ambiguous", (command, done.stdout)
        error = done.json["error"]
        assert "acme-docs" in error["message"] and "acme-shop" in error["message"], error
        assert sorted(c["work_id"] for c in error["candidates"]) == sorted([shop["work_id"], docs["work_id"]])
    # This project's own work wins over the others.
    mine = _work(wp, repos["mail"], "release-plan")
    done = wp("show", "release-plan", "--format", "json", cwd=repos["mail"])
    assert done.code == 0 and done.json["work_id"] == mine["work_id"] and "found_elsewhere" not in done.json


def test_a_slug_no_project_holds_is_refused_with_close_slugs(wp: Runner, repos: dict[str, Path]) -> None:
    _work(wp, repos["shop"], "retry-backoff")
    done = wp("show", "retry-backof", cwd=repos["mail"])
    error = done.json["error"]
    assert error["code"] == "record-missing" and "nor elsewhere on this machine" in error["message"], error
    assert error["suggestions"] == ["retry-backoff"]


def test_a_note_path_and_a_store_ref_name_a_work_for_every_command(wp: Runner, repos: dict[str, Path],
                                                                   tmp_path: Path) -> None:  # fmt: skip
    made = _work(wp, repos["shop"], "retry-backoff")
    note = repos["shop"] / ".cheese" / "notes" / "retry-backoff.md"
    assert note.is_file()
    for ref in (str(note), f"wheypoint:acme-shop/{made['work_id']}", "wheypoint:acme-shop/retry-backoff"):
        out = str(tmp_path / "n.json")
        for argv in (("show", ref, "--format", "json"), ("log", ref, "--format", "json"),
                     ("diff", ref, "--format", "json"), ("export", ref, "--out", out)):  # fmt: skip
            done = wp(*argv, cwd=tmp_path)  # outside any checkout
            assert done.code == 0, (argv, done.stdout)
            if argv[0] != "export":
                assert done.json["work_id"] == made["work_id"], (argv, done.stdout)
            assert "found_elsewhere" not in done.json
    # A store ref names its project: the same slug in another project is not it.
    wrong = wp("show", "wheypoint:acme-mail/retry-backoff", cwd=tmp_path)
    assert wrong.json["error"]["code"] == "record-missing", wrong.stdout


def test_a_note_no_record_backs_is_refused_with_the_way_to_adopt_it(wp: Runner, repos: dict[str, Path]) -> None:
    legacy = repos["shop"] / ".cheese" / "notes" / "by-hand.md"
    legacy.parent.mkdir(parents=True, exist_ok=True)
    legacy.write_text("# By hand\n\nstatus: ok\n\nWritten by a person.\n", encoding="utf-8")
    for command in ("show", "export"):
        done = wp(command, str(legacy), cwd=repos["shop"])
        error = done.json["error"]
        assert error["code"] == "record-missing" and "wheypoint adopt" in error["message"], (command, error)
    gone = wp("show", str(repos["shop"] / "nowhere.md"), cwd=repos["shop"])
    assert gone.json["error"]["code"] == "record-missing" and "no note at" in gone.json["error"]["message"]


def _rows(wp: Runner, cwd: Path, *filters: str) -> list[str]:
    done = wp("list", *filters, "--format", "json", cwd=cwd)
    assert done.code == 0, done.stdout
    return [row["slug"] for row in done.json["works"]]


def test_list_forked_from_takes_a_slug_an_id_a_note_path_or_a_store_ref(wp: Runner, repos: dict[str, Path]) -> None:
    parent = _work(wp, repos["shop"], "retry-backoff")
    forked = wp("fork", "retry-backoff", "retry-jitter", "--orientation", "The jitter half.", "--copy",
                parent["added"][0], "--base", parent["revision_id"], cwd=repos["shop"])  # fmt: skip
    assert forked.code == 0, forked.stdout
    _work(wp, repos["shop"], "unrelated")
    note = str(repos["shop"] / ".cheese" / "notes" / "retry-backoff.md")
    for ref in ("retry-backoff", parent["work_id"], note, f"wheypoint:acme-shop/{parent['work_id']}"):
        assert _rows(wp, repos["shop"], "--forked-from", ref) == ["retry-jitter"], ref
    # From another project, machine-wide, the parent's slug is looked up the same way.
    assert _rows(wp, repos["mail"], "--scope", "machine", "--forked-from", "retry-backoff") == ["retry-jitter"]
    missing = wp("list", "--forked-from", "retry-backof", cwd=repos["shop"])
    assert missing.json["error"]["code"] == "record-missing", missing.stdout


def test_list_linked_to_matches_a_work_however_it_is_named(wp: Runner, repos: dict[str, Path]) -> None:
    target = _work(wp, repos["mail"], "mail-relay")  # a work of another project
    source = _work(wp, repos["shop"], "retry-backoff")
    linked = wp("link", "retry-backoff", f"wheypoint:acme-mail/{target['work_id']}", "--kind", "blocked_by",
                "--base", source["revision_id"], cwd=repos["shop"])  # fmt: skip
    assert linked.code == 0, linked.stdout
    for ref in ("mail-relay", target["work_id"], f"wheypoint:acme-mail/{target['work_id']}",
                "wheypoint:acme-mail/mail-relay"):  # fmt: skip
        assert _rows(wp, repos["shop"], "--linked-to", ref) == ["retry-backoff"], ref
    # A reference that names no work (a file, a URL) matches links spelt as given.
    assert _rows(wp, repos["shop"], "--linked-to", "docs/nothing.md") == []


@pytest.mark.parametrize(
    ("flag", "code", "valid"),
    [("--entry-kind", "unknown-entry-kind", "decision"), ("--entry-state", "unknown-entry-state", "superseded"),
     ("--edge-kind", "unknown-edge-kind", "blocked_by")],
)  # fmt: skip
def test_list_refuses_an_unknown_closed_value_naming_the_valid_ones(wp: Runner, repos: dict[str, Path], flag: str,
                                                                    code: str, valid: str) -> None:  # fmt: skip
    _work(wp, repos["shop"], "retry-backoff")
    done = wp("list", flag, "bogus", cwd=repos["shop"])
    assert done.code == 2 and done.json["error"]["code"] == code, done.stdout
    assert valid in done.json["error"]["message"] and "bogus" in done.json["error"]["message"]
    exported = wp("export", flag, "bogus", "--out", str(repos["shop"] / "x.json"), cwd=repos["shop"])
    assert exported.json["error"]["code"] == code, exported.stdout


def test_the_text_form_says_the_work_came_from_another_project(wp: Runner, repos: dict[str, Path]) -> None:
    _work(wp, repos["shop"], "retry-backoff")
    done = wp("show", "retry-backoff", "--format", "text", cwd=repos["mail"])
    assert done.code == 0 and "# Wheypoint handoff" in done.stdout, done.stdout
    assert "in project acme-shop" in done.stderr and "no work 'retry-backoff' in project acme-mail" in done.stderr
    here = wp("show", "retry-backoff", "--format", "text", cwd=repos["shop"])
    assert here.code == 0 and "acme" not in here.stderr
