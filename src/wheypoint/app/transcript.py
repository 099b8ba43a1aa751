"""The transcript commands: `turns`, `harvest` and `snapshot`, over whichever session was named."""

from __future__ import annotations

import os
from collections import Counter

from wheypoint.app.context import Context, TranscriptChoice
from wheypoint.model.errors import Refusal, bad_parameter
from wheypoint.transcripts import discovery
from wheypoint.transcripts.harvest import harvest
from wheypoint.transcripts.model import ALL_KINDS, USER_KINDS, ReadStats, Turn, format_warning

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from wheypoint.notes.snapshot import MeatItem

_TIMESTAMP = r"^\d{4}-\d{2}-\d{2}"


def _dated(since: str) -> bool:
    """Whether `since` starts with a date (compiled, through patterns.compiled, only when a `since` is given)."""
    from wheypoint.patterns import compiled

    return compiled(_TIMESTAMP).match(since) is not None


def _header(located: discovery.Located, stats: ReadStats) -> dict[str, Any]:
    return {
        "harness": located.harness,
        "session_id": located.session_id,
        "transcript": str(located.path),
        "stats": stats.as_json(),
    }


def _after(turns: Iterator[Turn], since: str) -> Iterator[Turn]:
    """Turns after a turn id, or after a timestamp (ISO 8601, compared as text in the same form)."""
    if _dated(since):
        yield from (t for t in turns if t.timestamp is not None and t.timestamp > since)
        return
    seen = False
    for turn in turns:
        if seen:
            yield turn
        elif turn.id == since:
            seen = True
    if not seen:
        raise Refusal(
            "unknown-turn",
            f"names no turn of the transcript ({since!r}); it takes a turn id or a timestamp",
            parameter="since",
        )


def turns(
    ctx: Context, choice: TranscriptChoice, *, every: bool, kinds: list[str], since: str | None, limit: int | None
) -> dict[str, Any]:
    unknown = [k for k in kinds if k not in ALL_KINDS]
    if unknown:
        raise bad_parameter(
            "kind", f"takes a turn kind: {', '.join(ALL_KINDS)} (not {', '.join(unknown)})", "unknown-kind"
        )
    wanted = set(kinds) if kinds else set(ALL_KINDS if every else USER_KINDS)
    located = choice.locate(ctx)
    stats = ReadStats()
    # A timestamp --since needs nothing else; a turn id may be any kind, so then every kind is read.
    hint = frozenset(wanted) if not since or _dated(since) else None
    stream: Iterator[Turn] = discovery.turns_of(located, stats, hint)
    if since:
        stream = _after(stream, since)
    selected: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    main: Counter[str] = Counter()  # the main thread's (a subagent's "user" is the agent briefing it: meta)
    for turn in stream:
        counts[turn.kind] += 1
        if turn.agent is None:
            main[turn.kind] += 1
        if turn.kind in wanted and (limit is None or len(selected) < limit):
            selected.append(turn.as_json())
    if not counts and (stats.malformed or stats.invalid_utf8 or stats.oversized or stats.truncated_tail):
        raise Refusal("transcript-unusable", f"nothing readable in {located.path}", details={"stats": stats.as_json()})
    drift = format_warning(stats, main) if not since else None  # a --since read holds only part of the file
    return {**_header(located, stats), "count": len(selected), "kinds": dict(sorted(counts.items())),
            "turns": selected, "warnings": [drift] if drift else []}  # fmt: skip


def harvest_trailers(ctx: Context, choice: TranscriptChoice) -> dict[str, Any]:
    located = choice.locate(ctx)
    stats = ReadStats()
    found = harvest(discovery.turns_of(located, stats))
    return {**_header(located, stats), "count": len(found), "parsed": sum(t.status == "ok" for t in found),
            "trailers": [t.as_json() for t in found]}  # fmt: skip


def _refuse_credentials(summary: str, items: list[MeatItem]) -> None:
    """A snapshot copies turns verbatim into the checkout, so a turn holding a credential is refused, as checkpoint
    refuses the same turn: the rules and turns are named, the value never."""
    from wheypoint.model.rules import secret_problem

    texts = [("summary", summary)] + [(f"turn {item.turn}", item.text) for item in items]
    problems = [p for where, text in texts if (p := secret_problem(where, text)) is not None]
    if problems:
        named = ", ".join(p.path for p in problems)
        raise Refusal(
            "secret-pattern",
            f"{named} looks like it holds a credential or personal data; the snapshot is not written (drop the turn, "
            "or remove the value from the transcript and say where it lives or what it is)",
            problems=problems,
        )


def snapshot(
    ctx: Context, choice: TranscriptChoice, *, stream: str, summary: str, meat: list[dict[str, Any]], out: str | None
) -> dict[str, Any]:
    """Write CHECKPOINT-<stream>-llm.md and answer with seed 3's one-line report."""
    import re

    from wheypoint.notes.files import write_atomic
    from wheypoint.notes.snapshot import MeatItem, check_designations, histogram, render_snapshot, status_of

    check_designations(meat)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", stream):
        raise bad_parameter("stream", f"takes letters, digits, '.', '_' and '-' only, not {stream!r}")
    from wheypoint.model.credentials import scan_text

    if scan_text(stream):  # it names a file in the repository and comes back in the reply: never a credential
        raise bad_parameter("stream", "looks like a credential: name the stream in words", code="secret-pattern")
    located = choice.locate(ctx)
    stats = ReadStats()
    wanted = {item["turn"]: item for item in meat}
    designated: dict[str, Turn] = {}
    tagged: list[Turn] = []  # only turns that may hold a trailer are kept in memory
    for turn in discovery.turns_of(located, stats):
        if turn.id in wanted:
            designated[turn.id] = turn
        if "ckpt" in turn.text:
            tagged.append(turn)
    trailers = harvest(tagged)
    missing = [turn_id for turn_id in wanted if turn_id not in designated]
    if missing:
        raise Refusal("unknown-turn", f"no turn {', '.join(missing)} in {located.path}")
    items = [
        MeatItem(t.turn_id, t.type or "", t.weight or 2, t.text, "trailer", None) for t in trailers if t.status == "ok"
    ]
    for turn_id, item in wanted.items():
        turn = designated[turn_id]
        items.append(MeatItem(turn.id, item["type"], item.get("weight", 2), turn.text, "designated", turn.timestamp))
    _refuse_credentials(summary, items)
    failed = sum(t.status != "ok" for t in trailers)
    status = status_of(items, failed)
    checkout = ctx.checkout
    folder = os.path.expanduser(out) if out else (checkout.toplevel if checkout else ctx.cwd)
    path = os.path.join(ctx.cwd, folder, f"CHECKPOINT-{stream}-llm.md")  # an absolute folder wins the join
    facts = {
        "session": f"{located.harness}:{located.session_id}" if located.session_id else located.harness,
        "transcript": str(located.path),
        "created": ctx.now(),
        "meat": f"{len(items)} turns ({len(items) - len(wanted)} from trailers, {len(wanted)} designated)",
        "status": status,
    }
    try:
        write_atomic(path, render_snapshot(stream, summary, items, facts))
    except OSError as exc:
        raise Refusal("snapshot-unwritable", f"cannot write {path}: {exc.strerror or exc}") from None
    report = f"{path} · {len(items)} meat turns · {histogram(items)} · {status}"
    return {**_header(located, stats), "path": str(path), "meat_turns": len(items), "histogram": histogram(items),
            "status": status, "failed_trailers": failed, "report": report}  # fmt: skip
