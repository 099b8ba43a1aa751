"""Fork, the pure half: (the parent's head, a fork request, provenance) -> the child's genesis and the parent's move.

A fork splits part of a work off into a new work. It writes two records that only make sense together,
so the store commits them in one transaction (Store.commit_many): the child's first revision, carrying one
`forked_from` edge to the parent's head revision, and a revision of the parent in which the entries that
went are settled as `moved` (with `to` naming the child) and a `forked_to` edge names the child.

What goes where (docs/work-graph.md says the same for users):
- `move`: active entries that leave the parent. They keep their ids in the child, and in the parent they
  are settled `moved`, so a gate split off no longer gates the parent. A moved gate takes its dossier along.
- `copy`: active directives, operator directives and decisions, kept in both works (the user's rules and
  what was decided still hold in the child). An open question or blocker cannot be copied: two works
  would each wait on one answer, and answering it in one would leave the other stale. Move it instead.
- `dossier`: the dossier of a gate that stays, copied into the child as context.
- Everything else stays with the parent. The child starts with the parent's working context, the artifact
  links that cover an entry it received, no notes and no meat (turns belong to the session that kept them).

Ids are derived as the kernel derives them (see kernel.py): the child's work id from the project and its
slug, each revision id from its work, its parent revision and the digest of the fork request, so the same
fork of the same head is recognised as a replay, and a fork of a later head is a different fork.
"""

from __future__ import annotations

from wheypoint.model.canonical import digest
from wheypoint.model.contract import SCHEMA_VERSION
from wheypoint.model.derived import derive_status
from wheypoint.model.errors import Problem, Refusal
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

COPYABLE = ("directive", "operator_directive", "decision")


class ForkRequest(Record):
    """What the caller asked for: the child's name and first words, and which entries go or are copied."""

    child_slug: str
    orientation: str
    next: dict[str, Any]
    move: tuple[str, ...] = ()
    copy: tuple[str, ...] = ()
    dossier: tuple[str, ...] = ()

    def canonical(self, parent_work_id: str, parent_revision_id: str) -> dict[str, Any]:
        """The request as the digest sees it: everything that shapes the two records."""
        return {"fork_of": parent_work_id, "parent_revision_id": parent_revision_id, "slug": self.child_slug,
                "orientation": self.orientation, "next": self.next, "move": list(self.move),
                "copy": list(self.copy), "dossier": list(self.dossier)}  # fmt: skip

    def digest_on(self, parent: Mapping[str, Any]) -> str:
        """The request digest of this fork taken from `parent`'s head: what both new revision ids derive from."""
        return digest(self.canonical(parent["work_id"], parent["revision_id"]))


class Forked(Record):
    """Both halves of a fork."""

    child: Outcome
    parent: Outcome


def work_ref(project_key: str, work_id: str) -> str:
    """How an edge names another work of the store."""
    return f"wheypoint:{project_key}/{work_id}"


def identities(parent: Mapping[str, Any], request: ForkRequest) -> tuple[str, str, str]:
    """(child work id, child revision id, parent's new revision id) of this fork of `parent`."""
    child_work = work_id_for(parent["project_key"], request.child_slug)
    request_digest = request.digest_on(parent)
    return (child_work, revision_id_for(child_work, None, request_digest),
            revision_id_for(parent["work_id"], parent["revision_id"], request_digest))  # fmt: skip


class Spelling(Record):
    """How a command names the entry lists of a fork request: fork's `--move/--copy`, or split's `--to-first/--both`."""

    move: str = "--move"
    copy: str = "--copy"
    at: str = "$"  # the JSON path a problem is reported under
    copy_at: str = "$.copy"
    instead: str = "--move it instead"  # what an open question or blocker that cannot be copied takes


FORK_SPELLING = Spelling()


