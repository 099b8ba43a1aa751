"""Every note write goes through `put_note`: the one place a note's final path is resolved, checked and written.

The invariant: a note meant for a folder inside a checkout (or, outside any, inside the folder the command runs
in) is written there, really there. A cloned repository may hold `.cheese`, `.cheese/notes` or `<slug>.md` itself
as a symbolic link to anywhere on the machine (a harness's commands folder, a shell's start-up file); following
it would write where nobody asked and report the in-checkout path. So for such a path the folder is resolved
(symbolic links and `..`) and must still lie in the resolved base, and the note file must not be a link or
anything but a regular file. A folder the person names outside the base (`--note-dir /elsewhere`) is theirs to
choose and is written as named; the MCP tools do not offer `note_dir` at all, so a model never chooses.
"""

from __future__ import annotations

import os
import stat

from wheypoint.model.errors import Refusal


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_note_path(path: str, base: str) -> None:
    """Refuse (`note-outside-checkout`) a note path under `base` that a symbolic link leads elsewhere, or
    whose file is a link or not a regular file; a path outside `base` was named on purpose and passes."""
    path, base = os.path.abspath(path), os.path.abspath(base)
    if not _under(path, base):
        return
    folder = os.path.dirname(path)
    real_folder, real_base = os.path.realpath(folder), os.path.realpath(base)
    if not _under(real_folder, real_base):
        raise Refusal("note-outside-checkout", f"the note folder {folder} resolves to {real_folder}, outside "
                      f"{base} (a symbolic link?); the note was not written there: pass --note-dir to choose "
                      "a folder", details={"note_path": path})  # fmt: skip
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise Refusal("note-unwritable", f"cannot look at {path}: {exc.strerror or exc}",
                      details={"note_path": path}) from None  # fmt: skip
    if stat.S_ISLNK(mode):
        raise Refusal("note-outside-checkout", f"{path} is a symbolic link; the note was not written through it",
                      details={"note_path": path})  # fmt: skip
    if not stat.S_ISREG(mode):
        raise Refusal("note-unwritable", f"{path} is not a regular file; the note was not written",
                      details={"note_path": path})  # fmt: skip


def put_note(path: str, text: str, base: str) -> str | None:
    """Write the note `text` at `path` once `check_note_path` allows it; the hand-edited note kept aside, if any
    (`notes.files.replace_note`). OSError propagates, for the caller to word as a warning or a refusal."""
    from wheypoint.notes.files import replace_note

    check_note_path(path, base)
    return replace_note(path, text)
