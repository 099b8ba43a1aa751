"""The rescue checkpoint: before a compaction, keep the session's new user turns verbatim, with no model involved.

A rescue writes revisions of the session's work (the work this session last wrote, else a work named from
the session) whose only new content is meat: the user's own turns since the session's last checkpoint,
and the turns the agent marked with `<!-- ckpt -->` trailers, copied byte for byte by the runtime from the
transcript (the intent names turn ids only, so nothing here can retype a word). Provenance (session, git,
time) is recorded by the checkpoint as for any other. A turn holding a credential is kept with each credential
replaced by `[redacted <rule>]` (the meat item's `redacted` says where): the person's other words in it are not
lost, and the value reaches neither the store nor the note. A turn longer than the record keeps is left in the
transcript and named in the answer, never cut.

A session's own rescue work holds at most PART_TEXT characters and PART_TURNS turns: past either, the session's
turns go on in a new work, `<session slug>-part-<n>`, whose record links to the work before it (`relates_to`).
So what a rescue of the newest turns costs (the record's digest, its note, its row, each written whole) is
bounded by a part, not by the session, which may run to hundreds of megabytes and thousands of prompts; and
each note stays one a person can read at a sitting. Nothing is dropped: every turn is in one part, and each part
names the one it follows.
"""

from __future__ import annotations

from wheypoint.app.context import Context, NoteOptions, TranscriptChoice
from wheypoint.model.contract import MAX_LIST, MAX_MEAT_TEXT
from wheypoint.model.errors import Refusal
from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.store.base import Store
    from wheypoint.transcripts.discovery import Located
    from wheypoint.transcripts.model import Turn

RECENT_WORKS = 20  # how many of the project's newest works are searched for the session's own work
# What a part holds before a rescue goes on in the session's next part: characters of kept turns, and kept turns
# (each costs its own bookkeeping in the record and the note, however short). Every revision of a part reads,
# checks, digests, stores and renders it whole: at these bounds a full part adds about 2 ms to a rescue (0.1x of
# the interpreter's start; bench/hook_bench.py, `64 KiB into a full part`), which 64 turns and 48,000 characters
# made 3.5-4 ms.
PART_TEXT = 32_000
PART_TURNS = 40
PART_LOOKUP = 64  # the parts of a session asked about in one read of the store
USER_TURN_TYPE = "thread"  # a user turn kept by a rescue: part of the thread, its weight left to a person


class Rescued(Record):
    """What a rescue did: the work and its head, how many turns it kept, and which it had to leave out."""

    work_id: str | None
    slug: str | None
    revision_id: str | None
    revision_number: int | None
    kept: int
    skipped: tuple[str, ...]  # "<turn id>: <why>"
    session: str  # harness:id
    read: dict[str, Any] | None = None  # where this rescue's read stopped (transcripts.lines.read_mark)
    warning: dict[str, str] | None = None  # the transcript may be in a format the reader does not know
    redacted: tuple[str, ...] = ()  # the kept turns whose credentials were redacted
    rest: str | None = None  # an unfinished last line the read stopped before (transcripts.lines.rest_after)


def session_slug(harness: str, session_id: str) -> str:
    """A slug for a session that has no work yet: `session-<harness>-<the id's first 8 letters or digits>`.

    A short type prefix such as OpenCode's `ses_` says nothing about the session, so it is left out.
    """
    kind, underscore, rest = session_id.partition("_")
    if underscore and rest and kind.isalpha() and len(kind) <= 4:
        session_id = rest
    short = "".join(c for c in session_id.lower() if c.isascii() and c.isalnum())[:8] or "unknown"
    return f"session-{harness}-{short}"


def part_slug(slug: str, number: int) -> str:
    """The slug of part `number` of a session's own rescue work (`slug` is the session's, part 1's)."""
    return slug if number == 1 else f"{slug}-part-{number}"


def part_number(slug: str, own: str) -> int | None:
    """Which part of the session's own rescue work (`own`: its slug) a work's `slug` names, or None."""
    if slug == own:
        return 1
    number = slug[len(own) + 6 :] if slug.startswith(own + "-part-") else ""
    return int(number) if number.isdigit() and number[0] != "0" and int(number) > 1 else None


