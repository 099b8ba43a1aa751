"""`wheypoint list`: the works a set of filters selects, from the store's indexes, never a scan of records."""

from __future__ import annotations

import os

from wheypoint.app.context import Context
from wheypoint.model.errors import bad_parameter
from wheypoint.store.rows import WorkQuery

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.notes.legacy import LegacyNote
    from wheypoint.store.base import Store
    from wheypoint.store.rows import WorkRef

MAX_LIMIT = 1000


def list_works(ctx: Context, options: dict[str, Any]) -> dict[str, Any]:
    """Filters from the command line (repeated values OR, different flags AND) to rows, best first."""
    scope = options.get("scope")
    if scope not in (None, "project", "machine"):
        raise bad_parameter("scope", "is project or machine")
    projects = tuple(options.get("project") or ())
    reply: dict[str, Any] = {}
    if scope is None and not projects and ctx.checkout is None:
        scope = "machine"
        reply["scope_fallback"] = "machine"  # outside a checkout there is no project to default to
    scope = scope or "project"
    if scope == "project" and not projects:
        projects = (ctx.project_key(),)
    if scope == "machine" and not options.get("project"):
        projects = ()
    limit = options.get("limit") or "50"
    if not (str(limit).isascii() and str(limit).isdigit() and len(str(limit)) <= 9 and 0 < int(limit) <= MAX_LIMIT):
        raise bad_parameter("limit", f"takes a whole number from 1 to {MAX_LIMIT}")
    query = filters_query(options, projects, int(limit))
    store = ctx.open_store(create=False)
    try:
        query = named_works(ctx, store, query)
        rows = store.list_works(query)
        legacy = _legacy_rows(ctx, store, query) if scope == "project" and not _store_only(query) else []
    finally:
        store.close()
    works = [
        {
            "work_id": row.work_id, "slug": row.slug, "project": row.project_key, "status": row.status,
            "next": row.next_move, "orientation": row.orientation, "revision_id": row.head_revision_id,
            "revision_number": row.head_number, "updated_at": row.updated_at, "source": "store",
        }
        for row in rows
    ]  # fmt: skip
    works += legacy
    return {**reply, "scope": scope, "projects": list(projects), "count": len(works), "works": works}


# The filters whose values are free text: each is compared with or searched in the store's text.
_TEXT_FILTERS = ("grep", "status", "next", "owner", "linked_to", "forked_from", "author", "since")
MAX_GREP = 1000  # characters in one --grep text: a phrase, not a document (PostgreSQL's phrase query nests a level
# a word, and failed past some tens of thousands of words)
MAX_VALUES = 100  # values of one filter (each is ORed into the statement)


def filters_query(options: dict[str, Any], projects: tuple[str, ...], limit: int) -> WorkQuery:
    """The list filters of a command's options as a store query (list, and export's selection).

    A value holding a NUL character is refused (`usage`, naming the filter): no stored text holds one, SQLite's
    full-text query ends at it and PostgreSQL refuses it in any text, which surfaced as the store failing
    (`storage-error`). The command line cannot carry one; the web view's address and an MCP call can. So is a
    `--grep` text of more than MAX_GREP characters, and more than MAX_VALUES values of one filter."""
    if options.get("entry_kind") or options.get("entry_state") or options.get("edge_kind"):
        _check_closed(options)
    for name, values in (("project", projects), *((name, options.get(name)) for name in _TEXT_FILTERS)):
        given = (values,) if isinstance(values, str) else tuple(values or ())
        if any("\x00" in str(value) for value in given):
            raise bad_parameter(name, "holds a NUL character, which no filter can match")
        if len(given) > MAX_VALUES:
            raise bad_parameter(name, f"takes at most {MAX_VALUES} values (not {len(given)})")
    if any(len(str(text)) > MAX_GREP for text in options.get("grep") or ()):
        raise bad_parameter("grep", f"takes a text of at most {MAX_GREP:,} characters")
    return WorkQuery(
        projects=projects,
        grep=tuple(options.get("grep") or ()),
        statuses=tuple(options.get("status") or ()),
        nexts=tuple(options.get("next") or ()),
        entry_kinds=tuple(options.get("entry_kind") or ()),
        entry_states=tuple(options.get("entry_state") or ()),
        owners=tuple(options.get("owner") or ()),
        gated=options.get("gated"),
        edge_kinds=tuple(options.get("edge_kind") or ()),
        linked_to=tuple(options.get("linked_to") or ()),
        forked_from=tuple(options.get("forked_from") or ()),
        authors=tuple(options.get("author") or ()),
        since=options.get("since"),
        limit=limit,
    )


