"""The kernel's bookkeeping of what a revision changes: links and edges, pins, staleness, the receipt, the slug."""

from __future__ import annotations

from typing import Any

import pytest

from test_kernel import GENESIS, PROV, entry, first
from wheypoint.model.canonical import digest
from wheypoint.model.errors import Refusal
from wheypoint.model.kernel import (
    Provenance,
    apply,
    derive_slug,
    genesis_identity,
    make_receipt,
    request_digest,
    work_id_for,
)


def refused(head: dict[str, Any] | None, intent: dict[str, Any], prov: Provenance = PROV) -> list[tuple[str, str]]:
    """The (code, path) of every problem the kernel refuses `intent` with."""
    with pytest.raises(Refusal) as caught:
        apply(head, intent, prov)
    assert caught.value.code == "invalid-intent"
    return [(p.code, p.path) for p in caught.value.problems]


def with_links() -> dict[str, Any]:
    return apply(None, {**GENESIS, "artifact_links": [{"ref": "spec.md"}, {"ref": "plan.md"}]}, PROV).record


# --- artifact links ---------------------------------------------------------------------------------------------


def test_removing_an_artifact_link_drops_only_it_and_the_receipt_names_it() -> None:
    head = with_links()
    outcome = apply(head, {"remove_artifact_links": ["spec.md"]}, PROV)
    assert outcome.record["artifact_links"] == [head["artifact_links"][1]]  # plan.md, untouched (added_in 1)
    assert outcome.revision["links_removed"] == ["spec.md"] and outcome.revision["links_added"] == []


def test_removing_an_artifact_link_the_record_lacks_is_refused_unknown_link() -> None:
    head = with_links()
    assert refused(head, {"remove_artifact_links": ["plan.md", "nope.md"]}) == [
        ("unknown-link", "$.remove_artifact_links[1]")
    ]
    # Removed once, the same link is unknown to the next revision.
    second = apply(head, {"remove_artifact_links": ["plan.md"]}, PROV).record
    assert refused(second, {"remove_artifact_links": ["plan.md"]}) == [("unknown-link", "$.remove_artifact_links[0]")]


def test_a_link_given_again_replaces_the_old_one() -> None:
    head = with_links()
    prov = Provenance(project_key="shop", captured_at="t", file_digests={"spec.md": "sha256:" + "2" * 64})
    outcome = apply(head, {"artifact_links": [{"ref": "spec.md"}]}, prov)
    links = outcome.record["artifact_links"]
    assert [link["ref"] for link in links] == ["plan.md", "spec.md"]
    assert links[1] == {"ref": "spec.md", "covers": [], "digest": "sha256:" + "2" * 64, "added_in": 2}
    assert outcome.revision["links_added"] == ["spec.md"] and outcome.revision["links_removed"] == []


def test_a_link_is_pinned_only_when_its_ref_has_a_pin() -> None:
    prov = Provenance(project_key="shop", captured_at="t", pins={"a.py:3": "a.py:3@abc1234"})
    record = apply(None, {**GENESIS, "artifact_links": [{"ref": "a.py:3"}, {"ref": "b.py:4"}]}, prov).record
    pinned, plain = record["artifact_links"]
    assert pinned["ref"] == "a.py:3" and pinned["pinned"] == "a.py:3@abc1234"
    assert "pinned" not in plain and plain["digest"] is None


def test_link_covers_resolve_labels_and_ids_and_refuse_the_rest() -> None:
    head = first()
    gate = entry(head, "question")["id"]
    record = apply(head, {"decisions": [{"text": "New.", "rationale": "r", "label": "new"}],
                          "artifact_links": [{"ref": "x.md", "covers": ["new", gate]}]}, PROV).record  # fmt: skip
    assert record["artifact_links"][0]["covers"] == [entry(record, "decision", 1)["id"], gate]
    assert refused(head, {"artifact_links": [{"ref": "x.md", "covers": [gate, "ghost"]}]}) == [
        ("unknown-entry", "$.artifact_links[0].covers[1]")
    ]


# --- edges --------------------------------------------------------------------------------------------------------


def with_edges() -> dict[str, Any]:
    links = [{"ref": "other.1234abcd", "kind": "relates_to", "rationale": "same client"},
             {"ref": "other.1234abcd", "kind": "informs"}, {"ref": "third", "kind": "blocked_by"}]  # fmt: skip
    return apply(None, {**GENESIS, "links": links}, PROV).record


