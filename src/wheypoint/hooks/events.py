"""`wheypoint hook <event> --harness H`: what wheypoint does when a harness calls it, answered in its format.

The contract with the harness comes first: the hook reads one JSON payload on stdin, prints one JSON
document the harness understands (or nothing it could misread), and exits 0 whatever happens, so that a
wheypoint problem can never block a prompt, a stop or a compaction. What went wrong is written to the hook
log (hooks/hook.log beside the store) and, in a few words, to `systemMessage`, which every harness shows.

Events, by the name wheypoint gives them (each harness's own name is accepted):
- PreCompact (Gemini: PreCompress): the rescue checkpoint (rescue.py), then the work is marked pending resume.
  OpenCode, whose plugin calls this while compacting, gets the resume packet back to add to the summary.
- SessionStart: the resume packet of the pending work, else of the project's newest work, as context.
- Stop (Gemini: AfterAgent): a rescue as well, when the transcript grew by STOP_GROWTH since the last one;
  Claude Code's PreCompact does not always fire before an automatic compaction, so this is the net under it.
- UserPromptSubmit (Gemini: BeforeAgent): the pending packet, when this session has not had it yet (for a
  SessionStart that did not fire or whose context was not injected).
Gemini CLI differs (docs/hooks.md): its PreCompress fires on every turn, so an automatic one rescues only near a
compression; SessionStart answers nothing (Gemini glues it onto the prompt, then drops that prompt on resume)
and BeforeAgent carries the packet, the newest work's too, once per session.

Every call has a deadline well inside the time its harness gives it (DEADLINES: wheypoint installs 30 s for
PreCompact and 10 s for the others, in every harness; `WHEYPOINT_HOOK_DEADLINE`, in seconds, sets another). When
it passes (a transcript on a disk that hangs, a store locked for long, a payload that never ends), the call stops
where it is: it prints the harness's neutral reply, whose `systemMessage` says what was skipped (for the quiet
events, Stop and UserPromptSubmit, the log alone says it), writes that to the hook log and exits 0 at once. A
store transaction in flight is rolled back by SQLite's journal; the hooks' state is written atomically. The watch
is a SIGALRM timer, so the ordinary path costs no thread; where there is none (Windows), there is no deadline.
"""

from __future__ import annotations

import os
import sys

from wheypoint import jsontext
from wheypoint.app.context import Context, TranscriptChoice
from wheypoint.hooks import state as memory
from wheypoint.hooks import unchanged
from wheypoint.model.canonical import lone_surrogate
from wheypoint.model.errors import Refusal
from wheypoint.model.regular import is_regular
from wheypoint.model.shapes import count_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


# Each harness's event name -> the event wheypoint handles.
EVENTS = {
    "PreCompact": "PreCompact", "PreCompress": "PreCompact", "SessionStart": "SessionStart", "Stop": "Stop",
    "AfterAgent": "Stop", "UserPromptSubmit": "UserPromptSubmit", "BeforeAgent": "UserPromptSubmit",
}  # fmt: skip
HARNESSES = ("claude-code", "codex", "gemini", "opencode")
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")  # the events whose output becomes the model's context
MAX_PAYLOAD = 1024 * 1024
DEFAULT_BUDGET = 10000  # characters of context a SessionStart packet may take
STOP_GROWTH = 64 * 1024  # bytes a transcript grows by before a Stop takes another rescue
# The share of the model's context the last reply read past which a Gemini PreCompress rescues: Gemini CLI
# compresses at half by default (model.compressionThreshold or a server-side flag may set it lower).
GEMINI_NEAR_COMPRESS = 0.2
TAIL_ROOM = 128  # the closing line's most: its slug has at most 48 characters and its revision id 20
MARK_ROOM = 128  # the first line's note of what was left out: a count and a command naming the slug
QUIET_EVENTS = ("Stop", "UserPromptSubmit")  # they fire on every turn: what goes wrong there goes to the log only
# Seconds a call may take, well inside the limit wheypoint installs (harness_files.EVENTS: 30 s for PreCompact, 10 s
# for the others; the harnesses' own defaults are longer: Claude Code and Codex 600 s, Gemini CLI 60 s), so that the
# reply always arrives before the harness gives up on the hook. WHEYPOINT_HOOK_DEADLINE (seconds) overrides.
DEADLINES = {"PreCompact": 20.0, "SessionStart": 6.0, "Stop": 6.0, "UserPromptSubmit": 6.0}
DEADLINE_ENV = "WHEYPOINT_HOOK_DEADLINE"
# What an event's work leaves undone when its deadline stops it, as the reply and the log say it.
SKIPS = {
    "PreCompact": "the rescue checkpoint (the prompts stay in the transcript: `wheypoint snapshot` takes them by hand)",
    "SessionStart": "the resume packet (`wheypoint handoff render <work>` prints it)",
    "Stop": "the rescue checkpoint (the next Stop or PreCompact takes it)",
    "UserPromptSubmit": "the pending resume packet (`wheypoint handoff render <work>` prints it)",
}


