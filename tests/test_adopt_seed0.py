"""`adopt` on notes written the way seed 0 describes: each part to its field, and the user's file kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Runner, make_repo

SEED0 = """status: gated: Full or equal jitter?
next: cook
artifact: .cheese/specs/jitter.md
session: claude:abc123
created: 2026-07-09T14:32:00Z
Jitter choice blocks the retry build.

## Document

### Goal
Add retry backoff with jitter to the payment client.

### State
Backoff is built and tested; the jitter is not chosen.

### Key decisions and constraints
- Cap the delay at 30 s `<certain>`: the gateway times out at 35 s.
- Keep three retries <speculating> because more would hide outages.

### Open questions and blockers
- Does the gateway rate-limit per API key?

### Environment
Branch `retry`, working tree clean.

## Decision dossier

### Full or equal jitter?
- Options: full jitter | equal jitter
- Evidence: `src/retry.py:4`; `docs/retry.md:1`
- What each breaks:
  - full jitter: no floor on the delay
  - equal jitter: half the spread of full jitter
- Prior leaning: full jitter, since the load spreads best
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "shop", {"src/retry.py": "a\nb\nc\nd\n", "docs/retry.md": "# Retry\n"},
                     remote="git@github.com:Acme/Shop.git")  # fmt: skip
    notes = repo / ".cheese" / "notes"
    notes.mkdir(parents=True)
    (notes / "jitter-choice.md").write_text(SEED0, encoding="utf-8")
    return repo


def test_adopt_maps_each_seed0_part_to_its_field(wp: Runner, repo: Path) -> None:
    note = repo / ".cheese" / "notes" / "jitter-choice.md"
    done = wp("adopt", str(note), "--format", "json", cwd=repo)
    assert done.code == 0, done.stdout
    record = wp("show", "jitter-choice", "--format", "json", cwd=repo).json["record"]
    entries = {e["text"]: e for e in record["entries"]}
    cap = entries["Cap the delay at 30 s"]
    assert cap["kind"] == "decision" and cap["confidence"] == "certain"
    assert cap["rationale"] == "the gateway times out at 35 s."
    assert entries["Keep three retries"]["confidence"] == "speculating"
    assert entries["Does the gateway rate-limit per API key?"]["kind"] == "question"
    gate = entries["Full or equal jitter?"]
    assert gate["kind"] == "question" and gate["gates"] is True
    [fork] = record["decision_dossier"]
    assert fork["fork"] == "Full or equal jitter?" and fork["gate"] == gate["id"]
    assert [o["option"] for o in fork["options"]] == ["full jitter", "equal jitter"]
    assert [o["breaks"] for o in fork["options"]] == ["no floor on the delay", "half the spread of full jitter"]
    assert all("src/retry.py:4" in " ".join(o["evidence"]) for o in fork["options"])
    assert fork["prior_leaning"] == "full jitter, since the load spreads best"
    # What has no field of its own stays as notes, its headings as labels: nothing escaped, nothing twice.
    assert record["notes"].startswith("**Goal.** Add retry backoff with jitter to the payment client.")
    assert "**Environment.** Branch `retry`, working tree clean." in record["notes"]
    for absent in ("\\#", "#", "Decision dossier", "Options:", "Cap the delay", "rate-limit"):
        assert absent not in record["notes"], absent


def test_adopt_keeps_the_users_file_and_links_the_copy_so_resolve_is_not_stale(wp: Runner, repo: Path) -> None:
    note = repo / ".cheese" / "notes" / "jitter-choice.md"
    done = wp("adopt", str(note), "--format", "json", cwd=repo)
    assert done.code == 0, done.stdout
    kept = repo / ".cheese" / "notes" / "adopted" / "jitter-choice.md"
    assert kept.read_text(encoding="utf-8") == SEED0 and done.json["original_kept"] == str(kept)
    assert note.read_text(encoding="utf-8") != SEED0  # the generated note took its place
    record = wp("show", "jitter-choice", "--format", "json", cwd=repo).json["record"]
    assert record["artifact_links"][0]["ref"] == ".cheese/notes/adopted/jitter-choice.md"
    found = wp("resolve", "jitter-choice", "--format", "json", cwd=repo).json
    codes = {f["code"] for f in found["findings"]}
    assert "stale-artifact-link" not in codes and "artifact-missing" not in codes, found["findings"]
    assert codes <= {"gate-open", "uncovered-entries", "no-checkout", "stale-commit"}, found["findings"]
    # The kept original is not listed as another hand-written note.
    listed = wp("list", "--format", "json", cwd=repo).json["works"]
    assert [w["source"] for w in listed] == ["store"], listed
    # Adopting again replays: the copy is not written twice, nor a second copy made.
    again = wp("adopt", str(kept), "--no-note", "--format", "json", cwd=repo)
    assert again.code == 0, again.stdout
    assert sorted(p.name for p in kept.parent.iterdir()) == ["jitter-choice.md"]


def test_adopt_with_no_note_writes_nothing_and_links_the_note_where_it_is(wp: Runner, repo: Path) -> None:
    note = repo / ".cheese" / "notes" / "jitter-choice.md"
    done = wp("adopt", str(note), "--no-note", "--format", "json", cwd=repo)
    assert done.code == 0 and "original_kept" not in done.json, done.stdout
    assert note.read_text(encoding="utf-8") == SEED0 and not (note.parent / "adopted").exists()
    record = wp("show", "jitter-choice", "--format", "json", cwd=repo).json["record"]
    assert record["artifact_links"][0]["ref"] == ".cheese/notes/jitter-choice.md"
