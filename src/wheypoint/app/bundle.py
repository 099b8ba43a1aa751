"""`export` and `import`: works' revision chains as one canonical JSON bundle, streamed both ways.

Export writes each work as it is read, so memory holds one work at a time whatever the number of works: the
works go to a temporary file beside the output, then the header (with `bundle_digest`, which sorts first and
covers everything else) and that file are joined into the output, which replaces any earlier file in one rename.

Import reads the same layout back one work at a time (json.JSONDecoder.raw_decode over a sliding buffer),
checks that every piece is in canonical form (so the bytes hashed are the canonical bundle), that each work's
chain holds (model/bundle.verify_chain) and each record and receipt fits its schema, and hands the revisions to
the store as a stream inside one transaction: a bad revision, a conflict or a wrong `bundle_digest` found at
the end rolls every work back. A revision already in the store is left as it is, so importing twice writes once.
"""

from __future__ import annotations

import os
import sys

from wheypoint.app.context import Context, NoteOptions
from wheypoint.model.bundle import BUNDLE_VERSION, OMITTABLE, redact, renamed, verify_chain
from wheypoint.model.canonical import canonical_text, new_sha256
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator, Iterator
    from typing import IO, Any

    from wheypoint.model.kernel import Outcome
    from wheypoint.store.base import Store
    from wheypoint.store.rows import Build, Write

CHUNK = 1 << 16
MAX_WORK_CHARS = 256 << 20  # one work's JSON at most: a revision chain of 256 MiB is not a handoff
PROGRESS_EVERY = 100


def _progress(verb: str, done: int, total: int | None, final: bool = False) -> None:
    """A progress line on stderr, only when it is a terminal (a pipe or a log gets nothing)."""
    if not sys.stderr.isatty() or not (final or done % PROGRESS_EVERY == 0):
        return
    of = f"/{total:,}" if total is not None else ""
    sys.stderr.write(f"\r{verb} {done:,}{of} works" + ("\n" if final else ""))
    sys.stderr.flush()


# ------------------------------------------------------------------------------------------------------ export


