"""Opening a named path for reading only when it is a regular file, without ever blocking: the model's one I/O.

Why it sits in the model, the layer that otherwise does no I/O: every layer that reads a file someone named
(a transcript in transcripts/, a note in notes/, a bundle or a settings file in app/ and hooks/, a flag's file
in cli/) must read it through this one function, and the model is the only layer all of them may import. It
holds no state and opens nothing by itself; it is only the guard every such read passes (tests/test_quality.py
lets this module alone import `os`).

A path may name anything: `/dev/zero` or `/dev/urandom` (endless bytes), a FIFO with no writer (an open that
waits for one forever), a terminal, a socket, a folder. The file is opened `O_NONBLOCK` (so a FIFO's open
returns at once) and `O_NOCTTY`, then `fstat` decides on what was opened, not on a name that may be swapped
between a check and the open: anything but a regular file is closed and refused with `NotRegularFile`, an
`OSError` (an `IsADirectoryError` for a folder), so each caller's existing handling of an unreadable file
gives its own coded refusal (`transcript-unreadable`, `notes-unreadable`, `bundle-unreadable`, ...). The
blocking mode is set back before the file is handed over.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))  # fmt: skip


class NotRegularFile(OSError):
    """The path names something other than a regular file (a device, a FIFO, a socket)."""


def kind_of(mode: int) -> str:
    """What a file of this mode is, in a few words (for a refusal)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` open for reading in binary mode when it is a regular file; else NotRegularFile (or the OSError met)."""
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = kind_of(mode)
            number = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
            error_class = IsADirectoryError if stat.S_ISDIR(mode) else NotRegularFile
            raise error_class(number, f"{what}, not a regular file", os.fspath(path))
        if _FLAGS & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_regular(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is (or links to) a regular file, judged without opening it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