def _session_work(store: Store, project: str, session: dict[str, str], slug: str) -> dict[str, Any] | None:
    """The head record of the work a rescue of this session continues: the newest of the work an agent wrote in
    the session (among the project's RECENT_WORKS newest works) and the last part of the session's own rescue work
    (`slug`), however many works came after that part and whoever wrote its head (a rescue into it keeps only the
    turns it does not hold yet).

    The parts are numbered in the order they were begun, so the last is found by its number (`_last_part`) rather
    than by the store's newest-first order, which ties within a second: a long session's first rescue writes
    several parts in one. Only that part's head is read, and of the others only those of works that are not the
    session's own parts; a tie between the two is the part's.
    """

    def other(work_id: str) -> bool:
        return part_number(work_id.rpartition(".")[0], slug) is None

    agents = (record for record in store.newest_heads_holding(project, session["id"], RECENT_WORKS, other)
              if record.get("session") == session)  # fmt: skip  # (a damaged head left out)
    agent = next(agents, None)
    number = _last_part(store, project, slug)
    found = (_usable_head(store, own.work_id) for own in store.works_with_slug(part_slug(slug, number), project))
    own = next((record for record in found if record is not None), None) if number else None
    if agent is None or (own is not None and own["updated_at"] >= agent["updated_at"]):
        return own
    return agent


def _last_part(store: Store, project: str, slug: str, after: int = 0) -> int:
    """The number of the last part of the session's own rescue work there is (0: none yet), looking from part
    `after` on: the next PART_LOOKUP parts' slugs asked about in one read, and no record read, so that a session of
    many parts costs a rescue no read a part. Parts are begun one after another, so the last is the highest held."""
    number = after
    while True:
        names = {part_slug(slug, n): n for n in range(number + 1, number + 1 + PART_LOOKUP)}
        held = [names[name] for name in store.slugs_held(project, list(names))]
        if not held:
            return number
        number = max(held)
        if number < max(names.values()):
            return number


def session_turns(record: dict[str, Any], session_id: str) -> set[str]:
    """The ids of the session's turns a record holds as meat."""
    return {m["turn"] for m in record["meat"] if m.get("session_id") == session_id}


def _kept_before(store: Store, project: str, own: str, number: int, session_id: str) -> set[str]:
    """The session's turns the parts before part `number` of its own rescue work hold: read when the transcript
    is read from its start, so that no turn is kept twice."""
    kept: set[str] = set()
    for earlier in range(1, number):
        for work in store.works_with_slug(part_slug(own, earlier), project):
            record = _usable_head(store, work.work_id) or {"meat": ()}
            kept |= session_turns(record, session_id)
    return kept


def _held(record: dict[str, Any] | None) -> tuple[int, int]:
    """(characters, turns) of the kept turns a record holds."""
    return (sum(len(m["text"]) for m in record["meat"]), len(record["meat"])) if record else (0, 0)


def _full(held: tuple[int, int]) -> bool:
    """Whether a work holding `held` (characters, turns) takes no more turns: the session goes on in a new part."""
    return held[0] >= PART_TEXT or held[1] >= PART_TURNS


def _usable_head(store: Store, work_id: str) -> dict[str, Any] | None:
    """A work's head record, or None when it is not there or its head was changed in the store (another work's
    damaged head must not cost this rescue)."""
    try:
        return store.record(work_id)
    except Refusal as refusal:
        if refusal.code != "record-corrupt":
            raise
        return None


class Read(Record):
    """What a rescue read: the turns it may keep, where the read stopped, and a warning about the file's format."""

    turns: list[Turn]  # the main thread's user turns and the turns the agent marked
    mark: dict[str, Any] | None  # transcripts.lines.read_mark of where it stopped
    warning: dict[str, str] | None  # transcripts.model.format_warning, for a whole read
    whole: bool  # read from the transcript's start (not from where the last rescue stopped)
    rest: str | None  # the checksum of an unfinished last line the read stopped before (lines.rest_after)


def _read(located: Located, mark: Any) -> Read:
    """Read once, from where the last rescue of the session stopped when its reader can resume and the file only
    grew since (`mark`)."""
    from collections import Counter

    from wheypoint.transcripts import discovery
    from wheypoint.transcripts.lines import read_mark, rest_after, resume_point
    from wheypoint.transcripts.model import MARKED, USER_KINDS, ReadStats, format_warning

    stats = ReadStats()
    start = None
    if discovery.resumable(located):
        start = resume_point(located.path, mark)
        source = discovery.turns_from(located, stats, start, frozenset((*USER_KINDS, MARKED)))
    else:
        source = discovery.turns_of(located, stats)
    kinds: Counter[str] = Counter()
    turns = []  # only what a rescue can keep is held: a 400 MB session holds a few MB of these
    for turn in source:
        if turn.agent is None:
            kinds[turn.kind] += 1
            if turn.kind in USER_KINDS or "ckpt" in turn.text:
                turns.append(turn)
    point = stats.read_point
    mark = read_mark(located.path, point) if point is not None else None
    return Read(turns, mark, format_warning(stats, kinds) if start is None else None, start is None,
                rest_after(located.path, mark) if mark else None)  # fmt: skip


