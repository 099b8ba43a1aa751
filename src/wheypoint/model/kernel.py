"""The kernel: (head record or none, intent, provenance) -> (new record, revision receipt).

It is pure. No I/O, no clock, no randomness: everything it needs from the world (the capture time,
the git commit, which path:line references are tracked, file digests) arrives in `Provenance`, which
the shell gathers. The same inputs always give the same bytes out, which is what lets a replayed
intent be recognised by its derived revision id and lets another implementation recompute ours.

Why each id is derived the way it is:
- work id `<slug>.<8 hex>`: the hex covers the project key and the slug, so one slug names one work
  per project and two projects never collide in a machine-wide store;
- revision id `rev-<16 hex>`: covers the work, the parent revision and the request digest (the intent
  without its base) and nothing from the clock, so the same intent on the same base derives the same
  id: that is how a retry is answered as a replay instead of being written twice;
- entry id `<kind letter>-<12 hex>`: covers the work, the parent revision, the kind, the position in
  the intent and the text, so it is stable across replays and unique across revisions.

Digests (see canonical.py): record_digest covers the whole record except itself; revision_digest covers
the receipt except itself (and so includes the record_digest); request_digest covers the intent
without base_revision_id.
"""

from __future__ import annotations

from wheypoint.model.canonical import digest, short_hash
from wheypoint.model.contract import HOST_ONLY_EDGE_KINDS, SCHEMA_VERSION
from wheypoint.model.derived import derive_status, notes_stale, orientation_stale
from wheypoint.model.errors import Problem, Refusal
from wheypoint.model.records import Record
from wheypoint.model.refs import pin_text
from wheypoint.model.rules import ENTRY_LISTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

ENTRY_PREFIX = {"directive": "v", "operator_directive": "o", "decision": "d", "question": "q", "blocker": "b"}
LIST_KIND = {
    "directives": "directive",
    "operator_directives": "operator_directive",
    "decisions": "decision",
    "questions": "question",
    "blockers": "blocker",
}
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "and",
        "or",
        "in",
        "on",
        "for",
        "with",
        "is",
        "are",
        "be",
        "we",
        "it",
        "this",
        "that",
        "at",
        "by",
        "from",
    ]
)


class Provenance(Record):
    """What the shell observed about the world for one checkpoint."""

    project_key: str
    captured_at: str
    session: dict[str, str] | None = None
    git: dict[str, Any] | None = None
    # Defaults are shared between records, so they are never mutated: the kernel only reads provenance.
    pins: Mapping[str, str] = {}
    local_refs: frozenset[str] = frozenset()
    file_digests: Mapping[str, str] = {}
    # From the transcript, when one is named: the turn each directive's quote was found in (keyed by the
    # entry's intent path, e.g. `$.directives[0]`), and the verbatim turns the intent's `meat` names.
    quote_turns: Mapping[str, str] = {}
    meat: tuple[dict[str, Any], ...] = ()


class Outcome(Record):
    """A new record, the receipt that describes it, and advisory findings."""

    record: dict[str, Any]
    revision: dict[str, Any]
    warnings: list[Problem]


