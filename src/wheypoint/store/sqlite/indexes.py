"""The head's query rows: what the works, entries, edges, links and search tables say about each work's head.

They are derived from the head record alone (plus where it was written from) and rewritten inside the
commit's transaction, so they can never describe any revision but the head.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.store.rows import WrittenFrom


def write_head(conn: sqlite3.Connection, record: dict[str, Any], written_from: WrittenFrom | None) -> None:
    """Point the work at `record`, its new head, and rebuild the head's rows of every query table.

    `written_from` (the checkout and note path of the process that wrote it) replaces the last writer's;
    None (a caller that does not say, such as an import) leaves them as they were.
    """
    from wheypoint.model.derived import GATING_KINDS  # here: only writes need the model's derivations

    work_id = record["work_id"]
    gated = int(record["status"] != "ok")
    move = record["next"].get("move") or "list"
    conn.execute(
        "INSERT INTO works (work_id, project_key, slug, head_revision_id, head_number, status, gated, next_move, "
        "orientation, created_at, updated_at, checkout, note_dir) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (work_id) DO UPDATE SET head_revision_id = excluded.head_revision_id, "
        "head_number = excluded.head_number, status = excluded.status, gated = excluded.gated, "
        "next_move = excluded.next_move, orientation = excluded.orientation, updated_at = excluded.updated_at, "
        "checkout = CASE WHEN ? THEN excluded.checkout ELSE works.checkout END, "
        "note_dir = CASE WHEN ? THEN excluded.note_dir ELSE works.note_dir END",
        (
            work_id,
            record["project_key"],
            record["slug"],
            record["revision_id"],
            record["revision_number"],
            record["status"],
            gated,
            move,
            record["orientation"],
            record["created_at"],
            record["updated_at"],
            written_from.checkout if written_from else None,
            written_from.note_dir if written_from else None,
            written_from is not None,
            written_from is not None,
        ),
    )
    for table in ("entries", "edges", "artifact_links"):
        conn.execute(f"DELETE FROM {table} WHERE work_id = ?", (work_id,))
    # A search row shares its works row's rowid: FTS5 cannot index work_id, so deleting by it would
    # scan the whole table on every checkpoint; by rowid it is a keyed delete.
    (rowid,) = conn.execute("SELECT rowid FROM works WHERE work_id = ?", (work_id,)).fetchone()
    conn.execute("DELETE FROM search WHERE rowid = ?", (rowid,))
    if record["revision_number"] == 1:  # a slug never changes: index it once, at the work's first revision
        conn.execute("INSERT INTO slug_index (rowid, slug) VALUES (?, ?)", (rowid, record["slug"]))
    conn.executemany(
        "INSERT INTO entries (work_id, entry_id, kind, state, gates, owner) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (work_id, e["id"], e["kind"], e["state"], int(e["gates"] and e["kind"] in GATING_KINDS), e.get("owner"))
            for e in record["entries"]
        ],
    )
    conn.executemany(
        "INSERT INTO edges (work_id, ref, kind) VALUES (?, ?, ?)",
        [(work_id, edge["ref"], edge["kind"]) for edge in record["edges"]],
    )
    conn.executemany(
        "INSERT INTO artifact_links (work_id, ref, digest) VALUES (?, ?, ?)",
        [(work_id, link["ref"], link["digest"]) for link in record["artifact_links"]],
    )
    entry_text = "\n".join(
        " ".join(filter(None, (e["text"], e.get("quote"), e.get("rationale")))) for e in record["entries"]
    )
    conn.execute(
        "INSERT INTO search (rowid, work_id, orientation, notes, entries, context) VALUES (?, ?, ?, ?, ?, ?)",
        (rowid, work_id, record["orientation"], record["notes"], entry_text, "\n".join(record["working_context"])),
    )
