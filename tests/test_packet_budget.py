"""The packet a hook hands the model stays within its budget as the harness counts it, and says when it is partial."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from test_rescue_incremental import Scene
from wheypoint.hooks.rescue import PART_TURNS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from wheypoint.app.context import Context
    from wheypoint.store.rows import ListedWork

HEAD = "wheypoint: the handoff of work"
TURNS = PART_TURNS - 4  # prompts a scene's session holds: more than its packets have room for, fewer than a part


@pytest.mark.parametrize("text", ["Prompt number {n}: keep the retry budget small.", "Emoji prompt {n}: " + "🦀" * 60])
def test_a_packet_that_leaves_turns_out_says_so_on_its_first_line_and_fits_in_utf16(tmp_path: Path, text: str) -> None:
    scene = Scene(tmp_path)
    scene.append(*(scene.record("user", text.format(n=n) * 4) for n in range(TURNS)))
    assert f"kept {TURNS} turn(s)" in scene.hook()["systemMessage"]
    context = scene.hook("SessionStart")["hookSpecificOutput"]["additionalContext"]
    first, body = context.split("\n", 2)[:2]
    packet = json.loads(body)
    left = packet["omitted"]["meat"]
    assert left > 0 and len(packet["meat"]) + left == TURNS
    assert first.startswith(HEAD) and f"[partial: {left} item(s) left out for size;" in first
    assert f"`wheypoint handoff render {packet['slug']}`]" in first
    # Claude Code counts a hook's context in UTF-16 code units (an emoji is two) and cuts it past 10,000.
    assert len(context.encode("utf-16-le")) // 2 <= 10000
    assert len(context.encode("utf-16-le")) // 2 > 9000  # the room is used, not wasted


def test_a_whole_packet_has_no_partial_mark(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.append(scene.record("user", "Just one prompt."))
    scene.hook()
    context = scene.hook("SessionStart")["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(HEAD) and "[partial" not in context.splitlines()[0]
    assert json.loads(context.splitlines()[1])["omitted"] == {}


def test_a_codex_packet_is_rendered_again_only_when_its_bytes_are_over_the_budget(tmp_path: Path) -> None:
    """Codex counts bytes: a packet whose bytes are exactly its budget is kept as rendered; one over is rendered
    again in less room until it fits; a packet rendered for another harness is never re-rendered."""
    from wheypoint.hooks.events import _packet

    scene = Scene(tmp_path)
    # Three to five CJK characters a prompt: three bytes of UTF-8 to one UTF-16 unit, so the packet's bytes run
    # from a little under its budget to a little over as the budget grows (the span searched below).
    scene.append(*(scene.record("user", f"Prompt {n}: keep the retry budget small " + "预" * (3 + n % 3))
                   for n in range(TURNS)))  # fmt: skip
    ctx, work = _rescued(scene)
    exact = over = near = whole = 0
    for budget in range(2200, 2240):
        plain = _packet(ctx, work.work_id, budget)
        codex = _packet(ctx, work.work_id, budget, "codex")
        size = len(plain.encode("utf-8"))
        assert len(codex.encode("utf-8")) <= budget, budget
        if size <= budget:
            assert codex == plain, budget  # exactly at the budget included: nothing to cut
            exact += size == budget
        else:
            over += 1
            assert codex != plain and json.loads(codex.split("\n")[1])["omitted"], budget
            if size - budget <= 12:  # a few bytes over: the first smaller render cuts only what those bytes need
                cut = _omitted(codex) - _omitted(plain)
                assert cut <= 1, (budget, size, cut)
                near += 1
                whole += cut == 0
    assert exact >= 1 and near >= 1, (exact, near)  # the span holds both cases, or the test proves nothing
    # The first smaller render steps down by one unit of room, not a sixteenth (about 130 here): where a few bytes
    # can go without a whole item, none goes.
    assert whole >= 1, whole


def _rescued(scene: Scene) -> tuple[Context, ListedWork]:
    """The scene's transcript rescued by its hook, and the context and the one work that rescue wrote."""
    from wheypoint.app.context import Context
    from wheypoint.store.rows import WorkQuery

    scene.hook()
    ctx = Context(cwd=scene.repo, environ={"WHEYPOINT_HOME": str(scene.home), "HOME": str(scene.home)})
    store = ctx.open_store(create=False)
    try:
        (work,) = store.list_works(WorkQuery(limit=5))
    finally:
        store.close()
    return ctx, work


def _omitted(context: str) -> int:
    return sum(json.loads(context.split("\n")[1])["omitted"].values())


