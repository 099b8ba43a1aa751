"""A note cannot fake its structure: whatever the text, readers get the record's preamble, sections and bytes."""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import ROOT, missing
from wheypoint.model.characters import LINE_TERMINATORS, first_hidden
from wheypoint.model.derived import derive_status
from wheypoint.model.errors import Refusal
from wheypoint.model.intake import require_valid
from wheypoint.model.kernel import Provenance, apply
from wheypoint.notes.escapes import escape, unescape, verbatim_blocks
from wheypoint.notes.lint import clean, lint_note
from wheypoint.notes.parse import parse_note
from wheypoint.notes.render import TITLE, carries_own_digest, next_value, render

try:  # the CommonMark oracle: a test dependency (pyproject's dev list), never a runtime one
    from markdown_it import MarkdownIt
except ImportError:  # pragma: no cover - CI installs it
    MarkdownIt = None

BREAKS = ["\n", "\r", "\r\n", *LINE_TERMINATORS]
BIDI = [*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)), "\u200e", "\u200f", "\u061c"]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\xad", "\U000e0041", "\u3164"]
MARKDOWN = ["## Identifiers", "# Wheypoint handoff", "status: ok", "next: done", "```", "````", "~~~", "<!--", "-->",
            "<script>", "---", "===", "> q", "- item", "1. one", "  note_digest: sha256:0", "wheypoint:", "\\",
            "\u27eaU+0041\u27eb", "\u27ea", "\t", " ", "a: b", "\x1b[31m", "\x00",
            "\U0001f468\u200d\U0001f469"]  # fmt: skip
# What CommonMark reads as a block or as raw HTML: setext underlines of any length with up to three spaces before
# and white space after, thematic breaks, fences, container markers, link reference definitions, every HTML form.
COMMONMARK = ["-", "--", "=", "==", " -", "   ===  ", "-\t", "***", "___", "* * *", "- - -", "~~~", "  ~~~",
              "> # h", "- # h", "1. ```", "> ```", "`", "``", "[x]: /u", "[x]:", "\n[y]: <z>", "* ", "+ ", "1) ",
              "<img src=x onerror=alert(1)>", "<script>", "</div>", "<a href=javascript:alert(1)>", "x</a>", "<?php",
              "?>", "<![CDATA[", "]]>", "<!DOCTYPE html>", "<!-- c -->", "<javascript:alert(1)>", "<b>", "<br/>",
              "<div>", "<pre>", "\\<b>", "#", "## Identifiers\n-"]  # fmt: skip
piece = st.one_of(st.text(max_size=5), st.sampled_from(BREAKS + BIDI + ZERO_WIDTH + MARKDOWN + COMMONMARK))
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
        "decision_dossier": [
            {
                "fork": "Pick " + texts["text"],
                "prior_leaning": "Lean " + texts["rationale"],
                "options": [
                    {
                        "option": "A " + texts["rationale"],
                        "evidence": ["e " + texts["context"]],
                        "breaks": "Breaks " + texts["notes"],
                    },
                    {"option": "B"},
                ],
            }
        ],
    }


# Where each generated text lands in the intent: a refused one is made plain and the intent tried again.
FIELDS = {"$.orientation": "orientation", "$.next.artifact": "arg", "$.next.items[0].arg": "arg",
          "$.decisions[0].text": "text", "$.directives[0].text": "text", "$.questions[0].text": "text",
          "$.decisions[0].rationale": "rationale", "$.questions[0].rationale": "rationale",
          "$.directives[0].quote": "quote", "$.notes": "notes", "$.working_context[0]": "context",
          "$.decision_dossier[0].fork": "text", "$.decision_dossier[0].prior_leaning": "rationale",
          "$.decision_dossier[0].options[0].option": "rationale",
          "$.decision_dossier[0].options[0].evidence[0]": "context",
          "$.decision_dossier[0].options[0].breaks": "notes"}  # fmt: skip
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


def commonmark(note: str) -> tuple[list[Any], dict[str, Any]]:
    """The note as CommonMark reads it (markdown-it-py, CommonMark mode): its block tokens and its references."""
    if MarkdownIt is None:
        missing("markdown-it-py is not installed (pip install -e '.[dev]'): the CommonMark oracle cannot run")
    env: dict[str, Any] = {}
    return MarkdownIt("commonmark").parse(note, env), env


