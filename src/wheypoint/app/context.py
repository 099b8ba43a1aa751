"""Where a command runs: the folder, the environment, the store it opens, the note and transcript it names.

Every application module receives a `Context` instead of reading the process's globals, so tests (and
later front doors) can run a command in any folder with any environment.
"""

from __future__ import annotations

import os

from wheypoint.app.workspace import Checkout, find_checkout, normalise_key, store_location
from wheypoint.model.errors import Refusal
from wheypoint.model.records import Record
from wheypoint.notes.files import NOTES_SUBDIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from wheypoint.store.base import Store
    from wheypoint.store.rows import WorkRef, WrittenFrom
    from wheypoint.transcripts.discovery import Located
    from wheypoint.transcripts.model import Turn


class Context:
    """Where a command runs: the folder, the environment, and the options every command shares."""

    def __init__(
        self, cwd: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None,
        project: str | None = None,
    ) -> None:  # fmt: skip
        self.cwd = os.path.abspath(cwd) if cwd is not None else os.getcwd()
        # os.environ itself, not a copy: copying decodes every variable, and nothing here changes them.
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.project = project
        self._checkout: Checkout | bool | None = False  # found on first use
        self._own_key: str | None = None  # the checkout's or the folder's project key, found on first use

    @property
    def checkout(self) -> Checkout | None:
        if self._checkout is False:
            self._checkout = find_checkout(self.cwd)
        return self._checkout if isinstance(self._checkout, Checkout) else None

    def project_key(self) -> str:
        """The project this command works in: named, else the checkout's (from its remote, so the checkout's git
        config is read once per context, like the checkout itself), else the folder's name."""
        explicit = self.project or self.environ.get("WHEYPOINT_PROJECT")
        if explicit:
            return normalise_key(explicit)
        if self._own_key is None:
            checkout = self.checkout
            self._own_key = checkout.project_key() if checkout else normalise_key(os.path.basename(self.cwd))
        return self._own_key

    # A long-running front door (`serve`, `mcp`) sets this: a connection to a team store is then kept open for the
    # next reader or writer of the process when it is closed, instead of connecting again (a connection costs more
    # than a page or a tool call).
    keep_connections = False
    # The `wheypoint` program sets this: its process ends with `os._exit` as soon as the command is answered, so a
    # SQLite writer may leave its connection for the exit to drop (store/sqlite/backend.py). Never for a process
    # that keeps connections, which is a long-lived one.
    ends_with_command = False
    _shared: SharedReads | None = None  # set inside `one_store`

    def open_store(self, *, create: bool) -> Store:
        """The store this environment names (see `store.open_store`); `create` only for writes. Inside `one_store`,
        a read is served by the block's one store."""
        shared = self._shared
        if shared is not None:
            return shared.writer(self) if create else shared.reader(self)
        return self._open(create)

    def store_exists(self) -> bool:
        """Whether the store this environment names is there already (see `store.exists`): a command that reads
        before it likely writes then opens it once, to write, and a store that is not there is made only by a
        write."""
        from wheypoint.store import exists

        return exists(store_location(self.environ))

    def _open(self, create: bool) -> Store:
        from wheypoint.store import open_store

        kept = self.keep_connections
        return open_store(store_location(self.environ), create=create, kept=kept,
                          exit_closes=self.ends_with_command and not kept)  # fmt: skip

    def one_store(self) -> SharedReads:
        """A `with` block whose reads all go through one store, opened at the first of them and closed when the block
        ends (`serve`: one store, and on a team store one connection, per page, however many reads draw it)."""
        return SharedReads(self)

    def done_reading(self) -> None:
        """Inside `one_store`: close its store now, before the block ends (`serve`, once a page is drawn)."""
        if self._shared is not None:
            self._shared.release()

    def note_roots(self) -> list[str]:
        """Where notes of this checkout live: its top folder and every other worktree, else the current folder."""
        return self.checkout.worktree_roots() if self.checkout else [self.cwd]

    def now(self) -> str:
        import time

        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def author(self) -> str | None:
        """Who writes from here: `$WHEYPOINT_AUTHOR`, else git's user.email for this folder, else the OS user."""
        named = self.environ.get("WHEYPOINT_AUTHOR", "").strip()
        if named:
            return named
        from wheypoint.app.gitconfig import files, lookup

        checkout = self.checkout
        email, ask_git = lookup(self.environ, files(self.environ, checkout.common_dir if checkout else None),
                                "user", None, "email")  # fmt: skip
        if ask_git:  # includes the reader does not follow: git itself says
            from wheypoint.app.gitrun import run_git

            done = run_git(["config", "--get", "user.email"], self.cwd)
            email = done[1].decode("utf-8", errors="replace").strip() if done and done[0] == 0 else None
        if email:
            return email
        user = self.environ.get("USER") or self.environ.get("LOGNAME") or self.environ.get("USERNAME")
        if user:
            return user
        try:
            import pwd

            return pwd.getpwuid(os.getuid()).pw_name
        except (ImportError, KeyError, AttributeError):
            return None

    def session(self) -> dict[str, str] | None:
        value = self.environ.get("WHEYPOINT_SESSION", "")
        harness, _, session_id = value.partition(":")
        return {"harness": harness, "id": session_id} if harness and session_id else None