def _check_closed(options: dict[str, Any]) -> None:
    """Filters whose values are a closed set: an unknown value is refused with the valid ones, never matched to []."""
    from wheypoint.model.contract import EDGE_KINDS, ENTRY_KINDS, ENTRY_STATES, HOST_ONLY_EDGE_KINDS

    closed = {"entry_kind": ENTRY_KINDS, "entry_state": ENTRY_STATES, "edge_kind": EDGE_KINDS + HOST_ONLY_EDGE_KINDS}
    for name, valid in closed.items():
        unknown = [str(value) for value in options.get(name) or () if value not in valid]
        if unknown:
            raise bad_parameter(name, f"takes {', '.join(valid)} (not {', '.join(unknown)})",
                                f"unknown-{name.replace('_', '-')}")  # fmt: skip


def named_works(ctx: Context, store: Store, query: WorkQuery) -> WorkQuery:
    """The query with each work its `--forked-from` and `--linked-to` values name spelt as the store spells refs.

    A value is looked up as every command looks up a work (app/lookup.py): `--forked-from` must name a work (a
    slug, id, note path or `wheypoint:` ref; refused otherwise); a `--linked-to` that names one matches edges and
    links to it however they were written, and any other value (a file, a URL) matches links spelt as given.
    """
    if not query.forked_from and not query.linked_to:
        return query
    from wheypoint.app.lookup import exact_matches, find_work

    def spellings(work: WorkRef) -> tuple[str, ...]:
        return (f"wheypoint:{work.project_key}/{work.work_id}", f"wheypoint:{work.project_key}/{work.slug}")

    forked = tuple(ref for value in query.forked_from for ref in spellings(find_work(ctx, store, value).work))
    linked: list[str] = []
    for value in query.linked_to:
        _, works = exact_matches(store, value, ctx.project_key())
        if len(works) > 1:
            find_work(ctx, store, value)  # refused `ambiguous`, naming the projects
        linked += [value, *(spellings(works[0]) if works else ())]
    return query._replace(forked_from=forked, linked_to=tuple(dict.fromkeys(linked)))


def _store_only(query: WorkQuery) -> bool:
    """Filters only a store record can satisfy (legacy notes have no entries, edges or links)."""
    return bool(query.entry_kinds or query.entry_states or query.owners or query.edge_kinds or query.linked_to
                or query.forked_from or query.authors or query.since)  # fmt: skip


def _legacy_rows(ctx: Context, store: Store, query: WorkQuery) -> list[dict[str, Any]]:
    """Hand-written notes in this checkout and its worktrees that fit the filters, marked as legacy."""
    rows = []
    for path, parsed, text in legacy_notes_here(ctx, store):
        status_ok = not query.statuses or any(
            s in (parsed.status_kind, parsed.status) for s in query.statuses
        )  # fmt: skip
        gated_ok = query.gated is None or query.gated == (parsed.status_kind == "gated")
        next_ok = not query.nexts or parsed.next in query.nexts
        grep_ok = not query.grep or any(g.lower() in text.lower() for g in query.grep)
        if status_ok and gated_ok and next_ok and grep_ok:
            slug = os.path.splitext(os.path.basename(path))[0]
            rows.append({
                "work_id": None, "slug": slug, "project": ctx.project_key(), "status": parsed.status or "",
                "next": parsed.next, "orientation": parsed.orientation or "", "revision_id": None,
                "revision_number": 0, "updated_at": parsed.created or "", "source": "legacy-note",
                "note_path": path,
            })  # fmt: skip
    return rows[: query.limit]


def legacy_notes_here(ctx: Context, store: Store) -> list[LegacyNote]:
    """The hand-written notes of this checkout and its worktrees (notes/legacy.py). A note named after a slug of one
    of the project's works is that work's, and is passed over unread: `list` reads no note the store backs, however
    many the folder holds."""
    from wheypoint.notes.legacy import legacy_notes, note_names

    folders = note_names(ctx.note_roots())
    names = [name[:-3] for _, found in folders for name in found]
    return legacy_notes(folders, store.slugs_held(ctx.project_key(), names))