def _wanted_turns(turns: list[Turn], since: str | None, kept: set[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """(meat items to keep, turns left out with why): user turns after `since` and the agent's marked turns."""
    from wheypoint.model.rules import secret_problem
    from wheypoint.transcripts.harvest import harvest
    from wheypoint.transcripts.model import USER_KINDS

    texts = {t.id: t.text for t in turns}
    items: dict[str, dict[str, Any]] = {}
    for turn in turns:
        if turn.kind in USER_KINDS and turn.text.strip() and _after(turn.timestamp, since):
            items[turn.id] = {"turn": turn.id, "type": USER_TURN_TYPE, "weight": 1}
    for trailer in harvest(turns):  # every marked turn once: those already kept are dropped below
        if trailer.status == "ok" and trailer.type:  # (an ok trailer has its weight: harvest gives the default)
            items[trailer.turn_id] = {"turn": trailer.turn_id, "type": trailer.type, "weight": trailer.weight}
    chosen, skipped = [], []
    for turn_id, item in items.items():
        text = texts[turn_id]
        if turn_id in kept:
            continue
        if len(text) > MAX_MEAT_TEXT:
            skipped.append(f"{turn_id}: {len(text)} characters, over the {MAX_MEAT_TEXT} a record keeps")
        elif secret_problem("$", text) is not None:  # kept, each credential redacted (the record says where)
            chosen.append({**item, "redact": True})
        else:
            chosen.append(item)
    return chosen, skipped


def _after(timestamp: str | None, since: str | None) -> bool:
    """Whether a turn may be newer than the checkpoint captured at `since` (both ISO 8601 UTC).

    Compared to the second, inclusively: a checkpoint's time has whole seconds, a turn's often fractions, and a
    turn of that same second may have come after it. A turn without a time is taken; one already kept as meat
    is dropped by the caller, so taking too many costs nothing.
    """
    return since is None or timestamp is None or timestamp[:19] >= since[:19]


def rescue(ctx: Context, choice: TranscriptChoice, *, trigger: str, mark: Any = None) -> Rescued:
    """Write the rescue revisions for the session `choice` names (see the module's docstring).

    `mark` is what the session's last rescue remembered of its read (`Rescued.read`): the transcript is then read
    from where that one stopped, when the file only grew since. A session that has no work yet is read whole.
    """
    located = choice.locate(ctx)
    session = {"harness": located.harness, "id": located.session_id or ""}
    if not located.session_id:
        raise Refusal("session-not-found", f"{located.path} has no session id to name the rescued work by")
    own_slug = session_slug(located.harness, located.session_id)
    project = ctx.project_key()
    one = _OneStore(ctx)
    try:
        return _rescue_through(ctx, one, located, session, own_slug, project, trigger, mark)
    finally:
        one.close()


class _OneStore:
    """A rescue's one store: its lookups and every revision it writes go through one connection. Opened to write
    when the store is there already (a rescue mostly writes); a store not there yet is read as empty, and made by
    the first write, which opens it to write for the rest."""

    def __init__(self, ctx: Context) -> None:
        self.ctx, self.writing = ctx, ctx.store_exists()
        self.store = ctx.open_store(create=self.writing)

    def writer(self) -> Store:
        if not self.writing:
            self.store.close()
            self.store, self.writing = self.ctx.open_store(create=True), True
        return self.store

    def close(self) -> None:
        self.store.close()


def _rescue_through(ctx: Context, one: _OneStore, located: Located, session: dict[str, str], own_slug: str,
                    project: str, trigger: str, mark: Any) -> Rescued:  # fmt: skip
    """`rescue`, through the store it opened."""
    from wheypoint.app.checkpoint import checkpoint_on
    from wheypoint.transcripts.model import USER_KINDS

    head = _session_work(one.store, project, session, own_slug)
    key = f"{located.harness}:{located.session_id}"
    read = _read(located, mark if head else None)
    # The session's own rescue work takes every user turn it does not hold yet: a rescue cut off between two of its
    # revisions (a deadline, a killed hook) left newer revisions than the turns it never wrote. A work an agent
    # wrote in the session takes the turns since its last checkpoint, which covered the ones before.
    own = head is not None and part_number(head["slug"], own_slug) is not None
    kept = session_turns(head, session["id"]) if head else set()
    if head is not None and own and read.whole and head["slug"] != own_slug:
        number = part_number(head["slug"], own_slug) or 1
        kept |= _kept_before(one.store, project, own_slug, number, session["id"])
    turns = read.turns
    since = head["updated_at"] if head and not own else None
    items, skipped = _wanted_turns(turns, since, kept)
    typed = {t.id for t in turns if t.kind in USER_KINDS}
    if head is None and not any(item["turn"] in typed for item in items):
        items = []  # a new work must hold something the person typed, not only a harness's preamble or marks
    chosen = {item["turn"] for item in items}
    texts = {t.id: len(t.text) for t in turns if t.id in chosen}
    # The turns already read, handed to the checkpoint so that it copies the meat from them: the transcript is
    # read once per rescue, whatever the number of revisions.
    pinned = TranscriptChoice(transcript=located.path, session=located.session_id, harness=located.harness,
                              read=tuple(t for t in turns if t.id in chosen), found=located)  # fmt: skip
    reply: dict[str, Any] | None = None
    # The head of the work being written, as read or last written here: each revision builds on it without reading
    # it again, and the session's next part links to it.
    known = head
    slug, base, held = (head["slug"], head["revision_id"], _held(head)) if head else (own_slug, None, (0, 0))
    pending = items
    while pending:
        store = one.writer()
        if base is not None and _full(held):  # this work is full: the session goes on in its next part
            intent = _next_part(store, project, own_slug, key, trigger, known)
            slug, base, held, known = intent["slug"], None, (0, 0), None
        elif base is None:
            intent = {"slug": slug, "orientation": f"Session {key}, kept by wheypoint before a compaction ({trigger}).",
                      "next": {"move": "hold"}, "notes": _provenance(key, trigger)}  # fmt: skip
        else:
            intent = {"slug": slug, "base_revision_id": base}
        # A revision takes up to MAX_LIST turns, and no more once its work is full.
        count = 0
        while count < min(MAX_LIST, len(pending)) and not _full(held):
            held = (held[0] + texts[pending[count]["turn"]], held[1] + 1)
            count += 1
        intent["meat"], pending = pending[:count], pending[count:]
        # The note shows the head: rendered once per work, for the last revision written to it.
        last = not pending or _full(held)
        options = NoteOptions() if last else NoteOptions(no_note=True)
        reply, known = checkpoint_on(ctx, intent, options, pinned, known, handoff=False,  # (the hook prints none)
                                     writer=store)  # fmt: skip
        base = reply["revision_id"]
    if reply is None:  # nothing new: the work (if any) is still the one to resume
        return Rescued(head["work_id"] if head else None, slug if head else None, base,
                       head["revision_number"] if head else None, 0, tuple(skipped), key, read.mark,
                       read.warning, rest=read.rest)  # fmt: skip
    return Rescued(reply["work_id"], reply["slug"], reply["revision_id"], reply["revision_number"], len(items),
                   tuple(skipped), key, read.mark, read.warning,
                   tuple(item["turn"] for item in items if item.get("redact")), read.rest)  # fmt: skip


def _next_part(store: Store, project: str, own: str, key: str, trigger: str,
               after: dict[str, Any] | None) -> dict[str, Any]:  # fmt: skip
    """The intent of the session's next part: a new work after the last part there is, linked to the full one."""
    # the full work's own number is where to look from: a long session has many parts
    number = _last_part(store, project, own, part_number(after["slug"], own) or 0 if after else 0) + 1
    intent: dict[str, Any] = {
        "slug": part_slug(own, number), "next": {"move": "hold"}, "notes": _provenance(key, trigger),
        "orientation": f"Session {key}, part {number}, kept by wheypoint before a compaction ({trigger}).",
    }  # fmt: skip
    if after is not None:
        intent["links"] = [{"ref": f"wheypoint:{project}/{after['work_id']}", "kind": "relates_to",
                            "rationale": f"The session's earlier turns are in {after['slug']}."}]  # fmt: skip
    return intent


def _provenance(session: str, trigger: str) -> str:
    return (f"Written by wheypoint's PreCompact hook ({trigger} compaction) for session {session}: no agent "
            "checkpointed this session before its context was compacted. The user's turns are kept verbatim as "
            "meat; read them, then state the orientation, decisions and open questions in a checkpoint of "
            "your own.")  # fmt: skip