# The reads one page repeats (its head, its work, its backlinks, as several app functions each look them up): inside
# `one_store`, each is asked of the store once and answered again from what it said.
REPEATED_READS = frozenset(("work", "record", "records", "backlinks", "revisions", "history"))


class SharedReads:
    """`Context.one_store`'s block: the one store its reads borrow, what they were answered, and what it closes.

    A read borrows the store (its `close` leaves it open); a read asked again (REPEATED_READS, the same arguments)
    is answered as the first time, so the block draws from one moment of the store. A write opens a store of its
    own, as outside the block, and the reads after it borrow a store opened after it and are asked again, so they
    see what it wrote even where the first store could not (a reader of a store that did not exist yet sees an
    empty one). What a read answers is shared by the readers of the block: they read it, never change it."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.current: Store | None = None
        self.opened: list[Store] = []  # closed when the block ends, the first first
        self.answers: dict[tuple[Any, ...], Any] = {}

    def reader(self, ctx: Context) -> Store:
        if self.current is None:
            self.current = ctx._open(create=False)
            self.opened.append(self.current)
        return _Borrowed(self.current, self.answers)  # a Store by delegation (its __getattr__)

    def writer(self, ctx: Context) -> Store:
        self.current = None  # reads after this write borrow a store opened after it, and ask it afresh
        self.answers = {}
        return ctx._open(create=True)

    def __enter__(self) -> SharedReads:
        self.ctx._shared = self
        return self

    def __exit__(self, *exc: object) -> None:
        self.ctx._shared = None
        self.release()

    def release(self) -> None:
        """Close the stores the block opened, now (a team store's connection goes back for the next reader); a read
        after this opens one again, closed in turn when the block ends."""
        opened, self.opened, self.current, self.answers = self.opened, [], None, {}
        failed: Refusal | None = None
        for store in opened:  # each is closed, even after one that failed to; the first refusal is raised
            try:
                store.close()
            except Refusal as refusal:
                failed = failed or refusal
        if failed is not None:
            raise failed


class _Borrowed:
    """A store lent to one reader inside `Context.one_store`: every method is the block's store's but `close`, and
    a repeated read is answered from the block's answers."""

    def __init__(self, store: Store, answers: dict[tuple[Any, ...], Any]) -> None:
        self._store = store
        self._answers = answers

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)
        if name not in REPEATED_READS:
            return method
        answers = self._answers

        def remembered(*args: Any) -> Any:
            key = (name, *(tuple(arg) if isinstance(arg, list) else arg for arg in args))
            if key not in answers:
                known, answer = _from_history(answers, key)
                answers[key] = answer if known else method(*args)
            answer = answers[key]
            return list(answer) if isinstance(answer, list) else dict(answer) if name == "records" else answer

        return remembered

    def close(self) -> None:
        """Nothing: the block closes its store when it ends."""


def _from_history(answers: dict[tuple[Any, ...], Any], key: tuple[Any, ...]) -> tuple[bool, Any]:
    """(whether, what) a read is answered by a history of its work the block read already (its receipts and its
    records, verified as `record` verifies them): the receipts, a revision's record, and the head's record when the
    work read says the history's last revision is its head."""
    history = answers.get(("history", key[1])) if len(key) > 1 else None
    if not history:
        return False, None
    if key[0] == "revisions" and len(key) == 2:
        return True, [revision.receipt for revision in history]
    if key[0] == "record" and len(key) == 3 and key[2] is not None:
        found = next((r.record for r in history if r.receipt.get("revision_id") == key[2]), None)
        return found is not None, found
    if key[0] == "record" and len(key) == 2:
        work = answers.get(("work", key[1]))
        if work is not None and history[-1].receipt.get("revision_id") == work.head_revision_id:
            return True, history[-1].record
    return False, None


def note_path_named(ctx: Context, ref: str) -> str | None:
    """The note file a reference names as a path, from the current folder; None when it names a work instead.

    Written as a path (`/…`, `~/…`, `./…`) it is one, existing or not; `a/b.md` or `x.md` is one when that file
    exists. A slug holds no `/` and no `.`, and a work id ends in `.<8 hex>`, so neither is taken for a path.
    """
    path = os.path.join(ctx.cwd, os.path.expanduser(ref))
    if ref.startswith(("/", "~", ".")):
        return path
    return path if ("/" in ref or ref.endswith(".md")) and os.path.isfile(path) else None


class NoteOptions(Record):
    """Where the note goes: a folder other than the checkout's .cheese/notes, or nowhere."""

    note_dir: str | None = None
    no_note: bool = False


