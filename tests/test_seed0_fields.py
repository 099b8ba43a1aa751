"""Seed 0's note fields the runtime now derives and renders: halt, calibrated tags, parents by slug, house style."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Runner, git, make_repo
from wheypoint.model.contract import RECORD
from wheypoint.model.derived import derive_status
from wheypoint.model.errors import Refusal
from wheypoint.model.intake import require_valid
from wheypoint.model.kernel import Provenance, apply
from wheypoint.model.schemacheck import SchemaChecker
from wheypoint.notes.handoff import dispatch, dispatch_record
from wheypoint.notes.lint import clean, lint_note
from wheypoint.notes.packet import render_packet
from wheypoint.notes.parse import parse_note
from wheypoint.notes.render import render

PROV = Provenance(project_key="shop", captured_at="2026-12-02T10:00:00Z")
package_only = pytest.mark.parametrize("wp", ["package"], indirect=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"retry.py": "a\nb\nc\n"})


def entry(kind: str, text: str, *, gates: bool = False, state: str = "active") -> dict[str, Any]:
    return {"id": f"{kind[0]}-000000000000", "kind": kind, "text": text, "gates": gates, "state": state, "added_in": 1}


# halt: <reason> ---------------------------------------------------------------------------------------


def test_an_active_blocker_halts_and_a_gate_still_wins() -> None:
    assert derive_status([entry("blocker", "Staging is down.")]) == "halt: Staging is down."
    assert derive_status([entry("blocker", "A."), entry("blocker", "B.")]) == "halt: A. (+1 more)"
    # A question that does not gate is open work, not a stop; a settled blocker stops nothing.
    assert derive_status([entry("question", "Which region?")]) == "ok"
    assert derive_status([entry("blocker", "Staging is down.", state="resolved")]) == "ok"
    gate = entry("question", "Full or equal jitter?", gates=True)
    assert derive_status([entry("blocker", "Staging is down."), gate]) == "gated: Full or equal jitter?"


def test_a_halted_record_renders_parses_and_dispatches_as_a_halt() -> None:
    intent = {"slug": "deploy", "orientation": "The deploy is mid-flight.", "next": {"move": "hold"},
              "blockers": [{"text": "Staging is down.", "owner": "infra"}]}  # fmt: skip
    record = apply(None, require_valid(intent), PROV).record
    assert record["status"] == "halt: Staging is down."
    note = render(record)
    assert note.splitlines()[0] == "status: halt: Staging is down."
    parsed = parse_note(note)
    assert (parsed.status_kind, parsed.status_reason) == ("halt", "Staging is down.")
    # Seed 0: surface the reason, then dispatch the runnable next move unchanged.
    then = {"action": "wait", "orientation": "The deploy is mid-flight."}
    assert dispatch_record(record) == dispatch(parsed) == {"action": "surface-halt", "reason": "Staging is down.",
                                                           "then": then}  # fmt: skip


@package_only
def test_list_status_halt_selects_halted_works_only(wp: Runner, repo: Path) -> None:
    def checkpoint(slug: str, *extra: str) -> dict[str, Any]:
        reply = wp("checkpoint", slug, "--orientation", f"Working on {slug}.", "--next", "hold", *extra, cwd=repo)
        assert reply.code == 0, reply.stdout
        return dict(reply.json)

    halted = checkpoint("deploy", "--blocker", "Staging is down.")
    assert halted["status"] == "halt: Staging is down."
    assert Path(halted["note_path"]).read_text().startswith("status: halt: Staging is down.\n")
    checkpoint("docs", "--decision", "Use pages.", "--rationale", "Free.")
    checkpoint("jitter", "--question", "Full or equal?", "--gates", "--rationale", "Both are standard.",
               "--blocker", "CI is red.")  # fmt: skip

    def slugs(*args: str) -> list[str]:
        reply = wp("list", "--format", "json", *args, cwd=repo)
        assert reply.code == 0, reply.stdout
        return sorted(w["slug"] for w in reply.json["works"])

    assert slugs("--status", "halt") == ["deploy"]
    assert slugs("--status", "ok") == ["docs"]
    assert slugs("--status", "gated") == slugs("--gated") == ["jitter"]
    assert slugs("--status", "halt: Staging is down.") == ["deploy"]
    assert slugs("--no-gated") == ["deploy", "docs"]


# parents: [<slug>, ...] -------------------------------------------------------------------------------


def work(slug: str) -> dict[str, Any]:
    intent = {"slug": slug, "orientation": f"Working on {slug}.", "next": {"move": "hold"},
              "decisions": [{"text": f"Build {slug}.", "rationale": "Asked for."}]}  # fmt: skip
    return apply(None, require_valid(intent), PROV).record


def test_parents_name_slugs_and_lineage_keeps_the_refs() -> None:
    from wheypoint.model.fork import ForkRequest, fork
    from wheypoint.model.join import JoinRequest, join

    retry, cache = work("retry-backoff"), work("cache-warmup")
    split_off = ForkRequest("retry-jitter", "Jitter is split off.", {"move": "hold"}, copy=(retry["entries"][0]["id"],))
    child = fork(retry, split_off, PROV).child.record
    joined = join(retry, cache, JoinRequest("retry-and-cache", "Both in one.", {"move": "hold"}), PROV).joined.record
    for record, slugs in ((child, ["retry-backoff"]), (joined, ["retry-backoff", "cache-warmup"])):
        note = render(record)
        assert f"parents: [{', '.join(slugs)}]" in note.splitlines()
        assert parse_note(note).parents == slugs  # the round trip: the slugs the seed's reader expects
        # The refs themselves stay in the Lineage section.
        refs = [e["ref"] for e in record["edges"] if e["kind"] in ("forked_from", "joined_from")]
        assert refs and all(r.startswith("wheypoint:shop/") and f"- parent: {r}" in note for r in refs)


# Calibrated tags ----------------------------------------------------------------------------------------


TAGGED = {
    "slug": "retry", "orientation": "Retry backoff is designed.", "next": {"move": "hold"},
    "decisions": [{"text": "Cap at 30 s.", "rationale": "The gateway times out at 45 s.", "confidence": "certain"},
                  {"text": "Log every retry.", "rationale": "Ops asked."},
                  {"text": "Equal jitter may do.", "rationale": "Untested.", "confidence": "don't know"}],
    "directives": [{"text": "Never retry a POST.", "quote": "never retry a POST", "confidence": "speculating"}],
}  # fmt: skip


def test_a_tag_is_a_field_of_the_entry_rendered_before_the_claim_and_parsed_back() -> None:
    record = apply(None, require_valid(TAGGED), PROV).record
    by_text = {e["text"]: e for e in record["entries"]}
    assert by_text["Cap at 30 s."]["confidence"] == "certain" and "confidence" not in by_text["Log every retry."]
    assert SchemaChecker(RECORD).check(record) == []
    note = render(record)
    cap = by_text["Cap at 30 s."]["id"]
    assert f"- `{cap}` `<certain>` Cap at 30 s. (since r1)" in note.splitlines()
    # The round trip: every tagged entry, and only those, reads back with its tag.
    tagged = {e["id"]: e["confidence"] for e in record["entries"] if "confidence" in e}
    assert len(tagged) == 3 and parse_note(note).as_json()["tags"] == tagged
    assert lint_note(note, record) == []
    # The resume packet carries the tag with its claim.
    packet = render_packet(record, 100_000)
    assert [d.get("confidence") for d in packet["decisions"]] == ["certain", None, "don't know"]
    assert packet["directives"][0]["confidence"] == "speculating"


def test_a_record_written_before_tags_still_reads_validates_and_renders() -> None:
    plain = {key: value for key, value in TAGGED.items() if key != "directives"}
    plain["decisions"] = [{k: v for k, v in d.items() if k != "confidence"} for d in TAGGED["decisions"]]
    record = apply(None, require_valid(plain), PROV).record
    assert SchemaChecker(RECORD).check(record) == [] and parse_note(render(record)).as_json()["tags"] == {}


def test_an_unknown_tag_is_refused_with_the_valid_values() -> None:
    for wrong in ("sure", "Certain", "dont-know", "<certain>", ""):
        intent = {**TAGGED, "decisions": [{"text": "Cap.", "rationale": "Why.", "confidence": wrong}]}
        with pytest.raises(Refusal) as refused:
            require_valid(intent)
        [problem] = refused.value.problems
        assert (problem.code, problem.path) == ("bad-value", "$.decisions[0].confidence")
        assert problem.message == "must be one of: certain, speculating, don't know"
    with pytest.raises(Refusal):  # a question carries no tag: it is not a claim
        require_valid({**TAGGED, "questions": [{"text": "Go?", "confidence": "certain"}]})


LEGACY_DECISIONS = """status: ok
next: hold
artifact: none
Retry work is paused.

