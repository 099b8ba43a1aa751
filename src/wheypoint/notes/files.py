"""Note files on disk: written atomically, read with a bound, and compared with what the record renders to.

A note is written to a temporary file in the same folder, flushed and fsynced, then renamed over the
old one (and the folder fsynced), so a reader sees the old note or the new one, never half of one.
"""

from __future__ import annotations

import os
from pathlib import Path

from wheypoint.model.errors import Refusal

NOTES_SUBDIR = Path(".cheese") / "notes"


STALE_TEMP_SECONDS = 600


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    import tempfile  # the read commands never write a note

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates the file private; a note belongs in the repository, so it gets the umask's mode.
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _remove_stale_temps(path)
    try:
        folder = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(folder)
    except OSError:
        pass
    finally:
        os.close(folder)


def _remove_stale_temps(path: Path) -> None:
    """Temp files left by writers killed mid-write; only old ones, since a live writer may own a new one."""
    import time

    cutoff = time.time() - STALE_TEMP_SECONDS
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
        except OSError:
            continue


def note_state(path: Path, expected: str) -> str:
    """`current`, `stale` (differs from what the record renders to) or `missing`."""
    try:
        return "current" if path.read_text(encoding="utf-8") == expected else "stale"
    except FileNotFoundError:
        return "missing"
    except (OSError, UnicodeDecodeError):
        return "stale"


def read_note(path: Path) -> str:
    """A note's text (at most 1 MiB and a byte are read), refused with a code when it cannot be read."""
    from wheypoint.notes.parse import MAX_NOTE_BYTES

    try:
        with path.open("rb") as handle:
            return handle.read(MAX_NOTE_BYTES + 1).decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise Refusal("note-missing", f"no note at {path}") from None
    except IsADirectoryError:
        raise Refusal("note-unreadable", f"{path} is a folder, not a note") from None
    except OSError as exc:
        raise Refusal("note-unreadable", f"cannot read {path}: {exc.strerror}") from None
