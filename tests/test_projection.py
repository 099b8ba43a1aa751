"""The Markdown projection: preamble a ten-line parser reads, section order, escaping, verbatim quotes."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from wheypoint.model.kernel import Provenance, apply
from wheypoint.notes.render import SECTIONS, TITLE, note_digest, render

PROV = Provenance(project_key="shop", captured_at="2026-11-30T10:00:00Z", session={"harness": "codex", "id": "s1"},
                  git={"branch": "main", "commit": "0123456789abcdef0123456789abcdef01234567"})  # fmt: skip


def parse_preamble(note: str) -> dict[str, Any]:
    """The ten-line parser other tools can use: key lines, then the orientation, until a blank line."""
    keys: dict[str, Any] = {}
    for line in note.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(":")
        if "orientation" not in keys and sep and re.fullmatch(r"[a-z_]+", key):
            keys[key] = value.strip()
        elif "orientation" not in keys:
            keys["orientation"] = line
    return keys


def record_with(notes: str = "", text: str = "A decision.", quote: str = "my words") -> dict[str, Any]:
    intent = {
        "slug": "demo",
        "orientation": "Checking the projection.",
        "next": {"move": "tasks", "parallel": {"worktree_strategy": "harness"},
                 "tasks": [{"slug": "t1", "intent": "cook", "command": "/cook a", "branch": "b", "branch_from": "m"}]},
        "decisions": [{"text": text, "rationale": text}],
        "directives": [{"text": "Keep quotes.", "quote": quote}],
        "questions": [{"text": "Go?", "gates": True, "rationale": "r", "label": "g", "owner": "ann"}],
        "decision_dossier": [{"fork": "Go?", "gate": "g", "options": [{"option": "yes"}, {"option": "no"}]}],
        "notes": notes,
        "working_context": ["xdg:shop/scratch.md"],
    }  # fmt: skip
    prov = PROV._replace(local_refs=frozenset({"xdg:shop/scratch.md"}))
    return apply(None, intent, prov).record


def test_preamble_reads_back_with_a_ten_line_parser() -> None:
    record = record_with("Some notes.")
    note = render(record)
    keys = parse_preamble(note)
    assert keys["status"] == "gated: Go?"
    assert keys["next"] == "tasks"
    assert keys["mode"] == "parallel"
    assert keys["artifact"] == ""  # empty, not `none` (seeds 1 and 2), and before `mode: parallel`:
    assert note.index("\nartifact:\n") < note.index("\nmode: parallel\n")
    assert keys["session"] == "codex:s1"
    assert keys["git"] == "main@0123456"
    assert keys["created"] == "2026-11-30T10:00:00Z"
    assert keys["orientation"] == "Checking the projection."
    assert "  work_id: " + record["work_id"] in note
    assert note.split("\n\n", 2)[1] == TITLE


def test_sections_appear_in_the_fixed_order_with_identifiers_last() -> None:
    note = render(record_with("Some notes."))
    found = re.findall(r"^## (.+)$", note, flags=re.M)
    assert found == [s for s in SECTIONS if s in found]
    assert found[-1] == "Identifiers"
    for expected in ("Gates", "Decisions", "Directives", "Notes", "Context", "Decision dossier", "Tasks",
                     "Local references"):  # fmt: skip
        assert expected in found


def test_note_digest_detects_any_edit() -> None:
    note = render(record_with())
    stored = re.search(r"note_digest: (\S+)", note)
    assert stored and stored.group(1) == note_digest(note)
    assert note_digest(note.replace("A decision.", "A decision!")) != stored.group(1)


def test_list_form_next_and_order() -> None:
    intent = {
        "slug": "l",
        "orientation": "Research first.",
        "notes": "n",
        "next": {
            "items": [{"skill": "briesearch", "arg": "q one"}, {"skill": "culture", "arg": "q two"}],
            "order": "parallel",
        },
    }
    keys = parse_preamble(render(apply(None, intent, PROV).record))
    assert keys["next"] == '[briesearch "q one", culture "q two"]'
    assert keys["order"] == "parallel"


hostile = st.lists(
    st.sampled_from(["## Gates", "# Wheypoint handoff", "status: ok", "```", "~~~", "<!-- hide", "---", "===",
                     "   # indented", "> quote", "", "plain words", "\tTab", "next: done"]),
    min_size=1, max_size=8,
).map("\n".join)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(notes=hostile, text=hostile, quote=hostile)
def test_field_text_never_forges_structure(notes: str, text: str, quote: str) -> None:
    record = record_with(notes, text, quote)
    note = render(record)
    keys = parse_preamble(note)
    assert keys["status"] == record["status"] and keys["orientation"] == "Checking the projection."
    headings = re.findall(r"^#{1,6} .*$", note, flags=re.M)
    allowed = {TITLE, *(f"## {s}" for s in SECTIONS), "### Go?"}
    assert set(headings) <= allowed
    assert len(re.findall(rf"^{re.escape(TITLE)}$", note, flags=re.M)) == 1
    assert not re.search(r"^(```|~~~)", note, flags=re.M), "a fence opened at column 0"
    # An HTML comment could hide what follows it; inside a blockquote it ends with the quote.
    assert not [line for line in note.splitlines()
                if "<!--" in line.replace("\\<!--", "") and not line.lstrip().startswith(">")]  # fmt: skip
    # The user's words survive byte for byte behind the blockquote marker.
    quoted = "\n".join(f"  > {line}" if line else "  >" for line in quote.split("\n"))
    assert quoted in note


# Which lines open a block is CommonMark's to say: tests/test_note_forging.py asks markdown-it-py about every line.