def check(parent: Mapping[str, Any], request: ForkRequest, spelling: Spelling = FORK_SPELLING,
          require: bool = True) -> list[Problem]:  # fmt: skip
    """Every reason this fork cannot be taken from `parent`, at once (`require`: naming nothing is one)."""
    problems: list[Problem] = []
    by_id = {entry["id"]: entry for entry in parent["entries"]}
    if require and not (request.move or request.copy or request.dossier):
        problems.append(Problem("empty-fork", spelling.at, f"a fork splits something off: name entries to "
                                f"{spelling.move} or {spelling.copy}"))  # fmt: skip
    for flag, ids, at in (("move", request.move, f"{spelling.at}.move"), ("copy", request.copy, spelling.copy_at),
                          ("dossier", request.dossier, f"{spelling.at}.dossier")):  # fmt: skip
        named = getattr(spelling, flag, "--dossier")
        seen: set[str] = set()
        for index, entry_id in enumerate(ids):
            path = f"{at}[{index}]"
            entry = by_id.get(entry_id)
            if entry_id in seen:
                problems.append(Problem("fork-repeated", path, f"{entry_id} is named twice in {named}"))
            seen.add(entry_id)
            if entry is None:
                problems.append(Problem("unknown-entry", path, f"no entry {entry_id} in {parent['work_id']}"))
            elif entry["state"] != "active":
                problems.append(Problem("inactive-entry", path, f"{entry_id} is already {entry['state']}; "
                                        "only active entries are forked"))  # fmt: skip
            elif flag == "copy" and entry["kind"] not in COPYABLE:
                problems.append(Problem("fork-copy-open", path, f"{entry_id} is an open {entry['kind']}: two works "
                                        f"would wait on one answer; {spelling.instead}"))  # fmt: skip
            elif flag == "dossier" and not any(f["gate"] == entry_id for f in parent["decision_dossier"]):
                problems.append(Problem("unknown-dossier", path, f"{entry_id} has no decision dossier to copy"))
    for index, entry_id in enumerate(request.copy):
        if entry_id in request.move:
            problems.append(Problem("fork-overlap", f"{spelling.copy_at}[{index}]",
                                    f"{entry_id} cannot both be in {spelling.move} and {spelling.copy}"))  # fmt: skip
    return problems


def fork(parent: Mapping[str, Any], request: ForkRequest, prov: Provenance, *, checked: bool = False,
         notes: str = "") -> Forked:  # fmt: skip
    """The child's genesis and the parent's next revision; refused with every problem when the fork is wrong.

    `checked`: the caller (split) has checked the request its own way; `notes`: the child's first notes."""
    problems = [] if checked else check(parent, request)
    if problems:
        raise Refusal("invalid-fork", f"the fork has {len(problems)} problem(s)", problems)
    child_work, child_revision, parent_revision = identities(parent, request)
    request_digest = request.digest_on(parent)
    going = set(request.move) | set(request.copy)
    given = [_fresh(entry) for entry in parent["entries"] if entry["id"] in going]
    dossier = [
        {**deep_copy(item), "added_in": 1}
        for item in parent["decision_dossier"]
        if item["gate"] in request.move or item["gate"] in request.dossier
    ]
    links = []
    for link in parent["artifact_links"]:
        covers = [entry_id for entry_id in link["covers"] if entry_id in going]
        if covers:
            links.append({**deep_copy(link), "covers": covers, "added_in": 1})
    child: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "work_id": child_work,
        "slug": request.child_slug,
        "project_key": parent["project_key"],
        "revision_id": child_revision,
        "revision_number": 1,
        "parent_revision_id": None,
        "created_at": prov.captured_at,
        "updated_at": prov.captured_at,
        "status": derive_status(given),
        "orientation": request.orientation,
        "orientation_revision": 1,
        "next": deep_copy(request.next),
        "entries": given,
        "decision_dossier": dossier,
        "notes": notes,
        "notes_revision": 1,
        "decisions_revision": 1,
        "working_context": list(parent["working_context"]),
        "artifact_links": links,
        "edges": [_edge(work_ref(parent["project_key"], parent["work_id"]), "forked_from", 1, parent["revision_id"])],
        "local_references": [],
        "meat": [],
        "session": prov.session,
        "git": prov.git,
    }
    parent_local = set(parent["local_references"])
    child["local_references"] = sorted({ref for ref in record_refs(child) if ref in parent_local})
    child["record_digest"] = digest(child)
    child_receipt = make_receipt(child, request_digest, prov.captured_at, added=[e["id"] for e in given],
                                 transitioned=[], links_added=[link["ref"] for link in links])  # fmt: skip

    moved = moved_on(parent, set(request.move), child_work, "forked_to", parent_revision, request_digest, prov)
    return Forked(Outcome(child, child_receipt, advisories(child)), moved)


