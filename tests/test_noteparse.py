"""Reading handoff notes back: generated projections, bare and wrapped hand-written notes, hostile input."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from wheypoint.model.kernel import Provenance, apply
from wheypoint.notes.parse import MAX_NOTE_BYTES, ParsedNote, parse_next_items, parse_note
from wheypoint.notes.render import render

PROV = Provenance(project_key="shop", captured_at="2026-11-30T10:00:00Z", session={"harness": "codex", "id": "s1"},
                  git={"branch": "main", "commit": "0123456789abcdef0123456789abcdef01234567"})  # fmt: skip
LATER = Provenance(project_key="shop", captured_at="2026-11-30T12:00:00Z")

JSON_KEYS = {
    "format", "status", "status_kind", "status_reason", "next", "next_items", "order", "mode", "artifact",
    "session", "git", "created", "parents", "baseline", "orientation", "parallel", "tasks", "wheypoint",
    "sections", "problems", "tags",
}  # fmt: skip


def build(**intent: Any) -> dict[str, Any]:
    """A genesis record from a small intent; keys given replace the defaults."""
    base: dict[str, Any] = {
        "slug": "retry-budget",
        "orientation": "Retry budget for the payment client is designed, not built.",
        "next": {"move": "cook", "artifact": "specs/retry.md"},
        "decisions": [{"text": "Cap retries at 30 s.", "rationale": "The gateway gives up at 45 s."}],
        "directives": [{"text": "No retries on POST.", "quote": "never retry a POST, ever"}],
        "notes": "First paragraph of notes.\n\nSecond paragraph.",
    }
    base.update(intent)
    return apply(None, base, PROV).record


GATE = {
    "questions": [{"text": "Full or equal jitter?", "gates": True, "rationale": "Both are defensible.",
                   "label": "jitter", "owner": "lead", "when": "before the build"}],
    "decision_dossier": [{"fork": "Full or equal jitter?", "gate": "jitter", "prior_leaning": "full",
                          "options": [{"option": "full", "evidence": ["retry.py:3"], "breaks": "nothing"},
                                      {"option": "equal"}]}],
}  # fmt: skip
TASKS: dict[str, Any] = {
    "move": "tasks",
    "parallel": {"worktree_strategy": "harness"},
    "tasks": [{"slug": "t-one", "intent": "cook", "command": "/cook specs/one.md", "branch": "b1",
               "branch_from": "main"},
              {"slug": "t-two", "intent": "press", "command": "/press t-two", "branch": "b2", "branch_from": "main"}],
}  # fmt: skip
LIST_NEXT: dict[str, Any] = {
    "items": [{"skill": "briesearch", "arg": "how others cap retries"}, {"skill": "culture", "arg": "who owns it"}],
    "order": "sequential",
}


def gated_tasks_record() -> dict[str, Any]:
    return build(next=TASKS, **GATE)


def resolved_record() -> dict[str, Any]:
    """Revision 2: the gate of a gated record resolved, so the status is ok again."""
    head = build(**GATE)
    gate = next(e["id"] for e in head["entries"] if e["kind"] == "question")
    intent = {"transitions": [{"entry": gate, "action": "resolve", "rationale": "Lead chose full jitter."}],
              "questions": [{"text": "Which log level?", "owner": "ops"}],
              "blockers": [{"text": "Staging is down.", "owner": "infra"}]}  # fmt: skip
    return apply(head, intent, LATER).record


# Hand-written notes in seed 0's layouts (our own examples).
LEGACY_BARE = """status: ok
next: cook
mode: single
artifact: .cheese/specs/retry-budget.md
session: claude:0b6c2f
git: feature/retry@1a2b3c4
created: 2026-07-01T09:15:00Z
parents: [payments-spike, retry-notes]
baseline: none
The retry budget spec is approved; nothing is built yet.

## Document

**Goal.** Cap client retries so the gateway is never flooded.

**State.** Spec approved at .cheese/specs/retry-budget.md; no code yet.

**Suggested skills.** /cook .cheese/specs/retry-budget.md
"""

LEGACY_WRAPPED = """# Queue sizing

