"""Note files on disk: written atomically, read with a bound, and compared with what the record renders to.

A note is written to a temporary file in the same folder, flushed and fsynced, then renamed over the
old one (and the folder fsynced), so a reader sees the old note or the new one, never half of one.

Temporary files. A writer killed mid-write leaves its temporary file behind; the next write of the same file
removes it, and must find it without listing the folder, which may hold thousands of notes. Where the system
allows (Linux: an unnamed file, O_TMPFILE, given a name through /proc), the writer's file is made without a name,
locked (a POSIX lock, which ends with its process), and only then given the first free name of `.<name>.<k>.tmp`:
a later writer tries those names in turn, and a file at one of them that no process holds a lock on is a dead
writer's, and is removed. A writer killed before its file had a name leaves nothing. Elsewhere the file is
`.<name>.<pid>-<ns>-<n>.tmp`, and each write lists the folder for the leftovers of writers whose process is gone.
`doctor` sweeps both kinds (stray_temps).
"""

from __future__ import annotations

import os
import time

from wheypoint.model.errors import Refusal

NOTES_SUBDIR = os.path.join(".cheese", "notes")
STALE_TEMP_SECONDS = 600
MAX_NOTE_BYTES = 1 << 20  # a note is read (and parsed) up to 1 MiB; past that it is not a handoff
SHARED_TEMPS = 100  # the `.<name>.<k>.tmp` names a writer tries before it falls back to a name of its own

_LOCKS = hasattr(os, "lockf")  # POSIX record locks: what tells a live writer's file from a dead one's
_UNNAMED = getattr(os, "O_TMPFILE", 0) if _LOCKS else 0  # 0: no unnamed, lockable temporary files
# The shared names this process's own threads hold now: a process's locks do not keep out its own threads.
_OWN_TEMPS: set[str] = set()