class _Answer:
    """What a hook call prints: context for the model, a short message for the person, facts for the log."""

    def __init__(self) -> None:
        self.context: str | None = None
        self.message: str | None = None
        self.log: dict[str, Any] = {}
        self.stage = "reading the hook's payload"  # what the call is doing, for a deadline's message
        self.environ: Mapping[str, str] = os.environ  # where the hook log goes (the project's, once known)
        self.answering = False  # the answer is being logged and printed: a deadline passing now leaves it be
        self.live: str | None = None  # the session (`harness:id`) to note as live in the state, until it is noted


def run_hook(args: dict[str, Any] | Refusal) -> int:
    """Run one hook call (`args` from the command line, or the refusal its parse met) and print the answer."""
    import time

    started = time.monotonic()
    harness = args.get("harness") if isinstance(args, dict) else None
    given = args.get("event") if isinstance(args, dict) else None
    answer = _Answer()
    disarm = _arm(_deadline(given), lambda seconds: _expired(harness, given, answer, started, seconds))
    try:
        if isinstance(args, Refusal):
            raise args
        event, budget = _check(given, harness, args.get("budget"))
        payload = _payload(sys.stdin.buffer.read(MAX_PAYLOAD + 1))
        answer.stage = "opening the project"
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and os.path.isdir(payload["cwd"]) else None
        ctx = Context(cwd=cwd)
        answer.environ = ctx.environ
        if isinstance(payload.get("session_id"), str) and payload["session_id"]:
            answer.live = _session_key(str(harness), payload)
        answer.stage = "doing its work"
        _HANDLERS[event](ctx, str(harness), payload, budget, answer)
        if answer.live is not None:  # (a handler that wrote the state noted it there)
            _seen(ctx, answer)
    except Refusal as refusal:
        # str() leads with the code already.  A refusal or an error may quote what the hook was given (an unknown
        # event or harness name, a payload's text in an exception): scrubbed like every refusal, in the message
        # the harness shows and in the log alike.  Only these paths load the credential scan.
        answer.message = _scrubbed(f"wheypoint {_label(given)}: {refusal}")
        answer.log["refused"] = refusal.code
    except Exception as exc:  # a bug must not block the harness: logged, answered, exit 0
        answer.log["error"] = _scrubbed(f"{type(exc).__name__}: {exc}")
        answer.message = f"wheypoint {_label(given)} failed: {answer.log['error']}"
    answer.answering = True
    disarm()
    _answer(harness, given, answer, started)
    return 0