## Handoff slug

```text
status: gated: Bounded or unbounded queue?
next: cook
artifact: .cheese/specs/queue.md
Queue sizing waits on a choice between two designs.
```

## Document

**Goal.** Size the ingest queue.

### Open questions and blockers

- Bounded or unbounded? Waiting on the lead.

## Decision dossier

### Bounded or unbounded

- Options: bounded with drop-oldest, or unbounded.
- Evidence: src/queue.py:42 shows the current unbounded deque.
- Breaks: bounded breaks exact replay; unbounded risks memory under bursts.
- Prior leaning: bounded.
"""

LEGACY_TASKS = """status: ok
next: tasks
mode: parallel
artifact: none
Two independent fixes are ready to run as separate PRs.
parallel:
  isolation: git-worktree
  worktree_strategy: existing
tasks:
  - slug: fix-login-timeout
    intent: cook
    repo: /home/dev/shop
    worktree: /home/dev/shop-a
    branch: dev/fix-login-timeout
    branch_from: origin/main
    command: /cook .cheese/specs/fix-login-timeout.md
  - slug: fix-cart-rounding
    intent: cook
    repo: /home/dev/shop
    worktree: /home/dev/shop-b
    branch: dev/fix-cart-rounding
    branch_from: origin/main
    command: /cook .cheese/specs/fix-cart-rounding.md

## Document

**Goal.** Ship two unrelated fixes in parallel.
"""

LEGACY_LIST = """status: ok
next: [briesearch "how do other clients cap retries", culture "who owns the retry policy"]
order: parallel
artifact: none
Two read-only questions remain before the design settles.

## Document