def test_edges_keep_their_rationale_and_resolve_covers() -> None:
    record = apply(None, {**GENESIS, "links": [{"ref": "w", "kind": "implements", "covers": ["cap"]}]}, PROV).record
    assert record["edges"] == [{"ref": "w", "kind": "implements", "added_in": 1,
                                "covers": [entry(record, "decision")["id"]]}]  # fmt: skip
    assert with_edges()["edges"][0] == {"ref": "other.1234abcd", "kind": "relates_to", "added_in": 1,
                                        "rationale": "same client"}  # fmt: skip
    assert refused(None, {**GENESIS, "links": [{"ref": "w", "kind": "implements", "covers": ["nope"]}]}) == [
        ("unknown-entry", "$.links[0].covers[0]")
    ]


def test_removing_an_edge_by_ref_and_kind_or_by_ref_alone() -> None:
    head = with_edges()
    one = apply(head, {"remove_links": [{"ref": "other.1234abcd", "kind": "informs"}]}, PROV)
    assert [(e["ref"], e["kind"]) for e in one.record["edges"]] == [("other.1234abcd", "relates_to"),
                                                                     ("third", "blocked_by")]  # fmt: skip
    assert one.revision["links_removed"] == ["other.1234abcd"]
    both = apply(head, {"remove_links": [{"ref": "other.1234abcd"}]}, PROV).record
    assert [(e["ref"], e["kind"]) for e in both["edges"]] == [("third", "blocked_by")]


def test_removing_an_edge_the_record_lacks_is_refused_unknown_link() -> None:
    head = with_edges()
    assert refused(head, {"remove_links": [{"ref": "third", "kind": "informs"}, {"ref": "fourth"}]}) == [
        ("unknown-link", "$.remove_links[0]"),
        ("unknown-link", "$.remove_links[1]"),
    ]


def test_a_forks_lineage_edge_cannot_be_removed_by_an_intent() -> None:
    head = {**first(), "edges": [{"ref": "parent.00000000", "kind": "forked_from", "added_in": 1}]}
    assert refused(head, {"remove_links": [{"ref": "parent.00000000"}]}) == [("host-only-edge", "$.remove_links[0]")]


def test_an_edge_given_again_replaces_the_same_ref_and_kind_only() -> None:
    head = with_edges()
    outcome = apply(head, {"links": [{"ref": "other.1234abcd", "kind": "informs", "rationale": "now"}]}, PROV)
    edges = outcome.record["edges"]
    assert [(e["ref"], e["kind"], e["added_in"]) for e in edges] == [
        ("other.1234abcd", "relates_to", 1), ("third", "blocked_by", 1), ("other.1234abcd", "informs", 2)]  # fmt: skip
    assert outcome.revision["links_added"] == ["other.1234abcd"]


# --- what bumps decisions_revision, and the stale warnings it raises ----------------------------------------------


def noted() -> dict[str, Any]:
    return apply(None, {**GENESIS, "notes": "Report."}, PROV).record


def warnings_and_revisions(intent: dict[str, Any]) -> tuple[list[str], int, int]:
    outcome = apply(noted(), intent, PROV)
    record = outcome.record
    return [w.code for w in outcome.warnings], record["decisions_revision"], record["notes_revision"]


def test_a_first_checkpoint_states_decisions_notes_and_orientation_at_revision_one() -> None:
    record = noted()
    assert (record["decisions_revision"], record["notes_revision"], record["orientation_revision"]) == (1, 1, 1)
    assert apply(None, {**GENESIS, "notes": "Report."}, PROV).warnings == []


def test_a_decision_moved_bumps_decisions_revision_but_a_question_moved_does_not() -> None:
    head = noted()
    cap, gate = entry(head, "decision")["id"], entry(head, "question")["id"]
    assert warnings_and_revisions({"transitions": [{"entry": cap, "action": "withdraw", "rationale": "r"}]}) == (
        ["stale-notes", "stale-orientation"], 2, 1)  # fmt: skip
    assert warnings_and_revisions({"transitions": [{"entry": gate, "action": "resolve", "rationale": "r"}]}) == (
        [], 1, 1)  # fmt: skip


