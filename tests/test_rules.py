"""The cross-field intent rules, each on both sides of its line: exactly the problems expected, and none more."""

from __future__ import annotations

from typing import Any

import pytest

from test_validation import GOOD, changed
from wheypoint.model.intake import intent_problems
from wheypoint.model.rules import opens_markdown_block, walk_strings


def found(intent: dict[str, Any]) -> list[tuple[str, str]]:
    """Every (code, path) the whole validation gives, so a problem raised where none is due fails too."""
    return [(p.code, p.path) for p in intent_problems(intent)]


# --- labels -------------------------------------------------------------------------------------------------------


def test_a_label_used_twice_in_one_intent_is_refused_at_its_second_use() -> None:
    # The question holds `jitter` too; decisions are read before questions, so the question's is the second use.
    twice = changed(decisions=[{"text": "Cap.", "rationale": "r", "label": "jitter"}])
    assert found(twice) == [("duplicate-label", "$.questions[0].label")]
    same_list = changed(decisions=[{"text": "A.", "rationale": "r", "label": "x"},
                                   {"text": "B.", "rationale": "r", "label": "x"}])  # fmt: skip
    assert found(same_list) == [("duplicate-label", "$.decisions[1].label")]
    assert found(changed(decisions=[{"text": "A.", "rationale": "r", "label": "x"},
                                    {"text": "B.", "rationale": "r", "label": "y"}])) == []  # fmt: skip


def test_references_name_a_label_of_the_intent_or_an_entry_id() -> None:
    by_id = changed(artifact_links=[{"ref": "a.md", "covers": ["d-0123456789ab", "jitter"]}])
    assert found(by_id) == []
    gate = changed(decision_dossier=[{**GOOD["decision_dossier"][0], "gate": "nobody"}])
    assert found(gate) == [("unknown-label", "$.decision_dossier[0].gate")]
    successor = changed(transitions=[{"entry": "d-0123456789ab", "action": "supersede", "rationale": "r",
                                      "by": "ghost"}])  # fmt: skip
    assert found(successor) == [("unknown-label", "$.transitions[0].by")]
    labelled = changed(transitions=[{"entry": "d-0123456789ab", "action": "supersede", "rationale": "r",
                                     "by": "jitter"}])  # fmt: skip
    assert found(labelled) == []


# --- transitions ---------------------------------------------------------------------------------------------------


def test_only_supersede_takes_a_successor_and_an_entry_moves_once() -> None:
    moves = [{"entry": "d-0123456789ab", "action": "withdraw", "rationale": "r", "by": "jitter"},
             {"entry": "q-0123456789ab", "action": "resolve", "rationale": "r"},
             {"entry": "d-0123456789ab", "action": "resolve", "rationale": "r"}]  # fmt: skip
    assert found(changed(transitions=moves)) == [
        ("successor-without-supersede", "$.transitions[0].by"),
        ("duplicate-transition", "$.transitions[2].entry"),
    ]


# --- gates ---------------------------------------------------------------------------------------------------------


def test_only_a_gating_question_or_blocker_needs_a_rationale() -> None:
    plain = {"decision_dossier": None, "artifact_links": None}
    assert found(changed(questions=[{"text": "Go?", "gates": True}], **plain)) == [
        ("gate-needs-rationale", "$.questions[0].rationale")
    ]
    assert found(changed(blockers=[{"text": "CI red.", "gates": True}], **plain)) == [
        ("gate-needs-rationale", "$.blockers[0].rationale")
    ]
    assert found(changed(questions=[{"text": "Go?"}], blockers=[{"text": "CI red."}], **plain)) == []


