"""What a resuming agent is told to do: every dispatch action, and resume packets that respect their budget."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_noteparse import (
    GATE,
    LEGACY_BARE,
    LEGACY_LIST,
    LEGACY_TASKS,
    LEGACY_WRAPPED,
    LIST_NEXT,
    TASKS,
    build,
    gated_tasks_record,
    resolved_record,
)
from wheypoint.model.errors import Refusal
from wheypoint.notes.handoff import MALFORMED_NEXT, dispatch, dispatch_record
from wheypoint.notes.packet import PACKET_CATEGORIES, packet_size, render_packet
from wheypoint.notes.parse import parse_note


def note(*lines: str) -> dict[str, Any]:
    return dispatch(parse_note("\n".join(lines) + "\n\n## Document\n\nState.\n"))


# dispatch -------------------------------------------------------------------------------------------


def test_missing_next_is_malformed_whatever_else_is_there() -> None:
    assert note("status: ok", "artifact: a.md", "Somewhere.") == {"action": "malformed", "message": MALFORMED_NEXT}
    assert note("status: gated: Which?", "Somewhere.")["message"] == MALFORMED_NEXT


@pytest.mark.parametrize(
    "lines",
    [
        ("status: ok", "next: deploy", "Somewhere."),
        ("next: cook", "artifact: a.md", "Somewhere."),
        ("status: perhaps", "next: hold", "Somewhere."),
        ("status: ok", 'next: [briesearch "a"]', "Somewhere."),
        ("status: ok", 'next: [cook "a"]', "order: parallel", "Somewhere."),
        ("status: ok", "next: tasks", "mode: parallel", "Somewhere."),
    ],
)
def test_other_malformed_handoffs(lines: tuple[str, ...]) -> None:
    reply = note(*lines)
    assert reply["action"] == "malformed" and reply["message"].startswith("malformed handoff: ")


def test_tasks_that_would_share_a_checkout_are_not_dispatched() -> None:
    shared = LEGACY_TASKS.replace("/home/dev/shop-b", "/home/dev/shop-a")
    reply = dispatch(parse_note(shared))
    assert reply["action"] == "malformed" and "checkout" in reply["message"]


def test_a_gate_is_surfaced_and_nothing_runs() -> None:
    reply = dispatch(parse_note(LEGACY_WRAPPED))
    assert reply["action"] == "surface-gate" and reply["gate"] == "Bounded or unbounded queue?"
    assert "src/queue.py:42" in reply["dossier"] and "Waiting on the lead" in reply["open"]
    assert reply["directions"] == ["research", "decide", "build"]
    assert "runs" not in reply and "skill" not in reply


def test_a_generated_gate_carries_its_dossier_and_gates() -> None:
    reply = dispatch_record(gated_tasks_record())
    assert reply["action"] == "surface-gate" and reply["gate"] == "Full or equal jitter?"
    assert "**Prior leaning:** full" in reply["dossier"] and "owner: lead" in reply["open"]


def test_a_halt_is_surfaced_then_the_next_move_runs() -> None:
    reply = note("status: halt: CI runner is offline", "next: press", "artifact: .cheese/specs/x.md", "Mid-press.")
    assert reply["action"] == "surface-halt" and reply["reason"] == "CI runner is offline"
    assert reply["then"] == {"action": "run", "skill": "/press", "argument": ".cheese/specs/x.md",
                             "argument_from": "artifact"}  # fmt: skip
    assert note("status: halt: waiting on disk", "next: hold", "Stuck.")["then"]["action"] == "wait"


def test_pipeline_moves_take_the_artifact_then_the_slug_then_the_orientation() -> None:
    assert dispatch(parse_note(LEGACY_BARE))["argument"] == ".cheese/specs/retry-budget.md"
    bare = parse_note("status: ok\nnext: age\nReview the retry work.\n")
    assert dispatch(bare, slug="retry-budget") == {"action": "run", "skill": "/age", "argument": "retry-budget",
                                                   "argument_from": "slug"}  # fmt: skip
    assert dispatch(bare)["argument_from"] == "orientation"
    assert dispatch(parse_note("status: ok\nnext: mold\n"))["argument"] is None


def test_read_only_moves_take_their_argument_from_the_orientation() -> None:
    reply = note("status: ok", "next: briesearch", "artifact: none", "How do other clients cap retries?")
    assert reply == {"action": "run", "skill": "/briesearch", "argument": "How do other clients cap retries?",
                     "argument_from": "orientation"}  # fmt: skip
    assert note("status: ok", "next: culture", "Who should own retries.")["skill"] == "/culture"


def test_affinage_runs_on_the_pr_and_warns_without_one() -> None:
    reply = note("status: ok", "next: affinage", "artifact: PR#482", "Review comments are waiting.")
    assert reply == {"action": "run", "skill": "/affinage", "argument": "PR#482", "argument_from": "artifact"}
    bare = note("status: ok", "next: affinage", "artifact: none", "Review comments are waiting.")
    assert bare["argument"] is None and "branch detection" in bare["warning"]


def test_list_form_runs_several_in_order() -> None:
    reply = dispatch(parse_note(LEGACY_LIST))
    assert reply["action"] == "run-many" and reply["order"] == "parallel"
    assert [(r["skill"], r["argument"]) for r in reply["runs"]] == [
        ("/briesearch", "how do other clients cap retries"), ("/culture", "who owns the retry policy")]  # fmt: skip
    generated = dispatch_record(build(next=LIST_NEXT))
    assert generated["order"] == "sequential" and len(generated["runs"]) == 2


def test_tasks_run_one_each_with_their_command_and_isolation() -> None:
    reply = dispatch(parse_note(LEGACY_TASKS))
    assert reply["action"] == "run-tasks" and reply["parallel"]["worktree_strategy"] == "existing"
    first, second = reply["runs"]
    assert first["command"] == "/cook .cheese/specs/fix-login-timeout.md" and first["skill"] == "/cook"
    assert first["worktree"] == "/home/dev/shop-a" and second["branch"] == "dev/fix-cart-rounding"
    created = LEGACY_TASKS.replace("worktree_strategy: existing", "worktree_strategy: create\n  worktree_root: ../wt")
    runs = dispatch(parse_note(created.replace("    worktree: /home/dev/shop-a\n", "")))["runs"]
    assert runs[0]["worktree"] == "../wt/fix-login-timeout" and runs[1]["worktree"] == "/home/dev/shop-b"
    generated = dispatch_record(build(next=TASKS))
    assert [r["task"] for r in generated["runs"]] == ["t-one", "t-two"]
    assert generated["runs"][1]["command"] == "/press t-two"


def test_hold_waits_and_done_does_nothing() -> None:
    assert note("status: ok", "next: hold", "Stringing context along.") == {
        "action": "wait", "orientation": "Stringing context along."}  # fmt: skip
    assert dispatch_record(build(next={"move": "done"}))["action"] == "none"


@pytest.mark.parametrize("text", [LEGACY_BARE, LEGACY_LIST, LEGACY_TASKS, "status: ok\nnext: hold\nWait.\n"])
def test_the_json_form_dispatches_like_the_parsed_note(text: str) -> None:
    parsed = parse_note(text)
    assert dispatch(json.loads(json.dumps(parsed.as_json()))) == dispatch(parsed)


def test_dispatch_of_the_json_form_of_a_gate_has_no_dossier_text() -> None:
    reply = dispatch(parse_note(LEGACY_WRAPPED).as_json())
    assert reply["action"] == "surface-gate" and reply["dossier"] is None


# render_packet --------------------------------------------------------------------------------------


def test_a_generous_budget_keeps_everything() -> None:
    record = resolved_record()
    packet = render_packet(record, 100_000)
    assert packet["omitted"] == {} and packet["next"] == record["next"]
    # The gate is resolved; the blocker that does not gate still stops the work (seed 0's halt).
    assert packet["status"] == "halt: Staging is down."
    assert packet["blockers"][0]["owner"] == "infra" and packet["blockers"][0]["age"]["since"] == "r2"
    assert packet["notes"] == ["First paragraph of notes.", "Second paragraph."]


def test_gates_come_with_owner_age_options_and_leaning() -> None:
    packet = render_packet(build(**GATE), 100_000)
    (gate,) = packet["gates"]
    assert gate["owner"] == "lead" and gate["when"] == "before the build"
    assert gate["age"] == {"since": "r1", "revisions": 0, "at": "2026-11-30T10:00:00Z"}
    assert gate["options"] == ["full", "equal"] and gate["leaning"] == "full"


def test_ages_use_capture_times_when_given() -> None:
    record = resolved_record()
    packet = render_packet(record, 100_000, captured_at={2: "2026-11-30T12:00:00Z"})
    assert packet["directives"][0]["id"].startswith("v-")
    assert packet["open"][0]["age"]["at"] == "2026-11-30T12:00:00Z"


def test_a_tight_budget_drops_whole_items_and_counts_them() -> None:
    record = resolved_record()
    full = packet_size(render_packet(record, 100_000))
    packet = render_packet(record, full - 60)
    assert packet_size(packet) <= full - 60 and packet["omitted"]
    assert sum(packet["omitted"].values()) >= 1


def test_the_budget_boundary_exactly() -> None:
    record = resolved_record()
    full = render_packet(record, 100_000)
    assert render_packet(record, packet_size(full)) == full
    assert render_packet(record, packet_size(full) - 1)["omitted"]


def test_a_budget_below_the_core_is_refused() -> None:
    record = resolved_record()
    with pytest.raises(Refusal) as refused:
        render_packet(record, 200)
    assert refused.value.code == "budget-too-small" and refused.value.details["minimum"] > 200
    minimum = refused.value.details["minimum"]
    packet = render_packet(record, minimum)
    assert packet_size(packet) == minimum and set(packet["omitted"]) == {"directives", "open", "blockers",
                                                                         "decisions", "notes"}  # fmt: skip


def _measured_whole(record: dict[str, Any], budget: int, earlier: dict[str, Any] | None = None) -> dict[str, Any]:
    """render_packet's choice as it was first written: each item tried by measuring the whole packet again."""
    from wheypoint.notes.packet import _packet_items

    packet = render_packet(record, budget, earlier=earlier)
    core = {key: packet[key] for key in packet if key not in (*PACKET_CATEGORIES, "omitted")}
    times = {1: record.get("created_at"), record["revision_number"]: record.get("updated_at")}
    items = _packet_items(record, times, earlier)
    kept: dict[str, list[Any]] = {name: [] for name in PACKET_CATEGORIES}

    def whole() -> dict[str, Any]:
        built = {**core, **{name: kept[name] for name in PACKET_CATEGORIES if kept[name]}}
        built["omitted"] = {name: len(items[name]) - len(kept[name]) for name in PACKET_CATEGORIES
                            if len(items[name]) > len(kept[name])}  # fmt: skip
        return built

    for name in PACKET_CATEGORIES:
        for item in items[name]:
            kept[name].append(item)
            if packet_size(whole()) > budget:
                kept[name].pop()
    return whole()


line = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60)
quote = st.lists(line, min_size=1, max_size=4).map("\n".join)


def test_an_earlier_part_s_turns_fill_the_room_left_newest_first_and_once() -> None:
    record = build(notes="n")
    turn = {"type": "thread", "weight": 1, "kind": "prompt", "timestamp": None, "added_in": 1}
    record["meat"] = [{**turn, "turn": f"t{n}", "text": f"Newer turn {n}."} for n in range(3)]
    earlier = {**record, "slug": "session-x", "meat": [{**turn, "turn": f"e{n}", "text": "Earlier turn " + "x" * n * 40}
                                                     for n in range(6)] + [record["meat"][0]]}  # fmt: skip
    whole = render_packet(record, 100_000, earlier=earlier)
    assert [m["turn"] for m in whole["meat"]] == ["t2", "t1", "t0"]
    assert [m["turn"] for m in whole["earlier"]] == ["e5", "e4", "e3", "e2", "e1", "e0"]  # t0 once, in `meat`
    assert {m["work"] for m in whole["earlier"]} == {"session-x"} and not whole["omitted"]
    assert render_packet(record, 100_000) == {key: value for key, value in whole.items() if key != "earlier"}
    for budget in range(packet_size(render_packet(record, 100_000)) - 40, packet_size(whole) + 1, 37):
        packet = render_packet(record, budget, earlier=earlier)
        assert packet_size(packet) <= budget and packet == _measured_whole(record, budget, earlier)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    quotes=st.lists(quote, min_size=1, max_size=6),
    decisions=st.lists(line, max_size=6),
    questions=st.lists(st.tuples(line, st.booleans()), max_size=5),
    notes=st.lists(line, max_size=4).map("\n\n".join),
    slack=st.integers(min_value=0, max_value=3000),
)
def test_packets_never_exceed_the_budget_nor_cut_a_quote(
    quotes: list[str], decisions: list[str], questions: list[tuple[str, bool]], notes: str, slack: int
) -> None:
    intent: dict[str, Any] = {
        "directives": [{"text": f"Directive {i}.", "quote": q} for i, q in enumerate(quotes)],
        "decisions": [{"text": d, "rationale": "why"} for d in decisions],
        "questions": [
            {"text": q, "gates": gates, "rationale": "r", "label": f"q{i}", "owner": "ann"}
            for i, (q, gates) in enumerate(questions)
        ],
        "decision_dossier": [
            {"fork": q, "gate": f"q{i}", "options": [{"option": "a"}, {"option": "b"}]}
            for i, (q, gates) in enumerate(questions)
            if gates
        ],
        "notes": notes or "n",
    }
    record = build(**intent)
    try:
        render_packet(record, 0)
    except Refusal as refused:
        minimum = refused.details["minimum"]
    budget = minimum + slack
    packet = render_packet(record, budget)
    assert packet_size(packet) <= budget
    assert packet == _measured_whole(record, budget)  # the parts' sizes add up to what the whole one measures
    verbatim = {e["id"]: e["quote"] for e in record["entries"] if e["kind"] == "directive"}
    for directive in packet.get("directives", []):
        assert directive["quote"] == verbatim[directive["id"]]
    totals = {"directives": len(quotes), "decisions": len(decisions), "open": sum(not g for _, g in questions),
              "gates": sum(g for _, g in questions), "blockers": 0,
              "notes": len([p for p in record["notes"].split("\n\n") if p.strip()]),
              "meat": len(record["meat"]), "earlier": 0}  # fmt: skip
    for name in PACKET_CATEGORIES:
        assert len(packet.get(name, [])) + packet["omitted"].get(name, 0) == totals[name]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([
    "status: ok", "status: halt: x", "status: gated: y", "next: tasks", "next: cook", "next: [culture \"a\"]",
    "next: affinage", "order: parallel", "mode: parallel", "parallel:", "  worktree_strategy: create", "tasks:",
    "  - slug: a", "    command: /cook a", "    branch: b", "artifact: PR#1", "Orientation.", "", "## Gates",
]), max_size=14).map("\n".join))  # fmt: skip
def test_dispatch_always_answers(text: str) -> None:
    parsed = parse_note(text)
    reply = dispatch(parsed)
    json.dumps(reply)  # the reply is printed as JSON: every value must be JSON's
    if reply["action"] == "surface-gate":  # a gate stops everything, with what the person needs to decide
        assert parsed.status_kind == "gated" and reply["gate"] == parsed.status_reason, reply
        assert set(reply) == {"action", "gate", "dossier", "open", "directions"} and reply["directions"]
    elif reply["action"] == "surface-halt":  # a halt says why, and what would run after it
        assert parsed.status_kind == "halt" and reply["reason"] == parsed.status_reason, reply
        _check_plan(parsed, reply["then"])
    else:
        assert reply["action"] == "malformed" or parsed.status_kind == "ok", reply
        _check_plan(parsed, reply)


