"""Running one `git` command and reading its output, without importing `subprocess`.

`import subprocess` costs about 12 ms of a command's start (it loads `signal`, `threading`, `selectors`,
`locale` and `contextlib`), more than the git process it would run. Where the platform has
`os.posix_spawnp`, the process is spawned directly: standard input comes from a pipe that is written as git
reads it, standard output goes to a pipe read to its end, standard error is discarded. Both pipes are
driven by one `poll` loop, so a git that writes while we still write can never deadlock us. Elsewhere
(Windows), `subprocess` does the same job.
"""

from __future__ import annotations

import os
import time

KILL = 9  # SIGKILL; the signal module is not imported for one number


def run_git(args: list[str], cwd: str, stdin: bytes = b"", timeout: float = 30.0) -> tuple[int, bytes] | None:
    """(exit status, standard output) of `git -C cwd args...`, or None when git could not be run or timed out."""
    return start_git(args, cwd, stdin, timeout).answer()


class Started:
    """A git command `start_git` set running: `answer()` waits for it (once; later calls give the same answer).

    Until then the command runs beside the caller, which may do other work: git's output waits in its pipe
    (a larger one waits for the reader), and the timeout counts from the start.
    """

    def __init__(self, argv: list[str], stdin: bytes, timeout: float) -> None:
        self.argv, self.stdin, self.deadline = argv, stdin, time.monotonic() + timeout
        self.pid: int | None = None
        self.pipes = (-1, -1)
        self.done: tuple[tuple[int, bytes] | None] | None = None

    def answer(self) -> tuple[int, bytes] | None:
        """(exit status, standard output), or None when git could not be run or timed out."""
        if self.done is None:
            self.done = (self._wait(),)
        return self.done[0]

    def _wait(self) -> tuple[int, bytes] | None:
        if self.pid is None:
            if hasattr(os, "posix_spawnp"):
                return None  # the spawn failed
            return _run_with_subprocess(self.argv, self.stdin, self.deadline - time.monotonic())  # pragma: no cover
        output = _exchange(*self.pipes, self.stdin, self.deadline)
        if output is None:
            os.kill(self.pid, KILL)
        _, status = os.waitpid(self.pid, 0)
        return None if output is None else (os.waitstatus_to_exitcode(status), output)


def start_git(args: list[str], cwd: str, stdin: bytes = b"", timeout: float = 30.0) -> Started:
    """Set `git -C cwd args...` running and return at once; its `answer()` is `run_git`'s. Where the platform has
    no `posix_spawnp` the command runs, through `subprocess`, when the answer is asked for."""
    started = Started(["git", "-C", cwd, *args], stdin, timeout)
    if not hasattr(os, "posix_spawnp"):  # pragma: no cover - not POSIX
        return started
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    devnull = os.open(os.devnull, os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, in_read, 0), (os.POSIX_SPAWN_DUP2, out_write, 1),
               (os.POSIX_SPAWN_DUP2, devnull, 2)]  # fmt: skip
    try:
        started.pid = os.posix_spawnp("git", started.argv, os.environ, file_actions=actions)
    except OSError:
        for fd in (in_write, out_read):
            os.close(fd)
        return started
    finally:
        for fd in (in_read, out_write, devnull):
            os.close(fd)
    started.pipes = (in_write, out_read)
    return started


def _exchange(in_write: int, out_read: int, stdin: bytes, deadline: float) -> bytes | None:
    """Write `stdin` and read the output to its end, both as git allows; None when the deadline passes."""
    import select  # a small C module, needed only here

    poller = select.poll()
    chunks: list[bytes] = []
    pending = memoryview(stdin)
    os.set_blocking(out_read, False)
    poller.register(out_read, select.POLLIN)
    writing = bool(pending)
    if writing:
        os.set_blocking(in_write, False)
        poller.register(in_write, select.POLLOUT)
    else:
        os.close(in_write)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for fd, _ in poller.poll(left * 1000):
                if fd == out_read:
                    data = os.read(out_read, 1 << 16)
                    if not data:
                        return b"".join(chunks)
                    chunks.append(data)
                elif writing:
                    try:
                        pending = pending[os.write(in_write, pending[: 1 << 16]) :]
                    except BlockingIOError:
                        continue
                    except OSError:  # git stopped reading (and will say why through its exit status)
                        pending = pending[:0]
                    if not pending:
                        poller.unregister(in_write)
                        os.close(in_write)
                        writing = False
    finally:
        os.close(out_read)
        if writing:
            os.close(in_write)


def _run_with_subprocess(argv: list[str], stdin: bytes, timeout: float) -> tuple[int, bytes] | None:  # pragma: no cover
    import subprocess

    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode, done.stdout
