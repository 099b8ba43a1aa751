"""What the SQL backends share: the reads, the commit algorithm and the head's index rows, written once.

SQLite and PostgreSQL speak the same SQL for everything a store asks, except three things each backend
says for itself: how a slug part and a `--grep` text are found (an index each dialect has its own of),
how the head's full-text row is written, and how a transaction starts and locks (SQLite's BEGIN
IMMEDIATE takes the one write lock; PostgreSQL takes an advisory lock per work). Statements here are
written with `?` placeholders; a backend whose driver wants another style rewrites them in `_run`.

The commit algorithm, in the caller's transaction, for each write:
1. a revision with the candidate id already in this work is a replay: answered, nothing written;
2. the head is read and the base checked against it (model/bases.py): a wrong base is refused;
3. the kernel's build runs on the head, and its record, receipt and index rows are inserted.
Because the backend holds the work's write lock from before step 1 to COMMIT, no other writer can move the
head in between: of N writers racing from one base exactly one passes step 2.
"""

from __future__ import annotations

from wheypoint import jsontext
from wheypoint.model.errors import Refusal
from wheypoint.store.rows import Committed, ListedWork, Revision, WorkRef
from wheypoint.store.sqlparts import (
    BACKLINK_COLUMNS,
    BACKLINKS_FROM,
    BACKLINKS_ORDER,
    WORK_COLUMNS,
    backlinks_where,
    like_escaped,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any, TypeVar

    from wheypoint.store.rows import Backlink, OpenGate, WorkQuery, Write, WrittenFrom

    T = TypeVar("T")


IN_BATCH = 500  # ids bound in one IN list (SQLite builds before 3.32 take at most 999 parameters)


def dumps(value: Any) -> str:
    """A record or receipt as stored: compact JSON with sorted keys."""
    return jsontext.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def intact_record(work_id: str, revision_id: str, column_digest: Any, text: Any) -> dict[str, Any]:
    """A stored record read for use, refused (`record-corrupt`) unless it is the one its row says it is.

    The invariant every read for use relies on (show, resolve, export, a note, the head a write builds on):
    bytes changed inside a row, which the database's own integrity check cannot see, are never served or built
    on (model/integrity.intact says what "the one its row says" means); `doctor` lists every such record.
    """
    from wheypoint.model.integrity import intact

    record = intact(work_id, revision_id, column_digest, text)
    if record is None:
        raise Refusal("record-corrupt", f"the stored record of work {work_id}, revision {revision_id}, is not the "
                      "one its digest names: it was changed in the store, so it is not used; `wheypoint doctor` "
                      "lists every such record", details={"work_id": work_id, "revision_id": revision_id})  # fmt: skip
    return record


def search_texts(record: dict[str, Any]) -> tuple[str, str, str, str]:
    """What `--grep` searches in a head: its orientation, notes, entry texts (with quotes and rationales), context."""
    entries = "\n".join(
        " ".join(filter(None, (e["text"], e.get("quote"), e.get("rationale")))) for e in record["entries"]
    )
    return record["orientation"], record["notes"], entries, "\n".join(record["working_context"])


class SqlStore:
    """The reads and writes both SQL backends run the same way; a backend supplies the methods that raise here."""

    # The LIKE that ignores ASCII case, as a slug part is matched (slugs are lowercase; a typed part may not be).
    like_any_case = "LIKE"

    def _run(self, sql: str, args: tuple[Any, ...], *, many: bool = False) -> list[tuple[Any, ...]]:
        """Run one statement (`?` placeholders) on the open connection; its rows. Driver errors become refusals."""
        raise NotImplementedError

    def _exists(self) -> bool:
        """Whether there is a store to read (a reader of a store not made yet sees an empty one)."""
        raise NotImplementedError

    def _transaction(self, work_ids: Sequence[str], body: Callable[[], T]) -> T:
        """`body` in one write transaction holding the write lock of every work named (and of any it touches)."""
        raise NotImplementedError

    def _lock(self, work_id: str) -> None:
        """Take `work_id`'s write lock inside the open transaction (a no-op where the transaction holds all)."""

    def _slug_part_query(self, part: str, scope: str) -> tuple[str, tuple[Any, ...]] | None:
        """The backend's indexed query for slugs containing `part`, or None to use the LIKE scan."""
        return None

    def _write_search(self, work_id: str, record: dict[str, Any], first: bool = False) -> None:
        """Replace the head's full-text row (`first`: the work's first head, which replaces none)."""
        raise NotImplementedError

    def _list_grep(self, grep: tuple[str, ...], args: list[Any], ranked: bool) -> tuple[str, str, str]:
        """The join, condition and order that select works matching any grep text, and rank them when `ranked`
        (listsql._parts)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- reads

    def _one(self, sql: str, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        rows = self._run(sql, args) if self._exists() else []
        return rows[0] if rows else None

    def _rows(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._run(sql, args) if self._exists() else []

    def _lookup(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """`_rows` of a statement whose parameters are only keys compared for equality (or lists of keys): its best
        plan is the same whatever their values, so a backend may plan it once for its connection (PostgreSQL
        prepares it). A pattern, a range or a filter of `list` is never one: its plan depends on its values."""
        return self._rows(sql, args)

    def _in_keys(self, column: str, keys: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
        """A condition on `column` being one of `keys`, with its arguments (a `?` for each: IN (?, ?, ...))."""
        return f"{column} IN ({', '.join('?' * len(keys))})", tuple(keys)

    def _work(self, where: str, args: tuple[Any, ...]) -> WorkRef | None:
        rows = self._lookup(f"SELECT {WORK_COLUMNS} FROM works w WHERE {where}", args)
        return WorkRef(*rows[0]) if rows else None

    def _works(self, sql: str, args: tuple[Any, ...]) -> list[WorkRef]:
        return [WorkRef(*row) for row in self._rows(sql, args)]

    def work(self, work_id: str) -> WorkRef | None:
        return self._work("work_id = ?", (work_id,))

    def work_by_slug(self, project_key: str, slug: str) -> WorkRef | None:
        return self._work("project_key = ? AND slug = ?", (project_key, slug))

    def work_of_revision(self, revision_id: str) -> WorkRef | None:
        return self._work("work_id = (SELECT work_id FROM revisions WHERE revision_id = ?)", (revision_id,))

    def backlinks(self, work: WorkRef) -> list[Backlink]:
        from wheypoint.store.rows import Backlink

        # Each spelling that names the work is an equality on the edges index (sqlparts.backlinks_where).
        rows = self._lookup(
            f"SELECT {BACKLINK_COLUMNS} FROM {BACKLINKS_FROM} WHERE {backlinks_where('?', ('?', '?', '?', '?'), '?')} "
            f"ORDER BY {BACKLINKS_ORDER}",
            (work.work_id, work.work_id, f"wheypoint:{work.project_key}/{work.work_id}",
             f"wheypoint:{work.project_key}/{work.slug}", work.slug, work.project_key),
        )  # fmt: skip
        return [Backlink(*row) for row in rows]

    def works_with_slug(self, slug: str, project_key: str | None) -> list[WorkRef]:
        if project_key is not None:
            found = self.work_by_slug(project_key, slug)
            return [found] if found else []
        return self._works(
            f"SELECT {WORK_COLUMNS} FROM works w WHERE slug = ? ORDER BY updated_at DESC, work_id", (slug,)
        )

    def slugs_held(self, project_key: str, slugs: Sequence[str]) -> set[str]:
        wanted = list(dict.fromkeys(slugs))
        if len(wanted) >= IN_BATCH:
            # Many names (a folder of thousands of notes): reading the project's own slugs off their index is about a
            # third of the cost of looking each name up, while the project holds at most 3 for each name; past that
            # the read stops and the names are looked up.
            most = 3 * len(wanted)
            rows = self._rows("SELECT slug FROM works WHERE project_key = ? LIMIT ?", (project_key, most + 1))
            if len(rows) <= most:
                asked = set(wanted)
                return {str(slug) for (slug,) in rows if slug in asked}
        held: set[str] = set()
        for start in range(0, len(wanted), IN_BATCH):
            among, args = self._in_keys("slug", wanted[start : start + IN_BATCH])
            rows = self._lookup(f"SELECT slug FROM works WHERE project_key = ? AND {among}", (project_key, *args))
            held.update(str(slug) for (slug,) in rows)
        return held

    def works_with_slug_prefix(self, prefix: str, project_key: str | None, limit: int) -> list[WorkRef]:
        # LIKE 'prefix%' is a range on an index whose order is by code point (SQLite's default; PostgreSQL's
        # text_pattern_ops), and it means the same in both, whatever the server's collation.
        scope, args = ("project_key = ? AND ", (project_key,)) if project_key is not None else ("", ())
        return self._works(
            f"SELECT {WORK_COLUMNS} FROM works w WHERE {scope}{self._starts_with('slug')} ORDER BY slug LIMIT ?",
            (*args, *self._prefix_args(prefix), limit),
        )

    def _starts_with(self, column: str) -> str:
        """A condition on `column` starting with the text `_prefix_args` gives, using the column's index."""
        return f"{column} LIKE ? ESCAPE '\\'"

    def _prefix_args(self, prefix: str) -> tuple[Any, ...]:
        return (like_escaped(prefix) + "%",)

    def works_with_slug_part(self, part: str, project_key: str | None, limit: int) -> list[WorkRef]:
        scope, args = (" AND w.project_key = ?", (project_key,)) if project_key is not None else ("", ())
        indexed = self._slug_part_query(part, scope)
        if indexed is not None:
            sql, index_args = indexed
            return self._works(sql, (*index_args, *args, limit))
        pattern = "%" + like_escaped(part) + "%"
        return self._works(
            f"SELECT {WORK_COLUMNS} FROM works w WHERE w.slug {self.like_any_case} ? ESCAPE '\\'{scope} "
            "ORDER BY w.slug LIMIT ?",
            (pattern, *args, limit),
        )

    def list_works(self, query: WorkQuery) -> list[ListedWork]:
        if not self._exists():
            return []
        from wheypoint.store.listsql import list_sql

        sql, args = list_sql(query, self._list_grep)
        return [ListedWork(*row) for row in self._rows(sql, tuple(args))]

    def count_works(self, query: WorkQuery) -> int:
        from wheypoint.store.listsql import count_sql

        sql, args = count_sql(query, self._list_grep)
        row = self._one(sql, tuple(args))
        return int(row[0]) if row else 0

    def open_gates(self, query: WorkQuery, offset: int, limit: int) -> tuple[int, list[OpenGate]]:
        from wheypoint.store.listsql import gate_count_sql, gates_sql
        from wheypoint.store.rows import OpenGate

        if not self._exists():
            return 0, []
        sql, args = gate_count_sql(query, self._list_grep)
        row = self._one(sql, tuple(args))
        sql, args = gates_sql(query, self._list_grep, self._gate_added_in(), offset, limit)
        return int(row[0]) if row else 0, [OpenGate(*row) for row in self._rows(sql, tuple(args))]

    def _gate_added_in(self) -> str:
        """The entries index's column naming the revision an entry was added in (NULL where a schema lacks it)."""
        return "e.added_in"

    def record(self, work_id: str, revision_id: str | None = None) -> dict[str, Any] | None:
        if revision_id is None:
            return self.records([work_id]).get(work_id)
        rows = self._lookup(
            "SELECT record_json, revision_id, record_digest FROM revisions WHERE revision_id = ? AND work_id = ?",
            (revision_id, work_id),
        )
        return intact_record(work_id, str(rows[0][1]), rows[0][2], rows[0][0]) if rows else None

    def records(self, work_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        wanted = list(dict.fromkeys(work_ids))
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(wanted), IN_BATCH):
            among, args = self._in_keys("w.work_id", wanted[start : start + IN_BATCH])
            rows = self._lookup(
                "SELECT w.work_id, r.record_json, r.revision_id, r.record_digest FROM works w "
                f"JOIN revisions r ON r.revision_id = w.head_revision_id WHERE {among}",
                args,
            )
            for work_id, text, revision_id, digest in rows:
                found[str(work_id)] = intact_record(str(work_id), str(revision_id), digest, text)
        return found

    def newest_heads_holding(
        self, project_key: str, value: str, limit: int, passing: Callable[[str], bool] | None = None
    ) -> Iterator[dict[str, Any]]:
        from wheypoint.model.integrity import intact

        # A record is stored as `dumps` writes it, where a string of plain characters is spelled as itself between
        # quotes: a text without that spelling holds no such value, and is passed over unparsed. Any other string
        # (escapes, non-ASCII) may be spelled otherwise by an older writer: every record is parsed then.
        spelled = f'"{value}"' if value.isascii() and value.isprintable() and not set(value) & set('"\\/') else ""
        newest = self._lookup(
            "SELECT w.work_id FROM works w WHERE w.project_key = ? ORDER BY w.updated_at DESC, w.work_id LIMIT ?",
            (project_key, limit),
        )

        def heads() -> Iterator[dict[str, Any]]:  # a head's text is read when the caller comes to it
            for (work_id,) in newest:
                if passing is not None and not passing(str(work_id)):
                    continue
                for text, revision_id, digest in self._lookup(
                    "SELECT r.record_json, r.revision_id, r.record_digest FROM works w JOIN revisions r ON "
                    "r.revision_id = w.head_revision_id WHERE w.work_id = ?",
                    (work_id,),
                ):  # fmt: skip
                    record = intact(str(work_id), str(revision_id), digest, text) if spelled in text else None
                    if record is not None:
                        yield record

        return heads()

    def revisions(self, work_id: str) -> list[dict[str, Any]]:
        rows = self._lookup("SELECT revision_json FROM revisions WHERE work_id = ? ORDER BY number", (work_id,))
        return [jsontext.loads(row[0]) for row in rows]

    def history(self, work_id: str) -> list[Revision]:
        rows = self._lookup("SELECT revision_json, record_json, revision_id, record_digest, author FROM revisions "
                            "WHERE work_id = ? ORDER BY number", (work_id,))  # fmt: skip
        return [Revision(jsontext.loads(receipt), intact_record(work_id, str(revision_id), digest, text), author)
                for receipt, text, revision_id, digest, author in rows]  # fmt: skip

    def heads_and_backlinks(self, work_ids: Sequence[str]) -> dict[str, tuple[WorkRef, dict[str, Any], list[Backlink]]]:
        """Each named work's row, head record and backlinks, in the order asked, as `work`, `records` and `backlinks`
        read them: here with those reads (a statement for the records, then two a work); a backend may use one."""
        records = self.records(work_ids)
        found: dict[str, tuple[WorkRef, dict[str, Any], list[Backlink]]] = {}
        for work_id in dict.fromkeys(work_ids):
            work = self.work(work_id) if work_id in records else None
            if work is not None:
                found[work_id] = (work, records[work_id], self.backlinks(work))
        return found

    # ---------------------------------------------------------------- checks (doctor: app/doctor_store.py)

    def works_to_check(self) -> list[tuple[str, str, str, str, int]]:
        """Every work of the store: (work id, project key, slug, head revision id, head number), by work id."""
        sql = "SELECT work_id, project_key, slug, head_revision_id, head_number FROM works ORDER BY work_id"
        rows = self._rows(sql, ())
        return [(str(a), str(b), str(c), str(d), int(e)) for a, b, c, d, e in rows]

    def revisions_to_check(self, work_id: str) -> list[tuple[str, int, str | None, str, str, str]]:
        """A work's stored revision rows as they are, oldest first: (revision id, number, parent, the record_digest
        column, the record's JSON text, the receipt's JSON text). Nothing is parsed or trusted here."""
        rows = self._rows(
            "SELECT revision_id, number, parent_revision_id, record_digest, record_json, revision_json FROM revisions "
            "WHERE work_id = ? ORDER BY number",
            (work_id,),
        )
        return [(str(a), int(b), c, str(d), str(e), str(f)) for a, b, c, d, e, f in rows]

    def version(self) -> int:
        """How many revisions the store holds: append-only, so every write (a checkpoint, an import) raises it."""
        row = self._one("SELECT count(*) FROM revisions", ())
        return int(row[0]) if row else 0

    def health(self) -> dict[str, Any]:
        """What the backend itself can say of the store: where, its schema version, its size, its own check."""
        raise NotImplementedError

    # ---------------------------------------------------------------- writes

    def commit(
        self, work_id: str, base_revision_id: str | None, candidate_revision_id: str, build: Any,
        written_from: WrittenFrom | None = None, known_head: dict[str, Any] | None = None,
    ) -> Committed:  # fmt: skip
        from wheypoint.store.rows import Write

        write = Write(work_id, base_revision_id, candidate_revision_id, build, written_from, known_head=known_head)
        return self.commit_many([write])[0]

    def commit_many(self, writes: Sequence[Write]) -> list[Committed]:
        return self._transaction([w.work_id for w in writes], lambda: [self._commit_locked(w) for w in writes])

    def commit_stream(self, writes: Iterable[Write]) -> tuple[int, int]:
        def run() -> tuple[int, int]:
            written = replayed = 0
            for write in writes:
                self._lock(write.work_id)
                if self._commit_locked(write).replayed:
                    replayed += 1
                else:
                    written += 1
            return written, replayed

        return self._transaction([], run)

    def _commit_locked(self, write: Write) -> Committed:
        """Steps 1-3 of the module's algorithm, for one write, inside the open transaction."""
        work_id, base, candidate = write.work_id, write.base_revision_id, write.candidate_revision_id
        replay = self._run(
            "SELECT record_json, revision_json FROM revisions WHERE revision_id = ? AND work_id = ?",
            (candidate, work_id),
        )
        if replay:
            record = intact_record(work_id, candidate, None, replay[0][0])
            return Committed(record, jsontext.loads(replay[0][1]), replayed=True, warnings=[])
        from wheypoint.model.bases import base_refusal  # only writes need the rule

        head = self._head_for(write)
        refused = base_refusal(
            work_id, head["revision_id"] if head else None, base,
            lambda named: bool(self._run("SELECT 1 FROM revisions WHERE revision_id = ? AND work_id = ?",
                                         (named, work_id))),
        )  # fmt: skip
        if refused is not None:
            raise refused
        outcome = write.build(head)
        record, revision = outcome.record, outcome.revision
        self._insert_revision(record, revision, write, head)
        return Committed(record, revision, replayed=False, warnings=outcome.warnings)

    def _head_for(self, write: Write) -> dict[str, Any] | None:
        """The head a write builds on, read inside its transaction: the writer's known head when the work's head is
        still that revision (it was verified when read, and a revision never changes), else read and verified."""
        known = write.known_head
        if known is not None and known.get("work_id") == write.work_id:
            row = self._run("SELECT head_revision_id FROM works WHERE work_id = ?", (write.work_id,))
            if row and row[0][0] == known.get("revision_id"):
                return known
        return self.record(write.work_id)

    def _insert_revision(
        self, record: dict[str, Any], revision: dict[str, Any], write: Write, head: dict[str, Any] | None = None
    ) -> None:
        """The revision's row, its head's rows and its provenance; the caller's transaction makes them one. `head`:
        the work's head it was built on (whose rows the query tables hold), None for a first revision."""
        author = write.author or (write.written_from.author if write.written_from else None)
        self._run(
            "INSERT INTO revisions (revision_id, work_id, number, parent_revision_id, captured_at, record_digest, "
            "record_json, revision_json, author) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (revision["revision_id"], write.work_id, revision["revision_number"], revision["parent_revision_id"],
             revision["captured_at"], record["record_digest"], dumps(record), dumps(revision), author),
        )  # fmt: skip
        self._write_head(record, write.written_from, head, first=head is None)
        if write.imported_from is not None:
            origin = write.imported_from
            self._run(
                "INSERT INTO imports (revision_id, work_id, bundle_digest, source, imported_at) VALUES (?, ?, ?, ?, ?)",
                (revision["revision_id"], write.work_id, origin.bundle_digest, origin.source, origin.imported_at),
            )

    def _write_head(
        self, record: dict[str, Any], written_from: WrittenFrom | None, before: dict[str, Any] | None = None,
        first: bool = False,
    ) -> None:
        """Point the work at `record`, its new head, and rebuild the head's rows of every query table.

        They are derived from the head record alone (plus where it was written from) and rewritten inside the
        commit's transaction, so they can never describe any revision but the head. `before` is the head it
        replaces: a table whose part of the record is what it was there (a rescue's revision adds turns, and
        changes no entry, edge, link or searched text) keeps its rows, which describe `before` and so are already
        those of `record`. `written_from` (the checkout and note folder of the process that wrote it) replaces the
        last writer's; None (a caller that does not say, such as an import) leaves them as they were. `first`: the
        work had no head until this transaction (its works row is new), so no query table holds a row of it to
        delete: rows are only ever written here, beside their head, and no works row is ever deleted.
        """
        from wheypoint.model.derived import GATING_KINDS  # here: only writes need the model's derivations

        work_id = record["work_id"]
        said = written_from is not None
        self._run(
            "INSERT INTO works (work_id, project_key, slug, head_revision_id, head_number, status, gated, next_move, "
            "orientation, created_at, updated_at, checkout, note_dir) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (work_id) DO UPDATE SET head_revision_id = excluded.head_revision_id, "
            "head_number = excluded.head_number, status = excluded.status, gated = excluded.gated, "
            "next_move = excluded.next_move, orientation = excluded.orientation, updated_at = excluded.updated_at, "
            "checkout = CASE WHEN ? THEN excluded.checkout ELSE works.checkout END, "
            "note_dir = CASE WHEN ? THEN excluded.note_dir ELSE works.note_dir END",
            (work_id, record["project_key"], record["slug"], record["revision_id"], record["revision_number"],
             record["status"], int(record["status"].startswith("gated:")), record["next"].get("move") or "list",
             record["orientation"], record["created_at"], record["updated_at"],
             written_from.checkout if written_from else None, written_from.note_dir if written_from else None,
             said, said),
        )  # fmt: skip
        before = before if before is not None and before.get("work_id") == work_id else None
        changed = {table for table in ("entries", "edges", "artifact_links")
                   if before is None or record[table] != before.get(table)}  # fmt: skip
        for table in sorted(changed) if not first else ():  # (a first head replaces no rows: see the docstring)
            self._run(f"DELETE FROM {table} WHERE work_id = ?", (work_id,))
        if "entries" in changed and record["entries"]:
            entries = [(work_id, e["id"], e["kind"], e["state"], int(e["gates"] and e["kind"] in GATING_KINDS),
                        e.get("owner"), e.get("added_in")) for e in record["entries"]]  # fmt: skip
            self._run("INSERT INTO entries (work_id, entry_id, kind, state, gates, owner, added_in) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?)", tuple(entries), many=True)  # fmt: skip
        if "edges" in changed and record["edges"]:
            edges = [(work_id, edge["ref"], edge["kind"]) for edge in record["edges"]]
            self._run("INSERT INTO edges (work_id, ref, kind) VALUES (?, ?, ?)", tuple(edges), many=True)
        if "artifact_links" in changed and record["artifact_links"]:
            links = [(work_id, link["ref"], link["digest"]) for link in record["artifact_links"]]
            self._run("INSERT INTO artifact_links (work_id, ref, digest) VALUES (?, ?, ?)", tuple(links), many=True)
        if before is None or search_texts(record) != search_texts(before):
            self._write_search(work_id, record, first)
