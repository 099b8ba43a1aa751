"""The rows the store hands back and takes: plain records, cheap to import on every command's path.

They are `wheypoint.model.records.Record`s, declared exactly as `typing.NamedTuple`s (the type checker
reads them as such) but built at run time without importing `typing`. `Build`, the shape of the function
a write runs on the head, exists for the type checker only: import it under `TYPE_CHECKING`.
"""

from __future__ import annotations

from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeAlias

    from wheypoint.model.kernel import Outcome

    Build: TypeAlias = Callable[[dict[str, Any] | None], Outcome]


class WorkRef(Record):
    """The small facts about a work that lookups return, without its record."""

    work_id: str
    project_key: str
    slug: str
    head_revision_id: str
    head_number: int
    status: str
    updated_at: str
    checkout: str | None = None  # the top folder of the checkout the head was written in (see WrittenFrom)
    note_dir: str | None = None  # the folder the head's note was written to, or None


class WrittenFrom(Record):
    """Where a write came from: its checkout's top folder (None outside one), its note folder (None: no note),
    and who wrote it (git's user.email there, else the OS user).

    Kept beside the record, not in it: the same handoff is the same record on every machine.
    """

    checkout: str | None
    note_dir: str | None
    author: str | None = None


class ImportedFrom(Record):
    """Where an imported revision came from (kept in the store beside it, outside the record)."""

    bundle_digest: str
    source: str
    imported_at: str


class Write(Record):
    """One revision of a `commit_many`: the work, the head it builds on, the id it will get, how it is built."""

    work_id: str
    base_revision_id: str | None
    candidate_revision_id: str
    build: Build
    written_from: WrittenFrom | None = None
    imported_from: ImportedFrom | None = None
    author: str | None = None  # who wrote the revision, when it is not this writer (an import keeps the original's)
    # The head this writer already read from this store (a `record` answer, so verified) or wrote: built on as it
    # is when the work's head is still that revision, instead of being read and verified again.
    known_head: dict[str, Any] | None = None


class Committed(Record):
    """The answer to a write: the stored record and receipt, and whether it was a replay."""

    record: dict[str, Any]
    revision: dict[str, Any]
    replayed: bool
    warnings: list[Any]


class Revision(Record):
    """One revision of a work as its history reads it: the receipt, the record it wrote, and who wrote it."""

    receipt: dict[str, Any]
    record: dict[str, Any]
    author: str | None


class Backlink(Record):
    """A work whose head has an edge to another work: who points, with which kind, and the ref it wrote."""

    work_id: str
    project_key: str
    slug: str
    kind: str
    ref: str


class WorkQuery(Record):
    """What `list` filters on. Values of one field are ORed; different fields are ANDed."""

    projects: tuple[str, ...] = ()
    grep: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()  # "ok", "gated", "halt", or an exact status line
    nexts: tuple[str, ...] = ()
    entry_kinds: tuple[str, ...] = ()
    entry_states: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    gated: bool | None = None
    edge_kinds: tuple[str, ...] = ()
    linked_to: tuple[str, ...] = ()
    forked_from: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()  # works with a revision written by one of them
    since: str | None = None
    limit: int = 50
    offset: int = 0  # rows of the answer skipped first (a page of `serve`'s inbox)


class OpenGate(Record):
    """An open gate of a head (a gating entry still active), and when it was asked: its revision's capture time."""

    work_id: str
    entry_id: str
    since: str


class ListedWork(Record):
    """A row of `list`: the work's facts and its head's one-line summary."""

    work_id: str
    project_key: str
    slug: str
    head_revision_id: str
    head_number: int
    status: str
    updated_at: str
    next_move: str | None
    orientation: str
    created_at: str
