"""Linting notes: every finding code, generated notes against their record, hand-written notes against seed 0."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_noteparse import (
    GATE,
    LATER,
    LEGACY_BARE,
    LEGACY_LIST,
    LEGACY_TASKS,
    LEGACY_WRAPPED,
    LIST_NEXT,
    build,
    gated_tasks_record,
    resolved_record,
)
from wheypoint.model.kernel import apply
from wheypoint.notes.lint import GATING, MAX_PER_CODE, SEVERITY, Finding, clean, lint_note, lint_report
from wheypoint.notes.render import note_digest, render
from wheypoint.notes.style import CODES as STYLE_CODES

DOCS = Path(__file__).resolve().parents[1] / "docs" / "notes.md"


def codes(findings: list[Finding]) -> set[str]:
    return {f.code for f in findings}


def redigest(note: str) -> str:
    """A hand edit that also recomputes the note_digest, so only the record can tell."""
    note = re.sub(r"(  note_digest: ).*", r"\1", note, count=1)
    return re.sub(r"(  note_digest: ).*", lambda m: m.group(1) + note_digest(note), note, count=1)


def drop_section(note: str, title: str) -> str:
    return re.sub(rf"^## {title}\n\n(?:.*\n)*?(?=## |\Z)", "", note, count=1, flags=re.M)


# Generated notes -------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [gated_tasks_record, build, resolved_record, lambda: build(next=LIST_NEXT)])
def test_rendered_notes_are_clean_with_and_without_their_record(make) -> None:  # type: ignore[no-untyped-def]
    record = make()
    note = render(record)
    assert lint_note(note) == []
    assert lint_note(note, record) == []
    assert lint_report(note, record) == {"format": "wheypoint", "clean": True, "findings": []}


def test_an_edit_breaks_the_note_digest() -> None:
    record = build()
    edited = render(record).replace("Cap retries at 30 s.", "Cap retries at 60 s.")
    findings = lint_note(edited)
    assert codes(findings) == {"note-digest-mismatch"} and not clean(findings)
    assert "hand-edited" in codes(lint_note(edited, record))


def test_an_edit_with_a_recomputed_digest_is_caught_by_the_record() -> None:
    record = build()
    forged = redigest(render(record).replace("Cap retries at 30 s.", "Cap retries at 60 s."))
    assert lint_note(forged) == []
    findings = lint_note(forged, record)
    assert codes(findings) == {"hand-edited"}
    assert "line" in findings[0].detail


def test_a_note_of_another_revision_mismatches_the_record() -> None:
    old = build(**GATE)
    gate = next(e["id"] for e in old["entries"] if e["kind"] == "question")
    new = apply(old, {"transitions": [{"entry": gate, "action": "resolve", "rationale": "Chosen."}]}, LATER).record
    findings = lint_note(render(old), new)
    assert {"record-mismatch", "status-mismatch"} <= codes(findings)
    assert "hand-edited" not in codes(findings)
    mismatch = next(f for f in findings if f.code == "record-mismatch")
    assert "revision_id" in mismatch.detail and "record_digest" in mismatch.detail


def test_status_mismatch_without_a_record_reads_the_gates_section() -> None:
    gated = render(gated_tasks_record())
    assert "status-mismatch" in codes(lint_note(gated.replace("status: gated: Full or equal jitter?", "status: ok")))
    ok = render(build())
    assert "status-mismatch" in codes(lint_note(ok.replace("status: ok", "status: gated: Something?", 1)))
    counted = gated.replace("status: gated: Full or equal jitter?", "status: gated: Full or equal jitter? (+2 more)")
    assert "status-mismatch" in codes(lint_note(counted))


def test_missing_misordered_and_unknown_sections() -> None:
    record = gated_tasks_record()
    note = render(record)
    assert "sections-missing" in codes(lint_note(drop_section(note, "Identifiers")))
    missing_tasks = lint_note(drop_section(note, "Tasks"))
    assert any(f.code == "sections-missing" and "Tasks" in f.detail for f in missing_tasks)
    assert any(f.code == "sections-missing" and "Notes" in f.detail for f in lint_note(drop_section(note, "Notes"),
                                                                                        record))  # fmt: skip
    swapped = note.replace("## Decisions\n", "## @@\n").replace("## Gates\n", "## Decisions\n")
    swapped = swapped.replace("## @@\n", "## Gates\n")
    assert "sections-misordered" in codes(lint_note(swapped))
    trailing = note + "\n## Notes\n\nAppended by hand.\n"
    assert "sections-misordered" in codes(lint_note(trailing))
    extra = note.replace("## Identifiers", "## Extra\n\nhi\n\n## Identifiers")
    findings = lint_note(extra)
    assert "section-unknown" in codes(findings) and SEVERITY["section-unknown"] == "advisory"


def test_malformed_generated_preamble() -> None:
    note = render(build())
    no_next = note.replace("next: cook\n", "", 1)
    assert any(f.code == "preamble-malformed" and "next" in f.detail for f in lint_note(no_next))
    bad_digest = re.sub(r"note_digest: \S+", "note_digest: nonsense", note)
    assert any("sha256" in f.detail for f in lint_note(bad_digest) if f.code == "preamble-malformed")
    no_title = note.replace("# Wheypoint handoff\n", "")
    assert "preamble-malformed" in codes(lint_note(no_title))
    no_pin = note.replace("  revision_number: 1\n", "")
    assert any("pins-incomplete" in f.detail for f in lint_note(no_pin))


# Hand-written notes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("note", [LEGACY_BARE, LEGACY_WRAPPED, LEGACY_TASKS, LEGACY_LIST])
def test_good_legacy_notes_are_clean(note: str) -> None:
    # House style is judged on its own (tests/test_seed0_fields.py): it only ever warns.
    assert [f for f in lint_note(note) if f.code not in STYLE_CODES] == []


def slug(*lines: str, body: str = "\n## Document\n\nSome state.\n") -> str:
    return "\n".join(lines) + "\n" + body


EMPTY_DOSSIER = "\n## Decision dossier\n\nNothing written yet.\n"
THIN_DOSSIER = "\n## Decision dossier\n\n### Which queue\n\nOptions: a or b.\n"
CASES = [
    ("next-missing", slug("status: ok", "artifact: none", "Somewhere.")),
    ("next-invalid", slug("status: ok", "next: deploy", "Somewhere.")),
    ("status-invalid", slug("next: hold", "Somewhere.")),
    ("status-invalid", slug("status: fine", "next: hold", "Somewhere.")),
    ("status-invalid", slug("status: halt:", "next: hold", "Somewhere.")),
    ("orientation-missing", slug("status: ok", "next: hold")),
    ("dossier-missing", slug("status: gated: Which queue?", "next: cook", "artifact: a.md", "Somewhere.")),
    ("dossier-missing", slug("status: gated: Which queue?", "next: hold", "Somewhere.", body=EMPTY_DOSSIER)),
    ("dossier-incomplete", slug("status: gated: Which queue?", "next: hold", "Somewhere.", body=THIN_DOSSIER)),
    ("next-list-order-missing", slug('next: [briesearch "a"]', "status: ok", "Somewhere.")),
    ("next-list-not-read-only", slug('next: [cook "a", culture "b"]', "order: parallel", "status: ok", "Somewhere.")),
    ("tasks-missing", slug("status: ok", "next: tasks", "mode: parallel", "Somewhere.")),
    ("tasks-missing", slug("status: ok", "next: cook", "artifact: a.md", "mode: parallel", "Somewhere.")),
    (
        "tasks-missing",
        slug(
            "status: ok",
            "next: tasks",
            "Somewhere.",
            "parallel:",
            "  worktree_strategy: harness",
            "tasks:",
            "  - slug: a",
            "    command: /cook a",
            "    branch: a",
            "    branch_from: m",
        ),
    ),
    ("tasks-fields", LEGACY_TASKS.replace("    branch_from: origin/main\n", "", 1)),
    ("tasks-fields", LEGACY_TASKS.replace("  worktree_strategy: existing\n", "")),
    ("tasks-fields", LEGACY_TASKS.replace("    command: /cook .cheese/specs/fix-cart-rounding.md\n", "")),
    ("tasks-fields", LEGACY_TASKS.replace("worktree_strategy: existing", "worktree_strategy: create")),
    ("task-worktree-shared", LEGACY_TASKS.replace("/home/dev/shop-b", "/home/dev/shop-a")),
    ("affinage-needs-pr", slug("status: ok", "next: affinage", "artifact: none", "CI is red on the PR.")),
    ("artifact-required", slug("status: ok", "next: cook", "Build it.")),
    ("artifact-required", slug("status: ok", "next: cut", "artifact: none", "Cut it.")),
    ("required-section-missing", slug("status: ok", "next: culture", "Think it through.")),
    ("required-section-missing", slug("status: ok", "next: cure", "Apply the fixes.")),
    ("required-section-missing", slug("status: ok", "next: age", "Review it.", body="\n## Document\n\nDone.\n")),
    ("required-section-missing", slug("status: ok", "next: mold", "A fuzzy idea.", body="")),
    ("slug-unreadable", slug("status: ok", "next: hold", "Somewhere.", "Another line.")),
    ("slug-unreadable", "Just prose, no slug at all.\n"),
]


@pytest.mark.parametrize(("code", "note"), CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_each_legacy_code(code: str, note: str) -> None:
    findings = lint_note(note)
    assert code in codes(findings), findings
    assert clean(findings) == all(SEVERITY[f.code] != GATING for f in findings)


def test_next_missing_says_malformed_handoff() -> None:
    (found,) = [f for f in lint_note(slug("status: ok", "Somewhere.")) if f.code == "next-missing"]
    assert found == Finding("next-missing", "gating", "malformed handoff: next: required")


def test_satisfied_required_sections_are_quiet() -> None:
    agenda = "\n## Document\n\n**Agenda.** x\n\n**Open threads.** y\n"
    culture = slug("status: ok", "next: culture", "Think.", body=agenda)
    cure = slug("status: ok", "next: cure", "Fix.", body="\n## Document\n\nSee .cheese/findings/retry-findings.md\n")
    age = slug("status: ok", "next: age", "Review.", body="\n## Document\n\nReview PR#12.\n")
    hold = slug("status: ok", "next: hold", "Waiting.", body="")
    for note in (culture, cure, age, hold):
        assert [f for f in lint_note(note) if f.code not in STYLE_CODES] == [], note


def test_a_record_with_a_hand_written_note_mismatches() -> None:
    assert codes(lint_note(LEGACY_BARE, build())) - set(STYLE_CODES) == {"record-mismatch"}


def test_every_code_is_documented_with_its_severity() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    for code, severity in SEVERITY.items():
        row = re.search(rf"^\| `{re.escape(code)}` \| (\w+) \|", docs, flags=re.M)
        assert row, f"{code} is not documented in docs/notes.md"
        assert row.group(1) == severity, code


fragments = st.lists(st.sampled_from([
    "status: ok", "status: gated: x", "next: tasks", "next: [cook \"a\"]", "mode: parallel", "parallel:",
    "  worktree_strategy: existing", "  worktree_strategy: bogus", "tasks:", "  - slug: a", "    worktree: w",
    "## Decision dossier", "### fork", "wheypoint:", "  note_digest: sha256:00", "# Wheypoint handoff",
    "## Identifiers", "```", "", "Orientation.",
]), max_size=14).map("\n".join)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=300), st.binary(max_size=300), fragments))
def test_lint_never_raises(data: str | bytes) -> None:
    findings = lint_note(data)
    assert all(f.code in SEVERITY and f.severity == SEVERITY[f.code] for f in findings)
    # Not only "did not raise": the reply `lint` prints is well formed, and says clean exactly when nothing gates.
    reply = lint_report(data)
    assert set(reply) == {"format", "clean", "findings"}
    assert reply["format"] in ("wheypoint", "legacy", "legacy-wrapped")
    assert reply["findings"] == [f.as_json() for f in findings]
    assert all(set(f) == {"code", "severity", "detail"} and f["detail"].strip() for f in reply["findings"])
    assert reply["clean"] is (not any(f.severity == GATING for f in findings))
    per_code = [sum(f.code == code for f in findings) for code in codes(findings)]
    assert all(count <= MAX_PER_CODE + 1 for count in per_code)  # the cap, plus the line saying how many more


def test_findings_of_one_code_are_capped() -> None:
    many = LEGACY_TASKS.split("\n## Document")[0].rstrip("\n") + "\n" + "  - slug: x\n    command: /cook x\n" * 200
    findings = lint_note(many)
    assert len([f for f in findings if f.code == "tasks-fields"]) == 65
    assert findings[-1].detail.endswith("more tasks-fields findings were left out")
