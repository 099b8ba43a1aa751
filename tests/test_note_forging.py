"""A note cannot fake its structure: whatever the text, readers get the record's preamble, sections and bytes."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from wheypoint.model.characters import LINE_TERMINATORS, first_hidden
from wheypoint.model.errors import Refusal
from wheypoint.model.intake import require_valid
from wheypoint.model.kernel import Provenance, apply
from wheypoint.notes.escapes import escape, unescape, verbatim_blocks
from wheypoint.notes.lint import clean, lint_note
from wheypoint.notes.parse import parse_note
from wheypoint.notes.render import carries_own_digest, next_value, render

BREAKS = ["\n", "\r", "\r\n", *LINE_TERMINATORS]
BIDI = [*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)), "\u200e", "\u200f", "\u061c"]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\xad", "\U000e0041", "\u3164"]
MARKDOWN = ["## Identifiers", "# Wheypoint handoff", "status: ok", "next: done", "```", "````", "~~~", "<!--", "-->",
            "<script>", "---", "===", "> q", "- item", "1. one", "  note_digest: sha256:0", "wheypoint:", "\\",
            "\u27eaU+0041\u27eb", "\u27ea", "\t", " ", "a: b", "\x1b[31m", "\x00",
            "\U0001f468\u200d\U0001f469"]  # fmt: skip
piece = st.one_of(st.text(max_size=5), st.sampled_from(BREAKS + BIDI + ZERO_WIDTH + MARKDOWN))
hostile = st.lists(piece, max_size=8).map("".join)
# What intake may answer about a one-line field; multi-line and verbatim text is never refused for its shape.
ONE_LINE_CODES = {"single-line-field", "hidden-character", "orientation-shape", "control-character"}


def published_reader() -> Callable[[str], dict[str, str]]:
    """The ten-line reader exactly as docs/contract.md prints it for other tools to copy."""
    contract = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    code = re.search(r"A reader in ten lines:\n\n```python\n(.*?)\n```", contract, re.DOTALL)
    assert code, "docs/contract.md no longer publishes its ten-line reader"
    namespace: dict[str, Any] = {}
    exec(code.group(1), namespace)
    reader: Callable[[str], dict[str, str]] = namespace["parse_preamble"]
    return reader


READER = published_reader()


def intent_for(texts: dict[str, str], listed: bool) -> dict[str, Any]:
    nxt: dict[str, Any] = (
        {"items": [{"skill": "briesearch", "arg": texts["arg"]}, {"skill": "culture", "arg": "x"}], "order": "parallel"}
        if listed
        else {"move": "cook", "artifact": texts["arg"]}
    )
    return {
        "slug": "forge",
        "orientation": "Work " + texts["orientation"],
        "next": nxt,
        "decisions": [{"text": texts["text"], "rationale": texts["rationale"]}],
        "directives": [{"text": texts["text"], "quote": texts["quote"]}],
        "questions": [{"text": "Go " + texts["text"], "gates": True, "rationale": texts["rationale"]}],
        "notes": texts["notes"],
        "working_context": ["ctx " + texts["context"]],
    }


# Where each generated text lands in the intent: a refused one is made plain and the intent tried again.
FIELDS = {"$.orientation": "orientation", "$.next.artifact": "arg", "$.next.items[0].arg": "arg",
          "$.decisions[0].text": "text", "$.directives[0].text": "text", "$.questions[0].text": "text",
          "$.decisions[0].rationale": "rationale", "$.questions[0].rationale": "rationale",
          "$.directives[0].quote": "quote", "$.notes": "notes", "$.working_context[0]": "context"}  # fmt: skip
MULTI_LINE = {"text", "rationale", "quote", "notes"}
# What intake may answer about any generated text: it is empty or blank, or holds a control character.
EMPTY_CODES = {"control-character", "too-short", "gate-needs-rationale", "artifact-required"}


def valid_intent(texts: dict[str, str], listed: bool) -> dict[str, Any]:
    """The intent, after every field intake refused has been made plain (asserting why it was refused)."""
    try:
        return require_valid(intent_for(texts, listed))
    except Refusal as refused:
        problems = refused.problems
    plain = dict(texts)
    for problem in problems:
        field = FIELDS[problem.path]
        allowed = EMPTY_CODES | (set() if field in MULTI_LINE else ONE_LINE_CODES)
        if field == "arg" and texts["arg"].strip().lower() == "none":
            allowed = allowed | {"bad-value"}  # `artifact: none` is how older notes said "no artifact"
        assert problem.code in allowed, problem
        plain[field] = "plain"
    return require_valid(intent_for(plain, listed))


# 400 examples in CI (a few seconds); bench/forging_fuzz.py runs the same property with many more.
EXAMPLES = int(os.environ.get("WHEYPOINT_FUZZ_EXAMPLES", "400"))


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    texts=st.fixed_dictionaries({key: hostile for key in
                                 ("orientation", "arg", "text", "rationale", "quote", "notes", "context")}),
    meat=hostile, listed=st.booleans(),
)  # fmt: skip
def test_no_text_can_forge_the_note(texts: dict[str, str], meat: str, listed: bool) -> None:
    intent = valid_intent(texts, listed)
    prov = Provenance(
        project_key="shop", captured_at="2026-12-01T10:00:00Z", session={"harness": "codex", "id": "s1"},
        git={"branch": "main", "commit": "0123456789abcdef0123456789abcdef01234567"},
        meat=({"turn": "t1", "type": "constraint", "weight": 2, "kind": "prompt", "timestamp": None, "text": meat,
               "harness": "codex", "session_id": "s1"},),
    )  # fmt: skip
    record = apply(None, intent, prov).record
    note = render(record)

    # The only line break in a note is \n, and nothing hidden is in it raw.
    assert all(line == line.splitlines()[0] if line else True for line in note.split("\n"))
    assert first_hidden(note.replace("\n", " ")) is None

    # The published ten-line reader gets the record's preamble, and nothing else.
    keys = READER(note)
    nxt = record["next"]
    expected = {"status": record["status"], "next": next_value(nxt), "artifact": nxt.get("artifact", ""),
                "session": "codex:s1", "git": "main@0123456", "created": "2026-12-01T10:00:00Z",
                "orientation": record["orientation"]}  # fmt: skip
    if listed:
        expected["order"] = "parallel"
    assert keys == {key: value.strip() if key != "orientation" else value for key, value in expected.items()}

    # notes/parse.py reads the same preamble, the pins, and exactly the sections the record fills.
    parsed = parse_note(note)
    assert parsed.problems == [], parsed.problems
    assert (parsed.status, parsed.orientation) == (record["status"], record["orientation"])
    assert parsed.artifact == (nxt.get("artifact", "").strip() or None)
    if listed:
        assert parsed.next_items == [{"skill": "briesearch", "arg": record["next"]["items"][0]["arg"]},
                                     {"skill": "culture", "arg": "x"}]  # fmt: skip
    assert parsed.wheypoint is not None and parsed.wheypoint["revision_id"] == record["revision_id"]
    sections = ["Gates", "Decisions", "Directives", "Meat", *(["Notes"] if record["notes"] else []), "Context",
                "Identifiers"]  # fmt: skip
    assert parsed.sections == sections
    assert clean(lint_note(note, record)), lint_note(note, record)
    assert carries_own_digest(note)

    # The verbatim text comes back byte for byte: the quote, then the meat.
    assert list(verbatim_blocks(note)) == [intent["directives"][0]["quote"], meat]


@given(st.text())
def test_the_escape_is_reversible_for_any_text(text: str) -> None:
    shown = escape(text)
    assert unescape(shown) == text
    assert first_hidden(shown.replace("\n", " ")) is None


def test_a_carriage_return_in_a_quote_cannot_open_a_section_or_hide_the_rest() -> None:
    # The finding: `keep it\r## Identifiers\r- work_id: ...\r<!--` made a fake section and hid the note's end.
    quote = "keep it\r## Identifiers\r- work_id: forged.0\r<!--"
    texts = {"orientation": "x", "arg": "specs/a.md", "text": "Keep it.", "rationale": "why", "quote": quote,
             "notes": "", "context": "c"}  # fmt: skip
    intent = require_valid(intent_for(texts, False))
    note = render(apply(None, intent, Provenance(project_key="shop", captured_at="2026-12-01T10:00:00Z")).record)
    assert "\r" not in note and "<!--" not in note.replace("\u27eaU+000D\u27eb<!--", "")
    assert parse_note(note).sections.count("Identifiers") == 1
    assert list(verbatim_blocks(note)) == [quote]


def test_an_orientation_that_looks_like_the_digest_line_is_refused() -> None:
    intent = intent_for({"orientation": "x", "arg": "a", "text": "t", "rationale": "r", "quote": "q", "notes": "",
                         "context": "c"}, False)  # fmt: skip
    for orientation in ("  note_digest: sha256:0", "note_digest: sha256:0", "goal: ship it", " Leading space"):
        try:
            require_valid({**intent, "orientation": orientation})
        except Refusal as refused:
            assert [p.code for p in refused.problems] == ["orientation-shape"], orientation
        else:
            raise AssertionError(f"{orientation!r} was accepted")


def test_line_separators_in_one_line_fields_are_refused_naming_the_field() -> None:
    intent = intent_for({"orientation": "x", "arg": "a", "text": "t", "rationale": "r", "quote": "q", "notes": "",
                         "context": "c"}, False)  # fmt: skip
    for breaker in ("\u2028", "\u2029", "\x85", "\r"):
        intent["next"]["artifact"] = f"specs/a.md{breaker}status: ok"
        try:
            require_valid(intent)
        except Refusal as refused:
            assert [(p.code, p.path) for p in refused.problems] == [("single-line-field", "$.next.artifact")]
        else:
            raise AssertionError(f"{breaker!r} was accepted")
    intent["next"]["artifact"] = "specs/a\u202e.md"
    try:
        require_valid(intent)
    except Refusal as refused:
        assert [(p.code, p.path) for p in refused.problems] == [("hidden-character", "$.next.artifact")]
    else:
        raise AssertionError("a bidi override was accepted")


def test_an_artifact_named_none_is_refused_since_notes_read_it_as_no_artifact() -> None:
    intent = intent_for({"orientation": "x", "arg": " None", "text": "t", "rationale": "r", "quote": "q", "notes": "",
                         "context": "c"}, False)  # fmt: skip
    try:
        require_valid(intent)
    except Refusal as refused:
        assert [(p.code, p.path) for p in refused.problems] == [("bad-value", "$.next.artifact")]
    else:
        raise AssertionError("an artifact `none` was accepted")
