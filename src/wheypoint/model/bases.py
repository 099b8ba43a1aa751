"""The rule a write's base revision is held to, one definition for the store's commit and validate's dry run.

A write names the head it builds on. Its base is refused when it is missing while the work has a head
(`base-revision-required`), names no revision of the work (`unknown-base`), or names an older one
(`stale-parent`). Nothing is retried on the caller's behalf: a silent retry would let a stale writer win.
"""

from __future__ import annotations

from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def base_refusal(
    work_id: str, head_revision_id: str | None, base: str | None, is_revision: Callable[[str], bool]
) -> Refusal | None:
    """Why `base` cannot be written on for a work whose head is `head_revision_id` (None: no head yet), if not.

    `is_revision(base)` says whether the base is some revision of this work; it is asked only when needed.
    """
    if head_revision_id is None:
        if base is None:
            return None
        return Refusal("unknown-base", f"revision {base} is not a revision of {work_id}, which has none yet")
    if base == head_revision_id:
        return None
    details = {"work_id": work_id, "head_revision_id": head_revision_id}
    if base is None:
        return Refusal("base-revision-required", f"{work_id} exists; name its head {head_revision_id} as the base "
                       "revision", details=details)  # fmt: skip
    if not is_revision(base):
        return Refusal("unknown-base", f"{base} is not a revision of {work_id}; its head is {head_revision_id}",
                       details=details)  # fmt: skip
    return Refusal("stale-parent", f"the base {base} is not the head of {work_id}; the head is {head_revision_id}: "
                   "re-read, re-apply the change and write again", details=details)  # fmt: skip
