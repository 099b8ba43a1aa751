"""The SQLite backend: one store file per user (backend, its SQL, its migrations).

The two SQL pieces both the backend and `queries` use live here: every command that opens the store
loads this package anyway, while `queries` (the SQL of `list`) is loaded by `list` only.
"""

# The columns both a WorkRef and a ListedWork start with, in their order, from `works w`.
HEAD_COLUMNS = "w.work_id, w.project_key, w.slug, w.head_revision_id, w.head_number, w.status, w.updated_at"
# The columns of a WorkRef, in its order.
WORK_COLUMNS = HEAD_COLUMNS + ", w.checkout, w.note_dir"


def like_escaped(text: str) -> str:
    """Text for a LIKE pattern with `ESCAPE '\\'`: its own %, _ and backslashes match literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