def test_each_smaller_codex_render_has_the_room_its_rule_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The renders a Codex packet takes are few and as large as they may be: the second has the room scaled by the
    budget over the bytes, but one unit less at least; each later one a sixteenth less at least (so a packet far
    over its budget takes a handful of renders, never one per unit of room), and never less than that."""
    from wheypoint.hooks import events

    scene = Scene(tmp_path)
    # Mostly ASCII with eight two-byte letters a prompt: a packet's bytes run a little over its units, so over this
    # span of budgets one first render is a single byte over (where the one-unit step decides).
    scene.append(*(scene.record("user", f"Prompt {n}: keep the retry budget small, caf" + "é" * 8)
                   for n in range(TURNS)))  # fmt: skip
    ctx, work = _rescued(scene)
    original = events._render
    calls: list[tuple[int, int]] = []  # (room, bytes) of each render

    def render(ctx: Context, work_id: str, head: str, room: int, budget: int) -> str:
        text = original(ctx, work_id, head, room, budget)
        calls.append((room, len(text.encode("utf-8"))))
        return text

    monkeypatch.setattr(events, "_render", render)
    unit_bound = sixteenth_bound = 0
    for budget in [*range(2200, 2300), 3000, 4500, 6000]:
        calls.clear()
        packet = events._packet(ctx, work.work_id, budget, "codex")
        assert len(packet.encode("utf-8")) <= budget
        assert calls[-1][1] <= budget and all(size > budget for _, size in calls[:-1]), (budget, calls)
        for step, ((room, size), (after, _)) in enumerate(itertools.pairwise(calls)):
            least = 1 if step == 0 else room // 16
            assert after == min(room * budget // size, room - least), (budget, calls)
            unit_bound += step == 0 and room - least == room * budget // size  # (it cannot be more)
            sixteenth_bound += step > 0 and room - least < room * budget // size
        assert len(calls) <= 8, (budget, calls)  # a handful of renders, whatever the overshoot
    # the span holds renders where the unit and the sixteenth decide, or the test proves nothing
    assert unit_bound >= 1 and sixteenth_bound >= 1, (unit_bound, sixteenth_bound)


def test_a_hook_packet_has_its_budget_less_its_head_and_the_room_kept_for_its_first_and_last_lines(
    tmp_path: Path,
) -> None:
    """The packet inside a hook's answer is rendered in the budget less the first line and the room kept for the
    first line's note of what was left out and for the closing line (128 characters each, docs/hooks.md), to the
    character: at a room where one character less leaves an item out, the budget that gives exactly that room
    keeps the item."""
    from wheypoint.app.notes import handoff_render
    from wheypoint.hooks.events import _check, _packet

    assert _check("SessionStart", "claude-code", None) == ("SessionStart", 10000)  # the default budget
    scene = Scene(tmp_path)
    scene.append(*(scene.record("user", f"Prompt {n}: keep the retry budget small " + "x" * (n % 13))
                   for n in range(TURNS)))  # fmt: skip
    ctx, work = _rescued(scene)

    def packet(room: int) -> object:
        return handoff_render(ctx, work.work_id, None, str(room))["packet"]

    room = 4000
    while packet(room - 1) == packet(room):  # a room that holds its packet to the character
        room -= 1
    head = f"wheypoint: the handoff of work {work.work_id} (user turns and quotes are verbatim; gates wait on a person)"
    budget = room + len(head) + 128 + 128
    assert json.loads(_packet(ctx, work.work_id, budget).split("\n")[1]) == packet(room)
    assert json.loads(_packet(ctx, work.work_id, budget - 1).split("\n")[1]) == packet(room - 1)


def test_the_packet_a_session_starts_with_costs_no_note_render_and_no_trust_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The packet needs the record alone: neither the note (whose render a full part's SessionStart paid twice, for
    the preamble it dropped and for the note-on-disk check) nor git, links or lineage (`resolve`'s findings)."""
    from wheypoint.app import resolve
    from wheypoint.app.notes import handoff_render
    from wheypoint.hooks.events import _packet
    from wheypoint.notes import render

    scene = Scene(tmp_path)
    scene.append(*(scene.record("user", f"Prompt {n}: keep the retry budget small.") for n in range(40)))
    ctx, work = _rescued(scene)
    expected = handoff_render(ctx, work.work_id, None, "9000")["packet"]

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the packet's path rendered a note or checked trust")

    monkeypatch.setattr(render, "render", refused)
    monkeypatch.setattr(resolve, "_trusted", refused)
    context = _packet(ctx, work.work_id, 10000)
    assert json.loads(context.splitlines()[1]) == expected  # the same packet as `handoff render` gives