def inline_tokens(tokens: list[Any]) -> list[Any]:
    return [child for token in tokens for child in (token.children or [])]


def assert_commonmark_reads_only_the_renderers_structure(
    note: str, sections: list[str], forks: int, verbatim: int = 2
) -> None:
    """Headings, fences, HTML, rules and link definitions exactly as the renderer writes them, whatever the fields.

    The renderer writes the title, one level-two heading per section, one level-three heading per dossier fork (its
    text as written on its `### ` line), one fenced `text` block per verbatim text, and no HTML, rule or link
    reference definition: every other such token would come from a field.
    """
    tokens, env = commonmark(note)
    lines = note.split("\n")
    headings = [(t.tag, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]
    written = [("h1", TITLE[2:]), *(("h2", s) for s in sections)]
    level3 = [h for h in headings if h[0] == "h3"]
    assert [h for h in headings if h[0] != "h3"] == written, headings
    assert len(level3) == forks, headings
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h3":
            assert token.markup == "###" and lines[token.map[0]] == f"### {tokens[i + 1].content}", token.map
    html = [t.content for t in [*tokens, *inline_tokens(tokens)] if t.type in ("html_block", "html_inline")]
    assert html == [], html
    assert [t.info for t in tokens if t.type == "fence"] == ["text"] * verbatim
    assert [t.type for t in tokens if t.type == "hr"] == []
    assert env.get("references", {}) == {}, env["references"]


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
                "Decision dossier", "Identifiers"]  # fmt: skip
    assert parsed.sections == sections
    assert clean(lint_note(note, record)), lint_note(note, record)
    assert carries_own_digest(note)

    # The verbatim text comes back byte for byte: the quote, then the meat.
    assert list(verbatim_blocks(note)) == [intent["directives"][0]["quote"], meat]

    # CommonMark itself (any viewer: GitHub, an editor's preview) reads the same headings and no HTML.
    assert_commonmark_reads_only_the_renderers_structure(note, sections, forks=1)


@given(st.text())
def test_the_escape_is_reversible_for_any_text(text: str) -> None:
    assert unescape("\u27eaU+10FFFF\u27eb\u27eaU+110000\u27eb") == "\U0010ffff\u27eaU+110000\u27eb"
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


def plain_texts(**given: str) -> dict[str, str]:
    texts = {"orientation": "x", "arg": "specs/a.md", "text": "Keep it.", "rationale": "why", "quote": "q",
             "notes": "", "context": "c"}  # fmt: skip
    return {**texts, **given}


def note_of(intent: dict[str, Any], meat: str | None = None, turn: str = "t1") -> tuple[dict[str, Any], str]:
    item = {"turn": turn, "type": "constraint", "weight": 2, "kind": "prompt", "timestamp": None, "text": meat,
            "harness": "codex", "session_id": "s1"}  # fmt: skip
    prov = Provenance(project_key="shop", captured_at="2026-12-01T10:00:00Z", meat=() if meat is None else (item,))
    record = apply(None, require_valid(intent), prov).record
    return record, render(record)


def test_a_setext_underline_in_any_multi_line_field_makes_no_heading() -> None:
    # The finding: `--notes $'Identifiers\n-'` gave the note a second `## Identifiers` under CommonMark.
    for underline in ("-", "--", "=", "  ===  ", "   -\t", "- - -", "***", "___"):
        text = f"Identifiers\n{underline}"
        intent = intent_for(plain_texts(notes=text, text=text, rationale=text), False)
        record, note = note_of(intent)
        sections = ["Gates", "Decisions", "Directives", "Notes", "Context", "Decision dossier", "Identifiers"]
        assert_commonmark_reads_only_the_renderers_structure(note, sections, forks=1, verbatim=1)
        assert parse_note(note).sections == sections and clean(lint_note(note, record))


HTML = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", '<a href="javascript:alert(1)">x</a>',
        "<!-- hidden -->", "<?php echo 1; ?>", "<![CDATA[ x ]]>", "<!DOCTYPE html>", "<javascript:alert(1)>",
        "</div>", "<div>", "a \\<b> c", "x\\\\<b>y"]  # fmt: skip


