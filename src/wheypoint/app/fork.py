"""`wheypoint fork`: split entries of a work into a new child work, both revisions in one transaction, both notes.

The records come from the pure model/fork.py; this module finds the parent, checks the request against the
command's own rules (slug, next move, base), observes the checkout, commits the child's genesis and the
parent's move together through Store.commit_many, then writes both notes.
"""

from __future__ import annotations

from wheypoint.app.checkpoint import write_note
from wheypoint.app.context import Context, NoteOptions, written_from
from wheypoint.app.lookup import find_work
from wheypoint.model.errors import Problem, Refusal
from wheypoint.model.fork import ForkRequest, Split, fork, identities

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    from wheypoint.model.kernel import Outcome
    from wheypoint.store.base import Store
    from wheypoint.store.rows import Build

    # (child record, its receipt, its warnings, parent record, its receipt, its warnings)
    Pair: TypeAlias = tuple[
        dict[str, Any], dict[str, Any], list[Problem], dict[str, Any], dict[str, Any], list[Problem]
    ]


def request_of(child_slug: str, orientation: str, move: str | None, artifact: str | None, moves: list[str],
               copies: list[str], dossiers: list[str]) -> ForkRequest:  # fmt: skip
    """The fork request, checked as a first checkpoint's intent is: the same slug, text and next-move rules."""
    from wheypoint.model.intake import require_valid

    nxt: dict[str, Any] = {"move": move or "hold"}
    if artifact:
        nxt["artifact"] = artifact
    # The child's genesis must be a valid first checkpoint by itself (slug pattern, credentials, next rules);
    # a placeholder decision stands in for the entries, which the fork copies rather than the intent adds.
    require_valid({"slug": child_slug, "orientation": orientation, "next": nxt,
                   "decisions": [{"text": "forked", "rationale": "forked"}]})  # fmt: skip
    return ForkRequest(child_slug, orientation, nxt, tuple(moves), tuple(copies), tuple(dossiers))


def fork_work(ctx: Context, parent_ref: str, request: ForkRequest, base: str | None, notes: NoteOptions) -> dict[
    str, Any]:  # fmt: skip
    from wheypoint.app.checkpoint import observe
    from wheypoint.store.rows import Write

    store = ctx.open_store(create=True)  # a writer: the fork commits
    try:
        found = find_work(ctx, store, parent_ref).work
        parent = store.record(found.work_id)
        if parent is None:
            raise Refusal("record-missing", f"no work {parent_ref!r}")
        _check_base(store, found.work_id, parent["revision_id"], base)
        child_work, child_revision, parent_revision = identities(parent, request)
        if store.work(child_work) is not None:
            replayed = _replay(store, found.work_id, child_work, request)
            if replayed is not None:
                return _reply(ctx, replayed, request, notes, [], replayed=True)
            raise Refusal("work-exists", f"work {request.child_slug!r} already exists in project "
                          f"{parent['project_key']}: fork into a new slug", details={"work_id": child_work},
                          parameter="child")  # fmt: skip
        prov, observed = observe(ctx, {}, parent["project_key"], None)
        forked = fork(parent, request, prov)  # refuses a wrong fork before anything is locked

        origin = written_from(ctx, notes)
        committed = store.commit_many([
            Write(child_work, None, child_revision, _as_build(forked.child), origin),
            Write(found.work_id, parent["revision_id"], parent_revision, _as_build(forked.parent), origin),
        ])  # fmt: skip
    finally:
        store.close()
    return _reply(ctx, (committed[0].record, committed[0].revision, committed[0].warnings,
                        committed[1].record, committed[1].revision, committed[1].warnings),
                  request, notes, observed, replayed=False)  # fmt: skip


def _replay(store: Store, parent_work: str, child_work: str, request: ForkRequest) -> Pair | None:
    """The child and parent revisions of this very fork when it was already taken (the same request on the
    parent revision the child says it was forked from), else None: the child's slug is simply taken."""
    first = store.revisions(child_work)[0]
    child = store.record(child_work, first["revision_id"])
    if child is None:
        return None
    origins = [e.get("revision") for e in child["edges"] if e["kind"] == "forked_from"]
    parent_then = store.record(parent_work, origins[0]) if origins and origins[0] else None
    if parent_then is None:
        return None
    _, child_revision, parent_revision = identities(parent_then, request)
    parent_after = store.record(parent_work, parent_revision)
    if child_revision != child["revision_id"] or parent_after is None:
        return None
    receipts = {r["revision_id"]: r for r in store.revisions(parent_work)}
    return child, first, [], parent_after, receipts[parent_revision], []