def export_bundle(ctx: Context, ref: str | None, out: str | None, *, all_works: bool, include_operator: bool,
                  include_local: bool, filters: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Write the bundle of one work, or of the project's works `list`'s filters select, to `out`."""
    from wheypoint.app.listing import filters_query

    filters = filters or {}
    query = filters_query(filters, (ctx.project_key(),), 1 << 62)
    filtered = query != filters_query({}, query.projects, query.limit)
    if (ref is None) == (not (all_works or filtered)):
        raise Refusal("usage", "takes one work, or --all (or list's filters) for the project's works", usage=True)
    project = ctx.project_key()
    store = ctx.open_store(create=False)
    said: dict[str, Any] = {}
    try:
        if ref is None:
            from wheypoint.app.listing import named_works

            work_ids = [w.work_id for w in store.list_works(named_works(ctx, store, query))]
            name = project
        else:
            from wheypoint.app.lookup import find_work

            found = find_work(ctx, store, str(ref))
            work_ids, name = [found.work.work_id], found.work.slug
            said = found.said()
        target = os.path.abspath(out) if out else default_target(ctx, name)
        omitted = {key: 0 for key in OMITTABLE if not {"operator_directives": include_operator,
                                                        "local_references": include_local}[key]}  # fmt: skip
        revisions = write_bundle(store, work_ids, target, omitted, include_operator, include_local)
    finally:
        store.close()
    return {"path": target, "bundle_digest": revisions[1], "works": len(work_ids), "revisions": revisions[0],
            "omitted": omitted, **said}  # fmt: skip


BUNDLES_SUBDIR = os.path.join(".cheese", "bundles")


def default_target(ctx: Context, name: str) -> str:
    """Where a bundle goes without `--out`: `.cheese/bundles/<name>.bundle.json` in a checkout, a folder that
    ignores itself (so `git add -A` never commits a copy of the store), else `<name>.bundle.json` here."""
    checkout = ctx.checkout
    if checkout is None:
        return os.path.abspath(os.path.join(ctx.cwd, f"{name}.bundle.json"))
    from wheypoint.notes.files import IGNORE_ALL_TEXT, ignore_temps

    folder = os.path.join(checkout.toplevel, BUNDLES_SUBDIR)
    try:
        if os.path.islink(folder) or os.path.islink(os.path.dirname(folder)):
            raise OSError(0, "a symbolic link stands where the bundles' folder goes")
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise Refusal("bundle-unwritable", f"cannot make {folder}: {exc.strerror or exc}; name a file with --out"
                      ) from None  # fmt: skip
    ignore_temps(folder, IGNORE_ALL_TEXT)
    return os.path.join(folder, f"{name}.bundle.json")


def write_bundle(store: Store, work_ids: list[str], target: str, omitted: dict[str, int], operator: bool,
                  local: bool) -> tuple[int, str]:  # fmt: skip
    folder = os.path.dirname(target)
    works_file = os.path.join(folder, f".{os.path.basename(target)}.{os.getpid()}.works")
    final_file = os.path.join(folder, f".{os.path.basename(target)}.{os.getpid()}.tmp")
    left_out: dict[str, set[str]] = {}
    total = 0
    try:
        with open(works_file, "w", encoding="utf-8", newline="") as works:
            for index, work_id in enumerate(work_ids):
                pairs = []
                for stored in store.history(work_id):  # one read per work, however many revisions
                    record, receipt = redact(stored.record, stored.receipt, operator=operator, local=local,
                                             left_out=left_out)  # fmt: skip
                    pair: dict[str, Any] = {"record": record, "revision": receipt}
                    if stored.author:
                        pair["author"] = stored.author  # who wrote it, beside what the digests cover
                    pairs.append(pair)
                total += len(pairs)
                first = pairs[0]["record"]
                works.write(("," if index else "") + canonical_text({"revisions": pairs, "slug": first["slug"],
                                                                     "work_id": work_id}))  # fmt: skip
                _progress("exported", index + 1, len(work_ids))
        _progress("exported", len(work_ids), len(work_ids), final=True)
        omitted.update({key: len(left_out.get(key, ())) for key in omitted})
        head = canonical_text({"bundle_version": BUNDLE_VERSION, "omitted": omitted})[:-1] + ',"works":['
        hasher = new_sha256()
        hasher.update(head.encode("utf-8"))
        for chunk in _chunks(works_file):
            hasher.update(chunk)
        hasher.update(b"]}")
        bundle_digest = "sha256:" + hasher.hexdigest()
        with open(final_file, "wb") as final:
            final.write(f'{{"bundle_digest":"{bundle_digest}",'.encode() + head[1:].encode("utf-8"))
            for chunk in _chunks(works_file):
                final.write(chunk)
            final.write(b"]}\n")
            final.flush()
            os.fsync(final.fileno())
        os.replace(final_file, target)
    except OSError as exc:
        raise Refusal("bundle-unwritable", f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        for leftover in (works_file, final_file):
            try:
                os.unlink(leftover)
            except OSError:
                pass
    return total, bundle_digest


def _chunks(path: str) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            yield chunk


# ------------------------------------------------------------------------------------------------------ import


class _Reader:
    """The bundle's parts in order, from a file read in chunks; every byte after the digest is hashed."""

    def __init__(self, handle: IO[bytes], source: str) -> None:
        import codecs
        import json

        self.handle, self.source = handle, source
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.json = json.JSONDecoder()
        self.buffer, self.pos, self.eof = "", 0, False
        self.hasher = new_sha256()

    def fill(self) -> bool:
        if self.eof:
            return False
        try:
            data = self.handle.read(CHUNK)
        except OSError as exc:  # opened, then unreadable: a folder, a device, a file on a failing disk
            raise Refusal("bundle-unreadable", f"cannot read {self.source}: {exc.strerror or exc}") from None
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise Refusal("invalid-utf8", f"{self.source} is not UTF-8: {exc.reason}") from None
        self.eof = not data
        self.buffer = self.buffer[self.pos :] + text
        self.pos = 0
        return bool(data)

    def literal(self, text: str, hashed: bool = True) -> None:
        while len(self.buffer) - self.pos < len(text) and self.fill():
            pass
        if self.buffer[self.pos : self.pos + len(text)] != text:
            raise self.malformed(f"expected {text!r}")
        self.pos += len(text)
        if hashed:
            self.hasher.update(text.encode("utf-8"))

    def peek(self) -> str:
        while self.pos >= len(self.buffer) and self.fill():
            pass
        return self.buffer[self.pos : self.pos + 1]

    def value(self) -> Any:
        """The next JSON value, which must be written exactly in canonical form."""
        while True:
            try:
                value, end = self.json.raw_decode(self.buffer, self.pos)
            except RecursionError:
                raise self.malformed("a value nests too deeply") from None
            except ValueError:
                if len(self.buffer) - self.pos > MAX_WORK_CHARS:  # bounded memory, even for a broken file
                    raise self.malformed(f"one work is over {MAX_WORK_CHARS:,} characters, or is not JSON") from None
                if self.fill():
                    continue
                raise self.malformed("a value is cut short or is not JSON") from None
            if end == len(self.buffer) and not self.eof and self.fill():  # a number may go on in the next chunk
                continue
            raw = self.buffer[self.pos : end]
            try:
                canonical = canonical_text(value)
            except (ValueError, RecursionError):
                raise self.malformed("a value has no canonical form") from None
            if raw != canonical:
                raise self.malformed("it is not in canonical form (keys sorted, no spaces, integers only)")
            self.hasher.update(raw.encode("utf-8"))
            self.pos = end
            return value

    def malformed(self, why: str) -> Refusal:
        return Refusal("bundle-malformed", f"{self.source} is not a wheypoint bundle: {why}")


def import_bundle(ctx: Context, path: str, as_slug: str | None, notes: NoteOptions) -> dict[str, Any]:
    from wheypoint.store.rows import ImportedFrom

    source = os.path.abspath(path)
    from wheypoint.model.regular import open_regular

    try:
        handle = open_regular(source)  # closed below, after the store's transaction; a FIFO or device refused
    except OSError as exc:
        raise Refusal("bundle-unreadable", f"cannot read {source}: {exc.strerror or exc}") from None
    touched: list[str] = []
    state: dict[str, Any] = {"works": 0, "present": 0}
    try:
        reader = _Reader(handle, source)
        reader.literal('{"bundle_digest":', hashed=False)
        try:
            claimed = reader.json.raw_decode(reader.buffer, reader.pos)
        except (ValueError, RecursionError):  # not JSON, an integer too long for Python to convert, or too deep
            raise reader.malformed("no bundle_digest") from None
        if not isinstance(claimed[0], str) or not claimed[0].startswith("sha256:"):
            raise reader.malformed("no bundle_digest")
        reader.pos = claimed[1]
        reader.literal(",", hashed=False)
        reader.hasher.update(b"{")
        origin = ImportedFrom(claimed[0], source, ctx.now())
        store = ctx.open_store(create=True)
        try:
            written, replayed = store.commit_stream(_writes(reader, store, claimed[0], origin, as_slug, touched, state))
        finally:
            store.close()
    finally:
        handle.close()
    note_paths: list[str | None] = []
    warnings: list[dict[str, Any]] = []
    if not notes.no_note:
        from wheypoint.app.checkpoint import write_note

        store = ctx.open_store(create=False)
        try:
            for work_id in touched:
                record = store.record(work_id)
                if record is not None:
                    note_path, _, note_warnings = write_note(ctx, record, notes)
                    note_paths.append(note_path)
                    warnings += [w.as_json() for w in note_warnings]
        finally:
            store.close()
    return {"bundle_digest": origin.bundle_digest, "works": state["works"], "written": written,
            "already_present": state["present"] + replayed, "imported_works": touched,
            "note_paths": note_paths, "warnings": warnings}  # fmt: skip


def _writes(reader: _Reader, store: Store, claimed: str, origin: Any, as_slug: str | None, touched: list[str],
            state: dict[str, Any]) -> Iterator[Write]:  # fmt: skip
    """Every revision to store, in order, verified; the bundle's own digest is checked after the last one."""
    reader.literal('"bundle_version":')
    if reader.value() != BUNDLE_VERSION:
        raise Refusal("bundle-version", f"this runtime reads bundle version {BUNDLE_VERSION}")
    reader.literal(',"omitted":')
    reader.value()
    reader.literal(',"works":[')
    first = True
    while reader.peek() != "]":
        if not first:
            reader.literal(",")
        first = False
        work = reader.value()
        if not isinstance(work, dict):
            raise reader.malformed("a work is not an object")
        if as_slug is not None:
            if state["works"]:
                raise Refusal("usage", "--as renames the work of a one-work bundle", usage=True, parameter="as")
            broken = verify_chain(work)  # the chain as exported must hold before it is renamed
            if broken is None:
                work = renamed(work, as_slug)
        state["present"] += yield from _work_writes(store, work, origin, touched)
        state["works"] += 1
        _progress("imported", state["works"], None)
    reader.literal("]}")
    while True:  # only white space may follow, read a chunk at a time so trailing bytes cost no memory
        if reader.buffer[reader.pos :].strip():
            raise reader.malformed("something follows the bundle")
        reader.pos = len(reader.buffer)
        if not reader.fill():
            break
    _progress("imported", state["works"], None, final=True)
    if "sha256:" + reader.hasher.hexdigest() != claimed:
        raise Refusal("bundle-tampered", "the bundle's bytes do not match its bundle_digest: nothing was imported")


def _stored(outcome: Outcome) -> Build:
    """The build of an imported revision: the record as the bundle holds it, whatever the head (the base is checked)."""

    def build(head: dict[str, Any] | None) -> Outcome:
        return outcome

    return build


def _work_writes(store: Store, work: dict[str, Any], origin: Any, touched: list[str]) -> Generator[Write, None, int]:
    """The revisions of one work that the store lacks; returns how many it already had."""
    from wheypoint.model.contract import RECORD, REVISION
    from wheypoint.model.kernel import Outcome
    from wheypoint.model.rules import check_record
    from wheypoint.model.schemacheck import SchemaChecker
    from wheypoint.store.rows import Write

    broken = verify_chain(work)
    if broken is not None:
        raise Refusal("bundle-tampered", f"{work.get('work_id')!r}: {broken[0]}: {broken[1]}; nothing was imported",
                      details={"work_id": work.get("work_id"), "revision": broken[0]})  # fmt: skip
    work_id = work["work_id"]
    stored = store.revisions(work_id)
    parent = None
    wrote = False
    for number, pair in enumerate(work["revisions"]):
        record, receipt = pair["record"], pair["revision"]
        problems = SchemaChecker(RECORD).check(record) + SchemaChecker(REVISION).check(receipt)
        if problems:
            raise Refusal("bundle-tampered", f"{work_id!r}: {record['revision_id']}: {problems[0].message}",
                          details={"work_id": work_id, "revision": record["revision_id"]})  # fmt: skip
        unsafe = check_record(record)
        if unsafe:
            raise Refusal("bundle-unsafe", f"{work_id!r}: {record['revision_id']}: {unsafe[0].path} "
                          f"{unsafe[0].message}; a checkpoint refuses this, so an import does too: nothing was "
                          "imported", problems=unsafe, details={"work_id": work_id,
                          "revision": record["revision_id"]})  # fmt: skip
        if number < len(stored):
            mine = stored[number]
            if (mine["revision_id"], mine["record_digest"]) != (record["revision_id"], record["record_digest"]):
                ancestor = stored[number - 1]["revision_id"] if number else None
                raise Refusal("import-conflict", f"{work_id} has another history in this store from revision "
                              f"{number + 1} on; the common ancestor is {ancestor or 'none'}: nothing was imported",
                              details={"work_id": work_id, "common_ancestor": ancestor,
                                       "store_head": stored[-1]["revision_id"],
                                       "bundle_head": work["revisions"][-1]["record"]["revision_id"]})  # fmt: skip
        else:
            author = pair.get("author")  # who wrote it, when the bundle says (a string), else nobody known
            yield Write(work_id, parent, record["revision_id"], _stored(Outcome(record, receipt, [])),
                        imported_from=origin, author=author if isinstance(author, str) else None)  # fmt: skip
            wrote = True
        parent = record["revision_id"]
    if wrote:
        touched.append(work_id)
    return min(len(stored), len(work["revisions"]))