def test_raw_html_in_any_field_reaches_commonmark_as_text_and_reads_the_same() -> None:
    for html in HTML:
        texts = plain_texts(orientation=html, arg=f"specs/{html}", text=f"Keep {html}",
                            rationale=f"{html}\n{html}", quote=html, notes=f"{html}\n\n{html} `{html}`",
                            context=html)  # fmt: skip
        for listed in (False, True):
            intent = intent_for(texts, listed)
            record, note = note_of(intent, meat=html, turn=f"t`{html}`")
            sections = ["Gates", "Decisions", "Directives", "Meat", "Notes", "Context", "Decision dossier",
                        "Identifiers"]  # fmt: skip
            assert_commonmark_reads_only_the_renderers_structure(note, sections, forks=1)
            # Every reader gets the field back: the published one, notes/parse.py, lint and the verbatim blocks.
            assert READER(note)["orientation"] == record["orientation"] == f"Work {html}"
            parsed = parse_note(note)
            assert (parsed.orientation, parsed.status) == (record["orientation"], record["status"])
            if listed:
                assert parsed.next_items is not None and parsed.next_items[0]["arg"] == texts["arg"]
            else:
                assert parsed.artifact == READER(note)["artifact"] == texts["arg"]
            assert clean(lint_note(note, record)), lint_note(note, record)
            assert list(verbatim_blocks(note)) == [html, html]
            # What a viewer shows is the text as typed: a code span keeps its `<` raw, the rest reads the same.
            shown = MarkdownIt("commonmark").render(note) if MarkdownIt else ""
            assert f"<code>{html_escape(html)}</code>" in shown


def html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def test_an_orientation_that_is_a_rule_or_a_setext_underline_is_refused() -> None:
    intent = intent_for(plain_texts(), False)
    for orientation in ("-", "--", "---", "=", "===", "***", "___", "_ _ _", "-\t"):
        try:
            require_valid({**intent, "orientation": orientation})
        except Refusal as refused:
            assert [p.code for p in refused.problems] == ["orientation-shape"], orientation
        else:
            raise AssertionError(f"{orientation!r} was accepted")


def test_the_stale_notes_banner_names_the_revisions_and_the_decisions_that_changed() -> None:
    intent = intent_for(plain_texts(notes="Notes of r1."), False)
    first = apply(None, require_valid(intent), Provenance(project_key="shop", captured_at="2026-12-01T10:00:00Z"))
    later = {"work_id": first.record["work_id"], "base_revision_id": first.record["revision_id"],
             "decisions": [{"text": "Use SQLite.", "rationale": "One file."}]}  # fmt: skip
    prov = Provenance(project_key="shop", captured_at="2026-12-01T11:00:00Z")
    second = apply(first.record, require_valid(later), prov).record
    changed = [e["id"] for e in second["entries"] if e["kind"] == "decision" and e["added_in"] == 2]
    note = render(second)
    banner = (f"> **Stale notes:** written at r1; decisions changed at r2 ({', '.join(changed)}). "
              "Read the Decisions section.")  # fmt: skip
    assert f"## Notes\n\n{banner}\n\nNotes of r1.\n" in note


LINE_ALPHABET = [*" \t\u00a0#<>`~=-*_+[]:!?/\\ax1.)", "<b>", "<!--", "](x)", "\n"]


@settings(max_examples=EXAMPLES, deadline=None)
@given(lines=st.lists(st.lists(st.sampled_from(LINE_ALPHABET), max_size=10).map("".join), min_size=1, max_size=4))
def test_any_lines_under_a_paragraph_or_in_a_list_item_stay_text(lines: list[str]) -> None:
    # Every line of every multi-line field is written through escape_line: at the top level (Notes), and indented
    # under a list item (entries, options), each after a line of text, which is where a setext underline bites.
    from wheypoint.notes.render import escape_line

    shown = [escape_line(line) for text in lines for line in text.split("\n")]
    for note in ("Text\n" + "\n".join(shown), "- `d-0` Text\n" + "\n".join(f"  {line}" for line in shown)):
        tokens, env = commonmark(note)
        kinds = {t.type for t in [*tokens, *inline_tokens(tokens)]}
        assert not kinds & {"heading_open", "hr", "fence", "html_block", "html_inline"}, (note, kinds)
        assert env.get("references", {}) == {}, note


