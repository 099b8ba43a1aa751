"""The smallest SQL pieces both backends and the list builder share: column lists and LIKE escaping."""

# The columns both a WorkRef and a ListedWork start with, in their order, from `works w`.
HEAD_COLUMNS = "w.work_id, w.project_key, w.slug, w.head_revision_id, w.head_number, w.status, w.updated_at"
# The columns of a WorkRef, in its order.
WORK_COLUMNS = HEAD_COLUMNS + ", w.checkout, w.note_dir"


def like_escaped(text: str) -> str:
    """Text for a LIKE pattern with `ESCAPE '\\'`: its own %, _ and backslashes match literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
