"""`wheypoint join`: two works merged into a new one, the parents moved on, all three revisions in one transaction.

The merge itself is the pure model/join.py; this module finds the two parents, checks the request as a first
checkpoint's intent is checked, observes the checkout, commits the joined genesis and both parents' moves
together through Store.commit_many, then writes the three notes.
"""

from __future__ import annotations

from wheypoint.app.context import Context, NoteOptions, written_from
from wheypoint.app.fork import request_of, side_reply
from wheypoint.app.lookup import find_work
from wheypoint.model.errors import Problem, Refusal
from wheypoint.model.join import JoinRequest, identities, join

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def join_request(slug: str, orientation: str, move: str | None, artifact: str | None) -> JoinRequest:
    fork_like = request_of(slug, orientation, move, artifact, [], [], [])  # the same slug, text and next rules
    return JoinRequest(fork_like.child_slug, fork_like.orientation, fork_like.next)


def join_works(ctx: Context, first: str, second: str, request: JoinRequest, notes: NoteOptions) -> dict[str, Any]:
    from wheypoint.app.checkpoint import observe
    from wheypoint.model.kernel import Outcome
    from wheypoint.store.rows import Write

    store = ctx.open_store(create=True)
    try:
        works = [find_work(ctx, store, ref).work for ref in (first, second)]
        heads = [store.record(work.work_id) for work in works]
        if heads[0] is None or heads[1] is None:
            raise Refusal("store-inconsistent", "a work to join has a head but no record")
        joined_work, joined_revision, a_revision, b_revision = identities(heads[0], heads[1], request)
        if store.work(joined_work) is not None:
            raise Refusal("work-exists", f"work {request.slug!r} already exists in project {heads[0]['project_key']}: "
                          "join into a new slug", details={"work_id": joined_work}, parameter="slug")  # fmt: skip
        prov, observed = observe(ctx, {}, heads[0]["project_key"], None)
        merged = join(heads[0], heads[1], request, prov)  # refuses a wrong join before anything is locked

        def built(outcome: Outcome) -> Any:
            return lambda head: outcome

        origin = written_from(ctx, notes)
        committed = store.commit_many([
            Write(joined_work, None, joined_revision, built(merged.joined), origin),
            Write(works[0].work_id, heads[0]["revision_id"], a_revision, built(merged.parents[0]), origin),
            Write(works[1].work_id, heads[1]["revision_id"], b_revision, built(merged.parents[1]), origin),
        ])  # fmt: skip
    finally:
        store.close()
    warnings: list[Problem] = list(observed)
    reply: dict[str, Any] = {
        "joined": side_reply(ctx, committed[0].record, committed[0].revision, committed[0].warnings, notes, warnings),
        "parents": [side_reply(ctx, c.record, c.revision, c.warnings, notes, warnings) for c in committed[1:]],
        "contradictions": merged.contradictions,
    }
    reply["warnings"] = [w.as_json() for w in warnings]
    return reply