def rich_records() -> tuple[dict[str, Any], dict[str, Any]]:
    """Two revisions of a work that fills every section: r1 with a gate, r2 resolving it and superseding a decision."""
    first: dict[str, Any] = {
        "slug": "rich",
        "orientation": "Retry backoff is designed, not built.",
        "next": {"move": "cook", "artifact": "specs/retry.md"},
        "decisions": [
            {
                "text": "Cap at 30 s.",
                "rationale": "The gateway times out at 45 s.\n\nSo 30 s leaves room.",
                "label": "cap",
            },
            {"text": "Log every retry.", "rationale": "Ops asked."},
        ],
        "questions": [
            {
                "text": "Full or equal jitter?",
                "gates": True,
                "rationale": "Both are standard.",
                "label": "jit",
                "owner": "payments lead",
                "when": "Friday",
            }
        ],
        "blockers": [{"text": "CI is red.", "rationale": "A flaky test."}],
        "directives": [{"text": "Never retry a POST.", "quote": "never retry a POST,\nit double-charges"}],
        "operator_directives": [{"text": "Keep it private.", "quote": "ops only"}],
        "decision_dossier": [
            {
                "fork": "Full or equal jitter?",
                "gate": "jit",
                "prior_leaning": "Full jitter.",
                "options": [
                    {
                        "option": "Full jitter",
                        "evidence": ["AWS blog\nand a post", "a simulation"],
                        "breaks": "Nothing.\nSee r2.",
                    },
                    {"option": "Equal jitter"},
                ],
            }
        ],
        "notes": "Read the spec first.\nThen the client.",
        "working_context": ["src/client.py"],
        "artifact_links": [{"ref": "specs/retry.md", "covers": ["cap"]}],
    }
    prov = Provenance(
        project_key="shop",
        captured_at="2026-12-01T10:00:00Z",
        session={"harness": "codex", "id": "s1"},
        git={"branch": "main", "commit": "0123456789abcdef0123456789abcdef01234567"},
        meat=(
            {
                "turn": "t1",
                "type": "constraint",
                "weight": 3,
                "kind": "prompt",
                "timestamp": "2026-12-01T09:00:00Z",
                "text": "no POST retries",
                "harness": "codex",
                "session_id": "s1",
            },
        ),
    )
    r1 = apply(None, require_valid(first), prov).record
    ids = {e["text"]: e["id"] for e in r1["entries"]}
    second = {
        "work_id": r1["work_id"],
        "base_revision_id": r1["revision_id"],
        "decisions": [
            {"text": "Use full jitter.", "rationale": "Spreads retries.", "label": "full"},
            {"text": "Cap at 20 s.", "rationale": "Tighter.", "label": "cap2"},
        ],
        "transitions": [
            {"entry": ids["Full or equal jitter?"], "action": "resolve", "rationale": "The lead chose full jitter."},
            {"entry": ids["Cap at 30 s."], "action": "supersede", "by": "cap2", "rationale": "The gateway changed."},
        ],
    }
    r2 = apply(r1, require_valid(second), Provenance(project_key="shop", captured_at="2026-12-01T11:00:00Z")).record
    return r1, r2


def named(record: dict[str, Any], note: str) -> str:
    """The note with the record's ids and digests written as names, so the pins below hold whatever they hash to."""
    names: dict[str, str] = {
        record["work_id"]: "WORK",
        record["revision_id"]: "REV",
        record["record_digest"]: "RECORD_DIGEST",
    }
    if record["parent_revision_id"]:
        names[record["parent_revision_id"]] = "PARENT"
    names[note.split("note_digest: ")[1].split("\n")[0]] = "NOTE_DIGEST"
    for n, e in enumerate(record["entries"]):
        names[e["id"]] = f"E{n}"
    for value in sorted(names, key=len, reverse=True):
        note = note.replace(value, "{" + names[value] + "}")
    return note


