"""Which sessions of a checkout are live now, found without walking every transcript on the machine.

A checkpoint that names no transcript still wants its `session` provenance (seed 2: filled without a flag
when exactly one session of this checkout is live). The full discovery (discovery.py) opens every session
of every harness, which is fine for a command that asks for it and too slow for every checkpoint. Here each
harness is asked only where it would write a session of this checkout, and only files written in the last
minutes are opened:

- Claude Code: `projects/<the folder name it derives from where it started>/*.jsonl` under each config folder,
  for the checkout's top and each folder between it and the command's folder;
- Codex: the dated `sessions/YYYY/MM/DD` folders of the last RECENT_DAYS local days (a rollout is filed under
  the day it started, so a session started earlier than that is missed; its hooks or CODEX_THREAD_ID find it);
- Gemini CLI: `tmp/*/chats/session-*` (one folder per project, so few);
- OpenCode: a database only when it (or its write-ahead log) changed lately, then one indexed query.

A reader module is imported only when one of its files qualifies: most checkpoints import none. Which
checkout a session belongs to is always read from the transcript (the cwd it records), never from a folder
name.
"""

from __future__ import annotations

import os
import time

from wheypoint.model.shapes import READABLE_HARNESSES
from wheypoint.transcripts import homes
from wheypoint.transcripts.model import inside

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from wheypoint.transcripts.model import SessionInfo

RECENT_DAYS = 2  # dated Codex folders looked at: today and yesterday (local time, as Codex names them)

# Variables a harness sets in the shells it runs commands in: the session is then known, not guessed.
SESSION_VARIABLES = (("CLAUDE_CODE_SESSION_ID", "claude-code"), ("CODEX_THREAD_ID", "codex"))
# Variables that say only which harness runs the command: the lookup is narrowed to it.
HARNESS_VARIABLES = (("CLAUDECODE", "claude-code"), ("GEMINI_CLI", "gemini"))


def announced(environ: Mapping[str, str]) -> dict[str, str] | None:
    """The session the harness running this command names in the environment; None when none or several do."""
    named = [(harness, environ[name].strip()) for name, harness in SESSION_VARIABLES if environ.get(name, "").strip()]
    if len(named) != 1:
        return None  # one harness run inside another's shell: which one is checkpointing cannot be told
    harness, session_id = named[0]
    return {"harness": harness, "id": session_id}


def running_harnesses(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The harnesses to look at: the one the environment says runs this command, else all four."""
    named = tuple(harness for name, harness in SESSION_VARIABLES + HARNESS_VARIABLES if environ.get(name))
    return tuple(dict.fromkeys(named)) or READABLE_HARNESSES


def recent_sessions(
    environ: Mapping[str, str], root: str, cwd: str, since: float, harnesses: tuple[str, ...]
) -> list[SessionInfo]:
    """The sessions recorded under `root` whose transcript changed at or after `since` (seconds since the epoch).

    `cwd`, the folder the command runs in (under `root`), says where else a session may have been started.
    """
    starts = [root]  # the folders a session of this command's checkout was most likely started in
    folder = cwd
    while inside(folder, root) and folder != root and folder not in starts:
        starts.append(folder)
        folder = os.path.dirname(folder)
    found: list[SessionInfo] = []
    for harness in harnesses:
        for info in _LOOKUPS[harness](environ, starts, since):
            if info.cwd is not None and inside(info.cwd, root):
                found.append(info)
    return found


def _fresh_files(folder: str, since: float, prefix: str, suffixes: tuple[str, ...]) -> Iterator[str]:
    """The files in `folder` named prefix*suffix and modified at or after `since`, in name order."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if e.name.startswith(prefix) and e.name.endswith(suffixes))
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            if os.stat(path).st_mtime >= since:
                yield path
        except OSError:
            continue


def _described(harness: str, paths: Iterator[str]) -> Iterator[SessionInfo]:
    """Each path's session as its reader describes it; the reader is imported at the first path."""
    module = None
    for path in paths:
        if module is None:
            from wheypoint.transcripts.discovery import reader

            module = reader(harness)
        info = module.describe(path)
        if info is not None:
            yield info


def _claude(environ: Mapping[str, str], starts: list[str], since: float) -> Iterator[SessionInfo]:
    for config in homes.claude_roots(environ):
        for start in starts:
            folder = os.path.join(config, "projects", homes.claude_folder_name(start))
            paths = _fresh_files(folder, since, "", (".jsonl",))
            yield from _described("claude-code", (p for p in paths if not os.path.basename(p).startswith("agent-")))


def _codex(environ: Mapping[str, str], starts: list[str], since: float) -> Iterator[SessionInfo]:
    home = homes.codex_home(environ)
    if home is None:
        return
    now = time.time()
    days = sorted({time.strftime("%Y/%m/%d", time.localtime(now - 86400 * back)) for back in range(RECENT_DAYS)})
    for day in reversed(days):
        folder = os.path.join(home, "sessions", *day.split("/"))
        yield from _described("codex", _fresh_files(folder, since, "rollout-", (".jsonl",)))


def _gemini(environ: Mapping[str, str], starts: list[str], since: float) -> Iterator[SessionInfo]:
    tmp = homes.gemini_tmp(environ)
    try:
        projects = sorted(e.name for e in os.scandir(tmp) if e.is_dir()) if tmp else []
    except OSError:
        return
    for project in projects:
        chats = os.path.join(tmp or "", project, "chats")
        for info in _described("gemini", _fresh_files(chats, since, "session-", (".json", ".jsonl"))):
            if info.cwd is None:  # an older build recorded only a hash of the root: compare hashes, never decode
                from wheypoint.transcripts.gemini import project_hash

                digest = project_hash(starts[0])
                info = info._replace(cwd=starts[0]) if len(project) >= 16 and digest.startswith(project) else info
            yield info


def _opencode(environ: Mapping[str, str], starts: list[str], since: float) -> Iterator[SessionInfo]:
    for database in homes.opencode_databases(environ):
        changed = 0.0
        for path in (database, database + "-wal"):
            try:
                changed = max(changed, os.stat(path).st_mtime)
            except OSError:
                continue
        if changed >= since:
            from wheypoint.transcripts.opencode import updated_sessions

            yield from updated_sessions(database, int(since * 1000))


_LOOKUPS = {"claude-code": _claude, "codex": _codex, "gemini": _gemini, "opencode": _opencode}
