"""The render group's last survivors: the digest line at the start, an edited note, fence lengths, a fork decided
only by its gate, a decision settled in the notes' own revision, and verbatim blocks that end or meet oddly."""

from __future__ import annotations

from typing import Any

from wheypoint.model.intake import require_valid
from wheypoint.model.kernel import Provenance, apply
from wheypoint.notes.escapes import verbatim_blocks
from wheypoint.notes.render import carries_own_digest, fenced, note_digest, render

PROV = Provenance(project_key="shop", captured_at="2026-12-01T10:00:00Z")


def _first(intent: dict[str, Any]) -> dict[str, Any]:
    return dict(apply(None, require_valid(intent), PROV).record)


def _next(head: dict[str, Any], intent: dict[str, Any]) -> dict[str, Any]:
    return dict(apply(head, require_valid({"work_id": head["work_id"], **intent}), PROV).record)


def test_a_digest_block_at_the_very_start_is_still_the_digest() -> None:
    blank = "\nwheypoint:\n  note_digest: \nend\n"
    sealed = blank.replace("note_digest: ", "note_digest: " + note_digest(blank))
    assert carries_own_digest(sealed)
    assert not carries_own_digest(sealed.replace("end", "End"))


def test_a_rendered_note_edited_anywhere_no_longer_carries_its_digest() -> None:
    note = render(_first({"slug": "retry", "orientation": "Retry work.", "next": {"move": "hold"},
                          "notes": "Started here."}))  # fmt: skip
    assert carries_own_digest(note)
    assert not carries_own_digest(note.replace("Started here.", "Started there."))
    assert not carries_own_digest(note.replace("Retry work.", "Retry works."))


def test_a_fence_is_one_backtick_longer_than_the_longest_run_inside_and_three_at_least() -> None:
    def fence(text: str) -> str:
        return fenced(text, "").split("text\n", 1)[0]

    assert [fence("plain"), fence("a`b"), fence("a``b"), fence("a```b"), fence("````")] == [
        "```", "```", "```", "````", "`````"
    ]  # fmt: skip


def test_only_the_forks_gate_settling_marks_it_decided() -> None:
    dossier = [{"fork": "Which jitter?", "options": [{"option": "full"}, {"option": "equal"}]}]
    head = _first({"slug": "jitter", "orientation": "Jitter.", "next": {"move": "hold"},
                   "questions": [{"text": "Which jitter?", "label": "same"}], "decision_dossier": dossier})  # fmt: skip
    question = head["entries"][0]["id"]
    settled = _next(head, {"base_revision_id": head["revision_id"],
                           "transitions": [{"entry": question, "action": "resolve", "rationale": "Not the gate."}]})
    assert "**Decided**" not in render(settled)  # a question of the same words that gates nothing
    gated = _first({"slug": "jitter-two", "orientation": "Jitter.", "next": {"move": "hold"},
                    "questions": [{"text": "Which jitter?", "gates": True, "rationale": "A person picks.",
                                   "label": "g"}],
                    "decision_dossier": [{**dossier[0], "gate": "g"}]})  # fmt: skip
    assert "**Decided**" not in render(gated)  # its gate is still active
    gate = gated["entries"][0]["id"]
    decided = _next(gated, {"base_revision_id": gated["revision_id"],
                            "transitions": [{"entry": gate, "action": "resolve", "rationale": "Full it is."}]})
    assert "**Decided** in r2 (resolved): Full it is." in render(decided)


def test_the_stale_notes_banner_names_decisions_changed_after_the_notes_not_with_them() -> None:
    head = _first({"slug": "cap", "orientation": "Cap.", "next": {"move": "hold"},
                   "decisions": [{"text": "Cap at 30 s.", "rationale": "Gateway."},
                                 {"text": "Three retries.", "rationale": "Enough."}]})  # fmt: skip
    cap, retries = (e["id"] for e in head["entries"])
    second = _next(head, {"base_revision_id": head["revision_id"], "notes": "Written with the cap withdrawn.",
                          "transitions": [{"entry": cap, "action": "withdraw", "rationale": "Not needed."}]})
    third = _next(second, {"base_revision_id": second["revision_id"],
                           "transitions": [{"entry": retries, "action": "withdraw", "rationale": "Later."}]})
    banner = next(line for line in render(third).splitlines() if line.startswith("> **Stale notes:**"))
    assert retries in banner and cap not in banner, banner


def test_verbatim_blocks_read_an_unclosed_last_block_and_blocks_that_touch() -> None:
    assert list(verbatim_blocks("status: ok\n  ```text\n  kept\n  to the end")) == ["kept\nto the end"]
    touching = "x\n  ```text\n  one\n  ```\n  ```text\n  two\n  ```\n"
    assert list(verbatim_blocks(touching)) == ["one", "two"]


def test_a_code_span_closes_past_a_longer_run_of_backticks_inside_it() -> None:
    from wheypoint.notes.render import escape_line

    # The closing run of two is found after a run of three, one character past its end: kept as a code span.
    assert escape_line("``a```b``") == "``a```b``"
    assert escape_line("``a```b") == "\\`\\`a\\`\\`\\`b"  # no run of exactly two closes it: every backtick escaped