def test_a_decision_added_bumps_it_and_a_question_added_does_not() -> None:
    assert warnings_and_revisions({"decisions": [{"text": "More.", "rationale": "r"}]})[1:] == (2, 1)
    assert warnings_and_revisions({"questions": [{"text": "Why?"}]}) == ([], 1, 1)
    assert warnings_and_revisions({"decisions": []}) == ([], 1, 1)


def test_notes_and_orientation_written_with_the_decision_are_not_stale() -> None:
    more = {"decisions": [{"text": "More.", "rationale": "r"}]}
    assert warnings_and_revisions({**more, "notes": "New report."}) == (["stale-orientation"], 2, 2)
    assert warnings_and_revisions({**more, "notes": "New report.", "orientation": "Still designed."}) == ([], 2, 2)


def test_notes_restated_unchanged_do_not_count_as_written() -> None:
    outcome = apply(noted(), {"notes": "Report.", "decisions": [{"text": "More.", "rationale": "r"}]}, PROV)
    assert outcome.record["notes_revision"] == 1 and outcome.revision["notes_changed"] is False
    assert [w.code for w in outcome.warnings] == ["stale-notes", "stale-orientation"]
    changed = apply(noted(), {"notes": "Other."}, PROV)
    assert changed.record["notes_revision"] == 2 and changed.revision["notes_changed"] is True


def test_an_older_head_without_orientation_revision_counts_as_stating_it() -> None:
    head = {k: v for k, v in noted().items() if k != "orientation_revision"}
    head["revision_number"] = 3
    record = apply(head, {"notes": "Other."}, PROV).record
    assert record["orientation_revision"] == 3 and record["revision_number"] == 4


def test_a_dropped_move_is_read_but_warned() -> None:
    outcome = apply(None, {**GENESIS, "next": {"move": "cut", "artifact": "spec.md"}}, PROV)
    assert [w.code for w in outcome.warnings] == ["move-dropped"]


# --- genesis, compaction and what comes from provenance -----------------------------------------------------------


def test_a_first_checkpoint_naming_a_work_id_is_refused_record_missing() -> None:
    assert refused(None, {**GENESIS, "work_id": "ghost.00000000"}) == [("record-missing", "$.work_id")]
    assert refused(None, {"orientation": "x", "next": {"move": "hold"}, "notes": ""}) == [("empty-genesis", "$")]
    assert apply(None, {"orientation": "Only notes.", "next": {"move": "hold"}, "notes": "n"}, PROV).record


def test_the_authors_slug_wins_over_the_derived_one() -> None:
    assert genesis_identity({"slug": "mine", "orientation": "Retry backoff"}, "shop") == (
        "mine", work_id_for("shop", "mine"))  # fmt: skip
    assert genesis_identity({"orientation": "Retry backoff"}, "shop")[0] == "retry-backoff"


def test_a_compaction_proof_without_a_head_or_naming_another_revision_is_stale() -> None:
    proof = {"rehydrated_from_revision_id": "rev-0000000000000000", "rehydrated_record_digest": "sha256:" + "0" * 64}
    assert refused(None, {**GENESIS, "compaction": proof}) == [
        ("stale-compaction-proof", "$.compaction.rehydrated_from_revision_id")
    ]
    head = first()
    assert refused(head, {"compaction": {**proof, "rehydrated_record_digest": head["record_digest"]}}) == [
        ("stale-compaction-proof", "$.compaction.rehydrated_from_revision_id")
    ]
    assert apply(head, {"notes": "n"}, PROV).revision["compacted"] is False


def test_quote_turns_and_meat_come_from_provenance_and_meat_accumulates() -> None:
    intent = {**GENESIS, "directives": [{"text": "No POST retries.", "quote": "never retry POSTs"}]}
    prov = PROV._replace(quote_turns={"$.directives[0]": "turn-7"}, meat=({"turn": "t1", "text": "a"},))
    record = apply(None, intent, prov).record
    assert entry(record, "directive")["quote_turn"] == "turn-7" and "quote_turn" not in entry(record, "decision")
    assert record["meat"] == [{"turn": "t1", "text": "a", "added_in": 1}]
    later = PROV._replace(meat=({"turn": "t2", "text": "b"}, {"turn": "t1", "text": "a2"}))
    assert apply(record, {"notes": "n"}, later).record["meat"] == [
        {"turn": "t2", "text": "b", "added_in": 2}, {"turn": "t1", "text": "a2", "added_in": 2}]  # fmt: skip
    assert apply(record, {"notes": "n"}, PROV).record["meat"] == record["meat"]


