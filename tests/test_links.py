"""Edges between works: `link`, `unlink`, `--covers` on edges, and backlinks in show and resolve from the index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import Runner, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"a.py": "x\n"}, remote="git@github.com:Acme/Shop.git")


def _work(wp: Runner, repo: Path, slug: str, *extra: str) -> dict[str, str]:
    done = wp("checkpoint", slug, "--orientation", f"The {slug} work.", "--next", "hold", "--decision",
              f"Decide {slug}.", "--rationale", "Because.", *extra, cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    return {"work_id": done.json["work_id"], "revision": done.json["revision_id"], "decision": done.json["added"][0]}


def test_link_writes_a_covering_edge_in_the_stores_spelling_and_the_target_sees_it(wp: Runner, repo: Path) -> None:
    jitter = _work(wp, repo, "retry-jitter")
    gateway = _work(wp, repo, "payments-gateway")
    unbased = wp("link", "retry-jitter", "payments-gateway", "--kind", "blocked_by", cwd=repo)
    assert unbased.json["error"]["code"] == "base-revision-required"  # a link is a write like any other

    why = "The gateway's v2 API decides the jitter."
    done = wp("link", "retry-jitter", "payments-gateway", "--kind", "blocked_by", "--covers", jitter["decision"],
              "--rationale", why, "--base", jitter["revision"], cwd=repo)  # fmt: skip
    assert done.code == 0 and done.json["command"] == "link" and done.json["revision_number"] == 2, done.stdout
    record = wp("show", "retry-jitter", "--format", "json", cwd=repo).json["record"]
    ref = f"wheypoint:acme-shop/{gateway['work_id']}"  # the slug as typed, written as the store names the work
    assert record["edges"] == [{"ref": ref, "kind": "blocked_by", "rationale": why, "covers": [jitter["decision"]],
                                "added_in": 2}]  # fmt: skip
    log = wp("log", "retry-jitter", "--format", "json", cwd=repo).json["revisions"]
    assert log[-1]["links_added"] == [ref]
    note = Path(done.json["note_path"]).read_text(encoding="utf-8")
    assert f"- blocked_by: {ref} (covers `{jitter['decision']}`)" in note

    expected = [{"work_id": jitter["work_id"], "slug": "retry-jitter", "project": "acme-shop", "kind": "blocked_by",
                 "ref": ref}]  # fmt: skip
    assert wp("show", "payments-gateway", "--format", "json", cwd=repo).json["backlinks"] == expected
    assert wp("resolve", "payments-gateway", cwd=repo).json["backlinks"] == expected
    assert wp("show", "retry-jitter", "--format", "json", cwd=repo).json["backlinks"] == []

    again = wp("link", "retry-jitter", "payments-gateway", "--kind", "blocked_by", "--covers", jitter["decision"],
               "--rationale", why, "--base", jitter["revision"], cwd=repo)  # fmt: skip
    assert again.code == 0 and again.json["replayed"] is True


def test_every_spelling_of_a_work_finds_its_backlinks(wp: Runner, repo: Path) -> None:
    target = _work(wp, repo, "payments-gateway")
    spellings = [target["work_id"], f"wheypoint:acme-shop/{target['work_id']}", "wheypoint:acme-shop/payments-gateway"]
    for n, spelling in enumerate(spellings):
        _work(wp, repo, f"linker-{n}", "--link", spelling, "--kind", "relates_to")
    _work(wp, repo, "linker-bare", "--link", "payments-gateway", "--kind", "informs")  # a bare slug, same project
    _work(wp, repo, "unrelated", "--link", "wheypoint:other-project/payments-gateway", "--kind", "informs")
    pointing = wp("show", "payments-gateway", "--format", "json", cwd=repo).json["backlinks"]
    assert sorted(b["slug"] for b in pointing) == ["linker-0", "linker-1", "linker-2", "linker-bare"]


def test_unlink_removes_an_edge_and_refuses_what_is_not_there_or_is_a_forks(wp: Runner, repo: Path) -> None:
    parent = _work(wp, repo, "retry-backoff", "--question", "Full or equal?", "--owner", "lead")
    gateway = _work(wp, repo, "payments-gateway")
    linked = wp("link", "retry-backoff", "payments-gateway", "--kind", "relates_to", "--base", parent["revision"],
                cwd=repo)  # fmt: skip
    assert linked.code == 0, linked.stdout
    question = wp("show", "retry-backoff", "--format", "json", cwd=repo).json["record"]["entries"][1]["id"]
    forked = wp("fork", "retry-backoff", "retry-jitter", "--orientation", "Split.", "--move", question, cwd=repo)
    assert forked.code == 0, forked.stdout
    head = forked.json["parent"]["revision_id"]

    wrong_kind = wp("unlink", "retry-backoff", "payments-gateway", "--kind", "informs", "--base", head, cwd=repo)
    assert [p["code"] for p in wrong_kind.json["error"]["problems"]] == ["unknown-link"]
    fork_edge = wp("unlink", "retry-backoff", f"wheypoint:acme-shop/{forked.json['child']['work_id']}", "--base",
                   head, cwd=repo)  # fmt: skip
    assert [p["code"] for p in fork_edge.json["error"]["problems"]] == ["host-only-edge"]
    done = wp("unlink", "retry-backoff", "payments-gateway", "--base", head, cwd=repo)
    assert done.code == 0 and done.json["command"] == "unlink", done.stdout
    edges = wp("show", "retry-backoff", "--format", "json", cwd=repo).json["record"]["edges"]
    assert [e["kind"] for e in edges] == ["forked_to"]
    assert wp("show", "payments-gateway", "--format", "json", cwd=repo).json["backlinks"] == []
    log = wp("log", "retry-backoff", "--format", "json", cwd=repo).json["revisions"]
    assert log[-1]["links_removed"] == [f"wheypoint:acme-shop/{gateway['work_id']}"]


def test_the_flag_form_takes_covers_on_an_edge_and_unlink(wp: Runner, repo: Path) -> None:
    work = _work(wp, repo, "retry-jitter")
    done = wp("checkpoint", "retry-jitter", "--base", work["revision"], "--link", "docs/adr-7.md", "--kind", "informs",
              "--covers", work["decision"], cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    removed = wp("checkpoint", "retry-jitter", "--base", done.json["revision_id"], "--unlink", "docs/adr-7.md",
                 cwd=repo)  # fmt: skip
    assert removed.code == 0 and wp("show", "retry-jitter", "--format", "json", cwd=repo).json["record"]["edges"] == []


def test_backlinks_are_an_index_lookup(tmp_path: Path) -> None:
    from wheypoint.store.rows import WorkRef
    from wheypoint.store.sqlite.backend import SqliteStore

    store = SqliteStore.open(tmp_path / "store.sqlite3", create=True)
    try:
        statements: list[str] = []
        conn = store._require()
        conn.set_trace_callback(statements.append)
        store.backlinks(WorkRef("w.00000000", "p", "w", "rev-0", 1, "ok", "2026-01-01T00:00:00Z"))
        conn.set_trace_callback(None)
        (query,) = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
        plan = " ".join(str(row) for row in sqlite3.connect(tmp_path / "store.sqlite3").execute(
            "EXPLAIN QUERY PLAN " + query).fetchall())  # fmt: skip
        assert "edges_by_ref" in plan and "SCAN g" not in plan, plan
    finally:
        store.close()