# --- next ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nxt", "expected"),
    [
        ({"move": "affinage", "artifact": "PR#12"}, []),
        ({"move": "affinage", "artifact": " https://github.com/o/r/pull/7 "}, []),
        ({"move": "affinage", "artifact": "https://gitlab.com/o/r/-/merge_requests/3"}, []),
        ({"move": "affinage", "artifact": "PR#12 and more"}, [("affinage-needs-pr", "$.next.artifact")]),
        ({"move": "cook", "artifact": "specs/retry.md"}, []),
        ({"move": "hold", "artifact": " None "}, [("bad-value", "$.next.artifact")]),  # reads as no artifact
        ({"move": "hold", "artifact": "none.md"}, []),
        ({"move": "hold"}, []),
        ({"items": [{"skill": "culture", "arg": "q"}], "order": "parallel"}, []),
        ({"move": "hold", "order": "parallel"}, [("next-shape", "$.next.order")]),
        ({"move": "hold", "items": [{"skill": "culture", "arg": "q"}], "order": "parallel"},
         [("next-shape", "$.next")]),
        ({"items": [{"skill": "culture", "arg": "q"}, {"skill": "cook", "arg": "q"}], "order": "parallel"},
         [("bad-value", "$.next.items[1].skill"), ("next-item-not-read-only", "$.next.items[1].skill")]),
    ],
)  # fmt: skip
def test_the_next_move_has_the_shape_its_move_needs(nxt: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert found(changed(next=nxt)) == expected


def tasks_intent(strategy: str, *tasks: dict[str, Any], root: str | None = None) -> dict[str, Any]:
    parallel: dict[str, Any] = {"worktree_strategy": strategy}
    if root:
        parallel["worktree_root"] = root
    full = [{"slug": f"t{n}", "intent": "cook", "command": f"/cook t{n}", **task} for n, task in enumerate(tasks)]
    return changed(next={"move": "tasks", "parallel": parallel, "tasks": full})


BRANCHED = {"branch": "b", "branch_from": "main"}


@pytest.mark.parametrize("strategy", ["create", "harness"])
def test_tasks_may_share_a_worktree_unless_the_strategy_is_existing(strategy: str) -> None:
    shared = [{**BRANCHED, "worktree": "/w"}, {**BRANCHED, "worktree": "/w"}]
    assert found(tasks_intent(strategy, *shared, root="/trees")) == []
    assert found(tasks_intent("existing", *shared)) == [("task-worktree-shared", "$.next.tasks[1].worktree")]


def test_a_shared_worktree_names_the_first_task_that_holds_it() -> None:
    tasks = [{**BRANCHED, "worktree": w} for w in ("/a", "/b", "/a", "/a")]
    problems = [p for p in intent_problems(tasks_intent("existing", *tasks)) if p.code == "task-worktree-shared"]
    assert [(p.path, p.message) for p in problems] == [
        ("$.next.tasks[2].worktree", "shares a checkout with task 0"),
        ("$.next.tasks[3].worktree", "shares a checkout with task 0"),
    ]


def test_each_strategy_asks_for_its_own_task_fields() -> None:
    assert found(tasks_intent("create", BRANCHED, root="/trees")) == []  # no worktree needed
    assert found(tasks_intent("create", BRANCHED)) == [("task-fields", "$.next.parallel.worktree_root")]
    assert found(tasks_intent("harness", {"branch": "b"})) == [("task-fields", "$.next.tasks[0].branch_from")]
    assert found(tasks_intent("existing", {**BRANCHED, "worktree": "/w"})) == []
    assert found(tasks_intent("existing", {"branch_from": "main"})) == [
        ("task-fields", "$.next.tasks[0].worktree"),
        ("task-fields", "$.next.tasks[0].branch"),
    ]


def test_task_keys_belong_to_the_tasks_move_only() -> None:
    stray = changed(next={"move": "hold", "parallel": {"worktree_strategy": "create"}})
    assert found(stray) == [("tasks-without-tasks-move", "$.next.parallel")]
    assert found(changed(next={"move": "tasks", "tasks": [{"slug": "a", "intent": "cook", "command": "c"}]})) == [
        ("tasks-required", "$.next.parallel")
    ]


# --- identity and strings ------------------------------------------------------------------------------------------


def test_a_work_id_and_slug_given_together_must_agree() -> None:
    assert found(changed(work_id="retry-backoff.0123abcd")) == []
    assert found(changed(work_id="other.0123abcd")) == [("work-slug-mismatch", "$.slug")]
    # A work id's slug is all before its last dot: a malformed id is refused by its pattern and still compared so.
    assert ("work-slug-mismatch", "$.slug") in found(changed(slug="retry", work_id="retry.backoff.0123abcd"))


def test_multi_line_fields_are_told_by_their_last_key() -> None:
    evidence = [{"option": "a", "evidence": ["line one\nline two"]}, {"option": "b\nstill b"}]
    assert found(changed(decision_dossier=[{**GOOD["decision_dossier"][0], "options": evidence}])) == []
    assert found(changed(questions=[{**GOOD["questions"][0], "owner": "lead\nsecond"}])) == [
        ("single-line-field", "$.questions[0].owner")
    ]


def test_walk_strings_gives_every_string_with_its_path_and_no_key() -> None:
    value = {"a": ["x", {"b": "y", "n": 3}], "k": None}
    assert list(walk_strings(value)) == [("$.a[0]", "x"), ("$.a[1].b", "y")]


@pytest.mark.parametrize("char", ["\x00", "\x08", "\x0b", "\x0c", "\x0e", "\x1f", "\x7f"])
def test_c0_controls_and_del_are_refused_even_in_multi_line_text(char: str) -> None:
    assert found(changed(notes=f"a{char}b")) == [("control-character", "$.notes")]


@pytest.mark.parametrize("char", ["\t", "\n", "\r", " ", "\u00a0", "\u0085"])
def test_tab_line_breaks_and_spaces_beside_the_controls_are_kept_in_multi_line_text(char: str) -> None:
    assert found(changed(notes=f"a{char}b")) == []


@pytest.mark.parametrize(
    ("line", "opens"),
    [("1. x", True), ("12) x", True), ("  3. x", True), (". x", False), ("a. x", False), ("1.x", False),
     ("1 x", False), ("- x", True), ("-x", False), ("* x", True), ("+\tx", True), ("# h", True), ("> q", True),
     ("<div>", True), ("```", True), ("~~~", True), ("", False), ("word", False)],
)  # fmt: skip
def test_markdown_block_openers_at_their_edges(line: str, opens: bool) -> None:
    # The property test samples these shapes; the edges are pinned here, since a sample may miss `. x` or `a. x`.
    assert opens_markdown_block(line) is opens


def orientation_problems(text: str) -> list[tuple[str, str]]:
    return [(p.code, p.message) for p in intent_problems(changed(orientation=text))]


KEY_LIKE = "would read as a preamble key or Markdown block; start it with a word"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Retry: the plan", []),  # a capitalised word is neither a preamble key nor the published reader's key
        ("a b: c", []),
        ("note_digest: x", [("orientation-shape", KEY_LIKE)]),  # any lower-case identifier, for the ten-line reader
        ("retry_plan: x", [("orientation-shape", KEY_LIKE)]),
        ("Status : ok", [("orientation-shape", KEY_LIKE)]),  # a preamble key in any case, space before the colon
        (" x", [("orientation-shape", "starts or ends with white space")]),
        ("x\t", [("orientation-shape", "starts or ends with white space")]),
        ("x\u2028y", [("orientation-shape", "the orientation is one line")]),
        ("x\u202ey", [("hidden-character", "holds U+202E, which is invisible or reorders text; a one-line field is "
                                            "plain")]),
        ("", [("too-short", "must not be empty"), ("orientation-shape", "must not be blank")]),
    ],
)  # fmt: skip
def test_the_orientation_is_one_plain_line_that_reads_as_no_key(text: str, expected: list[tuple[str, str]]) -> None:
    assert orientation_problems(text) == expected


@pytest.mark.parametrize(
    ("char", "one_line", "multi_line"),
    [
        ("\u2028", "single-line-field", None),
        ("\x85", "single-line-field", None),  # NEL: a line terminator, fine in text that may span lines
        ("\r", "single-line-field", None),
        ("\u202e", "hidden-character", None),  # shown escaped in a verbatim block, refused where printed plain
        ("\u200b", "hidden-character", None),
        ("\x84", "control-character", "control-character"),  # C1 controls on both sides of NEL
        ("\x86", "control-character", "control-character"),
        ("\x9f", "control-character", "control-character"),
        ("\xa0", None, None),  # the first character after the C1 block is an ordinary space
    ],
)
def test_one_line_fields_refuse_what_multi_line_text_may_hold(
    char: str, one_line: str | None, multi_line: str | None
) -> None:
    owner = changed(questions=[{**GOOD["questions"][0], "owner": f"a{char}b"}])
    assert found(owner) == ([(one_line, "$.questions[0].owner")] if one_line else [])
    assert found(changed(notes=f"a{char}b")) == ([(multi_line, "$.notes")] if multi_line else [])
