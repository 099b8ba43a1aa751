"""Join, the pure half: (the heads of two works, a request) -> the joined work's genesis and each parent's move.

Seed 0's `--join A B` merges two interrupted threads into one. All three records are committed in one
transaction (Store.commit_many): the joined work's first revision, with a `joined_from` edge to each parent's
head revision, and a revision of each parent in which every active entry is settled `moved` (with `to` naming
the joined work) and a `joined_into` edge names it, so a resumer of either parent is sent on (resolve's
`superseded-by-fork`).

How the two are merged, field by field (docs/work-graph.md says the same for users):
- active entries are unioned with their ids kept; one id in both (they share a fork ancestor) is kept once;
- directives are never dropped: every active directive and operator directive of both is carried;
- the same decision in both (same kind and the same words, whitespace and case aside) is kept once, A's;
- a contradiction is never resolved silently: an entry active in one parent but settled in the other (by id;
  it is not carried), or an entry each parent replaced by a different successor (both successors are carried),
  becomes a finding of the reply and a gating question of the joined work, gated until a person answers it;
- working context, artifact links (with `covers` narrowed to what was carried), other edges and the verbatim
  turns (meat) are unioned, A's first; notes start empty (each parent's notes describe that parent).
"""

from __future__ import annotations

from wheypoint.model.canonical import digest, short_hash
from wheypoint.model.contract import SCHEMA_VERSION
from wheypoint.model.derived import derive_status
from wheypoint.model.errors import Refusal
from wheypoint.model.fork import moved_on, work_ref
from wheypoint.model.kernel import (
    Outcome,
    Provenance,
    advisories,
    deep_copy,
    make_receipt,
    record_refs,
    revision_id_for,
    work_id_for,
)
from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

LINEAGE = ("forked_from", "forked_to", "joined_from", "joined_into")


