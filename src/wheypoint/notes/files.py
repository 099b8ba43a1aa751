"""Note files on disk: written atomically, read with a bound, and compared with what the record renders to.

A note is written to a temporary file in the same folder, flushed and fsynced, then renamed over the
old one (and the folder fsynced), so a reader sees the old note or the new one, never half of one.
"""

from __future__ import annotations

import os
import time

from wheypoint.model.errors import Refusal

NOTES_SUBDIR = os.path.join(".cheese", "notes")
STALE_TEMP_SECONDS = 600
MAX_NOTE_BYTES = 1 << 20  # a note is read (and parsed) up to 1 MiB; past that it is not a handoff


def write_atomic(path: str, text: str | bytes, *, mode: int | None = None) -> None:
    """Replace the file at `path` with `text` so that a reader sees the old file or the new one, never a part.

    Text is written as UTF-8 with the line ends it has. `mode`, when given, is set on the new file before it
    replaces the old one, whatever the umask (a settings file keeps its permissions, the zipapp is executable).
    """
    folder, name = os.path.split(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    # Our own temp name rather than tempfile (whose import costs milliseconds on every checkpoint): the pid and
    # clock make it unique, O_EXCL makes sure of it, and the kernel applies the umask to the 0o666 mode.
    for attempt in range(100):
        temp = os.path.join(folder, f".{name}.{os.getpid()}-{time.monotonic_ns()}-{attempt}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary name beside {path}")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.flush()
            os.fsync(handle.fileno())  # the bytes are on disk before the rename publishes them
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _remove_stale_temps(folder, name)
    try:
        handle_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle_fd)  # the rename itself survives a power cut
    except OSError:
        pass
    finally:
        os.close(handle_fd)


def _remove_stale_temps(folder: str, name: str) -> None:
    """Temp files left by writers killed mid-write; only old ones, since a live writer may own a new one."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    prefix = f".{name}."
    try:
        leftovers = [entry for entry in os.listdir(folder) if entry.startswith(prefix) and entry.endswith(".tmp")]
    except OSError:
        return
    for leftover in leftovers:
        full = os.path.join(folder, leftover)
        try:
            if os.stat(full).st_mtime < cutoff:
                os.unlink(full)
        except OSError:
            continue


def note_state(path: str, expected: str) -> str:
    """`current`, `stale` (differs from what the record renders to) or `missing`."""
    try:
        with open(path, encoding="utf-8") as handle:
            return "current" if handle.read() == expected else "stale"
    except FileNotFoundError:
        return "missing"
    except (OSError, UnicodeDecodeError):
        return "stale"


def read_note(path: str) -> str:
    """A note's text (at most 1 MiB and a byte are read), refused with a code when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_NOTE_BYTES + 1).decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise Refusal("note-missing", f"no note at {path}") from None
    except IsADirectoryError:
        raise Refusal("note-unreadable", f"{path} is a folder, not a note") from None
    except OSError as exc:
        raise Refusal("note-unreadable", f"cannot read {path}: {exc.strerror}") from None
