"""`doctor`'s store and notes: the backend's own check, every record's digest and chain, this checkout's notes.

The store: the backend's facts (schema version, size, SQLite's own integrity check; a PostgreSQL server
checks its own pages), then every revision row read as stored and verified as an import verifies a bundle
(model/bundle.verify_chain: ids, numbering, parents, `record_digest` and `revision_digest` recomputed), its
`record_digest` column against its record, and each work's head pointer against its last revision.

The notes: each work of this project whose note belongs to this checkout (app/context.place_of), compared with
what its head renders to now. A generated note that differs is `stale` (`--fix` renders it again); one that no
longer carries its own digest was edited by hand (left alone: `show <work> --write-note` keeps the edit beside
it); a missing one is only counted (`--no-note` writes none). Temporaries that writers killed mid-write left in
a notes folder are listed, and swept by `--fix` when their writer is gone (notes/files.stray_temps).
"""

from __future__ import annotations

import json
import os

from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.app.context import Context
    from wheypoint.store.base import Store

MAX_LISTED = 20  # findings of one kind spelled out; the rest are counted


def finding(code: str, message: str, **facts: Any) -> dict[str, Any]:
    """One finding of doctor: a code, a sentence, and where (path, harness, work ...)."""
    return {"code": code, "message": message, **{k: v for k, v in facts.items() if v is not None}}


def check_store(ctx: Context, problems: list[dict[str, Any]]) -> dict[str, Any]:
    """The store's report; what is wrong with it goes to `problems`."""
    from wheypoint.app.workspace import store_location
    from wheypoint.store import shown

    location = shown(store_location(ctx.environ))
    try:
        store = ctx.open_store(create=False)
    except Refusal as refusal:
        problems.append(finding("store-unreadable", f"the store at {location} cannot be opened: {refusal}",
                                path=location))  # fmt: skip
        return {"location": location, "readable": False}
    report: dict[str, Any] = {"location": location, "readable": False}
    try:
        facts = store.health()
        report = {**facts, "readable": True}
        integrity = facts.get("integrity")
        if integrity is not None and integrity != ["ok"]:
            shown_problems = "; ".join(integrity[:5])
            problems.append(finding("store-integrity", f"the store's own check found damage: {shown_problems}",
                                    path=location))  # fmt: skip
        if facts.get("exists"):
            report.update(_verify_records(store, problems, location))
    except Refusal as refusal:
        problems.append(finding("store-unreadable", f"the store at {location} cannot be read: {refusal}",
                                path=location))  # fmt: skip
        report["readable"] = False
    finally:
        try:
            store.close()
        except Refusal:
            pass
    return report


def _verify_records(store: Store, problems: list[dict[str, Any]], location: str) -> dict[str, Any]:
    from wheypoint.model.bundle import verify_chain
    from wheypoint.model.integrity import intact

    works = store.works_to_check()
    revisions = broken = 0
    corrupt: list[dict[str, Any]] = []  # every record a read for use refuses (`record-corrupt`), none left out
    for work_id, _project, slug, head_id, head_number in works:
        rows = store.revisions_to_check(work_id)
        revisions += len(rows)
        corrupt += [{"work_id": work_id, "slug": slug, "revision_id": revision_id, "revision_number": number}
                    for revision_id, number, _parent, column, text, _receipt in rows
                    if intact(work_id, revision_id, column, text) is None]  # fmt: skip
        wrong = _row_problem(work_id, slug, rows, head_id, head_number, verify_chain)
        if wrong is not None:
            broken += 1
            if broken <= MAX_LISTED:
                where, what = wrong
                problems.append(finding("record-digest-mismatch", f"work {slug} ({work_id}), {where}: {what}",
                                        work_id=work_id, revision_id=where if where.startswith("r") else None,
                                        path=location))  # fmt: skip
    if broken > MAX_LISTED:
        problems.append(finding("record-digest-mismatch", f"and {broken - MAX_LISTED} more works fail their check",
                                path=location))  # fmt: skip
    return {"works": len(works), "revisions": revisions, "works_failing_verification": broken,
            "corrupt_records": corrupt}  # fmt: skip


