"""Writing a checkpoint: pick the target work, observe the world, commit through the store, write the note.

`validate` runs the same path without committing, so it refuses exactly what `checkpoint` would.
"""

from __future__ import annotations

import os

from wheypoint.app.context import Context, NoteOptions, TranscriptChoice, note_path_for, written_from
from wheypoint.app.shellword import posix_quote
from wheypoint.app.workspace import Checkout, checkout_root, file_digest
from wheypoint.model.characters import first_hidden
from wheypoint.model.errors import Problem, Refusal
from wheypoint.model.intake import require_valid
from wheypoint.model.kernel import Provenance, apply, genesis_identity, record_refs, request_digest, revision_id_for
from wheypoint.model.records import Record
from wheypoint.model.refs import line_ref_path, line_refs, ref_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from wheypoint.store.base import Store


def _target(store: Store, intent: dict[str, Any], project_key: str) -> tuple[str, str | None]:
    """(work id, project key) the intent writes to; the work may not exist yet."""
    if "work_id" in intent:
        work = store.work(intent["work_id"])
        if work is None:
            raise Refusal("record-missing", f"no work {intent['work_id']}; a first checkpoint gives a slug instead")
        return work.work_id, work.project_key
    base = intent.get("base_revision_id")
    if base and "slug" not in intent:
        work = store.work_of_revision(base)
        if work is None:
            raise Refusal("unknown-base", f"no revision {base} in the store")
        return work.work_id, work.project_key
    _, work_id = genesis_identity(intent, project_key)
    existing = store.work(work_id)
    return work_id, existing.project_key if existing else project_key


def _line_ref_sites(intent: dict[str, Any]) -> list[tuple[str, str]]:
    """(JSON path, reference) of every path:line reference an intent makes, which a commit pins when tracked."""
    sites: list[tuple[str, str]] = []
    for index, item in enumerate(intent.get("working_context", [])):
        sites += [(f"$.working_context[{index}]", ref) for ref in line_refs(item)]
    for index, link in enumerate(intent.get("artifact_links", [])):
        sites += [(f"$.artifact_links[{index}].ref", ref) for ref in line_refs(link["ref"])]
    for index, fork in enumerate(intent.get("decision_dossier", [])):
        for number, option in enumerate(fork["options"]):
            for place, evidence in enumerate(option.get("evidence", [])):
                site = f"$.decision_dossier[{index}].options[{number}].evidence[{place}]"
                sites += [(site, ref) for ref in line_refs(evidence)]
    return sites


def ask_tracked(ctx: Context, intent: dict[str, Any]) -> Callable[[], set[str]]:
    """Which files the intent's path:line references name are tracked at HEAD, asked of git now and answered when
    called: `observe` takes the answer, and git runs while the command does its other work until then."""
    paths = sorted({line_ref_path(ref) for _, ref in _line_ref_sites(intent)})
    return ctx.checkout.tracked_at_head_later(paths) if ctx.checkout else set


