"""The JSON contracts: checkpoint intent, record and revision, each defined once as JSON Schema.

`wheypoint schema <name>` prints these documents and `schemacheck.SchemaChecker` enforces them, so the
published contract and the validator cannot drift apart. Rules that span several fields (a gating
question needs a rationale, next: cook needs an artifact, ...) live in `rules.py`.
"""

from __future__ import annotations

from wheypoint.model.shapes import (
    CONFIDENCE_TAGS,
    DIGEST_PATTERN,
    ENTRY_ID_PATTERN,
    LABEL_PATTERN,
    MEAT_TYPES,
    READABLE_HARNESSES,
    REVISION_ID_PATTERN,
    SLUG_PATTERN,
    WORK_ID_PATTERN,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1
DRAFT = "https://json-schema.org/draft/2020-12/schema"

# Limits. Text fields are short on purpose: a handoff is read cold, and artifacts are linked, not pasted.
MAX_TEXT = 2000
MAX_QUOTE = 8000
MAX_NOTES = 6000
MAX_ORIENTATION = 300
MAX_LIST = 64

NEXT_MOVES = (
    "mold",
    "cut",
    "cook",
    "press",
    "age",
    "cure",
    "affinage",
    "briesearch",
    "culture",
    "hold",
    "tasks",
    "done",
)
READ_ONLY_MOVES = ("briesearch", "culture")
EDGE_KINDS = ("supersedes", "superseded_by", "relates_to", "implements", "informs", "checkpoints", "blocked_by")
HOST_ONLY_EDGE_KINDS = ("forked_from", "forked_to", "joined_from", "joined_into")
HARNESSES = (*READABLE_HARNESSES, "other")
ENTRY_KINDS = ("directive", "operator_directive", "decision", "question", "blocker")
ENTRY_STATES = ("active", "resolved", "superseded", "withdrawn", "moved")
TRANSITION_ACTIONS = ("resolve", "supersede", "withdraw")
# What a record and its receipt may say of a settled entry: the agents' actions, and `move`, which only the
# runtime's fork writes (an entry moved into a child work; `to` names that work).
RECORD_ACTIONS = (*TRANSITION_ACTIONS, "move")
# Seed 0's calibrated tags, which a decision or a directive may carry: how sure the writer is of the claim.
_CONFIDENCE = {"enum": list(CONFIDENCE_TAGS), "description": "seed 0's calibrated tag: how sure the claim is"}
MAX_MEAT_TEXT = 20000


# Keys an author might send that the runtime derives: refused with their own code, never dropped.
_DERIVED_KEYS = {
    key: "runtime-derived"
    for key in (
        "id",
        "revision_id",
        "revision_number",
        "record_digest",
        "revision_digest",
        "request_digest",
        "parent_revision_id",
        "created_at",
        "updated_at",
        "project_key",
        "schema_version",
        "state",
    )
}
# `session` is provenance: the runtime fills it from the transcript it read, never from what an author wrote.
_REFUSED_TOP = {**_DERIVED_KEYS, "status": "status-authored", "baseline": "baseline-refused",
                "session": "session-authored"}  # fmt: skip
_REFUSED_ENTRY = {**_DERIVED_KEYS, "status": "status-authored", "baseline": "baseline-refused"}


def _text(max_length: int = MAX_TEXT, *, code: str | None = None, description: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": max_length}
    if code:
        schema["x-code"] = code
    if description:
        schema["description"] = description
    return schema


def _list(items: dict[str, Any], *, min_items: int = 0, code: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": items, "maxItems": MAX_LIST}
    if min_items:
        schema["minItems"] = min_items
    if code:
        schema["x-code"] = code
    return schema


def _object(properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        "x-refused-keys": _REFUSED_ENTRY,
    }
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


def _pattern(pattern: str, description: str) -> dict[str, Any]:
    return {"type": "string", "pattern": pattern, "description": description}


# An edge kind an agent may write; the fork's own kinds are refused by name rather than as unknown.
_EDGE_KIND = {"enum": list(EDGE_KINDS), "x-refused-values": dict.fromkeys(HOST_ONLY_EDGE_KINDS, "host-only-edge")}
_ENTRY_REF = _pattern(
    f"^(?:{ENTRY_ID_PATTERN[1:-1]}|{LABEL_PATTERN[1:-1]})$",
    "an entry id (d-/q-/b-/v-/o- and 12 hex) or a label given to an entry in this intent",
)

_INTENT_DEFS: dict[str, Any] = {
    "label": _pattern(LABEL_PATTERN, "a label: lowercase letter, then up to 31 of [a-z0-9_-]"),
    "entry_ref": _ENTRY_REF,
    "directive": _object(
        {
            "text": _text(description="the rule the user set, in the agent's words"),
            "quote": _text(MAX_QUOTE, description="the user's own words, verbatim"),
            "confidence": _CONFIDENCE,
            "label": {"$ref": "#/$defs/label"},
        },
        ("text", "quote"),
        description="A constraint or preference the user stated; the quote is their verbatim words.",
    ),
    "decision": _object(
        {"text": _text(), "rationale": _text(), "confidence": _CONFIDENCE, "label": {"$ref": "#/$defs/label"}},
        ("text", "rationale"),
        description="A choice taken, with why.",
    ),
    "question": _object(
        {
            "text": _text(),
            "gates": {"type": "boolean", "description": "true when a human must decide before work goes on"},
            "rationale": _text(),
            "owner": _text(200),
            "when": _text(200, description="the trigger or time at which it must be answered"),
            "label": {"$ref": "#/$defs/label"},
        },
        ("text",),
        description="An open question or blocker; a gating one needs a rationale and a dossier fork.",
    ),
    "transition": _object(
        {
            "entry": _pattern(ENTRY_ID_PATTERN, "the id of an active entry of the record"),
            "action": {"enum": list(TRANSITION_ACTIONS), "x-refused-values": {"fork": "fork-transition-refused"}},
            "rationale": _text(),
            "by": _ENTRY_REF,
        },
        ("entry", "action", "rationale"),
        description="Moves an active entry out of active; supersede names its successor in `by`.",
    ),
    "option": _object(
        {
            "option": _text(),
            "evidence": _list(_text(500)),
            "breaks": _text(description="what choosing this option breaks or costs"),
        },
        ("option",),
    ),
    "fork": _object(
        {
            "fork": _text(description="the decision to be made"),
            "gate": _ENTRY_REF,
            "options": {
                "type": "array",
                "items": {"$ref": "#/$defs/option"},
                "minItems": 2,
                "maxItems": 16,
                "x-code": "dossier-options",
            },
            "prior_leaning": _text(),
        },
        ("fork", "options"),
        description="A decision dossier fork; `gate` names the gating entry it explains.",
    ),
    "artifact_link": _object(
        {
            "ref": _text(1000, description="a repository path (optionally path:line), an absolute path, xdg: or URL"),
            "covers": {"type": "array", "items": _ENTRY_REF, "maxItems": MAX_LIST},
        },
        ("ref",),
    ),
    "edge": _object(
        {
            "ref": _text(1000, description="the related work (wheypoint:<project>/<work>) or any reference"),
            "kind": _EDGE_KIND,
            "rationale": _text(),
            "covers": {"type": "array", "items": _ENTRY_REF, "maxItems": MAX_LIST},
        },
        ("ref", "kind"),
    ),
    "unlink": _object(
        {
            "ref": _text(1000, description="the edge's reference, as it was written"),
            "kind": _EDGE_KIND,
        },
        ("ref",),
        description="An edge to remove: every edge to `ref`, or only the one of `kind`.",
    ),
    "next_item": _object(
        {"skill": {"enum": list(READ_ONLY_MOVES)}, "arg": _text(300)},
        ("skill", "arg"),
    ),
    "task": _object(
        {
            "slug": _pattern(SLUG_PATTERN, "a lowercase slug"),
            "intent": {"enum": list(NEXT_MOVES)},
            "repo": _text(1000),
            "worktree": _text(1000),
            "branch": _text(300),
            "branch_from": _text(300),
            "command": _text(1000),
        },
        ("slug", "intent", "command"),
    ),
    "parallel": _object(
        {
            "isolation": {"enum": ["git-worktree", "harness"]},
            "worktree_strategy": {"enum": ["existing", "create", "harness"]},
            "worktree_root": _text(1000),
        },
        ("worktree_strategy",),
    ),
    "next": _object(
        {
            "move": {"enum": list(NEXT_MOVES)},
            "artifact": _text(1000),
            "items": {"type": "array", "items": {"$ref": "#/$defs/next_item"}, "minItems": 1, "maxItems": 16},
            "order": {"enum": ["parallel", "sequential"]},
            "tasks": {"type": "array", "items": {"$ref": "#/$defs/task"}, "minItems": 1, "maxItems": 32},
            "parallel": {"$ref": "#/$defs/parallel"},
        },
        description="The next move: one `move`, or a list of read-only `items` with an `order`.",
    ),
    "session": _object(
        {"harness": {"enum": list(HARNESSES)}, "id": _text(200)},
        ("harness", "id"),
    ),
    "meat": _object(
        {
            "turn": _text(300, description="a turn id from `wheypoint turns`; its text is copied verbatim"),
            "type": {"enum": list(MEAT_TYPES)},
            "weight": {"type": "integer", "minimum": 1, "maximum": 3, "description": "3 load-bearing, 1 background"},
            "redact": {"type": "boolean", "description": "replace each credential in the copy by [redacted <rule>] "
                       "(the record says where) instead of refusing the turn"},
        },
        ("turn", "type"),
        description="A transcript turn whose exact words the record keeps (the runtime copies them).",
    ),
    "compaction": _object(
        {
            "rehydrated_from_revision_id": _pattern(REVISION_ID_PATTERN, "the revision the agent re-read"),
            "rehydrated_record_digest": _pattern(DIGEST_PATTERN, "that revision's record_digest"),
        },
        ("rehydrated_from_revision_id", "rehydrated_record_digest"),
    ),
}

CHECKPOINT_INTENT: dict[str, Any] = {
    "$schema": DRAFT,
    "$id": "urn:wheypoint:schema:checkpoint-intent:1",
    "title": "wheypoint checkpoint intent",
    "description": "What an agent sends to `wheypoint checkpoint`. Every id, digest and the status are derived.",
    "type": "object",
    "additionalProperties": False,
    "x-refused-keys": _REFUSED_TOP,
    "properties": {
        "work_id": _pattern(WORK_ID_PATTERN, "an existing work id: <slug>.<8 hex>"),
        "slug": _pattern(SLUG_PATTERN, "lowercase letters, digits and single dashes, at most 48"),
        "base_revision_id": _pattern(REVISION_ID_PATTERN, "the head revision this write builds on"),
        "orientation": _text(MAX_ORIENTATION, description="one line: where the work is and what is mid-flight"),
        "next": {"$ref": "#/$defs/next"},
        "directives": _list({"$ref": "#/$defs/directive"}),
        "operator_directives": _list({"$ref": "#/$defs/directive"}),
        "decisions": _list({"$ref": "#/$defs/decision"}),
        "questions": _list({"$ref": "#/$defs/question"}),
        "blockers": _list({"$ref": "#/$defs/question"}),
        "decision_dossier": _list({"$ref": "#/$defs/fork"}),
        "notes": {
            "type": "string",
            "maxLength": MAX_NOTES,
            "x-code": "notes-too-long",
            "description": "the report a cold reader needs (replaces the previous notes)",
        },
        "working_context": _list(_text(1000)),
        "artifact_links": _list({"$ref": "#/$defs/artifact_link"}, min_items=1, code="empty-link-list"),
        "remove_artifact_links": _list(_text(1000), min_items=1, code="empty-link-list"),
        "transitions": _list({"$ref": "#/$defs/transition"}),
        "links": _list({"$ref": "#/$defs/edge"}),
        "remove_links": _list({"$ref": "#/$defs/unlink"}, min_items=1, code="empty-link-list"),
        "meat": _list({"$ref": "#/$defs/meat"}),
        "compaction": {"$ref": "#/$defs/compaction"},
    },
    "$defs": _INTENT_DEFS,
}


def _closed(properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    """An output object: every key documented, nothing else allowed."""
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 0}
_NULLABLE_STR = {"type": ["string", "null"]}

_RECORD_DEFS: dict[str, Any] = {
    "entry": _closed(
        {
            "id": _pattern(ENTRY_ID_PATTERN, "derived: kind prefix + 12 hex"),
            "kind": {"enum": list(ENTRY_KINDS)},
            "text": _STR,
            "quote": _STR,
            "rationale": _STR,
            "gates": {"type": "boolean"},
            "owner": _STR,
            "when": _STR,
            "confidence": {"enum": list(CONFIDENCE_TAGS), "description": "absent in records written before"},
            "quote_turn": {"type": "string", "description": "the transcript turn the quote was found in"},
            "state": {"enum": list(ENTRY_STATES)},
            "added_in": _INT,
            "settled": _closed(
                {
                    "action": {"enum": list(RECORD_ACTIONS)},
                    "rationale": _STR,
                    "revision_number": _INT,
                    "by": _pattern(ENTRY_ID_PATTERN, "the successor of a superseded entry"),
                    "to": _pattern(WORK_ID_PATTERN, "the work a moved entry went to (fork)"),
                },
                ("action", "rationale", "revision_number"),
            ),
        },
        ("id", "kind", "text", "gates", "state", "added_in"),
    ),
    "fork": _closed(
        {
            "fork": _STR,
            "gate": {"type": ["string", "null"]},
            "options": {"type": "array", "items": _INTENT_DEFS["option"]},
            "prior_leaning": _STR,
            "added_in": _INT,
        },
        ("fork", "gate", "options", "added_in"),
    ),
    "artifact_link": _closed(
        {
            "ref": _STR,
            "pinned": _STR,
            "covers": {"type": "array", "items": {"type": "string"}},
            "digest": {"type": ["string", "null"]},
            "added_in": _INT,
        },
        ("ref", "covers", "digest", "added_in"),
    ),
    "edge": _closed(
        {
            "ref": _STR,
            "kind": _STR,
            "rationale": _STR,
            "covers": {"type": "array", "items": _STR},
            "added_in": _INT,
            "revision": _pattern(REVISION_ID_PATTERN, "forked_from: the parent's revision the fork was taken from"),
        },
        ("ref", "kind", "added_in"),
    ),
    "git": _closed({"branch": _NULLABLE_STR, "commit": _STR}, ("branch", "commit")),
    "meat_item": _closed(
        {
            "turn": _STR,
            "type": {"enum": list(MEAT_TYPES)},
            "weight": {"type": "integer", "minimum": 1, "maximum": 3},
            "kind": _STR,
            "timestamp": _NULLABLE_STR,
            "text": _STR,
            "harness": _STR,
            "session_id": _NULLABLE_STR,
            "added_in": _INT,
            "redacted": {"type": "array", "items": _closed({"rule": _STR, "start": _INT, "end": _INT},
                                                           ("rule", "start", "end"))},
        },
        ("turn", "type", "weight", "kind", "timestamp", "text", "harness", "session_id", "added_in"),
        description="A transcript turn copied byte for byte by the runtime.",
    ),
}

_ORIENTATION_REVISION = "the revision that last stated the orientation (absent in records written before)"

RECORD: dict[str, Any] = {
    "$schema": DRAFT,
    "$id": "urn:wheypoint:schema:wheypoint-record:1",
    "title": "wheypoint record",
    "description": "The state of one work item at one revision. Immutable once written.",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "schema_version",
        "work_id",
        "slug",
        "project_key",
        "revision_id",
        "revision_number",
        "parent_revision_id",
        "created_at",
        "updated_at",
        "status",
        "orientation",
        "next",
        "entries",
        "decision_dossier",
        "notes",
        "notes_revision",
        "decisions_revision",
        "working_context",
        "artifact_links",
        "edges",
        "local_references",
        "meat",
        "session",
        "git",
        "record_digest",
    ],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "work_id": _pattern(WORK_ID_PATTERN, "<slug>.<8 hex of the project key and slug>"),
        "slug": _pattern(SLUG_PATTERN, "the human name; also the note's file name"),
        "project_key": _STR,
        "revision_id": _pattern(REVISION_ID_PATTERN, "rev- + 16 hex of work, parent and request digest"),
        "revision_number": {"type": "integer", "minimum": 1},
        "parent_revision_id": {"type": ["string", "null"]},
        "created_at": _STR,
        "updated_at": _STR,
        "status": _pattern(r"^(ok|gated: .+|halt: .+)$", "derived: `gated: <decision>` while a gating entry is "
                           "active, else `halt: <reason>` while a blocker is"),
        "orientation": _STR,
        "orientation_revision": _INT | {"description": _ORIENTATION_REVISION},
        "next": _INTENT_DEFS["next"] | {"x-refused-keys": {}},
        "entries": {"type": "array", "items": {"$ref": "#/$defs/entry"}},
        "decision_dossier": {"type": "array", "items": {"$ref": "#/$defs/fork"}},
        "notes": _STR,
        "notes_revision": _INT,
        "decisions_revision": _INT,
        "working_context": {"type": "array", "items": _STR},
        "artifact_links": {"type": "array", "items": {"$ref": "#/$defs/artifact_link"}},
        "edges": {"type": "array", "items": {"$ref": "#/$defs/edge"}},
        "local_references": {"type": "array", "items": _STR},
        "meat": {"type": "array", "items": {"$ref": "#/$defs/meat_item"}},
        "session": _INTENT_DEFS["session"] | {"type": ["object", "null"]},
        "git": _RECORD_DEFS["git"] | {"type": ["object", "null"]},
        "record_digest": _pattern(DIGEST_PATTERN, "sha256 over the canonical record without this key"),
    },
    "$defs": {**_INTENT_DEFS, **_RECORD_DEFS},
}

REVISION: dict[str, Any] = {
    "$schema": DRAFT,
    "$id": "urn:wheypoint:schema:wheypoint-revision:1",
    "title": "wheypoint revision receipt",
    "description": "What one checkpoint changed; the chain of receipts is the work's log.",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "schema_version",
        "revision_id",
        "work_id",
        "revision_number",
        "parent_revision_id",
        "request_digest",
        "record_digest",
        "captured_at",
        "added",
        "transitioned",
        "links_added",
        "links_removed",
        "notes_changed",
        "compacted",
        "revision_digest",
    ],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "revision_id": _pattern(REVISION_ID_PATTERN, "rev- + 16 hex"),
        "work_id": _pattern(WORK_ID_PATTERN, "the work this revision belongs to"),
        "revision_number": {"type": "integer", "minimum": 1},
        "parent_revision_id": {"type": ["string", "null"]},
        "request_digest": _pattern(DIGEST_PATTERN, "sha256 over the intent without base_revision_id"),
        "record_digest": _pattern(DIGEST_PATTERN, "the digest of the record this revision produced"),
        "captured_at": _STR,
        "added": {"type": "array", "items": _STR},
        "transitioned": {
            "type": "array",
            "items": _closed(
                {"entry": _STR, "action": {"enum": list(RECORD_ACTIONS)}, "by": _STR, "to": _STR},
                ("entry", "action"),
            ),
        },
        "links_added": {"type": "array", "items": _STR},
        "links_removed": {"type": "array", "items": _STR},
        "notes_changed": {"type": "boolean"},
        "compacted": {"type": "boolean"},
        "revision_digest": _pattern(DIGEST_PATTERN, "sha256 over the canonical receipt without this key"),
    },
}

CONTRACTS: dict[str, dict[str, Any]] = {
    "checkpoint-intent": CHECKPOINT_INTENT,
    "wheypoint-record": RECORD,
    "wheypoint-revision": REVISION,
}
CONTRACT_ALIASES = {"record": "wheypoint-record", "revision": "wheypoint-revision", "intent": "checkpoint-intent"}
