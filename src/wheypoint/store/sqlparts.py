"""The smallest SQL pieces both backends and the list builder share: column lists, LIKE escaping, backlinks."""

# The columns both a WorkRef and a ListedWork start with, in their order, from `works w`.
HEAD_COLUMNS = "w.work_id, w.project_key, w.slug, w.head_revision_id, w.head_number, w.status, w.updated_at"
# The columns of a WorkRef, in its order.
WORK_COLUMNS = HEAD_COLUMNS + ", w.checkout, w.note_dir"


def like_escaped(text: str) -> str:
    """Text for a LIKE pattern with `ESCAPE '\\'`: its own %, _ and backslashes match literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# A backlink of a work: an edge of another work (`edges g` of `works b`) whose ref names it, by its id, by
# `wheypoint:<project>/<id>` or `wheypoint:<project>/<slug>`, or by its bare slug from a work of the same project
# (where a slug is unique). The newest linking work first.
BACKLINK_COLUMNS = "b.work_id, b.project_key, b.slug, g.kind, g.ref"
BACKLINKS_FROM = "edges g JOIN works b ON b.work_id = g.work_id"
BACKLINKS_ORDER = "b.updated_at DESC, b.work_id, g.kind"


def backlinks_where(work_id: str, as_ref: tuple[str, str, str, str], project: str) -> str:
    """The one statement of which edges are a work's backlinks: SQL expressions for the work's id, the four ways a
    ref names it (its id, both `wheypoint:` spellings, its slug: each comparable with `g.ref`) and its project key.
    Each is a placeholder (`SqlStore.backlinks`) or a column of an outer query (PostgreSQL's aggregate per work)."""
    by_id, by_key_id, by_key_slug, by_slug = as_ref
    return (f"g.work_id != {work_id} AND (g.ref IN ({by_id}, {by_key_id}, {by_key_slug}) "
            f"OR (g.ref = {by_slug} AND b.project_key = {project}))")  # fmt: skip
