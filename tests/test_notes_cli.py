"""lint, handoff parse/render/dispatch, adopt and legacy notes through the CLI on real git repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Runner, git, make_repo

LEGACY = """status: ok
next: cook
artifact: .cheese/specs/retry.md
session: claude:abc123
git: main@1234567
created: 2026-07-09T14:32:00Z
Retry backoff spec is approved; build it next.

## Document

**Goal.** Add retry backoff to the payment client.
**State.** Spec approved, nothing built.
"""

WRAPPED_GATED = """## Handoff slug

```
status: gated: Full or equal jitter?
next: cook
artifact: .cheese/specs/jitter.md
Jitter choice blocks the build.
```

## Document

Goal: pick a jitter.

## Decision dossier

- full jitter: spreads load best
- equal jitter: keeps a floor on the delay
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "shop")
    notes = repo / ".cheese" / "notes"
    notes.mkdir(parents=True)
    (notes / "retry-spec.md").write_text(LEGACY)
    (notes / "jitter-choice.md").write_text(WRAPPED_GATED)
    return repo


def ok(reply: Any) -> dict[str, Any]:
    assert reply.code == 0, reply.stdout + reply.stderr
    return dict(reply.json)


def test_lint_legacy_and_generated_notes(wp: Runner, repo: Path) -> None:
    legacy = ok(wp("lint", str(repo / ".cheese/notes/retry-spec.md"), "--format", "json", cwd=repo))
    assert legacy["format"] == "legacy" and legacy["clean"] is True
    broken = repo / ".cheese/notes/broken.md"
    broken.write_text("status: ok\nartifact: none\nNo next line here.\n")
    unclean = wp("lint", str(broken), "--format", "json", cwd=repo)
    assert unclean.code == 1 and unclean.json["ok"] is True  # answered, and the exit status says: not clean
    findings = ok(wp("lint", str(broken), "--exit-zero", "--format", "json", cwd=repo))
    assert findings["clean"] is False and "next-missing" in {f["code"] for f in findings["findings"]}
    made = ok(wp("checkpoint", "made", "--orientation", "Made here.", "--next", "hold", "--notes", "n", cwd=repo))
    generated = ok(wp("lint", made["note_path"], "--format", "json", cwd=repo))
    assert generated["format"] == "wheypoint" and generated["clean"] and generated["record_found"]
    note = Path(made["note_path"])
    note.write_text(note.read_text().replace("Made here.", "Edited here."))
    edited = wp("lint", str(note), "--format", "json", cwd=repo)
    assert edited.code == 1 and not edited.json["clean"]
    assert wp("lint", str(repo / "nope.md"), cwd=repo).json["error"]["code"] == "note-missing"


def test_handoff_parse_render_dispatch(wp: Runner, repo: Path) -> None:
    parsed = ok(wp("handoff", "parse", str(repo / ".cheese/notes/jitter-choice.md"), cwd=repo))
    assert parsed["format"] == "legacy-wrapped" and parsed["status_kind"] == "gated"
    assert parsed["orientation"] == "Jitter choice blocks the build."
    args = [
        "--next",
        "cook",
        "--artifact",
        "specs/a.md",
        "--directive",
        "Keep it small.",
        "--quote",
        "keep it small please",
    ]
    made = ok(wp("checkpoint", "build-it", "--orientation", "Spec ready.", *args, cwd=repo))
    from_record = ok(wp("handoff", "parse", "build-it", cwd=repo))
    assert from_record["next"] == "cook" and from_record["wheypoint"]["work_id"] == made["work_id"]
    rendered = ok(wp("handoff", "render", "build-it", cwd=repo))
    assert rendered["preamble"].startswith("status: ok\nnext: cook\nartifact: specs/a.md\n")
    assert rendered["budget"] == 6000 and "keep it small please" in str(rendered["packet"])  # a packet by default
    packet = ok(wp("handoff", "render", "build-it", "--budget", "2000", cwd=repo))["packet"]
    assert "keep it small please" in str(packet)
    tiny = wp("handoff", "render", "build-it", "--budget", "10", cwd=repo)
    assert tiny.code == 1 and tiny.json["error"]["code"] == "budget-too-small"
    assert tiny.json["error"]["budget"] == 10 and tiny.json["error"]["minimum"] > 10  # as docs/notes.md says
    run = ok(wp("handoff", "dispatch", "build-it", cwd=repo))
    assert run["dispatchable"] and run["dispatch"]["action"] == "run"
    legacy = ok(wp("handoff", "dispatch", "jitter-choice", cwd=repo))
    assert legacy["outcome"] == "gated" and legacy["dispatch"]["action"] == "surface-gate"
    note = Path(made["note_path"])
    note.write_text(note.read_text().replace("Spec ready.", "Spec changed."))
    held = ok(wp("handoff", "dispatch", "build-it", cwd=repo))
    assert held["dispatch"]["action"] == "check-findings" and not held["dispatchable"]