def observe(ctx: Context, intent: dict[str, Any], project_key: str, grounding: Grounding | None,
            tracked_later: Callable[[], set[str]] | None = None) -> tuple[Provenance, list[Problem]]:  # fmt: skip
    """What the world says about an intent's references (pins, local refs, file digests) and its transcript;
    `tracked_later`: `ask_tracked`'s answer for this intent, when it was asked already.

    Runs before the store's write transaction: git subprocesses and file hashing must not hold the lock.
    """
    checkout = ctx.checkout
    root = checkout.toplevel if checkout else ctx.cwd
    warnings: list[Problem] = []
    # What needs no answer from git comes first, while git works on its question.
    digests = {}
    for link in intent.get("artifact_links", []):
        if ref_kind(link["ref"]) == "relative":
            target = os.path.join(root, line_ref_path(link["ref"]))
            if checkout is None or checkout.contains(target):
                found = file_digest(target)
                if found:
                    digests[link["ref"]] = found
    git = {"branch": checkout.branch, "commit": checkout.commit} if checkout and checkout.commit else None
    # Never the intent's (contract.py): the transcript named, else WHEYPOINT_SESSION, else the one live session.
    session = (grounding.session if grounding else None) or ctx.session() or _live_session(ctx, project_key)
    unusable = session is not None and first_hidden(f"{session['harness']}:{session['id']}") is not None
    line_ref_sites = _line_ref_sites(intent)
    tracked = (tracked_later or ask_tracked(ctx, intent))()
    pins: dict[str, str] = {}
    for path, ref in line_ref_sites:
        if checkout and checkout.commit and line_ref_path(ref) in tracked:
            pins[ref] = f"{ref}@{checkout.commit[:7]}"
        else:
            why = "no git commit here" if not (checkout and checkout.commit) else "not tracked at HEAD"
            warnings.append(Problem("unpinned-line-ref", path, f"{ref} is left unpinned: {why}"))

    candidates = set(record_refs(intent))
    local = {r for r in candidates if _is_local(r, checkout, ctx.cwd)}
    relative = sorted(r for r in candidates if ref_kind(r) == "relative" and " " not in r)
    if checkout:
        # A file tracked at HEAD is the repository's, whatever an ignore pattern says: only the others are asked
        # about, which spares a git process when every relative reference is a tracked path:line.
        unknown = sorted({line_ref_path(r) for r in relative} - tracked)
        ignored = checkout.ignored(unknown)
        local |= {r for r in relative if line_ref_path(r) in ignored}
    if unusable:
        # The id comes from a transcript or the environment and goes on the note's `session:` line: a line break or
        # hidden character there would split or disguise that line, so the session is left out, with a warning.
        warnings.append(Problem("session-unusable", "$.session", "the session id holds a line break or a hidden "
                                "character; the revision records no session"))  # fmt: skip
        session = None
    prov = Provenance(
        project_key=project_key, captured_at=ctx.now(), session=session, git=git, pins=pins,
        local_refs=frozenset(local), file_digests=digests,
        quote_turns=grounding.quote_turns if grounding else {}, meat=grounding.meat if grounding else (),
    )  # fmt: skip
    return prov, warnings


def _live_session(ctx: Context, project_key: str) -> dict[str, str] | None:
    import time

    from wheypoint.app.sessions import live_session

    checkout = ctx.checkout
    return live_session(ctx.environ, project_key, checkout.toplevel if checkout else ctx.cwd, ctx.cwd, time.time())


def _is_local(ref: str, checkout: Checkout | None, cwd: str) -> bool:
    kind = ref_kind(ref)
    if kind == "xdg":
        return True
    if kind == "absolute":
        return checkout is None or not checkout.contains(os.path.expanduser(ref))
    if kind == "relative" and checkout is not None and " " not in ref:
        return not checkout.contains(os.path.join(checkout.toplevel, line_ref_path(ref)))
    return False


def write_note(ctx: Context, record: dict[str, Any], options: NoteOptions) -> tuple[str | None, str, list[Problem]]:
    """(note path, durability, warnings): the note is derived, so failing to write it is a warning."""
    if options.no_note:
        return None, "canonical-local", []
    from wheypoint.app.noteplace import put_note
    from wheypoint.notes.files import ignore_temps
    from wheypoint.notes.render import render  # validate never renders: only a written checkpoint has a note

    path = note_path_for(ctx, record["slug"], options)
    checkout = ctx.checkout
    try:
        kept = put_note(path, render(record), checkout.toplevel if checkout else ctx.cwd)
    except Refusal as refused:
        return None, "canonical-local", [Problem(refused.code, path, refused.message)]
    except OSError as exc:
        return None, "canonical-local", [Problem("note-unwritable", path, f"the note was not written: {exc}")]
    durability = note_durability(ctx, path)
    if durability == "repo-snapshot":
        ignore_temps(os.path.dirname(path))
    return path, durability, [hand_edit_kept(kept)] if kept else []