def _answer(harness: Any, given: Any, answer: _Answer, started: float) -> None:
    """Log the call and print its reply."""
    import time

    answer.log.update(
        event=given if given is None or given in EVENTS else _scrubbed(str(given)),
        harness=harness if harness is None or harness in HARNESSES else _scrubbed(str(harness)),
        ms=round((time.monotonic() - started) * 1000, 1),
    )
    if answer.message:
        answer.log["message"] = answer.message
        if isinstance(given, str) and EVENTS.get(given) in QUIET_EVENTS:
            answer.message = None
    memory.log(answer.environ, {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **answer.log})
    _print(harness, given, answer)


def _deadline(given: Any) -> float:
    """The seconds this call may take: WHEYPOINT_HOOK_DEADLINE when it is a positive number, else its event's."""
    try:
        seconds = float(os.environ.get(DEADLINE_ENV, ""))
    except ValueError:
        seconds = 0.0
    if 0 < seconds < float("inf"):  # (false for NaN, which compares false with everything)
        return seconds
    return DEADLINES.get(EVENTS.get(given, "") if isinstance(given, str) else "", min(DEADLINES.values()))


def _arm(seconds: float, expire: Callable[[float], None]) -> Callable[[], None]:
    """Call `expire(seconds)` when `seconds` pass (it ends the process); the function returned disarms the watch.

    A SIGALRM timer: it interrupts a read that waits (a FIFO, a pipe, a lock's sleep) as it does any bytecode.
    Where there is none, or off the main thread (a hook run in process by a test), there is no watch.

    `_signal` is the C module the interpreter loads at start-up, which `signal` only wraps in enums: taken as it is,
    arming and disarming cost some 20 microseconds, where importing `signal` costs a millisecond."""
    signal: Any = sys.modules.get("_signal")
    if signal is None:
        import signal
    if not hasattr(signal, "setitimer"):
        return lambda: None

    def ring(signum: int, frame: Any) -> None:
        expire(seconds)

    try:
        previous = signal.signal(signal.SIGALRM, ring)
    except ValueError:  # not the main thread
        return lambda: None
    signal.setitimer(signal.ITIMER_REAL, seconds)

    def disarm() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    return disarm


def _expired(harness: Any, given: Any, answer: _Answer, started: float, seconds: float) -> None:
    """The deadline passed: say what was skipped (reply and log), then end the process at once, exit 0."""
    if answer.answering:  # the answer is already on its way out
        return
    answer.answering = True
    skipped = SKIPS.get(EVENTS.get(given, "") if isinstance(given, str) else "", "the hook's work")
    answer.context = None
    answer.message = (
        f"wheypoint {_label(given)}: stopped at its {seconds:g} s deadline while {answer.stage}; skipped: {skipped}"
    )
    answer.log.update(deadline=seconds, skipped=skipped, stage=answer.stage)
    try:
        _answer(harness, given, answer, started)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


def _seen(ctx: Context, answer: _Answer) -> None:
    """Record that this session is live in the project (app/sessions.py reads it for checkpoints), when the call
    wrote no state of its own (`_save` notes it there)."""
    import time

    project = ctx.project_key()
    state = memory.load(ctx.environ, project)
    if answer.live is not None and memory.seen(state, answer.live, time.time()):
        memory.save(ctx.environ, project, state)


def _save(ctx: Context, project: str, state: dict[str, Any], answer: _Answer) -> None:
    """Write the hooks' state, with the session this call came from noted in it as live (`answer.live`): a call
    writes the state once (each write makes a file, which costs the file system's journal up to half a
    millisecond)."""
    import time

    if answer.live is not None:
        memory.seen(state, answer.live, time.time())
        answer.live = None
    memory.save(ctx.environ, project, state)


def _label(given: Any) -> str:
    """The event a message names: the one given when it is known, else just `hook`."""
    return given if isinstance(given, str) and given in EVENTS else "hook"


def _scrubbed(text: str) -> str:
    """replies.scrub_text, imported only when a hook has something to scrub (it loads the credential scan)."""
    from wheypoint.model.replies import scrub_text

    return scrub_text(text)


