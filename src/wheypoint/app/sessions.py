"""Which agent sessions are live in a project, as the hooks saw them: the state file the hooks keep, read here.

Every hook call names its session; the hooks record, per project, when each session was last seen
(`hooks/<project>.json` beside the store, written by hooks/state.py). A checkpoint that names no transcript
takes its `session` provenance from there when exactly one session was seen in the last LIVE_SECONDS (seed 2:
filled without a flag when one session of this checkout is live). Two live sessions leave it empty rather
than guess; so does a project without hooks. Reading it is one small file, so every checkpoint can afford it.
"""

from __future__ import annotations

import json
import os

from wheypoint.app.workspace import store_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

LIVE_SECONDS = 30 * 60  # a session no hook has heard from in half an hour is not taken for the live one
HARNESSES = ("claude-code", "codex", "gemini", "opencode")


def hooks_folder(environ: Mapping[str, str]) -> str:
    """`hooks/` beside the default store file: `$WHEYPOINT_HOME/hooks`, else the XDG data folder's."""
    return os.path.join(os.path.dirname(store_path(environ)), "hooks")


def state_path(environ: Mapping[str, str], project: str) -> str:
    return os.path.join(hooks_folder(environ), f"{project}.json")


def load_state(environ: Mapping[str, str], project: str) -> dict[str, Any]:
    """The project's hook state; empty when there is none or it cannot be read (it is advisory)."""
    try:
        with open(state_path(environ, project), encoding="utf-8") as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def live_session(environ: Mapping[str, str], project: str, now: float) -> dict[str, str] | None:
    """The one session the hooks heard from in this project within LIVE_SECONDS of `now`, else None."""
    sessions = load_state(environ, project).get("sessions")
    if not isinstance(sessions, dict):
        return None
    live = []
    for key, facts in sessions.items():
        harness, _, session_id = str(key).partition(":")
        seen = facts.get("seen") if isinstance(facts, dict) else None
        if harness in HARNESSES and session_id and isinstance(seen, (int, float)) and 0 <= now - seen <= LIVE_SECONDS:
            live.append({"harness": harness, "id": session_id})
    return live[0] if len(live) == 1 else None
