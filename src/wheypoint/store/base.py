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
  at all, whatever instant the process dies at; `commit_many` extends this to several revisions of
  several works (a fork's child and parent), which are all written or none;
- refusals, not driver errors: whatever goes wrong in the backend's driver reaches the caller as a
  `Refusal` (`store-busy` when the store stayed locked, else `storage-error`, naming the store).

This module imports `typing` and is for the type checker: import `Store` under `TYPE_CHECKING`, and the
row types (re-exported here) from `wheypoint.store.rows`, which costs nothing at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

# Re-exported (`X as X`) for the callers that still import the rows from here.
from wheypoint.store.rows import Backlink as Backlink
from wheypoint.store.rows import Committed as Committed
from wheypoint.store.rows import ListedWork as ListedWork
from wheypoint.store.rows import OpenGate as OpenGate
from wheypoint.store.rows import Revision as Revision
from wheypoint.store.rows import WorkQuery as WorkQuery
from wheypoint.store.rows import WorkRef as WorkRef
from wheypoint.store.rows import Write as Write
from wheypoint.store.rows import WrittenFrom as WrittenFrom

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from wheypoint.store.rows import Build as Build


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

    def records(self, work_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The head records of the works named, by work id, in one read (a work not in the store is left out)."""

    def newest_heads_holding(
        self, project_key: str, value: str, limit: int, passing: Callable[[str], bool] | None = None
    ) -> Iterator[dict[str, Any]]:
        """The head records, newest first, of the project's `limit` most recently updated works, less every one whose
        stored text cannot hold the string `value` (a session id, say): for a plain ASCII value, a text that does not
        spell it is passed over unparsed. Each head is read, and parsed and verified (as `record` does; a damaged
        one is left out), only when the caller comes to it, who checks where the value stands and may stop at the
        first: what is wanted is read before the store is closed. `passing`, when given, is asked of each work id
        first: a work it refuses is passed over with its head unread (it still counts among the `limit`)."""

    def revisions(self, work_id: str) -> list[dict[str, Any]]:
        """Every revision receipt of a work, oldest first."""

    def history(self, work_id: str) -> list[Revision]:
        """Every revision of a work, oldest first, each with its record (verified as `record` verifies it) and its
        author, in one read."""

    def heads_and_backlinks(self, work_ids: Sequence[str]) -> dict[str, tuple[WorkRef, dict[str, Any], list[Backlink]]]:
        """Each named work's row, head record and backlinks, by work id, as `work`, `records` and `backlinks` answer
        them, in as few reads as the backend can (a work not in the store is left out): a walk's next step."""

    def works_with_slug(self, slug: str, project_key: str | None) -> list[WorkRef]:
        """Works whose slug is exactly this, in one project or (None) on the whole machine."""

    def slugs_held(self, project_key: str, slugs: Sequence[str]) -> set[str]:
        """Which of `slugs` name a work of the project, in as few reads as the backend can (a notes folder's file
        names, say: the file named after a work's slug is that work's note, whatever it holds now)."""

    def works_with_slug_prefix(self, prefix: str, project_key: str | None, limit: int) -> list[WorkRef]:
        """Works whose slug starts with `prefix`, at most `limit` (read limit + 1 to tell 'several')."""

    def works_with_slug_part(self, part: str, project_key: str | None, limit: int) -> list[WorkRef]:
        """Works whose slug contains `part`, at most `limit`."""

    def list_works(self, query: WorkQuery) -> list[ListedWork]:
        """The works a list query selects, best first."""

    def count_works(self, query: WorkQuery) -> int:
        """How many works the list query selects, its limit and offset aside."""

    def open_gates(self, query: WorkQuery, offset: int, limit: int) -> tuple[int, list[OpenGate]]:
        """The open gates of the gated works the query selects: how many, and `limit` of them from the `offset`th,
        oldest first (by the capture time of the revision that asked each), from the entries index."""

    def backlinks(self, work: WorkRef) -> list[Backlink]:
        """The works whose head has an edge to `work`, by any of the refs that name it, from the edges index."""

    def commit(
        self, work_id: str, base_revision_id: str | None, candidate_revision_id: str, build: Build,
        written_from: WrittenFrom | None = None, known_head: dict[str, Any] | None = None,
    ) -> Committed:  # fmt: skip
        """Run `build` on the head and store its outcome, under the contract above, noting where it came from.

        `known_head` is the head record as the caller last read it from this store (or the record its last commit
        answered): when the work's head is still that revision, `build` gets it instead of a fresh read; when it is
        not, the head is read as always, so a stale one is never built on."""

    def commit_many(self, writes: Sequence[Write]) -> list[Committed]:
        """Every write, in order, in one transaction: all of them are stored, or (on a refusal) none."""

    def commit_stream(self, writes: Iterable[Write]) -> tuple[int, int]:
        """commit_many for bulk copies (imports): writes taken one at a time from an iterable, so memory stays
        bounded, all in one transaction; answers (revisions written, revisions already there)."""

    def works_to_check(self) -> list[tuple[str, str, str, str, int]]:
        """Every work: (work id, project key, slug, head revision id, head number), for `doctor`."""

    def revisions_to_check(self, work_id: str) -> list[tuple[str, int, str | None, str, str, str]]:
        """A work's revision rows unparsed: (id, number, parent, record_digest column, record JSON, receipt JSON)."""

    def version(self) -> int:
        """A number that grows with every revision written (the count of revisions): what `serve` polls."""

    def health(self) -> dict[str, Any]:
        """The backend's own facts: backend, location, exists, schema_version, size_bytes, integrity (see doctor)."""

    def close(self) -> None:
        """Release the backend's resources."""