def deep_copy(value: Any) -> Any:
    """A deep copy of JSON data (objects, arrays, scalars), as read from the head record before it is changed.

    Written out rather than `copy.deepcopy`, whose import (with `weakref`) costs a millisecond of every write.
    """
    if isinstance(value, dict):
        return {key: deep_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [deep_copy(item) for item in value]
    return value


def slug_words(text: str) -> list[str]:
    """The words a slug is made of: the runs of ASCII lower-case letters and digits in the lower-cased text (what
    `[^a-z0-9]+` splits apart, without loading `re`)."""
    return "".join(c if "a" <= c <= "z" or "0" <= c <= "9" else " " for c in text.lower()).split()


def derive_slug(text: str) -> str:
    """A slug from free text: significant words, lowercase, dash-joined, at most 48 characters."""
    words = slug_words(text)
    significant = [w for w in words if w not in _STOPWORDS] or words
    slug = ""
    for word in significant[:6]:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > 48:
            break
        slug = candidate
    from wheypoint.model.shapes import RESERVED_SLUGS

    return f"{slug}-work" if slug in RESERVED_SLUGS else slug or "work"


def work_id_for(project_key: str, slug: str) -> str:
    return f"{slug}.{short_hash({'project': project_key, 'slug': slug}, 8)}"


def request_digest(intent: Mapping[str, Any]) -> str:
    return digest({k: v for k, v in intent.items() if k != "base_revision_id"})


def revision_id_for(work_id: str, parent_revision_id: str | None, request: str) -> str:
    return "rev-" + short_hash({"work_id": work_id, "parent": parent_revision_id, "request": request}, 16)


def genesis_identity(intent: Mapping[str, Any], project_key: str) -> tuple[str, str]:
    """The (slug, work id) a first checkpoint creates: the author's slug, else one from the orientation."""
    slug = intent.get("slug") or derive_slug(str(intent.get("orientation", "")))
    return slug, work_id_for(project_key, slug)


def record_refs(record: Mapping[str, Any]) -> list[str]:
    """Every reference a record makes: context lines, artifact links and edges."""
    refs = list(record.get("working_context", []))
    refs += [link["ref"] for link in record.get("artifact_links", [])]
    refs += [edge["ref"] for edge in record.get("edges", [])]
    return refs


class _Builder:
    """One application of an intent; collects every problem before refusing."""

    def __init__(self, head: Mapping[str, Any] | None, intent: Mapping[str, Any], prov: Provenance) -> None:
        self.head = head
        self.intent = intent
        self.prov = prov
        self.problems: list[Problem] = []
        self.number = head["revision_number"] + 1 if head else 1
        self.parent = head["revision_id"] if head else None
        if head:
            self.slug, self.work_id = head["slug"], head["work_id"]
        else:
            self.slug, self.work_id = genesis_identity(intent, prov.project_key)
        self.request = request_digest(intent)
        self.revision_id = revision_id_for(self.work_id, self.parent, self.request)
        self.entries: list[dict[str, Any]] = deep_copy(head["entries"]) if head else []
        self.labels: dict[str, str] = {}
        self.added: list[str] = []

    def refuse_if_any(self) -> None:
        if self.problems:
            raise Refusal("invalid-intent", f"the intent has {len(self.problems)} problem(s)", self.problems)

    def check_genesis(self) -> None:
        if self.head is not None:
            return
        for key in ("orientation", "next"):
            if key not in self.intent:
                self.problems.append(Problem("missing-field", f"$.{key}", "a first checkpoint states it"))
        if not any(self.intent.get(name) for name in ENTRY_LISTS) and not self.intent.get("notes"):
            self.problems.append(Problem("empty-genesis", "$", "a first checkpoint needs an entry or notes"))
        if "work_id" in self.intent:
            self.problems.append(Problem("record-missing", "$.work_id", f"no work {self.intent['work_id']} exists"))

    def check_compaction(self) -> bool:
        proof = self.intent.get("compaction")
        if proof is None:
            return False
        head = self.head
        if head is None or proof["rehydrated_from_revision_id"] != head["revision_id"]:
            current = head["revision_id"] if head else "none"
            self.problems.append(
                Problem(
                    "stale-compaction-proof",
                    "$.compaction.rehydrated_from_revision_id",
                    f"the proof must name the head revision ({current}); re-read and retry",
                )
            )
        elif proof["rehydrated_record_digest"] != head["record_digest"]:
            self.problems.append(
                Problem(
                    "stale-compaction-proof",
                    "$.compaction.rehydrated_record_digest",
                    "does not match the head record's digest",
                )
            )
        return True

    def add_entries(self) -> None:
        for list_name in ENTRY_LISTS:
            kind = LIST_KIND[list_name]
            for index, given in enumerate(self.intent.get(list_name, [])):
                entry_id = (
                    ENTRY_PREFIX[kind]
                    + "-"
                    + short_hash(
                        {
                            "work_id": self.work_id,
                            "parent": self.parent,
                            "kind": kind,
                            "index": index,
                            "text": given["text"],
                        },
                        12,
                    )
                )
                entry: dict[str, Any] = {
                    "id": entry_id,
                    "kind": kind,
                    "text": given["text"],
                    "gates": bool(given.get("gates", False)),
                    "state": "active",
                    "added_in": self.number,
                }
                for key in ("quote", "rationale", "owner", "when", "confidence"):
                    if key in given:
                        entry[key] = given[key]
                quote_turn = self.prov.quote_turns.get(f"$.{list_name}[{index}]")
                if quote_turn is not None:
                    entry["quote_turn"] = quote_turn
                self.entries.append(entry)
                self.added.append(entry_id)
                if "label" in given:
                    self.labels[given["label"]] = entry_id

    def resolve(self, ref: str, path: str) -> str | None:
        """An entry id for a label or an id; records a problem when it names nothing."""
        if ref in self.labels:
            return self.labels[ref]
        if any(e["id"] == ref for e in self.entries):
            return ref
        self.problems.append(Problem("unknown-entry", path, f"no entry {ref} in this record"))
        return None

    def apply_transitions(self) -> list[dict[str, Any]]:
        by_id = {e["id"]: e for e in self.entries}
        moved: list[dict[str, Any]] = []
        for index, transition in enumerate(self.intent.get("transitions", [])):
            path = f"$.transitions[{index}]"
            entry = by_id.get(transition["entry"])
            if entry is None:
                self.problems.append(Problem("unknown-entry", f"{path}.entry", f"no entry {transition['entry']}"))
                continue
            if entry["state"] != "active":
                self.problems.append(
                    Problem(
                        "inactive-entry",
                        f"{path}.entry",
                        f"{entry['id']} is already {entry['state']}; only active entries move",
                    )
                )
                continue
            settled: dict[str, Any] = {
                "action": transition["action"],
                "rationale": transition["rationale"],
                "revision_number": self.number,
            }
            receipt: dict[str, Any] = {"entry": entry["id"], "action": transition["action"]}
            if "by" in transition:
                successor = self.resolve(transition["by"], f"{path}.by")
                if successor is None:
                    continue
                if successor == entry["id"] or by_id[successor]["state"] != "active":
                    self.problems.append(
                        Problem("bad-successor", f"{path}.by", "the successor must be another, active entry")
                    )
                    continue
                settled["by"] = receipt["by"] = successor
            entry["state"] = {"resolve": "resolved", "supersede": "superseded", "withdraw": "withdrawn"}[
                transition["action"]
            ]
            entry["settled"] = settled
            moved.append(receipt)
        return moved

    def artifact_links(self) -> tuple[list[dict[str, Any]], list[str], list[str]]:
        links = deep_copy(self.head["artifact_links"]) if self.head else []
        removed: list[str] = []
        for index, ref in enumerate(self.intent.get("remove_artifact_links", [])):
            kept = [link for link in links if link["ref"] != ref]
            if len(kept) == len(links):
                self.problems.append(
                    Problem(
                        "unknown-link", f"$.remove_artifact_links[{index}]", f"no artifact link {ref!r} in this record"
                    )
                )
            links = kept
            removed.append(ref)
        added: list[str] = []
        for index, given in enumerate(self.intent.get("artifact_links", [])):
            covers = [
                self.resolve(ref, f"$.artifact_links[{index}].covers[{pos}]")
                for pos, ref in enumerate(given.get("covers", []))
            ]
            link: dict[str, Any] = {
                "ref": given["ref"],
                "covers": [c for c in covers if c],
                "digest": self.prov.file_digests.get(given["ref"]),
                "added_in": self.number,
            }
            pinned = pin_text(given["ref"], self.prov.pins)
            if pinned != given["ref"]:
                link["pinned"] = pinned
            links = [old for old in links if old["ref"] != given["ref"]] + [link]
            added.append(given["ref"])
        return links, added, removed

    def edges(self) -> tuple[list[dict[str, Any]], list[str], list[str]]:
        """The head's edges with `remove_links` taken out, then `links` added: (edges, added refs, removed refs)."""
        edges = deep_copy(self.head["edges"]) if self.head else []
        removed: list[str] = []
        for index, gone in enumerate(self.intent.get("remove_links", [])):
            path = f"$.remove_links[{index}]"
            hit = [e for e in edges if e["ref"] == gone["ref"] and gone.get("kind", e["kind"]) == e["kind"]]
            if not hit:
                self.problems.append(Problem("unknown-link", path, f"no edge to {gone['ref']!r} in this record"))
            elif any(e["kind"] in HOST_ONLY_EDGE_KINDS for e in hit):  # lineage is the runtime's: a fork wrote it
                self.problems.append(Problem("host-only-edge", path, f"the edge to {gone['ref']!r} is a fork's"))
            edges = [e for e in edges if not any(e is h for h in hit)]
            removed.append(gone["ref"])
        added: list[str] = []
        for index, given in enumerate(self.intent.get("links", [])):
            edge: dict[str, Any] = {"ref": given["ref"], "kind": given["kind"], "added_in": self.number}
            if "rationale" in given:
                edge["rationale"] = given["rationale"]
            if "covers" in given:
                found = [self.resolve(r, f"$.links[{index}].covers[{n}]") for n, r in enumerate(given["covers"])]
                edge["covers"] = [entry_id for entry_id in found if entry_id]
            edges = [old for old in edges if (old["ref"], old["kind"]) != (given["ref"], given["kind"])] + [edge]
            added.append(given["ref"])
        return edges, added, removed

    def dossier(self) -> list[dict[str, Any]]:
        forks = deep_copy(self.head["decision_dossier"]) if self.head else []
        for index, given in enumerate(self.intent.get("decision_dossier", [])):
            gate = self.resolve(given["gate"], f"$.decision_dossier[{index}].gate") if "gate" in given else None
            # Evidence is cited as path:line, pinned @sha7 like the working context (the shell found the pins).
            options = [
                {**option, "evidence": [pin_text(item, self.prov.pins) for item in option["evidence"]]}
                if "evidence" in option else option
                for option in given["options"]
            ]  # fmt: skip
            fork: dict[str, Any] = {
                "fork": given["fork"],
                "gate": gate,
                "options": options,
                "added_in": self.number,
            }
            if "prior_leaning" in given:
                fork["prior_leaning"] = given["prior_leaning"]
            forks.append(fork)
        return forks


def apply(head: Mapping[str, Any] | None, intent: Mapping[str, Any], prov: Provenance) -> Outcome:
    """Apply a schema-valid intent to the head record (None for a first checkpoint)."""
    b = _Builder(head, intent, prov)
    b.check_genesis()
    compacted = b.check_compaction()
    b.add_entries()
    transitioned = b.apply_transitions()
    links, links_added, links_removed = b.artifact_links()
    edges, edges_added, edges_removed = b.edges()
    forks = b.dossier()
    b.refuse_if_any()

    old_notes = head["notes"] if head else ""
    notes = intent.get("notes", old_notes)
    notes_changed = notes != old_notes
    decision_moves = [t for t in transitioned if _kind_of(b.entries, t["entry"]) == "decision"]
    decisions_changed = bool(intent.get("decisions")) or bool(decision_moves)
    context = (
        [pin_text(item, prov.pins) for item in intent.get("working_context", [])]
        if ("working_context" in intent)
        else list(head["working_context"] if head else [])
    )

    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "work_id": b.work_id,
        "slug": b.slug,
        "project_key": head["project_key"] if head else prov.project_key,
        "revision_id": b.revision_id,
        "revision_number": b.number,
        "parent_revision_id": b.parent,
        "created_at": head["created_at"] if head else prov.captured_at,
        "updated_at": prov.captured_at,
        "status": derive_status(b.entries),
        "orientation": intent.get("orientation", head["orientation"] if head else ""),
        # Restating the orientation, even in the same words, is the writer saying it is still true.
        "orientation_revision": b.number if "orientation" in intent or not head else _orientation_revision(head),
        "next": intent.get("next", head["next"] if head else {}),
        "entries": b.entries,
        "decision_dossier": forks,
        "notes": notes,
        "notes_revision": b.number if notes_changed or not head else head["notes_revision"],
        "decisions_revision": b.number if decisions_changed or not head else head["decisions_revision"],
        "working_context": context,
        "artifact_links": links,
        "edges": edges,
        "local_references": [],
        "meat": _merge_meat(head["meat"] if head else [], prov.meat, b.number),
        "session": prov.session,
        "git": prov.git,
    }
    known_local = prov.local_refs | set(head["local_references"] if head else ())
    record["local_references"] = sorted({r for r in record_refs(record) if r in known_local})
    record["record_digest"] = digest(record)

    revision = make_receipt(record, b.request, prov.captured_at, added=b.added, transitioned=transitioned,
                            links_added=links_added + edges_added, links_removed=links_removed + edges_removed,
                            notes_changed=notes_changed,
                            compacted=compacted)  # fmt: skip
    return Outcome(record, revision, advisories(record))