def write_atomic(path: str, text: str | bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace the file at `path` with `text` so that a reader sees the old file or the new one, never a part.

    Text is written as UTF-8 with the line ends it has. `mode`, when given, is set on the new file before it
    replaces the old one, whatever the umask (a settings file keeps its permissions, the zipapp is executable).
    `durable=False` leaves out the two fsyncs, for a file that is only advice (the hooks' state): the rename
    still shows a reader the old file or the new one, but a power cut may leave the old one, or an empty one.
    """
    folder, name = os.path.split(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    claimed = _shared_temp(folder, name)
    fd, temp = claimed if claimed is not None else _own_temp(folder, name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())  # the bytes are on disk before the rename publishes them
            if mode is not None:
                os.chmod(temp, mode)
            os.replace(temp, path)  # with the lock still held: an unlocked file at a shared name is a dead writer's
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    finally:
        _OWN_TEMPS.discard(temp)
    if claimed is None:
        _remove_stale_temps(folder, name)
    if not durable:
        return
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


def _shared_temp(folder: str, name: str) -> tuple[int, str] | None:
    """(an open descriptor, its path): an unnamed file, locked, then named `.<name>.<k>.tmp` at the first free k
    (a dead writer's file there is removed first); None where the system cannot (see the module's docstring)."""
    if not _UNNAMED:
        return None
    try:
        fd = os.open(folder, _UNNAMED | os.O_WRONLY, 0o666)  # the kernel applies the umask to the mode
    except OSError:  # a file system without unnamed files
        return None
    at = None
    try:
        os.lockf(fd, os.F_LOCK, 0)
        at = os.open(folder, os.O_RDONLY)
        for index in range(SHARED_TEMPS):
            shared = os.path.join(folder, f".{name}.{index}.tmp")
            if shared in _OWN_TEMPS:
                continue
            if _name_it(fd, at, shared) or (_remove_dead(shared) and _name_it(fd, at, shared)):
                _OWN_TEMPS.add(shared)
                return fd, shared
    except OSError:  # no /proc to name the file through, say: a name of its own, as elsewhere
        pass
    finally:
        if at is not None:
            os.close(at)
    os.close(fd)
    return None


def _name_it(fd: int, folder_fd: int, path: str) -> bool:
    """Give the unnamed file open at `fd` the name `path` in the folder open at `folder_fd`; False when a file has
    that name already."""
    try:
        os.link(f"/proc/self/fd/{fd}", os.path.basename(path), dst_dir_fd=folder_fd)  # (linkat, following the link)
    except FileExistsError:
        return False
    return True


def _remove_dead(path: str) -> bool:
    """Remove the file at a shared temporary name when it is a dead writer's (`dead_writer`); True when removed."""
    if not dead_writer(path):
        return False
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def dead_writer(path: str) -> bool:
    """Whether the file at a shared temporary name is a dead writer's: a regular file that no process holds a lock
    on (never one of this process's own). Opened without following a link or waiting on a FIFO, and only to try the
    lock: nothing is written."""
    import stat

    if not _LOCKS or path in _OWN_TEMPS:
        return False
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        held = os.fstat(fd)
        if not stat.S_ISREG(held.st_mode):
            return False
        try:
            os.lockf(fd, os.F_TLOCK, 0)
        except OSError:
            return False  # a live writer holds it
        try:
            now = os.lstat(path)
        except OSError:
            return False
        return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)  # still the file locked, not a new one
    finally:
        os.close(fd)


def _own_temp(folder: str, name: str) -> tuple[int, str]:
    """(an open descriptor, its path): a temporary file of this writer's own name, `.<name>.<pid>-<ns>-<n>.tmp`."""
    # Our own temp name rather than tempfile (whose import costs milliseconds on every checkpoint): the pid and
    # clock make it unique, O_EXCL makes sure of it, and the kernel applies the umask to the 0o666 mode.
    for attempt in range(100):
        temp = os.path.join(folder, f".{name}.{os.getpid()}-{time.monotonic_ns()}-{attempt}.tmp")
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {os.path.join(folder, name)}")


def _remove_stale_temps(folder: str, name: str) -> None:
    """Temp files of `name` left by writers killed mid-write, where writers use names of their own: those whose
    writer is gone, and any old one. A temp whose pid still runs is left until it is STALE_TEMP_SECONDS old (the
    pid may have been reused)."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    prefix = f".{name}."
    try:
        leftovers = [entry for entry in os.listdir(folder) if entry.startswith(prefix) and entry.endswith(".tmp")]
    except OSError:
        return
    for leftover in leftovers:
        full = os.path.join(folder, leftover)
        tail = leftover[len(prefix) : -len(".tmp")]
        if "-" not in tail:
            continue  # a shared name: a writer with unnamed files holds or left it (see dead_writer)
        try:
            if not _writer_alive(tail) or os.stat(full).st_mtime < cutoff:
                os.unlink(full)
        except OSError:
            continue


def _writer_alive(tail: str) -> bool:
    """Whether the process named in a temp's `<pid>-<ns>-<n>.tmp` tail still runs (unknown counts as alive)."""
    pid = tail.partition("-")[0]
    if not pid.isdigit() or int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # another user's process, or a platform without signals: keep it
    return True


def stray_temps(folder: str) -> list[tuple[str, bool]]:
    """The temporaries writers left in a folder (`.<name>.<k>.tmp` and `.<name>.<pid>-<ns>-<n>.tmp`, see the module's
    docstring), each with whether it may be swept: its writer is gone (no lock held on a shared name; no such
    process for its own name), or it is STALE_TEMP_SECONDS old. A live writer's is left."""
    import re

    cutoff = time.time() - STALE_TEMP_SECONDS
    found = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        match = re.fullmatch(r"\..+\.(?:(\d+)|(\d+-\d+-\d+))\.tmp", name)
        if not match:
            continue
        full = os.path.join(folder, name)
        try:
            old = os.lstat(full).st_mtime < cutoff
        except OSError:
            continue
        gone = dead_writer(full) if match.group(1) else not _writer_alive(match.group(2))
        found.append((full, old or gone))
    return found


def sweep_temps(folder: str) -> list[str]:
    """Remove the temporaries of a folder that stray_temps says may go; the paths removed."""
    removed = []
    for path, removable in stray_temps(folder):
        if removable:
            try:
                os.unlink(path)
            except OSError:
                continue
            removed.append(path)
    return removed


# Written once into a note folder inside a checkout, so a writer killed mid-write leaves nothing `git add -A` takes.
IGNORE_FILE = ".gitignore"
IGNORE_TEXT = "# temporary files of wheypoint writers killed mid-write\n.*.tmp\n"


# Written once into the folder of default export bundles: nothing there is for git (a bundle is a copy of the store).
IGNORE_ALL_TEXT = "# wheypoint export's default bundles: copies of the store, never part of the checkout\n*\n"


def ignore_temps(folder: str, text: str = IGNORE_TEXT) -> None:
    """Put an ignore file (by default, for writers' temporaries) in a folder that has none (a failure is harmless)."""
    path = os.path.join(folder, IGNORE_FILE)
    if os.path.lexists(path):
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError:
        return
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def read_regular(path: str, limit: int = MAX_NOTE_BYTES) -> bytes:
    """At most `limit` bytes and one more of a regular file; anything else (a FIFO, a device, a folder) raises
    OSError at once (model/regular.py: opened without blocking, looked at before a byte is read)."""
    from wheypoint.model.regular import open_regular

    with open_regular(path) as handle:
        return handle.read(limit + 1)


def note_bytes(path: str) -> bytes | None:
    """A note's bytes (at most 1 MiB and a byte), or None when there is no file; other failures raise OSError.

    Bytes, not text mode: a text-mode read turns a carriage return into a line break, which would call a changed
    note current, or a current one stale.
    """
    try:
        return read_regular(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def shows(data: bytes, expected: str) -> bool:
    """Whether a note's bytes are the note a record renders to. Only CRLF line ends are forgiven: a rendered note
    holds no carriage return at all (notes/escapes.py), so they can only come from a checkout's line-end conversion."""
    wanted = expected.encode("utf-8")
    return data == wanted or data.replace(b"\r\n", b"\n") == wanted


def note_state(path: str, expected: str) -> str:
    """`current`, `stale` (differs from what the record renders to) or `missing`."""
    try:
        data = note_bytes(path)
    except OSError:
        return "stale"
    return "missing" if data is None else "current" if shows(data, expected) else "stale"


def replace_note(path: str, text: str) -> str | None:
    """Write a generated note over the one at `path`; a note there that a person edited is kept first.

    A note is hand-edited when it no longer carries the digest of its own text (render.carries_own_digest): it
    is then moved to `<note>.edited` (or `.edited-2`, ...), where no reader of `*.md` notes takes it for a
    handoff, and its path is returned. A generated note of an older revision is simply replaced.
    """
    from wheypoint.notes.render import carries_own_digest

    kept = None
    old = note_bytes(path)
    if old is not None and old != text.encode("utf-8") and not carries_own_digest(old.decode("utf-8", "replace")):
        kept = _free_name(f"{path}.edited")
        try:
            os.link(path, kept)  # the edited bytes stay whole under the new name, and the note is never absent
        except OSError:
            os.rename(path, kept)
    write_atomic(path, text)
    return kept


def _free_name(base: str) -> str:
    candidate, number = base, 1
    while os.path.lexists(candidate):
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def read_note(path: str) -> str:
    """A note's text (at most 1 MiB and a byte are read), refused with a code when it cannot be read."""
    try:
        return read_regular(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise Refusal("note-missing", f"no note at {path}") from None
    except IsADirectoryError:
        raise Refusal("note-unreadable", f"{path} is a folder, not a note") from None
    except OSError as exc:
        raise Refusal("note-unreadable", f"cannot read {path}: {exc.strerror}") from None