def note_dir_for(ctx: Context, options: NoteOptions) -> str:
    """The note folder: `--note-dir` from the current folder, else the checkout's top (else the current folder)."""
    if options.note_dir:
        return os.path.join(ctx.cwd, os.path.expanduser(options.note_dir))  # an absolute dir wins the join
    checkout = ctx.checkout
    return os.path.join(checkout.toplevel if checkout else ctx.cwd, NOTES_SUBDIR)


def note_path_for(ctx: Context, slug: str, options: NoteOptions) -> str:
    """The note's path: `<note dir>/<slug>.md`."""
    return os.path.join(note_dir_for(ctx, options), f"{slug}.md")


def written_from(ctx: Context, options: NoteOptions) -> WrittenFrom:
    """What the store keeps of where a write came from (see `place_of`)."""
    from wheypoint.store.rows import WrittenFrom  # only writes need it; `turns` never loads the store

    checkout = ctx.checkout
    note_dir = None if options.no_note else note_dir_for(ctx, options)
    return WrittenFrom(checkout.toplevel if checkout else None, note_dir, ctx.author())


class Place(Record):
    """Where a work is checked from here: the checkout its findings are about, and where its note is."""

    checkout: Checkout | None
    checkout_path: str | None  # the checkout's top folder, also when it is no longer there
    current: bool  # whether it is the checkout the command runs in
    note_path: str


def place_of(ctx: Context, work: WorkRef) -> Place:
    """The checkout and note a work is read against, from the folder `ctx` runs in.

    A work is about the checkout it was written in. Read from a checkout of the same project (the same
    clone, a worktree, another clone), that checkout is the one to check, and the note is at the same
    place inside it. Read from anywhere else, it is the checkout the work was written in, if that folder
    is still there, and the note is in the folder it was written to. A work written before the store
    kept this (schema 5) is read against the current folder, as it always was.
    """
    slug_md = f"{work.slug}.md"
    here = ctx.checkout
    if work.checkout is None and work.note_dir is None:
        return Place(here, here.toplevel if here else None, True, note_path_for(ctx, work.slug, NoteOptions()))
    if here is not None and ctx.project_key() == work.project_key:
        note_dir = work.note_dir
        if note_dir is None or work.checkout is None:
            note_dir = os.path.join(here.toplevel, NOTES_SUBDIR)
        elif _inside(note_dir, work.checkout):
            note_dir = os.path.join(here.toplevel, os.path.relpath(note_dir, work.checkout))
        return Place(here, here.toplevel, True, os.path.join(note_dir, slug_md))
    written = find_checkout(work.checkout) if work.checkout and os.path.isdir(work.checkout) else None
    note_dir = work.note_dir or os.path.join(work.checkout or ctx.cwd, NOTES_SUBDIR)
    current = here is not None and written is not None and here.toplevel == written.toplevel
    return Place(written, work.checkout, current, os.path.join(note_dir, slug_md))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


HOOK_PATH_FIELDS = ("session_id", "transcript_path", "cwd")  # what a hook payload tells the transcript readers


class TranscriptChoice(Record):
    """How the command named its transcript, if it did (see transcripts/discovery.py)."""

    transcript: str | None = None
    session: str | None = None
    harness: str | None = None
    latest: bool = False
    hook: dict[str, Any] | None = None
    # Turns the caller already read from this transcript (the rescue): meat is copied from these, not read again.
    read: tuple[Turn, ...] | None = None
    # The session the caller already located for this choice (the hooks): not located again, which reads its head.
    found: Located | None = None

    @property
    def named(self) -> bool:
        return bool(self.transcript or self.session or self.hook)

    def locate(self, ctx: Context) -> Located:
        """The one session this choice means, or the refusal that says why not."""
        if self.found is not None:
            return self.found
        from wheypoint.transcripts import discovery

        if self.hook is not None:
            check_hook_paths(self.hook)
        return discovery.locate(
            cwd=ctx.cwd, environ=ctx.environ, transcript=self.transcript, session=self.session,
            harness=self.harness, hook=self.hook, latest=self.latest, project_root=_project_root,
        )  # fmt: skip


def check_hook_paths(hook: Mapping[str, Any]) -> None:
    """Refuse a hook payload whose path fields (HOOK_PATH_FIELDS) the transcript readers cannot take.

    The payload is whatever the harness (or a caller pretending to be one) sent: the readers take these fields for
    paths and ids, so any other type, or a NUL (no path or file name can hold one), is the payload's fault, named
    as such. Every use of those fields goes through here first (locating the session, the hooks' fast paths)."""
    for key in HOOK_PATH_FIELDS:
        value = hook.get(key)
        if value is not None and not isinstance(value, str):
            raise Refusal("invalid-hook-payload", f"a hook payload's {key} is a string, not {type(value).__name__}")
        if value and "\x00" in value:
            raise Refusal("invalid-hook-payload", f"a hook payload's {key} holds a NUL character")


def _project_root(folder: str) -> str:
    """The top of the checkout holding `folder`, else the folder itself: where sessions are matched."""
    checkout = find_checkout(folder)
    return checkout.toplevel if checkout else folder
