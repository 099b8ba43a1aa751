"""Working as a team: who wrote each revision, `--store`, and `store copy` between a SQLite file and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import BACKENDS, Runner, both_backends, git, make_repo


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest) -> str | None:
    return both_backends(request)


def checkpoint(wp: Runner, repo: Path, slug: str, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = wp("checkpoint", slug, "--orientation", f"Working on {slug}.", "--next", "hold", "--no-note",
              "--decision", f"Decide {slug}.", "--rationale", "Because.", *extra, cwd=repo, env=env)  # fmt: skip
    assert done.code == 0, done.stdout
    return dict(done.json)


def authors(wp: Runner, repo: Path, slug: str, env: dict[str, str] | None = None) -> list[str | None]:
    return [r["author"] for r in wp("log", slug, cwd=repo, env=env).json["revisions"]]


def test_each_revision_records_who_wrote_it_and_list_filters_on_it(wp: Runner, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")  # make_repo sets user.email test@example.invalid
    first = checkpoint(wp, repo, "retry-backoff")
    git(repo, "config", "user.email", "ann@example.com")
    checkpoint(wp, repo, "retry-backoff", "--base", first["revision_id"], "--decision", "Two.", "--rationale", "R.")
    checkpoint(wp, repo, "cache-warm", env={"WHEYPOINT_AUTHOR": "ci-bot"})
    assert authors(wp, repo, "retry-backoff") == ["test@example.invalid", "ann@example.com"]
    assert authors(wp, repo, "cache-warm") == ["ci-bot"]
    git(repo, "config", "--unset", "user.email")
    outside = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "USER": "osuser"}
    checkpoint(wp, repo, "no-email", env=outside)
    assert authors(wp, repo, "no-email", env=outside) == ["osuser"]  # no git email anywhere: the OS user

    def listed(*names: str) -> list[str]:
        return sorted(w["slug"] for w in wp("list", *names, cwd=repo).json["works"])

    assert listed("--author", "ann@example.com") == ["retry-backoff"]
    assert listed("--author", "test@example.invalid", "--author", "ci-bot") == ["cache-warm", "retry-backoff"]
    assert listed("--author", "nobody@example.com") == []


def test_store_names_the_store_for_one_run(wp: Runner, tmp_path: Path, store_url: str | None) -> None:
    repo = make_repo(tmp_path / "shop")
    other = tmp_path / "elsewhere" / "store.sqlite3"
    done = wp("--store", str(other), "checkpoint", "only-there", "--orientation", "o", "--next", "hold",
              "--no-note", "--notes", "n", cwd=repo)  # fmt: skip
    assert done.code == 0 and other.exists(), done.stdout
    assert wp("show", "only-there", cwd=repo).json["error"]["code"] == "record-missing"
    assert wp(f"--store={other}", "show", "only-there", cwd=repo).json["record"]["slug"] == "only-there"
    missing = wp("--store", cwd=repo)
    assert missing.code == 2 and missing.json["error"]["parameter"] == "store"


def test_store_copy_moves_everything_verified_and_again_writes_nothing(
    wp: Runner, tmp_path: Path, store_url: str | None
) -> None:
    """From the store under test into a fresh SQLite file and back into a third store: identical records."""
    repo = make_repo(tmp_path / "shop")
    first = checkpoint(wp, repo, "retry-backoff")
    checkpoint(wp, repo, "retry-backoff", "--base", first["revision_id"], "--decision", "Two.", "--rationale", "R.")
    checkpoint(wp, repo, "cache-warm", env={"WHEYPOINT_AUTHOR": "ci-bot"})
    checkpoint(wp, repo, "elsewhere", "--project", "other-project")
    source = store_url or str(tmp_path / "home" / "store.sqlite3")
    middle, last = str(tmp_path / "copy" / "store.sqlite3"), str(tmp_path / "last" / "store.sqlite3")
    copied = wp("store", "copy", "--from", source, "--to", middle, cwd=repo)
    assert copied.code == 0, copied.stdout
    assert (copied.json["works"], copied.json["revisions"], copied.json["written"]) == (3, 4, 4)
    again = wp("store", "copy", "--from", source, "--to", middle, cwd=repo).json
    assert (again["written"], again["already_present"]) == (0, 4)
    one = wp("store", "copy", "--from", middle, "--to", last, "--project", "other-project", cwd=repo).json
    assert (one["works"], one["written"]) == (1, 1)
    for slug in ("retry-backoff", "cache-warm"):
        here = wp("show", slug, cwd=repo).json["record"]
        there = wp("--store", middle, "show", slug, cwd=repo).json["record"]
        assert here == there
        assert authors(wp, repo, slug) == [r["author"] for r in wp("--store", middle, "log", slug, cwd=repo)
                                           .json["revisions"]]  # fmt: skip
    if store_url:
        assert "***" in copied.json["from"] and store_url.split(":")[2].split("@")[0] not in copied.stdout
    same = wp("store", "copy", "--from", middle, "--to", middle, cwd=repo)
    assert same.code == 2 and same.json["error"]["code"] == "usage"
    assert wp("store", "move", "--from", middle, "--to", last, cwd=repo).code == 2