def test_legacy_notes_are_listed_and_resolved(wp: Runner, repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "shop-2"), "-b", "side")
    side = tmp_path / "shop-2" / ".cheese" / "notes"
    side.mkdir(parents=True)
    (side / "side-track.md").write_text(LEGACY.replace("next: cook", "next: hold"))
    listed = ok(wp("list", "--format", "json", cwd=repo))
    legacy = {w["slug"]: w for w in listed["works"] if w["source"] == "legacy-note"}
    assert set(legacy) == {"retry-spec", "jitter-choice", "side-track"}
    assert legacy["jitter-choice"]["status"].startswith("gated:")
    only_gated = ok(wp("list", "--gated", "--format", "json", cwd=repo))
    assert [w["slug"] for w in only_gated["works"]] == ["jitter-choice"]
    found = ok(wp("resolve", "retry-spec", "--format", "json", cwd=repo))
    assert found["outcome"] == "gated" and not found["dispatchable"]
    assert {f["code"] for f in found["findings"]} == {"legacy-note"}


def test_a_note_named_after_a_work_of_the_store_is_that_work_s_never_a_legacy_one(wp: Runner, repo: Path) -> None:
    """`list` and `resolve` pass over, unread, every note named after a slug of one of the project's works: it is
    that work's note, whatever it now holds (a folder of thousands of generated notes costs no read). Other notes
    are read: a hand-written one is listed, a generated one from another store is not."""
    adopted = ok(wp("adopt", str(repo / ".cheese/notes/retry-spec.md"), "--no-note", cwd=repo))
    made = ok(wp("checkpoint", "made", "--orientation", "Made.", "--next", "hold", "--notes", "n", cwd=repo))
    made_note = Path(made["note_path"])
    made_note.write_text(LEGACY.replace("next: cook", "next: hold"))  # its pins edited away by hand
    elsewhere = repo / ".cheese" / "notes" / "from-another-store.md"
    other = make_repo(repo.parent / "other")
    theirs = ok(wp("checkpoint", "theirs", "--orientation", "Theirs.", "--next", "hold", "--notes", "n", cwd=other,
                   env={"WHEYPOINT_HOME": str(repo.parent / "other-home")}))  # fmt: skip
    elsewhere.write_bytes(Path(theirs["note_path"]).read_bytes())  # a generated note this store does not hold
    listed = ok(wp("list", "--format", "json", cwd=repo))
    rows = [(w["slug"], w["source"]) for w in listed["works"]]
    assert sorted(rows) == sorted([("retry-spec", "store"), ("made", "store"), ("jitter-choice", "legacy-note")])
    assert adopted["slug"] == "retry-spec"
    found = ok(wp("resolve", "jitter", "--format", "json", cwd=repo))  # not in the store: the legacy notes are read
    assert found["outcome"] == "gated" and {f["code"] for f in found["findings"]} == {"legacy-note"}
    assert wp("resolve", "from-another", "--format", "json", cwd=repo).json["outcome"] == "not-found"


def test_adopt_turns_a_legacy_note_into_a_record(wp: Runner, repo: Path) -> None:
    adopted = ok(wp("adopt", str(repo / ".cheese/notes/retry-spec.md"), "--no-note", "--format", "json", cwd=repo))
    assert adopted["slug"] == "retry-spec" and adopted["revision_number"] == 1 and adopted["status"] == "ok"
    record = ok(wp("show", "retry-spec", "--format", "json", cwd=repo))["record"]
    assert record["orientation"] == "Retry backoff spec is approved; build it next."
    assert record["next"] == {"move": "cook", "artifact": ".cheese/specs/retry.md"}
    assert "**Goal.** Add retry backoff to the payment client." in record["notes"]
    assert "session claude:abc123" in record["working_context"][0]
    assert record["artifact_links"][0]["ref"] == ".cheese/notes/retry-spec.md"
    assert record["artifact_links"][0]["digest"]
    gated = ok(wp("adopt", str(repo / ".cheese/notes/jitter-choice.md"), "--no-note", "--format", "json", cwd=repo))
    assert gated["status"] == "gated: Full or equal jitter?"
    again = wp("adopt", str(repo / ".cheese/notes/retry-spec.md"), "--no-note", cwd=repo)
    assert again.json["replayed"] is True
    made = ok(wp("checkpoint", "made", "--orientation", "Made.", "--next", "hold", "--notes", "n", cwd=repo))
    assert wp("adopt", made["note_path"], cwd=repo).json["error"]["code"] == "not-legacy"
