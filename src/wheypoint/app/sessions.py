"""Which agent session is live in a checkout: the harness's word, the hooks' record, else recent transcripts.

Every hook call names its session; the hooks record, per project, when each session was last seen
(`hooks/<project>.json` beside the store, written by hooks/state.py). A checkpoint that names no transcript
takes its `session` provenance from the first of these that names exactly one session (seed 2: filled without
a flag when one session of this checkout is live): the session id the running harness exports to its shells,
the sessions the hooks saw in the last LIVE_SECONDS, or, when no hook heard any, the transcripts of this
checkout written in that time. Two live sessions leave it empty rather than guess.
"""

from __future__ import annotations

import os

from wheypoint import jsontext
from wheypoint.app.workspace import store_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

LIVE_SECONDS = 30 * 60  # a session no hook has heard from in half an hour is not taken for the live one


def hooks_folder(environ: Mapping[str, str]) -> str:
    """`hooks/` beside the default store file: `$WHEYPOINT_HOME/hooks`, else the XDG data folder's."""
    return os.path.join(os.path.dirname(store_path(environ)), "hooks")


def state_path(environ: Mapping[str, str], project: str) -> str:
    return os.path.join(hooks_folder(environ), f"{project}.json")


def load_state(environ: Mapping[str, str], project: str) -> dict[str, Any]:
    """The project's hook state; empty when there is none or it cannot be read (it is advisory)."""
    try:
        from wheypoint.model.regular import open_regular

        with open_regular(state_path(environ, project)) as handle:  # never waits on a FIFO in its place
            state = jsontext.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def live_session(environ: Mapping[str, str], project: str, root: str, cwd: str, now: float) -> dict[str, str] | None:
    """The one session of this checkout live at `now`, else None (none, or several: never a guess).

    Asked in order of certainty: the session the running harness names in the environment; else the
    sessions the hooks heard from within LIVE_SECONDS; else, when the hooks heard none (a checkout
    without hooks), the transcripts of this checkout written within LIVE_SECONDS (transcripts/live.py).
    Only the harness the environment says runs this command is considered, when it says one.
    """
    from wheypoint.transcripts.live import announced, recent_sessions, running_harnesses

    named = announced(environ)
    if named is not None:
        return named
    harnesses = running_harnesses(environ)
    heard = _heard(environ, project, now, harnesses)
    if not heard:
        found = recent_sessions(environ, root, cwd, now - LIVE_SECONDS, harnesses)
        heard = list(dict.fromkeys((info.harness, info.session_id) for info in found if info.session_id))
    if len(heard) != 1:
        return None
    harness, session_id = heard[0]
    return {"harness": harness, "id": session_id}


def _heard(environ: Mapping[str, str], project: str, now: float, harnesses: tuple[str, ...]) -> list[tuple[str, str]]:
    """The (harness, session) pairs the hooks heard from in this project within LIVE_SECONDS of `now`."""
    sessions = load_state(environ, project).get("sessions")
    if not isinstance(sessions, dict):
        return []
    live = []
    for key, facts in sessions.items():
        harness, _, session_id = str(key).partition(":")
        seen = facts.get("seen") if isinstance(facts, dict) else None
        if harness in harnesses and session_id and isinstance(seen, (int, float)) and 0 <= now - seen <= LIVE_SECONDS:
            live.append((harness, session_id))
    return live
