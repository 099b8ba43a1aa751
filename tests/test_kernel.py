"""The pure kernel: derived ids and status, carry-forward, transitions, compaction, and properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheypoint.model.canonical import digest
from wheypoint.model.contract import RECORD, REVISION
from wheypoint.model.derived import derive_status, notes_stale
from wheypoint.model.errors import Refusal
from wheypoint.model.intake import intent_problems
from wheypoint.model.kernel import Provenance, apply, derive_slug, slug_words, work_id_for
from wheypoint.model.schemacheck import SchemaChecker

PROV = Provenance(project_key="shop", captured_at="2026-11-30T10:00:00Z")
GENESIS: dict[str, Any] = {
    "orientation": "Retry backoff is designed.",
    "next": {"move": "hold"},
    "decisions": [{"text": "Cap at 30 s.", "rationale": "Gateway timeout.", "label": "cap"}],
    "questions": [{"text": "Which jitter?", "rationale": "See dossier.", "gates": True, "label": "jit"}],
    "decision_dossier": [{"fork": "Which jitter?", "gate": "jit", "options": [{"option": "a"}, {"option": "b"}]}],
}


def first() -> dict[str, Any]:
    return apply(None, GENESIS, PROV).record


def entry(record: dict[str, Any], kind: str, index: int = 0) -> dict[str, Any]:
    return [e for e in record["entries"] if e["kind"] == kind][index]


def test_genesis_derives_ids_status_and_digests() -> None:
    outcome = apply(None, GENESIS, PROV)
    record, revision = outcome.record, outcome.revision
    assert record["slug"] == "retry-backoff-designed"
    assert record["work_id"] == work_id_for("shop", "retry-backoff-designed")
    assert record["status"] == "gated: Which jitter?"
    assert record["record_digest"] == digest({k: v for k, v in record.items() if k != "record_digest"})
    assert revision["revision_digest"] == digest({k: v for k, v in revision.items() if k != "revision_digest"})
    assert revision["record_digest"] == record["record_digest"]
    assert record["decision_dossier"][0]["gate"] == entry(record, "question")["id"]
    assert SchemaChecker(RECORD).check(record) == []
    assert SchemaChecker(REVISION).check(revision) == []


def test_the_kernel_is_deterministic() -> None:
    assert apply(None, GENESIS, PROV) == apply(None, GENESIS, PROV)


def test_the_clock_does_not_enter_ids() -> None:
    later = Provenance(project_key="shop", captured_at="2027-01-01T00:00:00Z")
    a, b = apply(None, GENESIS, PROV), apply(None, GENESIS, later)
    assert a.record["revision_id"] == b.record["revision_id"]
    assert [e["id"] for e in a.record["entries"]] == [e["id"] for e in b.record["entries"]]
    assert a.record["record_digest"] != b.record["record_digest"]


def test_same_slug_in_two_projects_gives_two_works() -> None:
    assert work_id_for("shop", "x") != work_id_for("bank", "x")


@pytest.mark.parametrize(
    ("text", "slug"),
    [("Retry backoff for the payment client", "retry-backoff-payment-client"), ("!!!", "work"), ("The a", "the-a")],
)
def test_slugs_come_from_significant_words(text: str, slug: str) -> None:
    assert derive_slug(text) == slug


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="aZ9 -_.İǅ\u00a0\u2028é")))
def test_a_slug_s_words_are_the_runs_a_z_0_9_splits_apart(text: str) -> None:
    import re  # (the kernel splits without it, so a write loads no `re`)

    assert slug_words(text) == [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def test_omitted_entries_carry_forward_and_transitions_move_them() -> None:
    head = first()
    gate, cap = entry(head, "question")["id"], entry(head, "decision")["id"]
    intent = {
        "decisions": [{"text": "Full jitter.", "rationale": "Lead chose.", "label": "full"}],
        "transitions": [
            {"entry": gate, "action": "resolve", "rationale": "Decided."},
            {"entry": cap, "action": "supersede", "by": "full", "rationale": "Replaced."},
        ],
    }
    outcome = apply(head, intent, PROV)
    record = outcome.record
    assert record["status"] == "ok"
    assert record["revision_number"] == 2 and record["parent_revision_id"] == head["revision_id"]
    assert len(record["entries"]) == 3
    moved = {e["id"]: e for e in record["entries"]}
    assert moved[gate]["state"] == "resolved"
    assert moved[cap]["state"] == "superseded"
    assert moved[cap]["settled"]["by"] == entry(record, "decision", 1)["id"]
    assert outcome.revision["transitioned"][1] == {
        "entry": cap,
        "action": "supersede",
        "by": moved[cap]["settled"]["by"],
    }
    assert record["orientation"] == head["orientation"] and record["next"] == head["next"]


@pytest.mark.parametrize(
    ("transition", "code"),
    [
        ({"entry": "q-000000000000", "action": "resolve", "rationale": "r"}, "unknown-entry"),
        ({"entry": "SELF", "action": "supersede", "by": "SELF", "rationale": "r"}, "bad-successor"),
    ],
)
def test_bad_transitions_are_refused(transition: dict[str, Any], code: str) -> None:
    head = first()
    gate = entry(head, "question")["id"]
    transition = {k: (gate if v == "SELF" else v) for k, v in transition.items()}
    with pytest.raises(Refusal) as caught:
        apply(head, {"transitions": [transition]}, PROV)
    assert caught.value.problems[0].code == code


def test_only_active_entries_move() -> None:
    head = first()
    gate = entry(head, "question")["id"]
    second = apply(head, {"transitions": [{"entry": gate, "action": "withdraw", "rationale": "moot"}]}, PROV).record
    with pytest.raises(Refusal) as caught:
        apply(second, {"transitions": [{"entry": gate, "action": "resolve", "rationale": "again"}]}, PROV)
    assert caught.value.problems[0].code == "inactive-entry"


def test_a_first_checkpoint_needs_orientation_next_and_content() -> None:
    with pytest.raises(Refusal) as caught:
        apply(None, {"slug": "x"}, PROV)
    assert {p.code for p in caught.value.problems} == {"missing-field", "empty-genesis"}


def test_stale_notes_when_decisions_change_without_notes() -> None:
    head = apply(None, {**GENESIS, "notes": "Report."}, PROV).record
    outcome = apply(head, {"decisions": [{"text": "More.", "rationale": "Why."}]}, PROV)
    assert notes_stale(outcome.record)
    assert [w.code for w in outcome.warnings] == ["stale-notes", "stale-orientation"]
    fresh = apply(outcome.record, {"notes": "Updated report."}, PROV).record
    assert not notes_stale(fresh)


def test_compaction_proof_must_name_the_head() -> None:
    head = first()
    proof = {"rehydrated_from_revision_id": head["revision_id"], "rehydrated_record_digest": head["record_digest"]}
    assert apply(head, {"compaction": proof, "notes": "n"}, PROV).revision["compacted"] is True
    stale = {**proof, "rehydrated_record_digest": "sha256:" + "0" * 64}
    with pytest.raises(Refusal) as caught:
        apply(head, {"compaction": stale, "notes": "n"}, PROV)
    assert caught.value.problems[0].code == "stale-compaction-proof"


def test_pins_and_local_references_come_from_provenance() -> None:
    prov = Provenance(
        project_key="shop", captured_at="t", pins={"a.py:3": "a.py:3@abc1234"},
        local_refs=frozenset({"xdg:shop/scratch.md"}), file_digests={"spec.md": "sha256:" + "1" * 64},
    )  # fmt: skip
    intent = {**GENESIS, "working_context": ["see a.py:3 and b.py:4"],
              "artifact_links": [{"ref": "spec.md"}, {"ref": "xdg:shop/scratch.md"}]}  # fmt: skip
    record = apply(None, intent, prov).record
    assert record["working_context"] == ["see a.py:3@abc1234 and b.py:4"]
    assert record["artifact_links"][0]["digest"] == "sha256:" + "1" * 64
    assert record["local_references"] == ["xdg:shop/scratch.md"]


def test_status_line_is_one_bounded_line() -> None:
    entries = [{"kind": "question", "state": "active", "gates": True, "text": "a\nb " + "x" * 300}] * 2
    status = derive_status(entries)
    assert "\n" not in status and status.endswith("(+1 more)") and len(status) < 160


# Property tests over random sequences of checkpoints.
_words = st.text(alphabet="abcdefghij klm", min_size=1, max_size=12).filter(lambda s: s.strip() != "")


@st.composite
def steps(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(min_value=1, max_value=6))
    plan = []
    for _ in range(count):
        plan.append({
            "decisions": draw(st.lists(_words, max_size=3)),
            "questions": draw(st.lists(_words, max_size=2)),
            "moves": draw(st.lists(st.tuples(st.integers(0, 50), st.sampled_from(["resolve", "withdraw", "supersede"])),
                                   max_size=3)),
        })  # fmt: skip
    return plan


def _intent(step: dict[str, Any], head: dict[str, Any] | None) -> dict[str, Any]:
    intent: dict[str, Any] = {} if head else {"orientation": "Property run.", "next": {"move": "hold"}, "notes": "n"}
    if step["decisions"]:
        intent["decisions"] = [{"text": t, "rationale": "r", "label": f"l{i}"} for i, t in enumerate(step["decisions"])]
    if step["questions"]:
        intent["questions"] = [{"text": t} for t in step["questions"]]
    active = [e["id"] for e in (head or {}).get("entries", []) if e["state"] == "active"]
    transitions, used = [], set()
    for pick, action in step["moves"]:
        if not active:
            break
        target = active[pick % len(active)]
        if target in used or (action == "supersede" and not step["decisions"]):
            continue
        used.add(target)
        move = {"entry": target, "action": action, "rationale": "r"}
        if action == "supersede":
            move["by"] = "l0"
        transitions.append(move)
    if transitions:
        intent["transitions"] = transitions
    return intent


@settings(max_examples=60, deadline=None)
@given(steps())
def test_no_entry_is_ever_lost_and_replays_are_identical(plan: list[dict[str, Any]]) -> None:
    head: dict[str, Any] | None = None
    seen: dict[str, str] = {}
    for step in plan:
        intent = _intent(step, head)
        if not intent:
            continue
        assert intent_problems(intent) == [], intent
        outcome = apply(head, intent, PROV)
        assert apply(head, intent, PROV) == outcome  # replaying gives the same bytes, ids included
        record = outcome.record
        ids = [e["id"] for e in record["entries"]]
        assert len(ids) == len(set(ids))
        assert set(seen) <= set(ids), "an entry disappeared"
        for e in record["entries"]:
            if seen.get(e["id"], "active") != "active":
                assert e["state"] == seen[e["id"]], "a settled entry changed state"
            seen[e["id"]] = e["state"]
        assert record["status"] == derive_status(record["entries"])
        assert SchemaChecker(RECORD).check(record) == []
        head = record