class JoinRequest(Record):
    slug: str
    orientation: str
    next: dict[str, Any]

    def canonical(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
        return {"join": [a["work_id"], b["work_id"]], "revisions": [a["revision_id"], b["revision_id"]],
                "slug": self.slug, "orientation": self.orientation, "next": self.next}  # fmt: skip


class Joined(Record):
    joined: Outcome
    parents: tuple[Outcome, Outcome]
    contradictions: list[dict[str, Any]]


def identities(a: Mapping[str, Any], b: Mapping[str, Any], request: JoinRequest) -> tuple[str, str, str, str]:
    """(joined work id, its revision id, A's new revision id, B's new revision id)."""
    joined = work_id_for(a["project_key"], request.slug)
    request_digest = digest(request.canonical(a, b))
    return (joined, revision_id_for(joined, None, request_digest),
            revision_id_for(a["work_id"], a["revision_id"], request_digest),
            revision_id_for(b["work_id"], b["revision_id"], request_digest))  # fmt: skip


def _words(text: str) -> str:
    return " ".join(text.split()).casefold()


def contradictions(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What the two parents disagree on, structurally (by entry id and state, never by reading the words):

    - `settled-in-one`: an entry active in one parent and settled (resolved, superseded, withdrawn) in the other;
    - `two-successors`: an entry both superseded, each by a different successor (two decisions or directives
      that each replace it, both still active in their parent).
    """
    found = []
    b_by_id = {e["id"]: e for e in b["entries"]}
    a_by_id = {e["id"]: e for e in a["entries"]}
    for holder, settler, theirs in ((a, b, b_by_id), (b, a, a_by_id)):
        for entry in holder["entries"]:
            other = theirs.get(entry["id"])
            if entry["state"] == "active" and other is not None and other["state"] not in ("active", "moved"):
                found.append({"conflict": "settled-in-one", "entry": entry["id"], "kind": entry["kind"],
                              "text": entry["text"], "active_in": holder["work_id"], "settled_in": settler["work_id"],
                              "state": other["state"], "by": (other.get("settled") or {}).get("by")})  # fmt: skip
    for entry in a["entries"]:
        other = b_by_id.get(entry["id"])
        mine = (entry.get("settled") or {}).get("by")
        theirs_by = ((other or {}).get("settled") or {}).get("by")
        if mine and theirs_by and mine != theirs_by:
            successors = {a["work_id"]: mine, b["work_id"]: theirs_by}
            found.append({"conflict": "two-successors", "entry": entry["id"], "kind": entry["kind"],
                          "text": entry["text"], "successors": successors})  # fmt: skip
    return found


QUESTION_QUOTE_LIMIT = 48  # the disputed entry's words in its gate's question; the rationale has them all


def _question(conflict: Mapping[str, Any]) -> str:
    """The gating question a contradiction becomes in the joined work: short, as it is also the status line.

    It names the entry by its words and the parents by their slugs; the ids, the whole text and the states
    are in the question's rationale (`_disagreement`)."""
    words = " ".join(conflict["text"].split())
    if len(words) > QUESTION_QUOTE_LIMIT:
        words = words[: QUESTION_QUOTE_LIMIT - 1].rstrip() + "\u2026"
    if conflict["conflict"] == "two-successors":
        (first, by_first), (second, by_second) = conflict["successors"].items()
        return f"Which replaces {words!r}: {by_first} ({_slug(first)}) or {by_second} ({_slug(second)})?"
    return f"Keep {words!r}? {conflict['state']} in {_slug(conflict['settled_in'])}, active in " + (
        f"{_slug(conflict['active_in'])}")  # fmt: skip


def _slug(work_id: str) -> str:
    return work_id.partition(".")[0]


def _disagreement(conflict: Mapping[str, Any]) -> str:
    """The whole contradiction in words, for the rationale of its gate."""
    what = f"{conflict['kind']} {conflict['entry']} ({conflict['text']!r})"
    if conflict["conflict"] == "two-successors":
        (first, by_first), (second, by_second) = conflict["successors"].items()
        return f"{what} was replaced by {by_first} in {first} and by {by_second} in {second}"
    return f"{what} is active in {conflict['active_in']} but {conflict['state']} in {conflict['settled_in']}"


def join(a: Mapping[str, Any], b: Mapping[str, Any], request: JoinRequest, prov: Provenance) -> Joined:
    if a["work_id"] == b["work_id"]:
        raise Refusal("join-same-work", f"{a['work_id']} cannot be joined with itself", usage=True)
    conflicts = contradictions(a, b)
    disputed = {c["entry"] for c in conflicts if c["conflict"] == "settled-in-one"}  # two successors are both kept
    joined_work, joined_revision, a_revision, b_revision = identities(a, b, request)
    entries: list[dict[str, Any]] = []
    seen_ids: set[str] = set()
    seen_decisions: set[tuple[str, str]] = set()
    for parent in (a, b):
        for entry in parent["entries"]:
            if entry["state"] != "active" or entry["id"] in seen_ids or entry["id"] in disputed:
                continue
            key = (entry["kind"], _words(entry["text"]))
            if entry["kind"] == "decision" and key in seen_decisions:
                continue
            seen_ids.add(entry["id"])
            seen_decisions.add(key)
            entries.append({**deep_copy(entry), "added_in": 1})
    for conflict in conflicts:
        question = _question(conflict)
        entries.append({"id": "q-" + short_hash({"join": joined_revision, "entry": conflict["entry"]}),
                        "kind": "question", "text": question, "gates": True, "state": "active", "added_in": 1,
                        "rationale": f"The joined threads disagree: {_disagreement(conflict)}. A join never "
                                     "picks a side. options: keep it | drop it; leaning: none"})  # fmt: skip
    if not entries:
        raise Refusal("empty-join", "neither work has an active entry to carry: nothing to join")
    carried = {entry["id"] for entry in entries}
    joined: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "work_id": joined_work, "slug": request.slug,
        "project_key": a["project_key"], "revision_id": joined_revision, "revision_number": 1,
        "parent_revision_id": None, "created_at": prov.captured_at, "updated_at": prov.captured_at,
        "status": derive_status(entries), "orientation": request.orientation, "orientation_revision": 1,
        "next": deep_copy(request.next), "entries": entries,
        "decision_dossier": [{**deep_copy(f), "added_in": 1} for p in (a, b) for f in p["decision_dossier"]
                             if f["gate"] in carried],
        "notes": "", "notes_revision": 1, "decisions_revision": 1,
        "working_context": list(dict.fromkeys([*a["working_context"], *b["working_context"]])),
        "artifact_links": _union_links(a, b, carried),
        "edges": [*_union_edges(a, b),
                  *({"ref": work_ref(p["project_key"], p["work_id"]), "kind": "joined_from", "added_in": 1,
                     "revision": p["revision_id"]} for p in (a, b))],
        "local_references": [], "meat": _union_meat(a, b), "session": prov.session, "git": prov.git,
    }  # fmt: skip
    local = set(a["local_references"]) | set(b["local_references"])
    joined["local_references"] = sorted({ref for ref in record_refs(joined) if ref in local})
    joined["record_digest"] = digest(joined)
    request_digest = digest(request.canonical(a, b))
    receipt = make_receipt(joined, request_digest, prov.captured_at, added=[e["id"] for e in entries],
                           transitioned=[], links_added=[link["ref"] for link in joined["artifact_links"]])  # fmt: skip
    parents = tuple(
        moved_on(
            p,
            {e["id"] for e in p["entries"] if e["state"] == "active"},
            joined_work,
            "joined_into",
            rev,
            request_digest,
            prov,
        )
        for p, rev in ((a, a_revision), (b, b_revision))
    )
    return Joined(Outcome(joined, receipt, advisories(joined)), (parents[0], parents[1]), conflicts)


def _union_links(a: Mapping[str, Any], b: Mapping[str, Any], carried: set[str]) -> list[dict[str, Any]]:
    links: dict[str, dict[str, Any]] = {}
    for parent in (a, b):
        for link in parent["artifact_links"]:
            if link["ref"] not in links:
                links[link["ref"]] = {**deep_copy(link), "covers": [c for c in link["covers"] if c in carried],
                                      "added_in": 1}  # fmt: skip
    return list(links.values())


def _union_edges(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    for parent in (a, b):
        for edge in parent["edges"]:
            if edge["kind"] not in LINEAGE and (edge["ref"], edge["kind"]) not in edges:
                edges[(edge["ref"], edge["kind"])] = {**deep_copy(edge), "added_in": 1}
    return list(edges.values())


def _union_meat(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    meat: dict[str, dict[str, Any]] = {}
    for parent in (a, b):
        for item in parent["meat"]:
            meat.setdefault(item["turn"], {**deep_copy(item), "added_in": 1})
    return list(meat.values())