def note_durability(ctx: Context, path: str) -> str:
    """`repo-snapshot` when the note's real folder lies in the checkout the command runs in (or, outside any, in
    a checkout of its own); symbolic links and `..` are resolved first, so neither can borrow a checkout."""
    folder = os.path.realpath(os.path.dirname(path))
    own = checkout_root(folder)
    here = ctx.checkout
    same = own is not None and (here is None or os.path.realpath(own[0]) == os.path.realpath(here.toplevel))
    return "repo-snapshot" if same else "canonical-local"


def hand_edit_kept(kept: str) -> Problem:
    """The warning that a note a person had edited was moved aside, not lost, before the new one was written."""
    return Problem("note-hand-edit-kept", kept, "the note had been edited by hand; the edited copy is kept here")


class Grounding(Record):
    session: dict[str, str] | None
    quote_turns: dict[str, str]
    meat: tuple[dict[str, Any], ...]


def _ground(ctx: Context, intent: dict[str, Any], choice: TranscriptChoice) -> Grounding | None:
    """Check quotes and copy meat from the named transcript (meat without a named one is looked up)."""
    if not choice.named and not intent.get("meat"):
        return None
    from wheypoint.model.rules import secret_problem
    from wheypoint.transcripts import discovery, grounding
    from wheypoint.transcripts.model import ReadStats

    located = choice.locate(ctx)
    turns = choice.read if choice.read is not None else discovery.turns_of(located, ReadStats())
    found = grounding.ground(intent, turns, located.harness, located.session_id)
    problems = list(found.problems)
    for index, item in enumerate(found.meat):  # copied text is scanned like typed text
        secret = secret_problem(f"$.meat[{index}]", item["text"])
        if secret is not None:
            problems.append(secret)
    if problems:
        raise Refusal("invalid-intent", f"the intent has {len(problems)} problem(s) against its transcript", problems)
    session = {"harness": located.harness, "id": located.session_id} if located.session_id else None
    return Grounding(session, found.quote_turns, found.meat)