def everything(record: dict[str, Any]) -> dict[str, Any]:
    """r2 given lineage, links of each kind, a moved entry, a quote's turn, local references and parallel tasks."""
    r = copy.deepcopy(record)
    r["edges"] = [
        {"kind": "forked_from", "ref": "wheypoint:shop/parent.0123abcd", "revision": "rev-0123456789abcdef",
         "added_in": 1},
        {"kind": "joined_from", "ref": "shop/other", "added_in": 2},
        {"kind": "forked_to", "ref": "shop/child", "added_in": 2},
        {"kind": "joined_into", "ref": "shop/sink", "added_in": 2},
        {"kind": "relates", "ref": "shop/sibling", "covers": ["x"], "added_in": 1},
    ]
    r["local_references"] = ["notes/local.md"]
    r["artifact_links"].append(
        {
            "ref": "docs/a.md",
            "pinned": "docs/a.md@abc1234",
            "covers": [],
            "digest": "sha256:00112233445566778899",
            "added_in": 1,
        }
    )
    for e in r["entries"]:
        if e["kind"] == "blocker":
            e["state"] = "moved"
            e["settled"] = {"action": "move", "rationale": "Split off.", "revision_number": 2, "to": "child"}
        if e["kind"] == "directive":
            e["quote_turn"] = "t7"
    r["status"] = derive_status(r["entries"])  # the blocker moved to the child: nothing halts this work
    r["next"] = {
        "move": "tasks",
        "parallel": {"worktree_strategy": "create", "isolation": "git-worktree"},
        "tasks": [
            {
                "slug": "api",
                "intent": "build",
                "repo": ".",
                "worktree": "../api",
                "branch": "api",
                "command": "make api",
            },
            {"slug": "ui", "intent": "research", "command": "make ui"},
        ],
    }
    return r


RICH_R1 = """\
status: gated: Full or equal jitter?
next: cook
artifact: specs/retry.md
session: codex:s1
git: main@0123456
created: 2026-12-01T10:00:00Z
Retry backoff is designed, not built.
wheypoint:
  work_id: {WORK}
  slug: rich
  project: shop
  revision_id: {REV}
  revision_number: 1
  record_digest: {RECORD_DIGEST}
  note_digest: {NOTE_DIGEST}

# Wheypoint handoff

## Gates

- `{E4}` Full or equal jitter? (owner: payments lead; when: Friday; since r1)
  Why: Both are standard.

## Open entries

- `{E5}` CI is red. (since r1)
  Why: A flaky test.

## Decisions

- `{E2}` Cap at 30 s. (since r1)
  Why: The gateway times out at 45 s.

  So 30 s leaves room.
- `{E3}` Log every retry. (since r1)
  Why: Ops asked.

## Directives

- `{E0}` Never retry a POST. (since r1)
  > ```text
  > never retry a POST,
  > it double-charges
  > ```
- `{E1}` Keep it private. (since r1) (operator, private)
  > ```text
  > ops only
  > ```

## Meat

- `t1` constraint, weight 3 (prompt, 2026-12-01T09:00:00Z)
  ```text
  no POST retries
  ```

## Notes

Read the spec first.
Then the client.

## Context

- src/client.py

## Artifacts

- specs/retry.md (covers `{E2}`)

## Decision dossier

### Full or equal jitter?

Gate: `{E4}`

- **Option:** Full jitter
  - Evidence: AWS blog
    and a post
  - Evidence: a simulation
  - Breaks: Nothing.
    See r2.
- **Option:** Equal jitter
- **Prior leaning:** Full jitter.

## Identifiers

- work_id: `{WORK}`
- slug: `rich`
- project: `shop`
- revision: `{REV}` (r1, parent `none`)
- record_digest: `{RECORD_DIGEST}`
- `{E0}`: directive, active
- `{E1}`: operator_directive, active
- `{E2}`: decision, active
- `{E3}`: decision, active
- `{E4}`: question, active
- `{E5}`: blocker, active
- next: cook: implement the approved spec named in artifact
- continue: `wheypoint checkpoint rich --base {REV} ...`
"""