def _check(given: Any, harness: Any, budget: Any) -> tuple[str, int]:
    if given not in EVENTS:
        raise Refusal("unknown-event", f"no hook event {given!r}; known: {', '.join(EVENTS)}")
    if harness not in HARNESSES:
        raise Refusal("unknown-harness", f"--harness takes {', '.join(HARNESSES)}, not {harness!r}")
    if budget is None:
        return EVENTS[given], DEFAULT_BUDGET
    count = count_of(budget)
    if not count:
        raise Refusal("usage", "--budget takes a positive number of characters")
    return EVENTS[given], count


def _payload(data: bytes) -> dict[str, Any]:
    if len(data) > MAX_PAYLOAD:
        raise Refusal("invalid-hook-payload", f"the hook's payload is over {MAX_PAYLOAD} bytes")
    try:
        payload = jsontext.loads(data.decode("utf-8")) if data.strip() else {}
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Refusal("invalid-hook-payload", f"the hook's payload is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise Refusal("invalid-hook-payload", "the hook's payload is a JSON object")
    found = lone_surrogate(payload)  # it would reach the hooks' state file and the store, which hold UTF-8
    if found:
        raise Refusal("invalid-hook-payload", f"the hook's payload holds a lone surrogate {found[1]} at {found[0]}")
    return payload


def _print(harness: Any, given: Any, answer: _Answer) -> None:
    """The answer in the harness's own format: one JSON document on stdout, nothing else."""
    from wheypoint.model.replies import document_text, scrub_text

    # The message may echo the hook's line or payload: never a credential, never an unprintable surrogate.
    message = scrub_text(answer.message) if answer.message else None
    if harness == "opencode":  # read by our plugin, which adds `context` to the compaction or the session
        out: dict[str, Any] = {"context": answer.context or "", "message": message or ""}
    else:
        out = {}
        if answer.context and isinstance(given, str) and EVENTS.get(given) in CONTEXT_EVENTS:
            out["hookSpecificOutput"] = {"hookEventName": given, "additionalContext": answer.context}
        if message:
            out["systemMessage"] = message
    # Gemini CLI decodes a hook's output 64 KiB at a time, so a character split between two reads arrives as two
    # U+FFFD: its answer is all ASCII (JSON escapes), whatever the packet's size.
    encoding = "ascii" if harness == "gemini" else sys.stdout.encoding
    try:
        sys.stdout.write(document_text(out, encoding=encoding) + "\n")
        sys.stdout.flush()
    except OSError:  # the harness stopped reading: nothing left to tell it
        pass


def _choice(harness: str, payload: dict[str, Any]) -> TranscriptChoice:
    return TranscriptChoice(hook=payload, harness=harness)


def _session_key(harness: str, payload: dict[str, Any]) -> str:
    return f"{harness}:{payload.get('session_id') or ''}"


def _pre_compact(ctx: Context, harness: str, payload: dict[str, Any], budget: int, answer: _Answer) -> None:
    trigger = str(payload["trigger"]) if payload.get("trigger") in ("manual", "auto") else "auto"
    if harness == "gemini" and trigger == "auto" and not _gemini_compress_due(ctx, payload, answer):
        return
    _rescue(ctx, harness, payload, trigger, answer, compacting=True)
    if harness == "opencode" and answer.log.get("work_id"):
        answer.context = _packet(ctx, answer.log["work_id"], budget)
        answer.log["chars"] = len(answer.context)  # the plugin hands it to the model: its size logged, as at start


def _rescue(ctx: Context, harness: str, payload: dict[str, Any], trigger: str, answer: _Answer,
            compacting: bool = False) -> None:  # fmt: skip
    """Take the rescue and note it in the hooks' state; `compacting`: the session is about to compact, so the
    packets it had before leave the model's context (SessionStart's `_repeats` reads when)."""
    choice = _choice(harness, payload)
    project = ctx.project_key()
    state = memory.load(ctx.environ, project)
    # A payload that names its transcript and session outright is checked against the last rescue first: a
    # session with nothing new costs neither locating (which reads the transcript's head) nor the rescue's code.
    named = unchanged.named(harness, payload)
    done = unchanged.unchanged(named[0], memory.session_state(state, named[1]), named[1]) if named else None
    path = named[0] if named else ""
    if done is None:
        from wheypoint.hooks.rescue import rescue

        located = choice.locate(ctx)
        path, key = located.path, f"{located.harness}:{located.session_id}"
        facts = memory.session_state(state, key)
        done = unchanged.unchanged(path, facts, key)
        if done is None:
            done = rescue(ctx, choice._replace(found=located), trigger=trigger, mark=facts.get("read"))
    # What this call knows of the session for the next one: an unchanged transcript gives back the last rescue's
    # own read mark and work, so writing them again changes nothing.
    facts = memory.session_state(state, done.session)
    facts["read"] = done.read
    if done.work_id:
        facts["rescued"] = {"work_id": done.work_id, "slug": done.slug, "revision_id": done.revision_id,
                            "revision_number": done.revision_number}  # fmt: skip
    facts["size"] = unchanged.size(path)
    facts["rest"] = done.rest  # an unfinished last line the read left, as it was
    if compacting:
        memory.session_state(state, _session_key(harness, payload))["compacted"] = _now()
    if done.work_id:
        memory.mark_pending(state, {"work_id": done.work_id, "slug": done.slug, "revision_id": done.revision_id,
                                    "session": done.session, "trigger": trigger, "at": ctx.now()})  # fmt: skip
    _save(ctx, project, state, answer)
    answer.log.update(work_id=done.work_id, revision=done.revision_number, kept=done.kept, skipped=list(done.skipped))
    if done.kept:
        answer.message = f"wheypoint kept {done.kept} turn(s) verbatim in {done.slug} r{done.revision_number}"
    if done.redacted:
        answer.log["redacted"] = list(done.redacted)
        answer.message = (answer.message or "wheypoint") + (f", {len(done.redacted)} with each credential in it "
                                                            "replaced by [redacted <rule>]")  # fmt: skip
    if done.skipped:
        answer.message = (answer.message or "wheypoint") + f"; left in the transcript: {'; '.join(done.skipped)}"
    if done.warning:  # no prompt found because the reader may not know the format: said, not kept silent
        answer.log["warning"] = done.warning
        answer.message = (answer.message or "wheypoint") + f"; {done.warning['code']}: {done.warning['message']}"


def _stop(ctx: Context, harness: str, payload: dict[str, Any], budget: int, answer: _Answer) -> None:
    if payload.get("stop_hook_active"):  # a stop hook already made the agent go on: do not stack another rescue
        return
    named = unchanged.named(harness, payload)
    if named and is_regular(named[0]):  # the payload names its transcript, and it is on disk
        if not _grown(ctx, harness, payload, named[0]):
            answer.log["skipped"] = "transcript grew too little since the last rescue"  # known without locating it
        else:
            _rescue(ctx, harness, payload, "stop", answer)  # (which locates it, once)
        return
    try:
        path = _choice(harness, payload).locate(ctx).path
    except Refusal as refusal:
        if refusal.code != "transcript-missing":
            raise
        # Claude Code may fire a turn's Stop before its transcript is on disk: nothing written, nothing to rescue
        answer.log["skipped"] = "no transcript on disk yet"
        return
    if not _grown(ctx, harness, payload, path):
        answer.log["skipped"] = "transcript grew too little since the last rescue"
        return
    _rescue(ctx, harness, payload, "stop", answer)


def _grown(ctx: Context, harness: str, payload: dict[str, Any], path: str) -> bool:
    """Whether the session's transcript grew by STOP_GROWTH since its last rescue (the size the state remembers)."""
    seen = memory.load(ctx.environ, ctx.project_key()).get("sessions", {}).get(_session_key(harness, payload), {})
    return unchanged.size(path) - int(seen.get("size", 0)) >= STOP_GROWTH


def _session_start(ctx: Context, harness: str, payload: dict[str, Any], budget: int, answer: _Answer) -> None:
    if harness == "gemini":  # Gemini glues this context onto the prompt, then drops that prompt on resume
        answer.log["skipped"] = "gemini: the packet goes with the session's first prompt (BeforeAgent)"
        return
    project = ctx.project_key()
    state = memory.load(ctx.environ, project)
    pending = state.get("pending") if isinstance(state.get("pending"), dict) else None
    work_id = pending.get("work_id") if pending else None
    if not work_id:
        work_id = _newest_work(ctx, project)
    if not work_id:
        answer.log["skipped"] = "no work in this project yet"
        return
    answer.context = _packet(ctx, work_id, budget, harness)
    answer.log.update(work_id=work_id, source=payload.get("source"), chars=len(answer.context))
    facts = memory.session_state(state, _session_key(harness, payload))
    # OpenCode's plugin holds the packet in the system prompt of its own process, never in the session's history:
    # each process asks once per session (the plugin's cache), and each must get it.
    if harness != "opencode" and _repeats(facts, answer.context, payload.get("source")):
        answer.context = None
        answer.log.update(chars=0, skipped="this session has had this packet since its last compaction")
    else:
        facts["sent"] = {"digest": _digest(answer.context), "at": _now()}
    memory.mark_delivered(state, _session_key(harness, payload))
    _save(ctx, project, state, answer)


REPEAT_WINDOW = 60  # seconds: how recent a copy must be to stand for the one a compaction would deliver again


def _repeats(facts: dict[str, Any], context: str, source: Any) -> bool:
    """Whether the session already holds this very packet: it had it since its last compaction (PreCompact).

    A resumed session's history holds the packet it had. Codex runs a resumed session's SessionStart, then, after
    the compaction that opens its turn, the compact one, and both answers reach the model in one request: after a
    compaction the earlier copy stands only when it came after that compaction's PreCompact, moments ago (a
    PreCompact that did not fire must not cost the packet). A cleared session holds nothing.
    """
    sent, compacted = facts.get("sent"), facts.get("compacted")
    if source == "clear" or not isinstance(sent, dict) or sent.get("digest") != _digest(context):
        return False
    at = sent.get("at")
    if not isinstance(at, (int, float)) or (isinstance(compacted, (int, float)) and at < compacted):
        return False
    return source != "compact" or (isinstance(compacted, (int, float)) and _now() - at < REPEAT_WINDOW)


def _digest(text: str) -> str:
    """A packet's fingerprint: SHA-256 by the interpreter's own module (hashlib's OpenSSL loads in 2 ms)."""
    from wheypoint.model.canonical import sha256_hex

    return sha256_hex(text.encode("utf-8", "surrogatepass"))[:24]


def _now() -> float:
    import time

    return time.time()


def _user_prompt(ctx: Context, harness: str, payload: dict[str, Any], budget: int, answer: _Answer) -> None:
    project = ctx.project_key()
    state = memory.load(ctx.environ, project)
    pending = memory.undelivered(state, _session_key(harness, payload))
    if harness == "gemini":
        _gemini_prompt(ctx, payload, budget, answer, state, pending)
        return
    if pending is None:
        return
    answer.context = _packet(ctx, pending["work_id"], budget, harness)
    answer.log.update(work_id=pending["work_id"], chars=len(answer.context))
    memory.mark_delivered(state, _session_key(harness, payload))
    _save(ctx, project, state, answer)


def _gemini_compress_due(ctx: Context, payload: dict[str, Any], answer: _Answer) -> bool:
    """Whether an automatic PreCompress may be a real compression: Gemini CLI fires it at the start of every turn,
    before its own threshold check. Due when the context the model last read is near that threshold (the last
    reply's recorded input tokens over the model's limit, GEMINI_NEAR_COMPRESS), or the transcript grew as much as
    a Stop needs (STOP_GROWTH since the last rescue)."""
    from wheypoint.transcripts.gemini import context_share

    path = _choice("gemini", payload).locate(ctx).path
    share = context_share(path)
    if share is not None and share >= GEMINI_NEAR_COMPRESS:
        return True
    if _grown(ctx, "gemini", payload, path):
        return True
    answer.log.update(skipped="no compression near: the context is small and grew too little", share=share)
    return False


def _gemini_prompt(ctx: Context, payload: dict[str, Any], budget: int, answer: _Answer, state: dict[str, Any],
                   pending: dict[str, Any] | None) -> None:  # fmt: skip
    """Gemini's BeforeAgent carries the packet SessionStart gives elsewhere: the pending work's when this session
    has not had it, else the project's newest work's once per session. Gemini adds it as a part after the
    prompt, so the prompt's text stays the message's start and a resume keeps it."""
    key = _session_key("gemini", payload)
    facts = memory.session_state(state, key)
    work_id = pending["work_id"] if pending else None
    if work_id is None and not facts.get("packet"):
        work_id = _newest_work(ctx, ctx.project_key())
    if not work_id:
        return
    answer.context = _packet(ctx, work_id, budget)
    answer.log.update(work_id=work_id, chars=len(answer.context))
    facts["packet"] = work_id
    memory.mark_delivered(state, key)
    _save(ctx, ctx.project_key(), state, answer)


def _newest_work(ctx: Context, project: str) -> str | None:
    from wheypoint.store.rows import WorkQuery

    store = ctx.open_store(create=False)
    try:
        works = store.list_works(WorkQuery(projects=(project,), limit=1))
    finally:
        store.close()
    return works[0].work_id if works else None


def _packet(ctx: Context, work_id: str, budget: int, harness: str | None = None) -> str:
    """The resume packet as the model reads it: one line on what it is, the packet, the command to continue.

    Codex 0.171 hands a hook's context to the model whole only up to 10,000 UTF-8 bytes (bench/packet_limit_codex.py)
    where the packet's budget counts UTF-16 code units, never more than bytes: for Codex the packet is rendered again
    in less room, scaled by the budget over its bytes (and a sixteenth less at least after that, so a few renders
    do), until its bytes fit the budget too.
    """
    head = f"wheypoint: the handoff of work {work_id} (user turns and quotes are verbatim; gates wait on a person)"
    room = budget - len(head) - TAIL_ROOM - MARK_ROOM
    text = _render(ctx, work_id, head, room, budget)
    tries = 0
    while harness == "codex" and (size := len(text.encode("utf-8", "surrogatepass"))) > budget:
        room = min(room * budget // size, room - (room // 16 if tries else 1))
        tries += 1
        text = _render(ctx, work_id, head, room, budget)
    return text


def _render(ctx: Context, work_id: str, head: str, room: int, budget: int) -> str:
    from wheypoint.app.notes import handoff_packet

    if room <= 0:
        raise Refusal("budget-too-small", f"a packet needs more than {budget} characters")
    packet = handoff_packet(ctx, work_id, None, str(room))[2]
    # (the earlier part's turns are this work's surplus, not its own: leaving some out leaves this work whole)
    left_out = sum(count for name, count in packet.get("omitted", {}).items() if name != "earlier")
    if left_out:  # said on the first line, which every harness shows first: the reader knows it is not all
        head += f" [partial: {left_out} item(s) left out for size; `wheypoint handoff render {packet['slug']}`]"
    tail = f"\nContinue its chain: wheypoint checkpoint {packet['slug']} --base {packet['revision_id']} ...\n"
    return head + "\n" + jsontext.dumps(packet, ensure_ascii=False) + tail


_HANDLERS = {"PreCompact": _pre_compact, "SessionStart": _session_start, "Stop": _stop,
             "UserPromptSubmit": _user_prompt}  # fmt: skip