**Agenda.** Settle the retry policy owner.
"""


def test_generated_gated_tasks_note_reads_back_every_field() -> None:
    record = gated_tasks_record()
    parsed = parse_note(render(record))
    assert parsed.problems == []
    assert parsed.format == "wheypoint"
    assert (parsed.status, parsed.status_kind, parsed.status_reason) == (record["status"], "gated",
                                                                         "Full or equal jitter?")  # fmt: skip
    assert (parsed.next, parsed.mode, parsed.artifact) == ("tasks", "parallel", None)
    assert parsed.parallel == {"worktree_strategy": "harness"}
    assert parsed.tasks == [{k: str(v) for k, v in task.items()} for task in TASKS["tasks"]]
    assert parsed.orientation == record["orientation"]
    assert (parsed.session, parsed.git, parsed.created) == ("codex:s1", "main@0123456", "2026-11-30T10:00:00Z")
    pins = parsed.wheypoint
    assert pins is not None
    assert pins["work_id"] == record["work_id"] and pins["revision_number"] == 1
    assert pins["record_digest"] == record["record_digest"] and pins["note_digest"].startswith("sha256:")
    assert parsed.sections == re.findall(r"^## (.+)$", render(record), flags=re.M)
    assert parsed.sections[-1] == "Identifiers"


def test_generated_list_form_cook_and_resolved_notes() -> None:
    listed = parse_note(render(build(next=LIST_NEXT)))
    assert listed.next is None and listed.order == "sequential"
    assert listed.next_items == LIST_NEXT["items"]
    cook = parse_note(render(build()))
    assert (cook.next, cook.artifact, cook.status_kind, cook.mode) == ("cook", "specs/retry.md", "ok", "single")
    resolved = parse_note(render(resolved_record()))
    # The gate is resolved; the blocker that does not gate halts the work.
    assert resolved.status == "halt: Staging is down."
    assert resolved.wheypoint and resolved.wheypoint["revision_number"] == 2
    assert "Superseded" in resolved.sections and "Open entries" in resolved.sections


def test_as_json_has_exactly_the_documented_keys() -> None:
    data = parse_note(render(gated_tasks_record())).as_json()
    assert set(data) == JSON_KEYS
    assert json.loads(json.dumps(data)) == data


def test_legacy_bare_note() -> None:
    parsed = parse_note(LEGACY_BARE)
    assert parsed.format == "legacy" and parsed.problems == []
    assert (parsed.status_kind, parsed.next, parsed.mode) == ("ok", "cook", "single")
    assert parsed.artifact == ".cheese/specs/retry-budget.md"
    assert parsed.parents == ["payments-spike", "retry-notes"]
    assert parsed.baseline is None and parsed.wheypoint is None
    assert parsed.orientation == "The retry budget spec is approved; nothing is built yet."
    assert parsed.sections == ["Document"]
    assert parsed.has_part("goal") and parsed.has_part("suggested skills")


def test_legacy_wrapped_note() -> None:
    parsed = parse_note(LEGACY_WRAPPED)
    assert parsed.format == "legacy-wrapped" and parsed.problems == []
    assert (parsed.status_kind, parsed.status_reason) == ("gated", "Bounded or unbounded queue?")
    assert parsed.next == "cook" and parsed.orientation == "Queue sizing waits on a choice between two designs."
    assert parsed.sections == ["Handoff slug", "Document", "Decision dossier"]
    dossier = parsed.find("decision dossier")
    assert dossier is not None and "src/queue.py:42" in dossier.text


def test_wrapped_slug_without_a_fence_is_still_read() -> None:
    note = "## Handoff slug\n\nstatus: ok\nnext: hold\nJust waiting.\n\n## Document\n\nNothing.\n"
    parsed = parse_note(note)
    assert parsed.format == "legacy-wrapped" and parsed.next == "hold" and parsed.orientation == "Just waiting."
    assert [p.code for p in parsed.problems] == ["slug-not-fenced"]


def test_legacy_parallel_tasks_note() -> None:
    parsed = parse_note(LEGACY_TASKS)
    assert parsed.problems == [] and parsed.mode == "parallel" and parsed.next == "tasks"
    assert parsed.parallel == {"isolation": "git-worktree", "worktree_strategy": "existing"}
    assert parsed.tasks is not None and [t["slug"] for t in parsed.tasks] == ["fix-login-timeout", "fix-cart-rounding"]
    assert parsed.tasks[1]["worktree"] == "/home/dev/shop-b"
    assert parsed.tasks[0]["command"] == "/cook .cheese/specs/fix-login-timeout.md"


def test_legacy_list_form_and_its_yaml_spelling() -> None:
    parsed = parse_note(LEGACY_LIST)
    assert parsed.next is None and parsed.order == "parallel"
    assert parsed.next_items == [{"skill": "briesearch", "arg": "how do other clients cap retries"},
                                 {"skill": "culture", "arg": "who owns the retry policy"}]  # fmt: skip
    yaml = 'status: ok\nnext:\n  - briesearch "a, b"\n  - culture\norder: sequential\nThinking.\n'
    assert parse_note(yaml).next_items == [{"skill": "briesearch", "arg": "a, b"}, {"skill": "culture", "arg": ""}]


def test_next_items_reader() -> None:
    assert parse_next_items('[briesearch "x", /culture "y z"]') == [{"skill": "briesearch", "arg": "x"},
                                                                    {"skill": "culture", "arg": "y z"}]  # fmt: skip
    assert parse_next_items("[]") == []
    assert parse_next_items('[briesearch "unclosed]') is None
    assert parse_next_items("briesearch") is None


def test_preamble_problems_are_reported_not_raised() -> None:
    note = "status: maybe\nnext: cook\nnext: age\nmode: both\nOrientation here.\nsession: codex:1\nA second line.\n"
    parsed = parse_note(note)
    codes = [p.code for p in parsed.problems]
    assert {"status-unknown", "duplicate-key", "mode-unknown", "key-after-orientation", "preamble-extra-line"} <= set(
        codes
    )
    assert parsed.next == "cook" and parsed.mode == "single" and parsed.status_kind is None
    assert parsed.session == "codex:1"


def test_baseline_block_and_bom_and_crlf() -> None:
    note = "\ufeffstatus: halt: CI is red\r\nnext: press\r\nbaseline:\r\n  tests: 41 pass\r\n  lint: clean\r\n"
    note += "On it.\r\n"
    parsed = parse_note(note)
    assert (parsed.status_kind, parsed.status_reason) == ("halt", "CI is red")
    assert parsed.baseline == "tests: 41 pass\nlint: clean"
    assert parsed.orientation == "On it."


def test_no_preamble_empty_and_binary() -> None:
    for junk in ("", "\n\n", "# Just a title\n\nSome prose.\n"):
        parsed = parse_note(junk)
        assert parsed.format == "legacy" and parsed.next is None
        assert [p.code for p in parsed.problems] == ["no-preamble"]
    binary = parse_note(b"\x00\xff\xfe\x89PNG\r\n\x1a\n\x00")
    assert {"binary", "invalid-utf8"} <= {p.code for p in binary.problems}


def test_huge_input_is_capped_at_one_mebibyte() -> None:
    note = "status: ok\nnext: hold\nWaiting.\n\n" + "é" * MAX_NOTE_BYTES
    parsed = parse_note(note)
    assert parsed.next == "hold" and "truncated" in {p.code for p in parsed.problems}
    raw = parse_note(note.encode("utf-8"))
    assert raw.next == "hold"
    assert {p.code for p in raw.problems} == {"truncated"}


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.text(max_size=400),
        st.binary(max_size=400),
        st.lists(
            st.sampled_from(
                [
                    "status: ok",
                    "next: [",
                    "next: tasks",
                    "tasks:",
                    "  - slug: x",
                    "```",
                    "## Handoff slug",
                    "wheypoint:",
                    "  note_digest: x",
                    "",
                    "orientation",
                    "\x00",
                    "~~~",
                    "- a: b",
                    "parallel:",
                ]
            ),
            max_size=12,
        ).map("\n".join),
    )
)
def test_parser_never_raises(data: str | bytes) -> None:  # fmt: skip
    parsed = parse_note(data)
    shape = json.loads(json.dumps(parsed.as_json()))  # the documented JSON shape, exactly, and only JSON in it
    assert set(shape) == set(ParsedNote._fields) - {"outline", "labels", "body"} | {"tags"}
    assert all(tag in ("certain", "speculating", "don't know") for tag in shape["tags"].values())
    assert shape["format"] in ("wheypoint", "legacy", "legacy-wrapped") and shape["mode"] in ("single", "parallel")
    assert all(isinstance(title, str) for title in shape["sections"])
    for problem in shape["problems"]:
        assert set(problem) == {"code", "message"} and re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", problem["code"])
        assert problem["code"] != "internal-error" and problem["message"]
    # The status is read into its kind and reason, or reported; never half of it.
    if parsed.status_kind is not None:
        assert parsed.status_kind in ("ok", "gated", "halt") and parsed.status is not None
        assert parsed.status.lower().startswith(parsed.status_kind)
    elif parsed.status is not None:
        assert "status-unknown" in {p["code"] for p in shape["problems"]}


hostile = st.lists(st.sampled_from(["## Gates", "status: ok", "```", "next: done", "plain", "", "  - slug: x"]),
                   min_size=1, max_size=6).map("\n".join)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(notes=hostile, text=hostile)
def test_generated_notes_read_back_whatever_their_text(notes: str, text: str) -> None:
    record = build(notes=notes, decisions=[{"text": text, "rationale": text}], next=TASKS, **GATE)
    parsed = parse_note(render(record))
    assert parsed.problems == []
    assert parsed.status == record["status"] and parsed.next == "tasks" and parsed.tasks and len(parsed.tasks) == 2
    assert parsed.sections == re.findall(r"^## (.+)$", render(record), flags=re.M)


def test_an_unreadable_next_list_is_quoted_without_the_token_a_cut_would_hide() -> None:
    token = "github_pat_" + "11ABCDEFG0" * 8 + "x1"  # a fine-grained token: its first 80 characters alone match no rule
    parsed = parse_note(f"status: ok\nnext: [briesearch {token}\nOrientation.\n")
    [problem] = [p for p in parsed.problems if p.code == "next-list-unreadable"]
    assert token[:30] not in problem.message and "redacted" in problem.message