## Document

**Key decisions and constraints.**
- Cap the backoff at 30 s `<certain>`: the gateway times out at 45 s.
- Use full jitter, because it spreads load.
- <speculating> Equal jitter may be enough.

```text
- **Key decisions.** A fenced example is no claim.
```

### Key decisions

1. Never retry a POST.
"""


def test_lint_warns_on_a_legacy_notes_untagged_key_decisions_with_their_lines() -> None:
    found = [f for f in lint_note(LEGACY_DECISIONS) if f.code == "decision-untagged"]
    assert [(f.severity, f.detail.split(":")[0]) for f in found] == [("advisory", "line 10"), ("advisory", "line 19")]
    assert "Use full jitter" in found[0].detail and clean(lint_note(LEGACY_DECISIONS))


@package_only
def test_the_flag_form_takes_a_tag_after_a_decision_or_directive_only(wp: Runner, repo: Path) -> None:
    reply = wp("checkpoint", "retry", "--orientation", "Retry backoff is designed.", "--next", "hold",
               "--decision", "Cap at 30 s.", "--rationale", "The gateway times out.", "--confidence", "don't know",
               "--directive", "Never retry a POST.", "--quote", "never retry a POST", "--confidence", "certain",
               cwd=repo)  # fmt: skip
    assert reply.code == 0, reply.stdout
    note = Path(reply.json["note_path"]).read_text()
    tags = {"d": "don't know", "v": "certain"}
    assert parse_note(note).as_json()["tags"] == {added: tags[added[0]] for added in reply.json["added"]}
    wrong = wp("checkpoint", "retry", "--decision", "X.", "--rationale", "Y.", "--confidence", "sure", cwd=repo)
    [problem] = wrong.json["error"]["problems"]
    assert wrong.code == 1 and problem["message"] == "must be one of: certain, speculating, don't know"
    unbound = wp("checkpoint", "retry", "--question", "Go?", "--confidence", "certain", cwd=repo)
    assert unbound.json["error"]["code"] == "flag-unbound"


# Dossier evidence pinned @sha7 ------------------------------------------------------------------------


@package_only
def test_dossier_evidence_is_pinned_like_the_working_context(wp: Runner, repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()[:7]
    (repo / "scratch.py").write_text("x\n")  # not tracked: left unpinned, with a warning naming the evidence
    intent = {
        "slug": "jitter", "orientation": "Jitter is undecided.", "next": {"move": "hold"},
        "questions": [{"text": "Full or equal jitter?", "gates": True, "rationale": "Both work.", "label": "jit"}],
        "decision_dossier": [{"fork": "Full or equal jitter?", "gate": "jit", "options": [
            {"option": "Full jitter", "evidence": ["retry.py:2 spreads the load", "scratch.py:1"]},
            {"option": "Equal jitter", "evidence": ["https://example.com/a:1"]},
        ]}],
    }  # fmt: skip
    reply = wp("checkpoint", "-", stdin=json.dumps(intent), cwd=repo)
    assert reply.code == 0, reply.stdout
    assert [(w["code"], w["path"]) for w in reply.json["warnings"]] == [
        ("unpinned-line-ref", "$.decision_dossier[0].options[0].evidence[1]")]  # fmt: skip
    record = wp("show", "jitter", "--format", "json", cwd=repo).json["record"]
    [full, equal] = record["decision_dossier"][0]["options"]
    assert full["evidence"] == [f"retry.py:2@{head} spreads the load", "scratch.py:1"]
    assert equal["evidence"] == ["https://example.com/a:1"]
    assert f"  - Evidence: retry.py:2@{head} spreads the load" in Path(reply.json["note_path"]).read_text()
    # The pin is checked like the others (the evidence is this record's only pin): a change since is reported.
    (repo / "retry.py").write_text("a\nB\nc\n")
    git(repo, "commit", "-qam", "edit retry")
    resolved = wp("resolve", "jitter", "--format", "json", cwd=repo).json
    assert any(f["code"] == "pin-drifted" and "retry.py" in f["detail"] for f in resolved["findings"])


# House style ------------------------------------------------------------------------------------------

STYLE_NOTE = """status: ok
next: hold
artifact: none
Retry backoff is designed \u2014 not built.