def _row_problem(work_id: str, slug: str, rows: list[tuple[str, int, str | None, str, str, str]], head_id: str,
                 head_number: int, verify_chain: Any) -> tuple[str, str] | None:  # fmt: skip
    """(where, what is wrong) for the first fault of one work's stored rows, else None."""
    pairs = []
    for revision_id, number, _parent, column_digest, record_json, revision_json in rows:
        try:
            record, receipt = json.loads(record_json), json.loads(revision_json)
        except ValueError as exc:
            return revision_id, f"revision {number} is not JSON ({exc})"
        if not isinstance(record, dict) or not isinstance(receipt, dict):
            return revision_id, f"revision {number} is not a record and a receipt"
        if record.get("revision_id") != revision_id or record.get("revision_number") != number:
            return revision_id, f"revision {number}'s row does not hold its own record"
        if column_digest != record.get("record_digest"):
            return revision_id, "its stored record_digest is not the record's own"
        pairs.append({"record": record, "revision": receipt})
    broken: tuple[str, str] | None = verify_chain({"work_id": work_id, "slug": slug, "revisions": pairs})
    if broken is not None:
        return broken
    if not rows or rows[-1][0] != head_id or rows[-1][1] != head_number:
        return "head", f"the work's head points at r{head_number} {head_id}, not at its last revision"
    return None


def check_notes(ctx: Context, fix: bool, problems: list[dict[str, Any]], fixed: list[dict[str, Any]]) -> dict[str, Any]:
    """This checkout's notes: current, stale, hand-edited, missing, and writers' temporaries (see the docstring)."""
    from wheypoint.app.context import place_of
    from wheypoint.app.noteplace import put_note
    from wheypoint.notes.files import NOTES_SUBDIR, note_bytes, shows, stray_temps, sweep_temps
    from wheypoint.notes.render import carries_own_digest, render

    checkout = ctx.checkout
    if checkout is None:
        return {"checkout": None}
    project = ctx.project_key()
    counts = {"current": 0, "stale": 0, "hand_edited": 0, "missing": 0}
    store_read = True  # False when the store broke off (check_store says why)
    folders = {os.path.join(checkout.toplevel, NOTES_SUBDIR)}
    temps = []
    for folder in sorted(folders):  # first: rendering a note sweeps its own temporaries, unreported
        if fix:
            fixed += [{"action": "removed-temporary", "path": path} for path in sweep_temps(folder)]
    try:
        store = ctx.open_store(create=False)
        works = [w for w in store.works_to_check() if w[1] == project]
    except Refusal:
        store, works, store_read = None, [], False
    try:
        for work_id, *_ in works:
            assert store is not None
            try:
                ref, record = store.work(work_id), store.record(work_id)
            except Refusal as refusal:
                if refusal.code != "record-corrupt":  # listed by the store's check (record-digest-mismatch)
                    raise
                continue
            if ref is None or record is None:
                continue
            place = place_of(ctx, ref)
            if not place.current:
                continue
            path = place.note_path
            folders.add(os.path.dirname(path))
            expected = render(record)
            try:
                data = note_bytes(path)
            except OSError as exc:
                problems.append(finding("note-unreadable", f"cannot read {path}: {exc.strerror or exc}", path=path))
                continue
            if data is None:
                counts["missing"] += 1
            elif shows(data, expected):
                counts["current"] += 1
            elif not carries_own_digest(data.decode("utf-8", "replace")):
                counts["hand_edited"] += 1
                problems.append(finding("note-hand-edited", f"{path} was edited by hand and no longer shows the "
                                        f"store's r{record['revision_number']}; `wheypoint show {record['slug']} "
                                        "--write-note` writes it again and keeps the edit beside it", path=path,
                                        work_id=work_id))  # fmt: skip
            elif fix:
                try:
                    put_note(path, expected, checkout.toplevel)
                except (Refusal, OSError) as exc:
                    why = exc.message if isinstance(exc, Refusal) else exc.strerror or str(exc)
                    problems.append(finding("note-unwritable", f"{path} was not rendered again: {why}", path=path,
                                            work_id=work_id))  # fmt: skip
                    continue
                counts["current"] += 1
                fixed.append({"action": "rendered-note", "path": path, "revision": record["revision_number"]})
            else:
                counts["stale"] += 1
                problems.append(finding("note-stale", f"{path} is not what the store's r{record['revision_number']} "
                                        "renders to (`doctor --fix` renders it again)", path=path, work_id=work_id,
                                        fix="render the note again"))  # fmt: skip
    except Refusal:
        store_read = False
    finally:
        if store is not None:
            try:
                store.close()
            except Refusal:
                pass
    for folder in sorted(folders):
        if fix:
            fixed += [{"action": "removed-temporary", "path": path} for path in sweep_temps(folder)]
        for path, removable in stray_temps(folder):
            temps.append({"path": path, "removable": removable})
            if removable:
                problems.append(finding("note-temporary", f"{path} was left by a writer killed mid-write "
                                        "(`doctor --fix` removes it)", path=path, fix="remove it"))  # fmt: skip
    return {"checkout": checkout.toplevel, "project": project, "folders": sorted(folders), **counts,
            "temporaries": temps, "store_read": store_read}  # fmt: skip