RICH_EVERYTHING = """\
status: ok
next: tasks
artifact:
mode: parallel
created: 2026-12-01T11:00:00Z
parents: [parent, shop/other]
Retry backoff is designed, not built.
parallel:
  worktree_strategy: create
  isolation: git-worktree
tasks:
  - slug: api
    intent: build
    repo: .
    worktree: ../api
    branch: api
    command: make api
  - slug: ui
    intent: research
    command: make ui
wheypoint:
  work_id: {WORK}
  slug: rich
  project: shop
  revision_id: {REV}
  revision_number: 2
  record_digest: {RECORD_DIGEST}
  note_digest: {NOTE_DIGEST}

# Wheypoint handoff

> **Stale orientation:** the orientation at the top was stated at r1; decisions changed at r2 ({E2}, {E6}, {E7}). Read the Decisions section.

## Decisions

- `{E3}` Log every retry. (since r1)
  Why: Ops asked.
- `{E6}` Use full jitter. (since r2)
  Why: Spreads retries.
- `{E7}` Cap at 20 s. (since r2)
  Why: Tighter.

## Directives

- `{E0}` Never retry a POST. (since r1) (quoted from turn `t7`)
  > ```text
  > never retry a POST,
  > it double-charges
  > ```
- `{E1}` Keep it private. (since r1) (operator, private)
  > ```text
  > ops only
  > ```

## Meat

- `t1` constraint, weight 3 (prompt, 2026-12-01T09:00:00Z)
  ```text
  no POST retries
  ```

## Notes

> **Stale notes:** written at r1; decisions changed at r2 ({E2}, {E6}, {E7}). Read the Decisions section.

Read the spec first.
Then the client.

## Superseded

- `{E2}` (decision, superseded at r2 by `{E7}`) Cap at 30 s.
  Why: The gateway changed.
- `{E4}` (question, resolved at r2) Full or equal jitter?
  Why: The lead chose full jitter.
- `{E5}` (blocker, moved at r2) CI is red.
  Why: Split off.

## Context

- src/client.py

## Artifacts

- specs/retry.md (covers `{E2}`)
- docs/a.md@abc1234 `sha256:001122334455`
- relates: shop/sibling (covers `x`)

## Decision dossier

### Full or equal jitter?

Gate: `{E4}`

**Decided** in r2 (resolved): The lead chose full jitter.

- **Option:** Full jitter
  - Evidence: AWS blog
    and a post
  - Evidence: a simulation
  - Breaks: Nothing.
    See r2.
- **Option:** Equal jitter
- **Prior leaning:** Full jitter.

## Tasks

- `api` (build): make api
- `ui` (research): make ui

## Lineage

- parent: wheypoint:shop/parent.0123abcd at `rev-0123456789abcdef` (forked in r1)
- parent: shop/other (joined in r2)
- child: shop/child (forked at r2): took `{E5}`
- child: shop/sink (joined at r2)

## Local references

- notes/local.md

## Identifiers

- work_id: `{WORK}`
- slug: `rich`
- project: `shop`
- revision: `{REV}` (r2, parent `{PARENT}`)
- record_digest: `{RECORD_DIGEST}`
- `{E0}`: directive, active
- `{E1}`: operator_directive, active
- `{E2}`: decision, superseded
- `{E3}`: decision, active
- `{E4}`: question, resolved
- `{E5}`: blocker, moved
- `{E6}`: decision, active
- `{E7}`: decision, active
- next: tasks: run the independent tasks below, each in its own worktree
- continue: `wheypoint checkpoint rich --base {REV} ...`
"""  # noqa: E501


def test_render_writes_each_section_as_pinned() -> None:
    # What render writes, line for line, for records that fill every section (the stale banners included).
    first, second = rich_records()
    assert named(first, render(first)) == RICH_R1
    assert named(second, render(everything(second))) == RICH_EVERYTHING


def test_a_code_span_takes_the_shortest_fence_nothing_in_its_text_closes() -> None:
    from wheypoint.notes.render import code

    assert [code("t1"), code(""), code("a`b"), code("``x`"), code("a\nb")] == [
        "`t1`", "` `", "`` a`b ``", "``` ``x` ```", "`a\u27eaU+000A\u27ebb`"
    ]  # fmt: skip


