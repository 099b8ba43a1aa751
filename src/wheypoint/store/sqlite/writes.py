"""Storing one revision inside the caller's write transaction: its row, its head's index rows, where it came from.

The backend has already refused a wrong base and answered a replay; what is left cannot half-happen, because
the caller's transaction commits all of it or none (see backend.py for the crash-safety invariant).
"""

from __future__ import annotations

import json

from wheypoint.store.sqlite.indexes import write_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from wheypoint.store.rows import Write


def dumps(value: Any) -> str:
    """A record or receipt as stored: compact JSON with sorted keys."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def insert_revision(conn: sqlite3.Connection, record: dict[str, Any], revision: dict[str, Any], write: Write) -> None:
    conn.execute(
        "INSERT INTO revisions (revision_id, work_id, number, parent_revision_id, captured_at, record_digest, "
        "record_json, revision_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (revision["revision_id"], write.work_id, revision["revision_number"], revision["parent_revision_id"],
         revision["captured_at"], record["record_digest"], dumps(record), dumps(revision)),
    )  # fmt: skip
    write_head(conn, record, write.written_from)
    if write.imported_from is not None:
        origin = write.imported_from
        conn.execute(
            "INSERT INTO imports (revision_id, work_id, bundle_digest, source, imported_at) VALUES (?, ?, ?, ?, ?)",
            (revision["revision_id"], write.work_id, origin.bundle_digest, origin.source, origin.imported_at),
        )
