"""Intent validation: every refusal code, all problems at once, and agreement with a standard validator."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from wheypoint.model.contract import CONTRACTS
from wheypoint.model.errors import Refusal
from wheypoint.model.intake import intent_problems, parse_json_document
from wheypoint.model.kernel import Provenance, apply
from wheypoint.model.rules import opens_markdown_block
from wheypoint.model.shapes import SLUG_PATTERN, WORK_ID_PATTERN, is_slug, is_work_id

GOOD: dict[str, Any] = {
    "slug": "retry-backoff",
    "orientation": "Retry backoff is designed, not built.",
    "next": {"move": "cook", "artifact": "specs/retry.md"},
    "directives": [{"text": "No retries on POST.", "quote": "never retry POSTs"}],
    "decisions": [{"text": "Cap at 30 s.", "rationale": "The gateway gives up at 45 s."}],
    "questions": [
        {"text": "Full or equal jitter?", "gates": True, "rationale": "Both work.", "label": "jitter",
         "owner": "lead", "when": "before the build"},
    ],
    "decision_dossier": [
        {"fork": "Full or equal jitter?", "gate": "jitter", "prior_leaning": "full",
         "options": [{"option": "full", "evidence": ["retry.py:3"], "breaks": "nothing"}, {"option": "equal"}]},
    ],
    "notes": "Short report.\nSecond line.",
    "working_context": ["retry.py:2"],
    "artifact_links": [{"ref": "specs/retry.md", "covers": ["jitter"]}],
    "links": [{"ref": "wheypoint:shop/other.0123abcd", "kind": "relates_to"}],
}  # fmt: skip


def codes(intent: Any) -> list[str]:
    return [p.code for p in intent_problems(intent)]


def changed(**edits: Any) -> dict[str, Any]:
    intent = copy.deepcopy(GOOD)
    for key, value in edits.items():
        if value is None:
            intent.pop(key, None)
        else:
            intent[key] = value
    return intent


def test_the_good_intent_is_valid() -> None:
    assert intent_problems(GOOD) == []


@pytest.mark.parametrize(
    ("edit", "code", "path"),
    [
        ({"surprise": 1}, "unknown-key", "$.surprise"),
        ({"decisions": [{"text": "x", "rationale": "y", "colour": "red"}]}, "unknown-key", "$.decisions[0].colour"),
        ({"status": "ok"}, "status-authored", "$.status"),
        ({"baseline": {"tests": 3}}, "baseline-refused", "$.baseline"),
        ({"revision_id": "rev-0000000000000000"}, "runtime-derived", "$.revision_id"),
        ({"decisions": [{"id": "d-000000000000", "text": "x", "rationale": "y"}]}, "runtime-derived",
         "$.decisions[0].id"),
        ({"next": {"move": "affinage"}}, "affinage-needs-pr", "$.next.artifact"),
        ({"next": {"move": "affinage", "artifact": "my branch"}}, "affinage-needs-pr", "$.next.artifact"),
        ({"next": {"move": "cook"}}, "artifact-required", "$.next.artifact"),
        ({"next": {"move": "cut"}}, "artifact-required", "$.next.artifact"),
        ({"notes": "x" * 6001}, "notes-too-long", "$.notes"),
        ({"artifact_links": []}, "empty-link-list", "$.artifact_links"),
        ({"remove_artifact_links": []}, "empty-link-list", "$.remove_artifact_links"),
        ({"questions": [{"text": "Go?", "gates": True, "label": "g"}],
          "decision_dossier": [{"fork": "Go?", "gate": "g", "options": [{"option": "a"}, {"option": "b"}]}],
          "artifact_links": None}, "gate-needs-rationale", "$.questions[0].rationale"),
        ({"transitions": [{"entry": "q-0123456789ab", "action": "fork", "rationale": "r"}]},
         "fork-transition-refused", "$.transitions[0].action"),
        ({"links": [{"ref": "wheypoint:p/w.01234567", "kind": "forked_from"}]}, "host-only-edge", "$.links[0].kind"),
        ({"notes": "token ghp_" + "a1B2c3D4e5" * 4}, "secret-pattern", "$.notes"),
        ({"session": {"harness": "claude-code", "id": "abc"}}, "session-authored", "$.session"),
        ({"orientation": "status: ok"}, "orientation-shape", "$.orientation"),
        ({"orientation": "# Heading"}, "orientation-shape", "$.orientation"),
        ({"orientation": "two\nlines"}, "orientation-shape", "$.orientation"),
        ({"working_context": ["a\nb"]}, "single-line-field", "$.working_context[0]"),
        ({"notes": "bell \x07"}, "control-character", "$.notes"),
        ({"next": {"move": "hold", "tasks": [{"slug": "a", "intent": "cook", "command": "/cook"}]}},
         "tasks-without-tasks-move", "$.next.tasks"),
        ({"next": {"move": "tasks"}}, "tasks-required", "$.next.tasks"),
        ({"next": {"move": "tasks", "parallel": {"worktree_strategy": "create"},
                   "tasks": [{"slug": "a", "intent": "cook", "command": "c", "branch": "b", "branch_from": "m"}]}},
         "task-fields", "$.next.parallel.worktree_root"),
        ({"next": {"move": "tasks", "parallel": {"worktree_strategy": "existing"},
                   "tasks": [{"slug": "a", "intent": "cook", "command": "/cook a", "branch": "b"}]}},
         "task-fields", "$.next.tasks[0].worktree"),
        ({"next": {"move": "tasks", "parallel": {"worktree_strategy": "existing"}, "tasks": [
            {"slug": "a", "intent": "cook", "command": "c", "branch": "b1", "branch_from": "m", "worktree": "/w"},
            {"slug": "b", "intent": "cook", "command": "c", "branch": "b2", "branch_from": "m", "worktree": "/w"}]}},
         "task-worktree-shared", "$.next.tasks[1].worktree"),
        ({"next": {"items": [{"skill": "briesearch", "arg": "q"}]}}, "next-order-required", "$.next.order"),
        ({"next": {"move": "hold", "items": [{"skill": "culture", "arg": "q"}], "order": "parallel"}},
         "next-shape", "$.next"),
        ({"next": {"items": [{"skill": "cook", "arg": "q"}], "order": "parallel"}}, "bad-value",
         "$.next.items[0].skill"),
        ({"next": {"move": "sail"}}, "bad-value", "$.next.move"),
        ({"decisions": [{"text": "x"}]}, "missing-field", "$.decisions[0].rationale"),
        ({"directives": [{"text": "x"}]}, "missing-field", "$.directives[0].quote"),
        ({"decisions": "x"}, "wrong-type", "$.decisions"),
        ({"slug": "Bad Slug"}, "bad-format", "$.slug"),
        ({"transitions": [{"entry": "q-0123456789ab", "action": "resolve", "rationale": "r", "by": "jitter"}]},
         "successor-without-supersede", "$.transitions[0].by"),
        ({"transitions": [{"entry": "q-0123456789ab", "action": "resolve", "rationale": "r"},
                          {"entry": "q-0123456789ab", "action": "withdraw", "rationale": "r"}]},
         "duplicate-transition", "$.transitions[1].entry"),
        ({"artifact_links": [{"ref": "a", "covers": ["nolabel"]}]}, "unknown-label", "$.artifact_links[0].covers[0]"),
        ({"work_id": "other.0123abcd"}, "work-slug-mismatch", "$.slug"),
        ({"decisions": [{"text": "a", "rationale": "b"}] * 65}, "too-many", "$.decisions"),
    ],
)  # fmt: skip
def test_each_refusal_has_its_code_and_path(edit: dict[str, Any], code: str, path: str) -> None:
    problems = intent_problems(changed(**edit))
    assert (code, path) in [(p.code, p.path) for p in problems], problems


def test_seed_2_forms_are_valid_a_plain_gate_and_a_supersede_without_successor() -> None:
    plain_gate = changed(questions=[{"text": "Go?", "gates": True, "rationale": "Both ship dates hold."}],
                         decision_dossier=None, artifact_links=None)  # fmt: skip
    assert intent_problems(plain_gate) == []
    bare = changed(transitions=[{"entry": "q-0123456789ab", "action": "supersede", "rationale": "Outdated."}])
    assert intent_problems(bare) == []


def test_all_problems_are_reported_at_once() -> None:
    # A token body as random as a real one: a repeated pattern has too little entropy for the gitleaks rule.
    intent = changed(status="ok", next={"move": "cook"}, notes="key ghp_" + "aB3xK9mQ2vL7pR4tW8yZ1cD6fG0hJ5nSe7Uk",
                     surprise=True)  # fmt: skip
    found = codes(intent)
    for code in ("status-authored", "artifact-required", "secret-pattern", "unknown-key"):
        assert code in found


def test_a_credential_is_named_by_rule_never_echoed() -> None:
    secret = "AKIA" + "QWERTYUIOPASDFGH"
    problems = intent_problems(changed(notes=f"the key is {secret}"))
    hit = next(p for p in problems if p.code == "secret-pattern")
    assert "aws-access-token" in hit.message  # the gitleaks rule's own name (docs/credentials.md)
    assert secret not in hit.message


def test_prose_about_tokens_and_keys_is_not_a_credential() -> None:
    notes = "The token is refreshed hourly; set OPENAI_API_KEY in the env; the API key lives in 1Password."
    assert intent_problems(changed(notes=notes)) == []


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"{", "invalid-json"),
        (b"\xff\xfe{}", "invalid-utf8"),
        (b'{"a": 1, "a": 2}', "duplicate-key"),
        (b'{"a": NaN}', "invalid-json"),
        (b"[" * 100000 + b"]" * 100000, "invalid-json"),
        (b" " * (1024 * 1024 + 1), "intent-too-large"),
    ],
)
def test_malformed_documents_are_refused_with_a_code(data: bytes, code: str) -> None:
    with pytest.raises(Refusal) as caught:
        parse_json_document(data)
    assert caught.value.code == code


def test_non_object_intents_are_wrong_type() -> None:
    assert codes([1, 2]) == ["wrong-type"]
    assert codes("text") == ["wrong-type"]


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_published_schemas_are_valid_draft_2020_12(name: str) -> None:
    schema = CONTRACTS[name]
    jsonschema.Draft202012Validator.check_schema(schema)  # raises SchemaError on a schema that is not 2020-12
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"urn:wheypoint:schema:{name}:1"
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft202012Validator
    # Every $ref resolves inside the schema: a dangling one would only fail on the first instance that reaches it.
    refs = set(re.findall(r'"\$ref": "#/\$defs/([^"]+)"', json.dumps(schema)))
    assert refs <= set(schema.get("$defs", {})), sorted(refs - set(schema.get("$defs", {})))
    # And a real document of its kind passes the standard validator (the intent; the record and receipt it makes).
    outcome = apply(None, GOOD, Provenance(project_key="shop", captured_at="2026-11-30T10:00:00Z"))
    real = {"checkpoint-intent": GOOD, "wheypoint-record": outcome.record, "wheypoint-revision": outcome.revision}
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(real[name])) == []


def test_a_standard_validator_agrees_on_schema_level_verdicts() -> None:
    validator = jsonschema.Draft202012Validator(CONTRACTS["checkpoint-intent"])
    assert validator.is_valid(GOOD)
    for edit in ({"surprise": 1}, {"notes": "x" * 6001}, {"artifact_links": []}, {"next": {"move": "sail"}},
                 {"decisions": [{"text": "x"}]}, {"slug": "Bad Slug"}):  # fmt: skip
        assert not validator.is_valid(changed(**edit)), edit


# A block opener; or a whole line CommonMark reads as a setext underline or a thematic break.
_BLOCK = re.compile(r"^\s*(?:#|>|[-*+]\s|```|~~~|\d+[.)]\s|<)|^\s*(?:(?:=\s*)+|(?:-\s*)+|(?:\*\s*){3,}|(?:_\s*){3,})$")


@given(st.lists(st.sampled_from(list(" \t\u00a0#><`~-*+=_1\u0663.)ab")), max_size=8).map("".join))
def test_markdown_block_openers_are_told_by_string_tests_as_the_pattern_says(text: str) -> None:
    assert opens_markdown_block(text) == bool(_BLOCK.match(text))


@given(st.text(alphabet="ab9z-.A_", max_size=52))
def test_slugs_are_told_by_string_tests_as_the_pattern_says(text: str) -> None:
    assert is_slug(text) == bool(re.fullmatch(SLUG_PATTERN.strip("^$"), text))


@given(st.lists(st.sampled_from(["a", "z", "0", "9", "f", "g", "-", ".", "\n", "x", "1a2b3c4d", "retry", "A",
                                 "\u0663", " "]), max_size=12).map("".join))
@example("retry-backoff.1a2b3c4d\n")
@example("r.1a2b3c4d\n\n")
@example("-r.1a2b3c4d")
@example(("a" * 48) + ".1a2b3c4d")
@example(("a" * 49) + ".1a2b3c4d")
def test_work_ids_are_told_by_string_tests_as_the_pattern_says(text: str) -> None:
    assert is_work_id(text) == (re.match(WORK_ID_PATTERN, text) is not None)
