"""Finding the session a command means: by path, by id, by a hook's payload, or by the checkout.

Sessions are matched to a checkout by the cwd recorded inside each transcript, never by decoding
the folder names agents store them under (those encodings lose information). When several sessions
fit and the caller did not ask for the latest, the answer is a refusal listing them all: picking one
silently would put another session's words in the user's mouth.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from wheypoint.model.errors import Refusal, bad_parameter
from wheypoint.model.shapes import READABLE_HARNESSES as HARNESSES
from wheypoint.transcripts.model import SessionInfo

_MODULES = {"claude-code": "claude", "codex": "codex", "opencode": "opencode", "gemini": "gemini"}


def reader(harness: str) -> ModuleType:
    """The reader module of a harness, imported on first use."""
    if harness not in _MODULES:
        raise bad_parameter("harness", f"takes {', '.join(HARNESSES)} (no reader for {harness!r})", "unknown-harness")
    return importlib.import_module(f"wheypoint.transcripts.{_MODULES[harness]}")


class Located(NamedTuple):
    """The session a command will read."""

    harness: str
    path: Path
    session_id: str | None
    info: SessionInfo | None


def _inside(path: str | None, root: Path) -> bool:
    if not path:
        return False
    try:
        Path(os.path.normpath(path)).relative_to(os.path.normpath(root))
        return True
    except ValueError:
        return False


def all_sessions(environ: Mapping[str, str], harness: str | None = None) -> Iterator[SessionInfo]:
    for name in [harness] if harness else list(HARNESSES):
        try:
            yield from reader(name).sessions(environ)
        except OSError:
            continue  # a harness home we cannot read holds no session we can use


def _candidates_json(found: list[SessionInfo]) -> list[dict[str, Any]]:
    return [info.as_json() for info in sorted(found, key=lambda i: i.last_activity or "", reverse=True)]


def _choose(found: list[SessionInfo], latest: bool, searched: str) -> SessionInfo:
    if not found:
        raise Refusal("session-not-found", f"no session found {searched}")
    if len(found) == 1 or latest:
        return max(found, key=lambda info: info.last_activity or "")
    raise Refusal(
        "session-required",
        f"{len(found)} sessions fit {searched}; name one with --session or --transcript, or pass --latest",
        details={"candidates": _candidates_json(found)},
    )


def _is_sqlite(path: Path) -> bool:
    try:
        return bool(reader("opencode").is_database(path))
    except OSError:
        return False


def by_path(path: Path, harness: str | None, session: str | None = None) -> Located:
    """A transcript named by path; its harness detected from its content when not given.

    An OpenCode database holds many sessions, so it describes itself only when it holds one; named
    together with a session id it is read as OpenCode's.
    """
    if not path.exists():
        raise Refusal("transcript-missing", f"no transcript at {path}")
    if path.is_dir():
        raise Refusal("transcript-unreadable", f"{path} is a folder; name the transcript file")
    names = [harness] if harness else list(HARNESSES)
    matches = []
    for name in names:
        info = reader(name).describe(path)
        if info is not None:
            matches.append((name, info))
    if not matches and harness is None and session is not None and _is_sqlite(path):
        harness = "opencode"
    if not matches:
        if harness:  # the caller vouches for the format; the reader will count what it cannot use
            return Located(harness, path, session, None)
        raise Refusal("transcript-unrecognised", f"{path} is not a transcript of {', '.join(HARNESSES)}; "
                      "pass --harness to read it anyway")  # fmt: skip
    if len(matches) > 1:
        raise Refusal("harness-ambiguous", f"{path} reads as {', '.join(n for n, _ in matches)}; pass --harness")
    name, info = matches[0]
    return Located(name, path, info.session_id, info)


def locate(
    *,
    cwd: Path,
    environ: Mapping[str, str],
    transcript: str | None = None,
    session: str | None = None,
    harness: str | None = None,
    hook: Mapping[str, Any] | None = None,
    latest: bool = False,
    project_root: Callable[[Path], Path] = lambda folder: folder,
) -> Located:
    """The one session a command means, or a refusal that says why there is not exactly one.

    `project_root` maps a folder to the top of the project holding it (the caller knows checkouts);
    sessions recorded anywhere under that top are this project's.
    """
    if harness is not None:
        reader(harness)  # refuse an unknown harness before anything else
    if hook is not None:
        transcript = transcript or hook.get("transcript_path")
        session = session or hook.get("session_id")
        cwd = Path(hook["cwd"]) if isinstance(hook.get("cwd"), str) else cwd
    if transcript:
        located = by_path(Path(transcript).expanduser(), harness, session)
        return located._replace(session_id=session or located.session_id)
    if session:
        found = [info for info in all_sessions(environ, harness) if info.session_id == session]
        chosen = _choose(found, latest, f"with id {session}")
        return Located(chosen.harness, Path(chosen.path), chosen.session_id, chosen)
    root = project_root(cwd)
    found = [info for info in all_sessions(environ, harness) if _inside(info.cwd, root)]
    if harness in (None, "gemini"):  # older Gemini CLI builds record only a hash of the project root
        known = {info.path for info in found}
        found += [i for i in reader("gemini").sessions_for_cwd(environ, str(root)) if i.path not in known]
    chosen = _choose(found, latest, f"for {root}")
    return Located(chosen.harness, Path(chosen.path), chosen.session_id, chosen)


def turns_of(located: Located, stats: Any, kinds: frozenset[str] | None = None) -> Iterator[Any]:
    """The turns of a located session; an unusable path is a refusal, bad content is counted in stats.

    `kinds` is a hint: a reader may pass over records that cannot hold those kinds (the caller filters
    anyway); a reader with no cheaper path ignores it.
    """
    try:
        yield from reader(located.harness).read_turns(located.path, stats, located.session_id, kinds)
    except OSError as exc:
        raise Refusal("transcript-unreadable", f"cannot read {located.path}: {exc.strerror or exc}") from None
