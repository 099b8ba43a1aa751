"""What the hooks remember between calls: the work pending resume, who has had its packet, and a log.

A hook is a fresh process each time, so what one hook call leaves for the next lives in a small JSON file
per project beside the store's home (`hooks/<project>.json`), and what went wrong in `hooks/hook.log`.
Both are advisory: the store holds every revision, so losing this file (or two hooks racing on it, where
the last writer wins) costs at most one packet delivered twice or not at all, never a checkpoint.
"""

from __future__ import annotations

import os

from wheypoint import jsontext
from wheypoint.app.sessions import hooks_folder, load_state, state_path
from wheypoint.notes.files import write_atomic
from wheypoint.store.folders import make_private_folders

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

LOG_LIMIT = 1024 * 1024  # past this the log is moved to hook.log.1 and started again
DELIVERED_KEPT = 50  # sessions remembered as having had the pending packet


load = load_state  # the file is read by the application too (app/sessions.py: which session is live)


SEEN_RESOLUTION = 60  # seconds: "live" is judged over half an hour, so noting it once a minute is enough


def seen(state: dict[str, Any], session: str, now: float) -> bool:
    """Note that a hook just heard from this session (`harness:id`), what makes it the live one.

    False when the state already says so to the minute: the caller then need not write the file again, so a
    hook that fires on every prompt does not rewrite (and fsync) the state each time.
    """
    facts = session_state(state, session)
    if isinstance(facts.get("seen"), int) and 0 <= now - facts["seen"] < SEEN_RESOLUTION:
        return False
    facts["seen"] = int(now)
    return True


# What a harness sends as a session id (a UUID; OpenCode's `ses_` and 26 letters and digits), after the
# `harness:` the state keys it by, or a payload word such as `source`'s `compact`: text the credential scan
# never flags, kept without loading the scan (its first use costs tens of milliseconds on every hook). As a
# pattern, PLAIN_PATTERN; told by string tests (`_plain`, held to the pattern by a property test in
# tests/test_hook_state_scrub.py), since compiling it would cost every hook a quarter of a millisecond.
PLAIN_PATTERN = (r"(?:[a-z-]{1,16}:)?(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                 r"|ses_[0-9A-Za-z]{26}|[a-z_]{0,16})")  # fmt: skip
_HEX = frozenset("0123456789abcdef")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


def _plain(value: str) -> bool:
    """Whether `value` is all of PLAIN_PATTERN (fullmatch), without compiling it."""
    head, colon, tail = value.partition(":")  # no part of the pattern but the prefix's end holds a colon
    if colon:
        return 1 <= len(head) <= 16 and set(head) <= _LOWER | {"-"} and _id_or_word(tail)
    return _id_or_word(value)


def _id_or_word(text: str) -> bool:
    if len(text) == 36 and all(text[at] == "-" for at in (8, 13, 18, 23)):
        return set(text.replace("-", "")) <= _HEX and text.count("-") == 4
    if len(text) == 30 and text.startswith("ses_"):
        return text[4:].isascii() and text[4:].isalnum()
    return len(text) <= 16 and set(text) <= _LOWER | {"_"}


def payload_text(value: Any) -> Any:
    """A payload's string as the state and the log may keep it: scrubbed of credentials like every reply (a
    session id or a `source` is the harness's to send, and a hostile one must not land in a file verbatim)."""
    if not isinstance(value, str) or _plain(value):
        return value
    from wheypoint.model.replies import scrub_text

    return scrub_text(value)


def save(environ: Mapping[str, str], project: str, state: Mapping[str, Any]) -> None:
    """Write the project's state atomically, readable by this user only (it names sessions and works), in folders
    made the same way when a hook runs before any store exists. Session keys are payload text: scrubbed."""
    path = state_path(environ, project)
    make_private_folders(os.path.dirname(path))
    kept = dict(state)
    if isinstance(kept.get("sessions"), dict):
        kept["sessions"] = {payload_text(key): facts for key, facts in kept["sessions"].items()}
    pending = kept.get("pending")
    if isinstance(pending, dict) and isinstance(pending.get("delivered_to"), list):
        kept["pending"] = {**pending, "delivered_to": [payload_text(s) for s in pending["delivered_to"]]}
    # One line, keys sorted (json.dumps's indented form would import the json package into every hook). Not
    # fsynced: the file is advice (see above), and a state a power cut took back or emptied is read as none.
    write_atomic(path, jsontext.dumps(kept, ensure_ascii=False, sort_keys=True) + "\n", mode=0o600, durable=False)


def session_state(state: dict[str, Any], session: str) -> dict[str, Any]:
    """The part of the state about one session (`harness:id`), created empty."""
    sessions = state.setdefault("sessions", {})
    if not isinstance(sessions.get(session), dict):
        sessions[session] = {}
    found: dict[str, Any] = sessions[session]
    return found


def mark_pending(state: dict[str, Any], work: Mapping[str, Any]) -> None:
    """The work a resumer should get next; nobody has had its packet yet."""
    state["pending"] = {**work, "delivered_to": []}


def mark_delivered(state: dict[str, Any], session: str) -> None:
    pending = state.get("pending")
    if isinstance(pending, dict):
        delivered = [s for s in pending.get("delivered_to", []) if s != session][-DELIVERED_KEPT + 1 :]
        pending["delivered_to"] = [*delivered, session]


def undelivered(state: Mapping[str, Any], session: str) -> dict[str, Any] | None:
    """The pending work, when this session has not had its packet yet."""
    pending = state.get("pending")
    if isinstance(pending, dict) and session not in pending.get("delivered_to", []):
        return pending
    return None


PAYLOAD_FIELDS = ("source", "session", "trigger")  # log fields copied from a payload as the harness sent them


def log(environ: Mapping[str, str], entry: Mapping[str, Any]) -> None:
    """Append one JSON line to the hook log; a log that cannot be written is not worth failing a hook for.
    The fields a payload gave (PAYLOAD_FIELDS) are scrubbed as payload text; the rest is the hooks' own."""
    from wheypoint.model.replies import document_text

    path = os.path.join(hooks_folder(environ), "hook.log")
    entry = {key: payload_text(value) if key in PAYLOAD_FIELDS else value for key, value in entry.items()}
    try:
        make_private_folders(os.path.dirname(path))
        if os.path.exists(path) and os.path.getsize(path) > LOG_LIMIT:
            os.replace(path, path + ".1")
        # Readable by this user only, like the store: a log line may name a session's work and its turns.
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with open(descriptor, "a", encoding="utf-8") as handle:
            handle.write(document_text(entry) + "\n")  # escaped where UTF-8 cannot carry a payload's text
    except OSError:
        pass