def _dry_run_or_commit(
    ctx: Context, intent: dict[str, Any], choice: TranscriptChoice, notes: NoteOptions | None,
    known_head: dict[str, Any] | None = None, writer: Store | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Build the revision on the head; commit it when `notes` says where its note goes, else a dry run. `writer`:
    a store the caller opened to write and closes itself, else one is opened here for this call."""
    write = notes is not None
    project_key = ctx.project_key()
    tracked = ask_tracked(ctx, intent)  # git runs while the transcript is read and the store opened
    store = writer
    try:
        grounded = _ground(ctx, intent, choice)
        store = writer if writer is not None else ctx.open_store(create=write)
        work_id, work_project = _target(store, intent, project_key)
        base = intent.get("base_revision_id")
        candidate = revision_id_for(work_id, base, request_digest(intent))
        prov, observed = observe(ctx, intent, work_project or project_key, grounded, tracked)

        def build(head: dict[str, Any] | None) -> Any:
            return apply(head, intent, prov)

        if not write:
            replay = store.record(work_id, candidate)
            if replay is not None:
                receipt = next(r for r in store.revisions(work_id) if r["revision_id"] == candidate)
                return {"record": replay, "revision": receipt, "replayed": True, "warnings": []}
            head = store.record(work_id)
            _check_base(store, work_id, head, base)
            outcome = build(head)
            return {"record": outcome.record, "revision": outcome.revision, "replayed": False,
                    "warnings": observed + outcome.warnings}  # fmt: skip
        committed = store.commit(work_id, base, candidate, build, written_from(ctx, notes or NoteOptions()), known_head)
        return {"record": committed.record, "revision": committed.revision, "replayed": committed.replayed,
                "warnings": observed + committed.warnings}  # fmt: skip
    finally:
        tracked()  # (read, and git's process waited for, whatever happened meanwhile)
        if writer is None and store is not None:
            store.close()


def _check_base(store: Store, work_id: str, head: dict[str, Any] | None, base: str | None) -> None:
    """The base rule the store enforces on commit (model/bases.py), for a dry run."""
    from wheypoint.model.bases import base_refusal

    head_id = head["revision_id"] if head else None
    refused = base_refusal(work_id, head_id, base, lambda named: store.record(work_id, named) is not None)
    if refused is not None:
        raise refused


def _summary(record: dict[str, Any], revision: dict[str, Any]) -> dict[str, Any]:
    return {
        "work_id": record["work_id"],
        "slug": record["slug"],
        "project": record["project_key"],
        "revision_id": record["revision_id"],
        "revision_number": record["revision_number"],
        "parent_revision_id": record["parent_revision_id"],
        "status": record["status"],
        "next": record["next"],
        "record_digest": record["record_digest"],
        "added": revision["added"],
        "transitioned": revision["transitioned"],
    }


# The link text's escapes: a backslash, `[` or `]` gets a backslash before it.
_LINK_TEXT_ESCAPES = str.maketrans({"\\": "\\\\", "[": "\\[", "]": "\\]"})


def handoff_lines(ctx: Context, slug: str, note_path: str | None) -> dict[str, str] | None:
    """Seed 0's closing lines for a note just written: the note as a Markdown link a person can click from any
    folder, and the two ways to resume it, by slug from the checkout and by the note's absolute path from
    anywhere. None when no note was written."""
    if note_path is None:
        return None
    path = os.path.abspath(note_path)
    checkout = ctx.checkout
    top = checkout.toplevel if checkout else ctx.cwd
    shown = os.path.relpath(path, top) if checkout is not None and checkout.contains(path) else path
    label = shown.translate(_LINK_TEXT_ESCAPES)  # a bracket or backslash would end or bend the link text
    if not any(char.isspace() or char in "()<>" for char in path):  # (`isspace` is what `\s` matches)
        target = path
    elif not any(char in "<>\n" for char in path):
        target = f"<{path}>"  # CommonMark's bracketed destination keeps spaces and parentheses
    else:
        from urllib.parse import quote

        target = quote(path)
    return {
        "dropped": f"Wheypoint dropped: [{label}]({target})",
        "resume_in_checkout": f"cd {posix_quote(top)} && wheypoint resolve {slug}",
        "resume_anywhere": f"wheypoint resolve {posix_quote(path)}",
    }


def checkpoint(ctx: Context, intent: Any, notes: NoteOptions, choice: TranscriptChoice | None = None) -> dict[str, Any]:
    return checkpoint_on(ctx, intent, notes, choice)[0]


def checkpoint_on(
    ctx: Context, intent: Any, notes: NoteOptions, choice: TranscriptChoice | None = None,
    known_head: dict[str, Any] | None = None, handoff: bool = True, writer: Store | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """`checkpoint`'s reply and the record it stored, building on `known_head` (the head as this command last read
    or wrote it) when the work's head is still that revision: a writer of several revisions reads none again.
    Without `handoff` the reply's handoff lines, which only a person reads, are left out (None). `writer`: the
    store to commit through, opened to write by the caller (which closes it), else one opened for this call."""
    valid = require_valid(intent)
    result = _dry_run_or_commit(ctx, valid, choice or TranscriptChoice(), notes, known_head, writer)
    record = result["record"]
    note_path, durability, note_warnings = write_note(ctx, record, notes)
    warnings = result["warnings"] + note_warnings
    return {
        **_summary(record, result["revision"]),
        "replayed": result["replayed"],
        "durability": durability,
        "note_path": note_path,
        "handoff": handoff_lines(ctx, record["slug"], note_path) if handoff else None,
        "warnings": [w.as_json() for w in warnings],
    }, record


def validate(ctx: Context, intent: Any, choice: TranscriptChoice | None = None) -> dict[str, Any]:
    """Every problem at once; with a store, also what checkpoint would refuse against the head."""
    valid = require_valid(intent)
    result = _dry_run_or_commit(ctx, valid, choice or TranscriptChoice(), None)
    return {**_summary(result["record"], result["revision"]), "valid": True, "would_replay": result["replayed"],
            "warnings": [w.as_json() for w in result["warnings"]]}  # fmt: skip