def moved_on(parent: Mapping[str, Any], ids: set[str], to_work: str, kind: str, revision_id: str,
             request_digest: str, prov: Provenance) -> Outcome:  # fmt: skip
    """The parent's next revision after a fork or join: the entries `ids` settled `moved` to `to_work`, and an
    edge of `kind` (forked_to, joined_into) naming it. Its status is derived again; its decisions changed when a
    decision moved (so its notes and orientation are flagged as stated before)."""
    number = int(parent["revision_number"]) + 1
    entries = deep_copy(parent["entries"])
    moves = []
    how = "by a fork" if kind == "forked_to" else "by a join"
    for entry in entries:
        if entry["id"] in ids:
            entry["state"] = "moved"
            entry["settled"] = {"action": "move", "rationale": f"moved to {to_work} {how}", "revision_number": number,
                                "to": to_work}  # fmt: skip
            moves.append({"entry": entry["id"], "action": "move", "to": to_work})
    decisions_moved = any(e["kind"] == "decision" for e in entries if e["id"] in ids)
    after = {
        **deep_copy(dict(parent)),
        "revision_id": revision_id,
        "revision_number": number,
        "parent_revision_id": parent["revision_id"],
        "updated_at": prov.captured_at,
        "status": derive_status(entries),
        "entries": entries,
        "decisions_revision": number if decisions_moved else parent["decisions_revision"],
        "orientation_revision": parent.get("orientation_revision", parent["revision_number"]),
        "edges": [*deep_copy(parent["edges"]), _edge(work_ref(parent["project_key"], to_work), kind, number)],
        "session": prov.session,
        "git": prov.git,
    }
    after.pop("record_digest", None)
    after["record_digest"] = digest(after)
    receipt = make_receipt(after, request_digest, prov.captured_at, added=[], transitioned=moves, links_added=[])
    return Outcome(after, receipt, advisories(after))


def _edge(ref: str, kind: str, added_in: int, revision: str | None = None) -> dict[str, Any]:
    edge: dict[str, Any] = {"ref": ref, "kind": kind, "added_in": added_in}
    if revision is not None:
        edge["revision"] = revision
    return edge


def _fresh(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An active entry as the child receives it: its id, kind and words kept, added in the child's first revision."""
    copied: dict[str, Any] = deep_copy(dict(entry))
    copied["added_in"] = 1
    return copied


class Split(Record):
    """Seed 0's split: two children of one work, every active entry given to one of them or to both."""

    first: ForkRequest
    second: ForkRequest

    def check(self, parent: Mapping[str, Any]) -> list[Problem]:
        """What fork checks for each side, in split's own flags and once each (an id given `--both` is in both
        sides' requests), plus: every active entry is given somewhere, once per side, and each side gets one."""
        problems: list[Problem] = []
        for side, request in (("first", self.first), ("second", self.second)):
            spelling = Spelling(f"--to-{side}", "--both", f"$.{side}", "$.both",
                                "give it to one side instead (--to-first or --to-second)")  # fmt: skip
            problems += [p for p in check(parent, request, spelling, require=False) if p not in problems]
        active = [e["id"] for e in parent["entries"] if e["state"] == "active"]
        for side, request in (("first", self.first), ("second", self.second)):
            if active and not (request.move or request.copy):
                problems.append(Problem("empty-fork", f"$.{side}", f"the {side} child gets no entry: give it one "
                                        f"with --to-{side} or --both"))  # fmt: skip
        if self.first.child_slug == self.second.child_slug:
            problems.append(Problem("split-same-slug", "$.second", "the two children need two slugs"))
        given = set(self.first.move) | set(self.first.copy) | set(self.second.move) | set(self.second.copy)
        for index, entry_id in enumerate(self.first.move):
            if entry_id in self.second.move:
                problems.append(Problem("fork-overlap", f"$.first.move[{index}]", f"{entry_id} is given to both "
                                        "sides: use --both to copy it into each"))  # fmt: skip
        unassigned = [e["id"] for e in parent["entries"] if e["state"] == "active" and e["id"] not in given]
        if unassigned:
            listed = ", ".join(unassigned)
            problems.append(Problem("split-unassigned", "$", f"every active entry goes to a side: {listed} are given "
                                    "to none (--to-first, --to-second or --both)"))  # fmt: skip
        return problems


def split(parent: Mapping[str, Any], request: Split, prov: Provenance) -> tuple[Outcome, Outcome, Outcome, Outcome]:
    """(first child, second child, the parent's move to the first, then to the second): four revisions, one commit.

    The parent keeps nothing active: an entry given to both children is settled `moved` to the first.
    """
    problems = request.check(parent)
    if problems:
        raise Refusal("invalid-fork", f"the split has {len(problems)} problem(s)", problems)
    # A thread with nothing open (notes only, say) can still be split: each child then starts from its notes.
    notes = "" if any(e["state"] == "active" for e in parent["entries"]) else str(parent["notes"])
    first = fork(parent, request.first, prov, checked=True, notes=notes)
    second = fork(parent, request.second, prov, checked=True, notes=notes)
    _, _, to_first = identities(parent, request.first)
    first_digest = request.first.digest_on(parent)
    after_first = moved_on(parent, set(request.first.move) | set(request.first.copy), first.child.record["work_id"],
                           "forked_to", to_first, first_digest, prov)  # fmt: skip
    second_digest = request.second.digest_on(parent)
    to_second = revision_id_for(parent["work_id"], to_first, second_digest)
    after_second = moved_on(after_first.record, set(request.second.move), second.child.record["work_id"], "forked_to",
                            to_second, second_digest, prov)  # fmt: skip
    return first.child, second.child, after_first, after_second
