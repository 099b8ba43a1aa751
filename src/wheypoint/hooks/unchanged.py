"""Whether a session's transcript is still, to the byte, the file its last rescue read: then nothing is new."""

from __future__ import annotations

import os

from wheypoint.app.context import check_hook_paths
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.hooks.rescue import Rescued


def named(harness: str, payload: dict[str, Any]) -> tuple[str, str] | None:
    """(the transcript's path, the session's key in the hooks' state) when the payload names both outright, else
    None (the session must then be located: discovery reads the transcript's head to find it).

    They are what locating gives: a transcript named by path is read as the given harness's, and a session id the
    payload names wins over the file's own. A payload whose path fields the locating would refuse
    (`check_hook_paths`) gets None, so that the locating still says the refusal."""
    try:
        check_hook_paths(payload)
    except Refusal:
        return None
    transcript, session = payload.get("transcript_path"), payload.get("session_id")
    if not transcript or not session:
        return None
    from wheypoint.transcripts.model import plain_path

    return plain_path(os.path.expanduser(transcript)), f"{harness}:{session}"


def unchanged(path: str, facts: dict[str, Any], session: str) -> Rescued | None:
    """The last rescue of the session again, when its transcript has not changed by one byte since: nothing can
    have happened in the session (an agent's own checkpoint writes to it too), so neither the store nor the
    transcript needs reading. None when anything may be new.

    "Not changed" is the read mark's test (transcripts.lines.resume_point): the same device and inode, no
    shorter, and the same checksum of the bytes before the offset; and here also no longer than that offset, or,
    when the last read stopped before an unfinished last line, the same checksum (and so length) of that line's
    bytes as the read found (`rest`, transcripts.lines.rest_after)."""
    from wheypoint.hooks.rescue import Rescued
    from wheypoint.transcripts.lines import rest_after, resume_point

    mark, last, rest = facts.get("read"), facts.get("rescued"), facts.get("rest")
    if not isinstance(last, dict) or not isinstance(mark, dict):
        return None
    if size(path) != mark.get("offset") and (rest is None or rest_after(path, mark) != rest):
        return None
    if resume_point(path, mark) is None:
        return None
    return Rescued(last.get("work_id"), last.get("slug"), last.get("revision_id"), last.get("revision_number"), 0,
                   (), session, mark, rest=rest)  # fmt: skip


def size(path: str) -> int:
    """The file's size, 0 when it cannot be read."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