MARKDOWN_LINES = {
    # Block openers, at the start or after quote and list markers, get a backslash; a viewer shows the character.
    "# h": "\\# h", "   ## h": "   \\## h", "- # h": "- \\# h", "> > # h": "> > \\# h", "1. # h": "1. \\# h",
    "123456789) # h": "123456789) \\# h", "1234567890) # h": "1234567890) # h",
    "10. # h": "10. \\# h", "9) # h": "9) \\# h", "-\t# h": "-\t\\# h",
    "-": "\\-", "--": "\\--", "=": "\\=", "  ===  ": "  \\===  ", "- -": "- -", "- - -": "\\- - -",
    "- ---": "\\- ---", "- --": "\\- --", "* ---": "* \\---", "* --": "* --",
    "- =": "- =", "> -": "> \\-", "> - ***": "> - \\***", "-  \t": "\\-  \t",
    "***": "\\***", "**": "**", "* * *": "\\* * *", "___": "\\___", "__": "__", "> ---": "> \\---",
    "~~~": "\\~~~", "~~": "~~", "```": "\\`\\`\\`", "```a```": "```a```", "[x]: /u": "\\[x]: /u",
    "[ ] task": "[ ] task", "[x] done": "[x] done", "[X]": "[X]", "[x]:": "\\[x]:", "[y] no": "\\[y] no",
    "-x": "-x", "+": "+", "+ # h": "+ \\# h", "1.": "1.", "1.5": "1.5", "a # h": "a # h",
    # `<` before anything but white space, outside code spans; backtick runs nothing closes on the line.
    "a <b> c": "a \\<b> c", "a < b": "a < b", "a <": "a <", "`<b>`": "`<b>`", "``<b>` `` <b>": "``<b>` `` \\<b>",
    "`a": "\\`a", "``a`": "\\`\\`a\\`", "\\`<b>`": "\\`\\<b>\\`", "\\<b>": "\\<b>", "\\\\<b>": "\\\\\\<b>",
    "x\\": "x\\", "a`b`c``": "a`b`c\\`\\`",
    "`a``": "\\`a\\`\\`", "  ": "  ", "": "", "a``b``": "a``b``", "`a`` ``b`": "`a`` ``b`",
}  # fmt: skip


def test_each_line_of_text_is_escaped_as_pinned() -> None:
    from wheypoint.notes.escapes import markdown_line, opens_block

    assert {line: markdown_line(line) for line in MARKDOWN_LINES} == MARKDOWN_LINES
    lines = ["> q", "- x", "1) x", "# h", "---", "=", "```", "  * x", "[x]: /u", "a", "", "x - y", "\t"]
    assert [opens_block(line) for line in lines] == [True] * 8 + [False] * 5


_LINE_PIECES = [" ", "\t", "#", ">", "-", "*", "+", "=", "_", "~~~", "[", "]", "[x]", "x", ".", ")", "1", "12", "1.",
                "2)", "a", "Z", "\u00e9", "\u0663", "`", "<", "---"]  # fmt: skip


@given(st.lists(st.sampled_from(_LINE_PIECES), max_size=8).map("".join))
@example("1. # x")
@example("7) ---")
@example("a. # x")
@example("2026-12-05T00:00:00Z")
def test_a_line_told_at_once_by_its_first_character_gets_the_walk_s_answer(line: str) -> None:
    # A line opening with a letter or bare digits is answered without the character walk: the same answer.
    from wheypoint.notes.escapes import _block_opener, _opener_after_markers

    assert _block_opener(line) == _opener_after_markers(line)


def test_a_record_from_elsewhere_gets_a_heading_and_preamble_no_reader_misreads() -> None:
    # Intake refuses these; a bundle's record is rendered whatever it holds.
    first, _ = rich_records()
    record = copy.deepcopy(first)
    record["orientation"] = "---"
    record["session"] = {"harness": "<b>", "id": "<i>"}
    record["git"] = {"branch": "x<b>", "commit": "<abcdef0"}
    record["decision_dossier"][0]["fork"] = "Full or # equal ##"
    note = render(record)
    assert "\n\\---\n" in note and "session: \\<b>:\\<i>\n" in note and "git: x\\<b>@\\<abcdef\n" in note
    assert "\n### Full or # equal \\##\n" in note
    parsed = parse_note(note)
    assert (parsed.session, parsed.git) == ("<b>:<i>", "x<b>@<abcdef")
