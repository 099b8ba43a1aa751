"""A person's answer to a gate: one checkpoint on the work's head, exactly as the command line would write it.

The answer becomes a decision (the reason its rationale) and the gate is resolved by the same revision. The
write names the head the person read as its base, so a work that moved meanwhile is refused `stale-parent`
by the store and nothing is overwritten; any other refusal (a credential in the answer) writes nothing either.
"""

from __future__ import annotations

import os

from wheypoint.app.context import Context, NoteOptions, place_of
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def answer_intent(work_id: str, entry_id: str, base: str, answer: str, reason: str) -> dict[str, Any]:
    """The checkpoint intent of an answer: the decision, and the gate resolved with the same reason."""
    return {
        "work_id": work_id,
        "base_revision_id": base,
        "decisions": [{"text": answer, "rationale": reason}],
        "transitions": [{"entry": entry_id, "action": "resolve", "rationale": reason}],
    }


def answer_gate(ctx: Context, work_id: str, entry_id: str, base: str, answer: str, reason: str) -> dict[str, Any]:
    """Record the answer on the work, written from the work's own checkout (its git state, its author, its note)."""
    from wheypoint.app.checkpoint import checkpoint

    store = ctx.open_store(create=False)
    try:
        work = store.work(work_id)
    finally:
        store.close()
    if work is None:
        raise Refusal("record-missing", f"no work {work_id} in the store")
    place = place_of(ctx, work)
    folder = place.checkout_path if place.checkout_path and os.path.isdir(place.checkout_path) else ctx.cwd
    here = Context(folder, ctx.environ, project=work.project_key)
    # The note goes where the head's note went; a head written without a note gets none now either.
    notes = NoteOptions(os.path.dirname(place.note_path)) if work.note_dir else NoteOptions(no_note=True)
    return checkpoint(here, answer_intent(work_id, entry_id, base, answer, reason), notes)