def test_local_references_come_from_context_links_and_edges() -> None:
    prov = PROV._replace(local_refs=frozenset({"xdg:shop/c.md", "xdg:shop/e.md", "xdg:shop/unused.md"}))
    intent = {**GENESIS, "working_context": ["xdg:shop/c.md"], "links": [{"ref": "xdg:shop/e.md", "kind": "informs"}]}
    assert apply(None, intent, prov).record["local_references"] == ["xdg:shop/c.md", "xdg:shop/e.md"]


def test_local_references_stay_known_from_the_head() -> None:
    prov = PROV._replace(local_refs=frozenset({"xdg:shop/a.md"}))
    head = apply(None, {**GENESIS, "artifact_links": [{"ref": "xdg:shop/a.md"}]}, prov).record
    assert head["local_references"] == ["xdg:shop/a.md"]
    assert apply(head, {"notes": "n"}, PROV).record["local_references"] == ["xdg:shop/a.md"]


def test_working_context_is_carried_unless_restated() -> None:
    head = apply(None, {**GENESIS, "working_context": ["a.py:1"]}, PROV).record
    assert apply(head, {"notes": "n"}, PROV).record["working_context"] == ["a.py:1"]
    assert apply(head, {"working_context": []}, PROV).record["working_context"] == []


# --- ids and the receipt -------------------------------------------------------------------------------------------


def test_the_revision_id_covers_the_whole_intent_except_its_base() -> None:
    head = first()
    based = apply(head, {"notes": "n", "base_revision_id": head["revision_id"]}, PROV).record
    assert based["revision_id"] == apply(head, {"notes": "n"}, PROV).record["revision_id"]
    assert (
        based["revision_id"]
        != apply(head, {"notes": "m", "base_revision_id": head["revision_id"]}, PROV).record["revision_id"]
    )
    assert request_digest({"notes": "n", "base_revision_id": "rev-1"}) == digest({"notes": "n"})


def test_the_receipt_lists_the_entries_added_in_list_order() -> None:
    outcome = apply(None, GENESIS, PROV)
    record = outcome.record
    assert outcome.revision["added"] == [entry(record, "decision")["id"], entry(record, "question")["id"]]
    later = apply(record, {"notes": "n"}, PROV).revision
    assert (later["added"], later["transitioned"], later["links_added"], later["links_removed"]) == ([], [], [], [])


def test_a_receipt_made_for_another_command_changes_no_notes_and_compacts_nothing_unless_told() -> None:
    # fork and join build their receipts with make_receipt's defaults: a default flipped would misreport them.
    record = first()
    receipt = make_receipt(record, "sha256:" + "0" * 64, "t", added=[], transitioned=[], links_added=["x"])
    assert (receipt["notes_changed"], receipt["compacted"], receipt["links_removed"]) == (False, False, [])
    assert receipt["links_added"] == ["x"] and receipt["record_digest"] == record["record_digest"]
    told = make_receipt(record, "r", "t", added=[], transitioned=[], links_added=[], links_removed=["y"],
                        notes_changed=True, compacted=True)  # fmt: skip
    assert (told["notes_changed"], told["compacted"], told["links_removed"]) == (True, True, ["y"])


def test_an_entry_gates_only_when_it_says_so() -> None:
    record = apply(
        None, {"orientation": "Open.", "next": {"move": "hold"}, "questions": [{"text": "Why?"}]}, PROV
    ).record
    assert entry(record, "question")["gates"] is False and record["status"] == "ok"


# --- the derived slug's bound ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("a" * 23 + " " + "b" * 24, "a" * 23 + "-" + "b" * 24),  # exactly 48: kept whole
        ("a" * 23 + " " + "b" * 25, "a" * 23),  # 49: the word that would pass 48 is left out
        ("a" * 48, "a" * 48),
        ("a" * 49, "work"),
        ("one two three four five six seven", "one-two-three-four-five-six"),  # at most six words
        ("the a of payments", "payments"),
    ],
)
def test_a_derived_slug_holds_at_most_48_characters_and_six_words(text: str, slug: str) -> None:
    assert derive_slug(text) == slug