def _check_plan(parsed: Any, plan: dict[str, Any]) -> None:
    """A plan's shape, and that what it runs is what the note says."""
    action = plan["action"]
    if action == "malformed":
        assert set(plan) == {"action", "message"} and plan["message"].startswith("malformed handoff"), plan
    elif action == "run":
        assert set(plan) - {"warning"} == {"action", "skill", "argument", "argument_from"}, plan
        assert plan["skill"] == f"/{parsed.next}", plan
        if plan["argument_from"] in ("artifact", "orientation"):
            assert plan["argument"] == getattr(parsed, plan["argument_from"]), plan
        else:
            assert plan["argument_from"] is None and plan["argument"] is None, plan
    elif action == "run-many":
        assert plan["order"] == parsed.order and parsed.next_items is not None, plan
        assert [run["skill"] for run in plan["runs"]] == [f"/{item['skill']}" for item in parsed.next_items]
    elif action == "run-tasks":
        assert parsed.next == "tasks" and len(plan["runs"]) == len(parsed.tasks or []), plan
        assert all(run["action"] == "run" and run["command"] for run in plan["runs"]), plan
    else:
        assert action in ("wait", "none") and parsed.next == ("hold" if action == "wait" else "done"), plan
        assert plan == {"action": action, "orientation": parsed.orientation}
