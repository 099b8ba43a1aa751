"""The store's one narrow interface: what the rest of wheypoint may ask of any backend.

The kernel never sees the store; the shell reads a head, hands the kernel's pure function to
`commit`, and the backend runs it inside its own write transaction. Nothing outside a backend
module knows its SQL or dialect, so a PostgreSQL backend can later implement the same Protocol.

Every backend upholds the same contract:
- append-only: a work is an ordered chain of immutable revisions; nothing is updated in place except
  the head pointer and the query indexes, which always describe the head;
- compare-and-set on the head: a write names its base revision; the backend refuses a missing base
  (`base-revision-required`) or one that is no longer the head (`stale-parent`), and never retries;
- replay: if the revision an intent would create already exists, the backend answers with it
  (`replayed`) and writes nothing;
- atomicity: a revision, its record, the head pointer and the indexes become visible together or not
  at all, whatever instant the process dies at.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from wheypoint.kernel import Outcome


class WorkRef(NamedTuple):
    """The small facts about a work that lookups return, without its record."""

    work_id: str
    project_key: str
    slug: str
    head_revision_id: str
    head_number: int
    status: str
    updated_at: str


class Committed(NamedTuple):
    """The answer to a write: the stored record and receipt, and whether it was a replay."""

    record: dict[str, Any]
    revision: dict[str, Any]
    replayed: bool
    warnings: list[Any]


Build = Callable[[dict[str, Any] | None], "Outcome"]


class Store(Protocol):
    """What wheypoint needs from a backend."""

    def work(self, work_id: str) -> WorkRef | None:
        """The work with this id."""

    def work_by_slug(self, project_key: str, slug: str) -> WorkRef | None:
        """The work with this slug in a project."""

    def work_of_revision(self, revision_id: str) -> WorkRef | None:
        """The work a revision belongs to."""

    def record(self, work_id: str, revision_id: str | None = None) -> dict[str, Any] | None:
        """The head record of a work, or its record at an earlier revision of it."""

    def revisions(self, work_id: str) -> list[dict[str, Any]]:
        """Every revision receipt of a work, oldest first."""

    def commit(self, work_id: str, base_revision_id: str | None, candidate_revision_id: str, build: Build) -> Committed:
        """Run `build` on the head and store its outcome, under the contract above."""

    def close(self) -> None:
        """Release the backend's resources."""