def _reply(ctx: Context, pair: Pair, request: ForkRequest, notes: NoteOptions, observed: list[Problem], *,
           replayed: bool) -> dict[str, Any]:  # fmt: skip
    warnings: list[Problem] = list(observed)
    reply: dict[str, Any] = {"replayed": replayed}
    for name, (record, revision, advisories) in (("child", pair[:3]), ("parent", pair[3:])):
        reply[name] = side_reply(ctx, record, revision, advisories, notes, warnings)
    reply["moved"] = list(request.move)
    reply["copied"] = list(request.copy)
    reply["warnings"] = [w.as_json() for w in warnings]
    return reply


def side_reply(ctx: Context, record: dict[str, Any], revision: dict[str, Any], advisories: list[Problem],
               notes: NoteOptions, warnings: list[Problem]) -> dict[str, Any]:  # fmt: skip
    """One work a fork or join wrote: its note written, its facts for the reply; its warnings added to `warnings`."""
    path, durability, note_warnings = write_note(ctx, record, notes)
    warnings += advisories + note_warnings
    return {
        "work_id": record["work_id"], "slug": record["slug"], "revision_id": record["revision_id"],
        "revision_number": record["revision_number"], "status": record["status"], "note_path": path,
        "durability": durability, "added": revision["added"], "transitioned": revision["transitioned"],
    }  # fmt: skip


def split_work(ctx: Context, ref: str, split: Split, base: str | None, notes: NoteOptions) -> dict[str, Any]:
    """Seed 0's split: two children of one work and the parent's two moves, all in one transaction."""
    from wheypoint.app.checkpoint import observe
    from wheypoint.model.fork import split as split_records
    from wheypoint.store.rows import Write

    store = ctx.open_store(create=True)
    try:
        found = find_work(ctx, store, ref).work
        parent = store.record(found.work_id)
        if parent is None:
            raise Refusal("record-missing", f"no work {ref!r}")
        _check_base(store, found.work_id, parent["revision_id"], base)
        for side in (split.first, split.second):
            child_work = identities(parent, side)[0]
            if store.work(child_work) is not None:
                raise Refusal("work-exists", f"work {side.child_slug!r} already exists: split into new slugs",
                              details={"work_id": child_work}, parameter="child")  # fmt: skip
        prov, observed = observe(ctx, {}, parent["project_key"], None)
        outcomes = split_records(parent, split, prov)
        origin = written_from(ctx, notes)
        bases = [None, None, parent["revision_id"], outcomes[2].record["revision_id"]]
        committed = store.commit_many([
            Write(o.record["work_id"], b, o.record["revision_id"], _as_build(o), origin)
            for o, b in zip(outcomes, bases, strict=True)
        ])  # fmt: skip
    finally:
        store.close()
    warnings: list[Problem] = list(observed)
    children = [side_reply(ctx, c.record, c.revision, c.warnings, notes, warnings) for c in committed[:2]]
    parent_reply = side_reply(ctx, committed[3].record, committed[3].revision, committed[3].warnings, notes, warnings)
    return {"children": children, "parent": parent_reply, "warnings": [w.as_json() for w in warnings]}


def _check_base(store: Store, work_id: str, head: str, base: str | None) -> None:
    """An optional `--base`: when given, it must be the head (the rule every write follows: model/bases.py)."""
    if base is None or base == head:
        return
    from wheypoint.model.bases import base_refusal

    refused = base_refusal(work_id, head, base, lambda named: store.record(work_id, named) is not None)
    if refused is not None:
        raise refused


def _as_build(outcome: Outcome) -> Build:
    """The build of a revision computed before the transaction (the base named with it is what the store checks)."""

    def build(head: dict[str, Any] | None) -> Outcome:
        return outcome

    return build
