"""resolve and list through the CLI, on real stores of both backends and real git repositories with moved commits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import BACKENDS, Runner, both_backends, git, make_repo
from wheypoint.store.sqlite.schema import SCHEMA_VERSION


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest) -> str | None:
    return both_backends(request)


def checkpoint(wp: Runner, repo: Path, slug: str, *extra: str) -> dict[str, Any]:
    reply = wp("checkpoint", slug, "--orientation", f"Working on {slug.replace('-', ' ')}.", "--next", "hold",
               "--decision", f"Decide {slug}.", "--rationale", "Because.", *extra, cwd=repo)  # fmt: skip
    assert reply.code == 0, reply.stdout
    return dict(reply.json)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "shop", {"retry.py": "a\nb\nc\n", "spec.md": "v1\n"}, remote="git@example.com:acme/shop.git"
    )


def resolve(wp: Runner, repo: Path, ref: str, *extra: str) -> dict[str, Any]:
    reply = wp("resolve", ref, "--format", "json", *extra, cwd=repo)
    assert reply.code == 0, reply.stdout
    return dict(reply.json)


def codes(reply: dict[str, Any]) -> set[str]:
    return {f["code"] for f in reply["findings"]}


def test_resolution_order_and_outcomes(wp: Runner, repo: Path) -> None:
    first = checkpoint(wp, repo, "retry-backoff")
    checkpoint(wp, repo, "retry-jitter")
    checkpoint(wp, repo, "cache-warmup")
    exact = resolve(wp, repo, "retry-backoff")
    assert exact["outcome"] == "authoritative" and exact["dispatchable"] and exact["matched_by"] == "slug"
    assert resolve(wp, repo, first["work_id"])["matched_by"] == "work-id"
    assert resolve(wp, repo, "cache")["matched_by"] == "prefix"
    assert resolve(wp, repo, "warm")["matched_by"] == "substring"
    several = resolve(wp, repo, "retry")
    assert several["outcome"] == "ambiguous" and not several["dispatchable"]
    assert {c["slug"] for c in several["candidates"]} == {"retry-backoff", "retry-jitter"}
    missing = resolve(wp, repo, "retry-backof")
    assert missing["outcome"] == "ambiguous" or missing["matched_by"] == "prefix"
    none = resolve(wp, repo, "retyr-backoff")
    assert none["outcome"] == "not-found" and "retry-backoff" in none["suggestions"] and none["searched"]
    by_path = resolve(wp, repo, first["note_path"])
    assert by_path["matched_by"] == "path" and by_path["work_id"] == first["work_id"]
    assert by_path["outcome"] == "authoritative"


def test_gates_and_note_findings(wp: Runner, repo: Path) -> None:
    gated = checkpoint(wp, repo, "go-live", "--question", "Ship Friday?", "--gates", "--owner", "ann",
                       "--rationale", "options: friday | monday; leaning: monday")  # fmt: skip
    reply = resolve(wp, repo, "go-live")
    assert reply["outcome"] == "gated" and not reply["dispatchable"]
    [gate] = [f for f in reply["findings"] if f["code"] == "gate-open"]
    assert "owner ann" in gate["detail"] and gate["severity"] == "gating"
    note = Path(gated["note_path"])
    note.write_text(note.read_text().replace("Ship Friday?", "Ship Monday?"))
    assert "note-hand-edited" in codes(resolve(wp, repo, "go-live"))
    note.unlink()
    assert "note-missing" in codes(resolve(wp, repo, "go-live"))


def test_a_linked_file_changed_after_the_checkpoint(wp: Runner, repo: Path) -> None:
    checkpoint(wp, repo, "spec-work", "--link", "spec.md", "--context", "retry.py:2")
    assert resolve(wp, repo, "spec-work")["outcome"] == "authoritative"
    (repo / "spec.md").write_text("v2\n")
    (repo / "retry.py").write_text("z\na\nb\nc\n")
    reply = resolve(wp, repo, "spec-work")
    assert reply["outcome"] == "gated"
    assert {"stale-artifact-link", "pin-drifted"} <= codes(reply)
    (repo / "spec.md").unlink()
    assert "artifact-missing" in codes(resolve(wp, repo, "spec-work"))


def test_commits_since_and_a_commit_rewritten_away(wp: Runner, repo: Path) -> None:
    checkpoint(wp, repo, "anchored", "--context", "retry.py:1")
    (repo / "new.txt").write_text("x\n")
    git(repo, "add", "new.txt")
    git(repo, "commit", "-q", "-m", "more")
    reply = resolve(wp, repo, "anchored")
    [stale] = [f for f in reply["findings"] if f["code"] == "stale-commit"]
    assert "1 commit(s) since" in stale["detail"] and reply["outcome"] == "authoritative"
    # Rewrite history so the recorded commit is gone: orphan branch, then drop everything else.
    git(repo, "checkout", "-q", "--orphan", "fresh")
    git(repo, "commit", "-q", "-m", "rewritten")
    git(repo, "branch", "-D", "main")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    gone = resolve(wp, repo, "anchored")
    assert gone["outcome"] == "gated" and "git-object-missing" in codes(gone)


def test_a_note_without_a_record_is_never_authoritative(wp: Runner, repo: Path) -> None:
    legacy = repo / ".cheese" / "notes" / "hand.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("status: ok\nnext: hold\nartifact: none\nHand-written note.\n\n## Document\n")
    reply = resolve(wp, repo, str(legacy))
    assert reply["outcome"] == "gated" and "legacy-note" in codes(reply)
    assert resolve(wp, repo, str(repo / "absent.md"))["outcome"] == "not-found"


def test_list_filters_or_within_and_across(wp: Runner, repo: Path, tmp_path: Path) -> None:
    checkpoint(wp, repo, "payments-retry", "--notes", "Stripe webhooks retry with backoff.", "--question",
               "Which queue?", "--owner", "ann")  # fmt: skip
    checkpoint(wp, repo, "cache-redis", "--notes", "Redis eviction policy.", "--link", "wheypoint:shop/x.0123abcd",
               "--kind", "relates_to")  # fmt: skip
    checkpoint(wp, repo, "docs-site", "--question", "Host where?", "--gates", "--rationale",
               "options: pages | netlify; leaning: pages")  # fmt: skip

    def slugs(*args: str, cwd: Path = repo) -> list[str]:
        reply = wp("list", "--format", "json", *args, cwd=cwd)
        assert reply.code == 0, reply.stdout
        return sorted(w["slug"] for w in reply.json["works"])

    assert slugs() == ["cache-redis", "docs-site", "payments-retry"]
    assert slugs("--grep", "webhooks") == ["payments-retry"]
    assert slugs("--grep", "webhooks", "--grep", "eviction") == ["cache-redis", "payments-retry"]
    assert slugs("--gated") == ["docs-site"] and slugs("--status", "gated") == ["docs-site"]
    assert slugs("--no-gated", "--grep", "redis") == ["cache-redis"]
    assert slugs("--owner", "ann", "--entry-kind", "question", "--entry-state", "active") == ["payments-retry"]
    assert slugs("--owner", "ann", "--entry-kind", "decision") == []
    assert slugs("--edge-kind", "relates_to") == ["cache-redis"]
    assert slugs("--linked-to", "wheypoint:shop/x.0123abcd") == ["cache-redis"]
    assert slugs("--next", "hold", "--limit", "1") in (["cache-redis"], ["docs-site"], ["payments-retry"])
    assert slugs("--project", "someone-else") == []
    outside = tmp_path / "outside"
    outside.mkdir()
    reply = wp("list", "--format", "json", cwd=outside).json
    assert reply["scope_fallback"] == "machine" and reply["count"] == 3
    assert "scope_fallback" not in wp("list", "--scope", "project", "--format", "json", cwd=outside).json
    bad = wp("list", "--gated", "--no-gated", cwd=repo)
    assert bad.code == 2 and bad.json["error"]["code"] == "usage"


def test_the_remaining_finding_codes(wp: Runner, repo: Path, tmp_path: Path) -> None:
    refused = wp("checkpoint", "covered", "--orientation", "C.", "--next", "hold", "--notes", "n", "--link", "spec.md",
                 "--covers", "d-000000000000", cwd=repo)  # fmt: skip
    assert refused.json["error"]["problems"][0]["code"] == "unknown-entry"
    reply = wp("checkpoint", "links", "--orientation", "Links.", "--next", "hold", "--decision", "Use spec.",
               "--rationale", "Because.", "--label", "use-spec", "--question", "Open?", "--link", "spec.md",
               "--covers", "use-spec", cwd=repo)  # fmt: skip
    assert reply.code == 0, reply.stdout
    assert "uncovered-entries" in codes(resolve(wp, repo, "links"))
    note = Path(reply.json["note_path"])
    old_note = note.read_text()
    second = wp("checkpoint", "links", "--base", reply.json["revision_id"], "--notes", "More.", cwd=repo)
    assert second.code == 0
    note.write_text(old_note)  # an intact rendering of the older revision
    assert "note-stale" in codes(resolve(wp, repo, "links"))
    git(repo, "checkout", "-q", "-b", "elsewhere", "HEAD~0")
    (repo / "other.txt").write_text("x\n")
    git(repo, "add", "other.txt")
    git(repo, "commit", "-q", "-m", "on a branch")
    branch_work = checkpoint(wp, repo, "branch-work")
    git(repo, "checkout", "-q", "main")
    [stale] = [f for f in resolve(wp, repo, branch_work["work_id"])["findings"] if f["code"] == "stale-commit"]
    assert "not an ancestor" in stale["detail"]
    outside = tmp_path / "plain"
    outside.mkdir()
    from_outside = wp("resolve", branch_work["work_id"], "--format", "json", cwd=outside).json
    assert "stale-commit" in codes(from_outside)  # still checked against the checkout it was written in
    assert from_outside["checkout"] == {"path": str(repo), "current": False}
    checkpoint(wp, outside, "loose-work")
    loose = wp("resolve", "loose-work", "--format", "json", cwd=outside).json
    assert "no-checkout" in codes(loose) and loose["checkout"] == {"path": None, "current": False}


@pytest.mark.parametrize("store_url", [None])  # a SQLite file edited back to an older schema
def test_a_store_from_an_older_runtime_is_migrated_on_first_read(wp: Runner, repo: Path, home: Path) -> None:
    import sqlite3

    checkpoint(wp, repo, "old-store-work")
    conn = sqlite3.connect(home / "store.sqlite3")
    conn.execute("DROP TABLE slug_index")  # as a store written before migration 4 was
    for column in ("checkout", "note_dir"):  # and before migration 5
        conn.execute(f"ALTER TABLE works DROP COLUMN {column}")
    conn.execute("DROP TABLE imports")  # and migration 6
    conn.execute("DROP INDEX revisions_by_author")  # and migration 7
    conn.execute("ALTER TABLE revisions DROP COLUMN author")
    conn.execute("ALTER TABLE entries DROP COLUMN added_in")  # and migration 8
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    found = resolve(wp, repo, "store-wo")  # a substring: needs the index migration 4 builds (and backfills)
    assert found["matched_by"] == "substring" and found["slug"] == "old-store-work"
    conn = sqlite3.connect(home / "store.sqlite3")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_an_ambiguous_reference_lists_every_candidate_a_page_at_a_time(tmp_path: Path, store_url: str | None) -> None:
    """Seed 2: every candidate, not the first 20; 50 to a page, `--page` for the next ones."""
    from wheypoint.app.context import Context
    from wheypoint.app.resolve import PAGE_SIZE, resolve
    from wheypoint.model.kernel import Provenance, apply
    from wheypoint.store import open_store

    home = tmp_path / "home"
    environ = {"WHEYPOINT_HOME": str(home), **({"WHEYPOINT_STORE": store_url} if store_url else {})}
    store = open_store(store_url or home / "store.sqlite3", create=True)
    prov = Provenance(project_key="proj", captured_at="2026-12-01T00:00:00Z")
    for n in range(PAGE_SIZE + 7):
        intent = {"slug": f"batch-work-{n:03d}", "orientation": "o", "next": {"move": "hold"}, "notes": "n"}
        outcome = apply(None, intent, prov)
        store.commit(outcome.record["work_id"], None, outcome.record["revision_id"], lambda head, o=outcome: o)
    store.close()
    ctx = Context(cwd=str(tmp_path), environ=environ, project="proj")
    first = resolve(ctx, "batch-work", None)
    assert first["outcome"] == "ambiguous" and len(first["candidates"]) == PAGE_SIZE
    assert (first["more"], first["next_page"]) == (True, 2)
    second = resolve(ctx, "batch-work", None, page=2)
    assert (len(second["candidates"]), second["more"], second["next_page"]) == (7, False, None)
    seen = [c["slug"] for c in first["candidates"] + second["candidates"]]
    assert sorted(seen) == [f"batch-work-{n:03d}" for n in range(PAGE_SIZE + 7)]