## Document

**Goal.** Retries that never double-charge a card.

**State.** The spec is approved. The client is untouched.
Work on the jitter is in flight, e.g. the cap, as Dr. Smith and J. Doe asked.
The next step is the client

- Cap the backoff at 30 s. The gateway times out at 45 s.
- Use full jitter: see `retry.py:12. Not a sentence \u2014 code.`

**Suggested skills.** /hold .cheese/notes/retry.md

> Quoted. Matter is not judged.

```text
Fenced \u2014 text. Is not judged
```
"""


def style_of(findings: list[Any]) -> list[tuple[str, str]]:
    return [(f.code, f.detail.split(":")[0]) for f in findings if f.code.startswith("style-")]


def test_house_style_warns_with_line_numbers_and_never_gates() -> None:
    found = lint_note(STYLE_NOTE)
    assert style_of(found) == [
        ("style-em-dash", "line 4"),
        ("style-sentences-per-line", "line 10"),
        ("style-incomplete-sentence", "line 12"),
        ("style-sentences-per-line", "line 14"),
    ]
    assert all(f.severity == "advisory" for f in found if f.code.startswith("style-")) and clean(found)


def test_a_generated_note_is_judged_on_its_authors_text_only() -> None:
    from test_note_forging import everything, rich_records

    first, second = rich_records()
    for record in (first, second, everything(second)):  # every section the renderer writes, banners included
        assert style_of(lint_note(render(record))) == []
    intent = {"slug": "retry", "orientation": "Retry backoff is designed.", "next": {"move": "hold"},
              "decisions": [{"text": "Cap at 30 s. Then retry once.", "rationale": "The gateway \u2014 it times out."}],
              "notes": "Read the spec first\n\nThen the client."}  # fmt: skip
    note = render(apply(None, require_valid(intent), PROV).record)
    lines = note.split("\n")
    numbered = {code: int(line[5:]) for code, line in style_of(lint_note(note))}
    assert lines[numbered["style-sentences-per-line"] - 1].endswith("Cap at 30 s. Then retry once. (since r1)")
    assert lines[numbered["style-em-dash"] - 1] == "  Why: The gateway \u2014 it times out."
    assert lines[numbered["style-incomplete-sentence"] - 1] == "Read the spec first"


def test_lint_checks_a_halt_against_the_blockers_the_note_lists() -> None:
    intent = {"slug": "deploy", "orientation": "The deploy is mid-flight.", "next": {"move": "hold"},
              "blockers": [{"text": "Staging is down."}]}  # fmt: skip
    note = render(apply(None, require_valid(intent), PROV).record)
    assert [f for f in lint_note(note) if f.code == "status-mismatch"] == []
    # A halt whose blocker was cut from the note (its digest recomputed by hand) is caught without the record.
    cut = "\n".join(line for line in note.split("\n") if not line.startswith("- `b-"))
    from wheypoint.notes.render import note_digest

    forged = cut.replace(cut.split("note_digest: ")[1].split("\n")[0], note_digest(cut))
    [mismatch] = [f for f in lint_note(forged) if f.code == "status-mismatch"]
    assert mismatch.detail == "the status is halt but the note lists no open blocker"


def test_an_untagged_claim_that_opens_with_a_tag_is_not_read_as_tagged() -> None:
    intent = {**TAGGED, "directives": [],
              "decisions": [{"text": "`<certain>` is what the old notes wrote.", "rationale": "A claim about tags."},
                            {"text": "`<don't know>` opens this one too.", "rationale": "Tagged.",
                             "confidence": "speculating"}]}  # fmt: skip
    record = apply(None, require_valid(intent), PROV).record
    note = render(record)
    untagged, tagged = (e["id"] for e in record["entries"])
    assert parse_note(note).as_json()["tags"] == {tagged: "speculating"}
    # The same code span, with a longer fence: CommonMark shows the text as written.
    assert f"- `{untagged}` ``<certain>`` is what the old notes wrote. (since r1)" in note.splitlines()
