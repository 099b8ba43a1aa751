"""A harness's JSON settings file, edited without clobbering: read strictly, merged, backed up, replaced atomically.

Only the hook handlers wheypoint owns are touched. A handler is ours when it is a command whose last four
words are `hook <Event> --harness <harness>` and which names wheypoint (its path, module or zipapp);
everything else in the file (other keys, other hooks, other handlers in a shared group, matchers the person
set) is kept as it was, in its order. A file that is not JSON, or whose `hooks` is not the shape every harness
reads, is refused with a code and left byte for byte as it was.

Writes go to a temporary file beside the real file (a symlinked settings file keeps its link), take the
file's own permission bits, are fsynced and renamed over it, so a harness reading at the same moment sees the
old file or the new one. Before the first change to an existing file, its bytes are copied to
`<file>.wheypoint-backup`; later changes leave that copy alone, so it keeps the file as it was before wheypoint.
"""

from __future__ import annotations

import json
import os

from wheypoint.app.harness_files import (
    MAX_SETTINGS_BYTES,
    Settings,
    detect_indent,
    find_ours,
    is_ours,
    read_settings,
)
from wheypoint.app.harness_files import event_groups as _event_groups
from wheypoint.model.errors import Refusal
from wheypoint.notes.files import write_atomic as replace_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BACKUP_SUFFIX = ".wheypoint-backup"
__all__ = ["MAX_SETTINGS_BYTES", "Settings", "detect_indent", "find_ours", "is_ours", "read_settings"]


def render(settings: Settings) -> str:
    """The settings object as the file's text: its own indent (2 spaces for a new file), a newline at the end."""
    return json.dumps(settings.data, indent=settings.indent, ensure_ascii=False) + "\n"


# ---- our handlers inside `{"hooks": {"<Event>": [{"matcher"?, "hooks": [handler, ...]}, ...]}}` (which are ours:
# app/harness_files.py)


def put_ours(settings: Settings, event: str, harness: str, handler: dict[str, Any]) -> None:
    """Make `handler` our one handler for the event: our first one replaced in place, any other one removed."""
    groups = _event_groups(settings, event, create=True)
    assert groups is not None
    placed = False
    emptied: list[Any] = []
    for group in groups:
        if not (isinstance(group, dict) and isinstance(group.get("hooks"), list)):
            continue
        kept: list[Any] = []
        for item in group["hooks"]:
            if not is_ours(item, event, harness):
                kept.append(item)
            elif not placed:
                kept.append(handler)
                placed = True
        if kept != group["hooks"]:
            group["hooks"] = kept
            if not kept:
                emptied.append(group)  # it held only a duplicate of ours
    groups[:] = [group for group in groups if not any(group is gone for gone in emptied)]
    if not placed:
        groups.append({"hooks": [handler]})


def drop_ours(settings: Settings, event: str, harness: str) -> bool:
    """Remove our handlers of an event, and the groups, event list and `hooks` object that only they kept."""
    groups = _event_groups(settings, event, create=False)
    if groups is None:
        return False
    emptied: list[Any] = []
    removed = False
    for group in groups:
        if not (isinstance(group, dict) and isinstance(group.get("hooks"), list)):
            continue
        kept = [item for item in group["hooks"] if not is_ours(item, event, harness)]
        if len(kept) != len(group["hooks"]):
            removed = True
            group["hooks"] = kept
            if not kept:
                emptied.append(group)
    if not removed:
        return False
    groups[:] = [group for group in groups if not any(group is gone for gone in emptied)]
    hooks = settings.data["hooks"]
    if not groups:
        del hooks[event]
    if not hooks:
        del settings.data["hooks"]
    return True


# ---- files


def backup_path(path: str) -> str:
    return path + BACKUP_SUFFIX


def save(settings: Settings, text: str) -> str | None:
    """Write the new text (backing up the old file once); the backup's path when one exists, else None."""
    backup = backup_path(settings.path)
    try:
        if settings.text is not None and not os.path.exists(backup):
            with open(settings.path, "rb") as handle:
                original = handle.read()
            write_atomic(backup, original, like=settings.path)
        write_atomic(settings.path, text.encode("utf-8"), like=settings.path)
    except OSError as exc:
        raise Refusal("settings-unwritable", f"cannot write {settings.path}: {exc.strerror or exc}",
                      details={"path": settings.path}) from None  # fmt: skip
    return backup if os.path.exists(backup) else None


def remove(path: str) -> None:
    """Delete a file wheypoint created, refused with a code when that fails."""
    try:
        os.unlink(os.path.realpath(path))
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise Refusal("settings-unwritable", f"cannot remove {path}: {exc.strerror or exc}",
                      details={"path": path}) from None  # fmt: skip


def write_atomic(path: str, data: bytes, like: str | None = None) -> None:
    """Replace `path` (through a symlink, its target) with `data`, keeping the permission bits of `like`.

    A settings file may hold secrets: the new one is no more readable than the old (notes/files.py writes it).
    """
    try:
        mode: int | None = os.stat(os.path.realpath(like)).st_mode & 0o7777 if like else None
    except OSError:
        mode = None
    replace_file(os.path.realpath(path), data, mode=mode)