def make_receipt(
    record: Mapping[str, Any], request: str, captured_at: str, *, added: list[str],
    transitioned: list[dict[str, Any]], links_added: list[str], links_removed: list[str] | None = None,
    notes_changed: bool = False, compacted: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """The revision receipt of a new record: what it changed; revision_digest covers the rest of the receipt."""
    receipt: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "revision_id": record["revision_id"],
        "work_id": record["work_id"],
        "revision_number": record["revision_number"],
        "parent_revision_id": record["parent_revision_id"],
        "request_digest": request,
        "record_digest": record["record_digest"],
        "captured_at": captured_at,
        "added": added,
        "transitioned": transitioned,
        "links_added": links_added,
        "links_removed": links_removed or [],
        "notes_changed": notes_changed,
        "compacted": compacted,
    }
    receipt["revision_digest"] = digest(receipt)
    return receipt


def advisories(record: Mapping[str, Any]) -> list[Problem]:
    """The warnings a new record earns: notes or orientation left behind by changed decisions, a dropped move."""
    warnings: list[Problem] = []
    if record["next"].get("move") == "cut":  # seed 1's move, dropped by seed 2: still read, no longer advised
        warnings.append(Problem("move-dropped", "$.next.move", "seed 2 dropped `cut`; it stays accepted for notes "
                                "and agents of seed 1: write `cook` with the artifact for new work"))  # fmt: skip
    if notes_stale(record):
        warnings.append(
            Problem("stale-notes", "$.notes", "decisions changed since the notes were last written; update the notes")
        )
    if orientation_stale(record):
        restate = "restate it (--orientation), in the same words if it still holds"
        warnings.append(
            Problem(
                "stale-orientation", "$.orientation", f"decisions changed since the orientation was stated; {restate}"
            )
        )
    return warnings


def _orientation_revision(head: Mapping[str, Any]) -> int:
    """When the head's orientation was stated; a head from before that was kept is taken as stating it."""
    stated = head.get("orientation_revision")
    return stated if isinstance(stated, int) else int(head["revision_number"])


def _merge_meat(old: list[dict[str, Any]], new: tuple[dict[str, Any], ...], number: int) -> list[dict[str, Any]]:
    """Meat accumulates like entries: a turn named again replaces its earlier copy, nothing else goes."""
    turns = {item["turn"] for item in new}
    return [item for item in old if item["turn"] not in turns] + [{**item, "added_in": number} for item in new]


def _kind_of(entries: list[dict[str, Any]], entry_id: str) -> str | None:
    return next((e["kind"] for e in entries if e["id"] == entry_id), None)
